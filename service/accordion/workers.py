"""Every core: N worker processes serving one port (SO_REUSEPORT), supervised by the parent.

``accordion-server --workers N`` (default: one per available core when the store is Redis;
always 1 with the memory store, whose games live in one process). Each worker is a full
server (its own event loop, gRPC server, Redis pools) binding the same host:port with
``grpc.so_reuseport``; the kernel spreads incoming *connections* over the workers (a
connection stays with the worker that accepted it, which is why ``--max-connection-age``
matters for long-lived clients). Nothing is shared between workers but Redis, which is
already what makes several servers one service.

The parent does not serve gRPC. It:

* reserves the port first when ``--listen`` asks for port 0, so every worker binds the same
  one, and prints the usual banner once all workers are serving;
* forwards SIGTERM/SIGINT to every worker: each turns health NOT_SERVING and drains for
  ``--grace`` seconds, exactly as a single-process server does; the parent exits 0 when all
  exited 0 (1 otherwise; a worker still running ``grace + 5`` s later is killed);
* **restarts** a worker that dies unexpectedly (a crash, the OOM killer, a SIGKILL): the
  other workers keep serving meanwhile, and the new one binds the same port. More than
  ``MAX_RESTARTS`` restarts within ``RESTART_WINDOW`` seconds means something is wrong
  with the process itself: the parent stops the rest and exits 1, so the orchestrator
  (Kubernetes, compose) restarts the whole pod/container with its own backoff;
* serves ``/metrics`` on ``--metrics-port`` for all workers together: Prometheus's
  multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, a temporary directory unless set; wiped at
  start), so one scrape sees the sum of every worker's counters and histograms.

Workers log JSON lines like the single process, with ``worker`` (index) and ``pid`` added;
the supervisor's own lines have ``"role": "supervisor"``. A worker is SIGKILLed when the parent
dies (``PR_SET_PDEATHSIG``): the supervisor's death is the server's death, as for one process,
and no worker lingers on the port without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import multiprocessing
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_any
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType
from typing import Any

import structlog

from accordion.api.access_log import flush_access_log
from accordion.config import Config
from accordion.listening import ListenError
from accordion.server import AccordionServer, configure_logging, freeze_startup_objects, run_loop
from accordion.startup_banner import banner

MAX_RESTARTS = 5
RESTART_WINDOW = 60.0
START_TIMEOUT = 60.0
log = structlog.get_logger("accordion.workers")


# --- how many ----------------------------------------------------------------------------------


def _cgroup_cpu_limit(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """The container's CPU quota in cores (cgroup v2 ``cpu.max``, else v1 CFS), or None."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    for base in (root / "cpu", root / "cpu,cpuacct"):
        try:
            quota_us = int((base / "cpu.cfs_quota_us").read_text())
            period_us = int((base / "cpu.cfs_period_us").read_text())
        except (OSError, ValueError):
            continue
        return None if quota_us <= 0 or period_us <= 0 else quota_us / period_us
    return None


def available_cores() -> int:
    """Cores this process may use: its CPU affinity, capped by a cgroup CPU limit (rounded up)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    limit = _cgroup_cpu_limit()
    if limit is not None:
        cores = min(cores, math.ceil(limit))
    return max(1, cores)


def resolve_workers(config: Config) -> int:
    """``--workers`` when set; otherwise the available cores with Redis, 1 with the memory store."""
    if config.workers > 0:
        return config.workers
    return 1 if config.memory_store else available_cores()


# --- the port -----------------------------------------------------------------------------------


def reserve_port(listen: str) -> tuple[str, socket.socket | None]:
    """For port 0: bind (never listen on) a SO_REUSEPORT socket to pick the port every worker
    then binds; held until the end so a restarted worker finds the port still ours.
    Returns ``host:port`` and the socket (None when the port was given)."""
    host, _, port_text = listen.rpartition(":")
    if int(port_text) != 0:
        return listen, None
    bare = host.strip("[]") or "0.0.0.0"
    family, kind, proto, _, addr = socket.getaddrinfo(
        bare, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(addr)
    return f"{host}:{sock.getsockname()[1]}", sock


# --- a worker -----------------------------------------------------------------------------------


def _die_with_parent(parent: int) -> None:
    """SIGKILL this process when the supervisor dies (Linux ``prctl(PR_SET_PDEATHSIG)``)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before prctl took effect
        os.kill(os.getpid(), signal.SIGKILL)


