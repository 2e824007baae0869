"""The scheduler's view of each pod group of kube-scheduler's own gang scheduling (GenericWorkload): which of its
pods exist, and of those which are unscheduled, assumed (placed by the scheduler, not bound yet) or assigned
(bound).

Upstream keeps it in kube-scheduler 1.35's WorkloadManager (``backend/workloadmanager``: the GangScheduling
plugin's Reserve and Unreserve assume and forget pods) and in 1.36's cache (``backend/cache/podgroupstate.go``:
the cache's AssumePod and ForgetPod do, and a pod-group scheduling cycle works on a copy taken with the snapshot).
Pods are keyed by ``namespace/name`` (upstream: by UID); a group by :attr:`PodGroupRef.key`. The scheduler's event
handlers add every pod that has a group (pending or bound) and remove it when it is deleted or finished (the
scheduler's informer lists no finished pod).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field

from packsched.framework.podinfo import PodInfo

# kube-scheduler 1.35: how long the pods of a gang wait at Permit, from the first one (workloadmanager
# DefaultSchedulingTimeoutDuration); 1.36's plugin waits this long per pod (permitTimeoutDuration).
SCHEDULING_TIMEOUT_SECONDS = 5 * 60.0


@dataclass
class PodGroupState:
    """One group: its pods by key and the part each is in. ``deadline``: 1.35's scheduling deadline (set by the
    first wait at Permit, kept until it passes)."""

    pods: dict[str, PodInfo] = field(default_factory=dict)
    unscheduled: set[str] = field(default_factory=set)
    assumed: dict[str, PodInfo] = field(default_factory=dict)
    assigned: set[str] = field(default_factory=set)
    deadline: float | None = None

    # ``unscheduled``'s keys in order, kept beside it once asked for (unscheduled_keys): None until then
    _sorted: list[str] | None = field(default=None, repr=False, compare=False)

    def _unscheduled_add(self, key: str) -> None:
        if key not in self.unscheduled:
            self.unscheduled.add(key)
            if self._sorted is not None:
                bisect.insort(self._sorted, key)

    def _unscheduled_discard(self, key: str) -> None:
        if key in self.unscheduled:
            self.unscheduled.discard(key)
            if self._sorted is not None:
                del self._sorted[bisect.bisect_left(self._sorted, key)]

    def add(self, pod: PodInfo, bound: bool) -> None:
        """A pod of the group appears (upstream addPod), bound or not."""
        self.pods[pod.key] = pod
        if bound:
            self.assigned.add(pod.key)
        else:
            self._unscheduled_add(pod.key)

    def bound(self, pod: PodInfo) -> None:
        """The pod is bound now (upstream updatePod from no node to a node)."""
        self.pods[pod.key] = pod
        self.assigned.add(pod.key)
        self._unscheduled_discard(pod.key)
        self.assumed.pop(pod.key, None)

    def delete(self, key: str) -> None:
        self.pods.pop(key, None)
        self._unscheduled_discard(key)
        self.assumed.pop(key, None)
        self.assigned.discard(key)

    def assume(self, pod: PodInfo) -> None:
        """The scheduler placed the pod (1.35: GangScheduling's Reserve; 1.36: the cache's AssumePod). A pod the
        group does not hold is ignored; one bound already counts as assigned."""
        stored = self.pods.get(pod.key)
        if stored is None:
            return
        if pod.key in self.assigned:
            self.assigned.add(pod.key)
        else:
            self.assumed[pod.key] = pod
        self._unscheduled_discard(pod.key)

    def forget(self, key: str) -> None:
        """The placement is taken back (1.35: Unreserve; 1.36: ForgetPod): unscheduled again, unless bound."""
        if key not in self.pods:
            return
        self.assumed.pop(key, None)
        if key not in self.assigned:
            self._unscheduled_add(key)

    @property
    def all_count(self) -> int:
        return len(self.pods)

    @property
    def scheduled_count(self) -> int:
        """Assumed plus assigned (1.36 ScheduledPodsCount; 1.35 takes the union of the two sets, the same)."""
        return len(self.assumed) + len(self.assigned - self.assumed.keys())

    def unscheduled_pods(self) -> list[PodInfo]:
        return [self.pods[k] for k in self.unscheduled_keys()]

    def unscheduled_keys(self) -> list[str]:
        """The unscheduled pods' keys, sorted (kept sorted as they change, once asked for: Permit asks for every
        pod of a gang)."""
        if self._sorted is None:
            self._sorted = sorted(self.unscheduled)
        return list(self._sorted)

    def scheduling_timeout(self, now: float) -> float:
        """1.35's SchedulingTimeout: the time left to the group's deadline, a new one (now + 5 minutes) when none
        is set or it has passed. A deadline reached counts as passed: the pods it timed out are tried again at that
        very instant of the simulator's clock, when a real scheduler's clock has moved on (upstream would give
        them a new deadline, not a wait of 0)."""
        if self.deadline is None or self.deadline <= now:
            self.deadline = now + SCHEDULING_TIMEOUT_SECONDS
        return self.deadline - now

    def copy(self) -> PodGroupState:
        out = PodGroupState(
            dict(self.pods), set(self.unscheduled), dict(self.assumed), set(self.assigned), self.deadline
        )
        out._sorted = None if self._sorted is None else list(self._sorted)
        return out


class PodGroupStates:
    """Every group's state, by :attr:`PodGroupRef.key`; a group is dropped when its last pod goes.

    :meth:`copy` is copy-on-write, so that a pod-group cycle's copy costs what the cycle touches, not every group
    (a copy of 1,000 groups each cycle was half of a 1,000-gang run): the copy and the original share the state
    objects, and each side copies a group's state before it first hands it out or changes it
    (``_owned``: the keys whose state object this side alone holds). :meth:`get` hands out a state the caller may
    change (the cache's assume and forget do), so it copies too."""

    def __init__(self) -> None:
        self._groups: dict[str, PodGroupState] = {}
        self._owned: set[str] = set()

    def __len__(self) -> int:
        return len(self._groups)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._groups))

    def _own(self, key: str) -> PodGroupState | None:
        state = self._groups.get(key)
        if state is not None and key not in self._owned:
            state = self._groups[key] = state.copy()
            self._owned.add(key)
        return state

    def get(self, key: str) -> PodGroupState | None:
        return self._own(key)

    def add(self, pod: PodInfo, bound: bool) -> None:
        ref = pod.pod_group
        if ref is None:
            return
        state = self._own(ref.key)
        if state is None:
            state = self._groups[ref.key] = PodGroupState()
            self._owned.add(ref.key)
        if pod.key in state.pods and bound:
            state.bound(pod)
        elif pod.key not in state.pods:
            state.add(pod, bound)
        else:
            state.pods[pod.key] = pod

    def delete(self, pod: PodInfo) -> None:
        ref = pod.pod_group
        state = self._own(ref.key) if ref is not None else None
        if state is None or ref is None:
            return
        state.delete(pod.key)
        if not state.pods:
            del self._groups[ref.key]
            self._owned.discard(ref.key)

    def copy(self) -> PodGroupStates:
        """The states as a pod-group scheduling cycle sees them (1.36: taken with the snapshot): what the cycle
        assumes changes the copy only, and what changes here later does not reach the copy."""
        out = PodGroupStates()
        out._groups = dict(self._groups)
        self._owned = set()  # every state is shared with the copy now
        return out
