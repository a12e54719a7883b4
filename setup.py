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

The build runs on every core (``ParallelBuildExt``): mypyc writes one C file per module
(``multi_file``), and they, like the solver's cores, are compiled side by side. ``build_ext -j N``
(``--parallel N``) sets the jobs; ``-j 1`` builds one file at a time.

Both are optional: without a C compiler, or without mypy (which ships mypyc), the same
Python source runs instead, with the same results, only slower. ``ACCORDION_PURE=1`` forces
the pure-Python build. A mypyc type error is never silent: the build stops with mypy's
message (a module that mypyc rejects must be fixed, not skipped).
"""

import os
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from glob import glob
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

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
    # multi_file: one C file per module instead of one for all, so that ParallelBuildExt compiles
    # them side by side (one big file was the build's critical path: one core at -O3 for minutes).
    extensions = mypycify(
        ["--config-file", "pyproject.toml", "--ignore-missing-imports", *sources],
        opt_level="3",
        debug_level="0",
        multi_file=True,
    )
    # Link-time optimization: what gcc inlined across modules in one file it still inlines across
    # the per-module files (its link step runs on every core too). gcc's spelling; another
    # compiler (clang) builds without it.
    lto = ["-flto=auto"] if "gcc" in (sysconfig.get_config_var("CC") or "") else []
    for ext in extensions:
        ext.extra_compile_args = [*ext.extra_compile_args, *lto]
        ext.extra_link_args = [*ext.extra_link_args, *lto]
        ext.optional = True  # no C compiler: the Python source runs (the test of the build says which)
    return extensions


SOLVER = "service/accordion/solver"


def _solver_core(path: str) -> Extension:
    """One of the solver's C searches, ``family/_cname`` (``accordion.solver.family._cname``),
    optional like the rest; ``_ccommon.h`` is found in ``solver/``."""
    return Extension(
        "accordion.solver." + path.replace("/", "."),
        sources=[f"{SOLVER}/{path}.c"],
        # a family's own headers too (issue 30: a core split into pieces), so that an edit rebuilds it
        depends=[
            f"{SOLVER}/_ccommon.h",
            f"{SOLVER}/_cschedule.h",
            *sorted(glob(f"{SOLVER}/{path.split('/')[0]}/_c*.h")),
        ],
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


class ParallelBuildExt(build_ext):
    """build_ext on every core by default: the extensions side by side (setuptools' own
    ``--parallel``), and one extension's C files side by side too (mypyc's multi_file output is
    one extension of many files, which setuptools would compile one after the other).
    ``--parallel N`` (``-j N``) sets the number of jobs; ``-j 1`` builds serially."""

    def finalize_options(self) -> None:
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1
        super().finalize_options()

    def build_extension(self, ext: Any) -> None:
        jobs = self.parallel if isinstance(self.parallel, int) and not isinstance(self.parallel, bool) else 1
        if jobs > 1 and len(ext.sources) > 1:
            self.compiler.compile = _compiling_in_parallel(self.compiler, jobs)
        super().build_extension(ext)


def _compiling_in_parallel(compiler: Any, jobs: int) -> Any:
    """``compiler.compile`` with its files compiled on ``jobs`` threads (each runs the C compiler
    as a process): distutils' own steps, only not one at a time."""

    def compile_in_parallel(  # CCompiler.compile's signature
        sources: list[str],
        output_dir: str | None = None,
        macros: Any = None,
        include_dirs: Any = None,
        debug: bool = False,
        extra_preargs: Any = None,
        extra_postargs: Any = None,
        depends: Any = None,
    ) -> list[str]:
        macros, objects, extra_postargs, pp_opts, build = compiler._setup_compile(
            output_dir, macros, include_dirs, sources, depends, extra_postargs
        )
        cc_args = compiler._get_cc_args(pp_opts, debug, extra_preargs)

        def one(obj: str) -> None:
            src, ext = build[obj]
            compiler._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, [obj for obj in objects if obj in build]))  # list(): raise what failed
        return list(objects)

    return compile_in_parallel


setup(
    ext_modules=[*(_solver_core(name) for name in SOLVER_CORES), *_mypyc_extensions()],
    cmdclass={"build_ext": ParallelBuildExt},
)
