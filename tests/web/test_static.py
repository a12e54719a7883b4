"""The page's static server (tools/serve_web.py) against hostile clients, on its own (no Envoy,
no build: a stand-in dist/): the security headers on every answer, no directory listings, bad
paths answered 400/404 and never with a traceback, slow clients timed out, and a client that
drops its connection mid-answer leaving no traceback in the log.

The server runs in a child process (as `make serve-web` runs it: start_static in a thread), so
what it writes to stderr (aiohttp's log, or a traceback) is read whole."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.api.helpers import ROOT

TOOLS = ROOT / "tools"
CLIENT_TIMEOUT = 2.0  # seconds the server under test gives a slow client

# The child: the static server on a free port, its port on stdout, until stdin closes.
CHILD = f"""
import logging, sys
sys.path.insert(0, {str(TOOLS)!r})
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
import serve_web
from pathlib import Path
server = serve_web.start_static(0, Path(sys.argv[1]), client_timeout={CLIENT_TIMEOUT})
print(server.server_address[1], flush=True)
sys.stdin.read()
server.shutdown()
"""


@dataclass
class Static:
    port: int
    process: subprocess.Popen[str]
    dist: Path

    def stderr_so_far(self) -> str:
        """Everything the server wrote: stops it first (stdin closed), so nothing is pending."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        assert self.process.stderr is not None
        return self.process.stderr.read()


