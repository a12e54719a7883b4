"""What the Klondike solver's tests share (test_klondike*.py): the rule sets, the brute force over the
engine's own moves, small late-game positions, and the search called with its cuts switched.

The brute force uses nothing but the engine's own ``legal_moves``/``apply`` (every DRAW, REDEAL
and transfer the rules allow, with a table of positions seen), so a bug in the search's compact
position, its macro moves through the talon, the forced foundation moves or a cut shows up as a
disagreement on small late-game positions.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from accordion.engine.cards import SUIT_LETTERS
from accordion.engine.core import Rules, State
from accordion.solver import HAVE_C

from .helpers import check_line, search_every_move

IMPLS = ["c", "python"] if HAVE_C else ["python"]


# Rule sets: the published "thoughtful" rules (partial runs, foundation return), the seed's.
RULES = [
    ("klondike", {"partial_runs": True, "foundation_return": True}),
    ("klondike", {}),
    ("klondike-draw-one", {"partial_runs": True, "foundation_return": True}),
    ("klondike-draw-one", {}),
    ("klondike", {"passes": 2}),
]


class _Options:
    """A backend whose calls get extra keyword arguments, over the caller's (the passes' sizes, a
    cut of the full search turned off, ...)."""

    def __init__(self, backend: object, **options: object) -> None:
        self.backend = backend
        self.options = options

    def klondike_solve(self, *args: object, **kw: object) -> tuple:
        return self.backend.klondike_solve(*args, **{**kw, **self.options})  # type: ignore[attr-defined]


def small_quick_passes(backend: object, quick_nodes: int, quick_total: int, **options: object) -> _Options:
    """A backend whose quick passes are tiny (so a few thousand positions run several restarts),
    without the beams between them unless ``options`` ask for them (``beams``)."""
    return _Options(
        backend, **{"quick_nodes": quick_nodes, "quick_total": quick_total, "beam_first": 0, **options}
    )


def brute_force(rules: Rules, state: State, limit: int = 3_000) -> bool | None:
    """Whether the position can be won: depth-first through every legal move, positions seen once
    (with passes unlimited the count of REDEALs made changes nothing ahead, so it is not part of
    the position seen)."""
    if rules.values.get("passes"):
        return search_every_move(rules, state, limit)
    # the position with redeals 0, as a plain tuple: equal where ``_replace(redeals=0)`` is, and
    # ~12 % less CPU per brute force (``_replace`` is Python code run for every move tried)
    i = type(state)._fields.index("redeals")
    return search_every_move(rules, state, limit, lambda s: s[:i] + (0,) + s[i + 1 :])


def small_position(rules: Rules, rng: random.Random, low: int = 10) -> State:
    """A late-game position: each suit up to a random rank on its foundation, the rest dealt
    at random over the seven piles (each with its top face up) and the stock."""
    base = [rng.randint(low, 12) for _ in range(4)]
    out = [s * 13 + r for s in range(4) for r in range(base[s], 13)]
    rng.shuffle(out)
    cut = rng.randint(len(out) // 2, len(out))
    piles: list[list[int]] = [[] for _ in range(7)]
    for card in out[:cut]:
        piles[rng.randrange(7)].append(card)
    state = rules.layout(tuple(map(tuple, piles)), tuple(max(0, len(p) - 1) for p in piles), tuple(out[cut:]))
    foundations = tuple(tuple(s * 13 + r for r in range(base[s])) for s in range(4))
    return state._replace(foundations=foundations)


def hosts_out(y: int, out: list[int]) -> list[int]:
    """The cards of ``out`` that card y could be built on (opposite colour, one rank higher)."""
    return [h for h in out if h % 13 == y % 13 + 1 and (h // 13 in (1, 2)) != (y // 13 in (1, 2))]


def buried_position(rules: Rules, rng: random.Random, low: int, stock: bool) -> State:
    """A small position in which a card Y lies face down on both its hosts and a lower card of
    its suit (under a random order of them), in the first pile; the other cards at random."""
    while True:
        base = [rng.randint(low, 11) for _ in range(4)]
        out = [s * 13 + r for s in range(4) for r in range(base[s], 13)]
        ys = [y for y in out if y % 13 + 1 < 13 and y % 13 > base[y // 13] and len(hosts_out(y, out)) == 2]
        if ys:
            break
    y = rng.choice(ys)
    hosts = hosts_out(y, out)
    lower = rng.choice([c for c in out if c // 13 == y // 13 and c % 13 < y % 13])
    under = hosts + [lower]
    rng.shuffle(under)
    rest = [c for c in out if c not in under and c != y]
    rng.shuffle(rest)
    cut = rng.randint(len(rest) // 2, len(rest)) if stock else len(rest)
    piles: list[list[int]] = [under + [y]] + [[] for _ in range(6)]
    for card in rest[:cut]:
        piles[rng.randrange(7)].append(card)
    state = rules.layout(
        tuple(map(tuple, piles)), tuple(max(0, len(p) - 1) for p in piles), tuple(rest[cut:])
    )
    foundations = tuple(tuple(s * 13 + r for r in range(base[s])) for s in range(4))
    return state._replace(foundations=foundations)


def full_search_with(
    rules: Rules, state: State, max_nodes: int, switch: str, **options: object
) -> Callable[[object, bool], tuple]:
    """The full search alone of ``state`` (a quick pass of one position, then no quick passes),
    as a function of the backend and of one switch of the search (``switch``, a cut) on or off,
    the other ``options`` fixed: (outcome code, engine moves, nodes)."""
    from accordion.solver.klondike.adapter import klondike_solve as _klondike_solve

    search = rules.search(state)

    def full_search(backend: object, on: bool) -> tuple:
        searched = _Options(backend, quick_nodes=1, quick_total=0, **options, **{switch: on})
        code, moves, nodes = _klondike_solve(searched, search, state, max_nodes, 0.0, None)
        return code, tuple(moves), nodes

    return full_search


def solver_backends() -> list[object]:
    """The Klondike searches to compare: the C core first when it is built, then the Python twin."""
    from accordion.solver.klondike import _pyklondike

    backends: list[object] = [_pyklondike]
    if HAVE_C:
        from accordion.solver.klondike import _cklondike  # type: ignore[attr-defined]

        backends.insert(0, _cklondike)
    return backends


def assert_the_brute_force_verdict(
    rules: Rules,
    state: State,
    truth: bool,
    full_search: Callable[[object, bool], tuple],
    backends: list[object],
    answers: dict[bool, tuple],
) -> None:
    """A cut searched on and off: ``answers[on]`` is the first backend's (outcome, moves, nodes).
    Every other backend gives the same answers (moves and node counts), each is the brute
    force's verdict ``truth``, and its moves are legal one after the other and end as it says."""
    for backend in backends[1:]:
        for on, answer in answers.items():
            assert full_search(backend, on) == answer, (backend, on, state)
    for code, moves, _ in answers.values():
        assert code == (1 if truth else 2), state
        check_line(rules, state, moves, won=truth)


