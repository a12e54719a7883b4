"""The players and the two ways of driving them.

* Open loop (``rate`` stages): a dispatcher hands each call the schedule asks for to an idle
  player, making a new player when all are busy (up to ``max_players``). A call it cannot place
  is counted as missed, never silently dropped: with no idle player left, or when the tool's own
  loop fell more than a second behind the schedule. Each call's latency runs from its slot's
  scheduled time, not from when it was sent: a tool (or server) that falls behind shows in the
  latency instead of hiding in a slower schedule (no coordinated omission).
* Closed loop (``players`` stages): that many players call flat out, each waiting for its reply.

Calls go to the channels (connections) in turn, one after the other, whichever player makes
them: a server's ``--workers`` share a port by SO_REUSEPORT, which balances connections, so
calls spread evenly over the connections spread evenly over the workers.

Each player has at most one game: it deals (NewGame), then each call is an action drawn from the
scenario's mix (move, legal moves, read, score, hint, or deal again); a failed call or an ended
game makes the next action a deal. Some games get a watcher (a WatchGame stream for the game's
life) that times each event from the move being sent to the event arriving.

When every call fails from the start (nothing listening, an unknown variant, a wrong key), the
run stops early with the first error instead of hammering on for its whole duration.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio

from ..v1 import accordion_pb2 as pb
from ..v1 import accordion_pb2_grpc as pb_grpc
from .scenario import Scenario
from .stats import MISSED_BEHIND, MISSED_NO_PLAYER, WATCH, Stats

IN_PROGRESS = pb.GAME_STATUS_IN_PROGRESS
# Stop early when no call has succeeded and this many have failed, or a second has passed since
# the first failure: enough to tell "every call fails" from a server still warming up.
ABORT_AFTER_ERRORS = 50
ABORT_AFTER_SECONDS = 1.0
FAIL_PAUSE = 0.05  # a closed-loop player's pause after a failure: do not spin on a failing server
# The code of a call that failed in this process (bad metadata, a bug), not with a gRPC status.
CLIENT_ERROR = "CLIENT_ERROR"


@dataclass(frozen=True)
class Options:
    scenario: Scenario
    variant: str
    deadline: float
    metadata: tuple[tuple[str, str], ...]
    max_players: int  # open loop: players at most (each has one call in flight at a time)
    seed: int
    stop_early: bool = True
    traceparent_sample: float = 0.0  # share of calls sent with a W3C traceparent header


class Run:
    """One run: the clock, the stats, the stop flag and the players' shared settings."""

    def __init__(
        self, stubs: list[pb_grpc.AccordionServiceAsyncStub], options: Options, stats: Stats
    ) -> None:
        self.stubs, self.options, self.stats = stubs, options, stats
        self.scenario = options.scenario
        self.actions = [a for a, w in self.scenario.mix.items() if w > 0]
        self.weights = [self.scenario.mix[a] for a in self.actions]
        self.started = time.monotonic()
        self.stopping = False
        self.abort_reason: str | None = None
        self.window = 0.0  # seconds the schedule ran
        self.players_made = 0
        self.calls_sent = 0  # the next call's channel: calls_sent % len(stubs)
        self.trace_rng = random.Random(options.seed ^ 0x7ACE)  # apart from the players' choices

    def next_stub(self) -> pb_grpc.AccordionServiceAsyncStub:
        stub = self.stubs[self.calls_sent % len(self.stubs)]
        self.calls_sent += 1
        return stub

    def traceparent(self) -> tuple[tuple[str, str], ...]:
        """A W3C ``traceparent`` (version 00, sampled) for this call, or none, as sampled."""
        sample = self.options.traceparent_sample
        if sample <= 0 or (sample < 1 and self.trace_rng.random() >= sample):
            return ()
        trace_id = self.trace_rng.getrandbits(128) or 1  # all-zero ids are invalid
        span_id = self.trace_rng.getrandbits(64) or 1
        self.stats.traced += 1
        return (("traceparent", f"00-{trace_id:032x}-{span_id:016x}-01"),)

    def now(self) -> float:
        return time.monotonic() - self.started

    def new_player(self) -> Player:
        n = self.players_made
        self.players_made += 1
        return Player(self, self.stubs[n % len(self.stubs)], random.Random(self.options.seed * 7919 + n))

    def check_abort(self) -> None:
        """Every call so far failed, for long enough: stop, keeping the first error's message."""
        s = self.stats
        if not self.options.stop_early or s.ok_count or s.first_error_at is None or self.stopping:
            return
        if s.error_count >= ABORT_AFTER_ERRORS or self.now() - s.first_error_at >= ABORT_AFTER_SECONDS:
            self.abort_reason = f"every call failed ({s.error_count} calls); the first: {s.first_error}"
            self.stopping = True

    async def drive(self) -> None:
        """Run the scenario to its end (or an early stop); ``window`` is then how long it ran."""
        try:
            if self.scenario.kind == "rate":
                await self.open_loop()
            else:
                await self.closed_loop()
        finally:
            if not self.window:
                self.window = min(self.now(), self.scenario.duration)

    async def open_loop(self) -> None:
        scenario, stats = self.scenario, self.stats
        players: list[Player] = []
        idle: deque[Player] = deque()
        in_flight: set[asyncio.Task[bool]] = set()
        accounted = 0  # slots started or missed
        wake: float | None = None

        def finished(player: Player) -> Callable[[asyncio.Task[bool]], None]:
            def back(task: asyncio.Task[bool]) -> None:
                in_flight.discard(task)
                idle.append(player)

            return back

        while not self.stopping:
            t = self.now()
            if wake is not None:
                stats.loop_lags.append(max(0.0, t - wake))
            ending = t >= scenario.duration
            # The slots due up to the end are placed (or missed) too.
            t = min(t, scenario.duration - 1e-6)
            due = math.floor(scenario.calls_due(scenario.duration if ending else t))
            for slot in range(accounted + 1, due + 1):
                # Each slot counts in the second it was due, whenever the loop got to it.
                scheduled = min(scenario.time_of_call(slot), scenario.duration - 1e-6)
                if t - scheduled > 1.0:  # more than a second late: missed, not burst out late
                    stats.miss(scheduled, MISSED_BEHIND)
                    continue
                if idle:
                    player = idle.popleft()
                elif len(players) < self.options.max_players:
                    player = self.new_player()
                    players.append(player)
                else:
                    stats.miss(scheduled, MISSED_NO_PLAYER)
                    continue
                task = asyncio.create_task(player.step(scheduled))
                in_flight.add(task)
                task.add_done_callback(finished(player))
            accounted = max(accounted, due)
            stats.players(t, len(players))
            self.check_abort()
            if ending:
                break
            rate = scenario.value_at(t)
            fraction = scenario.calls_due(t) % 1.0
            gap = (1.0 - fraction) / rate if rate > 0 else 0.01
            gap = max(min(gap, 0.01, scenario.duration - t), 0.0005)
            wake = t + gap
            await asyncio.sleep(gap)
        self.window = min(self.now(), scenario.duration)
        stats.offered = scenario.calls_due(self.window)  # exactly what the schedule asked for
        if self.abort_reason is not None:
            for task in in_flight:
                task.cancel()
        await asyncio.gather(*in_flight, return_exceptions=True)
        for player in players:
            player.drop()

    async def closed_loop(self) -> None:
        scenario, stats = self.scenario, self.stats
        active: list[Player] = []
        tasks: list[asyncio.Task[None]] = []
        while not self.stopping:
            t = self.now()
            if t >= scenario.duration:
                break
            target = round(scenario.value_at(t))
            while len(active) < target:
                player = self.new_player()
                active.append(player)
                tasks.append(asyncio.create_task(self.play(player)))
            while len(active) > target:
                active.pop().retired = True  # ends after its current call
            stats.players(t, len(active))
            self.check_abort()
            await asyncio.sleep(min(0.05, max(scenario.duration - t, 0.0)))
        self.window = min(self.now(), scenario.duration)
        if self.abort_reason is not None:
            for task in tasks:
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def play(self, player: Player) -> None:
        try:
            while not self.stopping and not player.retired and self.now() < self.scenario.duration:
                if not await player.step():
                    await asyncio.sleep(FAIL_PAUSE)
                self.check_abort()
        finally:
            player.drop()


