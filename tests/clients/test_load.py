"""``accordion-load`` run for a few seconds against a local server, and the Locust file."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import grpc
import pytest

from accordion_client import GameHandle, pb
from accordion_client.load import METHODS, percentile, summarize
from tests.api.helpers import ROOT, ServerProcess

from .conftest import script


def run_load(*args: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp_path / "load.json"
    done = subprocess.run(
        [*script("accordion-load"), *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, json.loads(out.read_text())


def check_sane(report: dict[str, Any]) -> None:
    for row in [report, *report["methods"].values()]:
        lat = row["latency_ms"]
        if row["requests"] - row["errors"]:
            assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"], lat
            assert lat["max"] < 5000  # under the 5 s deadline
    assert report["requests"] == sum(m["requests"] for m in report["methods"].values())
    assert report["throughput_rps"] == pytest.approx(report["requests"] / report["elapsed_s"], rel=0.01)


def test_a_closed_loop_run_plays_real_games_without_errors(server: ServerProcess, tmp_path: Path) -> None:
    done, report = run_load(
        "--target", server.addr, "--concurrency", "4", "--duration", "3", "--seed", "1", tmp_path=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["errors"] == 0 and report["errors_by_code"] == {}
    assert report["requests"] > 100 and report["throughput_rps"] > 30
    assert all(report["methods"][m]["requests"] > 0 for m in METHODS)  # the whole mix, every method
    moves = report["methods"]["ApplyMove"]["requests"]
    assert moves > report["methods"]["NewGame"]["requests"]  # players play their games, not only deal
    assert report["games"]["started"] >= 4 and report["games"]["finished"] >= 1
    assert 3.0 <= report["elapsed_s"] < 8 and report["mode"] == "concurrency" and report["concurrency"] == 4
    check_sane(report)
    # The table on stdout, the progress line on stderr (one per second).
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"accordion-load: {server.addr} (plaintext), variant accordion, concurrency 4")
    assert any(line.startswith("all ") and f" {report['requests']} " in line for line in lines)
    assert "errors by code: none" in lines
    progress = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(progress) >= 2 and progress[0].startswith("[  1.0s/3s]") and " errors 0 " in progress[0]


def test_an_open_loop_run_keeps_the_rate(server: ServerProcess, tmp_path: Path) -> None:
    done, report = run_load(
        "--target", server.addr, "--rate", "40", "--duration", "2", "--quiet", tmp_path=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["mode"] == "rate" and report["rate"] == 40 and report["errors"] == 0
    assert 60 <= report["requests"] <= 82  # 40/s for 2 s, give or take the edges
    assert 28 <= report["throughput_rps"] <= 42
    assert done.stderr == ""  # --quiet
    check_sane(report)


def test_failures_are_counted_by_code_and_fail_the_run(dead_target: str, tmp_path: Path) -> None:
    done, report = run_load("--target", dead_target, "--duration", "1", "--quiet", tmp_path=tmp_path)
    assert done.returncode == 1
    assert report["requests"] > 0 and report["errors"] == report["requests"]
    assert set(report["errors_by_code"]) == {"UNAVAILABLE"}
    assert report["methods"]["NewGame"]["errors_by_code"] == {"UNAVAILABLE": report["errors"]}
    assert "errors by code: UNAVAILABLE" in done.stdout


def test_tls_and_an_api_key(secure_server: Any, tmp_path: Path) -> None:
    base = ("--target", secure_server.addr, "--ca-file", str(secure_server.ca_file), "--quiet")
    done, report = run_load(*base, "--api-key", secure_server.api_key, "--duration", "2", tmp_path=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["tls"] is True and report["errors"] == 0 and report["methods"]["ApplyMove"]["requests"] > 0
    check_sane(report)
    assert f"{secure_server.addr} (TLS)" in done.stdout
    keyless, report = run_load(*base, "--duration", "1", tmp_path=tmp_path)
    assert keyless.returncode == 1 and set(report["errors_by_code"]) == {"UNAUTHENTICATED"}


def test_bad_arguments_are_refused() -> None:
    done = subprocess.run(
        [*script("accordion-load"), "--duration", "0"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "must be positive" in done.stderr


def test_percentiles_are_nearest_rank() -> None:
    values = [i / 1000 for i in range(1, 101)]  # 1..100 ms
    assert [percentile(values, p) for p in (50, 90, 99, 100)] == [0.05, 0.09, 0.099, 0.1]
    assert percentile([0.007], 99) == 0.007 and percentile([], 50) == 0.0
    assert summarize(values) == {"p50": 50.0, "p90": 90.0, "p99": 99.0, "max": 100.0, "mean": 50.5}


# --- Locust -----------------------------------------------------------------------------------


class Events:
    def __init__(self) -> None:
        self.fired: list[dict[str, Any]] = []
        self.request = self

    def fire(self, **kwargs: Any) -> None:
        self.fired.append(kwargs)


def test_the_locustfile_plays_through_the_client(
    server: ServerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Locust is not installed here: a stand-in ``locust`` module gives the User base and
    decorators, and the file's user plays real turns against the server, reporting each call."""
    fake = types.ModuleType("locust")

    class User:
        host = ""

        def __init__(self, environment: Any) -> None:
            self.environment = environment

    fake.User = User  # type: ignore[attr-defined]
    fake.task = lambda f: f  # type: ignore[attr-defined]
    fake.between = lambda lo, hi: lambda self: lo  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "locust", fake)
    spec = importlib.util.spec_from_file_location(
        "accordion_locustfile", ROOT / "clients" / "python" / "locustfile.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    env = types.SimpleNamespace(events=Events())
    player = module.AccordionPlayer(env)
    player.host = server.addr
    player.on_start()
    try:
        for _ in range(150):
            player.turn()
        fired = list(env.events.fired)
        # A failing call is reported as a failure, and the user deals a new game next turn.
        player.game = GameHandle(player.client, player.client.new_game(seed=7).game, "not-the-token")
        player.game.game.status = pb.GAME_STATUS_IN_PROGRESS
        while player.game is not None:
            player.turn()
    finally:
        player.on_stop()
    names = {e["name"] for e in fired}
    assert names == set(METHODS)
    assert all(e["exception"] is None and e["request_type"] == "grpc" for e in fired)
    assert all(e["response_time"] > 0 and e["response_length"] >= 0 for e in fired)
    assert sum(e["name"] == "NewGame" for e in fired) >= 2  # played one game out, dealt again
    failed = [e for e in env.events.fired[len(fired) :] if e["exception"] is not None]
    assert len(failed) == 1 and failed[0]["exception"].code() == grpc.StatusCode.NOT_FOUND
