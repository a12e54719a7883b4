"""The end-to-end fixtures of tests/api (real servers, real channels) for the worker tests."""

from tests.api.conftest import connect, spawn_server, start_server  # noqa: F401 (fixtures)
