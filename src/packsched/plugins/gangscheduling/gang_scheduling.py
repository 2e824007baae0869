"""GangScheduling: kube-scheduler's own all-or-nothing scheduling (pkg/scheduler/framework/plugins/gangscheduling,
read in 1.35.4, 1.36.3 and 1.37.2; feature gates GangScheduling and GenericWorkload, alpha and off; in 1.37
GenericWorkload alone, beta and off).

A pod belongs to a group through its group reference (api/podgroups.py: 1.35 ``spec.workloadRef`` and a
``Workload``'s ``podGroups``, 1.36 ``spec.schedulingGroup`` and a ``PodGroup``). For a group whose policy is
``gang: {minCount}``:

- **PreEnqueue**: the pod stays out of the queue until its Workload (1.35) / PodGroup (1.36) exists ("waiting for
  pods's workload "<w>" to appear in scheduling queue" / "... pod group ..."), the pod group is one the Workload
  defines (1.35: "pod group "<g>" doesn't exist for a workload "<w>""), and ``minCount`` pods of the group exist
  ("waiting for minCount pods from a gang to appear in scheduling queue"). All UnschedulableAndUnresolvable.
- **Reserve / Unreserve** (1.35): the pod counts as assumed in the group, and no longer does (in 1.36 the cache's
  own assume and forget do this).
- **Permit**: while fewer than ``minCount`` pods of the group are assumed or bound, the pod waits (1.35: "waiting
  for minCount pods from a gang to be waiting on permit", until the group's deadline, 5 minutes after the first
  pod started waiting; 1.36: "waiting for minCount pods from a gang to be scheduled", 5 minutes) and the group's
  unscheduled pods are activated; the pod that completes the count allows every assumed pod of the group. In a
  1.36 pod-group scheduling cycle, Permit counts the cycle's copy of the group.
- **Events**: a pod added (bound or not) of the same group, and the Workload / PodGroup of the pod's group
  created, move the pods it rejected (upstream's queueing hints).

- **PlacementFeasible** (1.37): in the pod-group cycle, after each pod is tried, whether the group can still meet
  ``minCount`` (1 for a ``basic`` group): Unschedulable "minCount (m) cannot be satisfied: s scheduled, r
  remaining" once too few pods are left, Wait "minCount (m) is not yet satisfied: ..." while fewer are placed,
  Success once enough are (podgroup_placement.py decides with it; Permit then only holds the pods of the binding
  cycles for one another). 1.37 also moves the pods it rejected when their PodGroup's ``minCount`` decreases.

A pod without a group, or of a ``basic`` group, passes every point.
"""

from __future__ import annotations

from packsched.api.podgroups import PodGroupRef, SchedulingPodGroup, SchedulingWorkload
from packsched.backend.podgroups import SCHEDULING_TIMEOUT_SECONDS
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import (
    ADD,
    ASSIGNED_POD_ADD,
    DELETE,
    POD_GROUP_CYCLE,
    SCHEDULING_POD_GROUP,
    SCHEDULING_POD_GROUP_UPDATE,
    SCHEDULING_WORKLOAD,
    UNSCHEDULED_POD_ADD,
    UPDATE,
    ClusterEvent,
    Handle,
    PodGroupStatesView,
    PodGroupStateView,
)
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code, Status

NAME = "GangScheduling"
WAIT_1_35 = "waiting for minCount pods from a gang to be waiting on permit"
WAIT_1_36 = "waiting for minCount pods from a gang to be scheduled"
MIN_COUNT_NOT_MET = "waiting for minCount pods from a gang to appear in scheduling queue"


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [message], NAME)


