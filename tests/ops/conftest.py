"""The servers these tests start run with the defaults an operator gets: none of gRPC's or
prometheus_client's own variables from the developer's environment."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GRPC_VERBOSITY", "GRPC_TRACE", "PROMETHEUS_MULTIPROC_DIR"):
        monkeypatch.delenv(name, raising=False)
