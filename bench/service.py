"""The service side by side with a bare grpc.aio echo server, in one run, on pinned cores.

    .venv/bin/python bench/service.py                      # the table (about 2 minutes)
    .venv/bin/python bench/service.py --json bench.json    # the table, and the figures as JSON
    .venv/bin/python bench/service.py --workers-scaling    # also: --workers 1 vs 2 on Redis

What runs where (a 2-core machine; with more cores the same two are used):

* the **server under test** on core 0 (``sched_setaffinity`` in the child before it execs):
  (a) a bare grpc.aio echo server written here (one unary method returning its request's
  bytes, no interceptor, no logging), (b) the *floor*: ``accordion-server`` on the memory store
  with ApplyMove answering a prebuilt reply (gRPC, parsing, wrappers, access log and metrics:
  what no ApplyMove of this server can go below), (c) ``accordion-server --workers 1`` on the
  embedded memory store, (d) the same on Redis. One at a time, each started fresh.
* the **client** (this process) and **redis-server** (started here on a free port, never 6379,
  no persistence) on core 1. Redis shares the client's core on purpose: the server's core
  must hold the server only, so its CPU time per request is the server's alone.

The client is the same for every target: ``--concurrency`` tasks (default 32) spread over
``--channels`` grpc.aio channels (default 4, each its own connection), closed loop: each task
sends its next request when the previous answer arrives. ``--warmup`` seconds (not counted),
then ``--duration`` seconds counted: requests/s, p50/p99 latency, and the server process's
CPU use over the counted window (from /proc: user + system), which gives the server's CPU
time per request. The echo runs first and again last (``echo-end``): this is a shared VM whose
speed drifts, so the ratios are taken over the mean of the two. The ratio column is each
line's requests/s over the echo's. When the
server's core is not busy ~100 % the client was the limit, and the CPU time per request is
the fairer comparison (the table shows both).

RPCs: ``ApplyMove`` on real games (each task plays a seeded random legal move from the
previous reply's ``legal_moves``, with ``expected_version`` and a fresh ``request_id``, and
deals a new game when one ends; those NewGame calls are not counted), ``LegalMoves`` on a
game per task, ``NewGame`` (Accordion, server-drawn seed), and the echo (64 bytes).

Then the **open loop**: requests started at a fixed rate of half the echo's closed-loop
maximum, whatever the answers do, latency counted from each request's scheduled start (no
coordinated omission): p50/p99 of ``ApplyMove`` on both stores, and of the echo; and again at
half of each store's own closed-loop ``ApplyMove`` maximum (the latency at a load it carries).

Probes (not timed): Redis commands per ``ApplyMove`` (INFO commandstats around 200 sequential
moves, after warm-up) and the Redis footprint of one ``accordion-stock`` game after 100
moves (MEMORY USAGE of each of its keys), with and without request ids.

``--workers-scaling``: ``accordion-server --workers 1`` and ``--workers 2`` on Redis, nothing
pinned (server, client and Redis share both cores), closed-loop ``ApplyMove``: the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))
sys.path.insert(0, str(ROOT / "tests"))  # redis_server: the binary, a free port, MONITOR

from accordion.v1 import accordion_pb2 as pb  # noqa: E402
from accordion.v1 import accordion_pb2_grpc as pb_grpc  # noqa: E402
from redis_server import Monitor, free_port, redis_server_binary  # noqa: E402

ECHO_METHOD = "/bench.Echo/Echo"
ECHO_PAYLOAD = bytes(range(64))
SERVER_CORE, CLIENT_CORE = 0, 1
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- the echo server (run as a child: bench/service.py --serve-echo) ------------------------------


async def _serve_echo() -> None:
    async def echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        return request

    server = grpc.aio.server()
    handler = grpc.unary_unary_rpc_method_handler(echo)  # no (de)serializer: bytes in, bytes out
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"echo listening on 127.0.0.1:{port}", flush=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(0)


def _run_loop(main: Awaitable[None], use_uvloop: bool) -> None:
    if use_uvloop:
        import uvloop

        uvloop.run(main)  # type: ignore[arg-type]
    else:
        asyncio.run(main)  # type: ignore[arg-type]


# --- processes ------------------------------------------------------------------------------------


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    addr: str = ""

    def cpu_seconds(self) -> float:
        """User + system CPU of the process and its live children (workers), from /proc."""
        total = 0.0
        for pid in [self.popen.pid, *_children(self.popen.pid)]:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / CLK_TCK
        return total

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def pid_cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


REDIS_PID = 0  # redis-server's pid while it runs: its CPU is measured beside the server's


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _pinned(core: int | None) -> Callable[[], None] | None:
    if core is None:
        return None
    return lambda: os.sched_setaffinity(0, {core})


def start_listening(
    name: str, argv: list[str], banner: str, core: int | None, log: Path, env: dict[str, str] | None = None
) -> Proc:
    """Start ``argv`` (pinned to ``core``) and wait for the line starting with ``banner``; its
    4th word is host:port (the servers here print ``... listening on HOST:PORT ...``)."""
    err = log.open("ab")
    popen = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=err,
        preexec_fn=_pinned(core),
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    err.close()
    assert popen.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = popen.stdout.readline().decode(errors="replace")
        if not line and popen.poll() is not None:
            raise RuntimeError(f"{name} exited with {popen.returncode}; see {log}")
        if line.startswith(banner):
            proc = Proc(name, popen, line.split()[3])
            # Drain the rest of stdout so the child never blocks on a full pipe.
            threading_drain(popen)
            return proc
    popen.kill()
    raise RuntimeError(f"{name} did not start in 30 s; see {log}")


def threading_drain(popen: subprocess.Popen[bytes]) -> None:
    import threading

    def drain() -> None:
        assert popen.stdout is not None
        for _ in popen.stdout:
            pass

    threading.Thread(target=drain, daemon=True).start()


def start_redis(workdir: Path, core: int | None) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
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
    popen = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_pinned(core)
    )
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


# --- the client -----------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


@dataclass
class Result:
    target: str
    rpc: str
    mode: str  # closed | open
    concurrency: int
    seconds: float
    requests: int
    errors: dict[str, int]
    latencies: list[float] = field(repr=False)
    server_cpu_s: float
    offered_rate: float = 0.0
    setup_calls: int = 0
    redis_cpu_s: float = 0.0

    def row(self) -> dict[str, Any]:
        rps = self.requests / self.seconds
        return {
            "target": self.target,
            "rpc": self.rpc,
            "mode": self.mode,
            "concurrency": self.concurrency,
            "offered_rate": round(self.offered_rate, 1) if self.offered_rate else None,
            "seconds": round(self.seconds, 2),
            "requests": self.requests,
            "rps": round(rps, 1),
            "p50_ms": round(percentile(self.latencies, 50) * 1000, 3),
            "p99_ms": round(percentile(self.latencies, 99) * 1000, 3),
            "server_cpu_pct": round(100 * self.server_cpu_s / self.seconds, 1),
            "server_cpu_us_per_req": round(
                1e6 * self.server_cpu_s / max(1, self.requests + self.setup_calls), 1
            ),
            "errors": dict(self.errors),
            "setup_calls": self.setup_calls,
            "redis_cpu_us_per_req": round(
                1e6 * self.redis_cpu_s / max(1, self.requests + self.setup_calls), 1
            )
            if self.target.startswith("redis")
            else None,
        }


class Channels:
    def __init__(self, addr: str, n: int) -> None:
        # A local subchannel pool per channel: n separate connections (else grpc shares one).
        self.channels = [
            grpc.aio.insecure_channel(addr, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(n)
        ]
        self.stubs = [pb_grpc.AccordionServiceStub(c) for c in self.channels]
        self.echos = [c.unary_unary(ECHO_METHOD) for c in self.channels]

    async def ready(self) -> None:
        await asyncio.gather(*(asyncio.wait_for(c.channel_ready(), 10) for c in self.channels))

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.channels))


Call = Callable[[], Awaitable[bool]]  # one request; False: a setup call, not counted


class Player:
    """One task's games: plays a random legal move of its current game, deals a new one at the end."""

    def __init__(self, stub: pb_grpc.AccordionServiceStub, seed: int, variant: str = "accordion") -> None:
        self.stub, self.rng, self.variant = stub, random.Random(seed), variant
        self.game: pb.Game | None = None
        self.metadata: tuple[tuple[str, str], ...] = ()
        self.tag, self.n = f"b{seed}", 0

    async def deal(self) -> None:
        reply = await self.stub.NewGame(
            pb.NewGameRequest(variant=self.variant, seed=self.rng.getrandbits(63)), timeout=10
        )
        self.game, self.metadata = reply.game, (("authorization", f"Bearer {reply.token}"),)

    async def step(self) -> bool:
        if self.game is None or not self.game.legal_moves:
            await self.deal()
            return False
        game = self.game
        self.n += 1
        request = pb.ApplyMoveRequest(
            game_id=game.id,
            move=self.rng.choice(game.legal_moves),
            expected_version=game.version,
            request_id=f"{self.tag}-{self.n}",
        )
        self.game = (await self.stub.ApplyMove(request, metadata=self.metadata, timeout=10)).game
        return True


