"""VolumeBinding: the distinct behaviours of upstream's binder and plugin tables (volume_binding_test.go,
binder_test.go), in our words. Nodes: node-a (zone-a), node-b (zone-b), node-c (no zone)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from packsched.api.storage import (
    ANN_BETA_STORAGE_CLASS,
    CLAIM_BOUND,
    VOLUME_BOUND,
    PersistentVolume,
    PersistentVolumeClaim,
)
from packsched.config.types import UtilizationShapePoint, VolumeBindingArgs
from packsched.config.versions import KubeVersion
from packsched.framework.status import Code
from packsched.plugins.volumebinding.volume_binding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    ERR_UNBOUND_IMMEDIATE,
    NodeVolumes,
    VolumeBinding,
    new_volume_binding,
    static_bindings_score,
    storage_utilization_score,
)
from volume_cases import Outcome, evaluate, run


def pod(*claims: str) -> str:
    vols = ", ".join(f"{{name: v{i}, persistentVolumeClaim: {{claimName: {c}}}}}" for i, c in enumerate(claims))
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: incoming}}
spec:
  containers: [{{name: c}}]
  volumes: [{vols}]
"""


def claim(name: str, size: str = "1Gi", cls: str = "wait", extra: str = "", meta: str = "") -> str:
    return f"""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}{meta}}}
spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: {size}}}}}, storageClassName: {cls}{extra}}}
"""


def volume(name: str, size: str = "1Gi", cls: str = "wait", node: str = "", extra: str = "") -> str:
    affinity = ""
    if node:
        affinity = (
            ", nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: "
            f"[{{key: kubernetes.io/hostname, operator: In, values: [{node}]}}]}}]}}}}"
        )
    return f"""
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {name}}}
spec: {{capacity: {{storage: {size}}}, accessModes: [ReadWriteOnce], storageClassName: {cls}{affinity}{extra}}}
"""


def storage_class(name: str, provisioner: str, mode: str = "WaitForFirstConsumer", extra: str = "") -> str:
    return f"""
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {name}}}
provisioner: {provisioner}
volumeBindingMode: {mode}
{extra}
"""


def docs(*parts: str) -> str:
    return "\n---\n".join(parts)


LOCAL = storage_class("wait", "kubernetes.io/no-provisioner")
ZONAL_PV = """
apiVersion: v1
kind: PersistentVolume
metadata: {name: zonal}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  claimRef: {namespace: default, name: data}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}]
"""

