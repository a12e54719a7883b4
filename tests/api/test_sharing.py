"""Sharing a game without giving it away (issue 29), end to end over real gRPC on both stores
(memory and a real redis-server): the watch token, deal codes and the undo option.

* The watch token reads and watches (GetGame, LegalMoves, Score, WatchGame, GetGamePicture)
  and is refused everything else with PERMISSION_DENIED / WATCH_ONLY; a wrong token is
  NOT_FOUND as before; ShareGame gives it again and rotates it (the old one then opens
  nothing, and a stream watching with it ends).
* A deal code deals the same game (variant, options, cards) for every variant, from a seed,
  an explicit deal and winnable_only, across two server processes on one Redis; it cannot be
  dealt ``open`` nor with a looser undo; an unknown code is NOT_FOUND / DEAL_CODE_NOT_FOUND.
* ``undo=visible`` refuses to take back a turn-up and a DRAW in Klondike and a DEAL in
  Spider, and allows the rest; ``undo=none`` refuses every undo; ListVariants shows ``undo``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from accordion import engine
from accordion.engine.cards import card_text
from accordion.sessions import load_stored
from accordion.v1 import accordion_pb2 as pb

from .conftest import Running
from .helpers import Client, expect_error
from .tableau_deals import WINS

C = grpc.StatusCode
CODE_RE = re.compile(r"[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}")


def without_id(game: pb.Game) -> bytes:
    copy = pb.Game()
    copy.CopyFrom(game)
    copy.id = ""
    return copy.SerializeToString(deterministic=True)


async def first_legal(client: Client, game_id: str) -> pb.Move | None:
    game = await client.get(game_id)
    return pb.Move(notation=game.legal_moves[0].notation) if game.legal_moves else None


async def assert_same_game(
    a: Client, a_game: pb.NewGameResponse, b: Client, b_game: pb.NewGameResponse, moves: int = 6
) -> None:
    """The two games show the same at the start and after the same ``moves`` moves (each the
    first legal one): a stock card drawn, a card turned up shows the hidden cards agree."""
    a_id, b_id = a_game.game.id, b_game.game.id
    for _ in range(moves + 1):
        ga = (await a.call("GetGame", pb.GetGameRequest(game_id=a_id), token=a_game.token)).game
        gb = (await b.call("GetGame", pb.GetGameRequest(game_id=b_id), token=b_game.token)).game
        assert without_id(ga) == without_id(gb)
        if not ga.legal_moves:
            return
        move = pb.Move(notation=ga.legal_moves[0].notation)
        await a.call("ApplyMove", pb.ApplyMoveRequest(game_id=a_id, move=move), token=a_game.token)
        await b.call("ApplyMove", pb.ApplyMoveRequest(game_id=b_id, move=move), token=b_game.token)


async def stored_first(served: Running, game_id: str) -> engine.State:
    """The game's first position as the server stored it (the cards hidden from the player too)."""
    record = await served.server.store.load(game_id)
    return load_stored(game_id, record.data, record.version).first_game().state


# --- the watch token ------------------------------------------------------------------------


async def test_the_watch_token_reads_and_watches_and_is_refused_everything_else(client: Client) -> None:
    dealt = await client.new_game("klondike", seed=7)
    game_id, play, watch = dealt.game.id, dealt.token, dealt.watch_token
    assert watch and watch != play and CODE_RE.fullmatch(dealt.deal_code), dealt
    # Every read answers the watcher exactly what it answers the player.
    for method, request in (
        ("GetGame", pb.GetGameRequest(game_id=game_id)),
        ("LegalMoves", pb.LegalMovesRequest(game_id=game_id)),
        ("Score", pb.ScoreRequest(game_id=game_id)),
        ("GetGamePicture", pb.GetGamePictureRequest(game_id=game_id)),
    ):
        as_watcher = await client.call(method, request, token=watch)
        as_player = await client.call(method, request, token=play)
        assert as_watcher == as_player, method
    # Everything else is the player's: WATCH_ONLY, and nothing changes.
    move = (await client.get(game_id)).legal_moves[0]
    refused: list[tuple[str, Any]] = [
        ("ApplyMove", pb.ApplyMoveRequest(game_id=game_id, move=move)),
        ("Undo", pb.UndoRequest(game_id=game_id)),
        ("Hint", pb.HintRequest(game_id=game_id)),
        ("Solve", pb.SolveRequest(game_id=game_id, max_millis=100)),
        ("ShareGame", pb.ShareGameRequest(game_id=game_id)),
        ("ShareGame", pb.ShareGameRequest(game_id=game_id, rotate_watch_token=True)),
    ]
    for method, request in refused:
        err = await expect_error(client.call(method, request, token=watch), C.PERMISSION_DENIED, "WATCH_ONLY")
        assert watch not in err.message and play not in err.message
    assert (await client.get(game_id)).version == 1
    # The watch token is cached nowhere as the play token: a move by the player, then the
    # watcher again (the game is now in the process's cache).
    await client.apply(game_id, move=pb.Move(notation=move.notation))
    await expect_error(
        client.call(
            "ApplyMove", pb.ApplyMoveRequest(game_id=game_id, move=pb.Move(notation="d")), token=watch
        ),
        C.PERMISSION_DENIED,
        "WATCH_ONLY",
    )
    await expect_error(
        client.call("Undo", pb.UndoRequest(game_id=game_id, expected_version=2), token=watch),
        C.PERMISSION_DENIED,
        "WATCH_ONLY",
    )
    # A token that is neither, or the watch token of another game: NOT_FOUND, as an unknown id.
    other = await client.new_game("klondike", seed=7)
    for token in ("not-a-token", other.watch_token, other.token):
        for method, request in [("GetGame", pb.GetGameRequest(game_id=game_id)), *refused]:
            await expect_error(client.call(method, request, token=token), C.NOT_FOUND, "GAME_NOT_FOUND")