class _GangScheduling:
    """What 1.35 and 1.36 share: PreEnqueue's count, Permit's quorum, the queueing hints. Subclasses find the
    group's policy (``_policy``) and say how long Permit waits."""

    name = NAME
    wait_message = ""
    object_resource = ""
    # PreEnqueue's verdict depends on the pod's group reference alone (the group's object and how many pods it has):
    # the queue asks once per group when it retries the held pods of a group (eventhandlers._retry_gated_group)
    pre_enqueue_per_group = True

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    # -- what the subclasses say ------------------------------------------------------------------------------

    def _policy_for_enqueue(self, ref: PodGroupRef) -> tuple[int | None, Status]:
        """The group's minCount (None: basic), or the status that keeps the pod out of the queue."""
        raise NotImplementedError

    def _policy_for_permit(self, ref: PodGroupRef) -> tuple[int | None, Status]:
        """The group's minCount (None: basic), or the error Permit answers."""
        raise NotImplementedError

    def _timeout(self, group: PodGroupStateView) -> float:
        raise NotImplementedError

    def _matches_object(self, ref: PodGroupRef, obj: object) -> bool:
        raise NotImplementedError

    # -- PreEnqueue ---------------------------------------------------------------------------------------------

    def pre_enqueue(self, pod: PodInfo) -> Status:
        ref = pod.pod_group
        if ref is None:
            return Status()
        min_count, st = self._policy_for_enqueue(ref)
        if not st.ok or min_count is None:
            return st
        group = self.handle.pod_group_state(ref.key)
        if group is None:
            return Status.error(self._missing_state(ref), NAME)
        if group.all_count < min_count:
            return _unresolvable(MIN_COUNT_NOT_MET)
        return Status()

    def _missing_state(self, ref: PodGroupRef) -> str:
        return f"pod group state not found for pod group {ref.key}"

    # -- Permit -------------------------------------------------------------------------------------------------

    def _group_for_permit(self, state: CycleState, ref: PodGroupRef) -> PodGroupStateView | None:
        return self.handle.pod_group_state(ref.key)

    def permit(self, state: CycleState, pod: PodInfo, node: str) -> tuple[Status, float]:
        ref = pod.pod_group
        if ref is None:
            return Status(), 0.0
        min_count, st = self._policy_for_permit(ref)
        if not st.ok:
            return st, 0.0
        if min_count is None:
            return Status(), 0.0
        group = self._group_for_permit(state, ref)
        if group is None:
            return Status.error(self._missing_state(ref), NAME), 0.0
        if group.scheduled_count < min_count:
            # the unscheduled pods of the group may have waited for this one: they are tried now
            self.handle.activate(group.unscheduled_keys())
            return Status(Code.WAIT, [self.wait_message], NAME), self._timeout(group)
        for key in list(group.assumed):
            waiting = self.handle.get_waiting_pod(key)
            if waiting is not None:
                waiting.allow(NAME)
        return Status(), 0.0

    # -- queueing hints -----------------------------------------------------------------------------------------

    def queueing_hint(self, event: str, waiting: PodInfo, obj: object) -> bool:
        ref = waiting.pod_group
        if ref is None:
            return False
        if event in (ASSIGNED_POD_ADD, UNSCHEDULED_POD_ADD):
            return isinstance(obj, PodInfo) and obj.pod_group == ref
        if event == self.object_resource:
            return self._matches_object(ref, obj)
        return True

    def assigned_pod_may_help(self, waiting: PodInfo, added: PodInfo, snap: Snapshot) -> bool:
        return self.queueing_hint(ASSIGNED_POD_ADD, waiting, added)


