"""The per-call JSON line: written directly (not through structlog's chain), batched, still
the same JSON structlog printed; an id that is no game id is cut short; no token."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
import structlog

from accordion.api import interceptors
from accordion.server import configure_logging
from accordion.v1 import accordion_pb2 as pb

from .helpers import Client, expect_error


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure_logging("info", stream=stream, fields={"worker": 3})
    try:
        yield stream
    finally:
        interceptors.configure_access_log(None)
        structlog.reset_defaults()


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    interceptors.flush_access_log()
    return [json.loads(line) for line in stream.getvalue().splitlines()]


async def test_access_lines_are_structlogs_json_and_cut_long_ids(
    log_stream: io.StringIO, start_server: Callable[..., Any], connect: Callable[[str], Client]
) -> None:
    client = connect((await start_server()).addr)
    new = await client.new_game("accordion", seed=7)
    await client.apply(new.game.id, new.game.legal_moves[0].notation)
    huge = "x" * 60_000
    await expect_error(client.call("GetGame", pb.GetGameRequest(game_id=huge)), grpc.StatusCode.INVALID_ARGUMENT)
    await expect_error(client.call("GetGame", pb.GetGameRequest(game_id='a"\\\n')), grpc.StatusCode.INVALID_ARGUMENT)
    rpcs = [ln for ln in lines(log_stream) if ln["event"] == "rpc"]
    assert [(r["method"].rsplit("/", 1)[1], r["code"]) for r in rpcs] == [
        ("NewGame", "OK"), ("ApplyMove", "OK"), ("GetGame", "INVALID_ARGUMENT"), ("GetGame", "INVALID_ARGUMENT"),
    ]
    for r in rpcs:
        assert list(r) == ["method", "game_id", "code", "latency_ms", "event", "worker", "level", "timestamp"]
        assert r["level"] == "info" and r["worker"] == 3 and r["timestamp"].endswith("Z")
    assert rpcs[0]["game_id"] == rpcs[1]["game_id"] == new.game.id
    assert rpcs[2]["game_id"] == "x" * interceptors.MAX_LOGGED_ID + "…"
    assert rpcs[3]["game_id"] == 'a"\\\n'  # escaped, and read back as it was
    assert new.token not in log_stream.getvalue()
    # The same line as structlog's own renderer writes for the same event (keys, order, format).
    structlog_line = io.StringIO()
    configure_logging("info", stream=structlog_line, fields={"worker": 3})
    interceptors.configure_access_log(None)  # through structlog this time
    interceptors._record("m/x", "abcdefghijklmnopqrstuv", grpc.StatusCode.OK, 0.0)
    ours = io.StringIO()
    interceptors.configure_access_log(ours, 20, {"worker": 3})
    interceptors._record("m/x", "abcdefghijklmnopqrstuv", grpc.StatusCode.OK, 0.0)
    interceptors.flush_access_log()
    theirs, mine = json.loads(structlog_line.getvalue()), json.loads(ours.getvalue())
    assert list(theirs) == list(mine)
    assert {k: v for k, v in theirs.items() if k not in ("timestamp", "latency_ms")} == {
        k: v for k, v in mine.items() if k not in ("timestamp", "latency_ms")
    }


async def test_warnings_only_writes_server_faults(start_server: Callable[..., Any], connect: Callable[[str], Client]) -> None:
    stream = io.StringIO()
    configure_logging("warning", stream=stream)
    try:
        client = connect((await start_server()).addr)
        await client.new_game("accordion", seed=7)
        interceptors._record("m/x", "", grpc.StatusCode.UNAVAILABLE, 0.0)
        found = lines(stream)
    finally:
        interceptors.configure_access_log(None)
        structlog.reset_defaults()
    assert [(r["method"], r["code"], r["level"], r["game_id"]) for r in found] == [
        ("m/x", "UNAVAILABLE", "warning", None)
    ]
