"""Load for fault tests: games played through real servers, every acknowledged move logged.

* ``start_servers(n, env, args)``: ``n`` real ``accordion-server`` processes (started together).
* ``round_robin_channel(addrs)``: one gRPC channel over all of them: ``round_robin`` load
  balancing and a ``retryPolicy`` for UNAVAILABLE in its service config.
* ``Load``: ``games`` seeded games played concurrently. Every ApplyMove/Undo carries a
  ``request_id`` and an ``expected_version``; a retryable failure (UNAVAILABLE,
  DEADLINE_EXCEEDED) is retried by the player with the SAME request until it is answered
  (bounded in time), so each acknowledged reply is logged exactly once. Any other error fails.
* ``Load.verify()``: for every game, the stored event log (WatchGame from version 0) must be
  exactly the acknowledged mutations, in order (nothing lost, nothing applied twice), and
  GetGame must equal the last acknowledged reply.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import grpc.aio

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from server_launcher import START_TIMEOUT

from ..api.helpers import ROOT, ServerProcess, server_command

RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
SLOW_S = 0.25  # a call this slow is counted as waiting out an outage (normal calls take ms)
SERVICE = "accordion.v1.AccordionService"
SERVICE_CONFIG = {
    "loadBalancingConfig": [{"round_robin": {}}],
    "methodConfig": [
        {
            "name": [{"service": SERVICE}],
            # gRPC resends the same bytes (same request_id): safe for every method.
            "retryPolicy": {
                "maxAttempts": 3,
                "initialBackoff": "0.05s",
                "maxBackoff": "0.3s",
                "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE"],
            },
        }
    ],
}


def round_robin_channel(addrs: Sequence[str]) -> grpc.aio.Channel:
    target = "ipv4:" + ",".join(addrs)
    return grpc.aio.insecure_channel(
        target, options=[("grpc.service_config", json.dumps(SERVICE_CONFIG)), ("grpc.enable_retries", 1)]
    )


def start_servers(
    n: int, tmp: Path, env: dict[str, str], *args: str, timeout: float = START_TIMEOUT
) -> list[ServerProcess]:
    """``n`` accordion-server processes on free ports (``--listen 127.0.0.1:0``), started together."""
    base = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("ACCORDION_")}
    base["ACCORDION_NEWGAME_RATE"] = "0"  # many games from one address, as a load tool (docs/load.md)
    base["ACCORDION_WATCH_RATE"] = "0"  # (and many watches)
    procs = []
    for i in range(n):
        out_path, err_path = tmp / f"server{i}.out", tmp / f"server{i}.err"
        out, err = out_path.open("wb"), err_path.open("wb")
        proc = subprocess.Popen(
            [*server_command(), "--listen", "127.0.0.1:0", "--workers", "1", *args],
            stdout=out,
            stderr=err,
            env={**base, **env},
            cwd=ROOT,
        )
        procs.append(ServerProcess(proc, "", out_path, err_path, [out, err]))
    deadline = time.monotonic() + timeout
    try:
        for sp in procs:
            while not sp.addr:
                for line in sp.out_path.read_text(errors="replace").splitlines():
                    if line.startswith("accordion-server listening on "):
                        sp.addr = line.split()[3]
                if sp.addr:
                    break
                if sp.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"accordion-server did not start:\n{sp.output()}")
                time.sleep(0.05)
    except BaseException:
        for sp in procs:
            sp.close()
        raise
    return procs


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@dataclass(frozen=True)
class Ack:
    version: int
    kind: int  # pb.GameEvent.KIND_MOVE or KIND_UNDO
    notation: str
    at: float  # monotonic time of the acknowledgement


@dataclass
class Played:
    index: int
    game_id: str = ""
    token: str = ""
    game: pb.Game = field(default_factory=pb.Game)
    acked: list[Ack] = field(default_factory=list)
    failed_attempts: list[float] = field(default_factory=list)  # monotonic times
    # (first attempt, acknowledgement) of each call that failed at least once or took > SLOW_S
    waits: list[tuple[float, float]] = field(default_factory=list)


class Load:
    """``games`` games played at once through ``stub``; see the module docstring."""

    def __init__(
        self,
        stub: pb_grpc.AccordionServiceStub,
        *,
        games: int = 20,
        seed: int = 1,
        pace: float = 0.02,
        max_moves: int = 800,
        call_timeout: float = 3.0,
        give_up: float = 45.0,
    ) -> None:
        self.stub, self.pace, self.max_moves = stub, pace, max_moves
        self.call_timeout, self.give_up = call_timeout, give_up
        self.seed = seed
        self.played = [Played(i) for i in range(games)]
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def acked(self) -> int:
        return sum(len(p.acked) for p in self.played)

    async def _call(self, p: Played, method: str, request: object, metadata: object = None) -> object:
        """One request, retried unchanged on UNAVAILABLE/DEADLINE_EXCEEDED until answered."""
        first = time.monotonic()
        backoff, failed = 0.05, False
        while True:
            started = time.monotonic()
            try:
                call = getattr(self.stub, method)
                reply = await call(request, metadata=metadata, timeout=self.call_timeout)
            except grpc.aio.AioRpcError as exc:
                if exc.code() not in RETRYABLE:
                    why = f"{exc.code().name} {exc.details()}"
                    raise AssertionError(f"game {p.index} {method}: {why}") from None
                failed = True
                p.failed_attempts.append(started)
                if time.monotonic() - first > self.give_up:
                    why = f"still {exc.code().name} after {self.give_up} s"
                    raise AssertionError(f"game {p.index} {method}: {why}") from exc
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 0.4)
                continue
            done = time.monotonic()
            if failed or done - first > SLOW_S:
                p.waits.append((first, done))
            return reply

    async def start(self) -> None:
        """Create every game (NewGame with a request id, seeded deals), then start playing."""

        async def create(p: Played) -> None:
            request = pb.NewGameRequest(
                variant="accordion", seed=self.seed * 1000 + p.index, request_id=f"new-{self.seed}-{p.index}"
            )
            reply = await self._call(p, "NewGame", request)
            assert isinstance(reply, pb.NewGameResponse)
            p.game_id, p.token, p.game = reply.game.id, reply.token, reply.game

        await asyncio.gather(*(create(p) for p in self.played))
        self._tasks = [asyncio.create_task(self._play(p), name=f"game-{p.index}") for p in self.played]

    async def _play(self, p: Played) -> None:
        rng = random.Random(self.seed * 7919 + p.index)
        step = 0
        while not self._stop.is_set() and len(p.acked) < self.max_moves:
            step += 1
            rid = f"{p.game_id}-{step}"
            game = p.game
            if game.legal_moves and (not game.can_undo or rng.random() < 0.85):
                move = rng.choice(list(game.legal_moves))
                method, kind = "ApplyMove", pb.GameEvent.KIND_MOVE
                request: object = pb.ApplyMoveRequest(
                    game_id=p.game_id,
                    move=pb.Move(notation=move.notation),
                    expected_version=game.version,
                    request_id=rid,
                )
            elif game.can_undo:
                method, kind = "Undo", pb.GameEvent.KIND_UNDO
                request = pb.UndoRequest(game_id=p.game_id, expected_version=game.version, request_id=rid)
            else:
                return  # a dead deal with nothing to undo: this game is done
            reply = await self._call(p, method, request, bearer(p.token))
            assert isinstance(reply, (pb.ApplyMoveResponse, pb.UndoResponse))
            assert reply.game.version == game.version + 1, (p.index, game.version, reply.game.version)
            p.acked.append(Ack(reply.game.version, kind, reply.move.notation, time.monotonic()))
            p.game = reply.game
            await asyncio.sleep(self.pace)

    async def run_until(self, predicate: object, timeout: float) -> None:
        """Let the load run until ``predicate()`` is true (AssertionError after ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while not predicate():  # type: ignore[operator]
            for t in self._tasks:
                if t.done() and t.exception() is not None:
                    raise t.exception()  # type: ignore[misc]
            assert time.monotonic() < deadline, "the load did not get there in time"
            await asyncio.sleep(0.05)

    async def stop(self) -> None:
        """Each player finishes (or gives up on) its call in flight; errors are raised here."""
        self._stop.set()
        await asyncio.gather(*self._tasks)

    async def verify(self) -> int:
        """Every game's event log == its acknowledged mutations; returns how many were checked."""
        checked = 0
        for p in self.played:
            versions = [a.version for a in p.acked]
            assert versions == list(range(2, 2 + len(p.acked))), f"game {p.index}: acked versions {versions}"
            stream = self.stub.WatchGame(
                pb.WatchGameRequest(game_id=p.game_id, after_version=0), metadata=bearer(p.token), timeout=20
            )
            events = []
            try:
                while len(events) < len(p.acked):
                    events.append((await stream.read()).event)  # type: ignore[union-attr]
            except grpc.aio.AioRpcError as exc:
                raise AssertionError(
                    f"game {p.index}: the log has {len(events)} events, {len(p.acked)} were "
                    f"acknowledged ({exc.code()})"
                ) from None
            finally:
                stream.cancel()
            stored = [(e.version, e.kind, e.move.notation) for e in events]
            expected = [(a.version, a.kind, a.notation) for a in p.acked]
            assert stored == expected, f"game {p.index}: stored log differs from the acknowledged moves"
            final = await self.stub.GetGame(
                pb.GetGameRequest(game_id=p.game_id), metadata=bearer(p.token), timeout=10
            )
            assert final.game.version == 1 + len(p.acked), (
                f"game {p.index}: version {final.game.version}, {len(p.acked)} acknowledged: applied twice?"
            )
            assert final.game == p.game, f"game {p.index}: the stored game is not the last acknowledged one"
            checked += len(p.acked)
        return checked

    def report(self, since: float) -> dict[str, float | int]:
        """The outage as the client saw it, from ``since`` on (seconds).

        ``failed_attempts``: calls the client saw fail (after gRPC's own retries) and resent;
        ``delayed_calls``: calls that failed or took over SLOW_S before their acknowledgement;
        ``longest_wait_s``: the longest of those, first attempt to acknowledgement (how long a
        game could not move); ``outage_s``: the first delayed call's start to the last one's end.
        """
        fails = [t for p in self.played for t in p.failed_attempts if t >= since]
        waits = [(a, b) for p in self.played for a, b in p.waits if b >= since]
        return {
            "failed_attempts": len(fails),
            "delayed_calls": len(waits),
            "longest_wait_s": round(max((b - a for a, b in waits), default=0.0), 3),
            "outage_s": round((max(b for _, b in waits) - min(a for a, _ in waits)) if waits else 0.0, 3),
        }
