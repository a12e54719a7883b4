"""The first free TCP port on 127.0.0.1 from ``START`` (the first argument) upward, within 100:
``make serve`` and ``make serve-redis`` put /metrics there (9100, or the next free one)."""

from __future__ import annotations

import socket
import sys


def first_free(start: int, host: str = "127.0.0.1", tries: int = 100) -> int:
    for port in range(start, start + tries):
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind
            try:
                probe.bind((host, port))
            except OSError:
                continue
            return port
    raise SystemExit(f"free_port: no free port in {start}-{start + tries - 1}")


if __name__ == "__main__":
    print(first_free(int(sys.argv[1]) if len(sys.argv) > 1 else 9100))
