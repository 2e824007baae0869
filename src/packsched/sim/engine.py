"""The embedded simulator: pods arrive over virtual time, enter kube-scheduler's queue, are scheduled one at a
time, run (for their run duration, or until the end), and leave when they complete or are preempted; workload
controllers replace the pods they lose.

Time is virtual (seconds). A heap of timed events, ordered by (time, priority, sequence), moves the clock: pod
arrivals (``packsched.io/arrival-time``), pod completions (``packsched.io/run-duration`` after binding) and the
queue's backoff expiries. A scheduling cycle takes no time. Nothing is random except the scheduler's own seeded
choices, so the same input and seed give the same history.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import heapq
import itertools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

from packsched.api.admission import apply_limit_ranges, check_quotas
from packsched.api.cluster import CronJob
from packsched.api.cron import next_fire
from packsched.api.dra import DraObjects
from packsched.api.manifests import Cluster
from packsched.api.objects import Node, Pod
from packsched.api.podgroups import dropped_reference
from packsched.backend.disruption import BudgetStatus, budgets
from packsched.config.types import KubeSchedulerConfiguration
from packsched.config.versions import KubeVersion
from packsched.framework.interface import (
    ADD,
    ELASTIC_QUOTA,
    POD_GROUP,
    SCHEDULING_POD_GROUP,
    SCHEDULING_WORKLOAD,
    SERVICE,
    WORKLOAD,
    ClusterEvent,
)
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.runtime import PluginFactory
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Status
from packsched.scheduler import CycleResult, QueuedPod, QueueView, Scheduler
from packsched.sim.controllers import RESTARTING_KINDS, Controllers

PENDING = "Pending"
RUNNING = "Running"
PREEMPTED = "Preempted"
SUCCEEDED = "Succeeded"
# A scenario's steps (sim/scenario.py) also remove pods: evicted by a drain, or deleted (scaled down, node gone).
EVICTED = "Evicted"
DELETED = "Deleted"
# Not created: admission (a LimitRange, a ResourceQuota) refused it.
REJECTED = "Rejected"
PHASES = (PENDING, RUNNING, PREEMPTED, SUCCEEDED, EVICTED, DELETED, REJECTED)

SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
PREEMPTED_EVENT = "preempted"
NOMINATED = "nominated"
EVICTED_EVENT = "evicted"
DELETED_EVENT = "deleted"
COMPLETED = "completed"
REJECTED_EVENT = "rejected"
# Assumed on ``node`` and held at Permit (a gang not complete yet); "scheduled" or "unschedulable" follows.
WAITING = "waiting"

# A safety net against a configuration that keeps preempting in a circle: a pod whose attempts preempted this many
# times is given up. (A pod retried while nothing changes is parked instead: MAX_TRIES_UNCHANGED.)
MAX_ATTEMPTS_PER_POD = 1000
# A pod tried this many times in a row while nothing changed in the cluster (no pod created, bound, finished or
# removed, no node changed) waits as unschedulable for the next change (or the flush) instead of being tried again
# after its backoff: its verdict cannot change. (A gang that keeps failing is moved by the rejections of its own
# members, which change nothing.)
MAX_TRIES_UNCHANGED = 20
# Upstream's periodic flush of the unschedulable pods: every 30 s, those that failed more than 5 minutes ago go back
# (DefaultPodMaxInUnschedulablePodsDuration). The simulator runs it only for pods no event moves (rejected only
# by plugins that declare their queueing events, such as Coscheduling): every other unschedulable pod is moved by
# every cluster change here, so the flush would only repeat a verdict nothing changed.
UNSCHEDULABLE_FLUSH_PERIOD = 30.0
POD_MAX_IN_UNSCHEDULABLE = 300.0

# Timed events at the same instant: pods that finish leave first (their room is free for the pods that arrive);
# calls (a scenario's retried evictions) come last.
_COMPLETE, _ARRIVE, _CALL = 0, 1, 2


@dataclass
class Event:
    time: float
    kind: str
    pod: str
    node: str | None = None
    by: str | None = None
    reason: str | None = None


@dataclass
class PodRecord:
    """One pod's life. A StatefulSet pod re-created under the same name gets a record of its own."""

    pod: Pod
    info: PodInfo
    phase: str = PENDING
    node: str | None = None  # the node it runs (or, once Succeeded, ran) on
    reason: str | None = None
    attempts: int = 0
    preempted_by: str | None = None
    created: float = 0.0  # when it enters the cluster
    started: float | None = None  # when it was bound
    finished: float | None = None  # when it completed or was preempted
    run_duration: float | None = None  # None: runs until the end
    replaces: str | None = None  # the preempted pod this one replaces
    arrived: bool = False
    changes_seen: int = -1  # the simulation's change count at its last attempt (MAX_TRIES_UNCHANGED)
    tries_unchanged: int = 0
    preempting_attempts: int = 0  # attempts that preempted (MAX_ATTEMPTS_PER_POD)


