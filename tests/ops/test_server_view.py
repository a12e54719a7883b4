"""The server's own view matches the client's (issue 34), against real server processes over
real channels: refusals past capacity counted in /metrics and in the access log with the counts
the client saw, the request id the client got back in the log, a WatchGame its client ended
counted apart from errors, queue time and event-loop lag under a stopped (blocked) loop, and
channelz on the admin port."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_channelz.v1 import channelz_pb2, channelz_pb2_grpc

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from redis_server import free_port

from .helpers import Samples, running_server, scrape, value

SERVICE = "accordion.v1.AccordionService"
GET = f"{SERVICE}/GetGame"
WATCH = f"{SERVICE}/WatchGame"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def access_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def eventually(what: str, check: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        time.sleep(0.05)


def auth(game: pb.NewGameResponse) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {game.token}"),)


def new_game(addr: str) -> pb.NewGameResponse:
    with grpc.insecure_channel(addr) as channel:
        reply: pb.NewGameResponse = pb_grpc.AccordionServiceStub(channel).NewGame(
            pb.NewGameRequest(variant="accordion", seed=7), timeout=30
        )
        return reply


async def _get_burst(addr: str, game: pb.NewGameResponse, calls: int) -> list[tuple[grpc.StatusCode, str]]:
    """``calls`` GetGame at once on one connection: each one's code and the x-request-id it got back."""
    async with grpc.aio.insecure_channel(addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)

        async def one() -> tuple[grpc.StatusCode, str]:
            call = stub.GetGame(pb.GetGameRequest(game_id=game.game.id), timeout=60, metadata=auth(game))
            try:
                await call
            except grpc.aio.AioRpcError as exc:
                return exc.code(), dict(exc.trailing_metadata() or ()).get("x-request-id", "")
            return grpc.StatusCode.OK, dict(await call.trailing_metadata() or ()).get("x-request-id", "")

        return list(await asyncio.gather(*(one() for _ in range(calls))))


