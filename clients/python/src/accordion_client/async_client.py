"""The asyncio client: ``AsyncAccordionClient`` on ``grpc.aio`` and its handles
(``AsyncWatchHandle``, ``AsyncGameHandle``), the blocking client's (``client.py``) methods,
awaited. What both share is ``client_base.py``. ``accordion_client`` and
``accordion_client.client`` export these names too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import grpc
import grpc.aio

from . import moves
from .client_base import (
    DEFAULT_DEADLINE,
    DEFAULT_RETRIES,
    Metadata,
    MoveLike,
    _Base,
    _HandleBase,
    new_game_request,
)
from .moves import ZoneLike
from .v1 import accordion_pb2 as pb
from .v1 import accordion_pb2_grpc as pb_grpc


class AsyncAccordionClient(_Base):
    """The same client on ``grpc.aio``: ``async with AsyncAccordionClient(target) as client``.

    Arguments as ``AccordionClient``'s (``interceptors`` are grpc.aio client interceptors).
    """

    def __init__(
        self,
        target: str,
        *,
        tls: bool = False,
        credentials: grpc.ChannelCredentials | None = None,
        root_certificates: bytes | None = None,
        certificate_chain: bytes | None = None,
        private_key: bytes | None = None,
        server_name: str | None = None,
        api_key: str | None = None,
        deadline: float | None = DEFAULT_DEADLINE,
        retries: int = DEFAULT_RETRIES,
        backoff: float = 0.1,
        metadata: Metadata = (),
        options: Sequence[tuple[str, Any]] = (),
        interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
        trace: bool = True,
    ) -> None:
        super().__init__(
            target,
            tls=tls,
            credentials=credentials,
            root_certificates=root_certificates,
            certificate_chain=certificate_chain,
            private_key=private_key,
            server_name=server_name,
            api_key=api_key,
            deadline=deadline,
            retries=retries,
            backoff=backoff,
            metadata=metadata,
            options=options,
            trace=trace,
        )
        icp = list(interceptors) or None
        self.channel = (
            grpc.aio.secure_channel(self.address, self.credentials, options=self.options, interceptors=icp)
            if self.credentials is not None
            else grpc.aio.insecure_channel(self.address, options=self.options, interceptors=icp)
        )
        self.stub = pb_grpc.AccordionServiceStub(self.channel)

    async def close(self) -> None:
        self.closed = True
        await self.channel.close()

    async def __aenter__(self) -> AsyncAccordionClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def call(
        self, method: str, request: Any, *, token: str | None = None, deadline: float | None = None
    ) -> Any:
        """As ``AccordionClient.call``: deadline, token, retries on UNAVAILABLE with the same request."""
        rpc, metadata = getattr(self.stub, method), self._metadata(token)
        for attempt in range(self.retries + 1):
            try:
                return await rpc(request, timeout=self._deadline(deadline), metadata=metadata)
            except grpc.aio.AioRpcError as exc:
                await asyncio.sleep(self._retry_delay_or_raise(exc, attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    async def list_variants(self, variant: str = "", *, deadline: float | None = None) -> list[pb.Variant]:
        reply = await self.call("ListVariants", pb.ListVariantsRequest(variant=variant), deadline=deadline)
        return list(reply.variants)

    async def new_game(
        self,
        variant: str = "accordion",
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        deal: Sequence[str] | None = None,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
    ) -> AsyncGameHandle:
        request = new_game_request(variant, options, seed, deal, request_id)
        reply = await self.call("NewGame", request, deadline=deadline)
        return AsyncGameHandle(self, reply.game, reply.token, reply)

    async def new_game_from_code(
        self,
        code: str,
        options: Mapping[str, Any] | None = None,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
    ) -> AsyncGameHandle:
        """As ``AccordionClient.new_game_from_code``."""
        request = new_game_request("", options, None, None, request_id, deal_code=code)
        reply = await self.call("NewGame", request, deadline=deadline)
        return AsyncGameHandle(self, reply.game, reply.token, reply)

    async def open_game(self, game_id: str, token: str, *, deadline: float | None = None) -> AsyncGameHandle:
        reply = await self.call("GetGame", pb.GetGameRequest(game_id=game_id), token=token, deadline=deadline)
        return AsyncGameHandle(self, reply.game, token)

    async def spectate(
        self, game_id: str, watch_token: str, *, deadline: float | None = None
    ) -> AsyncWatchHandle:
        """As ``AccordionClient.spectate``: a read-only handle from a watch token."""
        reply = await self.call(
            "GetGame", pb.GetGameRequest(game_id=game_id), token=watch_token, deadline=deadline
        )
        return AsyncWatchHandle(self, reply.game, watch_token)


class AsyncWatchHandle(_HandleBase):
    """``WatchHandle`` for ``AsyncAccordionClient``: the reads and ``watch``, awaited."""

    def __init__(
        self,
        client: AsyncAccordionClient,
        game: pb.Game,
        token: str,
        dealt: pb.NewGameResponse | None = None,
    ) -> None:
        super().__init__(game, token, dealt)
        self.client: AsyncAccordionClient = client

    async def _call(self, method: str, request: Any, deadline: float | None) -> Any:
        return await self.client.call(method, request, token=self.token, deadline=deadline)

    async def score(self, *, deadline: float | None = None) -> pb.ScoreResponse:
        reply: pb.ScoreResponse = await self._call("Score", pb.ScoreRequest(game_id=self.id), deadline)
        return reply

    async def legal_moves(self, *, deadline: float | None = None) -> list[pb.Move]:
        reply = await self._call("LegalMoves", pb.LegalMovesRequest(game_id=self.id), deadline)
        return list(reply.moves)

    async def refresh(self, *, deadline: float | None = None) -> pb.Game:
        self.game = (await self._call("GetGame", pb.GetGameRequest(game_id=self.id), deadline)).game
        return self.game

    async def watch(
        self, after_version: int = 0, *, deadline: float | None = None
    ) -> AsyncIterator[pb.GameEvent]:
        """As ``GameHandle.watch``: quiet when the caller stops it, typed errors otherwise."""
        call = self.client.stub.WatchGame(
            self._watch_request(after_version), timeout=deadline, metadata=self.client._metadata(self.token)
        )
        try:
            async for reply in call:
                yield reply.event
        except grpc.aio.AioRpcError as exc:
            error = self._watch_ended(exc)
            if error is not None:
                raise error from exc
        except asyncio.CancelledError:
            # grpc.aio cancels a closed channel's calls with CancelledError: that end is quiet,
            # as in the blocking client; the cancellation of the caller's own task is not ours.
            task = asyncio.current_task()
            if not self.client.closed or (task is not None and task.cancelling()):
                raise
        finally:
            call.cancel()

    async def picture(self, *, deadline: float | None = None) -> bytes:
        """As ``WatchHandle.picture``."""
        body = await self._call("GetGamePicture", pb.GetGamePictureRequest(game_id=self.id), deadline)
        data: bytes = body.data
        return data


class AsyncGameHandle(AsyncWatchHandle):
    """``GameHandle`` for ``AsyncAccordionClient``: the same methods, awaited."""

    async def share(
        self, *, rotate_watch_token: bool = False, deadline: float | None = None
    ) -> pb.ShareGameResponse:
        """As ``GameHandle.share``."""
        request = pb.ShareGameRequest(game_id=self.id, rotate_watch_token=rotate_watch_token)
        return self._shared(await self._call("ShareGame", request, deadline))

    async def play(
        self, move: MoveLike, *, request_id: str | None = None, deadline: float | None = None
    ) -> pb.Move:
        return self._moved(await self._call("ApplyMove", self._apply_request(move, request_id), deadline))

    async def resign(self, *, request_id: str | None = None, deadline: float | None = None) -> pb.Move:
        return await self.play(moves.resign(), request_id=request_id, deadline=deadline)

    async def move(
        self,
        from_zone: ZoneLike,
        from_pile: int,
        to_zone: ZoneLike,
        to_pile: int = 0,
        count: int = 1,
        *,
        request_id: str | None = None,
        deadline: float | None = None,
    ) -> pb.Move:
        """As ``GameHandle.move``."""
        built = moves.move(from_zone, from_pile, to_zone, to_pile, count)
        return await self.play(built, request_id=request_id, deadline=deadline)

    async def draw(self, *, request_id: str | None = None, deadline: float | None = None) -> pb.Move:
        """As ``GameHandle.draw``."""
        return await self.play(moves.draw(), request_id=request_id, deadline=deadline)

    async def undo(self, *, request_id: str | None = None, deadline: float | None = None) -> pb.Move:
        return self._moved(await self._call("Undo", self._undo_request(request_id), deadline))

    async def hint(self, *, deadline: float | None = None) -> pb.Move | None:
        return self._hinted(await self._call("Hint", pb.HintRequest(game_id=self.id), deadline))
