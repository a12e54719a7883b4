"""docs/games.md describes every game the service registers: a section per variant, its options,
and the penalty formula (checked against what ListVariants answers)."""

from __future__ import annotations

import re

from accordion.engine import COMMON_OPTIONS
from accordion_client import AccordionClient
from tests.api.helpers import ROOT

GAMES = (ROOT / "docs" / "games.md").read_text()


def sections() -> dict[str, tuple[str, str]]:
    """Variant id -> the text of its section: a heading that names the id in backquotes after a
    parenthesis, e.g. ``### Bayan (`bayan`)``; one heading may name two variants that share rules
    (``### Klondike (`klondike`) and Klondike draw one (`klondike-draw-one`, "Solitaire")``).
    Each with the opening words of its ``##`` family (what the family's games share, e.g. the
    tableau games' penalty) when it is a ``###`` section."""
    found: dict[str, tuple[str, str]] = {}
    parts = re.split(r"^(#{2,3} .*)$", GAMES, flags=re.M)
    family = ""
    for i in range(1, len(parts) - 1, 2):
        heading, body = parts[i], parts[i + 1]
        if heading.startswith("## "):
            family = body
        for variant in re.findall(r"\(`([a-z0-9-]+)`", heading):
            found[variant] = (body, family if heading.startswith("### ") else "")
    return found


COMMON = {o.name for o in COMMON_OPTIONS}
COMMON_GROUND = GAMES.split("## Common ground", 1)[1].split("\n## ", 1)[0]


def test_every_registered_game_has_its_rules_options_and_threshold(client: AccordionClient) -> None:
    described = sections()
    variants = client.list_variants()
    assert {v.id for v in variants} == set(described), "docs/games.md and the registry disagree"
    for v in variants:
        text, family = described[v.id]
        assert v.name.split(" (")[0] in GAMES, v.id
        presets_accordion = "Accordion with" in text or "as Accordion's" in text or v.id == "accordion"
        for option in v.options:
            if option.name in COMMON:  # every game's (the undo option): told once, in "Common ground"
                assert f"`{option.name}`" in COMMON_GROUND, option.name
                continue
            assert f"`{option.name}`" in text or presets_accordion, (v.id, option.name)
        assert re.search(r"\bWon\b", text), f"{v.id}: when is it won?"
        assert "enalty" in text + family or v.family == "eliminator", f"{v.id}: how is it scored?"


def test_the_penalty_formula_is_written_out() -> None:
    penalty = GAMES.split("## Scoring: the penalty", 1)[1].split("\n## ", 1)[0]
    for formula in (
        "52 − the largest pile",
        "cards in the row + cards in the stock − 2",
        "cards in the row + cards in the stock**",
        "61 − score",
        "a **lost** game never scores 0",
    ):
        assert formula in penalty, formula
    for link in re.findall(r"\]\(([^)]+)\)", GAMES):  # links stay inside docs/
        assert (ROOT / "docs" / link).exists(), link
