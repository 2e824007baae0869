"""kube-scheduler 1.37's pod-group scheduling cycle (GenericWorkload beta): upstream ``schedule_one_podgroup.go``
with the feature gates TopologyAwareWorkloadScheduling and CompositePodGroup off (as by default; packsched refuses
them on), so the group is tried in one implicit placement, the whole cluster.

What changed from 1.36 (podgroup_cycle.py), all of it here:

- **Validation first** (upstream validatePodGroup): every queued pod, then every pod of the group already placed
  (assumed or bound), must have the scheduler name of the first queued pod, the PodGroup's priority
  (``spec.priority``, resolved from its PriorityClass) and the preemption policy of the first queued pod; else every
  queued pod fails with that error (back through backoff, nomination cleared).
- **PlacementFeasible decides, not Permit**: before any pod and after each one, the profile's PlacementFeasible
  plugins (GangScheduling: ``minCount``) say whether the group can still fit (Unschedulable ends the cycle at once;
  the pods not tried yet take the group's status), has to wait for more pods (Wait), or fits (Success). Each pod
  is filtered and scored, then assumed and reserved; Permit runs only in the binding cycles.
- **No PostFilter per pod**: a pod that fits nowhere keeps its FitError, without preemption. When the group does
  not fit, PodGroupPostFilter runs once for the group (DynamicResources, then DefaultPreemption's pod-group
  preemption: victims anywhere in the cluster) and its verdict is appended to the group's status.
- A group that "fits" with none of its pods placed (``minCount`` met by pods placed earlier, every queued pod
  failing) is unschedulable ("pod group is unschedulable").
- The pods of the cycle are ordered by priority, then attempts (more first), then when they were queued, then name.

The pods that found a node while the group fits go to their binding cycles (assumed, reserved and permitted for real,
GangScheduling's Permit holding them for one another as in 1.36); the others go back to the queue: a placed pod of
a rejected group with the group's message, a pod that found no node with its own FitError.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from packsched.api.objects import PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER
from packsched.api.podgroups import SchedulingPodGroup
from packsched.backend.podgroups import PodGroupStates
from packsched.backend.queue import ENTITY_ERROR, ENTITY_FITS, ENTITY_REJECTED
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import POD_GROUP_CYCLE
from packsched.framework.podinfo import PodInfo
from packsched.framework.preemption import (
    chosen_node_fit_error,
    filter_pods_with_pdb_violation,
    importance_key,
    pod_terminating_by_preemption,
)
from packsched.framework.runtime import Framework
from packsched.framework.status import Code, Status

if TYPE_CHECKING:
    from packsched.scheduler import CycleResult, QueuedPod, Scheduler

POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
NO_VICTIMS = "No preemption victims found for incoming preemptor"
DRA_DONE = "deallocation and deletion of ResourceClaims completed"


@runtime_checkable
class PlacementFeasiblePlugin(Protocol):
    """A plugin with 1.37's PlacementFeasible point (GangScheduling)."""

    name: str

    def placement_feasible(self, group: SchedulingPodGroup, scheduled: int, remaining: int) -> Status: ...


@runtime_checkable
class PodGroupPostFilterPlugin(Protocol):
    """A plugin whose PodGroupPostFilter needs the cycle's pods and their states (DynamicResources)."""

    def pod_group_post_filter(self, tried: Iterable[tuple[PodInfo, CycleState]]) -> Status: ...


def _placement_plugins(fwk: Framework) -> list[PlacementFeasiblePlugin]:
    # an attribute test, not isinstance on the Protocol: that walks the Protocol's members at every call (a sixth
    # of a 1,000-gang run's time)
    return [p for p in fwk.plugins.values() if callable(getattr(p, "placement_feasible", None))]  # type: ignore[misc]


@dataclass
class _Outcome:
    """The group's status (Success: it fits), whether it waits for preemption, and per pod tried, in order, its
    status (Success: placed) and cycle state; the nominations pod-group preemption made, by pod key."""

    status: Status
    pods: list[Status] = field(default_factory=list)
    states: list[CycleState] = field(default_factory=list)
    waiting_on_preemption: bool = False
    any_scheduled: bool = False
    pre_filtered: bool = False  # some pod reached PreFilter (DynamicResources' pod-group state exists)
    nominations: dict[str, str] = field(default_factory=dict)
    nodes: list[str | None] = field(default_factory=list)
    untried: Status | None = None  # the group's status before PodGroupPostFilter: the pods not tried take it


