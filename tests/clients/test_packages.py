"""The client packages as a user gets them (`make packages-test`, and part of `make test`).

* Python: `pip wheel` of clients/python; the wheel carries the license (SPDX metadata and the
  file), the README it describes itself with, the console scripts and the typed stubs; it is
  installed into a fresh virtualenv, and the installed client plays a move against a real server.
* TypeScript: `npm pack` of clients/typescript (its `prepack` builds it); the tarball carries
  README, LICENSE and the built ES modules; it is installed into a fresh npm project, and the
  README's example, run from there, plays against a real server and prints what it says.

The installs fetch the packages' dependencies (PyPI, npm) as `make test` does.
"""

from __future__ import annotations

import email
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.api.helpers import ROOT, ServerProcess

PYTHON_PACKAGE = ROOT / "clients" / "python"
TS_PACKAGE = ROOT / "clients" / "typescript"
LICENSE = (ROOT / "LICENSE").read_text()


def run(*cmd: str | Path, cwd: Path, timeout: float = 600, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )
    assert done.returncode == 0, f"{cmd}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def clean_env() -> dict[str, str]:
    """The environment without this checkout's virtualenv or import paths."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT))
    )
    return env


def test_the_license_is_mit_in_the_repository_and_in_both_packages() -> None:
    assert LICENSE.startswith("MIT License\n\nCopyright (c) ")
    assert "Accordion as a service developers" in LICENSE
    # Copies in the packages: a package may not reach above its own root.
    assert (PYTHON_PACKAGE / "LICENSE").read_text() == LICENSE
    assert (TS_PACKAGE / "LICENSE").read_text() == LICENSE
    for pyproject in (ROOT / "pyproject.toml", PYTHON_PACKAGE / "pyproject.toml"):
        text = pyproject.read_text()
        assert re.search(r'^license = "MIT"', text, re.M) and 'license-files = ["LICENSE"]' in text, pyproject
        assert "license = {" not in text
    package = json.loads((TS_PACKAGE / "package.json").read_text())
    assert package["license"] == "MIT" and "private" not in package


def test_the_python_wheel_installs_into_a_fresh_venv_and_plays(tmp_path: Path, server: ServerProcess) -> None:
    out = tmp_path / "wheels"
    # No build isolation: the checkout's virtualenv has the build backend (setuptools >= 77).
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
        "-w", out, PYTHON_PACKAGE, cwd=tmp_path)  # fmt: skip
    (wheel,) = out.glob("accordion_client-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    metadata = email.message_from_string(zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode())
    assert metadata["License-Expression"] == "MIT" and metadata.get_all("License-File") == ["LICENSE"]
    assert zipfile.ZipFile(wheel).read(f"{dist_info}/licenses/LICENSE").decode() == LICENSE
    # The description is the package's README, and what it promises is in the wheel.
    description = metadata.get_payload()
    assert isinstance(description, str)
    assert description.strip() == (PYTHON_PACKAGE / "README.md").read_text().strip()
    for module in ("client", "chat", "cli", "flags", "targets", "load", "render", "errors"):
        assert f"accordion_client/{module}.py" in names, module
    for typed in ("py.typed", "v1/accordion_pb2.pyi", "v1/accordion_pb2_grpc.pyi"):
        assert f"accordion_client/{typed}" in names, typed
    entry_points = zipfile.ZipFile(wheel).read(f"{dist_info}/entry_points.txt").decode()
    assert "accordion = accordion_client.cli:main" in entry_points
    assert "accordion-load = accordion_client.load:main" in entry_points

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", wheel, cwd=tmp_path, env=clean_env())
    play = (
        "import accordion_client, sys\n"
        "from accordion_client import AccordionClient\n"
        f"assert accordion_client.__file__.startswith({str(venv)!r}), accordion_client.__file__\n"
        "with AccordionClient(sys.argv[1]) as client:\n"
        "    game = client.new_game('accordion', seed=7)\n"
        "    print(game.play('10D>4D').notation, game.version)\n"
    )
    assert run(python, "-c", play, f"http://{server.addr}", cwd=tmp_path, env=clean_env()) == "10D>4D 2\n"
    accordion = venv / "bin" / "accordion"
    assert run(accordion, "--version", cwd=tmp_path, env=clean_env()) == "accordion 0.1.0\n"
    shown = run(accordion, "variants", "accordion", "--target", server.addr, cwd=tmp_path, env=clean_env())
    assert shown.startswith("Accordion (accordion)") and "Won with: 1 pile" in shown
    played = subprocess.run(
        [accordion, "play", "--seed", "7", "--target", server.addr],
        input="10D>4D\nq\n", capture_output=True, text=True, timeout=60, cwd=tmp_path, env=clean_env(),
    )  # fmt: skip
    assert played.returncode == 0 and "played 10D>4D" in played.stdout, played.stderr


def npm(*args: str | Path, cwd: Path, timeout: float = 600) -> str:
    return run("npm", *args, "--no-audit", "--no-fund", cwd=cwd, timeout=timeout)


def test_the_npm_package_installs_into_a_fresh_project_and_plays(
    tmp_path: Path, server: ServerProcess
) -> None:
    if not (TS_PACKAGE / "node_modules").exists():
        pytest.fail("clients/typescript/node_modules is missing: run `make packages-test` (it runs npm ci)")
    packed = json.loads(npm("pack", "--json", "--pack-destination", tmp_path, cwd=TS_PACKAGE))
    tarball = tmp_path / packed[0]["filename"]
    members = set(tarfile.open(tarball).getnames())
    for name in (
        "README.md",
        "LICENSE",
        "package.json",
        "dist/src/index.js",
        "dist/src/index.d.ts",
        "dist/src/client.js",
        "dist/src/gen/accordion/v1/accordion_pb.js",
        "src/client.ts",
    ):
        assert f"package/{name}" in members, name
    assert not [m for m in members if m.startswith("package/dist/test") or m.startswith("package/test")]
    tar = tarfile.open(tarball)
    readme_file = tar.extractfile("package/README.md")
    license_file = tar.extractfile("package/LICENSE")
    assert readme_file is not None and license_file is not None
    readme = readme_file.read().decode()
    assert license_file.read().decode() == LICENSE
    manifest = json.loads(tar.extractfile("package/package.json").read())  # type: ignore[union-attr]
    assert "private" not in manifest and manifest["scripts"]["prepack"]

    project = tmp_path / "project"
    project.mkdir()
    manifest_of_project = {"name": "try-accordion", "private": True, "type": "module"}
    (project / "package.json").write_text(json.dumps(manifest_of_project))
    npm("install", "--prefer-offline", tarball, cwd=project)
    example = re.search(r"```js\n(.*?)```", readme, re.S)
    assert example is not None
    code = example.group(1)
    assert '"127.0.0.1:50051"' in code
    (project / "play.mjs").write_text(code.replace("127.0.0.1:50051", server.addr))
    output = run("node", "play.mjs", cwd=project, timeout=60)
    expected = [line.split("// ", 1)[1] for line in code.splitlines() if "console.log(" in line]
    assert output.splitlines() == expected == ["10D>4D 2n", "FAILED_PRECONDITION ILLEGAL_MOVE"]
