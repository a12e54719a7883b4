"""The ground every tableau game shares (spec: "The other games of seed 004").

A tableau game keeps ``State.row`` empty, so no row code path can show a card, and declares
its zones as fields: ``tableau`` (every pile bottom → top, face-down cards included),
``down`` (how many cards at the bottom of each tableau pile are face down), ``foundations``
and ``waste`` (top last); the stock is ``State.stock`` (``stock[0]`` is drawn next).

What a player may see is decided in one place, ``TableauRules.zones``: face-down cards are
counted, and named only in a game dealt ``open``. The player's state string and ``render``
are made from the same masking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .cards import DECK_SIZE, RANK, SUIT, SUIT_SYMBOLS, card_code
from .core import Option, OptionValue, Rules
from .errors import InvalidStateError
from .fields import CARDS, COUNTS, PILES, Field, Pile, Row, State
from .moves import Draw, Move, Transfer, Zone, transfer
from .search import NoSearch, Search
from .words import card, cards_count, is_king, no_pile, other_colour, rank_name, suit_symbol
from .zones import PileView, ZoneView

TABLEAU: Field[Row] = Field("tableau", (), PILES, tag=10)
DOWN: Field[tuple[int, ...]] = Field("down", (), COUNTS, tag=11)
FOUNDATIONS: Field[Row] = Field("foundations", (), PILES, tag=12)
WASTE: Field[Pile] = Field("waste", (), CARDS, tag=13)
TABLEAU_FIELDS: tuple[Field[Any], ...] = (TABLEAU, DOWN, FOUNDATIONS, WASTE)

OPEN = Option(
    "open",
    False,
    (False, True),
    "every card face up to the player, the stock's order included (the rules are unchanged)",
)

# RED[c]: the card is a heart or a diamond (suits ♠ ♥ ♦ ♣ are 0..3).
RED = tuple(SUIT[c] in (1, 2) for c in range(DECK_SIZE))
# BUILDS_ON[a][b]: a goes on b in a build down in alternating colours (6♥ on 7♣).
BUILDS_ON = tuple(
    tuple(RANK[a] + 1 == RANK[b] and RED[a] != RED[b] for b in range(DECK_SIZE)) for a in range(DECK_SIZE)
)
# ONTO_ALTERNATE[c]: the cards c goes on in a build down in alternating colours (two; none for a King).
ONTO_ALTERNATE = tuple(tuple(b for b in range(DECK_SIZE) if BUILDS_ON[a][b]) for a in range(DECK_SIZE))
# ONTO_ANY_SUIT[c]: the cards one rank higher than c, of any suit (none for a King).
ONTO_ANY_SUIT = tuple(tuple(b for b in range(DECK_SIZE) if RANK[b] == RANK[a] + 1) for a in range(DECK_SIZE))
HIDDEN_CODE = "??"  # a face-down card in the player's state string

# The shared transfers, by index, for the legal-move loops (``moves.transfer`` interns the same
# values; a list lookup is cheaper than its cached call): TABLEAU_TO_TABLEAU[i][j][count],
# TABLEAU_TO_FOUNDATION[i][f], WASTE_TO_TABLEAU[j], WASTE_TO_FOUNDATION[f], FOUNDATION_TO_TABLEAU[f][j].
_PILES, _FOUNDATIONS, _COUNTS = 10, 8, 14
TABLEAU_TO_TABLEAU = tuple(
    tuple(tuple(transfer(Zone.TABLEAU, i, Zone.TABLEAU, j, n) for n in range(_COUNTS)) for j in range(_PILES))
    for i in range(_PILES)
)
TABLEAU_TO_FOUNDATION = tuple(
    tuple(transfer(Zone.TABLEAU, i, Zone.FOUNDATION, f, 1) for f in range(_FOUNDATIONS))
    for i in range(_PILES)
)
WASTE_TO_TABLEAU = tuple(transfer(Zone.WASTE, 0, Zone.TABLEAU, j, 1) for j in range(_PILES))
WASTE_TO_FOUNDATION = tuple(transfer(Zone.WASTE, 0, Zone.FOUNDATION, f, 1) for f in range(_FOUNDATIONS))
FOUNDATION_TO_TABLEAU = tuple(
    tuple(transfer(Zone.FOUNDATION, f, Zone.TABLEAU, j, 1) for j in range(_PILES))
    for f in range(_FOUNDATIONS)
)


def tableau_to_tableau(src: int, dst: int, count: int) -> Transfer:
    """The shared transfer of ``count`` cards between tableau piles (from the table when it holds it)."""
    if src < _PILES and dst < _PILES and count < _COUNTS:
        return TABLEAU_TO_TABLEAU[src][dst][count]
    return transfer(Zone.TABLEAU, src, Zone.TABLEAU, dst, count)


def turned_up(pile: Pile, down: int) -> int:
    """The face-down count of ``pile`` after a move: a face-down top card turns face up."""
    return down - 1 if down and down >= len(pile) else down


def face_up_count(state: State, pile: int) -> int:
    """How many face-up cards tableau pile ``pile`` holds (0 for a pile that is not there)."""
    tableau, down = TABLEAU.get(state), DOWN.get(state)
    return len(tableau[pile]) - down[pile] if 0 <= pile < len(tableau) else 0


class TableauRules(Rules):
    """Base of the tableau games. A game sets its options (with ``OPEN`` where it has face-down
    cards), ``deck_copies``/``deck``, deals in ``start`` (through ``layout``) and writes its
    moves; this base gives the zones, the masking, the penalty and the state checks."""

    family: ClassVar[str] = "tableau"
    fields: ClassVar[tuple[Field[Any], ...]] = TABLEAU_FIELDS

    open: bool

    def __init__(self, values: Mapping[str, OptionValue]) -> None:
        super().__init__(values)
        self.open = bool(values.get("open", False))

    # --- building positions ---------------------------------------------------------
    def layout(
        self, tableau: Row, down: tuple[int, ...], stock: Pile = (), foundations: int = 4, **extras: Any
    ) -> State:
        """A first position: these tableau piles, ``foundations`` empty foundations, no waste."""
        return self.state(
            (), stock, tableau=tableau, down=down, foundations=((),) * foundations, waste=(), **extras
        )

    def cards_in(self, state: State) -> list[int]:
        cards = [c for pile in TABLEAU.get(state) for c in pile]
        cards += [c for pile in FOUNDATIONS.get(state) for c in pile]
        cards += WASTE.get(state)
        cards += state.stock
        return cards

    def check_state(self, state: State) -> None:
        tableau, down = TABLEAU.get(state), DOWN.get(state)
        if state.row:
            raise InvalidStateError("a tableau game has no row")
        if len(down) != len(tableau):
            raise InvalidStateError(f"down counts {len(down)} piles; the tableau has {len(tableau)}")
        for i, (pile, n) in enumerate(zip(tableau, down)):
            if n > len(pile) or (pile and n == len(pile)):
                raise InvalidStateError(f"tableau pile {i + 1}: its top card must be face up")

    # --- what the player sees -------------------------------------------------------
    def zones(self, state: State) -> tuple[ZoneView, ...]:
        shown = self.open
        tableau = tuple(
            PileView(pile[n:], n, pile[:n] if shown else ())
            for pile, n in zip(TABLEAU.get(state), DOWN.get(state))
        )
        out = [
            ZoneView(Zone.TABLEAU, tableau),
            ZoneView(Zone.FOUNDATION, tuple(PileView(p) for p in FOUNDATIONS.get(state))),
        ]
        if self.has_stock():
            stock = state.stock
            out.append(ZoneView(Zone.STOCK, (PileView((), len(stock), stock if shown else ()),)))
        if self.has_waste():
            out.append(ZoneView(Zone.WASTE, (PileView(WASTE.get(state)),)))
        return tuple(out)

    def has_stock(self) -> bool:
        """Whether the game has a stock to show."""
        return True

    def has_waste(self) -> bool:
        """Whether the game has a waste to show (Spider deals its stock onto the tableau)."""
        return self.has_stock()

    def hides_anything(self, state: State) -> bool:
        return not self.open and (bool(state.stock) or any(DOWN.get(state)))

    def dealt_open(self, state: State) -> tuple[Rules, State] | None:
        # ``open`` changes only what the player is shown: the same values with it set make the
        # same deal from a seed (``start`` never reads it), so the position stays as it is.
        if OPEN not in self.options:
            return None
        return self.opened(), state

    def player_texts(self, state: State) -> Mapping[str, str]:
        if self.open or not any(DOWN.get(state)):
            return {}
        piles = [
            HIDDEN_CODE * n + "".join(map(card_code, pile[n:])) or "-"
            for pile, n in zip(TABLEAU.get(state), DOWN.get(state))
        ]
        return {TABLEAU.name: "/".join(piles)}

    # --- outcome ----------------------------------------------------------------------
    def on_foundations(self, state: State) -> int:
        return sum(map(len, FOUNDATIONS.get(state)))

    def penalty(self, state: State) -> int:
        """Cards not on the foundations."""
        return len(self.deck()) - self.on_foundations(state)

    def is_won(self, state: State) -> bool:
        return self.penalty(state) == 0

    def win_threshold(self) -> str:
        return f"all {len(self.deck())} cards on the foundations"

    def plain_count(self, state: State, pile: int) -> int:
        """How many cards ``3>7`` moves from tableau pile ``pile`` when that is legal (the
        notation writes a count only for others): the whole face-up part here; games whose
        cards move singly say 1."""
        return face_up_count(state, pile)

    # --- moving cards -------------------------------------------------------------------
    def apply_transfer(self, state: State, move: Transfer, **extras: Any) -> State:
        """The position after ``move`` (legal, not checked), a face-down card left on top of
        its pile turned up, with ``extras`` (other declared fields) set too."""
        tableau, down = TABLEAU.get(state), DOWN.get(state)
        foundations, waste = FOUNDATIONS.get(state), WASTE.get(state)
        zone, src, count = move.src_zone, move.src, move.count
        if zone is Zone.TABLEAU:
            pile = tableau[src]
            cards = pile[-count:]
            rest = pile[:-count]
            tableau = (*tableau[:src], rest, *tableau[src + 1 :])
            n = down[src]
            if n and n >= len(rest):
                down = (*down[:src], n - 1, *down[src + 1 :])
        elif zone is Zone.WASTE:
            cards = waste[-1:]
            waste = waste[:-1]
        else:
            cards = foundations[src][-1:]
            foundations = (*foundations[:src], foundations[src][:-1], *foundations[src + 1 :])
        dst = move.dst
        if move.dst_zone is Zone.TABLEAU:
            tableau = (*tableau[:dst], tableau[dst] + cards, *tableau[dst + 1 :])
        else:
            foundations = (*foundations[:dst], foundations[dst] + cards, *foundations[dst + 1 :])
        replace: Any = state._replace
        result: State = replace(tableau=tableau, down=down, foundations=foundations, waste=waste, **extras)
        return result

    # --- why a move is not legal (words.why_illegal), from what the player sees only ----------
    # The shared ground says where cards come from and go to; each game's hooks below say its
    # building rule, what a space takes, how many cards move together and its compulsions.
    def explain(self, state: State, move: Move) -> str | None:
        if isinstance(move, Draw):
            return "the stock is empty" if not state.stock else self.compelled_words(state, move)
        if isinstance(move, Transfer):
            return self.transfer_words(state, move)
        return None

    def transfer_words(self, state: State, move: Transfer) -> str | None:
        tableau, down, foundations, waste = (
            TABLEAU.get(state),
            DOWN.get(state),
            FOUNDATIONS.get(state),
            WASTE.get(state),
        )
        src, count = move.src, move.count
        if move.src_zone is Zone.WASTE:
            if not self.has_waste():
                return "this game has no waste"
            if not waste:
                return "the waste is empty"
            if count != 1:
                return "you can only take the top card of the waste"
            moving = waste[-1]
        elif move.src_zone is Zone.FOUNDATION:
            if not 0 <= src < len(foundations):
                return no_pile(src + 1, len(foundations), "foundation")
            if not self.returns_from_foundations():
                return "cards do not come back off the foundations in this game"
            if not foundations[src]:
                return f"foundation {src + 1} is empty"
            if count != 1:
                return "only the top card of a foundation can come back"
            moving = foundations[src][-1]
        elif move.src_zone is Zone.TABLEAU:
            if not 0 <= src < len(tableau):
                return no_pile(src + 1, len(tableau))
            pile = tableau[src]
            if not pile:
                return f"pile {src + 1} is empty"
            up = len(pile) - down[src]
            if count > len(pile):
                return f"pile {src + 1} holds only {cards_count(len(pile))}"
            if count > up:
                return f"a face-down card cannot move: pile {src + 1} has only {cards_count(up)} face up"
            moving = pile[-count]
        else:
            return "cards leave the stock only when it is dealt or drawn"
        words = self.compelled_words(state, move)
        if words is not None:
            return words
        dst = move.dst
        if move.dst_zone is Zone.FOUNDATION:
            if count != 1:
                return "cards go to the foundations one at a time"
            return self.foundation_words(foundations, moving, dst)
        if move.dst_zone is not Zone.TABLEAU:
            return f"cards do not go onto the {move.dst_zone.value}"
        if not 0 <= dst < len(tableau):
            return no_pile(dst + 1, len(tableau))
        if move.src_zone is Zone.TABLEAU and dst == src:
            return "a pile cannot move onto itself"
        if move.src_zone is Zone.TABLEAU:
            words = self.count_words(state, src, count)
            if words is not None:
                return words
        if not tableau[dst]:
            return self.space_words(moving)
        return self.build_words(moving, tableau[dst][-1])

    def foundation_words(self, foundations: Row, moving: int, dst: int) -> str | None:
        """Why ``moving`` cannot go onto foundation ``dst`` (-1: any): foundations go up in suit from
        the Ace."""
        suit = SUIT[moving]
        homes = [f for f in range(len(foundations)) if f % 4 == suit]  # (Emperor: two per suit)
        fits = [f for f in homes if len(foundations[f]) == RANK[moving] - 1]
        if 0 <= dst < len(foundations) and dst not in homes:
            return f"foundation {dst + 1} is for {SUIT_SYMBOLS[dst % 4]}, not {suit_symbol(moving)}"
        if not fits:
            if RANK[moving] == 1:
                return f"{card(moving)} has no empty foundation left"
            # (the card below it is not named: it may be face down, and no error names such a card)
            return (
                f"{card(moving)} cannot go to the foundations yet: a {suit_symbol(moving)} foundation must "
                f"be up to {rank_name(RANK[moving] - 1)} first"
            )
        if (
            dst != fits[0]
        ):  # (-1: no foundation named; Emperor: the first of two equal ones is the move listed)
            return f"{card(moving)} goes on foundation {fits[0] + 1}"
        return None

    def returns_from_foundations(self) -> bool:
        """Whether a foundation's top card may come back onto the tableau (Klondike's option)."""
        return False

    def build_words(self, moving: int, onto: int) -> str | None:
        """Why ``moving`` (heading what moves) cannot go on ``onto``: here down in alternating colours."""
        if BUILDS_ON[moving][onto]:
            return None
        if is_king(moving):
            return f"{card(moving)} cannot go on {card(onto)}: a King goes only into an empty pile"
        return (
            f"{card(moving)} cannot go on {card(onto)}: it needs a {other_colour(moving)} "
            f"{rank_name(RANK[moving] + 1)}"
        )

    def any_suit_words(self, moving: int, onto: int) -> str | None:
        """``build_words`` of games that build down in any suit (Streets and Alleys, Spider)."""
        if RANK[onto] == RANK[moving] + 1:
            return None
        if is_king(moving):
            return f"{card(moving)} cannot go on {card(onto)}: a King goes only into an empty pile"
        return (
            f"{card(moving)} cannot go on {card(onto)}: it needs a {rank_name(RANK[moving] + 1)} of any suit"
        )

    def space_words(self, moving: int) -> str | None:
        """Why ``moving`` (heading what moves) cannot go into an empty pile: here any card may."""
        return None

    def count_words(self, state: State, pile: int, count: int) -> str | None:
        """Why the top ``count`` face-up cards of tableau pile ``pile`` may not move together:
        here a face-up run moves whole or in part."""
        return None

    def compelled_words(self, state: State, move: Move) -> str | None:
        """Why a compulsion forbids ``move`` (Emperor's Aces); none here."""
        return None

    def search(self, state: State) -> Search:
        return NoSearch(reason="this tableau game declares no search")

    # --- sampled worlds (a Hint on a hidden position: solver/sampling.py) -------------------
    def seen_stock(self, state: State) -> bool:
        """Whether the player has seen every card of the stock, in its order, though the view
        shows it face down (a game whose stock is a waste turned over, which the view showed
        whole: Klondike after a REDEAL). A player who remembers knows it; a Hint may use it."""
        return False

    def with_hidden(self, state: State, cards: Sequence[int], stock: bool = True) -> State:
        """The same position with ``cards`` in its hidden places, in this order: the face-down
        cards of each tableau pile (pile by pile, bottom to top), then (with ``stock``) the
        stock in drawing order. Everything the player sees stays as it is; the cards that lay
        there are dropped, so the result depends on ``state``'s hidden cards in nothing."""
        tableau, down = TABLEAU.get(state), DOWN.get(state)
        places = sum(down) + (len(state.stock) if stock else 0)
        if len(cards) != places:
            raise ValueError(f"{len(cards)} cards for {places} hidden places")
        piles: list[Pile] = []
        k = 0
        for pile, n in zip(tableau, down):
            piles.append(tuple(cards[k : k + n]) + pile[n:])
            k += n
        replace: Any = state._replace
        result: State = replace(tableau=tuple(piles), stock=tuple(cards[k:]) if stock else state.stock)
        return result

    def opened(self) -> TableauRules:
        """The same rules dealt ``open``: the game a whole deal is decided in (``dealt_open``) and
        a sampled world (``with_hidden``) is solved in."""
        return type(self)({**self.values, OPEN.name: True})


def can_sample(rules: Rules, state: State) -> bool:
    """Whether a Hint on this hidden position may be made by sampling its hidden cards: a tableau
    game that hides a card and whose search record says ``sampling`` (the session layer's gate
    and the solver's sampled Hint both ask this)."""
    return isinstance(rules, TableauRules) and rules.hides_anything(state) and rules.search(state).sampling
