"""bench/hostile.py's honest client and one row on one tree: the control, attack and after phases
around the attacker's process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from grpc_health.v1 import health_pb2
from hostile_calls import (
    EASY_SOLVE_EVERY,
    GETGAME_EVERY,
    HEALTH_EVERY,
    ROWS,
    Calls,
    OutOfGames,
    WrongAnswer,
    accordion_stub,
    code_of,
    health_stub,
)
from hostile_servers import Tree, redis_clients, start_envoy, start_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))

from accordion.v1 import accordion_pb2 as pb  # noqa: E402

HOSTILE = Path(__file__).with_name("hostile.py")  # the attacker runs as ``hostile.py --attack``

# --- the honest client ----------------------------------------------------------------------------


class Honest:
    """GetGame on its own game and health Check, at a steady pace, each call's result booked
    under the phase in force when it was sent; in row 4 an easy Solve too."""

    def __init__(self, addr: str) -> None:
        self.channel = grpc.aio.insecure_channel(addr, options=[("grpc.use_local_subchannel_pool", 1)])
        self.stub = accordion_stub(self.channel)
        self.health = health_stub(self.channel)
        self.phase = "setup"
        self.calls: dict[tuple[str, str], Calls] = {}
        self.solves: dict[str, Counter[str]] = {}
        self.game_id, self.md = "", ()
        self.easy_games: list[tuple[str, Any]] = []
        self.stopped = False

    def book(self, kind: str, phase: str, code: str, seconds: float) -> None:
        if phase in ("control", "attack", "after"):
            self.calls.setdefault((kind, phase), Calls()).add(code, seconds)

    async def new_game(self, variant: str = "accordion", seed: int = 7, **options: str) -> tuple[str, Any]:
        reply = await self.stub.NewGame(
            pb.NewGameRequest(variant=variant, seed=seed, options=options), timeout=30
        )
        return reply.game.id, (("authorization", f"Bearer {reply.token}"),)

    async def _paced(self, every: float, call: Any, kind: str) -> None:
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while not self.stopped:
            phase, t0 = self.phase, time.perf_counter()
            try:
                await call()
                code = "OK"
            except (TimeoutError, grpc.aio.AioRpcError) as exc:
                code = code_of(exc)
            except WrongAnswer as exc:  # answered, but not as an honest client needs
                code = str(exc)
            except OutOfGames:
                return
            self.book(kind, phase, code, time.perf_counter() - t0)
            next_at = max(next_at + every, loop.time())
            await asyncio.sleep(next_at - loop.time())

    async def get_game(self) -> None:
        await self.stub.GetGame(pb.GetGameRequest(game_id=self.game_id), metadata=self.md, timeout=2)

    async def check(self) -> None:
        reply = await self.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
        if reply.status != health_pb2.HealthCheckResponse.SERVING:
            raise WrongAnswer("NOT_SERVING")

    async def deal_easy_games(self, seeds: list[int]) -> None:
        """The easy Solves' games, dealt before the control phase (a NewGame is not timed)."""
        self.easy_games = [await self.new_game("accordion", seed) for seed in seeds]

    async def easy_solve(self) -> None:
        if not self.easy_games:
            raise OutOfGames
        phase = self.phase
        if phase not in ("control", "attack", "after"):
            return  # (not counted: keep the games for the phases that are)
        game_id, md = self.easy_games.pop(0)  # a new deal each time: nothing cached
        reply = await self.stub.Solve(pb.SolveRequest(game_id=game_id), metadata=md, timeout=5)
        outcome = pb.SolveOutcome.Name(reply.outcome).removeprefix("SOLVE_OUTCOME_")
        self.solves.setdefault(phase, Counter())[outcome + (" cached" if reply.cached else "")] += 1
        if reply.outcome != pb.SOLVE_OUTCOME_WON:
            raise WrongAnswer(outcome)

    def start(self, easy_solves: bool) -> list[asyncio.Task[None]]:
        tasks = [
            asyncio.create_task(self._paced(GETGAME_EVERY, self.get_game, "GetGame")),
            asyncio.create_task(self._paced(HEALTH_EVERY, self.check, "health")),
        ]
        if easy_solves:
            tasks.append(asyncio.create_task(self._paced(EASY_SOLVE_EVERY, self.easy_solve, "easy Solve")))
        return tasks

    async def close(self, tasks: list[asyncio.Task[None]]) -> None:
        self.stopped = True
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.channel.close()


