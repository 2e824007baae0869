"""The condition kube-scheduler 1.36+ writes on a PodGroup (``scheduling.k8s.io``, feature gate GenericWorkload)
after each pod-group scheduling cycle: ``PodGroupScheduled`` (1.36, v1alpha2) or ``PodGroupInitiallyScheduled``
(1.37, v1beta1), as upstream's ``updatePodGroupCondition``:

- the group fits: status True, reason ``Scheduled``, the group's message (none, usually);
- the group is rejected (it does not fit, or waits for preemption): False, ``Unschedulable``, the group's message;
- an error (1.37 also for a group refused before any pod is tried, e.g. pods with other scheduler names): False,
  ``SchedulerError``, the error.

A condition that is True is never turned back to False (a later cycle for more pods of a group that was scheduled
once); a condition the PodGroup shows already (status, reason, message, observed generation) is not written again;
``lastTransitionTime`` changes only with the status. The write is a strategic merge patch of the status subresource
(conditions merge by type), sent off the scheduling thread. 1.35 (Workloads) writes none: its scheduler has no
pod-group cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from packsched.config.versions import KubeVersion
from packsched.framework.status import Code, Status
from packsched.live.port import DELETED, Obj, Resource, generic_workload_resource, key_of, same_kind
from packsched.live.recorder import Recorder, rfc3339
from packsched.scheduler import CycleResult, QueuedPod

# the condition type by the minor release whose PodGroups carry it
CONDITION_TYPES = {36: "PodGroupScheduled", 37: "PodGroupInitiallyScheduled"}
SCHEDULED = "Scheduled"
UNSCHEDULABLE = "Unschedulable"
SCHEDULER_ERROR = "SchedulerError"


def condition_type(version: KubeVersion) -> str:
    """The condition the release writes on its PodGroups ("" where it writes none)."""
    if not version.pod_group_scheduling_cycle:
        return ""
    return CONDITION_TYPES[min(version.minor, max(CONDITION_TYPES))]


def condition_for(verdict: Status) -> tuple[str, str, str]:
    """(status, reason, message) of the condition for a pod-group cycle's verdict."""
    if verdict.ok:
        return "True", SCHEDULED, verdict.message
    if verdict.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
        return "False", UNSCHEDULABLE, verdict.message
    return "False", SCHEDULER_ERROR, verdict.message


class PodGroupConditionWriter:
    """Keeps each PodGroup's conditions as the watch shows them (:meth:`observe`) and writes the scheduler's after
    each pod-group cycle (:meth:`cycle_done`). ``now``: the wall-clock time for ``lastTransitionTime``."""

    def __init__(self, recorder: Recorder, version: KubeVersion, now: Callable[[], str] = rfc3339) -> None:
        self.recorder = recorder
        self.now = now
        self.type = condition_type(version)
        self.resource: Resource | None = generic_workload_resource(version.minor) if self.type else None
        self.writes = 0
        self._shown: dict[str, tuple[int, dict[str, Any] | None]] = {}  # key -> (generation, our condition)
        self._sent: dict[str, dict[str, Any]] = {}  # key -> the condition written, until the watch shows it

    def observe(self, res: Resource, etype: str, obj: Obj) -> None:
        if self.resource is None or not same_kind(res, self.resource):
            return
        key = key_of(obj)
        if etype == DELETED:
            self._shown.pop(key, None)
            self._sent.pop(key, None)
            return
        generation = (obj.get("metadata") or {}).get("generation")
        conditions = (obj.get("status") or {}).get("conditions")
        mine = None
        if isinstance(conditions, list):
            mine = next((c for c in conditions if isinstance(c, dict) and c.get("type") == self.type), None)
        self._shown[key] = (generation if isinstance(generation, int) else 0, mine)
        sent = self._sent.get(key)
        if sent is not None and mine is not None and _same(sent, mine):
            del self._sent[key]  # the watch shows what was written

    def cycle_done(self, members: Sequence[tuple[QueuedPod, CycleResult]]) -> None:
        """After a pod-group cycle: its verdict written on the group's PodGroup (nothing for a group held back
        untried, or one whose PodGroup the watch has not shown)."""
        if self.resource is None or not members:
            return
        verdict = next((r.group_status for _, r in members if r.group_status is not None), None)
        ref = members[0][0].info.pod_group
        if verdict is None or ref is None or ref.key not in self._shown:
            return
        generation, shown = self._shown[ref.key]
        have = self._sent.get(ref.key) or shown
        status, reason, message = condition_for(verdict)
        if have is not None and have.get("status") == "True" and status != "True":
            return  # scheduled once: a later cycle (more pods of the group) does not take it back
        want: dict[str, Any] = {"type": self.type, "status": status, "reason": reason, "message": message}
        if generation:
            want["observedGeneration"] = generation
        if have is not None and have.get("status") == status and have.get("lastTransitionTime"):
            want["lastTransitionTime"] = have["lastTransitionTime"]
        else:
            want["lastTransitionTime"] = self.now()
        if have is not None and _same(have, want):
            return
        self._sent[ref.key] = want
        self.writes += 1
        self.recorder.patch_status(self.resource, ref.namespace, ref.pod_group, {"status": {"conditions": [want]}})


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two conditions say the same (upstream SetStatusCondition changes nothing then)."""
    fields = ("status", "reason", "message", "observedGeneration")
    return all((a.get(f) or None) == (b.get(f) or None) for f in fields)