CASES = [
    (
        "bound claim, volume without affinity",
        docs(
            claim("data", cls='""', extra=", volumeName: free"),
            volume("free", cls='""').replace(
                "storageClassName", "claimRef: {namespace: default, name: data}, storageClassName"
            ),
            pod("data"),
        ),
        {},
    ),
    (
        "bound claim, zonal volume",
        docs(claim("data", cls='""', extra=", volumeName: zonal"), ZONAL_PV, pod("data")),
        {"node-a": [ERR_REASON_NODE_CONFLICT], "node-c": [ERR_REASON_NODE_CONFLICT]},
    ),
    (
        "bound to a missing volume",
        docs(claim("data", cls='""', extra=", volumeName: gone"), pod("data")),
        {n: [ERR_REASON_PV_NOT_EXIST] for n in ("node-a", "node-b", "node-c")},
    ),
    (
        "static volume on one node",
        docs(LOCAL, claim("data"), volume("pv-b", node="node-b"), pod("data")),
        {"node-a": [ERR_REASON_BIND_CONFLICT], "node-c": [ERR_REASON_BIND_CONFLICT]},
    ),
    (
        "static volume too small",
        docs(LOCAL, claim("data", "2Gi"), volume("pv-b", node="node-b"), pod("data")),
        {n: [ERR_REASON_BIND_CONFLICT] for n in ("node-a", "node-b", "node-c")},
    ),
    (
        "static volume of another class",
        docs(LOCAL, claim("data"), volume("pv-b", cls="other", node="node-b"), pod("data")),
        {n: [ERR_REASON_BIND_CONFLICT] for n in ("node-a", "node-b", "node-c")},
    ),
    (
        "access mode the volume lacks",
        docs(
            LOCAL, claim("data").replace("ReadWriteOnce", "ReadWriteMany"), volume("pv-b", node="node-b"), pod("data")
        ),
        {n: [ERR_REASON_BIND_CONFLICT] for n in ("node-a", "node-b", "node-c")},
    ),
    (
        "two claims need two volumes",
        docs(
            LOCAL,
            claim("one"),
            claim("two"),
            volume("pv-b1", node="node-b"),
            volume("pv-b2", node="node-b"),
            volume("pv-a", node="node-a"),
            pod("one", "two"),
        ),
        {"node-a": [ERR_REASON_BIND_CONFLICT], "node-c": [ERR_REASON_BIND_CONFLICT]},
    ),
    (
        "volume pre-bound to another claim",
        docs(
            LOCAL,
            claim("data"),
            volume("pv-b", node="node-b", extra=", claimRef: {namespace: default, name: other}"),
            pod("data"),
        ),
        {n: [ERR_REASON_BIND_CONFLICT] for n in ("node-a", "node-b", "node-c")},
    ),
    (
        "volume pre-bound to this claim",
        docs(
            LOCAL,
            claim("data"),
            volume("pv-a", node="node-a", extra=", claimRef: {namespace: default, name: data}"),
            volume("pv-b", node="node-b"),
            pod("data"),
        ),
        {"node-b": [ERR_REASON_BIND_CONFLICT], "node-c": [ERR_REASON_BIND_CONFLICT]},
    ),
    ("dynamic provisioning anywhere", docs(storage_class("wait", "csi.example.com"), claim("data"), pod("data")), {}),
    (
        "dynamic provisioning, allowed topologies",
        docs(
            storage_class(
                "wait",
                "csi.example.com",
                extra="allowedTopologies: [{matchLabelExpressions: "
                "[{key: topology.kubernetes.io/zone, values: [zone-a]}]}]",
            ),
            claim("data"),
            pod("data"),
        ),
        {"node-b": [ERR_REASON_BIND_CONFLICT], "node-c": [ERR_REASON_BIND_CONFLICT]},
    ),
    (
        "claim with a selected node",
        docs(
            storage_class("wait", "csi.example.com"),
            claim("data", meta=", annotations: {volume.kubernetes.io/selected-node: node-c}"),
            pod("data"),
        ),
        {"node-a": [ERR_REASON_BIND_CONFLICT], "node-b": [ERR_REASON_BIND_CONFLICT]},
    ),
    (
        "bound and unbound claims both fail",
        docs(
            LOCAL,
            claim("data", cls='""', extra=", volumeName: zonal"),
            ZONAL_PV,
            claim("more"),
            volume("pv-b", node="node-b"),
            pod("data", "more"),
        ),
        {
            "node-a": [ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT],
            "node-c": [ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT],
        },
    ),
]


@pytest.mark.parametrize(("name", "text", "want"), CASES, ids=[c[0] for c in CASES])
def test_filter(tmp_path: Path, name: str, text: str, want: dict[str, list[str]]) -> None:
    out = run(tmp_path, text, new_volume_binding)
    assert out.pre_filter.ok, out.pre_filter
    assert {n: sorted(r) for n, r in out.reasons.items()} == {n: sorted(r) for n, r in want.items()}
    assert set(out.codes.values()) <= {Code.UNSCHEDULABLE_AND_UNRESOLVABLE}


