"""``accordion-pools`` (or ``python -m accordion.pools``): fill the pools of winnable deals ahead
of time, against the deployment's store (docs/operations.md, "Pools of winnable deals").

    accordion-pools fill --redis-url redis://… --count 200 --processes 4 klondike spider:suits=4
    accordion-pools status --redis-url redis://… klondike spider:suits=4

A game is ``VARIANT`` or ``VARIANT:name=value,name=value`` (its options, as NewGame takes them);
``all`` is every variant, with its default options, whose deals the solver can decide. ``fill``
draws random seeds (``secrets``: the deployment's own, never a published list), solves each deal
with every card known in ``--processes`` processes, within ``--deal-nodes`` positions (and
``--deal-seconds``), and adds each deal WON to its pool until the pool holds ``--count`` (or
``--max-tries`` deals were tried: 50 for each deal missing unless told; a pool left short makes
the exit status 1). It prints counts and rates, never a seed. The servers take from the same
pools (sessions/winnable.py) and refill them themselves below their watermark; this command
is for filling ahead (a new deployment, a slow game such as four-suit Spider).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import secrets
import sys
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass

from accordion import engine, solver
from accordion.sessions.winnable import pool_item, pool_name
from accordion.store import GameStore, is_memory_url, open_store

DEAL_NODES = 2_000_000  # as the servers' refill (--winnable-pool-deal-nodes)
DEAL_SECONDS = 10.0


@dataclass(frozen=True)
class Spec:
    variant: str
    options: dict[str, str]

    @property
    def pool(self) -> str:
        return pool_name(engine.new_game(self.variant, dict(self.options), seed=0))


def parse_spec(text: str) -> Spec:
    """``VARIANT[:name=value,…]`` → a Spec, checked against the engine (ValueError if unknown)."""
    variant, _, rest = text.partition(":")
    options: dict[str, str] = {}
    for part in filter(None, rest.split(",")):
        name, eq, value = part.partition("=")
        if not eq:
            raise ValueError(f"{text!r}: an option is name=value, not {part!r}")
        options[name] = value
    try:
        engine.new_game(variant, dict(options), seed=0)
    except engine.EngineError as exc:
        raise ValueError(f"{text!r}: {exc}") from None
    return Spec(variant, options)


def decidable(spec: Spec) -> bool:
    """Whether the solver can decide this game's deals (else a winnable deal is never found)."""
    try:
        solver.find_winnable_seed(spec.variant, dict(spec.options), max_tries=1, max_nodes=1, budget=1.0)
    except engine.EngineError:
        return False
    return True


def every_game() -> list[Spec]:
    specs = [Spec(v.id, {}) for v in engine.all_variants()]
    return [s for s in specs if decidable(s)]


def prove(variant: str, options: dict[str, str], seed: int, nodes: int, seconds: float) -> bytes | None:
    """In a worker process: the pool's item for ``seed`` if the solver wins its deal, else None."""
    found = solver.find_winnable_seed(
        variant, dict(options), start_seed=seed, max_tries=1, budget=seconds, max_nodes=nodes
    )
    return None if found is None else pool_item(engine.new_game(variant, dict(options), seed=seed))


@dataclass
class Filled:
    pool: str
    size: int
    proven: int
    tried: int
    seconds: float


async def fill(
    store: GameStore,
    spec: Spec,
    count: int,
    executor: ProcessPoolExecutor,
    processes: int,
    *,
    nodes: int = DEAL_NODES,
    seconds: float = DEAL_SECONDS,
    max_tries: int | None = None,
) -> Filled:
    """Fill ``spec``'s pool up to ``count`` deals, ``processes`` deals being solved at once."""
    name = spec.pool
    size = await store.pool_size(name)
    started, proven, tried = time.monotonic(), 0, 0
    limit = max_tries if max_tries is not None else 50 * max(0, count - size)
    running: set[Future[bytes | None]] = set()
    loop = asyncio.get_running_loop()
    try:
        while size < count and (running or tried < limit):
            while len(running) < processes and tried < limit:
                seed = secrets.randbits(64)
                running.add(executor.submit(prove, spec.variant, spec.options, seed, nodes, seconds))
                tried += 1
            done, running = await loop.run_in_executor(None, _first_done, running)
            items = [item for f in done if (item := f.result()) is not None]
            proven += len(items)
            if items:
                size = await store.pool_add(name, items, cap=count)
    finally:
        for f in running:
            f.cancel()
    return Filled(name, size, proven, tried, time.monotonic() - started)


def _first_done(
    running: set[Future[bytes | None]],
) -> tuple[set[Future[bytes | None]], set[Future[bytes | None]]]:
    done, pending = wait(running, return_when=FIRST_COMPLETED)
    return set(done), set(pending)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="accordion-pools", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command, text in (("fill", "fill pools up to --count deals"), ("status", "print each pool's size")):
        p = sub.add_parser(command, help=text)
        p.add_argument("games", nargs="+", help="VARIANT[:name=value,...], or all")
        p.add_argument(
            "--redis-url",
            default=os.environ.get("REDIS_URL", ""),
            help="the deployment's store [REDIS_URL]",
        )
        p.add_argument("--key-prefix", default="acc", help="the servers' key prefix [default: acc]")
        if command == "fill":
            p.add_argument("--count", type=int, default=100, help="deals each pool holds after [100]")
            p.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="solving at once")
            p.add_argument("--deal-nodes", type=int, default=DEAL_NODES, help="positions per deal")
            p.add_argument("--deal-seconds", type=float, default=DEAL_SECONDS, help="seconds per deal")
            p.add_argument("--max-tries", type=int, default=None, help="deals tried per pool at most")
    return parser


async def _main(args: argparse.Namespace, specs: list[Spec]) -> int:
    store = open_store(args.redis_url, key_prefix=args.key_prefix)
    try:
        await store.ping()
        if args.command == "status":
            for spec in specs:
                print(f"{spec.pool}: {await store.pool_size(spec.pool)} deals", flush=True)
            return 0
        context = multiprocessing.get_context("spawn")
        short = 0
        with ProcessPoolExecutor(args.processes, mp_context=context) as executor:
            for spec in specs:
                done = await fill(
                    store,
                    spec,
                    args.count,
                    executor,
                    args.processes,
                    nodes=args.deal_nodes,
                    seconds=args.deal_seconds,
                    max_tries=args.max_tries,
                )
                rate = done.proven / done.seconds * 60 if done.seconds else 0.0
                short += done.size < args.count
                print(
                    f"{done.pool}: {done.size} deals ({done.proven} proven of {done.tried} tried "
                    f"in {done.seconds:.1f} s, {rate:.1f} deals/minute on {args.processes} processes)"
                    + ("" if done.size >= args.count else f"; NOT FILLED to {args.count}"),
                    flush=True,
                )
        return 1 if short else 0
    finally:
        await store.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if is_memory_url(args.redis_url):
        parser.error("--redis-url (or REDIS_URL): the memory store lives in one server process")
    if args.command == "fill" and (args.count < 0 or args.processes < 1 or args.deal_nodes < 1):
        parser.error("--count cannot be negative; --processes and --deal-nodes must be at least 1")
    try:
        specs = [s for text in args.games for s in (every_game() if text == "all" else [parse_spec(text)])]
    except ValueError as exc:
        parser.error(str(exc))
    return asyncio.run(_main(args, specs))


if __name__ == "__main__":
    sys.exit(main())