def easy_accordion_seeds(tree: Tree, count: int = 95) -> list[int]:
    """Accordion seeds this tree's solver wins in under 20 ms alone (in a child process). 95:
    enough for the phases (an easy Solve every 200 ms), and within the NewGame burst a tree
    with a per-client NewGame rate allows one client (100 by default)."""
    code = (
        "import json, time\nfrom accordion.engine import new_game\nfrom accordion.solver import solve\n"
        "out = []\nseed = 1\n"
        f"while len(out) < {count} and seed < 5000:\n"
        "    g = new_game('accordion', {}, seed=seed)\n    t = time.perf_counter()\n"
        "    r = solve(g, max_seconds=0.05)\n"
        "    if r.outcome.name == 'WON' and time.perf_counter() - t < 0.02:\n        out.append(seed)\n"
        "    seed += 1\nprint(json.dumps(out))\n"
    )
    done = subprocess.run(
        [tree.python, "-c", code],
        capture_output=True,
        text=True,
        env=tree.env,
        cwd=tree.dir,
        timeout=300,
        check=True,
    )
    return list(json.loads(done.stdout))


# --- one row on one tree ----------------------------------------------------------------------------


@dataclass
class RowSetup:
    flags: list[tuple[str, str]]
    redis: bool = False
    memory_url: str = ""
    params: dict[str, Any] = field(default_factory=dict)


def row_setup(row: str) -> RowSetup:
    if row == "watch-cancel-leak":
        return RowSetup(
            [("--max-concurrent-rpcs", "100")], redis=True, params={"clients": 8, "per_client": 4}
        )
    if row == "health-watch-flood":
        return RowSetup([], params={"clients": 10})
    if row == "cached-solve":
        return RowSetup([], params={"clients": 8})
    if row == "solver-hog":
        return RowSetup([], params={"clients": 1, "long_solves": 4})
    if row == "solver-48-clients":
        return RowSetup([], params={"clients": 48})
    if row == "newgame-flood":
        return RowSetup([], memory_url="memory://?max_games=1000", params={"clients": 1, "concurrency": 16})
    raise SystemExit(f"no row {row!r}: the rows are {', '.join(ROWS.values())}")


