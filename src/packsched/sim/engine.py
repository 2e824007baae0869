"""The embedded simulator: pods enter kube-scheduler's queue, cycles run one pod at a time, preempted pods
leave, and pods that did not fit are retried (with backoff) when something in the cluster changes.

Time is virtual: a scheduling cycle takes no time; only backoff moves the clock (seconds).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from packsched.api.manifests import Cluster
from packsched.api.objects import Pod
from packsched.backend.disruption import BudgetStatus, budget_status
from packsched.backend.queue import QueuedPod, SchedulingQueue
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework.interface import ADD, DELETE, ELASTIC_QUOTA, POD, ClusterEvent
from packsched.framework.runtime import PluginFactory
from packsched.framework.snapshot import PodInfo, Snapshot, make_pod_info
from packsched.framework.status import Status
from packsched.scheduler import CycleResult, Scheduler

PENDING = "Pending"
RUNNING = "Running"
PREEMPTED = "Preempted"

SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
PREEMPTED_EVENT = "preempted"
NOMINATED = "nominated"

# A safety net against a configuration that keeps preempting in a circle.
MAX_ATTEMPTS_PER_POD = 1000


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
    pod: Pod
    info: PodInfo
    phase: str = PENDING
    node: str | None = None
    reason: str | None = None
    attempts: int = 0
    preempted_by: str | None = None


@dataclass
class SimResult:
    records: list[PodRecord]
    events: list[Event]
    snapshot: Snapshot
    warnings: list[str] = field(default_factory=list)
    captured: dict[str, list[CycleResult]] = field(default_factory=dict)
    end_time: float = 0.0


class _Actions:
    """The simulated cluster's side of binding and preemption."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def bind(self, pod: PodInfo, node: str) -> Status:
        rec = self.sim.records[pod.key]
        rec.phase = RUNNING
        rec.node = node
        rec.reason = None
        pod.start_time = self.sim.now
        pod.start_seq = self.sim.next_start_seq()
        pod.pod.phase = RUNNING
        # the assigned-pod informer sees the pod now (plugins that count usage already did at Reserve)
        self.sim.scheduler.dispatch(ClusterEvent(POD, ADD, None, pod.pod))
        return Status()

    def preempt(self, victim: PodInfo, preemptor: PodInfo) -> None:
        self.sim.evict(victim, preemptor)


