"""Which moves the sampled Hint weighs, and how it breaks ties (solver/sampling.py).

Each rule reads the game's search record (``Rules.search``: engine/search.py) and the tableau
fields, never a game module: Klondike's (``KlondikeSearch``) waiting rule and safe foundation
move are the Klondike solver's own; the two-deck games (``EmperorSearch``, ``SpiderSearch``)
have their own safe move (Emperor) and one move into a space where several spaces are alike.
"""

from __future__ import annotations

from ..engine.cards import RANK, SUIT
from ..engine.core import Rules, State
from ..engine.moves import Draw, Move, Redeal, Transfer, Zone
from ..engine.search import EmperorSearch, KlondikeSearch, Search, SpiderSearch
from ..engine.tableau import BUILDS_ON, DOWN, FOUNDATIONS, RED, TABLEAU, WASTE
from ..engine.tableau_hint import tableau_values

KING = 13
# SUIT_RED[s]: suit s is red (hearts, diamonds).
SUIT_RED = tuple(next(RED[c] for c in range(len(SUIT)) if SUIT[c] == s) for s in range(4))
# Emperor's foundations: suit s on s and s + 4 (engine/games/emperor.py, read here as data).
EMPEROR_SUITS = 4


def safe_move(search: Search, state: State, legal: tuple[Move, ...]) -> Move | None:
    """A card to its foundation that no play could ever want back (the Klondike solver's forced
    move: rank ≤ 2, or both suits of the other colour up to rank − 1, and with foundation
    returns the other suit of its colour up to rank − 2): a tableau top, or the waste's top
    turning one (turning three, taking a waste card changes which cards the stock reaches).
    Emperor (two decks, nothing comes back, one card at a time, any card into a space): rank
    ≤ 2 (an Ace never goes onto a 2: Aces are compelled), or both copies of both suits of the
    other colour up to rank − 1 on the foundations. Spider: none (a suit lifts off by itself)."""
    if isinstance(search, EmperorSearch):
        return _emperor_safe(state, legal)
    if not isinstance(search, KlondikeSearch):
        return None
    foundations = FOUNDATIONS.get(state)
    heights = [len(pile) for pile in foundations]
    for move in legal:
        if not (isinstance(move, Transfer) and move.dst_zone is Zone.FOUNDATION):
            continue
        if move.src_zone is Zone.WASTE and search.draw != 1:
            continue
        if move.src_zone not in (Zone.TABLEAU, Zone.WASTE):
            continue
        suit = move.dst
        rank = heights[suit] + 1
        if rank <= 2:
            return move
        others = [s for s in range(4) if s != suit]
        if all(heights[s] >= rank - 1 for s in others if SUIT_RED[s] != SUIT_RED[suit]) and (
            not search.foundation_return
            or all(heights[s] >= rank - 2 for s in others if SUIT_RED[s] == SUIT_RED[suit])
        ):
            return move
    return None


def _emperor_safe(state: State, legal: tuple[Move, ...]) -> Move | None:
    heights = [len(pile) for pile in FOUNDATIONS.get(state)]
    # The lower of each suit's two foundations: every copy of a rank up to it is home.
    both = [min(heights[s], heights[s + EMPEROR_SUITS]) for s in range(EMPEROR_SUITS)]
    for move in legal:
        if not (isinstance(move, Transfer) and move.dst_zone is Zone.FOUNDATION):
            continue
        if move.src_zone not in (Zone.TABLEAU, Zone.WASTE):
            continue
        suit = move.dst % EMPEROR_SUITS
        rank = heights[move.dst] + 1
        if rank <= 2 or all(
            both[s] >= rank - 1 for s in range(EMPEROR_SUITS) if SUIT_RED[s] != SUIT_RED[suit]
        ):
            return move
    return None


