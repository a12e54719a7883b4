"""TLS and mutual TLS for the server (and the health probe), from PEM files.

* ``--tls-cert`` + ``--tls-key``: the server speaks TLS only (a plaintext client fails).
* ``--tls-client-ca`` as well: mutual TLS; a client must present a certificate signed by
  that CA, or the handshake fails.

Files are read once at start; a rotated certificate takes a restart (a rolling one on
Kubernetes).
"""

from __future__ import annotations

from pathlib import Path

import grpc


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the {what} {path!r}: {exc.strerror or exc}") from exc


def server_credentials(cert: str, key: str, client_ca: str = "") -> grpc.ServerCredentials:
    """TLS credentials; with ``client_ca``, clients must present a certificate it signed."""
    if not (cert and key):
        raise ValueError("TLS needs both a certificate and its private key")
    pair = (_read(key, "TLS key"), _read(cert, "TLS certificate"))
    root = _read(client_ca, "client CA") if client_ca else None
    return grpc.ssl_server_credentials([pair], root_certificates=root, require_client_auth=root is not None)


def channel_credentials(ca: str = "", cert: str = "", key: str = "") -> grpc.ChannelCredentials:
    """Client-side TLS: trust ``ca`` (default: the system roots), present ``cert``/``key`` if given."""
    return grpc.ssl_channel_credentials(
        root_certificates=_read(ca, "CA") if ca else None,
        private_key=_read(key, "TLS key") if key else None,
        certificate_chain=_read(cert, "TLS certificate") if cert else None,
    )
