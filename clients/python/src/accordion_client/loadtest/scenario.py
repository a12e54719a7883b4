"""A load run's shape: stages (a rate or a number of players over time) and a weighted mix of calls.

Written as a TOML file (``--scenario``; docs/load.md has the format) or built from the command
line's ``--rate``/``--concurrency``/``--duration`` as one constant stage. TOML because Python reads
it without a dependency (tomllib) and it takes comments.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# What a player can do next with its game, and the call each action makes. ``new_game`` abandons
# the game and deals another; a player with no game, or whose game has ended, always deals.
ACTIONS = {
    "new_game": "NewGame",
    "move": "ApplyMove",
    "legal_moves": "LegalMoves",
    "read": "GetGame",
    "score": "Score",
    "hint": "Hint",
}
# The call mix of the old fixed flow, per move: LegalMoves half the time, Score every 5 moves.
DEFAULT_MIX = {"move": 1.0, "legal_moves": 0.5, "score": 0.2}
KINDS = ("rate", "players")


class ScenarioError(ValueError):
    """A scenario that cannot run; the message says which key and why."""


@dataclass(frozen=True)
class Stage:
    """``duration`` seconds at ``target`` (calls/s or players); with ``ramp``, moving linearly from
    the previous stage's target (0 before the first stage) to ``target`` over the stage."""

    duration: float
    target: float
    ramp: bool = False


@dataclass(frozen=True)
class Scenario:
    kind: str  # "rate" (open loop, calls/s) or "players" (closed loop, players calling flat out)
    stages: tuple[Stage, ...]
    mix: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))
    watchers: float = 0.0  # share of dealt games that get a WatchGame stream for their life
    variant: str | None = None
    name: str = ""

    @property
    def duration(self) -> float:
        return sum(s.duration for s in self.stages)

    @property
    def peak(self) -> float:
        return max(s.target for s in self.stages)

    def _start_of(self, index: int) -> float:
        stage = self.stages[index]
        if not stage.ramp:
            return stage.target
        return self.stages[index - 1].target if index else 0.0

    def value_at(self, t: float) -> float:
        """The target (calls/s or players) ``t`` seconds into the run (the last one after the end)."""
        begin = 0.0
        for i, stage in enumerate(self.stages):
            if t < begin + stage.duration:
                start = self._start_of(i)
                return start + (stage.target - start) * (t - begin) / stage.duration
            begin += stage.duration
        return self.stages[-1].target

    def calls_due(self, t: float) -> float:
        """Calls the schedule asks for in the first ``t`` seconds: the integral of the rate."""
        total, begin = 0.0, 0.0
        for i, stage in enumerate(self.stages):
            start = self._start_of(i)
            u = min(max(t - begin, 0.0), stage.duration)
            total += start * u + (stage.target - start) * u * u / (2 * stage.duration)
            begin += stage.duration
        return total

    def time_of_call(self, n: float) -> float:
        """When the schedule's ``n``-th call is due: the ``t`` with ``calls_due(t) == n`` (the
        inverse of the integral; past the end, the end). Each slot's latency is measured from
        this time, not from when the tool got round to sending it (no coordinated omission)."""
        left, begin = n, 0.0
        for i, stage in enumerate(self.stages):
            start = self._start_of(i)
            slope = (stage.target - start) / (2 * stage.duration)  # calls = start*u + slope*u^2
            in_stage = start * stage.duration + slope * stage.duration**2
            if left <= in_stage and (start > 0 or slope > 0):
                # The root of slope*u^2 + start*u - left = 0 in its stable form (no 0/0 at slope 0).
                root = math.sqrt(max(start * start + 4 * slope * left, 0.0))
                return begin + (2 * left / (start + root) if start + root > 0 else 0.0)
            left -= in_stage
            begin += stage.duration
        return self.duration

    def describe(self) -> str:
        unit = "/s" if self.kind == "rate" else " players"
        parts = []
        for i, s in enumerate(self.stages):
            start = self._start_of(i)
            level = f"{start:g}->{s.target:g}{unit}" if s.ramp else f"{s.target:g}{unit}"
            parts.append(f"{level} for {s.duration:g} s")
        return ", ".join(parts)


