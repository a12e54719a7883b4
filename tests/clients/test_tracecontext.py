"""The Python client's W3C traceparent (accordion_client.tracecontext): a new trace per call by
default, ``trace_context``'s inside one, the caller's own from its metadata, none with
``trace=False``. (That the server honours it: tests/ops/test_traces.py.)"""

from __future__ import annotations

import pytest

from accordion_client import AccordionClient, AsyncAccordionClient, new_traceparent, trace_context
from accordion_client.tracecontext import parse_traceparent


def _sent(client: AccordionClient | AsyncAccordionClient) -> list[str]:
    return [value for key, value in client._metadata("a-token") if key == "traceparent"]


def test_traceparents_are_made_and_read() -> None:
    made = new_traceparent()
    parsed = parse_traceparent(made)
    assert parsed is not None and parsed[2] == 1
    assert parse_traceparent(new_traceparent())[0] != parsed[0]  # type: ignore[index]
    assert parse_traceparent(f"00-{'0' * 32}-{'1' * 16}-01") is None
    assert parse_traceparent("00-abc") is None
    with pytest.raises(ValueError):
        with trace_context("not a traceparent"):
            pass


def test_each_call_carries_one_traceparent() -> None:
    client = AccordionClient("127.0.0.1:1")  # (no call is made: the channel connects lazily)
    try:
        first, second = _sent(client), _sent(client)
        assert len(first) == len(second) == 1 and first != second  # a new trace per call
        assert parse_traceparent(first[0]) is not None
        caller = new_traceparent()
        with trace_context(caller) as given:
            assert given == caller and _sent(client) == [caller]
        with trace_context() as made:
            assert _sent(client) == [made]
        assert _sent(client) != [made]  # outside: new again
    finally:
        client.close()


async def test_the_callers_own_header_or_none() -> None:
    own = new_traceparent()
    client = AccordionClient("127.0.0.1:1", metadata=[("traceparent", own)])
    quiet = AsyncAccordionClient("127.0.0.1:1", trace=False)
    try:
        assert _sent(client) == [own]
        assert _sent(quiet) == []
    finally:
        client.close()
        await quiet.close()
