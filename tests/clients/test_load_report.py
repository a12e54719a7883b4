"""accordion-load's pieces: percentiles and the histogram, ``--fail-if`` thresholds, scenario files,
and the HTML report (produced by a real run, then parsed)."""

from __future__ import annotations

import json
import math
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from accordion_client.loadtest import scenario, thresholds
from accordion_client.loadtest.stats import BUCKET_EDGES_MS, Stats, histogram, percentile, summarize
from tests.api.helpers import ServerProcess

from .conftest import script

# --- stats --------------------------------------------------------------------------------------


def test_percentiles_are_nearest_rank() -> None:
    values = [i / 1000 for i in range(1, 101)]  # 1..100 ms
    assert [percentile(values, p) for p in (50, 90, 99, 100)] == [0.05, 0.09, 0.099, 0.1]
    assert percentile([0.007], 99) == 0.007 and percentile([], 50) == 0.0
    assert summarize(values) == {
        "p50": 50.0,
        "p90": 90.0,
        "p99": 99.0,
        "p999": 100.0,
        "max": 100.0,
        "mean": 50.5,
    }


def test_the_histogram_puts_each_latency_in_its_log_bucket() -> None:
    latencies = [0.0004, 0.0012, 0.0012, 0.0013, 0.02, 3.5]  # seconds
    rows = histogram(latencies)
    assert sum(r["count"] for r in rows) == len(latencies)
    for r in rows:
        inside = [x for x in latencies if r["from_ms"] < x * 1000 <= r["to_ms"]]
        assert len(inside) == r["count"] > 0, r
        assert r["to_ms"] / r["from_ms"] == pytest.approx(10**0.1, rel=1e-4)  # 10 buckets a decade
    assert [r["count"] for r in rows] == [1, 2, 1, 1, 1]  # 1.2 ms <= 1.2589.. < 1.3 ms: two buckets
    assert BUCKET_EDGES_MS[0] == 0.01 and BUCKET_EDGES_MS[-1] == 100_000


def test_the_series_has_every_second_and_adds_up() -> None:
    stats = Stats()
    for t, latency, code in [(0.1, 0.002, None), (0.5, 0.004, None), (2.2, 0.001, "UNAVAILABLE")]:
        stats.start(t - latency)
        stats.record("ApplyMove", t, latency, code, "down" if code else "")
    rows = stats.series(3.0)
    assert [r["t"] for r in rows] == [0, 1, 2]
    assert [(r["started"], r["ok"], r["errors"]) for r in rows] == [(2, 2, 0), (0, 0, 0), (1, 0, 1)]
    assert rows[0]["latency_ms"] == {"p50": 2.0, "p90": 4.0, "p99": 4.0, "max": 4.0}
    assert stats.first_error == "ApplyMove UNAVAILABLE: down" and stats.samples == {"UNAVAILABLE": "down"}


# --- thresholds ---------------------------------------------------------------------------------


def report_with(**over: Any) -> dict[str, Any]:
    lat = {"p50": 4.0, "p90": 9.0, "p99": 18.0, "p999": 30.0, "max": 40.0, "mean": 5.0}
    report: dict[str, Any] = {
        "latency_ms": lat,
        "requests": 2000,
        "errors": 3,
        "throughput_rps": 199.5,
        "rate": {"offered": 2000, "achieved_rps": 190.0, "achieved_ratio": 0.95, "missed": 100},
        "methods": {"ApplyMove": {"latency_ms": {**lat, "p99": 25.0}, "requests": 1000, "errors": 0,
                                  "throughput_rps": 99.0}},
    }  # fmt: skip
    report.update(over)
    return report


@pytest.mark.parametrize(
    ("text", "passed", "value"),
    [
        ("p99<20ms", True, 18.0),
        ("p99 < 0.015s", False, 18.0),
        ("p50<=4000us", True, 4.0),
        ("ApplyMove:p99<20ms", False, 25.0),
        ("errors<0.1%", False, 0.15),
        ("errors<0.2%", True, 0.15),
        ("errors<=3", True, 3.0),
        ("ApplyMove:errors<1", True, 0.0),
        ("rps>=200", False, 199.5),
        ("achieved>=95%", True, 95.0),
        ("achieved>191", False, 190.0),
        ("missed<5%", False, 5.0),
        ("missed<=100", True, 100.0),
    ],
)
def test_thresholds_measure_and_compare(text: str, passed: bool, value: float) -> None:
    result = thresholds.parse(text).check(report_with())
    assert result["passed"] is passed and result["value"] == pytest.approx(value), result
    assert result["threshold"] == text


