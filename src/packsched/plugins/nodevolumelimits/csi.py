"""NodeVolumeLimits: a node's CSI drivers can attach only so many volumes (CSINode ``allocatable.count``, or the
node's ``attachable-volumes-csi-<driver>`` allocatable).

The pod's claims resolve to a CSI driver and volume handle (claim -> bound PV's ``csi`` source; an unbound claim
counts once for its StorageClass's provisioner). A volume already attached to the node (used by one of its pods)
does not count again. The node is rejected when, for some driver, attached + new exceeds its limit.
In-tree volumes migrated to CSI are not counted (packsched reads no CSI migration state).
"""

from __future__ import annotations

import numpy as np

from packsched.api.objects import Pod
from packsched.api.storage import StorageObjects, claim_name_of
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle, NodeSel, Rejection
from packsched.framework.snapshot import IntArray, PodInfo, Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.helper.volumes import claim_not_found, csi_attach_limit_key

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
_UNBOUND_PREFIX = "unbound"  # upstream uses a random prefix for claims not bound yet; any fixed one is as good


class ClaimMissing(Exception):
    pass


def attachable_volumes(pod: Pod, storage: StorageObjects, new_pod: bool) -> dict[str, str]:
    """``driver/handle`` -> limit key of the pod's CSI volumes (upstream filterAttachableVolumes). A missing claim
    raises ClaimMissing for the pod being scheduled and is skipped for pods already placed."""
    out: dict[str, str] = {}
    for vol in pod.volumes:
        name = claim_name_of(vol, pod.name)
        if not name:
            continue
        pvc = storage.claim(pod.namespace, name)
        if pvc is None:
            if new_pod:
                raise ClaimMissing(f"looking up PVC {pod.namespace}/{name}: {claim_not_found(name)}")
            continue
        driver, handle = "", ""
        pv = storage.volume(pvc.volume_name) if pvc.volume_name else None
        if pv is not None:
            driver, handle = pv.csi_driver, pv.csi_handle
        else:
            sc = storage.storage_class(pvc.class_name) if pvc.class_name else None
            if sc is not None:
                driver, handle = sc.provisioner, f"{_UNBOUND_PREFIX}-{pvc.namespace}/{pvc.name}"
        if driver and handle:
            out[f"{driver}/{handle}"] = csi_attach_limit_key(driver)
    return out


class CSILimits:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self._stamp: tuple[int, int, int, int] | None = None
        self._rows: dict[str, IntArray] = {}

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        if self.handle.storage() is None:
            return Status.skip()
        if any(v.source in ("persistentVolumeClaim", "ephemeral") for v in pod.pod.volumes):
            return Status()
        return Status.skip()

    def _limit_rows(self, snap: Snapshot, storage: StorageObjects, keys: set[str]) -> dict[str, IntArray]:
        """Per limit key, each node's limit (-1: none), from node allocatable and CSINode (CSINode wins)."""
        out: dict[str, IntArray] = {}
        for key in keys:
            row = np.full(snap.n, -1, dtype=np.int64)
            for col, node in enumerate(snap.nodes):
                amount = node.allocatable.get(key)
                if amount is not None:
                    row[col] = amount
            out[key] = row
        for csi in storage.csi_nodes.values():
            col = snap.index.get(csi.name, -1)
            if col < 0:
                continue
            for driver, count in csi.drivers.items():
                key = csi_attach_limit_key(driver)
                if count is not None and key in out:
                    out[key][col] = count
        return out

    def _cached_rows(self, snap: Snapshot, storage: StorageObjects, keys: set[str]) -> dict[str, IntArray]:
        stamp = (id(snap), snap.node_generation, storage.generation, len(storage.csi_nodes))
        if self._stamp != stamp:
            self._rows = {}
            self._stamp = stamp
        missing = keys - set(self._rows)
        if missing:
            self._rows.update(self._limit_rows(snap, storage, missing))
        return {k: self._rows[k] for k in keys}

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        storage = self.handle.storage()
        if storage is None or not pod.pod.volumes:
            return []
        try:
            new = attachable_volumes(pod.pod, storage, True)
        except ClaimMissing as exc:
            size = snap.n if isinstance(sel, slice) else len(sel)
            return [Rejection(np.ones(size, dtype=bool), str(exc), Code.UNSCHEDULABLE_AND_UNRESOLVABLE)]
        if not new:
            return []
        rows = self._cached_rows(snap, storage, set(new.values()))
        wanted = {key: sum(1 for k in new.values() if k == key) for key in rows}
        # Nodes holding no pod with volumes: only the pod's own volumes count.
        bad = np.zeros(snap.n, dtype=bool)
        for key, row in rows.items():
            bad |= (row >= 0) & (wanted[key] > row)
        busy = {p.node for p in snap.pods.values() if p.node >= 0 and p.pod.volumes}
        for col in busy:
            bad[col] = self._exceeds(snap, storage, col, new, rows)
        out = bad[sel]
        return [Rejection(out, ERR_REASON_MAX_VOLUME_COUNT)] if out.any() else []

    def _exceeds(
        self, snap: Snapshot, storage: StorageObjects, col: int, new: dict[str, str], rows: dict[str, IntArray]
    ) -> bool:
        attached: dict[str, str] = {}
        for other in snap.pods_on[col].values():
            if other.pod.volumes:
                attached.update(attachable_volumes(other.pod, storage, False))
        fresh = [k for h, k in new.items() if h not in attached]
        for key in set(fresh):
            limit = int(rows[key][col])
            if limit < 0:
                continue
            used = sum(1 for k in attached.values() if k == key)
            if used + fresh.count(key) > limit:
                return True
        return False


def new_csi_limits(args: PluginArgs | None, handle: Handle) -> CSILimits:
    return CSILimits(handle)
