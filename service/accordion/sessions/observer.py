"""What the flow tells of itself, for metrics: ``Observer`` (``accordion.api.metrics.SessionMetrics``
implements it) and the kinds of store failure it is told of."""

from __future__ import annotations

from mypy_extensions import mypyc_attr

from accordion.engine.core import Status


# The metrics' implementation (api/metrics.py, interpreted) subclasses it.
@mypyc_attr(allow_interpreted_subclasses=True)
class Observer:
    """What the flow tells of itself, for metrics (``accordion.api.metrics.SessionMetrics``
    records it in Prometheus; this one ignores it). Called on the hot path, once per game dealt,
    per move or undo the store accepted (never for a retry's replayed answer) and per store
    call: an implementation must be cheap and must not raise."""

    def dealt(self, variant: str) -> None:
        """A new game of ``variant`` is stored (not the first game given back to a retry)."""

    def moved(self, variant: str, undo: bool, before: Status, after: Status) -> None:
        """A move (or an undo) was stored; the game's status before and after it."""

    def store_call(self, operation: str, seconds: float) -> None:
        """One call to a store out of this process (Redis) took ``seconds``, whatever its outcome.
        (Not called for a store that answers in this process: timing it would cost more than it does.)"""

    def store_failed(self, operation: str, kind: str) -> None:
        """One store call ended without a result: ``kind`` is one of ``STORE_FAILURES``."""


# The kinds of ``Observer.store_failed``: the store's own answers (no such game, a version
# conflict, an id that exists) and its failures to answer (a connection problem, our
# --store-timeout, the request's deadline), and anything else.
STORE_FAILURES = ("not_found", "conflict", "exists", "unavailable", "timeout", "deadline", "other")
