"""Targets as host:port or URLs, the shared CLI flags, and random request ids, on real servers."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest

from accordion_client import AccordionClient, AsyncAccordionClient, errors, new_request_id
from accordion_client.flags import add_connection_flags, client_kwargs, read_file, uses_tls
from accordion_client.targets import Target, resolve_target
from tests.api.helpers import ServerProcess

HEX32 = re.compile(r"^[0-9a-f]{32}$")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:50051", Target("127.0.0.1:50051", None)),
        ("  localhost:50051 ", Target("localhost:50051", None)),
        ("[::1]:50051", Target("[::1]:50051", None)),
        ("http://127.0.0.1:50051", Target("127.0.0.1:50051", False)),
        ("http://localhost:50051/", Target("localhost:50051", False)),
        ("HTTP://games.example.com", Target("games.example.com:80", False)),
        ("https://games.example.com", Target("games.example.com:443", True)),
        ("https://games.example.com:8443", Target("games.example.com:8443", True)),
        ("http://[::1]:50051", Target("[::1]:50051", False)),
        ("dns:///games.example.com:443", Target("dns:///games.example.com:443", None)),
        ("unix:/run/accordion.sock", Target("unix:/run/accordion.sock", None)),
    ],
)
def test_targets_resolve_to_an_address_and_the_tls_they_ask_for(text: str, expected: Target) -> None:
    assert resolve_target(text) == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "the target is empty"),
        ("127.0.0.1", "the port is missing"),
        ("localhost:http", "the port must be a number"),
        ("localhost:70000", "the port must be a number in 1..65535"),
        ("not a host:50051", "is not a host name"),
        ("::1:50051", "an IPv6 address goes in brackets"),
        ("ftp://games.example.com", "use http:// or https://"),
        ("http://games.example.com/v1/games", "a target has no path"),
        ("http://user@games.example.com", "a target has no path, query or user"),
        ("http://:50051", "the host is missing"),
        ("http://localhost:99999", "not a valid target"),
    ],
)
def test_garbage_targets_are_refused_with_what_a_target_looks_like(text: str, says: str) -> None:
    with pytest.raises(ValueError) as refused:
        resolve_target(text)
    assert says in str(refused.value)
    with pytest.raises(ValueError):  # and the client refuses it before opening anything
        AccordionClient(text)


def test_url_targets_reach_a_real_server(server: ServerProcess) -> None:
    for target in (f"http://{server.addr}", f"http://{server.addr}/", f"dns:///{server.addr}", server.addr):
        with AccordionClient(target) as client:
            assert not client.tls and client.target == target
            game = client.new_game(seed=7)
            assert game.play("10D>4D").notation == "10D>4D", target


async def test_the_async_client_takes_urls_too(server: ServerProcess) -> None:
    async with AsyncAccordionClient(f"http://{server.addr}") as client:
        game = await client.new_game(seed=7)
        assert (await game.play("10D>4D")).notation == "10D>4D"
    with pytest.raises(ValueError, match="the port is missing"):
        AsyncAccordionClient("localhost")


def test_https_means_tls_and_server_name_picks_the_certificates_name(secure_server: Any) -> None:
    roots = secure_server.ca_file.read_bytes()
    port = secure_server.addr.rsplit(":", 1)[1]
    with AccordionClient(
        f"https://127.0.0.1:{port}", root_certificates=roots, api_key=secure_server.api_key
    ) as client:
        assert client.tls and client.address == f"127.0.0.1:{port}"
        assert client.new_game(seed=7).play("10D>4D").notation == "10D>4D"
    # The certificate names localhost: verifying that name works, another name does not.
    with AccordionClient(
        f"https://127.0.0.1:{port}",
        root_certificates=roots,
        api_key=secure_server.api_key,
        server_name="localhost",
    ) as client:
        assert client.new_game(seed=7).version == 1
    with AccordionClient(
        f"https://127.0.0.1:{port}",
        root_certificates=roots,
        api_key=secure_server.api_key,
        server_name="elsewhere.example",
        retries=0,
    ) as client:
        with pytest.raises(errors.Unavailable):
            client.new_game(seed=7)
    with pytest.raises(ValueError, match="use https://"):
        AccordionClient(f"http://127.0.0.1:{port}", root_certificates=roots)


# --- the shared flags -------------------------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_connection_flags(parser)
    return parser.parse_args(list(argv))


def test_the_flags_default_to_the_local_server_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACCORDION_TARGET", raising=False)
    args = parse()
    assert (args.target, args.deadline, uses_tls(args)) == ("127.0.0.1:50051", 5.0, False)
    assert client_kwargs(args) == {
        "target": "127.0.0.1:50051",
        "tls": False,
        "root_certificates": None,
        "certificate_chain": None,
        "private_key": None,
        "server_name": None,
        "deadline": 5.0,
    }
    monkeypatch.setenv("ACCORDION_TARGET", "games.example.com:443")
    assert parse().target == "games.example.com:443"
    assert parse("--target", "x:1").target == "x:1"


def test_the_flags_read_the_pem_files_and_ask_for_tls(tmp_path: Path) -> None:
    ca, cert, key = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    for path in (ca, cert, key):
        path.write_bytes(f"PEM of {path.name}".encode())
    args = parse(
        "--ca-file", str(ca), "--client-cert", str(cert), "--client-key", str(key),
        "--server-name", "localhost", "--deadline", "2.5",
    )  # fmt: skip
    kwargs = client_kwargs(args)
    assert kwargs["tls"] is True and kwargs["root_certificates"] == b"PEM of ca.pem"
    assert kwargs["certificate_chain"] == b"PEM of cert.pem" and kwargs["private_key"] == b"PEM of key.pem"
    assert kwargs["server_name"] == "localhost" and kwargs["deadline"] == 2.5
    assert uses_tls(parse("--tls")) and uses_tls(parse("--target", "https://games.example.com"))
    assert not uses_tls(parse("--target", "http://games.example.com"))
    assert read_file(None) is None and read_file("") is None and read_file(str(ca)) == b"PEM of ca.pem"
    with pytest.raises(ValueError, match="go together"):
        client_kwargs(parse("--client-cert", str(cert)))
    with pytest.raises(OSError):
        client_kwargs(parse("--ca-file", str(tmp_path / "missing.pem")))


def test_the_flags_make_a_working_client(server: ServerProcess) -> None:
    args = parse("--target", f"http://{server.addr}", "--deadline", "3")
    with AccordionClient(**client_kwargs(args)) as client:
        assert client.deadline == 3.0
        assert client.new_game(seed=7).play("10D>4D").notation == "10D>4D"


# --- request ids --------------------------------------------------------------------------------


class AsyncRecorder(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self) -> None:
        self.requests: list[tuple[str, Any]] = []

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        method = details.method.decode() if isinstance(details.method, bytes) else details.method
        self.requests.append((method.rsplit("/", 1)[-1], request))
        return await continuation(details, request)


async def test_the_async_client_sends_a_random_request_id_on_every_mutation(server: ServerProcess) -> None:
    recorder = AsyncRecorder()
    async with AsyncAccordionClient(server.addr, interceptors=[recorder]) as client:
        game = await client.new_game(seed=7)
        await game.play("10D>4D")
        await game.undo()
        await game.play("10D>4D", request_id="mine-1")
    ids = [r.request_id for m, r in recorder.requests if m in ("NewGame", "ApplyMove", "Undo")]
    assert len(ids) == 4 and ids[3] == "mine-1"  # the caller's own id is sent as given
    assert all(HEX32.match(i) for i in ids[:3]) and len(set(ids)) == 4


def test_request_ids_are_128_random_bits() -> None:
    ids = [new_request_id() for _ in range(2000)]
    assert all(HEX32.match(i) for i in ids) and len(set(ids)) == len(ids)
    # uuid4 would fix 6 of the 128 bits (version and variant); every bit here varies.
    ones = [sum((int(i, 16) >> bit) & 1 for i in ids) for bit in range(128)]
    assert all(700 < n < 1300 for n in ones), [b for b, n in enumerate(ones) if not 700 < n < 1300]
