"""Hostile clients (issue 28): what one abusive client does to an honest one, beside a control.

    .venv/bin/python bench/hostile.py                              # this tree, every row (~2 min)
    .venv/bin/python bench/hostile.py --a /work/main --b ../integrate   # A/B, one run (~5 min)
    .venv/bin/python bench/hostile.py --rows 1 4 --repeat 2 --json hostile.json
    .venv/bin/python bench/hostile.py --a /work/main --b ../integrate --envoy --rows 1 2 6   # through Envoy
    .venv/bin/python bench/hostile.py --render hostile.json     # a saved run's tables again

For each row a fresh ``accordion-server`` is started from each source tree (``DIR/.venv/bin/python
-m accordion`` with ``PYTHONPATH=DIR/service``; a tree without a .venv runs under this
interpreter), one at a time, and measured in three phases:

* **control**: the honest client alone (``--control`` seconds);
* **attack**: the honest client while the attacker does the row's abuse (``--duration`` s);
* **after**: the attacker gone (its process exited, its connections closed), the honest client
  alone again (``--after`` s): does the server come back?

The **honest client** (this process, its own connection from 127.0.0.1) calls ``GetGame`` on
its own game every 10 ms and ``grpc.health.v1.Health/Check`` every 20 ms (each waits for the
previous answer; latency from the send), and in row 4 an easy ``Solve`` every 200 ms.
Percentiles are over the calls answered OK; OK % is over all calls sent in the phase.

The **attacker** is a separate process (``--attack``, so its work does not slow the honest
client's event loop) whose clients each connect from their own loopback address, 127.0.0.2,
127.0.0.3, …: per-client limits key on the peer's IP address, and gRPC's Python client cannot
bind a channel's source address, so each attacker client's channel goes to a small TCP relay
inside the attacker process that connects to the server from ``127.0.0.N`` (Linux routes all
of 127/8 to loopback). The honest client connects directly.

Rows (the abuses of issue 28):

1. ``watch-cancel-leak`` (Redis store, ``--max-concurrent-rpcs 100``): 8 clients, 4 at a time
   each, call WatchGame on their own game and cancel each right after its first event. Reported:
   handlers still running (``accordion_rpc_in_flight``, where the tree exports it) and Redis's
   client count (CLIENT LIST) before the attack, 2 s after the attacker left and at the after
   phase's end; the after phase shows whether later calls succeed.
2. ``health-watch-flood``: 10 clients, each holding 10 grpc.health Watch streams, 10 half-sent
   health Checks and 5 half-sent GetGames (headers sent, no message; reopened when they end).
3. ``cached-solve``: 8 clients calling Solve on one solved Spider (1 suit, open) game; the
   server's CPU per Solve (``/proc/PID/stat`` utime + stime over the attack, less the control's
   rate).
4. ``solver-hog``: one client running 4 long Solves at a time (Spider, 4 suits, open) while the
   honest client asks an easy Solve (an Accordion deal this tree's solver wins in < 20 ms
   alone, a fresh one each time so nothing is cached): its outcome and latency.
5. ``solver-48-clients``: 48 clients, each dealing open Klondike and Solving, in a loop.
6. ``newgame-flood`` (memory store capped at ``max_games=1000``): one client floods NewGame
   (16 at a time); the honest client's own game (in play) and a *resting* game dealt before
   the flood and left untouched: is either NOT_FOUND?

``--envoy``: every client (honest and attacker) connects through Envoy, started per row from
the tree's own ``deploy/envoy/envoy.yaml`` (ports and descriptor path rewritten, as tests/rest
does), and the server gets ``--trusted-proxies 127.0.0.1/32`` where it has the flag, so its
per-client limits key on the x-forwarded-for Envoy sets (each client's own 127.0.0.N); a tree
without the flag sees every client as Envoy's one address, as deployed before issue 28.

Flags a row passes that a tree's ``--help`` does not list are left out for that tree (and said).
The machine is shared: the load average is printed before and after each row; compare only
within one run. This is a benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))
sys.path.insert(0, str(ROOT / "tests"))  # redis_server: the binary, a free port

from accordion.v1 import accordion_pb2 as pb  # noqa: E402
from accordion.v1 import accordion_pb2_grpc as pb_grpc  # noqa: E402
from redis_server import free_port, redis_server_binary  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
BANNER = "accordion-server listening on "
ROWS = {
    1: "watch-cancel-leak",
    2: "health-watch-flood",
    3: "cached-solve",
    4: "solver-hog",
    5: "solver-48-clients",
    6: "newgame-flood",
}
GETGAME_EVERY, HEALTH_EVERY, EASY_SOLVE_EVERY = 0.010, 0.020, 0.200
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
GET_GAME = "/accordion.v1.AccordionService/GetGame"


def accordion_stub(channel: grpc.aio.Channel) -> Any:
    """The service's stub on an aio channel (typed Any: the generated stubs are typed for the
    blocking API)."""
    return pb_grpc.AccordionServiceStub(channel)


def health_stub(channel: grpc.aio.Channel) -> Any:
    return health_pb2_grpc.HealthStub(channel)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


def code_of(exc: BaseException) -> str:
    if isinstance(exc, grpc.aio.AioRpcError):
        return exc.code().name
    if isinstance(exc, asyncio.TimeoutError):
        return "CLIENT_TIMEOUT"
    return type(exc).__name__


class WrongAnswer(Exception):
    """An answer the honest client cannot use (health NOT_SERVING, an easy Solve not WON)."""


class OutOfGames(Exception):
    """The easy Solves' games are all used: no more easy Solves in this row."""


