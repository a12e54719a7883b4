"""``accordion play``: the terminal player driven through its input, piped and on a pty."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time

from accordion_client import AccordionClient
from tests.api.helpers import ROOT, ServerProcess

from .conftest import script

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
RED_CARD = re.compile(r"\x1b\[31m(?:10|[2-9AJQK])[♥♦]\x1b\[0m")


def play(
    server: ServerProcess, *args: str, stdin: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*script("accordion"), "play", *args, "--target", server.addr],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_a_piped_session_with_moves_hints_undo_and_bad_input(server: ServerProcess) -> None:
    done = play(server, "accordion", "--seed", "7", stdin="10d>4d\nh\n8d>9d\nqq\nu\nu\nl\ns\n?\n\nq\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert ANSI.search(out) is None  # not a terminal: no colour
    assert out.startswith("New game: accordion (seed 7)\n")
    assert (
        "accordion · move 0 · in progress · 52 piles · penalty 51\n1:4♥  2:5♠  3:J♦" in out
    )  # numbered piles
    assert "move> 10d>4d\nplayed 10D>4D\naccordion · move 1 · in progress · 51 piles" in out
    assert "5:10♦×2" in out
    assert "move> h\nhint: 8D>6D\n" in out
    assert (
        "move> 8d>9d\n8D>9D is not legal: 8♦ can go only onto the pile 1 or 3 to its left; 9♦ is 7 to its "
        "right; legal: 9H>6H, 10S>2S,"
    ) in out  # the service's words, then the legal moves
    assert "move> qq\ncan't read 'qq' (? for help); legal: 9H>6H" in out
    assert "move> u\ntook back 10D>4D\naccordion · move 0" in out
    assert "move> u\nnothing to undo\n" in out
    assert "move> l\nlegal: 10D>4D, 10D>JD, KC>3C," in out
    assert "move> s\npenalty 51 · 52 piles · stock 0 · in progress\n" in out
    assert "u, undo     take back the last move" in out
    assert "R, resign   give the game up (lost; u takes it back)" in out
    assert out.endswith("move> q\nBye.\n")


def test_capital_r_resigns_and_u_takes_it_back(server: ServerProcess) -> None:
    done = play(server, "accordion", "--seed", "7", stdin="R\nR\nu\nq\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "move> R\nyou resigned\naccordion · move 1 · lost · 52 piles · penalty 51\n" in out
    assert "Resigned: 52 piles remain. n for a new game, u to undo, q to quit.\n" in out
    assert (
        "move> R\nresign is not legal: the game is over; legal: none\n" in out
    )  # a second resign is refused
    assert "move> u\ntook back resign\naccordion · move 0 · in progress" in out


def test_colour_marks_hearts_and_diamonds_red(server: ServerProcess) -> None:
    done = play(server, "accordion", "--seed", "7", "--color", "always", stdin="q\n")
    assert done.returncode == 0, done.stderr
    reds = RED_CARD.findall(done.stdout)
    assert len(reds) == 26 and all(c[-1] in "♥♦" for c in ANSI.sub("", " ".join(reds)).split())
    assert "\x1b[1m5♠\x1b[0m" in done.stdout  # black suits in bold, not red
    assert "\x1b[31m" not in "".join(re.findall(r"\x1b\[31m[^\x1b]*[♠♣]", done.stdout))
    plain = play(server, "accordion", "--seed", "7", "--color", "auto", stdin="q\n", env={"NO_COLOR": "1"})
    assert ANSI.search(plain.stdout) is None


def test_a_game_played_to_the_end(server: ServerProcess, client: AccordionClient) -> None:
    # The moves the hints give for this deal, found with the Python client ...
    game = client.new_game("royal-marriage", seed=3)
    moves = []
    while (hint := game.hint()) is not None:
        moves.append(hint.notation)
        game.play(hint)
    assert game.over and moves
    # ... played through the terminal.
    done = play(server, "royal-marriage", "--seed", "3", stdin="\n".join(moves) + "\nh\nq\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\nplayed ") == len(moves)
    ending = (
        "You won! n for a new game"
        if game.status == "won"
        else f"No moves left: {len(game.game.piles)} piles remain."
    )
    assert ending in done.stdout
    assert "hint: no hint: the game is over" not in done.stdout and "no hint: the game is over" in done.stdout


def test_on_a_terminal_colour_is_on_and_input_is_read_interactively(server: ServerProcess) -> None:
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm", "COLUMNS": "100"}
    proc = subprocess.Popen(
        [*script("accordion"), "play", "accordion", "--seed", "7", "--target", server.addr],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    output = b""

    def read_until(marker: bytes, timeout: float = 20) -> None:
        nonlocal output
        end = time.monotonic() + timeout
        while marker not in output:
            left = end - time.monotonic()
            assert left > 0, f"no {marker!r} in {output!r}"
            ready, _, _ = select.select([master], [], [], left)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the child closed the pty
                    break
                output += chunk

    try:
        read_until(b"move> ")
        os.write(master, b"10d>4d\n")
        read_until(b"played 10D>4D")
        os.write(master, b"q\n")
        read_until(b"Bye.")
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    text = output.decode()
    assert RED_CARD.search(text) and "\x1b[32mplayed 10D>4D\x1b[0m" in text
    assert "\x1b[1mmove> \x1b[0m" in text


def test_an_unreachable_service_is_a_clear_error(dead_target: str) -> None:
    done = subprocess.run(
        [*script("accordion"), "play", "--target", dead_target],
        input="q\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    reach = f"accordion: cannot start a game: cannot reach the service at {dead_target} ("
    assert done.stderr.startswith(reach)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr  # one line
    assert "`make serve` starts one" in done.stderr


def test_variants_and_usage(server: ServerProcess) -> None:
    done = subprocess.run(
        [*script("accordion"), "variants", "--target", server.addr],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    ids = [line.split()[0] for line in done.stdout.splitlines()]
    assert ids[0] == "accordion" and "royal-marriage" in ids and len(ids) >= 15
    bad = subprocess.run(
        [*script("accordion"), "play", "-o", "nonsense", "--target", server.addr],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "--option wants name=value" in bad.stderr


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*script("accordion"), *args], capture_output=True, text=True, timeout=60)


def test_version() -> None:
    import accordion_client

    done = run_cli("--version")
    assert done.returncode == 0 and done.stdout == f"accordion {accordion_client.__version__}\n"
    pyproject = (ROOT / "clients" / "python" / "pyproject.toml").read_text()
    assert f'version = "{accordion_client.__version__}"' in pyproject


def test_variants_id_shows_rules_options_defaults_and_threshold(server: ServerProcess) -> None:
    done = run_cli("variants", "accordion", "--target", server.addr)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Accordion (accordion) · stacking · also Accordion Solitaire")
    assert "stack a pile onto the pile 1 or 3 to its left" in " ".join(lines[1:3])
    assert "Won with: 1 pile" in lines
    options = {line.split()[0]: line.split() for line in lines[lines.index("Options (-o NAME=VALUE):") + 1 :]}
    assert set(options) == {"dealing", "compel", "leap", "win_piles", "undo"}
    assert options["dealing"][1:4] == ["all|stock", "default", "all"]
    assert options["win_piles"][1:4] == ["1..52", "default", "1"]
    # by name or alias too; every variant has the undo option (issue 29), push-pin no other
    by_name = run_cli("variants", "Royal Marriage", "--target", f"http://{server.addr}")
    assert by_name.returncode == 0 and "Won with: 2 cards" in by_name.stdout
    assert "suit  spades|hearts|diamonds|clubs  default hearts" in by_name.stdout
    plain = run_cli("variants", "push-pin", "--target", server.addr)
    assert "undo  all|visible|none  default all" in plain.stdout and "Options: none" not in plain.stdout


def test_cli_errors_are_one_line(server: ServerProcess, dead_target: str) -> None:
    unknown = run_cli("variants", "nonsense", "--target", server.addr)
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr.startswith(f"accordion: {server.addr}: unknown variant 'nonsense'")
    assert unknown.stderr.count("\n") == 1
    garbage = run_cli("variants", "--target", "not a target")
    assert garbage.returncode == 2
    assert garbage.stderr.startswith("accordion: not a valid target 'not a target'")
    assert garbage.stderr.count("\n") == 1
    missing = run_cli("play", "--target", server.addr, "--ca-file", "/nonexistent/ca.pem")
    assert missing.returncode == 2 and "No such file" in missing.stderr and "Traceback" not in missing.stderr
    dead = run_cli("variants", "--target", f"http://{dead_target}")
    assert dead.returncode == 1 and dead.stderr.count("\n") == 1
    assert dead.stderr.startswith(f"accordion: cannot reach the service at http://{dead_target} (")
    assert dead.stderr.rstrip().endswith("`make serve` starts one on 127.0.0.1:50051 (or give --target)")
