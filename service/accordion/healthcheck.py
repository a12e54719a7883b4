"""``accordion-health``: one ``grpc.health.v1.Health/Check``; exit 0 when SERVING, else 1.

The container image's HEALTHCHECK runs it with no arguments. The address defaults to
127.0.0.1 and, in order: ``ACCORDION_HEALTH_PORT`` (the plaintext health-only port), else the
port of ``ACCORDION_LISTEN``, else 50051. With ``--tls-ca`` (and ``--tls-cert``/``--tls-key``
for mTLS) it speaks TLS; a server running TLS without a health port needs those, so set
``ACCORDION_HEALTH_PORT`` there instead.

    accordion-health                                  # the image's HEALTHCHECK
    accordion-health --addr 127.0.0.1:50051 --service accordion.v1.AccordionService
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence

import grpc
from grpc_health.v1 import health_pb2

from accordion.config import version
from accordion.tls import channel_credentials

CHECK = "/grpc.health.v1.Health/Check"


def default_addr(env: Mapping[str, str]) -> str:
    health_port = env.get("ACCORDION_HEALTH_PORT", "0")
    if health_port not in ("", "0"):
        return f"127.0.0.1:{health_port}"
    listen = env.get("ACCORDION_LISTEN", "")
    port = listen.rsplit(":", 1)[1] if ":" in listen else "50051"
    return f"127.0.0.1:{port}"


def check(
    addr: str,
    service: str = "",
    timeout: float = 3.0,
    credentials: grpc.ChannelCredentials | None = None,
    server_name: str = "",
) -> str:
    """The status name (SERVING, NOT_SERVING, ...); raises grpc.RpcError when the call fails."""
    options = [("grpc.ssl_target_name_override", server_name)] if server_name else []
    channel = (
        grpc.secure_channel(addr, credentials, options=options)
        if credentials is not None
        else grpc.insecure_channel(addr)
    )
    check_call = channel.unary_unary(
        CHECK,
        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
        response_deserializer=health_pb2.HealthCheckResponse.FromString,
    )
    with channel:
        reply = check_call(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    parser = argparse.ArgumentParser(prog="accordion-health", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    parser.add_argument("--addr", default=default_addr(env), help="host:port [default: %(default)s]")
    parser.add_argument("--service", default="", help="service name; empty: the whole server")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds [default: %(default)s]")
    parser.add_argument("--tls-ca", default="", help="PEM CA to verify the server with (turns TLS on)")
    parser.add_argument("--tls-cert", default="", help="PEM client certificate (mTLS)")
    parser.add_argument("--tls-key", default="", help="PEM client key (mTLS)")
    parser.add_argument("--server-name", default="", help="the name to expect in the server's certificate")
    args = parser.parse_args(argv)
    creds = channel_credentials(args.tls_ca, args.tls_cert, args.tls_key) if args.tls_ca else None
    try:
        status = check(args.addr, args.service, args.timeout, creds, args.server_name)
    except grpc.RpcError as exc:
        print(f"{args.addr}: {exc.code().name}: {exc.details()}", file=sys.stderr)
        return 1
    print(f"{args.addr}: {status}")
    return 0 if status == "SERVING" else 1


if __name__ == "__main__":
    sys.exit(main())
