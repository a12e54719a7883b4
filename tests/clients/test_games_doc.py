"""docs/games.md describes every game the service registers: a section per variant, its options,
and the penalty formula (checked against what ListVariants answers)."""

from __future__ import annotations

import re

from accordion_client import AccordionClient
from tests.api.helpers import ROOT

GAMES = (ROOT / "docs" / "games.md").read_text()


def sections() -> dict[str, str]:
    """Variant id -> the text of its section (a heading that ends with the id in backquotes)."""
    found: dict[str, str] = {}
    parts = re.split(r"^(#{2,3} .*\(`([a-z0-9-]+)`\))$", GAMES, flags=re.M)
    for i in range(1, len(parts) - 1, 3):
        found[parts[i + 1]] = parts[i + 2].split("\n## ", 1)[0]
    return found


def test_every_registered_game_has_its_rules_options_and_threshold(client: AccordionClient) -> None:
    described = sections()
    variants = client.list_variants()
    assert {v.id for v in variants} == set(described), "docs/games.md and the registry disagree"
    for v in variants:
        text = described[v.id]
        assert v.name.split(" (")[0] in GAMES, v.id
        presets_accordion = "Accordion with" in text or "as Accordion's" in text or v.id == "accordion"
        for option in v.options:
            assert f"`{option.name}`" in text or presets_accordion, (v.id, option.name)
        assert re.search(r"\bWon\b", text), f"{v.id}: when is it won?"
        assert "enalty" in text or v.family == "eliminator", f"{v.id}: how is it scored?"


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
