"""NewGame(winnable_only) on a hidden game tells one bit: the deal can be won. Nothing else.

The server decides a hidden Klondike deal with every card known; what it says afterwards must
not depend on the hidden cards, nor name the seed it dealt (a seed names every card). Two real
gRPC servers (in process, each store) are given deals of their own through ``Solving.deal``
(how a seed becomes a game; the service never changes it): from the seed asked for, a deal
the solver proves lost, then a deal it wins, the same on both servers but for where the hidden
cards lie (both arrangements won). Both pass over the first deal and deal the second, and then:

* every answer a player can get about the new game (NewGame, GetGame, LegalMoves, Score, Hint,
  Solve's refusal, WatchGame's first event) is the same on both, byte for byte, the game's id
  and token aside: nothing said depends on the hidden cards;
* every Game message shows exactly what the deal has visible (``check_game_message`` of the
  hidden-information suite), and no hidden card is named anywhere in it, nor in the logs;
* neither the seed dealt nor the seed asked for appears in any answer or log line, and
  ``seeds_tried`` is 0 (the server tried two);
* when no deal is won, the error names no seed either.
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import text_format
from google.protobuf.message import Message
from grpc_status import rpc_status

from accordion import engine
from accordion.engine import new_game
from accordion.solver import solve
from accordion.v1 import accordion_pb2 as pb
from tests.api.helpers import Client, expect_error
from tests.security.hidden_truth import _games_in, card_patterns, check_game_message, hidden_cards

VARIANT = "klondike"
ASKED = 0xA5C3_5EED_0BAD_F00D  # the seed asked for: distinctive, so it can be looked for
QUICK = 20_000  # positions: each deal below is decided within it, so the server's budget is ample
DRAW_COUNT = 3  # the stock cards the script's DRAW shows: left where they are in both deals


def _open(cards: list[int]) -> engine.Game:
    return new_game(VARIANT, {"open": True}, deal=cards)


@functools.cache
def deals() -> tuple[list[int], list[int], list[int]]:
    """A deal the solver proves lost, a deal it wins, and the winning deal with its hidden cards
    rearranged so that it is won too (the face-up cards, and the stock's first three, where they
    were)."""
    lost = next(
        list(g.deal_order())
        for s in range(500)
        if solve(g := new_game(VARIANT, {"open": True}, seed=s), max_nodes=QUICK).lost
    )
    rng = random.Random(13)
    for s in range(500):
        won = list(new_game(VARIANT, seed=s).deal_order())
        if not solve(_open(won), max_nodes=QUICK).won:
            continue
        state = new_game(VARIANT, deal=won).state
        hidden = set(hidden_cards(state)) - set(state.stock[:DRAW_COUNT])
        places = [i for i, c in enumerate(won) if c in hidden]
        for _ in range(50):
            moved = [won[i] for i in places]
            rng.shuffle(moved)
            other = list(won)
            for i, c in zip(places, moved):
                other[i] = c
            if other != won and solve(_open(other), max_nodes=QUICK).won:
                return lost, won, other
    raise AssertionError("no such deals")  # pragma: no cover


def dealer(second: list[int]) -> Callable[..., engine.Game]:
    """``Solving.deal`` for a test: the seed asked for deals the lost deal, the next one ``second``."""

    lost, won, _ = deals()

    def deal(variant: str, options: Any, seed: int) -> engine.Game:
        cards = lost if seed == ASKED else second if seed == ASKED + 1 else won
        return new_game(variant, options, seed=seed, deal=cards)

    return deal


def seed_texts(seed: int) -> list[str]:
    return [str(seed), f"{seed:x}", f"{seed:X}"]


class Said:
    """What one server said, in order, its game's id and token replaced; the Game messages in it."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []
        self.games: list[pb.Game] = []
        self.secrets: list[str] = []

    def clean(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "<SECRET>")
        return text

    def reply(self, label: str, msg: Message) -> None:
        self.items.append((label, self.clean(text_format.MessageToString(msg, as_utf8=True))))
        self.games.extend(_games_in(msg))

    def error(self, label: str, exc: grpc.RpcError) -> None:
        status = rpc_status.from_call(exc)  # type: ignore[arg-type]
        details = "" if status is None else text_format.MessageToString(status, as_utf8=True)
        self.items.append((label, self.clean(f"{exc.code()} {exc.details()} {details}")))