def candidates(search: Search, state: State, legal: tuple[Move, ...]) -> tuple[Move, ...]:
    """The legal moves worth sampling: for Klondike, the solver's own waiting rule (a move that
    turns no card is of use only when its use comes at once, and can be made then as well):
    a pile emptied only when a King could go into the space now, a King never from a space to
    a space, part of a run moved only when the card it uncovers can go up or take another card
    now, a foundation's card back only when a card could go onto it now. For the two-deck
    games (any card into a space): one move into a space for each source and count (the spaces
    are alike), and never a whole pile from a space into a space. All of them when none is
    left (a position where only such moves remain)."""
    if isinstance(search, (EmperorSearch, SpiderSearch)):
        return _two_deck_candidates(state, legal)
    if not isinstance(search, KlondikeSearch):
        return legal
    tableau, down = TABLEAU.get(state), DOWN.get(state)
    heights = [len(pile) for pile in FOUNDATIONS.get(state)]
    waste = WASTE.get(state)
    movable = [
        c for pile, n in zip(tableau, down) for c in (pile[n:] if search.partial_runs else pile[n : n + 1])
    ]  # cards that may head a move
    if waste:
        movable.append(waste[-1])
    free_king = any(RANK[pile[n]] == KING and n > 0 for pile, n in zip(tableau, down) if pile) or (
        bool(waste) and RANK[waste[-1]] == KING
    )

    def of_use(card: int, pile: int) -> bool:
        """``card``, left on top of tableau pile ``pile``, can go up or take another card now."""
        if heights[SUIT[card]] == RANK[card] - 1:
            return True
        own = set(tableau[pile]) if pile >= 0 else set()
        return any(BUILDS_ON[c][card] for c in movable if c not in own)

    out = []
    for move in legal:
        if isinstance(move, Transfer) and move.dst_zone is Zone.TABLEAU:
            if move.src_zone is Zone.TABLEAU:
                pile, n = tableau[move.src], down[move.src]
                face_up = len(pile) - n
                if move.count == face_up:
                    if n == 0 and (RANK[pile[0]] == KING or not free_king):
                        continue  # a space made for no King, or a King from a space to a space
                elif not of_use(pile[-move.count - 1], move.src):
                    continue
            elif move.src_zone is Zone.FOUNDATION:
                card = FOUNDATIONS.get(state)[move.src][-1]
                if not any(BUILDS_ON[c][card] for c in movable):
                    continue
        out.append(move)
    return tuple(out) or legal


def _two_deck_candidates(state: State, legal: tuple[Move, ...]) -> tuple[Move, ...]:
    tableau = TABLEAU.get(state)
    out = []
    into_space: set[tuple[Zone, int, int]] = set()
    for move in legal:
        if isinstance(move, Transfer) and move.dst_zone is Zone.TABLEAU and not tableau[move.dst]:
            if move.src_zone is Zone.TABLEAU and move.count == len(tableau[move.src]):
                continue  # a whole pile from a space into a space
            source = (move.src_zone, move.src, move.count)
            if source in into_space:
                continue  # the same cards into another space: the same position, the piles apart
            into_space.add(source)
        out.append(move)
    return tuple(out) or legal


def no_progress(rules: Rules, state: State, move: Move) -> bool:
    """A move between tableau piles that turns no card and lifts no suit off, or a foundation's
    card coming back: it keeps every chance the position has (it can be undone), so sampling
    scores it as high as the best move, and a hint that takes it on a small edge of luck may
    take it back next."""
    if not (isinstance(move, Transfer) and move.dst_zone is Zone.TABLEAU):
        return False
    if move.src_zone is Zone.FOUNDATION:
        return True
    if move.src_zone is not Zone.TABLEAU:
        return False
    pile, n = TABLEAU.get(state)[move.src], DOWN.get(state)[move.src]
    if n > 0 and move.count == len(pile) - n:
        return False
    # (Spider: a run that completes a suit lifts it off the move that made it)
    return _home(rules.apply(state, move)) == _home(state)


def _home(state: State) -> int:
    return sum(map(len, FOUNDATIONS.get(state)))


def layout(rules: Rules, state: State) -> tuple[object, ...]:
    """The layout as the player sees it (``Rules.zones``), the pass count left out."""
    return tuple(rules.zones(state))


def tie_values(rules: Rules, state: State, moves: tuple[Move, ...]) -> tuple[int, ...]:
    """How equal scores are broken: the visible heuristic (``engine.tableau_hint``), with the
    moves of ``no_progress`` below DRAW (taken on a tie they could go back and forth for ever)."""
    values = list(tableau_values(rules.zones(state), moves))
    for i, move in enumerate(moves):
        if no_progress(rules, state, move):
            values[i] = -20 + values[i] // 10
        elif isinstance(move, (Draw, Redeal)):
            values[i] = max(values[i], -5)
    return tuple(values)
