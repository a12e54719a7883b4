"""Sharing in the Python client, the chat adapter and the terminal player (issue 29), against a
real server: a watch token reads and watches and never plays, a deal code deals the same cards
(hidden ones still hidden) and cannot be dealt open, ShareGame rotates the watch token."""

from __future__ import annotations

import re
import subprocess
import threading

import pytest

from accordion_client import (
    AccordionClient,
    AsyncAccordionClient,
    DealCodeNotFound,
    DealCodeOptions,
    GameNotFound,
    WatchHandle,
    WatchOnly,
    errors,
    parse_watch_key,
    pb,
    watch_key,
)
from accordion_client.chat import ChatSession
from tests.api.helpers import ServerProcess

from .conftest import script

DEAL_CODE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{4}(?:-[0-9A-HJKMNP-TV-Z]{4}){3}$")


def test_a_watch_handle_reads_and_watches_and_every_change_is_refused(client: AccordionClient) -> None:
    game = client.new_game("klondike", seed=11)
    assert game.watch_token and game.watch_token != game.token
    watcher = client.spectate(game.id, game.watch_token)
    assert type(watcher) is WatchHandle and not hasattr(watcher, "play") and not hasattr(watcher, "undo")
    assert watcher.text == game.text and watcher.legal == game.legal
    assert [m.notation for m in watcher.legal_moves()] == game.legal
    assert watcher.score().penalty == game.game.penalty
    assert watcher.picture().startswith(b"<svg")
    assert game.watch_token not in repr(watcher) and game.token not in repr(game)

    # The raw calls with the watch token: every change is WATCH_ONLY (PERMISSION_DENIED).
    draw = pb.ApplyMoveRequest(game_id=game.id, move=pb.Move(notation="draw"), request_id="w1")
    with pytest.raises(WatchOnly) as refused:
        client.call("ApplyMove", draw, token=game.watch_token)
    assert refused.value.reason == "WATCH_ONLY" and isinstance(refused.value, errors.PermissionDenied)
    for method, request in [
        ("Undo", pb.UndoRequest(game_id=game.id, request_id="w2")),
        ("ShareGame", pb.ShareGameRequest(game_id=game.id)),
        ("Hint", pb.HintRequest(game_id=game.id)),
    ]:
        with pytest.raises(WatchOnly):
            client.call(method, request, token=game.watch_token)
    assert watcher.refresh().version == 1

    # The player's move reaches the watcher's stream.
    seen: list[pb.GameEvent] = []
    stream = watcher.watch(after_version=1, deadline=30)

    def read_one() -> None:
        seen.append(next(iter(stream)))

    reader = threading.Thread(target=read_one)
    reader.start()
    game.draw()
    reader.join(timeout=30)
    assert [e.version for e in seen] == [2] and seen[0].game.text == game.text


def test_a_deal_code_deals_the_same_first_position_and_never_open(client: AccordionClient) -> None:
    first = client.new_game("klondike", seed=5)
    assert DEAL_CODE.match(first.deal_code), first.deal_code
    again = client.new_game_from_code(first.deal_code)
    assert again.id != first.id and again.token != first.token
    assert again.game.variant == "klondike"
    assert again.text == first.text and again.legal == first.legal
    assert list(again.game.zones) == list(first.game.zones)
    pasted = client.new_game_from_code(f"  {first.deal_code.lower()} ")  # as pasted from a chat
    assert pasted.text == first.text
    with pytest.raises(DealCodeOptions):
        client.new_game_from_code(first.deal_code, {"open": "true"})
    with pytest.raises(DealCodeNotFound) as unknown:
        client.new_game_from_code("ZZZZ-ZZZZ-ZZZZ-ZZZZ")
    assert isinstance(unknown.value, GameNotFound)


def test_share_returns_the_code_and_watch_token_and_rotates_it(client: AccordionClient) -> None:
    game = client.new_game("accordion", seed=7)
    first_watch = game.watch_token
    shared = game.share()
    assert (shared.deal_code, shared.watch_token) == (game.deal_code, first_watch)
    rotated = game.share(rotate_watch_token=True)
    assert rotated.watch_token != first_watch and game.watch_token == rotated.watch_token
    assert client.spectate(game.id, rotated.watch_token).id == game.id
    with pytest.raises(GameNotFound):  # the old one is a wrong token now: as an unknown game
        client.spectate(game.id, first_watch)
    reopened = client.open_game(game.id, game.token)
    assert reopened.watch_token == "" and reopened.share().deal_code == game.deal_code


def test_watch_keys() -> None:
    key = watch_key("A" * 22, "tok_en-1")
    assert parse_watch_key(key) == ("A" * 22, "tok_en-1")
    assert parse_watch_key(f"http://127.0.0.1:8080/#watch={key}") == ("A" * 22, "tok_en-1")
    for bad in ("", "A" * 22, "A.b.c", ".tok"):
        with pytest.raises(ValueError):
            parse_watch_key(bad)


