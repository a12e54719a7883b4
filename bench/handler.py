"""The ApplyMove handler in-process, without gRPC: what our own Python costs per move, warm and
with the CPU caches evicted between calls.

    .venv/bin/python bench/handler.py                  # warm, then 1, 4 and 16 MiB evicted
    .venv/bin/python bench/handler.py --profile        # and cProfile's top functions
    .venv/bin/python bench/handler.py --against ../old --pairs 8 --evict 0 4   # A/B, alternating runs
    .venv/bin/python bench/handler.py --rpc NewGame    # the NewGame handler instead (same modes)
    .venv/bin/python bench/handler.py --redis --uvloop # on a private redis-server, on uvloop (as served)
    .venv/bin/python bench/handler.py --rpc NewGame --gc   # and the garbage collector's share
    .venv/bin/python bench/handler.py --tracing        # with OpenTelemetry spans on (dropped, not sent)

The handler is the one the server registers (``service.generic_handler`` wrapped by the
per-method wrapper: limits, validation, auth, engine, reply, memory store, access log and
metrics; it reads its one request with ``context.read()``, as in the server), fed
real requests: like bench/service.py's client, each move is a random legal move of the previous
reply with ``expected_version`` and a fresh ``request_id``; a finished game is dealt again
(NewGame is not timed). Only the handler call is timed (the request's bytes are parsed inside).
``--rpc NewGame`` times the NewGame handler instead, fed what bench/service.py sends: an
Accordion deal with a server-drawn seed, no request id.

``--against DIR`` runs this tree and the tree at DIR (its ``service/``, e.g. a checkout of the
previous commit) in alternating subprocesses, ``--pairs`` times, and prints each run and the
medians. Each run reports wall time and the handler's own CPU time (``thread_time``), which
other processes on a busy machine disturb much less.

``--redis`` puts the games in a ``redis-server`` started here (a free loopback port, never 6379;
the lean connection, as the server uses it) instead of the memory store: the handler's CPU time
then includes the store call's own Python (the session layer's timer, the executor, the lean
connection, the metrics), not Redis's, which runs in its own process. ``--uvloop`` runs on
uvloop, as the server does by default (timers and futures cost differently there).

Why the eviction: inside the server the same code costs about twice as much (docs/performance.md:
the handler measured in-server), because between two calls gRPC's core, the event loop and the
kernel run on the same core and leave L1/L2 cold. Writing N MiB between calls reproduces that
here, so a change can be judged by how much memory and code it touches, not only by its warm time.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_SOURCE = sys.argv[sys.argv.index("--source") + 1] if "--source" in sys.argv else str(ROOT)
sys.path.insert(0, str(Path(_SOURCE) / "service"))

from accordion.api import interceptors, service  # noqa: E402
from accordion.api.servicer import AccordionServicer  # noqa: E402  (the same in every tree since)
from accordion.server import configure_logging  # noqa: E402
from accordion.store import MemoryStore, open_store  # noqa: E402
from accordion.v1 import accordion_pb2 as pb  # noqa: E402

METHOD = "/accordion.v1.AccordionService/"


class Context:
    """What the handlers read of a grpc.aio context."""

    def __init__(self) -> None:
        self.metadata: tuple[tuple[str, str], ...] = ()
        self.request: Any = None  # the call's one message, as grpc's context.read() returns it

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    def time_remaining(self) -> float:
        return 10.0

    def peer(self) -> str:
        return "ipv4:127.0.0.1:40000"

    async def read(self) -> Any:
        return self.request

    def code(self) -> None:
        return None

    def set_trailing_metadata(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self.trailing = metadata  # (grpc.aio keeps it for the status, as here)

    async def abort(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"aborted: {args}")


class _Details:
    def __init__(self, method: str) -> None:
        self.method, self.invocation_metadata = METHOD + method, ()


async def call(handler: Any, data: bytes, context: Context) -> bytes:
    """One call of a registered handler on a request's bytes, parsed and answered as grpc does."""
    if handler.stream_unary is not None:  # the per-method wrapper reads its one request itself
        context.request = handler.request_deserializer(data)
        return handler.response_serializer(await handler.stream_unary(None, context))
    return handler.response_serializer(  # (a tree from before the wrapper)
        await handler.unary_unary(handler.request_deserializer(data), context)
    )


