"""A failed test of the Matrix bot shows the tail of the bot's log and of Synapse's (their files
live in the module's temporary directory, gone after the run)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    world = getattr(item, "funcargs", {}).get("world")
    if report.when == "call" and report.failed and world is not None:
        report.sections.append(("bot log (tail)", world.bot.log()[-8000:]))
        report.sections.append(("synapse log (tail)", world.synapse.log_tail(60)))
    return report