class Simulation:
    def __init__(
        self,
        cluster: Cluster,
        config: KubeSchedulerConfiguration,
        registry: Mapping[str, PluginFactory],
        seed: int = 0,
        capture: set[str] | None = None,
        on_cycle: Callable[[CycleResult], None] | None = None,
    ) -> None:
        self.cluster = cluster
        self.config = config
        self.now = 0.0
        self.events: list[Event] = []
        self.warnings: list[str] = []
        self.snapshot = Snapshot()
        self.snapshot.add_nodes(cluster.nodes)
        self.records: dict[str, PodRecord] = {}
        # binding order: the tie-break between pods the simulator started at the same virtual time (pods bound
        # by their manifests all count as started together, before any other)
        self._start_seq = 0
        self.capture = capture or set()
        self.captured: dict[str, list[CycleResult]] = {}
        self.on_cycle = on_cycle
        self.scheduler = Scheduler(config, registry, _Actions(self), self.snapshot, seed, self.budgets)
        first = next(iter(self.scheduler.frameworks.values()))
        sort_key = getattr(first.queue_sort, "sort_key", None)
        if sort_key is None:
            raise ValueError(f"queue sort plugin {first.queue_sort.name!r} has no sort key")
        self.queue = SchedulingQueue(
            sort_key, float(config.pod_initial_backoff_seconds), float(config.pod_max_backoff_seconds)
        )
        for quota in cluster.elastic_quotas:
            self.scheduler.dispatch(ClusterEvent(ELASTIC_QUOTA, ADD, None, quota))
        self._load_pods()

    def _load_pods(self) -> None:
        warned: set[str] = set()
        for i, pod in enumerate(self.cluster.pods):
            info = make_pod_info(pod, i)
            rec = PodRecord(pod, info)
            self.records[pod.key] = rec
            for feature in pod.unsupported_features:
                if feature not in warned:
                    warned.add(feature)
                    self.warnings.append(
                        f"pod {pod.key} (and maybe others) uses {feature}, which packsched does "
                        "not simulate yet: it was scheduled as if that field were absent"
                    )
            if pod.node_name:
                # Already bound: it holds its node's resources, whatever the scheduler would have said.
                self.snapshot.add_pod(info, self.snapshot.index[pod.node_name])
                rec.phase, rec.node = RUNNING, pod.node_name
                pod.phase = RUNNING
                self.scheduler.dispatch(ClusterEvent(POD, ADD, None, pod))
                continue
            fwk = self.scheduler.framework_for(info)
            if fwk is None:
                rec.reason = (
                    f"no profile has schedulerName {pod.scheduler_name!r}: "
                    "another scheduler would place this pod"
                )
                continue
            if pod.nominated_node_name in self.snapshot.index:
                # a nomination from an earlier preemption (status.nominatedNodeName) is honoured
                self.scheduler.nominator.nominate(info, self.snapshot.index[pod.nominated_node_name])
            gate = fwk.run_pre_enqueue(info)
            self.queue.add(info, gate_reason="" if gate.ok else gate.message)
            if not gate.ok:
                rec.reason = gate.message

    # -- cluster changes ----------------------------------------------------------------------------------

    def next_start_seq(self) -> int:
        self._start_seq += 1
        return self._start_seq

    def budgets(self) -> list[BudgetStatus]:
        if not self.cluster.pdbs:
            return []
        running = [r.pod for r in self.records.values() if r.phase == RUNNING]
        alive = [r.pod for r in self.records.values() if r.phase in (RUNNING, PENDING)]
        return [budget_status(pdb, running, alive) for pdb in self.cluster.pdbs]

    def evict(self, victim: PodInfo, preemptor: PodInfo) -> None:
        rec = self.records[victim.key]
        node = rec.node
        if victim.node >= 0:
            self.snapshot.remove_pod(victim)
        self.scheduler.nominator.clear(victim)
        self.queue.remove(victim.key)
        rec.phase, rec.node, rec.preempted_by = PREEMPTED, None, preemptor.key
        self.scheduler.dispatch(ClusterEvent(POD, DELETE, victim.pod, None))
        rec.reason = f"preempted by {preemptor.key}"
        self.events.append(Event(self.now, PREEMPTED_EVENT, victim.key, node, preemptor.key))
        self.queue.move_all(self.now)  # a pod left a node: pods that did not fit may fit now

    # -- the loop -----------------------------------------------------------------------------------------

    def run(self) -> SimResult:
        while True:
            qp = self.queue.pop(self.now)
            if qp is None:
                expiry = self.queue.next_backoff_expiry()
                if expiry is None:
                    break
                self.now = max(self.now, expiry)
                continue
            self._attempt(qp)
        return SimResult(
            list(self.records.values()), self.events, self.snapshot, self.warnings, self.captured, self.now
        )

    def _attempt(self, qp: QueuedPod) -> None:
        info = qp.info
        rec = self.records[info.key]
        rec.attempts = qp.attempts
        if qp.attempts > MAX_ATTEMPTS_PER_POD:
            rec.reason = f"gave up after {MAX_ATTEMPTS_PER_POD} attempts (the simulation kept preempting)"
            self.warnings.append(f"pod {info.key}: {rec.reason}")
            return
        events_before = len(self.events)
        result = self.scheduler.schedule_one(info, explain=info.key in self.capture)
        if info.key in self.capture:
            self.captured.setdefault(info.key, []).append(result)
        if self.on_cycle is not None:
            self.on_cycle(result)
        if result.scheduled:
            self.events.append(Event(self.now, SCHEDULED, info.key, result.node))
            return
        reason = result.message
        rec.reason = reason
        self.events.append(Event(self.now, UNSCHEDULABLE, info.key, None, None, reason))
        if result.nominated_node:
            info.pod.nominated_node_name = result.nominated_node
            self.scheduler.nominator.nominate(info, self.snapshot.index[result.nominated_node])
            self.events.append(Event(self.now, NOMINATED, info.key, result.nominated_node))
        elif result.nominated_node == "":
            info.pod.nominated_node_name = ""
            self.scheduler.nominator.clear(info)
        self.queue.add_unschedulable(qp, self.now, reason)
        if any(e.kind == PREEMPTED_EVENT for e in self.events[events_before:]):
            # its victims left before it was parked, so their leaving did not move it: move it now
            self.queue.move_all(self.now)


def run_simulation(
    cluster: Cluster,
    config: KubeSchedulerConfiguration,
    registry: Mapping[str, PluginFactory],
    seed: int = 0,
    capture: set[str] | None = None,
) -> SimResult:
    return Simulation(cluster, config, registry, seed, capture).run()