async def test_the_async_client_shares_too(server: ServerProcess) -> None:
    async with AsyncAccordionClient(server.addr) as client:
        game = await client.new_game("spider", seed=3)
        again = await client.new_game_from_code(game.deal_code)
        assert again.text == game.text
        watcher = await client.spectate(game.id, game.watch_token)
        assert (await watcher.refresh()).version == 1 and not hasattr(watcher, "play")
        old = game.watch_token
        shared = await game.share(rotate_watch_token=True)
        with pytest.raises(GameNotFound):
            await client.spectate(game.id, old)
        assert (await client.spectate(game.id, shared.watch_token)).id == game.id


# --- the chat adapter ---------------------------------------------------------------------------


def test_chat_share_play_and_watch(client: AccordionClient) -> None:
    alice = ChatSession(client)
    alice.handle("new klondike seed 11")
    assert alice.game is not None
    shared = alice.handle("share").split("\n")
    assert alice.game.token not in "\n".join(shared), "the token is never posted"
    code = re.fullmatch(
        r"Deal code (\S+): play \1 deals these cards to anyone \(hidden cards stay hidden\)\.", shared[0]
    )
    key = re.fullmatch(r"Watch key (\S+): watch \1 follows this game, read-only\.", shared[1])
    assert code and key, shared
    assert DEAL_CODE.match(code[1])

    bob = ChatSession(client)
    dealt = bob.handle(f"play {code[1]}")
    assert dealt.startswith(f"New game of Klondike from deal code {code[1]}."), dealt
    assert bob.game is not None and bob.game.id != alice.game.id and bob.game.text == alice.game.text
    assert (
        bob.handle("play ZZZZ-ZZZZ-ZZZZ-ZZZZ")
        == "I don't know the deal code 'ZZZZ-ZZZZ-ZZZZ-ZZZZ' (mistyped, or it expired)."
    )

    carol = ChatSession(client)
    watching = carol.handle(f"watch {key[1]}")
    assert watching.startswith("Watching, read-only: show refreshes it, unwatch stops."), watching
    assert alice.handle("draw").startswith("Played draw.")
    assert carol.handle("show") == "\n".join(alice.handle("show").split("\n"))
    for attempt in ("draw", "undo", "hint", "resign", "share"):
        assert carol.handle(attempt).startswith("You are watching this game, read-only"), attempt
    assert alice.game.refresh().version == 2, "the watcher changed nothing"
    assert carol.handle("watch nonsense").startswith("watch KEY follows a game, read-only")
    game_id = key[1].split(".")[0]
    assert carol.handle(f"watch {game_id}.wrong").startswith("That watch key does not open a game")
    assert carol.handle("unwatch") == "Stopped watching. Type new to deal a game."


# --- the terminal player --------------------------------------------------------------------------


def test_terminal_play_from_a_deal_code_deals_the_same_board(
    server: ServerProcess, client: AccordionClient
) -> None:
    first = client.new_game("klondike", seed=5)

    def play(*args: str) -> str:
        done = subprocess.run(
            [*script("accordion"), "play", *args, "--target", server.addr],
            input="share\nq\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    out = play("--deal-code", first.deal_code)
    assert out.startswith(f"New game: klondike (deal code {first.deal_code})\n"), out[:200]
    seeded = play("klondike", "--seed", "5")
    assert seeded.startswith("New game: klondike")  # (a hidden deal does not show its seed)
    assert out.split("move> ")[0].split("\n", 1)[1] == seeded.split("move> ")[0].split("\n", 1)[1]
    assert f"deal code: {first.deal_code}" in out
    assert re.search(r"watch key: [A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+ ", out)
    bad = subprocess.run(
        [*script("accordion"), "play", "--deal-code", "ZZZZ-ZZZZ-ZZZZ-ZZZZ", "--target", server.addr],
        input="q\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1 and "no such deal code" in bad.stderr, bad.stderr


def test_terminal_watch_follows_the_game_read_only(server: ServerProcess, client: AccordionClient) -> None:
    game = client.new_game("accordion", seed=7)
    key = watch_key(game.id, game.watch_token)
    proc = subprocess.Popen(
        [*script("accordion"), "watch", key, "--target", server.addr],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first == "Watching accordion, read-only (Ctrl-C leaves).\n", first + (
            proc.stderr.read() if proc.poll() else ""
        )
        game.resign()  # ends the game: the watcher prints it and leaves
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "played RESIGN" in out or "played resign" in out.lower(), out
    assert "the game is over (lost)" in out
    refused = subprocess.run(
        [*script("accordion"), "watch", "not-a-key", "--target", server.addr],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "not a watch key" in refused.stderr
