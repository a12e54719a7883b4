"""The solver's fair share and the cached Solve reply, for two servers side by side in one run.

    .venv/bin/python bench/solver_fairness.py \\
        --server main=/work/main/.venv/bin/accordion-server --server branch=.venv/bin/accordion-server

For each server (``name=command``: its accordion-server, or any command line that starts one,
e.g. ``base=env PYTHONPATH=/tmp/base/service .venv/bin/python -m accordion`` for a source tree
with the compiled modules copied beside it), started fresh on the memory store with
two solver threads, a 30 s Solve budget and API keys for two clients:

1. **Beside a hog**: client ``hog`` starts 4 long Solves (Accordion's Revenge, leap 2: deals
   no search settles within the run); once the server burns CPU, client ``light`` sends
   ``--easy`` easy Solves one after another (Accordion deals won in milliseconds alone), each
   with a 5 s budget and a 20 s deadline: outcome, positions searched and latency of each.
   A control, the same easy Solves with nothing else running, comes first.
2. **A cached Solve**: a solved open one-suit Spider deal's line (long: ~100 moves), solved
   once, then ``--cached`` Solves of it in a row (all answered from the cache): the client's
   latency (p50, p99) and the server process's CPU time per call (/proc, user + system); and
   for scale, as many GetGame calls of the same game.
3. **48 clients** (``--crowd``): each of 48 clients (its own API key) keeps 4 long Solves going
   on its own connection, sending the next as soon as one ends, refused or not (an attacker
   ignores RetryInfo; with ``--crowd-honours-retry`` it waits the RetryInfo's second), for
   ``--crowd-seconds``; meanwhile an honest client (another key,
   another connection) sends a GetGame and a health Check every 10 ms: their p50 and p99,
   beside a control of the same honest calls with nothing else running, and the Solves'
   outcomes by status.

Not a test: the figures depend on the machine. Each server's own log is left in a temporary
directory (printed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import grpc.aio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402

from accordion.api.apikeys import hash_key  # noqa: E402
from accordion.v1 import accordion_pb2 as pb  # noqa: E402
from accordion.v1 import accordion_pb2_grpc as pb_grpc  # noqa: E402
from server_launcher import clean_env  # noqa: E402

KEYS = {"hog": "bench-hog-key-0123456789", "light": "bench-light-key-0123456789"}
KEYS.update({f"crowd{i}": f"bench-crowd-key-{i:02d}-0123456789" for i in range(48)})
HARD = ("accordions-revenge", {"leap": "2"}, (0, 1, 2))
EASY_SEEDS = (7, 11, 13, 2, 3, 5, 17, 19, 23, 29)
TICKS = os.sysconf("SC_CLK_TCK")


def start(command: str, workdir: Path, name: str) -> tuple[subprocess.Popen[bytes], str]:
    keys = workdir / "keys.json"
    keys.write_text(json.dumps({"keys": [{"name": n, "sha256": hash_key(k)} for n, k in KEYS.items()]}))
    env = clean_env(
        {
            "ACCORDION_SOLVE_MAX_SECONDS": "30",
            "ACCORDION_SOLVER_THREADS": "2",
            "ACCORDION_API_KEYS_FILE": str(keys),
            "ACCORDION_LOG_LEVEL": os.environ.get("BENCH_LOG_LEVEL", "warning"),
        }
    )
    out = (workdir / f"{name}.out").open("wb")
    err = (workdir / f"{name}.err").open("wb")
    proc = subprocess.Popen(
        [*shlex.split(command), "--listen", "127.0.0.1:0"], stdout=out, stderr=err, env=env
    )
    give_up = time.monotonic() + 30
    while time.monotonic() < give_up:
        text = (workdir / f"{name}.out").read_text(errors="replace")
        if "listening on " in text:
            addr = text.split("listening on ", 1)[1].split()[0]
            return proc, addr
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{command} did not start: {(workdir / f'{name}.err').read_text()}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Keyed:
    def __init__(self, addr: str, key: str) -> None:
        # Its own connection: channels to one address otherwise share one (gRPC's global
        # subchannel pool), and 48 clients' calls would meet the server's 100 streams a connection.
        self.channel = grpc.aio.insecure_channel(addr, options=[("grpc.use_local_subchannel_pool", 1)])
        self.stub = pb_grpc.AccordionServiceStub(self.channel)
        self.key = key

    def md(self, token: str = "") -> tuple[tuple[str, str], ...]:
        return (("x-api-key", self.key),) + ((("authorization", f"Bearer {token}"),) if token else ())

    async def game(self, variant: str, seed: int, options: dict[str, str]) -> tuple[str, str]:
        reply = await self.stub.NewGame(
            pb.NewGameRequest(variant=variant, seed=seed, options=options), metadata=self.md(), timeout=10
        )
        return reply.game.id, reply.token

    async def solve(self, game: tuple[str, str], timeout: float, **budget: int) -> pb.SolveResponse:
        return await self.stub.Solve(
            pb.SolveRequest(game_id=game[0], **budget), metadata=self.md(game[1]), timeout=timeout
        )


def summary(latencies: list[float], cpu: float) -> str:
    ordered = sorted(latencies)
    p99 = ordered[max(0, int(len(ordered) * 0.99) - 1)]
    return (
        f"p50 {statistics.median(ordered) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms, "
        f"server CPU {cpu / len(ordered) * 1000:.2f} ms a call"
    )


async def easy_solves(light: Keyed, count: int, offset: int) -> list[str]:
    rows = []
    for seed in EASY_SEEDS[offset : offset + count]:
        game = await light.game("accordion", seed, {})
        started = time.monotonic()
        try:
            answer = await light.solve(game, timeout=20, max_millis=5000)
            what = (
                f"{pb.SolveOutcome.Name(answer.outcome).removeprefix('SOLVE_OUTCOME_')} nodes={answer.nodes}"
            )
        except grpc.aio.AioRpcError as exc:
            what = exc.code().name
        rows.append(f"seed {seed}: {what} in {(time.monotonic() - started) * 1000:.0f} ms")
    return rows


async def honest_calls(addr: str, light: Keyed, game: tuple[str, str], seconds: float) -> str:
    """GetGame and health Check every 10 ms for ``seconds``: their p50 and p99, and failures."""
    health = health_pb2_grpc.HealthStub(light.channel)
    get_lats, check_lats, failed = [], [], 0
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        started = time.perf_counter()
        try:
            await light.stub.GetGame(
                pb.GetGameRequest(game_id=game[0]), metadata=light.md(game[1]), timeout=5
            )
            get_lats.append(time.perf_counter() - started)
        except grpc.aio.AioRpcError:
            failed += 1
        started = time.perf_counter()
        try:
            await health.Check(health_pb2.HealthCheckRequest(), timeout=5)
            check_lats.append(time.perf_counter() - started)
        except grpc.aio.AioRpcError:
            failed += 1
        await asyncio.sleep(0.01)

    def p(lats: list[float], q: float) -> str:
        ordered = sorted(lats)
        return f"{ordered[max(0, int(len(ordered) * q) - 1)] * 1000:.1f}" if ordered else "-"

    return (
        f"GetGame p50 {p(get_lats, 0.5)} ms p99 {p(get_lats, 0.99)} ms ({len(get_lats)} OK); "
        f"Check p50 {p(check_lats, 0.5)} ms p99 {p(check_lats, 0.99)} ms ({len(check_lats)} OK); {failed} "
        "failed"
    )


async def attack(addr: str, seconds: float, honour_retry: bool) -> dict[str, int]:
    """The crowd (run in a process of its own, so its loop does not slow the honest client's):
    48 clients, 4 Solves each at a time, for ``seconds``; the Solves' outcomes by status."""
    clients = [Keyed(addr, KEYS[f"crowd{i}"]) for i in range(48)]
    variant, options, seeds = HARD
    outcomes: dict[str, int] = {}
    stop = time.monotonic() + seconds

    async def attacker(client: Keyed, target: tuple[str, str]) -> None:
        while time.monotonic() < stop:
            try:
                answer = await client.solve(target, timeout=10)
                what = pb.SolveOutcome.Name(answer.outcome).removeprefix("SOLVE_OUTCOME_")
            except grpc.aio.AioRpcError as exc:
                what = exc.code().name
                if honour_retry and exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    await asyncio.sleep(1.0)  # the RetryInfo's delay
            outcomes[what] = outcomes.get(what, 0) + 1

    targets = [await c.game(variant, seeds[i % 3], options) for i, c in enumerate(clients)]
    attackers = [asyncio.ensure_future(attacker(c, t)) for c, t in zip(clients, targets) for _ in range(4)]
    await asyncio.wait(attackers, timeout=seconds)
    for task in attackers:
        task.cancel()
    await asyncio.gather(*attackers, return_exceptions=True)
    for c in clients:
        await c.channel.close()
    return outcomes


async def crowd(addr: str, light: Keyed, seconds: float, honour_retry: bool) -> None:
    game = await light.game("accordion", 7, {})
    print(
        f"  control, honest client alone for {seconds:g} s: {await honest_calls(addr, light, game, seconds)}"
    )
    crowd_proc = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--attack",
        addr,
        "--crowd-seconds",
        str(seconds + 4),
        *(["--crowd-honours-retry"] if honour_retry else []),
        stdout=asyncio.subprocess.PIPE,
    )
    await asyncio.sleep(3)  # the crowd deals its games and fills the queues
    how = "waiting out each RetryInfo" if honour_retry else "asking again at once when refused"
    print(
        f"  48 clients x 4 long Solves (another process; {how}), honest client for {seconds:g} s: "
        f"{await honest_calls(addr, light, game, seconds)}"
    )
    out, _ = await crowd_proc.communicate()
    print(f"  the crowd's Solves by outcome: {out.decode().strip()}")


