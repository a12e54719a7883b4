"""bench/hostile.py's attacker: a child process (``bench/hostile.py --attack ROW ...``) whose clients
each reach the server from their own loopback address, through a TCP relay (gRPC's Python
client cannot bind a channel's source address), and do one row's abuse.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2
from hostile_calls import GET_GAME, HEALTH_CHECK, accordion_stub, health_stub, percentile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))

from accordion.v1 import accordion_pb2 as pb  # noqa: E402

# --- the relay: one attacker client, one loopback source address -----------------------------------


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:  # one side gone: the other goes too (HTTP/2 has no use for a half-closed TCP)
        writer.close()


async def start_relay(
    target: tuple[str, int], source: str, open_writers: set[asyncio.StreamWriter]
) -> tuple[asyncio.Server, int]:
    """A listener on 127.0.0.1 whose connections go on to ``target`` from address ``source``;
    each connection's two writers are kept in ``open_writers`` while it lasts."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*target, local_addr=(source, 0))
        except OSError:
            writer.close()
            return
        pair = {writer, up_writer}
        open_writers.update(pair)
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except asyncio.CancelledError:  # the attacker's end: its connections simply close
            for w in pair:
                w.close()
        finally:
            open_writers.difference_update(pair)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def source_address(i: int) -> str:
    """The i-th attacker client's address: 127.0.0.2, 127.0.0.3, … (127.0.0.1 is the honest one)."""
    n = i + 2
    return f"127.0.{n // 256}.{n % 256}"


# --- the attacker (a child process: bench/hostile.py --attack ROW ...) ----------------------------