class PlacementCycle:
    """The 1.37 pod-group cycles of ``sched`` (podgroup_cycle.PodGroupCycle hands them over)."""

    def __init__(self, sched: Scheduler) -> None:
        self._sched = sched

    # -- the cycle ------------------------------------------------------------------------------------------

    def run(self, members: list[QueuedPod], results: list[CycleResult], explain: frozenset[str]) -> None:
        """``members`` were popped in 1.36's order; ``results`` is filled in the same positions."""
        sched = self._sched
        order = sorted(range(len(members)), key=lambda i: _member_key(members[i]))
        members[:] = [members[i] for i in order]
        results[:] = [results[i] for i in order]
        first = members[0].info
        ref = first.pod_group
        assert ref is not None
        fwk = sched.frameworks.get(first.pod.scheduler_name)
        group = sched.pod_group_object(ref.key)
        if group is None or sched.group_gated(ref.key):
            # upstream keeps such pods out of its queue until their PodGroup is observed (GangScheduling's
            # PreEnqueue does here, when it runs), and holds a group back whole while one of its pods is gated at
            # PreEnqueue: they wait, untried
            for q in members:
                sched.park(q)
            return
        why = self._validate(members, group)
        if why is not None or fwk is None:
            for r in results:
                r.status = Status.error(why or "")
                r.group_status = r.status  # upstream writes the group's condition before any pod is tried
                r.nominated_node = ""
            back = list(zip(members, results, strict=True))
            sched.requeue_pod_group(ref.key, back, ENTITY_ERROR, group.priority or 0, _stamp(members))
            return
        sched.scheduling_cycle += 1
        copies = sched._gangs.copy()
        out = self._algorithm(fwk, group, members, results, copies, explain)
        report = sched.last_pod_group_cycle
        report.algorithm_done = time.perf_counter()
        out.untried = Status(out.status.code, list(out.status.reasons))
        if out.status.code == Code.UNSCHEDULABLE:
            self._pod_group_post_filter(fwk, group, members, out)
        report.waiting_on_preemption = out.waiting_on_preemption
        self._submit(fwk, group, members, results, out)

    def _validate(self, members: list[QueuedPod], group: SchedulingPodGroup) -> str | None:
        ref = members[0].info.pod_group
        state = self._sched._gangs.get(ref.key) if ref is not None else None
        if state is None:
            return "failed to get pod group state: pod group state not found"
        placed = [state.pods[k] for k in sorted(set(state.assumed) | state.assigned)]
        priority = group.priority or 0
        return validate_pod_group([q.info for q in members], placed, priority, self._sched.frameworks.keys())

    def _algorithm(
        self,
        fwk: Framework,
        group: SchedulingPodGroup,
        members: list[QueuedPod],
        results: list[CycleResult],
        copies: PodGroupStates,
        explain: frozenset[str],
    ) -> _Outcome:
        """Upstream podGroupSchedulingDefaultAlgorithm, then runRootSchedulingAlgorithm's rule for a group that fits
        with nothing placed; every placement is taken back before it returns."""
        ref = members[0].info.pod_group
        assert ref is not None
        state_of_group = copies.get(ref.key)
        out = _Outcome(Status(Code.UNSCHEDULABLE))
        if state_of_group is None:
            out.status = Status.error(
                f"failed to get podGroup state for podGroup {ref.key} to compute gang feasibility: not found"
            )
            return out
        undo: list[Callable[[], None]] = []

        def place(i: int) -> Status:
            st, node, state = self._place_one(fwk, members[i].info, results[i], copies, explain, undo)
            out.states.append(state)
            out.nodes.append(node)
            out.pre_filtered = True
            return st

        try:
            found = default_algorithm(
                len(members), state_of_group.scheduled_count, place, partial(self._feasible, fwk, group)
            )
        finally:
            for unplace in reversed(undo):
                unplace()
        out.status, out.pods, out.any_scheduled = found.status, found.pods, found.any_scheduled
        return out

    def _feasible(self, fwk: Framework, group: SchedulingPodGroup, scheduled: int, remaining: int) -> Status:
        """Upstream RunPlacementFeasiblePlugins: the first Unschedulable or Error ends it, the last Wait stands."""
        out = Status()
        for plugin in _placement_plugins(fwk):
            st = plugin.placement_feasible(group, scheduled, remaining)
            if st.code == Code.WAIT:
                out = st
            elif st.code == Code.UNSCHEDULABLE:
                return st
            elif not st.ok:
                return Status.error(f"running PlacementFeasible plugin: {st.message}", plugin.name)
        return out

    def _place_one(
        self,
        fwk: Framework,
        pod: PodInfo,
        result: CycleResult,
        copies: PodGroupStates,
        explain: frozenset[str],
        undo: list[Callable[[], None]],
    ) -> tuple[Status, str | None, CycleState]:
        """Upstream podGroupPodSchedulingAlgorithm: the pod's algorithm (no PostFilter), then assume and Reserve
        where it fits (kept for the next pods; ``undo`` takes it back)."""
        sched = self._sched
        state = CycleState()
        state.write(POD_GROUP_CYCLE, copies)
        chosen = sched._schedule_pod(fwk, state, pod, result, pod.key in explain)
        if chosen is None:
            if result.status.code != Code.ERROR:
                result.status = Status(result.status.code, [result.message], result.status.plugin)
            return result.status, None, state
        node = sched.snapshot.nodes[chosen].name
        placed, _st = hold_placement(sched, fwk, pod, state, node, result, undo)
        if not placed:
            return result.status, None, state
        return Status(), node, state

    # -- PodGroupPostFilter -----------------------------------------------------------------------------------

    def _pod_group_post_filter(
        self, fwk: Framework, group: SchedulingPodGroup, members: list[QueuedPod], out: _Outcome
    ) -> None:
        """Upstream RunPodGroupPostFilterPlugins and applyPodGroupPostFilterResult: the profile's PostFilter plugins
        that have the pod-group point, in order; the first Success or UnschedulableAndUnresolvable ends it; an
        Error becomes the group's status; otherwise the verdict is appended to the group's reasons."""
        reasons: list[str] = []
        verdict: Status | None = None
        for name in fwk.plugin_names("postFilter"):
            step = _POST_FILTERS.get(name)
            if step is None:
                continue
            st = step(self, fwk, group, members, out)
            if st.ok or st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                verdict = Status(st.code, list(st.reasons), name)
                break
            if st.code == Code.UNSCHEDULABLE:
                reasons += st.reasons
                continue
            out.status = Status.error(f'error in "{name}" PodGroupPostFilter plugins: {st.message}', name)
            return
        if verdict is None:
            verdict = Status(Code.UNSCHEDULABLE, reasons)
        if verdict.ok:
            out.waiting_on_preemption = True
        out.status = Status(out.status.code, [*out.status.reasons, verdict.message], out.status.plugin)

    def _dra_post_filter(
        self, fwk: Framework, group: SchedulingPodGroup, members: list[QueuedPod], out: _Outcome
    ) -> Status:
        """DynamicResources' PodGroupPostFilter: its pod-group state exists once a pod of the cycle reached
        PreFilter (else the read fails: "not found"); the plugin then frees one unavailable claim per pod tried."""
        if not out.pre_filtered:
            return Status.error("not found")
        plugin = fwk.plugins.get("DynamicResources")
        if not isinstance(plugin, PodGroupPostFilterPlugin):
            return Status(Code.UNSCHEDULABLE, [DRA_DONE])
        return plugin.pod_group_post_filter((q.info, st) for q, st in zip(members, out.states, strict=False))

    def _preemption_post_filter(
        self, fwk: Framework, group: SchedulingPodGroup, members: list[QueuedPod], out: _Outcome
    ) -> Status:
        """DefaultPreemption's PodGroupPostFilter (preemption/podgrouppreemption.go): the group preempts as one,
        its victims anywhere in the cluster."""
        st = self._preempt(fwk, group, members, out)
        return Status(st.code, [f"pod group preemption: {st.message}"] if st.message else [], st.plugin)

    def _preempt(self, fwk: Framework, group: SchedulingPodGroup, members: list[QueuedPod], out: _Outcome) -> Status:
        sched = self._sched
        priority = group.priority or 0
        if any(q.info.pod.preemption_policy == PREEMPT_NEVER for q in members):
            return Status(Code.UNSCHEDULABLE, ["not eligible due to preemptionPolicy=Never."])
        if self._ongoing_preemption(members, priority):
            out.nominations = {q.info.key: q.info.pod.nominated_node_name for q in members}
            return Status(Code.SUCCESS, ["ongoing preemption on nominated nodes"])
        snap = sched.snapshot
        victims = [(p, col) for col in range(snap.n) for p in list(snap.pods_on[col].values()) if p.priority < priority]
        if not victims:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_VICTIMS])
        orders = {col: list(snap.pods_on[col]) for col in sorted({c for _, c in victims})}
        snap.remove_pods([p for p, _ in victims])
        removed = list(victims)
        try:
            rerun = self._rerun(fwk, group, members)
            if not rerun.status.ok:
                return Status(rerun.status.code, list(rerun.status.reasons))
            assignments = [(q.info, node) for q, node in zip(members, rerun.nodes, strict=False) if node is not None]
            ordered = sorted(victims, key=lambda v: importance_key(v[0]))
            violating, others = filter_pods_with_pdb_violation([p for p, _ in ordered], sched.pdbs())
            col_of = {id(p): col for p, col in victims}
            preempt: list[PodInfo] = []
            for victim in [*violating, *others]:
                snap.add_pods([(victim, col_of[id(victim)])])
                if self._assignments_fit(fwk, assignments):
                    removed = [(p, c) for p, c in removed if p is not victim]
                else:
                    snap.remove_pods([victim])
                    preempt.append(victim)
        finally:
            snap.add_pods(removed)
            for col, order in orders.items():  # taking a pod out and back moved it last on its node
                snap.reorder_pods(col, order)
        preempt.sort(key=importance_key)
        for victim in preempt:
            waiting = sched.get_waiting_pod(victim.key)
            if waiting is not None:
                waiting.preempt("DefaultPreemption", "preempted")
                continue
            sched.actions.preempt(victim, members[0].info)
        out.nominations = {pod.key: node for pod, node in assignments}
        return Status(Code.SUCCESS, [f"found a placement for podgroup, preempting {len(preempt)} victims"])

    def _ongoing_preemption(self, members: list[QueuedPod], priority: int) -> bool:
        """Upstream isOngoingPreemption: a member is nominated to a node where a lower-priority pod is being
        deleted by preemption."""
        snap = self._sched.snapshot
        for name in sorted({q.info.pod.nominated_node_name for q in members} - {""}):
            col = snap.index.get(name)
            if col is None:
                continue
            for p in snap.pods_on[col].values():
                if p.priority < priority and pod_terminating_by_preemption(p.pod):
                    return True
        return False

    def _rerun(self, fwk: Framework, group: SchedulingPodGroup, members: list[QueuedPod]) -> _Outcome:
        """The group's algorithm again, on the snapshot as preemption changed it (upstream pgSchedulingFunc); the
        results it fills are thrown away."""
        from packsched.scheduler import CycleResult

        scratch = [CycleResult(q.info, q.info.pod.scheduler_name) for q in members]
        return self._algorithm(fwk, group, members, scratch, self._sched._gangs.copy(), frozenset())

    def _assignments_fit(self, fwk: Framework, assignments: list[tuple[PodInfo, str]]) -> bool:
        """Whether each preemptor pod still passes the filters (nominated pods counted) on the node the rerun gave
        it, the ones before it placed: upstream's reprieve check."""
        sched = self._sched
        copies = sched._gangs.copy()
        placed: list[tuple[PodInfo, CycleState, str]] = []
        try:
            for pod, node in assignments:
                state = CycleState()
                state.write(POD_GROUP_CYCLE, copies)
                if not fwk.run_pre_filter(state, pod).ok:
                    return False
                col = sched.snapshot.index[node]
                ok, _ = fwk.run_filters_with_nominated(state, pod, np.array([col], dtype=np.intp))
                if not ok[0]:
                    return False
                sched._assume(pod, node, state)
                fwk.run_reserve(state, pod, node)
                placed.append((pod, state, node))
            return True
        finally:
            for pod, state, node in reversed(placed):
                unplace(sched, fwk, pod, state, node, pod.pod.nominated_node_name)

    # -- submit -----------------------------------------------------------------------------------------------

    def _submit(
        self,
        fwk: Framework,
        group: SchedulingPodGroup,
        members: list[QueuedPod],
        results: list[CycleResult],
        out: _Outcome,
    ) -> None:
        """Upstream submitPodGroupAlgorithmResult (with completePodGroupAlgorithmResult: the pods not tried take
        the group's status as it was before PodGroupPostFilter), then AddAttemptedPodGroupIfNeeded: the pods that
        do not go to their binding cycles go back to the queue together, as the group's entity (a group that fits
        leaves its pods over in the active queue at once, ahead of later entities)."""
        sched = self._sched
        untried = out.untried if out.untried is not None else out.status
        verdict = Status(out.status.code, list(out.status.reasons), out.status.plugin)
        stamp = _stamp(members)  # the entity's timestamp when it was popped
        back: list[tuple[QueuedPod, CycleResult]] = []
        for i, (q, result) in enumerate(zip(members, results, strict=True)):
            pod = q.info
            result.group_status = verdict
            tried = i < len(out.pods)
            st = out.pods[i] if tried else untried
            nominated = out.nominations.get(pod.key)
            if out.status.code == Code.ERROR:
                if st.code != Code.ERROR:
                    result.status = Status(Code.ERROR, list(out.status.reasons))
                    result.refused_after_filters = result.status
                result.node = None
                result.nominated_node = ""
                back.append((q, result))
                continue
            if tried and st.ok:
                node = out.nodes[i]
                assert node is not None
                if out.status.ok:
                    state = out.states[i]
                    state.write(POD_GROUP_CYCLE, None)
                    result.node = node
                    sched._reserve_and_bind(fwk, state, pod, sched.snapshot.index[node], result, q)
                    if not result.scheduled and not result.waiting:
                        back.append((q, result))
                    continue
                # waiting for preemption: the group's status; else the pod's own, made from the group's message
                why = out.status if out.waiting_on_preemption else group_unschedulable([out.status.message])
                sched._refused(result, Status(Code.UNSCHEDULABLE, list(why.reasons)))
                result.nominated_node = nominated if out.waiting_on_preemption else ""
                back.append((q, result))
                continue
            result.node = None
            if not tried:
                result.status = untried
                result.refused_after_filters = untried
            result.nominated_node = nominated
            back.append((q, result))
        ref = members[0].info.pod_group
        assert ref is not None
        outcome = _ENTITY_OUTCOMES.get(out.status.code, ENTITY_REJECTED)
        sched.requeue_pod_group(ref.key, back, outcome, group.priority or 0, stamp)


