"""Issue 33: accordion-matrix-bot end to end, nothing mocked: a real Synapse (SQLite, rate limits
on, registration by the shared secret), a real game server on a real Redis, the bot as a real
process, and people as real Matrix clients (matrix-nio).

The module's servers are shared by its tests, which run in the order written (the module runs
whole on one worker: tests/conftest.py WHOLE_MODULES); the last ones restart the game
service, Synapse and the bot, each mid-game.
"""

from __future__ import annotations

import io
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from accordion_client import AccordionClient
from redis_server import RedisServer
from server_launcher import ServerProcess, launch
from tests.chat.matrix_world import BotProcess, person
from tests.chat.synapse import Synapse

RED = 'data-mx-color="#c8102e"'


class World:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.synapse = Synapse(tmp).start()
        self.redis = RedisServer(appendonly=True).start()
        self.game_service = self.start_game_service()
        self.bot_account = self.synapse.register("accordion", "bot-password")
        self.alice = self.synapse.register("alice", "alice-password")
        self.bob = self.synapse.register("bob", "bob-password")
        # Only the rate-limit test meets the (slow) limit: the others' accounts are exempt.
        self.admin = self.synapse.register("operator", "operator-password", admin=True)
        for account in (self.bot_account, self.alice, self.bob):
            self.synapse.exempt_from_rate_limit(self.admin["access_token"], account["user_id"])
        self.bot = BotProcess(
            tmp, self.synapse, self.bot_account["user_id"], "bot-password", self.game_service.addr
        )
        self.bot.start()
        self.room = ""  # alice's room with the bot and bob, made by the first test

    def start_game_service(self, listen: str = "127.0.0.1:0") -> ServerProcess:
        return launch(self.tmp, "--redis-url", self.redis.url, "--log-level", "warning", listen=listen)

    def close(self) -> None:
        self.bot.stop()
        self.game_service.close()
        self.redis.close()
        self.synapse.stop()

    def saved_game(self, user_id: str) -> dict[str, str]:
        """The game the bot's state file keeps for ``user_id`` in the room."""
        row = next(r for r in self.bot.saved() if r["room"] == self.room and r["person"] == user_id)
        state: dict[str, str] = row["state"]
        return state


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with tempfile.TemporaryDirectory(prefix="acc-matrix-") as tmp:
        w = World(Path(tmp))
        try:
            yield w
        finally:
            w.close()


def legal_moves(reply: dict[str, Any]) -> list[str]:
    body: str = reply["content"]["body"]
    assert body.startswith("Legal now: "), body
    return [m for m in body.removeprefix("Legal now: ").split(", ") if re.fullmatch(r"[\w>-]+", m)]


async def test_a_person_invites_the_bot_and_plays(world: World) -> None:
    async with person(world.synapse, world.alice) as alice:
        world.room = await alice.create_room(world.bot_account["user_id"], world.bob["user_id"])
        await alice.wait_for_member(world.room, world.bot_account["user_id"])  # it joins on invite

        new, reply = await alice.ask(world.room, "new klondike seed 5", starts="New game of Klondike.")
        content = reply["content"]
        assert content["msgtype"] == "m.notice" and content["format"] == "org.matrix.custom.html"
        assert "♥" in content["body"] or "♦" in content["body"]
        assert RED in content["formatted_body"] and "<br>" in content["formatted_body"]
        assert content["m.mentions"] == {"user_ids": [alice.user_id]}

        # the picture: a PNG in the media repository, at the size of the server's SVG, with pile numbers
        image = await alice.reply(world.room, new, "m.image")
        png = await alice.download(image["content"]["url"])
        saved = world.saved_game(alice.user_id)
        with AccordionClient(world.game_service.addr) as client:
            svg = ET.fromstring(client.open_game(saved["game_id"], saved["token"]).picture())
        size = (int(svg.get("width", "0")), int(svg.get("height", "0")))
        with Image.open(io.BytesIO(png)) as decoded:
            decoded.load()
            assert decoded.format == "PNG" and decoded.size == size
        info = image["content"]["info"]
        assert info["mimetype"] == "image/png" and (info["w"], info["h"]) == size and info["size"] == len(png)
        numbers = {
            t.text for t in svg.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "pile-number"
        }
        assert {"1", "7", "f1", "f4", "w"} <= numbers

        # a hint: text only, no picture (the position did not change)
        hint, reply = await alice.ask(world.room, "hint", starts="Hint: ")
        move = reply["content"]["body"].removeprefix("Hint: ")
        # a move in notation: the reply and a new picture
        played, reply = await alice.ask(world.room, move, starts="Played ")
        await alice.reply(world.room, played, "m.image")
        assert alice.replies(world.room, hint, "m.image") == []

        # an illegal move and its answer: the legal ones
        _, reply = await alice.ask(world.room, "moves", starts="Legal now: ")
        legal = legal_moves(reply)
        illegal = next(
            f"{a}>{b}" for a in range(1, 8) for b in range(1, 8) if a != b and f"{a}>{b}" not in legal
        )
        asked, reply = await alice.ask(world.room, illegal, starts=f"{illegal} is not legal: ")  # and why
        body = reply["content"]["body"]
        assert ". Legal: " in body and legal[0] in body.partition(". Legal: ")[2], body
        # an unknown command: help
        _, reply = await alice.ask(world.room, "frobnicate the cards")
        assert "help lists the commands" in reply["content"]["body"]
        assert alice.replies(world.room, asked, "m.image") == []


