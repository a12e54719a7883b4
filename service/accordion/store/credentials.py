"""Which presented credential a game's stored token hash holds: ``load(game_id, credential=…)``.

A wrong token must be answered as an unknown id is, in the same bytes and the same time (issue
28: an existence oracle by latency). So the store itself refuses it: ``load`` with a credential
answers GameNotFound when the game's token hash does not hold it, after the same work as for a
game that is not there (compared against ``NO_ACCESS`` then). On Redis the check runs inside the
load's script (``redis_scripts.LOAD``), so Redis answers both with the same nil and this process
never receives, parses or decodes the game a wrong token named.

The layout read here is the access record's (``accordion.sessions.tokens.Access``, which keeps
the truth of it and judges the role again): a 32-byte hash alone is the play token's (what
earlier versions wrote); else a format byte 0x01, the play hash, the watch hash, then fields the
store never reads. Both stores (and the Lua copy of this function) must agree:
tests/store/test_credentials.py holds them to it, and tests/security/test_existence_oracle.py
holds this reading to what ``Access`` writes.
"""

from __future__ import annotations

import hmac

CREDENTIAL_BYTES = 32  # a presented token's SHA-256
_TAGGED = 1  # the access record's format byte
# What an absent game is compared against: a tagged record of two hashes nobody presents (a
# credential is a SHA-256, never all zeros), so the same compares run as for a game.
NO_ACCESS = bytes([_TAGGED]) + bytes(2 * CREDENTIAL_BYTES)


def credentials(token_hash: bytes) -> tuple[bytes, bytes]:
    """The play and watch hashes a stored token hash holds (b"" where there is none)."""
    if len(token_hash) == CREDENTIAL_BYTES:
        return token_hash, b""
    if token_hash[:1] == bytes([_TAGGED]):
        return token_hash[1 : 1 + CREDENTIAL_BYTES], token_hash[
            1 + CREDENTIAL_BYTES : 1 + 2 * CREDENTIAL_BYTES
        ]
    return b"", b""


def holds(token_hash: bytes, credential: bytes) -> bool:
    """Whether ``credential`` is the play or the watch hash of ``token_hash``: both compared,
    in constant time, whatever the first says."""
    play, watch = credentials(token_hash)
    is_play = hmac.compare_digest(credential, play)
    is_watch = hmac.compare_digest(credential, watch)
    return len(credential) == CREDENTIAL_BYTES and (is_play or is_watch)
