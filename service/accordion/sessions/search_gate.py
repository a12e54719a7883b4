"""The hidden-information gate: what a search may read of a player's game, decided here,
before any position reaches the solver (``Sessions.open_to_solve``, ``Sessions.open_to_hint``).

No search ever looks at a card the player cannot see. A position that hides anything (the
engine's ``Rules.hides_anything``: a stock, a face-down card, unless the game was dealt open)
is never solved: Solve is refused (``HiddenCards``), and a Hint is made from the player's view
only, by sampling the hidden cards from that view where the game's search allows it
(``Search.sampling``, solver/sampling.py) or by the heuristic (``engine.hint.suggest``). The
solver keeps its own check too (``solver.check_solvable``); this is the one the flow decides by.
The one search that knows every card is NewGame(winnable_only)'s, before anyone plays the deal.
"""

from __future__ import annotations

from enum import Enum

from accordion.engine import Game
from accordion.engine.search import NoSearch
from accordion.engine.tableau import can_sample

from .errors import HiddenCards


class HintSearch(Enum):
    """What a Hint may search, given what the player sees."""

    WHOLE = "whole"  # every card is known: the solver may search the position itself
    SAMPLED = "sampled"  # cards are hidden: worlds dealt from the player's view are searched
    VIEW = "view"  # cards are hidden: only the heuristic, from the player's view


def check_solve(game: Game) -> None:
    """Raise HiddenCards if Solve may not search ``game``'s position: it hides a card. A game no
    search plays at all (``NoSearch``, e.g. Cribbage Solitaire) passes here, for the solver to
    refuse it as a game it does not play, which says more than hidden cards would."""
    rules, state = game.rules, game.state
    if isinstance(rules.search(state), NoSearch):
        return
    if rules.hides_anything(state):
        raise HiddenCards(
            f"{game.variant.id}: cards are face down (in the stock or under the tableau); the solver "
            "works only on positions with every card known (a game dealt with option open=true, or "
            "once nothing is hidden)"
        )


def hint_search(game: Game) -> HintSearch:
    """What a Hint on ``game`` may search."""
    rules, state = game.rules, game.state
    if not rules.hides_anything(state):
        return HintSearch.WHOLE
    if can_sample(rules, state):
        return HintSearch.SAMPLED
    return HintSearch.VIEW
