"""The Dockerfile, checked offline (no Docker engine here, so no image is built): its
instructions parsed with dockerfile-parse; its install steps held to the Makefile's; its build
context (what .dockerignore lets through) built into a wheel the way its builder stage does;
and its HEALTHCHECK command run against a real server."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dockerfile_parse import DockerfileParser

from accordion.config import OPTIONS as _OPTIONS
from tests.api.helpers import ROOT, ServerProcess

DOCKERFILE = ROOT / "Dockerfile"
VENV = "/opt/venv"


def stages() -> dict[str, list[dict[str, Any]]]:
    """Instructions by stage name (``FROM x AS name``), comments dropped."""
    out: dict[str, list[dict[str, Any]]] = {}
    current: list[dict[str, Any]] | None = None
    for item in DockerfileParser(path=str(DOCKERFILE)).structure:
        if item["instruction"] == "FROM":
            image, _, name = item["value"].partition(" AS ")
            current = out.setdefault(name.strip(), [])
            current.append({**item, "image": image.strip()})
        elif item["instruction"] != "COMMENT" and current is not None:
            current.append(item)
    return out


def values(stage: list[dict[str, Any]], instruction: str) -> list[str]:
    return [str(i["value"]) for i in stage if i["instruction"] == instruction]


def makefile_install() -> list[str]:
    """The Makefile's install recipe for this package, as the builder stage must run it: the venv
    in /opt/venv, and `pip install .` where `make` installs `-e '.[test]'` (editable, with tests)."""
    text = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^\$\(STAMP\):.*\n((?:\t.*\n)+)", text, re.M)
    assert recipe, "the Makefile's $(STAMP) rule"
    steps = []
    for line in recipe.group(1).splitlines():
        command = line.strip().split("  #")[0].strip()
        if "-m venv" in command or "--upgrade pip" in command or "'.[test]'" in command:
            command = (
                command.replace("$(PYTHON)", "python3")
                .replace("$(BIN)", f"{VENV}/bin")
                .replace("$(VENV)", VENV)
                .replace("-e '.[test]'", ".")
            )
            steps.append(command)
    assert len(steps) == 3, steps
    return steps


def test_two_stages_on_one_base_and_the_install_is_the_makefiles() -> None:
    found = stages()
    assert list(found) == ["builder", "runtime"]
    builder, runtime = found["builder"], found["runtime"]
    assert builder[0]["image"] == runtime[0]["image"] == "${PYTHON_IMAGE}", (
        "one base: the venv's python path holds"
    )
    parser = DockerfileParser(path=str(DOCKERFILE))
    assert set(parser.parent_images) == {"python:3.11-slim-bookworm"}
    runs = values(builder, "RUN")
    install = [r for r in runs if VENV in r and ("pip install" in r or "-m venv" in r)]
    assert install == makefile_install()
    # The runtime stage: the venv from the builder and nothing else; no compiler.
    assert values(runtime, "COPY") == [f"--from=builder {VENV} {VENV}"]
    assert not any("gcc" in r or "pip" in r for r in values(runtime, "RUN"))


def test_the_runtime_is_non_root_and_health_checked_over_grpc() -> None:
    runtime = stages()["runtime"]
    (user,) = values(runtime, "USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) >= 10000 and gid.isdigit(), "numeric, so runAsNonRoot can check it"
    (healthcheck,) = values(runtime, "HEALTHCHECK")
    options, _, command = healthcheck.partition(" CMD ")
    assert json.loads(command) == ["accordion-health"]
    assert "--interval=" in options and "--timeout=" in options
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["accordion-health"] == "accordion.healthcheck:main"
    assert json.loads(values(runtime, "ENTRYPOINT")[0]) == ["accordion-server"]
    assert scripts["accordion-server"] == "accordion.__main__:main"
    assert values(runtime, "STOPSIGNAL") == ["SIGTERM"]
    env = dict(re.findall(r"(\w+)=(\S+)", " ".join(values(runtime, "ENV"))))
    assert env["PATH"].startswith(f"{VENV}/bin:")
    known = {var for _, var, _, _ in _OPTIONS}
    assert {k for k in env if k.startswith("ACCORDION_")} <= known
    port = env["ACCORDION_LISTEN"].rsplit(":", 1)[1]
    assert env["ACCORDION_LISTEN"].startswith("0.0.0.0:") and port in values(runtime, "EXPOSE")[0].split()


# --- the build context -------------------------------------------------------------------------


def _pattern(pattern: str) -> re.Pattern[str]:
    """Docker's .dockerignore syntax as a regex: ``**`` any number of directories (zero too),
    ``*`` and ``?`` within one name; a pattern that matches a directory matches what is in it."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] in "*?":
            out, i = out + ("[^/]*" if pattern[i] == "*" else "[^/]"), i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + "(?:/.*)?")


