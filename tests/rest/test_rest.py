"""The REST/JSON face: Envoy's gRPC-JSON transcoder (deploy/envoy/envoy.yaml) in front of a real
accordion-server, driven over plain HTTP/1.1 with JSON, as curl would.

What it pins down: every google.api.http route of the contract answers; the bearer token in the
`authorization` header reaches the server as gRPC metadata; gRPC errors come back as HTTP codes
with the JSON google.rpc.Status body (ErrorInfo reason and the other details included);
WatchGame streams one JSON object per line; and the same port still speaks gRPC.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2

from accordion.v1 import accordion_pb2 as pb
from accordion.v1 import accordion_pb2_grpc as pb_grpc
from tests.api.helpers import ROOT

from .conftest import DESCRIPTOR, ENVOY_CONFIG, Rest, RestStack, envoy_command, start_envoy, start_server

UNKNOWN_ID = "AAAAAAAAAAAAAAAAAAAAAA"


def status_of(reply: Any) -> dict[str, Any]:
    """The JSON google.rpc.Status of an error reply, checked for its ErrorInfo."""
    assert reply.headers.get("content-type") == "application/json", reply.headers
    body = reply.json()
    assert set(body) == {"code", "message", "details"}, body
    infos = [d for d in body["details"] if d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"]
    assert len(infos) == 1 and infos[0]["domain"] == "accordion.v1", body
    body["info"] = infos[0]
    return dict(body)


def test_list_variants(rest: Rest) -> None:
    reply = rest.get("/v1/variants")
    assert reply.status == 200, reply.text
    ids = [v["id"] for v in reply.json()["variants"]]
    assert "accordion" in ids and len(ids) > 5
    one = rest.get("/v1/variants?variant=Tower%20of%20Babel").json()["variants"]
    assert [v["id"] for v in one] == ["accordion"]
    assert "MOVE_KIND_STACK" in one[0]["moveKinds"] and one[0]["moveKinds"][-1] == "MOVE_KIND_RESIGN"


def test_a_seeded_game_over_rest(rest: Rest) -> None:
    game = rest.new_game("accordion", seed=7)
    gid = game["id"]
    assert game["version"] == "1"  # int64 is a string in proto3 JSON
    assert game["status"] == "GAME_STATUS_IN_PROGRESS"
    assert [m["notation"] for m in game["legalMoves"][:4]] == ["10D>4D", "10D>JD", "KC>3C", "9H>6H"]
    assert game["seed"] == "7"  # shown: every card is face up and no chance is to come

    got = rest.get(f"/v1/games/{gid}")
    assert got.status == 200 and got.json()["game"] == game

    legal = rest.get(f"/v1/games/{gid}/legal-moves").json()
    assert legal["version"] == "1" and legal["moves"] == game["legalMoves"]

    # A move as notation, at the expected version ...
    played = rest.post(f"/v1/games/{gid}/moves", {"move": {"notation": "10D>4D"}, "expectedVersion": "1"})
    assert played.status == 200, played.text
    assert played.json()["move"]["notation"] == "10D>4D"
    assert played.json()["game"]["version"] == "2"

    # ... or structured (snake_case field names are accepted too).
    structured = rest.post(
        f"/v1/games/{gid}/moves",
        {"move": {"kind": "MOVE_KIND_STACK", "from_pile": 10, "to_pile": 7}, "expected_version": 2},
    ).json()
    assert structured["move"] == {
        "kind": "MOVE_KIND_STACK",
        "fromPile": 10,
        "toPile": 7,
        "positions": [],
        "windowFirst": 0,
        "windowLast": 0,
        "combo": "",
        "notation": "9H>6H",
        # (a tableau MOVE's fields, at their defaults: Envoy prints every field)
        "fromZone": "ZONE_KIND_UNSPECIFIED",
        "toZone": "ZONE_KIND_UNSPECIFIED",
        "count": 0,
    }
    assert structured["game"]["version"] == "3"

    hint = rest.get(f"/v1/games/{gid}/hint").json()
    assert hint["version"] == "3"
    assert hint["move"]["notation"] in {m["notation"] for m in structured["game"]["legalMoves"]}

    undone = rest.post(f"/v1/games/{gid}:undo").json()
    assert undone["move"]["notation"] == "9H>6H" and undone["game"]["version"] == "4"

    score = rest.get(f"/v1/games/{gid}/score").json()
    assert score == {
        "version": "4",
        "status": "GAME_STATUS_IN_PROGRESS",
        "penalty": 50,
        "pilesLeft": 51,
        "stockSize": 0,
        "cribbagePoints": 0,
        "thresholdMet": False,
    }


def test_a_retry_with_the_same_request_id_applies_nothing(rest: Rest) -> None:
    gid = rest.new_game()["id"]
    body = {"move": {"notation": "10D>4D"}, "requestId": "rest-retry-1"}
    first = rest.post(f"/v1/games/{gid}/moves", body)
    again = rest.post(f"/v1/games/{gid}/moves", body)
    assert first.status == again.status == 200
    assert first.json() == again.json()
    assert rest.get(f"/v1/games/{gid}").json()["game"]["version"] == "2"


def test_resign_over_rest_and_its_retry(rest: Rest) -> None:
    gid = rest.new_game("accordion-stock", seed=5)["id"]
    body = {"move": {"kind": "MOVE_KIND_RESIGN"}, "requestId": "rest-resign-1"}
    first = rest.post(f"/v1/games/{gid}/moves", body)
    assert first.status == 200, first.text
    reply = first.json()
    assert (reply["move"]["kind"], reply["move"]["notation"]) == ("MOVE_KIND_RESIGN", "resign")
    assert reply["game"]["status"] == "GAME_STATUS_LOST" and "seed" not in reply["game"]
    assert not reply["game"].get("legalMoves") and reply["game"]["state"].endswith(" resigned")
    assert rest.post(f"/v1/games/{gid}/moves", body).json() == reply, "a retry gets the first answer"
    again = rest.post(f"/v1/games/{gid}/moves", {"move": {"notation": "resign"}})
    assert again.status == 400 and status_of(again)["info"]["reason"] == "ILLEGAL_MOVE"
    assert rest.get(f"/v1/games/{gid}").json()["game"]["version"] == "2"


# (HTTP status, gRPC code, reason) as Envoy's transcoder maps them (convert_grpc_status).
ERROR_CASES = {
    "illegal move": (400, 9, "ILLEGAL_MOVE"),  # FAILED_PRECONDITION -> 400
    "nothing to undo": (400, 9, "NOTHING_TO_UNDO"),
    "unreadable move": (400, 3, "INVALID_MOVE"),  # INVALID_ARGUMENT -> 400
    "unknown variant": (400, 3, "UNKNOWN_VARIANT"),
    "bad field": (400, 3, "INVALID_REQUEST"),
    "no token": (401, 16, "MISSING_TOKEN"),  # UNAUTHENTICATED -> 401
    "wrong token": (404, 5, "GAME_NOT_FOUND"),  # as an unknown game: NOT_FOUND -> 404
    "unknown game": (404, 5, "GAME_NOT_FOUND"),  # NOT_FOUND -> 404
    "stale version": (409, 10, "VERSION_MISMATCH"),  # ABORTED -> 409
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors_are_http_codes_with_the_json_status(rest: Rest, case: str) -> None:
    gid = rest.new_game()["id"]
    moves = f"/v1/games/{gid}/moves"
    reply = {
        "illegal move": lambda: rest.post(moves, {"move": {"notation": "KC>10D"}}),
        "nothing to undo": lambda: rest.post(f"/v1/games/{gid}:undo"),
        "unreadable move": lambda: rest.post(moves, {"move": {"notation": "10Z>4D"}}),
        "unknown variant": lambda: rest.post("/v1/games", {"variant": "no-such-game"}),
        "bad field": lambda: rest.post(moves, {"move": {"notation": "deal"}, "requestId": "x" * 200}),
        "no token": lambda: rest.get(f"/v1/games/{gid}", token=""),
        "wrong token": lambda: rest.get(f"/v1/games/{gid}", token="not-the-token"),
        "unknown game": lambda: rest.get(f"/v1/games/{UNKNOWN_ID}"),
        "stale version": lambda: rest.post(moves, {"move": {"notation": "10D>4D"}, "expectedVersion": "7"}),
    }[case]()
    http_status, code, reason = ERROR_CASES[case]
    assert reply.status == http_status, reply.text
    status = status_of(reply)
    assert status["code"] == code
    assert status["info"]["reason"] == reason
    assert status["message"]
    # Nothing changed.
    assert rest.get(f"/v1/games/{gid}").json()["game"]["version"] == "1"

    types = [d["@type"] for d in status["details"]]
    if reason in ("ILLEGAL_MOVE", "INVALID_MOVE"):
        legal = next(d for d in status["details"] if d["@type"].endswith("/accordion.v1.LegalMovesResponse"))
        assert legal["version"] == "1"
        assert [m["notation"] for m in legal["moves"]][:2] == ["10D>4D", "10D>JD"]
        assert json.loads(status["info"]["metadata"]["legal_moves"])[:2] == ["10D>4D", "10D>JD"]
    if reason == "VERSION_MISMATCH":
        assert status["info"]["metadata"]["current_version"] == "1"
        assert status["info"]["metadata"]["expected_version"] == "7"
    if reason == "INVALID_REQUEST":
        bad = next(d for d in status["details"] if d["@type"].endswith("/google.rpc.BadRequest"))
        assert [v["field"] for v in bad["fieldViolations"]] == ["request_id"]
    if reason in ("MISSING_TOKEN", "GAME_NOT_FOUND"):
        assert types == ["type.googleapis.com/google.rpc.ErrorInfo"]


def test_a_2000_position_remove_is_a_small_400(rest: Rest) -> None:
    """Issue 14 item 7 through REST: a move's repeated fields are capped by validation, and the error
    is small (before: over 16 KiB of trailers, and Envoy answered 502)."""
    gid = rest.new_game("push-pin", seed=3)["id"]
    reply = rest.post(
        f"/v1/games/{gid}/moves", {"move": {"kind": "MOVE_KIND_REMOVE", "positions": list(range(1, 2001))}}
    )
    assert reply.status == 400, reply.text
    status = status_of(reply)
    assert status["code"] == 3 and status["info"]["reason"] == "INVALID_REQUEST"
    bad = next(d for d in status["details"] if d["@type"].endswith("/google.rpc.BadRequest"))
    assert [(v["field"], v["description"]) for v in bad["fieldViolations"]] == [
        ("move.positions", "at most 104 positions")
    ]
    assert len(reply.text) < 1024, len(reply.text)
    assert rest.get(f"/v1/games/{gid}").json()["game"]["version"] == "1"  # nothing changed


def test_a_message_over_the_servers_limit_is_429(rest: Rest) -> None:
    """RESOURCE_EXHAUSTED from gRPC itself (the 64 KiB receive limit): no ErrorInfo, still JSON."""
    reply = rest.post("/v1/games", {"variant": "accordion", "requestId": "x" * 70_000})
    assert reply.status == 429, reply.text
    assert reply.json()["code"] == 8


def test_an_unreachable_store_is_503(tmp_path: Path) -> None:
    """UNAVAILABLE (STORE_UNAVAILABLE): a server whose Redis is not there, behind its own Envoy."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    server = start_server(tmp_path, "--redis-url", f"redis://127.0.0.1:{closed}", "--store-timeout", "0.5")
    try:
        envoy = start_envoy(int(server.addr.rsplit(":", 1)[1]), tmp_path)
        try:
            reply = Rest(f"http://127.0.0.1:{envoy.port}").post("/v1/games", {"variant": "accordion"})
        finally:
            envoy.close()
    finally:
        server.close()
    assert reply.status == 503, reply.text
    status = status_of(reply)
    assert status["code"] == 14 and status["info"]["reason"] == "STORE_UNAVAILABLE"


