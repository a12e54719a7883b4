"""accordion.pictures: every registered variant renders a valid SVG picture from the Game
message the player gets, the stock drawn as backs with its size, and no hidden card named."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from accordion import engine, pictures
from accordion.api import wire
from accordion.engine.cards import card_text

SVG = "{http://www.w3.org/2000/svg}"
# Row games; the tableau games' zones are drawn and checked in tests/api/test_tableau_pictures.py.
VARIANTS = [v.id for v in engine.all_variants() if v.rules.family != "tableau"]


def hidden_names(card: int) -> set[str]:
    """Every way a card could be written: "8♦", "8D", "10H", "TH"."""
    symbol, letters = card_text(card, symbols=True), card_text(card)
    names = {symbol, letters}
    if letters.startswith("10"):
        names.add("T" + letters[2:])
    return names


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if cls in (g.get("class") or "").split()]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_renders_valid_svg_with_the_stock_as_backs(variant: str) -> None:
    game = engine.new_game(variant, seed=11)
    svg = pictures.game_svg(wire.encode_game(game, "G" * 22, 1))
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    assert root.tag == f"{SVG}svg" and int(root.get("width", "0")) > 0 and int(root.get("height", "0")) > 0
    piles = groups(root, "pile")
    assert [int(p.get("data-pile", "0")) for p in piles] == list(range(1, len(game.state.row) + 1))
    # Each row pile shows its top card, named on the card.
    for pile, cards in zip(piles, game.state.row):
        assert [c.get("data-card") for c in groups(pile, "card-face")] == [card_text(cards[-1], symbols=True)]
    (stock,) = groups(root, "stock")
    stock_size = len(game.state.stock)
    backs = groups(stock, "card-back")
    assert len(backs) == min(stock_size, 3), "the stock is drawn as a small stack of backs"
    assert all(not "".join(b.itertext()).strip() for b in backs), "a back carries no text"
    assert f"stock: {stock_size} cards" in "".join(stock.itertext())
    # No card of the stock is named anywhere in the file (the hidden order never reaches it).
    hidden = [name for card in game.state.stock for name in hidden_names(card) if name in svg]
    assert not hidden, f"hidden cards named in the picture: {hidden}"
    assert not root.findall(f".//{SVG}script") and "href" not in svg, "no script, no external reference"


def test_a_resigned_game_says_so_and_keeps_its_stock_hidden() -> None:
    game = engine.new_game("accordion-stock", seed=11)
    game.play("resign")
    svg = pictures.game_svg(wire.encode_game(game, "G" * 22, 2))
    assert "lost (resigned)" in "".join(ET.fromstring(svg).itertext())
    assert not [name for card in game.state.stock for name in hidden_names(card) if name in svg]


def test_the_hidden_check_can_fail() -> None:
    """The same check finds a stock card when a layout shows it face up."""
    game = engine.new_game("accordion-stock", seed=11)
    assert game.state.stock, "accordion-stock keeps a stock"
    card = game.state.stock[0]
    layout = pictures.layout_of(wire.encode_game(game, "G" * 22, 1))
    shown = pictures.PileView((pictures.CardFace(card % 13 + 1, card // 13 + 1),))
    leaked = pictures.render_svg(
        pictures.Layout(layout.title, (*layout.zones, pictures.Zone("waste", (shown,))), 0)
    )
    assert card_text(card, symbols=True) in leaked


def test_zones_draw_face_down_cards_as_backs_for_the_tableau_games() -> None:
    """The layout the tableau games will map to: face-down counts drawn as backs, fanned."""
    layout = pictures.Layout(
        "klondike",
        (
            pictures.Zone("foundations", (pictures.PileView(()),) * 4),
            pictures.Zone(
                "tableau",
                (
                    pictures.PileView((pictures.CardFace(13, 1),)),
                    pictures.PileView((pictures.CardFace(5, 2), pictures.CardFace(4, 4)), face_down=3),
                ),
                fanned=True,
            ),
            pictures.Zone("waste", (pictures.PileView((pictures.CardFace(1, 3),)),)),
        ),
        stock=20,
    )
    root = ET.fromstring(pictures.render_svg(layout))
    tableau = [p for p in groups(root, "pile") if p.get("data-zone") == "tableau"]
    assert [len(groups(p, "card-back")) for p in tableau] == [0, 3]
    assert [c.get("data-card") for c in groups(tableau[1], "card-face")] == ["5♥", "4♣"]
    assert len([p for p in groups(root, "pile") if p.get("data-zone") == "foundations"]) == 4
