"""The per-process cache of decoded games (``GameCache``), never trusted for the truth.

A move on a cached game goes straight to the store's compare-and-set, which checks the
version atomically: a stale entry (another process moved the game) costs a conflict, a load
and a second try, as a lost race always did. Authorization uses the cached token hash (a
game's token never changes). Reads always ask the store for the version, and use a cached
game only when it is at that version (it saves decoding, nothing else).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import tokens
from .record import Stored

CACHE_SIZE = 4096  # games kept decoded per process
# What ``take_for`` compares a presented hash with when the game is not cached: a play hash
# nobody presents (a token's SHA-256 is never all zeros), so a miss costs the compare a hit does.
_NOBODY = bytes(32)


@dataclass
class Cached:
    version: int
    token_hash: bytes
    stored: Stored


class GameCache:
    """Recently used games, decoded, by id: least recently used first out.

    A mutation ``take``s its game (so no other call sees it while it changes) and ``put``s it
    back only once the store accepted the new version. Reads ``peek`` and use the entry only
    when the store's version is the same.
    """

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._games: dict[str, Cached] = {}

    def take(self, game_id: str) -> Cached | None:
        return self._games.pop(game_id, None)

    def take_for(self, game_id: str, presented: bytes, expected: int | None) -> Cached | None:
        """The cached game, taken, if ``presented`` is its play token's hash (the only token the
        cache vouches for) and it is at the ``expected`` version (if one is given); else None,
        and the cache exactly as it was. A miss and a wrong token do the same work (one look-up,
        one constant-time compare) and neither moves anything: a wrong token's path must not
        tell by its time or its effects that the game exists (issue 28)."""
        entry = self._games.get(game_id)
        held = tokens.is_play(presented, entry.token_hash if entry is not None else _NOBODY)
        if entry is None or not held or (expected is not None and expected != entry.version):
            return None
        del self._games[game_id]
        return entry

    def vouches(self, game_id: str, presented: bytes) -> bool:
        """Whether ``presented`` is the cached game's play token's hash (then a load need not
        ask the store to check it). The same work whether or not the game is cached, as in
        ``take_for``."""
        entry = self._games.get(game_id)
        held = tokens.is_play(presented, entry.token_hash if entry is not None else _NOBODY)
        return held and entry is not None

    def order(self) -> list[str]:
        """The cached ids, least recently used first (for tests)."""
        return list(self._games)

    def peek(self, game_id: str, version: int) -> Stored | None:
        entry = self._games.get(game_id)
        return entry.stored if entry is not None and entry.version == version else None

    def put(self, game_id: str, entry: Cached) -> None:
        games = self._games
        games.pop(game_id, None)
        games[game_id] = entry
        if len(games) > self.size:
            del games[next(iter(games))]

    def discard(self, game_id: str) -> None:
        self._games.pop(game_id, None)

    def __len__(self) -> int:
        return len(self._games)
