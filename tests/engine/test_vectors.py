"""The published deal vectors: the generator, the shuffle and every variant's seeded deal are stable."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest

from accordion.engine import all_variants, card_text, new_game, rng
from accordion.engine.rng import SplitMix64

from .make_vectors import PATH

VECTORS = json.loads(PATH.read_text())


def test_splitmix64_matches_the_reference_implementation() -> None:
    # Vigna's splitmix64.c from state 0 starts e220a8397b1dcdaf 6e789e6aa1b965f4 06c45d188009454f.
    assert VECTORS["splitmix64"]["0"][:3] == ["e220a8397b1dcdaf", "6e789e6aa1b965f4", "06c45d188009454f"]


@pytest.mark.parametrize("seed", list(VECTORS["splitmix64"]))
def test_generator_vectors(seed: str) -> None:
    gen = SplitMix64(int(seed))
    assert [f"{gen.next():016x}" for _ in range(5)] == VECTORS["splitmix64"][seed]


@pytest.mark.parametrize("seed", list(VECTORS["shuffle52"]))
def test_shuffle_vectors(seed: str) -> None:
    cards = list(range(52))
    SplitMix64(int(seed)).shuffle(cards)
    assert " ".join(card_text(c) for c in cards) == VECTORS["shuffle52"][seed]


def test_every_registered_variant_has_vectors() -> None:
    assert sorted(VECTORS["deals"]) == sorted(v.id for v in all_variants())


@pytest.mark.parametrize(
    ("variant", "seed"), [(v, s) for v, seeds in VECTORS["deals"].items() for s in seeds]
)
def test_deal_vectors(variant: str, seed: str) -> None:
    assert new_game(variant, seed=int(seed)).state_string() == VECTORS["deals"][variant][seed]


def test_below_is_unbiased_by_rejection() -> None:
    # A bound that does not divide 2^64 must reject the top sliver: feed the limit itself.
    n = 3
    limit = (1 << 64) - ((1 << 64) % n)
    outputs = iter([limit, limit + 1, 7])

    class Scripted(SplitMix64):
        def next(self) -> int:
            return next(outputs)

    assert Scripted(0).below(n) == 7 % n


# --- the shuffle's two loops (big integers interpreted, 32-bit halves compiled) against ``below`` ---

_MASK64 = (1 << 64) - 1


def _unxorshift(z: int, shift: int) -> int:
    """The x with ``x ^ (x >> shift) == z`` (64 bits)."""
    x = z
    for _ in range(64 // shift + 1):
        x = z ^ (x >> shift)
    return x


def _seed_drawing(x: int) -> int:
    """The seed whose first ``next()`` is ``x``: SplitMix64's output function inverted (xorshifts
    and odd multipliers are bijections of 64-bit integers)."""
    z = _unxorshift(x, 31)
    z = _unxorshift(z * pow(0x94D049BB133111EB, -1, 1 << 64) & _MASK64, 27)
    z = _unxorshift(z * pow(0xBF58476D1CE4E5B9, -1, 1 << 64) & _MASK64, 30)
    return (z - 0x9E3779B97F4A7C15) & _MASK64


def _shuffled_by_below(seed: int, size: int) -> tuple[list[int], int]:
    """The shuffle as docs/dealing.md states it, through ``below``; and the state after it."""
    gen = SplitMix64(seed)
    cards = list(range(size))
    for i in range(size - 1, 0, -1):
        j = gen.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards, gen.state


@pytest.mark.parametrize("x", [0, 7, 1 << 63, _MASK64])
def test_seed_drawing_inverts_the_generator(x: int) -> None:
    assert SplitMix64(_seed_drawing(x)).next() == x


# The first draw of a 52-card shuffle is below(52): 2^64 - 1 and the limit itself are rejected
# (52 does not divide 2^64), the value just under the limit is kept; 2^63 and 2^64 - 2^32 set the
# high half's bits without being rejected; below(64) never rejects (64 divides 2^64).
_LIMIT52 = (1 << 64) - (1 << 64) % 52
EDGE_SEEDS = [0, 1, 2**32 - 1, 2**32, 2**63 - 1, 2**63, _MASK64] + [
    _seed_drawing(x) for x in (_MASK64, _LIMIT52, _LIMIT52 - 1, 1 << 63, _MASK64 - _MASK64 % (1 << 32))
]


@pytest.mark.parametrize("seed", EDGE_SEEDS + [random.Random(17).getrandbits(64) for _ in range(40)])
@pytest.mark.parametrize("size", [52, 64, 104, 200])
@pytest.mark.parametrize("loop", [rng._shuffle_big_int, rng._shuffle_in_halves])
def test_both_shuffle_loops_draw_as_below(
    loop: Callable[[int, list[int]], int], size: int, seed: int
) -> None:
    cards = list(range(size))
    state = loop(seed, cards)
    assert (cards, state) == _shuffled_by_below(seed, size)


def test_a_rejected_draw_is_skipped() -> None:
    # The seed's first draw, 2^64 - 1, is rejected: the shuffle's first swap uses the second draw.
    seed = _seed_drawing(_MASK64)
    gen = SplitMix64(seed)
    assert gen.next() == _MASK64
    second = gen.next()
    cards = list(range(52))
    SplitMix64(seed).shuffle(cards)
    assert cards[51] == second % 52
