"""Building blocks for the GangScheduling tests: pods that name a pod group (1.35 ``workloadRef``, 1.36
``schedulingGroup``), Workloads and PodGroups, and a small fake Handle (what upstream's unit tests build from a
fake informer, the WorkloadManager or the cache, a waiting-pods map and a pod activator)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from packsched.api.objects import Container, Pod, WorkloadReference
from packsched.api.podgroups import POD_GROUP_API_VERSION_1_37, GroupPolicy, SchedulingPodGroup, SchedulingWorkload
from packsched.backend.podgroups import PodGroupState, PodGroupStates
from packsched.config.versions import KubeVersion
from packsched.framework.interface import ADD, SCHEDULING_POD_GROUP, SCHEDULING_WORKLOAD, ClusterEvent
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.waiting import WaitingPod, WaitingPods
from packsched.plugins.gangscheduling.gang_scheduling import GangScheduling135, GangScheduling136, GangScheduling137

V135 = KubeVersion(35).with_gates({"GenericWorkload": True, "GangScheduling": True})
V136 = KubeVersion(36).with_gates({"GenericWorkload": True, "GangScheduling": True})
V137 = KubeVersion(37).with_gates({"GenericWorkload": True})


def pod135(name: str, workload: str = "", group: str = "", replica: str = "", ns: str = "ns1", node: str = "") -> Pod:
    """upstream ``MakePod().WorkloadRef(&WorkloadReference{Name, PodGroup, PodGroupReplicaKey})``"""
    ref = WorkloadReference(workload, group, replica) if workload else None
    return Pod(name, ns, uid=name, containers=[Container("c", {})], node_name=node, workload_ref=ref)


def pod136(name: str, group: str = "", ns: str = "ns1", node: str = "") -> Pod:
    """upstream ``MakePod().PodGroupName(group)``"""
    return Pod(name, ns, uid=name, containers=[Container("c", {})], node_name=node, scheduling_group=group or None)


def workload(name: str, ns: str = "ns1", **groups: int | None) -> SchedulingWorkload:
    """A Workload whose pod groups have these minCounts (None: the basic policy)."""
    return SchedulingWorkload(name, ns, {g: GroupPolicy(c) for g, c in groups.items()})


def pod_group(name: str, min_count: int | None, ns: str = "ns1") -> SchedulingPodGroup:
    return SchedulingPodGroup(name, ns, GroupPolicy(min_count), ("w", "t"))


def pod_group_137(name: str, min_count: int | None, ns: str = "ns1", priority: int = 0) -> SchedulingPodGroup:
    """A kube-scheduler 1.37 PodGroup (scheduling.k8s.io/v1beta1)."""
    group = SchedulingPodGroup(name, ns, GroupPolicy(min_count), ("w", "t"), api_version=POD_GROUP_API_VERSION_1_37)
    group.priority = priority
    return group


@dataclass
class FakeHandle:
    """The pod group states (1.35 WorkloadManager, 1.36 cache), the waiting pods, the clock and the activated pods."""

    version: KubeVersion
    now: float = 0.0
    activated: list[str] = field(default_factory=list)
    states: PodGroupStates = field(default_factory=PodGroupStates)
    waiting: WaitingPods = field(default_factory=WaitingPods)
    infos: dict[str, PodInfo] = field(default_factory=dict)

    @property
    def kube_version(self) -> KubeVersion:
        return self.version

    def clock(self) -> float:
        return self.now

    def activate(self, keys: Iterable[str]) -> None:
        self.activated.extend(keys)

    def get_waiting_pod(self, key: str) -> WaitingPod | None:
        return self.waiting.get(key)

    def waiting_pods(self) -> list[WaitingPod]:
        return list(self.waiting)

    def pod_group_state(self, key: str) -> PodGroupState | None:
        return self.states.get(key)

    def info(self, pod: Pod) -> PodInfo:
        """The pod as the release sees it (kept: one PodInfo per pod)."""
        if pod.key not in self.infos:
            self.infos[pod.key] = make_pod_info(pod, version=self.version)
        return self.infos[pod.key]

    def add(self, *pods: Pod) -> None:
        """The pods exist (upstream ``manager.AddPod`` / ``cache.AddPodGroupMember``)."""
        for pod in pods:
            self.states.add(self.info(pod), bound=bool(pod.node_name))

    def assume(self, pod: Pod) -> None:
        """The cache assumes the pod (1.36's AssumePod counts it in its group, if it has one)."""
        info = self.info(pod)
        group = self.states.get(info.pod_group.key) if info.pod_group is not None else None
        if group is not None:
            group.assume(info)


def plugin135(handle: FakeHandle, workloads: Iterable[SchedulingWorkload] = ()) -> GangScheduling135:
    pl = GangScheduling135(handle)  # type: ignore[arg-type]
    for w in workloads:
        pl.on_cluster_event(ClusterEvent(SCHEDULING_WORKLOAD, ADD, None, w))
    return pl


def plugin136(handle: FakeHandle, groups: Iterable[SchedulingPodGroup] = ()) -> GangScheduling136:
    pl = GangScheduling136(handle)  # type: ignore[arg-type]
    for g in groups:
        pl.on_cluster_event(ClusterEvent(SCHEDULING_POD_GROUP, ADD, None, g))
    return pl


def plugin137(handle: FakeHandle, groups: Iterable[SchedulingPodGroup] = ()) -> GangScheduling137:
    pl = GangScheduling137(handle)  # type: ignore[arg-type]
    for g in groups:
        pl.on_cluster_event(ClusterEvent(SCHEDULING_POD_GROUP, ADD, None, g))
    return pl
