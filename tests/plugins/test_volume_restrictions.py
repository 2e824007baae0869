"""VolumeRestrictions: upstream's disk-conflict and ReadWriteOncePod tables (volume_restrictions_test.go), in our
words."""

from __future__ import annotations

from pathlib import Path

import pytest

from packsched.config.loader import default_config
from packsched.framework.podinfo import make_pod_info
from packsched.framework.status import Code
from packsched.plugins.registry import in_tree_registry
from packsched.plugins.volumerestrictions.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    new_volume_restrictions,
)
from packsched.sim.engine import run_simulation
from volume_cases import evaluate, load, run


def _pods(existing: str, incoming: str) -> str:
    """A pod on node-a with volume ``existing`` and the incoming pod with volume ``incoming``."""
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: holder}}
spec:
  nodeName: node-a
  containers: [{{name: c}}]
  volumes: [{{name: v, {existing}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: incoming}}
spec:
  containers: [{{name: c}}]
  volumes: [{{name: v, {incoming}}}]
"""


DISK_CASES = [
    ("gce same disk", "gcePersistentDisk: {pdName: foo}", "gcePersistentDisk: {pdName: foo}", True),
    ("gce other disk", "gcePersistentDisk: {pdName: foo}", "gcePersistentDisk: {pdName: bar}", False),
    (
        "gce both read-only",
        "gcePersistentDisk: {pdName: foo, readOnly: true}",
        "gcePersistentDisk: {pdName: foo, readOnly: true}",
        False,
    ),
    (
        "gce one read-only",
        "gcePersistentDisk: {pdName: foo, readOnly: true}",
        "gcePersistentDisk: {pdName: foo}",
        True,
    ),
    (
        "ebs same volume even read-only",
        "awsElasticBlockStore: {volumeID: foo, readOnly: true}",
        "awsElasticBlockStore: {volumeID: foo, readOnly: true}",
        True,
    ),
    ("ebs other volume", "awsElasticBlockStore: {volumeID: foo}", "awsElasticBlockStore: {volumeID: bar}", False),
    (
        "rbd same image, shared monitor",
        "rbd: {monitors: [a, b], pool: foo, image: bar}",
        "rbd: {monitors: [b, c], pool: foo, image: bar}",
        True,
    ),
    (
        "rbd same image, other monitors",
        "rbd: {monitors: [a, b], pool: foo, image: bar}",
        "rbd: {monitors: [c, d], pool: foo, image: bar}",
        False,
    ),
    (
        "rbd default pool",
        "rbd: {monitors: [a], image: bar}",
        "rbd: {monitors: [a], pool: rbd, image: bar}",
        True,
    ),
    (
        "rbd both read-only",
        "rbd: {monitors: [a], image: bar, readOnly: true}",
        "rbd: {monitors: [a], image: bar, readOnly: true}",
        False,
    ),
    (
        "iscsi same iqn",
        "iscsi: {targetPortal: 'p:3260', iqn: iqn.a, lun: 0}",
        "iscsi: {targetPortal: 'q:3260', iqn: iqn.a, lun: 1}",
        True,
    ),
    (
        "iscsi both read-only",
        "iscsi: {targetPortal: 'p:3260', iqn: iqn.a, lun: 0, readOnly: true}",
        "iscsi: {targetPortal: 'p:3260', iqn: iqn.a, lun: 0, readOnly: true}",
        False,
    ),
    ("different volume types", "gcePersistentDisk: {pdName: foo}", "awsElasticBlockStore: {volumeID: foo}", False),
]


@pytest.mark.parametrize(("name", "existing", "incoming", "clash"), DISK_CASES, ids=[c[0] for c in DISK_CASES])
def test_inline_disk_conflicts(tmp_path: Path, name: str, existing: str, incoming: str, clash: bool) -> None:
    out = run(tmp_path, _pods(existing, incoming), new_volume_restrictions)
    assert out.pre_filter.ok
    if clash:
        assert out.reasons == {"node-a": [ERR_REASON_DISK_CONFLICT]}
        assert out.codes["node-a"] == Code.UNSCHEDULABLE
    else:
        assert out.reasons == {}


def test_pod_without_restricted_volumes_skips(tmp_path: Path) -> None:
    out = run(tmp_path, _pods("emptyDir: {}", "emptyDir: {}"), new_volume_restrictions)
    assert out.pre_filter.code == Code.SKIP


RWOP = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: only-one}
spec: {accessModes: [ReadWriteOncePod], resources: {requests: {storage: 1Gi}}, volumeName: pv-1}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-1}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOncePod], claimRef: {namespace: default, name: only-one}}
---
apiVersion: v1
kind: Pod
metadata: {name: incoming}
spec:
  containers: [{name: c}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: only-one}}]
"""

RWOP_USER = """
---
apiVersion: v1
kind: Pod
metadata: {name: user}
spec:
  nodeName: node-b
  containers: [{name: c}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: only-one}}]
"""


def test_read_write_once_pod_claim_in_use_rejects_every_node(tmp_path: Path) -> None:
    out = run(tmp_path, RWOP + RWOP_USER, new_volume_restrictions)
    assert out.pre_filter.ok
    assert out.reasons == {n: [ERR_REASON_RWOP_CONFLICT] for n in ("node-a", "node-b", "node-c")}
    assert set(out.codes.values()) == {Code.UNSCHEDULABLE}  # preemption may remove the user


def test_read_write_once_pod_claim_unused_skips(tmp_path: Path) -> None:
    out = run(tmp_path, RWOP, new_volume_restrictions)
    assert out.pre_filter.code == Code.SKIP


def test_remove_and_add_pod_keep_the_count(tmp_path: Path) -> None:
    out = run(tmp_path, RWOP + RWOP_USER, new_volume_restrictions)
    snap = out.handle.snapshot
    user = snap.pods["default/user"]
    trial = out.state.clone()
    assert out.plugin.remove_pod(trial, out.pod, user, user.node, snap).ok
    assert out.plugin.filter(trial, out.pod, snap, slice(None)) == []
    assert out.plugin.add_pod(trial, out.pod, user, user.node, snap).ok
    assert [r.reason for r in out.plugin.filter(trial, out.pod, snap, slice(None))] == [ERR_REASON_RWOP_CONFLICT]
    # the original cycle state was not touched by the dry run
    assert [r.reason for r in out.plugin.filter(out.state, out.pod, snap, slice(None))] == [ERR_REASON_RWOP_CONFLICT]


def test_missing_claim_is_unresolvable(tmp_path: Path) -> None:
    text = RWOP.replace("claimName: only-one", "claimName: nowhere")
    out = run(tmp_path, text, new_volume_restrictions)
    assert out.pre_filter.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert out.pre_filter.message == 'persistentvolumeclaim "nowhere" not found'


def test_without_storage_objects_only_inline_disks_count(tmp_path: Path) -> None:
    out = run(tmp_path, RWOP + RWOP_USER, new_volume_restrictions)
    out.handle.store = None
    again = evaluate(out.plugin, out.handle, make_pod_info(out.pod.pod))
    assert again.pre_filter.code == Code.SKIP


PREEMPT = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOncePod], claimRef: {namespace: default, name: solo}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: solo}
spec: {accessModes: [ReadWriteOncePod], resources: {requests: {storage: 1Gi}}, volumeName: pv}
---
apiVersion: v1
kind: Pod
metadata: {name: low}
spec:
  nodeName: node-b
  containers: [{name: c}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: solo}}]
---
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priorityClassName: high
  containers: [{name: c}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: solo}}]
"""


def test_pod_blocked_by_a_lower_priority_claim_user_preempts_it(tmp_path: Path) -> None:
    """Every node is Unschedulable (not unresolvable): the dry run removes the user on its node through
    RemovePod, so preemption evicts it and the pod lands there."""
    cluster = load(tmp_path, PREEMPT)
    registry = in_tree_registry()
    result = run_simulation(cluster, default_config(set(registry)), registry)
    phases = {r.pod.name: (r.phase, r.node) for r in result.records}
    assert phases["low"][0] == "Preempted"
    assert phases["urgent"] == ("Running", "node-b")
