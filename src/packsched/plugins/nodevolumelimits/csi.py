"""NodeVolumeLimits: a node's CSI drivers can attach only so many volumes (CSINode ``allocatable.count``, or the
node's ``attachable-volumes-csi-<driver>`` allocatable).

The pod's claims resolve to a CSI driver and volume handle (claim -> bound PV's ``csi`` source; an unbound claim
counts once for its StorageClass's provisioner). A volume already attached to the node (used by one of its pods)
does not count again. The node is rejected when, for some driver, attached + new exceeds its limit.
In-tree volumes migrated to CSI are not counted (packsched reads no CSI migration state).

What each node has attached comes from the snapshot's index (``attached.py``), kept up to date as pods come and
go; the limits per key are rows over the nodes, made again only when nodes or CSINodes change; every node is judged
at once.
"""

from __future__ import annotations

import numpy as np

from packsched.api.storage import StorageObjects
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import STORAGE, Handle, NodeSel, Rejection, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.helper import signers
from packsched.plugins.helper.volumes import csi_attach_limit_key
from packsched.plugins.nodevolumelimits.attached import (
    ClaimMissing,
    attachable_volumes,
    attached_volumes,
    has_claims,
)

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
NO_LIMIT = 2**62  # a node without a limit for a key: no count of volumes comes near it

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT", "NAME", "CSILimits", "ClaimMissing", "attachable_volumes", "new_csi_limits"]


class CSILimits:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod)."""
        return signers.volumes(pod.pod)

    cluster_reads = (STORAGE,)

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self._stamp: tuple[int, int, int, int, int] | None = None
        self._rows: dict[str, IntArray] = {}

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        if not pod.pod.volumes or self.handle.storage() is None:
            return Status.skip()
        if has_claims(pod.pod):
            return Status()
        return Status.skip()

    def _limit_rows(self, snap: Snapshot, storage: StorageObjects, keys: set[str]) -> dict[str, IntArray]:
        """Per limit key, each node's limit (NO_LIMIT: none), from node allocatable and CSINode (CSINode wins)."""
        out: dict[str, IntArray] = {}
        for key in keys:
            row = np.full(snap.n, NO_LIMIT, dtype=np.int64)
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
        """The limit rows, made again only when nodes or CSINodes change (the catalog's claims and volumes,
        which change as pods are bound, do not bear on them)."""
        stamp = (id(snap), snap.node_generation, id(storage), storage.csi_generation, len(storage.csi_nodes))
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
        index = attached_volumes(snap, storage)
        bad = np.zeros(snap.n, dtype=bool)
        for key, limit in rows.items():
            # The pod's volumes of this key that a node does not have attached yet (upstream: a volume used by a
            # pod of the node does not count again) must fit in what the node's limit leaves.
            volumes = [v for v, k in new.items() if k == key]
            room = limit - index.attached(key)
            if any(index.nodes_using(v) for v in volumes):
                fresh = np.full(snap.n, len(volumes), dtype=np.int64)
                for volume in volumes:
                    fresh[index.nodes_using(volume)] -= 1
                bad |= (fresh > 0) & (fresh > room)
            else:
                bad |= room < len(volumes)
        out = bad[sel]
        return [Rejection(out, ERR_REASON_MAX_VOLUME_COUNT)] if out.any() else []


def new_csi_limits(args: PluginArgs | None, handle: Handle) -> CSILimits:
    return CSILimits(handle)
