"""bench/service.py's probes (not timed): Redis commands per ApplyMove (MONITOR) and the Redis
footprint of one 100-move game, with and without request ids.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from service_client import Player

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))
sys.path.insert(0, str(ROOT / "tests"))  # redis_server: MONITOR

from accordion.v1 import accordion_pb2 as pb  # noqa: E402
from accordion.v1 import accordion_pb2_grpc as pb_grpc  # noqa: E402
from redis_server import Monitor  # noqa: E402

# --- probes (Redis) -------------------------------------------------------------------------------


async def redis_probe(addr: str, redis_port: int) -> dict[str, Any]:
    """Commands per ApplyMove in steady state (MONITOR: what the server sends, and what its
    script runs inside Redis), and one 100-move game's footprint."""
    import redis

    client = redis.Redis(port=redis_port)
    out: dict[str, Any] = {}
    async with grpc.aio.insecure_channel(addr) as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        players = [Player(stub, 7000 + i, "accordion-stock") for i in range(4)]
        for p in players:
            await p.deal()
            for _ in range(5):
                await p.step()  # warm: connections up, scripts loaded, caches filled
        monitor = await asyncio.to_thread(Monitor, redis_port)
        moves = 0
        for _ in range(50):
            for p in players:
                if await p.step():
                    moves += 1
                else:
                    moves = -(10**6)  # a NewGame inside the window: not steady state
        lines = await asyncio.to_thread(monitor.stop)
        sent = Counter(Monitor.command(ln) for ln in lines if "lua]" not in ln)
        inside = Counter(Monitor.command(ln) for ln in lines if "lua]" in ln)
        out["apply_moves"] = moves
        out["commands_sent"] = dict(sent)
        out["commands_in_scripts"] = dict(inside)
        out["commands_per_move"] = round(sum(sent.values()) / moves, 3) if moves > 0 else None
        out["footprint"] = {
            label: await _footprint(stub, client, with_ids)
            for label, with_ids in (("without_request_ids", False), ("with_request_ids", True))
        }
    client.close()
    return out


async def _footprint(stub: pb_grpc.AccordionServiceStub, client: Any, with_ids: bool) -> dict[str, Any]:
    """An accordion-stock game (52 cards) after 100 moves: MEMORY USAGE of each of its keys."""
    for seed in range(1, 200):
        reply = await stub.NewGame(pb.NewGameRequest(variant="accordion-stock", seed=seed), timeout=10)
        game, md = reply.game, (("authorization", f"Bearer {reply.token}"),)
        rng = random.Random(seed)
        for n in range(100):
            if not game.legal_moves:
                break
            # Stacks where possible (the piles shrink), else deal: long games reach 100 moves.
            stacks = [m for m in game.legal_moves if m.kind == pb.MOVE_KIND_STACK]
            move = rng.choice(stacks) if stacks else game.legal_moves[0]
            request = pb.ApplyMoveRequest(
                game_id=game.id,
                move=move,
                expected_version=game.version,
                request_id=f"fp-{seed}-{n}-{'x' * 24}" if with_ids else "",
            )
            game = (await stub.ApplyMove(request, metadata=md, timeout=10)).game
        if game.moves_played >= 100:
            keys = sorted(k.decode() for k in client.scan_iter(match=f"*{{{game.id}}}*"))
            sizes = {k: client.memory_usage(k, samples=0) for k in keys}
            data = client.hget(next(k for k in keys if k.endswith(":g")), "d")
            return {
                "game_id": game.id,
                "moves": game.moves_played,
                "keys": sizes,
                "total_bytes": sum(sizes.values()),
                "data_bytes": len(data or b""),
            }
    raise RuntimeError("no accordion-stock deal reached 100 moves")
