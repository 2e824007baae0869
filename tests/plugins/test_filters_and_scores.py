"""The simple plugins against upstream's semantics and messages, node by node through the array interface."""

from __future__ import annotations

import numpy as np

from helpers import make_config, make_profile, node, pod
from packsched.api.manifests import Cluster
from packsched.api.objects import (
    ContainerPort,
    NodeAffinity,
    NodeSelectorTerm,
    PreferredTerm,
    Requirement,
    Taint,
    Toleration,
)
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code
from packsched.plugins.helper.normalize import default_normalize_score
from packsched.plugins.nodeaffinity.node_affinity import ERR_REASON_POD, NodeAffinityPlugin
from packsched.plugins.nodename.node_name import NodeName
from packsched.plugins.nodeports.node_ports import NodePorts
from packsched.plugins.noderesources.fit import Fit
from packsched.plugins.nodeunschedulable.node_unschedulable import NodeUnschedulable
from packsched.plugins.registry import in_tree_registry
from packsched.plugins.schedulinggates.scheduling_gates import SchedulingGates
from packsched.plugins.tainttoleration.taint_toleration import TaintToleration
from packsched.sim.engine import Simulation

ALL = slice(None)


def _rejected(rejections: list, n: int) -> dict[int, list[str]]:  # type: ignore[type-arg]
    out: dict[int, list[str]] = {}
    for r in rejections:
        for i in np.flatnonzero(r.mask):
            out.setdefault(int(i), []).append(r.reason)
    return out


def test_taint_toleration_filter_and_message() -> None:
    n1, n2, n3 = node("n1"), node("n2"), node("n3")
    n2.taints = [Taint("dedicated", "gpu", "NoSchedule")]
    n3.taints = [Taint("soft", "x", "PreferNoSchedule")]
    snap = Snapshot([n1, n2, n3])
    plugin = TaintToleration()
    plain = make_pod_info(pod("p"))
    rej = plugin.filter(CycleState(), plain, snap, ALL)
    assert _rejected(rej, 3) == {1: ["node(s) had untolerated taint(s)"]}
    assert rej[0].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    tolerant = pod("q")
    tolerant.tolerations = [Toleration("dedicated", "Equal", "gpu", "NoSchedule")]
    assert plugin.filter(CycleState(), make_pod_info(tolerant), snap, ALL) == []
    exists_all = pod("r")
    exists_all.tolerations = [Toleration("", "Exists")]
    assert plugin.filter(CycleState(), make_pod_info(exists_all), snap, ALL) == []


def test_taint_toleration_score_counts_prefer_no_schedule_and_reverses() -> None:
    nodes = [node(f"n{i}") for i in range(3)]
    nodes[1].taints = [Taint("a", "1", "PreferNoSchedule")]
    nodes[2].taints = [Taint("a", "1", "PreferNoSchedule"), Taint("b", "2", "PreferNoSchedule")]
    snap = Snapshot(nodes)
    plugin = TaintToleration()
    info = make_pod_info(pod("p"))
    state = CycleState()
    plugin.pre_score(state, info, snap, np.arange(3))
    raw = plugin.score(state, info, snap, np.arange(3))
    assert raw.tolist() == [0, 1, 2]
    assert plugin.normalize_score(state, info, raw).tolist() == [100, 50, 0]


def test_default_normalize_score() -> None:
    assert default_normalize_score(np.array([0, 0]), reverse=True).tolist() == [100, 100]
    assert default_normalize_score(np.array([0, 0]), reverse=False).tolist() == [0, 0]
    assert default_normalize_score(np.array([1, 3, 2]), reverse=False).tolist() == [33, 100, 66]


def test_node_affinity_selector_required_terms_and_preferred() -> None:
    nodes = [node(f"n{i}") for i in range(4)]
    nodes[0].labels.update({"zone": "a", "gpu": "true", "cores": "8"})
    nodes[1].labels.update({"zone": "b", "cores": "32"})
    nodes[2].labels.update({"zone": "a", "cores": "x"})
    snap = Snapshot(nodes)
    plugin = NodeAffinityPlugin(None, None)  # type: ignore[arg-type]
    p = pod("p")
    p.node_selector = {"zone": "a"}
    rej = plugin.filter(CycleState(), make_pod_info(p), snap, ALL)
    assert _rejected(rej, 4) == {1: [ERR_REASON_POD], 3: [ERR_REASON_POD]}
    q = pod("q")
    q.node_affinity = NodeAffinity(
        required=(
            NodeSelectorTerm((Requirement("cores", "Gt", ("16",)),)),
            NodeSelectorTerm((Requirement("gpu", "Exists"),)),
        )
    )
    assert sorted(_rejected(plugin.filter(CycleState(), make_pod_info(q), snap, ALL), 4)) == [2, 3]
    empty_term = pod("e")
    empty_term.node_affinity = NodeAffinity(required=(NodeSelectorTerm(),))
    assert sorted(_rejected(plugin.filter(CycleState(), make_pod_info(empty_term), snap, ALL), 4)) == [0, 1, 2, 3]
    by_name = pod("f")
    by_name.node_affinity = NodeAffinity(
        required=(NodeSelectorTerm((), (Requirement("metadata.name", "In", ("n3",)),)),)
    )
    assert sorted(_rejected(plugin.filter(CycleState(), make_pod_info(by_name), snap, ALL), 4)) == [0, 1, 2]
    pref = pod("g")
    pref.node_affinity = NodeAffinity(
        preferred=(
            PreferredTerm(10, NodeSelectorTerm((Requirement("zone", "In", ("a",)),))),
            PreferredTerm(30, NodeSelectorTerm((Requirement("zone", "NotIn", ("a",)),))),
        )
    )
    info = make_pod_info(pref)
    raw = plugin.score(CycleState(), info, snap, np.arange(4))
    assert raw.tolist() == [10, 30, 10, 30]
    assert plugin.normalize_score(CycleState(), info, raw).tolist() == [33, 100, 33, 100]


