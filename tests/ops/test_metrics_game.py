"""/metrics of a real server process after a game played to its end over gRPC: the game, move,
error-reason, store and process metrics, with the right counts; only /metrics answers."""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from pathlib import Path

import grpc
import pytest

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

from .helpers import http_get, play_to_end, running_server, scrape, value

APPLY = "accordion.v1.AccordionService/ApplyMove"


def _errors(addr: str) -> None:
    """Two refused calls: an unknown variant, an unknown game."""
    with grpc.insecure_channel(addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as unknown_variant:
            stub.NewGame(pb.NewGameRequest(variant="no-such-game"), timeout=10)
        assert unknown_variant.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as unknown_game:
            request = pb.GetGameRequest(game_id="A" * 22)
            stub.GetGame(request, metadata=(("authorization", "Bearer x"),), timeout=10)
        assert unknown_game.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_played_game_in_the_metrics_of_one_process(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        played = play_to_end(server.addr)
        _errors(server.addr)
        # The RPC counts are recorded in batches (within ~5 ms of each call): scrape until they are in.
        deadline = time.monotonic() + 30  # polled: a loaded machine may take seconds, never a sleep
        while True:
            samples = scrape(server.metrics_port)
            recorded = value(samples, "accordion_rpc_total", method=APPLY, code="OK") == played.moves
            if (
                recorded and value(samples, "accordion_rpc_error_reasons_total") >= 2
            ) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    assert played.moves > 10 and len(played.endings) == 2
    assert value(samples, "accordion_games_created_total", variant="accordion") == 1
    assert value(samples, "accordion_moves_total", variant="accordion") == played.moves
    assert value(samples, "accordion_undos_total", variant="accordion") == played.undos == 1
    for status in ("WON", "LOST"):
        finished = value(samples, "accordion_games_finished_total", variant="accordion", status=status)
        reopened = value(samples, "accordion_games_reopened_total", variant="accordion", status=status)
        assert finished == Counter(played.endings)[status]
        assert reopened == Counter(played.reopened)[status]
    assert value(samples, "accordion_rpc_total", method=APPLY, code="OK") == played.moves
    assert value(samples, "accordion_rpc_error_reasons_total", reason="UNKNOWN_VARIANT") == 1
    assert value(samples, "accordion_rpc_error_reasons_total", reason="GAME_NOT_FOUND") == 1
    assert value(samples, "accordion_rpc_error_reasons_total") == 2
    # The memory store's calls never wait: not timed. Its size and the process are read at scrape.
    assert value(samples, "accordion_store_latency_seconds_count") == 0
    assert value(samples, "accordion_store_call_errors_total", operation="load", kind="not_found") == 1
    assert value(samples, "accordion_memory_store_games") == 1
    assert value(samples, "process_cpu_seconds_total") > 0
    assert value(samples, "process_resident_memory_bytes") > 10_000_000


def test_only_the_metrics_path_answers(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        for path in ("/", "/metric", "/metrics/x", "/favicon.ico", "/healthz"):
            status, body = http_get(server.metrics_port, path)
            assert status == 404, (path, status, body[:200])
            assert "accordion_" not in body
        status, body = http_get(server.metrics_port, "/metrics")
        assert status == 200 and "process_cpu_seconds_total" in body
        # wsgiref's plain line per request never reaches the JSON log
        assert not [ln for ln in server.stderr_lines() if "GET /" in ln]


def test_redis_workers_time_the_store_and_show_each_process(tmp_path: Path, redis_url: str) -> None:
    with running_server(tmp_path, "--redis-url", redis_url, "--workers", "2") as server:
        played = play_to_end(server.addr)
        samples = scrape(server.metrics_port)
        assert http_get(server.metrics_port, "/")[0] == 404  # the supervisor's endpoint too
    assert value(samples, "accordion_games_created_total", variant="accordion") == 1
    assert value(samples, "accordion_moves_total", variant="accordion") == played.moves
    writes = played.moves + played.undos
    # every move is one compare-and-set (the first load may come from the cache or not)
    assert value(samples, "accordion_store_latency_seconds_count", operation="compare_and_set") == writes
    assert value(samples, "accordion_store_latency_seconds_count", operation="create") == 1
    assert value(samples, "accordion_store_latency_seconds_sum", operation="compare_and_set") > 0
    cpu = [dict(labels) for (name, labels) in samples if name == "process_cpu_seconds_total"]
    workers = {labels.get("worker") for labels in cpu}
    assert workers == {"supervisor", "0", "1"}
    assert value(samples, "accordion_memory_store_games") == 0  # no memory store here


def test_refusals_before_the_handler_are_counted_by_reason(tmp_path: Path) -> None:
    """API-key refusals come from the per-method wrapper, before any handler: counted too."""
    key = "ops-test-key"
    digest = hashlib.sha256(key.encode()).hexdigest()
    keys = {"keys": [{"name": "ops", "sha256": digest, "rate": 1, "burst": 1}]}
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps(keys))
    with running_server(tmp_path, "--api-keys-file", str(keys_file)) as server:
        with grpc.insecure_channel(server.addr) as channel:
            stub = pb_grpc.AccordionServiceStub(channel)
            for metadata in ((), (("x-api-key", "wrong"),)):
                with pytest.raises(grpc.RpcError) as refused:
                    stub.ListVariants(pb.ListVariantsRequest(), metadata=metadata, timeout=10)
                assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            codes = []
            for _ in range(3):  # burst 1 at 1/s: the second and third are over the limit
                try:
                    stub.ListVariants(pb.ListVariantsRequest(), metadata=(("x-api-key", key),), timeout=10)
                    codes.append(grpc.StatusCode.OK)
                except grpc.RpcError as exc:
                    codes.append(exc.code())
        time.sleep(0.3)
        samples = scrape(server.metrics_port)
    assert value(samples, "accordion_rpc_error_reasons_total", reason="API_KEY_MISSING") == 1
    assert value(samples, "accordion_rpc_error_reasons_total", reason="API_KEY_INVALID") == 1
    limited = codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED)
    assert limited >= 1
    assert value(samples, "accordion_rpc_error_reasons_total", reason="RATE_LIMITED") == limited
    assert value(samples, "accordion_rate_limited_total", key_name="ops") == limited
