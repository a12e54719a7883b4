"""The portable deal generator: SplitMix64 and a Fisher–Yates shuffle.

Chosen because a client in any language reproduces it in a dozen lines with
64-bit unsigned arithmetic. The exact algorithm (also in docs/dealing.md):

    next():  state = (state + 0x9E3779B97F4A7C15) mod 2^64
             z = state
             z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) mod 2^64
             z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) mod 2^64
             return z ^ (z >> 31)

    below(n): draw x = next() until x < 2^64 - (2^64 mod n); return x mod n
              (rejection removes the modulo bias)

    shuffle(cards): for i from len-1 down to 1: j = below(i + 1); swap cards[i], cards[j]

The generator starts from the game's seed (an unsigned 64-bit integer). A game
keeps the generator's state after the deal, so later chance events (French's
redeal, the goal card of Accordion's Revenge) continue the same stream.
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import TypeVar

MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_TWO64 = 1 << 64
# below(n)'s rejection limit for the bounds of every deal (two decks: 104 cards).
_LIMITS = tuple(_TWO64 - _TWO64 % n if n else 0 for n in range(129))
T = TypeVar("T")


class SplitMix64:
    """A seeded generator whose whole state is one 64-bit integer."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        if not 0 <= seed <= MASK64:
            raise ValueError(f"seed {seed!r} is not an unsigned 64-bit integer")
        self.state = seed

    def next(self) -> int:
        self.state = (self.state + _GOLDEN) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next()
            if x < limit:
                return x % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Shuffle in place (Fisher–Yates, from the end).

        ``next`` and ``below`` written out in one loop over a local state (the same draws, in
        the same order): a deal is 51 or more draws, and the calls and the attribute writes
        were half of NewGame's engine time."""
        state = self.state
        for i in range(len(items) - 1, 0, -1):
            n = i + 1
            limit = _LIMITS[n] if n < len(_LIMITS) else _TWO64 - _TWO64 % n
            while True:
                state = (state + _GOLDEN) & MASK64
                z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
                x = z ^ (z >> 31)
                if x < limit:
                    break
            j = x % n
            items[i], items[j] = items[j], items[i]
        self.state = state
