"""Game ids, game tokens, and the keys request ids are stored under.

* A game id is 128 random bits, URL-safe: not guessable, and safe in URLs and Redis keys.
* A token is ``secrets.token_urlsafe(32)``, shown once (NewGame). Only its SHA-256 is
  stored; a presented token is hashed and compared in constant time.
* NewGame's idempotency record must let a retry return the same token without storing it:
  it holds the token XOR-masked with a key stream derived from the request id (which the
  store never sees in clear: the record's key is a hash of the request id). Only a caller who
  knows the request id recovers the token, so a NewGame request id must be as hard to guess
  as a token (the clients send a random UUID4: 122 bits), and where callers are told apart
  (API keys) the record's key also holds the caller, so another caller never finds it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

GAME_ID_RE = re.compile(r"[A-Za-z0-9_-]{22}")  # token_urlsafe(16): 16 bytes → 22 characters
SALT_BYTES = 16


def new_game_id() -> str:
    return secrets.token_urlsafe(16)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def token_matches(token: str, token_hash: bytes) -> bool:
    return hmac.compare_digest(hash_token(token), token_hash)


def new_game_key(request_id: str, caller: str = "") -> str:
    """The store key of a NewGame request id (its hash: the id unmasks a token), per caller.

    Without a caller (no API keys) the key is the one earlier versions used, so their records
    still answer retries. ``caller`` is an opaque, stable name of whoever asks (the API key's
    hash): the same request id under another caller is another key.
    """
    if not caller:
        return f"newgame:{hashlib.sha256(request_id.encode()).hexdigest()}"
    scoped = b"caller\0" + caller.encode() + b"\0" + request_id.encode()
    return f"newgame:{hashlib.sha256(scoped).hexdigest()}"


def move_request_key(request_id: str) -> str:
    """The store's key for a request id on one game: 72 bits of its SHA-256, 12 characters
    (shorter than most ids, and the id itself is never stored; two ids of one game collide
    with odds of about n² / 2⁷³ for n recorded ids)."""
    return base64.urlsafe_b64encode(hashlib.sha256(request_id.encode()).digest()[:9]).decode()


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
