"""The per-call JSON line: the same JSON structlog printed, an id that is no game id cut short,
no token; only the server's faults at level warning; a request refused by grpc's core logged as
what the client got. The batches (written directly, not through structlog's chain, FLUSH_AFTER
seconds later) and their metrics are in test_access_log_batches.py."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
import structlog

from accordion.api import access_log
from accordion.api.callinfo import CallInfo
from accordion.server import configure_logging
from accordion.v1 import accordion_pb2 as pb

from .access_log_helpers import eventually, value
from .helpers import Client, expect_error


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure_logging("info", stream=stream, fields={"worker": 3})
    try:
        yield stream
    finally:
        access_log.configure_access_log(None)
        structlog.reset_defaults()


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    access_log.flush_access_log()
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def rpc_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [ln for ln in lines(stream) if ln["event"] == "rpc"]


# The fields issue 34 added (docs/operations.md): joinable ids, who, what, why, size and time.
CALL_FIELDS = [
    "request_id",
    "trace_id",
    "caller",
    "variant",
    "reason",
    "outcome",
    "layer",
    "bytes_in",
    "bytes_out",
    "queued_ms",
    "served_ms",
    "core_wait_ms",
]


async def test_access_lines_are_structlogs_json_and_cut_long_ids(
    log_stream: io.StringIO, start_server: Callable[..., Any], connect: Callable[[str], Client]
) -> None:
    client = connect((await start_server()).addr)
    new = await client.new_game("accordion", seed=7)
    await client.apply(new.game.id, new.game.legal_moves[0].notation)
    huge = "x" * 60_000
    await expect_error(
        client.call("GetGame", pb.GetGameRequest(game_id=huge)), grpc.StatusCode.INVALID_ARGUMENT
    )
    await expect_error(
        client.call("GetGame", pb.GetGameRequest(game_id='a"\\\n')), grpc.StatusCode.INVALID_ARGUMENT
    )
    await eventually("the four calls' lines", lambda: len(rpc_lines(log_stream)) >= 4)
    rpcs = rpc_lines(log_stream)
    assert [(r["method"].rsplit("/", 1)[1], r["code"]) for r in rpcs] == [
        ("NewGame", "OK"),
        ("ApplyMove", "OK"),
        ("GetGame", "INVALID_ARGUMENT"),
        ("GetGame", "INVALID_ARGUMENT"),
    ]
    for r in rpcs:
        assert list(r) == [
            "method",
            "game_id",
            "code",
            "latency_ms",
            *CALL_FIELDS,
            "event",
            "worker",
            "level",
            "timestamp",
        ]
        assert r["level"] == "info" and r["worker"] == 3 and r["timestamp"].endswith("Z")
    assert rpcs[0]["game_id"] == rpcs[1]["game_id"] == new.game.id
    assert rpcs[2]["game_id"] == "x" * access_log.MAX_LOGGED_ID + "…"
    assert rpcs[3]["game_id"] == 'a"\\\n'  # escaped, and read back as it was
    assert new.token not in log_stream.getvalue()
    # The same line as structlog's own renderer writes for the same event (keys, order, format).
    structlog_line = io.StringIO()
    configure_logging("info", stream=structlog_line, fields={"worker": 3})
    access_log.configure_access_log(None)  # through structlog this time
    access_log.record(
        "m/x", "abcdefghijklmnopqrstuv", grpc.StatusCode.OK, 0.0, info=CallInfo("r-1", "ab" * 16)
    )
    ours = io.StringIO()
    access_log.configure_access_log(ours, 20, {"worker": 3})
    access_log.record(
        "m/x", "abcdefghijklmnopqrstuv", grpc.StatusCode.OK, 0.0, info=CallInfo("r-1", "ab" * 16)
    )
    access_log.flush_access_log()
    theirs, mine = json.loads(structlog_line.getvalue()), json.loads(ours.getvalue())
    assert list(theirs) == list(mine)
    assert {k: v for k, v in theirs.items() if k not in ("timestamp", "latency_ms")} == {
        k: v for k, v in mine.items() if k not in ("timestamp", "latency_ms")
    }


async def test_warnings_only_writes_server_faults(
    start_server: Callable[..., Any], connect: Callable[[str], Client]
) -> None:
    stream = io.StringIO()
    configure_logging("warning", stream=stream)
    try:
        client = connect((await start_server()).addr)
        await client.new_game("accordion", seed=7)
        access_log.record("m/x", "", grpc.StatusCode.UNAVAILABLE, 0.0)
        found = lines(stream)
    finally:
        access_log.configure_access_log(None)
        structlog.reset_defaults()
    assert [(r["method"], r["code"], r["level"], r["game_id"]) for r in found] == [
        ("m/x", "UNAVAILABLE", "warning", None)
    ]


def test_a_new_game_reply_sent_as_bytes_logs_its_game_id() -> None:
    from accordion import engine, sessions
    from accordion.api import wire

    game = engine.new_game("accordion", seed=3)
    reply = wire.new_game_reply(sessions.Dealt("abcdefghijklmnopqrstuv", "the-token", game, 0))
    assert access_log.game_id_of(pb.NewGameRequest(), reply) == "abcdefghijklmnopqrstuv"
    # Another layout (a Move first, a cut reply, nothing) names no game, and never fails.
    for other in (wire.encode_move(game.legal_moves()[0], "x").SerializeToString(), reply[:3], b""):
        assert access_log.game_id_of(pb.NewGameRequest(), other) == ""


async def test_a_request_over_64_kib_is_logged_and_counted_as_the_resource_exhausted_the_client_got(
    log_stream: io.StringIO, start_server: Callable[..., Any], connect: Callable[[str], Client]
) -> None:
    """grpc's core refuses the message (over the 64 KiB receive limit) and answers the client
    itself; the handler only sees the request stream end. The line and the metric must say
    what the client got (issue 28 item 7), and a call that truly ends without a message is
    still INVALID_ARGUMENT (the client gets that one from the handler)."""
    method = "accordion.v1.AccordionService/NewGame"
    before = {
        c: value("accordion_rpc_total", method=method, code=c)
        for c in ("RESOURCE_EXHAUSTED", "INVALID_ARGUMENT")
    }
    client = connect((await start_server()).addr)
    big = pb.NewGameRequest(variant="accordion", seed=1, options={"note": "x" * (65 * 1024)})
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.call("NewGame", big)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # the core's own answer
    empty = client.channel.stream_unary(f"/{method}")  # headers and half-close, no message
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await empty(_no_messages(), timeout=5)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # (the client has its status a moment before the wrapper records the call)
    await eventually("both lines", lambda: len([ln for ln in lines(log_stream) if ln["event"] == "rpc"]) >= 2)
    rpcs = [(ln["method"], ln["code"]) for ln in lines(log_stream) if ln["event"] == "rpc"]
    assert rpcs == [(method, "RESOURCE_EXHAUSTED"), (method, "INVALID_ARGUMENT")]
    assert (
        value("accordion_rpc_total", method=method, code="RESOURCE_EXHAUSTED")
        == before["RESOURCE_EXHAUSTED"] + 1
    )
    assert value("accordion_rpc_errors_total", method=method, code="RESOURCE_EXHAUSTED") >= 1
    assert (
        value("accordion_rpc_total", method=method, code="INVALID_ARGUMENT") == before["INVALID_ARGUMENT"] + 1
    )


async def _no_messages() -> Any:
    return
    yield  # an async generator that sends nothing
