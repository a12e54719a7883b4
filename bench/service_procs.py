"""bench/service.py's processes: the bare echo server (a child: ``bench/service.py --serve-echo``),
the servers' command lines (``--source``, ``--pure-ab``, the canned ApplyMove of ``--targets floor``),
starting a server pinned to a core and reading its CPU from /proc, Redis, and py-spy (``--profile``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # redis_server: the binary, a free port

from redis_server import free_port, redis_server_binary  # noqa: E402

ECHO_METHOD = "/bench.Echo/Echo"
ECHO_PAYLOAD = bytes(range(64))
SERVER_CORE, CLIENT_CORE = 0, 1
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- the echo server (run as a child: bench/service.py --serve-echo) ------------------------------


async def _serve_echo() -> None:
    async def echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        return request

    server = grpc.aio.server()
    handler = grpc.unary_unary_rpc_method_handler(echo)  # no (de)serializer: bytes in, bytes out
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"echo listening on 127.0.0.1:{port}", flush=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(0)


def _run_loop(main: Awaitable[None], use_uvloop: bool) -> None:
    if use_uvloop:
        import uvloop

        uvloop.run(main)  # type: ignore[arg-type]
    else:
        asyncio.run(main)  # type: ignore[arg-type]


# --- processes ------------------------------------------------------------------------------------


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    addr: str = ""

    def cpu_seconds(self) -> float:
        """User + system CPU of the process and its live children (workers), from /proc."""
        total = 0.0
        for pid in [self.popen.pid, *_children(self.popen.pid)]:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / CLK_TCK
        return total

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def pid_cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _pinned(core: int | None) -> Callable[[], None] | None:
    if core is None:
        return None
    return lambda: os.sched_setaffinity(0, {core})


def start_listening(
    name: str, argv: list[str], banner: str, core: int | None, log: Path, env: dict[str, str] | None = None
) -> Proc:
    """Start ``argv`` (pinned to ``core``) and wait for the line starting with ``banner``; its
    4th word is host:port (the servers here print ``... listening on HOST:PORT ...``)."""
    err = log.open("ab")
    popen = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=err,
        preexec_fn=_pinned(core),
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    err.close()
    assert popen.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = popen.stdout.readline().decode(errors="replace")
        if not line and popen.poll() is not None:
            raise RuntimeError(f"{name} exited with {popen.returncode}; see {log}")
        if line.startswith(banner):
            proc = Proc(name, popen, line.split()[3])
            # Drain the rest of stdout so the child never blocks on a full pipe.
            threading_drain(popen)
            return proc
    popen.kill()
    raise RuntimeError(f"{name} did not start in 30 s; see {log}")


def threading_drain(popen: subprocess.Popen[bytes]) -> None:
    import threading

    def drain() -> None:
        assert popen.stdout is not None
        for _ in popen.stdout:
            pass

    threading.Thread(target=drain, daemon=True).start()


def start_redis(workdir: Path, core: int | None) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
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
    popen = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_pinned(core)
    )
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


SOURCE: dict[str, Any] = {}  # --source/--hide-hiredis: run the servers from another tree


# The floor (``--targets floor``): accordion-server as deployed (memory store, logs at the bench's
# level, metrics, uvloop) whose ApplyMove answers every call with the first reply it made. Nothing
# of the move runs (no validation, auth, engine or store): what is left is gRPC, the request's
# parse, the handlers' wrappers, the access log and the metrics, i.e. the most any ApplyMove of
# this server can reach. Bench-only: the patch is applied in the child before the server starts.
CANNED_APPLY_MOVE = """
from accordion.api import servicer as _servicer
_real = _servicer.AccordionServicer.ApplyMove
_canned = []
async def _apply_move(self, request, context):
    if not _canned:
        _canned.append(await _real(self, request, context))
    return _canned[0]
_servicer.AccordionServicer.ApplyMove = _apply_move
"""


def pure_copy(workdir: Path) -> Path:
    """``--pure-ab``: the package the servers run (``--source`` or this tree's), copied without the
    modules mypyc compiled (the solver's C core kept): the same source, interpreted."""
    src = Path(SOURCE.get("dir") or ROOT / "service") / "accordion"
    dst = workdir / "pure"
    shutil.copytree(src, dst / "accordion", ignore=shutil.ignore_patterns("__pycache__"))
    for so in (dst / "accordion").rglob("*.so"):
        if not so.name.startswith("_csolver"):
            so.unlink()
    return dst


def server_argv(
    redis_port: int | None, workers: int = 1, canned: bool = False, source: Path | None = None
) -> list[str]:
    exe = Path(sys.executable).parent / "accordion-server"
    argv = [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else ["-m", "accordion"])]
    source_dir = source or SOURCE.get("dir")
    if source_dir or SOURCE.get("hide_hiredis") or canned or SOURCE.get("gc_threshold"):
        boot = "import sys\n"
        if SOURCE.get("gc_threshold"):  # kept through the server's gc.freeze() at start-up
            boot += f"import gc\ngc.set_threshold(*{tuple(SOURCE['gc_threshold'])!r})\n"
        if SOURCE.get("hide_hiredis"):
            boot += "sys.modules['hiredis'] = None\n"  # redis-py then parses replies in Python
        if source_dir:
            boot += f"sys.path.insert(0, {str(source_dir)!r})\n"
        if canned:
            boot += CANNED_APPLY_MOVE
        boot += "sys.argv[0] = 'accordion-server'\n"
        # The entry point moved to accordion.__main__; an older --source tree has it in server.
        boot += (
            "try:\n    from accordion.__main__ import main\n"
            "except ImportError:\n    from accordion.server import main\n"
        )
        boot += "main()\n"
        argv = [sys.executable, "-c", boot]
    argv += ["--listen", "127.0.0.1:0", "--workers", str(workers)]
    if redis_port is not None:
        argv += ["--redis-url", f"redis://127.0.0.1:{redis_port}/0"]
    return argv


def start_profile(
    proc: Proc, name: str, args: argparse.Namespace
) -> tuple[subprocess.Popen[bytes], Path] | None:
    """py-spy on the server during a closed-loop phase (``--profile DIR``): collapsed stacks."""
    if not args.profile:
        return None
    out = Path(args.profile) / f"{name}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy"
    argv = [
        spy,
        "record",
        "--pid",
        str(proc.popen.pid),
        "--duration",
        str(int(args.warmup + args.duration)),
        "--rate",
        "250",
        "--format",
        "raw",
        "--output",
        str(out),
        "--nonblocking",
    ]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), out


def finish_profile(spy: tuple[subprocess.Popen[bytes], Path] | None, top: int = 30) -> None:
    if spy is None:
        return
    popen, path = spy
    popen.wait(60)
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        total += n
        frames = [
            re.sub(r" \(/.*/(site-packages|service|lib/python3[.0-9]*)/", " (", f) for f in stack.split(";")
        ]
        for f in set(frames):
            inclusive[f] += n
        own[frames[-1]] += n
    lines = [f"{path.stem}: {total} samples", "inclusive:"]
    lines += [f"  {100 * n / total:5.1f}%  {f}" for f, n in inclusive.most_common(top)]
    lines += ["self:"] + [f"  {100 * n / total:5.1f}%  {f}" for f, n in own.most_common(top)]
    path.with_suffix(".top").write_text("\n".join(lines) + "\n")
