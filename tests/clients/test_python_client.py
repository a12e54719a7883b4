"""The Python client package against real servers: play, ids and versions, retries, typed errors."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

import accordion_client
from accordion.v1 import accordion_pb2 as service_pb
from accordion_client import AccordionClient, AsyncAccordionClient, GameHandle, errors, pb
from tests.api.helpers import ROOT, ServerProcess

HEX32 = re.compile(r"^[0-9a-f]{32}$")


class Recorder(grpc.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    """Records (method, request) of every call; ``fail`` can turn chosen calls into UNAVAILABLE."""

    def __init__(self, fail: Callable[[str, Any, int], str] | None = None) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.replies: list[Any] = []
        self.fail = fail

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        method = details.method.rsplit("/", 1)[-1]
        self.calls.append((method, request))
        when = self.fail(method, request, len(self.calls)) if self.fail else ""
        if when == "before":  # the request never reaches the server
            raise FakeUnavailable()
        outcome = continuation(details, request)
        if when == "after":  # the server applied it; the reply is lost on the way back
            self.replies.append(outcome.result())
            raise FakeUnavailable()
        return outcome

    def methods(self) -> list[str]:
        return [m for m, _ in self.calls]


class FakeUnavailable(grpc.RpcError, grpc.Call):  # type: ignore[misc]
    """What a dropped connection looks like to the caller: UNAVAILABLE, no rich status."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "connection reset (simulated)"

    def trailing_metadata(self) -> tuple[()]:
        return ()

    def initial_metadata(self) -> tuple[()]:
        return ()

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> None:
        return None

    def cancel(self) -> bool:
        return False

    def add_callback(self, callback: Any) -> bool:
        return False


# --- playing --------------------------------------------------------------------------------


def test_a_game_by_notation_keeps_token_and_version(client: AccordionClient) -> None:
    game = client.new_game("accordion", seed=7)
    assert isinstance(game, GameHandle) and game.version == 1 and len(game.token) > 20
    assert game.legal[:3] == ["10D>4D", "10D>JD", "KC>3C"] and game.status == "in progress"
    assert game.token not in repr(game)

    played = game.play("10d>4d")  # any accepted spelling; the reply has the canonical one
    assert (played.notation, played.kind, played.from_pile, played.to_pile) == (
        "10D>4D",
        pb.MOVE_KIND_STACK,
        6,
        5,
    )
    assert game.version == 2 and game.game.moves_played == 1 and "5:10♦×2" in game.text
    structured = game.play(pb.Move(kind=pb.MOVE_KIND_STACK, from_pile=10, to_pile=7))
    assert structured.notation == "9H>6H" and game.version == 3

    hint = game.hint()
    assert hint is not None and hint.notation in game.legal
    legal = game.legal_moves()
    assert [m.notation for m in legal] == game.legal and all(m.kind for m in legal)
    score = game.score()
    assert (score.version, score.piles_left, score.penalty) == (3, 50, game.game.penalty)

    undone = game.undo()
    assert undone.notation == "9H>6H" and game.version == 4 and game.game.moves_played == 1
    assert game.refresh() == game.game and game.version == 4


def test_variants_options_and_an_explicit_deal(client: AccordionClient) -> None:
    ids = [v.id for v in client.list_variants()]
    assert ids[0] == "accordion" and "royal-marriage" in ids and "cribbage-solitaire" in ids
    assert [v.id for v in client.list_variants("Royal Marriage")] == ["royal-marriage"]
    game = client.new_game("compacted", {"win_piles": 3}, seed=1)
    assert game.game.options["win_piles"] == "3"
    deck = [f"{r}{s}" for s in "SHDC" for r in ("A", *map(str, range(2, 11)), "J", "Q", "K")]
    dealt = client.new_game("accordion", deal=deck)
    assert dealt.text.startswith("1:A♠ 2:2♠ 3:3♠") and "2S>AS" in dealt.legal
    assert dealt.play("2s").notation == "2S>AS"  # a lone pile when exactly one move takes it
    assert dealt.text.startswith("1:2♠×2 2:3♠")
    with pytest.raises(ValueError):
        client.new_game("accordion", seed=1, deal=["8D"])


def test_open_game_resumes_from_id_and_token(client: AccordionClient, server: ServerProcess) -> None:
    game = client.new_game("royal-marriage", seed=7)
    game.play("x7")
    with AccordionClient(server.addr) as other:
        resumed = other.open_game(game.id, game.token)
        assert resumed.version == 2 and resumed.text == game.text
        resumed.play(resumed.legal[0])
    with pytest.raises(errors.VersionMismatch) as stale:
        game.play(game.legal[0])  # our view is at version 2; the game is at 3
    assert (stale.value.current_version, stale.value.expected_version) == (3, 2)
    assert stale.value.reason == "VERSION_MISMATCH" and stale.value.code == grpc.StatusCode.ABORTED
    game.refresh()
    assert game.version == 3
    game.play(game.legal[0])
    assert game.version == 4


