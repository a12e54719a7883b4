"""Optional API keys: a file of SHA-256 hashes with per-key rate limits, and the interceptor.

The file (``--api-keys-file`` / ``ACCORDION_API_KEYS_FILE``) is JSON::

    {
      "default": {"rate": 20, "burst": 40},
      "keys": [
        {"name": "web", "sha256": "<64 hex digits>", "rate": 100, "burst": 200},
        {"name": "batch", "sha256": "<64 hex digits>"},
        {"name": "ops", "sha256": "<64 hex digits>", "rate": 0}
      ]
    }

A key's ``rate`` (calls per second) and ``burst`` fall back to ``default``; ``rate`` 0, or
no rate anywhere, means unlimited. The server holds only the hashes
(``printf %s "$KEY" | sha256sum``); names label logs and metrics, and the key itself is
never logged, stored or echoed.

When keys are configured every call needs ``x-api-key`` metadata, except the health service
(``grpc.health.v1.Health``, which probes call without keys): missing →
UNAUTHENTICATED ``API_KEY_MISSING``, unknown → UNAUTHENTICATED ``API_KEY_INVALID``, over the
key's limit → RESOURCE_EXHAUSTED ``RATE_LIMITED`` with a ``google.rpc.RetryInfo``. A limit the
backend cannot decide within the store timeout lets the call through (logged and counted):
the limiter guards the service and is no reason on its own to refuse it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import structlog

from . import errors, metrics
from .ratelimit import Limit, RateLimiter

METADATA_KEY = "x-api-key"
EXEMPT_PREFIXES = ("/grpc.health.v1.Health/",)
_EXEMPT = tuple(prefix.lstrip("/") for prefix in EXEMPT_PREFIXES)  # methods come with or without "/"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
log = structlog.get_logger("accordion.apikeys")


@dataclass(frozen=True)
class ApiKey:
    name: str
    sha256: bytes
    limit: Limit | None  # None: unlimited


def hash_key(key: str) -> str:
    """The hex SHA-256 of a key, as the keys file holds it."""
    return hashlib.sha256(key.encode()).hexdigest()


def _limit(entry: Mapping[str, Any], default: Mapping[str, Any], where: str) -> Limit | None:
    rate = entry.get("rate", default.get("rate"))
    burst = entry.get("burst", default.get("burst"))
    if rate is None or rate == 0:
        return None
    if not isinstance(rate, int | float) or isinstance(rate, bool) or rate < 0:
        raise ValueError(f"{where}: rate must be a number >= 0, not {rate!r}")
    if burst is None:
        burst = max(1, int(rate))
    if not isinstance(burst, int) or isinstance(burst, bool) or burst < 1:
        raise ValueError(f"{where}: burst must be an integer >= 1, not {burst!r}")
    return Limit(float(rate), burst)


def parse_api_keys(data: Any) -> dict[bytes, ApiKey]:
    """The keys of a parsed keys file, by digest. Raises ValueError naming the bad entry."""
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise ValueError('the API keys file must be a JSON object with a "keys" list')
    default = data.get("default", {})
    if not isinstance(default, dict):
        raise ValueError('"default" must be an object like {"rate": 10, "burst": 20}')
    _limit({}, default, "default")
    keys: dict[bytes, ApiKey] = {}
    names: set[str] = set()
    for i, entry in enumerate(data["keys"]):
        where = f"keys[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: must be an object")
        name, digest = entry.get("name"), entry.get("sha256")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"{where}: name must be 1-64 of [A-Za-z0-9._-], not {name!r}")
        if not isinstance(digest, str) or not _HEX64.match(digest.lower()):
            raise ValueError(f"{where} ({name}): sha256 must be 64 hex digits (the key's hash, not the key)")
        raw = bytes.fromhex(digest)
        if name in names or raw in keys:
            raise ValueError(f"{where} ({name}): a name or hash listed twice")
        names.add(name)
        keys[raw] = ApiKey(name, raw, _limit(entry, default, f"{where} ({name})"))
    if not keys:
        raise ValueError("the API keys file lists no keys (leave --api-keys-file empty to turn keys off)")
    return keys


def load_api_keys(path: str | Path) -> dict[bytes, ApiKey]:
    """Read and check a keys file. Raises ValueError (or OSError) with the file's name."""
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from exc
    try:
        return parse_api_keys(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc


def _presented(metadata: Any) -> str:
    for item in metadata or ():
        key, value = item
        if key == METADATA_KEY:
            return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
    return ""


def _rejecting(
    handler: grpc.RpcMethodHandler[Any, Any], error: errors.ApiError
) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of the same kind as ``handler`` that only aborts with ``error``."""
    status = error.to_status()

    async def reject(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        await context.abort_with_status(status)

    kinds: tuple[tuple[str, Callable[..., grpc.RpcMethodHandler[Any, Any]]], ...] = (
        ("unary_unary", grpc.unary_unary_rpc_method_handler),
        ("unary_stream", grpc.unary_stream_rpc_method_handler),
        ("stream_unary", grpc.stream_unary_rpc_method_handler),
        ("stream_stream", grpc.stream_stream_rpc_method_handler),
    )
    for attr, make in kinds:
        if getattr(handler, attr) is not None:
            return make(
                reject,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
    raise AssertionError("a handler of no kind")  # pragma: no cover


class ApiKeyInterceptor(grpc.aio.ServerInterceptor):
    """Checks ``x-api-key`` and the key's rate limit before the handler runs (``caller``)."""

    def __init__(self, keys: Mapping[bytes, ApiKey], limiter: RateLimiter, *, timeout: float = 2.0) -> None:
        self.keys = dict(keys)
        self.limiter = limiter
        self.timeout = timeout

    async def caller(self, method: str, metadata: Any) -> str | None:
        """The name of the key ``metadata`` presents, once its rate allows the call; None for
        the exempt services. Raises the refusal (``errors.ApiError``). What the server's
        per-method wrapper calls (``accordion.api.interceptors.wrap``)."""
        if method.lstrip("/").startswith(_EXEMPT):
            return None
        presented = _presented(metadata)
        if not presented:
            raise errors.api_key_missing()
        key = self.keys.get(hashlib.sha256(presented.encode()).digest())
        if key is None:
            raise errors.api_key_invalid()
        if key.limit is None:
            return key.name
        try:
            # asyncio.timeout, not wait_for, which on Python 3.11 can swallow the call's
            # cancellation (CPython gh-86296): a cancelled call would run on.
            async with asyncio.timeout(self.timeout):
                decision = await self.limiter.acquire(key.name, key.limit)
        except Exception as exc:  # noqa: BLE001 (fail open: see the module docstring)
            metrics.RATE_LIMITER_ERRORS.inc()
            log.warning("rate limiter unavailable; call allowed", key_name=key.name, error=type(exc).__name__)
            return key.name
        if decision.allowed:
            return key.name
        metrics.RATE_LIMITED.labels(key.name).inc()
        raise errors.rate_limited(key.name, key.limit.rate, key.limit.burst, decision.retry_after)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        """The same check as a plain grpc interceptor (the server itself uses ``caller``)."""
        handler = await continuation(details)
        if handler is None:
            return handler
        try:
            await self.caller(details.method, details.invocation_metadata)
        except errors.ApiError as refusal:
            return _rejecting(handler, refusal)
        return handler
