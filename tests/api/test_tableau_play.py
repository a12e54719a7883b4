"""The tableau games end to end over real gRPC, on both stores (memory and a real redis-server).

Each variant is dealt an explicit deal known to be won (tableau_deals.py) and played to WON
through ApplyMove, moves sent in every form a client may use (notation only; the structured
move as listed; a structured MOVE to the foundations with to_pile 0, "whichever takes it");
then resigned to LOST and undone; expected-version conflicts and request-id retries on a new
game; and ListVariants shows the family, move kinds and options.
"""

from __future__ import annotations

import asyncio

import grpc
import grpc.aio
import pytest

from accordion import engine
from accordion.engine.core import option_text
from accordion.v1 import accordion_pb2 as pb

from .helpers import Client, expect_error, rich
from .tableau_deals import WINS, Deal, spider_win

FORMS = ("notation", "listed", "whichever")


def _greedy(game: pb.Game) -> pb.Move:
    """A move to the foundations (or a pair off), else turning the stock: enough for the
    greedy deals of tableau_deals.py."""
    for m in game.legal_moves:
        if (
            m.kind == pb.MOVE_KIND_MOVE and m.to_zone == pb.ZONE_KIND_FOUNDATION
        ) or m.kind == pb.MOVE_KIND_REMOVE:
            return m
    for m in game.legal_moves:
        if m.kind == pb.MOVE_KIND_DRAW:
            return m
    raise AssertionError(f"no greedy move in {[m.notation for m in game.legal_moves]}")


def _as_sent(move: pb.Move, form: str) -> pb.Move:
    if form == "notation":
        return pb.Move(notation=move.notation)
    if form == "whichever" and move.kind == pb.MOVE_KIND_MOVE and move.to_zone == pb.ZONE_KIND_FOUNDATION:
        sent = pb.Move()
        sent.CopyFrom(move)
        sent.to_pile = 0
        sent.ClearField("notation")
        sent.count = 0  # 0 means one card
        return sent
    return move


async def _deal(client: Client, deal: Deal) -> pb.Game:
    reply = await client.new_game(deal.variant, deal=pb.CardList(cards=deal.texts), options=deal.options)
    return reply.game


async def play_to_the_end(client: Client, deal: Deal) -> pb.Game:
    """Play ``deal``'s winning line through ApplyMove; every reply is checked against the last."""
    game = await _deal(client, deal)
    assert game.status == pb.GAME_STATUS_IN_PROGRESS and game.zones and game.HasField("seed") != deal.hidden
    step = 0
    while game.status == pb.GAME_STATUS_IN_PROGRESS:
        if deal.moves:
            assert step < len(deal.moves), "the line ended before the game"
            sent = pb.Move(notation=deal.moves[step])
            listed = [m for m in game.legal_moves if m.notation == deal.moves[step]]
            if listed and step % 2:
                sent = listed[0]  # the structured move as listed, notation included
        else:
            sent = _as_sent(_greedy(game), FORMS[step % 3])
        reply = await client.call(
            "ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=sent, expected_version=game.version)
        )
        assert reply.game.version == game.version + 1 and reply.game.moves_played == step + 1
        assert reply.move.notation and reply.move.kind != pb.MOVE_KIND_UNSPECIFIED
        game = reply.game
        step += 1
        assert step < 400
    return game


@pytest.mark.parametrize("variant", list(WINS))
async def test_a_known_deal_is_played_to_won(client: Client, variant: str) -> None:
    deal = WINS[variant]()
    game = await play_to_the_end(client, deal)
    assert game.status == pb.GAME_STATUS_WON and game.penalty == 0 and not game.legal_moves
    foundations = [z for z in game.zones if z.kind == pb.ZONE_KIND_FOUNDATION][0]
    tableau = [z for z in game.zones if z.kind == pb.ZONE_KIND_TABLEAU][0]
    assert all(not p.cards and not p.face_down for p in tableau.piles)
    if variant == "wish":  # Wish's foundation is its discard pile: every card removed
        assert sum(len(p.cards) for p in foundations.piles) == 32
    elif variant == "spider":  # the lifted suits, K (deepest) to A each
        assert sum(len(p.cards) for p in foundations.piles) == 104
    else:
        for pile in foundations.piles:  # each built up in suit from the Ace
            assert [c.rank for c in pile.cards] == list(range(1, 14))
            assert len({c.suit for c in pile.cards}) == 1
    assert game.HasField("seed")  # nothing is hidden any more and no chance is to come
    # The stored game says the same, and Score agrees.
    assert await client.get(game.id) == game
    score = await client.call("Score", pb.ScoreRequest(game_id=game.id))
    assert score.status == pb.GAME_STATUS_WON and score.penalty == 0 and score.piles_left == 0
    # Undo reopens it: the last card comes back, and the seed is hidden again if a card is.
    undone = await client.call("Undo", pb.UndoRequest(game_id=game.id))
    assert undone.game.status == pb.GAME_STATUS_IN_PROGRESS and undone.game.version == game.version + 1


