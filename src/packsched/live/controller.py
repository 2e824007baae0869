"""The live scheduler: the cluster as the informers report it, kube-scheduler's queue, and the shared
:class:`~packsched.scheduler.Scheduler` making the decisions.

One thread (the caller of :meth:`Controller.run`) owns the snapshot, the queue and every decision; informer
threads only put events on :attr:`Controller.inbox`; API writes that decide nothing (events, conditions) go out
through a :class:`~packsched.live.recorder.Recorder` thread.

Assumed pods: a pod we bound stays on its node in the snapshot from the moment it is chosen (assume), through
the bind, until the watch shows it bound (confirm). Until then the pod is never queued again, whatever stale
event arrives, so it is never bound twice and its resources are never counted twice. A bind that fails
removes it (forget); a 409 Conflict means someone else bound it: it waits for the watch to say where.
"""

from __future__ import annotations

import logging
import queue as queue_mod
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from packsched.api.errors import FieldError
from packsched.api.objects import (
    PREEMPT_LOWER_PRIORITY,
    SYSTEM_PRIORITY_CLASSES,
    ElasticQuota,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
)
from packsched.api.quantity import MAX_INT64, format_quantity
from packsched.backend.disruption import BudgetStatus, budget_status
from packsched.backend.queue import QueuedPod
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework import interface as ev
from packsched.framework.interface import ClusterEvent
from packsched.framework.runtime import PluginFactory
from packsched.framework.snapshot import PodInfo, Snapshot, make_pod_info
from packsched.framework.status import Code, Status
from packsched.live.decode import decode, resolve_pod_priority
from packsched.live.metrics import ERROR, SCHEDULED, UNSCHEDULABLE, Metrics
from packsched.live.port import (
    DELETED,
    ELASTIC_QUOTAS,
    NODES,
    PDBS,
    PODS,
    PRIORITY_CLASSES,
    ApiError,
    ApiPort,
    Obj,
    Resource,
    key_of,
)
from packsched.live.recorder import Recorder
from packsched.plugins.capacityscheduling.elastic_quota import (
    FIRST_CLASS,
    max_from_spec,
    min_from_spec,
    pod_quota_request,
    status_used,
)
from packsched.scheduler import CycleResult, Scheduler

LOG = logging.getLogger("packsched.live")

EVICT = "evict"
DELETE = "delete"
REMOVAL_MODES = (EVICT, DELETE)

# How long a pod whose bind got 409 waits for the watch to show its node before it is tried again.
CONFLICT_WAIT_S = 30.0
# How long a preemptor waits for its victims to go before it may preempt again.
VICTIM_WAIT_S = 120.0
# kube-scheduler's podMaxInUnschedulablePodsDuration: unschedulable pods are retried at least this often.
UNSCHEDULABLE_FLUSH_S = 300.0


class LiveScheduler(Scheduler):
    """The shared scheduler, with one addition the live cluster needs: nodes can go away, which renumbers the
    snapshot's columns, so the snapshot is rebuilt and swapped."""

    def replace_snapshot(self, snap: Snapshot) -> None:
        self._snapshot = snap
        self._order = None


@dataclass
class Tracked:
    """A pod packsched accounts (bound to a node) or schedules (pending, one of its profiles)."""

    info: PodInfo
    uid: str
    node: str = ""  # the node it is bound (or assumed) to
    assumed: bool = False  # we bound it; the watch has not shown nodeName yet
    conflict_since: float | None = None  # our bind got 409: waiting for the watch
    terminating: bool = False
    last_status: tuple[str, str, str] | None = None  # (reason, message, nominated) last written


@dataclass
class Stats:
    attempts: int = 0
    bound: int = 0
    conflicts: int = 0
    bind_errors: int = 0
    unschedulable: int = 0
    evictions: int = 0
    eviction_refusals: int = 0
    decode_errors: int = 0
    events_handled: int = 0


@dataclass
class _Victim:
    preemptor: str
    since: float


class _Actions:
    """ClusterActions on the API server: bind through pods/binding; preempt through the Eviction API (PDBs
    are honoured by the server too) or a plain graceful delete, as configured."""

    def __init__(self, ctl: Controller) -> None:
        self.ctl = ctl

    def bind(self, pod: PodInfo, node: str) -> Status:
        try:
            self.ctl.port.bind(pod.pod.namespace, pod.pod.name, pod.pod.uid, node)
        except ApiError as exc:
            self.ctl.bind_errors[pod.key] = exc
            return Status.error(f"binding rejected: {exc}")
        return Status()

    def preempt(self, victim: PodInfo, preemptor: PodInfo) -> None:
        self.ctl.remove_victim(victim, preemptor)


