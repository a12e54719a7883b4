"""A Hint on a hidden position, from what the player knows: sample the hidden cards, solve each world.

Hindsight optimisation (Bjarnason, Fern and Tadepalli, ICAPS 2009; lonelybot's player): the
cards the player cannot know are the deck less every card the view shows (and less the stock
when the player has seen it whole: ``TableauRules.seen_stock``, Klondike after a REDEAL). Deal
them at random into the hidden places (``TableauRules.with_hidden``), solve each such *world*
dealt open on a small node budget after each candidate move, and score each move by the
worlds it wins in, and in the worlds the search leaves undecided by how far play got there
(the best position searched: cards on the foundations plus cards turned up, as Bjarnason et
al.'s and lonelybot's rollouts measure it); a proven loss counts 0. Of the moves within a margin of
the best score, the one the most worlds' found wins begin with is taken, then the visible
heuristic (``engine.tableau_hint``) picks, with moves that keep every chance but make no
progress last, so a hint never goes back and forth on a tie. When the first few worlds show
no win at all, the positions left go to a few worlds searched deeper instead. Cheap cases need
no sampling: one legal move, or a card to its foundation that nothing left could ever need (the solver's own
safe move; ``sampling_moves``). In Klondike, while the stock was never seen, no card is taken off
the waste: drawing on shows the talon first, a value sampling cannot see (every world knows its
own stock); not in Emperor, whose one pass through the stock buries a card drawn past.

Never peeking: the input is what the player was shown: the view (``Rules.zones``: face-up
cards, counts of face-down ones, the stock's size), and the stock once it was shown whole
(``remember``; False: the view alone). The worlds' generator is seeded from a hash of that,
the worlds are filled from the sorted unknown cards, and the budget is a count of positions,
so two positions that differ only in cards the player never saw get the same worlds, the same
verdicts and the same move. The time budget is only a safety cap (a world cut short by it is
dropped); a hint that hits it may differ from run to run, never between the hidden cards.

Which games: those whose search record says ``sampling`` (Klondike, Spider, Emperor), on rules
that can fill and open a position (``TableauRules``); the search must report ``progress``
(Klondike's core, Spider's and Emperor's compiled cores). Which moves are weighed, and the ties,
by game family: ``sampling_moves``, from the search record. This module imports no game module.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from dataclasses import dataclass

from ..engine.core import Rules, State
from ..engine.moves import Move, Transfer, Zone
from ..engine.rng import SplitMix64
from ..engine.search import KlondikeSearch
from ..engine.tableau import DOWN, TableauRules
from ..engine.tableau import can_sample as can_sample  # (the solver's name for it too)
from .core import StopFlag, solve
from .sampling_moves import candidates, layout, no_progress, safe_move, tie_values

__all__ = ["SampledHint", "can_sample", "candidates", "layout", "safe_move", "sampled_hint", "unseen_cards"]

# A won world's score with 52 cards; an undecided one scores 1 + its progress (cards up and
# turned, at most 52 + 21). With more cards it grows with the deck (``won_score``).
WON_SCORE = 80
# Moves whose score is within this much a world of the best are as good (the heuristic picks).
MARGIN_PER_WORLD = 1
# Deepen only when the positions left give each deep search this many times the shallow budget.
DEEPEN_FACTOR = 4
# ... and each deep search at most this many times the shallow budget (it gets what is left).
DEEPEN_MAX = 20
# Worlds sampled before deciding whether to deepen (see ``sampled_hint``).
PROBE_WORLDS = 4


@dataclass(frozen=True)
class SampledHint:
    """What ``sampled_hint`` suggests and how it chose.

    ``move`` is None only when the game is over. ``moves`` are the moves sampled (the legal
    ones less those ``candidates`` sets aside) and ``scores`` holds, for each, the sum over the
    worlds of ``WON_SCORE`` where it wins, 0 where it loses, and 1 + the progress reached where
    the search left it undecided; both empty when no sampling was needed. ``reason``:
    ``"only move"``, ``"safe"``, ``"sampled"``, ``"no win seen"`` (every world lost: the
    tie-break's move), ``"over"``.
    ``complete`` is False when the time cap (not the node budget) cut the sampling short.
    ``deepened``: no world was won on ``nodes_per_solve`` positions, and the scores are those
    of ``deep_worlds`` worlds searched on the positions left.
    """

    move: Move | None
    reason: str
    worlds: int = 0
    nodes: int = 0
    seconds: float = 0.0
    scores: tuple[int, ...] = ()
    complete: bool = True
    moves: tuple[Move, ...] = ()
    deepened: bool = False


def won_score(rules: TableauRules) -> int:
    """A won world's score: above any undecided world's (1 + the cards of the deck + the cards
    turned up; two decks: at most 1 + 104 + 44 for Spider): ``WON_SCORE`` for 52 cards, in
    proportion for more."""
    return WON_SCORE * len(rules.deck()) // 52


def known_stock(rules: TableauRules, state: State, remember: bool) -> tuple[int, ...]:
    """The stock as the player knows it: its cards in order once they saw it whole and
    ``remember`` (``TableauRules.seen_stock``), else nothing (its size only)."""
    return state.stock if remember and rules.seen_stock(state) else ()


def unseen_cards(rules: TableauRules, state: State, known: tuple[int, ...] = ()) -> list[int]:
    """The cards the player cannot know, sorted: the deck less every card the view shows and
    the ``known`` ones (a stock seen whole)."""
    left = Counter(rules.deck())
    for zone in rules.zones(state):
        for pile in zone.piles:
            left.subtract(pile.cards)
            left.subtract(pile.face_down_cards)
    left.subtract(known)
    return sorted(left.elements())


def view_seed(rules: Rules, state: State, known: tuple[int, ...] = ()) -> int:
    """A 64-bit seed made from what the player knows of the position (the view and the
    ``known`` stock), and nothing else."""
    # (Not the undo option: a Hint must not differ by undo policy.)
    options = sorted((k, v) for k, v in rules.values.items() if k != "undo")
    view = (options, rules.zones(state), rules.search(state), known)
    return int.from_bytes(hashlib.blake2b(repr(view).encode(), digest_size=8).digest(), "little")


def sampled_hint(
    rules: Rules,
    state: State,
    *,
    worlds: int = 24,
    nodes_per_solve: int = 1500,
    max_nodes: int = 400_000,
    max_seconds: float | None = 0.25,
    remember: bool = True,
    hold_waste: bool = True,
    seen: frozenset[tuple[object, ...]] = frozenset(),
    deep_worlds: int = 4,
    deep_nodes: int = 150_000,
    follow_lines: bool = True,
    impl: str | None = None,
    stop: StopFlag | None = None,
) -> SampledHint:
    """The move that wins in the most sampled worlds (see the module's docstring).

    ``worlds`` worlds at most, each solved from the position and after every legal move on
    ``nodes_per_solve`` positions; no new world is begun once ``max_nodes`` positions were
    searched in all (deterministic), nor once ``max_seconds`` passed or ``stop`` was set.
    ``seen``: the ``layout`` of every position the game went through (what the player was
    shown): a move of no progress back to one of them is not suggested, unless nothing else is.
    ``remember``: use the stock once the player saw it whole; ``hold_waste``: see the module.
    ``deep_worlds``: when no move wins in any of the first ``PROBE_WORLDS`` worlds, the
    positions left, ``deep_nodes`` at most, go to this many worlds searched deeper (0:
    never), each search on at most ``DEEPEN_MAX`` times ``nodes_per_solve``. ``follow_lines``: among
    moves of near-best score, prefer the one the most worlds' found wins begin with (False:
    the visible heuristic alone chooses).

    Raises:
        ValueError: the position cannot be sampled (``can_sample``).
    """
    started = time.perf_counter()
    legal = rules.legal_moves(state)
    if not legal:
        return SampledHint(None, "over")
    if not can_sample(rules, state):
        raise ValueError(f"{type(rules).__name__}: this position cannot be hinted by sampling")
    assert isinstance(rules, TableauRules)
    if len(legal) == 1:
        return SampledHint(legal[0], "only move", seconds=time.perf_counter() - started)
    search = rules.search(state)
    safe = safe_move(search, state, legal)
    if safe is not None:
        return SampledHint(safe, "safe", seconds=time.perf_counter() - started)

    deadline = started + max_seconds if max_seconds else None
    known = known_stock(rules, state, remember)
    gen = SplitMix64(view_seed(rules, state, known))
    unseen = unseen_cards(rules, state, known)
    if not unseen:  # the player knows every card (the stock seen whole, nothing face down): one world
        worlds = 1
    opened = rules.opened()
    legal = candidates(search, state, legal)
    if seen:  # a move of no progress back to a layout the player already had: a circle
        fresh = tuple(
            m
            for m in legal
            if not (no_progress(rules, state, m) and layout(rules, rules.apply(state, m)) in seen)
        )
        legal = fresh or legal
    if hold_waste and isinstance(search, KlondikeSearch) and state.stock and not rules.seen_stock(state):
        # The stock never seen: draw on before taking a card off the waste. Each world knows
        # its stock, so sampling cannot value seeing it first; and a card taken off the waste
        # changes which cards later draws reach. The talon is known once the stock runs out.
        held = tuple(m for m in legal if not (isinstance(m, Transfer) and m.src_zone is Zone.WASTE))
        legal = held or legal
    if len(legal) == 1:
        return SampledHint(legal[0], "only move", seconds=time.perf_counter() - started)
    deepened = False
    # The first few worlds first: when no move wins in any of them (late in a game a win is
    # often longer than a small search sees), every score is progress alone, often the same
    # for every move, and the heuristic chose: a hint then went round in circles in positions
    # that were still winnable. The positions left are spent on a few worlds searched deeper
    # instead. Which way it goes depends on those worlds' verdicts alone, so twin positions
    # go the same way; otherwise the sampling goes on as if it had not paused.
    probe = min(worlds, PROBE_WORLDS) if deep_worlds > 0 else worlds
    scores, nodes, played, wins, complete, firsts = _sample(
        gen,
        unseen,
        rules,
        opened,
        state,
        known,
        legal,
        probe,
        nodes_per_solve,
        max_nodes,
        deadline,
        impl,
        stop,
    )
    deep_count = deep_worlds if unseen else 1
    deep_left = min(max_nodes - nodes, deep_nodes)
    deep_solve = min(DEEPEN_MAX * nodes_per_solve, deep_left // max(1, deep_count * (1 + len(legal))))
    # (every probe world lost: a proof, nothing for a deeper search to find)
    if (
        complete
        and played == probe
        and not wins
        and any(scores)
        and deep_solve >= DEEPEN_FACTOR * nodes_per_solve
    ):
        deep = _sample(
            gen,
            unseen,
            rules,
            opened,
            state,
            known,
            legal,
            deep_count,
            deep_solve,
            deep_left,
            deadline,
            impl,
            stop,
        )
        if deep[2]:  # a deep world finished within the time cap: the deep scores replace the shallow
            scores, played, firsts, deepened = deep[0], deep[2], deep[5], True
        nodes += deep[1]
        complete = deep[4]
    elif complete and played == probe and worlds > probe:
        more = _sample(
            gen,
            unseen,
            rules,
            opened,
            state,
            known,
            legal,
            worlds - probe,
            nodes_per_solve,
            max_nodes - nodes,
            deadline,
            impl,
            stop,
        )
        scores = [a + b for a, b in zip(scores, more[0])]
        nodes += more[1]
        played += more[2]
        complete = more[4]
        firsts = [a + b for a, b in zip(firsts, more[5])]
    seconds = time.perf_counter() - started
    values = tie_values(rules, state, legal)
    # Sampling as a filter, the visible heuristic as the chooser: every move whose score is
    # within a margin of the best (one card of progress a world) is as good, and the heuristic
    # picks among them. A move of no progress, last in the heuristic, is taken only when every
    # other is clearly worse.
    top = max(scores)
    margin = played * MARGIN_PER_WORLD if unseen else 0
    near = [i for i in range(len(legal)) if scores[i] >= top - margin]
    if follow_lines:
        # Among the near moves, the one the most worlds' wins begin with: where every move keeps
        # the win (late in a game), the heuristic alone drifts (draws, a run moved back and forth)
        # while the solver's line in a world is a plan that gets on with it.
        best = max(near, key=lambda i: (firsts[i], values[i], scores[i]))
    else:
        best = max(near, key=lambda i: (values[i], scores[i]))  # first of equals: deterministic
    reason = "sampled" if any(scores) else "no win seen"  # every world lost: the tie-break alone
    return SampledHint(legal[best], reason, played, nodes, seconds, tuple(scores), complete, legal, deepened)


def _sample(
    gen: SplitMix64,
    unseen: list[int],
    rules: TableauRules,
    opened: TableauRules,
    state: State,
    known: tuple[int, ...],
    legal: tuple[Move, ...],
    worlds: int,
    nodes_per_solve: int,
    max_nodes: int,
    deadline: float | None,
    impl: str | None,
    stop: StopFlag | None,
) -> tuple[list[int], int, int, int, bool, list[int]]:
    """Up to ``worlds`` worlds drawn from ``gen``, each move scored in each (``_world_scores``)
    on ``nodes_per_solve`` positions, none begun once ``max_nodes`` were searched: the summed
    scores, positions searched, worlds scored, (world, move) pairs won, False when the
    clock cut it short, and for each move the worlds whose win found begins with it."""
    scores = [0] * len(legal)
    firsts = [0] * len(legal)
    won = won_score(rules)
    nodes = played = wins = 0
    complete = True
    for _ in range(worlds):
        if nodes >= max_nodes or (stop is not None and stop.is_set()):
            break
        if deadline is not None and time.perf_counter() >= deadline:
            complete = False
            break
        cards = list(unseen)
        gen.shuffle(cards)
        world = rules.with_hidden(state, cards, stock=not known)
        got = _world_scores(opened, world, legal, nodes_per_solve, deadline, impl, stop)
        if got is None:  # cut short by the clock or the flag: dropped whole
            complete = stop is not None and stop.is_set()
            break
        world_scores, world_nodes, first = got
        if first >= 0:
            firsts[first] += 1
        nodes += world_nodes
        played += 1
        wins += sum(1 for score in world_scores if score == won)
        scores = [a + b for a, b in zip(scores, world_scores)]
    return scores, nodes, played, wins, complete, firsts


def _world_scores(
    opened: TableauRules,
    world: State,
    legal: tuple[Move, ...],
    nodes_per_solve: int,
    deadline: float | None,
    impl: str | None,
    stop: StopFlag | None,
) -> tuple[list[int], int, int] | None:
    """Each legal move's score in one world (``won_score`` won, 0 lost, 1 + the best progress
    searched when undecided) and the positions
    searched; None when the clock or the flag cut a search short (its verdict would not be
    the node budget's); and the index in ``legal`` of the first move of the win found from
    the world itself (-1: none, or not a candidate)."""

    won = won_score(opened)

    def run(position: State) -> tuple[int, int, Move | None] | None:
        left = None
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0:
                return None
        # Without Klondike's equivalent runs: with them, a move that only swaps a run between twins
        # reaches the same position of the search, so it scores as the best move does and the
        # tie-break may take it; measured (bench/hint_play.py, seeds 0-299), the hint then went round
        # in circles more often: 98 deals of 300 won with them, 108 without.
        result = solve(
            position,
            opened,
            max_nodes=nodes_per_solve,
            max_seconds=left,
            impl=impl,
            stop=stop,
            equivalent_runs=False,
        )
        if result.unknown and (
            (deadline is not None and time.perf_counter() >= deadline) or (stop is not None and stop.is_set())
        ):
            return None  # perhaps stopped by the clock or the flag, not by the node budget
        first = result.moves[0] if result.won and result.moves else None
        if result.won or result.lost:
            return (won if result.won else 0), result.nodes, first
        # Undecided: how far the search got (cards up, plus cards turned since the hinted
        # position: those the move itself turned count too), 1 more than a loss at the least.
        turned = sum(DOWN.get(world)) - sum(DOWN.get(position))
        return 1 + result.progress + turned, result.nodes, first

    here = run(world)
    if here is None:
        return None
    score, nodes, first = here
    if score == 0:  # lost from here: lost after every move
        return [0] * len(legal), nodes, -1
    out = []
    for move in legal:
        if move == first:
            out.append(won)  # the win found starts with it
            continue
        after = run(opened.apply(world, move))
        if after is None:
            return None
        out.append(after[0])
        nodes += after[1]
    return out, nodes, legal.index(first) if first in legal else -1
