"""The access log's batches: on a real file or pipe the calls are recorded FLUSH_AFTER seconds
later, written directly (not through structlog's chain) and still the same JSON structlog
printed, in chunks of whole lines; the metrics of every call of a batch; a failing flush."""

from __future__ import annotations

import asyncio
import datetime
import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
import structlog

from accordion.api import access_log, call_metrics
from accordion.api.callinfo import CallInfo
from accordion.server import configure_logging

from .access_log_helpers import eventually, value
from .helpers import Client


async def batch_written() -> None:
    """Until the batch's timer (FLUSH_AFTER) has fired and written it."""
    await eventually("the batch's timer", lambda: access_log._timer is None)


GOOD_ID = "abcdefghijklmnopqrstuv"
T0 = 1_800_000_000  # 2027-01-15T08:00:00Z: far from the time the batch is written


def structlog_json(
    method: str,
    game_id: str,
    code: grpc.StatusCode,
    latency: float,
    wall: float,
    request_id: str,
    **extra: Any,
) -> str:
    """The line structlog's chain prints (configure_logging's JSONRenderer is json.dumps of the
    event dict in this order; TimeStamper(fmt="iso", utc=True) is datetime's isoformat), for a
    call recorded with a CallInfo of ``request_id`` and nothing else known."""
    level = "warning" if code in access_log._SERVER_FAULTS else "info"
    stamp = datetime.datetime.fromtimestamp(wall, tz=datetime.UTC).isoformat().replace("+00:00", "Z")
    event = {
        "method": method,
        "game_id": game_id or None,
        "code": code.name,
        "latency_ms": round(latency * 1000, 3),
    }
    event |= {
        "request_id": request_id,
        "trace_id": None,
        "caller": "",
        "variant": None,
        "reason": None,
        "outcome": "ok" if code is grpc.StatusCode.OK else "error",
        "layer": None,
        "bytes_in": 0,
        "bytes_out": 0,
        "queued_ms": None,
        "served_ms": None,
        "core_wait_ms": None,
    }
    event |= {"event": "rpc", **extra, "level": level, "timestamp": stamp}
    return json.dumps(event, ensure_ascii=False)


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """configure_logging on a real file (so the access lines are batched), reset afterwards."""
    path = tmp_path / "access.log"
    with path.open("w") as stream:
        configure_logging("info", stream=stream, fields={"worker": 3})
        try:
            yield path
        finally:
            access_log.configure_access_log(None)
            structlog.reset_defaults()


def clock(monkeypatch: pytest.MonkeyPatch, walls: list[float] | None = None, now: float = 100.0) -> None:
    """The interceptor's clock: perf_counter() is ``now``, time.time() each of ``walls`` in turn
    (None: the real time)."""
    wall = time.time if walls is None else iter(walls).__next__
    monkeypatch.setattr(access_log, "time", SimpleNamespace(perf_counter=lambda: now, time=wall))


