"""A chat adapter with no transport: text in, short text out, one game per session.

    session = ChatSession(AccordionClient("127.0.0.1:50051"))
    session.handle("new royal-marriage")   # -> the row and the status
    session.handle("x7")                   # -> the move, the row, the status
    session.handle("8d>9d")                # -> "8D>9D is not legal: 8♦ can go only onto … Legal: x2, …"

A chat platform keeps one ``ChatSession`` per conversation (or per user) and sends each
message's text to ``handle``; the reply is plain text of a few short lines, with suit symbols
and numbered piles. Commands (a leading ``/`` is ignored, so ``/hint`` works too):

    new [variant] [seed N] [option=value ...]   deal a game (default: the session's variant)
    <move>                                     8d>9d, 5>4, x7, x7-8, deal, redeal, claim 3-5 run 5>3;
                                               tableau games: 3>7, 3>7 x4, w>5, 5>f, f2>5, draw, x3,5
    hint · undo · resign · show · score · moves · variants · rules [variant] · help [command]
    share                                      this game's deal code and watch key (no token)
    play CODE                                  deal a deal code's cards: a new game of your own
    watch KEY · unwatch                        watch someone's game, read-only (show refreshes it)

Sharing never posts the game's token: the deal code deals the same cards to anyone (hidden
cards still hidden), and the watch key (``<game id>.<watch token>``) can read the game and
never play it.
"""

from __future__ import annotations

from collections.abc import Callable

from . import errors
from .client import STATUS_NAMES, AccordionClient, GameHandle, WatchHandle, parse_watch_key, watch_key
from .render import legal_summary, row_lines, status_line, variant_summary
from .v1 import accordion_pb2 as pb
from .zones import face_down_count, is_tableau

HELP = (
    "Commands: new [variant] [seed N] [option=value] · a move (8d>9d, 5>4, x7, deal; 3>7, w>f, draw) · "
    "hint · undo · resign · show · score · moves · variants · rules [variant] · share · play CODE · "
    "watch KEY · help [command|tableau]"
)
# ``help <command>``: one line each (aliases point at the same line).
COMMAND_HELP = {
    "new": "new [variant] [seed N] [option=value ...]: deal a game, e.g. new royal-marriage seed 7 "
    "or new accordion dealing=stock (rules <variant> lists its options).",
    "move": "A move in notation: 8d>9d or 5>4 stacks a pile, x7 or x7-8 removes cards, "
    "deal, redeal, claim 3-5 run 5>3; moves lists the legal ones.",
    "tableau": "Tableau games (klondike, spider, …): 3>7 moves pile 3's run onto pile 7 (3>7 x4: "
    "four cards), w>5 the waste's top card, 5>f or w>f to the foundations, f2>5 back from "
    "foundation 2, draw turns the stock, deal (Spider), redeal (Klondike), x3,5 pairs two tops "
    "(Wish). ▒▒ is a face-down card.",
    "hint": "hint: a move worth playing, from what you can see.",
    "undo": "undo: takes back the last move.",
    "resign": "resign: give the game up; it ends lost and its penalty stands (undo takes it back).",
    "show": "show: the row again, as the service has it now.",
    "score": "score: the penalty (cards left to win, fewer is better), the piles left, the stock.",
    "moves": "moves: every legal move now.",
    "variants": "variants: the games the service deals.",
    "rules": "rules [variant]: a variant's rules, how it is won and its options (default: this game's).",
    "help": "help [command]: the commands, or one in detail.",
    "share": "share: this game's deal code (play CODE deals its cards to anyone, hidden cards still "
    "hidden) and its watch key (watch KEY follows it, read-only). Your token is never posted.",
    "play": "play CODE: a new game of your own with a deal code's cards (from share), e.g. "
    "play 7K2M-Q9XD-4HRT-B3VN.",
    "watch": "watch KEY: watch a game from its watch key (from share), read-only; show refreshes it, "
    "unwatch stops.",
    "unwatch": "unwatch: stop watching and go back to your own game, if any.",
}
COMMAND_ALIASES = {
    "start": "new",
    "board": "show",
    "legal": "moves",
    "?": "help",
    "notation": "move",
    **dict.fromkeys(("draw", "deal", "redeal", "klondike", "spider", "wish", "emperor", "zones"), "tableau"),
}
NO_GAME = "No game yet: type new (or new royal-marriage) to deal one."
Command = Callable[["ChatSession", list[str]], str]


