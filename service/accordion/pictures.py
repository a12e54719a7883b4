"""Pictures of a layout: one SVG renderer for the web page, chat bots and GetGamePicture.

It draws what the player sees and nothing else: its only input is the ``accordion.v1.Game``
message the service already sends the player, so a hidden card (the stock's order, a face-down
card) cannot reach the picture: it is not in the input. Face-down cards and the stock are drawn
as card backs with their counts, never named.

The picture is built of zones (``Layout``: named zones of piles, each pile with a count of
face-down cards under its face-up ones, plus the stock). A row game is one zone, the row, plus a
stock; a row pile is drawn as its top card with the pile's size. A tableau game draws the
message's ``zones``: the foundations (top card and size), the tableau (fanned down: a back for
each face-down card, then the face-up cards), the waste (top card and size) and the stock (backs
and its count). In a game dealt ``open`` the message names the face-down cards; they are drawn
as faces of a paler kind (``card face open-down``) where the backs would be, and the stock's
next card shows on it.

Above each pile is its name as moves write it (``3``, ``f2``, ``w``: ``pile_number``), so a chat
player can read a move off the picture.

The SVG carries hooks for the web page, which shows it inline and makes it clickable:
``<g class="pile" data-zone="row" data-pile="3">`` per pile (1-based, as in the notation),
``<g class="stock" data-zone="stock">`` for the stock. No script, no external reference: the
file is safe to post anywhere as an image.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from accordion.v1 import accordion_pb2 as pb

CONTENT_TYPE = "image/svg+xml"

CARD_W, CARD_H = 60, 84
GAP = 10  # between piles
MARGIN = 16
HEADER_H = 34  # the title line
ZONE_LABEL_H = 18
NUMBER_H = 14  # a line of pile numbers above each line of piles (moves name piles by number)
ROW_COLUMNS = 13  # a row of up to 52 piles wraps after 13 (a deck's suit length)
FAN_DOWN = 10  # vertical offset between face-down cards of a tableau pile
FAN_UP = 22  # ... and between face-up cards
RED_SUITS: frozenset[int] = frozenset({pb.SUIT_HEARTS, pb.SUIT_DIAMONDS})
SUIT_SYMBOL: dict[int, str] = {
    pb.SUIT_SPADES: "♠",
    pb.SUIT_HEARTS: "♥",
    pb.SUIT_DIAMONDS: "♦",
    pb.SUIT_CLUBS: "♣",
}
RANK_TEXT = {1: "A", 11: "J", 12: "Q", 13: "K"}
STATUS_TEXT: dict[int, str] = {
    pb.GAME_STATUS_IN_PROGRESS: "in progress",
    pb.GAME_STATUS_WON: "won",
    pb.GAME_STATUS_LOST: "lost",
}

STYLE = """
.bg{fill:#0b6b3a}
.title{font:600 16px sans-serif;fill:#fff}
.label{font:12px sans-serif;fill:#d8efe0}
.card{stroke:#333;stroke-width:1}
.face{fill:#fff}
.back{fill:#2452a4}
.back-inner{fill:none;stroke:#9db7e8;stroke-width:2}
.slot{fill:none;stroke:#d8efe0;stroke-width:1.5;stroke-dasharray:4 3}
.rank{font:700 18px sans-serif}
.pip{font:28px sans-serif}
.red{fill:#c8102e}
.black{fill:#111}
.count{font:700 12px sans-serif;fill:#fff}
.count-bg{fill:#000;fill-opacity:.55}
.open-down{fill:#dfe6f3}
.pile-number{font:700 12px sans-serif;fill:#fff}
"""


@dataclass(frozen=True)
class CardFace:
    """A face-up card: what is printed on it."""

    rank: int  # 1 (ace) .. 13 (king)
    suit: int  # pb.Suit

    @property
    def label(self) -> str:
        return f"{RANK_TEXT.get(self.rank, str(self.rank))}{SUIT_SYMBOL.get(self.suit, '?')}"

    @property
    def red(self) -> bool:
        return self.suit in RED_SUITS


@dataclass(frozen=True)
class PileView:
    """A pile as seen: ``face_down`` backs under the face-up ``cards`` (bottom to top)."""

    cards: tuple[CardFace, ...]
    face_down: int = 0
    shown_down: tuple[CardFace, ...] = ()  # the face-down cards themselves: only in a game dealt open

    @property
    def size(self) -> int:
        return self.face_down + len(self.cards)


@dataclass(frozen=True)
class Zone:
    """Piles drawn together: ``row`` (top card and size), ``tableau`` (fanned down),
    ``foundations`` or ``waste`` (top card and size)."""

    name: str
    piles: tuple[PileView, ...]
    fanned: bool = False


@dataclass(frozen=True)
class Layout:
    title: str
    zones: tuple[Zone, ...]
    stock: int | None  # cards left in the stock; None when the game has none
    words: tuple[str, ...] = ()  # status, penalty, extras
    stock_next: CardFace | None = None  # the stock's next card: only in a game dealt open


def _faces(cards: Iterable[pb.Card]) -> tuple[CardFace, ...]:
    return tuple(CardFace(c.rank, c.suit) for c in cards)


# How each zone of a tableau game is drawn, in the picture's order (the stock comes last, apart).
_ZONE_DRAWING = (
    (pb.ZONE_KIND_FOUNDATION, "foundation", False),
    (pb.ZONE_KIND_TABLEAU, "tableau", True),
    (pb.ZONE_KIND_WASTE, "waste", False),
)


def _zones_of(game: pb.Game) -> tuple[tuple[Zone, ...], int | None, CardFace | None]:
    """The drawn zones of a tableau game's message, its stock's size and (open games) next card."""
    by_kind = {z.kind: z for z in game.zones}
    zones = tuple(
        Zone(
            name,
            tuple(
                PileView(_faces(p.cards), p.face_down, _faces(p.face_down_cards)) for p in by_kind[kind].piles
            ),
            fanned,
        )
        for kind, name, fanned in _ZONE_DRAWING
        if kind in by_kind
    )
    stock = by_kind.get(pb.ZONE_KIND_STOCK)
    if stock is None or not stock.piles:
        return zones, None, None
    pile = stock.piles[0]
    upcoming = _faces(pile.face_down_cards)
    return zones, pile.face_down + len(pile.cards), upcoming[0] if upcoming else None


def layout_of(game: pb.Game) -> Layout:
    """The visible layout of a game message. Row games: one ``row`` zone and the stock;
    tableau games: their zones."""
    if game.zones:
        zones, stock, stock_next = _zones_of(game)
    else:
        zones = (Zone("row", tuple(PileView(_faces(p.cards)) for p in game.piles)),)
        stock, stock_next = game.stock_size, None
    resigned = game.status == pb.GAME_STATUS_LOST and game.state.endswith(
        " resigned"
    )  # (its state's last word)
    words = ["lost (resigned)" if resigned else STATUS_TEXT.get(game.status, "")]
    if game.status != pb.GAME_STATUS_IN_PROGRESS or game.penalty:
        words.append(f"penalty {game.penalty}")
    words += list(game.extras)
    return Layout(
        title=f"{game.variant} · move {game.moves_played}",
        zones=zones,
        stock=stock,
        words=tuple(w for w in words if w),
        stock_next=stock_next,
    )


def game_svg(game: pb.Game) -> str:
    """The SVG picture of ``game`` as its player sees it."""
    return render_svg(layout_of(game))


# --- drawing --------------------------------------------------------------------------------
def _card_face(x: int, y: int, card: CardFace, kind: str = "face") -> str:
    colour = "red" if card.red else "black"
    label = escape(card.label)
    symbol = escape(SUIT_SYMBOL.get(card.suit, "?"))
    return (
        f'<g class="card-face" data-card={quoteattr(card.label)}>'
        f'<rect class="card {kind}" x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" rx="6"/>'
        f'<text class="rank {colour}" x="{x + 6}" y="{y + 20}">{label}</text>'
        f'<text class="pip {colour}" x="{x + CARD_W // 2}" y="{y + CARD_H - 18}" '
        f'text-anchor="middle">{symbol}</text>'
        "</g>"
    )


def _card_back(x: int, y: int) -> str:
    return (
        f'<g class="card-back"><rect class="card back" x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" '
        'rx="6"/>'
        f'<rect class="back-inner" x="{x + 5}" y="{y + 5}" width="{CARD_W - 10}" height="{CARD_H - 10}" '
        'rx="3"/></g>'
    )


def _slot(x: int, y: int) -> str:
    return f'<rect class="slot" x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" rx="6"/>'


def _count(x: int, y: int, n: int) -> str:
    """A size badge at the card's bottom right (sizes are visible to the player)."""
    return (
        f'<rect class="count-bg" x="{x + CARD_W - 26}" y="{y + CARD_H - 18}" width="24" height="16" rx="4"/>'
        f'<text class="count" x="{x + CARD_W - 14}" y="{y + CARD_H - 6}" text-anchor="middle">{n}</text>'
    )


# How a zone's piles are named in the notation: 3>7 (row, tableau), f2>5 (foundations), w>5 (the waste).
_NUMBER_PREFIX = {"foundation": "f", "waste": "w"}


def pile_number(zone: Zone, index: int) -> str:
    """The pile's name in move notation, printed above it: ``3``, ``f2``, ``w`` (one waste)."""
    prefix = _NUMBER_PREFIX.get(zone.name, "")
    if prefix == "w" and len(zone.piles) == 1:
        return "w"
    return f"{prefix}{index}"


def _number(zone: Zone, index: int, x: int, y: int) -> str:
    """The pile's number, centred above the pile (``y`` is the pile's top)."""
    label = escape(pile_number(zone, index))
    return f'<text class="pile-number" x="{x + CARD_W // 2}" y="{y - 3}" text-anchor="middle">{label}</text>'


def _pile(zone: Zone, index: int, pile: PileView, x: int, y: int) -> tuple[str, int]:
    """One pile's group and the height it takes."""
    parts = [f'<g class="pile" data-zone="{zone.name}" data-pile="{index}">']
    size = pile.size
    title = f"{zone.name} pile {index}: " + (
        f"{pile.cards[-1].label} on top, {size} card{'s' if size != 1 else ''}"
        if pile.cards
        else f"{size} face down"
        if size
        else "empty"
    )
    parts.append(f"<title>{escape(title)}</title>")
    height = CARD_H
    if zone.fanned:
        cy = y
        for k in range(pile.face_down):
            shown = k < len(pile.shown_down)
            parts.append(
                _card_face(x, cy, pile.shown_down[k], "face open-down") if shown else _card_back(x, cy)
            )
            cy += FAN_DOWN
        for card in pile.cards:
            parts.append(_card_face(x, cy, card))
            cy += FAN_UP
        if not size:
            parts.append(_slot(x, y))
        height = max(CARD_H, cy - (FAN_UP if pile.cards else FAN_DOWN) - y + CARD_H)
    else:
        if size > 1:  # a hint of depth under the top card
            parts.append(
                f'<rect class="card face" x="{x + 3}" y="{y + 3}" width="{CARD_W}" height="{CARD_H}" rx="6"/>'
            )
        if pile.cards:
            parts.append(_card_face(x, y, pile.cards[-1]))
        elif pile.face_down:
            parts.append(_card_back(x, y))
        else:
            parts.append(_slot(x, y))
        if size > 1:
            parts.append(_count(x, y, size))
    parts.append("</g>")
    return "".join(parts), height


def render_svg(layout: Layout) -> str:
    """The picture of a layout: a title line, each zone in turn, then the stock."""
    body: list[str] = []
    width = MARGIN * 2 + ROW_COLUMNS * (CARD_W + GAP) - GAP
    y = MARGIN + HEADER_H
    for zone in layout.zones:
        n = len(zone.piles)
        body.append(
            f'<text class="label" x="{MARGIN}" y="{y + 12}">{escape(zone.name)} · {n} '
            f"pile{'s' if n != 1 else ''}</text>"
        )
        y += ZONE_LABEL_H + NUMBER_H
        columns = max(1, min(ROW_COLUMNS, len(zone.piles))) if not zone.fanned else max(1, len(zone.piles))
        width = max(width, MARGIN * 2 + columns * (CARD_W + GAP) - GAP)
        line_height = CARD_H
        for i, pile in enumerate(zone.piles):
            col = i % columns
            if i and col == 0:
                y += line_height + GAP + NUMBER_H
                line_height = CARD_H
            x = MARGIN + col * (CARD_W + GAP)
            group, height = _pile(zone, i + 1, pile, x, y)
            body.append(group)
            body.append(_number(zone, i + 1, x, y))
            line_height = max(line_height, height)
        y += line_height + GAP * 2
    if layout.stock is not None:
        body.append(f'<text class="label" x="{MARGIN}" y="{y + 12}">stock · {layout.stock} cards</text>')
        y += ZONE_LABEL_H
        body.append('<g class="stock" data-zone="stock">')
        body.append(f"<title>stock: {layout.stock} cards, face down</title>")
        if layout.stock:
            for k in range(min(layout.stock, 3) - 1, -1, -1):  # a small stack of backs
                body.append(_card_back(MARGIN + 2 * k, y + 2 * k))
            if layout.stock_next is not None:  # an open game: the next card shows
                body.append(_card_face(MARGIN, y, layout.stock_next, "face open-down"))
            body.append(_count(MARGIN, y, layout.stock))
        else:
            body.append(_slot(MARGIN, y))
        body.append("</g>")
        y += CARD_H + GAP
    height = y + MARGIN
    title = " · ".join([layout.title, *layout.words])
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label={quoteattr(title)}>'
        f"<style>{STYLE}</style>"
        f'<rect class="bg" x="0" y="0" width="{width}" height="{height}" rx="10"/>'
        f'<text class="title" x="{MARGIN}" y="{MARGIN + 18}">{escape(title)}</text>'
        + "".join(body)
        + "</svg>\n"
    )
