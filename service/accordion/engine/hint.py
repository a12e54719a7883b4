"""A quick hint from what the player can see: a one-move look-ahead that never deals.

A chance move (DEAL, REDEAL) is suggested only when nothing else is legal, so
no hint depends on the stock's order: the look-ahead applies only moves that
leave the stock untouched. On a position with every card known the service's Hint asks the
solver first (``accordion.api.solving``); this is its fallback, and its answer where cards
are hidden and the game's search samples nothing.

Tableau games are judged from ``Rules.zones`` alone (what the player sees: face-up cards and
counts of face-down ones), never from the position, so no hint depends on a hidden card
(``tableau_hint``).
"""

from __future__ import annotations

from .core import Rules, State
from .game import Game
from .moves import Deal, Move, Redeal
from .tableau_hint import tableau_move

_CHANCE = (Deal, Redeal)


def suggest(game: Game) -> Move | None:
    """The visible move that scores most and leaves the most visible moves after it; None if over."""
    legal = game.legal_moves()
    return visible_move(game.rules, game.state, legal) if legal else None


def visible_move(rules: Rules, state: State, legal: tuple[Move, ...]) -> Move:
    """``suggest`` on a bare position with its (non-empty) legal moves."""
    zones = rules.zones(state)
    if zones:  # a tableau game: judged from what the player sees, nothing else
        return tableau_move(zones, legal)
    visible = [m for m in legal if not isinstance(m, _CHANCE)]
    if not visible:
        return legal[0]

    def value(move: Move) -> tuple[int, int, int]:
        after = rules.apply(state, move)
        follow_ups = sum(1 for m in rules.legal_moves(after) if not isinstance(m, _CHANCE))
        return (rules.score(after) - rules.score(state), follow_ups, -len(after.row))

    return max(visible, key=value)  # max keeps the first of equals: deterministic