class ChatSession:
    """One conversation's game. ``handle(text)`` never raises for a user's text or a server error.

    Args:
        client: a connected ``AccordionClient``.
        variant: the variant ``new`` deals when none is named.
        width: the row is broken in two lines when longer than this.
    """

    def __init__(self, client: AccordionClient, *, variant: str = "accordion", width: int = 90) -> None:
        self.client = client
        self.variant = variant
        self.width = width
        self.game: GameHandle | None = None
        self.watching: WatchHandle | None = None  # a game watched with a watch key (read-only)
        self._known_variants: list[pb.Variant] = []
        self.unavailable = False  # the last message's answer was "the service is not answering"

    @property
    def shown(self) -> WatchHandle | None:
        """The game this conversation is looking at: the one watched, else its own."""
        return self.watching if self.watching is not None else self.game

    def handle(self, text: str) -> str:
        self.unavailable = False
        words = text.strip().split()
        if not words:
            return "Say a move (like 8d>9d) or a command; help lists them."
        name = words[0].lower().lstrip("/")
        command = COMMANDS.get(name)
        try:
            if command is not None:
                return command(self, words[1:])
            return self._move(text.strip())
        except _NoGame:
            return NO_GAME
        except _Watching:
            return WATCHING
        except errors.GameNotFound:
            self.game = None
            return "That game is gone (it expired or was never there). Type new to deal another."
        except errors.RateLimited as exc:
            wait = f" in {exc.retry_delay:.1f} s" if exc.retry_delay is not None else " in a moment"
            return f"Too many requests for now; try again{wait}."
        except (errors.Unavailable, errors.DeadlineExceeded, errors.ResourceExhausted):
            self.unavailable = True  # a bot may say so and try again later
            return "The game service is not answering right now; try again in a moment."
        except (errors.Unauthenticated, errors.PermissionDenied):
            self.game = None
            return "This game's token was refused. Type new to deal another."
        except errors.AccordionError as exc:
            return f"Sorry, that failed: {exc.message}"

    # --- commands -----------------------------------------------------------------------
    def _new(self, args: list[str]) -> str:
        seed: int | None = None
        options: dict[str, str] = {}
        names: list[str] = []
        i = 0
        while i < len(args):
            word = args[i]
            if word.lower() == "seed" and i + 1 < len(args):
                if not args[i + 1].isdigit():
                    return f"A seed is a whole number, not {args[i + 1]!r}. Example: new accordion seed 7"
                seed = int(args[i + 1])
                i += 2
                continue
            if "=" in word:
                key, _, value = word.partition("=")
                options[key] = value
            elif word.startswith("#") and word[1:].isdigit():
                seed = int(word[1:])
            else:
                names.append(word)
            i += 1
        variant = " ".join(names) or self.variant
        try:
            game = self.client.new_game(variant, options or None, seed=seed)
        except errors.UnknownVariant:
            known = ", ".join(v.id for v in self.variants())
            return f"I don't know the variant {variant!r}. Variants: {known}."
        except errors.InvalidArgument as exc:
            return f"Can't deal that: {exc.message}"
        self.game = game
        self.watching = None
        name = next((v.name for v in self.variants() if v.id == game.game.variant), game.game.variant)
        return "\n".join([f"New game of {name}. Type a move, or hint.", *self._board()])

    def _play_code(self, args: list[str]) -> str:
        if not args:
            return "play CODE deals a deal code's cards, e.g. play 7K2M-Q9XD-4HRT-B3VN (share gives one)."
        code = "".join(args)
        try:
            game = self.client.new_game_from_code(code)
        except errors.DealCodeNotFound:
            return f"I don't know the deal code {code!r} (mistyped, or it expired)."
        except errors.InvalidArgument as exc:
            return f"Can't deal that code: {exc.message}"
        self.game = game
        self.watching = None
        name = next((v.name for v in self.variants() if v.id == game.game.variant), game.game.variant)
        return "\n".join(
            [f"New game of {name} from deal code {game.deal_code or code}. Type a move.", *self._board()]
        )

    def _share(self, args: list[str]) -> str:
        game = self._require_player()
        shared = game.share()
        key = watch_key(game.id, shared.watch_token)
        return (
            f"Deal code {shared.deal_code}: play {shared.deal_code} deals these cards to anyone "
            f"(hidden cards stay hidden).\nWatch key {key}: watch {key} follows this game, read-only."
        )

    def _watch(self, args: list[str]) -> str:
        try:
            game_id, watch_token = parse_watch_key("".join(args))
        except ValueError:
            return (
                "watch KEY follows a game, read-only: the key is <game id>.<watch token> (share gives one)."
            )
        try:
            self.watching = self.client.spectate(game_id, watch_token)
        except errors.GameNotFound:
            return "That watch key does not open a game (mistyped, rotated, or the game expired)."
        return "\n".join(["Watching, read-only: show refreshes it, unwatch stops.", *self._board()])

    def _unwatch(self, args: list[str]) -> str:
        if self.watching is None:
            return "You are not watching a game."
        self.watching = None
        if self.game is None:
            return "Stopped watching. Type new to deal a game."
        return "\n".join(["Stopped watching; your game:", *self._board()])

    def _hint(self, args: list[str]) -> str:
        game = self._require_player()
        move = game.hint()
        if move is None:
            return f"No hint: the game is over ({game.status}). Type new to play again."
        return f"Hint: {move.notation}"

    def _undo(self, args: list[str]) -> str:
        game = self._require_player()
        try:
            move = game.undo()
        except errors.NothingToUndo:
            return "Nothing to undo: no move has been played."
        except errors.VersionMismatch:
            game.refresh()
            return "\n".join(
                ["The game changed elsewhere; here it is now (undo again if you meant it).", *self._board()]
            )
        return "\n".join([f"Took back {move.notation}.", *self._board()])

    def _resign(self, args: list[str]) -> str:
        game = self._require_player()
        if game.over:
            return f"The game is over already ({game.status}). Type new to play again."
        try:
            game.resign()
        except errors.VersionMismatch:
            game.refresh()
            return "\n".join(
                ["The game changed elsewhere; here it is now (resign again if you meant it).", *self._board()]
            )
        return "\n".join(["You resigned.", *self._board()])

    def _show(self, args: list[str]) -> str:
        game = self._require()
        game.refresh()
        return "\n".join(self._board())

    def _score(self, args: list[str]) -> str:
        game = self._require()
        s = game.score()
        # A tableau game's piles stay; what is left to uncover is its face-down cards.
        left = (
            f"{face_down_count(game.game)} face down"
            if is_tableau(game.game)
            else f"{s.piles_left} piles left"
        )
        parts = [f"Penalty {s.penalty}", left]
        if s.stock_size:
            parts.append(f"stock {s.stock_size}")
        if s.cribbage_points or game.game.variant == "cribbage-solitaire":
            parts.append(f"{s.cribbage_points} points")
        parts.append(STATUS_NAMES.get(s.status, "unknown"))
        return " · ".join(parts)

    def _moves(self, args: list[str]) -> str:
        game = self._require()
        moves = [m.notation for m in game.legal_moves()]
        return f"Legal now: {legal_summary(moves, limit=30)}"

    def _variants(self, args: list[str]) -> str:
        ids = ", ".join(v.id for v in self.variants())
        return f"Variants: {ids}. Deal one with new <variant>."

    def _rules(self, args: list[str]) -> str:
        name = " ".join(args) or (self.game.game.variant if self.game is not None else self.variant)
        try:
            found = self.client.list_variants(name)
        except errors.UnknownVariant:
            found = []
        if not found:
            known = ", ".join(v.id for v in self.variants())
            return f"I don't know the variant {name!r}. Variants: {known}."
        return "\n".join(variant_summary(found[0]))

    def _help(self, args: list[str]) -> str:
        if not args:
            return HELP
        name = args[0].lower().lstrip("/")
        topic = COMMAND_ALIASES.get(name, name)
        if topic not in COMMAND_HELP:
            return f"There is no command {args[0]!r}. {HELP}"
        return COMMAND_HELP[topic]

    def _move(self, text: str) -> str:
        if self.watching is not None:
            return WATCHING
        if self.game is None:
            return f"I don't know {text!r}. {NO_GAME} (help lists the commands)"
        game = self.game
        if game.over:
            return f"The game is over ({game.status}). Type new to play again, or undo."
        try:
            move = game.play(text)
        except errors.IllegalMove as exc:
            return f"{exc.why}. Legal: {legal_summary(exc.legal_moves)}"  # (the service says why)
        except errors.InvalidMove as exc:
            return (
                f"I can't read {text!r} as a move or a command. Legal now: "
                f"{legal_summary(exc.legal_moves)} (help lists the commands)"
            )
        except errors.VersionMismatch:
            game.refresh()
            return "\n".join(["The game changed elsewhere; here it is now. Try again.", *self._board()])
        return "\n".join([f"Played {move.notation}.", *self._board()])

    # --- helpers ----------------------------------------------------------------------------
    def variants(self) -> list[pb.Variant]:
        """The service's variants (asked once per session)."""
        if not self._known_variants:
            self._known_variants = self.client.list_variants()
        return self._known_variants

    def _require(self) -> WatchHandle:
        """The game shown (watched, or the player's own) for the reading commands."""
        shown = self.shown
        if shown is None:
            raise _NoGame
        return shown

    def _require_player(self) -> GameHandle:
        """The player's own game, for the commands that change it or need its token."""
        if self.watching is not None:
            raise _Watching
        if self.game is None:
            raise _NoGame
        return self.game

    def _board(self) -> list[str]:
        shown = self.shown
        assert shown is not None
        game = shown.game
        lines = row_lines(game, width=self.width)
        if shown.over:
            if self.watching is not None:
                verdict = f"Game over ({shown.status})."
                lines.append(f"{verdict} {status_line(game)}.")
                return lines
            if shown.status == "won":
                verdict = "You won!"
            else:
                verdict = "Resigned: game over." if shown.resigned else "No moves left: game over."
            lines.append(f"{verdict} {status_line(game)}. Type new to play again.")
        else:
            lines.append(status_line(game))
        return lines


WATCHING = (
    "You are watching this game, read-only: unwatch goes back to your own (new or play CODE deals one)."
)


class _NoGame(Exception):
    """A command that needs a game, before any."""


class _Watching(Exception):
    """A command that needs the player's own game, while watching another."""


COMMANDS: dict[str, Command] = {
    "new": ChatSession._new,
    "start": ChatSession._new,
    "hint": ChatSession._hint,
    "undo": ChatSession._undo,
    "resign": ChatSession._resign,
    "show": ChatSession._show,
    "board": ChatSession._show,
    "score": ChatSession._score,
    "moves": ChatSession._moves,
    "legal": ChatSession._moves,
    "variants": ChatSession._variants,
    "rules": ChatSession._rules,
    "help": ChatSession._help,
    "?": ChatSession._help,
    "share": ChatSession._share,
    "play": ChatSession._play_code,
    "watch": ChatSession._watch,
    "unwatch": ChatSession._unwatch,
}