def test_games_survive_a_switch_of_server_process(
    redis_url: str, spawn_server: Callable[..., ServerProcess]
) -> None:
    a, b = spawn_server(env={"REDIS_URL": redis_url}), spawn_server(env={"REDIS_URL": redis_url})
    with AccordionClient(a.addr) as ca, AccordionClient(b.addr) as cb:
        game = ca.new_game("accordion", seed=7)
        game.play("10D>4D")
        on_b = cb.open_game(game.id, game.token)
        on_b.play("9H>6H")
        assert game.refresh().version == 3 and game.game.moves_played == 2


# --- request ids, expected versions, retries ---------------------------------------------


def test_every_mutation_has_a_fresh_request_id_and_the_expected_version(server: ServerProcess) -> None:
    rec = Recorder()
    with AccordionClient(server.addr, interceptors=[rec]) as client:
        game = client.new_game(seed=7)
        game.play("10D>4D")
        game.play("9H>6H")
        game.undo()
        game.hint()
        game.score()
    mutations = [(m, r) for m, r in rec.calls if m in ("NewGame", "ApplyMove", "Undo")]
    assert [m for m, _ in mutations] == ["NewGame", "ApplyMove", "ApplyMove", "Undo"]
    ids = [r.request_id for _, r in mutations]
    assert all(HEX32.match(i) for i in ids) and len(set(ids)) == 4
    assert [r.expected_version for _, r in mutations[1:]] == [1, 2, 3]
    assert rec.methods()[-2:] == ["Hint", "Score"]


def test_a_lost_reply_is_retried_with_the_same_request_id_and_applies_once(server: ServerProcess) -> None:
    rec = Recorder(fail=lambda method, req, n: "after" if method == "ApplyMove" and n == 2 else "")
    with AccordionClient(server.addr, interceptors=[rec], backoff=0.01) as client:
        game = client.new_game(seed=7)
        move = game.play("10D>4D")  # the first reply is lost; the retry gets the server's first reply
        assert move.notation == "10D>4D" and game.version == 2
        applies = [r for m, r in rec.calls if m == "ApplyMove"]
        assert len(applies) == 2 and applies[0].request_id == applies[1].request_id
        assert applies[0] == applies[1]  # the very same request, expected_version included
        assert game.refresh().version == 2 and game.game.moves_played == 1  # applied once
        assert rec.replies[0].game == game.game


def test_a_lost_new_game_reply_is_retried_into_the_same_game(server: ServerProcess) -> None:
    rec = Recorder(fail=lambda method, req, n: "after" if method == "NewGame" and n == 1 else "")
    with AccordionClient(server.addr, interceptors=[rec], backoff=0.01) as client:
        game = client.new_game("accordion", seed=11)
        first = rec.replies[0]
        assert [m for m, _ in rec.calls] == ["NewGame", "NewGame"]
        assert rec.calls[0][1].request_id == rec.calls[1][1].request_id
        assert game.id == first.game.id and game.token == first.token


def test_unavailable_is_retried_a_bounded_number_of_times(dead_target: str) -> None:
    rec = Recorder()
    with AccordionClient(dead_target, interceptors=[rec], retries=2, backoff=0.01, deadline=2) as client:
        with pytest.raises(errors.Unavailable) as caught:
            client.new_game(seed=1)
    assert rec.methods() == ["NewGame"] * 3
    assert len({r.request_id for _, r in rec.calls}) == 1
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE


def test_other_errors_are_not_retried(server: ServerProcess) -> None:
    rec = Recorder()
    with AccordionClient(server.addr, interceptors=[rec]) as client:
        game = client.new_game(seed=7)
        with pytest.raises(errors.IllegalMove):
            game.play("KC>QS")
    assert rec.methods() == ["NewGame", "ApplyMove"]


# --- typed errors -------------------------------------------------------------------------


