"""Clients that leave abruptly, run as their own processes by tests/ops/test_json_log.py.

``python abrupt_client.py watch HOST:PORT``: deals a game, watches it and prints "watching"
(the test then SIGKILLs it mid-stream). ``python abrupt_client.py goaway HOST:PORT``: opens an
HTTP/2 connection by hand and closes it with a GOAWAY carrying an error code (what gRPC's C
core logs as "Got goaway [2] ..." in plain text), then exits.
"""

from __future__ import annotations

import socket
import struct
import sys
import time

import grpc

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS, GOAWAY = 0x4, 0x7
INTERNAL_ERROR = 0x2


def frame(kind: int, stream: int, payload: bytes) -> bytes:
    """One HTTP/2 frame (RFC 9113 §4.1): 24-bit length, type, flags (none), stream id."""
    return struct.pack(">I", len(payload))[1:] + bytes([kind, 0]) + struct.pack(">I", stream) + payload


def watch(addr: str) -> None:
    channel = grpc.insecure_channel(addr)
    stub = pb_grpc.AccordionServiceStub(channel)
    dealt = stub.NewGame(pb.NewGameRequest(variant="accordion", seed=5), timeout=10)
    stream = stub.WatchGame(
        pb.WatchGameRequest(game_id=dealt.game.id), metadata=(("authorization", f"Bearer {dealt.token}"),)
    )
    print("watching", flush=True)
    for _event in stream:
        print("event", flush=True)


def goaway(addr: str) -> None:
    host, port = addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(PREFACE + frame(SETTINGS, 0, b""))
        time.sleep(0.2)
        last_stream, reason = 0, b"the client is going away"
        sock.sendall(frame(GOAWAY, 0, struct.pack(">II", last_stream, INTERNAL_ERROR) + reason))
        time.sleep(0.2)
    print("sent", flush=True)


if __name__ == "__main__":
    {"watch": watch, "goaway": goaway}[sys.argv[1]](sys.argv[2])
