"""Preemption: one evaluator, after kube-scheduler's ``pkg/scheduler/framework/preemption`` Evaluator, with the
plugin-specific rules supplied by a :class:`Policy`.

The evaluator owns the algorithm every preemption plugin shares:

1. the pod must be eligible (the policy decides: ``preemptionPolicy``, terminating victims on the nominated node,
   quota rules);
2. only nodes the filters rejected as ``Unschedulable`` (not ``UnschedulableAndUnresolvable``) are dry-run, from
   the policy's offset, until the policy's number of candidates is found (and at least one candidate that violates
   no PodDisruptionBudget);
3. on each node, every potential victim (the policy names them) leaves; if the pod still does not fit (or the
   policy refuses the node), the node is no candidate. Otherwise the victims come back one at a time, the most
   important first (PDB-violating ones before the others), and each one that still lets the pod fit (and that the
   policy lets stay) is reprieved; the rest are the victims;
4. the best candidate is picked (fewest PDB violations, lowest highest victim priority, ...), its victims are
   evicted, lower-priority pods nominated to its node lose their nomination, and the pod is nominated there.

**The dry run** removes and re-adds pods in the shared snapshot through an undo log (:class:`_DryRunLog`), which
puts every pod back, in its node's original order, whatever happens. Every pod removed or put back is reported to
the profile's PreFilter extensions (``RemovePod`` / ``AddPod``) on that node's own copy of the cycle state, so
plugins that keep PreFilter state stay right. Where no plugin with such extensions also filters, the filters never
read what the extensions change: then many nodes are judged together, one filter call per reprieve step over every
node still in play (the *batched* dry run). Otherwise each node is judged alone with its own cycle state, as
upstream does. Both give the same candidates, statuses and messages.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from packsched.api.objects import Pod
from packsched.framework import vector_dry_run as vdr
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import NO_NODE_AVAILABLE, Diagnosis, RejectGroup
from packsched.framework.interface import BudgetView, Handle, PostFilterResult, ProfileRuntime
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.framework.status import Code, Status

PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE = "no candidate node for preemption"
NO_NODES = "no nodes available"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."

_PRIORITY_SHIFT = vdr.PRIORITY_SHIFT  # pickOneNodeForPreemption's shift of every priority before summing

ADD_POD, REMOVE_POD = "AddPod", "RemovePod"

# Nodes the batched dry run adds at a time once it holds fewer candidates than it needs (upstream's parallelism).
_MIN_CHUNK = 16

# What the dry run found on one node: the victims (most important first), how many of them violate a
# PodDisruptionBudget, and the node's status (success, or why it is no candidate).
Victims = tuple[list[PodInfo], int, Status]


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
    statuses: dict[int, Status] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


class Policy(Protocol):
    """What a preemption plugin decides; the :class:`Evaluator` does the rest.

    ``state`` is the cycle's state as PreFilter left it; ``node_state`` is one node's copy during the dry run,
    after the PreFilter extensions heard of the pods removed from (and put back on) that node."""

    def eligible(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> tuple[bool, str]:
        """Upstream PodEligibleToPreemptOthers: may the pod preempt at all, and if not, why."""
        ...

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """Where in the potential nodes the dry run starts, and how many candidates it looks for."""
        ...

    def victim_groups(self, state: CycleState, pod: PodInfo) -> list[tuple[str, int]] | None:
        """The (namespace, priority) groups of placed pods such that a node has potential victims exactly when
        it holds a pod of one of them (lets the dry run skip the other nodes at once); None if unknown."""
        ...

    def potential_victims(self, state: CycleState, pod: PodInfo, col: int) -> list[PodInfo]:
        """The pods of node ``col`` that may be evicted for ``pod``, in the order they are removed."""
        ...

    def no_victims(self, node: str, pod: PodInfo) -> Status:
        """The status of a node without potential victims."""
        ...

    def refuse_node(self, node_state: CycleState, pod: PodInfo) -> Status | None:
        """After every potential victim left a node where the pod now fits: a status if the node still cannot
        be a candidate (e.g. a quota the pod would exceed even so), None if it can."""
        ...

    def refuse_reprieve(self, node_state: CycleState, pod: PodInfo) -> bool:
        """After a victim was put back and the pod still fits: must the victim go all the same?"""
        ...

    @property
    def victims_are_lower_priority_pods(self) -> bool:
        """True if the potential victims of a node are exactly its pods of lower priority than the preemptor,
        ``refuse_node`` answers None and ``refuse_reprieve`` False: then the dry run may run on arrays."""
        ...


# -- the pieces of upstream's algorithm -------------------------------------------------------------------------


def importance_key(p: PodInfo) -> tuple[int, tuple[float, int]]:
    """Upstream util.MoreImportantPod as a sort key (the more important pod first): higher priority, then the
    one that started earlier."""
    return (-p.priority, p.start_key)


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Upstream podTerminatingByPreemption: the pod is being deleted (deletionTimestamp) and carries the
    condition ``DisruptionTarget=True`` with reason ``PreemptionByScheduler``. The simulator removes victims at
    once, so only live mode (and manifests that say so) has such pods."""
    return pod.terminating and pod.preempted_by_scheduler


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


