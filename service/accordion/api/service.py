"""The AccordionService's method handlers, built from the service descriptor (a new RPC in the
proto needs only its servicer method).

A request whose bytes do not parse is INVALID_ARGUMENT (MALFORMED_REQUEST), not grpc's
default INTERNAL: deserializers return a ``Malformed`` marker instead of raising. Everything
every call of every service shares (limits, API keys, the request timeout, error mapping,
the access log and metrics) is the one per-method wrapper of ``accordion.api.interceptors``,
applied when the handlers are registered on the server (``interceptors.Host``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

import grpc
import grpc.aio
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

from accordion.v1 import accordion_pb2 as pb

from .servicer import AccordionServicer

SERVICE = pb.DESCRIPTOR.services_by_name["AccordionService"]
SERVICE_NAME = SERVICE.full_name
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


def generic_handler(servicer: AccordionServicer) -> grpc.GenericRpcHandler:
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in SERVICE.methods:
        request_cls = getattr(pb, method.input_type.name)
        response_cls = GetMessageClass(
            method.output_type
        )  # GetGamePicture's google.api.HttpBody is not in pb
        fn = getattr(servicer, method.name)
        make = (
            grpc.unary_stream_rpc_method_handler
            if method.server_streaming
            else grpc.unary_unary_rpc_method_handler
        )
        handlers[method.name] = make(
            fn,
            request_deserializer=_deserializer(request_cls),
            response_serializer=_serializer(response_cls),
        )
    return grpc.method_handlers_generic_handler(SERVICE_NAME, handlers)


class HandlerHost(Protocol):
    """Where handlers are registered: a ``grpc.aio.Server``, or ``interceptors.Host`` (which
    wraps them first)."""

    def add_generic_rpc_handlers(self, generic_rpc_handlers: Sequence[grpc.GenericRpcHandler]) -> None: ...


def add_to_server(servicer: AccordionServicer, server: HandlerHost) -> None:
    server.add_generic_rpc_handlers((generic_handler(servicer),))
