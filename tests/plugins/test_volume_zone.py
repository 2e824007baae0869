"""VolumeZone: upstream's zone tables (volume_zone_test.go), in our words. Nodes: node-a in zone-a, node-b in
zone-b, node-c without topology labels (it accepts every pod)."""

from __future__ import annotations

from pathlib import Path

import pytest

from packsched.framework.status import Code
from packsched.plugins.volumezone.volume_zone import ERR_REASON_CONFLICT, new_volume_zone
from volume_cases import run

POD = """
apiVersion: v1
kind: Pod
metadata: {name: incoming}
spec:
  containers: [{name: c}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: claim}}]
"""


def _bound(labels: str) -> str:
    return f"""
apiVersion: v1
kind: PersistentVolume
metadata: {{name: pv, labels: {{{labels}}}}}
spec: {{capacity: {{storage: 1Gi}}, accessModes: [ReadWriteOnce], claimRef: {{namespace: default, name: claim}}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: claim}}
spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}, volumeName: pv}}
---
{POD}"""


ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"

CASES = [
    ("zone label matches one node", f"{ZONE}: zone-a", {"node-b"}),
    ("several zones joined by __", f"{ZONE}: zone-a__zone-b", set()),
    ("beta label on the PV, GA label on the node", f"{BETA_ZONE}: zone-b", {"node-a"}),
    ("zone no node has", f"{ZONE}: zone-z", {"node-a", "node-b"}),
    ("region the nodes lack", "topology.kubernetes.io/region: r1", {"node-a", "node-b"}),
]


@pytest.mark.parametrize(("name", "labels", "rejected"), CASES, ids=[c[0] for c in CASES])
def test_zone_labels(tmp_path: Path, name: str, labels: str, rejected: set[str]) -> None:
    out = run(tmp_path, _bound(labels), new_volume_zone)
    assert out.pre_filter.ok
    assert out.reasons == {n: [ERR_REASON_CONFLICT] for n in rejected}
    assert set(out.codes.values()) <= {Code.UNSCHEDULABLE_AND_UNRESOLVABLE}


def test_volume_without_topology_labels_skips(tmp_path: Path) -> None:
    out = run(tmp_path, _bound("app: x"), new_volume_zone)
    assert out.pre_filter.code == Code.SKIP


def _unbound(class_doc: str, class_name: str) -> str:
    claim = f"""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: claim}}
spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}{class_name}}}
"""
    return "\n---\n".join(d for d in (class_doc, claim, POD) if d)


WFFC = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: wait}\nprovisioner: x\n"
WFFC += "volumeBindingMode: WaitForFirstConsumer\n"
IMMEDIATE = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: now}\nprovisioner: x\n"

STATUS_CASES = [
    ("missing claim", POD, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "claim" not found'),
    (
        "claim bound to a missing volume",
        _bound("a: b").split("---", 1)[1],
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        'persistentvolume "pv" not found',
    ),
    (
        "unbound claim without class",
        _unbound("", ""),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "PersistentVolumeClaim had no pv name and storageClass name",
    ),
    (
        "unbound claim of a missing class",
        _unbound("", ", storageClassName: gone"),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        'storageclass.storage.k8s.io "gone" not found',
    ),
    (
        "unbound claim, immediate class",
        _unbound(IMMEDIATE, ", storageClassName: now"),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "PersistentVolume had no name",
    ),
    ("unbound claim, class waits for the consumer", _unbound(WFFC, ", storageClassName: wait"), Code.SKIP, ""),
]


@pytest.mark.parametrize(("name", "text", "code", "message"), STATUS_CASES, ids=[c[0] for c in STATUS_CASES])
def test_pre_filter_statuses(tmp_path: Path, name: str, text: str, code: Code, message: str) -> None:
    out = run(tmp_path, text, new_volume_zone)
    assert out.pre_filter.code == code
    assert out.pre_filter.message == message