def _stamp(members: list[QueuedPod]) -> int:
    """The timestamp the group was popped by (its entity's; before its first cycle, its first pod's)."""
    return min(q.info.arrival for q in members)


# how a cycle's status ends for the group's entity in the queue (any other code: rejected)
_ENTITY_OUTCOMES = {Code.SUCCESS: ENTITY_FITS, Code.ERROR: ENTITY_ERROR}


# PodGroupPostFilter of the plugins that have it, by name (run in the profile's PostFilter order).
_POST_FILTERS: dict[
    str, Callable[[PlacementCycle, Framework, SchedulingPodGroup, list[QueuedPod], _Outcome], Status]
] = {
    "DynamicResources": PlacementCycle._dra_post_filter,
    "DefaultPreemption": PlacementCycle._preemption_post_filter,
}


@dataclass
class AlgorithmResult:
    """What :func:`default_algorithm` found: the group's status, each pod's status (the pods tried, in order),
    whether any pod was placed."""

    status: Status
    pods: list[Status]
    any_scheduled: bool


def default_algorithm(
    pods: int,
    scheduled: int,
    place: Callable[[int], Status],
    feasible: Callable[[int, int], Status],
) -> AlgorithmResult:
    """Upstream podGroupSchedulingDefaultAlgorithm and runRootSchedulingAlgorithm's rule for a group that fits with
    nothing placed, over ``pods`` queued pods of a group with ``scheduled`` pods placed already: ``place(i)`` tries
    pod ``i`` (Success: placed), ``feasible(scheduled, remaining)`` is PlacementFeasible. PlacementFeasible runs
    before any pod and after each; its Unschedulable ends the loop, a pod's Error ends it with an error; a Wait
    left at the end is Unschedulable with its reasons."""
    out = AlgorithmResult(feasible(scheduled, pods), [], False)
    if out.status.code == Code.ERROR:
        out.status = Status.error(f"failed to evaluate placement feasibility: {out.status.message}")
        return out
    if out.status.code == Code.UNSCHEDULABLE:
        out.status = group_unschedulable(out.status.reasons)
        return out
    remaining = pods
    for i in range(pods):
        st = place(i)
        out.pods.append(st)
        if st.code == Code.ERROR:
            out.status = Status.error(f"failed to schedule other pod from a pod group: {st.message}")
            break
        remaining -= 1
        scheduled += st.ok
        pf = feasible(scheduled, remaining)
        if pf.code == Code.ERROR:
            out.status = Status.error(f"failed to evaluate placement feasibility: {pf.message}")
            break
        out.status = pf
        if pf.code == Code.UNSCHEDULABLE:
            break
        out.any_scheduled = out.any_scheduled or st.ok
    if out.status.code == Code.WAIT:
        out.status = group_unschedulable(out.status.reasons)
    if not out.status.ok:
        out.any_scheduled = False
    elif not out.any_scheduled:  # the framework wants one pod placed to call a group schedulable
        out.status = group_unschedulable([])
    return out


