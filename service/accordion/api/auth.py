"""Game ids and game tokens.

* A game id is 128 random bits, URL-safe: not guessable, and safe in URLs and Redis keys.
* A token is ``secrets.token_urlsafe(32)``, shown once (NewGame). Only its SHA-256 is
  stored; a presented token is hashed and compared in constant time.
* NewGame's idempotency record must let a retry return the same token without storing it:
  it holds the token XOR-masked with a key stream derived from the request id (which the
  store never sees in clear: the record's key is the request id's hash). Only a caller who
  knows the request id recovers the token, which is the idempotency contract anyway.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence

GAME_ID_RE = re.compile(r"[A-Za-z0-9_-]{22}")  # token_urlsafe(16): 16 bytes → 22 characters
_BEARER_RE = re.compile(r"\s*bearer\s+(\S+)\s*", re.IGNORECASE)
SALT_BYTES = 16


def new_game_id() -> str:
    return secrets.token_urlsafe(16)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def token_matches(token: str, token_hash: bytes) -> bool:
    return hmac.compare_digest(hash_token(token), token_hash)


def bearer_token(metadata: Sequence[tuple[str, str | bytes]] | None) -> str | None:
    """The token of the ``authorization: Bearer <token>`` metadata entry, if any."""
    for key, value in metadata or ():
        if key.lower() == "authorization":
            text = value.decode(errors="replace") if isinstance(value, bytes) else value
            m = _BEARER_RE.fullmatch(text)
            return m.group(1) if m else None
    return None


def request_key(kind: str, request_id: str) -> str:
    """The store key of a request id not tied to a game (its hash: the id unmasks a token)."""
    return f"{kind}:{hashlib.sha256(request_id.encode()).hexdigest()}"


def _keystream(request_id: str, salt: bytes, size: int) -> bytes:
    stream = hmac.new(request_id.encode(), salt, hashlib.sha512).digest()
    if size > len(stream):
        raise ValueError("token too long to mask")
    return stream[:size]


def seal_token(token: str, request_id: str) -> bytes:
    """``salt || token XOR keystream(request_id, salt)``: storable, opened only with the request id."""
    salt = secrets.token_bytes(SALT_BYTES)
    raw = token.encode()
    return salt + bytes(a ^ b for a, b in zip(raw, _keystream(request_id, salt, len(raw)), strict=True))


def open_token(sealed: bytes, request_id: str) -> str:
    salt, masked = sealed[:SALT_BYTES], sealed[SALT_BYTES:]
    return bytes(
        a ^ b for a, b in zip(masked, _keystream(request_id, salt, len(masked)), strict=True)
    ).decode()