@contextlib.contextmanager
def client_gc_off() -> Iterator[None]:
    """No garbage collection in the client during a phase: a collection pauses this process
    for tens of milliseconds, and the open loop would count that pause against the server
    (requests go out late). What piles up is collected after the phase."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()
        gc.collect()


async def make_calls(rpc: str, chans: Channels, count: int, seed: int) -> list[Call]:
    calls: list[Call] = []
    for i in range(count):
        stub, echo = chans.stubs[i % len(chans.stubs)], chans.echos[i % len(chans.echos)]
        if rpc == "echo":

            async def call(echo: Any = echo) -> bool:
                await echo(ECHO_PAYLOAD, timeout=10)
                return True
        elif rpc == "ApplyMove":
            player = Player(stub, seed * 100_003 + i)
            await player.deal()
            call = player.step
        elif rpc == "LegalMoves":
            player = Player(stub, seed * 100_003 + i)
            await player.deal()
            assert player.game is not None
            request = pb.LegalMovesRequest(game_id=player.game.id)

            async def call(stub: Any = stub, request: Any = request, md: Any = player.metadata) -> bool:
                await stub.LegalMoves(request, metadata=md, timeout=10)
                return True
        elif rpc == "NewGame":
            request = pb.NewGameRequest(variant="accordion")

            async def call(stub: Any = stub, request: Any = request) -> bool:
                await stub.NewGame(request, timeout=10)
                return True
        else:
            raise ValueError(rpc)
        calls.append(call)
    return calls


async def cpu_window(target: Proc, start: float, end: float) -> tuple[float, float]:
    """CPU seconds of the server and of redis-server between loop times ``start`` and ``end``."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(start - loop.time())
    before, redis_before = target.cpu_seconds(), pid_cpu_seconds(REDIS_PID)
    await asyncio.sleep(end - loop.time())
    return target.cpu_seconds() - before, pid_cpu_seconds(REDIS_PID) - redis_before


