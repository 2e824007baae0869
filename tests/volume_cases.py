"""A small harness for the volume plugins: a cluster written as manifests, the pod under test, and each node's
reasons (or the PreFilter status)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from packsched.api.manifests import Cluster, load_manifests
from packsched.api.storage import StorageObjects
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code, Status

HEAD = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {topology.kubernetes.io/zone: zone-a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {topology.kubernetes.io/zone: zone-b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-c}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


@dataclass
class FakeHandle:
    snapshot: Snapshot
    store: StorageObjects | None
    kube_version: KubeVersion = DEFAULT_KUBE_VERSION

    def storage(self) -> StorageObjects | None:
        return self.store


@dataclass
class Outcome:
    pre_filter: Status
    reasons: dict[str, list[str]]  # node -> reasons (only rejected nodes)
    codes: dict[str, Code]
    state: CycleState
    handle: FakeHandle
    pod: PodInfo
    plugin: Any


def load(tmp: Path, text: str) -> Cluster:
    path = tmp / "cluster.yaml"
    path.write_text(HEAD + "---\n" + text)
    return load_manifests([str(path)])


def build(cluster: Cluster, version: KubeVersion = DEFAULT_KUBE_VERSION) -> FakeHandle:
    snap = Snapshot(cluster.nodes)
    for p in cluster.pods:
        if p.node_name:
            snap.add_pod(make_pod_info(p), snap.index[p.node_name])
    return FakeHandle(snap, cluster.storage, version)


def run(
    tmp: Path, text: str, factory: Any, pod: str = "default/incoming", version: KubeVersion = DEFAULT_KUBE_VERSION
) -> Outcome:
    cluster = load(tmp, text)
    handle = build(cluster, version)
    plugin = factory(None, handle)
    target = cluster.pod(pod)
    assert target is not None
    info = make_pod_info(target)
    return evaluate(plugin, handle, info)


def evaluate(plugin: Any, handle: FakeHandle, info: PodInfo) -> Outcome:
    state = CycleState()
    st = plugin.pre_filter(state, info, handle.snapshot)
    reasons: dict[str, list[str]] = {}
    codes: dict[str, Code] = {}
    if st.ok:
        for r in plugin.filter(state, info, handle.snapshot, slice(None)):
            for i in np.flatnonzero(r.mask):
                name = handle.snapshot.nodes[int(i)].name
                reasons.setdefault(name, []).append(r.reason)
                codes[name] = r.code
    return Outcome(st, reasons, codes, state, handle, info, plugin)