def test_a_threshold_on_a_figure_the_run_lacks_fails() -> None:
    closed_loop = report_with(
        rate={"offered": None, "achieved_rps": 190.0, "achieved_ratio": None, "missed": 0}
    )
    assert thresholds.parse("achieved>=95%").check(closed_loop)["passed"] is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("p99", "cannot read threshold"),
        ("p99=20ms", "cannot read threshold"),
        ("latency<20ms", "unknown metric 'latency'"),
        ("p99<20%", "a latency takes us, ms or s"),
        ("errors<2ms", "errors is not a time"),
        ("rps>50%", "rps is calls/s"),
        ("Moves:p99<2ms", "unknown method 'Moves'"),
        ("ApplyMove:achieved>5", "for the whole run"),
    ],
)
def test_bad_thresholds_are_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(thresholds.ThresholdError, match=message):
        thresholds.parse(text)


# --- scenarios ----------------------------------------------------------------------------------


def test_stages_ramp_and_hold() -> None:
    plan = scenario.from_dict(
        {"stages": [{"duration": 10, "rate": 100, "ramp": True}, {"duration": 5, "rate": 100},
                    {"duration": 10, "rate": 300, "ramp": True}]}
    )  # fmt: skip
    assert (
        plan.kind == "rate" and plan.duration == 25 and plan.peak == 300 and plan.mix == scenario.DEFAULT_MIX
    )
    assert [plan.value_at(t) for t in (0, 5, 10, 12, 15, 20, 30)] == [0, 50, 100, 100, 100, 200, 300]
    # The calls due are the area under the rate: a triangle, a rectangle, a trapezoid.
    assert [plan.calls_due(t) for t in (5, 10, 15, 25, 99)] == [125, 500, 1000, 3000, 3000]
    assert plan.describe() == "0->100/s for 10 s, 100/s for 5 s, 100->300/s for 10 s"


