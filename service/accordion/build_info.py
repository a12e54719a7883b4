"""Which modules mypyc compiles (setup.py reads this list), and which build is running.

The hot path (issue 17, docs/performance/hot-path.md): the engine with every game (a whole package, so a
new game module is compiled as soon as it exists), the session layer, the byte codec they share,
the wire codec and validation. The rest stays interpreted: the servicer (thin glue whose
handlers gRPC's wrapper inspects, ``inspect.isasyncgenfunction``, which a compiled method would
fail), the stores, the server shell and gRPC's wrappers, i.e. I/O and gRPC's own time.

This module is never compiled itself: ``setup.py`` imports it before anything is built.
"""

from __future__ import annotations

import importlib
import importlib.machinery
from pathlib import Path

# Packages compiled whole (every ``*.py`` under them, subpackages included).
COMPILED_PACKAGES = ("engine", "sessions")
# Single modules of other packages (bytecodec.py: the byte codec the engine, sessions and wire share).
COMPILED_FILES = ("bytecodec.py", "api/wire.py", "api/codec.py", "api/validation.py")
# Interpreted although inside a compiled package: WatchGame's stream (mypyc 2.4 has no async
# generators). (The deal generator, engine/rng.py, is compiled: its shuffle draws in 32-bit
# halves of machine integers when compiled, ~2 µs a deal against ~21 interpreted.)
INTERPRETED_FILES = ("sessions/watching.py",)

_ROOT = Path(__file__).resolve().parent  # service/accordion


def compiled_sources(root: Path = _ROOT) -> list[str]:
    """The source files mypyc compiles, as paths (sorted; ``root`` is the package directory)."""
    found = {p for package in COMPILED_PACKAGES for p in (root / package).rglob("*.py")}
    found.update(root / f for f in COMPILED_FILES)
    found.difference_update(root / f for f in INTERPRETED_FILES)
    return sorted(str(p) for p in found)


def compiled_modules(root: Path = _ROOT) -> list[str]:
    """The dotted names of the modules in ``compiled_sources``."""
    names = []
    for source in compiled_sources(root):
        parts = Path(source).relative_to(root.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def is_compiled(module: str) -> bool:
    """Whether ``module`` was loaded from a C extension (what mypyc builds)."""
    origin = getattr(importlib.import_module(module), "__file__", None) or ""
    return origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def build_kind() -> str:
    """``compiled`` when every listed module is, ``pure`` when none is, else ``mixed`` (a build
    where some failed: the start-up log line and ``tests/ops/test_compiled.py`` show it)."""
    flags = [is_compiled(m) for m in compiled_modules()]
    return "compiled" if all(flags) else "pure" if not any(flags) else "mixed"
