"""Helpers for the end-to-end tests: a client with the token, subprocess servers, rich errors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from accordion.api import errors
from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parents[2]


# --- clients -----------------------------------------------------------------------------


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@dataclass
class Client:
    """A stub on a real channel. ``token`` is sent on every call made through ``call``."""

    channel: grpc.aio.Channel
    stub: pb_grpc.AccordionServiceStub
    token: str = ""

    async def call(self, method: str, request: Any, *, token: str | None = None, timeout: float = 10) -> Any:
        tok = self.token if token is None else token
        metadata = bearer(tok) if tok else None
        return await getattr(self.stub, method)(request, metadata=metadata, timeout=timeout)

    async def new_game(self, variant: str = "accordion", **kwargs: Any) -> pb.NewGameResponse:
        """NewGame; the client keeps the token for later calls."""
        reply = await self.stub.NewGame(pb.NewGameRequest(variant=variant, **kwargs), timeout=10)
        self.token = reply.token
        return reply

    async def apply(self, game_id: str, notation: str = "", **kwargs: Any) -> pb.ApplyMoveResponse:
        move = kwargs.pop("move", None) or pb.Move(notation=notation)
        return await self.call("ApplyMove", pb.ApplyMoveRequest(game_id=game_id, move=move, **kwargs))

    async def get(self, game_id: str) -> pb.Game:
        return (await self.call("GetGame", pb.GetGameRequest(game_id=game_id))).game


# --- subprocess servers -------------------------------------------------------------------------

# One launcher for every test directory: tests/server_launcher.py (re-exported here).
from server_launcher import ServerProcess, server_command  # noqa: E402, F401

# --- error inspection -----------------------------------------------------------------------------


@dataclass
class RichError:
    code: grpc.StatusCode
    message: str
    info: error_details_pb2.ErrorInfo
    bad_request: error_details_pb2.BadRequest | None
    legal: pb.LegalMovesResponse | None


def rich(exc: grpc.aio.AioRpcError) -> RichError:
    """The google.rpc.Status of a failed call; asserts the ErrorInfo is there and matches the table."""
    status = rpc_status.from_call(exc)
    assert status is not None, f"no rich status on {exc.code()}: {exc.details()}"
    info, bad, legal = None, None, None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
        elif detail.Is(pb.LegalMovesResponse.DESCRIPTOR):
            legal = pb.LegalMovesResponse()
            detail.Unpack(legal)
    assert info is not None, "every error carries an ErrorInfo"
    assert info.domain == "accordion.v1"
    assert errors.REASONS[info.reason] == exc.code(), (info.reason, exc.code())
    return RichError(exc.code(), status.message, info, bad, legal)


def retry_delay(exc: grpc.aio.AioRpcError) -> float:
    """The seconds a RESOURCE_EXHAUSTED answer's one google.rpc.RetryInfo asks the client to wait."""
    status = rpc_status.from_call(exc)
    assert status is not None, f"no rich status on {exc.code()}: {exc.details()}"
    retry = [d for d in status.details if d.Is(error_details_pb2.RetryInfo.DESCRIPTOR)]
    assert len(retry) == 1, f"{len(retry)} RetryInfo on {exc.code()}: {exc.details()}"
    info = error_details_pb2.RetryInfo()
    retry[0].Unpack(info)
    return float(info.retry_delay.ToNanoseconds()) / 1e9


async def expect_error(awaitable: Any, code: grpc.StatusCode, reason: str | None = None) -> RichError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await awaitable
    assert caught.value.code() == code, (caught.value.code(), caught.value.details())
    err = rich(caught.value)
    if reason is not None:
        assert err.info.reason == reason, (err.info.reason, err.message)
    return err
