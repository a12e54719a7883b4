"""The web stack for the browser tests, on free ports: accordion-server (embedded store), the
page's static server (tools/serve_web.py's, in this process) and Envoy with the config
`make serve-web` renders (deploy/envoy/envoy.yaml: gRPC-Web, REST, the static route)."""

from __future__ import annotations

import importlib.util
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from tests.api.helpers import ROOT, ServerProcess
from tests.rest.conftest import EnvoyProcess, start_envoy_with, start_server

WEB = ROOT / "clients" / "web"


def serve_web() -> ModuleType:
    spec = importlib.util.spec_from_file_location("serve_web", ROOT / "tools" / "serve_web.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
                grpc_port=int(server.addr.rsplit(":", 1)[1]),
                port=0,
                static_port=static.server_address[1],
                cors_origins=cors_origins,
                admin_port=0,
            )
            envoy = start_envoy_with(config, workdir)
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
