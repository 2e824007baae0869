"""The informers' handlers for the cluster objects plugins read beside nodes and pods: namespace labels (into the
snapshot, for InterPodAffinity's namespaceSelector), Services and controllers (delivered to plugins as the
simulator delivers them: SERVICE and WORKLOAD cluster events) and the storage catalog (claims, volumes, classes and
CSINodes, into the live :class:`~packsched.api.storage.StorageObjects` the volume plugins read).

Waiting pods go back to the queue where kube-scheduler's queue moves them: when a claim, volume, class or CSINode
is added or changed (the volume plugins' registered events). Namespace, Service and controller changes move none
upstream (no plugin registers them); the periodic flush of unschedulable pods catches up with them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from packsched.api.manifests import Workload
from packsched.api.objects import Service
from packsched.api.storage import StorageObjects
from packsched.framework import interface as ev
from packsched.framework.interface import ClusterEvent
from packsched.live.decode import Decoded, decode_or_log
from packsched.live.port import (
    CSI_NODES,
    DELETED,
    NAMESPACES,
    PVCS,
    PVS,
    SERVICES,
    STORAGE_CLASSES,
    WORKLOADS,
    Obj,
    Resource,
    key_of,
)
from packsched.live.victims import Stats
from packsched.scheduler import Scheduler

LOG = logging.getLogger("packsched.live")


class ClusterObjects:
    def __init__(self, scheduler: Scheduler, storage: StorageObjects, stats: Stats) -> None:
        self.scheduler = scheduler
        self.storage = storage
        self.stats = stats
        self.services: dict[str, Service] = {}  # by namespace/name
        self.workloads: dict[str, Workload] = {}  # by "Kind namespace/name"
        self._handlers: dict[Resource, Callable[[Resource, str, Obj], None]] = {
            NAMESPACES: self._on_namespace,
            SERVICES: self._on_service,
            PVCS: self._on_storage,
            PVS: self._on_storage,
            STORAGE_CLASSES: self._on_storage,
            CSI_NODES: self._on_storage,
        }
        for res in WORKLOADS:
            self._handlers[res] = self._on_workload

    def handles(self, res: Resource) -> bool:
        return res in self._handlers

    def handle(self, res: Resource, etype: str, obj: Obj) -> None:
        self._handlers[res](res, etype, obj)

    def _decode(self, res: Resource, obj: Obj) -> Decoded | None:
        return decode_or_log(res, obj, self.stats)

    # -- namespaces ---------------------------------------------------------------------------------------

    def _on_namespace(self, res: Resource, etype: str, obj: Obj) -> None:
        name = key_of(obj)
        if etype == DELETED:
            self.scheduler.namespace_set(name, None)
            return
        out = self._decode(res, obj)
        if out is not None and name in out.namespaces:
            self.scheduler.namespace_set(name, out.namespaces[name])

    # -- Services and controllers (cluster events for the plugins that keep them) ----------------------------

    def _on_service(self, res: Resource, etype: str, obj: Obj) -> None:
        key = key_of(obj)
        old = self.services.get(key)
        if etype == DELETED:
            if old is not None:
                del self.services[key]
                self.scheduler.object_changed(ClusterEvent(ev.SERVICE, ev.DELETE, old, None))
            return
        out = self._decode(res, obj)
        if out is None or not out.services:
            return
        new = self.services[key] = out.services[0]
        action = ev.ADD if old is None else ev.UPDATE
        self.scheduler.object_changed(ClusterEvent(ev.SERVICE, action, old, new))

    def _on_workload(self, res: Resource, etype: str, obj: Obj) -> None:
        key = f"{res.kind} {key_of(obj)}"
        old = self.workloads.get(key)
        if etype == DELETED:
            if old is not None:
                del self.workloads[key]
                self.scheduler.object_changed(ClusterEvent(ev.WORKLOAD, ev.DELETE, old, None))
            return
        out = self._decode(res, obj)
        if out is None or not out.workloads:
            return
        new = out.workloads[0]
        if old is not None and old.selector == new.selector:
            self.workloads[key] = new
            return  # a status or replica count change: nothing a plugin reads (controllers update status often)
        self.workloads[key] = new
        action = ev.ADD if old is None else ev.UPDATE
        self.scheduler.object_changed(ClusterEvent(ev.WORKLOAD, action, old, new))

    # -- the storage catalog ------------------------------------------------------------------------------

    def _on_storage(self, res: Resource, etype: str, obj: Obj) -> None:
        key = key_of(obj)
        if etype == DELETED:
            self._remove(res, key)
            return
        out = self._decode(res, obj)
        if out is None:
            return
        catalog = out.storage
        storage = self.storage
        if res == PVCS and key in catalog.claims:
            storage.add_claim(catalog.claims[key])
        elif res == PVS and key in catalog.volumes:
            storage.add_volume(catalog.volumes[key])
        elif res == STORAGE_CLASSES and key in catalog.classes:
            storage.add_class(catalog.classes[key])
        elif res == CSI_NODES and key in catalog.csi_nodes:
            storage.add_csi_node(catalog.csi_nodes[key])
        else:
            return
        self.scheduler.storage_changed()

    def _remove(self, res: Resource, key: str) -> None:
        storage = self.storage
        if res == PVCS:
            storage.remove_claim(key)
        elif res == PVS:
            storage.remove_volume(key)
        elif res == STORAGE_CLASSES:
            storage.remove_class(key)
        else:
            storage.remove_csi_node(key)
