"""``accordion-load``: play real games against a deployed service and report how it held up.

    accordion-load --target 127.0.0.1:50051 --concurrency 16 --duration 30 --json load.json
    accordion-load --target games.example.com:443 --tls --rate 200 --duration 60 --strict-rate
    accordion-load --scenario examples/load-scenario.toml --html load.html --fail-if 'p99<20ms'

``--concurrency N`` runs N players flat out (closed loop); ``--rate R`` offers R calls per second
whatever the replies' pace (open loop); ``--scenario FILE`` gives stages (ramps) and a weighted mix
of calls (docs/load.md). A progress line goes to stderr every second; at the end a table goes to
stdout, ``--json`` writes every figure (with a per-second series and a latency histogram) and
``--html`` a report with plots.

Exit status: 0 when calls were made, none failed, every ``--fail-if`` held and (with
``--strict-rate``) the offered rate was kept; 1 otherwise (the reasons are printed); 2 for bad
arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Any

import grpc
import grpc.aio

from ..flags import add_connection_flags, read_file, uses_tls
from ..targets import resolve_target
from ..v1 import accordion_pb2_grpc as pb_grpc
from . import scenario as scenarios
from . import server_view
from . import thresholds as thresholds_mod
from .runner import Options, Run
from .stats import METHODS, MISSED_BEHIND, MISSED_NO_PLAYER, Stats
from .text_report import LATE_LOOP_MS, format_table, progress

DEFAULT_MAX_PLAYERS = 1000
# Channels (connections) by default. A --workers server's kernel spreads connections over its
# workers by a hash of the addresses (SO_REUSEPORT), at random as far as the tool can tell, so
# the calls (sent to the channels in turn) spread only as evenly as the connections: with 2
# workers, 16 connections split 11/5 or worse one time in five (measured: 4.5 vs 2.5 CPU s),
# 64 split 40/24 or worse one time in twenty. 64 also keeps the 1,000 default players' calls
# under ~16 per connection, far from the server's HTTP/2 stream cap (100 by default), above
# which calls queue in the client or are refused (RST_STREAM).
DEFAULT_CONNECTIONS = 64
STREAMS_PER_CONNECTION = 100  # the server's --max-streams-per-connection default


def tool_version() -> str:
    try:
        return package_version("accordion-client")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


# --- connection ---------------------------------------------------------------------------------


def make_channel(args: argparse.Namespace) -> grpc.aio.Channel:
    """One channel as the shared connection flags (accordion_client.flags) say."""
    options: list[tuple[str, Any]] = [("grpc.use_local_subchannel_pool", 1)]  # one connection per channel
    if args.server_name:
        options.append(("grpc.ssl_target_name_override", args.server_name))
    if uses_tls(args):
        creds = grpc.ssl_channel_credentials(
            root_certificates=read_file(args.ca_file),
            private_key=read_file(args.client_key),
            certificate_chain=read_file(args.client_cert),
        )
        return grpc.aio.secure_channel(args.address, creds, options=options)
    return grpc.aio.insecure_channel(args.address, options=options)


# --- the verdict ------------------------------------------------------------------------------


def verdict(report: dict[str, Any], args: argparse.Namespace) -> tuple[list[str], str | None]:
    """Why the run failed (empty: it passed), and a warning about the rate to print either way."""
    reasons = []
    if report["aborted"]:
        reasons.append(f"stopped early after {report['window_s']:.1f} s: {report['aborted']}")
    elif not report["requests"]:
        reasons.append("no call was made")
    elif report["errors"]:
        reasons.append(f"{report['errors']} of {report['requests']} calls failed")
    reasons += [
        f"threshold {t['threshold']} not met (measured {t['value']} {t['unit']})"
        for t in report["thresholds"]
        if not t["passed"]
    ]
    warning = None
    rate = report["rate"]
    if report["mode"] == "rate" and not report["aborted"] and rate["offered"]:
        ratio = rate["achieved_ratio"] or 0.0
        if ratio < 1 - args.rate_tolerance:  # the table of causes is in the summary and the HTML
            causes = []
            if rate["missed_by_reason"].get(MISSED_NO_PLAYER):
                causes.append(
                    f"all {report['max_players']} players (--max-players) were waiting for replies: "
                    "the replies came back too slowly for this rate"
                )
            lag = rate["client_loop_lag_ms"] or {}
            if rate["missed_by_reason"].get(MISSED_BEHIND) or lag.get("p99", 0.0) > LATE_LOOP_MS:
                causes.append(
                    f"the load tool's own loop ran late (p99 {lag.get('p99', 0.0):.0f} ms): its CPU is a "
                    "bottleneck too; spread the load over more processes or machines"
                )
            warning = (
                f"RATE NOT KEPT: offered {rate['offered_rps']:.1f} calls/s, achieved "
                f"{rate['achieved_rps']:.1f}/s ({ratio * 100:.1f}%); {rate['missed']} calls missed"
                + (": " + "; ".join(causes) if causes else "")
            )
            if args.strict_rate:
                reasons.append(warning)
    return reasons, warning


# --- arguments --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="accordion-load",
        description="Load-test an Accordion service with players that play real games.",
        epilog="Exit status: 0 when calls were made, none failed, every --fail-if held and (with "
        "--strict-rate) the rate was kept; 1 otherwise; 2 for bad arguments. docs/load.md has the "
        "scenario file format and the JSON report.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {tool_version()}")
    add_connection_flags(parser)  # --target, --tls, --ca-file, --server-name, --client-cert/-key, --deadline
    conn = parser.add_argument_group("more connection flags")
    conn.add_argument(
        "--api-key",
        default=os.environ.get("ACCORDION_API_KEY") or None,
        help="sent as x-api-key on every call [ACCORDION_API_KEY]",
    )
    conn.add_argument(
        "-H", "--metadata", action="append", default=[], metavar="KEY=VALUE", help="metadata on every call"
    )
    conn.add_argument(
        "--connections",
        type=int,
        help="channels (connections) to open, calls sent to them in turn; >= 2x the server's "
        f"--workers for an even spread (default: {DEFAULT_CONNECTIONS}, at most the players)",
    )
    conn.add_argument(
        "--traceparent-sample",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="share of calls (0..1) sent with a W3C traceparent header (default: 0)",
    )
    load = parser.add_argument_group("load")
    load.add_argument(
        "--scenario", metavar="FILE", help="TOML file: stages, call mix, watchers (docs/load.md)"
    )
    load.add_argument(
        "--rate", type=float, help="calls per second offered, whatever the replies' pace (open loop)"
    )
    load.add_argument(
        "--concurrency",
        type=int,
        help="players calling flat out (closed loop; default 8); with --rate: the most players",
    )
    load.add_argument("--duration", type=float, help="seconds to run (default: 10)")
    load.add_argument("--variant", help="variant to play (default: the scenario's, else accordion)")
    load.add_argument(
        "--max-players",
        type=int,
        help=f"open loop: players at most, each with one call in flight (default: {DEFAULT_MAX_PLAYERS})",
    )
    load.add_argument(
        "--legal-ratio", type=float, help="without a scenario: LegalMoves calls per move (default: 0.5)"
    )
    load.add_argument(
        "--score-every", type=int, help="without a scenario: a Score every N moves (default: 5)"
    )
    load.add_argument("--seed", type=int, help="seed for the players' choices (default: random)")
    load.add_argument(
        "--keep-going", action="store_true", help="do not stop early when every call fails from the start"
    )
    out = parser.add_argument_group("report and gates")
    out.add_argument("--json", metavar="PATH", help="write the report as JSON here ('-': stdout, no table)")
    out.add_argument("--html", metavar="PATH", help="write an HTML report with plots here")
    out.add_argument(
        "--fail-if",
        dest="fail_if",
        action="append",
        default=[],
        metavar="COND",
        help="a condition the run must meet, e.g. 'p99<20ms', 'errors<0.1%%', 'ApplyMove:p50<=5ms', "
        "'achieved>=95%%' (repeatable; docs/load.md)",
    )
    out.add_argument(
        "--strict-rate", action="store_true", help="fail (exit 1) when the offered rate was not kept"
    )
    out.add_argument(
        "--rate-tolerance",
        type=float,
        default=0.05,
        help="share of the offered calls that may be missed before the rate counts as not kept "
        "(default: %(default)s)",
    )
    out.add_argument(
        "--metrics-url",
        action="append",
        default=[],
        metavar="URL",
        help="the server's Prometheus /metrics, scraped before and after the run to show the "
        "server's view beside the client's (repeatable: one per replica)",
    )
    out.add_argument(
        "--server-histogram",
        metavar="NAME",
        help="the server's latency histogram (default: accordion_rpc_server_seconds when the server "
        "has it, else accordion_rpc_latency_seconds)",
    )
    out.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.thresholds = [thresholds_mod.parse(t) for t in args.fail_if]
    except thresholds_mod.ThresholdError as exc:
        parser.error(str(exc))
    if args.scenario:
        clash = [
            f
            for f in ("rate", "concurrency", "duration", "legal_ratio", "score_every")
            if getattr(args, f) is not None
        ]
        if clash:
            flags = ", ".join("--" + f.replace("_", "-") for f in clash)
            parser.error(f"{flags}: the scenario file gives the stages and the mix")
        try:
            args.plan = scenarios.load(args.scenario)
        except scenarios.ScenarioError as exc:
            parser.error(str(exc))
    else:
        legal = 0.5 if args.legal_ratio is None else args.legal_ratio
        every = 5 if args.score_every is None else args.score_every
        if every < 1 or not 0 <= legal <= 1:
            parser.error("--score-every must be >= 1 and --legal-ratio within 0..1")
        duration = 10.0 if args.duration is None else args.duration
        if duration <= 0 or (args.rate is not None and args.rate <= 0):
            parser.error("--duration and --rate must be positive")
        mix = {"move": 1.0, "legal_moves": legal, "score": 1.0 / every}
        if args.rate is not None:
            args.plan = scenarios.constant("rate", args.rate, duration, mix, "accordion")
        else:
            players = 8 if args.concurrency is None else args.concurrency
            if players < 1:
                parser.error("--concurrency must be positive")
            args.plan = scenarios.constant("players", players, duration, mix, "accordion")
    plan: scenarios.Scenario = args.plan
    args.variant = args.variant or plan.variant or "accordion"
    if args.max_players is None:
        # --concurrency with --rate keeps its old meaning: the most players.
        args.max_players = (
            args.concurrency if args.rate is not None and args.concurrency else DEFAULT_MAX_PLAYERS
        )
    if args.max_players < 1 or args.deadline <= 0:
        parser.error("--max-players and --deadline must be positive")
    if not 0 <= args.rate_tolerance < 1:
        parser.error("--rate-tolerance is a share within 0..1")
    players = args.max_players if plan.kind == "rate" else int(plan.peak)
    if args.connections is None:
        args.connections = max(1, min(players, DEFAULT_CONNECTIONS))
    if args.connections < 1:
        parser.error("--connections must be positive")
    if players / args.connections > STREAMS_PER_CONNECTION:
        print(
            f"accordion-load: warning: up to {players} calls at once over {args.connections} "
            f"connections is more than {STREAMS_PER_CONNECTION} a connection, the server's default "
            "HTTP/2 stream cap: expect refused streams (UNAVAILABLE, RST_STREAM); raise --connections",
            file=sys.stderr,
        )
    if not 0 <= args.traceparent_sample <= 1:
        parser.error("--traceparent-sample is a share within 0..1")
    for url in args.metrics_url:
        if not url.startswith(("http://", "https://")):
            parser.error(
                f"--metrics-url {url!r}: an http:// or https:// URL, e.g. http://127.0.0.1:9100/metrics"
            )
    if args.metrics_url:
        try:
            server_view.check_parser()
        except ImportError as exc:
            parser.error(str(exc))
    if bool(args.client_cert) != bool(args.client_key):
        parser.error("--client-cert and --client-key go together")
    try:  # host:port, an http(s):// URL or a gRPC target, as every client of the package takes
        args.address = resolve_target(args.target).address
    except ValueError as exc:
        parser.error(f"--target: {exc}")
    if args.target.lower().startswith("http://") and uses_tls(args):
        parser.error(f"--target {args.target!r}: http:// is plaintext, but TLS flags were given")
    for item in args.metadata:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--metadata wants KEY=VALUE, not {item!r}")
        # gRPC refuses other headers only when sending, with a C-core trace per call.
        if not re.fullmatch(r"[0-9a-z_.-]+", key.strip().lower()) or not (
            value.isascii() and value.isprintable()
        ):
            parser.error(
                f"--metadata {item!r}: keys are letters, digits, '-', '_', '.'; values printable ASCII"
            )
    if args.html:
        try:
            from . import html_report  # noqa: F401  (fail now, not after the run)
        except ImportError as exc:
            parser.error(str(exc))
    return args


# --- running ----------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> dict[str, Any]:
    plan: scenarios.Scenario = args.plan
    metadata = tuple((k.strip().lower(), v.strip()) for k, v in (m.split("=", 1) for m in args.metadata))
    if args.api_key:
        metadata += (("x-api-key", args.api_key),)
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    options = Options(
        scenario=plan,
        variant=args.variant,
        deadline=args.deadline,
        metadata=metadata,
        max_players=args.max_players,
        seed=seed,
        stop_early=not args.keep_going,
        traceparent_sample=args.traceparent_sample,
    )
    before = await asyncio.to_thread(server_view.scrape_all, args.metrics_url) if args.metrics_url else []
    channels = [make_channel(args) for _ in range(args.connections)]
    for ch in channels:  # connect now, not on each channel's first call (its latency would carry it)
        ch.get_state(try_to_connect=True)
    stats = Stats(schedule=plan.calls_due if plan.kind == "rate" else None)
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    driver = Run([pb_grpc.AccordionServiceStub(ch) for ch in channels], options, stats)
    ticker = None if args.quiet else asyncio.create_task(progress(driver, sys.stderr))
    try:
        await driver.drive()
    finally:
        elapsed = driver.now()
        if ticker is not None:
            ticker.cancel()
            if sys.stderr.isatty():
                sys.stderr.write("\n")
        for ch in channels:
            await ch.close()
    report = stats.report(
        elapsed,
        driver.window,
        {
            "tool": "accordion-load",
            "version": tool_version(),
            "started_at": started_at,
            "target": args.target,
            "tls": uses_tls(args),
            "variant": args.variant,
            "mode": "rate" if plan.kind == "rate" else "concurrency",
            "concurrency": int(plan.peak) if plan.kind == "players" else driver.players_made,
            "max_players": args.max_players,
            "connections": args.connections,
            "duration_s": plan.duration,
            "seed": seed,
            "scenario": {
                "file": args.scenario,
                "name": plan.name,
                "description": ("rate " if plan.kind == "rate" else "") + plan.describe(),
                "kind": plan.kind,
                "stages": [
                    {"duration": s.duration, plan.kind: s.target, "ramp": s.ramp} for s in plan.stages
                ],
                "mix": dict(plan.mix),
                "watchers": plan.watchers,
            },
        },
    )
    if args.metrics_url:
        await asyncio.sleep(server_view.SETTLE_SECONDS)
        after = await asyncio.to_thread(server_view.scrape_all, args.metrics_url)
        report["server"] = server_view.server_view(args.metrics_url, before, after, args.server_histogram)
    report["aborted"] = driver.abort_reason
    report["thresholds"] = thresholds_mod.evaluate(args.thresholds, report)
    return report


def hint_for(report: dict[str, Any]) -> str:
    if "UNAVAILABLE" in report["errors_by_code"]:
        return f" (is a server listening on {report['target']}? start one with `make serve`)"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    report = asyncio.run(run(args))
    reasons, warning = verdict(report, args)
    report["passed"], report["failures"], report["rate_warning"] = not reasons, reasons, warning
    text = json.dumps(report, indent=2)
    if args.json == "-":
        print(text)
    else:
        print(format_table(report))
        if args.json:
            with open(args.json, "w") as f:
                f.write(text + "\n")
    if args.html:
        from .html_report import render

        with open(args.html, "w", encoding="utf-8") as f:
            f.write(render(report, reasons))
    if warning:
        print(f"accordion-load: {warning}", file=sys.stderr)
    for reason in reasons:
        if reason != warning:
            print(
                f"accordion-load: FAILED: {reason}{hint_for(report) if report['aborted'] else ''}",
                file=sys.stderr,
            )
    return 0 if not reasons else 1


__all__ = ["METHODS", "main"]
