"""``--html PATH``: the run as one self-contained HTML file with its plots inlined as SVG.

matplotlib draws the plots (the ``load`` extra): it is maintained, works offline, and its SVG
needs no JavaScript, so the file opens anywhere (a CI artifact viewer, a mail client) and stays
small (tens of kB). Interactive plots (plotly) would embed megabytes of JavaScript per report.
The figures (``<figure id=...>``): ``throughput`` (calls per second offered, started, succeeded
and failed, and the players, over time), ``latency`` (p50/p90/p99/max per second) and
``histogram`` (the latency distribution of the calls that succeeded).
"""

from __future__ import annotations

import html
import io
from typing import Any

from .text_report import codes_compared, loop_note, side_by_side, unserved_rows, unserved_title

try:
    import matplotlib
    from matplotlib.figure import Figure
except ImportError as exc:  # the client without the extra
    raise ImportError("the HTML report needs matplotlib: pip install 'accordion-client[load]'") from exc


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    # Text stays <text> (not outlines): smaller, selectable, and a test can read the labels.
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "accordion-load"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE: inline SVG in HTML5


def throughput_figure(report: dict[str, Any]) -> str:
    series = report["series"]
    t = [row["t"] + 0.5 for row in series]
    fig = Figure(figsize=(9, 3.4))
    ax = fig.add_subplot()
    if report["mode"] == "rate":
        # Each second's offered calls (the schedule's, flat at a constant rate) as a step.
        edges = list(range(len(series) + 1))
        ax.stairs([row["offered"] for row in series], edges, color="0.55", ls="--", label="offered")
        ax.plot(t, [row["started"] for row in series], color="tab:blue", lw=1, label="started")
    ax.plot(t, [row["ok"] for row in series], color="tab:green", lw=1.6, label="succeeded")
    ax.plot(t, [row["errors"] for row in series], color="tab:red", lw=1.2, label="failed")
    if any(row["missed"] for row in series):
        ax.plot(t, [row["missed"] for row in series], color="tab:orange", lw=1, label="missed slots")
    ax.set_xlabel("seconds into the run")
    ax.set_ylabel("calls per second")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    players = ax.twinx()
    players.plot(t, [row["players"] for row in series], color="tab:purple", lw=0.8, alpha=0.6)
    players.set_ylabel("players", color="tab:purple")
    players.set_ylim(bottom=0)
    ax.legend(loc="upper left", fontsize="small", ncol=5)
    ax.set_title("Throughput")
    return _svg(fig)


def latency_figure(report: dict[str, Any]) -> str:
    series = [row for row in report["series"] if row["ok"]]
    t = [row["t"] + 0.5 for row in series]
    fig = Figure(figsize=(9, 3.4))
    ax = fig.add_subplot()
    for key, color in (("p50", "tab:green"), ("p90", "tab:blue"), ("p99", "tab:orange"), ("max", "tab:red")):
        ax.plot(t, [row["latency_ms"][key] for row in series], color=color, lw=1.2, marker=".", label=key)
    ax.set_xlim(0, max(len(report["series"]), 1))
    if series:
        ax.set_yscale("log")
    else:
        ax.text(0.5, 0.5, "no call succeeded", transform=ax.transAxes, ha="center", color="tab:red")
    ax.set_xlabel("seconds into the run")
    ax.set_ylabel("latency, ms (succeeded calls)")
    ax.grid(alpha=0.3, which="both")
    if series:
        ax.legend(loc="upper left", fontsize="small", ncol=4)
    ax.set_title("Latency percentiles per second")
    return _svg(fig)