async def test_a_watcher_follows_the_game_and_cannot_play_from_the_stream(client: Client) -> None:
    dealt = await client.new_game("accordion", seed=3)
    game_id, watch = dealt.game.id, dealt.watch_token
    stream = client.stub.WatchGame(
        pb.WatchGameRequest(game_id=game_id), metadata=(("authorization", f"Bearer {watch}"),), timeout=20
    )
    move = await first_legal(client, game_id)
    assert move is not None
    played = await client.apply(game_id, move=move)
    event = (await stream.read()).event
    assert event.version == 2 and event.game == played.game
    stream.cancel()


async def test_share_gives_the_watch_token_and_the_code_and_rotation_ends_the_old_one(client: Client) -> None:
    dealt = await client.new_game("spider", seed=11)
    game_id = dealt.game.id
    shared = await client.call("ShareGame", pb.ShareGameRequest(game_id=game_id))
    assert (shared.watch_token, shared.deal_code) == (dealt.watch_token, dealt.deal_code)
    old = dealt.watch_token
    stream = client.stub.WatchGame(
        pb.WatchGameRequest(game_id=game_id), metadata=(("authorization", f"Bearer {old}"),), timeout=20
    )
    move = await first_legal(client, game_id)
    assert move is not None
    await client.apply(game_id, move=move)
    assert (await stream.read()).event.version == 2
    rotated = await client.call("ShareGame", pb.ShareGameRequest(game_id=game_id, rotate_watch_token=True))
    assert rotated.deal_code == dealt.deal_code and rotated.watch_token not in ("", old, dealt.token)
    # The old token opens nothing now; the new one reads; asking again gives the new one.
    await expect_error(
        client.call("GetGame", pb.GetGameRequest(game_id=game_id), token=old), C.NOT_FOUND, "GAME_NOT_FOUND"
    )
    assert (
        await client.call("GetGame", pb.GetGameRequest(game_id=game_id), token=rotated.watch_token)
    ).game.id
    again = await client.call("ShareGame", pb.ShareGameRequest(game_id=game_id))
    assert again.watch_token == rotated.watch_token
    # The stream opened with the old token ends at the next event, without showing it.
    move = await first_legal(client, game_id)
    assert move is not None
    await client.apply(game_id, move=move)
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        await stream.read()
    assert ended.value.code() == C.NOT_FOUND


# --- deal codes -----------------------------------------------------------------------------


@pytest.mark.parametrize("variant", [v.id for v in engine.all_variants()])
async def test_a_code_deals_the_same_game_for_every_variant(
    variant: str, served: Running, client: Client
) -> None:
    dealt = await client.new_game(variant, seed=2029)
    code = dealt.deal_code
    assert CODE_RE.fullmatch(code) and len(code) == 19
    # As a person may type it: lower case, no dashes; the variant left out.
    again = await client.new_game("", deal_code=code.lower().replace("-", ""))
    assert without_id(again.game) == without_id(dealt.game)
    assert again.deal_code == code  # the same deal and options: the same code
    assert await stored_first(served, again.game.id) == await stored_first(served, dealt.game.id)
    await assert_same_game(client, dealt, client, again, moves=3)


