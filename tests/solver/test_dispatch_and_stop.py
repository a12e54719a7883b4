"""The solver picks its search from the game's description (``Rules.search``) and stops when told.

- Every variant's search kind and the method it leads to, and the solver's modules import no
  game module.
- A ``StopFlag`` set from another thread ends a long search within a second, answering
  UNKNOWN, in the compiled core and in the pure-Python path alike.
- The tableau cores that report their progress check the progress byte as they check the stop
  flag, and release both, whether the call fails or searches.
"""

from __future__ import annotations

import ast
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import accordion.solver
from accordion.engine import (
    GenericSearch,
    NoSearch,
    Removal,
    RemoveSearch,
    StackSearch,
    find_variant,
    new_game,
)
from accordion.solver import IMPLEMENTATIONS, Outcome, StopFlag, UnsupportedGameError, solve
from accordion.solver.emperor import adapter as emperor_adapter
from accordion.solver.klondike import adapter as klondike_adapter
from accordion.solver.spider import adapter as spider_adapter

SOLVER_DIR = Path(accordion.solver.__file__).parent

# variant → (description type, removal rule or None, the solver's method on a face-up deal)
EXPECTED = {
    "accordion": (StackSearch, None, "stack-dfs"),
    "relaxed-accordion": (StackSearch, None, "stack-dfs"),
    "accordions-revenge": (StackSearch, None, "stack-dfs"),
    "23-skidoo": (StackSearch, None, "stack-dfs"),
    "bayan": (RemoveSearch, Removal.PAIRS, "subset-dfs"),
    "royal-marriage": (RemoveSearch, Removal.INNER, "interval-dp"),
    "push-pin": (RemoveSearch, Removal.INNER, "interval-dp"),
    "double-jump": (RemoveSearch, Removal.INNER, "interval-dp"),
    "french": (RemoveSearch, Removal.INNER, "interval-dp"),
    "concertina": (RemoveSearch, Removal.OUTER, "subset-dfs"),
    "queen-and-her-lad": (GenericSearch, None, "generic-dfs"),
    "cribbage-solitaire": (NoSearch, None, None),
}


@pytest.mark.parametrize("vid", sorted(EXPECTED))
def test_each_game_describes_its_search(vid: str) -> None:
    kind, removal, method = EXPECTED[vid]
    game = new_game(vid, seed=3)
    search = game.rules.search(game.state)
    assert type(search) is kind
    if removal is not None:
        assert isinstance(search, RemoveSearch) and search.removal is removal
    if method is None:
        with pytest.raises(UnsupportedGameError):
            solve(game, max_nodes=1000)
        return
    if game.state.stock:  # a game dealt from the stock: solve it once every card is out
        while game.state.stock:
            game.play("deal")
    assert solve(game, max_nodes=20_000).method == method


def test_stacking_descriptions_carry_the_options() -> None:
    rules = find_variant("idle-year").make_rules({"leap": 2, "win_piles": 3})
    state = rules.state(((1,), (2,)))
    assert rules.search(state) == StackSearch(near=1, far=2, right=False, strict=True, win_piles=3, goal=-1)
    assert find_variant("23-skidoo").make_rules().search(state).win_piles == 2  # type: ignore[attr-defined]
    revenge = new_game("accordions-revenge", seed=4)
    assert revenge.rules.search(revenge.state).goal == revenge.rules.goal(revenge.state) >= 0  # type: ignore[attr-defined]


def test_french_says_a_chance_move_is_ahead_until_its_redeal() -> None:
    game = new_game("french", seed=1)
    assert game.rules.search(game.state).chance_ahead
    after = game.rules.state(game.state.row, redeals=1)
    assert not game.rules.search(after).chance_ahead
    assert solve(after, game.rules, max_nodes=10_000).without_redeal is False


def test_the_solver_imports_no_game_module() -> None:
    for path in SOLVER_DIR.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert "games" not in (node.module or ""), f"{path.name} imports {node.module}"
            elif isinstance(node, ast.Import):
                assert not any("games" in a.name for a in node.names), path.name


def solver_imports() -> dict[str, set[str]]:
    """Each module of accordion.solver (its folder, dotted) and the modules of accordion.solver it
    imports (relative imports resolved; a name imported from a package counted as the package)."""
    graph: dict[str, set[str]] = {}
    for path in SOLVER_DIR.rglob("*.py"):
        parts = list(path.relative_to(SOLVER_DIR).with_suffix("").parts)
        package = parts[:-1]
        name = ".".join(p for p in parts if p != "__init__")
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                if node.level - 1 > len(package):
                    continue  # above accordion.solver (the engine)
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
                for alias in node.names:
                    sub = f"{target}.{alias.name}" if target else alias.name
                    is_module = (SOLVER_DIR / sub.replace(".", "/")).with_suffix(".py").exists() or (
                        SOLVER_DIR / sub.replace(".", "/")
                    ).is_dir()
                    found.add(sub if is_module else target)
        graph[name] = {m for m in found if m and m != name}
    return graph


