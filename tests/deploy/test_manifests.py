"""deploy/k8s validated offline: every resource against the Kubernetes JSON schemas
(kubernetes-validate, strict: unknown fields are errors), then what schemas cannot see —
references between resources, probes, grace periods, limits, security — per overlay."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import latest_version

from accordion.config import OPTIONS as _OPTIONS
from accordion.config import Config, parse_args
from accordion.server import LIVENESS
from accordion.store.redis import parse_sentinel_url

from .conftest import DEPLOY, K8S, OVERLAYS, kustomize, load_all

# The oldest Kubernetes these manifests promise to work on (gRPC probes are GA since 1.27,
# autoscaling/v2 since 1.23), and the newest the validator knows.
VERSIONS = ["1.29", latest_version()]
ENV_VARS = {var for _, var, _, _ in _OPTIONS}
MANIFESTS = sorted(p for p in K8S.rglob("*.yaml") if p.name != "kustomization.yaml")


def resources(overlay: str) -> list[dict[str, Any]]:
    return [doc for _, doc in kustomize(OVERLAYS[overlay])]


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def workloads(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] in ("Deployment", "StatefulSet")}


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def container(docs: list[dict[str, Any]], workload: str, name: str) -> dict[str, Any]:
    spec = workloads(docs)[workload]["spec"]["template"]["spec"]
    return next(c for c in spec["containers"] if c["name"] == name)


# --- schemas --------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(K8S)))
def test_every_resource_is_valid_against_the_kubernetes_schema(path: Path, version: str) -> None:
    docs = load_all(path)
    assert docs
    for doc in docs:
        kubernetes_validate.validate(doc, version, strict=True)


@pytest.mark.parametrize(
    ("path", "change"),
    [
        (("spec", "template", "spec"), {"terminationGracePeriod": 35}),  # a misspelt field
        (("spec", "template", "spec", "containers", 0, "readinessProbe", "grpc"), {"port": "grpc"}),  # a type
        (("spec", "template", "spec", "containers", 0), {"name": ...}),  # a required field, gone
        (("spec",), {"minReadySeconds": "ten"}),  # another type
    ],
)
def test_the_validation_is_not_vacuous(path: tuple[Any, ...], change: dict[str, Any]) -> None:
    deployment = by_kind(load_all(K8S / "base" / "accordion.yaml"), "Deployment")["accordion"]
    node = deployment
    for key in path:
        node = node[key]
    for key, value in change.items():
        if value is ...:
            del node[key]
        else:
            node[key] = value
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, VERSIONS[0], strict=True)


def test_every_manifest_is_part_of_an_overlay_and_no_kustomize_feature_goes_unchecked() -> None:
    used = {path for folder in OVERLAYS.values() for path, _ in kustomize(folder)}
    assert set(MANIFESTS) == used, "a manifest no overlay applies (or kustomize() skipped a feature)"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_names_are_unique_and_every_reference_resolves(overlay: str) -> None:
    docs = resources(overlay)
    keys = [(d["kind"], d["metadata"]["name"]) for d in docs]
    assert len(keys) == len(set(keys)), f"duplicates in {overlay}"
    config_maps, secrets = by_kind(docs, "ConfigMap"), by_kind(docs, "Secret")
    for name, workload in workloads(docs).items():
        pod = workload["spec"]["template"]
        assert matches(workload["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"])
        spec = pod["spec"]
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        claims = {t["metadata"]["name"] for t in workload["spec"].get("volumeClaimTemplates", [])}
        for c in spec.get("initContainers", []) + spec["containers"]:
            for source in c.get("envFrom", []):
                assert source["configMapRef"]["name"] in config_maps
            for env in c.get("env", []):
                ref = env.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in secrets[ref["name"]]["stringData"], (name, ref)
            for mount in c.get("volumeMounts", []):
                assert mount["name"] in volumes or mount["name"] in claims, (name, mount)
        for volume in volumes.values():
            if "configMap" in volume:
                cm = config_maps[volume["configMap"]["name"]]
                keys_present = set(cm.get("data", {})) | set(cm.get("binaryData", {}))
                assert {i["key"] for i in volume["configMap"].get("items", [])} <= keys_present
            if "secret" in volume:
                assert volume["secret"]["secretName"] in secrets or volume["secret"].get("optional")
    pods = [w["spec"]["template"] for w in workloads(docs).values()]
    for kind in ("Service", "PodDisruptionBudget", "NetworkPolicy"):
        for name, doc in by_kind(docs, kind).items():
            selector = {
                "Service": lambda d: d["spec"]["selector"],
                "PodDisruptionBudget": lambda d: d["spec"]["selector"]["matchLabels"],
                "NetworkPolicy": lambda d: d["spec"]["podSelector"]["matchLabels"],
            }[kind](doc)
            chosen = [p for p in pods if matches(selector, p["metadata"]["labels"])]
            assert len(chosen) == 1, f"{kind} {name} selects {len(chosen)} workloads"
            if kind == "Service":
                named = {p["name"] for c in chosen[0]["spec"]["containers"] for p in c.get("ports", [])}
                for port in doc["spec"]["ports"]:
                    assert port["targetPort"] in named, (name, port)
    for hpa in by_kind(docs, "HorizontalPodAutoscaler").values():
        target = hpa["spec"]["scaleTargetRef"]
        assert target["name"] in workloads(docs) and "replicas" not in workloads(docs)[target["name"]]["spec"]
        assert 2 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
    assert len(by_kind(docs, "Secret")) >= 1 and "accordion-redis" in secrets


def test_the_server_pods_probe_drain_and_scale_as_the_server_behaves() -> None:
    docs = resources("external-redis")
    config = by_kind(docs, "ConfigMap")["accordion"]["data"]
    assert set(config) <= ENV_VARS, f"unknown settings: {set(config) - ENV_VARS}"
    port = int(config["ACCORDION_LISTEN"].rsplit(":", 1)[1])
    server = container(docs, "accordion", "accordion")
    assert {p["name"]: p["containerPort"] for p in server["ports"]} == {
        "grpc": port,
        "metrics": int(config["ACCORDION_METRICS_PORT"]),
    }
    # Native gRPC probes: readiness is the overall status (store reachable), liveness and
    # startup the "liveness" service (the process is up, whatever Redis does).
    assert server["readinessProbe"]["grpc"] == {"port": port}
    assert (
        server["livenessProbe"]["grpc"]
        == server["startupProbe"]["grpc"]
        == {"port": port, "service": LIVENESS}
    )
    # Termination: preStop, then the drain, then the supervisor's margin, all within the grace period.
    pod = workloads(docs)["accordion"]["spec"]["template"]["spec"]
    pre_stop = server["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    assert pod["terminationGracePeriodSeconds"] >= int(pre_stop[1]) + float(config["ACCORDION_GRACE"]) + 5
    assert float(config["ACCORDION_GRACE"]) > Config().store_timeout, "a call waiting on Redis can finish"
    # Clients rebalance; workers match the CPU limit.
    assert float(config["ACCORDION_MAX_CONNECTION_AGE"]) > 0
    cpu = server["resources"]["limits"]["cpu"]
    cores = int(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu)
    assert 1 <= int(config["ACCORDION_WORKERS"]) <= math.ceil(cores)
    assert server["resources"]["requests"] and server["resources"]["limits"]["memory"]
    # The image's user, never root, nothing writable but /tmp.
    dockerfile = (DEPLOY.parent / "Dockerfile").read_text()
    assert f"USER {pod['securityContext']['runAsUser']}:" in dockerfile
    mounts = {m["mountPath"]: m for m in server["volumeMounts"]}
    assert mounts["/tmp"]["name"] == "tmp" and all(
        m.get("readOnly") for p, m in mounts.items() if p != "/tmp"
    )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_container_runs_unprivileged(overlay: str) -> None:
    for name, workload in workloads(resources(overlay)).items():
        spec = workload["spec"]["template"]["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] > 0
        assert spec["automountServiceAccountToken"] is False
        for c in spec.get("initContainers", []) + spec["containers"]:
            sc = c["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True, (
                name,
                c["name"],
            )
            assert sc["capabilities"]["drop"] == ["ALL"]
            assert c["resources"]["requests"] and c["resources"]["limits"], (name, c["name"])
            assert ":" in c["image"] and not c["image"].endswith(":latest")


def test_envoy_reaches_every_server_pod_and_the_policies_let_it() -> None:
    docs = resources("external-redis")
    envoy = yaml.safe_load(by_kind(docs, "ConfigMap")["accordion-envoy"]["data"]["envoy.yaml"])
    cluster = envoy["static_resources"]["clusters"][0]
    address = cluster["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]["address"][
        "socket_address"
    ]
    headless = by_kind(docs, "Service")[address["address"]]
    assert headless["spec"]["clusterIP"] == "None" and cluster["type"] == "STRICT_DNS"
    assert address["port_value"] in [p["port"] for p in headless["spec"]["ports"]]
    assert cluster["health_checks"][0]["grpc_health_check"] == {}
    policy = by_kind(docs, "NetworkPolicy")["accordion"]
    envoy_labels = workloads(docs)["accordion-rest"]["spec"]["template"]["metadata"]["labels"]
    allowed = [
        rule
        for rule in policy["spec"]["ingress"]
        if any(
            "podSelector" in f and matches(f["podSelector"]["matchLabels"], envoy_labels)
            for f in rule["from"]
        )
    ]
    assert allowed and {"port": address["port_value"], "protocol": "TCP"} in allowed[0]["ports"]


def test_the_sentinel_overlay_points_the_servers_at_its_sentinels() -> None:
    docs = resources("sentinel")
    url = by_kind(docs, "Secret")["accordion-redis"]["stringData"]["REDIS_URL"]
    sentinels, service, db, _ = parse_sentinel_url(url)
    redis = workloads(docs)["accordion-redis"]
    headless = redis["spec"]["serviceName"]
    assert by_kind(docs, "Service")[headless]["spec"]["clusterIP"] == "None"
    pods = {f"{redis['metadata']['name']}-{i}.{headless}" for i in range(redis["spec"]["replicas"])}
    assert {host for host, _ in sentinels} == pods and {port for _, port in sentinels} == {26379}
    assert (service, db) == ("mymaster", 0)
    config = by_kind(docs, "ConfigMap")["accordion-redis"]["data"]
    assert f"sentinel monitor {service} $PRIMARY 6379 2" in config["init.sh"]
    conf = dict(line.split(" ", 1) for line in config["redis.conf"].splitlines() if line and line[0] != "#")
    assert (conf["appendonly"], conf["appendfsync"], conf["maxmemory-policy"]) == (
        "yes",
        "everysec",
        "noeviction",
    )
    # The servers may reach Redis: the label the Redis policy admits is on the server pods.
    server_labels = workloads(docs)["accordion"]["spec"]["template"]["metadata"]["labels"]
    admitted = by_kind(docs, "NetworkPolicy")["accordion-redis"]["spec"]["ingress"][0]["from"]
    assert any(matches(f["podSelector"]["matchLabels"], server_labels) for f in admitted)


def test_the_pods_limits_parse_and_leave_room_for_probes_and_other_clients() -> None:
    """The ConfigMap is a valid configuration; one client (an Envoy pod) gets at most half of a
    worker's calls, and the probes, which go to the main port, have a budget of their own."""
    docs = resources("external-redis")
    # REDIS_URL comes from a Secret (its value is the operator's): any URL stands for it here.
    env = {**by_kind(docs, "ConfigMap")["accordion"]["data"], "REDIS_URL": "redis://redis:6379/0"}
    config = parse_args([], env)
    assert 0 < config.max_rpcs_per_client <= config.max_concurrent_rpcs // 2
    assert config.max_health_rpcs >= 10
    assert config.max_watches_per_connection <= config.max_streams_per_connection
    server = container(docs, "accordion", "accordion")
    port = int(config.listen.rsplit(":", 1)[1])
    assert config.health_port == 0 and server["livenessProbe"]["grpc"]["port"] == port