async def run(
    moves: int, evict_mib: int, profile: bool, seed: int, rpc: str = "ApplyMove", redis_url: str = ""
) -> tuple[float, float]:
    """Mean µs per handler call of ``rpc`` (ApplyMove or NewGame): (wall, CPU of this thread).
    ``redis_url``: the games in that Redis (as the server opens it) instead of a MemoryStore."""
    store = open_store(redis_url) if redis_url else MemoryStore()
    try:
        return await _run(store, moves, evict_mib, profile, seed, rpc)
    finally:
        await store.close()


async def _run(
    store: Any, moves: int, evict_mib: int, profile: bool, seed: int, rpc: str
) -> tuple[float, float]:
    handlers = service.generic_handler(AccordionServicer(store, game_ttl=3600))
    if hasattr(interceptors, "_WrappedGeneric"):  # one per-method wrapper, with the limits
        from accordion.api.limits import Admission, Limits

        tracing = _tracing() if TRACING else None
        if tracing is not None:  # (the servicer's store wrapped too, as server.py does)
            handlers = service.generic_handler(AccordionServicer(tracing.store(store), game_ttl=3600))
        gate = interceptors.Gate(Admission(Limits()), **({"tracing": tracing} if tracing is not None else {}))
        observed = interceptors._WrappedGeneric(handlers, gate)
    else:  # a tree from before it (an A/B with --source)
        observed = interceptors._ObservedGeneric(handlers)
    configure_logging("info", open(os.devnull, "w"))  # noqa: SIM115  (as the server logs, into the void)
    apply_move, new_game = observed.service(_Details("ApplyMove")), observed.service(_Details("NewGame"))
    rng = random.Random(seed)
    evict = bytearray(evict_mib << 20)
    filler = bytes(len(evict))

    async def deal() -> tuple[Context, pb.Game]:
        context = Context()
        data = pb.NewGameRequest(variant="accordion", seed=rng.getrandbits(63)).SerializeToString()
        reply = pb.NewGameResponse.FromString(await call(new_game, data, context))
        context.metadata = (("authorization", f"Bearer {reply.token}"),)
        return context, reply.game

    context, game = await deal()
    spent, cpu, done = 0.0, 0.0, 0
    profiler = cProfile.Profile() if profile else None
    collector = _CollectorTime() if COLLECTOR_TIMED else None
    new_game_data = pb.NewGameRequest(variant="accordion").SerializeToString()
    while done < moves:
        if rpc == "NewGame":
            handler, data = new_game, new_game_data
        elif not game.legal_moves:
            context, game = await deal()
            continue
        else:
            handler = apply_move
            request = pb.ApplyMoveRequest(
                game_id=game.id,
                move=rng.choice(game.legal_moves),
                expected_version=game.version,
                request_id=f"m-{done}",
            )
            data = request.SerializeToString()
        if evict:
            evict[:] = filler
        if profiler:
            profiler.enable()
        started, cpu_started = time.perf_counter(), time.thread_time()
        reply = await call(handler, data, context)
        spent += time.perf_counter() - started
        cpu += time.thread_time() - cpu_started
        if profiler:
            profiler.disable()
        if handler is apply_move:
            game = pb.ApplyMoveResponse.FromString(reply).game
        done += 1
    flush_access_log = getattr(interceptors, "flush_access_log", None)  # a tree from before access_log.py
    if flush_access_log is None:
        from accordion.api.access_log import flush_access_log
    flush_access_log()
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    if collector is not None:
        collector.report(moves)
    return spent / moves * 1e6, cpu / moves * 1e6


COLLECTOR_TIMED = False  # --gc


