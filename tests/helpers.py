"""Shared test helpers: small clusters and hand-built profiles (no config file needed)."""

from __future__ import annotations

from packsched.api.objects import Container, Node, Pod
from packsched.config.types import (
    KubeSchedulerConfiguration,
    NodeResourcesFitArgs,
    PluginRef,
    Profile,
    ResourceSpec,
    ScoringStrategy,
)

GiB = 1024**3

FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit"]


def make_profile(
    score: dict[str, int] | None = None,
    strategy: ScoringStrategy | None = None,
    post_filter: list[str] | None = None,
    name: str = "default-scheduler",
) -> Profile:
    """A profile like kube-scheduler's default (without the plugins packsched lacks)."""
    prof = Profile(scheduler_name=name)
    points = {
        "preEnqueue": ["SchedulingGates"],
        "queueSort": ["PrioritySort"],
        "preFilter": ["NodeAffinity", "NodePorts", "NodeResourcesFit"],
        "filter": FILTERS,
        "postFilter": post_filter or [],
        "preScore": ["TaintToleration", "NodeAffinity", "NodeResourcesBalancedAllocation"],
        "bind": ["DefaultBinder"],
    }
    for point, names in points.items():
        prof.plugins.at(point).enabled = [PluginRef(n) for n in names]
    weights = (
        score
        if score is not None
        else {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1}
    )
    prof.plugins.at("score").enabled = [PluginRef(n, w) for n, w in weights.items()]
    prof.plugin_config["NodeResourcesFit"] = NodeResourcesFitArgs(
        scoring_strategy=strategy or ScoringStrategy("LeastAllocated", [ResourceSpec("cpu"), ResourceSpec("memory")])
    )
    return prof


def make_config(*profiles: Profile, percentage: int | None = None) -> KubeSchedulerConfiguration:
    return KubeSchedulerConfiguration(
        profiles=list(profiles) or [make_profile()], percentage_of_nodes_to_score=percentage
    )


def node(
    name: str, cpu: int = 4000, memory: int = 8 * GiB, pods: int = 110, extra: dict[str, int] | None = None
) -> Node:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    alloc.update(extra or {})
    return Node(name, {"kubernetes.io/hostname": name}, {}, dict(alloc), alloc)


def pod(
    name: str,
    cpu: int = 0,
    memory: int = 0,
    namespace: str = "default",
    priority: int = 0,
    extra: dict[str, int] | None = None,
) -> Pod:
    req = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    req.update(extra or {})
    return Pod(name, namespace, containers=[Container("c", req)], priority=priority)


def capacity_config() -> KubeSchedulerConfiguration:
    """The profile upstream's CapacityScheduling tests use: the default plugins, CapacityScheduling in PreFilter and
    Reserve, and CapacityScheduling as the only PostFilter plugin."""
    prof = make_profile(post_filter=["CapacityScheduling"])
    prof.plugins.at("preFilter").enabled.append(PluginRef("CapacityScheduling"))
    prof.plugins.at("reserve").enabled = [PluginRef("CapacityScheduling")]
    return KubeSchedulerConfiguration(profiles=[prof])
