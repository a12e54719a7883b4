"""What a position may show (tests/security: test_hidden_information.py, test_winnable_hidden.py):
the truth from the engine's full position (its hidden and visible cards), the checks of a Game
message and of a state string against it, the patterns that name a card in any of its forms, and
the Game messages inside a reply.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from google.protobuf.message import Message

from accordion import engine
from accordion.engine.cards import card_code, card_text
from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE
from accordion.v1 import accordion_pb2 as pb

RANK_NAMES = (
    "ace",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
)
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")


# --- the truth, from the engine's full position ----------------------------------------------


def hidden_cards(state: engine.State) -> list[int]:
    """Face-down tableau cards and the stock."""
    return [c for pile, n in zip(TABLEAU.get(state), DOWN.get(state)) for c in pile[:n]] + list(state.stock)


def visible_cards(state: engine.State) -> list[int]:
    out = [c for pile, n in zip(TABLEAU.get(state), DOWN.get(state)) for c in pile[n:]]
    return out + [c for pile in FOUNDATIONS.get(state) for c in pile] + list(WASTE.get(state))


def _card(c: int) -> pb.Card:
    return pb.Card(rank=c % 13 + 1, suit=pb.Suit.ValueType(c // 13 + 1), text=card_text(c, symbols=True))


def check_game_message(game: pb.Game, state: engine.State, open_: bool) -> None:
    """The message shows exactly what the position has visible (all of it when open)."""
    check_state_string(game.state, state, open_)
    tableau, down = TABLEAU.get(state), DOWN.get(state)
    by_kind = {z.kind: z for z in game.zones}
    expect_tableau = [
        pb.ZonePile(
            face_down=n,
            cards=[_card(c) for c in pile[n:]],
            face_down_cards=[_card(c) for c in pile[:n]] if open_ else [],
        )
        for pile, n in zip(tableau, down)
    ]
    assert list(by_kind[pb.ZONE_KIND_TABLEAU].piles) == expect_tableau
    assert [list(p.cards) for p in game.piles] == [list(p.cards) for p in expect_tableau]
    assert [list(p.cards) for p in by_kind[pb.ZONE_KIND_FOUNDATION].piles] == [
        [_card(c) for c in pile] for pile in FOUNDATIONS.get(state)
    ]
    if pb.ZONE_KIND_STOCK in by_kind:
        (stock,) = by_kind[pb.ZONE_KIND_STOCK].piles
        assert stock.face_down == len(state.stock) == game.stock_size and not stock.cards
        assert list(stock.face_down_cards) == ([_card(c) for c in state.stock] if open_ else [])
    else:
        assert not state.stock
    if pb.ZONE_KIND_WASTE in by_kind:
        (waste,) = by_kind[pb.ZONE_KIND_WASTE].piles
        assert list(waste.cards) == [_card(c) for c in WASTE.get(state)] and not waste.face_down
    # Hidden cards (or open, with a stock still to come): no seed; open with nothing to come: shown.
    assert game.HasField("seed") == open_


def check_state_string(text: str, state: engine.State, open_: bool) -> None:
    """The player's state string names only visible cards (its card codes are two characters)."""
    shown: Counter[str] = Counter()
    for token in re.split(r"[^0-9A-Z?]+", text):
        if len(token) >= 2 and len(token) % 2 == 0 and re.fullmatch(r"(?:[2-9TJQKA][SHDC]|\?\?)+", token):
            shown.update(token[i : i + 2] for i in range(0, len(token), 2) if token[i] != "?")
    may_show = Counter(card_code(c) for c in (visible_cards(state) + (hidden_cards(state) if open_ else [])))
    assert not shown - may_show, f"state string names {shown - may_show}: {text}"


def card_patterns(c: int) -> list[re.Pattern[str]]:
    words = {card_text(c), card_code(c)}
    # Not inside a word, nor inside an id or token (base64url: "-" and "_" too: a game id
    # "AD_Ks75…" names no ace of diamonds).
    out = [re.compile(rf"(?<![0-9A-Za-z_-]){re.escape(w)}(?![0-9A-Za-z_-])") for w in words]
    out.append(re.compile(rf"(?<![0-9]){re.escape(card_text(c, symbols=True))}"))
    rank, suit = c % 13, c // 13
    out.append(
        re.compile(rf"\b(?:{RANK_NAMES[rank]}|{rank + 1}|{card_text(c)[:-1]}) of {SUIT_NAMES[suit]}\b", re.I)
    )
    return out


def _games_in(msg: Message) -> Iterator[pb.Game]:
    if isinstance(msg, pb.Game):
        yield msg
    for desc, value in msg.ListFields():
        if desc.message_type is not None:
            items = [value] if isinstance(value, Message) else list(value)
            for item in items:
                if isinstance(item, Message):
                    yield from _games_in(item)
