"""Issue 33: the picture names each pile as moves do (3>7, f2>5, w>f, 5>4 in a row game), a
number above each pile, so a chat player can read a move off the picture."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from accordion import engine, pictures
from accordion.api import wire

SVG = "{http://www.w3.org/2000/svg}"
PREFIX = {"tableau": "", "row": "", "foundation": "f", "waste": "w"}


def _numbers(root: ET.Element) -> list[tuple[str, float]]:
    return [
        (t.text or "", float(t.get("x", "0")))
        for t in root.iter(f"{SVG}text")
        if t.get("class") == "pile-number"
    ]


@pytest.mark.parametrize("variant", ["klondike", "spider", "emperor", "accordion", "royal-marriage"])
def test_each_pile_has_its_notation_name_above_it(variant: str) -> None:
    game = engine.new_game(variant, seed=11)
    root = ET.fromstring(pictures.game_svg(wire.encode_game(game, "abcdefghijklmnopqrstuv", 1)))
    piles = [g for g in root.iter(f"{SVG}g") if g.get("class") == "pile"]
    numbers = _numbers(root)
    assert len(numbers) == len(piles) > 0
    for group, (label, x) in zip(piles, numbers, strict=True):
        zone, index = group.get("data-zone", ""), group.get("data-pile", "")
        waste_count = sum(1 for g in piles if g.get("data-zone") == "waste")
        expected = "w" if zone == "waste" and waste_count == 1 else f"{PREFIX[zone]}{index}"
        assert label == expected
        left = min(float(r.get("x", "0")) for r in group.iter(f"{SVG}rect"))
        assert x == left + pictures.CARD_W // 2  # centred above its pile
