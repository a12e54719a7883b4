"""gRPC server reflection is not public (issue 28 item 6): `--reflection off` removes it from
the server (deploy/ runs so), and Envoy's public port (deploy/envoy/envoy.yaml) routes no
`/grpc.*` service but health, so reflection there is UNIMPLEMENTED even in front of a server
that has it. Real processes: accordion-server and Envoy on free ports."""

from __future__ import annotations

import tempfile
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from .conftest import RestStack, start_server


def reflection_code(addr: str) -> grpc.StatusCode:
    """The status of one reflection call (list the services) at ``addr``."""
    with grpc.insecure_channel(addr) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        try:
            replies = list(
                stub.ServerReflectionInfo(
                    iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10
                )
            )
        except grpc.RpcError as exc:
            return exc.code()  # type: ignore[no-any-return]
    assert replies and replies[0].list_services_response.service
    return grpc.StatusCode.OK


def health_status(addr: str) -> int:
    with grpc.insecure_channel(addr) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=10
        )
    return int(reply.status)


def test_reflection_off_is_unimplemented_and_the_service_still_answers() -> None:
    with tempfile.TemporaryDirectory(prefix="acc-refl-") as tmp:
        server = start_server(Path(tmp), "--reflection", "off")
        try:
            assert reflection_code(server.addr) == grpc.StatusCode.UNIMPLEMENTED
            assert health_status(server.addr) == health_pb2.HealthCheckResponse.SERVING
            assert "grpcurl" in server.output() and "reflection is off" in server.output()
        finally:
            server.close()


def test_reflection_on_by_default_for_make_serve(rest_stack: RestStack) -> None:
    assert reflection_code(rest_stack.grpc_addr) == grpc.StatusCode.OK


def test_envoy_does_not_route_reflection_on_the_public_port(rest_stack: RestStack) -> None:
    """The server behind it has reflection on (the default), so only Envoy refuses here;
    health still passes."""
    public = f"127.0.0.1:{rest_stack.envoy.port}"
    assert reflection_code(public) == grpc.StatusCode.UNIMPLEMENTED
    assert health_status(public) == health_pb2.HealthCheckResponse.SERVING


@pytest.mark.parametrize("flag", ["yes", "", "ON"])
def test_reflection_takes_only_on_or_off(flag: str) -> None:
    from accordion.config import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--reflection", flag], env={})
    assert parse_args([], env={"ACCORDION_REFLECTION": "off"}).reflection == "off"
    assert parse_args([], env={}).reflection == "on"
