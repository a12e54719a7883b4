"""bench/hostile.py's report: the trees, the table, what each row shows, and the Markdown table
(docs/performance.md).
"""

from __future__ import annotations

import json
from typing import Any

# --- the report -------------------------------------------------------------------------------------


def _fmt(s: dict[str, Any] | None) -> str:
    if not s or not s["calls"]:
        return f"{'-':>6} {'-':>7} {'-':>8}"
    p50 = "-" if s["p50_ms"] is None else f"{s['p50_ms']:.1f}"
    p99 = "-" if s["p99_ms"] is None else f"{s['p99_ms']:.1f}"
    return f"{s['ok_pct']:>6.1f} {p50:>7} {p99:>8}"


def print_trees(results: list[dict[str, Any]]) -> None:
    seen: dict[str, dict[str, Any]] = {}
    for r in results:
        seen.setdefault(r["tree"], {"dir": r["dir"], "commit": r.get("commit", ""), "left_out": set()})
        seen[r["tree"]]["left_out"].update(r["flags_left_out"])
    for label, t in seen.items():
        print(
            f"  {label}: {t['dir']}"
            + (f" at {t['commit']}" if t["commit"] else "")
            + (f"; flags it lacks, left out: {' '.join(sorted(t['left_out']))}" if t["left_out"] else "")
        )