async def closed_loop(
    target: Proc,
    label: str,
    rpc: str,
    chans: Channels,
    concurrency: int,
    warmup: float,
    duration: float,
    seed: int,
) -> Result:
    calls = await make_calls(rpc, chans, concurrency, seed)
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    setup = 0
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.05
    counted_from, end = start + warmup, start + warmup + duration

    async def worker(call: Call) -> None:
        nonlocal setup
        while True:
            t0 = time.perf_counter()
            now = loop.time()
            if now >= end:
                return
            try:
                counted = await call()
            except grpc.aio.AioRpcError as exc:
                if now >= counted_from:
                    errors[exc.code().name] += 1
                continue
            if now >= counted_from:
                if counted:
                    latencies.append(time.perf_counter() - t0)
                else:
                    setup += 1

    cpu_task = asyncio.create_task(cpu_window(target, counted_from, end))
    with client_gc_off():
        await asyncio.gather(*(worker(c) for c in calls))
        cpu, redis_cpu = await cpu_task
    return Result(
        label,
        rpc,
        "closed",
        concurrency,
        duration,
        len(latencies),
        dict(errors),
        latencies,
        cpu,
        setup_calls=setup,
        redis_cpu_s=redis_cpu,
    )


async def open_loop(
    target: Proc,
    label: str,
    rpc: str,
    chans: Channels,
    rate: float,
    warmup: float,
    duration: float,
    seed: int,
    pool: int = 128,
) -> Result:
    """Requests started at ``rate``/s on a schedule; latency from the scheduled start."""
    calls = await make_calls(rpc, chans, pool, seed)
    free: asyncio.Queue[Call] = asyncio.Queue()
    for c in calls:
        free.put_nowait(c)
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    setup = 0
    pending: set[asyncio.Task[None]] = set()
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.05
    counted_from, end = start + warmup, start + warmup + duration

    async def one(scheduled: float) -> None:
        nonlocal setup
        call = await free.get()  # a game not in play (waiting for one counts as latency)
        try:
            while not await call():  # a finished game was dealt again: now the move
                if scheduled >= counted_from:
                    setup += 1
            if scheduled >= counted_from:
                latencies.append(loop.time() - scheduled)
        except grpc.aio.AioRpcError as exc:
            if scheduled >= counted_from:
                errors[exc.code().name] += 1
        finally:
            free.put_nowait(call)

    cpu_task = asyncio.create_task(cpu_window(target, counted_from, end))
    interval, i = 1.0 / rate, 0
    gc_off = client_gc_off()
    gc_off.__enter__()
    while True:
        scheduled = start + i * interval
        if scheduled >= end:
            break
        now = loop.time()
        if scheduled > now:
            await asyncio.sleep(scheduled - now)
        task = asyncio.create_task(one(scheduled))
        pending.add(task)
        task.add_done_callback(pending.discard)
        i += 1
    if pending:
        await asyncio.wait(pending, timeout=30)
    cpu, redis_cpu = await cpu_task
    gc_off.__exit__(None, None, None)
    return Result(
        label,
        rpc,
        "open",
        pool,
        duration,
        len(latencies),
        dict(errors),
        latencies,
        cpu,
        offered_rate=rate,
        setup_calls=setup,
        redis_cpu_s=redis_cpu,
    )


