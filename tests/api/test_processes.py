"""Real `accordion-server` processes: watching across replicas, a Redis outage, logs, SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from accordion.v1 import accordion_pb2 as pb
from redis_server import RedisServer, free_port
from server_launcher import clean_env, server_command

from .helpers import Client, ServerProcess, expect_error

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


async def health_of(client: Client) -> int:
    reply = await health_pb2_grpc.HealthStub(client.channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    return int(reply.status)


async def wait_for_health(client: Client, status: int, within: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while (now := await health_of(client)) != status:
        assert asyncio.get_running_loop().time() < deadline, f"health stayed {now}"
        await asyncio.sleep(0.1)


async def test_watch_game_sees_moves_made_through_another_process(
    spawn_server: Callable[..., ServerProcess], connect: Callable[[str], Client], redis_url: str
) -> None:
    a = connect(spawn_server(env={"REDIS_URL": redis_url}).addr)
    b = connect(spawn_server(env={"REDIS_URL": redis_url}).addr)
    game = (await a.new_game("accordion", seed=7)).game
    b.token = a.token
    stream = a.stub.WatchGame(pb.WatchGameRequest(game_id=game.id), metadata=auth(a.token), timeout=30)
    await asyncio.sleep(0.3)  # let the watcher block in XREAD before the first write
    replies = []
    current = game
    for _ in range(3):
        reply = await b.apply(game.id, current.legal_moves[0].notation)
        replies.append(reply)
        current = reply.game
    undone = await b.call("Undo", pb.UndoRequest(game_id=game.id))
    events = [(await asyncio.wait_for(stream.read(), 10)).event for _ in range(4)]
    assert [e.version for e in events] == [2, 3, 4, 5]
    assert [e.kind for e in events] == [pb.GameEvent.KIND_MOVE] * 3 + [pb.GameEvent.KIND_UNDO]
    assert [e.move for e in events] == [r.move for r in replies] + [undone.move]
    assert [e.game for e in events] == [r.game for r in replies] + [undone.game]
    assert all(e.move.notation and e.move.kind == pb.MOVE_KIND_STACK for e in events)
    stream.cancel()
    # A late watcher catches up from a version, through the other process.
    late = b.stub.WatchGame(
        pb.WatchGameRequest(game_id=game.id, after_version=3), metadata=auth(a.token), timeout=30
    )
    caught_up = [(await asyncio.wait_for(late.read(), 10)).event.version for _ in range(2)]
    assert caught_up == [4, 5]
    late.cancel()


async def test_a_redis_outage_is_unavailable_and_not_serving_then_recovers(
    spawn_server: Callable[..., ServerProcess], connect: Callable[[str], Client]
) -> None:
    with RedisServer(appendonly=True, appendfsync="always") as redis:  # the game survives the restart
        proc = spawn_server(
            "--health-interval", "0.2", "--store-timeout", "1.5", env={"REDIS_URL": redis.url}
        )
        client = connect(proc.addr)
        await wait_for_health(client, SERVING)
        game = (await client.new_game("accordion", seed=7)).game
        game = (await client.apply(game.id, game.legal_moves[0].notation)).game
        watch = client.stub.WatchGame(
            pb.WatchGameRequest(game_id=game.id, after_version=2), metadata=auth(client.token), timeout=60
        )
        await asyncio.sleep(0.3)

        redis.stop()
        await expect_error(
            client.apply(game.id, game.legal_moves[0].notation, expected_version=2),
            grpc.StatusCode.UNAVAILABLE,
            "STORE_UNAVAILABLE",
        )
        for method, request in (
            ("GetGame", pb.GetGameRequest(game_id=game.id)),
            ("Score", pb.ScoreRequest(game_id=game.id)),
        ):
            await expect_error(client.call(method, request), grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
        await expect_error(
            client.new_game("accordion", seed=1), grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE"
        )
        await wait_for_health(client, NOT_SERVING)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await asyncio.wait_for(watch.read(), 15)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert proc.proc.poll() is None, "the server rides out the outage"

        redis.start()
        await wait_for_health(client, SERVING)
        assert (await client.get(game.id)) == game, "the game is where it was"
        moved = await client.apply(game.id, game.legal_moves[0].notation, expected_version=2)
        assert moved.game.version == 3
    # The access lines carry the reason the client got (issue 34), never the error's message or details.
    assert '"reason": "STORE_UNAVAILABLE"' in proc.output()
    assert "the game store did not answer" not in proc.output(), "error messages are not logged"
    assert '"store unreachable"' in proc.output() and '"store reachable"' in proc.output()


async def test_logs_are_json_per_rpc_and_never_contain_a_token(
    spawn_server: Callable[..., ServerProcess], connect: Callable[[str], Client]
) -> None:
    metrics_port = free_port()
    proc = spawn_server("--log-level", "debug", "--metrics-port", str(metrics_port))
    client = connect(proc.addr)
    dealt = await client.new_game("accordion", seed=7)
    game = dealt.game
    tokens = [client.token, dealt.watch_token]
    idem = await client.stub.NewGame(pb.NewGameRequest(variant="accordion", request_id="log-test"), timeout=5)
    again = await client.stub.NewGame(
        pb.NewGameRequest(variant="accordion", request_id="log-test"), timeout=5
    )
    assert again.token == idem.token
    tokens.append(idem.token)
    # The watch token: used, refused a move, and rotated (issue 29); neither token is logged.
    await client.call("GetGame", pb.GetGameRequest(game_id=game.id), token=dealt.watch_token)
    await expect_error(
        client.call("Undo", pb.UndoRequest(game_id=game.id), token=dealt.watch_token),
        grpc.StatusCode.PERMISSION_DENIED,
    )
    rotated = await client.call("ShareGame", pb.ShareGameRequest(game_id=game.id, rotate_watch_token=True))
    tokens.append(rotated.watch_token)
    await client.call("GetGame", pb.GetGameRequest(game_id=game.id), token=rotated.watch_token)
    await client.apply(game.id, game.legal_moves[0].notation)
    await client.call("Hint", pb.HintRequest(game_id=game.id))
    await expect_error(
        client.call("GetGame", pb.GetGameRequest(game_id=game.id), token=idem.token),
        grpc.StatusCode.NOT_FOUND,
    )
    await expect_error(
        client.call("GetGame", pb.GetGameRequest(game_id=game.id), token=""), grpc.StatusCode.UNAUTHENTICATED
    )
    await expect_error(client.apply(game.id, "nonsense"), grpc.StatusCode.INVALID_ARGUMENT)
    watch = client.stub.WatchGame(
        pb.WatchGameRequest(game_id=game.id), metadata=auth(client.token), timeout=5
    )
    assert (await watch.read()).event.version == 2
    watch.cancel()
    # Calls are counted in batches a few milliseconds after they end: scrape until they are.
    expected = [
        'accordion_rpc_total{code="OK",method="accordion.v1.AccordionService/NewGame"} 3.0',
        'accordion_rpc_errors_total{code="NOT_FOUND",method="accordion.v1.AccordionService/GetGame",'
        'reason="GAME_NOT_FOUND"} 1.0',
    ]
    deadline = asyncio.get_running_loop().time() + 5
    while True:
        metrics = await asyncio.to_thread(scrape, f"http://127.0.0.1:{metrics_port}/metrics")
        if all(e in metrics for e in expected) or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.02)
    for e in expected:
        assert e in metrics
    assert "accordion_rpc_latency_seconds_bucket" in metrics and "accordion_store_errors_total" in metrics
    deadline = asyncio.get_running_loop().time() + 5
    while '"WatchGame", "game_id"' not in proc.output().replace("accordion.v1.AccordionService/", ""):
        assert asyncio.get_running_loop().time() < deadline, "the cancelled stream was logged"
        await asyncio.sleep(0.05)
    assert proc.terminate() == 0

    output = proc.output()
    for token in tokens:
        assert token not in output
    lines = [json.loads(line) for line in proc.log_lines()]
    rpcs = [line for line in lines if line["event"] == "rpc"]
    by_method = {(r["method"].rsplit("/", 1)[1], r["code"]) for r in rpcs}
    assert {
        ("NewGame", "OK"),
        ("ApplyMove", "OK"),
        ("Hint", "OK"),
        ("GetGame", "NOT_FOUND"),
        ("GetGame", "UNAUTHENTICATED"),
        ("ApplyMove", "INVALID_ARGUMENT"),
        ("WatchGame", "CANCELLED"),
    } <= by_method
    for r in rpcs:
        assert set(r) >= {"method", "game_id", "code", "latency_ms", "level", "timestamp"}
        assert isinstance(r["latency_ms"], float | int) and r["latency_ms"] >= 0
    assert all(
        r["game_id"] == game.id for r in rpcs if r["method"].endswith(("ApplyMove", "Hint", "WatchGame"))
    )
    assert any(r["game_id"] == idem.game.id for r in rpcs if r["method"].endswith("NewGame"))


async def test_sigterm_drains_in_flight_calls_with_health_not_serving(
    spawn_server: Callable[..., ServerProcess],
    connect: Callable[[str], Client],
    redis_url: str,
    redis_server: RedisServer,
) -> None:
    proc = spawn_server(
        "--grace", "10", "--store-timeout", "8", "--health-interval", "60", env={"REDIS_URL": redis_url}
    )
    client = connect(proc.addr)
    game = (await client.new_game("accordion", seed=7)).game
    health = health_pb2_grpc.HealthStub(client.channel).Watch(health_pb2.HealthCheckRequest(), timeout=30)
    assert (await health.read()).status == SERVING
    assert redis_server.proc is not None
    redis_server.proc.send_signal(signal.SIGSTOP)  # the next call hangs in the store...
    try:
        in_flight = asyncio.ensure_future(client.apply(game.id, game.legal_moves[0].notation))
        await asyncio.sleep(0.5)
        proc.proc.send_signal(signal.SIGTERM)  # ...while the server is told to stop
        assert (await asyncio.wait_for(health.read(), 5)).status == NOT_SERVING
        health.cancel()  # a stream left open would hold the server for the whole grace period
        # Health says NOT_SERVING just before the server stops taking calls: on a loaded machine
        # a call may still slip into that gap (and then waits on the stopped store until its
        # deadline), so ask again until the server refuses; it must within a few tries.
        codes = []
        for _ in range(10):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await client.call("Score", pb.ScoreRequest(game_id=game.id), timeout=2)
            codes.append(caught.value.code())
            if codes[-1] is not grpc.StatusCode.DEADLINE_EXCEEDED:
                break
        assert codes[-1] == grpc.StatusCode.UNAVAILABLE, f"new calls are refused while draining: {codes}"
        assert not in_flight.done()
    finally:
        redis_server.proc.send_signal(signal.SIGCONT)
    reply = await asyncio.wait_for(in_flight, 10)
    assert reply.game.version == 2, "the in-flight call finished"
    assert await asyncio.to_thread(proc.proc.wait, 15) == 0
    assert '"stopping"' in proc.output() and '"stopped"' in proc.output()


# --- the command line ------------------------------------------------------------------------


@pytest.mark.parametrize("script", ["accordion-server", "accordion-health"])
def test_both_scripts_print_their_version(script: str) -> None:
    from importlib.metadata import version

    done = subprocess.run(
        [str(Path(sys.executable).parent / script), "--version"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{script} {version('accordion-service')}"


def test_python_dash_m_accordion_is_the_server(spawn_server: Callable[..., ServerProcess]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "accordion", "--version"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0 and done.stdout.startswith("accordion-server "), done.stderr


@pytest.mark.parametrize("workers", [None, "1"])
def test_a_busy_port_is_one_clear_line_and_a_failure(
    spawn_server: Callable[..., ServerProcess], workers: str | None
) -> None:
    first = spawn_server()
    port = first.addr.rsplit(":", 1)[1]
    args = ["--listen", f"127.0.0.1:{port}", *(["--workers", workers] if workers else [])]
    done = subprocess.run(
        [*server_command(), *args], capture_output=True, text=True, timeout=30, env=clean_env()
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"accordion-server: cannot listen on 127.0.0.1:{port}: the address is in use (is another server "
        "running?); pick another port with --listen"
    ], done.stderr
    assert first.proc.poll() is None, "the server holding the port keeps serving"


def test_a_busy_port_under_workers_is_told_once_without_a_traceback(
    spawn_server: Callable[..., ServerProcess], redis_url: str
) -> None:
    first = spawn_server()
    port = first.addr.rsplit(":", 1)[1]
    done = subprocess.run(
        [*server_command(), "--listen", f"127.0.0.1:{port}", "--workers", "2", "--redis-url", redis_url],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    assert done.returncode == 1
    told = [line for line in done.stderr.splitlines() if not line.startswith("{")]
    assert told == [
        f"accordion-server: cannot listen on 127.0.0.1:{port}: the address is in use (is another server "
        "running?); pick another port with --listen"
    ], done.stderr
    assert "Traceback" not in done.stderr


def test_a_busy_health_port_is_one_clear_line_too(spawn_server: Callable[..., ServerProcess]) -> None:
    first = spawn_server()
    port = first.addr.rsplit(":", 1)[1]
    done = subprocess.run(
        [*server_command(), "--listen", "127.0.0.1:0", "--health-port", port],
        capture_output=True,
        text=True,
        timeout=30,
        env=clean_env(),
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"accordion-server: cannot listen on 127.0.0.1:{port} (--health-port): the address is in use "
        "(is another server running?); pick another port with --listen"
    ], done.stderr