PRE_FILTER = [
    ("no claims", pod().replace("volumes: []", "volumes: [{name: x, emptyDir: {}}]"), Code.SKIP, ""),
    ("missing claim", pod("data"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "data" not found'),
    (
        "unbound immediate claim",
        docs(storage_class("wait", "x", "Immediate"), claim("data"), pod("data")),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ERR_UNBOUND_IMMEDIATE,
    ),
    (
        "claim of a missing class counts as immediate",
        docs(claim("data"), pod("data")),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ERR_UNBOUND_IMMEDIATE,
    ),
    (
        "claim being deleted",
        docs(LOCAL, claim("data", meta=", deletionTimestamp: '2024-01-01T00:00:00Z'"), pod("data")),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        'persistentvolumeclaim "data" is being deleted',
    ),
    (
        "lost claim",
        docs(claim("data", extra=", volumeName: gone").rstrip() + "\nstatus: {phase: Lost}", pod("data")),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        'persistentvolumeclaim "data" bound to non-existent persistentvolume "gone"',
    ),
]


@pytest.mark.parametrize(("name", "text", "code", "message"), PRE_FILTER, ids=[c[0] for c in PRE_FILTER])
def test_pre_filter(tmp_path: Path, name: str, text: str, code: Code, message: str) -> None:
    out = run(tmp_path, text, new_volume_binding)
    assert out.pre_filter.code == code
    assert out.pre_filter.message == message


def test_smallest_fitting_volume_is_bound_at_pre_bind(tmp_path: Path) -> None:
    text = docs(
        LOCAL, claim("data"), volume("big", "5Gi", node="node-b"), volume("small", "2Gi", node="node-b"), pod("data")
    )
    out = run(tmp_path, text, new_volume_binding)
    assert out.plugin.reserve(out.state, out.pod, "node-b").ok
    assert out.plugin.pre_bind(out.state, out.pod, "node-b").ok
    storage = out.handle.store
    assert storage is not None
    pvc = storage.claim("default", "data")
    assert pvc is not None and pvc.volume_name == "small" and pvc.phase == CLAIM_BOUND
    small = storage.volume("small")
    assert small is not None and small.phase == VOLUME_BOUND and small.bound_to(pvc)
    # a later cycle sees the claim bound: only the volume's node fits
    bound = evaluate(out.plugin, out.handle, out.pod)
    assert bound.reasons == {"node-a": [ERR_REASON_NODE_CONFLICT], "node-c": [ERR_REASON_NODE_CONFLICT]}


def test_provisioned_volume_follows_the_node_topology(tmp_path: Path) -> None:
    sc = storage_class(
        "wait",
        "csi.example.com",
        extra="allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, "
        "values: [zone-a, zone-b]}]}]",
    )
    out = run(tmp_path, docs(sc, claim("data"), pod("data")), new_volume_binding)
    assert out.reasons == {"node-c": [ERR_REASON_BIND_CONFLICT]}
    out.plugin.reserve(out.state, out.pod, "node-b")
    out.plugin.pre_bind(out.state, out.pod, "node-b")
    storage = out.handle.store
    assert storage is not None
    pvc = storage.claim("default", "data")
    assert pvc is not None and pvc.phase == CLAIM_BOUND
    pv = storage.volume(pvc.volume_name)
    assert pv is not None and pv.csi_driver == "csi.example.com" and pv.capacity == 1024**3
    assert pv.node_affinity is not None
    assert [(r.key, r.values) for r in pv.node_affinity[0].match_expressions] == [
        ("topology.kubernetes.io/zone", ("zone-b",))
    ]


# -- Score: StorageCapacityScoring (on by default from 1.37) --------------------------------------------------

TWO_CLASSES = docs(
    storage_class("fast", "kubernetes.io/no-provisioner"),
    storage_class("slow", "kubernetes.io/no-provisioner"),
    claim("f", "3Gi", cls="fast"),
    claim("s1", "1Gi", cls="slow"),
    claim("s2", "2Gi", cls="slow"),
    volume("fast-a", "4Gi", cls="fast", node="node-a"),
    volume("slow-a1", "3Gi", cls="slow", node="node-a"),
    volume("slow-a2", "3Gi", cls="slow", node="node-a"),
    volume("fast-b", "10Gi", cls="fast", node="node-b"),
    volume("slow-b1", "2Gi", cls="slow", node="node-b"),
    volume("slow-b2", "2Gi", cls="slow", node="node-b"),
    pod("f", "s1", "s2"),
)


def scores(out: Outcome, cols: list[int]) -> tuple[Code, list[int]]:
    snap = out.handle.snapshot
    st = out.plugin.pre_score(out.state, out.pod, snap, np.array(cols))
    return st.code, out.plugin.score(out.state, out.pod, snap, np.array(cols)).tolist()


def test_score_of_static_bindings_per_storage_class(tmp_path: Path) -> None:
    out = run(tmp_path, TWO_CLASSES, new_volume_binding)
    assert out.reasons == {"node-c": [ERR_REASON_BIND_CONFLICT]}
    # default shape (0 %: 10, 100 %: 0, x10): score = 100 - utilisation, per class on the summed bindings
    # node-a: fast 3Gi/4Gi = 75 % -> 25; slow (1Gi + 2Gi)/(3Gi + 3Gi) = 50 % -> 50; (25 + 50) / 2 = 37.5 -> 38
    # node-b: fast 3Gi/10Gi = 30 % -> 70; slow (1Gi + 2Gi)/(2Gi + 2Gi) = 75 % -> 25; (70 + 25) / 2 = 47.5 -> 48
    assert scores(out, [0, 1]) == (Code.SUCCESS, [38, 48])


def test_score_follows_the_configured_shape(tmp_path: Path) -> None:
    shape = [UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)]  # fuller volumes preferred

    def factory(args: object, handle: Any) -> VolumeBinding:
        return VolumeBinding(handle, VolumeBindingArgs(600, shape), KubeVersion(37))

    out = run(tmp_path, TWO_CLASSES, factory)
    # node-a: (75 + 50) / 2 = 62.5 -> 63; node-b: (30 + 75) / 2 = 52.5 -> 53
    assert scores(out, [0, 1]) == (Code.SUCCESS, [63, 53])


def test_score_is_skipped_before_1_37(tmp_path: Path) -> None:
    for minor in (36, 33, 25):
        out = run(tmp_path, TWO_CLASSES, new_volume_binding, version=KubeVersion(minor))
        assert out.plugin.pre_score(out.state, out.pod, out.handle.snapshot, np.arange(2)).code == Code.SKIP


def test_pod_without_claims_scores_zero_everywhere(tmp_path: Path) -> None:
    # upstream's PreScore does not skip with the gate on: the plugin is among the scores, with 0
    out = run(tmp_path, pod().replace("volumes: []", "volumes: [{name: x, emptyDir: {}}]"), new_volume_binding)
    assert out.pre_filter.code == Code.SKIP
    assert scores(out, [0, 1, 2]) == (Code.SUCCESS, [0, 0, 0])


def test_dynamic_provisioning_scores_zero_without_storage_capacity(tmp_path: Path) -> None:
    # upstream scores a provisioned claim only where a CSIStorageCapacity gives the node's capacity for the
    # class; packsched does not model CSIStorageCapacity: no class, score 0
    out = run(tmp_path, docs(storage_class("wait", "csi.example.com"), claim("data"), pod("data")), new_volume_binding)
    assert scores(out, [0, 1, 2]) == (Code.SUCCESS, [0, 0, 0])


def test_static_bindings_alone_are_scored_beside_a_provisioned_claim(tmp_path: Path) -> None:
    text = docs(
        storage_class("fast", "kubernetes.io/no-provisioner"),
        storage_class("dyn", "csi.example.com"),
        claim("f", "3Gi", cls="fast"),
        claim("d", "5Gi", cls="dyn"),
        volume("fast-b", "10Gi", cls="fast", node="node-b"),
        pod("f", "d"),
    )
    out = run(tmp_path, text, new_volume_binding)
    assert scores(out, [1]) == (Code.SUCCESS, [70])  # fast 30 % -> 70; the provisioned claim is not counted


def test_zero_capacity_counts_as_full(tmp_path: Path) -> None:
    text = docs(LOCAL, claim("data", "0"), volume("empty", "0", node="node-b"), pod("data"))

    def factory(args: object, handle: Any) -> VolumeBinding:
        shape = [UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)]
        return VolumeBinding(handle, VolumeBindingArgs(600, shape), KubeVersion(37))

    out = run(tmp_path, text, factory)
    assert out.reasons == {"node-a": [ERR_REASON_BIND_CONFLICT], "node-c": [ERR_REASON_BIND_CONFLICT]}
    assert scores(out, [1]) == (Code.SUCCESS, [100])  # capacity 0: utilisation 100 %, not 0 %


