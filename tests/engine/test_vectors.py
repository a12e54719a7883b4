"""The published deal vectors: the generator, the shuffle and every variant's seeded deal are stable."""

from __future__ import annotations

import json

import pytest

from accordion.engine import all_variants, card_text, new_game
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