def hold_placement(
    sched: Scheduler,
    fwk: Framework,
    pod: PodInfo,
    state: CycleState,
    node: str,
    result: CycleResult,
    undo: list[Callable[[], None]],
    *,
    permit: bool = False,
) -> tuple[bool, Status]:
    """One pod of a pod-group cycle placed on ``node`` for the pods after it (both the 1.36 and the 1.37 cycle):
    assumed, reserved and, with ``permit`` (1.36), permitted. A refusal (Reserve's, or Permit's other than Wait)
    takes the placement back and marks ``result`` refused on the chosen node; otherwise ``result`` holds the node
    and ``undo`` gets the step that takes the placement back at the end of the cycle. Answers whether the pod is
    placed, with the refusal or Permit's status (Success without ``permit``)."""
    nominated = pod.pod.nominated_node_name
    sched._assume(pod, node, state)
    st = fwk.run_reserve(state, pod, node)
    if st.ok and permit:
        st, _waits = fwk.run_permit(state, pod, node)
        placed = st.ok or st.code == Code.WAIT
        if not placed:
            fwk.run_unreserve(state, pod, node)
    else:
        placed = st.ok
    if not placed:
        _forget(sched, pod, state, nominated)
        sched._refused(result, chosen_node_fit_error(st))
        return False, st
    result.node = node
    undo.append(partial(unplace, sched, fwk, pod, state, node, nominated))
    return True, st


