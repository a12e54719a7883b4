"""The ``accordion`` console script: ``accordion play [variant]`` plays a game in the terminal.

    accordion play                         # Accordion against 127.0.0.1:50051
    accordion play royal-marriage --seed 7 --target https://games.example.com
    accordion play klondike -o draw=1      # a tableau game: 3>7, w>f, draw, redeal
    accordion play --deal-code 7K2M-Q9XD-4HRT-B3VN   # the cards of a shared deal code
    accordion watch GAMEID.WATCHTOKEN      # watch a game live, read-only (a watch key or link)
    accordion variants                     # every variant, one line each
    accordion variants royal-marriage      # one in full: rules, options, win threshold
    accordion --version

A failure (no service at the target, a bad flag) is one line on stderr and a non-zero exit.

At the prompt type a move (``8d>9d``, ``5>4``, ``x7``, ``deal``) or a command: ``h`` hint,
``u`` undo, ``l`` legal moves, ``s`` score, ``R`` resign, ``n`` new game, ``share`` (the deal
code and the watch key: never the token), ``?`` help, ``q`` quit.
Colour (red ♥♦) is on when the output is a terminal; ``--color always|never`` decides
otherwise, and the ``NO_COLOR`` environment variable turns it off.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from typing import TextIO

from . import __version__, errors
from .client import AccordionClient, GameHandle, WatchHandle, parse_watch_key, watch_key
from .flags import add_connection_flags, client_kwargs
from .render import board_lines, legal_summary, paint, status_line, variant_lines
from .style import BOLD, CYAN, GREEN, RED, YELLOW
from .v1 import accordion_pb2 as pb
from .zones import face_down_count, is_tableau

HELP = """\
  a move      8d>9d  5>4  8d  x7  x7-8  deal  redeal  claim 3-5 run 5>3  (see docs/notation.md)
  tableau     3>7  3>7 x4  w>5  5>f  w>f  f2>5  draw  deal  redeal  x3,5   (▒▒: a face-down card)
  h, hint     suggest a move          u, undo     take back the last move
  l, legal    list the legal moves    s, score    penalty, piles, stock
  n, new      deal a new game         r, show     show the row again
  R, resign   give the game up (lost; u takes it back)
  share       the deal code (same cards for anyone) and the watch key (read-only): no token
  ?, help     this help               q, quit     leave (Ctrl-D too)"""
START_A_SERVER = "is the service running? `make serve` starts one on 127.0.0.1:50051 (or give --target)"


def add_connection_args(parser: argparse.ArgumentParser) -> None:
    """The shared connection flags (``flags.add_connection_flags``) and ``--api-key``."""
    add_connection_flags(parser)
    parser.add_argument(
        "--api-key",
        default=os.environ.get("ACCORDION_API_KEY") or None,
        help="sent as x-api-key on every call [ACCORDION_API_KEY]",
    )


def connect(args: argparse.Namespace) -> AccordionClient:
    """A client from the connection flags of ``add_connection_args``.

    Raises ValueError (a bad target, a lone --client-cert) and OSError (an unreadable PEM file).
    """
    return AccordionClient(**client_kwargs(args), api_key=args.api_key)


def failure_line(target: str, exc: errors.AccordionError) -> str:
    """One line for a call that failed; for an unreachable service, with how to start one."""
    if isinstance(exc, errors.Unavailable | errors.DeadlineExceeded) and not exc.reason:
        return f"cannot reach the service at {target} ({exc.message}); {START_A_SERVER}"
    return f"{target}: {exc.message}"


def parse_options(pairs: Sequence[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise argparse.ArgumentTypeError(f"--option wants name=value, not {pair!r}")
        options[key] = value
    return options


class TerminalPlayer:
    """The interactive loop, on any text streams (``input()`` reads ``sys.stdin``)."""

    def __init__(
        self,
        client: AccordionClient,
        variant: str,
        *,
        options: dict[str, str] | None = None,
        seed: int | None = None,
        deal_code: str | None = None,
        colour: bool = False,
        out: TextIO | None = None,
        width: int | None = None,
    ) -> None:
        self.client = client
        self.variant = variant
        self.options = options or {}
        self.seed = seed
        self.deal_code = deal_code  # the first game's cards, from a shared deal code
        self.colour = colour
        self.out = out or sys.stdout
        self.width = width or shutil.get_terminal_size((100, 24)).columns
        self.game: GameHandle | None = None
        self.interactive = sys.stdin.isatty()

    def say(self, text: str = "", style: str = "") -> None:
        print(paint(text, style, self.colour) if style else text, file=self.out, flush=True)

    def run(self) -> int:
        try:
            self.new_game(self.seed)
        except errors.AccordionError as exc:
            print(f"accordion: cannot start a game: {failure_line(self.client.target, exc)}", file=sys.stderr)
            return 1
        self.say("Type a move, h for a hint, u to undo, ? for help, q to quit.")
        self.show()
        while True:
            try:
                line = input(paint("move> ", BOLD, self.colour))
            except (EOFError, KeyboardInterrupt):
                self.say()
                break
            if not self.interactive:  # piped input: echo it, so the transcript reads as a session
                self.say(line)
            if not self.step(line.strip()):
                break
        self.say("Bye.")
        return 0

    def new_game(self, seed: int | None) -> None:
        code, self.deal_code = self.deal_code, None
        if code:
            self.game = self.client.new_game_from_code(code, self.options or None)
            self.say(f"New game: {self.game.game.variant} (deal code {self.game.deal_code or code})", BOLD)
            return
        self.game = self.client.new_game(self.variant, self.options or None, seed=seed)
        g = self.game.game
        self.say(f"New game: {g.variant}" + (f" (seed {g.seed})" if g.HasField("seed") else ""), BOLD)

    def step(self, line: str) -> bool:
        """One line of input; False to quit."""
        assert self.game is not None
        word = line.lower()
        try:
            if word in ("q", "quit", "exit"):
                return False
            if line == "R" or word == "resign":  # (capital R: lower-case r is show)
                self.game.resign()
                self.say("you resigned", YELLOW)
                self.show()
            elif word in ("", "r", "show"):
                self.game.refresh()
                self.show()
            elif word in ("?", "help"):
                self.say(HELP)
            elif word in ("h", "hint"):
                move = self.game.hint()
                self.say(f"hint: {move.notation}" if move else "no hint: the game is over", CYAN)
            elif word in ("u", "undo"):
                undone = self.game.undo()
                self.say(f"took back {undone.notation}", CYAN)
                self.show()
            elif word in ("l", "legal", "moves"):
                self.say("legal: " + legal_summary([m.notation for m in self.game.legal_moves()], limit=60))
            elif word in ("s", "score"):
                s = self.game.score()
                g = self.game.game
                left = f"{face_down_count(g)} face down" if is_tableau(g) else f"{s.piles_left} piles"
                self.say(f"penalty {s.penalty} · {left} · stock {s.stock_size} · {self.game.status}")
            elif word in ("n", "new"):
                self.new_game(None)
                self.show()
            elif word == "share":
                shared = self.game.share()
                self.say(
                    f"deal code: {shared.deal_code}  (accordion play --deal-code {shared.deal_code})", CYAN
                )
                key = watch_key(self.game.id, shared.watch_token)
                self.say(f"watch key: {key}  (accordion watch {key}: read-only)", CYAN)
            else:
                played = self.game.play(line)
                self.say(f"played {played.notation}", GREEN)
                self.show()
        except errors.IllegalMove as exc:
            self.say(f"{exc.why}; legal: {legal_summary(exc.legal_moves)}", YELLOW)  # (the service says why)
        except errors.InvalidMove as exc:
            self.say(f"can't read {line!r} (? for help); legal: {legal_summary(exc.legal_moves)}", YELLOW)
        except errors.NothingToUndo:
            self.say("nothing to undo", YELLOW)
        except errors.VersionMismatch:
            self.say("the game changed elsewhere; reloaded", YELLOW)
            self.game.refresh()
            self.show()
        except errors.UndoNotAllowed as exc:
            self.say(f"can't undo that: {exc.message}", YELLOW)
        except errors.GameNotFound:
            self.say("this game has expired; n deals a new one", RED)
        except errors.AccordionError as exc:
            self.say(f"error ({exc.code.name}): {exc.message}", RED)
        return True

    def show(self) -> None:
        assert self.game is not None
        g = self.game.game
        self.say(f"{g.variant} · move {g.moves_played} · {status_line(g)}", BOLD)
        for line in board_lines(g, width=self.width, colour=self.colour):
            self.say(line)
        if self.game.over:
            if g.status == pb.GAME_STATUS_WON:
                self.say("You won! n for a new game, q to quit.", GREEN)
            else:
                why = "Resigned" if self.game.resigned else "No moves left"
                left = f"penalty {g.penalty}" if is_tableau(g) else f"{len(g.piles)} piles remain"
                self.say(f"{why}: {left}. n for a new game, u to undo, q to quit.", YELLOW)
        else:
            self.say("legal: " + legal_summary(self.game.legal, limit=16), CYAN)


def watch_game(client: AccordionClient, key: str, *, colour: bool, out: TextIO | None = None) -> int:
    """``accordion watch KEY``: the game of a watch key, then each move as it is played, until the
    game ends or the stream does (Ctrl-C leaves). Read-only: nothing here can play."""
    out = out or sys.stdout
    width = shutil.get_terminal_size((100, 24)).columns

    def say(text: str = "", style: str = "") -> None:
        print(paint(text, style, colour) if style else text, file=out, flush=True)

    def show(handle: WatchHandle) -> None:
        g = handle.game
        say(f"{g.variant} · move {g.moves_played} · {status_line(g)}", BOLD)
        for line in board_lines(g, width=width, colour=colour):
            say(line)

    game_id, watch_token = parse_watch_key(key)
    handle = client.spectate(game_id, watch_token)
    say(f"Watching {handle.game.variant}, read-only (Ctrl-C leaves).", BOLD)
    show(handle)
    if handle.over:
        say(f"the game is over ({handle.status})", YELLOW)
        return 0
    for event in handle.watch(after_version=handle.version):
        handle.game = event.game
        verb = "took back" if event.kind == pb.GameEvent.KIND_UNDO else "played"
        say(f"{verb} {event.move.notation}", GREEN)
        show(handle)
        if handle.over:
            say(f"the game is over ({handle.status})", YELLOW)
            break
    return 0


def want_colour(choice: str, stream: TextIO) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def list_variants(client: AccordionClient, variant: str | None) -> None:
    """``accordion variants``: one line each; ``accordion variants ID``: that variant in full."""
    if variant is None:
        for v in client.list_variants():
            print(f"{v.id:20} {v.name} — {v.description}")
        return
    for v in client.list_variants(variant):
        print("\n".join(variant_lines(v, width=shutil.get_terminal_size((100, 24)).columns)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="accordion", description="Accordion patience against the service.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="play a game in this terminal")
    play.add_argument(
        "variant", nargs="?", default="accordion", help="variant id, name or alias (default: %(default)s)"
    )
    start = play.add_mutually_exclusive_group()
    start.add_argument("--seed", type=int, help="deal from this seed (default: a random one)")
    start.add_argument(
        "--deal-code", metavar="CODE", help="deal a shared deal code's cards (its variant and options too)"
    )
    play.add_argument(
        "-o", "--option", action="append", default=[], metavar="NAME=VALUE", help="a variant option"
    )
    play.add_argument("--color", "--colour", choices=("auto", "always", "never"), default="auto")
    add_connection_args(play)
    watching = sub.add_parser("watch", help="watch a game live, read-only, from its watch key")
    watching.add_argument(
        "key", help="the watch key <game id>.<watch token> (share gives it), or a spectator link"
    )
    watching.add_argument("--color", "--colour", choices=("auto", "always", "never"), default="auto")
    add_connection_args(watching)
    listing = sub.add_parser(
        "variants", help="list the variants, or show one's rules, options and win threshold"
    )
    listing.add_argument("variant", nargs="?", help="a variant id, name or alias: show it in full")
    add_connection_args(listing)
    args = parser.parse_args(argv)
    try:
        options = parse_options(getattr(args, "option", []))
        if args.command == "watch":
            parse_watch_key(args.key)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        parser.error(str(exc))
    try:
        client = connect(args)
    except (ValueError, OSError) as exc:
        print(f"accordion: {exc}", file=sys.stderr)
        return 2
    with client:
        try:
            if args.command == "variants":
                list_variants(client, args.variant)
                return 0
            if args.command == "watch":
                return watch_game(client, args.key, colour=want_colour(args.color, sys.stdout))
            player = TerminalPlayer(
                client,
                args.variant,
                options=options,
                seed=args.seed,
                deal_code=args.deal_code,
                colour=want_colour(args.color, sys.stdout),
            )
            return player.run()
        except errors.AccordionError as exc:
            print(f"accordion: {failure_line(args.target, exc)}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 130


if __name__ == "__main__":
    sys.exit(main())