class _CollectorTime:
    """With --gc: the garbage collector's passes during a run, by generation, and their wall time
    (``gc.callbacks``), per handler call. (Start-up objects are frozen first, as the server does.)"""

    def __init__(self) -> None:
        gc.collect()
        gc.freeze()
        self.count, self.seconds, self._started = [0, 0, 0], [0.0, 0.0, 0.0], 0.0
        gc.callbacks.append(self._seen)

    def _seen(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.count[info["generation"]] += 1
            self.seconds[info["generation"]] += time.perf_counter() - self._started

    def report(self, calls: int) -> None:
        gc.callbacks.remove(self._seen)
        parts = [
            f"gen{g} {self.count[g]} passes, {self.seconds[g] / calls * 1e6:.1f} µs/call" for g in range(3)
        ]
        print(
            f"collector over {calls} calls: "
            + "; ".join(parts)
            + f" (total {sum(self.seconds) / calls * 1e6:.1f} µs/call)",
            file=sys.stderr,
        )


TRACING = False  # --tracing: traces on, every span made and handed to an exporter that drops it


def _tracing() -> Any:
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    from accordion.api.tracing import Tracing

    class Dropped(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    return Tracing(Dropped())


def _loop_run(uvloop: bool, main: Any) -> Any:
    if uvloop:
        import uvloop as uv

        return uv.run(main)
    return asyncio.run(main)


def _label(mib: int) -> str:
    return "warm" if not mib else f"{mib:>2} MiB evicted"


def ab(args: argparse.Namespace) -> None:
    """Alternating subprocess runs of this tree and ``--against``; each run's figures, then medians."""
    trees = {"this": str(ROOT), "against": str(Path(args.against).resolve())}
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for pair in range(args.pairs):
        for name, tree in trees.items() if pair % 2 == 0 else reversed(trees.items()):
            argv = [
                sys.executable,
                __file__,
                "--source",
                tree,
                "--json",
                "--moves",
                str(args.moves),
                "--seed",
                str(args.seed),
                "--rpc",
                args.rpc,
                "--evict",
                *map(str, args.evict),
                *(["--redis-url", args.redis_url] if args.redis_url else []),
                *(["--uvloop"] if args.uvloop else []),
            ]
            out = json.loads(subprocess.run(argv, check=True, capture_output=True, text=True).stdout)
            for mib, wall, cpu in out:
                results.setdefault((name, mib), []).append((wall, cpu))
                print(
                    f"pair {pair + 1} {name:<8} {_label(mib):<16} wall {wall:6.1f}  cpu {cpu:6.1f} µs",
                    flush=True,
                )
    print(f"\nmedians of {args.pairs} runs each (this: {trees['this']}; against: {trees['against']})")
    for mib in args.evict:
        row = []
        for name in trees:
            walls, cpus = zip(*results[(name, mib)], strict=True)
            row.append(f"{name} wall {statistics.median(walls):6.1f} cpu {statistics.median(cpus):6.1f}")
        print(f"{args.rpc} handler, {_label(mib):<16}: " + " | ".join(row) + " µs per call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=20_000, help="calls timed per run")
    parser.add_argument(
        "--rpc", choices=("ApplyMove", "NewGame"), default="ApplyMove", help="the handler timed"
    )
    parser.add_argument(
        "--evict", type=int, nargs="+", default=[0, 1, 4, 16], help="MiB written between calls"
    )
    parser.add_argument("--profile", action="store_true", help="cProfile a warm run (it inflates the times)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--source", help="the tree whose service/ to run (default: this one)")
    parser.add_argument("--against", help="A/B: another tree, run alternately with this one")
    parser.add_argument("--pairs", type=int, default=6, help="A/B: runs of each tree")
    parser.add_argument("--json", action="store_true", help="print [[MiB, wall µs, cpu µs], ...] only")
    parser.add_argument("--redis", action="store_true", help="the games in a redis-server started here")
    parser.add_argument(
        "--redis-url", default="", help="the games in this Redis (not 6379 on a shared machine)"
    )
    parser.add_argument("--uvloop", action="store_true", help="run on uvloop, as the server does")
    parser.add_argument(
        "--gc", action="store_true", help="also time the garbage collector's passes (on stderr)"
    )
    parser.add_argument("--tracing", action="store_true", help="traces on (spans made, then dropped)")
    args = parser.parse_args()
    global COLLECTOR_TIMED, TRACING
    COLLECTOR_TIMED, TRACING = args.gc, args.tracing
    if args.redis and not args.redis_url:  # one server for every run (of both trees, with --against)
        sys.path.insert(0, str(ROOT / "tests"))
        from redis_server import RedisServer  # type: ignore[import-not-found]  # tests/, on the path above

        server = RedisServer().start()
        args.redis_url = server.url
        try:
            _main(args)
        finally:
            server.stop()
        return
    _main(args)


def _main(args: argparse.Namespace) -> None:
    if args.against:
        ab(args)
        return
    rows = []
    for mib in args.evict:
        wall, cpu = _loop_run(args.uvloop, run(args.moves, mib, False, args.seed, args.rpc, args.redis_url))
        rows.append((mib, wall, cpu))
        if not args.json:
            print(f"{args.rpc} handler, {_label(mib)}: {wall:6.1f} µs per call (CPU {cpu:6.1f} µs)")
    if args.json:
        print(json.dumps(rows))
    if args.profile:
        _loop_run(args.uvloop, run(args.moves // 4, 0, True, args.seed, args.rpc, args.redis_url))


if __name__ == "__main__":
    main()