def test_refused_moves_carry_the_legal_moves(client: AccordionClient) -> None:
    game = client.new_game(seed=7)
    with pytest.raises(errors.IllegalMove) as illegal:
        game.play("8D>9D")
    exc = illegal.value
    assert isinstance(exc, errors.MoveRejected) and isinstance(exc, errors.FailedPrecondition)
    assert exc.reason == "ILLEGAL_MOVE" and exc.code == grpc.StatusCode.FAILED_PRECONDITION
    assert exc.legal_moves == game.legal and [m.notation for m in exc.legal] == game.legal
    assert (
        exc.why == "8D>9D is not legal: 8♦ can go only onto the pile 1 or 3 to its left; 9♦ is 7 to its right"
    )
    assert str(exc) == f"{exc.why}; legal now: {', '.join(game.legal)}"

    with pytest.raises(errors.InvalidMove) as invalid:
        game.play("qq")
    assert isinstance(invalid.value, errors.InvalidArgument) and isinstance(
        invalid.value, errors.MoveRejected
    )
    assert invalid.value.legal_moves == game.legal
    assert [f for f, _ in invalid.value.field_violations] == ["move"]
    assert game.version == 1  # nothing changed


def test_request_errors_are_typed_with_field_violations(client: AccordionClient) -> None:
    with pytest.raises(errors.UnknownVariant) as unknown:
        client.new_game("no-such-game")
    assert unknown.value.field_violations and unknown.value.field_violations[0][0] == "variant"
    assert "no-such-game" in unknown.value.message
    with pytest.raises(errors.InvalidOption):
        client.new_game("accordion", {"bogus": 1})
    with pytest.raises(errors.InvalidDeal):
        client.new_game("accordion", deal=["8D", "ZZ"])
    game = client.new_game(seed=7)
    with pytest.raises(errors.NothingToUndo):
        game.undo()
    game.play("10D>4D", request_id="fixed-id-1")
    with pytest.raises(errors.RequestIdReused) as reused:
        game.play("9H>6H", request_id="fixed-id-1")
    assert reused.value.field_violations[0][0] == "request_id"
    with pytest.raises(errors.InvalidArgument) as too_long:
        game.play("9H>6H", request_id="x" * 129)
    assert too_long.value.reason == "INVALID_REQUEST"
    assert any(f == "request_id" for f, _ in too_long.value.field_violations)


def test_auth_and_missing_games_are_typed(client: AccordionClient) -> None:
    game = client.new_game(seed=7)
    with pytest.raises(errors.GameNotFound):  # a wrong token is answered as an unknown id
        client.open_game(game.id, "not-the-token")
    with pytest.raises(errors.Unauthenticated):
        client.open_game(game.id, "")
    with pytest.raises(errors.GameNotFound) as missing:
        client.open_game("A" * 22, game.token)
    assert missing.value.reason == "GAME_NOT_FOUND"


def test_watch_replays_the_log_and_a_deadline_ends_it_typed(client: AccordionClient) -> None:
    game = client.new_game(seed=7)
    game.play("10D>4D")
    game.undo()
    seen: list[pb.GameEvent] = []
    with pytest.raises(errors.DeadlineExceeded) as late:
        for event in game.watch(deadline=0.5):  # no more events come: the deadline ends the stream
            seen.append(event)
    assert [(e.version, e.kind, e.move.notation) for e in seen] == [
        (2, pb.GameEvent.KIND_MOVE, "10D>4D"),
        (3, pb.GameEvent.KIND_UNDO, "10D>4D"),
    ]
    assert late.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


def test_errors_without_a_rich_status_map_by_code() -> None:
    error = errors.from_rpc_error(FakeUnavailable())
    assert type(error) is errors.Unavailable and error.reason == "" and error.message.startswith("connection")


def test_tls_and_an_api_key(secure_server: Any) -> None:
    roots = secure_server.ca_file.read_bytes()
    with AccordionClient(
        secure_server.addr, root_certificates=roots, api_key=secure_server.api_key
    ) as client:
        assert client.tls
        game = client.new_game(seed=7)
        assert game.play("10D>4D").notation == "10D>4D" and game.version == 2
    with AccordionClient(secure_server.addr, root_certificates=roots) as keyless:
        with pytest.raises(errors.Unauthenticated) as missing:
            keyless.new_game(seed=7)
        assert missing.value.reason == "API_KEY_MISSING"
    with AccordionClient(secure_server.addr, api_key=secure_server.api_key, retries=0) as plaintext:
        with pytest.raises(errors.Unavailable):  # a plaintext client cannot talk to a TLS-only server
            plaintext.new_game(seed=7)


