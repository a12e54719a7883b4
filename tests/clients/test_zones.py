"""The Python client's text of a tableau game, from ``Game`` messages built here (no server):
face-down cards are backs unless the game was dealt open, then bracketed; the structured move
builders make the ``Move`` the contract describes, and refuse nonsense before sending."""

from __future__ import annotations

import re

import pytest

from accordion_client import moves, pb
from accordion_client.render import board_lines, row_lines, status_line
from accordion_client.zones import BACK, is_tableau, tableau_lines

SUITS = {"♠": pb.SUIT_SPADES, "♥": pb.SUIT_HEARTS, "♦": pb.SUIT_DIAMONDS, "♣": pb.SUIT_CLUBS}
RANKS = {"A": 1, "J": 11, "Q": 12, "K": 13}


def card(text: str) -> pb.Card:
    rank = RANKS.get(text[:-1]) or int(text[:-1])
    return pb.Card(rank=rank, suit=SUITS[text[-1]], text=text)


def pile(face_up: str = "", down: int = 0, down_cards: str = "") -> pb.ZonePile:
    return pb.ZonePile(
        face_down=down,
        cards=[card(t) for t in face_up.split()],
        face_down_cards=[card(t) for t in down_cards.split()],
    )


def klondike(open_game: bool = False) -> pb.Game:
    """A Klondike position: piles 2 and 3 with face-down cards, A♠ home, 21 in the stock."""
    hidden = {2: "Q♣", 3: "7♦ 3♥"}
    tableau = [
        pile("K♠ Q♥"),
        pile("9♦", 1, hidden[2] if open_game else ""),
        pile("4♣", 2, hidden[3] if open_game else ""),
        pile(),
    ]
    stock_cards = "5♠ 6♠ 2♦ J♥ 10♣ 8♥ 9♠ 2♣ 3♣" if open_game else ""
    stock = pile(down=21 if not open_game else 9, down_cards=stock_cards)
    return pb.Game(
        variant="klondike",
        status=pb.GAME_STATUS_IN_PROGRESS,
        penalty=47,
        stock_size=stock.face_down,
        piles=[pb.Pile(cards=p.cards) for p in tableau],
        extras=["redeals unlimited"],
        zones=[
            pb.Zone(kind=pb.ZONE_KIND_TABLEAU, piles=tableau),
            pb.Zone(kind=pb.ZONE_KIND_FOUNDATION, piles=[pile("A♠"), pile(), pile(), pile()]),
            pb.Zone(kind=pb.ZONE_KIND_STOCK, piles=[stock]),
            pb.Zone(kind=pb.ZONE_KIND_WASTE, piles=[pile("8♣ 4♦ 9♣ K♦")]),
        ],
    )


def test_a_hidden_game_shows_backs_and_counts() -> None:
    game = klondike()
    assert is_tableau(game) and not is_tableau(pb.Game(piles=[pb.Pile()]))
    lines = tableau_lines(game)
    assert lines == [
        "foundations A♠ -- -- --  ·  stock 21  ·  waste 4: …4♦ 9♣ K♦",
        "1: K♠ Q♥",
        f"2: {BACK} 9♦",
        f"3: {BACK} {BACK} 4♣",
        "4: -",
    ]
    assert row_lines(game) == lines and board_lines(game) == lines  # chat and terminal alike
    assert status_line(game) == "in progress · 3 face down · redeals unlimited · penalty 47"


def test_an_open_game_marks_its_face_down_cards() -> None:
    lines = tableau_lines(klondike(open_game=True))
    assert lines[2] == "2: [Q♣] 9♦" and lines[3] == "3: [7♦] [3♥] 4♣"
    assert "stock 9: next [5♠] [6♠] [2♦] [J♥] [10♣] [8♥] [9♠] [2♣] …" in lines[0]
    assert BACK not in "\n".join(lines)


def test_colour_adds_escapes_and_nothing_else() -> None:
    game = klondike()
    coloured = board_lines(game, colour=True)
    assert any("\x1b[31m" in line for line in coloured)  # red ♥♦
    assert [re.sub(r"\x1b\[\d+m", "", line) for line in coloured] == tableau_lines(game)


def test_wish_has_no_stock_or_waste_line() -> None:
    game = pb.Game(
        variant="wish",
        zones=[pb.Zone(kind=pb.ZONE_KIND_TABLEAU, piles=[pile("7♠", 3), pile("7♥", 3), pile()])],
    )
    assert tableau_lines(game) == [f"1: {BACK} {BACK} {BACK} 7♠", f"2: {BACK} {BACK} {BACK} 7♥", "3: -"]


@pytest.mark.parametrize(
    ("built", "expected"),
    [
        (
            moves.move("tableau", 3, "tableau", 7, 4),
            dict(from_zone=1, from_pile=3, to_zone=1, to_pile=7, count=4),
        ),
        (moves.move("w", 1, "t", 5), dict(from_zone=4, from_pile=1, to_zone=1, to_pile=5, count=1)),
        (
            moves.move(pb.ZONE_KIND_TABLEAU, 5, "foundation"),
            dict(from_zone=1, from_pile=5, to_zone=2, to_pile=0),
        ),
        (moves.move("f", 2, "tableau", 5), dict(from_zone=2, from_pile=2, to_zone=1, to_pile=5)),
    ],
)
def test_move_builders(built: pb.Move, expected: dict[str, int]) -> None:
    assert built.kind == pb.MOVE_KIND_MOVE
    for name, value in expected.items():
        assert getattr(built, name) == value, name


def test_other_builders() -> None:
    assert moves.draw() == pb.Move(kind=pb.MOVE_KIND_DRAW)
    assert moves.deal() == pb.Move(kind=pb.MOVE_KIND_DEAL)
    assert moves.redeal() == pb.Move(kind=pb.MOVE_KIND_REDEAL)
    assert moves.resign() == pb.Move(kind=pb.MOVE_KIND_RESIGN)
    assert moves.pair(5, 3) == pb.Move(kind=pb.MOVE_KIND_REMOVE, positions=[3, 5])


@pytest.mark.parametrize(
    "call",
    [
        lambda: moves.move("deck", 1, "tableau", 2),
        lambda: moves.move("tableau", 0, "tableau", 2),
        lambda: moves.move("tableau", 1, "tableau", 0),
        lambda: moves.move("tableau", 1, "tableau", 2, count=0),
        lambda: moves.move(99, 1, "tableau", 2),  # type: ignore[arg-type]
        lambda: moves.pair(3, 3),
    ],
)
def test_builders_refuse_nonsense(call: object) -> None:
    with pytest.raises(ValueError):
        call()  # type: ignore[operator]
