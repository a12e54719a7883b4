"""Helpers of the access log's tests (test_access_log.py, test_access_log_batches.py): waiting for
what the server writes late, and a metric's value in this process's registry."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import REGISTRY


async def eventually(what: str, check: Callable[[], Any], within: float = 60.0) -> Any:
    """Poll ``check`` until it returns something truthy. The server records a call after its
    reply is sent, and a batch is written by a timer: on a loaded machine both come late."""
    deadline = time.monotonic() + within
    while not (result := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {within} s waiting for {what}")
        await asyncio.sleep(0.01)
    return result


def value(name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(
        s.value
        for family in REGISTRY.collect()
        for s in family.samples
        if s.name == name and wanted <= set(s.labels.items())
    )
