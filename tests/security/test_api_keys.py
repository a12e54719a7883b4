"""API keys (hashed) and per-key GCRA rate limits: in Redis across processes, in memory otherwise."""

from __future__ import annotations

import asyncio
import json
import secrets
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from accordion.api import metrics
from accordion.api.apikeys import hash_key, parse_api_keys
from accordion.api.ratelimit import Limit, MemoryRateLimiter, RedisRateLimiter, gcra
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from redis_server import free_port
from tests.api.helpers import ServerProcess, expect_error, retry_delay, server_command

KEYS = {name: f"acc_{name}_{secrets.token_urlsafe(24)}" for name in ("open", "tight", "slow", "quick")}


def write_keys(folder: Path, limits: dict[str, dict[str, float]]) -> Path:
    path = folder / "api-keys.json"
    entries = [{"name": name, "sha256": hash_key(KEYS[name]), **limit} for name, limit in limits.items()]
    path.write_text(json.dumps({"default": {"rate": 100, "burst": 100}, "keys": entries}))
    return path


def key(name: str) -> tuple[tuple[str, str], ...]:
    return (("x-api-key", KEYS[name]),)


def new_game(stub: pb_grpc.AccordionServiceStub, name: str | None) -> Any:
    return stub.NewGame(
        pb.NewGameRequest(variant="accordion", seed=1), metadata=key(name) if name else None, timeout=5
    )


