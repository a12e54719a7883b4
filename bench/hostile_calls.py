"""bench/hostile.py's shared parts: the rows, the honest client's pace, the stubs on an aio channel,
what a call's failure is called, and the tally of one kind of call in one phase.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2_grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))

from accordion.v1 import accordion_pb2_grpc as pb_grpc  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
BANNER = "accordion-server listening on "
ROWS = {
    1: "watch-cancel-leak",
    2: "health-watch-flood",
    3: "cached-solve",
    4: "solver-hog",
    5: "solver-48-clients",
    6: "newgame-flood",
}
GETGAME_EVERY, HEALTH_EVERY, EASY_SOLVE_EVERY = 0.010, 0.020, 0.200
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
GET_GAME = "/accordion.v1.AccordionService/GetGame"


def accordion_stub(channel: grpc.aio.Channel) -> Any:
    """The service's stub on an aio channel (typed Any: the generated stubs are typed for the
    blocking API)."""
    return pb_grpc.AccordionServiceStub(channel)


def health_stub(channel: grpc.aio.Channel) -> Any:
    return health_pb2_grpc.HealthStub(channel)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


def code_of(exc: BaseException) -> str:
    if isinstance(exc, grpc.aio.AioRpcError):
        return exc.code().name
    if isinstance(exc, asyncio.TimeoutError):
        return "CLIENT_TIMEOUT"
    return type(exc).__name__


class WrongAnswer(Exception):
    """An answer the honest client cannot use (health NOT_SERVING, an easy Solve not WON)."""


class OutOfGames(Exception):
    """The easy Solves' games are all used: no more easy Solves in this row."""


@dataclass
class Calls:
    """One kind of call in one phase: latencies of the OK ones, a count per status."""

    latencies: list[float] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)

    def add(self, code: str, seconds: float) -> None:
        self.codes[code] += 1
        if code == "OK":
            self.latencies.append(seconds)

    def summary(self) -> dict[str, Any]:
        n = sum(self.codes.values())
        return {
            "calls": n,
            "ok_pct": round(100 * self.codes["OK"] / n, 1) if n else None,
            "p50_ms": round(percentile(self.latencies, 50) * 1000, 2) if self.latencies else None,
            "p99_ms": round(percentile(self.latencies, 99) * 1000, 2) if self.latencies else None,
            "codes": {k: v for k, v in self.codes.items() if k != "OK"},
        }
