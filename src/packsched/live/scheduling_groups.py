"""kube-scheduler's own pod-group objects on the live cluster (feature gate GenericWorkload): 1.35's Workloads
(``scheduling.k8s.io/v1alpha1``, their ``podGroups`` inside), 1.36's PodGroups (``v1alpha2``) and 1.37's
(``v1beta1``), at the one version the chosen ``--kube-version`` serves, watched by ``serve`` and delivered to the
scheduler as the simulator delivers them (:data:`~packsched.framework.interface.SCHEDULING_WORKLOAD`,
:data:`~packsched.framework.interface.SCHEDULING_POD_GROUP` cluster events): GangScheduling keeps its view of them,
the 1.37 pod-group cycle reads a group's priority, and a group that appears moves the pods waiting for it.

An update that changes nothing the scheduler reads (a status write, the scheduler's own condition among them) is
not delivered: upstream's queueing hint for a PodGroup update looks at ``minCount`` only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from packsched.api.objects import PriorityClass
from packsched.api.podgroups import POD_GROUP_API_VERSION_1_37, SchedulingPodGroup, SchedulingWorkload
from packsched.framework import interface as ev
from packsched.framework.interface import ClusterEvent
from packsched.live.decode import decode_or_log, resolve_pod_group_priority
from packsched.live.port import DELETED, Obj, Resource, is_generic_workload, key_of
from packsched.live.victims import Stats
from packsched.scheduler import Scheduler

LOG = logging.getLogger("packsched.live")

GroupObject = SchedulingWorkload | SchedulingPodGroup


class SchedulingGroupHandlers:
    """The informer handler of the GenericWorkload kinds. ``classes``: the PriorityClasses known now (a 1.37
    PodGroup without ``spec.priority`` takes its class's value, as the Priority admission plugin would set it)."""

    def __init__(self, scheduler: Scheduler, stats: Stats, classes: Callable[[], dict[str, PriorityClass]]) -> None:
        self.scheduler = scheduler
        self.stats = stats
        self.classes = classes
        self.objects: dict[str, GroupObject] = {}  # by namespace/name
        self._uids: dict[str, str] = {}  # to tell an object deleted and created again under its name

    @staticmethod
    def handles(res: Resource) -> bool:
        return is_generic_workload(res)

    def handle(self, res: Resource, etype: str, obj: Obj) -> None:
        key = key_of(obj)
        old = self.objects.get(key)
        uid = str((obj.get("metadata") or {}).get("uid", ""))
        if old is not None and uid and self._uids.get(key, uid) != uid:
            self._gone(key, old)  # deleted and created again under the same name
            old = None
        if etype == DELETED:
            if old is not None:
                self._gone(key, old)
            return
        new = self._decode(res, obj)
        if new is None:
            return
        self._uids[key] = uid
        if old == new:
            return  # its status changed, or nothing the scheduler reads
        self.objects[key] = new
        kind = ev.SCHEDULING_WORKLOAD if isinstance(new, SchedulingWorkload) else ev.SCHEDULING_POD_GROUP
        self.scheduler.object_changed(ClusterEvent(kind, ev.ADD if old is None else ev.UPDATE, old, new))

    def _decode(self, res: Resource, obj: Obj) -> GroupObject | None:
        out = decode_or_log(res, obj, self.stats)
        if out is None:
            return None
        if out.scheduling_workloads:
            return out.scheduling_workloads[0]
        if not out.scheduling_pod_groups:
            return None  # (a Workload of a later version: templates only, which the scheduler does not read)
        group = out.scheduling_pod_groups[0]
        if group.api_version == POD_GROUP_API_VERSION_1_37:
            problems = resolve_pod_group_priority(group, self.classes())
            if problems:
                self.stats.decode_errors += 1
                LOG.warning(
                    "cannot read object; left out",
                    extra={"object": f"{res.kind} {group.key}", "problems": [str(p) for p in problems]},
                )
                return None
        return group

    def _gone(self, key: str, old: GroupObject) -> None:
        del self.objects[key]
        self._uids.pop(key, None)
        kind = ev.SCHEDULING_WORKLOAD if isinstance(old, SchedulingWorkload) else ev.SCHEDULING_POD_GROUP
        self.scheduler.object_changed(ClusterEvent(kind, ev.DELETE, old, None))
