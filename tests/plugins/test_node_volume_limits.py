"""NodeVolumeLimits (CSI): upstream's csi_test.go behaviours, in our words. node-a has a CSINode allowing two
volumes of driver ebs.csi.aws.com; node-b and node-c have no limit (one test gives node-b a node allocatable
limit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from packsched.framework.status import Code
from packsched.plugins.helper.volumes import csi_attach_limit_key
from packsched.plugins.nodevolumelimits.csi import ERR_REASON_MAX_VOLUME_COUNT, new_csi_limits
from volume_cases import evaluate, run

BASE = """
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-a}
spec:
  drivers:
  - {name: ebs.csi.aws.com, nodeID: a, allocatable: {count: 2}}
  - {name: other.csi, nodeID: a}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: ebs}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
"""


def pv(name: str, driver: str = "ebs.csi.aws.com") -> str:
    return f"""
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {name}}}
spec:
  capacity: {{storage: 1Gi}}
  accessModes: [ReadWriteOnce]
  claimRef: {{namespace: default, name: {name}}}
  csi: {{driver: {driver}, volumeHandle: h-{name}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}}}
spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}, volumeName: {name}}}
"""


def unbound(name: str) -> str:
    return f"""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}}}
spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}, storageClassName: ebs}}
"""


def a_pod(name: str, claims: tuple[str, ...], node: str = "") -> str:
    vols = ", ".join(f"{{name: v{i}, persistentVolumeClaim: {{claimName: {c}}}}}" for i, c in enumerate(claims))
    where = f"nodeName: {node}\n  " if node else ""
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  {where}containers: [{{name: c}}]
  volumes: [{vols}]
"""


def cluster(*parts: str) -> str:
    return "\n---\n".join([BASE, *parts])


CASES = [
    (
        "room for one more on node-a",
        [pv("x"), pv("y"), a_pod("old", ("x",), "node-a"), a_pod("incoming", ("y",))],
        set(),
    ),
    (
        "node-a full",
        [pv("x"), pv("y"), pv("z"), a_pod("old", ("x", "y"), "node-a"), a_pod("incoming", ("z",))],
        {"node-a"},
    ),
    (
        "the same volume counts once",
        [pv("x"), pv("y"), a_pod("old", ("x", "y"), "node-a"), a_pod("incoming", ("x",))],
        set(),
    ),
    (
        "two new volumes exceed two minus one",
        [pv("x"), pv("y"), pv("z"), a_pod("old", ("x",), "node-a"), a_pod("incoming", ("y", "z"))],
        {"node-a"},
    ),
    ("three new volumes exceed two", [pv("x"), pv("y"), pv("z"), a_pod("incoming", ("x", "y", "z"))], {"node-a"}),
    (
        "unbound claims count by their class's provisioner",
        [pv("x"), pv("y"), unbound("u"), a_pod("old", ("x", "y"), "node-a"), a_pod("incoming", ("u",))],
        {"node-a"},
    ),
    (
        "another driver has no limit",
        [pv("x"), pv("y"), pv("o", "other.csi"), a_pod("old", ("x", "y"), "node-a"), a_pod("incoming", ("o",))],
        set(),
    ),
]


@pytest.mark.parametrize(("name", "parts", "rejected"), CASES, ids=[c[0] for c in CASES])
def test_csi_limits(tmp_path: Path, name: str, parts: list[str], rejected: set[str]) -> None:
    out = run(tmp_path, cluster(*parts), new_csi_limits)
    assert out.pre_filter.ok
    assert out.reasons == {n: [ERR_REASON_MAX_VOLUME_COUNT] for n in rejected}
    assert set(out.codes.values()) <= {Code.UNSCHEDULABLE}


def test_node_allocatable_limit(tmp_path: Path) -> None:
    out = run(tmp_path, cluster(pv("x"), pv("y"), a_pod("incoming", ("x", "y"))), new_csi_limits)
    node_b = out.handle.snapshot.nodes[out.handle.snapshot.index["node-b"]]
    node_b.allocatable[csi_attach_limit_key("ebs.csi.aws.com")] = 1
    out.handle.snapshot.update_node(node_b)
    assert out.reasons == {}  # two fit node-a's two, and node-b had no limit
    limited = evaluate(out.plugin, out.handle, out.pod)
    assert limited.reasons == {"node-b": [ERR_REASON_MAX_VOLUME_COUNT]}


def test_missing_claim_is_unresolvable(tmp_path: Path) -> None:
    out = run(tmp_path, cluster(a_pod("incoming", ("nowhere",))), new_csi_limits)
    assert set(out.reasons) == {"node-a", "node-b", "node-c"}
    assert out.reasons["node-a"] == ['looking up PVC default/nowhere: persistentvolumeclaim "nowhere" not found']
    assert set(out.codes.values()) == {Code.UNSCHEDULABLE_AND_UNRESOLVABLE}


def test_pod_without_claims_skips(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        cluster(a_pod("incoming", ()).replace("volumes: []", "volumes: [{name: e, emptyDir: {}}]")),
        new_csi_limits,
    )
    assert out.pre_filter.code == Code.SKIP


def test_long_driver_names_are_hashed() -> None:
    key = csi_attach_limit_key("a" * 60)
    assert key.startswith("attachable-volumes-csi-" + "a" * 23) and len(key) == len("attachable-volumes-csi-") + 39
    assert csi_attach_limit_key("ebs.csi.aws.com") == "attachable-volumes-csi-ebs.csi.aws.com"
