"""Coscheduling (kubernetes-sigs/scheduler-plugins, pkg/coscheduling, as of v0.34): gang scheduling with PodGroups.

A pod labelled ``scheduling.x-k8s.io/pod-group: <name>`` belongs to the PodGroup ``<name>`` of its namespace
(api/gangs.py). The plugin:

- **QueueSort**: higher priority first; then the group's creation time (or the time the group last failed), for a
  pod without a group the time it entered the queue; then ``namespace/name``. The pods of a group come one after
  the other.
- **PreFilter**: the group must not be backed off ("podGroup <ns/name> failed recently"); at least ``minMember``
  pods of the group must exist ("pre-filter pod <pod> cannot find enough sibling pods, current pods number: <n>,
  minMember of group: <m>"), none of the quorum gated; ``minResources`` (with ``pods: minMember``) must be free
  summed over all nodes, the group's own pods not counted ("resource gap: ..."). Rejections are
  UnschedulableAndUnresolvable.
- **Permit**: the pod counts as assigned; once ``minMember`` of the group are assigned the waiting ones are allowed
  and the group is bound; before, the pod waits (``scheduleTimeoutSeconds`` of the group, else, or when that is 0,
  ``permitWaitingTimeSeconds``), and the first pod to wait activates its siblings in the queue. A pod naming a
  group that does not exist is rejected here: "PodGroup not found".
- **PostFilter**: a pod that fits nowhere rejects every waiting pod of its group ("optimistic rejection in
  PostFilter") unless enough members are placed already (within ``podGroupRejectPercentage`` of ``minMember``);
  the group may be backed off (``podGroupBackoffSeconds``).
- **Unreserve** (a waiting pod rejected or timed out, a bind failed): every other waiting pod of the group is
  rejected ("rejection in Unreserve") and the group's failure time moves it back in the queue order.

Upstream keeps its "assigned" set of each group from the pods its informer sees bound and from Permit; so does
this plugin, from the assigned-pod events and from Permit/Unreserve.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from packsched.api.gangs import PodGroup, pod_group_name
from packsched.api.goquantity import (
    BINARY_SI,
    DECIMAL_SI,
    GoQuantity,
    new_quantity,
    parse_go_quantity,
    resource_list_v,
    sub_total,
)
from packsched.api.objects import Pod
from packsched.api.quantity import format_quantity
from packsched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_hugepages
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.interface import (
    ADD,
    ASSIGNED_POD_ADD,
    DELETE,
    POD,
    POD_GROUP,
    UPDATE,
    ClusterEvent,
    Handle,
    PostFilterResult,
)
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code, Status

NAME = "Coscheduling"
DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60
DEFAULT_POD_GROUP_BACKOFF_SECONDS = 0
DEFAULT_POD_GROUP_REJECT_PERCENTAGE = 10
# How long a group that passed the minResources check stays permitted when permitWaitingTimeSeconds is 0 (the
# default expiration of upstream's permittedPG cache)
PERMITTED_CACHE_DEFAULT_SECONDS = 3
_ARG_FIELDS = ("permitWaitingTimeSeconds", "podGroupBackoffSeconds", "podGroupRejectPercentage")
_TYPE_META = ("apiVersion", "kind")
_PERMIT_STATE_KEY = "PermitCoscheduling"


@dataclass(frozen=True)
class CoschedulingArgs:
    permit_waiting_time_seconds: int = DEFAULT_PERMIT_WAITING_TIME_SECONDS
    pod_group_backoff_seconds: int = DEFAULT_POD_GROUP_BACKOFF_SECONDS
    pod_group_reject_percentage: int = DEFAULT_POD_GROUP_REJECT_PERCENTAGE


def parse_args(raw: PluginArgs | None) -> CoschedulingArgs:
    """CoschedulingArgs with upstream's defaults (60, 0, 10) and validation; ValueError names the field."""
    if raw is None:
        return CoschedulingArgs()
    if not isinstance(raw, Mapping):
        raise ValueError("args must be a map")
    unknown = sorted(set(raw) - set(_ARG_FIELDS) - set(_TYPE_META))
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}; the fields are {', '.join(_ARG_FIELDS)}")
    kind = raw.get("kind")
    if kind is not None and kind != "CoschedulingArgs":
        raise ValueError(f"kind: want CoschedulingArgs, got {kind!r}")
    values: dict[str, int] = {}
    defaults = (
        DEFAULT_PERMIT_WAITING_TIME_SECONDS,
        DEFAULT_POD_GROUP_BACKOFF_SECONDS,
        DEFAULT_POD_GROUP_REJECT_PERCENTAGE,
    )
    for name, default in zip(_ARG_FIELDS, defaults, strict=True):
        value = raw.get(name)
        if value is None:
            values[name] = default
        elif isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name}: Invalid value: {value!r}: must be an integer")
        else:
            values[name] = value
    errors = []
    if values["permitWaitingTimeSeconds"] < 0:
        errors.append(
            f"permitWaitingTimeSeconds: Invalid value: {values['permitWaitingTimeSeconds']}: must be greater than 0"
        )
    if values["podGroupBackoffSeconds"] < 0:
        errors.append(
            f"podGroupBackoffSeconds: Invalid value: {values['podGroupBackoffSeconds']}: must be greater than 0"
        )
    pct = values["podGroupRejectPercentage"]
    if not 0 <= pct <= 100:
        errors.append(f"podGroupRejectPercentage: Invalid value: {pct}: must be between 0 and 100")
    if errors:  # one error as it is, several as Kubernetes prints an aggregate: [a, b]
        raise ValueError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return CoschedulingArgs(*(values[n] for n in _ARG_FIELDS))