def search_position(state: State) -> object:
    """The search's own position (``_pyklondike._Pos``) of an engine state, passes unlimited."""
    from accordion.engine.tableau import DOWN, FOUNDATIONS, TABLEAU, WASTE
    from accordion.solver.klondike import _pyklondike

    waste = list(WASTE.get(state))
    found = [len(f) for f in FOUNDATIONS.get(state)]
    return _pyklondike._Pos(
        [list(p) for p in TABLEAU.get(state)],
        list(DOWN.get(state)),
        found,
        waste + list(state.stock),
        len(waste),
        -1,
    )


def walked_positions(rules: Rules, rng: random.Random, count: int, steps: int) -> list[State]:
    """Small positions and the positions a few random legal moves lead to from them (where dead
    ends appear: cards moved onto others, tops sent up)."""
    out = []
    for _ in range(count):
        state = small_position(rules, rng, rng.randint(6, 10))
        for _ in range(steps):
            out.append(state)
            moves = rules.legal_moves(state)
            if not moves:
                break
            state = rules.apply(state, rng.choice(moves))
    return out


def card(rank: int, suit: str) -> int:
    """A card by rank and suit letter (s, h, d, c: the engine's order, cards.SUIT_LETTERS)."""
    return SUIT_LETTERS.index(suit.upper()) * 13 + rank - 1


def check_a_cut_where_it_acts(
    rules: Rules, positions: Iterable[State], switch: str, per_verdict: int, **options: object
) -> dict[bool, int]:
    """The brute force's verdict, with the cut ``switch`` on and off, on the positions where the
    cut shrinks the full search (at most ``per_verdict`` of each verdict, until 3 wins): how
    many wins and losses were checked. ``options``: the other switches of the search."""
    backends = solver_backends()
    checked = {True: 0, False: 0}
    for state in positions:
        full_search = full_search_with(rules, state, 20_000, switch, dead_ends=False, **options)
        with_cut, without = full_search(backends[0], True), full_search(backends[0], False)
        if with_cut[0] == 0 or with_cut[2] >= without[2]:
            continue  # too large, or the rule did not shrink the search here
        if checked[with_cut[0] == 1] >= per_verdict:
            continue  # enough of this verdict
        truth = brute_force(rules, state, limit=20_000)
        if truth is None:
            continue
        assert_the_brute_force_verdict(
            rules, state, truth, full_search, backends, {True: with_cut, False: without}
        )
        checked[truth] += 1
        if checked[True] >= 3:
            break
    return checked
