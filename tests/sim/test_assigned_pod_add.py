"""kube-scheduler's queue moves a pod that PodTopologySpread or InterPodAffinity rejected when a pod that may help
it is assigned to a node (AssignedPodAdded), not only when a pod leaves: without that, such a pod would wait for a
deletion that may never come."""

from __future__ import annotations

from helpers import node
from packsched.api.manifests import Cluster
from packsched.api.objects import (
    DO_NOT_SCHEDULE,
    Container,
    LabelSelector,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
)
from packsched.config import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import RUNNING, SCHEDULED, UNSCHEDULABLE, Simulation

ZONE = "topology.kubernetes.io/zone"


def _nodes() -> list:  # type: ignore[type-arg]
    a, b = node("a", cpu=4000), node("b", cpu=4000)
    a.labels = {ZONE: "z1", "kubernetes.io/hostname": "a"}
    b.labels = {ZONE: "z2", "kubernetes.io/hostname": "b"}
    return [a, b]


def _pod(name: str, labels: dict[str, str], at: float, namespace: str = "default") -> Pod:
    p = Pod(name, namespace, uid=name, labels=labels, containers=[Container("c", {"cpu": 100})])
    p.arrival_time = at
    return p


def _run(pods: list[Pod]) -> Simulation:
    sim = Simulation(Cluster(nodes=_nodes(), pods=pods), default_config(in_tree_registry()), in_tree_registry())
    sim.run()
    return sim


def test_a_pod_rejected_by_a_spread_constraint_is_tried_again_when_a_pod_of_its_namespace_is_bound() -> None:
    first = _pod("web-0", {"app": "web"}, 0.0)
    first.node_name = "a"
    waiting = _pod("web-1", {"app": "web"}, 1.0)
    # z2 is closed to it by a node selector; z1 already holds one more web pod than z2: skew 2 > 1
    waiting.node_selector = {ZONE: "z1"}
    waiting.topology_spread_constraints = (
        TopologySpreadConstraint(
            1, ZONE, DO_NOT_SCHEDULE, LabelSelector((("app", "web"),)), node_affinity_policy="Ignore"
        ),
    )
    helper = _pod("web-2", {"app": "web"}, 5.0)
    helper.node_selector = {ZONE: "z2"}
    sim = _run([first, waiting, helper])
    kinds = [(e.time, e.kind) for e in sim.events if e.pod == "default/web-1"]
    assert kinds[0] == (1.0, UNSCHEDULABLE)
    assert kinds[-1][1] == SCHEDULED and kinds[-1][0] >= 5.0  # moved when web-2 was bound at 5 s (backoff over)
    assert sim.records["default/web-1"].phase == RUNNING


def test_a_pod_in_another_namespace_does_not_move_it() -> None:
    first = _pod("web-0", {"app": "web"}, 0.0)
    first.node_name = "a"
    waiting = _pod("web-1", {"app": "web"}, 1.0)
    waiting.node_selector = {ZONE: "z1"}
    waiting.topology_spread_constraints = (
        TopologySpreadConstraint(
            1, ZONE, DO_NOT_SCHEDULE, LabelSelector((("app", "web"),)), node_affinity_policy="Ignore"
        ),
    )
    other = _pod("web-2", {"app": "web"}, 5.0, namespace="elsewhere")
    sim = _run([first, waiting, other])
    assert [e.kind for e in sim.events if e.pod == "default/web-1"] == [UNSCHEDULABLE]


def test_a_pod_waiting_for_its_affinity_is_tried_again_when_a_matching_pod_is_bound() -> None:
    waiting = _pod("client", {"app": "client"}, 0.0)
    waiting.pod_affinity = PodAffinity(required=(PodAffinityTerm(ZONE, LabelSelector((("app", "db"),))),))
    db = _pod("db", {"app": "db"}, 5.0)
    sim = _run([waiting, db])
    kinds = [(e.time, e.kind) for e in sim.events if e.pod == "default/client"]
    assert kinds[0] == (0.0, UNSCHEDULABLE)
    assert kinds[-1][1] == SCHEDULED and kinds[-1][0] >= 5.0