def _worker_main(config: Config, index: int, ready: Connection, parent: int) -> None:
    """The body of worker ``index`` (a spawned process): serve until SIGTERM/SIGINT."""
    _die_with_parent(parent)
    configure_logging(
        config.log_level,
        fields={"worker": index, "pid": os.getpid()},
        sample_every=config.access_log_sample,
        access_path=config.access_log,
    )
    if config.admin_port:  # ops: channelz is per process: each worker on a port of its own
        config = replace(config, admin_port=config.admin_port + index)
    try:
        run_loop(_serve_worker(config, index, ready), config.event_loop)
    except ListenError:  # told to the supervisor, which tells the person once
        sys.exit(1)


async def _serve_worker(config: Config, index: int, ready: Connection) -> None:
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    server = AccordionServer(config)
    try:
        port = await server.start()
    except ListenError as exc:
        ready.send(("failed", str(exc)))
        raise
    except Exception as exc:
        ready.send(("failed", f"{type(exc).__name__}: {exc}"))
        raise
    freeze_startup_objects()
    ready.send(("ready", os.getpid(), port))
    ready.close()
    log.info("started", port=port, store="memory" if config.memory_store else "redis")
    await stopping.wait()
    flush_access_log()  # before "stopping", so the lines keep their order
    log.info("stopping", grace=config.grace)
    await server.stop()
    log.info("stopped")


# --- the supervisor -----------------------------------------------------------------------------


@dataclass
class _Worker:
    index: int
    process: BaseProcess
    ready: Connection | None  # until the worker reports; then None
    pid: int


def _start(ctx: Any, config: Config, index: int) -> _Worker:
    reader, writer = ctx.Pipe(duplex=False)
    process = ctx.Process(
        target=_worker_main, args=(config, index, writer, os.getpid()), name=f"accordion-worker-{index}"
    )
    process.start()
    writer.close()
    return _Worker(index, process, reader, process.pid or 0)


def _read_ready(worker: _Worker) -> tuple[Any, ...]:
    """The worker's report; ("failed", why) when it closed the pipe without one."""
    assert worker.ready is not None
    try:
        message: tuple[Any, ...] = worker.ready.recv()
    except (EOFError, OSError):
        message = ("failed", f"exited with {worker.process.exitcode} before it was ready")
    worker.ready.close()
    worker.ready = None
    return message


def _await_ready(worker: _Worker, deadline: float, signals: list[int]) -> tuple[Any, ...]:
    assert worker.ready is not None
    while not worker.ready.poll(0.1):
        if signals:
            return ("failed", "stopped while starting")
        if time.monotonic() > deadline:
            return ("failed", f"not ready within {START_TIMEOUT:g} s")
    return _read_ready(worker)


def _metrics_dir() -> tuple[Path, bool]:
    """The multiprocess directory (``PROMETHEUS_MULTIPROC_DIR`` or a new temp dir), emptied of
    old ``*.db`` files; and whether we created it (then it is removed at the end)."""
    given = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if given:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        for old in path.glob("*.db"):
            old.unlink()
        return path, False
    path = Path(tempfile.mkdtemp(prefix="accordion-metrics-"))
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)  # inherited by the spawned workers
    return path, True