@dataclass
class Calls:
    """One kind of call in one phase: latencies of the OK ones, a count per status."""

    latencies: list[float] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)

    def add(self, code: str, seconds: float) -> None:
        self.codes[code] += 1
        if code == "OK":
            self.latencies.append(seconds)

    def summary(self) -> dict[str, Any]:
        n = sum(self.codes.values())
        return {
            "calls": n,
            "ok_pct": round(100 * self.codes["OK"] / n, 1) if n else None,
            "p50_ms": round(percentile(self.latencies, 50) * 1000, 2) if self.latencies else None,
            "p99_ms": round(percentile(self.latencies, 99) * 1000, 2) if self.latencies else None,
            "codes": {k: v for k, v in self.codes.items() if k != "OK"},
        }


# --- the relay: one attacker client, one loopback source address -----------------------------------


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:  # one side gone: the other goes too (HTTP/2 has no use for a half-closed TCP)
        writer.close()


async def start_relay(
    target: tuple[str, int], source: str, open_writers: set[asyncio.StreamWriter]
) -> tuple[asyncio.Server, int]:
    """A listener on 127.0.0.1 whose connections go on to ``target`` from address ``source``;
    each connection's two writers are kept in ``open_writers`` while it lasts."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*target, local_addr=(source, 0))
        except OSError:
            writer.close()
            return
        pair = {writer, up_writer}
        open_writers.update(pair)
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except asyncio.CancelledError:  # the attacker's end: its connections simply close
            for w in pair:
                w.close()
        finally:
            open_writers.difference_update(pair)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def source_address(i: int) -> str:
    """The i-th attacker client's address: 127.0.0.2, 127.0.0.3, … (127.0.0.1 is the honest one)."""
    n = i + 2
    return f"127.0.{n // 256}.{n % 256}"


# --- the attacker (a child process: bench/hostile.py --attack ROW ...) ----------------------------