def _number(value: Any, where: str, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ScenarioError(f"{where} must be a number, not {value!r}")
    if value < 0 or (positive and value == 0):
        raise ScenarioError(f"{where} must be {'positive' if positive else 'zero or more'}, not {value!r}")
    return float(value)


def parse_mix(raw: Any, where: str = "[mix]") -> dict[str, float]:
    if not isinstance(raw, Mapping) or not raw:
        raise ScenarioError(f"{where} must be a table of weights, e.g. move = 10")
    mix: dict[str, float] = {}
    for name, weight in raw.items():
        if name not in ACTIONS:
            raise ScenarioError(f"{where}: unknown action {name!r} (known: {', '.join(ACTIONS)})")
        mix[name] = _number(weight, f"{where} {name}")
    if not any(w > 0 for name, w in mix.items() if name != "new_game"):
        raise ScenarioError(f"{where}: give some weight to an action other than new_game")
    return mix


def from_dict(data: Mapping[str, Any]) -> Scenario:
    """A scenario from a parsed TOML document; ScenarioError on anything unknown or out of range."""
    known = {"name", "variant", "watchers", "mix", "stages"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ScenarioError(f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    raw_stages = data.get("stages")
    if not isinstance(raw_stages, list) or not raw_stages:
        raise ScenarioError("give at least one [[stages]] table with duration and rate (or players)")
    stages, kinds = [], set()
    for n, raw in enumerate(raw_stages, 1):
        where = f"stage {n}"
        if not isinstance(raw, Mapping):
            raise ScenarioError(f"{where} must be a table")
        extra = sorted(set(raw) - {"duration", "rate", "players", "ramp"})
        if extra:
            raise ScenarioError(f"{where}: unknown key(s) {', '.join(extra)}")
        given = [k for k in KINDS if k in raw]
        if len(given) != 1:
            raise ScenarioError(f"{where}: give exactly one of rate (calls/s) or players")
        kinds.add(given[0])
        ramp = raw.get("ramp", False)
        if not isinstance(ramp, bool):
            raise ScenarioError(f"{where}: ramp must be true or false")
        target = _number(raw[given[0]], f"{where} {given[0]}")
        if given[0] == "players" and target != int(target):
            raise ScenarioError(f"{where}: players must be a whole number")
        stages.append(Stage(_number(raw.get("duration"), f"{where} duration", positive=True), target, ramp))
    if len(kinds) != 1:
        raise ScenarioError("stages must all give rate (open loop) or all give players (closed loop)")
    if max(s.target for s in stages) <= 0:
        raise ScenarioError("every stage's target is 0: nothing would run")
    watchers = _number(data.get("watchers", 0.0), "watchers")
    if watchers > 1:
        raise ScenarioError(f"watchers is a share of games within 0..1, not {watchers!r}")
    variant = data.get("variant")
    if variant is not None and (not isinstance(variant, str) or not variant):
        raise ScenarioError('variant must be a variant\'s id, e.g. "accordion"')
    name = data.get("name", "")
    if not isinstance(name, str):
        raise ScenarioError("name must be a string")
    mix = parse_mix(data["mix"]) if "mix" in data else dict(DEFAULT_MIX)
    return Scenario(kinds.pop(), tuple(stages), mix, watchers, variant, name)


def load(path: str) -> Scenario:
    """Read a scenario file; ScenarioError (with the path) when it is unreadable or wrong."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ScenarioError(f"{path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML: {exc}") from exc
    try:
        return from_dict(data)
    except ScenarioError as exc:
        raise ScenarioError(f"{path}: {exc}") from exc


def constant(kind: str, target: float, duration: float, mix: Mapping[str, float], variant: str) -> Scenario:
    """The one-stage scenario of ``--rate R`` or ``--concurrency N`` for ``--duration`` seconds."""
    return Scenario(kind, (Stage(duration, target),), dict(mix), 0.0, variant)