async def test_a_reply_in_a_thread_stays_in_the_thread(world: World) -> None:
    async with person(world.synapse, world.alice) as alice:
        root = await alice.say(world.room, "a thread for my game")
        _, reply = await alice.ask(world.room, "score", starts="Penalty ", thread=root)
        relates = reply["content"]["m.relates_to"]
        assert relates["rel_type"] == "m.thread" and relates["event_id"] == root
        # a reply to the bot's answer, with the quote older clients put first: the command still reads
        event_id = await alice.say(world.room, "score", reply_to=reply["event_id"])
        await alice.reply(world.room, event_id, starts="Penalty ")
        # an edit is not a new message: not answered
        edit = await alice.edit(world.room, event_id, "help")
        await alice.ask(world.room, "score", starts="Penalty ")
        assert alice.replies(world.room, edit) == []


async def test_what_was_said_before_the_bot_joined_is_not_answered(world: World) -> None:
    async with person(world.synapse, world.bob) as bob:
        room = await bob.create_room()
        before = await bob.say(room, "help")
        await bob.client.room_invite(room, world.bot_account["user_id"])
        await bob.wait_for_member(room, world.bot_account["user_id"])
        await bob.ask(room, "variants", starts="Variants: ")  # said after the join: answered
        assert bob.replies(room, before) == []


async def test_two_people_in_one_room_have_separate_games(world: World) -> None:
    async with person(world.synapse, world.alice) as alice, person(world.synapse, world.bob) as bob:
        await bob.join(world.room)
        _, reply = await bob.ask(world.room, "show", starts="No game yet")  # alice's game is hers
        _, reply = await bob.ask(
            world.room, "new royal-marriage seed 3", starts="New game of Royal Marriage."
        )
        _, reply = await alice.ask(world.room, "show")
        assert "foundation" in reply["content"]["body"].lower() or "1: " in reply["content"]["body"]
        assert world.saved_game(alice.user_id)["game_id"] != world.saved_game(bob.user_id)["game_id"]
        # three in the room now: talk among people is not answered, a message naming the bot is
        chatter = await alice.say(world.room, "nice weather today, bob")
        _, reply = await bob.ask(world.room, "accordion: what now", starts="I can't read 'what now'")
        await alice.ask(world.room, "score", starts="Penalty ")
        assert alice.replies(world.room, chatter) == []


async def test_a_watcher_and_a_deal_code(world: World) -> None:
    async with person(world.synapse, world.alice) as alice, person(world.synapse, world.bob) as bob:
        _, reply = await alice.ask(world.room, "share", starts="Deal code ")
        body = reply["content"]["body"]
        code = re.search(r"play (\S+) deals", body)
        key = re.search(r"watch (\S+) follows", body)
        assert code and key
        _, reply = await bob.ask(world.room, f"watch {key.group(1)}", starts="Watching, read-only")
        _, reply = await bob.ask(world.room, "x1", starts="You are watching this game, read-only")
        _, reply = await bob.ask(
            world.room, f"play {code.group(1)}", starts="New game of Klondike from deal code"
        )
        # the play token never reaches the room
        token = world.saved_game(alice.user_id)["token"]
        await alice.sync()
        assert all(token not in str(event) for _, event in alice.events)


