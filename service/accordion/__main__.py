"""``accordion-server`` (and ``python -m accordion``): the entry point above both ways of
serving, one process (``accordion.server.serve``) or ``--workers N`` processes on one port
(``accordion.workers.supervise``). It imports both; neither imports it."""

from __future__ import annotations

import os

# --- ops: gRPC's C core writes plain-text lines of its own to stderr, the JSON log (say
# "I1123 ... chttp2_transport.cc:1403] ipv4:...: Got goaway [2] ..." when a client leaves with
# an error). Only its errors by default; an operator's GRPC_VERBOSITY (NONE, INFO, DEBUG) wins.
# Read when grpc is first imported: before the imports below (the workers inherit it).
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
# --- end ops

import sys  # noqa: E402 (after the C core's log level, above)
from collections.abc import Sequence  # noqa: E402
from dataclasses import replace  # noqa: E402

from accordion.config import parse_args  # noqa: E402
from accordion.listening import ListenError  # noqa: E402
from accordion.server import configure_logging, run_loop, serve  # noqa: E402
from accordion.workers import resolve_workers, supervise  # noqa: E402


def main(argv: Sequence[str] | None = None) -> None:
    """The ``accordion-server`` console script."""
    config = parse_args(argv)
    workers = resolve_workers(config)
    # ops: the supervisor of workers writes no access lines (its workers do, to the same file).
    access_path = config.access_log if workers <= 1 else ""
    configure_logging(config.log_level, sample_every=config.access_log_sample, access_path=access_path)
    if workers > 1:  # a supervisor of N worker processes on one port (see accordion.workers)
        sys.exit(supervise(replace(config, workers=workers)))
    try:
        run_loop(serve(replace(config, workers=1)), config.event_loop)
    except ListenError as exc:  # one line, no traceback: the person can act on it
        print(f"accordion-server: {exc}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
