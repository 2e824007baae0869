"""The scheduler, as kube-scheduler's ``Scheduler``: it owns the scheduling queue, the nominations, the cache and
the handling of failed attempts; ``schedule_one`` runs one scheduling cycle (and binding cycle) for one pod.

PreFilter -> Filter (every node at once; the nominated node first) -> PostFilter (preemption) when nothing fits
-> PreScore -> Score -> selectHost (seeded tie-break) -> assume -> Reserve -> Permit -> PreBind -> Bind -> PostBind.

The simulator and the live adapter drive the same loop (:meth:`Scheduler.enqueue`, :meth:`Scheduler.next_pod`,
:meth:`Scheduler.schedule_one`, :meth:`Scheduler.handle_failure`) and tell it of every cluster change through its
reactions (``eventhandlers.py``, a base class: pod assigned, finished or deleted, node set or removed, other
objects changed); they differ in their clock, in where changes come from, and in how the cluster carries out a
decision (the :class:`ClusterActions` they give, and what they record).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from packsched.api.dra import DraObjects
from packsched.api.storage import StorageObjects
from packsched.backend.cache import Cache
from packsched.backend.disruption import BudgetStatus
from packsched.backend.nominator import Nominator
from packsched.backend.podgroups import PodGroupState, PodGroupStates
from packsched.backend.queue import QueuedPod as QueuedPod
from packsched.backend.queue import QueueView as QueueView
from packsched.backend.queue import SchedulingQueue
from packsched.config.types import KubeSchedulerConfiguration
from packsched.config.versions import KubeVersion
from packsched.eventhandlers import EventHandlers
from packsched.framework.batch import FloatArray, NameArray, SortedNodes, TieOrder, sort_scored
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.interface import (
    ASSIGNED_POD_DELETE,
    POD_GROUP_CYCLE,
    AssignedPodAddPlugin,
    ClusterActions,
    ClusterEvent,
    QueueingHintPlugin,
    WaitingPodView,
)
from packsched.framework.nodeorder import first_feasible, rotated_feasible
from packsched.framework.podinfo import PodInfo
from packsched.framework.preemption import chosen_node_fit_error
from packsched.framework.runtime import Framework, PluginFactory, ScoreResult
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.framework.status import Code, PluginError, Status
from packsched.framework.waiting import WaitingPod, WaitingPods
from packsched.podgroup_cycle import PodGroupCycle

MIN_FEASIBLE_NODES_TO_FIND = 100
# A PreBind plugin that answers Wait is asked again after this long (DynamicResources, the only one that waits,
# polls the device binding conditions every 5 s upstream)
PRE_BIND_RETRY_S = 5.0
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
DEFAULT_PERCENTAGE_BASE = 50
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
# How selectHost breaks ties between the best-scored nodes: uniformly at random (kube-scheduler), or the node
# whose name sorts first (the vendored scheduler of the FGD paper's simulator does this, for reproducibility).
TIE_RANDOM = "random"
TIE_NAME = "name"
TIE_BREAKS = (TIE_RANDOM, TIE_NAME)


@dataclass
class CycleResult:
    """What one attempt decided, with everything ``explain`` shows."""

    pod: PodInfo
    profile: str
    node: str | None = None
    status: Status = field(default_factory=Status)
    diagnosis: Diagnosis | None = None
    scores: ScoreResult | None = None
    sampled: IntArray | None = None  # feasible nodes the cycle scored (percentageOfNodesToScore)
    nominated_node: str | None = None  # set by preemption
    victims: list[PodInfo] = field(default_factory=list)
    used_nominated_node: bool = False
    # Opportunistic batching (1.35+): the pod's signature (None: the profile or a plugin cannot sign it, or the
    # gate is off), the node the batch hinted ("" none), and whether the cycle took it without scoring
    signature: str | None = None
    batch_hint: str = ""
    used_batch_hint: bool = False
    # explain only: the feasible nodes the cycle did not score, scored apart for display (not normalized with the
    # scored ones, and never part of the decision)
    unsampled_scores: ScoreResult | None = None
    # explain only: per node name, fields plugins add to the node's entry (NodeDetailsPlugin)
    node_details: dict[str, dict[str, object]] = field(default_factory=dict)
    # Set when the scheduler binds asynchronously (live mode): the pod is assumed, reserved and permitted, and
    # its binding cycle is still to run (Scheduler.run_binding_cycle, then Scheduler.finish_binding_cycle).
    binding: BindingCycle | None = None
    # Permit made the pod wait (a gang not complete yet): it is assumed on ``node`` and not bound; its outcome
    # comes later, from Scheduler.settle_waiting.
    waiting: bool = False
    # the wait is a PreBind plugin's (DynamicResources' device binding conditions), not Permit's
    waiting_in_pre_bind: bool = False
    # A node was chosen, then Reserve, Permit (or the wait at Permit) refused the pod: what the pod's condition says
    # (``diagnosis`` stays the filters' verdicts, for explain).
    refused_after_filters: Status | None = None
    # A pod-group cycle's verdict for the whole group (what kube-scheduler 1.36+ writes in the PodGroup's condition):
    # Success, rejected or an error; None outside such a cycle, for a pod held back untried, or where upstream writes
    # no condition.
    group_status: Status | None = None

    @property
    def scheduled(self) -> bool:
        return self.node is not None and not self.waiting

    def shed_scores(self) -> None:
        """Let go of the per-node scores and the sample (what explain and a record read right after the cycle).
        A pod waiting at Permit keeps its result until its wait ends, and many waiting pods each held a few
        arrays of every node: 8,000 gang members on 5,000 nodes peaked at 1.8 GiB."""
        self.scores = self.unsampled_scores = None
        self.sampled = None

    @property
    def rejected_on_node(self) -> bool:
        """Reserve or Permit (or the wait at Permit) rejected the pod on the chosen node: the queue counts only
        that plugin as having rejected it (upstream's one-node FitError)."""
        st = self.refused_after_filters
        return st is not None and st.code != Code.ERROR and not self.scheduled

    @property
    def message(self) -> str:
        if self.refused_after_filters is not None and not self.scheduled and not self.waiting:
            return self.refused_after_filters.message
        if self.diagnosis is not None and not self.scheduled and self.status.code != Code.ERROR:
            return self.diagnosis.message()
        return self.status.message

    def top_nodes(self, snapshot: Snapshot) -> list[str]:
        """The nodes selectHost chose among, by name: those with the best total score (a tie when more than one).
        Only the chosen node when the cycle did not score (one feasible node, or the nominated or hinted node
        still fits); none when no node was chosen. Read it before ``snapshot`` changes (it names columns)."""
        if self.node is None:
            return []
        if (
            self.scores is None
            or self.sampled is None
            or self.used_nominated_node
            or self.used_batch_hint
            or len(self.sampled) == 1
        ):
            return [self.node]
        cols = self.scores.cols[best_scored(self.scores, self.sampled)]
        return sorted(snapshot.nodes[int(c)].name for c in cols)


@dataclass
class PodGroupCycleReport:
    """What live mode's metrics read of the last pod-group cycle (upstream's podgroup_* metrics): when its algorithm
    (placing the pods) ended, on ``time.perf_counter()``'s clock (None when the cycle stopped before it), and whether
    the group went back to wait for preemption's victims."""

    algorithm_done: float | None = None
    waiting_on_preemption: bool = False


@dataclass
class BindingCycle:
    """What a binding cycle needs: the pod's scheduling cycle chose ``node``, assumed the pod there, reserved and
    permitted it; PreBind and Bind are left (upstream's ``bindingCycle``, run in a goroutine of its own)."""

    fwk: Framework
    state: CycleState
    pod: PodInfo
    node: str
    result: CycleResult
    queued: QueuedPod | None = None  # how the pod was queued (to send it back if its wait at Permit fails)


def best_scored(scores: ScoreResult, candidates: IntArray) -> IntArray:
    """Positions in ``scores`` of the best total among ``candidates`` (the sampled nodes selectHost picks from)."""
    if scores.cols is candidates:
        totals = scores.totals
    else:  # scores of other nodes too: only the candidates may be chosen
        totals = np.where(np.isin(scores.cols, candidates), scores.totals, np.iinfo(np.int64).min)
    return np.flatnonzero(totals == totals.max())


def zone_interleaved_order(snap: Snapshot) -> IntArray:
    """kube-scheduler lists nodes zone by zone, round robin (its node tree): a zone is a node's region and zone
    labels (the first of ``REGION_LABELS`` and of ``ZONE_LABELS`` it has; no zone when it has neither), zones in
    order of their first node, each zone's nodes in column order. On the snapshot's label codes, in numpy: a
    change to any node computes it again, so it must not cost a Python step per node (0.1-0.2 s at 50,000)."""
    n = snap.n
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    values: dict[str, int] = {"": 0}  # label values of both keys of a kind as one vocabulary ("": none)
    region = _first_label(snap, REGION_LABELS, values)
    zone = _first_label(snap, ZONE_LABELS, values)
    key = region * len(values) + zone  # (region, zone) as one integer: 0 is neither
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.intp)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    zone_of = rank[inverse.reshape(-1)]  # zones numbered in order of their first node
    by_zone = np.argsort(zone_of, kind="stable")  # each zone's nodes together, in column order
    sizes = np.bincount(zone_of)
    place = np.empty(n, dtype=np.intp)  # each node's place in its zone's list
    place[by_zone] = np.arange(n) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return np.lexsort((zone_of, place)).astype(np.intp)  # round robin: first nodes of every zone, then the second


