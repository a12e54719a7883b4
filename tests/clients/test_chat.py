"""The chat adapter against a real server: a transcript of every command and of bad input.

``chat_transcript.txt`` is the conversation: ``> text`` is what the user says, the lines
below it (up to a blank line) the exact reply. Deals come from fixed seeds, so the replies
are the same on every run. After a deliberate change of wording, rewrite the file with
``ACCORDION_REWRITE_TRANSCRIPT=1 pytest tests/clients/test_chat.py`` and read the diff.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from accordion import engine
from accordion.engine.cards import card_text
from accordion_client import AccordionClient, GameHandle, pb
from accordion_client.chat import HELP, ChatSession
from tests.api.helpers import ROOT, ServerProcess

TRANSCRIPT = Path(__file__).with_name("chat_transcript.txt")


def read_transcript(path: Path) -> list[tuple[str, str]]:
    exchanges: list[tuple[str, str]] = []
    for block in path.read_text().split("\n\n"):
        lines = block.strip("\n").split("\n")
        if not lines or not lines[0].startswith(">"):
            continue
        exchanges.append((lines[0][2:], "\n".join(lines[1:])))
    return exchanges


def test_the_transcript_of_every_command_and_bad_input(client: AccordionClient) -> None:
    exchanges = read_transcript(TRANSCRIPT)
    said = [text for text, _ in exchanges]
    for command in ("help", "variants", "rules", "new", "hint", "undo", "resign", "show", "score", "moves"):
        assert any(t.split(" ")[0] == command for t in said), f"the transcript never says {command!r}"
    session = ChatSession(client)
    got = [(text, session.handle(text)) for text in said]
    if os.environ.get("ACCORDION_REWRITE_TRANSCRIPT"):
        TRANSCRIPT.write_text("".join(f"> {t}\n{r}\n\n" for t, r in got))
    for (text, expected), (_, reply) in zip(exchanges, got, strict=True):
        assert reply == expected, f"> {text}"


def test_replies_are_short(client: AccordionClient) -> None:
    for text, reply in read_transcript(TRANSCRIPT):
        lines = reply.split("\n")
        tableau = sum(1 for line in lines if re.match(r"\d+: ", line))
        # A caption, the row in 1-2 lines, the status; a tableau game: the foundations line and one per pile.
        assert len(lines) <= (4 if not tableau else 3 + tableau) and tableau <= 10, text
        assert "Traceback" not in reply and "grpc" not in reply.lower()


def test_a_game_played_to_its_end(client: AccordionClient) -> None:
    session = ChatSession(client, variant="royal-marriage")
    assert session.handle("new seed 3").startswith("New game of Royal Marriage.")
    reply = ""
    for _ in range(60):
        hint = session.handle("hint")
        if hint.startswith("No hint"):
            break
        reply = session.handle(hint.removeprefix("Hint: "))
        assert reply.startswith("Played ")
    else:
        pytest.fail("the game did not end in 60 hinted moves")
    assert session.game is not None and session.game.over
    assert reply.endswith("Type new to play again.")
    assert ("You won!" in reply) == (session.game.status == "won")
    assert hint == f"No hint: the game is over ({session.game.status}). Type new to play again."
    assert session.handle("x1").startswith(f"The game is over ({session.game.status}).")
    assert session.handle("undo").startswith("Took back ")  # undo still works after the end


def test_server_failures_become_plain_sentences(client: AccordionClient, dead_target: str) -> None:
    session = ChatSession(client)
    session.handle("new accordion seed 7")
    assert session.game is not None
    session.game = GameHandle(client, pb.Game(id="A" * 22, version=1), session.game.token)
    assert (
        session.handle("show")
        == "That game is gone (it expired or was never there). Type new to deal another."
    )
    assert session.game is None

    real = client.new_game(seed=7)
    session.game = GameHandle(client, real.game, "wrong-token")  # answered as an unknown game
    assert (
        session.handle("10D>4D")
        == "That game is gone (it expired or was never there). Type new to deal another."
    )

    with AccordionClient(dead_target, retries=0) as dead:
        assert (
            ChatSession(dead).handle("new")
            == "The game service is not answering right now; try again in a moment."
        )


def test_a_move_made_elsewhere_is_caught_up(client: AccordionClient) -> None:
    session = ChatSession(client)
    session.handle("new accordion seed 7")
    assert session.game is not None
    other = client.open_game(session.game.id, session.game.token)
    other.play("10D>4D")
    reply = session.handle("9H>6H")
    assert reply.startswith("The game changed elsewhere; here it is now. Try again.")
    assert "51 piles" in reply and session.handle("9H>6H").startswith("Played 9H>6H.")


def test_the_example_bot_on_stdin_and_stdout(server: ServerProcess) -> None:
    lines = (
        "help\nalice: new royal-marriage seed 7\nbob: new accordion seed 7\nalice: x7\nbob: hint\nbob: qq\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "clients" / "python" / "examples" / "chat_bot.py"),
            "--target",
            server.addr,
        ],
        input=lines,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    replies = [r for r in done.stdout.split("\n\n") if r.strip()]
    assert replies[0] == "Accordion bot ready: say help.\n" + HELP
    assert replies[1].startswith("@alice New game of Royal Marriage.")
    assert replies[2].startswith("@bob New game of Accordion.")
    assert replies[3].startswith("@alice Played x7.\n       1:Q♥ 2:J♥ 3:4♥")  # alice's game, not bob's
    assert replies[4] == "@bob Hint: AC>AD"
    assert replies[5].startswith("@bob I can't read 'qq' as a move or a command. Legal now: 10D>4D")


def test_the_example_bot_posts_a_picture_when_the_position_changed(
    server: ServerProcess, tmp_path: Path
) -> None:
    """Issues 15 and 33: the chat example posts the layout's picture, SVG and PNG (the PNG at the
    SVG's size), when the position changed, not again for help or a hint; a stock game's picture
    names no card of the stock."""
    lines = "alice: new accordion-stock seed 7\nalice: deal\nalice: help\nalice: hint\n"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "clients" / "python" / "examples" / "chat_bot.py"),
            "--target",
            server.addr,
            "--pictures",
            str(tmp_path),
        ],
        input=lines,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    posted = [line for line in done.stdout.splitlines() if line.startswith("@alice [picture: ")]
    files = sorted(tmp_path.glob("alice-*.svg"))
    assert len(posted) == 2 and len(files) == 2  # the new game, the deal; not help, not hint
    for path in files:
        svg = path.read_text()
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")
        png = path.with_suffix(".png").read_bytes()
        with Image.open(io.BytesIO(png)) as image:
            image.load()  # decodes every pixel
            assert image.format == "PNG" and image.size == (
                int(root.get("width", "0")),
                int(root.get("height", "0")),
            )
        assert f"{path.with_suffix('.png')} (image/png), {path} (image/svg+xml)" in "\n".join(posted)
    game = engine.new_game("accordion-stock", seed=7)
    hidden = [card_text(c, symbols=True) for c in game.state.stock[1:]]  # still in the stock after one deal
    after_deal = next(path.read_text() for path in files if path.name.endswith("-v2.svg"))
    assert [c for c in hidden if c in after_deal] == [], "a stock card is named in the picture"
    shown = card_text(game.state.stock[0], symbols=True)  # the card the DEAL turned up
    assert shown in after_deal


def test_the_readme_chat_example_prints_what_the_readme_shows(server: ServerProcess) -> None:
    readme = (ROOT / "docs" / "chat.md").read_text()  # the section the README once held
    section = readme.split("## Chat adapter", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    shown = section.split("```text\n", 1)[1].split("```", 1)[0]
    done = subprocess.run(
        [sys.executable, "-c", code.replace("127.0.0.1:50051", server.addr)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown


def test_the_readme_chat_bot_command(server: ServerProcess) -> None:
    readme = (ROOT / "docs" / "chat.md").read_text()  # the section the README once held
    section = readme.split("## Chat adapter", 1)[1].split("\n## ", 1)[0]
    command = section.split("```sh\n", 1)[1].split("```", 1)[0].replace("127.0.0.1:50051", server.addr)
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "@alice Played x7." in done.stdout and "@bob Hint: " in done.stdout


def test_rules_and_help_for_one_command(client: AccordionClient) -> None:
    session = ChatSession(client, variant="cribbage-solitaire")
    rules = session.handle("rules").split("\n")  # no game: the session's variant
    assert rules[0].startswith("Cribbage Solitaire: Deal one card at a time")
    assert rules[1:] == ["Won with: 61 points.", "Options: undo=all|visible|none (default all)."]
    session.handle("new accordion-stock seed 7")
    assert session.handle("/rules").startswith("Accordion (dealt one by one): ")  # the game's variant
    assert "dealing=all|stock (default stock)" in session.handle("rules")
    assert session.handle("rules tower of babel").startswith("Accordion: All 52 cards")  # an alias
    for command in ("new", "hint", "undo", "show", "score", "moves", "variants", "rules", "help", "move"):
        assert session.handle(f"help {command}") != HELP, command
    assert session.handle("help board") == session.handle("help show")
    assert session.handle("help").startswith("Commands:") and "rules [variant]" in HELP
