"""accordion-matrix-bot: the chat adapter on Matrix (``pip install 'accordion-client[matrix]'``).

    MATRIX_PASSWORD=... accordion-matrix-bot --homeserver https://matrix.example.org \\
        --user @accordion:example.org --target games.example.org:443

Built on matrix-nio (asyncio, typed responses, honours the homeserver's 429 ``retry_after_ms``
itself) and on ``ChatRooms``/``ChatSession``, so the game logic is the one every adapter shares.
What it does (docs/chat.md has the rest):

* joins the rooms it is invited to (a direct room too); each person in a room has their own game;
  in a room of more than two it answers commands, moves and messages that name it, not chatter;
* answers each message as a reply to it (in its thread when the message was in one), as plain
  text plus HTML with red ♥♦; a PNG of the layout, uploaded to the media repository, when the
  position changed (not for help, rules or a hint);
* ignores its own messages, the history before it started (the first sync's timeline) and
  what was said in a room before it joined;
* the game service unreachable: says so in the room, tries the message again with backoff and
  answers when it can; the homeserver unreachable: logs it and syncs again with backoff;
* keeps each person's game across restarts in a state file (mode 0600: it holds play tokens).

Secrets (the password, the access token, game tokens) come from the environment or files and
are never logged; the log names rooms, event ids and a message's command word (help, new, ...), no more.
Encrypted rooms are not supported (the bot reads no encrypted message).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from . import __version__
from .chat import COMMANDS
from .chat_rooms import ChatRooms, Reply
from .client import AccordionClient
from .flags import add_connection_flags, client_kwargs
from .png import PNG_TYPE, png_size, svg_to_png

try:
    import aiohttp
    from nio import (
        AsyncClient,
        AsyncClientConfig,
        InviteMemberEvent,
        JoinError,
        LoginResponse,
        MatrixRoom,
        RoomMemberEvent,
        RoomMessageText,
        RoomSendResponse,
        SyncResponse,
        UploadResponse,
        WhoamiResponse,
    )
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise SystemExit("accordion-matrix-bot needs: pip install 'accordion-client[matrix]'") from exc

log = logging.getLogger("accordion.matrix_bot")
# gRPC's channel waits up to 2 minutes between reconnects by default: a game service back after
# an outage would stay "unreachable" that long. A chat bot wants it back within seconds.
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 500),
    ("grpc.min_reconnect_backoff_ms", 500),
    ("grpc.max_reconnect_backoff_ms", 4000),
)
MAX_BACKOFF = 30.0  # seconds between tries, at most
SERVICE_PATIENCE = 300.0  # how long a message waits for the game service before the bot gives up
# A sync returns at most `limit` events of a room's timeline (Synapse: 10 unless asked), the
# newest: in a busy room more messages than that between two syncs would go unanswered. The
# first sync's timeline is history, not answered: one event is enough.
SYNC_FILTER = {"room": {"timeline": {"limit": 200}}}
FIRST_SYNC_FILTER = {"room": {"timeline": {"limit": 1}}}
MOVE_WORDS = frozenset({"draw", "deal", "redeal", "claim", "resign", "undo"})  # moves without a digit
NETWORK_ERRORS = (aiohttp.ClientError, asyncio.TimeoutError, OSError)


def backoff(attempt: int, cap: float = MAX_BACKOFF) -> float:
    """1, 2, 4, ... seconds, at most ``cap``."""
    return float(min(cap, 2 ** min(attempt, 10)))


class MatrixBot:
    """One Matrix account playing host to every room it is in."""

    def __init__(self, matrix: AsyncClient, rooms: ChatRooms) -> None:
        self.matrix = matrix
        self.rooms = rooms
        self.game_lock = asyncio.Lock()  # ChatRooms is not thread-safe: one game call at a time
        self.queues: dict[tuple[str, str], asyncio.Queue[tuple[MatrixRoom, RoomMessageText]]] = {}
        self.workers: set[asyncio.Task[None]] = set()
        # Rooms whose new messages are answered: those joined at the start, and each room from its
        # join event on (a room's first sync after the join also brings the history before it).
        self.live: set[str] = set()

    # --- the sync loop ------------------------------------------------------------------------
    async def run(self) -> None:
        await self._sync_until_ok(FIRST_SYNC_FILTER, full_state=True)  # its timeline is history: not answered
        self.live |= set(self.matrix.rooms)
        self.matrix.add_event_callback(self._on_member, RoomMemberEvent)
        self.matrix.add_event_callback(self._on_message, RoomMessageText)
        self.matrix.add_event_callback(self._on_invite, InviteMemberEvent)
        for room_id in list(self.matrix.invited_rooms):  # invitations that came while it was away
            self._spawn(self._join(room_id))
        log.info("ready as %s in %d rooms", self.matrix.user_id, len(self.matrix.rooms))
        while True:
            live = set(self.live)
            response = await self._sync_until_ok(SYNC_FILTER)
            for room_id, joined in response.rooms.join.items():
                if (
                    joined.timeline.limited and room_id in live
                ):  # more than SYNC_FILTER's limit since the last sync
                    log.warning("%s: messages came faster than the bot reads; some went unanswered", room_id)

    async def _sync_until_ok(self, sync_filter: dict[str, Any], full_state: bool = False) -> SyncResponse:
        attempt = 0
        while True:
            try:
                response = await self.matrix.sync(
                    timeout=30_000, sync_filter=sync_filter, full_state=full_state
                )
            except NETWORK_ERRORS as exc:
                response = exc
            if isinstance(response, SyncResponse):
                if attempt:
                    log.info("the homeserver answers again")
                return response
            wait = backoff(attempt)
            log.warning(
                "the homeserver is not answering (%s); syncing again in %.0f s", _brief(response), wait
            )
            attempt += 1
            await asyncio.sleep(wait)

    async def _on_invite(self, room: MatrixRoom, event: InviteMemberEvent) -> None:
        if event.state_key == self.matrix.user_id and event.membership == "invite":
            self._spawn(self._join(room.room_id))  # apart: a join retried must not hold up the sync

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self.workers.add(task)  # (a task nobody holds may be collected before it ends)
        task.add_done_callback(self.workers.discard)

    async def _on_member(self, room: MatrixRoom, event: RoomMemberEvent) -> None:
        if event.state_key == self.matrix.user_id:
            if event.membership == "join":
                self.live.add(room.room_id)  # what follows in the timeline is said to the bot
            elif event.membership in ("leave", "ban"):
                self.live.discard(room.room_id)

    async def _join(self, room_id: str) -> None:
        for attempt in range(6):
            response = await self._try(lambda: self.matrix.join(room_id))
            if response is not None and not isinstance(response, JoinError):
                log.info("joined %s", room_id)
                return
            await asyncio.sleep(backoff(attempt))
        log.warning("could not join %s", room_id)

    # --- messages -------------------------------------------------------------------------------
    async def _on_message(self, room: MatrixRoom, event: RoomMessageText) -> None:
        if event.sender == self.matrix.user_id or room.room_id not in self.live:
            return  # its own, or said before it joined
        if event.source.get("content", {}).get("m.relates_to", {}).get("rel_type") == "m.replace":
            return  # an edit of an earlier message: that one was answered already
        key = (room.room_id, event.sender)
        queue = self.queues.get(key)
        if queue is None:  # one worker per person per room: their messages in order, others not kept waiting
            queue = self.queues[key] = asyncio.Queue()
            self._spawn(self._work(queue))
        queue.put_nowait((room, event))

    async def _work(self, queue: asyncio.Queue[tuple[MatrixRoom, RoomMessageText]]) -> None:
        while True:
            room, event = await queue.get()
            try:
                await self._answer(room, event)
            except Exception:  # one message's failure must not stop this person's worker
                log.exception("answering %s in %s failed", event.event_id, room.room_id)

    async def _answer(self, room: MatrixRoom, event: RoomMessageText) -> None:
        said = self._said_to_me(room, event, without_reply_fallback(event.body).strip())
        if said is None:
            return  # people talking among themselves
        text = said
        word = (text.split() or [""])[0].lower().lstrip("/")
        log.info(
            "%s in %s: %s",
            event.event_id,
            room.room_id,
            word if word in COMMANDS else "(a move or other text)",
        )
        reply = await self._handle(room.room_id, event.sender, text)
        waited, attempt = 0.0, 0
        while reply.service_down and waited < SERVICE_PATIENCE:
            wait = backoff(attempt)
            if attempt == 0:
                await self._post(
                    room.room_id,
                    event,
                    _notice(
                        "The game service is not answering right now; I will try your message again "
                        "(with growing pauses) and answer here when it is back."
                    ),
                )
            log.warning("the game service is not answering; %s again in %.0f s", event.event_id, wait)
            await asyncio.sleep(wait)
            waited += wait
            attempt += 1
            reply = await self._handle(room.room_id, event.sender, text)
        await self._post(room.room_id, event, _message(reply))
        if reply.picture is not None:
            await self._post_picture(room.room_id, event, reply.picture)

    def _said_to_me(self, room: MatrixRoom, event: RoomMessageText, text: str) -> str | None:
        """The text the bot should answer, or None. In a room of two (a direct chat) everything; in
        a group, a command, a move from someone with a game, or a message that names the bot
        (``accordion: help``, a mention): chatter there is not the bot's to answer."""
        me = self.matrix.user_id
        names = {me, me.split(":")[0].lstrip("@"), room.user_name(me) or ""} - {""}
        for name in sorted(names, key=len, reverse=True):
            if text.lower().startswith((name + ":").lower()) or text.lower().startswith((name + ",").lower()):
                return text[len(name) + 1 :].strip()
        mentions = event.source.get("content", {}).get("m.mentions", {}).get("user_ids", [])
        if room.joined_count <= 2 or me in mentions:
            return text
        word = (text.split() or [""])[0].lower().lstrip("/")
        if word in COMMANDS or (self.rooms.has_game(room.room_id, event.sender) and looks_like_move(text)):
            return text
        return None

    async def _handle(self, room_id: str, person: str, text: str) -> Reply:
        async with self.game_lock:
            return await asyncio.to_thread(self.rooms.handle, room_id, person, text)

    async def _post_picture(self, room_id: str, event: RoomMessageText, svg: bytes) -> None:
        png = await asyncio.to_thread(svg_to_png, svg)
        width, height = png_size(png)
        name = "layout.png"
        uploaded = await self._try(
            lambda: self.matrix.upload(
                _bytes_provider(png), content_type=PNG_TYPE, filename=name, filesize=len(png)
            )
        )
        response = uploaded[0] if isinstance(uploaded, tuple) else uploaded
        if not isinstance(response, UploadResponse):
            log.warning("the picture's upload failed (%s)", _brief(response))
            return
        content = {
            "msgtype": "m.image",
            "body": name,
            "url": response.content_uri,
            "info": {"mimetype": PNG_TYPE, "size": len(png), "w": width, "h": height},
        }
        await self._post(room_id, event, content)

    async def _post(self, room_id: str, event: RoomMessageText, content: dict[str, Any]) -> None:
        """Sends ``content`` as a reply to ``event`` (in its thread, if any), retrying while the
        homeserver is unreachable (nio itself waits out a 429's retry_after_ms)."""
        content = {**content, "m.relates_to": _relation(event), "m.mentions": {"user_ids": [event.sender]}}
        for attempt in range(12):
            response = await self._try(
                lambda: self.matrix.room_send(
                    room_id, "m.room.message", content, ignore_unverified_devices=True
                )
            )
            if isinstance(response, RoomSendResponse):
                return
            wait = backoff(attempt)
            log.warning("sending to %s failed (%s); again in %.0f s", room_id, _brief(response), wait)
            await asyncio.sleep(wait)
        log.error("gave up sending a reply to %s in %s", event.event_id, room_id)

    @staticmethod
    async def _try(call: Callable[[], Any]) -> Any:
        """``await call()``, or the network error it raised."""
        try:
            return await call()
        except NETWORK_ERRORS as exc:
            return exc