def _first_label(snap: Snapshot, keys: tuple[str, ...], values: dict[str, int]) -> IntArray:
    """Each node's value of the first of ``keys`` it has, as a code in ``values`` (extended as needed; 0: none)."""
    out = np.zeros(snap.n, dtype=np.int64)
    for key in reversed(keys):  # the first key wins: written last
        codes = snap.labels.column(key)
        if codes is None:
            continue
        lut = np.array([values.setdefault(v, len(values)) for v in snap.labels.values(key)] or [0], dtype=np.int64)
        has = codes >= 0
        out[has] = lut[codes[has]]
    return out


def num_feasible_nodes_to_find(percentage: int | None, n: int) -> int:
    """How many feasible nodes a cycle looks for before it stops filtering (and scores only those)."""
    if n < MIN_FEASIBLE_NODES_TO_FIND:
        return n
    pct = percentage or 0
    if pct >= 100:
        return n
    if pct == 0:
        pct = max(DEFAULT_PERCENTAGE_BASE - n // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(n * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


class Scheduler(EventHandlers):
    """The scheduler shared by the simulator and the live adapter. It is also the plugins' Handle.

    ``clock``: the time the queue's backoffs and the cache's expiries are measured in (virtual seconds in the
    simulator). ``cache``: the cache over ``snapshot`` (one is made when not given). ``on_clear_nomination``: how the
    cluster hears that a pod's nomination was cleared (live: status.nominatedNodeName patched away).
    ``async_binding``: ``schedule_one`` stops after Permit and hands the binding cycle back on
    ``CycleResult.binding`` (live mode runs it on a worker, as kube-scheduler runs it in a goroutine); the
    simulator binds within ``schedule_one``."""

    def __init__(
        self,
        config: KubeSchedulerConfiguration,
        registry: Mapping[str, PluginFactory],
        actions: ClusterActions,
        snapshot: Snapshot,
        seed: int = 0,
        pdb_source: Callable[[], Sequence[BudgetStatus]] | None = None,
        tie_break: str = TIE_RANDOM,
        *,
        clock: Callable[[], float] = time.monotonic,
        cache: Cache | None = None,
        on_clear_nomination: Callable[[PodInfo], None] | None = None,
        storage: StorageObjects | None = None,
        async_binding: bool = False,
        dra: DraObjects | None = None,
    ) -> None:
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
        self.config = config
        self.tie_break = tie_break
        self._name_rank: IntArray | None = None
        self._rank_gen = -1
        self._names: NameArray | None = None
        self._names_gen = -1
        self._tie_orders: dict[str, TieOrder] = {}  # by tie_break (see _ties)
        self._snapshot = snapshot
        self.cache = cache if cache is not None else Cache(snapshot)
        if self.cache.snapshot is not snapshot:
            raise ValueError("the cache must keep the scheduler's snapshot")
        self.clock = clock
        self._on_clear_nomination = on_clear_nomination
        self.async_binding = async_binding
        self._actions = actions
        self._rng = np.random.default_rng(seed)
        self.nominator = Nominator()
        self._pdb_source = pdb_source
        self._storage = storage
        self._dra = dra
        self.next_start_node_index = 0
        # filter and score through each profile's equivalence cache where it decides the same (off: every cycle
        # filters and scores every node, as a check of the cache does)
        self.incremental = True
        # every cycle's ScoreResult names every Score plugin's scores (per_plugin, raw); off (the simulator and live
        # mode: only explained pods' scores are read, and they are scored in full), a cycle through the equivalence
        # cache may name only the plugins it scored anew and fold the class's kept scores into the totals
        # (Framework.run_score)
        self.score_details = True
        # upstream's scheduling cycle counter (the queue's, read by CurrentCycle): one per attempt, one per pod-group
        # cycle; opportunistic batching uses a batch only in the cycle right after the one that stored it
        self.scheduling_cycle = 0
        self._order: IntArray | None = None
        # the node order is the columns' own (no zones, one zone, or zones taking turns column by column)
        self._order_is_columns = False
        self._rotation: tuple[IntArray, int, IntArray] | None = None
        self._order_gen = -1
        self.frameworks: dict[str, Framework] = {}
        self._pod_add_hints: dict[str, AssignedPodAddPlugin] = {}
        self._waiting = WaitingPods()
        # binding cycles a PreBind plugin made wait: pod key -> (when to run PreBind again, the cycle, requeue)
        self._pre_bind_waits: dict[str, tuple[float, BindingCycle, bool]] = {}
        self._groups = {}
        self._gangs = PodGroupStates()
        self._pod_group_objects = {}
        self._activated_now = set()
        self._activated_instant = None
        self.last_pod_group_cycle = PodGroupCycleReport()
        self._pod_group_cycle = PodGroupCycle(self)
        self._use_config(config, registry)

    def set_config(self, config: KubeSchedulerConfiguration, registry: Mapping[str, PluginFactory]) -> None:
        """Schedule with ``config`` from now on (a what-if scenario's step), as a restarted kube-scheduler would:
        new profiles and plugins, the waiting pods in a new queue (their nominations kept). The caller replays
        the cluster's objects to the new plugins through :meth:`dispatch` as their informers would list them."""
        waiting = [qp.info for qp in self._queue.pods()]
        self._use_config(config, registry)
        self._order = None
        for info in waiting:
            fwk = self.framework_for(info)
            if fwk is None:
                self.nominator.clear(info)
                continue
            gate = fwk.run_pre_enqueue(info)
            self._queue.add(info, gate_reason="" if gate.ok else gate.message, gate_plugin=gate.plugin)

    def _use_config(self, config: KubeSchedulerConfiguration, registry: Mapping[str, PluginFactory]) -> None:
        """The profiles of ``config`` (one framework each) and an empty queue ordered and backed off as it says."""
        self.config = config
        self.frameworks = {
            profile.scheduler_name: Framework(profile, registry, self, config.source_file, i)
            for i, profile in enumerate(config.profiles)
        }
        self._queue = self._new_queue()
        self._pod_add_hints = {
            p.name: p
            for fwk in self.frameworks.values()
            for p in fwk.plugins.values()
            if isinstance(p, AssignedPodAddPlugin)
        }
        self._queue.hinted_plugins = frozenset(self._pod_add_hints)
        self._declared_events = {
            p.name: frozenset(events)
            for fwk in self.frameworks.values()
            for p in fwk.plugins.values()
            if (events := getattr(p, "queueing_events", None)) is not None
        }
        self._gate_events = {
            p.name: frozenset(events)
            for fwk in self.frameworks.values()
            for p in fwk.plugins.values()
            if (events := getattr(p, "pre_enqueue_events", None)) is not None
        }
        self._hints = {
            p.name: p
            for fwk in self.frameworks.values()
            for p in fwk.plugins.values()
            if isinstance(p, QueueingHintPlugin) and p.name in self._declared_events
        }

    # -- Handle -------------------------------------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def actions(self) -> ClusterActions:
        return self._actions

    @property
    def rng(self) -> np.random.Generator:
        return self._rng

    @property
    def kube_version(self) -> KubeVersion:
        return self.config.kube_version

    def nominated_pods(self, col: int) -> Sequence[PodInfo]:
        return self.nominator.on_node(col)

    def nominated_nodes(self) -> Sequence[int]:
        return self.nominator.nodes()

    def nominated_totals(self, pod: PodInfo, names: Sequence[str]) -> tuple[IntArray, IntArray] | None:
        return self.nominator.totals(pod, self._snapshot.n, names)

    def nominations_changed_since(self, pos: int) -> tuple[list[int] | None, int]:
        return self.nominator.changed_since(pos)

    def nominated_col(self, pod: PodInfo) -> int | None:
        return self.nominator.col_of(pod)

    def pdbs(self) -> Sequence[BudgetStatus]:
        return self._pdb_source() if self._pdb_source is not None else []

    def storage(self) -> StorageObjects | None:
        return self._storage

    def waiting_pods(self) -> list[WaitingPodView]:
        return list(self._waiting)

    def get_waiting_pod(self, key: str) -> WaitingPodView | None:
        return self._waiting.get(key)

    def dra(self) -> DraObjects | None:
        return self._dra

    def object_written(self, event: ClusterEvent) -> None:
        self.object_changed(event)

    def _new_queue(self) -> SchedulingQueue:
        """The scheduling queue, ordered by the first profile's QueueSort plugin (kube-scheduler requires every
        profile to use the same one), with the configuration's backoff."""
        first = next(iter(self.frameworks.values()))
        return SchedulingQueue(
            first.queue_sort.sort_key,
            float(self.config.pod_initial_backoff_seconds),
            float(self.config.pod_max_backoff_seconds),
            pop_from_backoff=self.config.kube_version.pop_from_backoff_q,
        )

    # -- assumed pods and nominations -----------------------------------------------------------------------

    def forget_assumed(self, pod: PodInfo, state: CycleState | None = None) -> None:
        """An attempt that failed after it assumed the pod: the pod no longer holds room (nothing when the pod
        was not assumed), and no longer counts as assumed in its pod group (1.36+, in the pod-group cycle's copy
        when ``state`` is one's)."""
        if self.cache.is_assumed(pod.key) and self.cache.get(pod.key) is pod:
            self.cache.forget(pod)
            group = self._cache_group(pod, state)
            if group is not None:
                group.forget(pod.key)

    def _assume(self, pod: PodInfo, node: str, state: CycleState) -> None:
        """Upstream ``assume``: the pod holds room on ``node`` (and is no longer nominated); in kube-scheduler
        1.36+ the cache counts it as assumed in its pod group, or the pod-group cycle's copy does."""
        self.nominator.clear(pod)
        self.cache.assume(pod, node)
        group = self._cache_group(pod, state)
        if group is not None:
            group.assume(pod)

    def _cache_group(self, pod: PodInfo, state: CycleState | None) -> PodGroupState | None:
        """The pod group the cache's assume and forget count the pod in (kube-scheduler 1.36+ with GenericWorkload;
        1.35's GangScheduling does it at Reserve): the pod-group cycle's copy when ``state`` is one's."""
        if pod.pod_group is None or not self.config.kube_version.pod_group_scheduling_cycle:
            return None
        cycle = state.read(POD_GROUP_CYCLE) if state is not None else None
        states: PodGroupStates = cycle if cycle is not None else self._gangs
        return states.get(pod.pod_group.key)

    def clear_nomination(self, pod: PodInfo) -> None:
        """The pod is no longer nominated (preemption made room on its node for a more important pod): out of the
        nominator, status.nominatedNodeName cleared, on the cluster too."""
        had = bool(pod.pod.nominated_node_name)
        self.nominator.clear(pod)
        pod.pod.nominated_node_name = ""
        if had and self._on_clear_nomination is not None:
            self._on_clear_nomination(pod)

    # -- the cycle ----------------------------------------------------------------------------------------

    def cycle_not_run(self) -> None:
        """An attempt decided without running its cycle (the simulator parking a pod tried again and again while
        nothing changed, live mode answering for a preemptor whose victims still terminate): upstream would have
        run a failing cycle, so the cycle counter moves as it would, and opportunistic batching does not reuse
        the batch of the cycle before across it."""
        self.scheduling_cycle += 1

    def node_order(self) -> IntArray:
        if self._order is None or self._order_gen != self._snapshot.node_generation:
            self._order = zone_interleaved_order(self._snapshot)
            self._order_gen = self._snapshot.node_generation
            self._order_is_columns = bool(np.array_equal(self._order, np.arange(len(self._order))))
        return self._order

    def schedule_one(self, pod: PodInfo, *, explain: bool = False, queued: QueuedPod | None = None) -> CycleResult:
        """One scheduling cycle for ``pod`` (and, unless binding is asynchronous or Permit makes it wait, its
        binding cycle). ``queued``: the queue's entry the pod was popped from, kept to send the pod back should it
        wait at Permit and be rejected there."""
        fwk = self.framework_for(pod)
        if fwk is None:
            raise KeyError(f"no profile has schedulerName {pod.pod.scheduler_name!r}")
        result = CycleResult(pod, fwk.name)
        state = CycleState()
        self.scheduling_cycle += 1
        chosen = self._schedule_pod(fwk, state, pod, result, explain)
        if chosen is None:
            return result
        return self._reserve_and_bind(fwk, state, pod, chosen, result, queued)

    # -- pod-group scheduling cycles (kube-scheduler 1.36+ with GenericWorkload: podgroup_cycle.py) ----------------

    def in_pod_group_cycle(self, pod: PodInfo) -> bool:
        """Whether the pod is scheduled with its group in one pod-group scheduling cycle (kube-scheduler 1.36+
        with GenericWorkload, a pod with ``spec.schedulingGroup``: upstream ScheduleOne's branch to
        scheduleOnePodGroup)."""
        return self._pod_group_cycle.applies_to(pod)

    def schedule_pod_group(
        self, first: QueuedPod, *, explain: frozenset[str] = frozenset()
    ) -> list[tuple[QueuedPod, CycleResult]]:
        """One pod-group scheduling cycle (upstream scheduleOnePodGroup, the default algorithm): ``first`` and every
        other unscheduled pod of its group that waits in the queue are taken out of it and tried one after the
        other (higher priority first, then the one that entered the queue first), each placed for the next ones
        to see (assumed, reserved and permitted in the cycle's copy of the group), then all taken back. When a
        pod's Permit passed (a gang: ``minCount`` pods placed), the group fits: each pod that found a node is
        assumed, reserved and permitted for real there and bound (or waits at Permit for the rest); otherwise
        every pod goes back to the queue, the placed ones with their Permit's message. A pod that needed
        preemption counts as placed on its nominated node; when the group would fit that way, every pod goes back
        and waits for the victims to leave. Failures are handled here (back through backoff); answers each pod's
        queue entry and result, in the cycle's order. ``explain``: the pods whose nodes' scores to keep."""
        members = self._pop_pod_group(first)
        results = [CycleResult(q.info, q.info.pod.scheduler_name) for q in members]
        self.last_pod_group_cycle = PodGroupCycleReport()
        self._pod_group_cycle.run(members, results, explain)
        return list(zip(members, results, strict=True))

    def _pop_pod_group(self, first: QueuedPod) -> list[QueuedPod]:
        """``first`` and every other unscheduled pod of its group that waits in the queue, taken out of it, in the
        pod-group cycle's order: higher priority first, then the one first let into the active queue first
        (upstream sorts by InitialAttemptTimestamp, which a pod held at PreEnqueue gets only when it is let in: the
        pod whose creation completes a gang is let in before the siblings its event wakes, and so comes first)."""
        ref = first.info.pod_group
        assert ref is not None
        members = [first]
        group = self._gangs.get(ref.key)
        for pod in group.unscheduled_pods() if group is not None else []:
            if pod.key != first.info.key:
                qp = self._queue.pop_specific(pod.key)
                if qp is not None:
                    members.append(qp)
        members.sort(key=lambda q: (-q.info.priority, _first_active(q.info), q.info.arrival))
        return members

    def _schedule_pod(
        self, fwk: Framework, state: CycleState, pod: PodInfo, result: CycleResult, explain: bool
    ) -> int | None:
        """Upstream schedulingAlgorithm: PreFilter, Filter, PostFilter when nothing fits, PreScore, Score and the
        choice of a node (its column; ``result.node`` names it), or None with ``result`` saying why."""
        snap = self._snapshot
        if snap.n == 0:
            result.status = Status(Code.UNSCHEDULABLE, ["no nodes available to schedule pods"])
            return None
        try:
            feasible, diagnosis = self._find_nodes_that_fit(fwk, state, pod, result, explain)
        except PluginError as exc:  # a filter's Error (upstream: the cycle fails with it, no PostFilter)
            result.status = Status.error(str(exc))
            result.diagnosis = Diagnosis.all_rejected(snap.n, result.status)
            return None
        result.diagnosis = diagnosis
        if explain:
            result.node_details = fwk.node_details(state)
        if len(feasible) == 0:
            if diagnosis.pre_filter_status is not None and diagnosis.pre_filter_status.code == Code.ERROR:
                result.status = diagnosis.pre_filter_status
                return None
            if not self._pod_group_post_filter_instead(state):
                post = fwk.run_post_filter(state, pod, diagnosis)
                diagnosis.post_filter_msg = post.status.message
                result.nominated_node = post.nominated_node
            result.status = Status(Code.UNSCHEDULABLE, [diagnosis.message()])
            return None
        result.sampled = feasible
        if len(feasible) == 1 or result.used_nominated_node or result.used_batch_hint:
            chosen = int(feasible[0])  # nothing is scored
            self._store_schedule_results(fwk, result, chosen, None)
        else:
            st = fwk.run_pre_score(state, pod, feasible)
            if not st.ok:
                result.status = st
                return None
            try:
                # every plugin's scores when someone reads them; the batch keeps the raw scores of a signed pod
                raw = fwk.batch is not None and result.signature is not None
                scores = fwk.run_score(state, pod, feasible, details=self.score_details, raw=raw)
            except PluginError as exc:
                result.status = Status.error(str(exc))
                return None
            result.scores = scores
            chosen, rest = self._choose(fwk, scores, feasible, result)
            self._store_schedule_results(fwk, result, chosen, rest)
        if explain:
            self._explain_scores(fwk, state, pod, result, diagnosis)
        result.node = snap.nodes[chosen].name
        return chosen

    def _pod_group_post_filter_instead(self, state: CycleState) -> bool:
        """kube-scheduler 1.37+: a pod of a pod-group cycle runs no PostFilter (the group's PodGroupPostFilter runs
        once, podgroup_placement.py)."""
        return self.config.kube_version.pod_group_placement_cycle and state.read(POD_GROUP_CYCLE) is not None

    def _find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: PodInfo, result: CycleResult, explain: bool
    ) -> tuple[IntArray, Diagnosis]:
        snap = self._snapshot
        n = snap.n
        st = fwk.run_pre_filter(state, pod)
        if not st.ok:
            return np.zeros(0, dtype=np.int64), Diagnosis.all_rejected(n, st)
        # the nominated node, or else the batch's hint, is tried alone first
        hint = self._node_hint(fwk, state, pod, result)
        nominated = pod.pod.nominated_node_name or hint
        if nominated and nominated in snap.index:
            col = snap.index[nominated]
            ok, _groups = fwk.run_filters_with_nominated(state, pod, np.array([col], dtype=np.intp))
            if ok[0]:
                # The nominated node still fits: kube-scheduler takes it without looking at other nodes.
                result.used_nominated_node = nominated == pod.pod.nominated_node_name
                result.used_batch_hint = not result.used_nominated_node
                if explain:  # report every node's verdict; decides nothing
                    alive, groups = fwk.run_filters_with_nominated(state, pod, slice(None))
                    return np.array([col], dtype=np.int64), Diagnosis(n, alive, groups)
                return np.array([col], dtype=np.int64), Diagnosis(n, _hot(n, col))
        order = self.node_order()
        k = num_feasible_nodes_to_find(
            fwk.profile.percentage_of_nodes_to_score
            if fwk.profile.percentage_of_nodes_to_score is not None
            else self.config.percentage_of_nodes_to_score,
            n,
        )
        start = self.next_start_node_index % n
        cached: BoolArray | None = None
        if self.incremental and not explain and not self.nominator.any():
            # no pod is nominated anywhere (so none is added to any node) and no reasons wanted when it fits
            if k < n:
                # the first k feasible nodes only: the filters outside the pod's class stop once k pass
                found, processed = fwk.run_filters_cached_first(
                    state, pod, None if self._order_is_columns else order, start, k
                )
                if len(found):
                    self.next_start_node_index = (start + processed) % n
                    # what the cycle knows: the nodes it found (the others were not all filtered)
                    return found.astype(np.int64, copy=False), Diagnosis(n, _hot(n, found))
                state.pod_class = None  # it fits nowhere: filter again in full for the FitError's reasons
            else:
                cached = fwk.run_filters_cached(state, pod)
                if not cached.any():  # it fits nowhere: filter again in full for the FitError's reasons
                    cached = state.pod_class = None
        if cached is not None:
            alive = cached
            diagnosis = Diagnosis(n, alive)
        else:
            alive, groups = fwk.run_filters_with_nominated(state, pod, slice(None))
            diagnosis = Diagnosis(n, alive, [], None, "", set())
            for g in groups:
                diagnosis.groups.append(g)
                diagnosis.unschedulable_plugins.add(g.plugin)
        found, processed = self._feasible_in_order(alive, order, start, k)
        self.next_start_node_index = (start + processed) % n
        return found.astype(np.int64, copy=False), diagnosis

    def _feasible_in_order(self, alive: BoolArray, order: IntArray, start: int, k: int) -> tuple[IntArray, int]:
        """The first ``k`` feasible nodes (all of them when ``k`` is at least the node count) in the node order
        rotated to ``start``, and how many nodes of that order were looked at to find them."""
        n = len(alive)
        if k >= n:  # every node is looked at: the feasible ones in the rotated order
            if self._order_is_columns:  # the order is the columns': rotated by slicing (no gather)
                return rotated_feasible(alive, start), n
            rotated = self._rotated_order(order, start)
            # take + compress: a boolean mask over an order that jumps between columns reads ~2x slower
            return rotated.compress(alive.take(rotated)), n
        return first_feasible(alive, None if self._order_is_columns else order, start, k)

    def _rotated_order(self, order: IntArray, start: int) -> IntArray:
        """The node order from ``start`` round: kept while neither changes (with every node scored, the start
        stays where it is from one cycle to the next)."""
        kept = self._rotation
        if kept is None or kept[0] is not order or kept[1] != start:
            kept = self._rotation = (order, start, np.concatenate([order[start:], order[:start]]))
        return kept[2]

    def _explain_scores(
        self, fwk: Framework, state: CycleState, pod: PodInfo, result: CycleResult, diagnosis: Diagnosis
    ) -> None:
        """What ``explain`` shows beyond the decision: the scores of the feasible nodes the cycle did not score
        (one feasible node, the nominated node taken, or nodes past percentageOfNodesToScore), in a pass of their
        own on a copy of the cycle state, the scheduler's random generator put back after it. The decision,
        made above exactly as without ``explain``, is untouched: explain never contradicts simulate."""
        scored = result.scores.cols if result.scores is not None else np.zeros(0, dtype=np.int64)
        rest = np.setdiff1d(np.flatnonzero(diagnosis.feasible), scored).astype(np.int64)
        if len(rest) == 0:
            return
        saved = self._rng.bit_generator.state
        try:
            side = state.clone()
            if not fwk.run_pre_score(side, pod, rest).ok:
                return
            result.unsampled_scores = fwk.run_score(side, pod, rest)
        except PluginError:
            return
        finally:
            self._rng.bit_generator.state = saved

    # -- opportunistic batching (kube-scheduler 1.35+, framework/batch.py) ----------------------------------------

    def _node_hint(self, fwk: Framework, state: CycleState, pod: PodInfo, result: CycleResult) -> str:
        """The profile's batch hint for the pod (after PreFilter, as upstream's GetNodeHint), "" when there is none
        or the profile does not batch. Asked for a pod with a nominated node too: 1.35-1.36 take the hint out of
        the list all the same (and try the nominated node), 1.37's batch answers none."""
        batch = fwk.batch
        if batch is None:
            return ""
        result.signature = fwk.sign_pod(pod)
        result.batch_hint = batch.get_node_hint(
            fwk, state, pod, result.signature, self.scheduling_cycle, self.clock(), self._snapshot.index, self._ties()
        )
        return result.batch_hint

    def _ties(self) -> TieOrder:
        """How a batch orders nodes with equal totals: by name with ``TIE_NAME``; otherwise a key drawn per node
        from the seeded generator (upstream's per-node Randomizer), which makes the first of them uniformly
        random. One object per tie-break, made once (its functions read the names and the generator when
        called)."""
        ties = self._tie_orders.get(self.tie_break)
        if ties is None:
            if self.tie_break == TIE_NAME:
                ties = TieOrder(self._name_tie_keys, per_node=True)
            else:
                ties = TieOrder(self._draw_ties, per_node=False)
            self._tie_orders[self.tie_break] = ties
        return ties

    def _name_tie_keys(self, cols: IntArray) -> FloatArray:
        out: FloatArray = self._name_ranks()[cols].astype(np.float64)
        return out

    def _draw_ties(self, cols: IntArray) -> FloatArray:
        return self._rng.random(len(cols))

    def _choose(
        self, fwk: Framework, scores: ScoreResult, candidates: IntArray, result: CycleResult
    ) -> tuple[int, SortedNodes | None]:
        """The scored cycle's node. When the batch may use this cycle later (a signed pod), the scores are sorted
        with a tie key per node and the rest kept for the batch; otherwise selectHost as before batching (the
        same draws from the generator)."""
        if fwk.batch is None or result.signature is None:
            return self._select_host(scores, candidates), None
        return sort_scored(
            self._node_names(), scores.cols, scores.totals, scores.raw, self._ties(), self._snapshot.index
        )

    def _store_schedule_results(
        self, fwk: Framework, result: CycleResult, chosen: int, rest: SortedNodes | None
    ) -> None:
        batch = fwk.batch
        if batch is None:
            return
        node = self._snapshot.nodes[chosen].name
        batch.store_schedule_results(
            result.signature, result.batch_hint, node, rest, self.scheduling_cycle, self.clock()
        )

    def _select_host(self, scores: ScoreResult, candidates: IntArray) -> int:
        """The highest total among the sampled nodes; ties broken uniformly with the seeded generator."""
        tied = best_scored(scores, candidates)
        if len(tied) == 1:
            pick = int(tied[0])
        elif self.tie_break == TIE_NAME:
            pick = int(tied[int(np.argmin(self._name_ranks()[scores.cols[tied]]))])
        else:
            pick = int(tied[int(self._rng.integers(len(tied)))])
        return int(scores.cols[pick])

    def _node_names(self) -> NameArray:
        """The snapshot's node names by column, as an array (kept while the nodes do not change)."""
        snap = self._snapshot
        if self._names is None or self._names_gen != snap.node_generation or len(self._names) != snap.n:
            self._names = np.array([n.name for n in snap.nodes], dtype=object)
            self._names_gen = snap.node_generation
        return self._names

    def _name_ranks(self) -> IntArray:
        snap = self._snapshot
        if self._name_rank is None or self._rank_gen != snap.node_generation:
            names = [n.name for n in snap.nodes]
            rank = np.empty(len(names), dtype=np.int64)
            rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
            self._name_rank = rank
            self._rank_gen = snap.node_generation
        return self._name_rank

    def _reserve_and_bind(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        col: int,
        result: CycleResult,
        queued: QueuedPod | None = None,
    ) -> CycleResult:
        node = self._snapshot.nodes[col].name
        self._assume(pod, node, state)
        st = fwk.run_reserve(state, pod, node)  # unreserves by itself on failure
        if not st.ok:
            return self._undo(fwk, state, pod, node, result, chosen_node_fit_error(st), reserved=False)
        st, waits = fwk.run_permit(state, pod, node)
        job = BindingCycle(fwk, state, pod, node, result, queued)
        if st.code == Code.WAIT:
            # assumed and reserved, held at Permit: bound once allowed (settle_waiting)
            self._waiting.add(pod, node, waits, self.clock(), job)
            result.waiting = True
            st.plugin = ", ".join(waits)
            result.status = st
            return result
        if not st.ok:
            return self._undo(fwk, state, pod, node, result, chosen_node_fit_error(st), reserved=True)
        if self.async_binding:
            result.binding = job
            return result
        return self._bind_or_wait(job, requeue=False)

    def _bind_or_wait(self, job: BindingCycle, *, requeue: bool) -> CycleResult:
        """The binding cycle, on the scheduling thread (the simulator): a PreBind plugin that answers Wait (device
        binding conditions not met yet) holds the pod, assumed and reserved, and PreBind runs again after
        PRE_BIND_RETRY_S (:meth:`settle_waiting`), as upstream's PreBind polls; any other answer ends the cycle.
        A cycle that ends later sends a failed pod back to the queue itself."""
        st = self.run_binding_cycle(job)
        if st.code == Code.WAIT:
            self._pre_bind_waits[job.pod.key] = (self.clock() + PRE_BIND_RETRY_S, job, True)
            job.result.waiting = job.result.waiting_in_pre_bind = True
            job.result.status = st
            return job.result
        job.result.waiting = job.result.waiting_in_pre_bind = False
        return self.finish_binding_cycle(job, st, requeue=requeue)

    def _forget_pre_bind_wait(self, key: str) -> None:
        """The pod was deleted while PreBind made it wait: its binding cycle ends (Unreserve)."""
        held = self._pre_bind_waits.pop(key, None)
        if held is not None:
            _due, job, _requeue = held
            job.fwk.run_unreserve(job.state, job.pod, job.node)

    @staticmethod
    def run_binding_cycle(job: BindingCycle) -> Status:
        """PreBind and Bind. It reads and writes no state of the scheduler (plugins at these points talk to the
        cluster), so live mode runs it on a worker thread while the next pods are scheduled."""
        fwk, state, pod, node = job.fwk, job.state, job.pod, job.node
        st = fwk.run_pre_bind(state, pod, node)
        if st.ok:
            st = fwk.run_bind(state, pod, node)
        return st if not st.ok else Status()

    def finish_binding_cycle(self, job: BindingCycle, st: Status, *, requeue: bool = False) -> CycleResult:
        """Back on the scheduling thread: after a bind, the TTL starts and PostBind runs; after a failure the pod
        is unreserved and forgotten, and its room is free again for the pods that did not fit (upstream
        ``handleBindingCycleError``: an AssignedPodDelete move). ``requeue``: the pod is sent back to the queue
        here (its driver has moved on: it waited at Permit)."""
        fwk, state, pod, node, result = job.fwk, job.state, job.pod, job.node, job.result
        result.binding = None
        if not st.ok:
            self._undo(fwk, state, pod, node, result, st, reserved=True)
            self.move_all(ASSIGNED_POD_DELETE)
            if requeue:
                self._send_back(job, result)
            return result
        self.cache.finish_binding(pod, self.clock())
        fwk.run_post_bind(state, pod, node)
        return result

    # -- pods waiting at Permit ---------------------------------------------------------------------------------

    def next_permit_deadline(self) -> float | None:
        """When the first wait at Permit times out, or a binding cycle waiting in PreBind is to run PreBind again
        (on the scheduler's clock), or None."""
        times = [due for due, _job, _requeue in self._pre_bind_waits.values()]
        deadline = self._waiting.next_deadline()
        if deadline is not None:
            times.append(deadline)
        return min(times) if times else None

    def settle_waiting(self) -> list[CycleResult]:
        """End the waits at Permit that ended since the last call, and those whose time is up by the clock: an
        allowed pod's binding cycle runs (or, with asynchronous binding, is handed back on the result's
        ``binding``); a rejected pod is unreserved and forgotten, and goes back to the queue (upstream
        ``handleBindingCycleError``). Answers one result per pod, in the order their waits ended."""
        if not self._pre_bind_waits and self._waiting.idle():
            return []  # the common case: nothing waits (this runs twice per cycle)
        self._waiting.expire(self.clock())
        out: list[CycleResult] = []
        while self._waiting.has_settled():
            for wp in self._waiting.take_settled():
                result = self._settle(wp)
                if not result.waiting_in_pre_bind:
                    out.append(result)
        if not self._pre_bind_waits:  # the common case: nothing waits in PreBind (this runs after every cycle)
            return out
        now = self.clock()
        for key, (due, job, requeue) in sorted(self._pre_bind_waits.items(), key=lambda kv: (kv[1][0], kv[0])):
            if due <= now:
                del self._pre_bind_waits[key]
                result = self._bind_or_wait(job, requeue=requeue)
                if not result.waiting_in_pre_bind:
                    out.append(result)
        return out

    def _settle(self, wp: WaitingPod) -> CycleResult:
        job = wp.binding
        assert isinstance(job, BindingCycle)
        st = wp.outcome if wp.outcome is not None else Status()
        result = job.result
        result.waiting = False
        if st.ok:
            if self.async_binding:
                result.binding = job
                return result
            return self._bind_or_wait(job, requeue=True)
        fwk, state, pod, node = job.fwk, job.state, job.pod, job.node
        fwk.run_unreserve(state, pod, node)
        self.forget_assumed(pod, state)
        self._refused(result, chosen_node_fit_error(st))
        if wp.gone:  # deleted while it waited: its room was freed then, nothing goes back
            return result
        if st.code == Code.ERROR:  # preempted while waiting (1.36+): an error, back to backoff
            result.status = Status(Code.ERROR, [f"waiting on permit for pod: {st.message}"], st.plugin)
            result.refused_after_filters = result.status
            self.move_all(ASSIGNED_POD_DELETE)
            self._send_back(job, result)
        else:
            self._send_back(job, result)
            # its room is free again: every other unschedulable pod is tried again (not the pod itself)
            self._queue.move_all(self.clock(), keep=pod.key, stay=self._deaf_to(ASSIGNED_POD_DELETE))
        return result

    @staticmethod
    def _refused(result: CycleResult, st: Status) -> None:
        """The chosen node was refused after the filters (Reserve, Permit, the binding cycle): the pod is not
        placed and its condition says ``st`` (``rejected_on_node`` then tells the queue which plugin rejected
        it)."""
        result.node = None
        result.status = st
        result.refused_after_filters = st

    def _send_back(self, job: BindingCycle, result: CycleResult) -> None:
        if job.queued is not None:
            self.handle_failure(job.queued, result)
        else:
            self.requeue(job.pod)

    def release(self, job: BindingCycle) -> None:
        """Take a scheduling cycle's choice back before its binding cycle runs: Unreserve, and the assumed pod is
        forgotten (a replay of a record follows the recorded decision where it differs from its own)."""
        job.fwk.run_unreserve(job.state, job.pod, job.node)
        self.forget_assumed(job.pod, job.state)
        job.result.node = None
        job.result.binding = None

    def reserve_instead(self, job: BindingCycle, node: str) -> CycleResult:
        """End the cycle of ``job`` on ``node`` rather than on its own choice: released there, then assumed,
        reserved and permitted on ``node``; the result's ``binding`` is the new binding cycle (None, and the
        result unscheduled, when Reserve or Permit refused)."""
        self.release(job)
        job.result.node = node
        return self._reserve_and_bind(job.fwk, job.state, job.pod, self._snapshot.index[node], job.result)

    def _undo(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        node: str,
        result: CycleResult,
        st: Status,
        reserved: bool,
    ) -> CycleResult:
        if reserved:
            fwk.run_unreserve(state, pod, node)
        self.forget_assumed(pod, state)
        self._refused(result, st)
        return result


def _first_active(pod: PodInfo) -> int:
    return pod.first_active if pod.first_active is not None else -1  # upstream: a nil timestamp is the zero time


def _hot(n: int, cols: int | IntArray) -> BoolArray:
    """``n`` verdicts, True at ``cols`` (a column or an array of them)."""
    out = np.zeros(n, dtype=bool)
    out[cols] = True
    return out
