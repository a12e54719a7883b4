"""Every front end plays every game against a real server (the session's ``accordion-server``):
the Python client by notation and by structured moves (sync and async), the chat adapter, and
the terminal player. Each deals a seeded game, plays up to 20 legal moves, checks what it shows
of the layout (tableau games: backs for face-down cards, named only when dealt open), resigns a
game still in progress and takes the resignation back."""

from __future__ import annotations

import subprocess

import pytest

from accordion_client import AccordionClient, AsyncAccordionClient, GameHandle, moves, pb
from accordion_client.chat import ChatSession
from accordion_client.render import row_lines
from accordion_client.zones import BACK, is_tableau
from tests.api.helpers import ServerProcess

from .conftest import script
from .every_game import (
    MOVES_PER_GAME,
    TABLEAU_GAMES,
    WITH_OPTIONS,
    assert_hides,
    check_layout,
    chooser,
    hidden_cards,
    pick,
    seed_of,
    variant_ids,
)

DEALS = [(v, {}) for v in variant_ids()] + list(WITH_OPTIONS)
IDS = [v + "".join(f"-{k}={o}" for k, o in opts.items()) for v, opts in DEALS]


def test_the_tableau_games_are_registered(client: AccordionClient) -> None:
    served = {v.id: v for v in client.list_variants()}
    assert set(TABLEAU_GAMES) <= set(served), sorted(served)
    assert {served[v].family for v in TABLEAU_GAMES} == {"tableau"}
    assert set(variant_ids()) == set(served)


def structured(move: pb.Move) -> pb.Move:
    """The legal move as a program would build it, without its notation (MOVE: ``moves.move``)."""
    if move.kind == pb.MOVE_KIND_MOVE:
        return moves.move(move.from_zone, move.from_pile, move.to_zone, move.to_pile, max(move.count, 1))
    built = pb.Move()
    built.CopyFrom(move)
    built.ClearField("notation")
    return built


def play_out(game: GameHandle, variant: str, *, by_notation: bool) -> list[str]:
    """Up to MOVES_PER_GAME chosen legal moves; the notations as played."""
    rng = chooser(variant)
    played: list[str] = []
    for _ in range(MOVES_PER_GAME):
        move = pick(game.game, rng)
        if move is None:
            break
        if by_notation:
            answer = game.play(move.notation)
        elif move.kind == pb.MOVE_KIND_DRAW:
            answer = game.draw()
        elif move.kind == pb.MOVE_KIND_MOVE:
            answer = game.move(move.from_zone, move.from_pile, move.to_zone, move.to_pile, max(move.count, 1))
        else:
            answer = game.play(structured(move))
        assert answer.notation == move.notation
        assert answer.kind == move.kind
        played.append(answer.notation)
        check_layout(game.game)
    return played


def resign_and_take_back(game: GameHandle) -> None:
    if game.over:
        return
    before = game.game.penalty
    assert game.resign().kind == pb.MOVE_KIND_RESIGN
    assert game.status == "lost" and game.resigned and game.game.penalty == before
    check_layout(game.game)
    game.undo()
    assert game.status == "in progress"


@pytest.mark.parametrize(("variant", "options"), DEALS, ids=IDS)
def test_the_python_client_plays_by_notation(
    client: AccordionClient, variant: str, options: dict[str, str]
) -> None:
    game = client.new_game(variant, options, seed=seed_of(variant))
    assert game.game.variant == variant
    assert is_tableau(game.game) == (variant in TABLEAU_GAMES)
    check_layout(game.game)
    played = play_out(game, variant, by_notation=True)
    assert played, "no legal move at the deal"
    assert game.version == 1 + len(played)
    resign_and_take_back(game)


@pytest.mark.parametrize(("variant", "options"), DEALS, ids=IDS)
def test_the_python_client_plays_structured_moves(
    client: AccordionClient, variant: str, options: dict[str, str]
) -> None:
    game = client.new_game(variant, options, seed=seed_of(variant))
    by_text = client.new_game(variant, options, seed=seed_of(variant))
    assert play_out(game, variant, by_notation=False) == play_out(by_text, variant, by_notation=True)
    assert game.game.state == by_text.game.state  # the same moves, the same position