def looks_like_move(text: str) -> bool:
    """Whether ``text`` reads as a move (``8d>9d``, ``x7``, ``3>7 x4``, ``draw``), not as talk."""
    words = text.lower().split()
    if not words or len(words) > 4 or len(text) > 40:
        return False
    return words[0] in MOVE_WORDS or any(c.isdigit() for c in text) or ">" in text


def without_reply_fallback(body: str) -> str:
    """The message without the quote some clients put before a reply (``> <@bot:hs> …`` lines,
    then a blank line), so that replying ``x7`` to the bot's answer plays x7."""
    lines = body.split("\n")
    if not lines or not lines[0].startswith("> "):
        return body
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).lstrip("\n")


def _relation(event: RoomMessageText) -> dict[str, Any]:
    """A reply to ``event``; in a thread when ``event`` was in one."""
    relates = event.source.get("content", {}).get("m.relates_to", {})
    reply = {"m.in_reply_to": {"event_id": event.event_id}}
    if relates.get("rel_type") == "m.thread" and relates.get("event_id"):
        return {"rel_type": "m.thread", "event_id": relates["event_id"], "is_falling_back": False, **reply}
    return reply


def _message(reply: Reply) -> dict[str, Any]:
    return {
        "msgtype": "m.notice",
        "body": reply.text,
        "format": "org.matrix.custom.html",
        "formatted_body": reply.html,
    }