def group_key(pod: Pod) -> str:
    """``namespace/group`` of the pod ("" without a group label): upstream GetPodGroupFullName."""
    name = pod_group_name(pod)
    return f"{pod.namespace}/{name}" if name else ""


class Coscheduling:
    name = NAME
    cluster_events = (POD, POD_GROUP)  # the live adapter watches nothing else for it
    # upstream EventsToRegister: Pod/Add and PodGroup Add/Update, without hint functions (a bound pod, a
    # PodGroup created or changed moves the pods it rejected; a deleted pod does not)
    queueing_events = frozenset({ASSIGNED_POD_ADD, POD_GROUP})

    def __init__(self, args: CoschedulingArgs, handle: Handle) -> None:
        self.handle = handle
        self.args = args
        self.reject_threshold = args.pod_group_reject_percentage / 100.0
        self.groups: dict[str, PodGroup] = {}
        self.assigned: dict[str, set[str]] = {}  # group key -> names of pods assigned (bound or permitted)
        self._permitted_until: dict[str, float] = {}  # groups whose minResources were found, until when
        self._backoff_until: dict[str, float] = {}
        self._last_failed: dict[str, float] = {}

    # -- cluster events -----------------------------------------------------------------------------------

    def on_cluster_event(self, event: ClusterEvent) -> None:
        if event.resource == POD_GROUP:
            if event.action in (ADD, UPDATE) and isinstance(event.new, PodGroup):
                if isinstance(event.old, PodGroup):
                    self.groups.pop(event.old.key, None)
                self.groups[event.new.key] = event.new
            elif event.action == DELETE and isinstance(event.old, PodGroup):
                self.groups.pop(event.old.key, None)
        elif event.resource == POD:
            if event.action == ADD and isinstance(event.new, Pod) and event.new.node_name != "":
                self._assign(event.new)
            elif event.action == DELETE and isinstance(event.old, Pod):
                self._unassign(event.old)
            elif event.action == UPDATE and isinstance(event.new, Pod) and event.new.phase in ("Succeeded", "Failed"):
                # upstream's informer lists only pods neither succeeded nor failed: one that finishes is deleted
                self._unassign(event.new)

    def _assign(self, pod: Pod) -> None:
        key = group_key(pod)
        if key:
            self.assigned.setdefault(key, set()).add(pod.name)

    def _unassign(self, pod: Pod) -> None:
        key = group_key(pod)
        members = self.assigned.get(key) if key else None
        if members is not None:
            members.discard(pod.name)
            if not members:
                del self.assigned[key]

    def group_of(self, pod: Pod) -> tuple[str, PodGroup | None]:
        key = group_key(pod)
        return key, (self.groups.get(key) if key else None)

    def _siblings(self, pod: Pod) -> list[PodInfo]:
        """The pods of the group that exist (pending or running), as upstream's pod lister lists them."""
        return [
            p
            for p in self.handle.group_members(pod.namespace, pod_group_name(pod))
            if p.pod.phase not in ("Succeeded", "Failed")
        ]

    # -- QueueSort ----------------------------------------------------------------------------------------

    def _time_of(self, pod: PodInfo) -> float:
        key = group_key(pod.pod)
        if key:
            failed = self._last_failed.get(key)
            if failed is not None:
                return failed
            group = self.groups.get(key)
            if group is not None:
                return group.created
        return pod.queued_at if pod.queued_at is not None else 0.0

    def less(self, a: PodInfo, b: PodInfo) -> bool:
        return self.sort_key(a) < self.sort_key(b)

    def sort_key(self, pod: PodInfo) -> tuple[float | int | str, ...]:
        return (-pod.priority, self._time_of(pod), pod.key)

    # -- PreFilter ----------------------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        key, group = self.group_of(pod.pod)
        if group is None:
            return Status()
        now = self.handle.clock()
        if self._backoff_until.get(key, -1.0) > now:
            return self._reject(f"podGroup {key} failed recently")
        pods = self._siblings(pod.pod)
        gap = group.min_member - len(pods)
        if gap > 0:
            return self._reject(
                f"pre-filter pod {pod.pod.name} cannot find enough sibling pods, "
                f"current pods number: {len(pods)}, minMember of group: {group.min_member}"
            )
        for p in pods:
            if p.pod.scheduling_gates:
                gap += 1
            if gap > 0:
                return self._reject(
                    f"pre-filter pod {pod.pod.name} cannot proceed due to gated pods in the same PodGroup"
                )
        if group.min_resources is None:
            return Status()
        if self._permitted_until.get(key, -1.0) > now:
            return Status()
        gap_text = self._resource_gap(snap, key, group)
        if gap_text:
            return self._reject(gap_text)
        # upstream caches the group for permitWaitingTimeSeconds; go-cache reads a duration of 0 as the cache's
        # default expiration (3 s)
        ttl = self.args.permit_waiting_time_seconds or PERMITTED_CACHE_DEFAULT_SECONDS
        self._permitted_until[key] = now + ttl
        return Status()

    @staticmethod
    def _reject(message: str) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [message], NAME)

    def _resource_gap(self, snap: Snapshot, key: str, group: PodGroup) -> str:
        """Upstream CheckClusterResource: ``minResources`` plus ``pods: minMember``, less what each node has free
        (its pods of this group not counted), node after node; "" once nothing is left. Subtracting node after
        node until a resource is covered is a running sum: a resource is covered where its running sum of free
        room first reaches the need; what is left of an uncovered one is the need less the sum over every node.
        The message prints what is left as upstream does, Go's raw ``Quantity`` fields (api/goquantity.py)."""
        need = dict(group.min_resources or {})
        need[PODS] = group.min_member
        if snap.n == 0:
            return "resource gap: " + resource_list_v({r: _requested_quantity(group, r, a) for r, a in need.items()})
        namespace, _, name = key.partition("/")
        own = [p for p in self.handle.group_members(namespace, name) if p.node >= 0]
        cols = np.asarray([p.node for p in own], dtype=np.int64)
        left: dict[str, GoQuantity] = {}
        for res, amount in need.items():
            if res == PODS:
                free = snap.allowed_pods - snap.pod_count
                back = np.ones(len(own), dtype=np.int64)
            elif res in snap.row:
                row = snap.row[res]
                free = snap.alloc[row] - snap.requested[row]
                back = np.asarray([p.requests.get(res, 0) for p in own], dtype=np.int64)
            else:
                free = np.zeros(snap.n, dtype=np.int64)
                back = np.zeros(len(own), dtype=np.int64)
            free = free.astype(np.int64)  # a copy: the group's own pods count as free room
            np.add.at(free, cols, back)
            running = np.cumsum(free)
            if not bool((running >= amount).any()):
                nonzero = np.flatnonzero(free)
                first = int(free[nonzero[0]]) if len(nonzero) else 0
                wanted = _requested_quantity(group, res, amount)
                left[res] = sub_total(wanted, _node_quantity(res), int(running[-1]), len(nonzero) > 0, first)
        return "resource gap: " + resource_list_v(left) if left else ""

    # -- PostFilter ---------------------------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult:
        key, group = self.group_of(pod.pod)
        if group is None:
            return PostFilterResult(None, Status(Code.UNSCHEDULABLE, ["can not find pod group"]))
        assigned = len(self.assigned.get(key, ()))
        if assigned >= group.min_member:
            return PostFilterResult(None, Status(Code.UNSCHEDULABLE))
        not_assigned = (group.min_member - assigned) / group.min_member
        if not_assigned <= self.reject_threshold:
            return PostFilterResult(None, Status(Code.UNSCHEDULABLE))
        self._reject_waiting(pod.pod.namespace, pod_group_name(pod.pod), "optimistic rejection in PostFilter")
        now = self.handle.clock()
        if (
            self.args.pod_group_backoff_seconds > 0
            and len(self._siblings(pod.pod)) >= group.min_member
            and self._backoff_until.get(key, -1.0) <= now  # upstream's cache Add keeps a backoff that has not ended
        ):
            self._backoff_until[key] = now + self.args.pod_group_backoff_seconds
        self._permitted_until.pop(key, None)
        self._last_failed[key] = now
        msg = f"PodGroup {key} gets rejected due to Pod {pod.pod.name} is unschedulable even after PostFilter"
        return PostFilterResult(None, Status(Code.UNSCHEDULABLE, [msg]))

    def _reject_waiting(self, namespace: str, group: str, message: str) -> None:
        for wp in self.handle.waiting_pods():
            p = wp.pod.pod
            if p.namespace == namespace and pod_group_name(p) == group:
                wp.reject(NAME, message)

    # -- Permit, Reserve, Unreserve -----------------------------------------------------------------------

    def permit(self, state: CycleState, pod: PodInfo, node: str) -> tuple[Status, float]:
        key, group = self.group_of(pod.pod)
        if not key:
            return Status(), 0.0
        if group is None:
            return Status(Code.UNSCHEDULABLE, ["PodGroup not found"]), 0.0
        members = self.assigned.setdefault(key, set())
        members.add(pod.pod.name)
        if len(members) >= group.min_member:
            self._last_failed.pop(key, None)
            for wp in self.handle.waiting_pods():
                if group_key(wp.pod.pod) == key:
                    wp.allow(NAME)
            return Status(), 0.0
        wait = float(self.args.permit_waiting_time_seconds)
        # upstream util.GetWaitTimeDuration: the group's scheduleTimeoutSeconds, else permitWaitingTimeSeconds,
        # else (0) util.DefaultWaitTime; an answer of 0 (scheduleTimeoutSeconds: 0) keeps permitWaitingTimeSeconds
        if group.schedule_timeout_seconds is not None:
            chosen = float(group.schedule_timeout_seconds)
        else:
            chosen = wait or float(DEFAULT_PERMIT_WAITING_TIME_SECONDS)
        if chosen != 0:
            wait = chosen
        if len(members) == 1:
            # the first pod of the group to wait: its siblings are tried at once (upstream ActivateSiblings)
            self.handle.activate(p.key for p in self._siblings(pod.pod) if p.key != pod.key)
        return Status(Code.WAIT), wait

    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        return Status()

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        key, group = self.group_of(pod.pod)
        if group is None:
            return
        self._unassign(pod.pod)
        self._reject_waiting(pod.pod.namespace, pod_group_name(pod.pod), "rejection in Unreserve")
        self._permitted_until.pop(key, None)
        self._last_failed[key] = self.handle.clock()

    # -- queueing hints -----------------------------------------------------------------------------------

    def assigned_pod_may_help(self, waiting: PodInfo, added: PodInfo, snap: Snapshot) -> bool:
        # upstream registers Pod/Add without a hint function: every bound pod moves the pods it rejected
        return True


def _requested_quantity(group: PodGroup, res: str, amount: int) -> GoQuantity:
    """The Go Quantity upstream starts from: ``pods`` is ``NewQuantity(minMember, DecimalSI)``; the others are
    parsed from what the PodGroup wrote (a group built without that text: its amount written canonically)."""
    if res == PODS:
        return new_quantity(group.min_member, DECIMAL_SI)
    written = group.min_quantities.get(res)
    return written if written is not None else parse_go_quantity(format_quantity(res, amount))


def _node_quantity(res: str) -> GoQuantity:
    """The scale and format of a node's free room in upstream's util.ResourceList (the value is filled in)."""
    if res == CPU:
        return new_quantity(0, DECIMAL_SI, scale=-3)
    if res in (MEMORY, PODS, EPHEMERAL_STORAGE) or is_hugepages(res):
        return new_quantity(0, BINARY_SI)
    return new_quantity(0, DECIMAL_SI)


def new_coscheduling(args: PluginArgs | None, handle: Handle) -> Coscheduling:
    return Coscheduling(parse_args(args), handle)