def test_requests_the_transcoder_rejects_itself(rest: Rest) -> None:
    """Before any gRPC call: no route, a wrong method, an unknown query parameter, bad JSON."""
    assert rest.get("/v1/nothing-here").status == 404
    assert rest.request("DELETE", f"/v1/games/{UNKNOWN_ID}").status == 404
    assert rest.get("/v1/variants?colour=red").status == 400
    bad_json = rest.request("POST", "/v1/games", raw=b'{"variant": "accordion", ')
    assert bad_json.status == 400


def test_watch_game_streams_newline_delimited_json(rest: Rest) -> None:
    gid = rest.new_game()["id"]
    assert rest.post(f"/v1/games/{gid}/moves", {"move": {"notation": "10D>4D"}}).status == 200

    req = urllib.request.Request(f"{rest.base}/v1/games/{gid}:watch?afterVersion=0")
    req.add_header("authorization", f"Bearer {rest.token}")
    events: list[dict[str, Any]] = []
    with urllib.request.urlopen(req, timeout=10) as stream:
        assert stream.status == 200
        first = json.loads(stream.readline())  # the replayed move: the headers are out by now
        events.append(first["event"])

        def play() -> None:
            other = Rest(rest.base, rest.token)
            other.post(f"/v1/games/{gid}/moves", {"move": {"notation": "9H>6H"}})
            other.post(f"/v1/games/{gid}:undo")

        player = threading.Thread(target=play)
        player.start()
        for _ in range(2):
            line = stream.readline()
            assert line.strip(), "the stream ended early"
            events.append(json.loads(line)["event"])
        player.join()
    assert [(e["version"], e["kind"], e["move"]["notation"]) for e in events] == [
        ("2", "KIND_MOVE", "10D>4D"),
        ("3", "KIND_MOVE", "9H>6H"),
        ("4", "KIND_UNDO", "9H>6H"),
    ]
    assert events[-1]["game"]["version"] == "4"


