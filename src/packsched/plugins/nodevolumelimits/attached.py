"""The CSI volumes attached to each node, kept in the snapshot and updated as pods are placed and removed
(binding, preemption's dry run, nominated pods added for a filter pass), so that NodeVolumeLimits judges every
node with a few numpy operations instead of walking every node's pods in every cycle.

What is kept (a PodListener of the snapshot, in ``snap.extensions``):

- per placed pod with claims, its CSI volumes as upstream's filterAttachableVolumes resolves them for an existing
  pod (``driver/handle`` -> limit key; a missing claim is skipped), and the claims and volumes it read;
- per volume (``driver/handle``), the nodes using it and how many of each node's pods use it;
- per limit key, how many distinct volumes each node has attached (int64 over the nodes).

A pod's volumes are resolved when it is placed, against the claims and volumes of that moment. When the catalog
changes (a claim bound in PreBind, a volume provisioned), the pods that read the changed claim or volume are
resolved again (``StorageObjects.changes``); when the journal cannot tell what changed, every placed pod is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from packsched.api.objects import Pod
from packsched.api.storage import CLAIM_CHANGED, StorageObjects, claim_name_of
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.plugins.helper.volumes import claim_not_found, csi_attach_limit_key

INDEX_KEY = "NodeVolumeLimits/attached"
_UNBOUND_PREFIX = "unbound"  # upstream uses a random prefix for claims not bound yet; any fixed one is as good
_CLAIM_SOURCES = ("persistentVolumeClaim", "ephemeral")


class ClaimMissing(Exception):
    pass


@dataclass
class Resolved:
    """A pod's CSI volumes (``driver/handle`` -> limit key) and what resolving them read."""

    volumes: dict[str, str]
    claims: tuple[str, ...] = ()  # namespace/name, found or not (each once)
    pvs: tuple[str, ...] = ()  # volume names the claims named, found or not (each once)


def has_claims(pod: Pod) -> bool:
    return any(v.source in _CLAIM_SOURCES for v in pod.volumes)


def resolve(pod: Pod, storage: StorageObjects, new_pod: bool) -> Resolved:
    """The pod's CSI volumes (upstream filterAttachableVolumes). A missing claim raises ClaimMissing for the pod
    being scheduled and is skipped for pods already placed."""
    out: dict[str, str] = {}
    claims: list[str] = []
    pvs: list[str] = []
    for vol in pod.volumes:
        name = claim_name_of(vol, pod.name)
        if not name:
            continue
        claims.append(f"{pod.namespace}/{name}")
        pvc = storage.claim(pod.namespace, name)
        if pvc is None:
            if new_pod:
                raise ClaimMissing(f"looking up PVC {pod.namespace}/{name}: {claim_not_found(name)}")
            continue
        driver, handle = "", ""
        if pvc.volume_name:
            pvs.append(pvc.volume_name)
        pv = storage.volume(pvc.volume_name) if pvc.volume_name else None
        if pv is not None:
            driver, handle = pv.csi_driver, pv.csi_handle
        else:
            sc = storage.storage_class(pvc.class_name) if pvc.class_name else None
            if sc is not None:
                driver, handle = sc.provisioner, f"{_UNBOUND_PREFIX}-{pvc.namespace}/{pvc.name}"
        if driver and handle:
            out[f"{driver}/{handle}"] = csi_attach_limit_key(driver)
    return Resolved(out, tuple(dict.fromkeys(claims)), tuple(dict.fromkeys(pvs)))


def attachable_volumes(pod: Pod, storage: StorageObjects, new_pod: bool) -> dict[str, str]:
    """``driver/handle`` -> limit key of the pod's CSI volumes (see :func:`resolve`)."""
    return resolve(pod, storage, new_pod).volumes


