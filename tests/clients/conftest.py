"""Fixtures for the client tests: real servers, reused from tests/api.

* ``server``: one ``accordion-server`` subprocess (memory store) for the whole session, the
  way users run it (``server.addr`` is its host:port). Blocking clients need a server outside
  the test's event loop, and a subprocess is exactly that.
* ``client``: an ``AccordionClient`` on it, closed at teardown.
* ``secure_server``: one that serves TLS only and wants an API key (certificates from
  tests/security/certs.py).
* ``spawn_server``, ``start_server``, ``connect`` come from tests/api/conftest.py.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from accordion_client import AccordionClient
from redis_server import free_port
from server_launcher import ServerProcess, launch
from tests.api.conftest import connect, spawn_server, start_server  # noqa: F401 (fixtures, reused)

BIN = Path(sys.executable).parent


def script(name: str) -> list[str]:
    """A console script of the client package, beside this interpreter (``make install`` puts it there)."""
    path = BIN / name
    assert path.exists(), f"{path} is missing: run `make install` (it installs clients/python)"
    return [str(path)]


def start_subprocess_server(tmp: Path, *args: str, env: dict[str, str] | None = None) -> ServerProcess:
    return launch(tmp, *args, env=env)


@pytest.fixture(scope="session")
def server() -> Iterator[ServerProcess]:
    with tempfile.TemporaryDirectory(prefix="acc-clients-") as tmp:
        # A load tool's server: NewGame unlimited (docs/load.md)
        sp = start_subprocess_server(Path(tmp), "--log-level", "warning", "--newgame-rate", "0")
        try:
            yield sp
        finally:
            sp.close()


@pytest.fixture
def client(server: ServerProcess) -> Iterator[AccordionClient]:
    with AccordionClient(server.addr) as c:
        yield c


@pytest.fixture
def dead_target() -> str:
    """A loopback host:port where nothing listens."""
    return f"127.0.0.1:{free_port()}"


@dataclass
class SecureServer:
    process: ServerProcess
    ca_file: Path
    api_key: str

    @property
    def addr(self) -> str:
        return self.process.addr


@pytest.fixture(scope="session")
def secure_server() -> Iterator[SecureServer]:
    from tests.security.certs import CA

    with tempfile.TemporaryDirectory(prefix="acc-clients-tls-") as tmp:
        folder = Path(tmp)
        ca = CA(folder)
        cert = ca.issue("accordion-server")
        key = "client-test-key-0123456789"
        keys_file = folder / "keys.json"
        keys_file.write_text(
            json.dumps({"keys": [{"name": "tests", "sha256": hashlib.sha256(key.encode()).hexdigest()}]})
        )
        sp = start_subprocess_server(
            folder,
            "--log-level",
            "warning",
            "--tls-cert",
            str(cert.cert),
            "--tls-key",
            str(cert.key),
            "--api-keys-file",
            str(keys_file),
        )
        try:
            yield SecureServer(sp, ca.cert, key)
        finally:
            sp.close()