def unplace(sched: Scheduler, fwk: Framework, pod: PodInfo, state: CycleState, node: str, nominated: str) -> None:
    """A pod-group cycle's placement taken back (upstream's revert): Unreserve, then forget."""
    fwk.run_unreserve(state, pod, node)
    _forget(sched, pod, state, nominated)


def _forget(sched: Scheduler, pod: PodInfo, state: CycleState, nominated: str) -> None:
    """The room a pod-group cycle's placement held freed, the pod unassumed in the cycle's copy of its group, its
    nomination (which assuming it cleared) back."""
    sched.forget_assumed(pod, state)
    if nominated and nominated in sched.snapshot.index:
        sched.nominator.nominate(pod, sched.snapshot.index[nominated])


def group_unschedulable(reasons: list[str]) -> Status:
    """Upstream's ``NewStatus(Unschedulable, reasons...).WithError(errPodGroupUnschedulable)``: a Go Status lists
    its error first among its reasons, so its message begins "pod group is unschedulable"."""
    return Status(Code.UNSCHEDULABLE, [POD_GROUP_UNSCHEDULABLE, *reasons])


def validate_pod_group(
    queued: list[PodInfo], placed: list[PodInfo], priority: int, profiles: Collection[str]
) -> str | None:
    """Upstream validatePodGroup (PodGroupPreemptionPolicy off): the queued pods, then the group's pods placed
    already, must share the first queued pod's scheduler name and preemption policy, and have the PodGroup's
    ``priority``; the scheduler name must be a profile's. The first problem, or None."""
    name = queued[0].pod.scheduler_name
    policy = ""

    def check(pod: PodInfo) -> str | None:
        nonlocal policy
        if pod.pod.scheduler_name != name:
            return (
                "all pods in a single pod group should have the same .spec.schedulerName set, got: "
                f'"{pod.pod.scheduler_name}" and "{name}"'
            )
        if pod.priority != priority:
            return (
                "all pods in a single pod group should have the same priority as the pod group's priority, got "
                f"{pod.priority} and {priority}"
            )
        own = pod.pod.preemption_policy or PREEMPT_LOWER_PRIORITY
        if not policy:
            policy = own
        elif own != policy:
            return f"all pods in a single pod group should have the same preemption policy, got {own} and {policy}"
        return None

    for pod in [*queued, *placed]:
        why = check(pod)
        if why is not None:
            return why
    if name not in profiles:
        return f'profile not found for scheduler name "{name}"'
    return None


def _member_key(q: QueuedPod) -> tuple[int, int, float, str]:
    """Upstream PodGroupMemberPodsOrderingFunc: higher priority, more attempts, queued earlier, then the name."""
    queued = q.info.queued_at if q.info.queued_at is not None else 0.0
    return (-q.info.priority, -q.attempts, queued, q.info.pod.name)


__all__ = ["POD_GROUP_UNSCHEDULABLE", "PlacementCycle", "group_unschedulable", "hold_placement", "unplace"]