DEFAULT_POINTS = [(0, 100), (100, 0)]


def test_utilisation_score_edges() -> None:
    assert storage_utilization_score(DEFAULT_POINTS, 0, 0) == 0  # capacity 0: 100 %
    assert storage_utilization_score(DEFAULT_POINTS, 5, 4) == 0  # request above capacity: 100 %
    assert storage_utilization_score(DEFAULT_POINTS, 1, 3) == 67  # 33 % (truncated) -> 67
    assert storage_utilization_score([(0, 0), (100, 100)], 5, 4) == 100


def test_static_bindings_score_per_class() -> None:
    def binding(cls: str, request: int, capacity: int) -> tuple[PersistentVolumeClaim, PersistentVolume]:
        return PersistentVolumeClaim(f"c-{cls}-{request}", request=request), PersistentVolume(
            f"v-{cls}-{capacity}", capacity=capacity, storage_class_name=cls
        )

    assert static_bindings_score(DEFAULT_POINTS, NodeVolumes()) == 0
    # "zero": capacity 0 -> 0; "small": 1/4 = 25 % -> 75; (0 + 75) / 2 = 37.5 -> 38
    vols = NodeVolumes([binding("zero", 0, 0), binding("small", 1, 4)])
    assert static_bindings_score(DEFAULT_POINTS, vols) == 38
    # "over": 5 over 4 -> 100 % -> 0; with "small" (1 + 1)/(4 + 4) = 25 % -> 75: (75 + 0) / 2 -> 38
    vols = NodeVolumes([binding("small", 1, 4), binding("over", 5, 4), binding("small", 1, 4)])
    assert static_bindings_score(DEFAULT_POINTS, vols) == 38
    # the class is the volume's spec.storageClassName, even under the beta annotation: (1 + 1)/(2 + 4) = 33 %
    # -> 67 (as two classes it would be 1/2 -> 50 and 1/4 -> 75: 62.5 -> 63)
    pvc, pv = binding("spec", 1, 2)
    pv.annotations[ANN_BETA_STORAGE_CLASS] = "annotated"
    assert static_bindings_score(DEFAULT_POINTS, NodeVolumes([(pvc, pv), binding("spec", 1, 4)])) == 67


def test_live_mode_binds_no_claim_in_the_catalog_at_pre_bind(tmp_path: Path) -> None:
    """A catalog that mirrors an API server is changed by its informers only: PreBind refuses (with the claims)
    instead of binding in memory what nobody binds on the cluster."""
    text = docs(LOCAL, claim("data"), volume("small", "2Gi", node="node-b"), pod("data"))
    out = run(tmp_path, text, new_volume_binding)
    storage = out.handle.store
    assert storage is not None
    storage.mirror = True
    assert out.plugin.reserve(out.state, out.pod, "node-b").ok
    st = out.plugin.pre_bind(out.state, out.pod, "node-b")
    assert (
        st.code == Code.ERROR
        and st.message == "binding volumes is not supported in live mode yet (claims default/data)"
    )
    pvc = storage.claim("default", "data")
    assert pvc is not None and pvc.volume_name == "" and storage.generation == 0
