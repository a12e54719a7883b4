"""Results the compiled cores gave, recorded: what holds a core whose Python twin was dropped
(Streets and Alleys, Emperor, Spider; issue 30) to the answers it and its twin agreed on.

``recorded.json`` maps a case's name to ``[outcome code, positions, line length, line digest]``,
recorded from ``main`` at 55ac8bc while every one of these cases still also compared the core with
its twin (both gave the same). A change to a core that changes any of them fails here; one that
means to (a better search) records again on purpose: run the tests that use this module with
``ACCORDION_RECORD_SOLVER=FILE`` (each case's result is appended to FILE, one JSON line, and
nothing is checked), look at what changed, and merge FILE into ``recorded.json``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

RECORDED = Path(__file__).with_name("recorded.json")


@functools.cache
def _table() -> dict[str, list[object]]:
    table: dict[str, list[object]] = json.loads(RECORDED.read_text())
    return table


def move_text(move: object) -> str:
    """A move as the pure-Python build's ``repr`` writes it, in either build: the compiled engine's
    dataclasses also show their ``kind``, left out here. A core's tuple is its own ``repr``."""
    if dataclasses.is_dataclass(move):
        shown = (f for f in dataclasses.fields(move) if f.repr and f.name != "kind")
        return f"{type(move).__name__}({', '.join(f'{f.name}={getattr(move, f.name)!r}' for f in shown)})"
    return repr(move)


def digest(moves: Sequence[object]) -> str:
    """A short fingerprint of a line (engine moves or a core's tuples), the same in both builds."""
    return hashlib.sha256(repr([move_text(m) for m in moves]).encode()).hexdigest()[:16]


def summary(code: int, moves: Sequence[object], nodes: int) -> list[object]:
    return [code, nodes, len(moves), digest(moves)]


def check_result(key: str, result: object) -> None:
    """``check_recorded`` for a ``SolveResult``."""
    codes = {"UNKNOWN": 0, "WON": 1, "LOST": 2}
    check_recorded(key, codes[result.outcome.value], result.moves, result.nodes)  # type: ignore[attr-defined]


def check_recorded(key: str, code: int, moves: Sequence[object], nodes: int) -> None:
    """The result ``(code, moves, nodes)`` of case ``key`` is the one recorded."""
    got = summary(code, moves, nodes)
    record_to = os.environ.get("ACCORDION_RECORD_SOLVER")
    if record_to:
        with open(record_to, "a") as out:
            out.write(json.dumps({key: got}) + "\n")
        return
    assert key in _table(), f"{key}: not recorded (see tests/solver/recorded.py)"
    assert got == _table()[key], (key, got, _table()[key])