def test_node_ports_conflicts_by_protocol_and_host_ip() -> None:
    snap = Snapshot([node("n0"), node("n1"), node("n2")])
    used = pod("used")
    used.containers[0].ports = [ContainerPort(80, 8080, "TCP", "10.0.0.1")]
    snap.add_pod(make_pod_info(used), 0)
    wildcard = pod("wild")
    wildcard.containers[0].ports = [ContainerPort(53, 53, "UDP", "")]
    snap.add_pod(make_pod_info(wildcard), 1)
    plugin = NodePorts()
    same = pod("a")
    same.containers[0].ports = [ContainerPort(80, 8080, "TCP", "10.0.0.1")]
    assert sorted(_rejected(plugin.filter(CycleState(), make_pod_info(same), snap, ALL), 3)) == [0]
    other_ip = pod("b")
    other_ip.containers[0].ports = [ContainerPort(80, 8080, "TCP", "10.0.0.2")]
    assert plugin.filter(CycleState(), make_pod_info(other_ip), snap, ALL) == []
    any_ip = pod("c")
    any_ip.containers[0].ports = [ContainerPort(80, 8080, "TCP", "")]
    assert sorted(_rejected(plugin.filter(CycleState(), make_pod_info(any_ip), snap, ALL), 3)) == [0]
    udp = pod("d")
    udp.containers[0].ports = [ContainerPort(53, 53, "UDP", "127.0.0.1")]
    rej = plugin.filter(CycleState(), make_pod_info(udp), snap, ALL)
    assert _rejected(rej, 3) == {1: ["node(s) didn't have free ports for the requested pod ports"]}
    assert rej[0].code == Code.UNSCHEDULABLE


def test_node_unschedulable_and_node_name() -> None:
    nodes = [node("n0"), node("n1")]
    nodes[1].unschedulable = True
    snap = Snapshot(nodes)
    rej = NodeUnschedulable().filter(CycleState(), make_pod_info(pod("p")), snap, ALL)
    assert _rejected(rej, 2) == {1: ["node(s) were unschedulable"]}
    tolerant = pod("t")
    tolerant.tolerations = [Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")]
    assert NodeUnschedulable().filter(CycleState(), make_pod_info(tolerant), snap, ALL) == []
    named = pod("n")
    named.node_name = "n1"
    assert _rejected(NodeName().filter(CycleState(), make_pod_info(named), snap, ALL), 2) == {
        0: ["node(s) didn't match the requested node name"]
    }


class _NoDraHandle:
    """A handle without DRA objects: NodeResourcesFit (1.36+) asks whether a DeviceClass serves an extended
    resource the nodes lack; here none does."""

    def dra(self) -> None:
        return None


def test_fit_filter_reasons_codes_and_pod_count() -> None:
    snap = Snapshot([node("small", cpu=1000, pods=1), node("busy", cpu=4000), node("big", cpu=8000)])
    snap.add_pod(make_pod_info(pod("x", cpu=3500)), 1)
    fit = Fit(make_profile().plugin_config["NodeResourcesFit"], _NoDraHandle())  # type: ignore[arg-type]
    want = make_pod_info(pod("w", cpu=2000, extra={"nvidia.com/gpu": 1}))
    rej = fit.filter(CycleState(), want, snap, ALL)
    got = {(r.reason, r.code, tuple(np.flatnonzero(r.mask))) for r in rej}
    assert ("Insufficient cpu", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (0,)) in got  # 2 cpus > 1 cpu node
    assert ("Insufficient cpu", Code.UNSCHEDULABLE, (1,)) in got  # fits when the node is emptied
    assert ("Insufficient nvidia.com/gpu", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (0, 1, 2)) in got
    snap.add_pod(make_pod_info(pod("y")), 0)
    rej = fit.filter(CycleState(), make_pod_info(pod("z")), snap, ALL)
    assert [(r.reason, tuple(np.flatnonzero(r.mask))) for r in rej] == [("Too many pods", (0,))]


def test_scheduling_gates_hold_the_pod() -> None:
    gated = pod("g")
    gated.scheduling_gates = ["example.com/wait", "other"]
    st = SchedulingGates().pre_enqueue(make_pod_info(gated))
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.message == "waiting for scheduling gates: [example.com/wait other]"
    sim = Simulation(Cluster(nodes=[node("n")], pods=[gated, pod("free")]), make_config(), in_tree_registry())
    result = sim.run()
    phases = {r.pod.name: (r.phase, r.reason) for r in result.records}
    assert phases["free"][0] == "Running"
    assert phases["g"] == ("Pending", "waiting for scheduling gates: [example.com/wait other]")
