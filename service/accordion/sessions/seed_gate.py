"""When a reply shows a game's seed: a hidden-information rule, decided here in the session layer
(as ``search_gate`` decides what a search may read); ``api/wire.py`` only encodes the answer.

A seed names every card of the deal, and, for a game that draws after the deal (French's
shuffles), every card to come. So it shows only while it reveals nothing: nothing hidden now
(the engine's ``Rules.hides_anything``: a stock, a face-down card, unless the game was dealt
open) and no chance to come (``Rules.draws_after_deal``).

Not "or game over": undo takes back any last move (a resignation, or the move that ended the
game), so a seed shown for a finished game would tell the stock's order, a face-down card, or
French's shuffles to come, of a game that can go on.
"""

from __future__ import annotations

from accordion.engine import Game


def seed_is_public(game: Game) -> bool:
    """Whether showing ``game``'s seed reveals nothing hidden (the module's rule)."""
    rules = game.rules
    return not rules.draws_after_deal and not rules.hides_anything(game.state)


def shown_seed(game: Game) -> int | None:
    """The seed a reply about ``game`` carries, or None while it would reveal a hidden card."""
    return game.seed if seed_is_public(game) else None


def shown_seeds_tried(game: Game, seeds_tried: int) -> int:
    """NewGame(winnable_only)'s count of seeds tried as its reply may show it: the count names
    the seed dealt (the one asked for, plus the count, less one), so it shows exactly when the
    seed does; 0 (not sent) otherwise."""
    return seeds_tried if seed_is_public(game) else 0
