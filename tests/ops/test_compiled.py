"""Which build runs: the hot path compiled by mypyc (setup.py, ``accordion.build_info``), or
the same Python source interpreted. ``make test`` runs the whole suite against the compiled
build and the engine and API suites again against the pure one (``make test-pure``,
which sets ``ACCORDION_PURE=1``: then every listed module must be the ``.py``).

A module that mypyc stops compiling (a new game module with a construct it rejects, a C
compiler error) fails here by name: the build itself only warns, so that a machine without
a compiler still installs."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from accordion.build_info import build_kind, compiled_modules, compiled_sources, is_compiled
from server_launcher import launch

EXPECTED = "pure" if os.environ.get("ACCORDION_PURE", "") not in ("", "0") else "compiled"


def test_every_module_of_the_hot_path_is_the_expected_build() -> None:
    modules = compiled_modules()
    wrong = [m for m in modules if is_compiled(m) != (EXPECTED == "compiled")]
    assert not wrong, f"not {EXPECTED} in this build: {wrong}"
    assert build_kind() == EXPECTED


def test_the_list_covers_the_engine_with_every_game_and_the_session_layer() -> None:
    modules = set(compiled_modules())
    games = Path(importlib.import_module("accordion.engine.games").__path__[0])
    on_disk = {f"accordion.engine.games.{p.stem}" for p in games.glob("*.py") if p.stem != "__init__"}
    assert on_disk and on_disk <= modules  # a game module added later is compiled too (a glob)
    assert {
        "accordion.engine.core",
        "accordion.engine.game",
        "accordion.sessions.record",
        "accordion.bytecodec",
        "accordion.api.wire",
        "accordion.api.codec",
        "accordion.api.validation",
    } <= modules
    # In a compiled build a core module is a C extension beside its source.
    core = importlib.import_module("accordion.engine.core").__file__ or ""
    assert core.endswith(".so") == (EXPECTED == "compiled"), core


def test_the_server_says_which_build_it_runs(tmp_path: Path) -> None:
    server = launch(tmp_path)
    try:
        deadline = time.monotonic() + 10  # the line follows the banner launch() waits for
        while not (started := [json.loads(ln) for ln in server.log_lines() if '"started"' in ln]):
            assert time.monotonic() < deadline, server.output()
            time.sleep(0.05)
    finally:
        server.close()
    assert started and started[0]["build"] == EXPECTED, server.output()


def test_no_function_of_the_compiled_code_reuses_an_except_name_for_another_type() -> None:
    # mypyc types ``except A as exc`` ... ``except B as exc`` in one function by the first clause:
    # the second then fails with a TypeError (an INTERNAL answer instead of the engine's error).
    # Silent at build time, so checked here, for every compiled module a new game adds too.
    reused = []
    for source in compiled_sources():
        for fn in ast.walk(ast.parse(Path(source).read_text())):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                types: dict[str, set[str]] = {}
                for node in ast.walk(fn):
                    if isinstance(node, ast.ExceptHandler) and node.name and node.type is not None:
                        types.setdefault(node.name, set()).add(ast.unparse(node.type))
                reused += [f"{source}: {fn.name}: {name}" for name, kinds in types.items() if len(kinds) > 1]
    assert not reused, reused


def test_the_store_and_its_suite_use_no_compiled_module() -> None:
    # Why `make test-pure` leaves tests/store out: the store is interpreted in both builds and
    # imports nothing that mypyc compiles, nor do its tests, so a pure run of them would run the
    # same code twice. (Its one test that starts a server makes NewGames: the pure server's
    # NewGame is the API suite's, which the pure run keeps.) Here that premise is held.
    root = Path(__file__).resolve().parents[2]
    modules = [f"tests.store.{p.stem}" for p in sorted((root / "tests" / "store").glob("test_*.py"))]
    stores = [f"accordion.store.{p.stem}" for p in sorted((root / "service/accordion/store").glob("*.py"))]
    assert len(modules) >= 5 and "accordion.store.redis" in stores
    probe = (
        "import importlib, json, sys\n"
        f"for name in {stores + modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            p for p in (os.environ.get("PYTHONPATH", ""), str(root), str(root / "tests")) if p
        ),
    }
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=root, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert set(modules) <= loaded
    assert not loaded & set(compiled_modules()), sorted(loaded & set(compiled_modules()))
