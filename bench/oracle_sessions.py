"""bench/oracle.py's pair in-process, below gRPC: the store's ``load`` and ``Sessions.play`` with a
wrong token on an existing (cached) game against an unknown id, on one store, interleaved.

    .venv/bin/python bench/oracle_sessions.py            # a real redis-server on a free port
    .venv/bin/python bench/oracle_sessions.py memory://

Prints the medians and the median of the per-pair differences (existing − unknown), over
``--pairs`` pairs after a warm-up. Measured (2026-11-28 ~21:27 UTC, compiled build, asyncio
loop, load average ~15, two runs each):

    memory  store.load -0.3 µs   Sessions.play +0.1 / -0.0 µs (4.5 µs each)
    redis   store.load +0.7 µs   Sessions.play +2.3 / +2.7 µs (~60 µs each)

With the fix (the store checks the credential: ``store.load(credential)``, the line a tree
without it does not print), 2026-11-29 00:42–01:13 UTC, load average 20–28, main 55ac8bc and
this branch alternating, five runs each (``--pairs 3500``):

    main    redis  Sessions.play +0.8, +0.8, +0.7, +1.0, +0.7 µs (33–39 µs each)
    fixed   redis  Sessions.play -0.0, +0.1, +0.2, -0.1, -0.2 µs (38–50 µs each: the LOAD script)
                   store.load(credential) -0.1, +0.0, +0.1, -0.0, -0.2 µs
(``store.load`` without a credential still differs, +0.6–0.7 µs: no wrong token takes it.)
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import inspect
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))
sys.path.insert(0, str(ROOT / "tests"))

from accordion import engine, sessions  # noqa: E402
from accordion.store import GameNotFound  # noqa: E402
from accordion.store.factory import open_store  # noqa: E402
from redis_server import RedisServer  # noqa: E402

WARMUP = 500


async def _timed(call: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter_ns()
    try:
        await call()
    except (GameNotFound, sessions.GameNotFound):
        pass
    return (time.perf_counter_ns() - started) / 1000


async def measure(url: str, pairs: int) -> None:
    store = open_store(url)
    await store.ping()
    try:
        play = sessions.Sessions(store, game_ttl=3600)
        dealt = await play.deal(engine.new_game("accordion", {}, seed=1), None)  # cached now
        assert isinstance(dealt, sessions.Dealt)
        game_id = dealt.game_id
        unknown, wrong = "A" * 22, "w" * 43
        kinds: dict[str, Callable[[str], Callable[[], Awaitable[object]]]] = {
            "store.load": lambda gid: lambda: store.load(gid),
            "Sessions.play": lambda gid: lambda: play.play(gid, wrong, lambda g: None, None),  # type: ignore[arg-type,return-value]
        }
        if "credential" in inspect.signature(store.load).parameters:  # (a tree before issue 28's fix: not)
            presented = hashlib.sha256(wrong.encode()).digest()
            kinds["store.load(credential)"] = lambda gid: lambda: store.load(gid, credential=presented)
        for name, make in kinds.items():
            existing, absent = [], []
            for i in range(WARMUP + pairs):
                first, second = (game_id, unknown) if i % 2 else (unknown, game_id)
                a = await _timed(make(first))
                b = await _timed(make(second))
                if i >= WARMUP:
                    existing.append(a if first == game_id else b)
                    absent.append(b if first == game_id else a)
            diff = statistics.median(x - y for x, y in zip(existing, absent, strict=True))
            print(
                f"{url.split(':')[0]:6} {name}: existing {statistics.median(existing):.1f} µs, "
                f"unknown {statistics.median(absent):.1f} µs, median difference {diff:+.1f} µs"
            )
    finally:
        await store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", nargs="?", default="", help="a store URL (default: a fresh redis-server)")
    parser.add_argument("--pairs", type=int, default=3500)
    args = parser.parse_args()
    redis = None if args.url else RedisServer().start()
    try:
        asyncio.run(measure(args.url or redis.url, args.pairs))  # type: ignore[union-attr]
    finally:
        if redis is not None:
            redis.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