class AttachedVolumes:
    """Each node's attached CSI volumes (a PodListener of the snapshot)."""

    def __init__(self, snap: Snapshot, storage: StorageObjects) -> None:
        self.snap = snap
        self.storage = storage
        self.n = snap.n
        self.placed: dict[str, tuple[int, Resolved]] = {}  # pod key -> (node column, its volumes)
        self.users: dict[str, dict[int, int]] = {}  # driver/handle -> node column -> pods there using it
        self.used: dict[str, IntArray] = {}  # limit key -> distinct volumes attached to each node
        self.claim_readers: dict[str, set[str]] = {}  # claim namespace/name -> keys of placed pods that read it
        self.volume_readers: dict[str, set[str]] = {}  # volume name -> keys of placed pods that read it
        self._generation = storage.generation
        self._journal = len(storage.changes)
        for info in snap.pods.values():
            self.pod_added(info, info.node)
        snap.listeners.append(self)

    # -- upkeep ---------------------------------------------------------------------------------------------

    def _grow(self) -> None:
        n = self.snap.n
        if n != self.n:
            pad = np.zeros(n - self.n, dtype=np.int64)
            self.used = {key: np.concatenate([row, pad]) for key, row in self.used.items()}
            self.n = n

    def _attach(self, volumes: dict[str, str], col: int, sign: int) -> None:
        for volume, key in volumes.items():
            if sign > 0:
                on = self.users.setdefault(volume, {})
                count = on.get(col, 0)
                on[col] = count + 1
                if count == 0:  # the first of the node's pods that uses it
                    self._count(key, col, +1)
                continue
            on = self.users[volume]
            count = on[col] - 1
            if count:
                on[col] = count
                continue
            del on[col]  # the last one left
            self._count(key, col, -1)
            if not on:
                del self.users[volume]

    def _count(self, key: str, col: int, sign: int) -> None:
        if col >= self.n:  # a node added since: every row grows
            self._grow()
        row = self.used.get(key)
        if row is None:
            row = self.used[key] = np.zeros(self.n, dtype=np.int64)
        row[col] += sign

    def _read(self, pod_key: str, res: Resolved, sign: int) -> None:
        for table, names in ((self.claim_readers, res.claims), (self.volume_readers, res.pvs)):
            for name in names:
                if sign > 0:
                    table.setdefault(name, set()).add(pod_key)
                    continue
                readers = table[name]
                readers.discard(pod_key)
                if not readers:
                    del table[name]

    def pod_added(self, info: PodInfo, col: int) -> None:
        pod = info.pod
        if not pod.volumes or not has_claims(pod):
            return
        res = resolve(pod, self.storage, False)
        self.placed[info.key] = (col, res)
        self._read(info.key, res, +1)
        self._attach(res.volumes, col, +1)

    def pod_removed(self, info: PodInfo, col: int) -> None:
        entry = self.placed.pop(info.key, None)
        if entry is None:
            return
        _col, res = entry
        self._read(info.key, res, -1)
        self._attach(res.volumes, col, -1)

    def sync(self) -> None:
        """Resolve again the placed pods that read what changed in the catalog since the last sync."""
        storage = self.storage
        if storage.generation == self._generation:
            return
        start, end = self._journal, len(storage.changes)
        if start <= end and end - start == storage.generation - self._generation:
            stale: set[str] = set()
            for kind, name in storage.changes[start:end]:
                stale |= (self.claim_readers if kind == CLAIM_CHANGED else self.volume_readers).get(name, set())
        else:
            stale = set(self.placed)
        self._generation, self._journal = storage.generation, end
        for pod_key in stale:
            self._refresh(pod_key)

    def _refresh(self, pod_key: str) -> None:
        col, old = self.placed[pod_key]
        info = self.snap.pods[pod_key]
        new = resolve(info.pod, self.storage, False)
        self._read(pod_key, old, -1)
        self._read(pod_key, new, +1)
        self.placed[pod_key] = (col, new)
        if new.volumes != old.volumes:
            self._attach(old.volumes, col, -1)
            self._attach(new.volumes, col, +1)

    # -- questions ------------------------------------------------------------------------------------------

    def attached(self, key: str) -> IntArray:
        """How many distinct volumes of limit ``key`` each node has attached (do not write to it)."""
        self._grow()
        row = self.used.get(key)
        return row if row is not None else np.zeros(self.n, dtype=np.int64)

    def nodes_using(self, volume: str) -> list[int]:
        """The node columns some pod of which uses ``volume`` (``driver/handle``)."""
        return list(self.users.get(volume, ()))


def attached_volumes(snap: Snapshot, storage: StorageObjects) -> AttachedVolumes:
    """The snapshot's index for ``storage``, up to date with it (built from the placed pods on first use; it goes
    away with the snapshot)."""
    idx = snap.extensions.get(INDEX_KEY)
    if not isinstance(idx, AttachedVolumes) or idx.storage is not storage:
        if isinstance(idx, AttachedVolumes):
            snap.listeners.remove(idx)
        idx = AttachedVolumes(snap, storage)
        snap.extensions[INDEX_KEY] = idx
    idx.sync()
    return idx
