"""VolumeZone: a pod's bound PersistentVolumes carrying zone or region labels need a node in one of those zones
(regions). A node with none of the four topology labels accepts any pod; a PV label value may list several
zones joined by ``__``; a PV's beta label is also matched against the node's GA label."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from packsched.api.storage import WAIT_FOR_FIRST_CONSUMER, StorageObjects
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import STORAGE, Handle, NodeSel, Rejection, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.helper import signers
from packsched.plugins.helper.volumes import claim_not_found, class_not_found, volume_not_found

NAME = "VolumeZone"
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
STATE_KEY = "PreFilter" + NAME

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_GA = {BETA_ZONE: ZONE, BETA_REGION: REGION}


@dataclass(frozen=True)
class PVTopology:
    key: str
    values: frozenset[str]


@dataclass
class _State:
    topologies: list[PVTopology]

    def clone(self) -> _State:
        return self  # never changed after PreFilter


def pv_topologies(pod: PodInfo, storage: StorageObjects) -> tuple[list[PVTopology], Status]:
    """The zone/region constraints of the pod's bound volumes (upstream getPVbyPod + getPVTopologies)."""
    out: list[PVTopology] = []
    for vol in pod.pod.volumes:
        if vol.source != "persistentVolumeClaim":
            continue
        pvc = storage.claim(pod.pod.namespace, vol.claim_name)
        if pvc is None:
            return [], Status.unschedulable(claim_not_found(vol.claim_name), unresolvable=True)
        if not pvc.volume_name:
            cls = pvc.class_name
            if not cls:
                msg = "PersistentVolumeClaim had no pv name and storageClass name"
                return [], Status.unschedulable(msg, unresolvable=True)
            sc = storage.storage_class(cls)
            if sc is None:
                return [], Status.unschedulable(class_not_found(cls), unresolvable=True)
            if sc.binding_mode is None:
                msg = f'VolumeBindingMode not set for StorageClass "{cls}"'
                return [], Status.unschedulable(msg, unresolvable=True)
            if sc.binding_mode == WAIT_FOR_FIRST_CONSUMER:
                continue  # not bound yet: VolumeBinding places it
            return [], Status.unschedulable("PersistentVolume had no name", unresolvable=True)
        pv = storage.volume(pvc.volume_name)
        if pv is None:
            return [], Status.unschedulable(volume_not_found(pvc.volume_name), unresolvable=True)
        for key in TOPOLOGY_LABELS:
            value = pv.labels.get(key)
            if value is not None:
                out.append(PVTopology(key, frozenset(value.split("__"))))
    return out, Status()


class VolumeZone:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod)."""
        return signers.volumes(pod.pod)

    cluster_reads = (STORAGE,)

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        storage = self.handle.storage()
        if storage is None or not pod.pod.volumes:  # a pod without volumes has no volume topology
            return Status.skip()
        topologies, st = pv_topologies(pod, storage)
        if not st.ok:
            return st
        if not topologies:
            return Status.skip()
        state.write(STATE_KEY, _State(topologies))
        return Status()

    def _node_value_in(self, snap: Snapshot, key: str, values: frozenset[str]) -> BoolArray:
        """Nodes whose label ``key`` (or, for a beta key, its GA key when the node lacks the beta one) has one
        of ``values``."""
        ok = np.zeros(snap.n, dtype=bool)
        codes = snap.labels.column(key)
        has = np.zeros(snap.n, dtype=bool) if codes is None else codes >= 0
        if codes is not None:
            vocab = snap.labels.vocab[key]
            ok |= np.isin(codes, [vocab[v] for v in values if v in vocab])
        ga = _GA.get(key)
        if ga is not None:
            ga_codes = snap.labels.column(ga)
            if ga_codes is not None:
                vocab = snap.labels.vocab[ga]
                ok |= ~has & np.isin(ga_codes, [vocab[v] for v in values if v in vocab])
        return ok

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        data = state.read(STATE_KEY)
        if not isinstance(data, _State) or not data.topologies:
            return []
        constrained = np.zeros(snap.n, dtype=bool)
        for key in TOPOLOGY_LABELS:
            codes = snap.labels.column(key)
            if codes is not None:
                constrained |= codes >= 0
        ok = np.ones(snap.n, dtype=bool)
        for topo in data.topologies:
            ok &= self._node_value_in(snap, topo.key, topo.values)
        bad = (constrained & ~ok)[sel]
        if not bad.any():
            return []
        return [Rejection(bad, ERR_REASON_CONFLICT, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)]


def new_volume_zone(args: PluginArgs | None, handle: Handle) -> VolumeZone:
    return VolumeZone(handle)