@pytest.fixture()
def static(tmp_path: Path) -> Iterator[Static]:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "docs").mkdir()
    (dist / "empty").mkdir()
    (dist / "index.html").write_text("<!doctype html><title>stand-in</title>")
    (dist / "docs" / "index.html").write_text("<!doctype html><title>docs</title>")
    (dist / "assets" / "main-1.js").write_text("console.log(1)")
    (dist / "assets" / "big.bin").write_bytes(os.urandom(32 << 20))  # more than socket buffers hold
    (tmp_path / "secret.txt").write_text("outside dist")
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(dist)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.strip().isdigit():
        process.kill()
        pytest.fail(f"the static server did not start: {line!r} {process.communicate(timeout=10)}")
    try:
        yield Static(int(line), process, dist)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def raw_get(port: int, target: str, timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
    """One request with ``target`` sent exactly as written (no client library normalising it):
    the status, the headers (lower-case names) and the body; status 0 when the server closed
    the connection without an answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(
            f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode("latin-1")
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    if not data:
        return 0, {}, b""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def assert_hardened(headers: dict[str, str]) -> None:
    csp = headers.get("content-security-policy", "")
    directives = {d.split()[0]: d.split()[1:] for d in (p.strip() for p in csp.split(";")) if d}
    assert directives.get("default-src") == ["'self'"], csp
    assert directives.get("connect-src") == ["'self'"], csp  # the page calls the API on its own origin
    assert directives.get("frame-ancestors") == ["'none'"], csp
    assert "'unsafe-eval'" not in csp and "'unsafe-inline'" not in directives.get("script-src", []), csp
    assert headers.get("x-frame-options") == "DENY"
    assert headers.get("x-content-type-options") == "nosniff"
    assert headers.get("referrer-policy") == "no-referrer"


def test_every_answer_carries_the_security_headers(static: Static) -> None:
    for target, status in [
        ("/", 200),
        ("/assets/main-1.js", 200),
        ("/docs/", 200),
        ("/docs", 301),
        ("/nothing-here", 404),
        ("/%00", 400),
    ]:
        got, headers, _ = raw_get(static.port, target)
        assert got == status, (target, got)
        assert_hardened(headers)
    got, headers, body = raw_get(static.port, "/docs/openapi.json")
    assert got == 200 and headers["content-type"].startswith("application/json") and body.startswith(b"{")
    assert_hardened(headers)


def test_directories_are_never_listed(static: Static) -> None:
    for target in ("/assets/", "/assets", "/empty/", "/empty"):
        status, _, body = raw_get(static.port, target)
        assert status == 404, (target, status)
        assert b"main-1.js" not in body and b"big.bin" not in body


@pytest.mark.parametrize(
    "target, expected",
    [
        ("/%00", {400}),
        ("/index.html%00.js", {400}),
        ("/%zz", {400}),
        ("/%", {400}),
        ("/%e0%80", {400, 404}),  # not UTF-8 once decoded
        ("/assets%2f..%2f..%2fsecret.txt", {400, 404}),
        ("/..%2fsecret.txt", {400, 404}),
        ("/../secret.txt", {400, 404}),
        ("/assets/..%5c..%5csecret.txt", {400}),
        ("/%2e%2e/secret.txt", {400, 404}),
        ("/a%0d%0aSet-Cookie:x=1", {400}),
    ],
)
def test_bad_paths_are_400_or_404_and_log_no_traceback(
    static: Static, target: str, expected: set[int]
) -> None:
    status, headers, body = raw_get(static.port, target)
    assert status in expected, (target, status, body[:200])
    assert b"outside dist" not in body
    assert "set-cookie" not in headers
    assert_hardened(headers)
    assert raw_get(static.port, "/")[0] == 200  # still serving
    log = static.stderr_so_far()
    assert "Traceback" not in log and "Error handling request" not in log, log[-3000:]


def test_slow_clients_are_timed_out_and_do_not_starve_others(static: Static) -> None:
    """50 connections that send their headers a byte at a time (slowloris) are closed by the
    server within its client timeout, and an ordinary request is answered meanwhile."""
    slow = []
    for _ in range(50):
        sock = socket.create_connection(("127.0.0.1", static.port), timeout=30)
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        slow.append(sock)
    try:
        assert raw_get(static.port, "/")[0] == 200
        deadline = time.monotonic() + CLIENT_TIMEOUT + 20  # generous: a loaded machine
        open_ = list(slow)
        while open_ and time.monotonic() < deadline:
            for sock in list(open_):
                try:
                    sock.sendall(b"X-Slow: 1\r\n")  # keep trickling
                    sock.settimeout(0.05)
                    if sock.recv(1024) == b"":
                        open_.remove(sock)  # closed by the server
                        continue
                    open_.remove(sock)  # an answer (408/400) and then closed: also timed out
                except TimeoutError:
                    pass
                except OSError:  # reset by the server
                    open_.remove(sock)
            time.sleep(0.2)
        assert not open_, f"{len(open_)} of 50 slow connections still open after {CLIENT_TIMEOUT + 20:g} s"
    finally:
        for sock in slow:
            sock.close()
    assert raw_get(static.port, "/")[0] == 200
    log = static.stderr_so_far()
    assert "Traceback" not in log, log[-3000:]


def test_a_client_that_drops_the_connection_logs_no_traceback(static: Static) -> None:
    """Clients that go away mid-answer (reset, or closed after the first bytes of a large file)
    are ordinary: the server logs no traceback for them and goes on serving."""
    for _ in range(5):
        for reset in (True, False):
            sock = socket.create_connection(("127.0.0.1", static.port), timeout=10)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(b"GET /assets/big.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert sock.recv(4096).split(b"\r\n", 1)[0].endswith(b" 200 OK")
            if reset:  # RST instead of FIN: the server's next write fails at once
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
    # The server noticed every drop (its next answer is served) before its log is read.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and raw_get(static.port, "/")[0] != 200:
        time.sleep(0.1)
    log = static.stderr_so_far()
    assert "Traceback" not in log and "Error handling request" not in log, log[-3000:]


def raw_exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n",  # a space in the target
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n",
        b"GET / HTTP/1.1\r\nBad Header\r\n\r\n",
        b"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n",  # a raw NUL
    ],
)
def test_a_request_that_does_not_parse_is_400_and_logs_no_traceback(
    static: Static, request_bytes: bytes
) -> None:
    status_line = raw_exchange(static.port, request_bytes).split(b"\r\n", 1)[0]
    assert status_line.split()[1:2] == [b"400"], status_line
    assert raw_get(static.port, "/")[0] == 200
    log = static.stderr_so_far()
    assert "Traceback" not in log, log[-3000:]
