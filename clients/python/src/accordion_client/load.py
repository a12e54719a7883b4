"""``accordion-load``, the console script: the tool itself lives in ``accordion_client.loadtest``
(its ``cli`` module documents the flags; docs/load.md the scenario file and the report)."""

from __future__ import annotations

import sys

from .loadtest.cli import main
from .loadtest.stats import METHODS, percentile, summarize

__all__ = ["METHODS", "main", "percentile", "summarize"]

if __name__ == "__main__":
    sys.exit(main())
