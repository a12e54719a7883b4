"""The server shell: configuration, the grpc.aio server, health, reflection, metrics, signals.

Everything about games lives in ``accordion.api``; this module only wires it up:

* the store from ``--redis-url`` / ``REDIS_URL`` (Redis), else the embedded memory store;
* ``grpc.health.v1``: SERVING while the store answers a ping, checked every
  ``--health-interval`` seconds; NOT_SERVING while it does not, and from SIGTERM on;
* server reflection, so grpcurl and friends need no .proto files;
* SIGTERM/SIGINT → health NOT_SERVING → ``server.stop(grace)``: in-flight calls finish;
* a 64 KiB receive limit, keepalive, a cap on concurrent RPCs (RESOURCE_EXHAUSTED beyond it);
* Prometheus metrics on ``--metrics-port`` (0: off);
* ``--workers N`` processes sharing the port (``accordion.workers``), TLS/mTLS
  (``accordion.tls``), API keys with per-key rate limits (``accordion.api.apikeys``),
  ``--max-connection-age`` so long-lived clients reconnect and rebalance, and an optional
  plaintext health-only port (``--health-port``) for probes that cannot speak TLS.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import logging
import os
import signal
import sys
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO
from urllib.parse import urlsplit

import grpc
import grpc.aio
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from accordion.api import SERVICE_NAME, AccordionServicer, ObservabilityInterceptor, add_to_server
from accordion.api.apikeys import ApiKeyInterceptor, load_api_keys
from accordion.api.interceptors import ObservedServer, configure_access_log, flush_access_log
from accordion.api.ratelimit import MemoryRateLimiter, RateLimiter, RedisRateLimiter
from accordion.api.solving import Budgets
from accordion.store import GameStore, open_store
from accordion.tls import server_credentials

MAX_RECEIVE_BYTES = 64 * 1024
MAX_METADATA_BYTES = 16 * 1024  # all request metadata (headers) together; beyond it the call fails
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
# A health "service" that is SERVING from start to SIGTERM whatever the store does: for
# liveness probes (a Redis outage is no reason to restart the server; readiness uses "").
LIVENESS = "liveness"
STREAM_EVENTS = 100  # entries kept in a watched game's event stream (see AccordionServer)
log = structlog.get_logger("accordion.server")


@dataclass(frozen=True)
class Config:
    listen: str = "127.0.0.1:50051"
    redis_url: str = ""
    game_ttl: float = 86400.0
    max_concurrent_rpcs: int = 1000
    grace: float = 10.0
    metrics_port: int = 0
    log_level: str = "info"
    health_interval: float = 1.0
    store_timeout: float = 2.0
    workers: int = 0  # 0: one per available core with Redis, 1 with the memory store
    max_connection_age: float = 0.0  # seconds; 0: connections live as long as the client wants
    tls_cert: str = ""
    tls_key: str = ""
    tls_client_ca: str = ""
    health_port: int = 0
    api_keys_file: str = ""
    redis_wait_replicas: int = 0  # WAIT for this many replicas after each write (0: off)
    redis_wait_timeout: float = 0.5  # seconds WAIT may take before the write is UNAVAILABLE
    solve_max_seconds: float = 10.0
    hint_max_seconds: float = 0.25
    winnable_max_seconds: float = 5.0
    solver_threads: int = 2
    event_loop: str = "auto"  # uvloop when installed (auto), or asyncio's own


# (flag, environment variable, type, help). The table in README.md mirrors this one.
_OPTIONS: tuple[tuple[str, str, type, str], ...] = (
    ("listen", "ACCORDION_LISTEN", str, "host:port to serve on (port 0: any free port)"),
    (
        "redis_url",
        "REDIS_URL",
        str,
        "Redis URL (redis://, rediss://, unix://, redis+sentinel://, redis+cluster://); "
        "empty: the embedded memory store",
    ),
    ("game_ttl", "ACCORDION_GAME_TTL", float, "seconds a game lives without a move"),
    (
        "max_concurrent_rpcs",
        "ACCORDION_MAX_CONCURRENT_RPCS",
        int,
        "RPCs served at once; more get RESOURCE_EXHAUSTED",
    ),
    ("grace", "ACCORDION_GRACE", float, "seconds in-flight calls get to finish on SIGTERM"),
    ("metrics_port", "ACCORDION_METRICS_PORT", int, "Prometheus /metrics port on the listen host (0: off)"),
    ("log_level", "ACCORDION_LOG_LEVEL", str, "debug, info, warning or error"),
    ("health_interval", "ACCORDION_HEALTH_INTERVAL", float, "seconds between store pings for health"),
    ("store_timeout", "ACCORDION_STORE_TIMEOUT", float, "seconds one store call may take before UNAVAILABLE"),
    (
        "workers",
        "ACCORDION_WORKERS",
        int,
        "server processes sharing the port (0: one per available core with Redis, 1 with memory)",
    ),
    (
        "max_connection_age",
        "ACCORDION_MAX_CONNECTION_AGE",
        float,
        "seconds before a connection is asked to reconnect, so clients rebalance (0: never)",
    ),
    ("tls_cert", "ACCORDION_TLS_CERT", str, "PEM certificate (chain): serve TLS only"),
    ("tls_key", "ACCORDION_TLS_KEY", str, "PEM private key of --tls-cert"),
    ("tls_client_ca", "ACCORDION_TLS_CLIENT_CA", str, "PEM CA: require client certificates it signed (mTLS)"),
    ("health_port", "ACCORDION_HEALTH_PORT", int, "plaintext port serving only grpc.health.v1 (0: off)"),
    (
        "api_keys_file",
        "ACCORDION_API_KEYS_FILE",
        str,
        "JSON file of API key hashes and rate limits: every call then needs x-api-key",
    ),
    (
        "redis_wait_replicas",
        "ACCORDION_REDIS_WAIT_REPLICAS",
        int,
        "answer a write only once this many Redis replicas acknowledged it (WAIT; 0: off)",
    ),
    (
        "redis_wait_timeout",
        "ACCORDION_REDIS_WAIT_TIMEOUT",
        float,
        "seconds WAIT may take; fewer acknowledgements: UNAVAILABLE",
    ),
    ("solve_max_seconds", "ACCORDION_SOLVE_MAX_SECONDS", float, "the longest one Solve may search"),
    ("hint_max_seconds", "ACCORDION_HINT_MAX_SECONDS", float, "the solver's search behind one Hint"),
    (
        "winnable_max_seconds",
        "ACCORDION_WINNABLE_MAX_SECONDS",
        float,
        "all the searches behind one NewGame with winnable_only",
    ),
    ("solver_threads", "ACCORDION_SOLVER_THREADS", int, "solver searches running at once per process"),
    ("event_loop", "ACCORDION_EVENT_LOOP", str, "auto (uvloop when installed), uvloop or asyncio"),
)


def parse_args(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Flags override environment variables, which override the defaults."""
    env = os.environ if env is None else env
    parser = argparse.ArgumentParser(
        prog="accordion-server",
        description="Accordion as a service: the gRPC server (accordion.v1.AccordionService).",
        epilog="Every flag falls back to the environment variable in brackets, then to the default.",
    )
    defaults = Config()
    for name, var, kind, text in _OPTIONS:
        default = env.get(var, getattr(defaults, name))
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            type=kind,
            default=kind(default),
            help=f"{text} [{var}; default: %(default)s]",
        )
    args = parser.parse_args(argv)
    if args.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        parser.error(f"--log-level {args.log_level!r}: one of debug, info, warning, error")
    if bool(args.tls_cert) != bool(args.tls_key):
        parser.error("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        parser.error("--tls-client-ca (mTLS) needs --tls-cert and --tls-key")
    if args.workers < 0 or args.max_connection_age < 0:
        parser.error("--workers and --max-connection-age cannot be negative")
    if args.workers > 1 and not args.redis_url:
        parser.error("--workers > 1 needs --redis-url: the memory store lives in one process")
    if args.redis_wait_replicas < 0 or args.redis_wait_timeout <= 0:
        parser.error("--redis-wait-replicas cannot be negative; --redis-wait-timeout must be positive")
    if args.redis_wait_replicas and not args.redis_url:
        parser.error("--redis-wait-replicas needs --redis-url: the memory store has no replicas")
    if args.event_loop not in ("auto", "uvloop", "asyncio"):
        parser.error(f"--event-loop {args.event_loop!r}: one of auto, uvloop, asyncio")
    if args.event_loop == "uvloop" and importlib.util.find_spec("uvloop") is None:
        parser.error("--event-loop uvloop: uvloop is not installed")
    if args.api_keys_file:
        try:
            load_api_keys(args.api_keys_file)
        except (OSError, ValueError) as exc:
            parser.error(f"--api-keys-file: {exc}")
    return Config(**vars(args))


def configure_logging(
    level: str, stream: TextIO = sys.stderr, fields: Mapping[str, object] | None = None
) -> None:
    """JSON lines on ``stream``: one per RPC from the interceptor, plus lifecycle events.

    ``fields`` are added to every line (a worker process adds its index and pid)."""
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
    configure_access_log(stream, logging.getLevelName(level.upper()), extra)


def _server_options(config: Config) -> list[tuple[str, int]]:
    # One process: a taken port is an error, not a second server sharing it. Workers
    # (--workers > 1) share the port on purpose: the kernel spreads connections over them.
    reuse_port = 1 if config.workers > 1 else 0
    age = [
        ("grpc.max_connection_age_ms", max(1, round(config.max_connection_age * 1000))),
        ("grpc.max_connection_age_grace_ms", max(1, round(config.grace * 1000))),  # as for SIGTERM
    ]
    return [
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.max_metadata_size", MAX_METADATA_BYTES),  # soft and hard limit equal: no random
        ("grpc.absolute_max_metadata_size", MAX_METADATA_BYTES),  # rejections between the two
        ("grpc.so_reuseport", reuse_port),
        *(age if config.max_connection_age > 0 else []),
        ("grpc.keepalive_time_ms", 60_000),  # ping idle connections every minute...
        ("grpc.keepalive_timeout_ms", 20_000),  # ...and drop those that do not answer in 20 s
        ("grpc.keepalive_permit_without_calls", 1),  # WatchGame clients sit idle between events
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),  # tolerate client pings this often
        ("grpc.http2.max_ping_strikes", 3),
    ]


