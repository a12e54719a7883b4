"""The server's log stays JSON lines when clients leave abruptly: a watcher killed mid-stream
and a connection closed with an HTTP/2 GOAWAY carrying an error (which gRPC's C core reports
in a plain-text line of its own unless its verbosity is ERROR or lower: the entry point sets
GRPC_VERBOSITY=ERROR unless the environment sets it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

from .helpers import running_server

CLIENT = Path(__file__).with_name("abrupt_client.py")
C_CORE_LINE = re.compile(r"^[IWEF]\d{4} ")  # glog/absl: I1123 20:47:42.647281 12028 file.cc:1403] ...
WATCH = "accordion.v1.AccordionService/WatchGame"


def _leave_abruptly(addr: str, workdir: Path) -> None:
    for n in range(2):
        printed = workdir / f"watch{n}.out"
        with printed.open("w+") as out:
            watcher = subprocess.Popen(
                [sys.executable, str(CLIENT), "watch", addr], stdout=out, stderr=subprocess.STDOUT
            )
            deadline = time.monotonic() + 30
            while "watching" not in printed.read_text():
                assert watcher.poll() is None and time.monotonic() < deadline, printed.read_text()
                time.sleep(0.05)
            time.sleep(0.3)  # the stream is open on the server
            watcher.kill()  # SIGKILL: no goodbye of any kind
            watcher.wait()
        goaway = [sys.executable, str(CLIENT), "goaway", addr]
        sent = subprocess.run(goaway, capture_output=True, text=True, timeout=30)
        assert sent.returncode == 0 and "sent" in sent.stdout, sent.stderr


def _still_serving(addr: str) -> None:
    with grpc.insecure_channel(addr) as channel:
        reply = pb_grpc.AccordionServiceStub(channel).ListVariants(pb.ListVariantsRequest(), timeout=10)
    assert reply.variants


@pytest.mark.parametrize("mode", ["one process", "redis workers"])
def test_the_log_stays_json_lines_when_clients_leave_abruptly(
    tmp_path: Path, mode: str, request: pytest.FixtureRequest
) -> None:
    args: tuple[str, ...] = ()
    if mode == "redis workers":
        args = ("--redis-url", str(request.getfixturevalue("redis_url")), "--workers", "2")
    with running_server(tmp_path, *args) as server:
        _leave_abruptly(server.addr, tmp_path)
        _still_serving(server.addr)
        time.sleep(0.5)  # the access lines of the last calls are written (in batches)
    stderr, stdout = server.stderr_lines(), server.stdout_lines()
    assert stderr, "no log at all"
    events = []
    for line in stderr:
        assert not C_CORE_LINE.match(line), f"a C-core line in the log: {line}"
        events.append(json.loads(line))  # every line of the log is one JSON object
    assert all(isinstance(e, dict) and "event" in e and "level" in e for e in events)
    watches = [e for e in events if e.get("method") == WATCH]
    assert len(watches) == 2 and {e["code"] for e in watches} == {"CANCELLED"}, watches
    assert [e for e in events if e["event"] == "stopped"]
    # stdout has the human banner only (the log is stderr), and no C-core line either
    assert stdout and stdout[0].startswith("accordion-server listening on ")
    assert not [ln for ln in stdout if C_CORE_LINE.match(ln) or ln.startswith("{")]


def test_an_operators_grpc_verbosity_wins(tmp_path: Path) -> None:
    """The default is only a default: GRPC_VERBOSITY=INFO brings the C core's lines back (which
    is also what shows the client above does make the C core speak)."""
    with running_server(tmp_path, env={"GRPC_VERBOSITY": "INFO"}) as server:
        _leave_abruptly(server.addr, tmp_path)
        time.sleep(0.3)
    core = [ln for ln in server.stderr_lines() if C_CORE_LINE.match(ln)]
    assert [ln for ln in core if "Got goaway [2]" in ln], core
