"""What the sampled Hint's tests share (test_sampling.py: Klondike; test_sampling_tableau.py:
Spider and Emperor): the cards a position hides, and its twin, the same view with those cards
permuted, which must get the same hint."""

from __future__ import annotations

import random

from accordion import engine
from accordion.engine.tableau import DOWN, TABLEAU, TableauRules


def hidden_cards(state: engine.State, stock: bool = True) -> list[int]:
    down = [c for pile, n in zip(TABLEAU.get(state), DOWN.get(state)) for c in pile[:n]]
    return down + (list(state.stock) if stock else [])


def twin(rules: TableauRules, state: engine.State, seed: int) -> engine.State:
    """The same position with the cards the player cannot know shuffled among their places
    (the stock stays where the player has seen it whole: Klondike after a REDEAL)."""
    known = rules.seen_stock(state)
    cards = hidden_cards(state, stock=not known)
    random.Random(seed).shuffle(cards)
    return rules.with_hidden(state, cards, stock=not known)