def test_rate_limits_are_typed_and_retried_after_the_servers_delay() -> None:
    from google.protobuf import any_pb2, duration_pb2
    from google.rpc import error_details_pb2, status_pb2
    from grpc_status import rpc_status

    from accordion_client.client import retry_delay

    info, retry = (
        error_details_pb2.ErrorInfo(reason="RATE_LIMITED", domain="accordion.v1"),
        error_details_pb2.RetryInfo(),
    )
    retry.retry_delay.CopyFrom(duration_pb2.Duration(nanos=250_000_000))
    packed = [any_pb2.Any(), any_pb2.Any()]
    packed[0].Pack(info)
    packed[1].Pack(retry)
    status = rpc_status.to_status(status_pb2.Status(code=8, message="slow down", details=packed))

    class Limited(FakeUnavailable):
        def code(self) -> grpc.StatusCode:
            return grpc.StatusCode.RESOURCE_EXHAUSTED

        def details(self) -> str:
            return "slow down"

        def trailing_metadata(self) -> Any:
            return status.trailing_metadata

    error = errors.from_rpc_error(Limited())
    assert isinstance(error, errors.RateLimited) and isinstance(error, errors.ResourceExhausted)
    assert error.retry_delay == 0.25 and retry_delay(error, 0, 0.1) == 0.25
    error.retry_delay = 60.0  # too long to sleep through: raised instead
    assert retry_delay(error, 0, 0.1) is None
    assert retry_delay(errors.IllegalMove("no"), 0, 0.1) is None


def test_resign_ends_the_game_lost_and_is_refused_once_over(client: AccordionClient) -> None:
    game = client.new_game("accordion-stock", seed=5)
    game.play("deal")
    penalty, version = game.game.penalty, game.version
    assert not game.resigned and all(m.kind != pb.MOVE_KIND_RESIGN for m in game.game.legal_moves)
    move = game.resign()
    assert (move.kind, move.notation) == (pb.MOVE_KIND_RESIGN, "resign")
    assert game.status == "lost" and game.over and game.resigned and game.legal == []
    assert game.game.penalty == penalty and game.version == version + 1
    with pytest.raises(errors.IllegalMove) as refused:
        game.resign()
    assert refused.value.legal_moves == [] and game.version == version + 1
    assert game.undo().notation == "resign" and game.status == "in progress" and not game.resigned


# --- asyncio ------------------------------------------------------------------------------


async def test_the_async_client_plays_and_watches(start_server: Callable[..., Any]) -> None:
    running = await start_server()
    async with AsyncAccordionClient(running.addr) as client:
        game = await client.new_game("accordion", seed=7)
        watcher = await client.open_game(game.id, game.token)
        events = watcher.watch()
        assert (await game.play("10D>4D")).notation == "10D>4D"
        first = await anext(events)
        assert (first.version, first.move.notation) == (2, "10D>4D")
        await events.aclose()
        assert (await game.hint()) is not None and (await game.score()).penalty == 50
        assert [m.notation for m in await game.legal_moves()] == game.legal
        assert (await game.undo()).notation == "10D>4D" and game.version == 3
        await watcher.refresh()
        await game.play(game.legal[0])  # the game moves on: the watcher's view (version 3) is stale
        with pytest.raises(errors.VersionMismatch) as stale:
            await watcher.play(watcher.legal[0])
        assert stale.value.current_version == 4
        with pytest.raises(errors.IllegalMove) as illegal:
            await game.play("8D>9D")
        assert illegal.value.legal_moves == game.legal
        resigned = await game.resign()
        assert resigned.kind == pb.MOVE_KIND_RESIGN and game.status == "lost" and game.resigned
        with pytest.raises(errors.IllegalMove):
            await game.resign()


# --- the package --------------------------------------------------------------------------


def test_the_client_package_stands_alone_with_typed_stubs() -> None:
    code = (
        "import sys, accordion_client, accordion_client.chat, accordion_client.cli, accordion_client.load\n"
        "from accordion_client.v1 import accordion_pb2, accordion_pb2_grpc\n"
        "bad = sorted(m for m in sys.modules if m == 'accordion' or m.startswith('accordion.'))\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    package = Path(accordion_client.__file__).parent
    assert (package / "py.typed").exists()
    for name in ("accordion_pb2", "accordion_pb2_grpc"):
        assert (package / "v1" / f"{name}.pyi").exists()
    grpc_src = (package / "v1" / "accordion_pb2_grpc.py").read_text()
    assert "from accordion_client.v1 import accordion_pb2" in grpc_src
    # The same descriptors as the service's copy: both load in one process (as here).
    assert pb.DESCRIPTOR.serialized_pb == service_pb.DESCRIPTOR.serialized_pb
    pyproject = (ROOT / "clients" / "python" / "pyproject.toml").read_text()
    assert 'name = "accordion-client"' in pyproject and "accordion-service" not in pyproject


def test_the_readme_python_client_example_runs(server: ServerProcess) -> None:
    readme = (ROOT / "docs" / "clients.md").read_text()  # the section the README once held
    section = readme.split("## Python client", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    script = code.group(1).replace("127.0.0.1:50051", server.addr)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    expected = re.findall(r"# prints: (.*)", code.group(1))
    assert expected and done.stdout.splitlines() == expected
