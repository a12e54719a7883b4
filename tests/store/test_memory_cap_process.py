"""The real server with a capped memory store: 50,000 NewGames over gRPC from a few client
processes, while the server's resident memory (VmRSS) is read at intervals. Once the cap is
reached, games are evicted as fast as they are made, and memory stops growing.

It takes about as long as the server needs to make 50,000 games: ~0.65 ms of CPU each, so
35 s or more on a busy 2-core machine (the clients' CPU besides). The numbers are sized so that
the store without its cap fails by far: the 35,000 games after the point measured would add
~87 MB (~2.5 KB each) where the bound is 16 MB."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path

import grpc
import grpc.aio
import pytest

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from server_launcher import START_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
GAMES = 50_000
CAP = 5_000
CLIENTS = 3  # processes
IN_FLIGHT = 24  # calls in flight per client process
GIVE_UP_S = 900  # a bound against a hang only: a loaded machine takes minutes, not seconds


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def start_server(store_url: str, out: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``accordion-server --redis-url <store_url>`` (the flag takes any store URL) on a free port."""
    script = Path(sys.executable).parent / "accordion-server"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "accordion.server"]
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("ACCORDION_")}
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [
                *command,
                "--listen",
                "127.0.0.1:0",
                "--redis-url",
                store_url,
                "--workers",
                "1",
                "--log-level",
                "error",
                # a load test: NewGame unlimited, and every game may be evicted at the cap (here
                # the games are made faster than any goes idle: the rule under test is the bound)
                "--newgame-rate",
                "0",
                "--evict-idle",
                "0",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for line in out.read_text(errors="replace").splitlines():
            if line.startswith("accordion-server listening on "):
                return proc, line.split()[3]
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"accordion-server did not start:\n{out.read_text(errors='replace')}")


def make_games(addr: str, first: int, count: int, done: Synchronized[int]) -> None:
    """A client process: ``count`` NewGames, IN_FLIGHT at a time, each with a request id."""

    async def run() -> None:
        async with grpc.aio.insecure_channel(addr) as channel:
            stub = pb_grpc.AccordionServiceStub(channel)
            numbers = iter(range(first, first + count))

            async def worker() -> None:
                for n in numbers:
                    request = pb.NewGameRequest(variant="accordion", seed=n, request_id=f"cap-{n}")
                    await stub.NewGame(request, timeout=30)
                    with done.get_lock():
                        done.value += 1

            await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))

    asyncio.run(run())


@pytest.mark.slow
async def test_a_capped_memory_store_keeps_the_server_bounded() -> None:
    with tempfile.TemporaryDirectory(prefix="acc-cap-") as tmp:
        proc, addr = start_server(f"memory://?max_games={CAP}", Path(tmp) / "server.out")
        try:
            async with grpc.aio.insecure_channel(addr) as channel:
                stub = pb_grpc.AccordionServiceStub(channel)
                first = await stub.NewGame(pb.NewGameRequest(variant="accordion", seed=1), timeout=10)
                token = (("authorization", f"Bearer {first.token}"),)
                await stub.GetGame(pb.GetGameRequest(game_id=first.game.id), metadata=token, timeout=10)

                ctx = multiprocessing.get_context("spawn")
                done: Synchronized[int] = ctx.Value("q", 0)  # type: ignore[assignment]
                share = GAMES // CLIENTS
                counts = [share + (GAMES - share * CLIENTS if i == 0 else 0) for i in range(CLIENTS)]
                starts = [sum(counts[:i]) for i in range(CLIENTS)]  # seeds and request ids: all distinct
                clients = [
                    ctx.Process(target=make_games, args=(addr, starts[i], counts[i], done))
                    for i in range(CLIENTS)
                ]
                t0 = time.monotonic()
                samples: list[tuple[int, int]] = []  # (games made, VmRSS KiB)
                for c in clients:
                    c.start()
                while any(c.is_alive() for c in clients) and time.monotonic() - t0 < GIVE_UP_S:
                    samples.append((done.value, rss_kib(proc.pid)))
                    await asyncio.sleep(0.25)
                for c in clients:
                    c.join(10)
                elapsed = time.monotonic() - t0
                samples.append((done.value, rss_kib(proc.pid)))
                cpu = sum(int(x) for x in Path(f"/proc/{proc.pid}/stat").read_text().split()[13:15])
                server_cpu = cpu / os.sysconf("SC_CLK_TCK")
                assert [c.exitcode for c in clients] == [0] * CLIENTS
                assert done.value == GAMES

                # The first game was evicted long ago (the least recently used).
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await stub.GetGame(pb.GetGameRequest(game_id=first.game.id), metadata=token, timeout=10)
                assert info.value.code() == grpc.StatusCode.NOT_FOUND, info.value
        finally:
            proc.terminate()
            proc.wait(10)

    # Memory: once well past the cap (3x), it stops growing. Without the cap the last 35,000
    # games would add ~87 MB (~2.5 KB each); with it, less than 16 MB.
    at_cap = next(rss for n, rss in samples if n >= 3 * CAP)
    peak = max(rss for _, rss in samples)
    end = samples[-1][1]
    report = (
        f"{GAMES} NewGames in {elapsed:.1f} s (server CPU {server_cpu:.1f} s); "
        f"VmRSS KiB at {3 * CAP} games: {at_cap}, peak {peak}, end {end}"
    )
    print(report)
    assert peak - at_cap < 16 * 1024, report