def request_id(metadata: Any) -> str | None:
    """The ``x-request-id`` a server sends in its trailers (None when it sends none)."""
    for key, value in metadata or ():
        if key == "x-request-id":
            return str(value)
    return None


class Player:
    """One virtual player: one game at a time, one call at a time."""

    def __init__(self, run: Run, stub: pb_grpc.AccordionServiceAsyncStub, rng: random.Random) -> None:
        self.run, self.stub, self.rng = run, stub, rng
        self.game: pb.Game | None = None
        self.token = ""
        self.legal: list[pb.Move] = []
        self.watcher: asyncio.Task[None] | None = None
        self.sent_at: dict[int, float] = {}  # game version -> when the move making it was sent
        self.retired = False

    def metadata(self) -> tuple[tuple[str, str], ...]:
        bearer = (("authorization", f"Bearer {self.token}"),) if self.token else ()
        return self.run.options.metadata + bearer

    async def call(self, method: str, request: Any, scheduled: float | None = None) -> Any:
        """One unary call, timed and recorded; the reply, or None when it failed. ``scheduled``
        (open loop): the slot's time in the schedule, from which the latency is measured."""
        run = self.run
        sent = run.now()
        run.stats.start(sent)
        begin = sent if scheduled is None else min(scheduled, sent)
        if scheduled is not None:
            run.stats.send_delays.append(sent - begin)
        stub = run.next_stub()
        traceparent = run.traceparent()
        try:
            call = getattr(stub, method)(
                request, timeout=run.options.deadline, metadata=self.metadata() + traceparent
            )
            reply = await call
        except grpc.aio.AioRpcError as exc:
            t = run.now()
            # The server's request id (trailer x-request-id): joins this failure to its log line.
            rid = request_id(exc.trailing_metadata())
            run.stats.record(method, t, t - begin, exc.code().name, exc.details() or "", rid)
            return None
        except Exception as exc:  # noqa: BLE001  (a call that never reached the wire still counts)
            t = run.now()
            run.stats.record(method, t, t - begin, CLIENT_ERROR, f"{type(exc).__name__}: {exc}")
            return None
        t = run.now()
        run.stats.record(method, t, t - begin, None)
        if traceparent:  # the slowest traced calls are reported with their trace and request ids
            trailers = await call.trailing_metadata()
            run.stats.traced_call(method, t - begin, traceparent[0][1].split("-")[1], request_id(trailers))
        return reply

    def next_action(self) -> str:
        if self.game is None or self.game.status != IN_PROGRESS or not self.legal:
            return "new_game"
        return self.rng.choices(self.run.actions, self.run.weights)[0]

    async def step(self, scheduled: float | None = None) -> bool:
        """The next action's call (due at ``scheduled`` in an open loop); False when it failed
        (the game is then dropped)."""
        action = self.next_action()
        if action == "new_game":
            return await self.deal(scheduled)
        assert self.game is not None
        game_id = self.game.id
        reply: Any
        if action == "move":
            request = pb.ApplyMoveRequest(
                game_id=game_id,
                move=self.rng.choice(self.legal),
                expected_version=self.game.version,
                request_id=uuid.uuid4().hex,
            )
            if self.watcher is not None:
                self.sent_at[self.game.version + 1] = self.run.now()
            reply = await self.call("ApplyMove", request, scheduled)
            if reply is not None:
                self.update(reply.game)
        elif action == "legal_moves":
            reply = await self.call("LegalMoves", pb.LegalMovesRequest(game_id=game_id), scheduled)
            if reply is not None:
                self.legal = list(reply.moves)
        elif action == "read":
            reply = await self.call("GetGame", pb.GetGameRequest(game_id=game_id), scheduled)
            if reply is not None:
                self.update(reply.game, count_end=False)
        elif action == "score":
            reply = await self.call("Score", pb.ScoreRequest(game_id=game_id), scheduled)
        else:
            reply = await self.call("Hint", pb.HintRequest(game_id=game_id), scheduled)
        if reply is None:
            self.drop()
            return False
        return True

    async def deal(self, scheduled: float | None = None) -> bool:
        self.drop()
        stats = self.run.stats
        request = pb.NewGameRequest(
            variant=self.run.options.variant, seed=self.rng.getrandbits(63), request_id=uuid.uuid4().hex
        )
        reply = await self.call("NewGame", request, scheduled)
        if reply is None:
            return False
        stats.games_started += 1
        self.token = reply.token
        if self.rng.random() < self.run.scenario.watchers:
            self.watcher = asyncio.create_task(self.watch(reply.game.id, reply.game.version))
        self.update(reply.game)
        return True

    def update(self, game: pb.Game, count_end: bool = True) -> None:
        was_playing = self.game is not None and self.game.status == IN_PROGRESS
        self.game, self.legal = game, list(game.legal_moves)
        if count_end and game.status != IN_PROGRESS and (was_playing or game.moves_played == 0):
            stats = self.run.stats
            stats.games_finished += 1
            stats.games_won += game.status == pb.GAME_STATUS_WON

    def drop(self) -> None:
        """Forget the game (and stop watching it)."""
        if self.watcher is not None:
            self.watcher.cancel()
            self.watcher = None
        self.game, self.token, self.legal = None, "", []
        self.sent_at.clear()

    async def watch(self, game_id: str, version: int) -> None:
        """Follow the game's events; each one's lag is from its move being sent to its arrival."""
        run = self.run
        run.stats.watch_streams += 1
        request = pb.WatchGameRequest(game_id=game_id, after_version=version)
        stream = self.stub.WatchGame(request, metadata=self.metadata())
        try:
            async for reply in stream:
                t = run.now()
                sent = self.sent_at.pop(reply.event.version, None)
                run.stats.watch_event(t, None if sent is None else t - sent)
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.CANCELLED:
                run.stats.record(WATCH, run.now(), 0.0, exc.code().name, exc.details() or "")
        finally:
            stream.cancel()
