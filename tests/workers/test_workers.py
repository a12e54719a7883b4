"""``--workers N``: N processes on one port (SO_REUSEPORT) under a supervisor. Real processes,
a real Redis, real channels (each its own TCP connection, so the kernel spreads them)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc
import grpc.aio
import pytest

from accordion import engine
from accordion.config import Config, parse_args
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from accordion.workers import _cgroup_cpu_limit, available_cores, reserve_port, resolve_workers
from redis_server import RedisServer, free_port
from tests.api.helpers import ServerProcess, server_command

T = TypeVar("T")
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]  # no sharing of connections between channels


def logs(proc: ServerProcess) -> list[dict[str, Any]]:
    return [json.loads(line) for line in proc.log_lines()]


def worker_pids(proc: ServerProcess) -> list[int]:
    started = [e for e in logs(proc) if e["event"] == "started" and e.get("role") == "supervisor"]
    assert len(started) == 1 and started[0]["pid"] == proc.proc.pid
    return list(started[0]["worker_pids"])


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has exited, even if nobody reaped it yet


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def wait_until(predicate: Callable[[], bool], within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


def channel(addr: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(addr, options=OWN_CONNECTION)


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def test_workers_share_one_port_and_sigterm_drains_every_worker(
    spawn_server: Callable[..., ServerProcess], redis_url: str, redis_server: RedisServer
) -> None:
    metrics_port = free_port()
    proc = spawn_server(
        "--workers",
        "2",
        "--metrics-port",
        str(metrics_port),
        "--grace",
        "10",
        "--store-timeout",
        "8",
        "--health-interval",
        "60",
        env={"REDIS_URL": redis_url},
    )
    pids = worker_pids(proc)
    assert len(set(pids)) == 2 and all(parent_of(p) == proc.proc.pid for p in pids)

    channels = [channel(proc.addr) for _ in range(16)]
    try:
        replies = await asyncio.gather(
            *(
                pb_grpc.AccordionServiceStub(c).NewGame(
                    pb.NewGameRequest(variant="accordion", seed=i), timeout=10
                )
                for i, c in enumerate(channels)
            )
        )
        # Access lines are written in batches a few milliseconds apart: wait until all are there.
        deadline = time.monotonic() + 30  # polled: generous for a loaded machine, never slept out
        while True:
            served_by = {e["game_id"]: e["pid"] for e in logs(proc) if e["event"] == "rpc"}
            if all(r.game.id in served_by for r in replies) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.02)
        assert set(served_by[r.game.id] for r in replies) == set(pids), "both workers served connections"
        # Counted in the same batches, metrics first: once the lines are out the counts are in.
        # Scrape again for a little while all the same before failing.
        expected = 'accordion_rpc_total{code="OK",method="accordion.v1.AccordionService/NewGame"} 16.0'
        deadline = time.monotonic() + 30
        while True:
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as response:
                scraped = response.read().decode()
            if expected in scraped or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        assert expected in scraped, "one scrape sums every worker"

        # One call in flight on each worker (Redis paused, so they hang in the store), then SIGTERM.
        first = {}
        for c, r in zip(channels, replies, strict=True):
            first.setdefault(served_by[r.game.id], (c, r))
        assert redis_server.proc is not None
        redis_server.pause()
        try:
            in_flight = [
                asyncio.ensure_future(
                    pb_grpc.AccordionServiceStub(c).ApplyMove(
                        pb.ApplyMoveRequest(game_id=r.game.id, move=r.game.legal_moves[0]),
                        metadata=auth(r.token),
                        timeout=20,
                    )
                )
                for c, r in first.values()
            ]
            # Long enough for the calls to reach their workers over the open connections; the
            # paused calls then wait up to --store-timeout (8 s, also the connections' read
            # timeout), which the drain check below fits in.
            await asyncio.sleep(0.2)
            proc.proc.send_signal(signal.SIGTERM)
            await wait_until(
                lambda: sum(e["event"] == "stopping" for e in logs(proc)) == 3,
                5,
                "supervisor and workers stopping",
            )
            assert not any(f.done() for f in in_flight) and proc.proc.poll() is None, "draining, not dropping"
        finally:
            redis_server.resume()
        moved = await asyncio.wait_for(asyncio.gather(*in_flight), 15)
        assert [m.game.version for m in moved] == [2, 2], "each worker finished its in-flight call"
        assert await asyncio.to_thread(proc.proc.wait, 20) == 0
    finally:
        for c in channels:
            await c.close()
    stopped = [e for e in logs(proc) if e["event"] == "stopped"]
    assert {e["pid"] for e in stopped} == {*pids, proc.proc.pid}
    assert not any(alive(p) for p in pids)


# --- a worker killed mid-load ------------------------------------------------------------------


@dataclass
class Load:
    retries: int = 0
    acked: int = 0
    errors: list[str] = field(default_factory=list)


async def retrying(load: Load, call: Callable[[], Awaitable[T]], within: float = 30) -> T:
    """The same request (same request_id) again while the answer is UNAVAILABLE."""
    deadline = time.monotonic() + within
    while True:
        try:
            return await call()
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                load.errors.append(f"{exc.code().name}: {exc.details()}")
                raise
            load.retries += 1
            await asyncio.sleep(0.05)


async def play(addr: str, seed: int, moves: int, load: Load) -> tuple[str, str, list[str]]:
    """One game on its own connection: NewGame then up to ``moves`` moves, each idempotent."""
    async with channel(addr) as ch:
        stub = pb_grpc.AccordionServiceStub(ch)
        new = await retrying(
            load,
            lambda: stub.NewGame(
                pb.NewGameRequest(variant="accordion", seed=seed, request_id=f"new-{seed}"), timeout=10
            ),
        )
        game, acked = new.game, []
        for n in range(moves):
            if not game.legal_moves:
                break
            request = pb.ApplyMoveRequest(
                game_id=game.id,
                move=pb.Move(notation=game.legal_moves[n % len(game.legal_moves)].notation),
                expected_version=game.version,
                request_id=f"{game.id}:{n}",
            )
            reply = await retrying(
                load,
                lambda r=request: stub.ApplyMove(r, metadata=auth(new.token), timeout=10),  # type: ignore[misc]
            )
            acked.append(reply.move.notation)
            load.acked += 1
            game = reply.game
        return game.id, new.token, acked


async def test_a_worker_killed_mid_load_loses_no_game(
    spawn_server: Callable[..., ServerProcess], redis_url: str
) -> None:
    proc = spawn_server("--workers", "2", env={"REDIS_URL": redis_url})
    pids = worker_pids(proc)
    load, games, moves = Load(), 16, 30
    seeds = [7000 + i for i in range(games)]
    players = [asyncio.ensure_future(play(proc.addr, seed, moves, load)) for seed in seeds]
    await wait_until(lambda: load.acked >= 60 or all(p.done() for p in players), 30, "load under way")
    victim = pids[0]
    os.kill(victim, signal.SIGKILL)
    results = await asyncio.wait_for(asyncio.gather(*players), 90)
    assert not load.errors

    # The supervisor noticed and started a replacement on the same port.
    def restarted() -> bool:
        return any(e["event"] == "worker ready" for e in logs(proc))

    await wait_until(restarted, 30, "a replacement worker")
    died = [e for e in logs(proc) if e["event"] == "worker died; restarting it"]
    assert [(e["worker_pid"], e["cause"]) for e in died] == [(victim, "signal SIGKILL")]
    replacement = next(e["worker_pid"] for e in logs(proc) if e["event"] == "worker ready")
    assert replacement not in pids and alive(replacement) and alive(pids[1])

    # Every game is whole: as many moves as were acknowledged, and it replays through the engine.
    async with channel(proc.addr) as ch:
        stub = pb_grpc.AccordionServiceStub(ch)
        for seed, (game_id, token, acked) in zip(seeds, results, strict=True):
            stored = (
                await stub.GetGame(pb.GetGameRequest(game_id=game_id), metadata=auth(token), timeout=10)
            ).game
            assert stored.moves_played == len(acked) and stored.version == 1 + len(acked), game_id
            replayed = engine.new_game("accordion", seed=seed)
            for notation in acked:
                replayed.play(notation)
            assert stored.state == replayed.state_string(hide_stock=True), game_id
            assert stored.penalty == replayed.penalty
    assert sum(len(a) for _, _, a in results) == load.acked > 60
    assert load.retries >= 1, "the kill cut calls in flight (else this test proved little)"
    assert proc.terminate(timeout=30) == 0


# --- start-up, defaults, the parent's death -----------------------------------------------------


def test_a_worker_that_cannot_bind_stops_the_server_with_status_1(redis_url: str) -> None:
    with socket.socket() as taken:  # a plain listener (no SO_REUSEPORT): the workers cannot share it
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*server_command(), "--listen", f"127.0.0.1:{port}", "--workers", "2", "--redis-url", redis_url],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1, done.stderr
    assert "worker did not start" in done.stderr and "accordion-server listening" not in done.stdout


async def test_workers_die_with_the_supervisor(
    spawn_server: Callable[..., ServerProcess], redis_url: str
) -> None:
    proc = spawn_server("--workers", "2", "--grace", "30", env={"REDIS_URL": redis_url})
    pids = worker_pids(proc)
    proc.proc.kill()
    await wait_until(lambda: not any(alive(p) for p in pids), 5, "orphaned workers still running")
    assert not any(e["event"] == "stopping" for e in logs(proc)), "killed outright, like one process"


def test_the_worker_count_follows_the_store_and_the_cores(tmp_path: Path) -> None:
    assert resolve_workers(Config(redis_url="")) == 1, "the memory store lives in one process"
    assert resolve_workers(Config(redis_url="redis://h/0")) == available_cores()
    assert resolve_workers(Config(redis_url="redis://h/0", workers=3)) == 3
    assert 1 <= available_cores() <= len(os.sched_getaffinity(0))
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert _cgroup_cpu_limit(tmp_path) == 1.5  # a pod limited to 1.5 CPUs: 2 workers
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert _cgroup_cpu_limit(tmp_path) is None
    (tmp_path / "cpu.max").unlink()
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("300000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert _cgroup_cpu_limit(tmp_path) == 3.0
    with pytest.raises(SystemExit):
        parse_args(["--workers", "2"], env={})  # memory store: one process only
    assert parse_args(["--workers", "2"], env={"REDIS_URL": "redis://h/0"}).workers == 2


def test_port_zero_is_reserved_once_for_every_worker() -> None:
    listen, sock = reserve_port("127.0.0.1:0")
    assert sock is not None
    try:
        port = int(listen.rsplit(":", 1)[1])
        assert port > 0 and sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 1
        with socket.socket() as worker:  # what each worker's gRPC listener does
            worker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            worker.bind(("127.0.0.1", port))
            worker.listen()
    finally:
        sock.close()
    assert reserve_port("127.0.0.1:50051") == ("127.0.0.1:50051", None)
