"""bench/hostile.py's processes: a source tree and the flags its --help lists, the server under test
(its CPU and metrics), Envoy in front of it (``--envoy``) and Redis (row 1).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from hostile_calls import BANNER, CLK_TCK

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))
sys.path.insert(0, str(ROOT / "tests"))  # redis_server: the binary, a free port

from redis_server import free_port, redis_server_binary  # noqa: E402

# --- the server under test ------------------------------------------------------------------------


@dataclass
class Tree:
    """A source tree: the interpreter and path its server runs with, the flags its --help lists."""

    label: str
    dir: Path
    python: str
    env: dict[str, str]
    help_text: str = ""
    commit: str = ""  # git's short hash, "+" when the work tree has changes; "" outside git

    @classmethod
    def of(cls, label: str, directory: str) -> Tree:
        d = Path(directory).resolve()
        venv = d / ".venv" / "bin" / "python"
        python = str(venv) if venv.exists() else sys.executable
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("ACCORDION_")}
        env["PYTHONPATH"] = str(d / "service")
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # read the tree, write nothing into it
        tree = cls(label, d, python, env)
        tree.help_text = subprocess.run(
            [python, "-m", "accordion", "--help"], capture_output=True, text=True, env=env, cwd=d, timeout=120
        ).stdout
        head = subprocess.run(
            ["git", "-C", str(d), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        if head.returncode == 0:
            changed = subprocess.run(
                ["git", "-C", str(d), "status", "--porcelain", "--untracked-files=no"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            tree.commit = head.stdout.strip() + ("+" if changed else "")
        if "--listen" not in tree.help_text:
            raise SystemExit(f"{d}: `{python} -m accordion --help` lists no --listen")
        return tree

    def flags(self, wanted: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
        """The flags of ``wanted`` this tree has, as argv; and the names of those it lacks."""
        argv, missing = [], []
        for name, value in wanted:
            if name in self.help_text.split():
                argv += [name, value]
            else:
                missing.append(name)
        return argv, missing


@dataclass
class Server:
    popen: subprocess.Popen[bytes]
    addr: str
    metrics_port: int

    def cpu_seconds(self) -> float:
        total = 0.0
        for pid in [self.popen.pid, *_children(self.popen.pid)]:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / CLK_TCK
        return total

    def metric(self, name: str, label: str = "") -> float | None:
        """The sum of a metric's samples on /metrics (those whose labels hold ``label``), or None
        when the tree does not export it."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
                text = r.read().decode()
        except OSError:
            return None
        names = (name, name + "_total")  # (a counter's samples end in _total)
        values = [
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.split("{", 1)[0].split(" ", 1)[0] in names and label in line.rsplit(" ", 1)[0]
        ]
        return sum(values) if values else None

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return out


def start_server(tree: Tree, flags: list[str], log: Path) -> Server:
    metrics_port = free_port()
    argv = [
        tree.python,
        "-m",
        "accordion",
        "--listen",
        "127.0.0.1:0",
        "--workers",
        "1",
        "--metrics-port",
        str(metrics_port),
        *flags,
    ]
    out_path = log.with_suffix(".out")
    with out_path.open("wb") as out, log.open("ab") as err:
        popen = subprocess.Popen(argv, stdout=out, stderr=err, env=tree.env, cwd=tree.dir)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in out_path.read_text(errors="replace").splitlines():
            if line.startswith(BANNER):
                return Server(popen, line.split()[3], metrics_port)
        if popen.poll() is not None:
            raise RuntimeError(
                f"server exited with {popen.returncode}:\n{log.read_text(errors='replace')[-3000:]}"
            )
        time.sleep(0.05)
    popen.kill()
    raise RuntimeError(f"server did not start in 60 s: see {log}")


@dataclass
class Envoy:
    popen: subprocess.Popen[bytes]
    port: int

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def start_envoy(tree: Tree, upstream_port: int, workdir: Path) -> Envoy:
    """Envoy with the tree's own deploy/envoy/envoy.yaml (its ports and descriptor path
    rewritten, as tests/rest does) in front of ``upstream_port``; its listener's port read back
    from the admin API."""
    text = (tree.dir / "deploy" / "envoy" / "envoy.yaml").read_text()
    for old, new in (
        ("port_value: 50051", f"port_value: {upstream_port}"),
        ("port_value: 8080", "port_value: 0"),
        (
            "proto_descriptor: deploy/envoy/accordion.pb",
            f"proto_descriptor: {tree.dir / 'deploy' / 'envoy' / 'accordion.pb'}",
        ),
    ):
        if text.count(old) != 1:
            raise RuntimeError(f"{tree.dir}/deploy/envoy/envoy.yaml should hold {old!r} once")
        text = text.replace(old, new)
    text += "admin:\n  address:\n    socket_address: { address: 127.0.0.1, port_value: 0 }\n"
    config, admin_path, log = workdir / "envoy.yaml", workdir / "envoy-admin.txt", workdir / "envoy.log"
    config.write_text(text)
    admin_path.unlink(missing_ok=True)
    envoy_bin = shutil.which("envoy", path=str(Path(tree.python).parent)) or shutil.which(
        "envoy", path=str(Path(sys.executable).parent)
    )
    if envoy_bin is None:
        raise SystemExit("--envoy: no envoy binary beside the tree's interpreter or this one (make install)")
    with log.open("ab") as out:
        popen = subprocess.Popen(
            [
                envoy_bin,
                "-c",
                str(config),
                "--admin-address-path",
                str(admin_path),
                "--disable-hot-restart",
                "--concurrency",
                "1",
                "--log-level",
                "warning",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if popen.poll() is not None:
            raise RuntimeError(
                f"envoy exited with {popen.returncode}:\n{log.read_text(errors='replace')[-3000:]}"
            )
        admin = admin_path.read_text().strip() if admin_path.exists() else ""
        if admin:
            try:
                with urllib.request.urlopen(f"http://{admin}/ready", timeout=2) as r:
                    ready = r.status == 200
                with urllib.request.urlopen(f"http://{admin}/listeners?format=json", timeout=2) as r:
                    listeners = json.load(r)
            except OSError:
                ready = False
            if ready:
                address = listeners["listener_statuses"][0]["local_address"]["socket_address"]
                return Envoy(popen, int(address["port_value"]))
        time.sleep(0.05)
    popen.kill()
    raise RuntimeError("envoy did not get ready in 60 s")


def start_redis(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()  # never 6379
    argv = [
        redis_server_binary(),
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        str(workdir),
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
        "--logfile",
        str(workdir / "redis.log"),
    ]
    popen = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import redis

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if redis.Redis(port=port, socket_timeout=1).ping():
                return popen, port
        except redis.exceptions.ConnectionError:
            time.sleep(0.05)
    popen.kill()
    raise RuntimeError("redis-server did not start")


def redis_clients(port: int) -> int:
    """Clients connected to Redis now, this question's own connection left out."""
    import redis

    with redis.Redis(port=port, socket_timeout=5) as r:
        return len(r.client_list()) - 1