# --- probes (Redis) -------------------------------------------------------------------------------


async def redis_probe(addr: str, redis_port: int) -> dict[str, Any]:
    """Commands per ApplyMove in steady state (MONITOR: what the server sends, and what its
    script runs inside Redis), and one 100-move game's footprint."""
    import redis

    client = redis.Redis(port=redis_port)
    out: dict[str, Any] = {}
    async with grpc.aio.insecure_channel(addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        players = [Player(stub, 7000 + i, "accordion-stock") for i in range(4)]
        for p in players:
            await p.deal()
            for _ in range(5):
                await p.step()  # warm: connections up, scripts loaded, caches filled
        monitor = await asyncio.to_thread(Monitor, redis_port)
        moves = 0
        for _ in range(50):
            for p in players:
                if await p.step():
                    moves += 1
                else:
                    moves = -(10**6)  # a NewGame inside the window: not steady state
        lines = await asyncio.to_thread(monitor.stop)
        sent = Counter(Monitor.command(ln) for ln in lines if "lua]" not in ln)
        inside = Counter(Monitor.command(ln) for ln in lines if "lua]" in ln)
        out["apply_moves"] = moves
        out["commands_sent"] = dict(sent)
        out["commands_in_scripts"] = dict(inside)
        out["commands_per_move"] = round(sum(sent.values()) / moves, 3) if moves > 0 else None
        out["footprint"] = {
            label: await _footprint(stub, client, with_ids)
            for label, with_ids in (("without_request_ids", False), ("with_request_ids", True))
        }
    client.close()
    return out


async def _footprint(stub: pb_grpc.AccordionServiceStub, client: Any, with_ids: bool) -> dict[str, Any]:
    """An accordion-stock game (52 cards) after 100 moves: MEMORY USAGE of each of its keys."""
    for seed in range(1, 200):
        reply = await stub.NewGame(pb.NewGameRequest(variant="accordion-stock", seed=seed), timeout=10)
        game, md = reply.game, (("authorization", f"Bearer {reply.token}"),)
        rng = random.Random(seed)
        for n in range(100):
            if not game.legal_moves:
                break
            # Stacks where possible (the piles shrink), else deal: long games reach 100 moves.
            stacks = [m for m in game.legal_moves if m.kind == pb.MOVE_KIND_STACK]
            move = rng.choice(stacks) if stacks else game.legal_moves[0]
            request = pb.ApplyMoveRequest(
                game_id=game.id,
                move=move,
                expected_version=game.version,
                request_id=f"fp-{seed}-{n}-{'x' * 24}" if with_ids else "",
            )
            game = (await stub.ApplyMove(request, metadata=md, timeout=10)).game
        if game.moves_played >= 100:
            keys = sorted(k.decode() for k in client.scan_iter(match=f"*{{{game.id}}}*"))
            sizes = {k: client.memory_usage(k, samples=0) for k in keys}
            data = client.hget(next(k for k in keys if k.endswith(":g")), "d")
            return {
                "game_id": game.id,
                "moves": game.moves_played,
                "keys": sizes,
                "total_bytes": sum(sizes.values()),
                "data_bytes": len(data or b""),
            }
    raise RuntimeError("no accordion-stock deal reached 100 moves")


# --- the run --------------------------------------------------------------------------------------


SOURCE: dict[str, Any] = {}  # --source/--hide-hiredis: run the servers from another tree


# The floor (``--targets floor``): accordion-server as deployed (memory store, logs at the bench's
# level, metrics, uvloop) whose ApplyMove answers every call with the first reply it made. Nothing
# of the move runs (no validation, auth, engine or store): what is left is gRPC, the request's
# parse, the handlers' wrappers, the access log and the metrics, i.e. the most any ApplyMove of
# this server can reach. Bench-only: the patch is applied in the child before the server starts.
CANNED_APPLY_MOVE = """
from accordion.api import servicer as _servicer
_real = _servicer.AccordionServicer.ApplyMove
_canned = []
async def _apply_move(self, request, context):
    if not _canned:
        _canned.append(await _real(self, request, context))
    return _canned[0]
_servicer.AccordionServicer.ApplyMove = _apply_move
"""


def pure_copy(workdir: Path) -> Path:
    """``--pure-ab``: the package the servers run (``--source`` or this tree's), copied without the
    modules mypyc compiled (the solver's C core kept): the same source, interpreted."""
    src = Path(SOURCE.get("dir") or ROOT / "service") / "accordion"
    dst = workdir / "pure"
    shutil.copytree(src, dst / "accordion", ignore=shutil.ignore_patterns("__pycache__"))
    for so in (dst / "accordion").rglob("*.so"):
        if not so.name.startswith("_csolver"):
            so.unlink()
    return dst


def server_argv(
    redis_port: int | None, workers: int = 1, canned: bool = False, source: Path | None = None
) -> list[str]:
    exe = Path(sys.executable).parent / "accordion-server"
    argv = [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else ["-m", "accordion"])]
    source_dir = source or SOURCE.get("dir")
    if source_dir or SOURCE.get("hide_hiredis") or canned or SOURCE.get("gc_threshold"):
        boot = "import sys\n"
        if SOURCE.get("gc_threshold"):  # kept through the server's gc.freeze() at start-up
            boot += f"import gc\ngc.set_threshold(*{tuple(SOURCE['gc_threshold'])!r})\n"
        if SOURCE.get("hide_hiredis"):
            boot += "sys.modules['hiredis'] = None\n"  # redis-py then parses replies in Python
        if source_dir:
            boot += f"sys.path.insert(0, {str(source_dir)!r})\n"
        if canned:
            boot += CANNED_APPLY_MOVE
        boot += "sys.argv[0] = 'accordion-server'\n"
        # The entry point moved to accordion.__main__; an older --source tree has it in server.
        boot += (
            "try:\n    from accordion.__main__ import main\n"
            "except ImportError:\n    from accordion.server import main\n"
        )
        boot += "main()\n"
        argv = [sys.executable, "-c", boot]
    argv += ["--listen", "127.0.0.1:0", "--workers", str(workers)]
    if redis_port is not None:
        argv += ["--redis-url", f"redis://127.0.0.1:{redis_port}/0"]
    return argv


