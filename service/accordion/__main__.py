"""``accordion-server`` (and ``python -m accordion``): the entry point above both ways of
serving, one process (``accordion.server.serve``) or ``--workers N`` processes on one port
(``accordion.workers.supervise``). It imports both; neither imports it."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace

from accordion.config import parse_args
from accordion.server import ListenError, configure_logging, run_loop, serve
from accordion.workers import resolve_workers, supervise


def main(argv: Sequence[str] | None = None) -> None:
    """The ``accordion-server`` console script."""
    config = parse_args(argv)
    configure_logging(config.log_level)
    workers = resolve_workers(config)
    if workers > 1:  # a supervisor of N worker processes on one port (see accordion.workers)
        sys.exit(supervise(replace(config, workers=workers)))
    try:
        run_loop(serve(replace(config, workers=1)), config.event_loop)
    except ListenError as exc:  # one line, no traceback: the person can act on it
        print(f"accordion-server: {exc}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