class AccordionServer:
    """One server: ``await start()`` returns the bound port; ``await stop()`` drains and closes."""

    def __init__(self, config: Config, store: GameStore | None = None) -> None:
        self.config = config
        self.store = store if store is not None else open_store(
            config.redis_url or None,
            wait_replicas=config.redis_wait_replicas,
            wait_timeout=config.redis_wait_timeout,
            # The games carry their own log of moves (accordion.api.codec); the store's event
            # stream only wakes watchers: a short one, and only for games someone watches.
            event_log_len=STREAM_EVENTS,
            watched_only=True,
        )
        self.health = health.aio.HealthServicer()
        # Every call gets a log line and metrics. Without API keys the handlers are wrapped once
        # (ObservedServer: no interceptor, which grpc.aio would run as a coroutine per call); with
        # them, the observability interceptor comes first (outermost) to log the calls refused.
        interceptors: list[grpc.aio.ServerInterceptor] = []
        if config.api_keys_file:
            interceptors = [
                ObservabilityInterceptor(),
                ApiKeyInterceptor(
                    load_api_keys(config.api_keys_file), _rate_limiter(self.store), timeout=config.store_timeout
                ),
            ]
        self.health_server: grpc.aio.Server | None = None
        self.server = grpc.aio.server(
            interceptors=interceptors,
            options=_server_options(config),
            maximum_concurrent_rpcs=config.max_concurrent_rpcs,
        )
        target: Any = self.server if interceptors else ObservedServer(self.server)
        budgets = Budgets(
            solve_seconds=config.solve_max_seconds,
            hint_seconds=config.hint_max_seconds,
            winnable_seconds=config.winnable_max_seconds,
            threads=config.solver_threads,
        )
        servicer = AccordionServicer(
            self.store, game_ttl=config.game_ttl, store_timeout=config.store_timeout, budgets=budgets
        )
        add_to_server(servicer, target)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, target)
        # enable_server_reflection, for an aio server through ``target``:
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
            reflection.aio.ReflectionServicer((SERVICE_NAME, HEALTH_SERVICE, reflection.SERVICE_NAME)), target
        )
        self.port = 0
        self.serving: bool | None = None
        self._health_task: asyncio.Task[None] | None = None

    async def start(self) -> int:
        if self.config.tls_cert:
            creds = server_credentials(self.config.tls_cert, self.config.tls_key, self.config.tls_client_ca)
            self.port = self.server.add_secure_port(self.config.listen, creds)
        else:
            self.port = self.server.add_insecure_port(self.config.listen)
        await self.check_store()
        await self.health.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
        if self.config.health_port:  # plaintext, health only: for probes that cannot do (m)TLS
            reuse = 1 if self.config.workers > 1 else 0
            self.health_server = grpc.aio.server(options=[("grpc.so_reuseport", reuse)])
            health_pb2_grpc.add_HealthServicer_to_server(self.health, self.health_server)
            host = self.config.listen.rsplit(":", 1)[0]
            self.health_server.add_insecure_port(f"{host}:{self.config.health_port}")
            await self.health_server.start()
        await self.server.start()
        self._health_task = asyncio.create_task(self._health_loop(), name="store-health")
        return self.port

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
        if self._health_task is not None:
            self._health_task.cancel()
        await self.server.stop(self.config.grace if grace is None else grace)
        if self.health_server is not None:
            await self.health_server.stop(0)
        await self.store.close()
        flush_access_log()


