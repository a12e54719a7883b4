"""The server's configuration: the ``Config`` dataclass, its flags (each with an environment
variable behind it) and ``parse_args``. The start-up banner, which only reads a Config, is
``accordion.startup_banner``.

Nothing here imports the server: ``accordion.server`` (one process), ``accordion.workers``
(``--workers N``) and ``accordion.__main__`` (the ``accordion-server`` script) all import this.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from accordion.netaddr import parse_networks
from accordion.store.factory import is_memory_url


@dataclass(frozen=True)
class Config:
    listen: str = "127.0.0.1:50051"
    redis_url: str = ""
    game_ttl: float = 86400.0
    deal_code_ttl: float = 30 * 86400.0  # seconds a deal code deals its game (issue 29)
    max_concurrent_rpcs: int = 1000
    grace: float = 10.0
    metrics_port: int = 0
    log_level: str = "info"
    access_log_sample: int = 1  # ops: write 1 in N of the per-call info lines (1: all)
    access_log: str = ""  # ops: a file the per-call lines are appended to ("": with the log, stderr)
    admin_port: int = 0  # ops: gRPC channelz and health on the listen host (0: off; workers: + index)
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
    # One client's share of the solver (accordion.api.fairpool): searches at once, waiting.
    solver_threads_per_client: int = 1
    solver_queue_per_client: int = 4
    solver_queue: int = 100  # searches waiting in all
    # Pools of winnable deals (sessions/winnable.py): refilled up to the target below the low
    # watermark, one deal's search at a time within these budgets (0 target: no pools).
    winnable_pool_target: int = 20
    winnable_pool_low_water: int = 5
    winnable_pool_deal_nodes: int = 2_000_000
    winnable_pool_deal_seconds: float = 10.0
    event_loop: str = "auto"  # uvloop when installed (auto), or asyncio's own
    # What one client may hold (accordion.api.limits); health has a budget of its own.
    max_rpcs_per_client: int = 250  # calls at once from one client (its API key, else its IP); 0: off
    max_streams_per_connection: int = 100  # HTTP/2 streams open at once on one connection
    max_watches_per_connection: int = 16  # WatchGame streams at once on one connection
    max_watches_per_game: int = 64  # WatchGame streams at once on one game (per process)
    max_health_rpcs: int = 200  # grpc.health.v1 Check calls at once (apart from every other budget)
    max_health_watches: int = 100  # grpc.health.v1 Watch streams at once (apart from Check's budget)
    max_health_watches_per_client: int = 5  # of those, from one client (its IP address)
    request_timeout: float = 5.0  # seconds a call's request message may take to arrive
    reflection: str = "on"  # gRPC server reflection (grpcurl without .proto files): on or off
    # NewGame cannot evict the players (issue 28): a per-client rate, an idle time before the
    # memory store's cap may evict a game, and whose x-forwarded-for names the client.
    newgame_rate: float = 10.0  # NewGame calls a second from one client (API keys exempt); 0: off
    newgame_burst: int = 100  # NewGame calls one quiet client may make at once
    watch_rate: float = 5.0  # WatchGame streams a second one client may open (API keys exempt); 0: off
    watch_burst: int = 50  # WatchGame streams one quiet client may open at once
    evict_idle: float = 300.0  # seconds untouched before the memory store's cap may evict a game
    trusted_proxies: str = ""  # CIDRs whose x-forwarded-for names the client
    otlp_endpoint: str = ""  # OpenTelemetry traces over OTLP/gRPC to this URL (empty: off)

    @property
    def memory_store(self) -> bool:
        """Whether games live in this process (no URL, or ``memory://``): one worker only."""
        return is_memory_url(self.redis_url)


# (flag, environment variable, type, help). The table in docs/configuration.md mirrors this one.
OPTIONS: tuple[tuple[str, str, type, str], ...] = (
    ("listen", "ACCORDION_LISTEN", str, "host:port to serve on (port 0: any free port)"),
    (
        "redis_url",
        "REDIS_URL",
        str,
        "Redis URL (redis://, rediss://, unix://, redis+sentinel://, redis+cluster://); "
        "empty or memory://[?max_games=N]: the embedded memory store (one process; at most N games, "
        "default 100000, the least recently used evicted; max_games=none: no cap)",
    ),
    ("game_ttl", "ACCORDION_GAME_TTL", float, "seconds a game lives without a move"),
    ("deal_code_ttl", "ACCORDION_DEAL_CODE_TTL", float, "seconds a deal code deals its game (from NewGame)"),
    (
        "max_concurrent_rpcs",
        "ACCORDION_MAX_CONCURRENT_RPCS",
        int,
        "RPCs served at once (health apart); more get RESOURCE_EXHAUSTED",
    ),
    ("grace", "ACCORDION_GRACE", float, "seconds in-flight calls get to finish on SIGTERM"),
    ("metrics_port", "ACCORDION_METRICS_PORT", int, "Prometheus /metrics port on the listen host (0: off)"),
    ("log_level", "ACCORDION_LOG_LEVEL", str, "debug, info, warning or error"),
    (  # ops
        "access_log_sample",
        "ACCORDION_ACCESS_LOG_SAMPLE",
        int,
        "write 1 in N of the per-call info lines (server faults always; metrics count every call)",
    ),
    (  # ops
        "access_log",
        "ACCORDION_ACCESS_LOG",
        str,
        "file the per-call access lines are appended to (empty: stderr, with the other log lines)",
    ),
    (  # ops
        "admin_port",
        "ACCORDION_ADMIN_PORT",
        int,
        "gRPC admin port on the listen host: channelz and health, no limits, not for clients "
        "(0: off; with --workers, worker i listens on this port + i)",
    ),
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
    (
        "solver_threads_per_client",
        "ACCORDION_SOLVER_THREADS_PER_CLIENT",
        int,
        "solver searches (Solve, Hint, winnable deals) running at once for one client",
    ),
    (
        "solver_queue_per_client",
        "ACCORDION_SOLVER_QUEUE_PER_CLIENT",
        int,
        "solver searches waiting for one client; more get RESOURCE_EXHAUSTED",
    ),
    (
        "solver_queue",
        "ACCORDION_SOLVER_QUEUE",
        int,
        "solver searches waiting in all; more get RESOURCE_EXHAUSTED",
    ),
    (
        "winnable_pool_target",
        "ACCORDION_WINNABLE_POOL_TARGET",
        int,
        "deals proven winnable a pool (per variant and option set) is refilled up to (0: no pools)",
    ),
    (
        "winnable_pool_low_water",
        "ACCORDION_WINNABLE_POOL_LOW_WATER",
        int,
        "a winnable pool holding fewer deals than this is refilled in the background",
    ),
    (
        "winnable_pool_deal_nodes",
        "ACCORDION_WINNABLE_POOL_DEAL_NODES",
        int,
        "positions the refill's solver spends on one deal before passing it over",
    ),
    (
        "winnable_pool_deal_seconds",
        "ACCORDION_WINNABLE_POOL_DEAL_SECONDS",
        float,
        "seconds the refill's solver spends on one deal at most",
    ),
    ("event_loop", "ACCORDION_EVENT_LOOP", str, "auto (uvloop when installed), uvloop or asyncio"),
    (
        "max_rpcs_per_client",
        "ACCORDION_MAX_RPCS_PER_CLIENT",
        int,
        "calls at once from one client (its API key, else its IP address); 0: no per-client cap",
    ),
    (
        "max_streams_per_connection",
        "ACCORDION_MAX_STREAMS_PER_CONNECTION",
        int,
        "HTTP/2 streams (calls, sent or half-sent) open at once on one connection",
    ),
    (
        "max_watches_per_connection",
        "ACCORDION_MAX_WATCHES_PER_CONNECTION",
        int,
        "WatchGame streams at once on one connection",
    ),
    ("max_watches_per_game", "ACCORDION_MAX_WATCHES_PER_GAME", int, "WatchGame streams at once on one game"),
    (
        "max_health_rpcs",
        "ACCORDION_MAX_HEALTH_RPCS",
        int,
        "grpc.health.v1 Check calls at once: a budget apart from every other call's (10 per client)",
    ),
    (
        "max_health_watches",
        "ACCORDION_MAX_HEALTH_WATCHES",
        int,
        "grpc.health.v1 Watch streams at once: a budget apart from Check's, so probes never wait on them",
    ),
    (
        "max_health_watches_per_client",
        "ACCORDION_MAX_HEALTH_WATCHES_PER_CLIENT",
        int,
        "grpc.health.v1 Watch streams at once from one client (its IP address)",
    ),
    (
        "request_timeout",
        "ACCORDION_REQUEST_TIMEOUT",
        float,
        "seconds a call's request message may take to arrive after its headers",
    ),
    (
        "reflection",
        "ACCORDION_REFLECTION",
        str,
        "on or off: gRPC server reflection (grpcurl lists and calls without .proto files); "
        "deploy/ turns it off on the public port",
    ),
    (
        "newgame_rate",
        "ACCORDION_NEWGAME_RATE",
        float,
        "NewGame calls a second from one client, API keys exempt (0: unlimited, for load tests); "
        "beyond it RESOURCE_EXHAUSTED RATE_LIMITED",
    ),
    ("newgame_burst", "ACCORDION_NEWGAME_BURST", int, "NewGame calls one quiet client may make at once"),
    (
        "watch_rate",
        "ACCORDION_WATCH_RATE",
        float,
        "WatchGame streams a second one client may open, API keys exempt (0: unlimited, for load tests); "
        "beyond it RESOURCE_EXHAUSTED RATE_LIMITED",
    ),
    ("watch_burst", "ACCORDION_WATCH_BURST", int, "WatchGame streams one quiet client may open at once"),
    (
        "evict_idle",
        "ACCORDION_EVICT_IDLE",
        float,
        "memory store: seconds a game must go untouched before the cap may evict it; none that old: "
        "NewGame gets RESOURCE_EXHAUSTED STORE_FULL (0: evict the least recently used however recent)",
    ),
    (
        "trusted_proxies",
        "ACCORDION_TRUSTED_PROXIES",
        str,
        "CIDRs of proxies whose x-forwarded-for names the client for per-client limits "
        "(the right-most untrusted address); empty: the peer address",
    ),
    (
        "otlp_endpoint",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        str,
        "OpenTelemetry traces (a span per RPC, its store calls and solver runs) over OTLP/gRPC "
        "to this URL, e.g. http://127.0.0.1:4317 (empty: off)",
    ),
)


def version() -> str:
    """The installed distribution's version (what ``--version`` prints)."""
    try:
        return importlib.metadata.version("accordion-service")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "unknown"


def parse_args(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Flags override environment variables, which override the defaults."""
    env = os.environ if env is None else env
    parser = argparse.ArgumentParser(
        prog="accordion-server",
        description="Accordion as a service: the gRPC server (accordion.v1.AccordionService).",
        epilog="Every flag falls back to the environment variable in brackets, then to the default.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    defaults = Config()
    for name, var, kind, text in OPTIONS:
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
    if args.access_log_sample < 1:  # ops
        parser.error("--access-log-sample: 1 (every line) or more (1 in N)")
    if not 0 <= args.admin_port < 65536:  # ops
        parser.error("--admin-port: a port number (0: off)")
    if bool(args.tls_cert) != bool(args.tls_key):
        parser.error("--tls-cert and --tls-key go together")
    if args.tls_client_ca and not args.tls_cert:
        parser.error("--tls-client-ca (mTLS) needs --tls-cert and --tls-key")
    if args.workers < 0 or args.max_connection_age < 0:
        parser.error("--workers and --max-connection-age cannot be negative")
    if args.workers > 1 and is_memory_url(args.redis_url):
        parser.error("--workers > 1 needs --redis-url: the memory store lives in one process")
    if args.redis_wait_replicas < 0 or args.redis_wait_timeout <= 0:
        parser.error("--redis-wait-replicas cannot be negative; --redis-wait-timeout must be positive")
    if args.redis_wait_replicas and is_memory_url(args.redis_url):
        parser.error("--redis-wait-replicas needs --redis-url: the memory store has no replicas")
    if args.reflection not in ("on", "off"):
        parser.error(f"--reflection {args.reflection!r}: on or off")
    if args.event_loop not in ("auto", "uvloop", "asyncio"):
        parser.error(f"--event-loop {args.event_loop!r}: one of auto, uvloop, asyncio")
    if args.event_loop == "uvloop" and importlib.util.find_spec("uvloop") is None:
        parser.error("--event-loop uvloop: uvloop is not installed")
    positive = (
        "max_concurrent_rpcs",
        "max_streams_per_connection",
        "max_watches_per_connection",
        "max_watches_per_game",
        "max_health_rpcs",
        "max_health_watches",
        "max_health_watches_per_client",
        "solver_threads",
        "solver_threads_per_client",
    )
    for name in positive:
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.solver_queue_per_client < 0 or args.solver_queue < 0:
        parser.error("--solver-queue-per-client and --solver-queue cannot be negative")
    if args.winnable_pool_target < 0 or not 0 <= args.winnable_pool_low_water <= args.winnable_pool_target:
        parser.error("--winnable-pool-target cannot be negative; --winnable-pool-low-water: 0 to the target")
    if args.winnable_pool_deal_nodes < 1 or args.winnable_pool_deal_seconds <= 0:
        parser.error("--winnable-pool-deal-nodes and --winnable-pool-deal-seconds must be positive")
    if args.max_rpcs_per_client < 0 or args.request_timeout <= 0:
        parser.error("--max-rpcs-per-client cannot be negative; --request-timeout must be positive")
    if args.newgame_rate < 0 or args.newgame_burst < 1 or args.evict_idle < 0:
        parser.error("--newgame-rate and --evict-idle cannot be negative; --newgame-burst must be at least 1")
    if args.watch_rate < 0 or args.watch_burst < 1:
        parser.error("--watch-rate cannot be negative; --watch-burst must be at least 1")
    try:
        parse_networks(args.trusted_proxies)
    except ValueError as exc:
        parser.error(f"--trusted-proxies: {exc}")
    if args.api_keys_file:
        # Imported here: the rest of this module is light enough for accordion-health (the
        # image's HEALTHCHECK, run every few seconds) to import for its --version.
        from accordion.api.apikeys import load_api_keys

        try:
            load_api_keys(args.api_keys_file)
        except (OSError, ValueError) as exc:
            parser.error(f"--api-keys-file: {exc}")
    return Config(**vars(args))
