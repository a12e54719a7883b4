"""Who is calling: the game token of a call, and the caller an API key names.

Ids, tokens and their hashes are the session layer's (``accordion.sessions.tokens``); this
module only reads a call's metadata.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from accordion.sessions.tokens import GAME_ID_RE

from .apikeys import METADATA_KEY

__all__ = ["GAME_ID_RE", "bearer_token", "caller"]
_BEARER_RE = re.compile(r"\s*bearer\s+(\S+)\s*", re.IGNORECASE)
Metadata = Iterable[tuple[str, str | bytes]] | None


def bearer_token(metadata: Metadata) -> str | None:
    """The token of the ``authorization: Bearer <token>`` metadata entry, if any."""
    for key, value in metadata or ():
        if key.lower() == "authorization":
            text = value.decode(errors="replace") if isinstance(value, bytes) else value
            m = _BEARER_RE.fullmatch(text)
            return m.group(1) if m else None
    return None


def caller(metadata: Metadata) -> str:
    """Who the call is from, where callers are told apart: the SHA-256 (hex) of its API key, as
    the keys file names it ("" without a key). With API keys on, the interceptor has checked
    the key before the call gets here; without, a key sent anyway still scopes the caller's
    NewGame request ids (and is stored only as a hash inside their record's key hash)."""
    for key, value in metadata or ():
        if key == METADATA_KEY:
            raw = value if isinstance(value, bytes) else value.encode()
            return hashlib.sha256(raw).hexdigest()
    return ""
