"""Builds the compiled parts; everything else is in pyproject.toml.

* The solver's searches in C: one core per family of games, in that family's folder of
  ``accordion/solver/`` (``row/_csolver``, ``klondike/_cklondike``, ``streets/_cstreets``,
  ``emperor/_cemperor``, ``spider/_cspider``), sharing ``solver/_ccommon.h``.
* The hot path compiled with mypyc from the same typed Python (issue 17): the engine with
  every game and the session layer (whole packages, by glob, so a new module is compiled
  too), the wire codec and validation; the servicer stays interpreted. ``accordion.build_info``
  names them (``COMPILED_PACKAGES``, ``COMPILED_FILES``, ``INTERPRETED_FILES``;
  ``compiled_sources()`` is the list this file compiles); ``tests/ops/test_compiled.py`` fails
  when one of them is not compiled in a compiled build.

Both are optional: without a C compiler, or without mypy (which ships mypyc), the same
Python source runs instead, with the same results, only slower. ``ACCORDION_PURE=1`` forces
the pure-Python build. A mypyc type error is never silent: the build stops with mypy's
message (a module that mypyc rejects must be fixed, not skipped).
"""

import os
import sys

from setuptools import Extension, setup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "service"))
from accordion.build_info import compiled_sources  # noqa: E402  (plain data, no imports of ours)


def _mypyc_extensions() -> list[Extension]:
    if os.environ.get("ACCORDION_PURE", "") not in ("", "0"):
        print("accordion: ACCORDION_PURE is set: the pure-Python build", file=sys.stderr)
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("accordion: WARNING: mypy (mypyc) is not installed: the pure-Python build", file=sys.stderr)
        return []
    here = os.path.dirname(os.path.abspath(__file__))
    sources = [os.path.relpath(s, here) for s in compiled_sources()]
    # --ignore-missing-imports: an isolated build (`pip install .`, the image) has mypy but not the
    # dependencies' stubs; their types are then Any to mypyc, which compiles the same code.
    # `make typecheck` is where missing stubs are an error.
    extensions = mypycify(
        ["--config-file", "pyproject.toml", "--ignore-missing-imports", *sources],
        opt_level="3",
        debug_level="0",
    )
    for ext in extensions:
        ext.optional = True  # no C compiler: the Python source runs (the test of the build says which)
    return extensions


SOLVER = "service/accordion/solver"


def _solver_core(path: str) -> Extension:
    """One of the solver's C searches, ``family/_cname`` (``accordion.solver.family._cname``),
    optional like the rest; ``_ccommon.h`` is found in ``solver/``."""
    return Extension(
        "accordion.solver." + path.replace("/", "."),
        sources=[f"{SOLVER}/{path}.c"],
        depends=[f"{SOLVER}/_ccommon.h"],
        include_dirs=[SOLVER],
        extra_compile_args=["-O2", "-std=c99"],
        optional=True,
    )


SOLVER_CORES = [
    "row/_csolver",
    "klondike/_cklondike",
    "streets/_cstreets",
    "emperor/_cemperor",
    "spider/_cspider",
]  # the Makefile's $(STAMP) lists them too

setup(ext_modules=[*(_solver_core(name) for name in SOLVER_CORES), *_mypyc_extensions()])