def test_refusals_past_capacity_are_counted_as_the_client_saw_them(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    # 3 calls at once per client; OK lines 1 in 1000 (errors are never sampled out).
    args = ("--max-rpcs-per-client", "3", "--access-log", str(log), "--access-log-sample", "1000")
    with running_server(tmp_path, *args) as server:
        game = new_game(server.addr)
        with grpc.insecure_channel(server.addr) as channel:
            # Three watches hold the client's three calls; then a burst past them. (40 at once:
            # under the 100 HTTP/2 streams a connection may open; beyond them grpc core resets
            # streams itself, unseen by Python and by channelz: docs/operations.md)
            stub = pb_grpc.AccordionServiceStub(channel)
            watches = [
                stub.WatchGame(pb.WatchGameRequest(game_id=game.game.id), metadata=auth(game))
                for _ in range(3)
            ]
            eventually(
                "three watches in flight",
                lambda: value(scrape(server.metrics_port), "accordion_rpc_in_flight", method=WATCH) == 3,
            )
            results = asyncio.run(_get_burst(server.addr, game, 40))
            for watch in watches:
                watch.cancel()
        refused = [rid for code, rid in results if code == grpc.StatusCode.RESOURCE_EXHAUSTED]
        assert len(refused) == 40, results
        assert all(refused) and len(set(refused)) == len(refused), "every refusal carries its own request id"

        def counted() -> Samples:
            return scrape(server.metrics_port)

        eventually(
            "the refusals in /metrics",
            lambda: value(counted(), "accordion_rpc_refused_total", method=GET) >= len(refused),
        )
        samples = counted()
    assert value(
        samples, "accordion_rpc_refused_total", method=GET, layer="client_limit", reason="CAPACITY_EXCEEDED"
    ) == len(refused)
    assert value(
        samples,
        "accordion_rpc_errors_total",
        method=GET,
        code="RESOURCE_EXHAUSTED",
        reason="CAPACITY_EXCEEDED",
    ) == len(refused)
    # Refused before their handler: arrival → reply is timed, queueing is not (no handler start).
    assert value(samples, "accordion_rpc_server_seconds_count", method=GET, code="RESOURCE_EXHAUSTED") == len(
        refused
    )
    assert value(samples, "accordion_rpc_queued_seconds_count", method=GET) == 0
    lines = [ln for ln in access_lines(log) if ln.get("method") == GET]
    refused_lines = [ln for ln in lines if ln["outcome"] == "refused"]
    assert sorted(ln["request_id"] for ln in refused_lines) == sorted(refused)
    for line in refused_lines:
        assert line["code"] == "RESOURCE_EXHAUSTED" and line["reason"] == "CAPACITY_EXCEEDED"
        assert line["layer"] == "client_limit" and line["queued_ms"] is None and line["caller"] == "127.0.0.1"
    watch_lines = [ln for ln in access_lines(log) if ln.get("method") == WATCH]
    assert watch_lines == [], "the watches their client cancelled are sampled like OK calls (1 in 1000)"


def test_the_access_line_has_the_request_id_the_client_got_and_its_trace_id(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    with running_server(tmp_path, "--access-log", str(log)) as server:
        traceparent = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
        with grpc.insecure_channel(server.addr) as channel:
            stub = pb_grpc.AccordionServiceStub(channel)
            reply, call = stub.NewGame.with_call(
                pb.NewGameRequest(variant="accordion", seed=7),
                metadata=(("x-request-id", "client-chosen-1"), ("traceparent", traceparent)),
                timeout=30,
            )
            mine = dict(call.trailing_metadata())["x-request-id"]
            _, call = stub.GetGame.with_call(
                pb.GetGameRequest(game_id=reply.game.id), timeout=30, metadata=auth(reply)
            )
            given = dict(call.trailing_metadata())["x-request-id"]
        eventually("two access lines", lambda: len(access_lines(log)) >= 2)
        stderr = "\n".join(server.stderr_lines())
    new_line, get_line = access_lines(log)[:2]
    assert mine == "client-chosen-1" == new_line["request_id"]
    assert new_line["trace_id"] == TRACE_ID and new_line["variant"] == "accordion"
    assert new_line["bytes_in"] > 0 and new_line["bytes_out"] > 0 and new_line["outcome"] == "ok"
    assert new_line["queued_ms"] >= 0 and new_line["served_ms"] >= 0
    assert given and given == get_line["request_id"] and get_line["trace_id"] is None
    assert get_line["core_wait_ms"] >= 0, "grpc core's count had been read by the second call"
    assert reply.token not in log.read_text() and '"event": "rpc"' not in stderr, (
        "access lines go to the file"
    )


def test_a_watch_its_client_ended_is_no_error(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    with running_server(tmp_path, "--access-log", str(log)) as server:
        game = new_game(server.addr)
        with grpc.insecure_channel(server.addr) as channel:
            stub = pb_grpc.AccordionServiceStub(channel)
            stream = stub.WatchGame(pb.WatchGameRequest(game_id=game.game.id), metadata=auth(game))
            eventually(
                "the watch in flight",
                lambda: value(scrape(server.metrics_port), "accordion_rpc_in_flight", method=WATCH) == 1,
            )
            stream.cancel()
            with pytest.raises(grpc.RpcError) as ended:
                for _ in stub.WatchGame(
                    pb.WatchGameRequest(game_id=game.game.id), metadata=auth(game), timeout=1
                ):
                    pass
            assert ended.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        eventually(
            "both watches recorded",
            lambda: value(scrape(server.metrics_port), "accordion_rpc_client_ended_total", method=WATCH) == 2,
        )
        samples = scrape(server.metrics_port)
    assert value(samples, "accordion_rpc_client_ended_total", method=WATCH, outcome="cancelled") == 1
    assert value(samples, "accordion_rpc_client_ended_total", method=WATCH, outcome="deadline") == 1
    assert value(samples, "accordion_rpc_errors_total") == 0, "no error of any method"
    outcomes = sorted(ln["outcome"] for ln in access_lines(log) if ln["method"] == WATCH)
    assert outcomes == ["client_cancelled", "client_deadline"]


def test_queue_time_and_loop_lag_under_a_stopped_loop(tmp_path: Path) -> None:
    """SIGSTOP holds the whole server (its event loop included) while calls arrive; after
    SIGCONT the loop is late by at least the stop, and the calls wait in its queue."""
    with running_server(tmp_path) as server:
        game = new_game(server.addr)
        eventually(
            "a first lag sample",
            lambda: value(scrape(server.metrics_port), "accordion_event_loop_lag_seconds_count") > 0,
        )
        pid = server.process.proc.pid

        async def stopped_burst() -> list[grpc.StatusCode]:
            async with grpc.aio.insecure_channel(server.addr) as channel:
                stub = pb_grpc.AccordionServiceStub(channel)
                await stub.GetGame(
                    pb.GetGameRequest(game_id=game.game.id), timeout=60, metadata=auth(game)
                )  # connected
                os.kill(pid, signal.SIGSTOP)
                try:
                    calls = [
                        stub.GetGame(pb.GetGameRequest(game_id=game.game.id), timeout=60, metadata=auth(game))
                        for _ in range(100)
                    ]
                    waiting = asyncio.gather(*calls, return_exceptions=True)
                    await asyncio.sleep(1.5)  # the calls are sent, into the stopped process's socket
                finally:
                    os.kill(pid, signal.SIGCONT)
                replies = await waiting
            return [r.code() if isinstance(r, grpc.aio.AioRpcError) else grpc.StatusCode.OK for r in replies]

        codes = asyncio.run(stopped_burst())
        assert set(codes) <= {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED}
        eventually(
            "the burst recorded",
            lambda: (
                value(scrape(server.metrics_port), "accordion_rpc_server_seconds_count", method=GET) == 101
            ),
        )
        eventually(
            "a lag sample after the stop",
            lambda: (
                value(scrape(server.metrics_port), "accordion_event_loop_lag_seconds_bucket", le="+Inf")
                > value(scrape(server.metrics_port), "accordion_event_loop_lag_seconds_bucket", le="1.0")
            ),
        )
        samples = scrape(server.metrics_port)
    ok = codes.count(grpc.StatusCode.OK) + 1
    assert value(samples, "accordion_rpc_queued_seconds_count", method=GET) == ok
    assert value(samples, "accordion_rpc_queued_seconds_sum", method=GET) > 0
    # every call has its lower bound of the wait in grpc core before arrival (channelz's count)
    assert value(samples, "accordion_rpc_core_wait_seconds_count", method=GET) == 101
    # the stop (1.5 s) shows as at least one lag sample above 1 s
    assert value(samples, "accordion_event_loop_lag_seconds_bucket", le="+Inf") > value(
        samples, "accordion_event_loop_lag_seconds_bucket", le="1.0"
    )


def test_channelz_on_the_admin_port_counts_the_calls_grpc_core_saw(tmp_path: Path) -> None:
    admin = free_port()
    with running_server(tmp_path, "--admin-port", str(admin)) as server:
        assert f"Admin (channelz, health; operators only): 127.0.0.1:{admin}" in server.stdout_lines()
        new_game(server.addr)
        with grpc.insecure_channel(f"127.0.0.1:{admin}") as channel:
            servers = channelz_pb2_grpc.ChannelzStub(channel).GetServers(
                channelz_pb2.GetServersRequest(), timeout=30
            )
        assert max(s.data.calls_started for s in servers.server) >= 1
        eventually(
            "channelz's counts in /metrics",
            lambda: (
                value(scrape(server.metrics_port), "accordion_grpc_server_calls_total", outcome="started")
                >= 2
            ),
        )
        # every call core started on the main port was seen by Python (the admin port's
        # GetServers is not one of them): none waiting
        samples = scrape(server.metrics_port)
        assert value(samples, "accordion_grpc_calls_waiting") == 0
        assert value(samples, "accordion_grpc_server_calls_total", outcome="started") >= value(
            samples, "accordion_rpc_total"
        )


def test_a_burst_past_the_stream_cap_is_never_reset_unseen(tmp_path: Path) -> None:
    """300 calls at once on one new connection (the cap is 100 streams): grpc core's overload
    protection reset about half of them (REFUSED_STREAM, the client's UNAVAILABLE) and the server
    counted none; with it off (listening.server_options) they wait, and every call the client saw
    end is one the server counted."""
    with running_server(tmp_path) as server:
        game = new_game(server.addr)
        results = asyncio.run(_get_burst(server.addr, game, 300))
        codes = [code for code, _ in results]
        assert grpc.StatusCode.UNAVAILABLE not in codes, f"{codes.count(grpc.StatusCode.UNAVAILABLE)} reset"
        eventually(
            "the burst recorded",
            lambda: value(scrape(server.metrics_port), "accordion_rpc_total", method=GET) == 300,
        )
        samples = scrape(server.metrics_port)
    refused = codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED)  # (--max-rpcs-per-client 250)
    assert value(samples, "accordion_rpc_total", method=GET, code="OK") == codes.count(grpc.StatusCode.OK)
    assert value(samples, "accordion_rpc_refused_total", method=GET) == refused