class Attacker:
    def __init__(self, addr: str, duration: float, params: dict[str, Any]) -> None:
        host, _, port = addr.rpartition(":")
        self.target = (host, int(port))
        self.duration, self.params = duration, params
        self.relays: list[asyncio.Server] = []
        self.open_writers: set[asyncio.StreamWriter] = set()
        self.channels: list[grpc.aio.Channel] = []
        self.counts: Counter[str] = Counter()
        self.latencies: list[float] = []
        self.end = 0.0

    async def clients(self, n: int) -> list[grpc.aio.Channel]:
        for i in range(n):
            relay, port = await start_relay(self.target, source_address(i), self.open_writers)
            self.relays.append(relay)
            self.channels.append(
                grpc.aio.insecure_channel(
                    f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
                )
            )
        await asyncio.gather(*(asyncio.wait_for(c.channel_ready(), 10) for c in self.channels))
        return self.channels

    def running(self) -> bool:
        return time.monotonic() < self.end

    async def run(self, row: str) -> dict[str, Any]:
        setup = getattr(self, "setup_" + row.replace("-", "_"), None)
        if setup is not None:
            prepared = await setup()
        else:  # its clients' connections up before the attack starts
            prepared = await self.clients(self.params.get("clients", 1))
        print("attacking", flush=True)
        self.end = time.monotonic() + self.duration
        started = time.monotonic()
        try:  # at the end, calls still out (a long Solve) are cancelled: the attacker leaves
            await asyncio.wait_for(
                getattr(self, "attack_" + row.replace("-", "_"))(prepared), self.duration + 0.2
            )
        except TimeoutError:
            self.counts["cancelled_at_end"] += 1
        took = time.monotonic() - started
        await asyncio.gather(*(c.close() for c in self.channels))
        for relay in self.relays:
            relay.close()
        for writer in list(self.open_writers):  # the attacker leaves: every connection closes now
            writer.close()
        await asyncio.sleep(0.1)
        out: dict[str, Any] = {"seconds": round(took, 2), "counts": dict(self.counts)}
        if self.latencies:
            out["p50_ms"] = round(percentile(self.latencies, 50) * 1000, 1)
            out["p99_ms"] = round(percentile(self.latencies, 99) * 1000, 1)
        return out

    async def _game(
        self, stub: Any, variant: str = "accordion", options: dict[str, str] | None = None, seed: int = 1
    ) -> tuple[pb.Game, tuple[tuple[str, str], ...]]:
        reply = await stub.NewGame(
            pb.NewGameRequest(variant=variant, options=options or {}, seed=seed), timeout=10
        )
        return reply.game, (("authorization", f"Bearer {reply.token}"),)

    # 1: WatchGame cancelled right after its first event, 4 at a time per client
    async def setup_watch_cancel_leak(self) -> list[tuple[Any, str, Any]]:
        out = []
        for i, channel in enumerate(await self.clients(self.params.get("clients", 8))):
            stub = accordion_stub(channel)
            game, md = await self._game(stub, seed=100 + i)
            move = pb.ApplyMoveRequest(
                game_id=game.id, move=game.legal_moves[0], expected_version=game.version
            )
            await stub.ApplyMove(move, metadata=md, timeout=10)  # version 1: a first event to send at once
            out.append((stub, game.id, md))
        return out

    async def attack_watch_cancel_leak(self, games: list[tuple[Any, str, Any]]) -> None:
        async def one(stub: Any, game_id: str, md: Any) -> None:
            while self.running():
                call = stub.WatchGame(
                    pb.WatchGameRequest(game_id=game_id, after_version=0), metadata=md, timeout=10
                )
                try:
                    await call.read()
                    self.counts["first_event_then_cancel"] += 1
                except grpc.aio.AioRpcError as exc:
                    self.counts[exc.code().name] += 1
                    await asyncio.sleep(0.01)
                finally:
                    call.cancel()

        per_client = self.params.get("per_client", 4)
        await asyncio.gather(*(one(*g) for g in games for _ in range(per_client)))

    # 2: health Watch streams and half-sent calls held open
    async def attack_health_watch_flood(self, channels: list[grpc.aio.Channel]) -> None:

        async def watch(channel: grpc.aio.Channel) -> None:
            stub = health_stub(channel)
            while self.running():
                call = stub.Watch(
                    health_pb2.HealthCheckRequest(service=""), timeout=self.end - time.monotonic()
                )
                try:
                    await call.read()
                    self.counts["watch_held"] += 1
                    await call.read()  # the next change: never, until the deadline
                except grpc.aio.AioRpcError as exc:
                    self.counts[f"watch_{exc.code().name}"] += 1
                    await asyncio.sleep(0.05)
                finally:
                    call.cancel()

        async def half_sent(channel: grpc.aio.Channel, method: str, label: str) -> None:
            multi = channel.stream_unary(
                method, request_serializer=lambda b: b, response_deserializer=lambda b: b
            )
            while self.running():
                call = multi(timeout=max(0.1, self.end - time.monotonic()))  # headers only: no message
                try:
                    await call.wait_for_connection()
                    self.counts[f"{label}_sent"] += 1
                    await call
                except grpc.aio.AioRpcError as exc:
                    self.counts[f"{label}_{exc.code().name}"] += 1
                    await asyncio.sleep(0.05)
                finally:
                    call.cancel()

        tasks = []
        for channel in channels:
            tasks += [watch(channel) for _ in range(10)]
            tasks += [half_sent(channel, HEALTH_CHECK, "half_check") for _ in range(10)]
            tasks += [half_sent(channel, GET_GAME, "half_getgame") for _ in range(5)]
        await asyncio.gather(*tasks)

    # 3: Solve on a solved game, again and again
    async def attack_cached_solve(self, channels: list[grpc.aio.Channel]) -> None:
        md = (("authorization", f"Bearer {self.params['token']}"),)
        request = pb.SolveRequest(game_id=self.params["game_id"])

        async def one(channel: grpc.aio.Channel) -> None:
            stub = accordion_stub(channel)
            while self.running():
                t0 = time.perf_counter()
                try:
                    reply = await stub.Solve(request, metadata=md, timeout=10)
                    self.counts["cached" if reply.cached else pb.SolveOutcome.Name(reply.outcome)] += 1
                    self.latencies.append(time.perf_counter() - t0)
                except grpc.aio.AioRpcError as exc:
                    self.counts[exc.code().name] += 1
                    await asyncio.sleep(0.01)

        await asyncio.gather(*(one(c) for c in channels))

    # 4 and 5: Solves that take long, from one client (4 at a time) or from 48
    async def _solve_loop(self, stub: Any, variant: str, options: dict[str, str], seeds: range) -> None:
        for seed in seeds:
            if not self.running():
                return
            try:
                game, md = await self._game(stub, variant, options, seed)
                t0 = time.perf_counter()
                reply = await stub.Solve(pb.SolveRequest(game_id=game.id), metadata=md, timeout=30)
                self.latencies.append(time.perf_counter() - t0)
                self.counts[pb.SolveOutcome.Name(reply.outcome)] += 1
            except grpc.aio.AioRpcError as exc:
                self.counts[exc.code().name] += 1
                await asyncio.sleep(0.05)

    async def attack_solver_hog(self, channels: list[grpc.aio.Channel]) -> None:
        (channel,) = channels
        stub = accordion_stub(channel)
        spider4 = {"suits": "4", "open": "true"}  # most deals: no answer within the server's limit
        await asyncio.gather(
            *(
                self._solve_loop(stub, "spider", spider4, range(1000 * k + 1, 1000 * k + 999))
                for k in range(self.params.get("long_solves", 4))
            )
        )

    async def attack_solver_48_clients(self, channels: list[grpc.aio.Channel]) -> None:
        await asyncio.gather(
            *(
                self._solve_loop(
                    accordion_stub(c), "klondike", {"open": "true"}, range(1000 * k + 1, 1000 * k + 999)
                )
                for k, c in enumerate(channels)
            )
        )

    # 6: NewGame as fast as the server answers
    async def attack_newgame_flood(self, channels: list[grpc.aio.Channel]) -> None:
        (channel,) = channels
        stub = accordion_stub(channel)
        request = pb.NewGameRequest(variant="accordion")

        async def one() -> None:
            while self.running():
                try:
                    await stub.NewGame(request, timeout=10)
                    self.counts["OK"] += 1
                except grpc.aio.AioRpcError as exc:
                    self.counts[exc.code().name] += 1

        await asyncio.gather(*(one() for _ in range(self.params.get("concurrency", 16))))


def attacker_main(row: str, addr: str, duration: float, params: str) -> None:
    result = asyncio.run(Attacker(addr, duration, json.loads(params)).run(row))
    print("result " + json.dumps(result), flush=True)


# --- the server under test ------------------------------------------------------------------------


