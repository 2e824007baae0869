"""DefaultPreemption: when a pod fits no node, evict lower-priority pods from one node so that it can run
there.

The same algorithm as kube-scheduler's ``pkg/scheduler/framework/preemption`` Evaluator together with its
``defaultpreemption`` plugin:

1. The pod must be eligible (``preemptionPolicy`` is not ``Never``; no victim of an earlier preemption still
   terminating on its nominated node).
2. Only nodes the filters rejected as ``Unschedulable`` (not ``UnschedulableAndUnresolvable``) are dry-run,
   starting at a random offset, until enough candidates are found (``minCandidateNodesPercentage`` /
   ``minCandidateNodesAbsolute``, and at least one candidate that violates no PodDisruptionBudget).
3. On each node: remove every lower-priority pod; if the pod still does not fit, the node is no candidate.
   Otherwise add the pods back, the most important first (PDB-violating ones before the others), keeping each
   one that still lets the pod fit; the rest are the victims.
4. The best candidate: fewest PDB violations, then lowest highest victim priority, lowest sum of priorities,
   fewest victims, latest start of the highest-priority victims, then the first one.
5. Its victims are evicted, lower-priority pods nominated to that node lose their nomination, and the pod is
   nominated to the node.

The dry run removes and re-adds pods in the shared snapshot (and always restores it), so the filters judge
exactly the node as it would be without those pods. With no PreFilter AddPod/RemovePod extensions active (the
in-tree profile), it works on a chunk of nodes at once: one filter call over the whole chunk per step instead
of one per node and step; otherwise, one node at a time with its own copy of the cycle state, as upstream.
Both give the same candidates, statuses and messages.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from packsched.api.objects import PREEMPT_NEVER, Node
from packsched.config.types import DefaultPreemptionArgs, PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import NO_NODE_AVAILABLE, Diagnosis, RejectGroup
from packsched.framework.interface import BudgetView, Handle, PostFilterResult, PreFilterExtensions
from packsched.framework.runtime import Framework
from packsched.framework.snapshot import IntArray, PodInfo
from packsched.framework.status import Code, Status

NAME = "DefaultPreemption"

MSG_PREFIX = "preemption: "
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NO_CANDIDATE = "no candidate node for preemption"
NO_NODES = "no nodes available"

# pickOneNodeForPreemption adds MaxInt32+1 to every priority before summing, so that a node with a few
# negative-priority victims is not preferred over a node with fewer victims of the same negative priority.
_PRIORITY_SHIFT = 2**31

# Nodes the batched dry run adds at a time once it holds fewer candidates than it needs (upstream's
# parallelism).
_MIN_CHUNK = 16

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


@dataclass
class Candidate:
    """A node the pod can be nominated to, with the pods to evict there (most important first)."""

    name: str
    col: int
    victims: list[PodInfo]
    num_pdb_violations: int = 0


@dataclass
class DryRunResult:
    """What the dry run found: candidates (non-violating ones first), the status of every node it looked at
    and could not use (by column, in the order it looked), and the errors it met."""

    candidates: list[Candidate]
    statuses: dict[int, Status]
    errors: list[str]


def more_important_pod(a: PodInfo, b: PodInfo) -> bool:
    """Upstream util.MoreImportantPod: higher priority, then the one that started earlier."""
    if a.priority != b.priority:
        return a.priority > b.priority
    return a.start_key < b.start_key


def importance_key(p: PodInfo) -> tuple[int, tuple[float, int]]:
    """A sort key that puts the more important pod first (the order ``more_important_pod`` defines)."""
    return (-p.priority, p.start_key)


def pod_terminating_by_preemption(info: PodInfo) -> bool:
    """Upstream podTerminatingByPreemption: the pod has a deletion timestamp and a DisruptionTarget condition
    with reason PreemptionByScheduler.

    packsched evicts victims at once (the simulator removes them from the cluster in the same cycle), so no
    pod is ever in its graceful termination period and this is always False. When terminating pods are
    modelled (a ``deletion_timestamp`` and conditions on Pod, or a terminating flag on PodInfo), this is the
    one place to change."""
    return False


def filter_pods_with_pdb_violation(
    pods: Sequence[PodInfo], pdbs: Sequence[BudgetView]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split ``pods`` (kept in order) into those whose eviction would violate a PodDisruptionBudget and the
    others. Every matching budget is charged for each pod in turn, so the second pod of a budget that allows
    one disruption violates it. (Upstream also skips pods listed in a budget's ``status.disruptedPods``:
    packsched's budgets have no such list, as evictions complete at once.)"""
    allowed = [b.disruptions_allowed for b in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for p in pods:
        violated = False
        if p.pod.labels:  # upstream: a pod without labels matches no PDB
            for i, budget in enumerate(pdbs):
                if not budget.matches(p):
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(p)
    return violating, non_violating


def _earliest_start_of_highest_priority(victims: Sequence[PodInfo]) -> tuple[float, int]:
    """Upstream util.GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    earliest = victims[0].start_key
    top = victims[0].priority
    for p in victims:
        if p.priority == top:
            earliest = min(earliest, p.start_key)
        elif p.priority > top:
            top = p.priority
            earliest = p.start_key
    return earliest


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> Candidate | None:
    """Upstream pickOneNodeForPreemption with its default score functions, applied in order while several
    candidates share the best score: fewest PDB violations; lowest highest-priority victim; lowest sum of
    (shifted) victim priorities; fewest victims; latest earliest-start among the highest-priority victims;
    then the first candidate left (upstream iterates a Go map there, so its pick is arbitrary; packsched keeps
    the dry run's order, which starts at the seeded random offset)."""
    if not candidates:
        return None
    score_funcs: list[Callable[[Candidate], float | tuple[float, int]]] = [
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(p.priority + _PRIORITY_SHIFT for p in c.victims),
        lambda c: -len(c.victims),
        lambda c: _earliest_start_of_highest_priority(c.victims),
    ]
    remaining = list(candidates)
    for f in score_funcs:
        scores = [f(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores, strict=True) if s == best]
        if len(remaining) == 1:
            return remaining[0]
    return remaining[0]


def fit_error_message(n_all: int, statuses: Sequence[Status], absent_reasons: Sequence[str]) -> str:
    """Upstream FitError.Error() for a diagnosis without PreFilter or PostFilter messages:
    ``0/N nodes are available: <count> <reason>, ... .`` with the histogram sorted as strings; nodes without
    an explicit status count once for each reason of the absent-nodes status."""
    counts: Counter[str] = Counter()
    for st in statuses:
        for reason in st.reasons:
            counts[reason] += 1
    absent = n_all - len(statuses)
    if absent > 0:
        for reason in absent_reasons:
            counts[reason] += absent
    msg = NO_NODE_AVAILABLE.format(n_all) + ":"
    parts = sorted(f"{count} {reason}" for reason, count in counts.items())
    if parts:
        msg += f" {', '.join(parts)}."
    return msg


def aggregate_errors(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message as is, several deduplicated inside brackets."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


def _go_quote(s: str) -> str:
    """Go's %q for the names that occur here (node names)."""
    return json.dumps(s, ensure_ascii=False)


def status_from_groups(groups: Sequence[RejectGroup]) -> Status:
    """The status of one node from the reject groups of a one-node filter run (the first plugin that rejected
    it, as upstream's RunFilterPlugins returns)."""
    if not groups:
        return Status(Code.UNSCHEDULABLE)
    code = max(g.code for g in groups)
    return Status(code, [g.reason for g in groups], groups[0].plugin)


def restore_order(on_node: dict[str, PodInfo], order: list[str]) -> None:
    """Put a node's pods back in their order (removing and adding a pod moves it to the end)."""
    if list(on_node) != order:
        items = [(k, on_node[k]) for k in order]
        on_node.clear()
        on_node.update(items)


def _active_extensions(fwk: Framework, state: CycleState) -> bool:
    """Whether some PreFilter plugin of this cycle must hear about pods added or removed (its AddPod /
    RemovePod), as the framework's run_add_pod / run_remove_pod would call it."""
    return any(isinstance(p, PreFilterExtensions) and p.name not in state.skip_filter for p in fwk.pre_filter)


class CandidateCollector:
    """DryRunPreemption's bookkeeping: two bounded candidate lists, the statuses of the nodes that are no
    candidates, and the errors; ``add`` answers whether the dry run can stop."""

    def __init__(self, nodes: Sequence[Node], num_candidates: int) -> None:
        self.nodes = nodes
        self.num_candidates = num_candidates
        self.non_violating: list[Candidate] = []
        self.violating: list[Candidate] = []
        self.statuses: dict[int, Status] = {}
        self.errors: list[str] = []

    @property
    def size(self) -> int:
        return len(self.non_violating) + len(self.violating)

    def add(self, col: int, victims: list[PodInfo], num_violations: int, st: Status) -> bool:
        if st.ok and victims:
            bucket = self.non_violating if num_violations == 0 else self.violating
            if len(bucket) < self.num_candidates:
                bucket.append(Candidate(self.nodes[col].name, col, victims, num_violations))
            return bool(self.non_violating) and self.size >= self.num_candidates
        if st.ok:
            name = _go_quote(self.nodes[col].name)
            st = Status(Code.ERROR, [f"expected at least one victim pod on node {name}"])
        if st.code == Code.ERROR:
            self.errors.append(st.message)
        self.statuses[col] = st
        return False

    def result(self) -> DryRunResult:
        return DryRunResult(self.non_violating + self.violating, self.statuses, self.errors)


def potential_nodes(diagnosis: Diagnosis) -> IntArray:
    """Upstream NodesForStatusCode(Unschedulable): the node columns whose filter status is exactly
    Unschedulable (removing pods may help), in snapshot order."""
    n = diagnosis.n_all
    if diagnosis.pre_filter_status is not None:
        if diagnosis.pre_filter_status.code == Code.UNSCHEDULABLE:
            return np.arange(n, dtype=np.int64)
        return np.zeros(0, dtype=np.int64)
    codes = np.zeros(n, dtype=np.int64)
    for g in diagnosis.groups:
        np.maximum(codes, int(g.code), out=codes, where=g.mask)
    # a rejected node without a group reads as Unschedulable (Diagnosis.node_status does the same)
    codes[(codes == 0) & ~diagnosis.feasible] = int(Code.UNSCHEDULABLE)
    out: IntArray = np.flatnonzero(codes == int(Code.UNSCHEDULABLE)).astype(np.int64)
    return out


class DefaultPreemption:
    """The PostFilter plugin. ``handle`` is the scheduler (framework.interface.Handle)."""

    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle

    # -- PostFilter -------------------------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult:
        result = self.preempt(state, pod, diagnosis)
        msg = result.status.message
        if msg:
            result.status = Status(result.status.code, [MSG_PREFIX + msg], result.status.plugin or NAME)
        elif not result.status.ok:
            result.status.plugin = result.status.plugin or NAME
        return result

    def preempt(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult:
        """Upstream Evaluator.Preempt, without the ``preemption: `` prefix. ``nominated_node`` is None where
        upstream returns a nil result (the pod's nomination stays), "" to clear it, or the chosen node."""
        # 1) Is the pod eligible to preempt?
        ok, why = self.pod_eligible_to_preempt_others(pod, diagnosis, state)
        if not ok:
            return PostFilterResult(None, Status(Code.UNSCHEDULABLE, [why]))

        # 2) Find the candidates.
        snap = self.handle.snapshot
        if snap.n == 0:
            return PostFilterResult(None, Status(Code.ERROR, [NO_NODES]))
        fwk = self.handle.framework_for(pod)
        if fwk is None:
            return PostFilterResult(
                None, Status(Code.ERROR, [f"no profile has schedulerName {pod.pod.scheduler_name!r}"])
            )
        potential = potential_nodes(diagnosis)
        if len(potential) == 0:
            found = DryRunResult([], {}, [])
        else:
            pdbs = list(self.handle.pdbs())
            offset, num_candidates = self.get_offset_and_num_candidates(len(potential))
            found = self.dry_run_preemption(fwk, state, pod, potential, pdbs, offset, num_candidates)
        if found.errors and not found.candidates:
            return PostFilterResult(None, Status(Code.ERROR, [aggregate_errors(found.errors)]))
        if not found.candidates:
            # A FitError over every node: the nodes the dry run looked at with their status, the others as
            # "Preemption is not helpful for scheduling"; the pod's nomination is cleared.
            message = fit_error_message(snap.n, list(found.statuses.values()), [PREEMPTION_NOT_HELPFUL])
            return PostFilterResult("", Status(Code.UNSCHEDULABLE, [message]))

        # 3) Extenders: packsched has none.
        # 4) The best candidate.
        best = self.select_candidate(found.candidates)
        if best is None or not best.name:
            return PostFilterResult(None, Status(Code.UNSCHEDULABLE, [NO_CANDIDATE]))

        # 5) Evict its victims and nominate the pod there.
        st = self.prepare_candidate(best, pod)
        if not st.ok:
            return PostFilterResult(None, st)
        return PostFilterResult(best.name, Status())

    # -- eligibility ------------------------------------------------------------------------------------

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, diagnosis: Diagnosis, state: CycleState | None = None
    ) -> tuple[bool, str]:
        """Upstream PodEligibleToPreemptOthers (``state``: the cycle's, for plugins whose rules need it)."""
        if pod.pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        snap = self.handle.snapshot
        nominated = pod.pod.nominated_node_name
        if nominated:
            col = snap.index.get(nominated)
            if col is None:
                return True, ""  # upstream: the node is gone, nothing on it can be terminating
            # A nominated node the filters now rule out for good: the pod may preempt elsewhere.
            if diagnosis.node_status(col).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            for p in snap.pods_on[col].values():
                if self.is_preemption_allowed(col, p, pod) and pod_terminating_by_preemption(p):
                    return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def is_preemption_allowed(self, col: int, victim: PodInfo, preemptor: PodInfo) -> bool:
        """Upstream isPreemptionAllowed: the victim has a lower priority (IsEligiblePod is always true in the
        default plugin)."""
        return victim.priority < preemptor.priority

    # -- candidates -------------------------------------------------------------------------------------

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random offset in [0, num_nodes) from the scheduler's seeded generator, and how many candidates
        the dry run should find."""
        offset = int(self.handle.rng.integers(num_nodes))
        return offset, self.calculate_num_candidates(num_nodes)

    def dry_run_preemption(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        potential: IntArray,
        pdbs: Sequence[BudgetView],
        offset: int,
        num_candidates: int,
        batched: bool | None = None,
    ) -> DryRunResult:
        """Upstream DryRunPreemption over the potential nodes in order from ``offset`` (upstream checks 16
        nodes at a time and may look at a few more nodes than needed). It stops once it holds at least one
        non-violating candidate and ``num_candidates`` in all; each of the two lists keeps at most
        ``num_candidates``.

        ``batched`` (by default: when no PreFilter plugin with AddPod/RemovePod extensions is active) checks a
        chunk of nodes at a time with one filter call per reprieve step over the whole chunk: the same result
        as one node after the other, because without extensions removing a pod changes only its own node's
        column and the cycle state stays as it is, and a filter reads only the node it judges."""
        if batched is None:
            batched = not _active_extensions(fwk, state)
        order: list[int] = np.concatenate([potential[offset:], potential[:offset]]).tolist()
        found = CandidateCollector(self.handle.snapshot.nodes, num_candidates)
        if not batched:
            for col in order:
                victims, num_violations, st = self.select_victims_on_node(fwk, state.clone(), pod, col, pdbs)
                if found.add(col, victims, num_violations, st):
                    break
            return found.result()
        pos = 0
        chunk = max(num_candidates, 1)
        while pos < len(order):
            cols = order[pos : pos + chunk]
            pos += len(cols)
            results = self.select_victims_on_nodes(fwk, state.clone(), pod, cols, pdbs)
            if any(found.add(col, *res) for col, res in zip(cols, results, strict=True)):
                break
            chunk = max(num_candidates - found.size, _MIN_CHUNK)
        return found.result()

    def select_victims_on_node(  # noqa: C901
        self, fwk: Framework, state: CycleState, pod: PodInfo, col: int, pdbs: Sequence[BudgetView]
    ) -> tuple[list[PodInfo], int, Status]:
        """Upstream SelectVictimsOnNode on node column ``col``: the fewest lower-priority pods to evict so
        that ``pod`` fits, and how many of them violate a PodDisruptionBudget. ``state`` is a clone this call
        may change; the snapshot is restored before returning."""
        snap = self.handle.snapshot
        on_node = snap.pods_on[col]
        potential = [p for p in on_node.values() if self.is_preemption_allowed(col, p, pod)]
        if not potential:
            # Nothing was removed, so the node's state did not change: no need to filter again.
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_VICTIMS])
        order = list(on_node)
        removed: dict[int, PodInfo] = {}  # by id(): the pods now out of the snapshot
        sel = np.array([col], dtype=np.intp)

        def remove(p: PodInfo) -> Status:
            snap.remove_pod(p)
            removed[id(p)] = p
            st = fwk.run_remove_pod(state, pod, p, col)
            if not st.ok:
                plugin = _go_quote(st.plugin)
                return Status(Code.ERROR, [f"running RemovePod on PreFilter plugin {plugin}: {st.message}"])
            return st

        def add(p: PodInfo) -> Status:
            snap.add_pod(p, col)
            del removed[id(p)]
            st = fwk.run_add_pod(state, pod, p, col)
            if not st.ok:
                plugin = _go_quote(st.plugin)
                return Status(Code.ERROR, [f"running AddPod on PreFilter plugin {plugin}: {st.message}"])
            return st

        try:
            for p in potential:
                st = remove(p)
                if not st.ok:
                    return [], 0, st
            feasible, groups = fwk.run_filters_with_nominated(state, pod, sel)
            if not feasible[0]:
                # Even without every lower-priority pod the pod does not fit (inter-pod affinity to a victim
                # is not considered, as upstream).
                return [], 0, status_from_groups(groups)
            potential.sort(key=importance_key)
            violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
            victims: list[PodInfo] = []
            num_violating = 0

            def reprieve(p: PodInfo) -> tuple[bool, Status]:
                st = add(p)
                if not st.ok:
                    return False, st
                fits, _ = fwk.run_filters_with_nominated(state, pod, sel)
                if not fits[0]:
                    st = remove(p)
                    if not st.ok:
                        return False, st
                    victims.append(p)
                return bool(fits[0]), Status()

            for p in violating:
                fits, st = reprieve(p)
                if not st.ok:
                    return [], 0, st
                if not fits:
                    num_violating += 1
            for p in non_violating:
                _, st = reprieve(p)
                if not st.ok:
                    return [], 0, st
            if violating and non_violating:
                victims.sort(key=importance_key)
            return victims, num_violating, Status()
        finally:
            for p in removed.values():
                snap.add_pod(p, col)
            restore_order(on_node, order)

    def select_victims_on_nodes(  # noqa: C901
        self, fwk: Framework, state: CycleState, pod: PodInfo, cols: Sequence[int], pdbs: Sequence[BudgetView]
    ) -> list[tuple[list[PodInfo], int, Status]]:
        """``select_victims_on_node`` for many nodes at once, for a framework without active PreFilter
        extensions (nothing to tell them, so ``state`` is shared): every node's lower-priority pods are
        removed, one filter call judges all nodes, then each reprieve step adds back the next pod of every
        node still in play and one filter call judges them all. The snapshot is restored before returning."""
        snap = self.handle.snapshot
        out: list[tuple[list[PodInfo], int, Status]] = [
            ([], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_VICTIMS])) for _ in cols
        ]
        busy: list[int] = []  # positions in cols of nodes with lower-priority pods
        potentials: list[list[PodInfo]] = []
        maybe: list[bool] | None = None
        if type(self).is_preemption_allowed is DefaultPreemption.is_preemption_allowed:
            # the plain priority rule: only nodes holding a lower-priority pod need their pods walked
            lower = [g for g in snap.groups if g[1] < pod.priority]
            maybe = snap.nodes_holding(lower).tolist()
        for i, col in enumerate(cols):
            if maybe is not None and not maybe[col]:
                continue
            pot = [p for p in snap.pods_on[col].values() if self.is_preemption_allowed(col, p, pod)]
            if pot:
                busy.append(i)
                potentials.append(pot)
        if not busy:
            return out
        orders = {cols[i]: list(snap.pods_on[cols[i]]) for i in busy}
        removed: dict[int, tuple[PodInfo, int]] = {}  # by id(): the pods now out of the snapshot, and where
        try:
            for i, pot in zip(busy, potentials, strict=True):
                for p in pot:
                    snap.remove_pod(p)
                    removed[id(p)] = (p, cols[i])
            sel = np.array([cols[i] for i in busy], dtype=np.intp)
            feasible, groups = fwk.run_filters_with_nominated(state, pod, sel)
            live: list[int] = []  # positions in busy of nodes where the pod fits without the pods
            for j, ok in enumerate(feasible.tolist()):
                if ok:
                    live.append(j)
                else:
                    out[busy[j]] = ([], 0, status_from_groups([g for g in groups if g.mask[j]]))
            sequences: list[list[PodInfo]] = []
            num_violating_first: list[int] = []
            split: list[bool] = []
            for j in live:
                pot = potentials[j]
                pot.sort(key=importance_key)
                violating, non_violating = filter_pods_with_pdb_violation(pot, pdbs)
                sequences.append(violating + non_violating)
                num_violating_first.append(len(violating))
                split.append(bool(violating) and bool(non_violating))
            victims: list[list[PodInfo]] = [[] for _ in live]
            violations = [0] * len(live)
            step = 0
            while True:
                now = [t for t, seq in enumerate(sequences) if step < len(seq)]
                if not now:
                    break
                for t in now:
                    p = sequences[t][step]
                    snap.add_pod(p, cols[busy[live[t]]])
                    del removed[id(p)]
                fits, _ = fwk.run_filters_with_nominated(
                    state, pod, np.array([cols[busy[live[t]]] for t in now], dtype=np.intp)
                )
                for t, ok in zip(now, fits.tolist(), strict=True):
                    if ok:
                        continue
                    p = sequences[t][step]
                    snap.remove_pod(p)
                    removed[id(p)] = (p, cols[busy[live[t]]])
                    victims[t].append(p)
                    if step < num_violating_first[t]:
                        violations[t] += 1
                step += 1
            for t, j in enumerate(live):
                if split[t]:
                    victims[t].sort(key=importance_key)
                out[busy[j]] = (victims[t], violations[t], Status())
            return out
        finally:
            for p, col in removed.values():
                snap.add_pod(p, col)
            for col, order in orders.items():
                restore_order(snap.pods_on[col], order)

    # -- choosing and preparing -------------------------------------------------------------------------

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        return pick_one_node_for_preemption(candidates)

    def prepare_candidate(self, cand: Candidate, pod: PodInfo) -> Status:
        """Upstream prepareCandidate: evict the victims, then clear the nomination of lower-priority pods
        nominated to the node (they may no longer fit there; clearing it sends them back to be scheduled)."""
        actions = self.handle.actions
        for victim in cand.victims:
            actions.preempt(victim, pod)
        lower = [p for p in self.handle.nominated_pods(cand.col) if p.priority < pod.priority]
        for p in lower:
            self._clear_nominated_node_name(p)
        return Status()

    def _clear_nominated_node_name(self, p: PodInfo) -> None:
        clear = getattr(self.handle.actions, "clear_nominated_node_name", None)
        if callable(clear):
            clear(p)
            return
        nominator = getattr(self.handle, "nominator", None)
        if nominator is not None:
            nominator.clear(p)
        p.pod.nominated_node_name = ""


def _validate(args: DefaultPreemptionArgs) -> None:
    """Upstream ValidateDefaultPreemptionArgs (the config loader validates too; this guards direct use)."""
    errs: list[str] = []
    pct, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    if pct < 0 or pct > 100:
        errs.append(f"minCandidateNodesPercentage: Invalid value: {pct}: not in valid range [0, 100]")
    if absolute < 0:
        errs.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
    if pct == 0 and absolute == 0:
        errs.append(
            "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
            "minCandidateNodesAbsolute"
        )
        errs.append(
            "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
            "minCandidateNodesPercentage"
        )
    if errs:
        raise ValueError(aggregate_errors(errs))


def new_default_preemption(args: PluginArgs | None, handle: Handle) -> DefaultPreemption:
    if args is None:
        args = DefaultPreemptionArgs(DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE, DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
    if not isinstance(args, DefaultPreemptionArgs):
        raise TypeError(f"want args to be of type DefaultPreemptionArgs, got {type(args).__name__}")
    _validate(args)
    return DefaultPreemption(args, handle)