def _notice(text: str) -> dict[str, Any]:
    return {"msgtype": "m.notice", "body": text}


def _bytes_provider(data: bytes) -> Callable[[int, int], bytes]:
    """nio's upload reads from a callable (called again on a retry, so each call gives it all)."""
    return lambda _got_429, _got_timeouts: data


def _brief(response: object) -> str:
    """An error in a few words: its type and status, never a request's body or a token."""
    status = getattr(response, "status_code", None)
    return f"{type(response).__name__}{f' {status}' if status else ''}"


# --- the command line ---------------------------------------------------------------------------
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="accordion-matrix-bot", description="The Accordion chat bot on Matrix")
    p.add_argument("--version", action="version", version=f"%(prog)s (accordion-client {__version__})")
    env = os.environ.get
    p.add_argument(
        "--homeserver", default=env("MATRIX_HOMESERVER"), help="homeserver URL [MATRIX_HOMESERVER]"
    )
    p.add_argument(
        "--user", default=env("MATRIX_USER"), help="the bot's Matrix id, @name:server [MATRIX_USER]"
    )
    p.add_argument(
        "--password-file",
        default=env("MATRIX_PASSWORD_FILE"),
        help="a file holding the password [MATRIX_PASSWORD_FILE; or MATRIX_PASSWORD]",
    )
    p.add_argument(
        "--access-token-file",
        default=env("MATRIX_ACCESS_TOKEN_FILE"),
        help="a file holding an access token, instead of a password "
        "[MATRIX_ACCESS_TOKEN_FILE; or MATRIX_ACCESS_TOKEN]",
    )
    p.add_argument(
        "--device-id", default=env("MATRIX_DEVICE_ID"), help="reuse this device [MATRIX_DEVICE_ID]"
    )
    p.add_argument(
        "--state",
        default=env("ACCORDION_BOT_STATE") or "accordion-matrix-bot.json",
        help="the state file: each person's game across restarts [ACCORDION_BOT_STATE; default: %(default)s]",
    )
    p.add_argument("--variant", default="accordion", help="what a bare 'new' deals (default: %(default)s)")
    p.add_argument("--no-pictures", action="store_true", help="text only: no PNG of the layout")
    p.add_argument(
        "--api-key",
        default=env("ACCORDION_API_KEY") or None,
        help="sent as x-api-key on every call to the game service [ACCORDION_API_KEY]",
    )
    p.add_argument(
        "--log-level", default=env("ACCORDION_BOT_LOG_LEVEL") or "info", help="default: %(default)s"
    )
    add_connection_flags(p)
    return p