async def run_target(
    proc: Proc, label: str, rpcs: list[str], args: argparse.Namespace, open_rate: float = 0.0
) -> list[Result]:
    """The closed-loop phases; after ApplyMove's, its open-loop phases (at half of ApplyMove's own
    maximum, then at ``open_rate``), before the other RPCs add games to the server's heap."""
    chans = Channels(proc.addr, args.channels)
    await chans.ready()
    out = []
    for rpc in rpcs:
        spy = start_profile(proc, f"{label}-{rpc}", args)
        res = await closed_loop(
            proc, label, rpc, chans, args.concurrency, args.warmup, args.duration, args.seed
        )
        finish_profile(spy)
        out.append(res)
        _progress(res)
        if (
            rpc == "ApplyMove" and open_rate and not args.no_open
        ):  # (the overload, if any, last: its backlog lingers)
            out.append(await run_open(proc, label, "ApplyMove", res.requests / res.seconds / 2, args))
            out.append(await run_open(proc, label, "ApplyMove", open_rate, args))
    await chans.close()
    return out


async def run_open(proc: Proc, label: str, rpc: str, rate: float, args: argparse.Namespace) -> Result:
    chans = Channels(proc.addr, args.channels)
    await chans.ready()
    res = await open_loop(proc, label, rpc, chans, rate, args.warmup, args.duration, args.seed)
    await chans.close()
    _progress(res)
    return res