def test_watch_errors_before_the_stream_are_http_codes(rest: Rest) -> None:
    rest.new_game()
    reply = rest.get(f"/v1/games/{UNKNOWN_ID}:watch")
    assert reply.status == 404, reply.text
    assert status_of(reply)["info"]["reason"] == "GAME_NOT_FOUND"


def test_the_same_port_still_speaks_grpc_health_included(rest_stack: RestStack, rest: Rest) -> None:
    gid = rest.new_game()["id"]
    with grpc.insecure_channel(f"127.0.0.1:{rest_stack.envoy.port}") as channel:
        stub = pb_grpc.AccordionServiceStub(channel)
        game = stub.GetGame(
            pb.GetGameRequest(game_id=gid), metadata=(("authorization", f"Bearer {rest.token}"),), timeout=10
        ).game
        assert game.id == gid and game.version == 1
        with pytest.raises(grpc.RpcError) as caught:
            stub.GetGame(pb.GetGameRequest(game_id=gid), timeout=10)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        health = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )(health_pb2.HealthCheckRequest(service="accordion.v1.AccordionService"), timeout=10)
        assert health.status == health_pb2.HealthCheckResponse.SERVING


def test_the_committed_envoy_config_is_valid() -> None:
    """deploy/envoy/envoy.yaml as `make serve-rest` runs it (from the repository root)."""
    assert DESCRIPTOR.exists(), "run 'make proto'"
    done = subprocess.run(
        [
            *envoy_command(),
            "--mode",
            "validate",
            "-c",
            str(ENVOY_CONFIG),
            "--disable-hot-restart",
            "--log-level",
            "error",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
