"""Building blocks for the Coscheduling tests: pods and PodGroups in a line, a small fake Handle (what upstream's
unit tests build from a fake client, a pod informer and a waiting-pods map), and a simulator profile with
Coscheduling at every point it extends."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from helpers import make_config, make_profile
from helpers import node as make_node
from packsched.api.gangs import POD_GROUP_LABEL, PodGroup, pod_group_name
from packsched.api.objects import Container, Node, Pod
from packsched.config.types import KubeSchedulerConfiguration, PluginRef
from packsched.framework.interface import ADD, POD, POD_GROUP, ClusterEvent
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.framework.waiting import WaitingPod, WaitingPods
from packsched.plugins.coscheduling.coscheduling import Coscheduling, CoschedulingArgs

GPU = "nvidia.com/gpu"


def mk_pod(
    name: str,
    ns: str = "ns",
    group: str = "",
    *,
    node: str = "",
    cpu: int = 0,
    gpu: int = 0,
    priority: int = 0,
    gates: Sequence[str] = (),
    phase: str = "",
) -> Pod:
    """A pod (cpu in millicores); ``group`` sets the pod-group label, ``node`` binds it."""
    req = {k: v for k, v in (("cpu", cpu), (GPU, gpu)) if v}
    return Pod(
        name,
        ns,
        uid=name,
        labels={POD_GROUP_LABEL: group} if group else {},
        containers=[Container("c", req)],
        priority=priority,
        node_name=node,
        scheduling_gates=list(gates),
        phase=phase or ("Running" if node else "Pending"),
    )


def mk_group(
    name: str,
    ns: str = "ns",
    min_member: int = 1,
    *,
    created: float = 0.0,
    min_resources: dict[str, int] | None = None,
    timeout: int | None = None,
) -> PodGroup:
    return PodGroup(name, ns, min_member, min_resources, timeout, created)


@dataclass
class FakeHandle:
    """What Coscheduling reaches through its Handle: the clock, the snapshot (nodes and the pods placed on them),
    the pods that exist (upstream's pod lister), the waiting pods, and the pods it asked to activate."""

    nodes: list[Node]
    pods: list[Pod] = field(default_factory=list)
    now: float = 0.0
    activated: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.snapshot = Snapshot(self.nodes)
        self.infos = {p.key: make_pod_info(p) for p in self.pods}
        self.waiting = WaitingPods()
        for info in self.infos.values():
            if info.pod.node_name:
                self.snapshot.add_pod(info, self.snapshot.index[info.pod.node_name])

    def clock(self) -> float:
        return self.now

    def waiting_pods(self) -> list[WaitingPod]:
        return list(self.waiting)

    def get_waiting_pod(self, key: str) -> WaitingPod | None:
        return self.waiting.get(key)

    def activate(self, keys: Iterable[str]) -> None:
        self.activated.extend(keys)

    def group_members(self, namespace: str, group: str) -> list[PodInfo]:
        return [i for i in self.infos.values() if i.pod.namespace == namespace and pod_group_name(i.pod) == group]

    def info(self, name: str, ns: str = "ns") -> PodInfo:
        return self.infos[f"{ns}/{name}"]

    def hold(self, info: PodInfo, node: str, timeout: float = 60.0) -> WaitingPod:
        """The pod waits at Permit on ``node`` (as the framework records a Wait answer)."""
        return self.waiting.add(info, node, {"Coscheduling": timeout}, self.now, None)


def plugin(
    handle: FakeHandle,
    groups: Iterable[PodGroup] = (),
    *,
    permit_wait: int = 60,
    backoff: int = 0,
    reject_percentage: int = 10,
) -> Coscheduling:
    """Coscheduling over ``handle``, its informers fed as upstream's tests feed them: the PodGroups, then every
    pod that is bound already (upstream's AddPodFactory)."""
    pl = Coscheduling(CoschedulingArgs(permit_wait, backoff, reject_percentage), handle)  # type: ignore[arg-type]
    for g in groups:
        pl.on_cluster_event(ClusterEvent(POD_GROUP, ADD, None, g))
    for p in handle.pods:
        if p.node_name:
            pl.on_cluster_event(ClusterEvent(POD, ADD, None, p))
    return pl


def cpu_nodes(*names: str, cpu: int = 4000) -> list[Node]:
    """Nodes as upstream's ``MakeNode().Capacity(cpu)``: that cpu and room for 32 pods."""
    return [make_node(n, cpu=cpu, pods=32) for n in names]


def gpu_nodes(count: int, gpus: int = 8) -> list[Node]:
    return [make_node(f"gpu-{i}", cpu=64000, pods=110, extra={GPU: gpus}) for i in range(count)]


def gang_config(**args: Any) -> KubeSchedulerConfiguration:
    """The default profile with Coscheduling as QueueSort (instead of PrioritySort), PreFilter, the only
    PostFilter, Permit and Reserve; ``args`` are its CoschedulingArgs (upstream's field names)."""
    prof = make_profile(post_filter=["Coscheduling"])
    prof.plugins.at("queueSort").enabled = [PluginRef("Coscheduling")]
    prof.plugins.at("preFilter").enabled.append(PluginRef("Coscheduling"))
    prof.plugins.at("permit").enabled = [PluginRef("Coscheduling")]
    prof.plugins.at("reserve").enabled = [PluginRef("Coscheduling")]
    prof.plugin_config["Coscheduling"] = dict(args)
    return make_config(prof)
