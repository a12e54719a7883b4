"""`make serve-redis` (tools/serve_redis.py): a real redis-server with AOF and accordion-server
--workers 2 on it; a game played on it survives a restart of the whole stack (same data dir),
Ctrl-C and SIGTERM stop both cleanly, and a busy port is one clear line."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from accordion_client import AccordionClient, GameNotFound
from redis_server import free_port
from tests.api.helpers import ROOT

SCRIPT = ROOT / "tools" / "serve_redis.py"


@dataclass
class Stack:
    """One running serve-redis; ``lines`` is everything it printed (stdout and stderr)."""

    proc: subprocess.Popen[str]
    addr: str
    lines: list[str] = field(default_factory=list)
    _queue: queue.Queue[str | None] = field(default_factory=queue.Queue)

    def read_until(self, prefix: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            if line is None:
                break
            if line.startswith(prefix):
                return line
        raise AssertionError(f"no line starting {prefix!r}; output:\n" + "\n".join(self.lines))

    @property
    def redis_port(self) -> int:
        line = next(ln for ln in self.lines if ln.strip().startswith("redis-server "))
        return int(line.split("redis://127.0.0.1:")[1].split("/")[0])


def start(argv: list[str], addr: str) -> Stack:
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, like a shell job: Ctrl-C goes to the group
        env={
            **{k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("ACCORDION_")},
            "ACCORDION_NEWGAME_RATE": "0",
            "ACCORDION_WATCH_RATE": "0",
        },  # the load tool runs against it (docs/load.md)
    )
    stack = Stack(proc, addr)

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            stack.lines.append(line.rstrip("\n"))
            stack._queue.put(line.rstrip("\n"))
        stack._queue.put(None)

    threading.Thread(target=pump, daemon=True).start()
    stack.read_until("serve-redis: ready", 120)
    return stack


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def stacks() -> Iterator[list[Stack]]:
    """Whatever a test started is killed at teardown, even when it failed half-way."""
    started: list[Stack] = []
    yield started
    for stack in started:
        if stack.proc.poll() is None:
            os.killpg(stack.proc.pid, signal.SIGKILL)
            stack.proc.wait()


def test_a_game_survives_a_restart_of_the_stack_and_both_stop_cleanly(
    tmp_path: Path, stacks: list[Stack]
) -> None:
    port = free_port()
    addr = f"127.0.0.1:{port}"
    data = tmp_path / "data"
    args = f"--listen {addr} --data-dir {data}"
    # 1. `make serve-redis`, stopped by Ctrl-C (SIGINT to the whole process group, as a terminal does).
    first = start(["make", "-s", "serve-redis", "WORKERS=2", f"SERVE_REDIS_ARGS={args}"], addr)
    stacks.append(first)
    assert any(line.strip() == f"accordion-server (2 workers) on {addr}" for line in first.lines)
    assert any(f"append-only file in {data}" in line for line in first.lines)
    redis_port = first.redis_port
    assert redis_port != 6379
    with AccordionClient(addr) as client:
        game = client.new_game(seed=7)
        for _ in range(3):
            game.play(game.legal[0])
        played = (game.id, game.token, game.version, game.text)
    with redis.Redis(port=redis_port) as r:  # the game is in this Redis, not in a server's memory
        assert r.dbsize() > 0 and r.config_get("appendonly") == {"appendonly": "yes"}
    os.killpg(first.proc.pid, signal.SIGINT)
    first.proc.wait(60)
    stopped = first.read_until("serve-redis: stopped", 10)
    assert stopped == "serve-redis: stopped (server 0, redis 0)"
    assert not listening(port) and not listening(redis_port)
    assert (data / "appendonlydir").is_dir()

    # 2. The script itself on the same data dir, stopped by SIGTERM: the game is still there.
    second = start([sys.executable, str(SCRIPT), "--workers", "2", *args.split()], addr)
    stacks.append(second)
    with AccordionClient(addr) as client:
        again = client.open_game(played[0], played[1])
        assert (again.id, again.token, again.version, again.text) == played
        again.play(again.legal[0])
        assert again.version == played[2] + 1
        with pytest.raises(GameNotFound):
            client.open_game("A" * 22, played[1])  # a game that never was: not found
    second.proc.send_signal(signal.SIGTERM)
    assert second.proc.wait(60) == 0
    assert second.read_until("serve-redis: stopped", 10) == "serve-redis: stopped (server 0, redis 0)"
    assert not listening(port) and not listening(second.redis_port)
    assert not any("Traceback" in line for line in first.lines + second.lines)


def test_a_busy_port_is_one_clear_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        addr = f"127.0.0.1:{busy.getsockname()[1]}"
        done = subprocess.run(
            [sys.executable, str(SCRIPT), "--listen", addr, "--data-dir", str(tmp_path / "d")],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr.strip() == f"serve-redis: {addr} is already in use (--listen another host:port)"
    assert not (tmp_path / "d").exists()  # nothing started, nothing written
