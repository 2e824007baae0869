"""Preemption sees PodTopologySpread: the dry run's RemovePod/AddPod keep the spread counts right, so a pod that a
spread constraint blocks preempts the lower-priority pods that make the skew, and only those it must."""

from __future__ import annotations

from helpers import node, pod
from packsched.api.manifests import Cluster
from packsched.api.objects import DO_NOT_SCHEDULE, LabelSelector, TopologySpreadConstraint
from packsched.config import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import PREEMPTED, RUNNING, Simulation

ZONE = "topology.kubernetes.io/zone"
SPREAD = (TopologySpreadConstraint(1, ZONE, DO_NOT_SCHEDULE, LabelSelector((("app", "web"),))),)


def _cluster(web_on_z1: int) -> Cluster:
    n1 = node("n1", cpu=8000)
    n1.labels = {ZONE: "z1"}
    n2 = node("n2", cpu=1000)
    n2.labels = {ZONE: "z2"}
    pods = []
    hog = pod("hog", cpu=1000, priority=1000)  # fills z2's only node; more important than the incoming pod
    hog.node_name = "n2"
    pods.append(hog)
    for i in range(web_on_z1):
        w = pod(f"web-{i}", cpu=100, priority=0)
        w.labels = {"app": "web"}
        w.node_name = "n1"
        pods.append(w)
    other = pod("other", cpu=100, priority=0)  # low priority too, but no part of the skew
    other.node_name = "n1"
    pods.append(other)
    incoming = pod("incoming", cpu=100, priority=100)
    incoming.labels = {"app": "web"}
    incoming.topology_spread_constraints = SPREAD
    pods.append(incoming)
    return Cluster(nodes=[n1, n2], pods=pods)


def _run(cluster: Cluster) -> dict[str, tuple[str, str | None]]:
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry(), 0)
    sim.run()
    return {r.pod.name: (r.phase, r.node) for r in sim.history}


def test_pod_blocked_by_spread_preempts_exactly_the_pods_making_the_skew() -> None:
    # z1 holds 2 web pods, z2 none (its node is full): 2 + 1 - 0 > 1 on n1. Without both web pods the skew is
    # 0 + 1 - 0; with one put back it is 2 again: both are victims, the unrelated low-priority pod is not.
    got = _run(_cluster(2))
    assert got["incoming"] == (RUNNING, "n1")
    assert got["web-0"][0] == PREEMPTED and got["web-1"][0] == PREEMPTED
    assert got["other"] == (RUNNING, "n1")
    assert got["hog"] == (RUNNING, "n2")


def test_no_preemption_when_the_spread_allows_the_pod() -> None:
    # no web pod yet: skew 0 + 1 - 0 = 1 fits without evicting anyone
    got = _run(_cluster(0))
    assert got["incoming"] == (RUNNING, "n1")
    assert got["other"] == (RUNNING, "n1")