class Attacker:
    def __init__(self, addr: str, duration: float, params: dict[str, Any]) -> None:
        host, _, port = addr.rpartition(":")
        self.target = (host, int(port))
        self.duration, self.params = duration, params
        self.relays: list[asyncio.Server] = []
        self.open_writers: set[asyncio.StreamWriter] = set()
        self.channels: list[grpc.aio.Channel] = []
        self.counts: Counter[str] = Counter()
        self.latencies: list[float] = []
        self.end = 0.0

    async def clients(self, n: int) -> list[grpc.aio.Channel]:
        for i in range(n):
            relay, port = await start_relay(self.target, source_address(i), self.open_writers)
            self.relays.append(relay)
            self.channels.append(
                grpc.aio.insecure_channel(
                    f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
                )
            )
        await asyncio.gather(*(asyncio.wait_for(c.channel_ready(), 10) for c in self.channels))
        return self.channels

    def running(self) -> bool:
        return time.monotonic() < self.end

    async def run(self, row: str) -> dict[str, Any]:
        setup = getattr(self, "setup_" + row.replace("-", "_"), None)
        if setup is not None:
            prepared = await setup()
        else:  # its clients' connections up before the attack starts
            prepared = await self.clients(self.params.get("clients", 1))
        print("attacking", flush=True)
        self.end = time.monotonic() + self.duration
        started = time.monotonic()
        try:  # at the end, calls still out (a long Solve) are cancelled: the attacker leaves
            await asyncio.wait_for(
                getattr(self, "attack_" + row.replace("-", "_"))(prepared), self.duration + 0.2
            )
        except TimeoutError:
            self.counts["cancelled_at_end"] += 1
        took = time.monotonic() - started
        await asyncio.gather(*(c.close() for c in self.channels))
        for relay in self.relays:
            relay.close()
        for writer in list(self.open_writers):  # the attacker leaves: every connection closes now
            writer.close()
        await asyncio.sleep(0.1)
        out: dict[str, Any] = {"seconds": round(took, 2), "counts": dict(self.counts)}
        if self.latencies:
            out["p50_ms"] = round(percentile(self.latencies, 50) * 1000, 1)
            out["p99_ms"] = round(percentile(self.latencies, 99) * 1000, 1)
        return out

    async def _game(
        self, stub: Any, variant: str = "accordion", options: dict[str, str] | None = None, seed: int = 1
    ) -> tuple[pb.Game, tuple[tuple[str, str], ...]]:
        reply = await stub.NewGame(
            pb.NewGameRequest(variant=variant, options=options or {}, seed=seed), timeout=10
        )
        return reply.game, (("authorization", f"Bearer {reply.token}"),)

    # 1: WatchGame cancelled right after its first event, 4 at a time per client
    async def setup_watch_cancel_leak(self) -> list[tuple[Any, str, Any]]:
        out = []
        for i, channel in enumerate(await self.clients(self.params.get("clients", 8))):
            stub = accordion_stub(channel)
            game, md = await self._game(stub, seed=100 + i)
            move = pb.ApplyMoveRequest(
                game_id=game.id, move=game.legal_moves[0], expected_version=game.version
            )
            await stub.ApplyMove(move, metadata=md, timeout=10)  # version 1: a first event to send at once
            out.append((stub, game.id, md))
        return out

    async def attack_watch_cancel_leak(self, games: list[tuple[Any, str, Any]]) -> None:
        async def one(stub: Any, game_id: str, md: Any) -> None:
            while self.running():
                call = stub.WatchGame(
                    pb.WatchGameRequest(game_id=game_id, after_version=0), metadata=md, timeout=10
                )
                try:
                    await call.read()
                    self.counts["first_event_then_cancel"] += 1
                except grpc.aio.AioRpcError as exc:
                    self.counts[exc.code().name] += 1
                    await asyncio.sleep(0.01)
                finally:
                    call.cancel()

        per_client = self.params.get("per_client", 4)
        await asyncio.gather(*(one(*g) for g in games for _ in range(per_client)))

    # 2: health Watch streams and half-sent calls held open
    async def attack_health_watch_flood(self, channels: list[grpc.aio.Channel]) -> None:

        async def watch(channel: grpc.aio.Channel) -> None:
            stub = health_stub(channel)
            while self.running():
                call = stub.Watch(
                    health_pb2.HealthCheckRequest(service=""), timeout=self.end - time.monotonic()
                )
                try:
                    await call.read()
                    self.counts["watch_held"] += 1
                    await call.read()  # the next change: never, until the deadline
                except grpc.aio.AioRpcError as exc:
                    self.counts[f"watch_{exc.code().name}"] += 1
                    await asyncio.sleep(0.05)
                finally:
                    call.cancel()

        async def half_sent(channel: grpc.aio.Channel, method: str, label: str) -> None:
            multi = channel.stream_unary(
                method, request_serializer=lambda b: b, response_deserializer=lambda b: b
            )
            while self.running():
                call = multi(timeout=max(0.1, self.end - time.monotonic()))  # headers only: no message
                try:
                    await call.wait_for_connection()
                    self.counts[f"{label}_sent"] += 1
                    await call
                except grpc.aio.AioRpcError as exc:
                    self.counts[f"{label}_{exc.code().name}"] += 1
                    await asyncio.sleep(0.05)
                finally:
                    call.cancel()

        tasks = []
        for channel in channels:
            tasks += [watch(channel) for _ in range(10)]
            tasks += [half_sent(channel, HEALTH_CHECK, "half_check") for _ in range(10)]
            tasks += [half_sent(channel, GET_GAME, "half_getgame") for _ in range(5)]
        await asyncio.gather(*tasks)

    # 3: Solve on a solved game, again and again
    async def attack_cached_solve(self, channels: list[grpc.aio.Channel]) -> None:
        md = (("authorization", f"Bearer {self.params['token']}"),)
        request = pb.SolveRequest(game_id=self.params["game_id"])

        async def one(channel: grpc.aio.Channel) -> None:
            stub = accordion_stub(channel)
            while self.running():
                t0 = time.perf_counter()
                try:
                    reply = await stub.Solve(request, metadata=md, timeout=10)
                    self.counts["cached" if reply.cached else pb.SolveOutcome.Name(reply.outcome)] += 1
                    self.latencies.append(time.perf_counter() - t0)
                except grpc.aio.AioRpcError as exc:
                    self.counts[exc.code().name] += 1
                    await asyncio.sleep(0.01)

        await asyncio.gather(*(one(c) for c in channels))

    # 4 and 5: Solves that take long, from one client (4 at a time) or from 48
    async def _solve_loop(self, stub: Any, variant: str, options: dict[str, str], seeds: range) -> None:
        for seed in seeds:
            if not self.running():
                return
            try:
                game, md = await self._game(stub, variant, options, seed)
                t0 = time.perf_counter()
                reply = await stub.Solve(pb.SolveRequest(game_id=game.id), metadata=md, timeout=30)
                self.latencies.append(time.perf_counter() - t0)
                self.counts[pb.SolveOutcome.Name(reply.outcome)] += 1
            except grpc.aio.AioRpcError as exc:
                self.counts[exc.code().name] += 1
                await asyncio.sleep(0.05)

    async def attack_solver_hog(self, channels: list[grpc.aio.Channel]) -> None:
        (channel,) = channels
        stub = accordion_stub(channel)
        spider4 = {"suits": "4", "open": "true"}  # most deals: no answer within the server's limit
        await asyncio.gather(
            *(
                self._solve_loop(stub, "spider", spider4, range(1000 * k + 1, 1000 * k + 999))
                for k in range(self.params.get("long_solves", 4))
            )
        )

    async def attack_solver_48_clients(self, channels: list[grpc.aio.Channel]) -> None:
        await asyncio.gather(
            *(
                self._solve_loop(
                    accordion_stub(c), "klondike", {"open": "true"}, range(1000 * k + 1, 1000 * k + 999)
                )
                for k, c in enumerate(channels)
            )
        )

    # 6: NewGame as fast as the server answers
    async def attack_newgame_flood(self, channels: list[grpc.aio.Channel]) -> None:
        (channel,) = channels
        stub = accordion_stub(channel)
        request = pb.NewGameRequest(variant="accordion")

        async def one() -> None:
            while self.running():
                try:
                    await stub.NewGame(request, timeout=10)
                    self.counts["OK"] += 1
                except grpc.aio.AioRpcError as exc:
                    self.counts[exc.code().name] += 1

        await asyncio.gather(*(one() for _ in range(self.params.get("concurrency", 16))))


def attacker_main(row: str, addr: str, duration: float, params: str) -> None:
    result = asyncio.run(Attacker(addr, duration, json.loads(params)).run(row))
    print("result " + json.dumps(result), flush=True)
