"""What PodTopologySpread reads from manifests: pods' topologySpreadConstraints (with the API server's checks),
owner references, Services and ReplicationControllers."""

from __future__ import annotations

from pathlib import Path

import pytest

from packsched.api.errors import InputError
from packsched.api.manifests import Cluster, load_manifests
from packsched.api.objects import LabelSelector, OwnerRef, Requirement, TopologySpreadConstraint


def load(tmp_path: Path, text: str) -> Cluster:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return load_manifests([str(path)])


def errors(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    with pytest.raises(InputError) as exc:
        load(tmp_path, text)
    return [(e.path, e.message) for e in exc.value.errors]


POD = """apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {app: web, version: v1}
spec:
  containers: [{name: c}]
  topologySpreadConstraints:
"""


def test_spread_constraints_are_decoded(tmp_path: Path) -> None:
    text = POD + (
        "  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, minDomains: 3,\n"
        "     labelSelector: {matchLabels: {app: web}, matchExpressions: [{key: tier, operator: Exists}]},\n"
        "     nodeAffinityPolicy: Ignore, nodeTaintsPolicy: Honor, matchLabelKeys: [version]}\n"
        "  - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}\n"
    )
    (pod,) = load(tmp_path, text).pods
    assert pod.topology_spread_constraints == (
        TopologySpreadConstraint(
            2,
            "zone",
            "DoNotSchedule",
            LabelSelector((("app", "web"),), (Requirement("tier", "Exists"),)),
            3,
            "Ignore",
            "Honor",
            ("version",),
        ),
        TopologySpreadConstraint(1, "kubernetes.io/hostname", "ScheduleAnyway"),
    )
    assert pod.unsupported_features == []


def test_spread_constraints_are_checked_as_the_api_server_does(tmp_path: Path) -> None:
    text = POD + (
        "  - {maxSkew: 0, topologyKey: '', whenUnsatisfiable: Sometimes}\n"
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2}\n"
        "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}\n"
        "  - {maxSkew: 1, topologyKey: host, whenUnsatisfiable: DoNotSchedule, minDomains: 0,\n"
        "     labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [app], nodeTaintsPolicy: Maybe}\n"
    )
    got = errors(tmp_path, text)
    p = "spec.topologySpreadConstraints"
    assert got == [
        (f"{p}[0].maxSkew", "Invalid value: 0: must be greater than zero"),
        (f"{p}[0].topologyKey", "Required value: can not be empty"),
        (
            f"{p}[0].whenUnsatisfiable",
            'Unsupported value: "Sometimes": supported values: "DoNotSchedule", "ScheduleAnyway"',
        ),
        (
            f"{p}[1].minDomains",
            "Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
        ),
        (f"{p}[2].{{topologyKey, whenUnsatisfiable}}", 'Duplicate value: "{zone, ScheduleAnyway}"'),
        (f"{p}[3].minDomains", "Invalid value: 0: must be greater than 0"),
        (f"{p}[3].nodeTaintsPolicy", 'Unsupported value: "Maybe": supported values: "Honor", "Ignore"'),
        (f"{p}[3].matchLabelKeys[0]", 'Invalid value: "app": exists in both matchLabelKeys and labelSelector'),
    ]


def test_unknown_field_in_a_spread_constraint_is_an_error(tmp_path: Path) -> None:
    text = POD + "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, maxskew: 2}\n"
    ((path, message),) = errors(tmp_path, text)
    assert path.startswith("spec.topologySpreadConstraints[0]")
    assert "maxskew" in path + message


def test_services_and_owner_references(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n"
        "spec: {selector: {app: web}, ports: [{port: 80}]}\n---\n"
        "apiVersion: v1\nkind: Service\nmetadata: {name: headless, namespace: shop}\nspec: {clusterIP: None}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\n  ownerReferences:\n"
        "  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-rs, uid: u1, controller: true}\n"
        "  - {apiVersion: v1, kind: ConfigMap, name: cm, uid: u2}\n"
        "spec: {containers: [{name: c}]}\n"
    )
    c = load(tmp_path, text)
    assert [(s.key, s.selector) for s in c.services] == [("shop/web", {"app": "web"}), ("shop/headless", None)]
    (pod,) = c.pods
    assert pod.owner_refs == (
        OwnerRef("ReplicaSet", "web-rs", True, "apps/v1"),
        OwnerRef("ConfigMap", "cm", False, "v1"),
    )
    assert pod.owner == OwnerRef("ReplicaSet", "web-rs")  # the controller, as the volume plugins read it


def test_two_controllers_are_an_error(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  ownerReferences:\n"
        "  - {apiVersion: apps/v1, kind: ReplicaSet, name: a, uid: u1, controller: true}\n"
        "  - {apiVersion: apps/v1, kind: ReplicaSet, name: b, uid: u2, controller: true}\n"
        "spec: {containers: [{name: c}]}\n"
    )
    assert errors(tmp_path, text) == [
        ("metadata.ownerReferences", "Invalid value: Only one reference can have Controller set to true")
    ]


def test_replication_controller_expands_and_keeps_its_selector(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\n"
        "spec:\n  replicas: 2\n  template:\n    metadata: {labels: {app: old}}\n"
        "    spec: {containers: [{name: c}]}\n"
    )
    c = load(tmp_path, text)
    assert [p.name for p in c.pods] == ["rc-0", "rc-1"]
    (w,) = c.workloads
    assert (w.kind, w.selector) == ("ReplicationController", LabelSelector((("app", "old"),)))
    assert c.pods[0].owner == OwnerRef("ReplicationController", "rc")


def test_replication_controller_selector_must_match_its_template(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\n"
        "spec:\n  replicas: 0\n  selector: {app: new}\n  template:\n    metadata: {labels: {app: old}}\n"
        "    spec: {containers: [{name: c}]}\n"
    )
    assert errors(tmp_path, text) == [
        ("spec.template.metadata.labels", "Invalid value: `selector` does not match template `labels`")
    ]


def test_workload_selectors_are_kept(tmp_path: Path) -> None:
    text = (
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\n"
        "spec:\n  replicas: 0\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n"
        "  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: c}]}\n"
    )
    (w,) = load(tmp_path, text).workloads
    assert w.selector == LabelSelector((("app", "db"),))
