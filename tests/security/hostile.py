"""A hostile client, run as its own process by tests/security/test_hostile.py.

    python tests/security/hostile.py half-sent ADDR --calls 1000 --connections 1 --seconds 6
    python tests/security/hostile.py watch ADDR --calls 1000 --connections 1 --seconds 6

* ``half-sent``: opens ``--calls`` calls (GetGame, or ``--method``) spread over ``--connections`` connections
  and never sends their request messages: each call's request stream (a stream-unary call on
  the unary method's path, which is all a client controls on the wire) never yields, so the
  server gets the call's headers and then nothing.
* ``watch``: one NewGame, then ``--calls`` WatchGame streams on that game.

It prints ``ready`` once every call is started, then after ``--seconds`` (and, with
``--until-told``, once a line or EOF comes on stdin: the test's probes are done) and once the
calls have settled (no call ended for a second: a loaded machine's refusals come late; bounded)
one JSON line: how the calls that ended ended (``CODE/REASON``, and how many carried a
RetryInfo), and how many were still open. With ``--api-key`` every call presents that key.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

GET_GAME = "/accordion.v1.AccordionService/GetGame"
SETTLE_BOUND_S = 120  # against a hang only: settled means no call ended for a second


def outcome(exc: grpc.aio.AioRpcError, retry_infos: Counter[str]) -> str:
    status = rpc_status.from_call(exc)
    reason = ""
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason = info.reason
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry_infos[exc.code().name] += 1
    if not reason:  # not the server's own refusal: keep grpc's words
        return f"{exc.code().name}/{(exc.details() or '')[:60]}"
    return f"{exc.code().name}/{reason}"


async def attack(args: argparse.Namespace) -> dict[str, Any]:
    # A subchannel pool per channel: otherwise channels to one address share one connection.
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(args.addr, options=options) for _ in range(args.connections)]
    metadata = (("x-api-key", args.api_key),) if args.api_key else None
    ended: Counter[str] = Counter()
    retry_infos: Counter[str] = Counter()
    never = asyncio.Event()

    async def no_message() -> AsyncIterator[bytes]:
        await never.wait()
        yield b""  # never reached

    async def half_sent(channel: grpc.aio.Channel) -> None:
        call = channel.stream_unary(args.method, request_serializer=bytes, response_deserializer=bytes)
        try:
            await call(no_message(), metadata=metadata, timeout=600)
            ended["OK"] += 1
        except grpc.aio.AioRpcError as exc:
            ended[outcome(exc, retry_infos)] += 1

    async def watch(stub: pb_grpc.AccordionServiceStub, game_id: str, token: str) -> None:
        auth = (("authorization", f"Bearer {token}"), *(metadata or ()))
        try:
            async for _ in stub.WatchGame(pb.WatchGameRequest(game_id=game_id), metadata=auth, timeout=600):
                pass
            ended["OK"] += 1
        except grpc.aio.AioRpcError as exc:
            ended[outcome(exc, retry_infos)] += 1

    if args.mode == "half-sent":
        tasks = [asyncio.create_task(half_sent(channels[i % len(channels)])) for i in range(args.calls)]
    else:
        stubs = [pb_grpc.AccordionServiceStub(ch) for ch in channels]
        request = pb.NewGameRequest(variant="accordion", seed=3)
        game = await stubs[0].NewGame(request, metadata=metadata, timeout=10)
        tasks = [
            asyncio.create_task(watch(stubs[i % len(stubs)], game.game.id, game.token))
            for i in range(args.calls)
        ]
    print("ready", flush=True)
    await asyncio.sleep(args.seconds)
    if args.until_told:
        await asyncio.to_thread(sys.stdin.readline)
    give_up = time.monotonic() + SETTLE_BOUND_S
    while time.monotonic() < give_up:
        ended_before = sum(t.done() for t in tasks)
        await asyncio.sleep(1.0)
        if sum(t.done() for t in tasks) == ended_before:
            break
    summary = {
        "ended": dict(ended),
        "retry_info": dict(retry_infos),
        "open": sum(not t.done() for t in tasks),
    }
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for channel in channels:
        await channel.close()
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("half-sent", "watch"))
    parser.add_argument("addr")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--api-key", default="")
    parser.add_argument("--method", default=GET_GAME, help="half-sent: the method called")
    parser.add_argument("--until-told", action="store_true", help="hold the calls until a line on stdin")
    summary = asyncio.run(attack(parser.parse_args()))
    print(json.dumps(summary), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
