"""Fixtures for the security tests: the end-to-end fixtures of tests/api, and certificates."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.conftest import connect, spawn_server, start_server  # noqa: F401 (fixtures)

from .certs import CA


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Two CAs; a server certificate and two client certificates from the first, one from the second."""
    folder: Path = tmp_path_factory.mktemp("pki")
    ca, other = CA(folder, "accordion test CA"), CA(folder, "someone else's CA")
    return {
        "ca": ca,
        "other_ca": other,
        "server": ca.issue("accordion-server"),
        "client": ca.issue("client-1", client=True),
        "stranger": other.issue("client-2", client=True),
    }
