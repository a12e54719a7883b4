"""RESIGN, every game's move (spec: "Every game: resigning"), for every registered variant.

The game ends LOST with the position's penalty; RESIGN is allowed while the game is in
progress, never listed, refused once the game is over; undo takes it back; the replay record,
the snapshot and the state string carry it.
"""

from __future__ import annotations

import pytest

from accordion.engine import (
    RESIGN,
    Game,
    IllegalMoveError,
    MoveKind,
    Resign,
    Status,
    all_variants,
    new_game,
    replay,
)

VARIANTS = sorted(v.id for v in all_variants())


def played(variant: str, seed: int = 11, moves: int = 3) -> Game:
    """A game of ``variant`` a few (first listed) moves in, still in progress."""
    game = new_game(variant, seed=seed)
    for _ in range(moves):
        legal = game.legal_moves()
        if len(legal) == 0:
            break
        game.play(legal[0])
        if game.status is not Status.IN_PROGRESS:
            game.undo()
            break
    assert game.status is Status.IN_PROGRESS
    return game


@pytest.mark.parametrize("variant", VARIANTS)
def test_resign_ends_the_game_lost_and_the_penalty_stands(variant: str) -> None:
    game = played(variant)
    state, penalty, legal = game.state, game.penalty, game.legal_moves()
    assert RESIGN not in legal and all(m.kind is not MoveKind.RESIGN for m in legal)
    assert "resign" not in game.legal_texts()
    assert game.is_legal(RESIGN) and game.can_resign()

    assert game.play("resign") is RESIGN
    assert game.status is Status.LOST and game.resigned
    assert game.penalty == penalty and game.state == state
    assert game.legal_moves() == () and game.legal_texts() == []
    assert game.move_texts[-1] == "resign"
    view = game.view()
    assert view.status is Status.LOST and view.legal_moves == ()


@pytest.mark.parametrize("variant", VARIANTS)
def test_resign_is_refused_once_the_game_is_over(variant: str) -> None:
    game = played(variant)
    game.play(RESIGN)
    before = (game.state, game.move_count)
    for attempt in ("resign", " Resign ", RESIGN, Resign()):
        with pytest.raises(
            IllegalMoveError, match="^resign is not legal: the game is over; legal now: nothing"
        ):
            game.play(attempt)
    assert (game.state, game.move_count) == before and game.status is Status.LOST


@pytest.mark.parametrize("variant", VARIANTS)
def test_undo_takes_a_resignation_back_and_redo_plays_it_again(variant: str) -> None:
    game = played(variant)
    legal, texts = game.legal_moves(), game.legal_texts()
    game.play(RESIGN)
    assert game.undo() is RESIGN
    assert game.status is Status.IN_PROGRESS and not game.resigned
    assert game.legal_moves() == legal and game.legal_texts() == texts
    assert game.redo() is RESIGN and game.status is Status.LOST


@pytest.mark.parametrize("variant", VARIANTS)
def test_records_carry_a_resignation(variant: str) -> None:
    game = played(variant)
    game.play("resign")

    record = game.record()
    assert record.moves[-1] == "resign"
    again = replay(record.to_dict())
    assert again.status is Status.LOST and again.state == game.state and again.move_texts == game.move_texts

    resumed = Game.from_snapshot(game.snapshot())
    assert resumed.status is Status.LOST and resumed.legal_moves() == ()
    resumed.undo()
    assert resumed.status is Status.IN_PROGRESS and resumed.state == game.state

    text = game.state_string()
    assert text.endswith(" resigned") and game.state_string(hide_stock=True).endswith(" resigned")
    loaded = Game.from_state_string(text)
    assert loaded.status is Status.LOST and loaded.state == game.state and loaded.state_string() == text
    loaded.undo()
    assert loaded.status is Status.IN_PROGRESS and not loaded.state_string().endswith("resigned")


@pytest.mark.parametrize("variant", ["accordion", "bayan", "cribbage-solitaire"])
def test_the_status_rule_ignores_resign_a_game_without_other_moves_is_over(variant: str) -> None:
    # Played to its end by the first listed move: with no move but RESIGN left the game is
    # over by the rules, and RESIGN is refused there.
    game = new_game(variant, seed=5)
    for _ in range(1000):
        if not game.legal_moves():
            break
        game.play(game.legal_moves()[0])
    assert game.legal_moves() == () and game.status is not Status.IN_PROGRESS
    assert not game.can_resign() and not game.is_legal(RESIGN)
    with pytest.raises(IllegalMoveError):
        game.play("resign")


def test_resign_parses_in_any_case_and_formats_as_resign() -> None:
    game = new_game("accordion", seed=1)
    assert game.parse_move("RESIGN") is RESIGN and game.move_text(RESIGN) == "resign"
