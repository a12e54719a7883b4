"""W3C trace context (https://www.w3.org/TR/trace-context/) for the clients' calls.

Every call carries a ``traceparent`` header, so the server's span of the call (and its access
line) joins the caller's trace: the one of ``trace_context(...)`` around the calls, or a fresh
one per call (a new trace id, sampled). A ``traceparent`` in the client's own ``metadata`` is
sent as it is; ``trace=False`` on the client sends none.

    from accordion_client import AccordionClient, trace_context

    with AccordionClient("127.0.0.1:50051") as client, trace_context() as traceparent:
        game = client.new_game("accordion", seed=7)   # both calls in one trace,
        game.play("10D>4D")                             # children of `traceparent`
        print(traceparent)

With OpenTelemetry in the caller, pass the current span's header
(``opentelemetry.propagate.inject``) to ``trace_context``.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import secrets
from collections.abc import Iterator

HEADER = "traceparent"
_FORMAT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("accordion_traceparent", default=None)


def new_traceparent(sampled: bool = True) -> str:
    """A traceparent of a new trace: version 00, 128 random bits of trace id, 64 of parent id."""
    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-{'01' if sampled else '00'}"


def parse_traceparent(text: str) -> tuple[str, str, int] | None:
    """(trace id, parent id, flags) of a valid version-00 traceparent, else None (an all-zero
    id is invalid, as the spec says)."""
    found = _FORMAT.fullmatch(text.strip())
    if found is None or set(found[1]) == {"0"} or set(found[2]) == {"0"}:
        return None
    return found[1], found[2], int(found[3], 16)


@contextlib.contextmanager
def trace_context(traceparent: str | None = None) -> Iterator[str]:
    """Calls made inside carry ``traceparent`` (None: a new trace's); yields it. Raises
    ValueError for a header that is not a valid traceparent."""
    if traceparent is None:
        traceparent = new_traceparent()
    elif parse_traceparent(traceparent) is None:
        raise ValueError(f"not a W3C traceparent: {traceparent!r}")
    token = _current.set(traceparent.strip())
    try:
        yield traceparent.strip()
    finally:
        _current.reset(token)


def current_traceparent() -> str:
    """The traceparent the next call carries: ``trace_context``'s, or a new trace's."""
    return _current.get() or new_traceparent()
