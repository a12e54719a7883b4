"""The README's Python example runs as written, and the configuration table (docs/configuration.md)
matches the server's flags."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable

from accordion.server import _OPTIONS

from .helpers import ROOT, ServerProcess

README = (ROOT / "README.md").read_text()
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text()


def test_the_python_example_plays_against_a_real_server(spawn_server: Callable[..., ServerProcess]) -> None:
    code = re.search(r"```python\n(.*?)```", README, re.S)
    assert code is not None
    proc = spawn_server()
    script = code.group(1).replace("127.0.0.1:50051", proc.addr)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n") == ["10D>4D -> 2", "9H>6H -> 3", "10S>2S -> 4", "50", ""]


def test_the_configuration_table_lists_every_flag_and_variable() -> None:
    rows = {m.group(1, 2) for m in re.finditer(r"^\| `--([a-z-]+)` \| `([A-Z_]+)` \|", CONFIGURATION, re.M)}
    assert rows == {(name.replace("_", "-"), var) for name, var, _, _ in _OPTIONS}


def test_make_serve_serves_where_the_readme_says() -> None:
    assert "accordion-server --listen 127.0.0.1:50051" in (ROOT / "Makefile").read_text()
    assert "make serve   # the server with the embedded store on 127.0.0.1:50051" in README
