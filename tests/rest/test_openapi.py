"""docs/openapi.json, generated from the protos by tools/gen_openapi.py (`make proto`), is a valid
OpenAPI 3.1 document that describes the REST face as Envoy serves it: every RPC has its route,
every route answers, and real responses and errors validate against the documented schemas
(strictly: a field the document does not name fails)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate

from accordion.v1 import accordion_pb2 as pb
from tests.api.helpers import ROOT

from .conftest import Rest

DOC = json.loads((ROOT / "docs" / "openapi.json").read_text())


def test_the_document_is_valid_openapi_3_1() -> None:
    validate(DOC)
    assert DOC["openapi"] == "3.1.0"


def test_every_rpc_has_one_documented_operation() -> None:
    ops = {op["operationId"] for path in DOC["paths"].values() for op in path.values()}
    service = pb.DESCRIPTOR.services_by_name["AccordionService"]
    assert ops == {f"AccordionService_{m.name}" for m in service.methods}


def strict(schemas: dict[str, Any]) -> dict[str, Any]:
    """The schemas with additionalProperties: false on every message (not on maps or Any)."""
    out = copy.deepcopy(schemas)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(out)
    return out


STRICT = strict(DOC["components"])


def check(instance: Any, schema: dict[str, Any]) -> None:
    OAS31Validator({**schema, "components": STRICT}).validate(instance)


def operation(path: str, verb: str) -> dict[str, Any]:
    return dict(DOC["paths"][path][verb])


def response_schema(path: str, verb: str, status: str = "200") -> dict[str, Any]:
    content = operation(path, verb)["responses"][status]["content"]
    return dict(next(iter(content.values()))["schema"])


def test_real_responses_match_the_documented_schemas(rest: Rest) -> None:
    check(rest.get("/v1/variants").json(), response_schema("/v1/variants", "get"))

    body = {"variant": "accordion", "seed": "7", "requestId": "openapi-1"}
    check(body, operation("/v1/games", "post")["requestBody"]["content"]["application/json"]["schema"])
    reply = rest.post("/v1/games", body)
    check(reply.json(), response_schema("/v1/games", "post"))
    rest.token = reply.json()["token"]
    gid = reply.json()["game"]["id"]

    move = {"move": {"notation": "10D>4D"}, "expectedVersion": "1"}
    check(
        move,
        operation("/v1/games/{game_id}/moves", "post")["requestBody"]["content"]["application/json"][
            "schema"
        ],
    )
    check(
        rest.post(f"/v1/games/{gid}/moves", move).json(), response_schema("/v1/games/{game_id}/moves", "post")
    )
    check(rest.post(f"/v1/games/{gid}:undo").json(), response_schema("/v1/games/{game_id}:undo", "post"))
    for suffix in ("", "/legal-moves", "/score", "/hint"):
        path = "/v1/games/{game_id}" + suffix
        check(rest.get(f"/v1/games/{gid}{suffix}").json(), response_schema(path, "get"))

    # An error with every kind of detail: ErrorInfo and the packed LegalMovesResponse.
    illegal = rest.post(f"/v1/games/{gid}/moves", {"move": {"notation": "KC>10D"}})
    assert illegal.status == 400
    status_schema = response_schema("/v1/games/{game_id}/moves", "post", "default")
    check(illegal.json(), status_schema)
    for detail in illegal.json()["details"]:
        name = detail["@type"].rsplit("/", 1)[1]
        check({k: v for k, v in detail.items() if k != "@type"}, {"$ref": f"#/components/schemas/{name}"})


@pytest.mark.parametrize(("path", "verb"), [(p, v) for p, ops in DOC["paths"].items() for v in ops])
def test_every_documented_route_reaches_the_server(rest: Rest, path: str, verb: str) -> None:
    """No token and an unknown game: the answer comes from the server (a JSON google.rpc.Status
    or a result), never the transcoder's own 404 for a route it does not know."""
    url = path.replace("{game_id}", "AAAAAAAAAAAAAAAAAAAAAA")
    reply = rest.request(verb.upper(), url, {} if "requestBody" in operation(path, verb) else None)
    assert reply.status in (200, 400, 401), (reply.status, reply.text)
    body = reply.json()
    if reply.status != 200:
        assert body["details"][0]["domain"] == "accordion.v1", body
        # Request validation comes first (ApplyMove without a move), then the token.
        expected = (
            {"MISSING_TOKEN", "INVALID_REQUEST"}
            if "security" in operation(path, verb)
            else {"INVALID_REQUEST"}
        )
        assert body["details"][0]["reason"] in expected, body
