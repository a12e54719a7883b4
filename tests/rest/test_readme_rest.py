"""The curl session of docs/api.md (section "REST/JSON", moved there from the README) runs as written
against server + Envoy, and prints what the page shows. Needs curl and jq, as the page does."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.api.helpers import ROOT

from .conftest import RestStack

PAGE = (ROOT / "docs" / "api.md").read_text()


def session() -> tuple[str, list[str]]:
    """The block and its expected output: each `# ...` line right under a command or an output."""
    section = PAGE.split("\n## REST/JSON\n", 1)[1].split("\n## ", 1)[0]
    block = next(
        b for b in re.findall(r"```sh\n(.*?)```", section, re.S) if b.startswith("B=http://127.0.0.1:8080")
    )
    expected, previous = [], ""
    for line in block.splitlines():
        if line.startswith("# ") and previous.strip():
            expected.append(line[2:])
        previous = line
    return block, expected


def test_the_readme_session_can_be_read() -> None:
    block, expected = session()
    assert "make serve-rest" in PAGE and len(expected) >= 10
    assert "# Errors: the HTTP status for the gRPC code, and the google.rpc.Status as the JSON body" in block


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="needs curl and jq")
def test_the_curl_session_works_as_written(rest_stack: RestStack) -> None:
    block, expected = session()
    script = block.replace("http://127.0.0.1:8080", rest_stack.base)
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.splitlines() == expected, done.stderr


def test_make_serve_rest_serves_where_the_readme_says() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "serve-rest: $(STAMP)" in makefile
    serve_rest = (ROOT / "tools" / "serve_rest.py").read_text()
    assert 'GRPC, REST = "127.0.0.1:50051", "127.0.0.1:8080"' in serve_rest
    config = (ROOT / "deploy" / "envoy" / "envoy.yaml").read_text()
    assert "port_value: 8080" in config and "port_value: 50051" in config