@pytest.mark.parametrize("variant", ["klondike", "spider", "wish", "accordion"])
async def test_a_code_deals_an_explicit_deal_again(variant: str, served: Running, client: Client) -> None:
    if variant in WINS:
        deal = WINS[variant]()
        texts, options = deal.texts, deal.options
    else:  # a row game: a shuffled deck
        cards = engine.find_variant(variant).make_rules().deck()
        random.Random(29).shuffle(cards)
        texts, options = [card_text(c) for c in cards], {}
    dealt = await client.new_game(variant, deal=pb.CardList(cards=texts), options=options)
    again = await client.new_game(variant, deal_code=dealt.deal_code)
    assert await stored_first(served, again.game.id) == await stored_first(served, dealt.game.id)
    await assert_same_game(client, dealt, client, again)


async def test_a_code_deals_a_winnable_only_deal_again(served: Running, client: Client) -> None:
    dealt = await client.new_game("klondike", options={"open": "true"}, winnable_only=True)
    again = await client.new_game("", deal_code=dealt.deal_code)
    assert without_id(again.game) == without_id(dealt.game)
    assert await stored_first(served, again.game.id) == await stored_first(served, dealt.game.id)


async def test_a_code_keeps_what_its_deal_hides(client: Client) -> None:
    dealt = await client.new_game("klondike", seed=5)
    code = dealt.deal_code
    for options in ({"open": "true"}, {"draw": "1"}):
        err = await expect_error(
            client.new_game("klondike", deal_code=code, options=options),
            C.INVALID_ARGUMENT,
            "DEAL_CODE_OPTIONS",
        )
        assert "seed" not in err.message.lower()
    await expect_error(client.new_game("spider", deal_code=code), C.INVALID_ARGUMENT, "DEAL_CODE_OPTIONS")
    # A stricter undo is a game of its own (a new code); a looser one than the code's is refused.
    strict = await client.new_game("klondike", deal_code=code, options={"undo": "visible"})
    assert strict.deal_code != code and without_id(strict.game) != without_id(
        dealt.game
    )  # (its options show)
    await expect_error(
        client.new_game("", deal_code=strict.deal_code, options={"undo": "all"}),
        C.INVALID_ARGUMENT,
        "DEAL_CODE_OPTIONS",
    )
    assert (await client.new_game("", deal_code=strict.deal_code, options={"undo": "none"})).game.options[
        "undo"
    ] == "none"
    for unknown in ("0000-0000-0000-0000", "not a code", "ZZZZ-ZZZZ-ZZZZ-ZZZ"):
        await expect_error(client.new_game("", deal_code=unknown), C.NOT_FOUND, "DEAL_CODE_NOT_FOUND")
    await expect_error(
        client.new_game("", deal_code=code, winnable_only=True), C.INVALID_ARGUMENT, "INVALID_REQUEST"
    )


async def test_a_retried_new_game_gives_the_same_watch_token_and_code(client: Client) -> None:
    first = await client.new_game("klondike", request_id="share-retry-1")
    retry = await client.new_game("klondike", request_id="share-retry-1")
    assert (retry.token, retry.watch_token, retry.deal_code) == (
        first.token,
        first.watch_token,
        first.deal_code,
    )


async def test_codes_work_across_two_server_processes_on_one_redis(
    spawn_server: Callable[..., Any], connect: Callable[[str], Client], redis_url: str
) -> None:
    env = {"REDIS_URL": redis_url}
    a, b = connect(spawn_server(env=env).addr), connect(spawn_server(env=env).addr)
    for variant, kwargs in (
        ("klondike", {"seed": 41}),
        ("spider", {"seed": 42}),
        ("accordion", {"seed": 43}),
    ):
        dealt = await a.new_game(variant, **kwargs)
        again = await b.new_game("", deal_code=dealt.deal_code)
        # The watch token and the code answer on the other process too.
        watched = await b.call("GetGame", pb.GetGameRequest(game_id=dealt.game.id), token=dealt.watch_token)
        assert without_id(watched.game) == without_id(dealt.game) == without_id(again.game)
        await assert_same_game(a, dealt, b, again)


# --- the undo option -------------------------------------------------------------------------


async def test_every_variant_lists_the_undo_option(client: Client) -> None:
    variants = (await client.stub.ListVariants(pb.ListVariantsRequest(), timeout=10)).variants
    assert variants
    for v in variants:
        undo = [o for o in v.options if o.name == "undo"]
        assert len(undo) == 1 and undo[0].default_value == "all", v.id
        assert list(undo[0].allowed_values) == ["all", "visible", "none"]


def _find(game: pb.Game, kind: int, *, turns_up: bool | None = None) -> pb.Move | None:
    """A legal move of ``kind``; for a MOVE from the tableau, one that does (or does not) leave a
    face-down card on top of its pile (a turn-up)."""
    tableau = [z for z in game.zones if z.kind == pb.ZONE_KIND_TABLEAU]
    for m in game.legal_moves:
        if m.kind != kind:
            continue
        if turns_up is None:
            return m
        if m.from_zone != pb.ZONE_KIND_TABLEAU:
            if not turns_up:
                return m
            continue
        pile = tableau[0].piles[m.from_pile - 1]
        if (pile.face_down > 0 and len(pile.cards) == max(1, m.count)) == turns_up:
            return m
    return None