class Controller:
    def __init__(
        self,
        port: ApiPort,
        config: KubeSchedulerConfiguration,
        registry: Mapping[str, PluginFactory],
        *,
        metrics: Metrics | None = None,
        recorder: Recorder | None = None,
        identity: str = "packsched",
        seed: int = 0,
        removal: str = EVICT,
        clock: Callable[[], float] = time.monotonic,
        quota_status: bool = False,
    ) -> None:
        if removal not in REMOVAL_MODES:
            raise ValueError(f"removal must be one of {REMOVAL_MODES}")
        self.port = port
        self.config = config
        self.metrics = metrics or Metrics()
        self.recorder = recorder or Recorder(port, identity)
        self.identity = identity
        self.removal = removal
        self.clock = clock
        self.inbox: queue_mod.Queue[tuple[Resource, str, Obj]] = queue_mod.Queue()
        self.snapshot = Snapshot()
        self.scheduler = LiveScheduler(config, registry, _Actions(self), self.snapshot, seed, self.budgets)
        self.queue = self.scheduler.new_queue()
        self.pods: dict[str, Tracked] = {}
        self.nodes: dict[str, Node] = {}
        self.orphans: dict[str, dict[str, Tracked]] = {}  # node name -> pods bound to a node not seen yet
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.quotas: dict[str, ElasticQuota] = {}
        self.quota_status = quota_status  # write status.used as scheduler-plugins' controller does
        self._written_used: dict[str, dict[str, int]] = {}
        self.classes: dict[str, PriorityClass] = {pc.name: pc for pc in SYSTEM_PRIORITY_CLASSES}
        self.bind_errors: dict[str, ApiError] = {}
        self.victims: dict[str, _Victim] = {}  # victims removed, not yet seen gone
        self._victims_now = 0
        self.stats = Stats()
        self._arrival = 0
        self._last_flush = clock()
        self._last_housekeeping = 0.0

    # -- informer side --------------------------------------------------------------------------------

    def sink(self, res: Resource, etype: str, obj: Obj) -> None:
        """Called from informer threads: queue the change for the scheduling thread."""
        self.inbox.put((res, etype, obj))

    def drain(self, wait_s: float = 0.0) -> int:
        """Apply queued cluster changes; wait up to ``wait_s`` for the first one."""
        handled = 0
        try:
            item = self.inbox.get(timeout=wait_s) if wait_s > 0 else self.inbox.get_nowait()
        except queue_mod.Empty:
            return 0
        while True:
            self.handle(*item)
            handled += 1
            try:
                item = self.inbox.get_nowait()
            except queue_mod.Empty:
                return handled

    def handle(self, res: Resource, etype: str, obj: Obj) -> None:
        self.stats.events_handled += 1
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

    def _on_quota(self, etype: str, obj: Obj) -> None:
        """ElasticQuotas, for the plugins that keep a view of them (CapacityScheduling)."""
        key = key_of(obj)
        old = self.quotas.get(key)
        if etype == DELETED:
            if old is not None:
                del self.quotas[key]
                self.scheduler.dispatch(ClusterEvent(ev.ELASTIC_QUOTA, ev.DELETE, old, None))
                self.queue.move_all(self.clock())
            return
        out = decode(ELASTIC_QUOTAS, obj)
        if out.problems or not out.elastic_quotas:
            self.stats.decode_errors += 1
            problems = [str(p) for p in out.problems]
            LOG.warning("cannot read ElasticQuota; left out", extra={"object": key, "problems": problems})
            return
        new = out.elastic_quotas[0]
        self.quotas[key] = new
        if old is None:
            self.scheduler.dispatch(ClusterEvent(ev.ELASTIC_QUOTA, ev.ADD, None, new))
        else:
            self.scheduler.dispatch(ClusterEvent(ev.ELASTIC_QUOTA, ev.UPDATE, old, new))
        self.queue.move_all(self.clock())  # a quota that grew (or appeared) may let waiting pods in

    def _decode(self, res: Resource, obj: Obj) -> object | None:
        out = decode(res, obj)
        if out.problems:
            self.stats.decode_errors += 1
            LOG.warning(
                "cannot read object; left out",
                extra={"object": f"{res.kind} {key_of(obj)}", "problems": [str(p) for p in out.problems]},
            )
            return None
        for items in (out.nodes, out.pods, out.pdbs, out.priority_classes):
            if items:
                return items[0]
        return None

    def _on_node(self, etype: str, obj: Obj) -> None:
        name = key_of(obj)
        if etype == DELETED:
            if name in self.nodes:
                del self.nodes[name]
                self._rebuild_snapshot()
            return
        node = self._decode(NODES, obj)
        if not isinstance(node, Node):
            return
        if name in self.nodes:
            self.snapshot.update_node(node)
        else:
            self.snapshot.add_node(node)
            for tr in self.orphans.pop(name, {}).values():
                self._place(tr, name)
        self.nodes[name] = node
        self.queue.move_all(self.clock())

    def _rebuild_snapshot(self) -> None:
        """A node went away: its pods leave the snapshot (they wait, as orphans, for the node or their own
        deletion) and every column is renumbered."""
        old = self.snapshot
        snap = Snapshot()
        snap.add_nodes(self.nodes.values())
        snap.generation = old.generation + 1
        snap.node_generation = old.node_generation + 1
        for tr in self.pods.values():
            if tr.info.node >= 0:
                tr.info.node = -1
        self.snapshot = snap
        self.scheduler.replace_snapshot(snap)
        for tr in self.pods.values():
            if tr.node:
                self._place(tr, tr.node)
        nominator = self.scheduler.nominator
        for tr in self.pods.values():
            nominator.clear(tr.info)
            nom = tr.info.pod.nominated_node_name
            if not tr.node and nom in snap.index:
                nominator.nominate(tr.info, snap.index[nom])
        self.queue.move_all(self.clock())

    def _place(self, tr: Tracked, node: str) -> None:
        tr.node = node
        col = self.snapshot.index.get(node)
        if col is None:
            self.orphans.setdefault(node, {})[tr.info.key] = tr
            return
        self.snapshot.add_pod(tr.info, col)

    def _unplace(self, tr: Tracked) -> None:
        if tr.info.node >= 0:
            self.snapshot.remove_pod(tr.info)
        if tr.node:
            self.orphans.get(tr.node, {}).pop(tr.info.key, None)
        tr.node = ""
        tr.assumed = False

    def _forget(self, key: str) -> None:
        tr = self.pods.pop(key, None)
        self.victims.pop(key, None)
        self.bind_errors.pop(key, None)
        if tr is None:
            return
        held = bool(tr.node)
        if held:  # the assigned-pod informer's delete (assumed pods too: plugins counted them at Reserve)
            self.scheduler.dispatch(ClusterEvent(ev.POD, ev.DELETE, tr.info.pod, None))
        self._unplace(tr)
        self.queue.remove(key)
        self.scheduler.nominator.clear(tr.info)
        if held:
            self.queue.move_all(self.clock())  # resources came free: pods that did not fit may fit now

    def _on_pod(self, etype: str, obj: Obj) -> None:
        key = key_of(obj)
        meta = obj.get("metadata", {})
        uid = str(meta.get("uid", ""))
        tr = self.pods.get(key)
        if tr is not None and uid and tr.uid and tr.uid != uid:
            self._forget(key)  # deleted and created again under the same name
            tr = None
        if etype == DELETED:
            self._forget(key)
            return
        decoded = decode(PODS, obj)
        if decoded.problems:
            self._unreadable_pod(obj, decoded.problems)
            self._forget(key)
            return
        if not decoded.pods:  # Succeeded or Failed: holds nothing, is not scheduled
            if tr is not None and tr.node:
                phase = str((obj.get("status") or {}).get("phase", ""))
                self.scheduler.dispatch(ClusterEvent(ev.POD, ev.UPDATE, tr.info.pod, replace(tr.info.pod, phase=phase)))
            self._forget(key)
            return
        pod = decoded.pods[0]
        terminating = bool(meta.get("deletionTimestamp"))
        node = pod.node_name
        if node:
            if tr is not None and tr.node == node:
                before = replace(tr.info.pod)
                first_sight = tr.assumed
                tr.assumed = False  # confirmed (or an update of a pod we already account)
                tr.conflict_since = None
                tr.terminating = terminating
                tr.info.pod.labels = pod.labels
                tr.info.pod.phase = pod.phase
                tr.info.pod.terminating = pod.terminating
                if first_sight:  # the assigned-pod informer sees our binding
                    self.scheduler.dispatch(ClusterEvent(ev.POD, ev.ADD, None, tr.info.pod))
                else:
                    self.scheduler.dispatch(ClusterEvent(ev.POD, ev.UPDATE, before, tr.info.pod))
                return
            if tr is not None:  # bound by someone else, elsewhere, or after a 409: account it where it is
                self._unplace(tr)
                self.queue.remove(key)
                self.scheduler.nominator.clear(tr.info)
            self._fix_priority(pod)
            info = make_pod_info(pod, self._next_arrival())
            tr = Tracked(info, uid, terminating=terminating)
            self.pods[key] = tr
            self._place(tr, node)
            self.scheduler.dispatch(ClusterEvent(ev.POD, ev.ADD, None, pod))
            return
        if tr is not None and (tr.assumed or tr.node):
            return  # a stale event from before our binding: the pod stays where we put it
        if tr is not None:
            tr.terminating = terminating
            tr.info.pod.labels = pod.labels
            if terminating:
                self._forget(key)
            elif key in self.queue.gated and not pod.scheduling_gates:
                self._forget(key)
                self._enqueue(pod, uid)
            return
        if terminating or self.scheduler.framework_for(make_pod_info(pod)) is None:
            return  # another scheduler's pod, or one on its way out
        self._enqueue(pod, uid)

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

    def _enqueue(self, pod: Pod, uid: str) -> None:
        self._fix_priority(pod)
        info = make_pod_info(pod, self._next_arrival())
        tr = Tracked(info, uid)
        self.pods[pod.key] = tr
        fwk = self.scheduler.framework_for(info)
        assert fwk is not None
        if pod.nominated_node_name in self.snapshot.index:
            self.scheduler.nominator.nominate(info, self.snapshot.index[pod.nominated_node_name])
        gate = fwk.run_pre_enqueue(info)
        self.queue.add(info, gate_reason="" if gate.ok else gate.message)
        if not gate.ok and gate.plugin == "SchedulingGates":
            # as kube-scheduler reports a gated pod
            self._write_condition(tr, "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates")

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

    def budgets(self) -> list[BudgetStatus]:
        if not self.pdbs:
            return []
        running = [t.info.pod for t in self.pods.values() if t.node and not t.terminating]
        alive = [t.info.pod for t in self.pods.values() if not t.terminating]
        return [budget_status(pdb, running, alive) for pdb in self.pdbs.values()]

    # -- preemption -------------------------------------------------------------------------------------

    def remove_victim(self, victim: PodInfo, preemptor: PodInfo) -> None:
        """Upstream prepareCandidate for one victim: mark it (DisruptionTarget), remove it, record it. It
        stays in the snapshot until the watch shows it gone."""
        self._victims_now += 1
        pod = victim.pod
        node = self.snapshot.nodes[victim.node].name if victim.node >= 0 else ""
        self.recorder.patch_pod_status(
            pod.namespace,
            pod.name,
            {
                "status": {
                    "conditions": [
                        {
                            "type": "DisruptionTarget",
                            "status": "True",
                            "reason": "PreemptionByScheduler",
                            "message": f"{preemptor.pod.scheduler_name}: preempting to accommodate a "
                            "higher priority pod",
                            "lastTransitionTime": self.recorder.now(),
                        }
                    ]
                }
            },
            wait=True,
        )
        try:
            if self.removal == EVICT:
                self.port.evict(pod.namespace, pod.name, pod.uid)
            else:
                self.port.delete(PODS, pod.namespace, pod.name, pod.uid)
        except ApiError as exc:
            if not exc.not_found:
                if exc.too_many_requests:
                    self.stats.eviction_refusals += 1
                LOG.warning(
                    "preemption: could not remove victim",
                    extra={"victim": victim.key, "preemptor": preemptor.key, "error": str(exc)},
                )
                return
        self.stats.evictions += 1
        self.victims[victim.key] = _Victim(preemptor.key, self.clock())
        self.recorder.event(
            pod, "Normal", "Preempted", "Preempting", f"Preempted by pod {preemptor.pod.uid} on node {node}"
        )

    def _waiting_for_victims(self, key: str, now: float) -> bool:
        for vkey, v in list(self.victims.items()):
            if now - v.since > VICTIM_WAIT_S:
                del self.victims[vkey]
            elif v.preemptor == key and vkey in self.pods:
                return True
        return False

    # -- the loop ---------------------------------------------------------------------------------------

    def run(self, stop: threading.Event, is_ready: Callable[[], bool] = lambda: True) -> None:
        """Schedule until ``stop`` is set. Nothing is tried before ``is_ready()`` (the informers have listed)."""
        while not stop.is_set():
            if not is_ready():
                self.drain(0.05)
                continue
            self.drain(0)
            if not self.step():
                now = self.clock()
                expiry = self.queue.next_backoff_expiry()
                wait = 0.25 if expiry is None else min(max(expiry - now, 0.001), 0.25)
                self.drain(wait)

    def step(self) -> bool:
        """One scheduling attempt, if a pod is ready for one. Returns whether one ran."""
        now = self.clock()
        if now - self._last_housekeeping >= 0.5:
            self._housekeeping(now)
        qp = self.queue.pop(now)
        if qp is None:
            return False
        self.attempt(qp)
        return True

    def _housekeeping(self, now: float) -> None:
        self._last_housekeeping = now
        if now - self._last_flush >= UNSCHEDULABLE_FLUSH_S:
            self._last_flush = now
            self.queue.move_all(now)
        for key, tr in list(self.pods.items()):
            if tr.conflict_since is not None and now - tr.conflict_since > CONFLICT_WAIT_S and not tr.node:
                tr.conflict_since = None
                LOG.warning("bind conflict not resolved by the watch; trying again", extra={"pod": key})
                if key not in self.queue:
                    self.queue.add(tr.info)
        self.update_pending_gauge(now)
        if self.quotas:
            self.sync_quotas()

    def sync_quotas(self) -> None:
        """Per-quota gauges; with ``quota_status``, ``status.used`` as scheduler-plugins' ElasticQuota controller
        computes it (Running pods, no overhead; merge-patched only when it changed)."""
        first: dict[str, ElasticQuota] = {}
        for q in self.quotas.values():
            first.setdefault(q.namespace, q)  # upstream's controller takes the first quota of a namespace
        pods = [tr.info.pod for tr in self.pods.values()]
        for q in first.values():
            used: dict[str, int] = {}
            for tr in self.pods.values():
                if tr.node and tr.info.pod.namespace == q.namespace:
                    for name, amount in pod_quota_request(tr.info.pod).items():
                        used[name] = used.get(name, 0) + amount
            lo, hi = min_from_spec(q.min), max_from_spec(q.max)
            for name in set(lo) | set(hi) | set(used):
                labels = (q.namespace, q.name, name)
                self.metrics.quota_min.labels(*labels).set(lo.get(name, 0))
                self.metrics.quota_used.labels(*labels).set(used.get(name, 0))
                bound = hi.get(name, 0 if name in FIRST_CLASS else MAX_INT64)
                if bound < MAX_INT64:
                    self.metrics.quota_max.labels(*labels).set(bound)
            if not self.quota_status:
                continue
            want = status_used(q, pods)
            have = self._written_used.get(q.key, q.used)
            if have is not None and have == want:
                continue
            patch = {"status": {"used": {name: format_quantity(name, amount) for name, amount in want.items()}}}
            try:
                self.port.patch_status(ELASTIC_QUOTAS, q.namespace, q.name, patch)
            except ApiError as exc:
                LOG.warning("cannot write ElasticQuota status", extra={"quota": q.key, "error": str(exc)})
                continue
            self._written_used[q.key] = want

    def update_pending_gauge(self, now: float | None = None) -> None:
        now = self.clock() if now is None else now
        unsched = len(self.queue.unschedulable)
        gated = len(self.queue.gated)
        backoff = sum(
            1
            for qp in self.queue.pods()
            if qp.info.key not in self.queue.unschedulable and not qp.gated and qp.backoff_until > now
        )
        active = len(self.queue) - unsched - gated - backoff
        for name, value in (("active", active), ("backoff", backoff), ("unschedulable", unsched), ("gated", gated)):
            self.metrics.pending_pods.labels(name).set(value)

    def attempt(self, qp: QueuedPod) -> CycleResult | None:
        info = qp.info
        key = info.key
        tr = self.pods.get(key)
        if tr is None or tr.info is not info or tr.node:
            return None  # deleted or bound since it was queued
        now = self.clock()
        if self._waiting_for_victims(key, now):
            self.queue.add_unschedulable(qp, now, qp.last_reason)
            return None
        self.stats.attempts += 1
        self.bind_errors.pop(key, None)
        self._victims_now = 0
        start = time.perf_counter()
        try:
            result = self.scheduler.schedule_one(info)
        except Exception as exc:  # a bug on one pod's path must not stop the scheduler for every pod
            LOG.exception("scheduling attempt failed", extra={"pod": key})
            if info.node >= 0:
                self.snapshot.remove_pod(info)  # an assumption the failed attempt left behind
            self.bind_errors.pop(key, None)
            self._observe(ERROR, info.pod.scheduler_name, time.perf_counter() - start)
            self._report_failure(tr, "SchedulerError", f"internal error: {exc}")
            self.queue.requeue_now(qp, self.clock())
            return None
        elapsed = time.perf_counter() - start
        profile = result.profile
        fwk = self.scheduler.frameworks[profile]
        if result.scheduled and result.node is not None:
            tr.node = result.node
            tr.assumed = True
            self.stats.bound += 1
            LOG.debug("bound", extra={"pod": key, "node": result.node, "profile": profile})
            self._observe(SCHEDULED, profile, elapsed)
            self.recorder.event(
                info.pod, "Normal", "Scheduled", "Binding", f"Successfully assigned {key} to {result.node}"
            )
            return result
        bind_error = self.bind_errors.pop(key, None)
        if bind_error is not None:
            return self._bind_failed(qp, tr, bind_error, result, elapsed)
        is_error = result.status.code == Code.ERROR
        self._observe(ERROR if is_error else UNSCHEDULABLE, profile, elapsed)
        if not is_error and fwk.post_filters:
            self.metrics.preemption_attempts.inc()
        if self._victims_now:
            self.metrics.preemption_victims.observe(self._victims_now)
        self.stats.unschedulable += 1
        message = result.message
        nominator = self.scheduler.nominator
        if result.nominated_node:
            info.pod.nominated_node_name = result.nominated_node
            nominator.nominate(info, self.snapshot.index[result.nominated_node])
        elif result.nominated_node == "":
            info.pod.nominated_node_name = ""
            nominator.clear(info)
        reason = "SchedulerError" if is_error else "Unschedulable"
        self._report_failure(tr, reason, message)
        if is_error:
            self.queue.requeue_now(qp, now)
        else:
            self.queue.add_unschedulable(qp, now, message)
        return result

    def _bind_failed(
        self, qp: QueuedPod, tr: Tracked, exc: ApiError, result: CycleResult, elapsed: float
    ) -> CycleResult:
        key = tr.info.key
        # The assumed pod was forgotten: its room is free again for the pods that did not fit.
        self.queue.move_all(self.clock())
        if exc.conflict:
            # Someone else (or an earlier bind of ours whose answer was lost) bound it: not ours to place.
            self.stats.conflicts += 1
            self.metrics.bind_conflicts.inc()
            tr.conflict_since = self.clock()
            LOG.info("pod already bound; waiting for the watch", extra={"pod": key, "error": str(exc)})
            return result
        if exc.not_found:
            self._forget(key)
            return result
        self.stats.bind_errors += 1
        self._observe(ERROR, result.profile, elapsed)
        LOG.warning("binding failed; retrying after backoff", extra={"pod": key, "error": str(exc)})
        self._report_failure(tr, "SchedulerError", f"Binding rejected: {exc}")
        self.queue.requeue_now(qp, self.clock())
        return result

    def _observe(self, result: str, profile: str, elapsed: float) -> None:
        self.metrics.schedule_attempts.labels(result, profile).inc()
        self.metrics.attempt_duration.labels(result, profile).observe(elapsed)

    def _report_failure(self, tr: Tracked, reason: str, message: str) -> None:
        """FailedScheduling event every attempt; the PodScheduled=False condition (and nominatedNodeName)
        only when they change, as kube-scheduler does."""
        self.recorder.event(tr.info.pod, "Warning", "FailedScheduling", "Scheduling", message)
        self._write_condition(tr, reason, message)

    def _write_condition(self, tr: Tracked, reason: str, message: str) -> None:
        pod = tr.info.pod
        nominated = pod.nominated_node_name
        state = (reason, message, nominated)
        if tr.last_status == state:
            return
        tr.last_status = state
        status: Obj = {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": reason,
                    "message": message,
                    "lastProbeTime": None,
                    "lastTransitionTime": self.recorder.now(),
                }
            ],
            "nominatedNodeName": nominated or None,
        }
        self.recorder.patch_pod_status(pod.namespace, pod.name, {"status": status})
