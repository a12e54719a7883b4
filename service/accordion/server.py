"""One server process: the grpc.aio server, health, reflection, metrics, signals.

Everything about games lives in ``accordion.api``, the configuration in ``accordion.config``,
the ``accordion-server`` script in ``accordion.__main__`` (which picks this module's ``serve``
or ``accordion.workers``' supervisor). This module only wires a server up:

* the store from ``--redis-url`` / ``REDIS_URL`` (Redis), else the embedded memory store;
* ``grpc.health.v1``: SERVING while the store answers a ping, checked every
  ``--health-interval`` seconds; NOT_SERVING while it does not, and from SIGTERM on;
* server reflection, so grpcurl and friends need no .proto files (``--reflection off``: none;
  deploy/ turns it off);
* SIGTERM/SIGINT → health NOT_SERVING → ``server.stop(grace)``: in-flight calls finish;
* a 64 KiB receive limit, keepalive (grpc's options: ``accordion.listening``), and the limits of
  ``accordion.api.limits``: calls per
  process, per client and (HTTP/2 streams) per connection, watchers per game and per
  connection, a request timeout, and health's own budget (RESOURCE_EXHAUSTED beyond them);
  NewGame's and WatchGame's per-client rates (``--newgame-rate``, ``--watch-rate``, in the
  store's Redis when there is one), a
  client being its address or, behind a proxy in ``--trusted-proxies``, the address in its
  ``x-forwarded-for``;
* Prometheus metrics on ``--metrics-port`` (0: off);
* ``--workers N`` processes sharing the port (``accordion.workers``), TLS/mTLS
  (``accordion.tls``), API keys with per-key rate limits (``accordion.api.apikeys``),
  ``--max-connection-age`` so long-lived clients reconnect and rebalance, and an optional
  plaintext health-only port (``--health-port``) for probes that cannot speak TLS.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import logging
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TextIO, cast

import grpc
import grpc.aio
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from accordion.api import SERVICE_NAME, AccordionServicer, add_to_server
from accordion.api.access_log import configure_access_log, flush_access_log
from accordion.api.apikeys import ApiKeyInterceptor, load_api_keys
from accordion.api.callinfo import install_arrival_stamp
from accordion.api.interceptors import ClientRate, Gate, Host
from accordion.api.limits import Admission, ClientAddresses, Limits
from accordion.api.ratelimit import Limit, MemoryRateLimiter, RateLimiter, RedisRateLimiter
from accordion.api.server_watch import ServerWatch
from accordion.api.solving import Budgets
from accordion.build_info import build_kind
from accordion.config import OPTIONS
from accordion.config import Config as Config  # re-exported: older code imports them from here
from accordion.config import parse_args as parse_args
from accordion.listening import ListenError as ListenError  # re-exported, as Config above
from accordion.listening import bind_failure, check_free, server_options
from accordion.netaddr import parse_networks
from accordion.sessions.winnable import PoolSettings
from accordion.startup_banner import banner
from accordion.store import GameStore, open_store
from accordion.tls import server_credentials

if TYPE_CHECKING:
    from accordion.api.tracing import Tracing

_OPTIONS = OPTIONS  # (the flag table, by its old name here)

HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
# A health "service" that is SERVING from start to SIGTERM whatever the store does: for
# liveness probes (a Redis outage is no reason to restart the server; readiness uses "").
LIVENESS = "liveness"
STREAM_EVENTS = 100  # entries kept in a watched game's event stream (see AccordionServer)
log = structlog.get_logger("accordion.server")


def configure_logging(
    level: str,
    stream: TextIO = sys.stderr,
    fields: Mapping[str, object] | None = None,
    sample_every: int = 1,
    access_path: str = "",
) -> None:
    """JSON lines on ``stream``: one per RPC from the interceptor, plus lifecycle events.

    ``fields`` are added to every line (a worker process adds its index and pid);
    ``sample_every``: 1 in that many of the per-call info lines is written (``--access-log-sample``);
    ``access_path``: the per-call lines are appended to that file instead (``--access-log``;
    O_APPEND: worker processes' whole-line writes do not interleave)."""
    extra = dict(fields or {})
    structlog.configure(
        processors=[
            lambda _logger, _name, event: {**event, **extra} if extra else event,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        # One write() per line (PrintLogger writes the newline apart): worker processes share
        # stderr, and lines written whole do not interleave.
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    # The per-call access line bypasses the chain above (same JSON, a third of the cost).
    access = stream
    if access_path:
        os.makedirs(os.path.dirname(os.path.abspath(access_path)), exist_ok=True)
        access = open(access_path, "a", encoding="utf-8")  # noqa: SIM115 (open for the process's life)
    configure_access_log(access, logging.getLevelName(level.upper()), extra, sample_every)


def limits(config: Config) -> Limits:
    return Limits(
        max_calls=config.max_concurrent_rpcs,
        max_calls_per_client=config.max_rpcs_per_client,
        max_health_calls=config.max_health_rpcs,
        max_health_watches=config.max_health_watches,
        max_health_watches_per_client=config.max_health_watches_per_client,
        max_watches_per_connection=config.max_watches_per_connection,
        max_watches_per_game=config.max_watches_per_game,
        request_timeout=config.request_timeout,
    )


class AccordionServer:
    """One server: ``await start()`` returns the bound port; ``await stop()`` drains and closes."""

    def __init__(self, config: Config, store: GameStore | None = None) -> None:
        self.config = config
        self.store = (
            store
            if store is not None
            else open_store(
                config.redis_url or None,
                wait_replicas=config.redis_wait_replicas,
                wait_timeout=config.redis_wait_timeout,
                # --store-timeout bounds a store call (the session layer enforces it); the lean Redis
                # connection, which sends a call once, must not give up sooner (its 1 s read timeout
                # failed calls a slower Redis, in a fork or a failover, was allowed to answer).
                call_timeout=config.store_timeout,
                # The games carry their own log of moves (accordion.sessions.record); the store's event
                # stream only wakes watchers: a short one, and only for games someone watches.
                event_log_len=STREAM_EVENTS,
                watched_only=True,
                evict_idle=config.evict_idle,
            )
        )
        self.health = health.aio.HealthServicer()
        # Every call of every service goes through one wrapper (accordion.api.interceptors.wrap):
        # API keys when configured, the limits, the request timeout, error mapping, the access
        # line and metrics. Counted here instead of by grpc's maximum_concurrent_rpcs, which
        # also counts health and half-sent calls alike.
        limiter = _rate_limiter(self.store)
        api_keys = (
            ApiKeyInterceptor(load_api_keys(config.api_keys_file), limiter, timeout=config.store_timeout)
            if config.api_keys_file
            else None
        )
        new_game = (
            ClientRate(
                Limit(config.newgame_rate, config.newgame_burst), limiter, timeout=config.store_timeout
            )
            if config.newgame_rate > 0
            else None
        )
        watch_game = (
            ClientRate(
                Limit(config.watch_rate, config.watch_burst), limiter, config.store_timeout, "WatchGame"
            )
            if config.watch_rate > 0
            else None
        )
        self.addresses = ClientAddresses(parse_networks(config.trusted_proxies))
        self.admission = Admission(limits(config))
        self.health_server: grpc.aio.Server | None = None
        self.server = grpc.aio.server(options=server_options(config))
        # OpenTelemetry traces when an OTLP endpoint is set (api/tracing.py); None: off, and free.
        self.tracing = _tracing(config)
        gate = Gate(self.admission, api_keys, self.addresses, new_game, watch_game, tracing=self.tracing)
        target = Host(self.server, gate)
        budgets = Budgets(
            solve_seconds=config.solve_max_seconds,
            hint_seconds=config.hint_max_seconds,
            winnable_seconds=config.winnable_max_seconds,
            threads=config.solver_threads,
            threads_per_client=config.solver_threads_per_client,
            queue_per_client=config.solver_queue_per_client,
            queue=config.solver_queue,
            pool_deal_nodes=config.winnable_pool_deal_nodes,
            pool_deal_seconds=config.winnable_pool_deal_seconds,
        )
        pools = PoolSettings(target=config.winnable_pool_target, low_water=config.winnable_pool_low_water)
        # With traces, the session layer's store calls are spans (the store wrapped, tracing.py).
        calls_store = self.store if self.tracing is None else self.tracing.store(self.store)
        self.servicer = servicer = AccordionServicer(
            calls_store,
            game_ttl=config.game_ttl,
            store_timeout=config.store_timeout,
            budgets=budgets,
            deal_code_ttl=config.deal_code_ttl,
            pools=pools,
        )
        if self.tracing is not None:  # a span per solver run (Solving knows nothing of traces)
            # setattr: mypy refuses an assignment to a method, and this wrapping is deliberate.
            setattr(servicer.solving, "_run", self.tracing.solver(servicer.solving._run))  # noqa: B010
        add_to_server(servicer, target)
        _add_health(self.health, target)
        if config.reflection == "on":  # off: the reflection RPC is UNIMPLEMENTED, like any unknown method
            # enable_server_reflection, for an aio server through ``target``:
            _add_reflection(
                reflection.aio.ReflectionServicer((SERVICE_NAME, HEALTH_SERVICE, reflection.SERVICE_NAME)),
                target,
            )
        self.port = 0
        self.serving: bool | None = None
        self._health_task: asyncio.Task[None] | None = None
        # ops: loop lag and grpc core's channelz counters (the admin port's calls are not wrapped)
        self.watch = ServerWatch(unwrapped_ports=(config.admin_port,))
        self.admin_server: grpc.aio.Server | None = None
        self.admin_port = 0

    async def start(self) -> int:
        """Listen and serve; the bound port. Raises ``ListenError`` when the address is taken."""
        host = self.config.listen.rsplit(":", 1)[0]
        shared = self.config.workers > 1  # workers share the port on purpose (SO_REUSEPORT)
        check_free(self.config.listen, shared=shared)
        if self.config.health_port:
            check_free(f"{host}:{self.config.health_port}", " (--health-port)", shared=shared)
        try:
            if self.config.tls_cert:
                creds = server_credentials(
                    self.config.tls_cert, self.config.tls_key, self.config.tls_client_ca
                )
                self.port = self.server.add_secure_port(self.config.listen, creds)
            else:
                self.port = self.server.add_insecure_port(self.config.listen)
        except RuntimeError as exc:  # grpc: "Failed to bind to address ..."
            raise ListenError(f"cannot listen on {self.config.listen}: {bind_failure(exc)}") from None
        await self.check_store()
        await self.health.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
        if self.config.health_port:  # plaintext, health only: for probes that cannot do (m)TLS
            reuse = 1 if self.config.workers > 1 else 0
            self.health_server = grpc.aio.server(options=[("grpc.so_reuseport", reuse)])
            # Its own budget: probes here are not refused for calls on the main port.
            own = Gate(Admission(limits(self.config)), addresses=self.addresses)
            _add_health(self.health, Host(self.health_server, own))
            try:
                self.health_server.add_insecure_port(f"{host}:{self.config.health_port}")
            except RuntimeError as exc:
                raise ListenError(
                    f"cannot listen on {host}:{self.config.health_port} (--health-port): {bind_failure(exc)}"
                ) from None
            await self.health_server.start()
        await self._start_admin(host)
        install_arrival_stamp(asyncio.get_running_loop())  # ops: when each call arrives (callinfo)
        await self.server.start()
        self.watch.start()
        self._health_task = asyncio.create_task(self._health_loop(), name="store-health")
        return self.port

    async def _start_admin(self, host: str) -> None:
        """ops: ``--admin-port``: channelz (grpcio-channelz) and health on a gRPC port of their
        own: no limits, no API keys, so it answers when the main port is saturated, which is
        when an operator needs it; never the clients' port (channelz lists every peer)."""
        if not self.config.admin_port:
            return
        from grpc_channelz.v1 import channelz

        check_free(f"{host}:{self.config.admin_port}", " (--admin-port)")
        self.admin_server = grpc.aio.server()
        channelz.add_channelz_servicer(self.admin_server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.admin_server)
        try:
            self.admin_port = self.admin_server.add_insecure_port(f"{host}:{self.config.admin_port}")
        except RuntimeError as exc:
            raise ListenError(
                f"cannot listen on {host}:{self.config.admin_port} (--admin-port): {bind_failure(exc)}"
            ) from None
        await self.admin_server.start()

    async def check_store(self) -> bool:
        """Ping the store once and set health to match. Logs each change."""
        try:
            async with asyncio.timeout(self.config.store_timeout):
                await self.store.ping()
            ok = True
        except Exception as exc:  # noqa: BLE001 (any failure to answer is "not serving")
            ok, why = False, type(exc).__name__
        if ok != self.serving:
            if ok:
                log.info("store reachable", serving=True)
            else:
                log.warning("store unreachable", serving=False, error=why)
        self.serving = ok
        status = health_pb2.HealthCheckResponse.SERVING if ok else health_pb2.HealthCheckResponse.NOT_SERVING
        for service in ("", SERVICE_NAME):
            await self.health.set(service, status)
        return ok

    async def _health_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.health_interval)
            await self.check_store()

    async def stop(self, grace: float | None = None) -> None:
        """Health NOT_SERVING first (load balancers stop sending), then drain, then close the store."""
        await self.health.enter_graceful_shutdown()
        self.watch.stop()
        if self._health_task is not None:
            self._health_task.cancel()
        await self.server.stop(self.config.grace if grace is None else grace)
        await self.servicer.winnable.close()  # no more refills of the winnable pools
        self.servicer.solving.close()  # the drained calls' searches are stopped; take no more
        if self.health_server is not None:
            await self.health_server.stop(0)
        if self.admin_server is not None:
            await self.admin_server.stop(0)
        await self.store.close()
        flush_access_log()
        if self.tracing is not None:  # the spans not exported yet (a thread: the loop goes on)
            await asyncio.to_thread(self.tracing.shutdown)


def _tracing(config: Config) -> Tracing | None:
    if not config.otlp_endpoint:
        return None
    from accordion.api.tracing import Tracing, otlp_exporter  # (only when on: no import cost off)

    return Tracing(otlp_exporter(config.otlp_endpoint))


def _add_health(servicer: health.aio.HealthServicer, host: Host) -> None:
    """grpc's registration of the health service, through ``host`` (which stands in for the
    server: registration only calls the two methods it has)."""
    health_pb2_grpc.add_HealthServicer_to_server(servicer, cast(grpc.aio.Server, host))


# The reflection stubs leave this function unannotated; this is its type.
_add_reflection: Callable[[reflection.aio.ReflectionServicer, Host], None] = (
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server
)


def _rate_limiter(store: GameStore) -> RateLimiter:
    """GCRA in the store's Redis (shared by every process on it), else in this process."""
    client = getattr(store, "_redis", None)  # RedisStore's command client (Redis or RedisCluster)
    return MemoryRateLimiter() if client is None else RedisRateLimiter(client)


def freeze_startup_objects() -> None:
    """Move everything alive after start-up (modules, descriptors, engine tables) out of the
    garbage collector's reach: a full collection then scans only what serving created, which
    cut its pauses (and so ApplyMove's p99 under load) several times (docs/performance.md)."""
    gc.collect()
    gc.freeze()


async def serve(config: Config) -> None:
    server = AccordionServer(config)
    port = await server.start()
    freeze_startup_objects()
    if config.metrics_port:  # ops: /metrics only (404 elsewhere), with the memory store's size
        from accordion.api.metrics import serve_metrics, watch_memory_store

        host = config.listen.rsplit(":", 1)[0].strip("[]") or "0.0.0.0"
        watch_memory_store(server.store)
        serve_metrics(config.metrics_port, host)
    print(banner(config, port), flush=True)
    log.info(
        "started",
        port=port,
        store="memory" if config.memory_store else "redis",
        game_ttl=config.game_ttl,
        metrics_port=config.metrics_port or None,
        build=build_kind(),  # compiled (mypyc) or pure: which hot path this process runs
    )
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
    flush_access_log()  # before "stopping", so the lines keep their order
    log.info("stopping", grace=config.grace)
    await server.stop()
    log.info("stopped")


def run_loop(main: Coroutine[Any, Any, None], event_loop: str = "auto") -> None:
    """Run ``main`` on uvloop (``auto`` when it is installed, or ``uvloop``) or asyncio's loop.

    uvloop's loop runs the callbacks grpc.aio schedules for every call for less CPU than
    asyncio's (docs/performance.md has the measurement)."""
    if event_loop != "asyncio" and importlib.util.find_spec("uvloop") is not None:
        import uvloop

        uvloop.run(main)
        return
    asyncio.run(main)
