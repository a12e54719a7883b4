"""The pure-Python path: the same three searches as ``_csolver.c``, step for step.

Each function takes and returns exactly what its C twin does, explores the same
nodes in the same order (the same move ordering, the same restart schedule and
noise generator, the same pruning), so with a node budget both paths return the
same verdict, the same moves and the same node count. Two differences, neither of
which changes a verdict: the dead-state tables here hold exact keys (the C tables
hold the set of cards exactly plus a 64-bit hash of their order) and never fill
up (the C tables stop growing at 8 M slots (128 MB), after which they only forget work).

Results are ``(outcome, moves, nodes)`` with outcome 0 unknown, 1 won, 2 lost;
moves are ``(src, dst)`` for stacking games and tuples of removed positions for
eliminators, positions counted in the row as it is when the move is played.
"""

from __future__ import annotations

import time
from collections.abc import Callable

UNKNOWN, WON, LOST = 0, 1, 2
_DEAD, _WIN, _ABORT, _STOP = 0, 1, 2, 3
FIRST_LIMIT = 500
MODE_INNER, MODE_OUTER, MODE_PAIRS = 0, 1, 2
_MASK64 = (1 << 64) - 1

_MATCH = [[a % 13 == b % 13 or a // 13 == b // 13 for b in range(52)] for a in range(52)]


def next_limit(limit: int) -> int:
    """The restart schedule: each attempt may visit 1/32 more nodes than the last."""
    return limit + limit // 32


class _SplitMix:
    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)


class _Noise:
    """Restart noise: off in the first attempt, then a generator seeded by the attempt's number."""

    __slots__ = ("noisy", "rng")

    def __init__(self) -> None:
        self.noisy = False
        self.rng = _SplitMix(0)

    def reset(self, attempt: int) -> None:
        self.noisy = attempt > 0
        self.rng = _SplitMix(attempt)


class _Budget:
    __slots__ = ("nodes", "max_nodes", "deadline", "stop", "anodes", "alimit")

    def __init__(self, max_nodes: int, max_seconds: float, stop: bytearray | None = None) -> None:
        self.nodes = 0
        self.max_nodes = max_nodes
        self.deadline = time.monotonic() + max_seconds if max_seconds > 0 else 0.0
        self.stop = stop  # the caller's stop flag: stop when its first byte is set
        self.anodes = 0
        self.alimit = 0

    def count(self) -> int:
        """Count a node: ``_STOP`` or ``_ABORT`` when a limit is passed, else -1 (as ``count_node``)."""
        self.nodes += 1
        self.anodes += 1
        if self.max_nodes and self.nodes > self.max_nodes:
            return _STOP
        if (self.nodes & 1023) == 0 and (
            (self.stop is not None and self.stop[0]) or (self.deadline and time.monotonic() > self.deadline)
        ):
            return _STOP
        if self.anodes > self.alimit:
            return _ABORT
        return -1


def _restarting(run: Callable[[int], int], budget: _Budget, restarts: bool) -> int:
    limit = FIRST_LIMIT if restarts else 1 << 64
    attempt = 0
    while True:
        budget.anodes = 0
        budget.alimit = limit
        r = run(attempt)
        if r != _ABORT:
            return r
        limit = next_limit(limit)
        attempt += 1


# --- stacking games ---------------------------------------------------------------


def stack_solve(
    tops: bytes,
    near: int,
    far: int,
    right: bool,
    strict: bool,
    win_piles: int,
    goal: int,
    max_nodes: int = 0,
    max_seconds: float = 0.0,
    restarts: bool = True,
    stop: bytearray | None = None,
) -> tuple[int, list[tuple[int, int]], int]:
    """Depth-first search over sequences of pile tops (see ``stack_solve`` in ``_csolver.c``)."""
    if not 1 <= len(tops) <= 128 or any(c >= 52 for c in tops):
        raise ValueError("a row has 1 to 128 piles of cards 0..51")
    budget = _Budget(max_nodes, max_seconds, stop)
    dead: set[bytes] = set()
    path: list[tuple[int, int]] = []
    match = _MATCH
    noise = _Noise()

    def moves_of(t: bytes, n: int) -> list[tuple[int, int]]:
        out = []
        for i in range(n):
            m = match[t[i]]
            ln = i - near >= 0 and m[t[i - near]]
            rn = right and i + near < n and m[t[i + near]]
            if ln:
                out.append((i, i - near))
            if rn:
                out.append((i, i + near))
            if strict and (ln or rn):
                continue
            if i - far >= 0 and m[t[i - far]]:
                out.append((i, i - far))
            if right and i + far < n and m[t[i + far]]:
                out.append((i, i + far))
        return out

    def goal_blocked(t: bytes, n: int) -> bool:
        """Accordion's Revenge: no pile right of the goal can ever pass it (``goal_blocked`` in C)."""
        p = t.find(goal) if goal in t else n
        if p >= n - 1:
            return False
        if near == 1 and p < far - 1:
            return True
        left_ranks = {x % 13 for x in t[:p]}
        left_suits = {x // 13 for x in t[:p]}
        return not any(x % 13 in left_ranks or x // 13 in left_suits for x in t[p + 1 :])

    def dfs(t: bytes) -> int:
        r = budget.count()
        if r >= 0:
            return r
        n = len(t)
        if n <= win_piles and (goal < 0 or (n == 1 and t[0] == goal)):
            return _WIN
        if t in dead:
            return _DEAD
        rc = [0] * 13
        sc = [0] * 4
        for x in t:
            rc[x % 13] += 1
            sc[x // 13] += 1
        isolated = sum(1 for x in t if rc[x % 13] == 1 and sc[x // 13] == 1)
        if isolated and isolated + (n > isolated) > win_piles:
            dead.add(t)
            return _DEAD
        if goal >= 0 and not right and goal_blocked(t, n):
            dead.add(t)
            return _DEAD
        noisy, rng = noise.noisy, noise.rng
        keyed = []
        for j, (src, dst) in enumerate(moves_of(t, n)):
            buried = t[dst]
            if goal >= 0 and buried == goal:
                continue
            kept = t[src]
            bury = 3 * (rc[buried % 13] - 1) + (sc[buried // 13] - 1)
            keep = min(31, 3 * (rc[kept % 13] - 1) + (sc[kept // 13] - 1))
            near_move = 1 if abs(src - dst) == near else 0
            key = ((bury * 32 + keep) * 2 + near_move) * 4096 + j
            if noisy:
                key = (key & ~4095) + (rng.next() & 4095)
            keyed.append((key, src, dst))
        keyed.sort(key=lambda e: e[0])  # stable, as the C insertion sort
        for _, src, dst in keyed:
            child = bytearray(t)
            child[dst] = t[src]
            del child[src]
            path.append((src, dst))
            r = dfs(bytes(child))
            if r != _DEAD:
                return r
            path.pop()
        dead.add(t)
        return _DEAD

    def run(attempt: int) -> int:
        noise.reset(attempt)
        path.clear()
        return dfs(bytes(tops))

    r = _restarting(run, budget, restarts)
    outcome = WON if r == _WIN else LOST if r == _DEAD else UNKNOWN
    return outcome, (list(path) if r == _WIN else []), budget.nodes


# --- eliminators: the interval programme --------------------------------------------


def elim_dp(
    cards: bytes,
    one: bool,
    two: bool,
    max_nodes: int = 0,
    max_seconds: float = 0.0,
    stop: bytearray | None = None,
) -> tuple[int, list[tuple[int, ...]], int]:
    """The inner eliminators by interval dynamic programming (see ``elim_dp`` in ``_csolver.c``).

    ``W[a][b]``: the cards strictly between original positions a and b can all leave
    while a and b stay. Rows of bits: ``wrow[a]`` has bit c set when ``W[a][c]``,
    ``wcol[b]`` bit c when ``W[c][b]``; ``prow[a]`` bit d when some c has ``W[a][c]``
    and ``W[c][d]``. The witnesses are the lowest set bits, as the C loops find them.
    """
    n = len(cards)
    if n > 128 or any(c >= 52 for c in cards):
        raise ValueError("a row has at most 128 cards of 0..51")
    if n <= 2:
        return WON, [], 1
    deadline = time.monotonic() + max_seconds if max_seconds > 0 else 0.0
    wrow = [1 << (a + 1) for a in range(n)]
    wcol = [(1 << (b - 1)) if b else 0 for b in range(n)]
    prow = [0] * n
    witness: dict[tuple[int, int], tuple[int, int]] = {}
    nodes = 0
    for length in range(2, n):
        for a in range(n - length):
            b = a + length
            nodes += 1
            if (max_nodes and nodes > max_nodes) or (
                (nodes & 1023) == 0
                and ((stop is not None and stop[0]) or (deadline and time.monotonic() > deadline))
            ):
                return UNKNOWN, [], nodes
            both = wrow[a] & wcol[b]
            if both:
                prow[a] |= 1 << b
            if not _MATCH[cards[a]][cards[b]]:
                continue
            if one and both:
                witness[(a, b)] = ((both & -both).bit_length() - 1, -1)
            elif two:
                ds = prow[a] & wcol[b]
                if not ds:
                    continue
                d = (ds & -ds).bit_length() - 1
                cs = wrow[a] & wcol[d]
                witness[(a, b)] = ((cs & -cs).bit_length() - 1, d)
            else:
                continue
            wrow[a] |= 1 << b
            wcol[b] |= 1 << a
    if (0, n - 1) not in witness:
        return LOST, [], nodes
    alive = [True] * n
    moves: list[tuple[int, ...]] = []
    todo: list[tuple[int, int, int]] = [(0, 0, n - 1)]
    while todo:
        kind, a, b = todo.pop()
        if b == a + 1:
            continue
        c, d = witness[(a, b)]
        if kind == 1:
            pos = sum(alive[:c])
            moves.append((pos,) if d < 0 else (pos, pos + 1))
            alive[c] = False
            if d >= 0:
                alive[d] = False
            continue
        todo.append((1, a, b))
        if d < 0:
            todo += [(0, c, b), (0, a, c)]
        else:
            todo += [(0, d, b), (0, c, d), (0, a, c)]
    return WON, moves, nodes


# --- eliminators by search ------------------------------------------------------------


def elim_solve(
    cards: bytes,
    mode: int,
    one: bool,
    two: bool,
    win_cards: int,
    max_nodes: int = 0,
    max_seconds: float = 0.0,
    restarts: bool = True,
    stop: bytearray | None = None,
) -> tuple[int, list[tuple[int, ...]], int]:
    """Depth-first search over the subsets of the row (see ``elim_solve`` in ``_csolver.c``)."""
    n0 = len(cards)
    if n0 > 128 or mode not in (0, 1, 2) or any(c >= 52 for c in cards):
        raise ValueError("a row has at most 128 cards of 0..51; mode is 0, 1 or 2")
    budget = _Budget(max_nodes, max_seconds, stop)
    dead: set[tuple[int, ...]] = set()
    path: list[tuple[int, ...]] = []
    match = _MATCH
    noise = _Noise()

    def moves_of(idx: tuple[int, ...]) -> list[tuple[int, int]]:
        n = len(idx)
        out = []
        if mode == MODE_PAIRS:
            for i in range(n - 1):
                m = match[cards[idx[i]]]
                if m[cards[idx[i + 1]]]:
                    out.append((i, i + 1))
                if i + 3 < n and m[cards[idx[i + 3]]]:
                    out.append((i, i + 3))
            return out
        for i in range(n - 2):
            m = match[cards[idx[i]]]
            if one and m[cards[idx[i + 2]]]:
                out.append((i + 1, -1) if mode == MODE_INNER else (i, i + 2))
            if two and i + 3 < n and m[cards[idx[i + 3]]]:
                out.append((i + 1, i + 2) if mode == MODE_INNER else (i, i + 3))
        return out

    def dfs(idx: tuple[int, ...]) -> int:
        r = budget.count()
        if r >= 0:
            return r
        n = len(idx)
        if n <= win_cards:
            return _WIN
        if idx in dead:
            return _DEAD
        if mode != MODE_INNER:
            rc = [0] * 13
            sc = [0] * 4
            for p in idx:
                rc[cards[p] % 13] += 1
                sc[cards[p] // 13] += 1
            stuck = sum(1 for p in idx if rc[cards[p] % 13] == 1 and sc[cards[p] // 13] == 1)
            if stuck > win_cards:
                dead.add(idx)
                return _DEAD
        elif not match[cards[idx[0]]][cards[idx[-1]]]:
            dead.add(idx)
            return _DEAD
        mv = moves_of(idx)
        if noise.noisy:
            rng = noise.rng
            ekeyed = [(rng.next() & 0xFFFFF, m) for m in mv]
            ekeyed.sort(key=lambda e: e[0])
            mv = [m for _, m in ekeyed]
        for p, q in mv:
            child = tuple(x for i, x in enumerate(idx) if i != p and i != q)
            path.append((p,) if q < 0 else (p, q))
            r = dfs(child)
            if r != _DEAD:
                return r
            path.pop()
        dead.add(idx)
        return _DEAD

    def run(attempt: int) -> int:
        noise.reset(attempt)
        path.clear()
        return dfs(tuple(range(n0)))

    r = _restarting(run, budget, restarts)
    outcome = WON if r == _WIN else LOST if r == _DEAD else UNKNOWN
    return outcome, (list(path) if r == _WIN else []), budget.nodes