def dockerignore_allows(path: str, patterns: list[str]) -> bool:
    """The last pattern that matches decides; ``!`` re-includes."""
    allowed = True
    for pattern in patterns:
        negate = pattern.startswith("!")
        bare = (pattern[1:] if negate else pattern).strip("/")
        if _pattern(bare).fullmatch(path):
            allowed = negate
    return allowed


def build_context() -> list[str]:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    files = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in (".git", ".venv", "node_modules")]
        for name in names:
            rel = str(Path(folder, name).relative_to(ROOT))
            if dockerignore_allows(rel, patterns):
                files.append(rel)
    return sorted(files)


def reuse_the_build(ctx: Path) -> None:
    """This checkout's build (`make install`: mypyc's C, the compiled modules) as ``ctx``'s own, so
    `pip wheel` packs it instead of compiling it all again (4 minutes on a loaded 2-core machine,
    under 1 without). Sources and outputs keep their times (copy2), so setuptools still rebuilds
    whatever is older than its sources, and mypyc rewrites only C that differs: the wheel holds
    what a clean build makes. The image itself (Dockerfile) always builds from scratch."""
    build = ROOT / "build"
    libs = sorted(build.glob("lib.*"))
    if not libs:
        return  # nothing built here: the wheel compiles everything
    shutil.copytree(build, ctx / "build", symlinks=True)
    lib = ctx / "build" / libs[0].name
    service = ROOT / "service"
    for compiled in service.rglob("*.so"):  # `build_ext --inplace` put these beside the sources
        target = lib / compiled.relative_to(service)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(compiled, target)


def test_the_context_holds_what_the_build_copies_and_nothing_else(tmp_path: Path) -> None:
    context = build_context()
    tops = {f.split("/", 1)[0] for f in context}
    assert tops == {"pyproject.toml", "setup.py", "README.md", "LICENSE", "service"}, tops
    assert not [f for f in context if f.endswith(".so") or "__pycache__" in f or ".egg-info" in f]
    assert "service/accordion/solver/row/_csolver.c" in context and "service/accordion/py.typed" in context
    # What the builder stage does with that context: `pip install .` builds this wheel.
    for rel in context:
        (tmp_path / "ctx" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / "ctx" / rel)
    reuse_the_build(tmp_path / "ctx")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path / "out"),
            str(tmp_path / "ctx"),
        ],
        capture_output=True,
        text=True,
        timeout=900,  # generous: a loaded CI machine; reuse_the_build keeps it ~1 min of CPU
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "out").glob("accordion_service-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for module in (
        "server",
        "workers",
        "healthcheck",
        "tls",
        "api/apikeys",
        "api/ratelimit",
        "v1/accordion_pb2",
    ):
        assert f"accordion/{module}.py" in names, module
    assert "accordion/py.typed" in names and any(
        n.startswith("accordion/solver/row/_csolver") and n.endswith(".so") for n in names
    )
    entry_points = (
        zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    )
    assert "accordion-health = accordion.healthcheck:main" in entry_points
    assert "accordion-server = accordion.__main__:main" in entry_points


def test_the_dockerignore_rule_is_docker_s() -> None:
    patterns = ["**", "!service/", "service/**/*.so"]
    assert dockerignore_allows("service/accordion/x.py", patterns)
    assert not dockerignore_allows("service/accordion/solver/_c.so", patterns)
    assert not dockerignore_allows("service/x.so", patterns), "** matches no directory too"
    assert dockerignore_allows("service/x.sox", patterns)
    assert not dockerignore_allows("tests/x.py", patterns) and not dockerignore_allows(
        ".venv/bin/python", patterns
    )


# --- the HEALTHCHECK command -------------------------------------------------------------------


def health(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).parent / "accordion-health"
    return subprocess.run([str(script)], capture_output=True, text=True, timeout=30, env={"PATH": "", **env})


def test_the_healthcheck_command_reports_the_server_s_health(
    spawn_server: Callable[..., ServerProcess],
) -> None:
    proc = spawn_server()
    port = proc.addr.rsplit(":", 1)[1]
    up = health({"ACCORDION_LISTEN": f"0.0.0.0:{port}"})  # what the image's ENV gives it
    assert (up.returncode, up.stdout.strip()) == (0, f"127.0.0.1:{port}: SERVING")
    assert proc.terminate() == 0
    down = health({"ACCORDION_LISTEN": f"0.0.0.0:{port}"})
    assert down.returncode == 1 and "UNAVAILABLE" in down.stderr


@pytest.mark.parametrize(
    ("env", "addr"),
    [
        ({}, "127.0.0.1:50051"),
        ({"ACCORDION_LISTEN": "0.0.0.0:6000"}, "127.0.0.1:6000"),
        ({"ACCORDION_LISTEN": "0.0.0.0:6000", "ACCORDION_HEALTH_PORT": "8081"}, "127.0.0.1:8081"),
    ],
)
def test_the_healthcheck_finds_the_port_from_the_environment(env: dict[str, str], addr: str) -> None:
    from accordion.healthcheck import default_addr

    assert default_addr(env) == addr
