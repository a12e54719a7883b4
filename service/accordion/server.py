"""The server shell: configuration, the grpc.aio server, health, reflection, metrics, signals.

Everything about games lives in ``accordion.api``; this module only wires it up:

* the store from ``--redis-url`` / ``REDIS_URL`` (Redis), else the embedded memory store;
* ``grpc.health.v1``: SERVING while the store answers a ping, checked every
  ``--health-interval`` seconds; NOT_SERVING while it does not, and from SIGTERM on;
* server reflection, so grpcurl and friends need no .proto files;
* SIGTERM/SIGINT → health NOT_SERVING → ``server.stop(grace)``: in-flight calls finish;
* a 64 KiB receive limit, keepalive, a cap on concurrent RPCs (RESOURCE_EXHAUSTED beyond it);
* Prometheus metrics on ``--metrics-port`` (0: off).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO
from urllib.parse import urlsplit

import grpc
import grpc.aio
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from accordion.api import SERVICE_NAME, AccordionServicer, ObservabilityInterceptor, add_to_server
from accordion.store import GameStore, open_store

MAX_RECEIVE_BYTES = 64 * 1024
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
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


# (flag, environment variable, type, help). The table in README.md mirrors this one.
_OPTIONS: tuple[tuple[str, str, type, str], ...] = (
    ("listen", "ACCORDION_LISTEN", str, "host:port to serve on (port 0: any free port)"),
    (
        "redis_url",
        "REDIS_URL",
        str,
        "Redis URL (redis://, rediss://, unix://); empty: the embedded memory store",
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
    return Config(**vars(args))


def configure_logging(level: str, stream: TextIO = sys.stderr) -> None:
    """JSON lines on ``stream``: one per RPC from the interceptor, plus lifecycle events."""
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )


def _server_options(config: Config) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.so_reuseport", 0),  # a taken port is an error, not a second server sharing it
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
        self.store = store if store is not None else open_store(config.redis_url or None)
        self.health = health.aio.HealthServicer()
        self.server = grpc.aio.server(
            interceptors=[ObservabilityInterceptor()],
            options=_server_options(config),
            maximum_concurrent_rpcs=config.max_concurrent_rpcs,
        )
        servicer = AccordionServicer(self.store, game_ttl=config.game_ttl, store_timeout=config.store_timeout)
        add_to_server(servicer, self.server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, HEALTH_SERVICE, reflection.SERVICE_NAME), self.server
        )
        self.port = 0
        self.serving: bool | None = None
        self._health_task: asyncio.Task[None] | None = None

    async def start(self) -> int:
        self.port = self.server.add_insecure_port(self.config.listen)
        await self.check_store()
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
        await self.store.close()


def _store_label(config: Config) -> str:
    if not config.redis_url:
        return "memory (embedded; games live in this process)"
    parts = urlsplit(config.redis_url)  # never print credentials
    return f"redis at {parts.hostname or parts.path}{f':{parts.port}' if parts.port else ''}"


def _banner(config: Config, port: int) -> str:
    host = config.listen.rsplit(":", 1)[0].strip("[]") or "127.0.0.1"
    host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    addr = f"{host}:{port}"
    return "\n".join(
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


async def serve(config: Config) -> None:
    server = AccordionServer(config)
    port = await server.start()
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
    log.info("stopping", grace=config.grace)
    await server.stop()
    log.info("stopped")


def main(argv: Sequence[str] | None = None) -> None:
    """The ``accordion-server`` console script."""
    config = parse_args(argv)
    configure_logging(config.log_level)
    asyncio.run(serve(config))


if __name__ == "__main__":
    main()
