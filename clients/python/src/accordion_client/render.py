"""Text for people: the row with numbered piles, in plain text (chat) or ANSI colour (terminal).

A tableau game (``Game.zones`` not empty) is drawn by zones.py instead: its zones line by line."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from .client import STATUS_NAMES
from .style import BOLD, DIM, RED, RED_SUITS, RESET
from .v1 import accordion_pb2 as pb
from .zones import is_tableau, tableau_lines, tableau_status


def split_text(text: str) -> tuple[str, list[str]]:
    """``Game.text`` as (the row, the words after it): ``"1:8♦ 2:K♣×3 | stock 30"`` → row, ["stock 30"]."""
    row, *rest = text.split(" | ")
    return row, rest


def wrap_tokens(tokens: Sequence[str], lines: int) -> list[str]:
    """Tokens in at most ``lines`` lines of about equal length (break only between tokens)."""
    if lines <= 1 or len(tokens) <= 1:
        return [" ".join(tokens)]
    size = -(-len(tokens) // lines)
    return [" ".join(tokens[i : i + size]) for i in range(0, len(tokens), size)]


def row_lines(game: pb.Game, *, width: int = 90, max_lines: int = 2) -> list[str]:
    """The row from ``Game.text`` in one line, or in up to ``max_lines`` when longer than ``width``.

    A tableau game: its zones, one line each (``zones.tableau_lines``)."""
    if is_tableau(game):
        return tableau_lines(game)
    row, _ = split_text(game.text)
    if len(row) <= width:
        return [row]
    needed = min(max_lines, -(-len(row) // width))
    return wrap_tokens(row.split(" "), needed)


def status_line(game: pb.Game) -> str:
    """``in progress · 51 piles · stock 3 · penalty 50`` and the game's extras."""
    if is_tableau(game):
        return tableau_status(game, STATUS_NAMES.get(game.status, "unknown"))
    parts = [STATUS_NAMES.get(game.status, "unknown"), _piles(len(game.piles))]
    _, rest = split_text(game.text)
    parts.extend(rest)  # "stock 30", "score 12", "redeal available", "goal 7♥" ...
    if not any(p.startswith("stock") for p in rest) and game.stock_size:
        parts.append(f"stock {game.stock_size}")
    parts.append(f"penalty {game.penalty}")
    return " · ".join(parts)


def legal_summary(moves: Sequence[str], limit: int = 12) -> str:
    """``10D>4D, 10D>JD, deal`` — at most ``limit``, then ``… (+N more)``; ``none`` when empty."""
    if not moves:
        return "none"
    shown = ", ".join(moves[:limit])
    return shown if len(moves) <= limit else f"{shown} … (+{len(moves) - limit} more)"


def _piles(n: int) -> str:
    return f"{n} pile" if n == 1 else f"{n} piles"


# --- terminal ------------------------------------------------------------------------------


def pile_token(index: int, pile: pb.Pile, colour: bool) -> tuple[str, int]:
    """``12:K♣×3`` (coloured when asked) and its visible width."""
    if not pile.cards:
        plain = f"{index}:-"
        return plain, len(plain)
    top = pile.cards[-1]
    count = f"×{len(pile.cards)}" if len(pile.cards) > 1 else ""
    plain = f"{index}:{top.text}{count}"
    if not colour:
        return plain, len(plain)
    card = f"{RED}{top.text}{RESET}" if top.suit in RED_SUITS else f"{BOLD}{top.text}{RESET}"
    tail = f"{DIM}{count}{RESET}" if count else ""
    return f"{DIM}{index}:{RESET}{card}{tail}", len(plain)


def board_lines(game: pb.Game, *, width: int = 80, colour: bool = False) -> list[str]:
    """The row for a terminal: numbered piles wrapped at ``width``, red ♥♦ when ``colour``.

    A tableau game: its zones, one line each (``zones.tableau_lines``)."""
    if is_tableau(game):
        return tableau_lines(game, colour=colour)
    lines: list[str] = []
    line, used = "", 0
    for i, pile in enumerate(game.piles, start=1):
        token, size = pile_token(i, pile, colour)
        if used and used + 2 + size > width:
            lines.append(line)
            line, used = "", 0
        line, used = (f"{line}  {token}", used + 2 + size) if used else (token, size)
    if line or not lines:
        lines.append(line or "(no piles)")
    return lines


def paint(text: str, style: str, colour: bool) -> str:
    return f"{style}{text}{RESET}" if colour else text


def option_values(option: pb.VariantOption) -> str:
    """An option's allowed values as one text: ``all|stock``, ``1..52``."""
    return "|".join(option.allowed_values) or "any"


def variant_lines(variant: pb.Variant, *, width: int = 100) -> list[str]:
    """A variant in full, for a terminal: name, rules summary, win threshold, options with defaults."""
    aliases = f" · also {', '.join(variant.aliases)}" if variant.aliases else ""
    lines = [f"{variant.name} ({variant.id}) · {variant.family}{aliases}"]
    lines += textwrap.wrap(variant.description, width) or [""]
    lines.append(f"Won with: {variant.win_threshold}")
    if not variant.options:
        lines.append("Options: none")
        return lines
    lines.append("Options (-o NAME=VALUE):")
    name_width = max(len(o.name) for o in variant.options)
    values_width = max(len(option_values(o)) for o in variant.options)
    default_width = max(len(o.default_value) for o in variant.options)
    for o in variant.options:
        head = (
            f"  {o.name:<{name_width}}  {option_values(o):<{values_width}}"
            f"  default {o.default_value:<{default_width}}"
        )
        lines.append(f"{head}  {o.description}" if o.description else head)
    return lines


def variant_summary(variant: pb.Variant) -> list[str]:
    """A variant in three short lines, for a chat: rules summary, win threshold, options."""
    options = ", ".join(f"{o.name}={option_values(o)} (default {o.default_value})" for o in variant.options)
    return [
        f"{variant.name}: {variant.description}",
        f"Won with: {variant.win_threshold}.",
        f"Options: {options}." if options else "Options: none.",
    ]
