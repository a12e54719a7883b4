"""What the Kubernetes probes ask: readiness ("") follows the store, liveness ("liveness") only
the process — a Redis outage must not get every pod restarted."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from accordion.server import LIVENESS
from redis_server import RedisServer

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def statuses(stub: health_pb2_grpc.HealthStub) -> tuple[int, int]:
    ready = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    live = await stub.Check(health_pb2.HealthCheckRequest(service=LIVENESS), timeout=5)
    return ready.status, live.status


async def test_liveness_stays_serving_through_a_redis_outage(start_server: Callable[..., Any]) -> None:
    with RedisServer() as redis:
        running = await start_server(redis.url, health_interval=0.1, store_timeout=0.5)
        async with grpc.aio.insecure_channel(running.addr) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            assert await statuses(stub) == (SERVING, SERVING)
            redis.stop()
            deadline = asyncio.get_running_loop().time() + 10
            while (now := await statuses(stub))[0] != NOT_SERVING:
                assert asyncio.get_running_loop().time() < deadline, now
                await asyncio.sleep(0.1)
            assert now == (NOT_SERVING, SERVING), "not ready, but alive"
            redis.start()
            while (now := await statuses(stub)) != (SERVING, SERVING):
                assert asyncio.get_running_loop().time() < deadline + 10, now
                await asyncio.sleep(0.1)
