"""kube-scheduler 1.36's pod-group scheduling cycle (GenericWorkload; 1.37's is podgroup_placement.py, which this
hands the groups over to): the pods of one group tried together, as
upstream's ``schedule_one_podgroup.go`` beside ``schedule_one.go``.

:class:`PodGroupCycle` belongs to one :class:`~packsched.scheduler.Scheduler`, which hands it the group it popped
(:meth:`Scheduler.schedule_pod_group`). Each pod goes through the scheduler's own single-pod steps up to Permit
(``Scheduler._schedule_pod``, assume, Reserve, Permit) against a copy of the group states kept in the cycle state
(``POD_GROUP_CYCLE``); every placement is then taken back, and the group either goes to the ordinary binding path
(``Scheduler._reserve_and_bind``) or back to the queue (``Scheduler.handle_failure``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packsched.backend.podgroups import PodGroupStates
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import POD_GROUP_CYCLE
from packsched.framework.podinfo import PodInfo
from packsched.framework.runtime import Framework
from packsched.framework.status import Code, Status
from packsched.podgroup_placement import PlacementCycle, group_unschedulable, hold_placement

if TYPE_CHECKING:
    from packsched.scheduler import CycleResult, QueuedPod, Scheduler


def _group_unschedulable(permit: Status) -> Status:
    """A placed pod of a group that does not fit (1.36): the group's status with the pod's Permit message
    ("pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, ...")."""
    return group_unschedulable([permit.message])


class PodGroupCycle:
    """The pod-group scheduling cycles of ``sched`` (it owns the queue, the cache and the single-pod steps this
    borrows)."""

    def __init__(self, sched: Scheduler) -> None:
        self._sched = sched
        # kube-scheduler 1.37+: placements and PlacementFeasible (podgroup_placement.py) instead of Permit
        self._placement = PlacementCycle(sched)

    def applies_to(self, pod: PodInfo) -> bool:
        """Whether the pod is scheduled with its group in one pod-group scheduling cycle (kube-scheduler 1.36+
        with GenericWorkload, a pod with ``spec.schedulingGroup``: upstream ScheduleOne's branch to
        scheduleOnePodGroup)."""
        sched = self._sched
        return (
            pod.pod_group is not None
            and sched.config.kube_version.pod_group_scheduling_cycle
            and sched.pod_group_state(pod.pod_group.key) is not None
        )

    def run(self, members: list[QueuedPod], results: list[CycleResult], explain: frozenset[str]) -> None:
        """One pod-group scheduling cycle over ``members`` (the group's pods the scheduler took out of its queue, in
        the cycle's order), filling ``results`` (one per member, same order); see
        :meth:`Scheduler.schedule_pod_group`."""
        if self._sched.config.kube_version.pod_group_placement_cycle:
            self._placement.run(members, results, explain)
            return
        sched = self._sched
        # the pod the cycle began with or not (members are sorted): its name is every member's unless refused below
        first = members[0]
        names = {q.info.pod.scheduler_name for q in members}
        fwk = sched.frameworks.get(first.info.pod.scheduler_name)
        if fwk is None or len(names) > 1:
            shown = sorted(names)
            why = (
                f'all pods in a single pod group should have the same .spec.schedulerName set, got: "{shown[1]}" '
                f'and "{shown[0]}"'
                if len(names) > 1
                else f"profile not found for scheduler name {first.info.pod.scheduler_name!r}"
            )
            for q, r in zip(members, results, strict=True):
                r.status = Status.error(why)
                sched.handle_failure(q, r)
            return
        copies = sched._gangs.copy()
        sched.scheduling_cycle += 1  # the group's pods share one cycle
        outcome = self._algorithm(fwk, members, results, copies, explain)
        sched.last_pod_group_cycle.algorithm_done = time.perf_counter()
        sched.last_pod_group_cycle.waiting_on_preemption = outcome.waiting_on_preemption
        self._submit(fwk, members, results, outcome)

    def _algorithm(
        self,
        fwk: Framework,
        members: list[QueuedPod],
        results: list[CycleResult],
        copies: PodGroupStates,
        explain: frozenset[str],
    ) -> _GroupOutcome:
        """Upstream podGroupSchedulingDefaultAlgorithm over ``members``: each pod's algorithm, its placement kept
        for the next ones, then every placement taken back. Fills ``results`` (node, status) and answers the
        group's status with each pod's Permit status and cycle state."""
        sched = self._sched
        out = _GroupOutcome(group_unschedulable([]))
        undo: list[Callable[[], None]] = []
        preempting = False
        try:
            for q, result in zip(members, results, strict=True):
                pod = q.info
                state = CycleState()
                state.write(POD_GROUP_CYCLE, copies)
                out.states.append(state)
                chosen = sched._schedule_pod(fwk, state, pod, result, pod.key in explain)
                needs_preemption = False
                if chosen is None:
                    if result.nominated_node and result.status.code != Code.ERROR:
                        # the subsequent pods see this one on its nominated node, its victims going away
                        chosen = sched.snapshot.index[result.nominated_node]
                        needs_preemption = True
                    else:
                        if out.not_placed(result.status, result.message):
                            break
                        continue
                node = sched.snapshot.nodes[chosen].name
                placed, permit = hold_placement(sched, fwk, pod, state, node, result, undo, permit=True)
                if not placed:
                    if out.not_placed(permit, permit.message):
                        break
                    continue
                out.permits.append(permit)
                out.preemption.append(needs_preemption)
                preempting = preempting or needs_preemption
                if permit.ok:  # the group fits (a gang: minCount pods placed)
                    if preempting:
                        out.status = Status(Code.UNSCHEDULABLE, ["pod group is waiting for preemption to complete"])
                        out.waiting_on_preemption = True
                    else:
                        out.status = Status()
        finally:
            for unplace in reversed(undo):
                unplace()
        return out

    def _submit(self, fwk: Framework, members: list[QueuedPod], results: list[CycleResult], out: _GroupOutcome) -> None:
        """Upstream submitPodGroupAlgorithmResult: the pods of a group that fits go to their binding cycles (assumed,
        reserved and permitted for real, on the node the cycle found); the others go back to the queue."""
        sched = self._sched
        verdict = Status(out.status.code, list(out.status.reasons), out.status.plugin)
        for i, (q, result) in enumerate(zip(members, results, strict=True)):
            pod = q.info
            result.group_status = verdict
            placed = i < len(out.permits) and out.permits[i] is not None
            needs_preemption = placed and out.preemption[i]
            if out.status.code == Code.ERROR:
                if result.status.code != Code.ERROR:
                    result.status = Status(Code.ERROR, list(out.status.reasons))
                result.node = None
                sched.handle_failure(q, result)
                continue
            if placed and not needs_preemption:
                node = result.node
                assert node is not None
                if out.status.ok:
                    state = out.states[i]
                    state.write(POD_GROUP_CYCLE, None)
                    sched._reserve_and_bind(fwk, state, pod, sched.snapshot.index[node], result, q)
                    if not result.scheduled and not result.waiting:
                        sched.handle_failure(q, result)
                    continue
                if out.waiting_on_preemption:  # back to wait, nominated where the cycle placed it
                    result.nominated_node = node
                    sched._refused(result, Status(Code.UNSCHEDULABLE, list(out.status.reasons)))
                else:
                    permit = out.permits[i]
                    assert permit is not None
                    sched._refused(result, _group_unschedulable(permit))
                    result.nominated_node = ""
                sched.handle_failure(q, result)
                continue
            if needs_preemption and not out.waiting_on_preemption:
                permit = out.permits[i]
                assert permit is not None
                sched._refused(result, _group_unschedulable(permit))
                result.nominated_node = ""
            else:
                result.node = None
            sched.handle_failure(q, result)


@dataclass
class _GroupOutcome:
    """What a pod-group scheduling cycle's algorithm found: the group's status (Success: it fits), whether it
    waits for preemption, and per pod in the cycle's order its Permit status (None: not placed), whether it
    needed preemption, and its cycle state."""

    status: Status
    waiting_on_preemption: bool = False
    permits: list[Status | None] = field(default_factory=list)
    preemption: list[bool] = field(default_factory=list)
    states: list[CycleState] = field(default_factory=list)

    def not_placed(self, st: Status, message: str) -> bool:
        """A pod of the cycle found no place (its algorithm, Reserve or Permit refused): recorded so; after an
        error the whole group fails with it, and the cycle stops (answers True)."""
        self.permits.append(None)
        self.preemption.append(False)
        if st.code != Code.ERROR:
            return False
        self.status = Status.error(f"failed to schedule other pod from a pod group: {message}")
        self.waiting_on_preemption = False
        return True
