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

import types
from collections.abc import MutableSequence
from typing import Final, TypeVar

from mypy_extensions import i64, mypyc_attr

MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_TWO64 = 1 << 64
# below(n)'s rejection limit for the bounds of every deal (two decks: 104 cards).
_LIMITS = tuple(_TWO64 - _TWO64 % n if n else 0 for n in range(129))
_M32: Final = 0xFFFFFFFF
_TWO32: Final = 1 << 32
T = TypeVar("T")


@mypyc_attr(allow_interpreted_subclasses=True)  # (the tests script its draws in a subclass)
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
        """Shuffle in place (Fisher–Yates, from the end): ``items[i]`` swapped with
        ``items[below(i + 1)]`` for i from the last index down to 1.

        ``next`` and ``below`` written out in one loop over a local state (the same draws, in
        the same order): a deal is 51 or more draws, and the calls and the attribute writes
        were half of NewGame's engine time. Two loops, one per build, each the faster there
        (a 52-card shuffle: ~21 µs big-int interpreted, ~2 µs in halves compiled; the halves
        would take ~95 µs interpreted, the big ints ~21 compiled); tests/engine/test_vectors.py
        holds both to ``below``."""
        if _COMPILED:
            self.state = _shuffle_in_halves(self.state, items)
        else:
            self.state = _shuffle_big_int(self.state, items)


def _shuffle_big_int(state: int, items: MutableSequence[T]) -> int:
    """``shuffle`` on the interpreter's integers (fastest interpreted); returns the new state."""
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
    return state


def _shuffle_in_halves(state: int, items: MutableSequence[T]) -> int:
    """``shuffle`` with every 64-bit value held as two 32-bit halves in ``i64`` (machine integers
    once compiled: mypyc turns integers past 62 bits into heap objects, slower than the
    interpreter's own). No intermediate value reaches 2^50, so nothing overflows or wraps in
    either build; returns the new state."""
    hi: i64 = state >> 32
    lo: i64 = state & _M32
    z_hi: i64 = 0
    z_lo: i64 = 0
    i: i64 = len(items) - 1
    while i > 0:
        n: i64 = i + 1
        two32_mod_n: i64 = _TWO32 % n
        # below(n) rejects x >= 2^64 - (2^64 mod n): the high half all ones and the low half at
        # least 2^32 - (2^64 mod n) (none when n divides 2^64: the bound is then 2^32).
        reject_from: i64 = _TWO32 - two32_mod_n * two32_mod_n % n
        while True:
            lo += 0x7F4A7C15  # state += 0x9E3779B97F4A7C15, the carry into the high half
            hi = (hi + 0x9E3779B9 + (lo >> 32)) & _M32
            lo &= _M32
            z_lo = lo ^ ((lo >> 30) | (hi << 2)) & _M32  # z = state ^ (state >> 30)
            z_hi = hi ^ (hi >> 30)
            z_hi, z_lo = _times(z_hi, z_lo, 0xBF58, 0x476D, 0x1CE4, 0xE5B9)
            z_lo ^= ((z_lo >> 27) | (z_hi << 5)) & _M32  # z ^= z >> 27
            z_hi ^= z_hi >> 27
            z_hi, z_lo = _times(z_hi, z_lo, 0x94D0, 0x49BB, 0x1331, 0x11EB)
            z_lo ^= ((z_lo >> 31) | (z_hi << 1)) & _M32  # x = z ^ (z >> 31)
            z_hi ^= z_hi >> 31
            if z_hi != _M32 or z_lo < reject_from:
                break
        j: i64 = ((z_hi % n) << 32 | z_lo) % n  # x mod n = ((x_hi mod n)·2^32 + x_lo) mod n
        items[i], items[j] = items[j], items[i]
        i -= 1
    high: int = hi  # (back to Python integers before the shift: the state may exceed 2^63)
    low: int = lo
    return high << 32 | low


def _times(hi: i64, lo: i64, c3: i64, c2: i64, c1: i64, c0: i64) -> tuple[i64, i64]:
    """``(hi·2^32 + lo) · c mod 2^64`` as (high half, low half), for the constant ``c`` given
    as 16-bit quarters ``c3 c2 c1 c0`` (most significant first): a 32-bit half times a 16-bit
    quarter is below 2^48."""
    lo_c1 = lo * c1
    low = lo * c0 + ((lo_c1 & 0xFFFF) << 16)  # lo·(c1·2^16 + c0) less its bits from 2^48 up
    # The high half: lo·(c1·2^16 + c0)'s carry, plus lo·(c3·2^16 + c2) and hi·(c1·2^16 + c0)
    # modulo 2^32 (the rest of the product lies above 2^64).
    high = (low >> 32) + (lo_c1 >> 16) + lo * c2 + ((lo * c3 & 0xFFFF) << 16)
    high += hi * c0 + ((hi * c1 & 0xFFFF) << 16)
    return high & _M32, low & _M32


# Whether this module runs compiled (mypyc's functions are built-in functions, not Python ones):
# ``shuffle`` then draws in halves.
_COMPILED: Final = not isinstance(_times, types.FunctionType)
