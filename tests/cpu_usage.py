"""CPU seconds per test, to find where `make test`'s CPU goes (docs/performance/test-suite.md).

A pytest plugin, off unless asked for: ``python -m pytest -p tests.cpu_usage ...`` with
``ACCORDION_TEST_CPU=DIR`` writes one JSON line per test to ``DIR/<pid>.jsonl`` (each xdist
worker its own file): the node id, the outcome, the wall seconds and the CPU seconds (user +
system) of the test's setup, call and teardown, this process's own and its reaped children's
(a server a fixture starts and stops is counted in the test whose teardown waits for it; one
kept for the session is counted in no test). ``python tests/cpu_usage.py DIR [N]`` sums them by directory
and by module and lists the N costliest tests.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def _cpu() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    directory = os.environ.get("ACCORDION_TEST_CPU")
    if not directory:
        yield
        return
    wall, (own, kids) = time.monotonic(), _cpu()
    yield
    own2, kids2 = _cpu()
    line = {
        "test": item.nodeid,
        "wall": round(time.monotonic() - wall, 3),
        "cpu": round(own2 - own, 3),
        "children": round(kids2 - kids, 3),
        "outcome": getattr(item, "_cpu_usage_outcome", "passed"),
    }
    Path(directory).mkdir(parents=True, exist_ok=True)
    with open(Path(directory) / f"{os.getpid()}.jsonl", "a") as out:
        out.write(json.dumps(line) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Each test's outcome beside its figures (the worst of setup, call and teardown), so a run
    cut short still says which tests failed."""
    outcome = yield
    report = outcome.get_result()
    if report.failed or (report.skipped and getattr(item, "_cpu_usage_outcome", "passed") == "passed"):
        item._cpu_usage_outcome = report.outcome  # type: ignore[attr-defined]


def summary(directory: Path, top: int) -> str:
    rows: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line]
    by_dir: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    by_module: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for row in rows:
        module = row["test"].split("::", 1)[0]
        total = row["cpu"] + row["children"]
        for key, table in ((module.rsplit("/", 1)[0], by_dir), (module, by_module)):
            table[key][0] += 1
            table[key][1] += total
            table[key][2] += row["wall"]
    out = [f"{len(rows)} tests, {sum(r['cpu'] + r['children'] for r in rows):.1f} CPU-s in tests"]
    failed = [row["test"] for row in rows if row.get("outcome", "passed") == "failed"]
    out += [f"FAILED {test}" for test in failed]
    for title, table, n in (("directory", by_dir, 100), ("module", by_module, top)):
        out.append(f"\n{'CPU-s':>8} {'wall-s':>8} {'tests':>6}  {title}")
        for key, (count, cpu, wall) in sorted(table.items(), key=lambda kv: -kv[1][1])[:n]:
            out.append(f"{cpu:8.1f} {wall:8.1f} {int(count):6d}  {key}")
    out.append(f"\n{'CPU-s':>8} {'own':>8} {'wall-s':>8}  test")
    for row in sorted(rows, key=lambda r: -(r["cpu"] + r["children"]))[:top]:
        total = row["cpu"] + row["children"]
        out.append(f"{total:8.1f} {row['cpu']:8.1f} {row['wall']:8.1f}  {row['test']}")
    return "\n".join(out)


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 40))