@dataclass(order=True)
class _Timed:
    time: float
    priority: int
    seq: int
    rec: PodRecord | None = field(compare=False)
    call: Callable[[], None] | None = field(default=None, compare=False)


@dataclass
class SimResult:
    records: list[PodRecord]
    events: list[Event]
    snapshot: Snapshot
    warnings: list[str] = field(default_factory=list)
    captured: dict[str, list[CycleResult]] = field(default_factory=dict)
    end_time: float = 0.0
    dra: DraObjects | None = None  # the cluster's DRA objects (devices serve DRA-backed extended resources)


class _Actions:
    """The simulated cluster's side of binding and preemption."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def bind(self, pod: PodInfo, node: str) -> Status:
        sim = self.sim
        sim._changes += 1
        rec = sim.records[pod.key]
        rec.phase = RUNNING
        rec.node = node
        rec.reason = None
        rec.started = sim.now
        pod.set_started(sim.now, sim.next_start_seq())
        pod.pod.phase = RUNNING
        # the binding is confirmed at once: the assigned-pod informer sees the pod now (plugins that count usage
        # already did at Reserve)
        sim.scheduler.pod_assigned(pod, node)
        sim.schedule_completion(rec)
        return Status()

    def preempt(self, victim: PodInfo, preemptor: PodInfo) -> None:
        self.sim.evict(victim, preemptor)


def _round_time(t: float) -> float:
    """Virtual times are kept to the nanosecond (as Go durations), so sums such as 0.1 + 0.2 stay exact."""
    return round(t, 9)


def _round_time_up(t: float) -> float:
    """The first virtual time (to the nanosecond) at or after ``t``. The clock moves to the next due time this way:
    a time due a fraction of a nanosecond after the grid (a wait at Permit of 60 s from 16353.065 ends at
    16413.065000000002) would otherwise be rounded to just before it, never reached, and the loop would spin."""
    r = round(t, 9)
    return r if r >= t else round(r + 1e-9, 9)


@contextmanager
def objects_frozen() -> Iterator[None]:
    """The objects alive when a run starts (the cluster, the snapshot's arrays, the plugins: on a large cluster
    hundreds of thousands of them, nearly all living as long as the simulation) are moved out of the garbage
    collector's generations for the run (``gc.freeze()``), so that a full collection during the run walks only
    what the run made (at 50,000 nodes one full collection took 0.15-0.3 s) and put back afterwards
    (``gc.unfreeze()``), collectable as before. Left alone when something froze objects already (``serve`` does
    at its start), and in a run inside another run."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class Simulation:
    def __init__(
        self,
        cluster: Cluster,
        config: KubeSchedulerConfiguration,
        registry: Mapping[str, PluginFactory],
        seed: int = 0,
        capture: set[str] | None = None,
        on_cycle: Callable[[CycleResult], None] | None = None,
        horizon: float = 0.0,
    ) -> None:
        """``horizon``: the simulated span's end as the caller knows it (a scenario's last step); the latest
        arrival time of the manifests' pods extends it. CronJobs create Jobs at their scheduled times up to it
        (and always their first).

        The simulation changes its pods as it goes (phase, nominated node, ...): it works on copies of the
        cluster's Pods, so the ``cluster`` given is left as it was and can be simulated again."""
        cluster = dataclasses.replace(cluster, pods=[copy.copy(p) for p in cluster.pods])
        self.cluster = cluster
        self.config = config
        self.now = 0.0
        self.events: list[Event] = []
        self.warnings: list[str] = []
        self.snapshot = Snapshot()
        self.snapshot.add_nodes(cluster.nodes)
        self.snapshot.namespaces = {name: dict(ns.labels) for name, ns in cluster.namespaces.items()}
        self.history: list[PodRecord] = []  # every pod, in the order it was written or created
        self.records: dict[str, PodRecord] = {}  # the latest pod of each name
        # binding order: the tie-break between pods the simulator started at the same virtual time (pods bound
        # by their manifests all count as started together, before any other)
        self._start_seq = 0
        # the newest status.startTime of the pods read from a cluster: a bound pod that gives one started that
        # long before the simulation's start (the newest at its start), so preemption orders them as upstream
        self._newest_start = max((p.started_at for p in cluster.pods if p.started_at is not None), default=0.0)
        self.capture = capture or set()
        self.captured: dict[str, list[CycleResult]] = {}
        self.on_cycle = on_cycle
        self.controllers = Controllers(cluster.workloads, cluster.pods, cluster.nodes)
        self._timeline: list[_Timed] = []
        self._seq = itertools.count()
        self._warned: set[str] = set()
        self.horizon = max([horizon, *(p.arrival_time for p in cluster.pods)])
        self._changes = 0  # pods created, bound or gone, nodes changed (see _next_flush, MAX_TRIES_UNCHANGED)
        self._changes_at_flush = 0
        skipped = cluster.skipped_summary()
        if skipped:
            self.warnings.append(skipped)
        dra, self.dra_dropped = gate_drops(cluster.dra, config.kube_version)  # (a scenario's base report says them)
        if dra is not cluster.dra:
            cluster = self.cluster = dataclasses.replace(cluster, dra=dra)
        self.warnings.extend(self.dra_dropped)
        self.scheduler = Scheduler(
            config,
            registry,
            _Actions(self),
            self.snapshot,
            seed,
            self.budgets,
            clock=self._clock,
            storage=cluster.storage,
            dra=cluster.dra,
        )
        # A cycle's per-plugin scores are read for explained pods only, and those are scored in full: the other
        # cycles may fold a pod class's kept scores into their totals (Framework.run_score). Set it to True for
        # every plugin's scores in every cycle (an on_cycle watcher that reads them).
        self.scheduler.score_details = False
        self.cache = self.scheduler.cache
        self.scheduler.replay_to_plugins(cluster_objects(cluster))
        for event, created in later_objects(cluster):
            self.call_at(created, partial(self.scheduler.object_changed, event))
        with objects_frozen():  # the collections loading the pods triggers walk what it makes, not the cluster
            self._load_pods()
        for cron in cluster.cron_jobs:
            first = None if cron.suspend else next_fire(cron.schedule, cron.zone, 0.0)
            if first is not None:
                self.call_at(first, partial(self._cron_run, cron, first))

    def _load_pods(self) -> None:
        for pod in self.cluster.pods:
            rec = self._new_record(pod, max(0.0, pod.arrival_time))
            self.records[rec.info.key] = rec
            if rec.created <= 0.0:
                self._arrive(rec)  # created with the cluster, in manifest order
            else:
                self._push(rec.created, _ARRIVE, rec)

    def _new_record(self, pod: Pod, created: float, replaces: str | None = None) -> PodRecord:
        version = self.scheduler.config.kube_version
        info = make_pod_info(pod, len(self.history), version)
        rec = PodRecord(pod, info, created=created, replaces=replaces, run_duration=pod.run_duration)
        self.history.append(rec)
        dropped = dropped_reference(pod, version.minor, version.generic_workload)
        if dropped:
            self._warn_once(
                f"pod group reference {dropped}",
                f"pod {pod.key} (and maybe others) names a pod group with {dropped}: it was scheduled as if "
                "that field were absent",
            )
        for feature in pod.unsupported_features:
            self._warn_once(
                feature,
                f"pod {pod.key} (and maybe others) uses {feature}, which packsched does "
                "not simulate yet: it was scheduled as if that field were absent",
            )
        if pod.run_duration is not None and pod.owner is not None and pod.owner.kind in RESTARTING_KINDS:
            rec.run_duration = None
            owner = f"{pod.owner.kind} {pod.namespace}/{pod.owner.name}"
            self._warn_once(
                f"run-duration {owner}",
                f"{owner}: packsched.io/run-duration ignored: its pods restart (restartPolicy Always) "
                "and never complete; they run until preempted or until the simulation ends",
            )
        return rec

    def reread_dra(self, version: KubeVersion) -> list[str]:
        """For another configuration (a scenario's setConfig: another version, other feature gates): the DRA
        objects as an API server with those gates keeps them (:func:`gate_drops`), in the catalog the scheduler
        reads; answers a warning for each kind of field dropped (added to the run's warnings too)."""
        dra = self.cluster.dra
        kept, dropped = gate_drops(dra, version)
        if kept is not dra:
            dra.adopt(kept)
        for message in dropped:
            self._warn_once(message, message)
        return dropped

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warnings.append(message)

    def _clock(self) -> float:
        return self.now

    @property
    def queue(self) -> QueueView:
        """What waits in the scheduler's queue (read-only; a new queue after a scenario's setConfig step)."""
        return self.scheduler.queue

    def _push(self, time: float, priority: int, rec: PodRecord) -> None:
        heapq.heappush(self._timeline, _Timed(_round_time(time), priority, next(self._seq), rec))

    # -- cluster changes ----------------------------------------------------------------------------------

    def next_start_seq(self) -> int:
        self._start_seq += 1
        return self._start_seq

    def _admit(self, rec: PodRecord) -> str | None:
        """Admission of a pod being created: the LimitRanges' defaults and bounds, then the ResourceQuotas (None:
        admitted; the pod may have gained requests and limits)."""
        pod, refused = apply_limit_ranges(rec.pod, self.cluster.limit_ranges)
        if refused is None and pod is not rec.pod:
            rec.pod = pod
            rec.info = make_pod_info(pod, rec.info.arrival, self.scheduler.config.kube_version)
        if refused is None and self.cluster.resource_quotas:
            holding = (r.pod for r in self.records.values() if r.phase == RUNNING or (r.phase == PENDING and r.arrived))
            refused = check_quotas(rec.pod, self.cluster.resource_quotas, holding)
        return refused

    def _arrive(self, rec: PodRecord) -> None:
        """The pod is created (if admission lets it): bound already (spec.nodeName), or handed to the scheduling
        queue."""
        rec.created = self.now
        self._changes += 1
        self.records[rec.info.key] = rec
        if not rec.pod.admitted and (self.cluster.limit_ranges or self.cluster.resource_quotas):
            refused = self._admit(rec)
            if refused is not None:
                rec.phase, rec.reason, rec.finished = REJECTED, refused, self.now
                rec.pod.phase = "Failed"
                self.events.append(Event(self.now, REJECTED_EVENT, rec.pod.key, None, None, refused))
                self.controllers.forget(rec.pod)
                return
        pod, info = rec.pod, rec.info
        rec.arrived = True
        if pod.node_name:
            # Already bound: it holds its node's resources, whatever the scheduler would have said.
            rec.phase, rec.node, rec.started = RUNNING, pod.node_name, self.now
            info.start_time = self.now
            if pod.started_at is not None:
                info.start_time -= self._newest_start - pod.started_at
            pod.phase = RUNNING
            self.scheduler.pod_assigned(info, pod.node_name)
            self.schedule_completion(rec)
            return
        if self.scheduler.framework_for(info) is None:
            rec.reason = f"no profile has schedulerName {pod.scheduler_name!r}: another scheduler would place this pod"
            return
        gate = self.scheduler.enqueue(info)
        if not gate.ok:
            rec.reason = gate.message

    def schedule_completion(self, rec: PodRecord) -> None:
        if rec.run_duration is not None:
            self._push(self.now + rec.run_duration, _COMPLETE, rec)

    def _complete(self, rec: PodRecord) -> None:
        """The pod's run duration elapsed: it succeeds and frees its resources; a Job may start its next pod."""
        if rec.phase != RUNNING:
            return  # preempted before it could finish
        self._changes += 1
        pod = rec.pod
        # it frees its room; pods that did not fit may fit now
        self.scheduler.pod_finished(rec.info.key, SUCCEEDED)
        rec.phase, rec.finished = SUCCEEDED, self.now
        self.events.append(Event(self.now, COMPLETED, pod.key, rec.node))
        self._create(self.controllers.completed(pod, self._taken, self.now), None)

    def _taken(self, key: str) -> bool:
        return key in self.records

    def _create(self, pods: list[Pod], replaces: str | None) -> None:
        """Pods a controller creates now; they arrive through the timeline, before the next cycle."""
        for pod in pods:
            pod.arrival_time = self.now
            rec = self._new_record(pod, self.now, replaces)
            if pod.key not in self.records:  # a re-created StatefulSet pod takes its name over on arrival
                self.records[pod.key] = rec
            self._push(self.now, _ARRIVE, rec)

    def budgets(self) -> list[BudgetStatus]:
        if not self.cluster.pdbs:
            return []
        alive = (r for r in self.history if r.phase == RUNNING or (r.phase == PENDING and r.arrived))
        return budgets(self.cluster.pdbs, ((r.pod, r.phase == RUNNING) for r in alive))

    def evict(self, victim: PodInfo, preemptor: PodInfo) -> None:
        rec = self.records[victim.key]
        node = rec.node
        self._changes += 1
        self.scheduler.pod_deleted(victim)  # it frees its room: pods that did not fit may fit now
        rec.phase, rec.node, rec.preempted_by, rec.finished = PREEMPTED, None, preemptor.key, self.now
        victim.pod.phase = "Failed"  # what the kubelet reports for a pod deleted while running
        rec.reason = f"preempted by {preemptor.key}"
        created = self.controllers.preempted(victim.pod, self._taken)
        why = None
        if created:
            st = self.controllers.state_of(victim.pod)
            owner = st.label if st is not None else "its owner"
            why = f"{owner} creates {', '.join(p.key for p in created)}"
        self.events.append(Event(self.now, PREEMPTED_EVENT, victim.key, node, preemptor.key, why))
        self._create(created, victim.key)

    # -- changes a scenario makes (sim/scenario.py) --------------------------------------------------------

    def call_at(self, time: float, fn: Callable[[], None]) -> None:
        """Call ``fn`` at virtual time ``time`` (after the pods completing or arriving then)."""
        heapq.heappush(self._timeline, _Timed(_round_time(time), _CALL, next(self._seq), None, fn))

    def add_pods(self, pods: list[Pod]) -> None:
        """New pods (created now: they arrive before the next cycle)."""
        self._create(pods, None)

    def set_node(self, node: Node) -> None:
        """A node added, or changed (cordoned, relabelled): waiting pods are tried again; DaemonSets make a pod
        for it, or delete theirs when it no longer fits them."""
        self._changes += 1
        self.scheduler.node_set(node)
        made, gone = self.controllers.node_set(node)
        for key in gone:
            rec = self.records.get(key)
            if rec is not None and rec.phase in (PENDING, RUNNING):
                self.remove_pod(key, DELETED, f"node {node.name} no longer fits its DaemonSet", replace_it=False)
        self._create(made, None)

    def remove_node(self, name: str, reason: str) -> list[str]:
        """The node is gone: its pods are deleted (their controllers re-create them, DaemonSets excepted) and it
        leaves the snapshot. Answers the keys of the pods deleted."""
        self._changes += 1
        daemon = self.controllers.node_removed(name)
        gone = [r for r in list(self.records.values()) if r.phase == RUNNING and r.node == name]
        # a DaemonSet pod still waiting for the node can no longer go anywhere
        gone += [self.records[k] for k in daemon if k in self.records and self.records[k].phase == PENDING]
        for rec in gone:
            self.remove_pod(rec.pod.key, DELETED, reason, replace_it=True)
        self.snapshot = self.scheduler.node_removed(name)
        return [r.pod.key for r in gone]

    def _cron_run(self, cron: CronJob, at: float) -> None:
        """A CronJob's scheduled time: its Job is created (or not: concurrencyPolicy Forbid), and the next run is
        due if it falls within the simulated span."""
        made, gone = self.controllers.cron_fire(cron, at, self._taken)
        for key in gone:
            reason = f"CronJob {cron.namespace}/{cron.name} replaced its Job (concurrencyPolicy Replace)"
            self.remove_pod(key, DELETED, reason, replace_it=False)
        self._create(made, None)
        nxt = next_fire(cron.schedule, cron.zone, at)
        if nxt is not None and nxt <= self.horizon:
            self.call_at(nxt, partial(self._cron_run, cron, nxt))

    def disruption_allowed(self, key: str) -> bool:
        """Whether evicting the pod now keeps every PodDisruptionBudget that selects it (the Eviction API's
        check)."""
        rec = self.records[key]
        return all(b.disruptions_allowed > 0 for b in self.budgets() if b.matches(rec.info))

    def remove_pod(self, key: str, phase: str, reason: str, *, replace_it: bool) -> list[Pod]:
        """A running or pending pod is deleted (``phase``: EVICTED or DELETED); its controller re-creates it when
        ``replace_it`` (an eviction, a node gone), not when it was scaled down. Answers the replacements."""
        rec = self.records[key]
        node = rec.node
        self._changes += 1
        self.scheduler.pod_deleted(rec.info)
        rec.phase, rec.node, rec.finished, rec.reason = phase, None, self.now, reason
        rec.pod.phase = "Failed"
        created: list[Pod] = []
        if replace_it:
            created = self.controllers.preempted(rec.pod, self._taken)
        else:
            st = self.controllers.state_of(rec.pod)
            if st is not None:
                st.active.discard(key)
        why = reason
        if created:
            st = self.controllers.state_of(rec.pod)
            owner = st.label if st is not None else "its owner"
            why = f"{reason}; {owner} creates {', '.join(p.key for p in created)}"
        self.events.append(Event(self.now, EVICTED_EVENT if phase == EVICTED else DELETED_EVENT, key, node, None, why))
        self._create(created, key)
        return created

    # -- the loop -----------------------------------------------------------------------------------------

    def _fire_due(self) -> None:
        timeline = self._timeline
        while timeline and timeline[0].time <= self.now:
            item = heapq.heappop(timeline)
            if item.call is not None:
                item.call()
            elif item.rec is None:
                continue
            elif item.priority == _COMPLETE:
                self._complete(item.rec)
            else:
                self._arrive(item.rec)

    def _next_time(self) -> float | None:
        times = [self.queue.next_backoff_expiry(), self.scheduler.next_permit_deadline(), self._next_flush()]
        if self._timeline:
            times.append(self._timeline[0].time)
        due = [t for t in times if t is not None]
        return _round_time_up(min(due)) if due else None

    def _next_flush(self) -> float | None:
        """The next flush tick that may move a pod, while it may help: the cluster changed (a pod bound or gone)
        since the last flush, or more changes are to come (the timeline is not empty). Without that, a gang that
        can never fit would be flushed forever."""
        if not self._timeline and self._changes == self._changes_at_flush:
            return None
        return self.scheduler.next_flush(POD_MAX_IN_UNSCHEDULABLE, UNSCHEDULABLE_FLUSH_PERIOD)

    def _flush_due(self) -> None:
        due = self._next_flush()
        if due is not None and due <= self.now:
            self._changes_at_flush = self._changes
            self.scheduler.flush_unschedulable(POD_MAX_IN_UNSCHEDULABLE)

    def run(self) -> SimResult:
        self.run_until(None)
        return self.result()

    def result(self) -> SimResult:
        return SimResult(
            self.history, self.events, self.snapshot, self.warnings, self.captured, self.now, self.cluster.dra
        )

    def run_until(self, until: float | None) -> None:
        """Run every event before ``until`` (all of them: None), then stand at ``until``: what happens at that very
        time (a scenario's next step first) is left for later."""
        with objects_frozen():
            self._run_until(until)

    def _run_until(self, until: float | None) -> None:
        while True:
            if self._timeline and self._timeline[0].time <= self.now:
                self._fire_due()
            self._settle_waiting()
            self._flush_due()
            qp = self.scheduler.next_pod()
            if qp is None:
                nxt = self._next_time()
                if nxt is None or (until is not None and nxt >= until):
                    break
                self.now = max(self.now, nxt)
                continue
            self._attempt(qp)
        if until is not None:
            self.now = max(self.now, _round_time(until))

    def _attempt(self, qp: QueuedPod) -> None:
        info = qp.info
        key = info.key
        rec = self.records[key]
        rec.attempts = qp.attempts
        if rec.changes_seen == self._changes:
            rec.tries_unchanged += 1
            if rec.tries_unchanged > MAX_TRIES_UNCHANGED:
                self.scheduler.cycle_not_run()
                self.scheduler.park(qp)
                return
        else:
            rec.changes_seen, rec.tries_unchanged = self._changes, 1
        if rec.preempting_attempts >= MAX_ATTEMPTS_PER_POD:
            rec.reason = (
                f"gave up after {MAX_ATTEMPTS_PER_POD} attempts that preempted (the simulation kept preempting)"
            )
            self.warnings.append(f"pod {key}: {rec.reason}")
            self.scheduler.cycle_not_run()
            return
        if self.scheduler.in_pod_group_cycle(info):
            for member, result in self.scheduler.schedule_pod_group(qp, explain=frozenset(self.capture)):
                self._record(member, result, in_group=True)
            self._settle_waiting()
            return
        result = self.scheduler.schedule_one(info, explain=key in self.capture, queued=qp)
        self._record(qp, result)

    def _record(self, qp: QueuedPod, result: CycleResult, *, in_group: bool = False) -> None:
        """What an attempt decided, in the history; a failed pod is sent back to the queue, and the waits at Permit
        that ended are settled. A pod-group cycle's pods (``in_group``) were sent back by the scheduler already,
        and the waits are settled once every pod of the cycle is recorded."""
        key = qp.info.key
        rec = self.records[key]
        rec.attempts = max(rec.attempts, qp.attempts)
        if key in self.capture:
            self.captured.setdefault(key, []).append(result)
        if self.on_cycle is not None:
            self.on_cycle(result)
        if result.waiting:
            if key not in self.capture:
                result.shed_scores()  # read above; the wait keeps the result
            rec.reason = (
                f"{result.status.message} ({result.status.plugin} PreBind)"
                if result.waiting_in_pre_bind
                else f"waiting at Permit ({result.status.plugin})"
            )
            self.events.append(Event(self.now, WAITING, key, result.node, None, rec.reason))
            if not in_group:
                self._settle_waiting()
            return
        if result.scheduled:
            self.events.append(Event(self.now, SCHEDULED, key, result.node))
            if not in_group:
                self._settle_waiting()
            return
        reason = result.message
        rec.reason = reason
        self.events.append(Event(self.now, UNSCHEDULABLE, key, None, None, reason))
        if result.nominated_node:
            rec.preempting_attempts += 1
            self.events.append(Event(self.now, NOMINATED, key, result.nominated_node))
        # (its victims, if it preempted, left during the attempt: the queue sends it to backoff, not to wait)
        if not in_group:
            self.scheduler.handle_failure(qp, result)
            self._settle_waiting()

    def _settle_waiting(self) -> None:
        """Pods whose wait at Permit ended (allowed by the pod that completed their gang, rejected, timed out):
        the scheduler binds them or sends them back; recorded here."""
        for result in self.scheduler.settle_waiting():
            key = result.pod.key
            rec = self.records.get(key)
            if rec is None or rec.info is not result.pod:
                continue
            if result.scheduled:
                self.events.append(Event(self.now, SCHEDULED, key, result.node))
                continue
            if rec.phase != PENDING:
                continue  # deleted while it waited
            rec.reason = result.message
            self.events.append(Event(self.now, UNSCHEDULABLE, key, None, None, result.message))


