"""The web stack for the browser tests, on free ports: accordion-server (embedded store), the
page's static server (tools/serve_web.py's, in this process) and Envoy with the config
`make serve-web` renders (deploy/envoy/envoy.yaml: gRPC-Web, REST, the static route)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from tests.api.helpers import ROOT, ServerProcess
from tests.rest.conftest import EnvoyProcess, envoy_command, start_server

WEB = ROOT / "clients" / "web"


def serve_web() -> ModuleType:
    spec = importlib.util.spec_from_file_location("serve_web", ROOT / "tools" / "serve_web.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def start_web_envoy(config_text: str, workdir: Path, timeout: float = 30) -> EnvoyProcess:
    """Envoy on a free port (listener and admin 0, read back from the admin API)."""
    config, admin_path, log_path = workdir / "envoy.yaml", workdir / "admin.txt", workdir / "envoy.log"
    config.write_text(config_text)
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [*envoy_command(), "-c", str(config), "--admin-address-path", str(admin_path), "--disable-hot-restart",
         "--concurrency", "1", "--log-level", "warning"],
        stdout=log, stderr=subprocess.STDOUT, cwd=workdir,
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
                envoy.port = int(listeners["listener_statuses"][0]["local_address"]["socket_address"]["port_value"])
                return envoy
        time.sleep(0.05)
    envoy.close()
    raise RuntimeError(f"envoy did not get ready:\n{envoy.log()}")


@dataclass
class WebStack:
    server: ServerProcess
    envoy: EnvoyProcess

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.envoy.port}"


def web_stack(cors_origins: tuple[str, ...] = ()) -> Iterator[WebStack]:
    sw = serve_web()
    with tempfile.TemporaryDirectory(prefix="acc-web-") as tmp:
        workdir = Path(tmp)
        dist = workdir / "dist"  # a stand-in page when the build has not run: the REST tests need none
        dist.mkdir()
        (dist / "index.html").write_text("<!doctype html><title>stand-in</title>")
        static = sw.start_static(0, sw.DIST if (sw.DIST / "index.html").exists() else dist)
        server = start_server(workdir)
        try:
            config = sw.render_config(
                grpc_port=int(server.addr.rsplit(":", 1)[1]), port=0,
                static_port=static.server_address[1], cors_origins=cors_origins, admin_port=0,
            )
            envoy = start_web_envoy(config, workdir)
        except BaseException:
            server.close()
            static.shutdown()
            raise
        try:
            yield WebStack(server, envoy)
        finally:
            envoy.close()
            server.close()
            static.shutdown()


@pytest.fixture(scope="module")
def web() -> Iterator[WebStack]:
    yield from web_stack()


@pytest.fixture(scope="module")
def web_cors() -> Iterator[WebStack]:
    yield from web_stack(("http://allowed.example",))