class GangScheduling135(_GangScheduling):
    """kube-scheduler 1.35: groups of Workloads (scheduling.k8s.io/v1alpha1), Reserve / Unreserve bookkeeping,
    one deadline per group."""

    wait_message = WAIT_1_35
    object_resource = SCHEDULING_WORKLOAD
    # upstream EventsToRegister: Pod/Add (bound or not) and Workload/Add, each with a hint
    queueing_events = frozenset({ASSIGNED_POD_ADD, UNSCHEDULED_POD_ADD, SCHEDULING_WORKLOAD})
    cluster_events = (SCHEDULING_WORKLOAD,)

    def __init__(self, handle: Handle) -> None:
        super().__init__(handle)
        self.workloads: dict[str, SchedulingWorkload] = {}

    def on_cluster_event(self, event: ClusterEvent) -> None:
        if event.resource != SCHEDULING_WORKLOAD:
            return
        if event.action in (ADD, UPDATE) and isinstance(event.new, SchedulingWorkload):
            self.workloads[event.new.key] = event.new
        elif event.action == DELETE and isinstance(event.old, SchedulingWorkload):
            self.workloads.pop(event.old.key, None)

    def _policy_for_enqueue(self, ref: PodGroupRef) -> tuple[int | None, Status]:
        workload = self.workloads.get(f"{ref.namespace}/{ref.workload}")
        if workload is None:
            return None, _unresolvable(f'waiting for pods\'s workload "{ref.workload}" to appear in scheduling queue')
        policy = workload.pod_groups.get(ref.pod_group)
        if policy is None:
            return None, _unresolvable(f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{workload.name}"')
        return policy.min_count, Status()

    def _policy_for_permit(self, ref: PodGroupRef) -> tuple[int | None, Status]:
        workload = self.workloads.get(f"{ref.namespace}/{ref.workload}")
        if workload is None:
            return None, Status.error(
                f"failed to get workload {ref.namespace}/{ref.workload}: workload.scheduling.k8s.io "
                f'"{ref.workload}" not found',
                NAME,
            )
        policy = workload.pod_groups.get(ref.pod_group)
        if policy is None:
            return None, Status.error(
                f'pod group "{ref.pod_group}" doesn\'t exist for a workload "{workload.name}"', NAME
            )
        return policy.min_count, Status()

    def _missing_state(self, ref: PodGroupRef) -> str:
        return "internal pod group state doesn't exist for a pod's workload"

    def _timeout(self, group: PodGroupStateView) -> float:
        return group.scheduling_timeout(self.handle.clock())

    def _matches_object(self, ref: PodGroupRef, obj: object) -> bool:
        return isinstance(obj, SchedulingWorkload) and obj.namespace == ref.namespace and obj.name == ref.workload

    # -- Reserve ------------------------------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        ref = pod.pod_group
        if ref is None:
            return Status()
        group = self.handle.pod_group_state(ref.key)
        if group is None:
            return Status.error(self._missing_state(ref), NAME)
        group.assume(pod)
        return Status()

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        ref = pod.pod_group
        group = self.handle.pod_group_state(ref.key) if ref is not None else None
        if group is not None:
            group.forget(pod.key)


class GangScheduling136(_GangScheduling):
    """kube-scheduler 1.36: groups of PodGroups (scheduling.k8s.io/v1alpha2), counted by the scheduler's cache (or
    a pod-group cycle's copy of it); each pod waits 5 minutes at most."""

    wait_message = WAIT_1_36
    object_resource = SCHEDULING_POD_GROUP
    queueing_events = frozenset({ASSIGNED_POD_ADD, UNSCHEDULED_POD_ADD, SCHEDULING_POD_GROUP})
    cluster_events = (SCHEDULING_POD_GROUP,)

    def __init__(self, handle: Handle) -> None:
        super().__init__(handle)
        self.pod_groups: dict[str, SchedulingPodGroup] = {}

    def on_cluster_event(self, event: ClusterEvent) -> None:
        if event.resource != SCHEDULING_POD_GROUP:
            return
        group = event.new if event.new is not None else event.old
        if isinstance(group, SchedulingPodGroup) and not group.served_in(self.handle.kube_version.minor):
            return  # a version this release's API server does not serve never reaches the scheduler
        if event.action in (ADD, UPDATE) and isinstance(event.new, SchedulingPodGroup):
            self.pod_groups[event.new.key] = event.new
        elif event.action == DELETE and isinstance(event.old, SchedulingPodGroup):
            self.pod_groups.pop(event.old.key, None)

    def _policy_for_enqueue(self, ref: PodGroupRef) -> tuple[int | None, Status]:
        group = self.pod_groups.get(ref.key)
        if group is None:
            return None, _unresolvable(f'waiting for pods\'s pod group "{ref.pod_group}" to appear in scheduling queue')
        return group.policy.min_count, Status()

    def _policy_for_permit(self, ref: PodGroupRef) -> tuple[int | None, Status]:
        group = self.pod_groups.get(ref.key)
        if group is None:
            return None, Status.error(
                f'failed to get podGroup {ref.key}: podgroup.scheduling.k8s.io "{ref.pod_group}" not found',
                NAME,
            )
        return group.policy.min_count, Status()

    def _group_for_permit(self, state: CycleState, ref: PodGroupRef) -> PodGroupStateView | None:
        cycle: PodGroupStatesView | None = state.read(POD_GROUP_CYCLE)
        if cycle is not None:  # a pod-group scheduling cycle: its own copy, where its pods are assumed
            return cycle.get(ref.key)
        return self.handle.pod_group_state(ref.key)

    def _timeout(self, group: PodGroupStateView) -> float:
        return SCHEDULING_TIMEOUT_SECONDS

    def _matches_object(self, ref: PodGroupRef, obj: object) -> bool:
        return isinstance(obj, SchedulingPodGroup) and obj.namespace == ref.namespace and obj.name == ref.pod_group


def placement_feasible(min_count: int, scheduled: int, remaining: int) -> Status:
    """Upstream PlacementFeasible for a group of ``min_count`` (1 for ``basic``) with ``scheduled`` pods placed
    (assumed or bound, and those the cycle placed so far) and ``remaining`` still to try."""
    if remaining + scheduled < min_count:
        why = f"minCount ({min_count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"
        return Status(Code.UNSCHEDULABLE, [why], NAME)
    if scheduled < min_count:
        why = f"minCount ({min_count}) is not yet satisfied: {scheduled} scheduled, {remaining} remaining"
        return Status(Code.WAIT, [why], NAME)
    return Status()


class GangScheduling137(GangScheduling136):
    """kube-scheduler 1.37: PodGroups of scheduling.k8s.io/v1beta1 (the only version its API server serves), the
    PlacementFeasible point, and a PodGroup whose ``minCount`` decreased moves the pods it rejected. PreEnqueue,
    Permit and the other events are 1.36's."""

    queueing_events = frozenset(
        {ASSIGNED_POD_ADD, UNSCHEDULED_POD_ADD, SCHEDULING_POD_GROUP, SCHEDULING_POD_GROUP_UPDATE}
    )

    def placement_feasible(self, group: SchedulingPodGroup, scheduled: int, remaining: int) -> Status:
        return placement_feasible(group.policy.min_count or 1, scheduled, remaining)

    def queueing_hint(self, event: str, waiting: PodInfo, obj: object) -> bool:
        if event == SCHEDULING_POD_GROUP_UPDATE:
            return self._min_count_decreased(waiting.pod_group, obj)
        return super().queueing_hint(event, waiting, obj)

    @staticmethod
    def _min_count_decreased(ref: PodGroupRef | None, obj: object) -> bool:
        """Upstream isSchedulableAfterPodGroupUpdated: ``obj`` is (old, new) PodGroup; only a gang's ``minCount``
        that went down may let its pods in."""
        if ref is None or not isinstance(obj, tuple) or len(obj) != 2:
            return False
        old, new = obj
        if not isinstance(old, SchedulingPodGroup) or not isinstance(new, SchedulingPodGroup):
            return False
        if (new.namespace, new.name) != (ref.namespace, ref.pod_group):
            return False
        if old.policy.min_count is None or new.policy.min_count is None:
            return False
        return new.policy.min_count < old.policy.min_count


def new_gang_scheduling(args: PluginArgs | None, handle: Handle) -> _GangScheduling:
    """1.35's plugin for kube-scheduler 1.35 and older (inert there: no pod has a group before 1.35), 1.36's for
    1.36, 1.37's for 1.37 and later."""
    return _BY_RELEASE[min(max(handle.kube_version.minor, 35), 37)](handle)


_BY_RELEASE: dict[int, type[_GangScheduling]] = {35: GangScheduling135, 36: GangScheduling136, 37: GangScheduling137}
