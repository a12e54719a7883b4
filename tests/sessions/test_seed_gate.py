"""When a reply shows the seed (``sessions.seed_gate``): the session layer decides, and the wire
encodes its answer. A seed names every card (and French's shuffles to come), so it shows only
while it reveals nothing; NewGame(winnable_only)'s count of seeds tried names the seed too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import accordion
from accordion import engine, sessions
from accordion.api import wire
from accordion.sessions.seed_gate import seed_is_public, shown_seed, shown_seeds_tried
from accordion.store import GameStore

SEED = 3


@pytest.mark.parametrize(
    ("variant", "options", "public"),
    [
        ("accordion", {}, True),  # every card dealt face up, no chance to come
        ("accordion-stock", {}, False),  # a stock: its order is hidden
        ("klondike", {}, False),  # face-down cards
        ("klondike", {"open": "true"}, True),  # dealt open: nothing hidden
        ("french", {}, False),  # nothing hidden now, but shuffles to come (draws after the deal)
    ],
)
def test_the_seed_shows_only_while_it_reveals_nothing(
    variant: str, options: dict[str, str], public: bool
) -> None:
    game = engine.new_game(variant, options, seed=SEED)
    assert seed_is_public(game) is public
    assert shown_seed(game) == (SEED if public else None)
    assert shown_seeds_tried(game, 5) == (5 if public else 0)
    # The wire encodes the session layer's answer: the optional field is there exactly then.
    message = wire.encode_game(game, "G" * 22, 1)
    assert message.HasField("seed") is public
    if public:
        assert message.seed == SEED


def test_a_finished_game_keeps_its_seed_hidden() -> None:
    """Undo takes back a resignation, so a game over is no reason to show its stock's order."""
    game = engine.new_game("accordion-stock", {}, seed=SEED)
    game.play("resign")
    assert game.status is engine.Status.LOST and game.rules.hides_anything(game.state)
    assert shown_seed(game) is None
    assert not wire.encode_game(game, "G" * 22, 2).HasField("seed")


@pytest.mark.parametrize(("variant", "shown"), [("accordion", 4), ("klondike", 0)])
async def test_the_flow_keeps_and_answers_the_count_only_where_the_seed_shows(
    store: GameStore, variant: str, shown: int
) -> None:
    flow = sessions.Sessions(store, game_ttl=60)
    game = engine.new_game(variant, {}, seed=SEED)
    dealt = await flow.deal(game, None, seeds_tried=4, request_id="r1", fingerprint=b"f")
    assert isinstance(dealt, sessions.Dealt) and dealt.seeds_tried == shown
    again = await flow.deal(game, None, seeds_tried=4, request_id="r1", fingerprint=b"f")
    assert isinstance(again, sessions.Dealt)  # a retry: the recorded count, as first answered
    assert (again.game_id, again.seeds_tried) == (dealt.game_id, shown)


def test_the_api_leaves_the_seed_to_the_session_layer() -> None:
    """Neither the wire nor the servicer judges what a seed would reveal: no call there of the
    rule's inputs (``hides_anything``) nor read of ``draws_after_deal``, from the source."""
    api = Path(accordion.__file__).parent / "api"
    for name in ("wire.py", "servicer.py"):
        tree = ast.parse((api / name).read_text())
        attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        assert "seed" in attributes or "seeds_tried" in attributes  # (the walk sees the file)
        assert not attributes & {"hides_anything", "draws_after_deal", "seed_is_public"}, name