async def run_row(
    row: str,
    tree: Tree,
    args: argparse.Namespace,
    workdir: Path,
    redis_port: int | None,
    easy_seeds: list[int],
) -> dict[str, Any]:
    setup = row_setup(row)
    wanted = list(setup.flags)
    if setup.redis:
        assert redis_port is not None
        import redis

        with redis.Redis(port=redis_port) as r:
            r.flushall()
        wanted.append(("--redis-url", f"redis://127.0.0.1:{redis_port}/0"))
    elif setup.memory_url:
        wanted.append(("--redis-url", setup.memory_url))
    if args.envoy:  # per-client limits then key on x-forwarded-for, where the tree can
        wanted.append(("--trusted-proxies", "127.0.0.1/32"))
    flags, missing = tree.flags(wanted)
    label = tree.label + ("+envoy" if args.envoy else "")
    out: dict[str, Any] = {
        "row": row,
        "tree": label,
        "dir": str(tree.dir),
        "commit": tree.commit,
        "flags": flags,
        "flags_left_out": missing,
        "load_before": [round(x, 2) for x in os.getloadavg()],
    }
    print(
        f"[{row} / {tree.label}] load {out['load_before']}"
        + (f"; {tree.label} lacks {missing}" if missing else ""),
        file=sys.stderr,
        flush=True,
    )
    server = start_server(tree, flags, workdir / f"{row}-{tree.label}.log")
    try:
        envoy = start_envoy(tree, int(server.addr.rpartition(":")[2]), workdir) if args.envoy else None
    except BaseException:
        server.stop()
        raise
    front = f"127.0.0.1:{envoy.port}" if envoy else server.addr  # where the clients connect
    honest = Honest(front)
    tasks: list[asyncio.Task[None]] = []
    extra: dict[str, Any] = {}
    try:
        await asyncio.wait_for(honest.channel.channel_ready(), 10)
        honest.game_id, honest.md = await honest.new_game()
        params = dict(setup.params)
        if row == "cached-solve":  # the solved game the attackers ask about, solved once (cached)
            game_id, md = await honest.new_game("spider", 1, suits="1", open="true")
            first = await honest.stub.Solve(pb.SolveRequest(game_id=game_id), metadata=md, timeout=30)
            extra["solved_game"] = {
                "outcome": pb.SolveOutcome.Name(first.outcome),
                "line_moves": len(first.moves),
                "first_solve_ms": round(first.millis, 1),
            }
            params.update(game_id=game_id, token=dict(md)["authorization"].removeprefix("Bearer "))
        resting = await honest.new_game(seed=8) if row == "newgame-flood" else None
        if row == "solver-hog":
            await honest.deal_easy_games(easy_seeds)
        tasks = honest.start(easy_solves=row == "solver-hog")

        honest.phase = "control"
        cpu0, t0 = server.cpu_seconds(), time.monotonic()
        await asyncio.sleep(args.control)
        control_cpu, control_s = server.cpu_seconds() - cpu0, time.monotonic() - t0
        out["control_cpu_pct"] = round(100 * control_cpu / control_s, 1)
        if setup.redis:
            extra["redis_clients_before"] = redis_clients(redis_port)  # type: ignore[arg-type]
        extra["in_flight_before"] = server.metric("accordion_rpc_in_flight", "WatchGame")

        honest.phase = "between"  # the attacker's own set-up (games, connections): not counted
        attacker = await asyncio.create_subprocess_exec(
            sys.executable,
            str(HOSTILE),
            "--attack",
            row,
            "--addr",
            front,
            "--duration",
            str(args.duration),
            "--params",
            json.dumps(params),
            stdout=asyncio.subprocess.PIPE,
        )
        assert attacker.stdout is not None
        result: dict[str, Any] = {}
        attack_cpu0 = attack_t0 = 0.0
        while line := (await attacker.stdout.readline()).decode():
            if line.startswith("attacking"):
                honest.phase = "attack"
                attack_cpu0, attack_t0 = server.cpu_seconds(), time.monotonic()
            elif line.startswith("result "):
                honest.phase = "between"
                result = json.loads(line.split(" ", 1)[1])
        attack_cpu, attack_s = server.cpu_seconds() - attack_cpu0, time.monotonic() - attack_t0
        await attacker.wait()
        out["attack_cpu_pct"] = round(100 * attack_cpu / attack_s, 1) if attack_t0 else None
        out["attacker"] = result
        extra["in_flight_end_of_attack"] = server.metric("accordion_rpc_in_flight", "WatchGame")
        if row == "cached-solve":
            solves = sum(
                v for k, v in result.get("counts", {}).items() if k in ("cached", "SOLVE_OUTCOME_WON")
            )
            beyond = attack_cpu - control_cpu / control_s * attack_s  # the honest client's share taken out
            extra["server_cpu_ms_per_solve"] = round(1000 * beyond / solves, 2) if solves else None
            extra["solves_per_s"] = round(solves / attack_s, 1)

        await asyncio.sleep(2.0)  # the attacker's connections are closed: 2 s for the server to let go
        extra["in_flight_2s_after"] = server.metric("accordion_rpc_in_flight", "WatchGame")
        if setup.redis:
            extra["redis_clients_2s_after"] = redis_clients(redis_port)  # type: ignore[arg-type]
        if resting is not None:
            try:
                await honest.stub.GetGame(
                    pb.GetGameRequest(game_id=resting[0]), metadata=resting[1], timeout=5
                )
                extra["resting_game"] = "found"
            except grpc.aio.AioRpcError as exc:
                extra["resting_game"] = exc.code().name
            extra["memory_store_evicted"] = server.metric("accordion_memory_store_evicted")
        honest.phase = "after"
        await asyncio.sleep(args.after)
        extra["in_flight_end_of_after"] = server.metric("accordion_rpc_in_flight", "WatchGame")
        if setup.redis:
            extra["redis_clients_end_of_after"] = redis_clients(redis_port)  # type: ignore[arg-type]
    finally:
        await honest.close(tasks)
        if envoy is not None:
            envoy.stop()
        server.stop()
    out["phases"] = {
        phase: {
            kind: honest.calls[(kind, phase)].summary()
            for kind in ("health", "GetGame", "easy Solve")
            if (kind, phase) in honest.calls
        }
        for phase in ("control", "attack", "after")
    }
    if honest.solves:
        extra["easy_solve_outcomes"] = {p: dict(c) for p, c in honest.solves.items()}
    out["extra"] = extra
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out
