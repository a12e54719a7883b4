"""One hostile client cannot deny the service to everyone else (issue 14, the server's part).

Real processes: the server (tests/server_launcher.py) and the attacker (tests/security/
hostile.py) each run as their own process; a second client in this process checks health and
reads its game throughout, and must succeed >= 99 % of the time and never wait as long as the
attack holds a call (the issue's 50 ms p99 is bench/hostile.py's figure, on a quiet machine).
Each test prints its figures (``pytest -s`` shows them).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from accordion.api.apikeys import hash_key
from accordion.api.errors import ApiError
from accordion.api.limits import Admission, Limits, client_of
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from server_launcher import ROOT, ServerProcess
from tests.api.helpers import expect_error

HOSTILE = Path(__file__).with_name("hostile.py")
PROBE_SECONDS = 4.0
PROBE_TIMEOUT = 10.0  # a probe's deadline: a loaded machine's slow answer is measured, not lost
# A probe denied by the attack waits for one of the held calls to end: at least the 5 s of the
# shortest --request-timeout here. 3 s is 60x what a quiet machine needs (50 ms) and under that.
STUCK = 3.0
MIN_PROBES = 20


@dataclass
class Probes:
    """What the second client saw: one entry per call, (kind, ok, seconds)."""

    calls: list[tuple[str, bool, float]] = field(default_factory=list)

    def ok_ratio(self) -> float:
        return sum(ok for _, ok, _ in self.calls) / len(self.calls)

    def p99(self) -> float:
        times = sorted(t for _, _, t in self.calls)
        return times[min(len(times) - 1, int(len(times) * 0.99))]

    def summary(self) -> str:
        kinds = ", ".join(sorted({k for k, _, _ in self.calls}))
        times = sorted(t for _, _, t in self.calls)
        return (
            f"{len(self.calls)} calls ({kinds}): {self.ok_ratio() * 100:.2f} % ok, "
            f"p50 {times[len(times) // 2] * 1e3:.1f} ms, p99 {self.p99() * 1e3:.1f} ms, max "
            f"{times[-1] * 1e3:.1f} ms"
        )


async def new_game(addr: str, metadata: Any = None) -> tuple[str, str]:
    async with grpc.aio.insecure_channel(addr) as channel:
        reply = await pb_grpc.AccordionServiceStub(channel).NewGame(
            pb.NewGameRequest(variant="accordion", seed=7), metadata=metadata, timeout=10
        )
    return reply.game.id, reply.token


async def probe(addr: str, game: tuple[str, str], seconds: float, api_key: str = "") -> Probes:
    """Health Check and GetGame, one after the other, on a connection of their own."""
    probes = Probes()
    extra = (("x-api-key", api_key),) if api_key else ()
    async with grpc.aio.insecure_channel(addr) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        stub = pb_grpc.AccordionServiceStub(channel)
        await channel.channel_ready()
        # At least `seconds`, and at least MIN_PROBES calls (a loaded machine answers slowly),
        # while the attacker holds its calls (until Attacker.summary); at most 20 s more, well
        # inside the 30 s --request-timeout that would end the attacker's half-sent calls.
        end, give_up = time.monotonic() + seconds, time.monotonic() + seconds + 20
        while (time.monotonic() < end or len(probes.calls) < MIN_PROBES) and time.monotonic() < give_up:
            for kind in ("health", "GetGame"):
                started = time.perf_counter()
                try:
                    if kind == "health":
                        reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=PROBE_TIMEOUT)
                        ok = reply.status == health_pb2.HealthCheckResponse.SERVING
                    else:
                        got = await stub.GetGame(
                            pb.GetGameRequest(game_id=game[0]),
                            metadata=(("authorization", f"Bearer {game[1]}"), *extra),
                            timeout=PROBE_TIMEOUT,
                        )
                        ok = got.game.id == game[0]
                except grpc.aio.AioRpcError:
                    ok = False
                probes.calls.append((kind, ok, time.perf_counter() - started))
    return probes


class Attacker:
    """tests/security/hostile.py as a process: started, then its summary once it is done."""

    def __init__(self, mode: str, addr: str, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HOSTILE), mode, addr, *args, "--until-told"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            self.proc.kill()
            raise AssertionError(f"the attacker did not start: {line}\n{self.proc.communicate()[1]}")

    def summary(self, timeout: float = 300) -> dict[str, Any]:
        """Ends the attack (it holds its calls until told: whatever the test checks while they
        are held is checked under attack, however slow the machine) and reads its summary."""
        out, err = self.proc.communicate("stop\n", timeout=timeout)
        assert self.proc.returncode == 0, err
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def refused(summary: dict[str, Any]) -> int:
    """Calls the server refused itself (RESOURCE_EXHAUSTED CAPACITY_EXCEEDED)."""
    return int(summary["ended"].get("RESOURCE_EXHAUSTED/CAPACITY_EXCEEDED", 0))


def assert_served(probes: Probes, what: str) -> None:
    print(f"\n{what}: second client {probes.summary()}")
    # Served means answered, nearly always, and never stuck behind the attack (STUCK): the counts
    # and the bound hold on a loaded machine (make test runs four workers on two cores). How fast
    # the answers are under abuse is bench/hostile.py's business (docs/performance/hostile.md), not a test's.
    assert len(probes.calls) >= MIN_PROBES, probes.summary()
    assert probes.ok_ratio() >= 0.99, probes.summary()
    assert probes.p99() < STUCK, probes.summary()


async def test_1000_half_sent_calls_on_one_connection_leave_health_and_other_clients_served(
    spawn_server: Callable[..., ServerProcess],
) -> None:
    server = spawn_server("--request-timeout", "5", "--log-level", "warning")
    game = await new_game(server.addr)
    attacker = Attacker("half-sent", server.addr, "--calls", "1000", "--connections", "1", "--seconds", "8")
    try:
        await asyncio.sleep(0.5)  # every call started: the connection's streams are open
        probes = await probe(server.addr, game, PROBE_SECONDS)
        summary = attacker.summary()
    finally:
        attacker.close()
    print(f"attacker: {summary}")
    assert_served(probes, "1,000 half-sent calls on one connection")
    # The server held at most one connection's streams, and timed them out (its own status).
    ended = summary["ended"]
    assert "OK" not in ended
    assert ended.get("DEADLINE_EXCEEDED/DEADLINE_EXCEEDED", 0) >= 100, summary
    assert summary["open"] + sum(ended.values()) == 1000


async def test_1000_watch_streams_from_one_client_leave_health_and_other_clients_served(
    spawn_server: Callable[..., ServerProcess],
) -> None:
    server = spawn_server("--log-level", "warning")
    game = await new_game(server.addr)
    attacker = Attacker("watch", server.addr, "--calls", "1000", "--connections", "1", "--seconds", "6")
    try:
        await asyncio.sleep(0.5)
        probes = await probe(server.addr, game, PROBE_SECONDS)
        summary = attacker.summary()
    finally:
        attacker.close()
    print(f"attacker: {summary}")
    assert_served(probes, "1,000 WatchGame streams on one game, one connection")
    assert summary["open"] == 16, summary  # --max-watches-per-connection
    assert refused(summary) >= 1 and summary["retry_info"].get("RESOURCE_EXHAUSTED") == refused(summary)
    # The rest never reached the server: HTTP/2 refused streams beyond the connection's limit.
    assert set(summary["ended"]) <= {"RESOURCE_EXHAUSTED/CAPACITY_EXCEEDED"} | {
        k for k in summary["ended"] if k.startswith("UNAVAILABLE/Stream removed")
    }, summary


async def test_watchers_of_one_game_are_capped_across_connections(
    spawn_server: Callable[..., ServerProcess],
) -> None:
    server = spawn_server("--log-level", "warning", "--max-watches-per-game", "24")
    attacker = Attacker("watch", server.addr, "--calls", "64", "--connections", "4", "--seconds", "3")
    try:
        summary = attacker.summary()
    finally:
        attacker.close()
    assert summary["open"] == 24, summary  # 4 connections could hold 64; the game holds 24
    assert refused(summary) == 40 and summary["retry_info"] == {"RESOURCE_EXHAUSTED": 40}, summary


async def test_one_client_cannot_take_the_server_across_connections(
    spawn_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    """With API keys a client is its key: 4 connections of one key hold at most its share."""
    keys = tmp_path / "keys.json"
    entries = [{"name": name, "sha256": hash_key(f"k-{name}")} for name in ("attacker", "player")]
    keys.write_text(json.dumps({"keys": entries}))
    server = spawn_server(
        "--log-level",
        "warning",
        "--api-keys-file",
        str(keys),
        "--max-rpcs-per-client",
        "50",
        "--request-timeout",
        "30",
    )
    game = await new_game(server.addr, (("x-api-key", "k-player"),))
    attacker = Attacker(
        "half-sent",
        server.addr,
        "--calls",
        "200",
        "--connections",
        "4",
        "--seconds",
        "6",
        "--api-key",
        "k-attacker",
    )
    try:
        await asyncio.sleep(0.5)
        probes = await probe(server.addr, game, PROBE_SECONDS - 1, api_key="k-player")
        summary = attacker.summary()
    finally:
        attacker.close()
    print(f"attacker: {summary}")
    assert_served(probes, "200 half-sent calls of one API key over 4 connections")
    assert summary["open"] == 50, summary
    assert refused(summary) == 150 and summary["retry_info"] == {"RESOURCE_EXHAUSTED": 150}, summary


async def test_one_address_cannot_take_the_server_nor_health(
    spawn_server: Callable[..., ServerProcess],
) -> None:
    """Without API keys a client is its IP address. Served on [::], the attacker comes from
    127.0.0.1 (::ffff:127.0.0.1) and the second client from ::1: two clients on one machine."""
    server = spawn_server(
        "--listen",
        "[::]:0",
        "--log-level",
        "warning",
        "--max-rpcs-per-client",
        "50",
        "--request-timeout",
        "30",
    )
    port = server.addr.rsplit(":", 1)[1]
    game = await new_game(f"[::1]:{port}")
    calls = Attacker(
        "half-sent", f"127.0.0.1:{port}", "--calls", "200", "--connections", "4", "--seconds", "6"
    )
    checks = Attacker(
        "half-sent",
        f"127.0.0.1:{port}",
        "--calls",
        "100",
        "--connections",
        "1",
        "--seconds",
        "6",
        "--method",
        "/grpc.health.v1.Health/Check",
    )
    try:
        await asyncio.sleep(0.5)
        probes = await probe(f"[::1]:{port}", game, PROBE_SECONDS - 1)
        summary, health_summary = calls.summary(), checks.summary()
    finally:
        calls.close()
        checks.close()
    print(f"attacker: {summary}; its health calls: {health_summary}")
    assert_served(probes, "one address's 200 half-sent calls (4 connections) and 100 half-sent health checks")
    assert summary["open"] == 50 and refused(summary) == 150, summary
    assert health_summary["open"] == 10 and refused(health_summary) == 90, (
        health_summary
    )  # health's per client


async def test_health_has_a_budget_of_its_own(spawn_server: Callable[..., ServerProcess]) -> None:
    """Every call slot of the server taken: health still answers; other calls are refused."""
    server = spawn_server(
        "--log-level",
        "warning",
        "--max-concurrent-rpcs",
        "20",
        "--max-rpcs-per-client",
        "0",
        "--request-timeout",
        "30",
    )
    game = await new_game(server.addr)
    attacker = Attacker("half-sent", server.addr, "--calls", "60", "--connections", "1", "--seconds", "4")
    try:
        await asyncio.sleep(0.5)
        async with grpc.aio.insecure_channel(server.addr) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for _ in range(20):
                reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=PROBE_TIMEOUT)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
            err = await expect_error(
                pb_grpc.AccordionServiceStub(channel).GetGame(
                    pb.GetGameRequest(game_id=game[0]),
                    metadata=(("authorization", f"Bearer {game[1]}"),),
                    timeout=PROBE_TIMEOUT,
                ),
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "CAPACITY_EXCEEDED",
            )
            assert err.info.metadata["limit"] == "calls on this server" and err.info.metadata["max"] == "20"
        summary = attacker.summary()
    finally:
        attacker.close()
    assert summary["open"] == 20 and refused(summary) == 40, summary


# --- the counters themselves ------------------------------------------------------------------


def test_admission_counts_in_and_out_and_refuses_with_nothing_counted() -> None:
    admission = Admission(
        Limits(
            max_calls=3,
            max_calls_per_client=2,
            max_health_calls=2,
            max_health_calls_per_client=1,
            max_watches_per_connection=1,
            max_watches_per_game=2,
        )
    )
    admission.enter_call(False, "a")
    admission.enter_call(False, "a")
    with pytest.raises(ApiError) as caught:
        admission.enter_call(False, "a")
    assert getattr(caught.value, "reason", "") == "CAPACITY_EXCEEDED"
    admission.enter_call(False, "b")
    with pytest.raises(ApiError):
        admission.enter_call(False, "c")  # the server's 3 are taken
    admission.enter_call(True, "c")  # health apart
    with pytest.raises(ApiError):
        admission.enter_call(True, "c")  # one health call per client
    admission.enter_call(True, "d")
    with pytest.raises(ApiError):
        admission.enter_call(True, "e")  # health's 2 are taken
    assert (admission.calls, admission.by_client, admission.health_calls) == (3, {"a": 2, "b": 1}, 2)
    for client in ("a", "a", "b"):
        admission.leave_call(False, client)
    admission.leave_call(True, "c")
    admission.leave_call(True, "d")
    assert (admission.calls, admission.by_client, admission.health_calls, admission.health_by_client) == (
        0,
        {},
        0,
        {},
    )
    admission.enter_watch("conn-1", "g")
    with pytest.raises(ApiError):
        admission.enter_watch("conn-1", "g")
    admission.enter_watch("conn-2", "g")
    with pytest.raises(ApiError):
        admission.enter_watch("conn-3", "g")
    admission.leave_watch("conn-1", "g")
    admission.leave_watch("conn-2", "g")
    assert admission.watches_by_connection == {} and admission.watches_by_game == {}


def test_a_client_is_its_address_without_the_port() -> None:
    assert client_of("ipv4:10.1.2.3:5555") == "10.1.2.3"
    assert client_of("ipv6:[::1]:5555") == "::1"
    assert client_of("unix:/tmp/s") == "unix:/tmp/s"
