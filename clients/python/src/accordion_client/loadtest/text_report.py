"""The terminal's lines: the progress line each second, and the summary of a run: the calls
table, the rate, the slots not served by cause, and (with ``--metrics-url``) the server's own
view beside the client's, each as a plain-text table."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, TextIO

from .stats import percentile

LATE_LOOP_MS = 50.0  # the dispatcher woke this late (p99): the tool's CPU is a bottleneck too

if TYPE_CHECKING:
    from .runner import Run


def fmt_table(header: list[str], rows: list[list[str]], left: tuple[int, ...] = (0,)) -> list[str]:
    """Columns padded to their widest cell; the columns in ``left`` left-aligned, others right."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    out = []
    for row in [header, *rows]:
        pairs = enumerate(zip(row, widths, strict=True))
        cells = [f"{c:<{w}}" if i in left else f"{c:>{w}}" for i, (c, w) in pairs]
        out.append("  ".join(cells).rstrip())
    return out


def unserved_rows(report: dict[str, Any]) -> list[list[str]]:
    return [
        [r["cause"], str(r["slots"]), f"{r['share'] * 100:.2f}%", r["means"]]
        for r in report["rate"]["unserved"]
    ]


def unserved_title(report: dict[str, Any]) -> str:
    rate = report["rate"]
    lost = sum(r["slots"] for r in rate["unserved"])
    if report["mode"] == "rate":
        offered = rate["offered"] or 0
        share = lost / offered * 100 if offered else 0.0
        return f"slots not served: {lost} of {offered} offered ({share:.2f}%)"
    share = lost / report["requests"] * 100 if report["requests"] else 0.0
    return f"calls not served: {lost} of {report['requests']} ({share:.2f}%)"


def loop_note(report: dict[str, Any]) -> str | None:
    """When the tool's own loop ran late, players wait on replies the tool itself has not read:
    its CPU, not the server, may be behind the 'player limit' misses."""
    lag = (report["rate"].get("client_loop_lag_ms") or {}).get("p99", 0.0)
    if lag <= LATE_LOOP_MS or not report["rate"]["unserved"]:
        return None
    return (
        f"note: the tool's own loop ran late (p99 {lag:.0f} ms): replies waited for the tool too, "
        "so its CPU may be behind the misses; run several load processes to tell"
    )


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def bucket(q: dict[str, Any] | None) -> str:
    """A server percentile as the bucket it falls in: '5-10' ms, or '>10000' past the last."""
    if q is None:
        return "-"
    lo, hi = q["bucket_ms"]
    return f">{lo:g}" if hi is None else f"{lo:g}-{hi:g}"