def start_profile(
    proc: Proc, name: str, args: argparse.Namespace
) -> tuple[subprocess.Popen[bytes], Path] | None:
    """py-spy on the server during a closed-loop phase (``--profile DIR``): collapsed stacks."""
    if not args.profile:
        return None
    out = Path(args.profile) / f"{name}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy"
    argv = [
        spy,
        "record",
        "--pid",
        str(proc.popen.pid),
        "--duration",
        str(int(args.warmup + args.duration)),
        "--rate",
        "250",
        "--format",
        "raw",
        "--output",
        str(out),
        "--nonblocking",
    ]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), out


def finish_profile(spy: tuple[subprocess.Popen[bytes], Path] | None, top: int = 30) -> None:
    if spy is None:
        return
    popen, path = spy
    popen.wait(60)
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        total += n
        frames = [
            re.sub(r" \(/.*/(site-packages|service|lib/python3[.0-9]*)/", " (", f) for f in stack.split(";")
        ]
        for f in set(frames):
            inclusive[f] += n
        own[frames[-1]] += n
    lines = [f"{path.stem}: {total} samples", "inclusive:"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in inclusive.most_common(top)]
    lines += ["self:"] + [f"  {100 * n / total:5.1f}%  {f}" for f, n in own.most_common(top)]
    path.with_suffix(".top").write_text("\n".join(lines) + "\n")


def _progress(res: Result) -> None:
    r = res.row()
    print(
        f"  {r['target']:<7} {r['rpc']:<10} {r['mode']:<6} {r['rps']:>9.1f}/s  p50 {r['p50_ms']:.2f} ms  "
        f"p99 {r['p99_ms']:.2f} ms  server CPU {r['server_cpu_pct']:.0f} %  errors {r['errors'] or 0}",
        file=sys.stderr,
        flush=True,
    )