async def measure(
    name: str, command: str, easy: int, cached: int, workdir: Path, crowd_seconds: float, honour_retry: bool
) -> None:
    proc, addr = start(command, workdir, name)
    hog, light = Keyed(addr, KEYS["hog"]), Keyed(addr, KEYS["light"])
    try:
        print(f"\n== {name}: {command}")
        print("  control (nothing else running):")
        for row in await easy_solves(light, easy, 0):
            print(f"    {row}")
        variant, options, seeds = HARD
        games = [await hog.game(variant, seeds[i % 3], options) for i in range(4)]
        hogging = [asyncio.ensure_future(hog.solve(g, timeout=120)) for g in games]
        before = cpu_seconds(proc.pid)
        while cpu_seconds(proc.pid) - before < 0.2:
            await asyncio.sleep(0.05)
        print("  beside 4 long Solves of another client:")
        for row in await easy_solves(light, easy, easy):
            print(f"    {row}")
        for task in hogging:
            task.cancel()
        await asyncio.gather(*hogging, return_exceptions=True)
        await asyncio.sleep(1.0)  # the cancelled searches stop (within 1024 positions)

        game = await light.game("spider", 1, {"open": "true", "suits": "1"})
        first = await light.solve(game, timeout=60)
        lats = []
        cpu0 = cpu_seconds(proc.pid)
        for _ in range(cached):
            started = time.perf_counter()
            reply = await light.solve(game, timeout=10)
            lats.append(time.perf_counter() - started)
            assert reply.cached
        cpu = cpu_seconds(proc.pid) - cpu0
        print(
            f"  cached Solve of open Spider seed 1 ({pb.SolveOutcome.Name(first.outcome)}, "
            f"{len(first.moves)} moves), {cached} calls: {summary(lats, cpu)}"
        )
        # For scale: GetGame of the same game (a load, the game's bytes), the same number of calls.
        lats = []
        cpu0 = cpu_seconds(proc.pid)
        for _ in range(cached):
            started = time.perf_counter()
            await light.stub.GetGame(
                pb.GetGameRequest(game_id=game[0]), metadata=light.md(game[1]), timeout=10
            )
            lats.append(time.perf_counter() - started)
        print(f"  GetGame of the same game, {cached} calls: {summary(lats, cpu_seconds(proc.pid) - cpu0)}")
        if crowd_seconds:
            await crowd(addr, light, crowd_seconds, honour_retry)
    finally:
        await hog.channel.close()
        await light.channel.close()
        proc.terminate()
        proc.wait(15)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", action="append", default=[], help="name=command of an accordion-server")
    parser.add_argument(
        "--crowd-honours-retry",
        action="store_true",
        help="part 3's clients wait out each RetryInfo (by default they ask again at once)",
    )
    parser.add_argument("--attack", default="", help=argparse.SUPPRESS)  # part 3's crowd, on this address
    parser.add_argument("--easy", type=int, default=5, help="easy Solves in each part (at most 5)")
    parser.add_argument("--cached", type=int, default=1000, help="cached Solves (and GetGames) to time")
    parser.add_argument(
        "--crowd-seconds",
        type=float,
        default=0.0,
        help="also part 3 (48 clients), the honest client's calls timed for this long (0: off)",
    )
    args = parser.parse_args()
    if args.attack:
        outcomes = await attack(args.attack, args.crowd_seconds, args.crowd_honours_retry)
        print(json.dumps(dict(sorted(outcomes.items()))))
        return
    workdir = Path(tempfile.mkdtemp(prefix="bench-fairness-"))
    print(f"server logs in {workdir}")
    for spec in args.server:
        name, _, command = spec.partition("=")
        await measure(
            name,
            command,
            min(args.easy, 5),
            args.cached,
            workdir,
            args.crowd_seconds,
            args.crowd_honours_retry,
        )


if __name__ == "__main__":
    asyncio.run(main())
