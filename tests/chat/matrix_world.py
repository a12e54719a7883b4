"""What tests/chat/test_matrix_bot.py plays in: the bot as a real process, and people as real
Matrix clients (matrix-nio, the bot's own library) on a real Synapse (synapse.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from nio import AsyncClient, RoomCreateResponse, RoomSendResponse, SyncResponse

from server_launcher import ROOT, START_TIMEOUT
from tests.chat.synapse import Synapse

BOT_SCRIPT = Path(sys.executable).parent / "accordion-matrix-bot"
WAIT = 180.0  # seconds for an answer: generous, the machine is loaded and 429s make the bot wait


class BotProcess:
    """``accordion-matrix-bot`` against ``synapse`` and the game service at ``target``."""

    def __init__(self, workdir: Path, synapse: Synapse, user_id: str, password: str, target: str) -> None:
        self.workdir = workdir
        self.state = workdir / "bot-state.json"
        self.log_path = workdir / "bot.log"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("MATRIX_", "ACCORDION_"))},
            "MATRIX_HOMESERVER": synapse.url,
            "MATRIX_USER": user_id,
            "MATRIX_PASSWORD": password,
            "ACCORDION_TARGET": target,
            "ACCORDION_BOT_STATE": str(self.state),
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> BotProcess:
        assert BOT_SCRIPT.exists(), f"{BOT_SCRIPT} is missing: run `make install` (the client's matrix extra)"
        readies = self.log().count(" ready as ")
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(BOT_SCRIPT)], env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT
            )
        deadline = time.monotonic() + START_TIMEOUT
        while self.log().count(" ready as ") == readies:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the bot did not get ready:\n{self.log()[-4000:]}")
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def saved(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = json.loads(self.state.read_text())["sessions"]
        return rows


class Person:
    """A person on Matrix: says things in rooms and waits for the bot's replies to them."""

    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self.user_id: str = client.user_id
        self.events: list[tuple[str, dict[str, Any]]] = []  # (room, event) as synced

    async def sync(self, timeout_ms: int = 2000) -> None:
        # (the timeline's default limit, 10 events a sync, would drop replies in a burst)
        response = await self.client.sync(
            timeout=timeout_ms, sync_filter={"room": {"timeline": {"limit": 200}}}
        )
        if isinstance(response, SyncResponse):
            for room_id, info in response.rooms.join.items():
                self.events += [(room_id, event.source) for event in info.timeline.events]

    async def create_room(self, *invite: str, direct: bool = False) -> str:
        response = await self.client.room_create(invite=list(invite), is_direct=direct)
        assert isinstance(response, RoomCreateResponse), response
        return str(response.room_id)

    async def join(self, room_id: str) -> None:
        await self.client.join(room_id)

    async def wait_for_member(self, room_id: str, user_id: str) -> None:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            members = await self.client.joined_members(room_id)
            if user_id in [m.user_id for m in getattr(members, "members", [])]:
                return
            await asyncio.sleep(0.3)
        raise AssertionError(f"{user_id} did not join {room_id}")

    async def say(
        self, room_id: str, text: str, *, thread: str | None = None, reply_to: str | None = None
    ) -> str:
        content: dict[str, Any] = {"msgtype": "m.text", "body": text}
        if reply_to is not None:  # as older clients send a reply: the quoted message first
            content["body"] = f"> <{self.user_id}> an earlier message\n\n{text}"
            content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
        if thread is not None:
            content["m.relates_to"] = {
                "rel_type": "m.thread",
                "event_id": thread,
                "is_falling_back": True,
                "m.in_reply_to": {"event_id": thread},
            }
        response = await self.client.room_send(room_id, "m.room.message", content)
        assert isinstance(response, RoomSendResponse), response
        return str(response.event_id)

    async def edit(self, room_id: str, event_id: str, text: str) -> str:
        """Edits ``event_id`` (an ``m.replace``): its new text is ``text``."""
        content = {
            "msgtype": "m.text",
            "body": f"* {text}",
            "m.new_content": {"msgtype": "m.text", "body": text},
            "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
        }
        response = await self.client.room_send(room_id, "m.room.message", content)
        assert isinstance(response, RoomSendResponse), response
        return str(response.event_id)

    def replies(self, room_id: str, event_id: str, msgtype: str | None = None) -> list[dict[str, Any]]:
        """The bot's replies to ``event_id`` synced so far (of ``msgtype``, when given)."""
        found = []
        for room, event in self.events:
            content = event.get("content", {})
            relates = content.get("m.relates_to", {})
            replying = room == room_id and relates.get("m.in_reply_to", {}).get("event_id") == event_id
            if replying and (msgtype is None or content.get("msgtype") == msgtype):
                found.append(event)
        return found

    async def reply(
        self,
        room_id: str,
        event_id: str,
        msgtype: str = "m.notice",
        *,
        starts: str = "",
        timeout: float = WAIT,
    ) -> dict[str, Any]:
        """The first reply of ``msgtype`` to ``event_id`` whose body starts with ``starts``."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.replies(room_id, event_id, msgtype):
                if event["content"].get("body", "").startswith(starts):
                    return event
            if time.monotonic() > deadline:
                said = [e["content"].get("body") for e in self.replies(room_id, event_id)]
                raise AssertionError(f"no {msgtype} reply starting {starts!r} to {event_id}; got {said}")
            await self.sync()

    async def ask(
        self, room_id: str, text: str, *, starts: str = "", thread: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Says ``text`` and waits for the bot's text reply: (the event id said, the reply)."""
        event_id = await self.say(room_id, text, thread=thread)
        return event_id, await self.reply(room_id, event_id, starts=starts)

    async def download(self, mxc: str) -> bytes:
        response = await self.client.download(mxc)
        body: bytes = response.body
        return body


@asynccontextmanager
async def person(synapse: Synapse, account: dict[str, Any]) -> AsyncIterator[Person]:
    """A logged-in client for an account made by ``Synapse.register`` (its access token)."""
    client = AsyncClient(synapse.url, account["user_id"])
    client.restore_login(account["user_id"], account["device_id"], account["access_token"])
    someone = Person(client)
    try:
        await someone.sync(timeout_ms=0)
        yield someone
    finally:
        await client.close()