def cluster_objects(cluster: Cluster) -> Iterator[ClusterEvent]:
    """The cluster's objects as plugins' informers list them at start (ElasticQuotas first, then PodGroups,
    Services and workload controllers); pods come as they are bound."""
    for quota in cluster.elastic_quotas:
        yield ClusterEvent(ELASTIC_QUOTA, ADD, None, quota)
    for group in cluster.pod_groups:
        yield ClusterEvent(POD_GROUP, ADD, None, group)
    for scheduling_workload in cluster.scheduling_workloads:
        if scheduling_workload.created <= 0:
            yield ClusterEvent(SCHEDULING_WORKLOAD, ADD, None, scheduling_workload)
    for pod_group in cluster.scheduling_pod_groups:
        if pod_group.created <= 0:
            yield ClusterEvent(SCHEDULING_POD_GROUP, ADD, None, pod_group)
    for service in cluster.services:
        yield ClusterEvent(SERVICE, ADD, None, service)
    for workload in cluster.workloads:
        yield ClusterEvent(WORKLOAD, ADD, None, workload)


def later_objects(cluster: Cluster) -> Iterator[tuple[ClusterEvent, float]]:
    """kube-scheduler's own Workloads and PodGroups whose ``packsched.io/arrival-time`` puts their creation after
    the start, with that time (those created at the start come with :func:`cluster_objects`)."""
    for workload in cluster.scheduling_workloads:
        if workload.created > 0:
            yield ClusterEvent(SCHEDULING_WORKLOAD, ADD, None, workload), workload.created
    for group in cluster.scheduling_pod_groups:
        if group.created > 0:
            yield ClusterEvent(SCHEDULING_POD_GROUP, ADD, None, group), group.created