@pytest.mark.parametrize("variant", TABLEAU_GAMES)
async def test_the_async_client_plays_structured_moves(server: ServerProcess, variant: str) -> None:
    async with AsyncAccordionClient(server.addr) as client:
        game = await client.new_game(variant, seed=seed_of(variant))
        rng = chooser(variant)
        for _ in range(MOVES_PER_GAME):
            move = pick(game.game, rng)
            if move is None:
                break
            if move.kind == pb.MOVE_KIND_DRAW:
                answer = await game.draw()
            elif move.kind == pb.MOVE_KIND_MOVE:
                answer = await game.move(
                    move.from_zone, move.from_pile, move.to_zone, move.to_pile, move.count
                )
            else:
                answer = await game.play(structured(move))
            assert answer.notation == move.notation
            check_layout(game.game)
        assert game.version > 1


@pytest.mark.parametrize(("variant", "options"), DEALS, ids=IDS)
def test_the_chat_adapter_plays(client: AccordionClient, variant: str, options: dict[str, str]) -> None:
    session = ChatSession(client)
    words = " ".join(f"{k}={v}" for k, v in options.items())
    reply = session.handle(f"new {variant} seed {seed_of(variant)} {words}")
    assert reply.startswith("New game of "), reply
    assert session.game is not None
    check_layout(session.game.game)
    assert "\n".join(row_lines(session.game.game)) in reply
    rng = chooser(variant)
    played: list[str] = []
    hides_some = False
    for _ in range(MOVES_PER_GAME):
        move = pick(session.game.game, rng)
        if move is None:
            break
        reply = session.handle(move.notation)
        assert reply.startswith(f"Played {move.notation}."), reply
        check_layout(session.game.game)
        assert "\n".join(row_lines(session.game.game)) in reply
        played.append(move.notation)
        hidden = hidden_cards(variant, options, seed_of(variant), played)
        assert_hides(reply + session.handle("moves") + session.handle("hint"), hidden)
        hides_some = hides_some or bool(hidden)
    if variant in ("klondike", "wish") and not options:
        assert hides_some, "the check of hidden cards checked nothing"
    if not session.game.over:
        assert session.handle("resign").startswith("You resigned.")
        assert session.handle("undo").startswith("Took back resign.")


@pytest.mark.parametrize(("variant", "options"), DEALS, ids=IDS)
def test_the_terminal_player_plays(
    server: ServerProcess, client: AccordionClient, variant: str, options: dict[str, str]
) -> None:
    # The moves, chosen on the same deal with the Python client, then typed into `accordion play`.
    planned = client.new_game(variant, options, seed=seed_of(variant))
    notations = play_out(planned, variant, by_notation=True)
    flags = [arg for k, v in options.items() for arg in ("-o", f"{k}={v}")]
    done = subprocess.run(
        [
            *script("accordion"),
            "play",
            variant,
            "--seed",
            str(seed_of(variant)),
            *flags,
            "--target",
            server.addr,
            "--color",
            "never",
        ],
        input="".join(f"{n}\n" for n in notations) + ("R\n" if not planned.over else "") + "s\nq\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    at = 0
    for notation in notations:
        at = out.index(f"move> {notation}\nplayed {notation}\n", at) + 1
    last = out.rsplit(f"played {notations[-1]}\n", 1)[1]
    if is_tableau(planned.game):
        # The board after the last move, as the terminal drew it (it drew the same position).
        assert "\n".join(check_layout(planned.game)) in last
        assert (BACK in last) == (
            not planned.game.options.get("open") == "true" and BACK in "\n".join(check_layout(planned.game))
        )
    if not planned.over:
        assert "you resigned" in last and "Resigned: " in last
    assert_hides(last, hidden_cards(variant, options, seed_of(variant), notations))
    score = out.rsplit("move> s\n", 1)[1].split("\n", 1)[0]
    tableau = [p for z in planned.game.zones if z.kind == pb.ZONE_KIND_TABLEAU for p in z.piles]
    left = f"{sum(p.face_down for p in tableau)} face down" if is_tableau(planned.game) else "piles"
    assert score.startswith(f"penalty {planned.game.penalty} · ") and left in score, score
    assert out.endswith("Bye.\n")