def _rate_limiter(store: GameStore) -> RateLimiter:
    """GCRA in the store's Redis (shared by every process on it), else in this process."""
    client = getattr(store, "_redis", None)  # RedisStore's command client (Redis or RedisCluster)
    return MemoryRateLimiter() if client is None else RedisRateLimiter(client)


def _store_label(config: Config) -> str:
    if not config.redis_url:
        return "memory (embedded; games live in this process)"
    parts = urlsplit(config.redis_url)  # never print credentials
    if "," in parts.netloc or "+" in parts.scheme:  # sentinel or cluster: several hosts
        return f"{parts.scheme.split('+')[-1]} at {parts.netloc.rpartition('@')[2]}{parts.path}"
    return f"redis at {parts.hostname or parts.path}{f':{parts.port}' if parts.port else ''}"


def _banner(config: Config, port: int) -> str:
    host = config.listen.rsplit(":", 1)[0].strip("[]") or "127.0.0.1"
    host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    addr = f"{host}:{port}"
    text = "\n".join(
        [
            f"accordion-server listening on {addr} (store: {_store_label(config)})",
            "Try it (grpcurl; the server has reflection):",
            f"  grpcurl -plaintext {addr} list accordion.v1.AccordionService",
            (
                f'  grpcurl -plaintext -d \'{{"variant": "accordion", "seed": 7}}\' {addr} '
                "accordion.v1.AccordionService/NewGame"
            ),
            (
                f'  grpcurl -plaintext -H \'authorization: Bearer <token>\' -d \'{{"game_id": "<id>", '
                f'"move": {{"notation": "<move>"}}}}\' {addr} accordion.v1.AccordionService/ApplyMove'
            ),
            f"  grpcurl -plaintext {addr} grpc.health.v1.Health/Check",
            "Stop with Ctrl-C (SIGINT) or SIGTERM.",
        ]
    )
    return text.replace("-plaintext", "-cacert ca.pem") if config.tls_cert else text


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
    if config.metrics_port:
        from prometheus_client import start_http_server

        host = config.listen.rsplit(":", 1)[0].strip("[]") or "0.0.0.0"
        start_http_server(config.metrics_port, addr=host)
    print(_banner(config, port), flush=True)
    log.info(
        "started",
        port=port,
        store="redis" if config.redis_url else "memory",
        game_ttl=config.game_ttl,
        metrics_port=config.metrics_port or None,
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


def main(argv: Sequence[str] | None = None) -> None:
    """The ``accordion-server`` console script."""
    config = parse_args(argv)
    configure_logging(config.log_level)
    from accordion.workers import resolve_workers, supervise

    workers = resolve_workers(config)
    if workers > 1:  # a supervisor of N worker processes on one port (see accordion.workers)
        sys.exit(supervise(replace(config, workers=workers)))
    run_loop(serve(replace(config, workers=1)), config.event_loop)


if __name__ == "__main__":
    main()
