"""Zones are numbered in one place (engine/moves.py ``ZONE_CODES``), and every copy agrees with it.

The solver's C cores answer with zone numbers of their own, ``Z_TAB`` ..., which C cannot read from
Python: solver/_czones.h is generated from the declaration (tools/gen_zones_header.py, ``make
zones``) and must be what the generator writes now. The solver's adapter reads those numbers as the
declared codes, so any other copy found under solver/ (a ``#define Z_TAB 0``, a twin's ``Z_TAB, Z_FOUND
= 0, 1``, a table of zones by position ``(Zone.TABLEAU, Zone.FOUNDATION, ...)``) must say the
declaration's code — and the only ``#define`` of a zone is the generated header's.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import accordion
from accordion.engine.moves import ZONE_CODES, ZONE_OF_CODE, Zone

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import gen_zones_header  # noqa: E402

SOLVER = Path(accordion.__file__).parent / "solver"
# The cores' names for the zones (Z_TAB: Zone.TABLEAU ...).
CORE_NAMES = {"Z_TAB": Zone.TABLEAU, "Z_FOUND": Zone.FOUNDATION, "Z_STOCK": Zone.STOCK, "Z_WASTE": Zone.WASTE}
DEFINE = re.compile(r"^\s*#define\s+(Z_[A-Z]+)\s+(\d+)\b", re.M)


def test_every_zone_has_one_code_that_fits_a_byte() -> None:
    assert set(ZONE_CODES) == set(Zone)
    assert len(set(ZONE_CODES.values())) == len(ZONE_CODES)
    assert all(0 <= code < 256 for code in ZONE_CODES.values())  # the stored form's byte a code
    assert {code: zone for zone, code in ZONE_CODES.items()} == ZONE_OF_CODE


def _c_copies(root: Path) -> list[tuple[str, str, int]]:
    return [
        (str(path.relative_to(root)), name, int(number))
        for path in sorted(root.rglob("*.[ch]"))
        for name, number in DEFINE.findall(path.read_text())
        if name in CORE_NAMES
    ]


def _is_zone(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Zone"


def _zone(name: str) -> Zone:
    """The zone a copy names: a core's ``Z_TAB``, or ``Zone.TABLEAU``."""
    return CORE_NAMES[name] if name in CORE_NAMES else Zone[name.removeprefix("Zone.")]


def _python_copies(root: Path) -> list[tuple[str, str, int]]:
    found: list[tuple[str, str, int]] = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
            if isinstance(value, ast.Tuple) and len(value.elts) > 1 and all(map(_is_zone, value.elts)):
                # a table of zones by position (``(Zone.TABLEAU, Zone.FOUNDATION, ...)``): index = code
                members = [e.attr for e in value.elts if isinstance(e, ast.Attribute)]
                found += [(str(path.relative_to(root)), f"Zone.{m}", i) for i, m in enumerate(members)]
                continue
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            values = value.elts if isinstance(value, ast.Tuple) else [value]
            for n, v in zip(names, values, strict=False):
                if (
                    isinstance(n, ast.Name)
                    and n.id in CORE_NAMES
                    and isinstance(v, ast.Constant)
                    and isinstance(v.value, int)
                ):
                    found.append((str(path.relative_to(root)), n.id, v.value))
    return found


def _drifts(root: Path) -> list[tuple[str, str, int]]:
    """Every copy under ``root`` whose number is not its zone's declared code."""
    return [
        (f, name, n) for f, name, n in _c_copies(root) + _python_copies(root) if n != ZONE_CODES[_zone(name)]
    ]


def test_the_solver_cores_number_zones_as_declared() -> None:
    assert {name for _, name, _ in _c_copies(SOLVER)} == set(CORE_NAMES)  # the walk finds the C header
    assert _drifts(SOLVER) == []


def test_the_c_header_is_generated_from_the_declaration() -> None:
    """Zone numbers are written by hand once: the cores' #defines are all in the generated header,
    which is what tools/gen_zones_header.py writes from ``ZONE_CODES`` now (`make zones`)."""
    assert {f for f, _, _ in _c_copies(SOLVER)} == {"_czones.h"}
    assert (SOLVER / "_czones.h").read_text() == gen_zones_header.render()
    assert set(gen_zones_header.C_NAMES) == set(Zone)  # every declared zone has its C name
    assert {gen_zones_header.C_NAMES[zone]: zone for zone in Zone} == CORE_NAMES


def test_a_copy_that_drifts_is_found(tmp_path: Path) -> None:
    """The checker itself, on a core and a twin that number the waste 4 and the stock 0."""
    (tmp_path / "family").mkdir()
    (tmp_path / "family" / "_core.h").write_text("#define Z_TAB 0\n#define Z_WASTE 4 /* the waste */\n")
    (tmp_path / "family" / "_twin.py").write_text("Z_TAB, Z_STOCK = 0, 0\n")
    (tmp_path / "adapter.py").write_text("ZONES = (Zone.TABLEAU, Zone.FOUNDATION, Zone.WASTE)\n")
    assert sorted(_drifts(tmp_path)) == [
        ("adapter.py", "Zone.WASTE", 2),
        ("family/_core.h", "Z_WASTE", 4),
        ("family/_twin.py", "Z_STOCK", 0),
    ]
