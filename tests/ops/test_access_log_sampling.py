"""--access-log-sample N: 1 in N of the per-call info lines is written; server faults always;
the metrics count every call."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import grpc

from accordion.api.access_log import AccessLog
from accordion.api.callinfo import CallInfo
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

from .helpers import running_server, scrape, value

LIST = "accordion.v1.AccordionService/ListVariants"


def test_one_in_n_info_lines_from_a_real_server(tmp_path: Path) -> None:
    with running_server(tmp_path, "--access-log-sample", "10") as server:
        with grpc.insecure_channel(server.addr) as channel:
            stub = pb_grpc.AccordionServiceStub(channel)
            for _ in range(50):
                stub.ListVariants(pb.ListVariantsRequest(), timeout=10)
        time.sleep(0.3)  # the last batch of lines and metrics is recorded
        samples = scrape(server.metrics_port)
    lines = [json.loads(ln) for ln in server.stderr_lines()]
    rpc_lines = [ln for ln in lines if ln["event"] == "rpc" and ln["method"] == LIST]
    assert len(rpc_lines) == 5 and {ln["level"] for ln in rpc_lines} == {"info"}
    assert value(samples, "accordion_rpc_total", method=LIST, code="OK") == 50


def test_server_faults_are_never_sampled_out() -> None:
    stream = io.StringIO()
    log = AccessLog(stream, 20, {}, sample_every=4)
    now = time.time()
    info = CallInfo("r-1", None)
    ok = (LIST, "", grpc.StatusCode.OK, 0.001, now, 0.0, info, "127.0.0.1", "ok", None, None)
    fault = (LIST, "", grpc.StatusCode.UNAVAILABLE, 0.001, now, 0.0, info, "127.0.0.1", "error", None, None)
    log.write([ok] * 8 + [fault] * 3)
    log.write([ok] * 4)  # the count goes on across batches
    written = [json.loads(ln) for ln in stream.getvalue().splitlines()]
    assert [ln["code"] for ln in written] == ["OK", "OK", "UNAVAILABLE", "UNAVAILABLE", "UNAVAILABLE", "OK"]
    assert [ln["level"] for ln in written if ln["code"] == "UNAVAILABLE"] == ["warning"] * 3
