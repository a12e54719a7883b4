"""Fixtures for the deploy/ tests: the end-to-end fixtures of tests/api, and loaders of deploy/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.api.conftest import connect, spawn_server, start_server  # noqa: F401 (fixtures)
from tests.api.helpers import ROOT

DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
OVERLAYS = {"external-redis": K8S, "sentinel": K8S / "sentinel"}


def load_all(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def kustomize(folder: Path, seen: set[Path] | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """The resources a kustomization folder stands for, with the file each came from.

    Only ``resources:`` (files and folders) is followed: the kustomizations here use nothing
    else (no patches, generators or transformers), which test_manifests.py checks, so this is
    exactly what ``kubectl apply -k`` would send.
    """
    seen = set() if seen is None else seen
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    assert kustomization["kind"] == "Kustomization"
    extra = set(kustomization) - {"apiVersion", "kind", "resources"}
    assert not extra, f"{folder}: only `resources` is supported here, not {sorted(extra)}"
    out: list[tuple[Path, dict[str, Any]]] = []
    for entry in kustomization["resources"]:
        path = (folder / entry).resolve()
        assert path.exists(), f"{folder}/kustomization.yaml lists {entry}, which does not exist"
        if path.is_dir():
            out += kustomize(path, seen)
        else:
            seen.add(path)
            out += [(path, doc) for doc in load_all(path)]
    return out