def _secret(path: str | None, variable: str) -> str | None:
    if path:
        return Path(path).read_text().strip()
    return os.environ.get(variable) or None


async def _login(matrix: AsyncClient, args: argparse.Namespace) -> None:
    token = _secret(args.access_token_file, "MATRIX_ACCESS_TOKEN")
    if token:
        matrix.access_token = token
        who = await matrix.whoami()
        if not isinstance(who, WhoamiResponse):
            raise SystemExit(f"accordion-matrix-bot: the access token was refused ({_brief(who)})")
        matrix.user_id, matrix.device_id = who.user_id, who.device_id or args.device_id or ""
        return
    password = _secret(args.password_file, "MATRIX_PASSWORD")
    if not password:
        raise SystemExit(
            "accordion-matrix-bot: give a password (MATRIX_PASSWORD, --password-file) or an access token"
        )
    response = await matrix.login(password, device_name="accordion-matrix-bot")
    if not isinstance(response, LoginResponse):
        raise SystemExit(f"accordion-matrix-bot: login refused ({_brief(response)})")


async def _main(args: argparse.Namespace) -> None:
    config = AsyncClientConfig(max_limit_exceeded=None, max_timeouts=2, request_timeout=60)
    matrix = AsyncClient(args.homeserver, args.user, device_id=args.device_id, config=config)
    client = AccordionClient(**client_kwargs(args), api_key=args.api_key, options=CHANNEL_OPTIONS)
    try:
        await _login(matrix, args)
        rooms = ChatRooms(
            client, variant=args.variant, pictures=not args.no_pictures, state_path=Path(args.state)
        )
        await MatrixBot(matrix, rooms).run()
    finally:
        await matrix.close()
        client.close()


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not args.homeserver or not args.user:
        parser().error("--homeserver and --user are needed (or MATRIX_HOMESERVER, MATRIX_USER)")
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("nio", "aiohttp"):  # the library's debug lines carry request bodies: never below WARNING
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    try:
        asyncio.run(_main(args))
    except KeyboardInterrupt:
        return 0
    except (ValueError, OSError) as exc:
        print(f"accordion-matrix-bot: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