async def test_batched_lines_are_structlogs_each_with_its_own_calls_time(
    log_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = SimpleNamespace
    calls = [  # (method, game id as _game_id gives it, code, latency, time.time() of the call)
        ("accordion.v1.AccordionService/GetGame", GOOD_ID, grpc.StatusCode.OK, 0.0012345, T0 + 0.123456),
        ("m/x", access_log.game_id_of(request(game_id="y" * 900)), grpc.StatusCode.NOT_FOUND, 0.25, T0 + 1.0),
        (
            "m/x",
            access_log.game_id_of(request(game_id='a"\\\n\u2028é')),
            grpc.StatusCode.INVALID_ARGUMENT,
            2e-6,
            T0 + 2e-6,
        ),
        ("m/y", "", grpc.StatusCode.UNAVAILABLE, 1.5, T0 + 1.9999996),  # rounds up to the next second
        ("m/y", GOOD_ID, grpc.StatusCode.INTERNAL, 0.0, T0 + 2.0000005),
        ("m/z", GOOD_ID, grpc.StatusCode.OK, 10.0, T0 + 86_399.999_999),
        ("m/z", GOOD_ID, grpc.StatusCode.OK, 0.000_000_4, T0 + 86_400.000_001),
    ]
    clock(monkeypatch, [wall for *_, wall in calls])
    for i, (method, game_id, code, latency, _wall) in enumerate(calls):
        access_log.record(method, game_id, code, 100.0 - latency, info=CallInfo(f"r-{i}", None))
    assert log_file.read_text() == "", "nothing written at the call"
    await batch_written()
    written = log_file.read_text().split("\n")  # (not splitlines: it also splits at the raw U+2028)
    assert written.pop() == ""
    assert written == [
        structlog_json(method, game_id, code, 100.0 - (100.0 - latency), wall, f"r-{i}", worker=3)
        for i, (method, game_id, code, latency, wall) in enumerate(calls)
    ]
    assert [json.loads(line)["timestamp"] for line in written][:4] == [
        "2027-01-15T08:00:00.123456Z",
        "2027-01-15T08:00:01Z",
        "2027-01-15T08:00:00.000002Z",
        "2027-01-15T08:00:02Z",
    ]
    assert (
        json.loads(written[2])["game_id"] == 'a"\\\n\u2028é'
        and json.loads(written[1])["game_id"] == "y" * 64 + "…"
    )


async def test_metrics_count_every_call_of_a_batch_by_method_and_code(
    log_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    method, other = f"t/{uuid.uuid4().hex}", f"t/{uuid.uuid4().hex}"  # new children: counts from 0
    codes = [grpc.StatusCode.OK] * 5 + [grpc.StatusCode.NOT_FOUND] * 3 + [grpc.StatusCode.UNAVAILABLE] * 2
    latencies = [0.0005, 0.003, 0.02, 0.3, 7.0] * 2
    clock(monkeypatch)
    for code, latency in zip(codes, latencies, strict=True):
        access_log.record(method, GOOD_ID, code, 100.0 - latency)
    access_log.record(other, GOOD_ID, grpc.StatusCode.NOT_FOUND, 100.0)
    assert value("accordion_rpc_total", method=method, code="OK") == 0, "not counted at the call"
    await batch_written()
    for m, code, n in (
        (method, "OK", 5),
        (method, "NOT_FOUND", 3),
        (method, "UNAVAILABLE", 2),
        (other, "NOT_FOUND", 1),
    ):
        assert value("accordion_rpc_total", method=m, code=code) == n
        assert value("accordion_rpc_errors_total", method=m, code=code) == (0 if code == "OK" else n)
    assert value("accordion_rpc_latency_seconds_count", method=method) == 10
    assert value("accordion_rpc_latency_seconds_sum", method=method) == pytest.approx(sum(latencies))
    for bound, n in (("0.001", 2), ("0.005", 4), ("0.025", 6), ("0.5", 8), ("5.0", 8), ("10.0", 10)):
        assert value("accordion_rpc_latency_seconds_bucket", method=method, le=bound) == n


@pytest.mark.parametrize("level", ["warning", "error"])  # the server faults' lines only; no line
async def test_metrics_are_counted_with_the_access_log_off(tmp_path: Path, level: str) -> None:
    with (tmp_path / "log").open("w") as stream:
        configure_logging(level, stream=stream)
        try:
            method = f"t/{uuid.uuid4().hex}"
            access_log.record(method, GOOD_ID, grpc.StatusCode.OK, time.perf_counter())
            access_log.record(method, GOOD_ID, grpc.StatusCode.INTERNAL, time.perf_counter())
            await batch_written()
        finally:
            access_log.configure_access_log(None)
            structlog.reset_defaults()
    logged = [(e["code"], e["level"]) for e in map(json.loads, (tmp_path / "log").read_text().splitlines())]
    assert logged == ([("INTERNAL", "warning")] if level == "warning" else [])
    assert value("accordion_rpc_total", method=method, code="OK") == 1
    assert value("accordion_rpc_errors_total", method=method, code="INTERNAL") == 1


async def test_flush_access_log_records_everything_pending(log_file: Path) -> None:
    method = f"t/{uuid.uuid4().hex}"
    for _ in range(50):
        access_log.record(method, GOOD_ID, grpc.StatusCode.OK, time.perf_counter())
    access_log.flush_access_log()  # what the server does when it stops: before the timer fires
    assert access_log._timer is None
    assert len(log_file.read_text().splitlines()) == 50
    assert value("accordion_rpc_total", method=method, code="OK") == 50
    access_log.flush_access_log()
    await asyncio.sleep(0.05)  # and the timer, cancelled, writes nothing twice
    assert len(log_file.read_text().splitlines()) == 50
    assert value("accordion_rpc_total", method=method, code="OK") == 50


def test_without_a_loop_each_call_is_recorded_at_once(log_file: Path) -> None:
    method = f"t/{uuid.uuid4().hex}"
    access_log.record(method, GOOD_ID, grpc.StatusCode.OK, time.perf_counter())
    assert [json.loads(line)["method"] for line in log_file.read_text().splitlines()] == [method]
    assert value("accordion_rpc_total", method=method, code="OK") == 1


async def test_a_server_writes_every_line_before_it_stops(
    log_file: Path,
    start_server: Callable[..., Any],
    connect: Callable[[str], Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(access_log.AccessLog, "FLUSH_AFTER", 60.0)  # only the server's stop writes them
    running = await start_server()
    client = connect(running.addr)
    ids = [(await client.new_game("accordion", seed=seed)).game.id for seed in range(5)]
    await running.server.stop(grace=0)
    logged = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [e["game_id"] for e in logged if e["event"] == "rpc"] == ids


async def test_a_large_batch_is_written_in_chunks_of_whole_lines(
    log_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[bytes] = []
    most = [1 << 20]  # bytes the fake write takes at a time

    def write(fd: int, data: memoryview) -> int:
        n = min(len(data), most[0])
        written.append(bytes(data[:n]))
        return n

    def batch() -> list[str]:
        methods = [f"m/{i}-{uuid.uuid4().hex}" for i in range(60)]
        for i, method in enumerate(methods):  # lines of ~200–330 bytes: ~16 KB
            access_log.record(method, "é" * (i % 65), grpc.StatusCode.OK, time.perf_counter())
        written.clear()
        with monkeypatch.context() as patch:
            patch.setattr(access_log, "os", SimpleNamespace(write=write))
            access_log.flush_access_log()
        return methods

    methods = batch()
    # One write per chunk: whole lines, at most CHUNK bytes, each as full as the next line allows.
    assert len(written) >= 4
    assert [json.loads(line)["method"] for line in b"".join(written).decode().split("\n")[:-1]] == methods
    for chunk, after in zip(written, [*written[1:], None], strict=True):
        assert len(chunk) <= access_log.AccessLog.CHUNK and chunk.endswith(b"\n")
        if after is not None:
            assert len(chunk) + after.index(b"\n") + 1 > access_log.AccessLog.CHUNK
    # A write that takes part of a chunk (a full pipe, a signal): the rest follows, nothing twice.
    most[0] = 1000
    methods = batch()
    assert max(map(len, written)) == 1000
    assert [json.loads(line)["method"] for line in b"".join(written).decode().split("\n")[:-1]] == methods
    assert log_file.read_text() == ""  # (all went through the fake write)


async def test_a_failing_flush_loses_nothing_else_and_the_next_batch_is_written(
    log_file: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    bad, good = f"t/{uuid.uuid4().hex}", f"t/{uuid.uuid4().hex}"
    real = call_metrics._metric_children

    def children(method: str, code: grpc.StatusCode) -> Any:
        if method == bad:
            raise OSError("no space left for the metrics file")
        return real(method, code)

    monkeypatch.setattr(call_metrics, "_metric_children", children)
    access_log.record(bad, GOOD_ID, grpc.StatusCode.OK, time.perf_counter())
    access_log.record(good, GOOD_ID, grpc.StatusCode.OK, time.perf_counter())
    await batch_written()  # the timer's flush: it must not raise into the loop
    assert "recording RPC metrics failed" in caplog.text
    assert value("accordion_rpc_total", method=good, code="OK") == 1, "the other method is counted"
    assert [json.loads(line)["method"] for line in log_file.read_text().splitlines()] == [bad, good]

    def broken(self: access_log.AccessLog, calls: Any) -> None:
        raise RuntimeError("a bug in the line")

    monkeypatch.setattr(access_log.AccessLog, "write", broken)
    access_log.record(good, GOOD_ID, grpc.StatusCode.OK, time.perf_counter())
    await batch_written()
    assert "writing access lines failed" in caplog.text
    assert value("accordion_rpc_total", method=good, code="OK") == 2, "the metrics are counted all the same"
    monkeypatch.undo()
    access_log.record(good, GOOD_ID, grpc.StatusCode.OK, time.perf_counter())
    await batch_written()  # a new timer was armed: the next batch goes out
    assert value("accordion_rpc_total", method=good, code="OK") == 3
    assert len(log_file.read_text().splitlines()) == 3