@dataclass(frozen=True)
class _GateDrop:
    """Fields an API server drops from DRA objects while a feature gate is off (upstream's dropDisabledFields)."""

    off: Callable[[KubeVersion], bool]
    drop: Callable[[DraObjects], tuple[DraObjects, int]]
    warning: str  # with {n}: how many objects lost the fields


_GATE_DROPS = (
    _GateDrop(
        lambda v: not v.dra_admin_access,
        DraObjects.without_admin_access,
        "adminAccess dropped from {n} ResourceClaim(s) and template(s): the API server drops it with the feature "
        "gate DRAAdminAccess off",
    ),
    _GateDrop(
        lambda v: not v.dra_device_binding,
        DraObjects.without_binding_conditions,
        "devices' bindingConditions, bindingFailureConditions and bindsToNode dropped from {n} ResourceSlice(s): "
        "the API server drops them with the feature gate DRADeviceBindingConditions off",
    ),
)


def gate_drops(dra: DraObjects, version: KubeVersion) -> tuple[DraObjects, list[str]]:
    """The DRA catalog as an API server of ``version`` (its feature gates) keeps it, and a warning per kind of
    field dropped; ``dra`` itself when nothing was. Read at the start of a run, and again after a scenario's
    setConfig (another version or other gates)."""
    warnings: list[str] = []
    if version.minor < 34:
        return dra, warnings
    for rule in _GATE_DROPS:
        if rule.off(version):
            dra, n = rule.drop(dra)
            if n:
                warnings.append(rule.warning.format(n=n))
    return dra, warnings


def run_simulation(
    cluster: Cluster,
    config: KubeSchedulerConfiguration,
    registry: Mapping[str, PluginFactory],
    seed: int = 0,
    capture: set[str] | None = None,
) -> SimResult:
    return Simulation(cluster, config, registry, seed, capture).run()