def test_a_scenario_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        'name = "x"\nvariant = "french"\nwatchers = 0.5\n[mix]\nmove = 3\nhint = 1\n'
        "[[stages]]\nduration = 2\nplayers = 4\n"
    )
    plan = scenario.load(str(path))
    assert (plan.name, plan.variant, plan.watchers, plan.kind) == ("x", "french", 0.5, "players")
    assert dict(plan.mix) == {"move": 3.0, "hint": 1.0} and plan.value_at(1) == 4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "at least one [[stages]]"),
        ("[[stages]]\nduration = 5\n", "exactly one of rate (calls/s) or players"),
        ("[[stages]]\nduration = 5\nrate = 1\nplayers = 2\n", "exactly one of rate"),
        ("[[stages]]\nduration = 0\nrate = 1\n", "stage 1 duration must be positive"),
        ("[[stages]]\nduration = 5\nrate = -1\n", "stage 1 rate must be zero or more"),
        ("[[stages]]\nduration = 5\nrate = 0\n", "every stage's target is 0"),
        ("[[stages]]\nduration = 5\nplayers = 2.5\n", "players must be a whole number"),
        ("[[stages]]\nduration = 5\nrate = 1\n[[stages]]\nduration = 5\nplayers = 1\n", "all give rate"),
        ("[[stages]]\nduration = 5\nrate = 1\nramp = 1\n", "ramp must be true or false"),
        ("[[stages]]\nduration = 5\nrat = 1\n", "stage 1: unknown key(s) rat"),
        ("speed = 1\n[[stages]]\nduration = 5\nrate = 1\n", "unknown key(s) speed"),
        ("[mix]\nmoves = 1\n[[stages]]\nduration = 5\nrate = 1\n", "unknown action 'moves'"),
        ("[mix]\nnew_game = 1\n[[stages]]\nduration = 5\nrate = 1\n", "other than new_game"),
        ("watchers = 2\n[[stages]]\nduration = 5\nrate = 1\n", "watchers is a share"),
        ("[[stages]\n", "not valid TOML"),
    ],
)
def test_bad_scenarios_are_refused_with_the_reason(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(scenario.ScenarioError, match=None) as caught:
        scenario.load(str(path))
    assert message in str(caught.value) and str(path) in str(caught.value)


# --- the HTML report ------------------------------------------------------------------------------


class ReportParser(HTMLParser):
    """The report's figures (their SVG elements and texts), table cells, title and list items."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: dict[str, dict[str, Any]] = {}
        self.figure: str | None = None
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None
        self.items: list[str] = []
        self.in_li = False
        self.title = ""
        self.in_title = False
        self.classes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("class"):
            self.classes.append(str(a["class"]))
        if tag == "figure":
            self.figure = str(a.get("id"))
            self.figures[self.figure] = {"tags": [], "text": [], "caption": ""}
        elif self.figure is not None:
            self.figures[self.figure]["tags"].append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell = []
        self.in_title |= tag == "title"
        self.in_li |= tag == "li"

    def handle_endtag(self, tag: str) -> None:
        if tag == "figure":
            self.figure = None
        elif tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append("".join(self.cell))
            self.cell = None
        elif tag == "title":
            self.in_title = False
        elif tag == "li":
            self.in_li = False

    def handle_data(self, data: str) -> None:
        if self.figure is not None:
            self.figures[self.figure]["text"].append(data.strip())
        if self.cell is not None:
            self.cell.append(data)
        if self.in_title:
            self.title += data
        if self.in_li:
            self.items.append(data)


def run_with_report(
    tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], str]:
    json_path, html_path = tmp_path / "load.json", tmp_path / "load.html"
    done = subprocess.run(
        [*script("accordion-load"), *args, "--quiet", "--json", str(json_path), "--html", str(html_path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert html_path.exists(), done.stdout + done.stderr
    return done, json.loads(json_path.read_text()), html_path.read_text(encoding="utf-8")


@pytest.mark.serial  # a run at a rate, checked to pass its error threshold: one at a time
def test_the_html_report_has_the_plots_and_the_figures(server: ServerProcess, tmp_path: Path) -> None:
    done, report, text = run_with_report(
        tmp_path, "--target", server.addr, "--rate", "40", "--duration", "3", "--fail-if", "p99<0.001ms",
        "--fail-if", "errors<1%",
    )  # fmt: skip
    assert done.returncode == 1  # the impossible latency threshold
    page = ReportParser()
    page.feed(text)
    assert text.startswith("<!DOCTYPE html>") and "<script" not in text  # static: opens anywhere
    assert page.title.startswith(f"accordion-load: {server.addr}")
    assert list(page.figures) == ["throughput", "latency", "histogram"]
    for name, fig in page.figures.items():
        assert fig["tags"].count("svg") == 1, name
        assert fig["tags"].count("path") >= 5 and "figcaption" in fig["tags"], name
    words = {name: " ".join(fig["text"]) for name, fig in page.figures.items()}
    assert "Throughput" in words["throughput"] and "offered" in words["throughput"]
    assert "succeeded" in words["throughput"] and "players" in words["throughput"]
    assert all(k in words["latency"] for k in ("p50", "p90", "p99", "max", "seconds into the run"))
    assert f"p50 {report['latency_ms']['p50']:g} ms" in words["histogram"]
    # The figures of the tables are the JSON's.
    table = {row[0]: row for row in page.rows if row}
    for method, row in report["methods"].items():
        if row["requests"]:
            assert table[method][1:3] == [str(row["requests"]), str(row["errors"])], method
    assert (
        table["all"][1] == str(report["requests"]) and table["all"][4] == f"{report['latency_ms']['p50']:.2f}"
    )
    measured = report["thresholds"][0]
    assert measured["threshold"] == "p99<0.001ms" and measured["value"] == report["latency_ms"]["p99"]
    assert table["p99<0.001ms"][1:] == [f"{measured['value']} ms", "FAIL"]
    assert table["errors<1%"][2] == "pass"
    assert "FAILED" in text and any("threshold p99<0.001ms not met" in item for item in page.items)
    rate_row = table["rate"][1]
    assert rate_row.startswith(f"offered {report['rate']['offered_rps']:.1f}/s, achieved ")
    assert len(report["series"]) >= 3 and report["histogram"]


def test_the_html_report_of_a_failed_run_shows_the_error_message_escaped(
    server: ServerProcess, tmp_path: Path
) -> None:
    done, report, text = run_with_report(
        tmp_path,
        "--target",
        server.addr,
        "--variant",
        "<b>nope</b>",
        "--concurrency",
        "2",
        "--duration",
        "20",
    )
    assert done.returncode == 1 and report["aborted"]
    assert "<b>nope</b>" not in text and "&lt;b&gt;nope&lt;/b&gt;" in text  # escaped, never markup
    page = ReportParser()
    page.feed(text)
    errors = [row for row in page.rows if row and row[0] == "INVALID_ARGUMENT"]
    assert errors == [
        [
            "INVALID_ARGUMENT",
            str(report["errors"]),
            report["error_samples"]["INVALID_ARGUMENT"],
            report["error_request_ids"].get("INVALID_ARGUMENT", "-"),  # the server's, when it sends one
        ]
    ]
    assert any("stopped early" in item for item in page.items)
    # Stopped early: ~1 s of only failures on a quiet machine, far from the 20 s asked for (a
    # loaded machine adds seconds: tests/clients/test_load.py's WELL_BEFORE_THE_END).
    assert not math.isnan(report["window_s"]) and report["window_s"] < 10.0