def test_the_families_stand_alone_and_the_imports_have_no_circle() -> None:
    """A family (a folder of solver/) imports the engine, ``family.py``, its own folder and, as the
    fallback where its core is not built, ``generic/``: never another family. And no module of
    the solver imports itself back through others (no circle)."""
    graph = solver_imports()
    families = {name.split(".")[0] for name in graph if "." in name}
    assert {"row", "klondike", "streets", "emperor", "spider", "wish", "generic"} <= families
    for name, imports in graph.items():
        family = name.split(".")[0] if "." in name else None
        if family is None:
            continue
        for target in imports:
            other = target.split(".")[0]
            assert other in (family, "family", "generic"), f"{name} imports {target}"
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph.get(name, ())):
            assert state.get(target) != 1, "import circle: " + " -> ".join([*path, name, target])
            if target not in state:
                walk(target, [*path, name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [])


# Accordion's Revenge with leap 2: deals the solver does not settle in 15 s.
HARD_DEAL = ("accordions-revenge", {"leap": 2}, 0)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_a_stop_flag_ends_a_long_search(impl: str) -> None:
    variant, options, seed = HARD_DEAL
    game = new_game(variant, options, seed=seed)
    stop = StopFlag()
    results = []
    worker = threading.Thread(
        target=lambda: results.append(solve(game, max_seconds=60, impl=impl, stop=stop))
    )
    worker.start()
    time.sleep(0.3)
    assert worker.is_alive() and not stop.is_set()
    stop.set()
    set_at = time.monotonic()
    worker.join(5)
    assert not worker.is_alive()
    assert time.monotonic() - set_at < 5.0  # (of a 60 s budget; generous for a loaded machine)
    assert results[0].outcome is Outcome.UNKNOWN and results[0].nodes > 0


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize("vid,seed", [("royal-marriage", 11), ("queen-and-her-lad", 2), ("accordion", 5)])
def test_a_flag_set_before_the_search_stops_it_at_the_first_check(impl: str, vid: str, seed: int) -> None:
    """Each search reads the flag at its first check (1024 positions): with the flag set, a
    search longer than that answers UNKNOWN. (The subset search of Concertina and Bayan counts
    its positions through the same budget code as the stacking search; no dealt row of theirs
    takes 1024 positions.)"""
    game = new_game(vid, seed=seed)
    while game.state.stock:
        game.play("deal")
    stop = StopFlag()
    stop.set()
    free = solve(game, impl=impl, max_seconds=30)
    stopped = solve(game, impl=impl, stop=stop)
    assert not free.unknown and free.nodes > 1024
    assert stopped.unknown and stopped.nodes <= 1024


def klondike_core(stop: object, progress: object) -> object:
    game = new_game("klondike", {"open": "true"}, seed=1)
    core, search = klondike_adapter.CORE, game.rules.search(game.state)
    return klondike_adapter.klondike_solve(core, search, game.state, 2000, 0.0, stop, progress)  # type: ignore[arg-type]


def emperor_core(stop: object, progress: object) -> object:
    state = new_game("emperor", {"open": "true"}, seed=1).state
    core, args = emperor_adapter.CORE, emperor_adapter.core_args(state)
    return core.emperor_solve(*args, 2000, stop=stop, progress=progress)  # type: ignore[union-attr, arg-type]


def spider_core(stop: object, progress: object) -> object:
    state = new_game("spider", {"open": "true", "suits": "1"}, seed=1).state
    core, args = spider_adapter.CORE, spider_adapter.core_args(state)
    return core.spider_solve(*args, 2000, stop=stop, progress=progress)  # type: ignore[union-attr, arg-type]


# Each core that reports its progress (whether it is built; a call on a dealt game for 2,000
# positions with the given stop and progress arguments).
PROGRESS_CORES: dict[str, tuple[bool, Callable[[object, object], object]]] = {
    "klondike": (klondike_adapter.CORE is not None, klondike_core),
    "emperor": (emperor_adapter.CORE is not None, emperor_core),
    "spider": (spider_adapter.CORE is not None, spider_core),
}


@pytest.mark.parametrize("family", sorted(PROGRESS_CORES))
def test_the_progress_byte_is_checked_as_the_stop_flag_and_both_are_released(family: str) -> None:
    """One writable byte or None for each; the error names the argument at fault. A bytearray
    whose buffer is still held cannot grow, so ``extend`` shows that each was released: after an
    error in the other argument, and after a search (which wrote the best progress, above 0 from
    a fresh deal)."""
    built, call = PROGRESS_CORES[family]
    if not built:
        pytest.skip("the compiled core is not built")
    with pytest.raises(ValueError, match="^stop is a writable buffer of at least one byte$"):
        call(bytearray(), None)
    stop = bytearray(1)
    with pytest.raises(ValueError, match="^progress is a writable buffer of at least one byte$"):
        call(stop, bytearray())
    with pytest.raises(BufferError):
        call(stop, b"\0")  # bytes: not writable
    stop.extend(b"\0")  # released after the progress byte's error
    progress = bytearray(1)
    call(bytearray(1), progress)
    assert progress[0] > 0
    progress.extend(b"\0")  # released after the search
    assert len(stop) == len(progress) == 2
