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
from dataclasses import dataclass

from accordion.bytecodec import Reader, varint

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


# --- the watch token and the access record (issue 29) ------------------------------------
#
# A game has two secrets: the play token (above) and a watch token, a read-only capability.
# The watch token is derived from the play token, so the server can issue it again (ShareGame)
# without ever storing it: ``watch = base64url(HMAC-SHA256(key=play token, "watch:<generation>"))``.
# Rotating it bumps the generation. A watch token cannot be turned into the play token (HMAC is
# one-way in its key). Only SHA-256 hashes of both are stored, in the game's access record
# (``Access``: what the store keeps as the game's "token hash").

PLAY = "play"
WATCH = "watch"
_HASH = 32  # SHA-256
_ACCESS_FORMAT = b"\x01"


def watch_token(play_token: str, generation: int) -> str:
    """The watch token of ``generation`` for the game whose play token is ``play_token``."""
    mac = hmac.new(play_token.encode(), f"watch:{generation}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


@dataclass(slots=True)
class Access:
    """A game's stored access record: the play token's hash, the watch token's hash and its
    generation, and the game's deal code ("" if it has none yet).

    Stored as bytes where the store keeps the token hash: the play hash alone (32 bytes, what
    earlier versions wrote: no watch token, no deal code until ShareGame makes them), or
    ``0x01``-tagged: play hash, watch hash, generation (varint), deal code (ASCII)."""

    play_hash: bytes
    watch_hash: bytes = b""
    generation: int = 0
    deal_code: str = ""

    @classmethod
    def for_token(cls, play_token: str, generation: int, deal_code: str) -> Access:
        return cls(
            hash_token(play_token), hash_token(watch_token(play_token, generation)), generation, deal_code
        )

    def dump(self) -> bytes:
        if not self.watch_hash:
            return self.play_hash
        return (
            _ACCESS_FORMAT
            + self.play_hash
            + self.watch_hash
            + varint(self.generation)
            + self.deal_code.encode()
        )

    @classmethod
    def load(cls, blob: bytes) -> Access:
        """Either stored form. Raises ValueError for neither."""
        if len(blob) == _HASH:
            return cls(blob)
        if blob[:1] != _ACCESS_FORMAT:
            raise ValueError("not an access record")
        r = Reader(blob, 1)
        play, watch, generation = r.take(_HASH), r.take(_HASH), r.varint()
        return cls(play, watch, generation, blob[r.pos :].decode("ascii"))

    def role(self, presented_hash: bytes) -> str | None:
        """PLAY, WATCH or None for a presented token's hash; both compared in constant time."""
        play = hmac.compare_digest(presented_hash, self.play_hash)
        watch = bool(self.watch_hash) and hmac.compare_digest(presented_hash, self.watch_hash)
        return PLAY if play else WATCH if watch else None


def role(presented_hash: bytes, stored: bytes) -> str | None:
    """The role a presented token's hash has in a game whose stored access record is ``stored``."""
    try:
        access = Access.load(stored)
    except (ValueError, IndexError):
        return None
    return access.role(presented_hash)


def is_play(presented_hash: bytes, stored: bytes) -> bool:
    """Whether the hash is the play token's: the play hash is the record's fixed part (its first
    32 bytes, after the format byte), which never changes; the in-process cache vouches for it
    only (never for a watch token, whose hash a rotation elsewhere may have replaced)."""
    play = stored if len(stored) == _HASH else stored[1 : 1 + _HASH]
    return len(play) == _HASH and hmac.compare_digest(presented_hash, play)


# --- deal codes ----------------------------------------------------------------------------
#
# 80 random bits in Crockford's base32 (16 characters, shown in groups of four with dashes: 19).
# Random, not derived from the deal: a code names a stored record, and tells nothing itself.

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_CROCKFORD_READ = {c: i for i, c in enumerate(_CROCKFORD)} | {"O": 0, "I": 1, "L": 1}
DEAL_CODE_CHARS = 16


def new_deal_code() -> str:
    """A fresh code, canonical (16 characters, no dashes)."""
    n = secrets.randbits(80)
    return "".join(_CROCKFORD[(n >> (5 * i)) & 31] for i in reversed(range(DEAL_CODE_CHARS)))


def show_deal_code(code: str) -> str:
    """``XXXX-XXXX-XXXX-XXXX``."""
    return "-".join(code[i : i + 4] for i in range(0, len(code), 4))


def read_deal_code(text: str) -> str | None:
    """The canonical code a person typed (any case, dashes and spaces anywhere, Crockford's
    O/I/L read as 0/1/1); None if it cannot be one."""
    chars = [c for c in text.upper() if c not in "- "]
    if len(chars) != DEAL_CODE_CHARS or any(c not in _CROCKFORD_READ for c in chars):
        return None
    return "".join(_CROCKFORD[_CROCKFORD_READ[c]] for c in chars)


def deal_code_key(code: str) -> str:
    """The store's name of a deal code's record."""
    return f"dealcode:{code}"
