"""The connection flags every command-line tool of the client shares, parsed in one place.

    parser = argparse.ArgumentParser(prog="accordion")
    add_connection_flags(parser)
    args = parser.parse_args()
    with AccordionClient(**client_kwargs(args)) as client:
        ...

``--target`` takes ``host:port`` or a URL (``http://host:port``, ``https://host`` for TLS,
``dns:///host:port``); the clients resolve it, so the flags pass it through unchanged.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

DEFAULT_TARGET = "127.0.0.1:50051"
DEFAULT_DEADLINE = 5.0
TARGET_ENV = "ACCORDION_TARGET"


def add_connection_flags(parser: argparse.ArgumentParser) -> None:
    """--target, --tls, --ca-file, --server-name, --client-cert, --client-key, --deadline."""
    parser.add_argument(
        "--target",
        default=os.environ.get(TARGET_ENV) or DEFAULT_TARGET,
        help=f"host:port or URL of the service (https:// means TLS) [{TARGET_ENV}; default: %(default)s]",
    )
    parser.add_argument("--tls", action="store_true", help="connect with TLS (system roots unless --ca-file)")
    parser.add_argument("--ca-file", help="PEM root certificates for TLS (implies --tls)")
    parser.add_argument("--server-name", help="TLS name to verify, when it differs from the target's host")
    parser.add_argument("--client-cert", help="PEM client certificate for mutual TLS (with --client-key)")
    parser.add_argument("--client-key", help="PEM private key of --client-cert")
    parser.add_argument(
        "--deadline", type=float, default=DEFAULT_DEADLINE, help="seconds per call (default: %(default)s)"
    )


def read_file(path: str | None) -> bytes | None:
    """The bytes of ``path`` (a PEM file), or None when no path was given."""
    if not path:
        return None
    with open(path, "rb") as f:
        return f.read()


def uses_tls(args: argparse.Namespace) -> bool:
    """Whether the flags ask for TLS: --tls, a CA file, a client certificate, or an https:// target."""
    return bool(
        args.tls or args.ca_file or args.client_cert or str(args.target).lower().startswith("https://")
    )


def client_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The ``AccordionClient`` / ``AsyncAccordionClient`` keyword arguments for these flags.

    ``AccordionClient(**client_kwargs(args))`` connects as the flags say (``target`` included).
    Raises ValueError when only one of --client-cert and --client-key is given (the files are
    read here, so a missing file raises OSError).
    """
    if bool(args.client_cert) != bool(args.client_key):
        raise ValueError("--client-cert and --client-key go together")
    return {
        "target": args.target,
        "tls": uses_tls(args),
        "root_certificates": read_file(args.ca_file),
        "certificate_chain": read_file(args.client_cert),
        "private_key": read_file(args.client_key),
        "server_name": args.server_name or None,
        "deadline": args.deadline,
    }
