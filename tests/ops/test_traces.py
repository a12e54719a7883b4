"""Traces (issue 34): a real server process exports its spans over OTLP/gRPC to a receiver this
test runs (opentelemetry-proto's TraceService on a real gRPC server); the Python client's
traceparent comes back as the server span's trace id and parent, store calls and solver runs
are its children, an error carries its code and reason, and no span names a token."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2

from accordion_client import AccordionClient, GameNotFound, new_request_id, trace_context
from accordion_client.tracecontext import new_traceparent, parse_traceparent
from redis_server import RedisServer
from server_launcher import clean_env, launch

WAIT = 60.0  # seconds for spans to arrive (batched every 100 ms; a loaded machine is slow)


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP trace receiver: keeps every span it is sent, with its resource's attributes."""

    def __init__(self) -> None:
        self.spans: list[tuple[dict[str, Any], trace_pb2.Span]] = []
        self.lock = threading.Lock()

    def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 (the service's name)
        with self.lock:
            for resource_spans in request.resource_spans:
                resource = _attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    self.spans += [(resource, span) for span in scope_spans.spans]
        return trace_service_pb2.ExportTraceServiceResponse()

    def of_trace(self, trace_id: str) -> list[trace_pb2.Span]:
        with self.lock:
            return [span for _, span in self.spans if span.trace_id.hex() == trace_id]

    def wait_for(self, trace_id: str, *names: str) -> list[trace_pb2.Span]:
        """The trace's spans once one named each of ``names`` is among them (with --workers each
        process exports its own spans, in its own time: the last call's may come first)."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            found = self.of_trace(trace_id)
            if set(names) <= {span.name for span in found}:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no span {names!r} in trace {trace_id} within {WAIT:g} s: {self.spans}")


def _attributes(pairs: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for pair in pairs:
        kind = pair.value.WhichOneof("value")
        found[pair.key] = getattr(pair.value, kind) if kind else None
    return found


@contextmanager
def receiver() -> Iterator[tuple[Receiver, int]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    found = Receiver()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(found, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield found, port
    finally:
        server.stop(0)


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_a_client_traceparent_comes_back_in_the_exported_spans(tmp_path: Path, store: str) -> None:
    """The memory store in one process; Redis under two worker processes (each its own tracer)."""
    with contextlib.ExitStack() as stack:
        spans, port = stack.enter_context(receiver())
        flags = ["--otlp-endpoint", f"http://127.0.0.1:{port}"]
        if store == "redis":
            redis = RedisServer().start()
            stack.callback(redis.stop)
            flags += ["--redis-url", redis.url, "--workers", "2"]
        server = launch(tmp_path, *flags, env={"OTEL_BSP_SCHEDULE_DELAY": "100"})
        try:
            _check(spans, server.addr)
        finally:
            server.terminate(30)  # (stopping exports what is left)
            server.close()
        # Outside any trace_context, each call is a trace of its own.
        roots = [s for _, s in spans.spans if s.kind == trace_pb2.Span.SPAN_KIND_SERVER]
        assert len({s.trace_id for s in roots}) >= 2


def _check(spans: Receiver, addr: str) -> None:
    parent = new_traceparent()
    parsed = parse_traceparent(parent)
    assert parsed is not None
    trace_id, parent_id, _ = parsed
    # A probe's health check: no span (one would end first, so be exported before the trace's).
    with grpc.insecure_channel(addr) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    idempotency_key = new_request_id()
    other = AccordionClient(addr, metadata=[("x-request-id", "trace-test-1")])  # the access line's id
    unsampled = new_traceparent(sampled=False)
    with AccordionClient(addr) as client, other:
        with trace_context(unsampled):  # the caller did not sample it: the server records nothing
            dealt = client.new_game("accordion", seed=8)
            dealt.play(dealt.legal[0])
        with trace_context(parent):
            game = client.new_game("accordion", seed=7, request_id=idempotency_key)
            game.play(game.legal[0])
            game.hint()
            with pytest.raises(GameNotFound):
                client.open_game("A" * 22, game.token)
            for _event in game.watch():  # the stored move, then the client ends the stream
                break
            other.open_game(game.id, game.token).score()
        client.list_variants()  # (a trace of its own)
        secrets = (game.token, game.watch_token, idempotency_key)

    found = spans.wait_for(
        trace_id, "accordion.v1.AccordionService/WatchGame", "accordion.v1.AccordionService/Score"
    )
    unsampled_id = unsampled.split("-")[1]  # (its spans, were there any, ended before these)
    assert spans.of_trace(unsampled_id) == []
    by_name: dict[str, list[trace_pb2.Span]] = {}
    for span in found:
        by_name.setdefault(span.name, []).append(span)
    calls = [s for s in found if s.kind == trace_pb2.Span.SPAN_KIND_SERVER]
    # Every RPC of the block: a server span of the client's trace, its parent the client's span.
    called = {s.name.rpartition("/")[2] for s in calls}
    assert called >= {"NewGame", "ApplyMove", "Hint", "GetGame", "WatchGame"}
    assert not any(s.name.startswith("grpc.health") for _, s in spans.spans)  # probes: no spans
    for call in calls:
        assert call.parent_span_id.hex() == parent_id, call.name
    new_game = by_name["accordion.v1.AccordionService/NewGame"][0]
    attributes = _attributes(new_game.attributes)
    assert attributes["rpc.system"] == "grpc" and attributes["rpc.method"] == "NewGame"
    assert attributes["rpc.grpc.code"] == "OK" and attributes["accordion.variant"] == "accordion"
    assert attributes["accordion.game_id"] == game.id
    # The server's request id (x-request-id, made up when the client sent none: the access
    # line's), never the request's idempotency key (a secret: a NewGame retried with it gets the token).
    assert attributes["accordion.request_id"] not in ("", idempotency_key)
    assert (
        _attributes(by_name["accordion.v1.AccordionService/Score"][0].attributes)["accordion.request_id"]
        == "trace-test-1"
    )  # the caller's x-request-id
    # The store's calls and the solver's run are children of their RPC's span.
    apply = by_name["accordion.v1.AccordionService/ApplyMove"][0]
    children = [s.name for s in found if s.parent_span_id == apply.span_id]
    assert any(name.startswith("store ") for name in children), children
    hint = by_name["accordion.v1.AccordionService/Hint"][0]
    assert any(s.name.startswith("solver") for s in found if s.parent_span_id == hint.span_id)
    # A stream its client ended: its span ends too, CANCELLED, not an error.
    watch = by_name["accordion.v1.AccordionService/WatchGame"][0]
    assert _attributes(watch.attributes)["rpc.grpc.code"] == "CANCELLED"
    assert watch.status.code != trace_pb2.Status.STATUS_CODE_ERROR
    # An error: its code and the reason the client got.
    missing = _attributes(by_name["accordion.v1.AccordionService/GetGame"][0].attributes)
    assert missing["rpc.grpc.code"] == "NOT_FOUND" and missing["accordion.reason"] == "GAME_NOT_FOUND"
    # No token in any span or resource attribute, nor in a span's name.
    for resource, span in spans.spans:
        values = [str(v) for v in (*_attributes(span.attributes).values(), *resource.values(), span.name)]
        assert not any(secret in value for secret in secrets for value in values), span.name
    assert spans.spans[0][0]["service.name"] == "accordion"


def test_off_by_default_no_tracing_code_is_loaded() -> None:
    """No endpoint: a server is built without our tracing module, OpenTelemetry's trace SDK or
    its exporter (no cost when off); with one, its tracer is made. (redis-py 8 imports
    OpenTelemetry's metrics API and SDK by itself when they are installed: not checked.)"""
    program = textwrap.dedent("""
        import sys
        from accordion.config import parse_args
        from accordion.server import AccordionServer
        ours = ("accordion.api.tracing", "opentelemetry.sdk.trace", "opentelemetry.exporter")
        off = AccordionServer(parse_args(["--listen", "127.0.0.1:0"], env={}))
        print(off.tracing is None, any(m.startswith(ours) for m in sys.modules))
        flags = ["--listen", "127.0.0.1:0", "--otlp-endpoint", "http://127.0.0.1:9"]
        on = AccordionServer(parse_args(flags, env={}))
        print(on.tracing is not None, all(any(m.startswith(o) for m in sys.modules) for o in ours))
        on.tracing.shutdown()
    """)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, env=clean_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["True False", "True True"], done.stdout + done.stderr
