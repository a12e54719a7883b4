"""What the Redis store makes of the errors redis-py's connections raise when another task tore
them down mid-call: a lost connection (StoreUnavailable, and a retry in a cluster), never a bug
reported as INTERNAL; other errors of the same classes still are bugs."""

from __future__ import annotations

import pytest

from accordion.store import StoreUnavailable
from accordion.store.redis_errors import torn_down, unavailable

TORN_DOWN = [
    AttributeError("'NoneType' object has no attribute 'write'"),  # redis/redis-py#3546
    TypeError("'NoneType' object is not callable"),
    # uvloop's transport, closed under redis-py's cluster client while a command was being sent
    # (seen in tests/faults/test_cluster.py with a primary killed mid-load):
    RuntimeError(
        "unable to perform operation on <TCPTransport closed=True reading=False 0x7f>; the handler is closed"
    ),
]
BUGS = [
    AttributeError("'Game' object has no attribute 'x'"),
    TypeError("unsupported operand"),
    RuntimeError("boom"),
]


@pytest.mark.parametrize("exc", TORN_DOWN, ids=lambda e: type(e).__name__)
def test_a_torn_down_connection_is_a_lost_one(exc: Exception) -> None:
    assert torn_down(exc)
    with pytest.raises(StoreUnavailable, match="torn down"), unavailable():
        raise exc


@pytest.mark.parametrize("exc", BUGS, ids=lambda e: type(e).__name__)
def test_other_errors_of_those_classes_stay_what_they_are(exc: Exception) -> None:
    assert not torn_down(exc)
    with pytest.raises(type(exc)), unavailable():
        raise exc