async def script(client: Client) -> Said:
    """Every read a player has of the new game, then a DRAW and the event it made."""
    said = Said()
    reply = await client.new_game(VARIANT, seed=ASKED, winnable_only=True)
    # The watch token and the deal code are random per game, like the id and the token.
    said.secrets = [s for s in (reply.game.id, reply.token, reply.watch_token, reply.deal_code) if s]
    assert reply.seeds_tried == 0  # two were tried
    said.reply("NewGame", reply)
    game_id = reply.game.id
    said.reply("GetGame", await client.call("GetGame", pb.GetGameRequest(game_id=game_id)))
    said.reply("LegalMoves", await client.call("LegalMoves", pb.LegalMovesRequest(game_id=game_id)))
    said.reply("Score", await client.call("Score", pb.ScoreRequest(game_id=game_id)))
    said.reply("Hint", await client.call("Hint", pb.HintRequest(game_id=game_id)))
    try:
        await client.call("Solve", pb.SolveRequest(game_id=game_id))
        raise AssertionError("Solve answered for a hidden game")
    except grpc.aio.AioRpcError as exc:
        said.error("Solve", exc)
    said.reply("ApplyMove", await client.apply(game_id, "draw"))
    stream = client.stub.WatchGame(
        pb.WatchGameRequest(game_id=game_id, after_version=0),
        metadata=(("authorization", f"Bearer {client.token}"),),
        timeout=10,
    )
    said.reply("WatchGame", await asyncio.wait_for(stream.read(), 10))
    stream.cancel()
    return said


async def test_two_deals_differing_only_in_hidden_cards_get_the_same_answers(
    start_server: Callable[..., Any],
    connect: Callable[[str], Client],
    store_url: str,
    capfd: pytest.CaptureFixture[str],
) -> None:
    _, won, rearranged = deals()
    transcripts = []
    hidden: set[int] = set()
    for second in (won, rearranged):
        running = await start_server(store_url)
        running.server.servicer.solving.deal = dealer(second)
        said = await script(connect(running.addr))
        transcripts.append(said)
        dealt = new_game(VARIANT, seed=ASKED + 1, deal=second)
        states = {1: dealt.state}
        dealt.play("draw")
        states[2] = dealt.state
        hidden |= set(hidden_cards(dealt.state))  # hidden throughout: after the DRAW, hidden from the deal on
        assert {g.version for g in said.games} == {1, 2}
        for game in said.games:  # exactly the deal's visible cards at that version
            check_game_message(game, states[game.version], False)
    first, other = transcripts
    assert [label for label, _ in first.items] == [
        "NewGame",
        "GetGame",
        "LegalMoves",
        "Score",
        "Hint",
        "Solve",
        "ApplyMove",
        "WatchGame",
    ]
    assert first.items == other.items  # nothing said depends on where the hidden cards lie
    assert "HIDDEN_INFORMATION" in dict(first.items)["Solve"]

    logs = capfd.readouterr()
    everything = "\n".join(text for said in transcripts for _, text in said.items) + logs.out + logs.err
    assert "NewGame" in logs.out + logs.err  # the access lines were written here, so they were looked at
    for seed in (ASKED, ASKED + 1):
        for text in seed_texts(seed):
            assert text not in everything, text
    assert len(hidden) == 52 - 7 - DRAW_COUNT
    for card in hidden:
        for pattern in card_patterns(card):
            assert not pattern.search(everything), (engine.card_text(card), pattern.pattern)


async def test_no_winnable_deal_names_no_seed(
    start_server: Callable[..., Any],
    connect: Callable[[str], Client],
    store_url: str,
    capfd: pytest.CaptureFixture[str],
) -> None:
    running = await start_server(store_url, winnable_max_seconds=0.3)
    lost = deals()[0]
    running.server.servicer.solving.deal = lambda variant, options, seed: new_game(
        variant, options, seed=seed, deal=lost
    )
    client = connect(running.addr)
    err = await expect_error(
        client.new_game(VARIANT, seed=ASKED, winnable_only=True),
        grpc.StatusCode.FAILED_PRECONDITION,
        "WINNABLE_NOT_FOUND",
    )
    logs = capfd.readouterr()
    for text in seed_texts(ASKED):
        assert text not in err.message + str(err) + logs.out + logs.err
    assert "no winnable deal" in err.message
