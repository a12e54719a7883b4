"""NewGame's start: the game a request names, before ``Sessions.deal`` stores it.

A request starts from a seed, from explicit cards, or from a deal code. Without a seed the
session layer draws one: the engine is pure (its only randomness is a seed it is given), and
the API layer only translates the request."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from accordion import engine
from accordion.engine import Game

from .flow import Sessions


@dataclass(frozen=True, slots=True)
class Start:
    """The game to deal; ``seed``: the one it was dealt from (drawn when the request gave none;
    a winnable search starts there; a code's own seed for a deal code); ``deal_code``: the code
    the game keeps, canonical ("" when it gets a new one: not a code's game exactly)."""

    game: Game
    seed: int
    deal_code: str = ""


async def start_game(
    sessions: Sessions,
    variant: str,
    options: Mapping[str, str],
    deadline: float | None,
    *,
    seed: int | None = None,
    deal: Sequence[int] | None = None,
    deal_code: str | None = None,
) -> Start:
    """The game a NewGame asks for: ``deal_code``'s game (its variant, options, seed and cards;
    ``options`` may only ask for a stricter undo: ``CodedDeal.game``), else dealt from ``seed``
    (drawn here when None) or from the cards of ``deal`` (the seed then drives later chance only).
    Raises DealCodeNotFound, DealCodeOptions, and the engine's errors (unknown variant, option,
    bad deal)."""
    if deal_code is not None:
        coded = await sessions.find_deal(deal_code, deadline)
        game, same = coded.game(variant, dict(options))
        return Start(game, coded.seed, coded.code if same else "")
    drawn = seed if seed is not None else secrets.randbits(64)
    return Start(engine.new_game(variant, dict(options), seed=drawn, deal=deal), drawn)
