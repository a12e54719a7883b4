"""Chat rooms full of people, on top of ``ChatSession``: what every chat bot adapter shares.

    rooms = ChatRooms(client, pictures=True, state_path=Path("bot-state.json"))
    reply = rooms.handle("!room:example.org", "@alice:example.org", "new klondike")
    reply.text, reply.html   # plain text, and HTML with red ♥♦ (for platforms that format)
    reply.picture            # the layout's SVG when the position changed, else None

One ``ChatSession`` per person per room (a person can play in several rooms). A picture is
posted only when the position shown changed since that person's last one (a new game, a move,
an undo, a watched game that moved), not again for help, rules or a hint.

The state file keeps each person's game (id and play token) and watched game (id and watch
token) across a restart of the bot; it holds secrets, so it is written with mode 0600 and its
contents are never logged. A saved game is opened again on that person's next message.
"""

from __future__ import annotations

import html
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import errors
from .chat import ChatSession
from .client import AccordionClient

RED = "#c8102e"  # the server's picture's red
# A card as the replies write it (``10♥``, ``Q♦``), or a lone suit symbol.
_RED_CARD = re.compile(r"(?:(?:10|[2-9AJQKT])[♥♦])|[♥♦]")
_BLACK_CARD = re.compile(r"(?:(?:10|[2-9AJQKT])[♠♣])")
Key = tuple[str, str]  # (room, person)


@dataclass(frozen=True)
class Reply:
    """What to post: ``text`` (plain), ``html`` (the same, formatted), ``picture`` (SVG bytes or
    None), ``service_down`` (the game service did not answer: worth trying again later)."""

    text: str
    html: str
    picture: bytes | None = None
    service_down: bool = False


def reply_html(text: str) -> str:
    """The reply as Matrix-style HTML: lines kept, red cards and suits in red, black ones bold."""
    lines = []
    for line in text.split("\n"):
        escaped = html.escape(line, quote=False)
        escaped = _BLACK_CARD.sub(lambda m: f"<b>{m.group(0)}</b>", escaped)
        escaped = _RED_CARD.sub(
            lambda m: f'<font color="{RED}" data-mx-color="{RED}">{m.group(0)}</font>', escaped
        )
        lines.append(escaped)
    return "<br>".join(lines)


class ChatRooms:
    """Every conversation's ``ChatSession``, keyed by (room, person); see the module's doc."""

    def __init__(
        self,
        client: AccordionClient,
        *,
        variant: str = "accordion",
        pictures: bool = False,
        state_path: Path | None = None,
    ) -> None:
        self.client = client
        self.variant = variant
        self.pictures = pictures
        self.state_path = state_path
        self.sessions: dict[Key, ChatSession] = {}
        self._pictured: dict[Key, tuple[str, int]] = {}  # (game id, version) of the last picture posted
        self._saved: dict[Key, dict[str, str]] = self._load()  # games to open on the next message

    def session(self, room: str, person: str) -> ChatSession:
        key = (room, person)
        if key not in self.sessions:
            self.sessions[key] = ChatSession(self.client, variant=self.variant)
        return self.sessions[key]

    def has_game(self, room: str, person: str) -> bool:
        """Whether ``person`` plays or watches a game in ``room`` (one kept in the state file too)."""
        session = self.sessions.get((room, person))
        return (session is not None and session.shown is not None) or (room, person) in self._saved

    def handle(self, room: str, person: str, text: str) -> Reply:
        """The reply to ``person``'s ``text`` in ``room``; never raises for a user's text or a
        server error."""
        key = (room, person)
        session = self.session(room, person)
        reopened = self._reopen(key, session)
        if reopened is not None:
            return Reply(reopened, reply_html(reopened), service_down=True)
        before = self._state_of(session)
        text_reply = session.handle(text)
        if self._state_of(session) != before:
            self._save()
        return Reply(text_reply, reply_html(text_reply), self._picture(key, session), session.unavailable)

    # --- pictures ---------------------------------------------------------------------------
    def _picture(self, key: Key, session: ChatSession) -> bytes | None:
        shown = session.shown
        if not self.pictures or shown is None or session.unavailable:
            return None
        position = (shown.id, shown.version)
        if self._pictured.get(key) == position:
            return None
        try:
            picture = shown.picture()
        except errors.AccordionError:
            return None  # the text stands on its own; the next change posts one
        self._pictured[key] = position
        return picture

    # --- the state file ---------------------------------------------------------------------
    @staticmethod
    def _state_of(session: ChatSession) -> dict[str, str]:
        state: dict[str, str] = {}
        if session.game is not None:
            state |= {"game_id": session.game.id, "token": session.game.token}
        if session.watching is not None:
            state |= {"watch_id": session.watching.id, "watch_token": session.watching.token}
        return state

    def _reopen(self, key: Key, session: ChatSession) -> str | None:
        """Opens the games saved for ``key`` before the restart; a sentence when the service is down."""
        saved = self._saved.get(key)
        if saved is None:
            return None
        try:
            if "game_id" in saved:
                session.game = self.client.open_game(saved["game_id"], saved["token"])
            if "watch_id" in saved:
                session.watching = self.client.spectate(saved["watch_id"], saved["watch_token"])
        except (errors.Unavailable, errors.DeadlineExceeded, errors.ResourceExhausted, errors.RateLimited):
            return "The game service is not answering right now; try again in a moment."
        except errors.AccordionError:
            pass  # the game expired or its token was rotated: start afresh
        del self._saved[key]
        if session.shown is not None:  # the picture already posted before the restart stays current
            self._pictured[key] = (session.shown.id, session.shown.version)
        return None

    def _load(self) -> dict[Key, dict[str, str]]:
        if self.state_path is None or not self.state_path.exists():
            return {}
        data = json.loads(self.state_path.read_text())
        return {
            (row["room"], row["person"]): {k: str(v) for k, v in row["state"].items()}
            for row in data["sessions"]
        }

    def _save(self) -> None:
        if self.state_path is None:
            return
        rows = [
            {"room": room, "person": person, "state": state} for (room, person), state in self._saved.items()
        ]
        rows += [
            {"room": room, "person": person, "state": state}
            for (room, person), session in self.sessions.items()
            if (room, person) not in self._saved and (state := self._state_of(session))
        ]
        body = json.dumps({"version": 1, "sessions": rows}, indent=1)
        # Atomic, and readable by the bot's user only: the file holds play tokens.
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.state_path.parent, prefix=".state-")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(body)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.state_path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