async def main_async(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    pin = len(os.sched_getaffinity(0)) >= 2 and not args.no_pin
    server_core = SERVER_CORE if pin else None
    if pin:
        os.sched_setaffinity(0, {CLIENT_CORE})  # the client, and Redis started below, on core 1
    redis_proc, redis_port = start_redis(workdir, CLIENT_CORE if pin else None)
    global REDIS_PID
    REDIS_PID = redis_proc.pid
    results: list[Result] = []
    probe: dict[str, Any] = {}
    scaling: dict[str, Any] = {}
    # NewGame unlimited: the bench deals games from one address as fast as a load tool does, and
    # a per-client NewGame rate (--newgame-rate, issue 28) would refuse them (docs/load.md). By
    # the environment, which a --source tree from before that flag ignores.
    env = {"ACCORDION_LOG_LEVEL": args.log_level, "ACCORDION_NEWGAME_RATE": "0", "ACCORDION_WATCH_RATE": "0"}
    try:
        echo_argv = [sys.executable, __file__, "--serve-echo", *(["--uvloop"] if args.echo_uvloop else [])]
        targets = [("echo", echo_argv, "echo listening on", ["echo"])]
        rpcs = [r for r in ("ApplyMove", "LegalMoves", "NewGame") if r in args.rpcs]
        targets += [
            ("floor", server_argv(None, canned=True), "accordion-server listening on", ["ApplyMove"]),
            ("memory", server_argv(None), "accordion-server listening on", rpcs),
        ]
        pure = pure_copy(workdir) if args.pure_ab else None
        if pure:  # each store's compiled server, then the same with the interpreted source
            targets += [("mem-pure", server_argv(None, source=pure), "accordion-server listening on", rpcs)]
        targets += [("redis", server_argv(redis_port), "accordion-server listening on", rpcs)]
        if pure:
            targets += [
                ("redis-pure", server_argv(redis_port, source=pure), "accordion-server listening on", rpcs)
            ]
        procs: dict[str, Proc] = {}
        pure_of = {"mem-pure": "memory", "redis-pure": "redis"}
        targets = [t for t in targets if t[0] == "echo" or pure_of.get(t[0], t[0]) in args.targets]
        rate = 0.0  # the open loop's rate, set from the echo's maximum (the echo runs first)
        for label, argv, banner, target_rpcs in targets:
            print(f"{label}: starting on core {server_core}", file=sys.stderr, flush=True)
            proc = start_listening(label, argv, banner, server_core, workdir / f"{label}.log", env)
            procs[label] = proc
            try:
                results += await run_target(
                    proc, label, target_rpcs, args, 0.0 if label in ("echo", "floor") else rate
                )
                if label == "echo":
                    echo_rps = results[-1].requests / results[-1].seconds
                    rate = args.open_rate or echo_rps / 2
                    if not args.no_open:
                        results.append(await run_open(proc, label, "echo", rate, args))
                if label == "redis":
                    probe = await redis_probe(proc.addr, redis_port)
            finally:
                proc.stop()
        # The echo once more: the machine's speed drifts (a shared VM), so the ratios use the
        # mean of the echo before and after the others.
        proc = start_listening(
            "echo", echo_argv, "echo listening on", server_core, workdir / "echo2.log", env
        )
        try:
            again = await run_target(proc, "echo", ["echo"], args)
            again[0].target = "echo-end"
            results += again
        finally:
            proc.stop()
        if args.workers_scaling:
            scaling = await workers_scaling(args, redis_port, workdir, env)
    finally:
        redis_proc.terminate()
        redis_proc.wait(10)
    return report(results, probe, scaling, args, pin)


async def workers_scaling(
    args: argparse.Namespace, redis_port: int, workdir: Path, env: dict[str, str]
) -> dict[str, Any]:
    """--workers 1 vs 2 on Redis; nothing pinned (both cores shared by server, client and Redis)."""
    os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    rows = {}
    for workers in (1, 2):
        label = f"redis-w{workers}"
        print(f"{label}: unpinned", file=sys.stderr, flush=True)
        proc = start_listening(
            label,
            server_argv(redis_port, workers),
            "accordion-server listening on",
            None,
            workdir / f"{label}.log",
            env,
        )
        try:
            chans = Channels(proc.addr, max(args.channels, 8))  # connections spread over workers
            await chans.ready()
            res = await closed_loop(
                proc, label, "ApplyMove", chans, args.concurrency, args.warmup, args.duration, args.seed
            )
            await chans.close()
            _progress(res)
            rows[workers] = res.row()
        finally:
            proc.stop()
    return {
        "workers_1": rows[1],
        "workers_2": rows[2],
        "ratio_2_over_1": round(rows[2]["rps"] / rows[1]["rps"], 2) if rows[1]["rps"] else None,
    }


def report(
    results: list[Result],
    probe: dict[str, Any],
    scaling: dict[str, Any],
    args: argparse.Namespace,
    pinned: bool,
) -> dict[str, Any]:
    rows = [r.row() for r in results]
    echoes = [r for r in rows if r["target"] in ("echo", "echo-end") and r["mode"] == "closed"]
    echo_rps = sum(r["rps"] for r in echoes) / len(echoes) if echoes else 0.0
    echo_us = sum(r["server_cpu_us_per_req"] for r in echoes) / len(echoes) if echoes else 0.0
    for r in rows:
        if echo_rps:
            r["ratio_rps"] = round(r["rps"] / echo_rps, 3)
            r["ratio_cpu"] = (
                round(echo_us / r["server_cpu_us_per_req"], 3) if r["server_cpu_us_per_req"] else None
            )
    return {
        "command": "python bench/service.py " + " ".join(sys.argv[1:]),
        "machine": {
            "python": platform.python_version(),
            "grpcio": grpc.__version__,
            "cpus": os.cpu_count(),
            "pinned": pinned,
            "server_core": SERVER_CORE if pinned else None,
            "client_and_redis_core": CLIENT_CORE if pinned else None,
            "load_before": os.getloadavg(),
        },
        "settings": {
            "concurrency": args.concurrency,
            "channels": args.channels,
            "warmup_s": args.warmup,
            "duration_s": args.duration,
            "log_level": args.log_level,
        },
        "echo_mean": {"rps": round(echo_rps, 1), "server_cpu_us_per_req": round(echo_us, 1)},
        "results": rows,
        "redis_probe": probe,
        "workers_scaling": scaling,
    }


def print_table(data: dict[str, Any]) -> None:
    head = (
        f"{'target':<8} {'rpc':<10} {'mode':<11} {'req/s':>8} {'x echo':>6} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'srv CPU':>7} {'µs/req':>7} {'x echo':>6} {'redis µs':>8}"
    )
    print(head)
    print("-" * len(head))
    for r in data["results"]:
        mode = r["mode"] if r["mode"] == "closed" else f"open@{r['offered_rate']:.0f}"
        print(
            f"{r['target']:<8} {r['rpc']:<10} {mode:<11} {r['rps']:>8.0f} {r.get('ratio_rps', 0):>6.2f} "
            f"{r['p50_ms']:>7.2f} {r['p99_ms']:>7.2f} {r['server_cpu_pct']:>6.0f}% "
            f"{r['server_cpu_us_per_req']:>7.0f} {r.get('ratio_cpu') or 0:>6.2f} "
            f"{'' if r['redis_cpu_us_per_req'] is None else format(r['redis_cpu_us_per_req'], '.0f'):>8}"
            + (f"  errors {r['errors']}" if r["errors"] else "")
        )
    mean = data.get("echo_mean", {})
    print(
        f"(echo: the mean of its two runs, {mean.get('rps', 0):.0f}/s and "
        f"{mean.get('server_cpu_us_per_req', 0):.0f} µs "
        "of server CPU per request)"
    )
    print(
        "(x echo: requests/s over the echo's; the second: the echo's server CPU per request over this "
        "line's, i.e. the ratio when the server's core is the limit; redis µs: redis-server's CPU per "
        "request)"
    )
    probe = data.get("redis_probe") or {}
    if probe:
        print(
            f"\nRedis commands per ApplyMove (steady state, {probe['apply_moves']} moves, MONITOR): "
            f"{probe['commands_per_move']} sent by the server {probe['commands_sent']}; inside the script: "
            f"{probe['commands_in_scripts']}"
        )
        for label, fp in probe["footprint"].items():
            print(
                f"accordion-stock game after {fp['moves']} moves, {label.replace('_', ' ')}: "
                f"{fp['total_bytes']} bytes in Redis (MEMORY USAGE: "
                + ", ".join(f"{k.rsplit(':', 1)[1]} {v}" for k, v in fp["keys"].items())
                + f"; game data {fp['data_bytes']} bytes)"
            )
    scaling = data.get("workers_scaling") or {}
    if scaling:
        w1, w2 = scaling["workers_1"], scaling["workers_2"]
        print(
            f"\nWorkers (Redis, unpinned, ApplyMove): 1 worker {w1['rps']:.0f}/s (p99 {w1['p99_ms']:.2f} "
            "ms), "
            f"2 workers {w2['rps']:.0f}/s (p99 {w2['p99_ms']:.2f} ms): x{scaling['ratio_2_over_1']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5.0, help="counted seconds per phase")
    parser.add_argument("--warmup", type=float, default=1.5, help="uncounted seconds before each phase")
    parser.add_argument("--concurrency", type=int, default=32, help="closed-loop tasks")
    parser.add_argument("--channels", type=int, default=4, help="client connections")
    parser.add_argument("--rpcs", nargs="+", default=["ApplyMove", "LegalMoves", "NewGame"])
    parser.add_argument("--open-rate", type=float, default=0.0, help="open-loop rate (default: echo max / 2)")
    parser.add_argument(
        "--no-open", action="store_true", help="closed loops only (a quicker A/B of two trees)"
    )
    parser.add_argument("--workers-scaling", action="store_true", help="also --workers 1 vs 2 on Redis")
    parser.add_argument(
        "--log-level", default="info", help="the servers' --log-level (default: info, as deployed)"
    )
    parser.add_argument("--echo-uvloop", action="store_true", help="run the echo server on uvloop")
    parser.add_argument("--no-pin", action="store_true", help="do not pin anything to cores")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--targets",
        nargs="+",
        default=["echo", "floor", "memory", "redis"],
        help="which servers (the echo always runs: the ratios need it); floor: "
        "accordion-server answering ApplyMove with a prebuilt reply",
    )
    parser.add_argument("--profile", help="py-spy each server phase; collapsed stacks and a summary here")
    parser.add_argument("--json", help="write the figures as JSON here")
    parser.add_argument(
        "--source",
        help="run accordion-server from this service/ directory (e.g. an export "
        "of an earlier commit: `git archive <rev> service | tar -x -C DIR`)",
    )
    parser.add_argument(
        "--pure-ab",
        action="store_true",
        help="after the memory and redis servers, the same "
        "servers from the pure-Python source (mypyc's modules left out): compiled vs interpreted",
    )
    parser.add_argument(
        "--gc-threshold",
        type=int,
        nargs=3,
        help="the servers' gc.set_threshold (an A/B of "
        "the collector's thresholds; the default is CPython's 700 10 10)",
    )
    parser.add_argument("--hide-hiredis", action="store_true", help="the servers run without hiredis")
    parser.add_argument("--serve-echo", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--uvloop", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        _run_loop(_serve_echo(), args.uvloop)
        return
    SOURCE.update(dir=args.source, hide_hiredis=args.hide_hiredis, gc_threshold=args.gc_threshold)
    with tempfile.TemporaryDirectory(prefix="acc-bench-") as tmp:
        data = asyncio.run(main_async(args, Path(tmp)))
    print_table(data)
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
