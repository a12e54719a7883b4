"""Locust players for the Accordion service, for teams that load-test with Locust.

    pip install locust ./clients/python
    locust -f clients/python/locustfile.py --host 127.0.0.1:50051 --headless -u 50 -r 10 -t 1m

Each Locust user is a person playing: it deals a game, looks at the legal moves now and
then, plays a random one, asks for the score every few moves and at the end, and thinks
0.5-2 s between turns. Every gRPC call is reported to Locust (name = the RPC method) by a
client interceptor, so Locust's tables and charts show NewGame, LegalMoves, ApplyMove and
Score. Environment: ``ACCORDION_VARIANT`` (default ``accordion``), ``ACCORDION_TLS=1`` for
TLS. ``accordion-load`` (same package) does the same without Locust.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

try:  # Locust runs on gevent: grpc must cooperate with it (absent without gevent, e.g. in tests)
    import grpc.experimental.gevent as grpc_gevent

    grpc_gevent.init_gevent()
except ImportError:  # pragma: no cover
    pass

import grpc
from locust import User, between, task

from accordion_client import AccordionClient, AccordionError, GameHandle

VARIANT = os.environ.get("ACCORDION_VARIANT", "accordion")
TLS = os.environ.get("ACCORDION_TLS", "") not in ("", "0", "false")


class LocustInterceptor(grpc.UnaryUnaryClientInterceptor):
    """Reports each unary call to Locust: its method, time, reply size and failure."""

    def __init__(self, environment: Any) -> None:
        self.environment = environment

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        start = time.perf_counter()
        outcome, exception, size = None, None, 0
        try:
            outcome = continuation(details, request)
            size = outcome.result().ByteSize()
        except grpc.RpcError as exc:
            exception = exc
        self.environment.events.request.fire(
            request_type="grpc",
            name=details.method.rsplit("/", 1)[-1],
            response_time=(time.perf_counter() - start) * 1000,
            response_length=size,
            response=outcome,
            context={},
            exception=exception,
        )
        return outcome


class AccordionPlayer(User):
    wait_time = between(0.5, 2.0)  # a person thinks between moves

    def on_start(self) -> None:
        # Locust reports failures itself; a retry would hide them, so none here.
        self.client = AccordionClient(
            self.host, tls=TLS, retries=0, interceptors=[LocustInterceptor(self.environment)]
        )
        self.game: GameHandle | None = None

    def on_stop(self) -> None:
        self.client.close()

    @task
    def turn(self) -> None:
        try:
            if self.game is None or self.game.over:
                if self.game is not None:
                    self.game.score()
                self.game = self.client.new_game(VARIANT)
                return
            legal = (
                [m.notation for m in self.game.legal_moves()] if random.random() < 0.5 else self.game.legal
            )
            if not legal:
                self.game = None
                return
            self.game.play(random.choice(legal))
            if self.game.game.moves_played % 5 == 0:
                self.game.score()
        except AccordionError:  # already reported as a failure by the interceptor
            self.game = None
