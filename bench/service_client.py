"""bench/service.py's client: channels, the calls of each RPC (a player plays seeded random legal
moves), the closed and the open loop with the server's CPU over the counted window, and the
phases run on one target.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import random
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from service_procs import ECHO_METHOD, ECHO_PAYLOAD, Proc, finish_profile, pid_cpu_seconds, start_profile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))

from accordion.v1 import accordion_pb2 as pb  # noqa: E402
from accordion.v1 import accordion_pb2_grpc as pb_grpc  # noqa: E402

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


# redis-server's pid while it runs (service.py sets it): its CPU is measured beside the server's.
REDIS_PID = 0


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


def _progress(res: Result) -> None:
    r = res.row()
    print(
        f"  {r['target']:<7} {r['rpc']:<10} {r['mode']:<6} {r['rps']:>9.1f}/s  p50 {r['p50_ms']:.2f} ms  "
        f"p99 {r['p99_ms']:.2f} ms  server CPU {r['server_cpu_pct']:.0f} %  errors {r['errors'] or 0}",
        file=sys.stderr,
        flush=True,
    )