@pytest.mark.parametrize("variant", list(WINS))
async def test_resigning_ends_lost_and_undo_takes_it_back(client: Client, variant: str) -> None:
    deal = WINS[variant]()
    game = await _deal(client, deal)
    first = game.legal_moves[0]
    game = (await client.call("ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=first))).game
    penalty = game.penalty
    resigned = await client.call(
        "ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=pb.Move(kind=pb.MOVE_KIND_RESIGN))
    )
    assert resigned.move.kind == pb.MOVE_KIND_RESIGN
    assert resigned.game.status == pb.GAME_STATUS_LOST and resigned.game.penalty == penalty and penalty > 0
    assert not resigned.game.legal_moves
    assert resigned.game.HasField("seed") != deal.hidden  # a resigned game may be undone: nothing shown
    err = await expect_error(
        client.call("ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=first)),
        grpc.StatusCode.FAILED_PRECONDITION,
    )
    assert err.info.reason in ("ILLEGAL_MOVE", "GAME_OVER"), err.info.reason
    back = await client.call("Undo", pb.UndoRequest(game_id=game.id))
    assert back.game.status == pb.GAME_STATUS_IN_PROGRESS and back.game.zones == game.zones


async def test_expected_version_conflicts_on_a_tableau_game(client: Client) -> None:
    game = await _deal(client, WINS["klondike-draw-one"]())
    draw = pb.Move(kind=pb.MOVE_KIND_DRAW)
    requests = [pb.ApplyMoveRequest(game_id=game.id, move=draw, expected_version=1) for _ in range(8)]
    results = await asyncio.gather(*(client.call("ApplyMove", r) for r in requests), return_exceptions=True)
    applied = [r for r in results if isinstance(r, pb.ApplyMoveResponse)]
    aborted = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(applied) == 1 and len(aborted) == 7, results
    for exc in aborted:
        err = rich(exc)
        assert err.code == grpc.StatusCode.ABORTED and err.info.reason == "VERSION_MISMATCH"
        assert err.info.metadata["current_version"] == "2"
    now = await client.get(game.id)
    assert now == applied[0].game and now.stock_size == 23


async def test_request_id_retries_apply_once_on_a_tableau_game(client: Client) -> None:
    game = await _deal(client, WINS["klondike-draw-one"]())
    draw = pb.ApplyMoveRequest(game_id=game.id, move=pb.Move(kind=pb.MOVE_KIND_DRAW), request_id="draw-1")
    first = await client.call("ApplyMove", draw)
    retries = await asyncio.gather(*(client.call("ApplyMove", draw) for _ in range(4)))
    assert all(r == first for r in retries)
    to_foundation = _greedy(first.game)
    moved = await client.call(
        "ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=to_foundation, request_id="found-1")
    )
    assert moved.move.to_zone == pb.ZONE_KIND_FOUNDATION and moved.move.from_zone == pb.ZONE_KIND_WASTE
    assert await client.call("ApplyMove", draw) == first  # a late retry: the first answer, no change
    assert (
        await client.call(
            "ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=to_foundation, request_id="found-1")
        )
        == moved
    )
    now = await client.get(game.id)
    assert now.version == 3 and now.moves_played == 2 and now == moved.game and now.stock_size == 23
    # The watch stream tells the same two moves from the log.
    stream = client.stub.WatchGame(
        pb.WatchGameRequest(game_id=game.id, after_version=1),
        metadata=(("authorization", f"Bearer {client.token}"),),
    )
    events = []
    async for item in stream:
        events.append(item.event)
        if len(events) == 2:
            stream.cancel()
            break
    assert [e.move for e in events] == [first.move, moved.move]
    assert [e.game for e in events] == [first.game, moved.game]


async def test_structured_moves_are_checked_before_the_store(client: Client) -> None:
    game = await _deal(client, WINS["klondike"]())
    bad = pb.Move(
        kind=pb.MOVE_KIND_MOVE, from_zone=pb.ZONE_KIND_TABLEAU, to_zone=42, from_pile=1, to_pile=2, count=-1
    )
    err = await expect_error(
        client.call("ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=bad)),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_REQUEST",
    )
    assert err.bad_request is not None
    assert {v.field for v in err.bad_request.field_violations} == {"move.to_zone", "move.count"}
    # A well-shaped move that is not legal: the legal moves come with the refusal.
    illegal = pb.Move(
        kind=pb.MOVE_KIND_MOVE,
        from_zone=pb.ZONE_KIND_TABLEAU,
        to_zone=pb.ZONE_KIND_TABLEAU,
        from_pile=7,
        to_pile=1,
        count=3,
    )
    err = await expect_error(
        client.call("ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=illegal)),
        grpc.StatusCode.FAILED_PRECONDITION,
        "ILLEGAL_MOVE",
    )
    assert err.legal is not None and list(err.legal.moves) == list(game.legal_moves)
    assert err.message.startswith(
        "7>1 x3 is not legal: a face-down card cannot move: pile 7 has only 1 card face up;"
    )
    # Neither changed the game.
    assert await client.get(game.id) == game


async def test_list_variants_shows_the_tableau_games(client: Client) -> None:
    reply = await client.call("ListVariants", pb.ListVariantsRequest())
    by_id = {v.id: v for v in reply.variants}
    for variant in WINS:
        v = by_id[variant]
        registered = engine.find_variant(variant)
        assert v.family == "tableau"
        assert list(v.move_kinds) == [
            pb.MoveKind.Value(f"MOVE_KIND_{k.value}")
            for k in (*registered.rules.move_kinds, engine.MoveKind.RESIGN)
        ]
        assert {o.name: o.default_value for o in v.options} == {
            o.name: option_text(o.default) for o in registered.options
        }
    assert "open" in {o.name for o in by_id["klondike"].options}
    assert by_id["klondike"].win_threshold == "all 52 cards on the foundations"
    draw = {o.name: o for o in by_id["klondike-draw-one"].options}["draw"]
    assert draw.default_value == "1" and set(draw.allowed_values) == {"1", "3"}
    assert {o.name: o for o in by_id["klondike"].options}["open"].allowed_values == ["false", "true"]
    found = await client.call("ListVariants", pb.ListVariantsRequest(variant="Solitaire"))
    assert [v.id for v in found.variants] == ["klondike-draw-one"]


async def test_one_suit_spider_is_won_too(client: Client) -> None:
    game = await play_to_the_end(client, spider_win(1))
    assert game.status == pb.GAME_STATUS_WON and game.options["suits"] == "1"
    assert {c.suit for z in game.zones for p in z.piles for c in p.cards} == {pb.SUIT_SPADES}


async def test_klondike_redeal_and_a_hint_from_the_visible_cards(client: Client) -> None:
    game = await _deal(client, WINS["klondike-draw-one"]())
    hint = await client.call("Hint", pb.HintRequest(game_id=game.id))
    assert hint.source == pb.HINT_SOURCE_HEURISTIC and hint.move in list(game.legal_moves)
    draw = pb.Move(kind=pb.MOVE_KIND_DRAW)
    game = (await client.call("ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=draw))).game
    game = (await client.apply(game.id, "w>f")).game  # a move other than DRAW, so REDEAL may come
    for _ in range(23):
        game = (await client.call("ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=draw))).game
    assert game.stock_size == 0 and pb.MOVE_KIND_REDEAL in [m.kind for m in game.legal_moves]
    redealt = await client.call(
        "ApplyMove", pb.ApplyMoveRequest(game_id=game.id, move=pb.Move(kind=pb.MOVE_KIND_REDEAL))
    )
    assert redealt.move.kind == pb.MOVE_KIND_REDEAL and redealt.move.notation == "redeal"
    assert redealt.game.stock_size == 23 and not redealt.game.HasField("seed")
    waste = [z for z in redealt.game.zones if z.kind == pb.ZONE_KIND_WASTE][0]
    assert not waste.piles[0].cards
    # No second REDEAL before another move than DRAW.
    assert pb.MOVE_KIND_REDEAL not in [m.kind for m in redealt.game.legal_moves]


@pytest.mark.parametrize("variant", list(WINS))
async def test_solve_and_hint_answer_cleanly(client: Client, variant: str) -> None:
    """Solve: an answer, or a refusal the table knows (hidden cards, a game the solver does not
    play), never an internal error; Hint: a legal move."""
    game = await _deal(client, WINS[variant]())
    try:
        solved = await client.call("Solve", pb.SolveRequest(game_id=game.id, max_millis=300))
    except grpc.aio.AioRpcError as exc:
        err = rich(exc)
        assert err.code == grpc.StatusCode.FAILED_PRECONDITION, (err.code, err.message)
        hidden = WINS[variant]().hidden  # (a game the solver does not play says so first)
        assert err.info.reason in (
            ("HIDDEN_INFORMATION", "SOLVER_UNSUPPORTED") if hidden else ("SOLVER_UNSUPPORTED",)
        )
    else:
        assert not WINS[variant]().hidden and solved.version == 1
    hint = await client.call("Hint", pb.HintRequest(game_id=game.id))
    assert hint.move in list(game.legal_moves)
