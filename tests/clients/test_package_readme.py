"""The client package's own README (the wheel's description) promises only what the wheel holds,
and its examples run against a real server as written."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.api.helpers import ROOT, ServerProcess

PACKAGE = ROOT / "clients" / "python"
README = (PACKAGE / "README.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def test_the_readme_examples_run_and_print_what_they_say(server: ServerProcess) -> None:
    client_example, chat_example = blocks("python")
    done = subprocess.run(
        [sys.executable, "-c", client_example.replace("127.0.0.1:50051", server.addr)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = re.findall(r"# prints: (.*)", client_example)
    assert len(expected) == 3 and done.stdout.splitlines() == expected
    chat = subprocess.run(
        [sys.executable, "-c", chat_example.replace("127.0.0.1:50051", server.addr)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert chat.returncode == 0, chat.stderr
    assert "New game of Royal Marriage." in chat.stdout and "Played x7." in chat.stdout
    assert "Won with: 2 cards." in chat.stdout
    assert chat.stdout.rstrip().endswith("hint: a move worth playing, from what you can see.")


def test_the_readme_points_at_nothing_outside_the_package() -> None:
    # No repository paths (examples/, the repository's README, docs/): the wheel has none of them.
    for pointer in ("examples/", "locustfile", "repository's README", "docs/", "make "):
        assert pointer not in README, pointer
    for command in ("accordion play", "accordion variants", "accordion --version"):
        assert command in README
    assert "`accordion-load`" in README and "LICENSE" in README
