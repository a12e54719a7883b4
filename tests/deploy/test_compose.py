"""deploy/compose.yaml against the Compose Specification's JSON schema (the copy check-jsonschema
vendors, so offline), then what the schema cannot know about this service."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import jsonschema
import pytest
import yaml

from accordion.config import OPTIONS as _OPTIONS

from .conftest import DEPLOY

COMPOSE = DEPLOY / "compose.yaml"
ENV_VARS = {var for _, var, _, _ in _OPTIONS}


def schema() -> dict[str, Any]:
    text = files("check_jsonschema.builtin_schemas.vendor").joinpath("compose-spec.json").read_text()
    return dict(json.loads(text))


def validator() -> jsonschema.protocols.Validator:
    spec = schema()
    cls = jsonschema.validators.validator_for(spec)
    cls.check_schema(spec)
    return cls(spec)


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load(COMPOSE.read_text()))


def test_the_compose_file_is_valid_against_the_compose_spec() -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator().iter_errors(compose())]
    assert not errors


@pytest.mark.parametrize(
    ("service", "change"),
    [
        ("redis", {"healthcheck": {"intervall": "5s"}}),
        ("accordion", {"deploy": {"replicas": [3]}}),
        ("envoy", {"port": ["8080:8080"]}),
    ],
)
def test_the_schema_catches_mistakes(service: str, change: dict[str, Any]) -> None:
    doc = compose()
    doc["services"][service].update(change)
    assert list(validator().iter_errors(doc))


def test_replicas_redis_and_envoy_are_wired_as_the_service_needs() -> None:
    services = compose()["services"]
    server, redis, envoy = services["accordion"], services["redis"], services["envoy"]
    # Several replicas of the image built from the repository's Dockerfile, all on one Redis.
    assert server["deploy"]["replicas"] >= 2
    assert (DEPLOY / server["build"]["context"] / server["build"]["dockerfile"]).is_file()
    env = server["environment"]
    assert set(env) - {"REDIS_URL"} <= ENV_VARS, f"unknown settings: {set(env) - ENV_VARS - {'REDIS_URL'}}"
    assert env["REDIS_URL"].startswith("redis://redis:") and env["ACCORDION_LISTEN"].startswith("0.0.0.0:")
    assert float(server["stop_grace_period"].rstrip("s")) > float(env["ACCORDION_GRACE"])
    assert server["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "ports" not in server, "replicas are reached through Envoy (several cannot publish one port)"
    assert server["read_only"] is True
    # Redis: every write in the AOF within a second, and never a game evicted.
    command = redis["command"]
    settings = dict(zip(command[1::2], command[2::2], strict=True))
    assert settings["--appendonly"] == "yes" and settings["--appendfsync"] == "everysec"
    assert settings["--maxmemory-policy"] == "noeviction"
    assert "ports" not in redis
    # Envoy: the rendered config and the descriptor set, mounted where the config reads it.
    mounts = dict(v.rsplit(":", 1)[0].split(":") for v in envoy["volumes"])
    assert mounts == {
        "./compose.envoy.yaml": "/etc/envoy/envoy.yaml",
        "./envoy/accordion.pb": "/etc/envoy/accordion.pb",
    }
    for source in mounts:
        assert (DEPLOY / source).is_file(), source
    config = yaml.safe_load((DEPLOY / "compose.envoy.yaml").read_text())
    cluster = config["static_resources"]["clusters"][0]
    address = cluster["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]["address"][
        "socket_address"
    ]
    assert address == {"address": "accordion", "port_value": int(env["ACCORDION_LISTEN"].rsplit(":", 1)[1])}
    listener = config["static_resources"]["listeners"][0]["address"]["socket_address"]
    assert envoy["ports"] == [f"{listener['port_value']}:{listener['port_value']}"]
