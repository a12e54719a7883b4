"""TLS and mutual TLS, with certificates the tests make: real server processes, real channels."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from redis_server import free_port
from tests.api.helpers import ROOT, ServerProcess, server_command

from .certs import CA, Issued

BIN = Path(sys.executable).parent


def creds(ca: CA, client: Issued | None = None) -> grpc.ChannelCredentials:
    key, cert = (client.key.read_bytes(), client.cert.read_bytes()) if client else (None, None)
    return grpc.ssl_channel_credentials(ca.cert.read_bytes(), private_key=key, certificate_chain=cert)


async def new_game(addr: str, credentials: grpc.ChannelCredentials | None) -> pb.NewGameResponse:
    """One NewGame then GetGame on a fresh channel (TLS when ``credentials``)."""
    options = [("grpc.use_local_subchannel_pool", 1)]  # a fresh connection, so a fresh handshake
    channel = (
        grpc.aio.secure_channel(addr, credentials, options=options)
        if credentials is not None
        else grpc.aio.insecure_channel(addr, options=options)
    )
    async with channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        reply = await stub.NewGame(pb.NewGameRequest(variant="accordion", seed=7), timeout=5)
        got = await stub.GetGame(
            pb.GetGameRequest(game_id=reply.game.id),
            metadata=(("authorization", f"Bearer {reply.token}"),),
            timeout=5,
        )
        assert got.game == reply.game
        return reply


async def refused(addr: str, credentials: grpc.ChannelCredentials | None) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await new_game(addr, credentials)
    return caught.value.code()


def health_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "accordion-health"), *args], capture_output=True, text=True, timeout=30, env=env, cwd=ROOT
    )


def pem(issued: Issued) -> list[str]:
    return ["--tls-cert", str(issued.cert), "--tls-key", str(issued.key)]


async def test_tls_serves_only_tls_and_a_plaintext_health_port_serves_only_health(
    spawn_server: Callable[..., ServerProcess], pki: dict[str, Any]
) -> None:
    ca, other, server = pki["ca"], pki["other_ca"], pki["server"]
    health_port = free_port()
    proc = spawn_server(*pem(server), "--health-port", str(health_port))
    assert "grpcurl -cacert ca.pem" in proc.output() and "-plaintext" not in proc.output()

    reply = await new_game(proc.addr, creds(ca))
    assert reply.game.version == 1 and reply.token
    assert await refused(proc.addr, None) == grpc.StatusCode.UNAVAILABLE, "plaintext on the TLS port"
    assert await refused(proc.addr, creds(other)) == grpc.StatusCode.UNAVAILABLE, (
        "a server cert we do not trust"
    )

    # The health-only port: plaintext, health and nothing else.
    async with grpc.aio.insecure_channel(f"127.0.0.1:{health_port}") as channel:
        status = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert status.status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await pb_grpc.AccordionServiceStub(channel).NewGame(
                pb.NewGameRequest(variant="accordion"), timeout=5
            )
        assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED

    # The image's HEALTHCHECK command: through the health port (from the environment), or TLS.
    port = proc.addr.rsplit(":", 1)[1]
    env = {"PATH": str(BIN), "ACCORDION_HEALTH_PORT": str(health_port), "ACCORDION_LISTEN": f"0.0.0.0:{port}"}
    results = await asyncio.gather(
        asyncio.to_thread(health_cli, env=env),
        asyncio.to_thread(health_cli, "--addr", proc.addr, "--tls-ca", str(ca.cert)),
        asyncio.to_thread(health_cli, "--addr", proc.addr, "--timeout", "2"),
    )
    via_port, via_tls, plaintext = results
    assert (via_port.returncode, via_port.stdout.strip()) == (0, f"127.0.0.1:{health_port}: SERVING")
    assert (via_tls.returncode, via_tls.stdout.strip()) == (0, f"{proc.addr}: SERVING")
    assert plaintext.returncode == 1 and "UNAVAILABLE" in plaintext.stderr
    assert proc.terminate() == 0


async def test_mtls_needs_a_client_certificate_signed_by_the_client_ca(
    spawn_server: Callable[..., ServerProcess], pki: dict[str, Any]
) -> None:
    ca, server, client, stranger = pki["ca"], pki["server"], pki["client"], pki["stranger"]
    proc = spawn_server(*pem(server), "--tls-client-ca", str(ca.cert))
    assert await refused(proc.addr, creds(ca)) == grpc.StatusCode.UNAVAILABLE, "no client certificate"
    assert await refused(proc.addr, creds(ca, stranger)) == grpc.StatusCode.UNAVAILABLE, "another CA's client"
    assert await refused(proc.addr, None) == grpc.StatusCode.UNAVAILABLE, "plaintext"
    reply = await new_game(proc.addr, creds(ca, client))
    assert reply.game.version == 1
    probe = await asyncio.to_thread(
        health_cli,
        "--addr",
        proc.addr,
        "--tls-ca",
        str(ca.cert),
        "--tls-cert",
        str(client.cert),
        "--tls-key",
        str(client.key),
    )
    assert probe.returncode == 0, probe.stderr
    assert proc.terminate() == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tls-cert", "server.crt"], "--tls-cert and --tls-key go together"),
        (["--tls-key", "server.key"], "--tls-cert and --tls-key go together"),
        (["--tls-client-ca", "ca.pem"], "--tls-client-ca (mTLS) needs --tls-cert and --tls-key"),
    ],
)
def test_tls_flags_that_do_not_go_together_are_refused(args: list[str], message: str) -> None:
    done = subprocess.run(
        [*server_command(), "--listen", "127.0.0.1:0", *args], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2 and message in done.stderr


def test_an_unreadable_certificate_stops_the_server_at_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *server_command(),
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            str(tmp_path / "nope.crt"),
            "--tls-key",
            str(tmp_path / "nope.key"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0
    assert "cannot read the TLS key" in done.stderr and "accordion-server listening" not in done.stdout
