"""GetGamePicture's SVG of a tableau game: its zones, a back for each face-down card, the stock
as backs with its count; in a game dealt open the face-down cards show (paler), and the stock's
next card. Drawn from the Game message the player receives, as the service does."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from accordion import engine, pictures
from accordion.api import wire
from accordion.engine.cards import card_text
from accordion.engine.moves import Zone
from accordion.engine.tableau import DOWN, TABLEAU

from .tableau_deals import WINS

NS = {"s": "http://www.w3.org/2000/svg"}
GAME_ID = "abcdefghijklmnopqrstuv"


def _svg(game: engine.Game) -> ET.Element:
    return ET.fromstring(pictures.game_svg(wire.encode_game(game, GAME_ID, 1)))


def _groups(root: ET.Element, zone: str) -> list[ET.Element]:
    return [
        g
        for g in root.iter("{http://www.w3.org/2000/svg}g")
        if g.get("data-zone") == zone and g.get("data-pile")
    ]


@pytest.mark.parametrize("variant", ["klondike", "wish", "streets-and-alleys", "emperor", "spider"])
def test_the_zones_are_drawn_with_backs_for_face_down_cards(variant: str) -> None:
    game = engine.new_game(variant, deal=list(WINS[variant]().cards))
    root = _svg(game)
    tableau, down = TABLEAU.get(game.state), DOWN.get(game.state)
    piles = _groups(root, "tableau")
    assert [int(p.get("data-pile", "0")) for p in piles] == list(range(1, len(tableau) + 1))
    for group, pile, n in zip(piles, tableau, down, strict=True):
        backs = group.findall("s:g[@class='card-back']", NS)
        faces = [g.get("data-card") for g in group.findall("s:g[@class='card-face']", NS)]
        assert len(backs) == n
        assert faces == [card_text(c, symbols=True) for c in pile[n:]]
    assert len(_groups(root, "foundation")) == len(game.rules.zones(game.state)[1].piles)
    stock = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "stock"]
    if game.state.stock:
        assert len(stock) == 1 and f"stock: {len(game.state.stock)} cards" in ET.tostring(
            stock[0], encoding="unicode"
        )
        wastes = [z for z in game.rules.zones(game.state) if z.zone is Zone.WASTE]
        assert len(_groups(root, "waste")) == len(wastes) == (0 if variant == "spider" else 1)
    else:
        assert not stock
    hidden = {card_text(c, symbols=True) for pile, n in zip(tableau, down) for c in pile[:n]}
    hidden |= {card_text(c, symbols=True) for c in game.state.stock}
    hidden -= {card_text(c, symbols=True) for pile, n in zip(tableau, down) for c in pile[n:]}  # (two decks)
    assert hidden or variant == "streets-and-alleys"  # (its cards are all face up)
    shown = {g.get("data-card") for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("data-card")}
    assert not hidden & shown


def test_an_open_game_shows_its_face_down_cards_and_the_next_stock_card() -> None:
    game = engine.new_game("klondike", {"open": "true"}, deal=list(WINS["klondike"]().cards))
    text = pictures.game_svg(wire.encode_game(game, GAME_ID, 1))
    root = ET.fromstring(text)
    tableau, down = TABLEAU.get(game.state), DOWN.get(game.state)
    for group, pile, _n in zip(_groups(root, "tableau"), tableau, down, strict=True):
        assert not group.findall("s:g[@class='card-back']", NS)
        faces = [g.get("data-card") for g in group.findall("s:g[@class='card-face']", NS)]
        assert faces == [card_text(c, symbols=True) for c in pile]
    assert f'data-card="{card_text(game.state.stock[0], symbols=True)}"' in text
    assert "open-down" in text


def test_a_played_game_shows_the_waste_and_the_foundations() -> None:
    game = engine.new_game("klondike-draw-one", deal=list(WINS["klondike-draw-one"]().cards))
    game.play("draw")
    game.play("w>f")
    game.play("draw")
    root = _svg(game)
    (waste,) = _groups(root, "waste")
    assert [g.get("data-card") for g in waste.findall("s:g[@class='card-face']", NS)] == ["A♥"]
    foundations = _groups(root, "foundation")
    assert [g.get("data-card") for g in foundations[0].findall("s:g[@class='card-face']", NS)] == ["A♠"]
    assert "stock · 22 cards" in ET.tostring(root, encoding="unicode")
