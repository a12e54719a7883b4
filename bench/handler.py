"""The ApplyMove handler in-process, without gRPC: what our own Python costs per move, warm and
with the CPU caches evicted between calls.

    .venv/bin/python bench/handler.py                  # warm, then 1, 4 and 16 MiB evicted
    .venv/bin/python bench/handler.py --profile        # and cProfile's top functions

The handler is the one the server registers (``service.generic_handler`` wrapped by the
per-method wrapper: limits, validation, auth, engine, reply, memory store, access log and
metrics; it reads its one request with ``context.read()``, as in the server), fed
real requests: like bench/service.py's client, each move is a random legal move of the previous
reply with ``expected_version`` and a fresh ``request_id``; a finished game is dealt again
(NewGame is not timed). Only the handler call is timed (the request's bytes are parsed inside).

Why the eviction: inside the server the same code costs about twice as much (docs/performance.md:
the handler measured in-server), because between two calls gRPC's core, the event loop and the
kernel run on the same core and leave L1/L2 cold. Writing N MiB between calls reproduces that
here, so a change can be judged by how much memory and code it touches, not only by its warm time.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))

from accordion.api import interceptors, service  # noqa: E402
from accordion.api.limits import Admission, Limits  # noqa: E402
from accordion.api.servicer import AccordionServicer  # noqa: E402
from accordion.server import configure_logging  # noqa: E402
from accordion.store import MemoryStore  # noqa: E402
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

    async def abort(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"aborted: {args}")


class _Details:
    def __init__(self, method: str) -> None:
        self.method, self.invocation_metadata = METHOD + method, ()


async def run(moves: int, evict_mib: int, profile: bool, seed: int) -> float:
    """Mean µs per ApplyMove handler call."""
    gate = interceptors.Gate(Admission(Limits()))
    observed = interceptors._WrappedGeneric(
        service.generic_handler(AccordionServicer(MemoryStore(), game_ttl=3600)), gate
    )
    configure_logging("info", open(os.devnull, "w"))  # noqa: SIM115  (as the server logs, into the void)
    apply_move, new_game = observed.service(_Details("ApplyMove")), observed.service(_Details("NewGame"))
    rng = random.Random(seed)
    evict = bytearray(evict_mib << 20)
    filler = bytes(len(evict))

    async def deal() -> tuple[Context, pb.Game]:
        context = Context()
        context.request = new_game.request_deserializer(
            pb.NewGameRequest(variant="accordion", seed=rng.getrandbits(63)).SerializeToString()
        )
        reply = pb.NewGameResponse.FromString(new_game.response_serializer(await new_game.stream_unary(None, context)))
        context.metadata = (("authorization", f"Bearer {reply.token}"),)
        return context, reply.game

    context, game = await deal()
    spent, done = 0.0, 0
    profiler = cProfile.Profile() if profile else None
    while done < moves:
        if not game.legal_moves:
            context, game = await deal()
            continue
        data = pb.ApplyMoveRequest(game_id=game.id, move=rng.choice(game.legal_moves), expected_version=game.version,
                                   request_id=f"m-{done}").SerializeToString()
        if evict:
            evict[:] = filler
        if profiler:
            profiler.enable()
        started = time.perf_counter()
        context.request = apply_move.request_deserializer(data)
        reply = apply_move.response_serializer(await apply_move.stream_unary(None, context))
        spent += time.perf_counter() - started
        if profiler:
            profiler.disable()
        game = pb.ApplyMoveResponse.FromString(reply).game
        done += 1
    interceptors.flush_access_log()
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    return spent / moves * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=20_000)
    parser.add_argument("--evict", type=int, nargs="+", default=[0, 1, 4, 16], help="MiB written between calls")
    parser.add_argument("--profile", action="store_true", help="cProfile a warm run (it inflates the times)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for mib in args.evict:
        us = asyncio.run(run(args.moves, mib, False, args.seed))
        print(f"ApplyMove handler, {'warm' if not mib else f'{mib:>2} MiB evicted'}: {us:6.1f} µs per move")
    if args.profile:
        asyncio.run(run(args.moves // 4, 0, True, args.seed))


if __name__ == "__main__":
    main()
