"""ChatRooms against a real server: a game per person per room, a picture only when the position
changed, the HTML reply, and the state file across a restart (issue 33)."""

from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from accordion_client import AccordionClient
from accordion_client.chat_rooms import ChatRooms, reply_html
from accordion_client.png import png_size, svg_to_png
from tests.clients.conftest import script


def test_the_html_reply_colours_red_cards_and_keeps_lines() -> None:
    html = reply_html("Played 10♥>J♠.\n1:Q♦ 2:<K♣>")
    assert html == (
        'Played <font color="#c8102e" data-mx-color="#c8102e">10♥</font>&gt;<b>J♠</b>.<br>'
        '1:<font color="#c8102e" data-mx-color="#c8102e">Q♦</font> 2:&lt;<b>K♣</b>&gt;'
    )


def test_a_picture_only_when_the_position_changed(client: AccordionClient) -> None:
    rooms = ChatRooms(client, pictures=True)
    assert rooms.handle("r", "alice", "help").picture is None  # no game yet
    first = rooms.handle("r", "alice", "new accordion seed 7")
    assert first.picture is not None and ET.fromstring(first.picture).tag.endswith("svg")
    for text in ("help", "hint", "rules", "score", "moves", "show", "x99"):
        assert rooms.handle("r", "alice", text).picture is None, text
    hint = rooms.handle("r", "alice", "hint").text.removeprefix("Hint: ")
    assert rooms.handle("r", "alice", hint).picture is not None
    assert rooms.handle("r", "alice", "undo").picture is not None  # back, but a new version
    # another person, another room: games of their own, pictured on their own
    assert rooms.handle("r", "bob", "show").text.startswith("No game yet")
    assert rooms.handle("r2", "alice", "new klondike seed 2").picture is not None
    assert rooms.session("r", "alice").game is not rooms.session("r2", "alice").game
    # the PNG of a picture is the SVG's size
    svg = ET.fromstring(first.picture)
    assert png_size(svg_to_png(first.picture)) == (int(svg.get("width", "0")), int(svg.get("height", "0")))


def test_the_state_file_keeps_each_game_across_a_restart(client: AccordionClient, tmp_path: Path) -> None:
    state = tmp_path / "bot" / "state.json"  # its folder made on the first save
    rooms = ChatRooms(client, pictures=True, state_path=state)
    rooms.handle("r", "alice", "new royal-marriage seed 3")
    shown = rooms.handle("r", "alice", "show").text
    key = rooms.handle("r", "alice", "share").text.split("watch ")[1].split()[0]
    rooms.handle("r", "bob", f"watch {key}")
    assert state.stat().st_mode & 0o777 == 0o600
    saved = {(row["room"], row["person"]): row["state"] for row in json.loads(state.read_text())["sessions"]}
    assert set(saved) == {("r", "alice"), ("r", "bob")} and set(saved[("r", "bob")]) == {
        "watch_id",
        "watch_token",
    }

    again = ChatRooms(client, pictures=True, state_path=state)  # the bot restarted
    reply = again.handle("r", "alice", "show")
    assert reply.text == shown and reply.picture is None  # the picture posted before still stands
    assert again.handle("r", "bob", "show").text == shown  # still watching, read-only
    assert again.handle("r", "bob", "x1").text.startswith("You are watching")
    assert again.handle("r", "carol", "show").text.startswith("No game yet")
    rows = json.loads(state.read_text())["sessions"]
    assert {(r["room"], r["person"]) for r in rows} == {("r", "alice"), ("r", "bob")}


def test_the_matrix_bot_says_what_it_lacks_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MATRIX_", "ACCORDION_"))}
    bot = script("accordion-matrix-bot")
    done = subprocess.run(bot, env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert done.returncode == 2 and "--homeserver and --user are needed" in done.stderr
    env |= {"MATRIX_HOMESERVER": "http://127.0.0.1:9", "MATRIX_USER": "@bot:localhost"}
    done = subprocess.run(bot, env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert done.returncode == 1 and "give a password" in done.stderr and "Traceback" not in done.stderr
    version = subprocess.run([*bot, "--version"], capture_output=True, text=True, timeout=60, check=False)
    assert version.stdout.startswith("accordion-matrix-bot (accordion-client ")
