"""``--fail-if`` thresholds for CI gates: ``p99<20ms``, ``errors<0.1%``, ``ApplyMove:p50<=5ms``.

Grammar: ``[METHOD:]METRIC OP NUMBER[UNIT]`` with OP one of ``< <= > >=``; the run passes when
every condition holds (the name says what must be true, as in k6).

* latency ``p50 p90 p99 p999 max mean``: units ``us``, ``ms`` (the default), ``s``
* ``errors``: a count, or with ``%`` a share of the calls made
* ``rps``: calls per second that came back (throughput)
* ``achieved``: calls started per second; with ``%`` a share of the rate offered (open loop)
* ``missed``: open-loop slots the tool could not use; a count, or with ``%`` a share of the offered
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .stats import METHODS

LATENCY = ("p50", "p90", "p99", "p999", "max", "mean")
METRICS = (*LATENCY, "errors", "rps", "achieved", "missed")
OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}
TIME_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}
PATTERN = re.compile(
    r"^\s*(?:(?P<method>[A-Za-z]+)\s*:\s*)?(?P<metric>[a-z0-9]+)\s*(?P<op><=|>=|<|>)\s*"
    r"(?P<number>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>us|ms|s|%)?\s*$"
)


class ThresholdError(ValueError):
    """A threshold that cannot be read; the message shows the grammar."""


@dataclass(frozen=True)
class Threshold:
    text: str
    metric: str
    op: str
    limit: float  # ms for latencies, a share (0..1) for percentages
    percent: bool = False
    method: str | None = None

    def measure(self, report: dict[str, Any]) -> float | None:
        """The measured value in the limit's unit; None when the run has no such figure."""
        row = report if self.method is None else report["methods"].get(self.method)
        if row is None:
            return None
        rate = report["rate"]
        if self.metric in LATENCY:
            return float(row["latency_ms"][self.metric])
        if self.metric == "errors":
            if not self.percent:
                return float(row["errors"])
            return row["errors"] / row["requests"] if row["requests"] else 0.0
        if self.metric == "rps":
            return float(row["throughput_rps"])
        if self.metric == "achieved":
            return rate["achieved_ratio"] if self.percent else float(rate["achieved_rps"])
        # missed
        if not self.percent:
            return float(rate["missed"])
        return rate["missed"] / rate["offered"] if rate["offered"] else None

    def check(self, report: dict[str, Any]) -> dict[str, Any]:
        value = self.measure(report)
        shown = None if value is None else round(value * 100, 4) if self.percent else round(value, 3)
        passed = value is not None and OPS[self.op](value, self.limit)
        return {"threshold": self.text, "value": shown, "unit": self.unit, "passed": passed}

    @property
    def unit(self) -> str:
        if self.percent:
            return "%"
        if self.metric in LATENCY:
            return "ms"
        return "calls/s" if self.metric in ("rps", "achieved") else "calls"


def parse(text: str) -> Threshold:
    """One ``--fail-if`` value; ThresholdError saying what is wrong."""
    match = PATTERN.match(text)
    if not match:
        raise ThresholdError(
            f"cannot read threshold {text!r}: want [METHOD:]METRIC OP NUMBER[UNIT], e.g. 'p99<20ms', "
            f"'errors<0.1%', 'ApplyMove:p50<=5ms' (metrics: {', '.join(METRICS)})"
        )
    method, metric, op, number, unit = match.group("method", "metric", "op", "number", "unit")
    if metric not in METRICS:
        raise ThresholdError(f"threshold {text!r}: unknown metric {metric!r} (known: {', '.join(METRICS)})")
    limit = float(number)
    if metric in LATENCY:
        if unit == "%":
            raise ThresholdError(f"threshold {text!r}: a latency takes us, ms or s, not %")
        limit *= TIME_UNITS[unit or "ms"]
    elif unit in TIME_UNITS:
        raise ThresholdError(f"threshold {text!r}: {metric} is not a time; use a number or a %")
    elif unit == "%":
        if metric == "rps":
            raise ThresholdError(f"threshold {text!r}: rps is calls/s; use achieved for a share of the rate")
        limit /= 100
    if method is not None and method not in METHODS:
        raise ThresholdError(f"threshold {text!r}: unknown method {method!r} (known: {', '.join(METHODS)})")
    if method is not None and metric in ("achieved", "missed"):
        raise ThresholdError(f"threshold {text!r}: {metric} is for the whole run, not per method")
    return Threshold(text.strip(), metric, op, limit, unit == "%", method)


def evaluate(thresholds: list[Threshold], report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each threshold with its measured value and whether it held (a missing figure fails)."""
    return [t.check(report) for t in thresholds]