async def test_undo_visible_refuses_a_turn_up_and_a_draw_in_klondike(client: Client) -> None:
    checked = {"draw": False, "turn-up": False, "plain": False}
    for seed in range(1, 60):
        dealt = await client.new_game("klondike", seed=seed, options={"undo": "visible"})
        game_id, game = dealt.game.id, dealt.game
        # A plain move (nothing turned up) is taken back.
        plain = _find(game, pb.MOVE_KIND_MOVE, turns_up=False)
        if plain is not None:
            await client.apply(game_id, move=plain)
            await client.call("Undo", pb.UndoRequest(game_id=game_id))
            checked["plain"] = True
        turn = _find(game, pb.MOVE_KIND_MOVE, turns_up=True)
        if turn is not None:
            await client.apply(game_id, move=turn)
            err = await expect_error(
                client.call("Undo", pb.UndoRequest(game_id=game_id)),
                C.FAILED_PRECONDITION,
                "UNDO_NOT_ALLOWED",
            )
            assert "undo=visible" in err.message
            checked["turn-up"] = True
        draw = _find((await client.get(game_id)), pb.MOVE_KIND_DRAW)
        assert draw is not None
        before = await client.get(game_id)
        await client.apply(game_id, move=draw)
        err = await expect_error(
            client.call("Undo", pb.UndoRequest(game_id=game_id)), C.FAILED_PRECONDITION, "UNDO_NOT_ALLOWED"
        )
        assert "undo=visible" in err.message
        checked["draw"] = True
        assert (await client.get(game_id)).version == before.version + 1  # the refusal changed nothing
        if all(checked.values()):
            return
    raise AssertionError(f"no deal had every kind of move: {checked}")


async def test_undo_visible_refuses_a_deal_in_spider_and_all_takes_it_back(client: Client) -> None:
    for undo, allowed in (("visible", False), ("all", True)):
        dealt = await client.new_game("spider", seed=9, options={"undo": undo})
        game_id = dealt.game.id
        deal = _find(dealt.game, pb.MOVE_KIND_DEAL)
        assert deal is not None
        await client.apply(game_id, move=deal)
        if allowed:
            back = await client.call("Undo", pb.UndoRequest(game_id=game_id))
            assert back.game.stock_size == dealt.game.stock_size
        else:
            await expect_error(
                client.call("Undo", pb.UndoRequest(game_id=game_id)),
                C.FAILED_PRECONDITION,
                "UNDO_NOT_ALLOWED",
            )


async def test_undo_none_refuses_every_undo(client: Client) -> None:
    dealt = await client.new_game("accordion", seed=4, options={"undo": "none"})
    move = await first_legal(client, dealt.game.id)
    assert move is not None
    await client.apply(dealt.game.id, move=move)
    err = await expect_error(
        client.call("Undo", pb.UndoRequest(game_id=dealt.game.id)), C.FAILED_PRECONDITION, "UNDO_NOT_ALLOWED"
    )
    assert "undo=none" in err.message


async def test_a_game_stored_before_sharing_gets_a_watch_token_and_a_code(
    served: Running, client: Client
) -> None:
    """A record whose access is the play token's hash alone (what earlier versions wrote)."""
    from accordion.sessions import Stored, tokens
    from accordion.store import GameRecord

    game = engine.new_game("klondike", seed=77)
    token, game_id = tokens.new_token(), tokens.new_game_id()
    await served.server.store.create(
        GameRecord(game_id, 1, tokens.hash_token(token), Stored.new(game).dump()), ttl=600
    )
    assert (await client.call("GetGame", pb.GetGameRequest(game_id=game_id), token=token)).game.version == 1
    shared = await client.call("ShareGame", pb.ShareGameRequest(game_id=game_id), token=token)
    assert CODE_RE.fullmatch(shared.deal_code) and shared.watch_token
    watched = await client.call("GetGame", pb.GetGameRequest(game_id=game_id), token=shared.watch_token)
    await expect_error(
        client.call("Undo", pb.UndoRequest(game_id=game_id), token=shared.watch_token),
        C.PERMISSION_DENIED,
        "WATCH_ONLY",
    )
    again = await client.new_game("", deal_code=shared.deal_code)
    assert without_id(again.game) == without_id(watched.game)
    assert await stored_first(served, again.game.id) == game.state
