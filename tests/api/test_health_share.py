"""Issue 28, item 2: health Check answers from a budget that Watch streams and other clients
cannot exhaust.

Ten clients, each from an address of its own (the server tells clients apart by IP address),
each holding health Watch streams and half-sent health Checks; a probe from another address
checks health meanwhile. Before the fix every health call, Watch streams included, shared one
budget of 100 and 10 per address: ten such clients took it all and every probe failed.

Real processes and sockets: the real ``accordion-server``, real gRPC channels. The ten
addresses are 127.0.0.2 … 127.0.0.11 (Linux routes all of 127/8 to loopback): each client's
channel goes through a small TCP relay in this test that connects to the server from its
address (grpc's Python channels cannot choose their source address).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator, Callable

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from redis_server import free_port
from server_launcher import ServerProcess

CLIENTS = 10
WATCHES_PER_CLIENT = 10  # tries; the server keeps 5 of them (--max-health-watches-per-client)
HALF_SENT_PER_CLIENT = 20  # tries; the server keeps 10 at a time (health calls per client)
PROBES = 300
PROBE_EVERY = 0.01  # seconds between probes
PROBE_TIMEOUT = 10.0  # a probe's deadline: a loaded machine's slow answer is measured, not lost
# A probe denied its share waits for a held Check to end (--request-timeout, 5 s) or is refused.
# 3 s is 60x the 50 ms the issue names for a quiet machine, and under that wait.
STUCK = 3.0
CHECK = "/grpc.health.v1.Health/Check"


def in_flight(metrics_port: int) -> dict[str, float]:
    """accordion_rpc_in_flight by method, as the server exports it."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    found: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith('accordion_rpc_in_flight{method="'):
            labels, _, value = line.rpartition(" ")
            found[labels.split('"')[1]] = float(value)
    return found


@contextlib.asynccontextmanager
async def relay(source: str, upstream_port: int) -> AsyncIterator[int]:
    """A TCP relay on 127.0.0.1 (its port yielded) to 127.0.0.1:``upstream_port``, connecting
    from address ``source``: the server sees each connection as coming from ``source``."""
    tasks: set[asyncio.Task[None]] = set()

    async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(
            "127.0.0.1", upstream_port, local_addr=(source, 0)
        )
        for task in (
            asyncio.create_task(pump(reader, up_writer)),
            asyncio.create_task(pump(up_reader, writer)),
        ):
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    server = await asyncio.start_server(accepted, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def abuse(port: int, stop: asyncio.Event, outcomes: Counter[str], full: asyncio.Event) -> None:
    """One client: WATCHES_PER_CLIENT health Watch streams held open, and HALF_SENT_PER_CLIENT
    health Checks that send their headers and never their message, each sent again when the
    server ends it, until ``stop``. ``full`` is set once the server refused it a call: it holds
    all the server lets one client hold."""
    # Its own connection (channels to one address would otherwise share one).
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])
    stub = health_pb2_grpc.HealthStub(channel)

    async def watch() -> None:
        try:
            async for _ in stub.Watch(health_pb2.HealthCheckRequest(), timeout=120):
                outcomes["watch open"] += 1
        except grpc.aio.AioRpcError as exc:
            outcomes[f"watch {exc.code().name}"] += 1

    async def no_message() -> AsyncIterator[bytes]:
        await stop.wait()
        yield b""  # never reached while the test runs

    async def half_sent() -> None:
        call = channel.stream_unary(CHECK, request_serializer=bytes, response_deserializer=bytes)
        while not stop.is_set():
            try:
                await call(no_message(), timeout=120)
            except grpc.aio.AioRpcError as exc:
                outcomes[f"half-sent {exc.code().name}"] += 1
                if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    full.set()
                    await asyncio.sleep(1.0)  # as its RetryInfo asks

    tasks = [asyncio.create_task(watch()) for _ in range(WATCHES_PER_CLIENT)]
    await asyncio.sleep(0.2)  # the Watch streams first, then the Checks
    tasks += [asyncio.create_task(half_sent()) for _ in range(HALF_SENT_PER_CLIENT)]
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await channel.close()


async def probe(health: health_pb2_grpc.HealthStub, count: int) -> tuple[list[float], Counter[str]]:
    """``count`` health Checks, PROBE_EVERY apart: the latencies of those answered SERVING, and
    what the others got."""
    latencies: list[float] = []
    failures: Counter[str] = Counter()
    for _ in range(count):
        started = time.perf_counter()
        try:
            reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=PROBE_TIMEOUT)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                latencies.append(time.perf_counter() - started)
            else:
                failures[health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)] += 1
        except grpc.aio.AioRpcError as exc:
            failures[exc.code().name] += 1
        await asyncio.sleep(PROBE_EVERY)
    return latencies, failures


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("inf")


async def test_ten_clients_abusing_health_leave_checks_served(
    spawn_server: Callable[..., ServerProcess],
) -> None:
    metrics_port = free_port()
    server = spawn_server("--metrics-port", str(metrics_port), "--log-level", "warning")
    server_port = int(server.addr.rpartition(":")[2])
    async with grpc.aio.insecure_channel(server.addr) as channel:  # a control, before the abuse
        control, _ = await probe(health_pb2_grpc.HealthStub(channel), PROBES // 3)
    stop = asyncio.Event()
    outcomes: Counter[str] = Counter()
    async with contextlib.AsyncExitStack() as stack:
        ports = [
            await stack.enter_async_context(relay(f"127.0.0.{2 + i}", server_port)) for i in range(CLIENTS)
        ]
        full = [asyncio.Event() for _ in ports]
        abusers = [
            asyncio.create_task(abuse(port, stop, outcomes, f)) for port, f in zip(ports, full, strict=True)
        ]
        try:
            # The abuse in place: every client holds all the server lets it hold.
            await asyncio.wait_for(asyncio.gather(*(f.wait() for f in full)), 30)
            held = await asyncio.to_thread(in_flight, metrics_port)
            checks, watches = held.get(CHECK[1:], 0), held.get("grpc.health.v1.Health/Watch", 0)
            print(f"held by the ten clients: {checks:.0f} half-sent Checks, {watches:.0f} Watch streams")

            async with grpc.aio.insecure_channel(server.addr) as channel:  # from 127.0.0.1: another client
                latencies, failures = await probe(health_pb2_grpc.HealthStub(channel), PROBES)
        finally:
            stop.set()
            await asyncio.gather(*abusers, return_exceptions=True)

    ok = len(latencies) / PROBES
    p99 = percentile(latencies, 0.99)
    print(
        f"probes: {ok:.1%} OK, p99 {p99 * 1000:.1f} ms (control before the abuse: p99 "
        f"{percentile(control, 0.99) * 1000:.1f} ms); failures {dict(failures)}; abusers {dict(outcomes)}"
    )
    assert ok >= 0.99, (ok, failures, outcomes)
    # Never stuck behind the abuse: the issue's 50 ms is bench/'s figure on a quiet machine (a load
    # average of 25 here made p99 ~1 s; the control, printed above, shows the machine's state).
    assert p99 < STUCK, p99
    # Each client was held to its share of Watch streams: 5 of its 10, the rest refused.
    assert outcomes["watch RESOURCE_EXHAUSTED"] == CLIENTS * (WATCHES_PER_CLIENT - 5), outcomes
