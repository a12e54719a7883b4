"""``accordion-load``: play real games against a deployed service and report how it held up.

    accordion-load --target 127.0.0.1:50051 --concurrency 16 --duration 30 --json load.json
    accordion-load --target games.example.com:443 --tls --rate 200 --duration 60

Each virtual player deals a game (NewGame), then until the game ends: now and then asks for
the legal moves (LegalMoves), plays a random legal one (ApplyMove, with expected_version and a
fresh request_id), and every few moves and at the end asks for the score (Score); then it
deals again. ``--concurrency N`` runs N players flat out (closed loop); ``--rate R`` paces all
players together to R calls per second (open loop; ``--concurrency`` then caps the players,
default rate/10 within 8..64).

A progress line goes to stderr every second. At the end a table goes to stdout: calls per
second, latency p50/p90/p99/max of the calls that succeeded, per method and overall, and
errors by status code; ``--json PATH`` writes the same figures as JSON (``-``: JSON on stdout
instead of the table). Exit status 0 when calls were made and none failed, 1 otherwise, 2 for
bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import sys
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import grpc
import grpc.aio

from .v1 import accordion_pb2 as pb
from .v1 import accordion_pb2_grpc as pb_grpc

METHODS = ("NewGame", "LegalMoves", "ApplyMove", "Score")
PERCENTILES = (50, 90, 99)


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an ascending sequence (0.0 when empty)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def summarize(latencies: Sequence[float]) -> dict[str, float]:
    """Milliseconds: p50, p90, p99, max and mean of latencies given in seconds."""
    values = sorted(latencies)
    out = {f"p{p}": round(percentile(values, p) * 1000, 3) for p in PERCENTILES}
    out["max"] = round(values[-1] * 1000, 3) if values else 0.0
    out["mean"] = round(sum(values) / len(values) * 1000, 3) if values else 0.0
    return out


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in METHODS})
    errors: dict[str, Counter[str]] = field(default_factory=lambda: {m: Counter() for m in METHODS})
    window: list[float] = field(default_factory=list)  # latencies since the last progress line
    window_errors: int = 0
    games_started: int = 0
    games_finished: int = 0
    games_won: int = 0

    def record(self, method: str, seconds: float, code: str | None) -> None:
        """One finished call: its latency counts when it succeeded; a failure counts under its code."""
        if code is None:
            self.latencies[method].append(seconds)
            self.window.append(seconds)
        else:
            self.errors[method][code] += 1
            self.window_errors += 1

    @property
    def requests(self) -> int:
        return sum(len(v) for v in self.latencies.values()) + self.error_count

    @property
    def error_count(self) -> int:
        return sum(sum(c.values()) for c in self.errors.values())

    def report(self, elapsed: float, settings: dict[str, Any]) -> dict[str, Any]:
        every = [x for m in METHODS for x in self.latencies[m]]
        calls = {m: len(self.latencies[m]) + sum(self.errors[m].values()) for m in METHODS}
        total = sum(calls.values())
        by_code: Counter[str] = Counter()
        for c in self.errors.values():
            by_code.update(c)
        methods = {
            m: {
                "requests": calls[m],
                "errors": sum(self.errors[m].values()),
                "throughput_rps": round(calls[m] / elapsed, 2) if elapsed else 0.0,
                "latency_ms": summarize(self.latencies[m]),
                "errors_by_code": dict(sorted(self.errors[m].items())),
            }
            for m in METHODS
        }
        return {
            **settings,
            "elapsed_s": round(elapsed, 3),
            "requests": total,
            "errors": self.error_count,
            "throughput_rps": round(total / elapsed, 2) if elapsed else 0.0,
            "latency_ms": summarize(every),
            "errors_by_code": dict(sorted(by_code.items())),
            "methods": methods,
            "games": {"started": self.games_started, "finished": self.games_finished, "won": self.games_won},
        }


class Pacer:
    """Shared schedule for open-loop load: one call every 1/rate seconds across all players."""

    def __init__(self, rate: float, stop_at: float) -> None:
        self.interval = 1.0 / rate
        self.next = time.monotonic()
        self.stop_at = stop_at

    async def wait(self) -> bool:
        """Wait for the next slot; False when it would fall after the end of the run."""
        now = time.monotonic()
        slot = max(self.next, now - 1.0)  # never burst more than a second's worth to catch up
        if slot >= self.stop_at:
            return False
        self.next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)
        return True


@dataclass
class Settings:
    target: str
    variant: str
    duration: float
    concurrency: int
    rate: float | None
    deadline: float
    legal_ratio: float
    score_every: int
    metadata: tuple[tuple[str, str], ...]


class Player:
    """One virtual player on a stub: deal, look, move, score; again until the time is up."""

    def __init__(
        self,
        stub: pb_grpc.AccordionServiceStub,
        settings: Settings,
        stats: Stats,
        stop_at: float,
        pacer: Pacer | None,
        rng: random.Random,
    ) -> None:
        self.stub, self.s, self.stats, self.stop_at, self.pacer, self.rng = (
            stub,
            settings,
            stats,
            stop_at,
            pacer,
            rng,
        )

    async def call(self, method: str, request: Any, token: str = "") -> Any:
        if self.pacer is not None and not await self.pacer.wait():
            return None
        metadata = self.s.metadata + ((("authorization", f"Bearer {token}"),) if token else ())
        start = time.perf_counter()
        try:
            reply = await getattr(self.stub, method)(request, timeout=self.s.deadline, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            self.stats.record(method, time.perf_counter() - start, exc.code().name)
            return None
        self.stats.record(method, time.perf_counter() - start, None)
        return reply

    def running(self) -> bool:
        return time.monotonic() < self.stop_at

    async def run(self) -> None:
        while self.running():
            new = await self.call(
                "NewGame",
                pb.NewGameRequest(
                    variant=self.s.variant, seed=self.rng.getrandbits(63), request_id=uuid.uuid4().hex
                ),
            )
            if new is None:
                await asyncio.sleep(0.05)  # do not spin on a failing server
                continue
            self.stats.games_started += 1
            await self.play(new.game, new.token)

    async def play(self, game: pb.Game, token: str) -> None:
        moves = 0
        legal = list(game.legal_moves)
        while game.status == pb.GAME_STATUS_IN_PROGRESS and self.running():
            if self.rng.random() < self.s.legal_ratio:
                reply = await self.call("LegalMoves", pb.LegalMovesRequest(game_id=game.id), token)
                if reply is None:
                    return
                legal = list(reply.moves)
            if not legal or not self.running():
                return
            request = pb.ApplyMoveRequest(
                game_id=game.id,
                move=self.rng.choice(legal),
                expected_version=game.version,
                request_id=uuid.uuid4().hex,
            )
            applied = await self.call("ApplyMove", request, token)
            if applied is None:
                return
            game, legal, moves = applied.game, list(applied.game.legal_moves), moves + 1
            if moves % self.s.score_every == 0 and self.running():
                if await self.call("Score", pb.ScoreRequest(game_id=game.id), token) is None:
                    return
        if game.status != pb.GAME_STATUS_IN_PROGRESS:
            self.stats.games_finished += 1
            self.stats.games_won += game.status == pb.GAME_STATUS_WON
            if self.running():
                await self.call("Score", pb.ScoreRequest(game_id=game.id), token)


async def progress(stats: Stats, started: float, duration: float, stream: Any) -> None:
    tty = stream.isatty()
    last = started
    while True:
        await asyncio.sleep(1.0)
        now = time.monotonic()
        window, stats.window = sorted(stats.window), []
        errors, stats.window_errors = stats.window_errors, 0
        rate = len(window) / (now - last) if now > last else 0.0
        last = now
        line = (
            f"[{min(now - started, duration):5.1f}s/{duration:g}s] {stats.requests} calls, "
            f"{rate:.0f}/s, p50 {percentile(window, 50) * 1000:.1f} ms, "
            f"p99 {percentile(window, 99) * 1000:.1f} ms, "
            f"errors {errors} ({stats.error_count} total), games {stats.games_started}"
        )
        stream.write(f"\r\x1b[K{line}" if tty else f"{line}\n")
        stream.flush()


def _read(path: str | None) -> bytes | None:
    if not path:
        return None
    with open(path, "rb") as f:
        return f.read()


def uses_tls(args: argparse.Namespace) -> bool:
    return bool(args.tls or args.ca_file or args.client_cert)


def make_channel(args: argparse.Namespace) -> grpc.aio.Channel:
    options: list[tuple[str, Any]] = [("grpc.use_local_subchannel_pool", 1)]  # one connection per channel
    if args.server_name:
        options.append(("grpc.ssl_target_name_override", args.server_name))
    if uses_tls(args):
        creds = grpc.ssl_channel_credentials(
            root_certificates=_read(args.ca_file),
            private_key=_read(args.client_key),
            certificate_chain=_read(args.client_cert),
        )
        return grpc.aio.secure_channel(args.target, creds, options=options)
    return grpc.aio.insecure_channel(args.target, options=options)


async def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    stats = Stats()
    channels = [make_channel(args) for _ in range(args.connections)]
    stubs = [pb_grpc.AccordionServiceStub(ch) for ch in channels]
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    stop_at = started + settings.duration
    pacer = Pacer(settings.rate, stop_at) if settings.rate else None
    players = [
        Player(stubs[i % len(stubs)], settings, stats, stop_at, pacer, random.Random(seed * 7919 + i))
        for i in range(settings.concurrency)
    ]
    ticker = (
        None if args.quiet else asyncio.create_task(progress(stats, started, settings.duration, sys.stderr))
    )
    try:
        await asyncio.gather(*(p.run() for p in players))
    finally:
        elapsed = time.monotonic() - started
        if ticker is not None:
            ticker.cancel()
            if sys.stderr.isatty():
                sys.stderr.write("\n")
        for ch in channels:
            await ch.close()
    return stats.report(
        elapsed,
        {
            "tool": "accordion-load",
            "started_at": started_at,
            "target": settings.target,
            "tls": uses_tls(args),
            "variant": settings.variant,
            "mode": "rate" if settings.rate else "concurrency",
            "concurrency": settings.concurrency,
            "rate": settings.rate,
            "connections": args.connections,
            "duration_s": settings.duration,
            "seed": seed,
        },
    )


def format_table(report: dict[str, Any]) -> str:
    mode = (
        f"rate {report['rate']:g}/s (up to {report['concurrency']} players)"
        if report["rate"]
        else (f"concurrency {report['concurrency']}")
    )
    lines = [
        f"accordion-load: {report['target']} ({'TLS' if report['tls'] else 'plaintext'}), variant "
        f"{report['variant']}, {mode}, {report['elapsed_s']:.1f} s",
        "",
        f"{'method':<12}{'calls':>9}{'errors':>8}{'calls/s':>10}"
        + "".join(f"{h:>9}" for h in ("p50 ms", "p90 ms", "p99 ms", "max ms")),
    ]
    rows = [(m, report["methods"][m]) for m in METHODS] + [("all", report)]
    for name, r in rows:
        lat = r["latency_ms"]
        lines.append(
            f"{name:<12}{r['requests']:>9}{r['errors']:>8}{r['throughput_rps']:>10.1f}"
            f"{lat['p50']:>9.2f}{lat['p90']:>9.2f}{lat['p99']:>9.2f}{lat['max']:>9.2f}"
        )
    games = report["games"]
    lines.append("")
    lines.append(f"games: {games['started']} dealt, {games['finished']} played out, {games['won']} won")
    codes = report["errors_by_code"]
    lines.append("errors by code: " + (", ".join(f"{c} {n}" for c, n in codes.items()) if codes else "none"))
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="accordion-load",
        description="Load-test an Accordion service with players that play real games.",
        epilog="Exit status: 0 when calls were made and none failed; 1 otherwise.",
    )
    parser.add_argument(
        "--target",
        default=os.environ.get("ACCORDION_TARGET", "127.0.0.1:50051"),
        help="host:port [ACCORDION_TARGET; default: %(default)s]",
    )
    parser.add_argument("--tls", action="store_true", help="connect with TLS (system roots unless --ca-file)")
    parser.add_argument("--ca-file", help="PEM root certificates (implies --tls)")
    parser.add_argument("--server-name", help="TLS name to verify, when it differs from the target's host")
    parser.add_argument("--client-cert", help="PEM client certificate for mutual TLS (with --client-key)")
    parser.add_argument("--client-key", help="PEM private key of --client-cert")
    parser.add_argument(
        "--api-key",
        default=os.environ.get("ACCORDION_API_KEY") or None,
        help="sent as x-api-key on every call [ACCORDION_API_KEY]",
    )
    parser.add_argument(
        "-H", "--metadata", action="append", default=[], metavar="KEY=VALUE", help="metadata on every call"
    )
    parser.add_argument("--rate", type=float, help="calls per second over all players (open loop)")
    parser.add_argument(
        "--concurrency",
        type=int,
        help="players at once (default 8; with --rate the most players, default rate/10 within 8..64)",
    )
    parser.add_argument("--duration", type=float, default=10.0, help="seconds to run (default: %(default)s)")
    parser.add_argument("--variant", default="accordion", help="variant to play (default: %(default)s)")
    parser.add_argument(
        "--connections", type=int, help="channels (connections) to open (default: min(players, 4))"
    )
    parser.add_argument("--deadline", type=float, default=5.0, help="seconds per call (default: %(default)s)")
    parser.add_argument(
        "--legal-ratio",
        type=float,
        default=0.5,
        help="chance a player asks LegalMoves before a move (default: 0.5)",
    )
    parser.add_argument(
        "--score-every", type=int, default=5, help="Score every N moves (default: %(default)s)"
    )
    parser.add_argument("--seed", type=int, help="seed for the players' choices (default: random)")
    parser.add_argument(
        "--json", metavar="PATH", help="write the report as JSON here ('-': stdout, no table)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    args = parser.parse_args(argv)
    if args.concurrency is None:  # with a rate: enough players for it at ~10 calls/s each
        args.concurrency = max(8, min(64, math.ceil(args.rate / 10))) if args.rate else 8
    if args.concurrency < 1 or args.duration <= 0 or (args.rate is not None and args.rate <= 0):
        parser.error("--concurrency, --duration and --rate must be positive")
    if args.score_every < 1 or not 0 <= args.legal_ratio <= 1:
        parser.error("--score-every must be >= 1 and --legal-ratio within 0..1")
    if args.connections is None:
        args.connections = min(args.concurrency, 4)
    if args.connections < 1:
        parser.error("--connections must be positive")
    if bool(args.client_cert) != bool(args.client_key):
        parser.error("--client-cert and --client-key go together")
    for item in args.metadata:
        if "=" not in item:
            parser.error(f"--metadata wants KEY=VALUE, not {item!r}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    metadata = tuple((k.strip().lower(), v.strip()) for k, v in (m.split("=", 1) for m in args.metadata))
    if args.api_key:
        metadata += (("x-api-key", args.api_key),)
    settings = Settings(
        target=args.target,
        variant=args.variant,
        duration=args.duration,
        concurrency=args.concurrency,
        rate=args.rate,
        deadline=args.deadline,
        legal_ratio=args.legal_ratio,
        score_every=args.score_every,
        metadata=metadata,
    )
    report = asyncio.run(run(args, settings))
    text = json.dumps(report, indent=2)
    if args.json == "-":
        print(text)
    else:
        print(format_table(report))
        if args.json:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    return 0 if report["requests"] and not report["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
