"""The stored log's hot loop for tableau games: read (``read_events``) and write (``encode_event``)
the logs of tests/sessions/stored_transfers.json (six tableau games, 900 events, most of them
transfers); the best of 7 runs of 200 rounds, in µs of this thread's CPU time per event (other processes
on a busy machine disturb it less than the wall clock).

    .venv/bin/python bench/stored_log.py
    PYTHONPATH=../old/service .venv/bin/python bench/stored_log.py   # another tree's service (A/B:
                                                                     # alternate the two, compiled both)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import accordion
from accordion.build_info import build_kind
from accordion.sessions import binary
from accordion.sessions.record import load_stored

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "sessions" / "stored_transfers.json"


def main() -> None:
    logs = []
    for case in json.loads(GOLDEN.read_text())["games"]:
        stored = load_stored("abcdefghijklmnopqrstuv", bytes.fromhex(case["data"]), case["version"])
        blob = b"".join(binary.encode_event(e) for e in stored.events)
        logs.append((blob, stored.events))
    events = sum(len(e) for _, e in logs)

    def read() -> None:
        for blob, evs in logs:
            binary.read_events(binary.Reader(blob, 0), len(evs))

    def write() -> None:
        for _, evs in logs:
            for e in evs:
                binary.encode_event(e)

    def best(fn: Callable[[], None]) -> float:
        runs = []
        for _ in range(7):
            start = time.thread_time()
            for _ in range(200):
                fn()
            runs.append((time.thread_time() - start) / 200 / events * 1e6)
        return min(runs)

    tree = Path(accordion.__file__).resolve().parents[2]
    print(f"{tree} ({build_kind()}): read {best(read):.3f} µs/event, write {best(write):.3f} µs/event")


if __name__ == "__main__":
    main()