def print_table(results: list[dict[str, Any]]) -> None:
    head = (
        f"{'row':<19} {'tree':<6} {'phase':<8} {'hc OK%':>6} {'hc p50':>7} {'hc p99':>8}  "
        f"{'GG OK%':>6} {'GG p50':>7} {'GG p99':>8}  {'srv CPU':>7}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        for phase in ("control", "attack", "after"):
            p = r["phases"].get(phase, {})
            cpu = {"control": r.get("control_cpu_pct"), "attack": r.get("attack_cpu_pct")}.get(phase)
            print(
                f"{r['row']:<19} {r['tree']:<6} {phase:<8} {_fmt(p.get('health'))}  "
                f"{_fmt(p.get('GetGame'))}  " + (f"{cpu:>6.0f}%" if cpu is not None else f"{'':>7}")
            )
        extras = dict(r["extra"])
        for phase in ("control", "attack", "after"):
            if "easy Solve" in r["phases"].get(phase, {}):
                extras[f"easy_solve_{phase}"] = r["phases"][phase]["easy Solve"]
        for phase in ("control", "attack", "after"):
            codes = {k: s["codes"] for k, s in r["phases"].get(phase, {}).items() if s["codes"]}
            if codes:
                extras[f"errors_{phase}"] = codes
        print(f"    attacker: {json.dumps(r['attacker'])}")
        print(f"    {json.dumps(extras)}")
        print(
            f"    load {r['load_before']} -> {r['load_after']}"
            + (f"; flags left out: {r['flags_left_out']}" if r["flags_left_out"] else "")
        )
    print(
        "(hc: health Check, GG: the honest GetGame; OK% over all calls sent in the phase, p50/p99 in ms over "
        "the OK ones; srv CPU: the server process's CPU over the phase)"
    )


def _pct(value: float) -> str:
    return f"{value:.0f}" if value in (0, 100) else f"{value:.1f}"  # 99.9 is not 100


def _ms(s: dict[str, Any] | None) -> str:
    if not s or not s["calls"]:
        return "–"
    if s["p50_ms"] is None:
        return f"{_pct(s['ok_pct'])} % OK"
    return f"{_pct(s['ok_pct'])} % OK, {s['p50_ms']:.1f} / {s['p99_ms']:.1f}"


def row_note(r: dict[str, Any]) -> dict[str, str]:
    """Each phase's row-specific figure, in words (the markdown table's last column)."""
    x, a = r["extra"], r["attacker"].get("counts", {})
    note: dict[str, str] = {}
    if r["row"] == "watch-cancel-leak":
        others = ", ".join(
            f"{v} {k}" for k, v in a.items() if k not in ("first_event_then_cancel", "cancelled_at_end")
        )
        note["attack"] = (
            f"{a.get('first_event_then_cancel', 0)} watches cancelled after their first event"
            + (f"; {others}" if others else "")
        )
        in_flight, in_flight_end = x.get("in_flight_2s_after"), x.get("in_flight_end_of_after")
        clients_end = x.get("redis_clients_end_of_after")
        note["after"] = (
            f"Redis clients {x.get('redis_clients_before')} → {x.get('redis_clients_2s_after')} "
            "2 s after the attacker left"
            + ("" if clients_end is None else f" ({clients_end} at the phase's end)")
            + "; WatchGame handlers running then: "
            + ("not exported" if in_flight is None else f"{in_flight:.0f}")
            + ("" if in_flight_end is None else f" ({in_flight_end:.0f})")
        )
    elif r["row"] == "health-watch-flood":
        refused = sum(v for k, v in a.items() if k.endswith("RESOURCE_EXHAUSTED"))
        half = sum(
            a.get(f"half_{m}_sent", 0) - a.get(f"half_{m}_RESOURCE_EXHAUSTED", 0)
            for m in ("check", "getgame")
        )
        watch_ends = ", ".join(
            f"{v} {k.removeprefix('watch_')}"
            for k, v in a.items()
            if k.startswith("watch_") and k not in ("watch_held", "watch_DEADLINE_EXCEEDED")
        )
        note["attack"] = (
            f"attacker: {a.get('watch_held', 0)} Watch streams and {half} half-sent calls held "
            f"(over the phase), {refused} refused" + (f"; Watch calls: {watch_ends}" if watch_ends else "")
        )
    elif r["row"] == "cached-solve":
        note["control"] = f"line of {x['solved_game']['line_moves']} moves" if "solved_game" in x else ""
        note["attack"] = (
            f"{x.get('solves_per_s')} cached Solves/s, server CPU "
            f"{x.get('server_cpu_ms_per_solve')} ms per Solve"
        )
    elif r["row"] == "solver-hog":
        for phase in ("control", "attack", "after"):
            s = r["phases"].get(phase, {}).get("easy Solve")
            if s:
                outcomes = x.get("easy_solve_outcomes", {}).get(phase, {})
                note[phase] = (
                    "easy Solve: "
                    + _ms(s)
                    + " ms ("
                    + ", ".join(f"{k} {v}" for k, v in outcomes.items())
                    + ")"
                )
    elif r["row"] == "solver-48-clients":
        done = {k.removeprefix("SOLVE_OUTCOME_"): v for k, v in a.items() if k != "cancelled_at_end"}
        note["attack"] = "attackers' Solves: " + (
            ", ".join(f"{k} {v}" for k, v in done.items()) or "none answered"
        )
    elif r["row"] == "newgame-flood":
        note["attack"] = (
            f"flood: {a.get('OK', 0)} NewGame OK, {a.get('RESOURCE_EXHAUSTED', 0)} RESOURCE_EXHAUSTED"
        )
        evicted = x.get("memory_store_evicted")
        note["after"] = f"resting game: {x.get('resting_game')}; games evicted: " + (
            "?" if evicted is None else f"{evicted:.0f}"
        )
    for phase in ("control", "attack", "after"):
        errors = {
            k: s["codes"]
            for k, s in r["phases"].get(phase, {}).items()
            if s["codes"] and k in ("health", "GetGame")
        }
        if errors:
            note[phase] = "; ".join(
                filter(
                    None,
                    [
                        note.get(phase, ""),
                        "errors "
                        + ", ".join(
                            f"{k}: " + " ".join(f"{c} {n}" for c, n in codes.items())
                            for k, codes in errors.items()
                        ),
                    ],
                )
            )
    return note


def print_markdown(results: list[dict[str, Any]]) -> None:
    print(
        "| row | tree | phase | health Check: OK, p50 / p99 ms | honest GetGame: OK, p50 / p99 ms | server "
        "CPU | "
        "what the row shows |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        note = row_note(r)
        for phase in ("control", "attack", "after"):
            p = r["phases"].get(phase, {})
            cpu = {"control": r.get("control_cpu_pct"), "attack": r.get("attack_cpu_pct")}.get(phase)
            print(
                f"| {r['row'] if phase == 'control' else ''} | {r['tree']} | {phase} | "
                f"{_ms(p.get('health'))} | "
                f"{_ms(p.get('GetGame'))} | {'' if cpu is None else f'{cpu:.0f} %'} | {note.get(phase, '')} |"
            )
