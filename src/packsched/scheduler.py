"""schedule_one: one scheduling cycle (and binding cycle) for one pod, as kube-scheduler runs it.

PreFilter -> Filter (every node at once; the nominated node first) -> PostFilter (preemption) when nothing fits
-> PreScore -> Score -> selectHost (seeded tie-break) -> assume -> Reserve -> Permit -> PreBind -> Bind -> PostBind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from packsched.api.objects import PodDisruptionBudget
from packsched.backend.disruption import BudgetStatus
from packsched.backend.nominator import Nominator
from packsched.backend.queue import SchedulingQueue
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.interface import ClusterActions, ClusterEvent
from packsched.framework.runtime import Framework, PluginFactory, ScoreResult
from packsched.framework.snapshot import BoolArray, IntArray, PodInfo, Snapshot
from packsched.framework.status import Code, PluginError, Status

MIN_FEASIBLE_NODES_TO_FIND = 100
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

    @property
    def scheduled(self) -> bool:
        return self.node is not None

    @property
    def message(self) -> str:
        if self.diagnosis is not None and not self.scheduled and self.status.code != Code.ERROR:
            return self.diagnosis.message()
        return self.status.message


def zone_interleaved_order(snap: Snapshot) -> IntArray:
    """kube-scheduler lists nodes zone by zone, round robin (zones in order of first appearance)."""
    zones: dict[str, list[int]] = {}
    for col, node in enumerate(snap.nodes):
        region = next((node.labels[k] for k in REGION_LABELS if k in node.labels), "")
        zone = next((node.labels[k] for k in ZONE_LABELS if k in node.labels), "")
        zones.setdefault(f"{region}:\x00:{zone}" if region or zone else "", []).append(col)
    order: list[int] = []
    lists = list(zones.values())
    depth = max((len(v) for v in lists), default=0)
    for i in range(depth):
        order.extend(v[i] for v in lists if i < len(v))
    return np.asarray(order, dtype=np.intp)


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


class Scheduler:
    """The scheduler shared by the simulator and the live adapter. It is also the plugins' Handle."""

    def __init__(
        self,
        config: KubeSchedulerConfiguration,
        registry: Mapping[str, PluginFactory],
        actions: ClusterActions,
        snapshot: Snapshot,
        seed: int = 0,
        pdb_source: Callable[[], Sequence[BudgetStatus]] | None = None,
        tie_break: str = TIE_RANDOM,
    ) -> None:
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
        self.config = config
        self.tie_break = tie_break
        self._name_rank: IntArray | None = None
        self._rank_gen = -1
        self._snapshot = snapshot
        self._actions = actions
        self._rng = np.random.default_rng(seed)
        self.nominator = Nominator()
        self._pdb_source = pdb_source
        self.next_start_node_index = 0
        self._order: IntArray | None = None
        self._order_gen = -1
        self.frameworks: dict[str, Framework] = {}
        for i, profile in enumerate(config.profiles):
            self.frameworks[profile.scheduler_name] = Framework(profile, registry, self, config.source_file, i)

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

    def nominated_pods(self, col: int) -> Sequence[PodInfo]:
        return self.nominator.on_node(col)

    def nominated_nodes(self) -> Sequence[int]:
        return self.nominator.nodes()

    def clear_nomination(self, pod: PodInfo) -> None:
        self.nominator.clear(pod)
        pod.pod.nominated_node_name = ""

    def pdbs(self) -> Sequence[BudgetStatus]:
        return self._pdb_source() if self._pdb_source is not None else []

    def pdb_objects(self) -> list[PodDisruptionBudget]:
        return [b.pdb for b in self.pdbs()]

    def new_queue(self) -> SchedulingQueue:
        """The scheduling queue, ordered by the first profile's QueueSort plugin (kube-scheduler requires every
        profile to use the same one), with the configuration's backoff."""
        first = next(iter(self.frameworks.values()))
        sort_key = getattr(first.queue_sort, "sort_key", None)
        if sort_key is None:
            raise ValueError(f"queue sort plugin {first.queue_sort.name!r} has no sort key")
        return SchedulingQueue(
            sort_key, float(self.config.pod_initial_backoff_seconds), float(self.config.pod_max_backoff_seconds)
        )

    def dispatch(self, event: ClusterEvent) -> None:
        """A cluster change (a pod bound, deleted or finished; a quota added, ...), for every profile's plugins.
        The simulator and the live adapter call it as kube-scheduler's informers would."""
        for fwk in self.frameworks.values():
            fwk.dispatch(event)

    # -- the cycle ----------------------------------------------------------------------------------------

    def framework_for(self, pod: PodInfo) -> Framework | None:
        return self.frameworks.get(pod.pod.scheduler_name)

    def node_order(self) -> IntArray:
        if self._order is None or self._order_gen != self._snapshot.node_generation:
            self._order = zone_interleaved_order(self._snapshot)
            self._order_gen = self._snapshot.node_generation
        return self._order

    def schedule_one(self, pod: PodInfo, *, explain: bool = False) -> CycleResult:
        fwk = self.framework_for(pod)
        if fwk is None:
            raise KeyError(f"no profile has schedulerName {pod.pod.scheduler_name!r}")
        result = CycleResult(pod, fwk.name)
        snap = self._snapshot
        state = CycleState()
        if snap.n == 0:
            result.status = Status(Code.UNSCHEDULABLE, ["no nodes available to schedule pods"])
            return result
        feasible, diagnosis = self._find_nodes_that_fit(fwk, state, pod, result, explain)
        result.diagnosis = diagnosis
        if len(feasible) == 0:
            if diagnosis.pre_filter_status is not None and diagnosis.pre_filter_status.code == Code.ERROR:
                result.status = diagnosis.pre_filter_status
                return result
            post = fwk.run_post_filter(state, pod, diagnosis)
            diagnosis.post_filter_msg = post.status.message
            result.nominated_node = post.nominated_node
            result.status = Status(Code.UNSCHEDULABLE, [diagnosis.message()])
            return result
        result.sampled = feasible
        if (len(feasible) == 1 or result.used_nominated_node) and not explain:
            chosen = int(feasible[0])
        else:
            to_score = feasible
            if explain and diagnosis is not None:
                to_score = np.flatnonzero(diagnosis.feasible).astype(np.int64)
            st = fwk.run_pre_score(state, pod, to_score)
            if not st.ok:
                result.status = st
                return result
            try:
                scores = fwk.run_score(state, pod, to_score)
            except PluginError as exc:
                result.status = Status.error(str(exc))
                return result
            result.scores = scores
            if len(feasible) == 1 or result.used_nominated_node:
                chosen = int(feasible[0])
            else:
                chosen = self._select_host(scores, feasible)
        result.node = snap.nodes[chosen].name
        return self._reserve_and_bind(fwk, state, pod, chosen, result)

    def _find_nodes_that_fit(
        self, fwk: Framework, state: CycleState, pod: PodInfo, result: CycleResult, explain: bool
    ) -> tuple[IntArray, Diagnosis]:
        snap = self._snapshot
        n = snap.n
        st = fwk.run_pre_filter(state, pod)
        if not st.ok:
            return np.zeros(0, dtype=np.int64), Diagnosis.all_rejected(n, st)
        nominated = pod.pod.nominated_node_name
        if nominated and nominated in snap.index:
            col = snap.index[nominated]
            ok, _groups = fwk.run_filters_with_nominated(state, pod, np.array([col], dtype=np.intp))
            if ok[0]:
                # The nominated node still fits: kube-scheduler takes it without looking at other nodes.
                result.used_nominated_node = True
                if explain:  # report every node's verdict; decides nothing
                    alive, groups = fwk.run_filters_with_nominated(state, pod, slice(None))
                    return np.array([col], dtype=np.int64), Diagnosis(n, alive, groups)
                return np.array([col], dtype=np.int64), Diagnosis(n, _one_hot(n, col))
        alive, groups = fwk.run_filters_with_nominated(state, pod, slice(None))
        diagnosis = Diagnosis(n, alive, [], None, "", set())
        for g in groups:
            diagnosis.groups.append(g)
            diagnosis.unschedulable_plugins.add(g.plugin)
        order = self.node_order()
        k = num_feasible_nodes_to_find(
            fwk.profile.percentage_of_nodes_to_score
            if fwk.profile.percentage_of_nodes_to_score is not None
            else self.config.percentage_of_nodes_to_score,
            n,
        )
        start = self.next_start_node_index % n
        rotated = np.concatenate([order[start:], order[:start]])
        hits = np.flatnonzero(alive[rotated])
        if len(hits) >= k and k < n:
            hits = hits[:k]
            processed = int(hits[-1]) + 1
        else:
            processed = n
        self.next_start_node_index = (start + processed) % n
        return rotated[hits].astype(np.int64), diagnosis

    def _select_host(self, scores: ScoreResult, candidates: IntArray) -> int:
        """The highest total among the sampled nodes; ties broken uniformly with the seeded generator."""
        if scores.cols is candidates:
            totals = scores.totals
        else:  # explain scored every feasible node; only the sampled ones may be chosen
            totals = np.where(np.isin(scores.cols, candidates), scores.totals, np.iinfo(np.int64).min)
        best = totals.max()
        tied = np.flatnonzero(totals == best)
        if len(tied) == 1:
            pick = int(tied[0])
        elif self.tie_break == TIE_NAME:
            pick = int(tied[int(np.argmin(self._name_ranks()[scores.cols[tied]]))])
        else:
            pick = int(tied[int(self._rng.integers(len(tied)))])
        return int(scores.cols[pick])

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
        self, fwk: Framework, state: CycleState, pod: PodInfo, col: int, result: CycleResult
    ) -> CycleResult:
        snap = self._snapshot
        node = snap.nodes[col].name
        self.nominator.clear(pod)
        snap.add_pod(pod, col)  # assume
        st = fwk.run_reserve(state, pod, node)  # unreserves by itself on failure
        if not st.ok:
            return self._undo(fwk, state, pod, node, result, st, reserved=False)
        for step in (fwk.run_permit, fwk.run_pre_bind, fwk.run_bind):
            st = step(state, pod, node)
            if not st.ok:
                return self._undo(fwk, state, pod, node, result, st, reserved=True)
        fwk.run_post_bind(state, pod, node)
        return result

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
        if pod.node >= 0:
            self._snapshot.remove_pod(pod)
        result.node = None
        result.status = st
        return result


def _one_hot(n: int, col: int) -> BoolArray:
    out = np.zeros(n, dtype=bool)
    out[col] = True
    return out
