"""Which family answers which search record (``engine/search.py``): one line a family.

``solve`` asks ``family_of(rules.search(state))``; a record with no family of its own (the
engine's ``GenericSearch``, or a new game's record before its family is written) gets the generic
search through the engine's rules. docs/solver.md has a section a family; each folder's README.md
is its page.
"""

from __future__ import annotations

from typing import Any

from ..engine.search import Search
from .emperor.adapter import FAMILY as EMPEROR
from .family import Family, S
from .generic.adapter import FAMILY as GENERIC
from .klondike.adapter import FAMILY as KLONDIKE
from .row.adapter import REMOVAL, STACKING
from .spider.adapter import FAMILY as SPIDER
from .streets.adapter import FAMILY as STREETS
from .wish.adapter import FAMILY as WISH

FAMILIES: tuple[Family[Any], ...] = (STACKING, REMOVAL, KLONDIKE, STREETS, EMPEROR, SPIDER, WISH, GENERIC)

# Each entry's key is its family's own record type, which is what makes the lookup below sound.
_BY_KIND: dict[type[Search], Family[Any]] = {family.kind: family for family in FAMILIES}

# Every compiled core built (a missing one would quietly leave its games on a Python path).
HAVE_C = all(family.compiled for family in FAMILIES)

FALLBACK: Family[Any] = GENERIC  # the family of a record with no family of its own


def family_of(search: S) -> Family[S]:
    """The family that answers ``search``: the one registered for its type, else the generic one."""
    found = _BY_KIND.get(type(search))
    return found if found is not None else FALLBACK