async def test_a_burst_of_messages_meets_the_rate_limit_and_every_one_is_answered(world: World) -> None:
    """The homeserver's rate limit (synapse.RC_MESSAGE: burst 3, then one a 10 s) answers the
    bot's fourth quick reply with 429 and a retry_after_ms: the bot waits it out and answers
    everything, in order. The bot is exempt for the other tests; here the limit is its own again."""
    admin = world.admin["access_token"]
    world.synapse.exempt_from_rate_limit(admin, world.bot_account["user_id"], exempt=False)
    try:
        async with person(world.synapse, world.alice) as alice:
            said = [await alice.say(world.room, "score") for _ in range(5)]
            replies = [await alice.reply(world.room, event_id, starts="Penalty ") for event_id in said]
            assert [r["origin_server_ts"] for r in replies] == sorted(r["origin_server_ts"] for r in replies)
    finally:
        world.synapse.exempt_from_rate_limit(admin, world.bot_account["user_id"])
    assert "Got 429 response (ratelimited), sleeping for" in world.bot.log()
    assert "went unanswered" not in world.bot.log()  # each sync read every message (SYNC_FILTER)


async def test_the_game_service_stopped_and_started(world: World) -> None:
    async with person(world.synapse, world.alice) as alice:
        _, before = await alice.ask(world.room, "show")
        port = world.game_service.addr.rsplit(":", 1)[1]
        world.game_service.terminate()
        world.game_service.close()
        asked = await alice.say(world.room, "show")
        await alice.reply(world.room, asked, starts="The game service is not answering right now")
        world.game_service = world.start_game_service(listen=f"127.0.0.1:{port}")
        after = await alice.reply(world.room, asked, starts=before["content"]["body"].split("\n")[0])
        assert after["content"]["body"] == before["content"]["body"]  # the same game, on Redis


async def test_synapse_restarted_mid_game(world: World) -> None:
    world.synapse.stop()
    world.synapse.start()
    async with person(world.synapse, world.alice) as alice:
        _, reply = await alice.ask(world.room, "moves", starts="Legal now: ")
        move = legal_moves(reply)[0]
        await alice.ask(world.room, move, starts="Played ")
    assert "the homeserver is not answering" in world.bot.log()


async def test_the_bot_restarted_keeps_the_game_and_ignores_old_messages(world: World) -> None:
    async with person(world.synapse, world.alice) as alice, person(world.synapse, world.bob) as bob:
        _, before = await alice.ask(world.room, "show")
        world.bot.stop()
        old = await alice.say(world.room, "help")  # said while the bot is away: history, not answered
        direct = await bob.create_room(world.bot_account["user_id"], direct=True)  # invited while it is away
        world.bot.start()
        await bob.wait_for_member(direct, world.bot_account["user_id"])
        await bob.ask(direct, "new", starts="New game of Accordion.")
        _, after = await alice.ask(world.room, "show")
        assert after["content"]["body"] == before["content"]["body"]  # the game continues
        assert alice.replies(world.room, old) == []
        # no reply to the bot's own messages either: each of its replies answers a person's message
        senders = {e["event_id"]: e["sender"] for _, e in alice.events}
        for _, event in alice.events:
            target = event.get("content", {}).get("m.relates_to", {}).get("m.in_reply_to", {}).get("event_id")
            if event["sender"] == world.bot_account["user_id"] and target in senders:
                assert senders[target] != world.bot_account["user_id"]


def test_no_secret_in_the_bot_log(world: World) -> None:
    log = world.bot.log()
    assert "bot-password" not in log
    for row in world.bot.saved():
        for name in ("token", "watch_token"):
            if name in row["state"]:
                assert row["state"][name] not in log
    assert (world.bot.state.stat().st_mode & 0o777) == 0o600