def chosen_node_fit_error(st: Status) -> Status:
    """A Reserve or Permit rejection as the pod's condition says it (upstream wraps it in a FitError over the one
    chosen node: ``0/1 nodes are available: 1 <reason>.``); an error stays as it is."""
    if st.code not in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
        return st
    return Status(st.code, [fit_error_message(1, [st], [])], st.plugin)


def aggregate_errors(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message as is, several deduplicated inside brackets."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


def go_quote(s: str) -> str:
    """Go's %q for the names that occur here (node and plugin names)."""
    return json.dumps(s, ensure_ascii=False)


def status_from_groups(groups: Sequence[RejectGroup]) -> Status:
    """The status of one node from the reject groups of a one-node filter run (the first plugin that rejected
    it, as upstream's RunFilterPlugins returns)."""
    if not groups:
        return Status(Code.UNSCHEDULABLE)
    code = max(g.code for g in groups)
    return Status(code, [g.reason for g in groups], groups[0].plugin)


def potential_nodes(diagnosis: Diagnosis) -> IntArray:
    """Upstream NodesForStatusCode(Unschedulable): the node columns whose filter status is exactly
    Unschedulable (removing pods may help), in snapshot order."""
    n = diagnosis.n_all
    if diagnosis.pre_filter_status is not None:
        if diagnosis.pre_filter_status.code == Code.UNSCHEDULABLE:
            return np.arange(n, dtype=np.int64)
        return np.zeros(0, dtype=np.int64)
    if all(g.code == Code.UNSCHEDULABLE for g in diagnosis.groups):
        # the common case, without the codes: a node rejected by some group, or rejected without one
        hit = ~diagnosis.feasible
        for g in diagnosis.groups:
            hit |= g.mask
        found: IntArray = np.flatnonzero(hit).astype(np.int64)
        return found
    codes = np.zeros(n, dtype=np.int64)
    for g in diagnosis.groups:
        np.maximum(codes, int(g.code), out=codes, where=g.mask)
    # a rejected node without a group reads as Unschedulable (Diagnosis.node_status does the same)
    codes[(codes == 0) & ~diagnosis.feasible] = int(Code.UNSCHEDULABLE)
    out: IntArray = np.flatnonzero(codes == int(Code.UNSCHEDULABLE)).astype(np.int64)
    return out


def filters_read_extension_state(fwk: ProfileRuntime, state: CycleState) -> bool:
    """Whether some plugin of this cycle both keeps PreFilter state up to date through AddPod/RemovePod and
    filters (so its filter reads what those change): then the dry run must judge each node with that node's own
    cycle state, one node at a time."""
    filtering = {p.name for p in fwk.filters if p.name not in state.skip_filter}
    return any(p.name not in state.skip_filter and p.name in filtering for p in fwk.extensions)


class CandidateCollector:
    """DryRunPreemption's bookkeeping: two bounded candidate lists, the statuses of the nodes that are no
    candidates, and the errors; ``add`` answers whether the dry run can stop."""

    def __init__(self, snap: Snapshot, num_candidates: int) -> None:
        self.nodes = snap.nodes
        self.num_candidates = num_candidates
        self.non_violating: list[Candidate] = []
        self.violating: list[Candidate] = []
        self.statuses: dict[int, Status] = {}
        self.errors: list[str] = []

    @property
    def size(self) -> int:
        return len(self.non_violating) + len(self.violating)

    def add(self, col: int, found: Victims) -> bool:
        victims, num_violations, st = found
        if st.ok and victims:
            bucket = self.non_violating if num_violations == 0 else self.violating
            if len(bucket) < self.num_candidates:
                bucket.append(Candidate(self.nodes[col].name, col, victims, num_violations))
            return bool(self.non_violating) and self.size >= self.num_candidates
        if st.ok:
            name = go_quote(self.nodes[col].name)
            st = Status(Code.ERROR, [f"expected at least one victim pod on node {name}"])
        if st.code == Code.ERROR:
            self.errors.append(st.message)
        self.statuses[col] = st
        return False

    def result(self) -> DryRunResult:
        return DryRunResult(self.non_violating + self.violating, self.statuses, self.errors)


class _DryRunLog:
    """The dry run's undo log: which pods are out of the snapshot (and from which node), and each touched node's
    original pod order. :meth:`restore` puts the snapshot back exactly as it was."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.out: dict[int, tuple[PodInfo, int]] = {}  # by id(): pods now out of the snapshot, and their node
        self.orders: dict[int, list[str]] = {}

    def remove(self, pods: Sequence[tuple[PodInfo, int]]) -> None:
        for _, col in pods:
            if col not in self.orders:
                self.orders[col] = list(self.snap.pods_on[col])
        self.snap.remove_pods([p for p, _ in pods])
        for p, col in pods:
            self.out[id(p)] = (p, col)

    def put_back(self, pods: Sequence[tuple[PodInfo, int]]) -> None:
        self.snap.add_pods(pods)
        for p, _ in pods:
            del self.out[id(p)]

    def restore(self) -> None:
        self.snap.add_pods(list(self.out.values()))
        self.out.clear()
        for col, order in self.orders.items():
            self.snap.reorder_pods(col, order)  # removing and adding a pod moved it to the end
        self.orders.clear()


@dataclass
class _NodeRun:
    """One node in the reprieve loop: its own cycle state, the pods to put back in order, and what it found."""

    col: int
    state: CycleState
    sequence: list[PodInfo] = field(default_factory=list)
    num_violating_first: int = 0
    victims: list[PodInfo] = field(default_factory=list)
    violations: int = 0


class Evaluator:
    """Upstream's preemption Evaluator: ``preempt`` is its ``Preempt``; the plugin-specific decisions come from
    ``policy``."""

    def __init__(self, handle: Handle, policy: Policy, plugin: str = "DefaultPreemption") -> None:
        self.handle = handle
        self.policy = policy
        self.plugin = plugin  # the PostFilter plugin that preempts (named in a waiting victim's rejection)
        # the profile whose PreFilter extensions hear of the pods the dry run under way moves (None: none active)
        self._listening: ProfileRuntime | None = None
        self._reprieves = vdr.ReprieveCache()  # the dry run on arrays' outcomes per node, between preemptors

    def preempt(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult:
        """Upstream Evaluator.Preempt (the message without a plugin's prefix). ``nominated_node`` is None where
        upstream returns a nil result (the pod's nomination stays), "" to clear it, or the chosen node."""
        ok, why = self.policy.eligible(state, pod, diagnosis)
        if not ok:
            return PostFilterResult(None, Status(Code.UNSCHEDULABLE, [why]))
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
            found = DryRunResult([])
        else:
            offset, num_candidates = self.policy.offset_and_num_candidates(len(potential))
            pdbs = list(self.handle.pdbs())
            fast = self.vector_dry_run(fwk, state, pod, potential, pdbs, offset, num_candidates)
            if fast is not None and len(fast) > 0:
                i = fast.pick()
                col = int(fast.cols[i])
                chosen = Candidate(snap.nodes[col].name, col, fast.victims(i))
                st = self.prepare_candidate(chosen, pod)
                return PostFilterResult(chosen.name if st.ok else None, self._success(st, chosen))
            found = self.dry_run(fwk, state, pod, potential, pdbs, offset, num_candidates)
        if found.errors and not found.candidates:
            return PostFilterResult(None, Status(Code.ERROR, [aggregate_errors(found.errors)]))
        if not found.candidates:
            # A FitError over every node: the nodes the dry run looked at with their status, the others as
            # "Preemption is not helpful for scheduling"; the pod's nomination is cleared.
            message = fit_error_message(snap.n, list(found.statuses.values()), [PREEMPTION_NOT_HELPFUL])
            return PostFilterResult("", Status(Code.UNSCHEDULABLE, [message]))
        # (Extenders: packsched has none.)
        best = self.select_candidate(found.candidates)
        if best is None or not best.name:
            return PostFilterResult(None, Status(Code.UNSCHEDULABLE, [NO_CANDIDATE]))
        st = self.prepare_candidate(best, pod)
        if not st.ok:
            return PostFilterResult(None, st)
        return PostFilterResult(best.name, self._success(st, best))

    def _success(self, st: Status, chosen: Candidate) -> Status:
        """From 1.37 (kubernetes#140180) a successful preemption says where the pod may go, and the pod's
        message carries it; before, its status had no message."""
        if not st.ok or not self.handle.kube_version.preemption_success_message:
            return st
        msg = f"found a potential placement for pod on node {chosen.name}, preempting {len(chosen.victims)} victims"
        return Status(Code.SUCCESS, [msg])

    # -- the dry run ----------------------------------------------------------------------------------------

    def dry_run(
        self,
        fwk: ProfileRuntime,
        state: CycleState,
        pod: PodInfo,
        potential: IntArray,
        pdbs: Sequence[BudgetView],
        offset: int,
        num_candidates: int,
        batched: bool | None = None,
    ) -> DryRunResult:
        """Upstream DryRunPreemption over the potential nodes in order from ``offset``. It stops once it holds at
        least one non-violating candidate and ``num_candidates`` in all (upstream checks 16 nodes at a time and
        may look at a few more nodes than needed); each of the two lists keeps at most ``num_candidates``.

        ``batched`` (by default: unless a plugin's filter reads what its AddPod/RemovePod change) judges a chunk
        of nodes with one filter call per reprieve step; ``False`` judges one node after the other. The result is
        the same: a filter reads only the node it judges, and each node keeps its own cycle state for the
        extensions either way."""
        if batched is None:
            batched = not filters_read_extension_state(fwk, state)
        order: list[int] = np.concatenate([potential[offset:], potential[:offset]]).tolist()
        snap = self.handle.snapshot
        groups = self.policy.victim_groups(state, pod)
        if groups is not None:
            # nodes holding no pod of those groups have no potential victims: one numpy look-up
            holding = snap.nodes_holding(groups).tolist()
            maybe = [holding[col] for col in order]
        else:
            maybe = [True] * len(order)
        found = CandidateCollector(snap, num_candidates)
        no_victims, nodes = self.policy.no_victims, snap.nodes
        pos = 0
        chunk = max(num_candidates, 1) if batched else 1
        while pos < len(order):
            cols = order[pos : pos + chunk]
            busy = [col for col, m in zip(cols, maybe[pos : pos + chunk], strict=True) if m]
            pos += len(cols)
            results = self.select_victims(fwk, state, pod, busy, pdbs, shared_filter=batched) if busy else {}
            for col in cols:
                res = results.get(col)
                if res is None:  # no potential victims: no candidate (most nodes, often)
                    found.statuses[col] = no_victims(nodes[col].name, pod)
                elif found.add(col, res):
                    return found.result()
            if batched:
                chunk = max(num_candidates - found.size, _MIN_CHUNK)
        return found.result()

    def vector_dry_run(
        self,
        fwk: ProfileRuntime,
        state: CycleState,
        pod: PodInfo,
        potential: IntArray,
        pdbs: Sequence[BudgetView],
        offset: int,
        num_candidates: int,
    ) -> vdr.Found | None:
        """The dry run on arrays (:mod:`packsched.framework.vector_dry_run`) where the policy and this cycle's
        filters allow it: the same candidates, in the same order, as :meth:`dry_run`; None where it does not
        apply (then :meth:`dry_run` decides)."""
        if not getattr(self.policy, "victims_are_lower_priority_pods", False):
            return None
        the_plan = vdr.plan(fwk, state, pdbs)
        if the_plan is None:
            return None
        return vdr.run(self.handle, the_plan, state, pod, potential, offset, num_candidates, self._reprieves)

    def select_victims_on_node(
        self, fwk: ProfileRuntime, state: CycleState, pod: PodInfo, col: int, pdbs: Sequence[BudgetView]
    ) -> Victims:
        """Upstream SelectVictimsOnNode on node column ``col``, judged alone with its own copy of ``state``."""
        res = self.select_victims(fwk, state, pod, [col], pdbs, shared_filter=False)
        return res.get(col) or ([], 0, self.policy.no_victims(self.handle.snapshot.nodes[col].name, pod))

    def select_victims(
        self,
        fwk: ProfileRuntime,
        state: CycleState,
        pod: PodInfo,
        cols: Sequence[int],
        pdbs: Sequence[BudgetView],
        shared_filter: bool,
    ) -> dict[int, Victims]:
        """SelectVictimsOnNode for every node of ``cols`` together, step by step: every node's potential victims
        leave, one filter call judges the nodes, then each reprieve step puts back the next pod of every node
        still in play and one filter call judges them all. Each node has its own copy of ``state`` that hears of
        every pod removed or put back there (the PreFilter extensions). ``shared_filter``: the filters may judge
        all nodes with ``state`` itself (no filter reads extension state); otherwise ``cols`` must be one node,
        judged with its own state. The snapshot is restored before returning."""
        if not shared_filter and len(cols) > 1:
            raise ValueError("nodes judged with their own cycle state go one at a time")
        out: dict[int, Victims] = {}
        snap = self.handle.snapshot
        plans: dict[int, list[PodInfo]] = {}
        for col in cols:
            pot = self.policy.potential_victims(state, pod, col)
            if pot:
                plans[col] = pot
            else:
                out[col] = ([], 0, self.policy.no_victims(snap.nodes[col].name, pod))
        if not plans:
            return out
        clone = fwk.has_active_extensions(state)  # without extensions nothing writes to a node's state
        self._listening = fwk if clone else None
        runs = [_NodeRun(col, state.clone() if clone else state) for col in plans]
        log = _DryRunLog(snap)
        try:
            log.remove([(p, run.col) for run in runs for p in plans[run.col]])
            runs = [run for run in runs if self._tell_removed(pod, run, plans[run.col], out)]
            runs = self._judge_without_victims(fwk, state, pod, runs, shared_filter, out)
            for run in runs:
                pot = sorted(plans[run.col], key=importance_key)
                violating, non_violating = filter_pods_with_pdb_violation(pot, pdbs)
                run.sequence = violating + non_violating
                run.num_violating_first = len(violating)
            self._reprieve(fwk, state, pod, runs, shared_filter, log, out)
            return out
        finally:
            log.restore()

    def _tell_removed(self, pod: PodInfo, run: _NodeRun, pods: Sequence[PodInfo], out: dict[int, Victims]) -> bool:
        """RemovePod for each pod taken off the node; False (and the node's error in ``out``) if one fails."""
        return all(self._tell(pod, run, p, REMOVE_POD, out) for p in pods)

    def _judge_without_victims(
        self,
        fwk: ProfileRuntime,
        state: CycleState,
        pod: PodInfo,
        runs: list[_NodeRun],
        shared_filter: bool,
        out: dict[int, Victims],
    ) -> list[_NodeRun]:
        """The nodes where the pod fits once every potential victim left (and the policy accepts)."""
        if not runs:
            return runs
        filter_state = state if shared_filter else runs[0].state
        fits, groups = fwk.run_filters_with_nominated(filter_state, pod, np.array([r.col for r in runs], dtype=np.intp))
        playing: list[_NodeRun] = []
        for j, (run, ok) in enumerate(zip(runs, fits.tolist(), strict=True)):
            if not ok:
                # Even without every potential victim the pod does not fit (inter-pod affinity to a victim is not
                # considered, as upstream).
                out[run.col] = ([], 0, status_from_groups([g for g in groups if g.mask[j]]))
                continue
            refused = self.policy.refuse_node(run.state, pod)
            if refused is not None:
                out[run.col] = ([], 0, refused)
                continue
            playing.append(run)
        return playing

    def _reprieve(
        self,
        fwk: ProfileRuntime,
        state: CycleState,
        pod: PodInfo,
        runs: list[_NodeRun],
        shared_filter: bool,
        log: _DryRunLog,
        out: dict[int, Victims],
    ) -> None:
        """Put the potential victims back one step at a time (the most important first, PDB-violating ones
        before the others); each one the pod no longer fits beside (or the policy does not let stay) goes
        again and is a victim."""
        playing = list(runs)
        step = 0
        while True:
            now = [run for run in playing if step < len(run.sequence)]
            if not now:
                break
            back = [(run.sequence[step], run.col) for run in now]
            log.put_back(back)
            failed = {run.col for run in now if not self._tell(pod, run, run.sequence[step], ADD_POD, out)}
            now = [run for run in now if run.col not in failed]
            verdicts: list[bool] = []
            if now:
                filter_state = state if shared_filter else now[0].state
                cols = np.array([r.col for r in now], dtype=np.intp)
                verdicts = fwk.run_filters_with_nominated(filter_state, pod, cols)[0].tolist()
            again: list[tuple[PodInfo, int]] = []
            for run, ok in zip(now, verdicts, strict=True):
                if ok and not self.policy.refuse_reprieve(run.state, pod):
                    continue
                p = run.sequence[step]
                again.append((p, run.col))
                if not self._tell(pod, run, p, REMOVE_POD, out):
                    failed.add(run.col)
                    continue
                run.victims.append(p)
                if not ok and step < run.num_violating_first:
                    run.violations += 1
            log.remove(again)
            playing = [run for run in playing if run.col not in failed]
            step += 1
        for run in playing:
            if 0 < run.num_violating_first < len(run.sequence):
                run.victims.sort(key=importance_key)
            out[run.col] = (run.victims, run.violations, Status())

    def _tell(self, pod: PodInfo, run: _NodeRun, p: PodInfo, what: str, out: dict[int, Victims]) -> bool:
        """AddPod or RemovePod of ``p`` on the run's node, for every active extension (the framework's
        RunPreFilterExtension*; nothing to call where no extension is active, as this is the dry run's innermost
        loop); False (and the node's error in ``out``) if one fails."""
        fwk = self._listening
        if fwk is None:
            return True
        call = fwk.run_add_pod if what == ADD_POD else fwk.run_remove_pod
        st = call(run.state, pod, p, run.col)
        if st.ok:
            return True
        out[run.col] = ([], 0, _extension_error(what, st.plugin, st))
        return False

    # -- choosing and preparing -----------------------------------------------------------------------------

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        return pick_one_node_for_preemption(candidates)

    def prepare_candidate(self, cand: Candidate, pod: PodInfo) -> Status:
        """Upstream prepareCandidate: evict the victims, then clear the nomination of lower-priority pods
        nominated to the node (they may no longer fit there; clearing it sends them back to be scheduled)."""
        for victim in cand.victims:
            # a victim waiting at Permit is only assumed: its wait ends (it goes back to the queue) instead of a
            # deletion; 1.36+ ends it as an error (waitingPod.Preempt), before as a rejection
            waiting = self.handle.get_waiting_pod(victim.key)
            if waiting is not None:
                if self.handle.kube_version.waiting_pod_preempted_as_error:
                    waiting.preempt(self.plugin, "preempted")
                else:
                    waiting.reject(self.plugin, "preempted")
                continue
            self.handle.actions.preempt(victim, pod)
        for p in [p for p in self.handle.nominated_pods(cand.col) if p.priority < pod.priority]:
            self.handle.clear_nomination(p)
        return Status()


def _extension_error(what: str, plugin: str, st: Status) -> Status:
    """The framework's wrapping of a failed PreFilter extension (RunPreFilterExtensionAddPod / RemovePod)."""
    return Status(Code.ERROR, [f"running {what} on PreFilter plugin {go_quote(plugin)}: {st.message}"])
