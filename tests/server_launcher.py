"""The one way tests start ``accordion-server`` as a real process (as tests/redis_server.py is
for redis-server): the installed console script on 127.0.0.1, port 0, its address read from
the banner it prints, its output kept in files for assertions.

``launch(workdir, *args)`` returns a ``ServerProcess`` once the server listens, or raises
RuntimeError with everything it printed (and leaves no process behind).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BANNER = "accordion-server listening on "
# How long a test waits for a server (or Redis, Envoy) it starts to listen: generous, because on a
# loaded CI machine (2 cores, other jobs) a start that takes 1 s when idle has taken 30. Only a
# start that never comes waits this long.
START_TIMEOUT = 180.0


def server_command() -> list[str]:
    """The installed console script beside this interpreter (what `make serve` runs)."""
    script = shutil.which("accordion-server", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "accordion"]


# What every test server gets unless a test says otherwise (its ``env``, or a flag, which wins
# over the environment): the suites make games and open watches from one address far faster than
# a player, as a load tool does, so NewGame's and WatchGame's per-client rates are off for them
# (docs/load.md). The tests of those rates (tests/security/test_newgame_flood.py,
# test_watch_rate.py) pass --newgame-rate and --watch-rate themselves.
TEST_SERVER_ENV = {"ACCORDION_NEWGAME_RATE": "0", "ACCORDION_WATCH_RATE": "0"}


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment without the server's own variables (a developer's REDIS_URL or
    ACCORDION_* must not change what a test starts), plus ``TEST_SERVER_ENV`` and ``extra``."""
    env = {
        k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith(("ACCORDION_", "OTEL_"))
    }
    env.update(TEST_SERVER_ENV)
    env.update(extra or {})
    return env


@dataclass
class ServerProcess:
    proc: subprocess.Popen[bytes]
    addr: str
    out_path: Path
    err_path: Path
    _files: list[Any] = field(default_factory=list)

    def output(self) -> str:
        """Everything the process printed so far (stdout then stderr)."""
        return self.out_path.read_text(errors="replace") + self.err_path.read_text(errors="replace")

    def log_lines(self) -> list[str]:
        return [ln for ln in self.err_path.read_text(errors="replace").splitlines() if ln.startswith("{")]

    def terminate(self, timeout: float = 15) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in self._files:
            f.close()


def launch(
    workdir: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = START_TIMEOUT,
    name: str = "server",
    listen: str = "127.0.0.1:0",
) -> ServerProcess:
    """``accordion-server --listen <listen> *args`` with its output in ``workdir/<name>.out|err``,
    once its banner says it listens."""
    out_path, err_path = workdir / f"{name}.out", workdir / f"{name}.err"
    out, err = out_path.open("wb"), err_path.open("wb")
    proc = subprocess.Popen(
        [*server_command(), "--listen", listen, *args], stdout=out, stderr=err, env=clean_env(env), cwd=ROOT
    )
    sp = ServerProcess(proc, "", out_path, err_path, [out, err])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in out_path.read_text(errors="replace").splitlines():
            if line.startswith(BANNER):
                sp.addr = line.split()[3]
                return sp
        if proc.poll() is not None:
            sp.close()
            raise RuntimeError(f"accordion-server exited with {proc.returncode}:\n{sp.output()}")
        time.sleep(0.05)
    sp.close()
    raise RuntimeError(f"accordion-server did not start within {timeout:g} s:\n{sp.output()}")