def side_by_side(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Per method: the client's calls, errors, p50/p99 next to the server's."""
    server = report["server"]
    header = [
        "method", "client calls", "errors", "p50 ms", "p99 ms",
        "server calls", "errors", "p50 ms (bucket)", "p99 ms (bucket)",
    ]  # fmt: skip
    rows = []
    names = [m for m, r in report["methods"].items() if r["requests"]]
    names += [m for m in server["methods"] if m not in names]
    for name in names:
        c = report["methods"].get(name, {"requests": 0, "errors": 0, "latency_ms": {}})
        if name == "WatchGame":  # streams, not calls: the client counts them, untimed
            c = {"requests": report["watch"]["streams"], "errors": c["errors"], "latency_ms": {}}
        s = server["methods"].get(name, {"calls": 0, "errors": 0, "p50": None, "p99": None})
        ok = c["requests"] > c["errors"] and bool(c["latency_ms"])
        rows.append(
            [
                name,
                str(c["requests"]),
                str(c["errors"]),
                ms(c["latency_ms"].get("p50") if ok else None),
                ms(c["latency_ms"].get("p99") if ok else None),
                str(s["calls"]),
                str(s["errors"]),
                bucket(s["p50"]),
                bucket(s["p99"]),
            ]
        )
    return header, rows


def codes_compared(report: dict[str, Any]) -> str:
    """'RESOURCE_EXHAUSTED 196/196, UNAVAILABLE 1559/0': the failures the client got by code,
    over those the server counted (a refusal in grpc's core or the network shows as a gap)."""
    client, server = report["errors_by_code"], report["server"]["errors_by_code"]
    codes = sorted(set(client) | set(server))
    return ", ".join(f"{c} {client.get(c, 0)}/{server.get(c, 0)}" for c in codes) or "none"


def server_lines(report: dict[str, Any]) -> list[str]:
    server = report["server"]
    used = server["histogram"] + (" (fallback: the server has no accordion_rpc_server_seconds)"
                                  if server["histogram_fallback"] else "")  # fmt: skip
    lines = [
        f"server view ({', '.join(server['urls'])}): before/after differences; latency from {used}, "
        f"buckets {server['bucket_bounds_ms']} ms",
    ]
    header, rows = side_by_side(report)
    lines += fmt_table(header, rows)
    for url in server["unreadable"]:
        lines.append(f"  unreadable: {url}")
    lines.append(f"errors by code, client/server: {codes_compared(report)}")
    for title, key in (
        ("server errors (code reason)", "errors_by_code_reason"),
        ("server refusals (layer reason)", "refused_by_layer_reason"),
        ("calls their client ended (not errors)", "client_ended"),
        ("grpc core", "grpc_core"),
        ("server CPU seconds by worker", "cpu_seconds_by_worker"),
    ):
        items = server[key]
        lines.append(f"{title}: " + (", ".join(f"{k} {v}" for k, v in items.items()) if items else "none"))
    lag = server["event_loop_lag_p99"]
    if lag is not None:
        lines.append(f"server event loop lag p99: {bucket(lag)} ms")
    return lines


def format_table(report: dict[str, Any]) -> str:
    rate = report["rate"]
    lines = [
        (
            f"accordion-load {report['version']}: {report['target']} "
            f"({'TLS' if report['tls'] else 'plaintext'}), variant {report['variant']}, "
            f"{report['scenario']['description']}, {report['window_s']:.1f} s, "
            f"{report['connections']} connections"
        ),
        "",
        f"{'method':<12}{'calls':>9}{'errors':>8}{'calls/s':>10}"
        + "".join(f"{h:>9}" for h in ("p50 ms", "p90 ms", "p99 ms", "max ms")),
    ]
    rows = [(m, r) for m, r in report["methods"].items() if r["requests"]] + [("all", report)]
    for name, r in rows:
        lat = r["latency_ms"]
        # Latencies are of the calls that succeeded: none succeeded, no figure (not 0.00).
        cells = [
            f"{lat[k]:>9.2f}" if r["requests"] > r["errors"] else f"{'-':>9}"
            for k in ("p50", "p90", "p99", "max")
        ]
        lines.append(
            f"{name:<12}{r['requests']:>9}{r['errors']:>8}{r['throughput_rps']:>10.1f}" + "".join(cells)
        )
    lines.append("")
    if report["mode"] == "rate":
        ratio = (rate["achieved_ratio"] or 0.0) * 100
        delay = rate["send_delay_ms"] or {}
        lines.append(
            f"rate: offered {rate['offered_rps']:.1f}/s, achieved {rate['achieved_rps']:.1f}/s "
            f"({ratio:.1f}%), {rate['missed']} slots missed; latency from each slot's scheduled time "
            f"(sent p99 {delay.get('p99', 0.0):.2f} ms after it)"
        )
    else:
        lines.append(
            f"rate: {rate['achieved_rps']:.1f} calls/s started (closed loop: as fast as replies came)"
        )
    if rate["unserved"]:
        lines.append(unserved_title(report))
        table = fmt_table(["cause", "slots", "share", "what it means"], unserved_rows(report), left=(0, 3))
        lines += ["  " + ln for ln in table]
        note = loop_note(report)
        if note:
            lines.append("  " + note)
    games = report["games"]
    lines.append(f"games: {games['started']} dealt, {games['finished']} played out, {games['won']} won")
    watch = report["watch"]
    if watch["streams"]:
        lines.append(
            f"watchers: {watch['streams']} streams, {watch['events']} events, move to event "
            f"p50 {watch['lag_ms']['p50']:.2f} ms, p99 {watch['lag_ms']['p99']:.2f} ms"
        )
    if report.get("traced_calls"):
        slowest = "; the slowest that succeeded:" if report["slowest_traced"] else ""
        lines.append(f"traced: {report['traced_calls']} calls sent with a W3C traceparent{slowest}")
        for row in report["slowest_traced"][:3]:
            lines.append(
                f"  {row['method']} {row['latency_ms']:.2f} ms: trace {row['trace_id']}, "
                f"request id {row['request_id'] or '-'}"
            )
    codes = report["errors_by_code"]
    if not codes:
        lines.append("errors by code: none")
    else:
        lines.append("errors by code: " + ", ".join(f"{c} {n}" for c, n in codes.items()))
        for code in codes:
            rid = report["error_request_ids"].get(code)
            lines.append(
                f"  {code}: {report['error_samples'].get(code, '')}" + (f" (request id {rid})" if rid else "")
            )
    if report.get("server"):
        lines.append("")
        lines += server_lines(report)
    for t in report["thresholds"]:
        result = "pass" if t["passed"] else "FAIL"
        lines.append(f"threshold {t['threshold']}: {result} (measured {t['value']} {t['unit']})")
    return "\n".join(lines)


async def progress(run: Run, stream: TextIO) -> None:
    """A line a second: calls, rate (offered and achieved for the open loop), latency, errors."""
    tty = stream.isatty()
    stats, duration = run.stats, run.scenario.duration
    last, last_started = run.now(), 0
    while True:
        await asyncio.sleep(1.0)
        now = run.now()
        window, stats.window = sorted(stats.window), []
        errors, stats.window_errors = stats.window_errors, 0
        started, last_started = stats.started - last_started, stats.started
        span, last = max(now - last, 1e-9), now
        rate = ""
        if run.scenario.kind == "rate":
            rate = f"offered {run.scenario.value_at(min(now, duration)):.0f}/s, "
        line = (
            f"[{min(now, duration):5.1f}s/{duration:g}s] {stats.requests} calls, {rate}"
            f"{started / span:.0f}/s, p50 {percentile(window, 50) * 1000:.1f} ms, "
            f"p99 {percentile(window, 99) * 1000:.1f} ms, errors {errors} ({stats.error_count} total), "
            f"missed {sum(stats.missed.values())}, games {stats.games_started}"
        )
        stream.write(f"\r\x1b[K{line}" if tty else f"{line}\n")
        stream.flush()
