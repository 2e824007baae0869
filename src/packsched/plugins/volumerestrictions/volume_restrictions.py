"""VolumeRestrictions: in-line disks that cannot be shared on a node, and ReadWriteOncePod claims.

- The same GCE persistent disk, AWS EBS volume, iSCSI IQN or RBD image (overlapping Ceph monitors, same pool and
  image) may not be used by two pods of one node, unless (GCE PD, iSCSI, RBD) both mount it read-only; an EBS
  volume is never shared. Reason "node(s) had no available disk" (Unschedulable).
- A ReadWriteOncePod claim already used by a pod anywhere in the cluster rejects every node (Unschedulable, so that
  preemption may remove the user; reason "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod
  access mode already in-use by another pod" from 1.27, "node has pod using ..." before). PreFilter counts the
  pods using the pod's ReadWriteOncePod claims; AddPod and RemovePod keep the count right during preemption's dry
  run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from packsched.api.objects import Pod, PodVolume
from packsched.api.storage import READ_WRITE_ONCE_POD
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import STORAGE, Handle, NodeSel, Rejection, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.helper import signers
from packsched.plugins.helper.volumes import claim_not_found

NAME = "VolumeRestrictions"
STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = (  # 1.27+
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
ERR_REASON_RWOP_CONFLICT_BEFORE_1_27 = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
DISK_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def volume_conflict(vol: PodVolume, other: Pod) -> bool:
    """Whether the in-line disk ``vol`` clashes with one of ``other``'s volumes (upstream isVolumeConflict)."""
    for ev in other.volumes:
        if ev.source != vol.source:
            continue
        both_ro = vol.read_only and ev.read_only
        if vol.source == "awsElasticBlockStore" and vol.disk == ev.disk:
            return True
        if vol.source in ("gcePersistentDisk", "iscsi") and vol.disk == ev.disk and not both_ro:
            return True
        if vol.source == "rbd" and vol.disk == ev.disk and set(vol.monitors) & set(ev.monitors) and not both_ro:
            return True
    return False


@dataclass
class _State:
    rwop_claims: frozenset[str]  # namespace/name of the pod's ReadWriteOncePod claims
    conflicts: int  # how many volumes of other pods use one of them

    def clone(self) -> _State:
        return replace(self)

    def update(self, other: Pod, sign: int) -> None:
        for vol in other.volumes:
            if vol.source == "persistentVolumeClaim" and f"{other.namespace}/{vol.claim_name}" in self.rwop_claims:
                self.conflicts += sign


class VolumeRestrictions:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod)."""
        return signers.volumes(pod.pod)

    cluster_reads = (STORAGE,)

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        in_use = handle.kube_version.rwop_conflict_says_in_use
        self.rwop_conflict = ERR_REASON_RWOP_CONFLICT if in_use else ERR_REASON_RWOP_CONFLICT_BEFORE_1_27

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        if not pod.pod.volumes:  # no in-line disk, no ReadWriteOncePod claim
            return Status.skip()
        needs_check = any(v.source in DISK_SOURCES for v in pod.pod.volumes)
        storage = self.handle.storage()
        rwop: set[str] = set()
        if storage is not None:
            for vol in pod.pod.volumes:
                if vol.source != "persistentVolumeClaim":
                    continue
                pvc = storage.claim(pod.pod.namespace, vol.claim_name)
                if pvc is None:
                    return Status.unschedulable(claim_not_found(vol.claim_name), unresolvable=True)
                if READ_WRITE_ONCE_POD in pvc.access_modes:
                    rwop.add(pvc.key)
        data = _State(frozenset(rwop), 0)
        if rwop:
            # upstream counts each claim once when some scheduled pod uses it
            used = {f"{p.pod.namespace}/{v.claim_name}" for p in snap.pods.values() for v in p.pod.volumes}
            data.conflicts = len(rwop & used)
        if not needs_check and data.conflicts == 0:
            return Status.skip()
        state.write(STATE_KEY, data)
        return Status()

    def add_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        data = state.read(STATE_KEY)
        if isinstance(data, _State):
            data.update(other.pod, +1)
        return Status()

    def remove_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        data = state.read(STATE_KEY)
        if isinstance(data, _State):
            data.update(other.pod, -1)
        return Status()

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        disks = [v for v in pod.pod.volumes if v.source in DISK_SOURCES]
        out: list[Rejection] = []
        alive = np.ones(snap.n, dtype=bool)
        if disks:
            clash = np.zeros(snap.n, dtype=bool)
            for other in snap.pods.values():
                if other.node >= 0 and not clash[other.node] and any(volume_conflict(v, other.pod) for v in disks):
                    clash[other.node] = True
            if clash[sel].any():
                out.append(Rejection(clash[sel], ERR_REASON_DISK_CONFLICT, Code.UNSCHEDULABLE))
                alive = ~clash
        data = state.read(STATE_KEY)
        if isinstance(data, _State) and data.conflicts > 0:
            bad = alive[sel]
            if bad.any():
                out.append(Rejection(bad, self.rwop_conflict, Code.UNSCHEDULABLE))
        return out


def new_volume_restrictions(args: PluginArgs | None, handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions(handle)
