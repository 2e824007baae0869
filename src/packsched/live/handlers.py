"""The informers' event handlers: what each watched change does to the scheduler's view of the cluster (the cache,
the queue, the plugins' own views) — kube-scheduler's ``eventhandlers.go``.

Assumed pods: a pod we bound stays on its node in the cache from the moment it is chosen (assume), through the
bind, until the watch shows it bound (confirm). Until then the pod is never queued again, whatever stale event
arrives, so it is never bound twice and its resources are never counted twice. A bind that fails removes it
(forget); a 409 Conflict means someone else bound it: it waits for the watch to say where.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from packsched.api.dra import DraObjects, pod_claim_keys
from packsched.api.errors import FieldError
from packsched.api.gangs import PodGroup
from packsched.api.objects import (
    PREEMPT_LOWER_PRIORITY,
    SYSTEM_PRIORITY_CLASSES,
    ElasticQuota,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
)
from packsched.api.storage import StorageObjects
from packsched.backend.disruption import BudgetStatus, budgets
from packsched.framework import interface as ev
from packsched.framework.interface import ClusterEvent
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.live.claims import ClaimWriter
from packsched.live.cluster_objects import ClusterObjects
from packsched.live.decode import decode, decode_or_log, resolve_pod_priority
from packsched.live.dra_objects import DraHandlers
from packsched.live.leader import parse_micro_time
from packsched.live.pod_status import PodStatusWriter
from packsched.live.port import (
    DELETED,
    ELASTIC_QUOTAS,
    NODES,
    PDBS,
    POD_GROUPS,
    PODS,
    PRIORITY_CLASSES,
    Obj,
    Resource,
    key_of,
)
from packsched.live.recorder import Recorder
from packsched.live.scheduling_groups import SchedulingGroupHandlers
from packsched.live.victims import Stats, VictimRemover
from packsched.scheduler import Scheduler

LOG = logging.getLogger("packsched.live")


@dataclass
class Tracked:
    """A pod packsched accounts (bound to a node: the cache holds it) or schedules (pending, one of its
    profiles)."""

    info: PodInfo
    uid: str
    conflict_since: float | None = None  # our bind got 409: waiting for the watch
    terminating: bool = False
    fit_message: str = ""  # the last attempt's "0/N nodes are available: ..." (without the preemption part)


class InformerHandlers:
    def __init__(
        self,
        scheduler: Scheduler,
        statuses: PodStatusWriter,
        victims: VictimRemover,
        recorder: Recorder,
        stats: Stats,
        storage: StorageObjects | None = None,
        wall: Callable[[], float] = time.time,
        dra: DraObjects | None = None,
        claim_writer: ClaimWriter | None = None,
    ) -> None:
        """``storage``: the catalog the scheduler's volume plugins read, kept by the storage informers. ``wall``:
        the wall clock (seconds since the epoch), against which objects' creation timestamps are read. ``dra``:
        the DRA catalog DynamicResources reads, kept by the DRA informers (``claim_writer`` sees each claim as
        delivered)."""
        self.scheduler = scheduler
        self.cache = scheduler.cache
        self.statuses = statuses
        self.victims = victims
        self.recorder = recorder
        self.stats = stats
        self.pods: dict[str, Tracked] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.quotas: dict[str, ElasticQuota] = {}
        self.pod_groups: dict[str, PodGroup] = {}
        self._group_uids: dict[str, str] = {}  # PodGroup key -> uid, to tell a group created again under its name
        self.wall = wall
        self.classes: dict[str, PriorityClass] = {pc.name: pc for pc in SYSTEM_PRIORITY_CLASSES}
        self._arrival = 0
        # namespaces, Services, controllers, the storage catalog
        self.objects = ClusterObjects(scheduler, storage if storage is not None else StorageObjects(), stats)
        self.dra = DraHandlers(
            dra if dra is not None else DraObjects(), scheduler.dra_changed, stats, claim_writer, scheduler.clock
        )
        # kube-scheduler's own Workloads / PodGroups (GenericWorkload)
        self.scheduling_groups = SchedulingGroupHandlers(scheduler, stats, lambda: self.classes)

    def handle(self, res: Resource, etype: str, obj: Obj) -> None:
        if res == PODS:
            self._on_pod(etype, obj)
        elif res == NODES:
            self._on_node(etype, obj)
        elif res == PDBS:
            self._on_pdb(etype, obj)
        elif res == PRIORITY_CLASSES:
            self._on_priority_class(etype, obj)
        elif res == ELASTIC_QUOTAS:
            self._on_quota(etype, obj)
        elif res == POD_GROUPS:
            self._on_pod_group(etype, obj)
        elif self.objects.handles(res):
            self.objects.handle(res, etype, obj)
        elif self.dra.handles(res):
            self.dra.handle(res, etype, obj)
        elif self.scheduling_groups.handles(res):
            self.scheduling_groups.handle(res, etype, obj)

    def flush(self) -> None:
        """After a batch of events: the moves they call for that are made once per batch (DRA's)."""
        self.dra.flush()

    def budgets(self) -> list[BudgetStatus]:
        alive = (tr for tr in self.pods.values() if not tr.terminating)
        return budgets(self.pdbs.values(), ((tr.info.pod, tr.info.key in self.cache) for tr in alive))

    # -- quotas, nodes, budgets, priority classes --------------------------------------------------------

    def _on_quota(self, etype: str, obj: Obj) -> None:
        """ElasticQuotas, for the plugins that keep a view of them (CapacityScheduling)."""
        key = key_of(obj)
        old = self.quotas.get(key)
        if etype == DELETED:
            if old is not None:
                del self.quotas[key]
                self.scheduler.object_changed(ClusterEvent(ev.ELASTIC_QUOTA, ev.DELETE, old, None))
            return
        out = decode_or_log(ELASTIC_QUOTAS, obj, self.stats)
        if out is None or not out.elastic_quotas:
            return
        new = out.elastic_quotas[0]
        self.quotas[key] = new
        # a quota that grew (or appeared) may let waiting pods in
        self.scheduler.object_changed(ClusterEvent(ev.ELASTIC_QUOTA, ev.ADD if old is None else ev.UPDATE, old, new))

    def _on_pod_group(self, etype: str, obj: Obj) -> None:
        """PodGroups, for the plugins that keep a view of them (Coscheduling). A group's ``created`` (what
        Coscheduling's queue order reads) is its creationTimestamp on the scheduler's clock, as pods' queue times
        are; an update keeps the time first read."""
        key = key_of(obj)
        old = self.pod_groups.get(key)
        uid = str((obj.get("metadata") or {}).get("uid", ""))
        if old is not None and uid and self._group_uids.get(key, uid) != uid:
            self._pod_group_gone(key, old)  # deleted and created again under the same name
            old = None
        if etype == DELETED:
            if old is not None:
                self._pod_group_gone(key, old)
            return
        out = decode_or_log(POD_GROUPS, obj, self.stats)
        if out is None or not out.pod_groups:
            return
        new = out.pod_groups[0]
        new.created = old.created if old is not None else self._created(obj)
        self.pod_groups[key] = new
        self._group_uids[key] = uid
        # a group that appears (or changes) may let its members past PreFilter and Permit
        self.scheduler.object_changed(ClusterEvent(ev.POD_GROUP, ev.ADD if old is None else ev.UPDATE, old, new))

    def _pod_group_gone(self, key: str, old: PodGroup) -> None:
        del self.pod_groups[key]
        self._group_uids.pop(key, None)
        self.scheduler.object_changed(ClusterEvent(ev.POD_GROUP, ev.DELETE, old, None))

    def _created(self, obj: Obj) -> float:
        """The object's creationTimestamp on the scheduler's clock (now when it has none, or one in the future)."""
        now = self.scheduler.clock()
        stamp = (obj.get("metadata") or {}).get("creationTimestamp")
        created = parse_micro_time(stamp) if isinstance(stamp, str) else None
        return now if created is None else now - max(0.0, self.wall() - created)

    def _decode(self, res: Resource, obj: Obj) -> object | None:
        out = decode_or_log(res, obj, self.stats)
        if out is None:
            return None
        for items in (out.nodes, out.pods, out.pdbs, out.priority_classes):
            if items:
                return items[0]
        return None

    def _on_node(self, etype: str, obj: Obj) -> None:
        name = key_of(obj)
        if etype == DELETED:
            # its pods leave the snapshot (they wait for the node or their own deletion); columns renumbered
            self.scheduler.node_removed(name)
            return
        node = self._decode(NODES, obj)
        if isinstance(node, Node):
            self.scheduler.node_set(node)

    def _on_pdb(self, etype: str, obj: Obj) -> None:
        key = key_of(obj)
        if etype == DELETED:
            self.pdbs.pop(key, None)
            return
        pdb = self._decode(PDBS, obj)
        if isinstance(pdb, PodDisruptionBudget):
            self.pdbs[key] = pdb

    def _on_priority_class(self, etype: str, obj: Obj) -> None:
        name = key_of(obj)
        if etype == DELETED:
            if name not in {pc.name for pc in SYSTEM_PRIORITY_CLASSES}:
                self.classes.pop(name, None)
            return
        pc = self._decode(PRIORITY_CLASSES, obj)
        if isinstance(pc, PriorityClass):
            self.classes[name] = pc

    # -- pods -----------------------------------------------------------------------------------------------

    def forget(self, key: str) -> None:
        """The pod is gone (deleted, finished, unreadable, or re-created under its name)."""
        tr = self.pods.pop(key, None)
        self.victims.gone(key)
        self.statuses.forget(key)
        if tr is not None:  # (assumed pods too are the assigned-pod informer's delete: plugins counted them at Reserve)
            self.scheduler.pod_deleted(tr.info)

    def _on_pod(self, etype: str, obj: Obj) -> None:
        key = key_of(obj)
        meta = obj.get("metadata", {})
        uid = str(meta.get("uid", ""))
        tr = self.pods.get(key)
        if tr is not None and uid and tr.uid and tr.uid != uid:
            self.forget(key)  # deleted and created again under the same name
            tr = None
        if etype == DELETED:
            self.forget(key)
            return
        if tr is not None and self._confirmed(tr, obj):
            return
        decoded = decode(PODS, obj)
        if decoded.problems:
            self._unreadable_pod(obj, decoded.problems)
            self.forget(key)
            return
        if not decoded.pods:  # Succeeded or Failed: holds nothing, is not scheduled
            if tr is not None:
                self.scheduler.pod_finished(key, str((obj.get("status") or {}).get("phase", "")))
            self.forget(key)
            return
        pod = decoded.pods[0]
        terminating = bool(meta.get("deletionTimestamp"))
        node = pod.node_name
        if node:
            self._on_bound_pod(tr, pod, uid, node, terminating)
            return
        if tr is not None and key in self.cache:
            return  # a stale event from before our binding: the pod stays where we put it
        if tr is not None:
            tr.terminating = terminating
            tr.info.pod.labels = pod.labels
            claims_made = pod.resource_claim_statuses != tr.info.pod.resource_claim_statuses
            tr.info.pod.resource_claim_statuses = pod.resource_claim_statuses
            if terminating:
                self.forget(key)
            elif self.scheduler.queue.is_gated(key) and not pod.scheduling_gates:
                self.forget(key)
                self._enqueue(pod, uid)
            elif claims_made:  # the resourceclaim controller made its claims (upstream UpdatePodGeneratedResourceClaim)
                self.dra.claims_named(pod_claim_keys(pod))
            return
        if terminating:
            return  # on its way out
        info = make_pod_info(pod, 0, self.scheduler.config.kube_version)
        if self.scheduler.framework_for(info) is None:
            return  # another scheduler's pod
        self._enqueue(pod, uid, info)

    def _confirmed(self, tr: Tracked, obj: Obj) -> bool:
        """The watch shows our binding of an assumed pod, and nothing else that matters: confirmed without decoding
        the pod again (the one change per pod that every binding brings; what it copies is what a full decode
        would copy on first sight). False when the event needs the full path."""
        key = tr.info.key
        if not self.cache.is_assumed(key):
            return False
        spec = obj.get("spec") or {}
        meta = obj.get("metadata") or {}
        phase = (obj.get("status") or {}).get("phase") or "Pending"
        labels = meta.get("labels") or {}
        if (
            spec.get("nodeName") != self.cache.node_of(key)
            or meta.get("deletionTimestamp")
            or phase not in ("Pending", "Running")
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items())
        ):
            return False
        tr.conflict_since = None
        tr.terminating = False
        self.statuses.bound(key)
        self.scheduler.assigned_pod_seen(
            tr.info, str(spec["nodeName"]), labels=dict(labels), phase=str(phase), terminating=False
        )
        return True

    def _on_bound_pod(self, tr: Tracked | None, pod: Pod, uid: str, node: str, terminating: bool) -> None:
        key = pod.key
        if tr is not None and self.cache.node_of(key) == node:
            # confirmed (the first sight of our binding), or an update of a pod we already account
            tr.conflict_since = None
            tr.terminating = terminating
            if self.cache.is_assumed(key):
                self.statuses.bound(key)
            self.scheduler.assigned_pod_seen(
                tr.info, node, labels=pod.labels, phase=pod.phase, terminating=pod.terminating
            )
            return
        if tr is not None:  # bound by someone else, elsewhere, or after a 409: account it where it is
            self.scheduler.dequeue(tr.info)
            self.statuses.bound(key)
        self._fix_priority(pod)
        info = make_pod_info(pod, self._next_arrival(), self.scheduler.config.kube_version)
        self.pods[key] = Tracked(info, uid, terminating=terminating)
        self.scheduler.pod_assigned(info, node)

    def _unreadable_pod(self, obj: Obj, problems: list[FieldError]) -> None:
        """Logged; and for a pending pod of ours, a FailedScheduling event says why it is not scheduled."""
        self.stats.decode_errors += 1
        meta = obj.get("metadata", {})
        spec = obj.get("spec") or {}
        text = "; ".join(str(p) for p in problems)
        LOG.warning("cannot read pod; left out", extra={"pod": key_of(obj), "problems": text})
        if not spec.get("nodeName") and spec.get("schedulerName") in self.scheduler.frameworks:
            pod = Pod(name=str(meta.get("name", "")), namespace=str(meta.get("namespace", "")))
            pod.uid = str(meta.get("uid", ""))
            self.recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", f"cannot read the pod: {text}")

    def _next_arrival(self) -> int:
        self._arrival += 1
        return self._arrival

    def _fix_priority(self, pod: Pod) -> None:
        for problem in resolve_pod_priority(pod, self.classes):
            LOG.warning("priority", extra={"pod": pod.key, "problem": str(problem)})
        if not pod.preemption_policy:
            pc = self.classes.get(pod.priority_class_name)
            pod.preemption_policy = pc.preemption_policy if pc is not None else PREEMPT_LOWER_PRIORITY

    def _enqueue(self, pod: Pod, uid: str, info: PodInfo | None = None) -> None:
        """``info``: the pod's PodInfo already made (its requests do not depend on the priority fixed here)."""
        self._fix_priority(pod)
        if info is None:
            info = make_pod_info(pod, self._next_arrival(), self.scheduler.config.kube_version)
        else:
            info.arrival = self._next_arrival()
        self.pods[pod.key] = Tracked(info, uid)
        gate = self.scheduler.enqueue(info)
        if not gate.ok and gate.plugin == "SchedulingGates":
            # as kube-scheduler reports a gated pod
            self.statuses.condition(pod, "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")