@dataclass
class Tree:
    """A source tree: the interpreter and path its server runs with, the flags its --help lists."""

    label: str
    dir: Path
    python: str
    env: dict[str, str]
    help_text: str = ""
    commit: str = ""  # git's short hash, "+" when the work tree has changes; "" outside git

    @classmethod
    def of(cls, label: str, directory: str) -> Tree:
        d = Path(directory).resolve()
        venv = d / ".venv" / "bin" / "python"
        python = str(venv) if venv.exists() else sys.executable
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("ACCORDION_")}
        env["PYTHONPATH"] = str(d / "service")
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # read the tree, write nothing into it
        tree = cls(label, d, python, env)
        tree.help_text = subprocess.run(
            [python, "-m", "accordion", "--help"], capture_output=True, text=True, env=env, cwd=d, timeout=120
        ).stdout
        head = subprocess.run(
            ["git", "-C", str(d), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        if head.returncode == 0:
            changed = subprocess.run(
                ["git", "-C", str(d), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            tree.commit = head.stdout.strip() + ("+" if changed else "")
        if "--listen" not in tree.help_text:
            raise SystemExit(f"{d}: `{python} -m accordion --help` lists no --listen")
        return tree

    def flags(self, wanted: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
        """The flags of ``wanted`` this tree has, as argv; and the names of those it lacks."""
        argv, missing = [], []
        for name, value in wanted:
            if name in self.help_text.split():
                argv += [name, value]
            else:
                missing.append(name)
        return argv, missing


@dataclass
class Server:
    popen: subprocess.Popen[bytes]
    addr: str
    metrics_port: int

    def cpu_seconds(self) -> float:
        total = 0.0
        for pid in [self.popen.pid, *_children(self.popen.pid)]:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / CLK_TCK
        return total

    def metric(self, name: str, label: str = "") -> float | None:
        """The sum of a metric's samples on /metrics (those whose labels hold ``label``), or None
        when the tree does not export it."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
                text = r.read().decode()
        except OSError:
            return None
        names = (name, name + "_total")  # (a counter's samples end in _total)
        values = [
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.split("{", 1)[0].split(" ", 1)[0] in names and label in line.rsplit(" ", 1)[0]
        ]
        return sum(values) if values else None

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return out


def start_server(tree: Tree, flags: list[str], log: Path) -> Server:
    metrics_port = free_port()
    argv = [
        tree.python,
        "-m",
        "accordion",
        "--listen",
        "127.0.0.1:0",
        "--workers",
        "1",
        "--metrics-port",
        str(metrics_port),
        *flags,
    ]
    out_path = log.with_suffix(".out")
    with out_path.open("wb") as out, log.open("ab") as err:
        popen = subprocess.Popen(argv, stdout=out, stderr=err, env=tree.env, cwd=tree.dir)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in out_path.read_text(errors="replace").splitlines():
            if line.startswith(BANNER):
                return Server(popen, line.split()[3], metrics_port)
        if popen.poll() is not None:
            raise RuntimeError(
                f"server exited with {popen.returncode}:\n{log.read_text(errors='replace')[-3000:]}"
            )
        time.sleep(0.05)
    popen.kill()
    raise RuntimeError(f"server did not start in 60 s: see {log}")


@dataclass
class Envoy:
    popen: subprocess.Popen[bytes]
    port: int

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def start_envoy(tree: Tree, upstream_port: int, workdir: Path) -> Envoy:
    """Envoy with the tree's own deploy/envoy/envoy.yaml (its ports and descriptor path
    rewritten, as tests/rest does) in front of ``upstream_port``; its listener's port read back
    from the admin API."""
    text = (tree.dir / "deploy" / "envoy" / "envoy.yaml").read_text()
    for old, new in (
        ("port_value: 50051", f"port_value: {upstream_port}"),
        ("port_value: 8080", "port_value: 0"),
        (
            "proto_descriptor: deploy/envoy/accordion.pb",
            f"proto_descriptor: {tree.dir / 'deploy' / 'envoy' / 'accordion.pb'}",
        ),
    ):
        if text.count(old) != 1:
            raise RuntimeError(f"{tree.dir}/deploy/envoy/envoy.yaml should hold {old!r} once")
        text = text.replace(old, new)
    text += "admin:\n  address:\n    socket_address: { address: 127.0.0.1, port_value: 0 }\n"
    config, admin_path, log = workdir / "envoy.yaml", workdir / "envoy-admin.txt", workdir / "envoy.log"
    config.write_text(text)
    admin_path.unlink(missing_ok=True)
    envoy_bin = shutil.which("envoy", path=str(Path(tree.python).parent)) or shutil.which(
        "envoy", path=str(Path(sys.executable).parent)
    )
    if envoy_bin is None:
        raise SystemExit("--envoy: no envoy binary beside the tree's interpreter or this one (make install)")
    with log.open("ab") as out:
        popen = subprocess.Popen(
            [
                envoy_bin,
                "-c",
                str(config),
                "--admin-address-path",
                str(admin_path),
                "--disable-hot-restart",
                "--concurrency",
                "1",
                "--log-level",
                "warning",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if popen.poll() is not None:
            raise RuntimeError(
                f"envoy exited with {popen.returncode}:\n{log.read_text(errors='replace')[-3000:]}"
            )
        admin = admin_path.read_text().strip() if admin_path.exists() else ""
        if admin:
            try:
                with urllib.request.urlopen(f"http://{admin}/ready", timeout=2) as r:
                    ready = r.status == 200
                with urllib.request.urlopen(f"http://{admin}/listeners?format=json", timeout=2) as r:
                    listeners = json.load(r)
            except OSError:
                ready = False
            if ready:
                address = listeners["listener_statuses"][0]["local_address"]["socket_address"]
                return Envoy(popen, int(address["port_value"]))
        time.sleep(0.05)
    popen.kill()
    raise RuntimeError("envoy did not get ready in 60 s")


def start_redis(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()  # never 6379
    argv = [
        redis_server_binary(),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(workdir),
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
        "--logfile",
        str(workdir / "redis.log"),
    ]
    popen = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import redis

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if redis.Redis(port=port, socket_timeout=1).ping():
                return popen, port
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
    popen.kill()
    raise RuntimeError("redis-server did not start")


def redis_clients(port: int) -> int:
    """Clients connected to Redis now, this question's own connection left out."""
    import redis

    with redis.Redis(port=port, socket_timeout=5) as r:
        return len(r.client_list()) - 1


# --- the honest client ----------------------------------------------------------------------------


class Honest:
    """GetGame on its own game and health Check, at a steady pace, each call's result booked
    under the phase in force when it was sent; in row 4 an easy Solve too."""

    def __init__(self, addr: str) -> None:
        self.channel = grpc.aio.insecure_channel(addr, options=[("grpc.use_local_subchannel_pool", 1)])
        self.stub = accordion_stub(self.channel)
        self.health = health_stub(self.channel)
        self.phase = "setup"
        self.calls: dict[tuple[str, str], Calls] = {}
        self.solves: dict[str, Counter[str]] = {}
        self.game_id, self.md = "", ()
        self.easy_games: list[tuple[str, Any]] = []
        self.stopped = False

    def book(self, kind: str, phase: str, code: str, seconds: float) -> None:
        if phase in ("control", "attack", "after"):
            self.calls.setdefault((kind, phase), Calls()).add(code, seconds)

    async def new_game(self, variant: str = "accordion", seed: int = 7, **options: str) -> tuple[str, Any]:
        reply = await self.stub.NewGame(
            pb.NewGameRequest(variant=variant, seed=seed, options=options), timeout=30
        )
        return reply.game.id, (("authorization", f"Bearer {reply.token}"),)

    async def _paced(self, every: float, call: Any, kind: str) -> None:
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while not self.stopped:
            phase, t0 = self.phase, time.perf_counter()
            try:
                await call()
                code = "OK"
            except (TimeoutError, grpc.aio.AioRpcError) as exc:
                code = code_of(exc)
            except WrongAnswer as exc:  # answered, but not as an honest client needs
                code = str(exc)
            except OutOfGames:
                return
            self.book(kind, phase, code, time.perf_counter() - t0)
            next_at = max(next_at + every, loop.time())
            await asyncio.sleep(next_at - loop.time())

    async def get_game(self) -> None:
        await self.stub.GetGame(pb.GetGameRequest(game_id=self.game_id), metadata=self.md, timeout=2)

    async def check(self) -> None:
        reply = await self.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            raise WrongAnswer("NOT_SERVING")

    async def deal_easy_games(self, seeds: list[int]) -> None:
        """The easy Solves' games, dealt before the control phase (a NewGame is not timed)."""
        self.easy_games = [await self.new_game("accordion", seed) for seed in seeds]

    async def easy_solve(self) -> None:
        if not self.easy_games:
            raise OutOfGames
        phase = self.phase
        if phase not in ("control", "attack", "after"):
            return  # (not counted: keep the games for the phases that are)
        game_id, md = self.easy_games.pop(0)  # a new deal each time: nothing cached
        reply = await self.stub.Solve(pb.SolveRequest(game_id=game_id), metadata=md, timeout=5)
        outcome = pb.SolveOutcome.Name(reply.outcome).removeprefix("SOLVE_OUTCOME_")
        self.solves.setdefault(phase, Counter())[outcome + (" cached" if reply.cached else "")] += 1
        if reply.outcome != pb.SOLVE_OUTCOME_WON:
            raise WrongAnswer(outcome)

    def start(self, easy_solves: bool) -> list[asyncio.Task[None]]:
        tasks = [
            asyncio.create_task(self._paced(GETGAME_EVERY, self.get_game, "GetGame")),
            asyncio.create_task(self._paced(HEALTH_EVERY, self.check, "health")),
        ]
        if easy_solves:
            tasks.append(asyncio.create_task(self._paced(EASY_SOLVE_EVERY, self.easy_solve, "easy Solve")))
        return tasks

    async def close(self, tasks: list[asyncio.Task[None]]) -> None:
        self.stopped = True
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.channel.close()


def easy_accordion_seeds(tree: Tree, count: int = 95) -> list[int]:
    """Accordion seeds this tree's solver wins in under 20 ms alone (in a child process). 95:
    enough for the phases (an easy Solve every 200 ms), and within the NewGame burst a tree
    with a per-client NewGame rate allows one client (100 by default)."""
    code = (
        "import json, time\nfrom accordion.engine import new_game\nfrom accordion.solver import solve\n"
        "out = []\nseed = 1\n"
        f"while len(out) < {count} and seed < 5000:\n"
        "    g = new_game('accordion', {}, seed=seed)\n    t = time.perf_counter()\n"
        "    r = solve(g, max_seconds=0.05)\n"
        "    if r.outcome.name == 'WON' and time.perf_counter() - t < 0.02:\n        out.append(seed)\n"
        "    seed += 1\nprint(json.dumps(out))\n"
    )
    done = subprocess.run(
        [tree.python, "-c", code],
        capture_output=True,
        text=True,
        env=tree.env,
        cwd=tree.dir,
        timeout=300,
        check=True,
    )
    return list(json.loads(done.stdout))


# --- one row on one tree ----------------------------------------------------------------------------


@dataclass
class RowSetup:
    flags: list[tuple[str, str]]
    redis: bool = False
    memory_url: str = ""
    params: dict[str, Any] = field(default_factory=dict)


def row_setup(row: str) -> RowSetup:
    if row == "watch-cancel-leak":
        return RowSetup(
            [("--max-concurrent-rpcs", "100")], redis=True, params={"clients": 8, "per_client": 4}
        )
    if row == "health-watch-flood":
        return RowSetup([], params={"clients": 10})
    if row == "cached-solve":
        return RowSetup([], params={"clients": 8})
    if row == "solver-hog":
        return RowSetup([], params={"clients": 1, "long_solves": 4})
    if row == "solver-48-clients":
        return RowSetup([], params={"clients": 48})
    if row == "newgame-flood":
        return RowSetup([], memory_url="memory://?max_games=1000", params={"clients": 1, "concurrency": 16})
    raise SystemExit(f"no row {row!r}: the rows are {', '.join(ROWS.values())}")


async def run_row(
    row: str,
    tree: Tree,
    args: argparse.Namespace,
    workdir: Path,
    redis_port: int | None,
    easy_seeds: list[int],
) -> dict[str, Any]:
    setup = row_setup(row)
    wanted = list(setup.flags)
    if setup.redis:
        assert redis_port is not None
        import redis

        with redis.Redis(port=redis_port) as r:
            r.flushall()
        wanted.append(("--redis-url", f"redis://127.0.0.1:{redis_port}/0"))
    elif setup.memory_url:
        wanted.append(("--redis-url", setup.memory_url))
    if args.envoy:  # per-client limits then key on x-forwarded-for, where the tree can
        wanted.append(("--trusted-proxies", "127.0.0.1/32"))
    flags, missing = tree.flags(wanted)
    label = tree.label + ("+envoy" if args.envoy else "")
    out: dict[str, Any] = {
        "row": row,
        "tree": label,
        "dir": str(tree.dir),
        "commit": tree.commit,
        "flags": flags,
        "flags_left_out": missing,
        "load_before": [round(x, 2) for x in os.getloadavg()],
    }
    print(
        f"[{row} / {tree.label}] load {out['load_before']}"
        + (f"; {tree.label} lacks {missing}" if missing else ""),
        file=sys.stderr,
        flush=True,
    )
    server = start_server(tree, flags, workdir / f"{row}-{tree.label}.log")
    try:
        envoy = start_envoy(tree, int(server.addr.rpartition(":")[2]), workdir) if args.envoy else None
    except BaseException:
        server.stop()
        raise
    front = f"127.0.0.1:{envoy.port}" if envoy else server.addr  # where the clients connect
    honest = Honest(front)
    tasks: list[asyncio.Task[None]] = []
    extra: dict[str, Any] = {}
    try:
        await asyncio.wait_for(honest.channel.channel_ready(), 10)
        honest.game_id, honest.md = await honest.new_game()
        params = dict(setup.params)
        if row == "cached-solve":  # the solved game the attackers ask about, solved once (cached)
            game_id, md = await honest.new_game("spider", 1, suits="1", open="true")
            first = await honest.stub.Solve(pb.SolveRequest(game_id=game_id), metadata=md, timeout=30)
            extra["solved_game"] = {
                "outcome": pb.SolveOutcome.Name(first.outcome),
                "line_moves": len(first.moves),
                "first_solve_ms": round(first.millis, 1),
            }
            params.update(game_id=game_id, token=dict(md)["authorization"].removeprefix("Bearer "))
        resting = await honest.new_game(seed=8) if row == "newgame-flood" else None
        if row == "solver-hog":
            await honest.deal_easy_games(easy_seeds)
        tasks = honest.start(easy_solves=row == "solver-hog")

        honest.phase = "control"
        cpu0, t0 = server.cpu_seconds(), time.monotonic()
        await asyncio.sleep(args.control)
        control_cpu, control_s = server.cpu_seconds() - cpu0, time.monotonic() - t0
        out["control_cpu_pct"] = round(100 * control_cpu / control_s, 1)
        if setup.redis:
            extra["redis_clients_before"] = redis_clients(redis_port)  # type: ignore[arg-type]
        extra["in_flight_before"] = server.metric("accordion_rpc_in_flight", "WatchGame")

        honest.phase = "between"  # the attacker's own set-up (games, connections): not counted
        attacker = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--attack",
            row,
            "--addr",
            front,
            "--duration",
            str(args.duration),
            "--params",
            json.dumps(params),
            stdout=asyncio.subprocess.PIPE,
        )
        assert attacker.stdout is not None
        result: dict[str, Any] = {}
        attack_cpu0 = attack_t0 = 0.0
        while line := (await attacker.stdout.readline()).decode():
            if line.startswith("attacking"):
                honest.phase = "attack"
                attack_cpu0, attack_t0 = server.cpu_seconds(), time.monotonic()
            elif line.startswith("result "):
                honest.phase = "between"
                result = json.loads(line.split(" ", 1)[1])
        attack_cpu, attack_s = server.cpu_seconds() - attack_cpu0, time.monotonic() - attack_t0
        await attacker.wait()
        out["attack_cpu_pct"] = round(100 * attack_cpu / attack_s, 1) if attack_t0 else None
        out["attacker"] = result
        extra["in_flight_end_of_attack"] = server.metric("accordion_rpc_in_flight", "WatchGame")
        if row == "cached-solve":
            solves = sum(
                v for k, v in result.get("counts", {}).items() if k in ("cached", "SOLVE_OUTCOME_WON")
            )
            beyond = attack_cpu - control_cpu / control_s * attack_s  # the honest client's share taken out
            extra["server_cpu_ms_per_solve"] = round(1000 * beyond / solves, 2) if solves else None
            extra["solves_per_s"] = round(solves / attack_s, 1)

        await asyncio.sleep(2.0)  # the attacker's connections are closed: 2 s for the server to let go
        extra["in_flight_2s_after"] = server.metric("accordion_rpc_in_flight", "WatchGame")
        if setup.redis:
            extra["redis_clients_2s_after"] = redis_clients(redis_port)  # type: ignore[arg-type]
        if resting is not None:
            try:
                await honest.stub.GetGame(
                    pb.GetGameRequest(game_id=resting[0]), metadata=resting[1], timeout=5
                )
                extra["resting_game"] = "found"
            except grpc.aio.AioRpcError as exc:
                extra["resting_game"] = exc.code().name
            extra["memory_store_evicted"] = server.metric("accordion_memory_store_evicted")
        honest.phase = "after"
        await asyncio.sleep(args.after)
        extra["in_flight_end_of_after"] = server.metric("accordion_rpc_in_flight", "WatchGame")
        if setup.redis:
            extra["redis_clients_end_of_after"] = redis_clients(redis_port)  # type: ignore[arg-type]
    finally:
        await honest.close(tasks)
        if envoy is not None:
            envoy.stop()
        server.stop()
    out["phases"] = {
        phase: {
            kind: honest.calls[(kind, phase)].summary()
            for kind in ("health", "GetGame", "easy Solve")
            if (kind, phase) in honest.calls
        }
        for phase in ("control", "attack", "after")
    }
    if honest.solves:
        extra["easy_solve_outcomes"] = {p: dict(c) for p, c in honest.solves.items()}
    out["extra"] = extra
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


# --- the report -------------------------------------------------------------------------------------


def _fmt(s: dict[str, Any] | None) -> str:
    if not s or not s["calls"]:
        return f"{'-':>6} {'-':>7} {'-':>8}"
    p50 = "-" if s["p50_ms"] is None else f"{s['p50_ms']:.1f}"
    p99 = "-" if s["p99_ms"] is None else f"{s['p99_ms']:.1f}"
    return f"{s['ok_pct']:>6.1f} {p50:>7} {p99:>8}"


def print_trees(results: list[dict[str, Any]]) -> None:
    seen: dict[str, dict[str, Any]] = {}
    for r in results:
        seen.setdefault(r["tree"], {"dir": r["dir"], "commit": r.get("commit", ""), "left_out": set()})
        seen[r["tree"]]["left_out"].update(r["flags_left_out"])
    for label, t in seen.items():
        print(
            f"  {label}: {t['dir']}"
            + (f" at {t['commit']}" if t["commit"] else "")
            + (f"; flags it lacks, left out: {' '.join(sorted(t['left_out']))}" if t["left_out"] else "")
        )


def print_table(results: list[dict[str, Any]]) -> None:
    head = (
        f"{'row':<19} {'tree':<6} {'phase':<8} {'hc OK%':>6} {'hc p50':>7} {'hc p99':>8}  "
        f"{'GG OK%':>6} {'GG p50':>7} {'GG p99':>8}  {'srv CPU':>7}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        for phase in ("control", "attack", "after"):
            p = r["phases"].get(phase, {})
            cpu = {"control": r.get("control_cpu_pct"), "attack": r.get("attack_cpu_pct")}.get(phase)
            print(
                f"{r['row']:<19} {r['tree']:<6} {phase:<8} {_fmt(p.get('health'))}  "
                f"{_fmt(p.get('GetGame'))}  " + (f"{cpu:>6.0f}%" if cpu is not None else f"{'':>7}")
            )
        extras = dict(r["extra"])
        for phase in ("control", "attack", "after"):
            if "easy Solve" in r["phases"].get(phase, {}):
                extras[f"easy_solve_{phase}"] = r["phases"][phase]["easy Solve"]
        for phase in ("control", "attack", "after"):
            codes = {k: s["codes"] for k, s in r["phases"].get(phase, {}).items() if s["codes"]}
            if codes:
                extras[f"errors_{phase}"] = codes
        print(f"    attacker: {json.dumps(r['attacker'])}")
        print(f"    {json.dumps(extras)}")
        print(
            f"    load {r['load_before']} -> {r['load_after']}"
            + (f"; flags left out: {r['flags_left_out']}" if r["flags_left_out"] else "")
        )
    print(
        "(hc: health Check, GG: the honest GetGame; OK% over all calls sent in the phase, p50/p99 in ms over "
        "the OK ones; srv CPU: the server process's CPU over the phase)"
    )


def _pct(value: float) -> str:
    return f"{value:.0f}" if value in (0, 100) else f"{value:.1f}"  # 99.9 is not 100


def _ms(s: dict[str, Any] | None) -> str:
    if not s or not s["calls"]:
        return "–"
    if s["p50_ms"] is None:
        return f"{_pct(s['ok_pct'])} % OK"
    return f"{_pct(s['ok_pct'])} % OK, {s['p50_ms']:.1f} / {s['p99_ms']:.1f}"


def row_note(r: dict[str, Any]) -> dict[str, str]:
    """Each phase's row-specific figure, in words (the markdown table's last column)."""
    x, a = r["extra"], r["attacker"].get("counts", {})
    note: dict[str, str] = {}
    if r["row"] == "watch-cancel-leak":
        others = ", ".join(
            f"{v} {k}" for k, v in a.items() if k not in ("first_event_then_cancel", "cancelled_at_end")
        )
        note["attack"] = (
            f"{a.get('first_event_then_cancel', 0)} watches cancelled after their first event"
            + (f"; {others}" if others else "")
        )
        in_flight, in_flight_end = x.get("in_flight_2s_after"), x.get("in_flight_end_of_after")
        clients_end = x.get("redis_clients_end_of_after")
        note["after"] = (
            f"Redis clients {x.get('redis_clients_before')} → {x.get('redis_clients_2s_after')} "
            "2 s after the attacker left"
            + ("" if clients_end is None else f" ({clients_end} at the phase's end)")
            + "; WatchGame handlers running then: "
            + ("not exported" if in_flight is None else f"{in_flight:.0f}")
            + ("" if in_flight_end is None else f" ({in_flight_end:.0f})")
        )
    elif r["row"] == "health-watch-flood":
        refused = sum(v for k, v in a.items() if k.endswith("RESOURCE_EXHAUSTED"))
        half = sum(
            a.get(f"half_{m}_sent", 0) - a.get(f"half_{m}_RESOURCE_EXHAUSTED", 0)
            for m in ("check", "getgame")
        )
        watch_ends = ", ".join(
            f"{v} {k.removeprefix('watch_')}"
            for k, v in a.items()
            if k.startswith("watch_") and k not in ("watch_held", "watch_DEADLINE_EXCEEDED")
        )
        note["attack"] = (
            f"attacker: {a.get('watch_held', 0)} Watch streams and {half} half-sent calls held "
            f"(over the phase), {refused} refused" + (f"; Watch calls: {watch_ends}" if watch_ends else "")
        )
    elif r["row"] == "cached-solve":
        note["control"] = f"line of {x['solved_game']['line_moves']} moves" if "solved_game" in x else ""
        note["attack"] = (
            f"{x.get('solves_per_s')} cached Solves/s, server CPU "
            f"{x.get('server_cpu_ms_per_solve')} ms per Solve"
        )
    elif r["row"] == "solver-hog":
        for phase in ("control", "attack", "after"):
            s = r["phases"].get(phase, {}).get("easy Solve")
            if s:
                outcomes = x.get("easy_solve_outcomes", {}).get(phase, {})
                note[phase] = (
                    "easy Solve: "
                    + _ms(s)
                    + " ms ("
                    + ", ".join(f"{k} {v}" for k, v in outcomes.items())
                    + ")"
                )
    elif r["row"] == "solver-48-clients":
        done = {k.removeprefix("SOLVE_OUTCOME_"): v for k, v in a.items() if k != "cancelled_at_end"}
        note["attack"] = "attackers' Solves: " + (
            ", ".join(f"{k} {v}" for k, v in done.items()) or "none answered"
        )
    elif r["row"] == "newgame-flood":
        note["attack"] = (
            f"flood: {a.get('OK', 0)} NewGame OK, {a.get('RESOURCE_EXHAUSTED', 0)} RESOURCE_EXHAUSTED"
        )
        evicted = x.get("memory_store_evicted")
        note["after"] = f"resting game: {x.get('resting_game')}; games evicted: " + (
            "?" if evicted is None else f"{evicted:.0f}"
        )
    for phase in ("control", "attack", "after"):
        errors = {
            k: s["codes"]
            for k, s in r["phases"].get(phase, {}).items()
            if s["codes"] and k in ("health", "GetGame")
        }
        if errors:
            note[phase] = "; ".join(
                filter(
                    None,
                    [
                        note.get(phase, ""),
                        "errors "
                        + ", ".join(
                            f"{k}: " + " ".join(f"{c} {n}" for c, n in codes.items())
                            for k, codes in errors.items()
                        ),
                    ],
                )
            )
    return note


def print_markdown(results: list[dict[str, Any]]) -> None:
    print(
        "| row | tree | phase | health Check: OK, p50 / p99 ms | honest GetGame: OK, p50 / p99 ms | server "
        "CPU | "
        "what the row shows |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        note = row_note(r)
        for phase in ("control", "attack", "after"):
            p = r["phases"].get(phase, {})
            cpu = {"control": r.get("control_cpu_pct"), "attack": r.get("attack_cpu_pct")}.get(phase)
            print(
                f"| {r['row'] if phase == 'control' else ''} | {r['tree']} | {phase} | "
                f"{_ms(p.get('health'))} | "
                f"{_ms(p.get('GetGame'))} | {'' if cpu is None else f'{cpu:.0f} %'} | {note.get(phase, '')} |"
            )


async def main_async(args: argparse.Namespace, workdir: Path) -> list[dict[str, Any]]:
    trees = [Tree.of(label, d) for label, d in args.trees]
    rows = [ROWS[int(r)] if r.isdigit() else r for r in args.rows]
    redis_proc, redis_port = start_redis(workdir) if "watch-cancel-leak" in rows else (None, None)
    easy = easy_accordion_seeds(trees[0]) if "solver-hog" in rows else []
    results = []
    try:
        for _ in range(args.repeat):
            for row in rows:
                for tree in trees:
                    results.append(await run_row(row, tree, args, workdir, redis_port, easy))
    finally:
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(10)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", help="the tree to run (default: this one)")
    parser.add_argument("--a", help="A/B: the first tree (e.g. /work/main)")
    parser.add_argument("--b", help="A/B: the second tree")
    parser.add_argument("--rows", nargs="+", default=[str(n) for n in ROWS], help="row numbers or names")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--control", type=float, default=5.0, help="seconds of the control phase")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of the attack phase")
    parser.add_argument("--after", type=float, default=3.0, help="seconds of the after phase")
    parser.add_argument(
        "--envoy",
        action="store_true",
        help="every client through Envoy (the tree's "
        "deploy/envoy/envoy.yaml; the server trusts its x-forwarded-for where it can)",
    )
    parser.add_argument("--json", help="write the figures as JSON here")
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="also print the table in Markdown (docs/performance/hostile.md)",
    )
    parser.add_argument(
        "--render", metavar="JSON", help="print the tables of a run saved with --json, and exit"
    )
    parser.add_argument("--attack", help=argparse.SUPPRESS)
    parser.add_argument("--addr", help=argparse.SUPPRESS)
    parser.add_argument("--params", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.render:  # a saved run's tables again
        saved = json.loads(Path(args.render).read_text())
        print(f"{' '.join(saved['command'])}  ({saved['started']})")
        print_trees(saved["results"])
        print_table(saved["results"])
        print()
        print_markdown(saved["results"])
        return
    if args.attack:
        attacker_main(args.attack, args.addr, args.duration, args.params)
        return
    if args.a or args.b:
        args.trees = [("A", args.a or str(ROOT)), ("B", args.b or str(ROOT))]
    else:
        args.trees = [("this", args.source or str(ROOT))]
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="acc-hostile-") as tmp:
        results = asyncio.run(main_async(args, Path(tmp)))
    print(
        f"bench/hostile.py {' '.join(sys.argv[1:])}  ({started}; {os.cpu_count()} CPUs; grpcio "
        f"{grpc.__version__})"
    )
    print_trees(results)
    print_table(results)
    if args.markdown:
        print()
        print_markdown(results)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"command": sys.argv, "started": started, "results": results}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
