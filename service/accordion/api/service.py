"""Registering the servicer on a server, with the two guarantees every RPC shares.

1. A request whose bytes do not parse is INVALID_ARGUMENT (MALFORMED_REQUEST), not grpc's
   default INTERNAL: deserializers return a ``Malformed`` marker instead of raising.
2. Every exception becomes a ``google.rpc.Status`` through ``errors`` (one mapping table);
   an unexpected one is logged with its traceback and reported as INTERNAL.

The handlers are built from the service descriptor, so a new RPC in the proto needs only
its servicer method.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import grpc
import grpc.aio
import structlog
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

from accordion.v1 import accordion_pb2 as pb

from . import errors
from .servicer import AccordionServicer

SERVICE = pb.DESCRIPTOR.services_by_name["AccordionService"]
SERVICE_NAME = SERVICE.full_name
log = structlog.get_logger("accordion.api")
Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


@dataclass(frozen=True)
class Malformed:
    """Stands in for a request whose bytes are not a valid message."""

    why: str


def _deserializer(cls: type[Message]) -> Callable[[bytes], Message | Malformed]:
    def deserialize(data: bytes) -> Message | Malformed:
        try:
            return cls.FromString(data)
        except (DecodeError, ValueError, RuntimeError) as exc:  # upb reports bad UTF-8 as DecodeError
            return Malformed(str(exc) or type(exc).__name__)

    return deserialize


def _serializer(cls: type[Message]) -> Callable[[Any], bytes]:
    """``cls.SerializeToString``, except that a reply already serialized (bytes: the hot paths
    write ApplyMove's, Undo's and GetGame's replies directly) passes through."""
    serialize = cls.SerializeToString

    def serializer(reply: Any) -> bytes:
        return reply if type(reply) is bytes else serialize(reply)

    return serializer


async def _fail(context: Context, exc: BaseException, method: str) -> None:
    error = errors.from_exception(exc)
    if error is None:
        log.error("unhandled exception", method=method, exc_info=exc)
        error = errors.internal()
    await errors.abort(context, error)


def _unary(
    fn: Callable[[Any, Context], Awaitable[Message]], method: str
) -> Callable[..., Awaitable[Message]]:
    async def handle(request: Message | Malformed, context: Context) -> Message:
        if isinstance(request, Malformed):
            await errors.abort(context, errors.malformed_request(request.why))
        try:
            return await fn(request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as exc:  # mapped to a status, never swallowed
            await _fail(context, exc, method)
            raise  # unreachable: abort raises

    return handle


def _stream(
    fn: Callable[[Any, Context], AsyncGenerator[Message, None]], method: str
) -> Callable[..., AsyncIterator[Message]]:
    async def handle(request: Message | Malformed, context: Context) -> AsyncIterator[Message]:
        if isinstance(request, Malformed):
            await errors.abort(context, errors.malformed_request(request.why))
        try:
            async with contextlib.aclosing(fn(request, context)) as items:
                async for item in items:
                    yield item
        except grpc.aio.AbortError:
            raise
        except Exception as exc:  # noqa: BLE001 (mapped to a status by _fail)
            await _fail(context, exc, method)

    return handle


def generic_handler(servicer: AccordionServicer) -> grpc.GenericRpcHandler:
    handlers: dict[str, grpc.RpcMethodHandler] = {}
    for method in SERVICE.methods:
        request_cls = getattr(pb, method.input_type.name)
        response_cls = GetMessageClass(method.output_type)  # GetGamePicture's google.api.HttpBody is not in pb
        fn = getattr(servicer, method.name)
        make = (
            grpc.unary_stream_rpc_method_handler
            if method.server_streaming
            else grpc.unary_unary_rpc_method_handler
        )
        wrap = _stream if method.server_streaming else _unary
        handlers[method.name] = make(
            wrap(fn, method.name),
            request_deserializer=_deserializer(request_cls),
            response_serializer=_serializer(response_cls),
        )
    return grpc.method_handlers_generic_handler(SERVICE_NAME, handlers)


def add_to_server(servicer: AccordionServicer, server: grpc.aio.Server) -> None:
    server.add_generic_rpc_handlers((generic_handler(servicer),))