def _serve_metrics(config: Config, path: Path, workers: dict[int, _Worker]) -> None:
    """/metrics (only there): every worker's counters and histograms summed from ``path``, and
    each process's CPU and memory read from /proc at the scrape (``worker`` label)."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    from accordion.api.metrics import WorkerProcessCollector, serve_metrics

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(path))  # type: ignore[no-untyped-call]
    # (``workers`` is the supervisor's own dict: a restarted worker's new pid shows at once.)
    registry.register(WorkerProcessCollector(lambda: {w.index: w.pid for w in list(workers.values())}))
    host = config.listen.rsplit(":", 1)[0].strip("[]") or "0.0.0.0"
    serve_metrics(config.metrics_port, host, registry)


def _mark_dead(worker: _Worker, metrics: Path | None) -> None:
    if metrics is not None:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid, str(metrics))  # type: ignore[no-untyped-call]


def supervise(config: Config) -> int:
    """Run ``config.workers`` workers until SIGTERM/SIGINT; the process's exit status."""
    configure_logging(config.log_level, fields={"role": "supervisor", "pid": os.getpid()})
    listen, reservation = reserve_port(config.listen)
    port = int(listen.rsplit(":", 1)[1])
    metrics, own_metrics = _metrics_dir() if config.metrics_port else (None, False)
    worker_config = replace(config, listen=listen, metrics_port=0)
    ctx = multiprocessing.get_context("spawn")  # fork and gRPC do not mix
    signals: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        signals.append(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    workers: dict[int, _Worker] = {}
    status = 0
    try:
        for index in range(config.workers):
            workers[index] = _start(ctx, worker_config, index)
        deadline = time.monotonic() + START_TIMEOUT
        for worker in workers.values():
            message = _await_ready(worker, deadline, signals)
            if signals:
                break  # told to stop while starting: stop, without calling it a failure
            if message[0] != "ready":
                log.error("worker did not start", worker=worker.index, why=message[1])
                if str(message[1]).startswith("cannot listen"):  # the person can act on this one
                    print(f"accordion-server: {message[1]}", file=sys.stderr, flush=True)
                status = 1
                break
        if status == 0 and not signals:
            if metrics is not None:
                _serve_metrics(config, metrics, workers)
            print(banner(config, port), flush=True)
            log.info(
                "started",
                port=port,
                workers=config.workers,
                worker_pids=[w.pid for w in workers.values()],
                store="memory" if config.memory_store else "redis",
                metrics_port=config.metrics_port or None,
            )
            status = _watch(ctx, worker_config, workers, signals, metrics)
        log.info("stopping", grace=config.grace)
        status = max(status, _stop_all(workers, config.grace))
        log.info("stopped", status=status)
        return status
    finally:
        for worker in workers.values():
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(5)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if reservation is not None:
            reservation.close()
        if metrics is not None and own_metrics:
            shutil.rmtree(metrics, ignore_errors=True)


def _watch(
    ctx: Any, config: Config, workers: dict[int, _Worker], signals: list[int], metrics: Path | None
) -> int:
    """Restart workers that die until a signal comes (0) or they die too often (1)."""
    restarts: deque[float] = deque()
    while not signals:
        waitables: list[Any] = [w.process.sentinel for w in workers.values()]
        waitables += [w.ready for w in workers.values() if w.ready is not None]
        wait_any(waitables, timeout=0.5)
        for worker in list(workers.values()):
            if worker.ready is not None and worker.ready.poll():
                message = _read_ready(worker)
                if message[0] == "ready":
                    log.info("worker ready", worker=worker.index, worker_pid=worker.pid)
            if worker.process.exitcode is None or signals:
                continue
            code = worker.process.exitcode
            cause = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
            log.warning("worker died; restarting it", worker=worker.index, worker_pid=worker.pid, cause=cause)
            _mark_dead(worker, metrics)
            now = time.monotonic()
            restarts.append(now)
            while restarts and restarts[0] < now - RESTART_WINDOW:
                restarts.popleft()
            if len(restarts) > MAX_RESTARTS:
                log.error("workers keep dying: giving up", restarts=len(restarts), window_s=RESTART_WINDOW)
                return 1
            workers[worker.index] = _start(ctx, config, worker.index)
    return 0


def _stop_all(workers: dict[int, _Worker], grace: float) -> int:
    """SIGTERM every worker (each drains for ``grace``); 0 when all exit 0 in time."""
    for worker in workers.values():
        if worker.process.exitcode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace + 5
    status = 0
    for worker in workers.values():
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.exitcode is None:
            log.error("worker did not stop in time: killed", worker=worker.index, worker_pid=worker.pid)
            worker.process.kill()
            worker.process.join(5)
            status = 1
        elif worker.process.exitcode != 0:
            status = 1
    return status