def histogram_figure(report: dict[str, Any]) -> str:
    rows = report["histogram"]
    fig = Figure(figsize=(9, 3.2))
    ax = fig.add_subplot()
    if rows:
        lefts = [max(r["from_ms"], rows[0]["to_ms"] / 1.3) for r in rows]
        widths = [r["to_ms"] - left for r, left in zip(rows, lefts, strict=True)]
        ax.bar(lefts, [r["count"] for r in rows], width=widths, align="edge", color="tab:blue", alpha=0.8)
        ax.set_xscale("log")
        for key, color in (("p50", "tab:green"), ("p99", "tab:orange")):
            value = report["latency_ms"][key]
            ax.axvline(value, color=color, ls="--", lw=1, label=f"{key} {value:g} ms")
        ax.legend(fontsize="small")
    else:
        ax.text(0.5, 0.5, "no call succeeded", transform=ax.transAxes, ha="center", color="tab:red")
    ax.set_xlabel("latency, ms")
    ax.set_ylabel("calls")
    ax.grid(alpha=0.3)
    ax.set_title("Latency histogram (all succeeded calls)")
    return _svg(fig)


CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 62em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
table.facts td { text-align: left; }
.fail { color: #b00020; font-weight: bold; } .pass { color: #106010; }
figure { margin: 1em 0; } figure svg { width: 100%; height: auto; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""


def _table(
    header: list[str], rows: list[list[Any]], cls: list[str] | None = None, table_class: str = ""
) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        attr = f' class="{cls[i]}"' if cls and cls[i] else ""
        body.append(f"<tr{attr}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>")
    attr = f' class="{table_class}"' if table_class else ""
    return f"<table{attr}><tr>{head}</tr>{''.join(body)}</table>"


def _figure(name: str, svg: str, caption: str) -> str:
    return f'<figure id="{name}">{svg}<figcaption>{html.escape(caption)}</figcaption></figure>'


def server_section(report: dict[str, Any]) -> list[str]:
    """--metrics-url: the server's counts and percentiles beside the client's, and the rest."""
    e, server = html.escape, report["server"]
    header, rows = side_by_side(report)
    used = server["histogram"] + (" (a fallback: the server has no accordion_rpc_server_seconds)"
                                  if server["histogram_fallback"] else "")  # fmt: skip
    parts = [
        '<h2 id="server">The server\'s view</h2>',
        f"<p>Scraped from {e(', '.join(server['urls']))} before and after the run (differences). "
        f"Server latency from <code>{e(used)}</code>: a percentile is known to its bucket "
        f"(bounds {e(str(server['bucket_bounds_ms']))} ms); the client's from its own clock.</p>",
        _table(header, rows),
    ]
    for url in server["unreadable"]:
        parts.append(f'<p class="fail">unreadable: {e(url)}</p>')

    def joined(items: dict[str, Any]) -> str:
        return ", ".join(f"{k} {v}" for k, v in items.items()) or "none"

    rows = [
        ["errors by code, client/server", codes_compared(report)],
        ["errors (code reason)", joined(server["errors_by_code_reason"])],
        ["refusals (layer reason)", joined(server["refused_by_layer_reason"])],
        ["calls their client ended (not errors)", joined(server["client_ended"])],
        ["grpc core", joined(server["grpc_core"])],
        ["CPU seconds by worker", joined(server["cpu_seconds_by_worker"])],
    ]
    parts.append(_table(["", ""], rows, table_class="facts"))
    return parts


def render(report: dict[str, Any], verdict: list[str]) -> str:
    """The HTML document. ``verdict``: the reasons the run failed (empty: it passed)."""
    e = html.escape
    rate = report["rate"]
    facts = [
        ["target", f"{report['target']} ({'TLS' if report['tls'] else 'plaintext'})"],
        ["variant", report["variant"]],
        ["scenario", report["scenario"]["description"]],
        ["started at", report["started_at"]],
        ["ran", f"{report['window_s']:.1f} s (replies until {report['elapsed_s']:.1f} s)"],
        ["calls", f"{report['requests']} ({report['errors']} failed), {report['throughput_rps']:.1f}/s"],
    ]
    if report["mode"] == "rate":
        facts.append(
            [
                "rate",
                (
                    f"offered {rate['offered_rps']:.1f}/s, achieved {rate['achieved_rps']:.1f}/s "
                    f"({(rate['achieved_ratio'] or 0) * 100:.1f}%), {rate['missed']} slots missed; "
                    "latency from each slot's scheduled time"
                ),
            ]
        )
    games = report["games"]
    facts.append(["games", f"{games['started']} dealt, {games['finished']} played out, {games['won']} won"])
    status = (
        '<p class="pass">PASSED</p>'
        if not verdict
        else '<p class="fail">FAILED</p><ul>'
        + "".join(f'<li class="fail">{e(v)}</li>' for v in verdict)
        + "</ul>"
    )
    method_rows = [
        [name, r["requests"], r["errors"], f"{r['throughput_rps']:.1f}"]
        + [f"{r['latency_ms'][k]:.2f}" for k in ("p50", "p90", "p99", "p999", "max")]
        for name, r in [*report["methods"].items(), ("all", report)]
        if r["requests"] or name == "all"
    ]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>accordion-load: {e(report['target'])} {e(report['started_at'])}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>accordion-load report</h1>{status}",
        _table(["", ""], facts, table_class="facts"),
        "<h2>Calls</h2>",
        _table(
            ["method", "calls", "errors", "calls/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms"],
            method_rows,
        ),
    ]
    if rate["unserved"]:
        parts.append(f'<h2 id="unserved">{e(unserved_title(report).capitalize())}, by cause</h2>')
        parts.append(_table(["cause", "slots", "share", "what it means"], unserved_rows(report)))
        note = loop_note(report)
        if note:
            parts.append(f"<p>{e(note.capitalize())}</p>")
    if report.get("server"):
        parts += server_section(report)
    if report["errors_by_code"]:
        parts.append("<h2>Errors</h2>")
        parts.append(
            _table(
                ["code", "calls", "first message", "its request id"],
                [
                    [c, n, report["error_samples"].get(c, ""), report["error_request_ids"].get(c, "-")]
                    for c, n in report["errors_by_code"].items()
                ],
            )
        )
    if report["thresholds"]:
        parts.append("<h2>Thresholds</h2>")
        parts.append(
            _table(
                ["threshold", "measured", "result"],
                [
                    [t["threshold"], f"{t['value']} {t['unit']}", "pass" if t["passed"] else "FAIL"]
                    for t in report["thresholds"]
                ],
                ["pass" if t["passed"] else "fail" for t in report["thresholds"]],
            )
        )
    if report["slowest_traced"]:
        parts.append(f'<h2 id="traced">Slowest traced calls ({report["traced_calls"]} traced)</h2>')
        parts.append(
            _table(
                ["method", "latency ms", "trace id", "request id"],
                [
                    [r["method"], f"{r['latency_ms']:.2f}", r["trace_id"], r["request_id"] or "-"]
                    for r in report["slowest_traced"]
                ],
            )
        )
    if report["watch"]["streams"]:
        w = report["watch"]
        parts.append(
            f"<h2>Watchers</h2><p>{w['streams']} WatchGame streams, {w['events']} events; move sent to "
            f"event seen: p50 {w['lag_ms']['p50']} ms, p99 {w['lag_ms']['p99']} ms.</p>"
        )
    parts += [
        "<h2>Over time</h2>",
        _figure(
            "throughput",
            throughput_figure(report),
            "Calls per second: offered (the schedule), started (when sent), succeeded and failed "
            "(when the reply came), missed slots (in the second they were due), and the players "
            "(right axis).",
        ),
        _figure(
            "latency",
            latency_figure(report),
            "Latency percentiles of each second's succeeded calls (log scale).",
        ),
        _figure(
            "histogram",
            histogram_figure(report),
            "How the latencies of all succeeded calls are spread (log scale).",
        ),
        "</body></html>",
    ]
    return "\n".join(parts)