async def exhausted(stub: pb_grpc.AccordionServiceStub, name: str) -> float:
    """A call refused as RATE_LIMITED; its RetryInfo delay in seconds."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await new_game(stub, name)
    err = await expect_error(_raise(caught.value), grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
    assert err.info.metadata["key_name"] == name and KEYS[name] not in err.message
    return retry_delay(caught.value)


async def _raise(exc: BaseException) -> None:
    raise exc


async def test_keys_are_required_checked_and_limited_in_memory(
    start_server: Callable[..., Any], tmp_path: Path
) -> None:
    path = write_keys(tmp_path, {"open": {"rate": 0}, "tight": {"rate": 0.5, "burst": 3}})
    running = await start_server("memory://", api_keys_file=str(path))
    async with grpc.aio.insecure_channel(running.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        # Health needs no key (probes have none).
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        # Unary, server-streaming and bidi-streaming (reflection) calls all need one.
        await expect_error(new_game(stub, None), grpc.StatusCode.UNAUTHENTICATED, "API_KEY_MISSING")
        bad = stub.NewGame(
            pb.NewGameRequest(variant="accordion"), metadata=(("x-api-key", "guess"),), timeout=5
        )
        await expect_error(bad, grpc.StatusCode.UNAUTHENTICATED, "API_KEY_INVALID")
        watch = stub.WatchGame(pb.WatchGameRequest(game_id="x" * 22), timeout=5)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await watch.read()
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        reflect = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await reflect.read()
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        # An unlimited key: as many calls as we like.
        for _ in range(10):
            assert (await new_game(stub, "open")).game.version == 1
        # 0.5/s with a burst of 3: three at once, then refused with a delay of about 1/rate (slow
        # enough that a loaded machine's slow calls refill nothing between them: at 2/s, three
        # calls taking over 0.5 s let a fourth through).
        for _ in range(3):
            await new_game(stub, "tight")
        delay = await exhausted(stub, "tight")
        assert 0 < delay <= 2.0
        await asyncio.sleep(delay + 0.01)
        assert (await new_game(stub, "tight")).game.version == 1, "passes again after the delay"
        assert 0 < await exhausted(stub, "tight") <= 2.0, "and only one passed"
        await new_game(stub, "open")  # one key's limit is not another's


async def test_the_limit_is_shared_by_two_server_processes_on_one_redis(
    spawn_server: Callable[..., ServerProcess], redis_url: str, tmp_path: Path
) -> None:
    path = write_keys(tmp_path, {"slow": {"rate": 0.2, "burst": 4}, "quick": {"rate": 0.5, "burst": 2}})
    env = {"REDIS_URL": redis_url, "ACCORDION_API_KEYS_FILE": str(path), "ACCORDION_WORKERS": "1"}
    a, b = spawn_server(env=env), spawn_server(env=env)
    async with grpc.aio.insecure_channel(a.addr) as ca, grpc.aio.insecure_channel(b.addr) as cb:
        sa, sb = pb_grpc.AccordionServiceStub(ca), pb_grpc.AccordionServiceStub(cb)
        # "slow": one call per 5 s, burst 4, counted in Redis: 2 + 2, then both refuse. The wait
        # each refusal asks is 5 s less the time since the first call (GCRA on Redis's clock):
        # bounded by the time measured here, however long a loaded machine took for the calls.
        started = time.monotonic()
        for stub in (sa, sb, sa, sb):
            await new_game(stub, "slow")
        delay_a = await exhausted(sa, "slow")
        since_a = time.monotonic() - started
        delay_b = await exhausted(sb, "slow")
        since_b = time.monotonic() - started
        assert 5.0 - since_a <= delay_a <= 5.0 and 5.0 - since_b <= delay_b <= delay_a, (
            delay_a,
            since_a,
            delay_b,
            since_b,
        )
        # "quick": one call per 2 s, burst 2 — the wait in RetryInfo is enough, on either process.
        # (Slow enough that a loaded machine's slow calls refill nothing between them.)
        await new_game(sa, "quick")
        await new_game(sb, "quick")
        delay = await exhausted(sa, "quick")
        assert 0 < delay <= 2.0
        await asyncio.sleep(delay + 0.01)
        await new_game(sb, "quick")
        await exhausted(sa, "quick")
    with redis.Redis.from_url(redis_url) as client:
        ttl = client.pttl("acc:rl:{slow}")
        assert 0 < ttl <= 25_000, "the limiter's key expires once the key is idle long enough"
        assert not [
            k for k in client.keys("*") if KEYS["slow"].encode() in k or hash_key(KEYS["slow"]).encode() in k
        ]
    assert a.terminate() == 0 and b.terminate() == 0
    for proc in (a, b):
        output = proc.output()
        assert '"RESOURCE_EXHAUSTED"' in output, "refusals are logged as RPCs"
        for secret in KEYS.values():
            assert secret not in output and hash_key(secret) not in output, "keys are never logged"


async def test_a_limiter_that_cannot_reach_redis_lets_the_call_through(
    start_server: Callable[..., Any], tmp_path: Path
) -> None:
    path = write_keys(tmp_path, {"tight": {"rate": 1, "burst": 1}})
    dead = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    running = await start_server(dead, api_keys_file=str(path), store_timeout=1.0)
    before = metrics.RATE_LIMITER_ERRORS._value.get()
    async with grpc.aio.insecure_channel(running.addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        await expect_error(new_game(stub, "tight"), grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
        await expect_error(new_game(stub, None), grpc.StatusCode.UNAUTHENTICATED, "API_KEY_MISSING")
    assert metrics.RATE_LIMITER_ERRORS._value.get() == before + 1


# --- the algorithm ------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000_000  # microseconds

    def __call__(self) -> int:
        return self.now


async def test_memory_gcra_bursts_then_spaces_calls_by_the_interval() -> None:
    clock = FakeClock()
    limiter, limit = MemoryRateLimiter(clock), Limit(rate=4, burst=3)  # interval 250 ms
    assert [(await limiter.acquire("k", limit)).allowed for _ in range(4)] == [True, True, True, False]
    refused = await limiter.acquire("k", limit)
    assert not refused.allowed and refused.retry_after == pytest.approx(0.25)
    clock.now += 100_000
    assert (await limiter.acquire("k", limit)).retry_after == pytest.approx(0.15)
    clock.now += 150_000
    assert (await limiter.acquire("k", limit)).allowed, "exactly when retry_after said"
    assert not (await limiter.acquire("k", limit)).allowed
    assert (await limiter.acquire("other", limit)).allowed, "keys are independent"
    clock.now += 10_000_000  # idle: the full burst is back, and no more than it
    assert [(await limiter.acquire("k", limit)).allowed for _ in range(4)] == [True, True, True, False]


async def test_redis_gcra_decides_like_the_memory_one(redis_url: str) -> None:
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url)
    try:
        limiter, limit = RedisRateLimiter(client), Limit(rate=2, burst=5)  # interval 500 ms
        started = time.monotonic()
        decisions = [await limiter.acquire("same", limit) for _ in range(7)]
        assert [d.allowed for d in decisions] == [True] * 5 + [False, False]
        clock = FakeClock()
        expected, _ = gcra(clock.now + 5 * limit.interval_us, clock.now, limit)
        # Redis's clock runs on while the calls are made (slowly, on a loaded machine): the sixth
        # call's wait is the memory limiter's less the time since the first call, never more.
        elapsed = time.monotonic() - started
        assert (
            expected.retry_after - elapsed - 0.01 <= decisions[5].retry_after <= expected.retry_after + 0.01
        )
        assert await client.pttl(limiter.key("same")) > 2000
    finally:
        await client.aclose()


# --- the keys file ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, '"keys" list'),
        ({"keys": []}, "lists no keys"),
        ({"keys": [{"name": "a", "sha256": "secret-key"}]}, "64 hex digits"),
        ({"keys": [{"name": "a b", "sha256": "0" * 64}]}, "name must be"),
        ({"keys": [{"name": "a", "sha256": "0" * 64}, {"name": "b", "sha256": "0" * 64}]}, "listed twice"),
        ({"keys": [{"name": "a", "sha256": "0" * 64, "rate": -1}]}, "rate must be"),
        ({"keys": [{"name": "a", "sha256": "0" * 64, "rate": 1, "burst": 0}]}, "burst must be"),
    ],
)
def test_bad_keys_files_are_refused_with_the_reason(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_api_keys(data)


def test_keys_file_defaults_and_the_server_refusing_a_bad_file(tmp_path: Path) -> None:
    keys = parse_api_keys(
        {
            "default": {"rate": 3},
            "keys": [{"name": "a", "sha256": "a" * 64}, {"name": "b", "sha256": "b" * 64, "rate": 0}],
        }
    )
    assert keys[bytes.fromhex("a" * 64)].limit == Limit(3.0, 3)
    assert keys[bytes.fromhex("b" * 64)].limit is None
    bad = tmp_path / "keys.json"
    bad.write_text('{"keys": [{"name": "x", "sha256": "not-a-hash"}]}')
    done = subprocess.run(
        [*server_command(), "--listen", "127.0.0.1:0", "--api-keys-file", str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and "64 hex digits" in done.stderr
