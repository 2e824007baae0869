"""DefaultPreemption, against kube-scheduler's default_preemption_test.go vectors where they fit packsched's
model.

Resource sizes follow upstream's tests (cpu in millicores): small 100, medium 200, large 300, very large 500,
and nodes of 500m unless a test says otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pytest

from packsched.api.manifests import Cluster
from packsched.api.objects import (
    PREEMPT_NEVER,
    Container,
    LabelSelector,
    Node,
    OwnerRef,
    Pod,
    PodDisruptionBudget,
    Taint,
    Toleration,
)
from packsched.config.types import (
    DefaultPreemptionArgs,
    KubeSchedulerConfiguration,
    NodeResourcesFitArgs,
    PluginArgs,
    PluginRef,
    Profile,
    ResourceSpec,
    ScoringStrategy,
)
from packsched.framework import preemption as pre
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.interface import Handle, NodeSel, PostFilterResult, Rejection
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.preemption import Candidate, filter_pods_with_pdb_violation, pick_one_node_for_preemption
from packsched.framework.runtime import Framework, PluginFactory
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.defaultpreemption.default_preemption import NAME, DefaultPreemption, new_default_preemption
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import NOMINATED, PREEMPTED_EVENT, RUNNING, SCHEDULED, Simulation

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = 100, 200, 300, 500
GiB = 1024**3


# -- building clusters and the scheduler ------------------------------------------------------------------


class CountingFilter:
    """Upstream's FakeFilterPlugin: counts how often Filter runs (once per one-node dry-run check)."""

    name = "CountingFilter"

    def __init__(self) -> None:
        self.calls = 0

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        self.calls += 1
        return []


class ErrorExtensions:
    """Upstream's TestPlugin: a PreFilter plugin whose AddPod/RemovePod fail on nodes labelled error=true
    (error=add: AddPod only)."""

    name = "test-plugin"

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        return Status()

    def add_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        if snap.nodes[col].labels.get("error") in ("true", "add"):
            return Status.error(f"failed to add pod: {pod.pod.name}")
        return Status()

    def remove_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        if snap.nodes[col].labels.get("error") == "true":
            return Status.error(f"failed to remove pod: {pod.pod.name}")
        return Status()


@dataclass
class Setup:
    args: DefaultPreemptionArgs | None = None
    counting: bool = False
    error_plugin: bool = False
    fit_before_taints: bool = False
    plugins: dict[str, object] = field(default_factory=dict)


def make_config(setup: Setup) -> KubeSchedulerConfiguration:
    prof = Profile()
    filters = ["NodeUnschedulable", "TaintToleration", "NodeResourcesFit"]  # upstream's default order
    if setup.fit_before_taints:
        filters = ["NodeUnschedulable", "NodeResourcesFit", "TaintToleration"]
    if setup.counting:
        filters.insert(0, "CountingFilter")
    pre_filter = ["NodeResourcesFit"] + (["test-plugin"] if setup.error_plugin else [])
    points = {
        "queueSort": ["PrioritySort"],
        "preFilter": pre_filter,
        "filter": filters,
        "postFilter": [NAME],
        "score": ["NodeResourcesFit"],
        "bind": ["DefaultBinder"],
    }
    for point, names in points.items():
        prof.plugins.at(point).enabled = [PluginRef(n) for n in names]
    prof.plugin_config["NodeResourcesFit"] = NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy("LeastAllocated", [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)])
    )
    if setup.args is not None:
        prof.plugin_config[NAME] = setup.args
    return KubeSchedulerConfiguration(profiles=[prof])


def make_registry(setup: Setup) -> dict[str, PluginFactory]:
    reg = in_tree_registry()
    reg[NAME] = new_default_preemption

    def shared(name: str, obj: object) -> PluginFactory:
        def factory(args: PluginArgs | None, handle: Handle) -> object:
            setup.plugins[name] = obj
            return obj

        return factory

    reg["CountingFilter"] = shared("CountingFilter", CountingFilter())
    reg["test-plugin"] = shared("test-plugin", ErrorExtensions())
    return reg


def node(name: str, cpu: int = VERY_LARGE, pods: int = 110, labels: dict[str, str] | None = None) -> Node:
    alloc = {"cpu": cpu, "memory": 64 * GiB, "pods": pods}
    return Node(name, {"kubernetes.io/hostname": name, **(labels or {})}, {}, dict(alloc), dict(alloc))


def pod(
    name: str,
    cpu: int = 0,
    priority: int = 0,
    on: str = "",
    labels: dict[str, str] | None = None,
    policy: str = "PreemptLowerPriority",
) -> Pod:
    req = {"cpu": cpu} if cpu else {}
    return Pod(
        name,
        labels=dict(labels or {}),
        containers=[Container("c", req)],
        priority=priority,
        node_name=on,
        preemption_policy=policy,
    )


def simulation(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    setup: Setup | None = None,
    pdbs: Sequence[PodDisruptionBudget] = (),
    seed: int = 0,
    start: dict[str, float] | None = None,
) -> Simulation:
    setup = setup or Setup()
    cluster = Cluster(nodes=list(nodes), pods=list(pods), pdbs=list(pdbs))
    sim = Simulation(cluster, make_config(setup), make_registry(setup), seed=seed)
    for name, t in (start or {}).items():
        sim.records[f"default/{name}"].info.start_time = t
    return sim


def plugin_of(sim: Simulation) -> tuple[Framework, DefaultPreemption]:
    fwk = sim.scheduler.frameworks["default-scheduler"]
    plugin = fwk.plugins[NAME]
    assert isinstance(plugin, DefaultPreemption)
    return fwk, plugin


def diagnose(sim: Simulation, info: PodInfo) -> tuple[CycleState, Diagnosis]:
    """The cycle up to PostFilter: PreFilter, then every filter over every node."""
    fwk, _ = plugin_of(sim)
    state = CycleState()
    st = fwk.run_pre_filter(state, info)
    if not st.ok:
        return state, Diagnosis.all_rejected(sim.snapshot.n, st)
    alive, groups = fwk.run_filters_with_nominated(state, info, slice(None))
    return state, Diagnosis(sim.snapshot.n, alive, groups)


def post_filter(sim: Simulation, preemptor: Pod) -> PostFilterResult:
    _, plugin = plugin_of(sim)
    info = make_pod_info(preemptor)
    state, diag = diagnose(sim, info)
    return plugin.post_filter(state, info, diag)


def events(sim: Simulation, kind: str) -> list[tuple[str, str | None]]:
    return [(e.pod, e.node) for e in sim.events if e.kind == kind]


def victims_on(sim: Simulation, preemptor: Pod, node_name: str) -> tuple[list[str], int, Status]:
    fwk, plugin = plugin_of(sim)
    info = make_pod_info(preemptor)
    state, _ = diagnose(sim, info)
    pdbs = list(sim.scheduler.pdbs())
    victims, violations, st = plugin.evaluator.select_victims_on_node(
        fwk, state.clone(), info, sim.snapshot.index[node_name], pdbs
    )
    return [v.pod.name for v in victims], violations, st


def dry_run(sim: Simulation, preemptor: Pod, offset: int, batched: bool | None = None) -> list[Candidate]:
    fwk, plugin = plugin_of(sim)
    info = make_pod_info(preemptor)
    state, _ = diagnose(sim, info)
    potential = np.arange(sim.snapshot.n, dtype=np.int64)  # upstream's test dry-runs every node
    _, num = plugin.policy.offset_and_num_candidates(len(potential))
    pdbs = list(sim.scheduler.pdbs())
    found = plugin.evaluator.dry_run(fwk, state, info, potential, pdbs, offset, num, batched=batched)
    return found.candidates


def pdb(
    name: str, app: str, min_available: int | str | None = None, max_unavailable: int | None = None
) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        name, "default", LabelSelector(match_labels=(("app", app),)), min_available, max_unavailable
    )


# -- the whole path through the simulator ------------------------------------------------------------------


def test_high_priority_pod_preempts_the_lowest_priority_pod_and_runs_there() -> None:
    nodes = [node("n1", cpu=1000), node("n2", cpu=1000)]
    pods = [pod("low", 600, LOW, on="n1"), pod("mid", 600, MID, on="n2"), pod("hi", 800, HIGH)]
    sim = simulation(nodes, pods)
    result = sim.run()
    by_name = {r.pod.name: r for r in result.records}
    assert events(sim, PREEMPTED_EVENT) == [("default/low", "n1")]
    assert events(sim, NOMINATED) == [("default/hi", "n1")]
    assert events(sim, SCHEDULED) == [("default/hi", "n1")]
    assert by_name["hi"].phase == RUNNING and by_name["hi"].node == "n1"
    assert by_name["low"].phase == "Preempted" and by_name["low"].preempted_by == "default/hi"
    assert by_name["mid"].phase == RUNNING
    # the first attempt failed with the filters' message, then preemption's word on where the pod may go (1.37,
    # kubernetes#140180; before, a successful preemption added nothing)
    first = next(e for e in sim.events if e.kind == "unschedulable")
    assert first.reason == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: found a potential placement for pod on node n1, preempting 1 victims"
    )


def test_upstream_basic_preemption_logic() -> None:
    """TestPreempt "basic preemption logic": both small low-priority pods on node1 go."""
    nodes = [node("node1"), node("node2"), node("node3")]
    pods = [
        pod("p1.1", SMALL, LOW, on="node1"),
        pod("p1.2", SMALL, LOW, on="node1"),
        pod("p2.1", LARGE, HIGH, on="node2"),
        pod("p3.1", MEDIUM, MID, on="node3"),
    ]
    sim = simulation(nodes, pods)
    res = post_filter(sim, pod("p", VERY_LARGE, HIGH))
    assert res.nominated_node == "node1" and res.status.ok
    assert sorted(p for p, _ in events(sim, PREEMPTED_EVENT)) == ["default/p1.1", "default/p1.2"]


def test_never_policy_does_not_preempt() -> None:
    nodes = [node("n1", cpu=1000)]
    pods = [pod("low", 1000, LOW, on="n1"), pod("hi", 500, HIGH, policy=PREEMPT_NEVER)]
    sim = simulation(nodes, pods)
    result = sim.run()
    hi = next(r for r in result.records if r.pod.name == "hi")
    assert hi.phase == "Pending"
    assert hi.reason == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
    )
    assert events(sim, PREEMPTED_EVENT) == []
    # upstream returns a nil result: the nomination is left as it is
    res = post_filter(sim, pod("hi2", 500, HIGH, policy=PREEMPT_NEVER))
    assert res.nominated_node is None
    assert res.status.code == Code.UNSCHEDULABLE


def test_tied_priority_is_still_unschedulable() -> None:
    """TestPostFilter "pod with tied priority is still unschedulable"."""
    sim = simulation([node("node1", pods=1)], [pod("p1", on="node1")])
    res = post_filter(sim, pod("p"))
    assert res.nominated_node == ""
    assert res.status.code == Code.UNSCHEDULABLE
    assert res.status.message == "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."


def test_taint_rejected_nodes_are_not_candidates() -> None:
    taint = Taint("dedicated", "x", "NoSchedule")
    nodes = [node("t1", cpu=1000), node("t2", cpu=1000)]
    for nd in nodes:
        nd.taints = [taint]
    pods = [pod("l1", 1000, LOW, on="t1"), pod("l2", 1000, LOW, on="t2"), pod("hi", 500, HIGH)]
    sim = simulation(nodes, pods)
    result = sim.run()
    hi = next(r for r in result.records if r.pod.name == "hi")
    assert hi.reason == (
        "0/2 nodes are available: 2 node(s) had untolerated taint(s). "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert events(sim, PREEMPTED_EVENT) == []


def test_filter_order_decides_which_status_a_tainted_node_gets() -> None:
    """With NodeResourcesFit before TaintToleration the full tainted nodes are rejected as Unschedulable
    (Insufficient cpu), so preemption dry-runs them and reports the taint found once pods are removed."""
    nodes = [node("t1", cpu=1000), node("t2", cpu=1000)]
    for nd in nodes:
        nd.taints = [Taint("dedicated", "x", "NoSchedule")]
    pods = [pod("l1", 1000, LOW, on="t1"), pod("l2", 1000, LOW, on="t2"), pod("hi", 500, HIGH)]
    sim = simulation(nodes, pods, setup=Setup(fit_before_taints=True))
    result = sim.run()
    hi = next(r for r in result.records if r.pod.name == "hi")
    assert hi.reason == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 node(s) had untolerated taint(s)."
    )
    assert events(sim, PREEMPTED_EVENT) == []


def test_tainted_node_is_skipped_and_the_untainted_one_preempted() -> None:
    nodes = [node("tainted", cpu=1000), node("plain", cpu=1000)]
    nodes[0].taints = [Taint("dedicated", "x", "NoSchedule")]
    pods = [pod("l1", 1000, LOW, on="tainted"), pod("l2", 1000, MID, on="plain"), pod("hi", 500, HIGH)]
    sim = simulation(nodes, pods)
    sim.run()
    assert events(sim, PREEMPTED_EVENT) == [("default/l2", "plain")]
    assert events(sim, SCHEDULED) == [("default/hi", "plain")]


def test_tolerated_taint_makes_the_node_a_candidate() -> None:
    nodes = [node("tainted", cpu=1000)]
    nodes[0].taints = [Taint("dedicated", "x", "NoSchedule")]
    hi = pod("hi", 500, HIGH)
    hi.tolerations = [Toleration("dedicated", "Exists")]
    sim = simulation(nodes, [pod("l1", 1000, LOW, on="tainted"), hi])
    sim.run()
    assert events(sim, SCHEDULED) == [("default/hi", "tainted")]


def test_mixed_reasons_message() -> None:
    """TestPostFilter "no candidate nodes found with mixed reasons": nodes the dry run looked at keep their
    status, the others are "Preemption is not helpful for scheduling"; N counts every node."""
    nodes = [node("node1", pods=1), node("node2"), node("node3"), node("node4")]
    nodes[3].taints = [Taint("k", "v", "NoSchedule")]
    pods = [
        pod("p1", 0, HIGH, on="node1"),  # only a higher-priority pod: no victims
        pod("p2a", LARGE, HIGH, on="node2"),  # even without p2b the pod does not fit
        pod("p2b", SMALL, LOW, on="node2"),
        pod("p3", LARGE, HIGH, on="node3"),  # no lower-priority pod either
        pod("p4", LARGE, LOW, on="node4"),  # tainted: UnschedulableAndUnresolvable
    ]
    sim = simulation(nodes, pods)
    res = post_filter(sim, pod("p", LARGE, HIGH))
    assert res.nominated_node == ""
    assert res.status.message == (
        "preemption: 0/4 nodes are available: 1 Insufficient cpu, "
        "1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    )


def test_message_when_every_potential_node_is_too_full() -> None:
    """TestPostFilter "no candidate nodes found, no enough resource after removing low priority pods"."""
    nodes = [node("node1"), node("node2")]
    pods = [
        pod("h1", LARGE, VERY_HIGH, on="node1"),
        pod("p1", SMALL, LOW, on="node1"),
        pod("h2", LARGE, VERY_HIGH, on="node2"),
        pod("p2", SMALL, LOW, on="node2"),
    ]
    sim = simulation(nodes, pods)
    res = post_filter(sim, pod("p", LARGE, HIGH))
    assert res.status.message == "preemption: 0/2 nodes are available: 2 Insufficient cpu."
    assert res.nominated_node == ""
    assert sim.snapshot.pods_on[0].keys() == {"default/h1", "default/p1"}


def test_no_candidate_clears_the_preemptors_nomination_in_the_simulator() -> None:
    nodes = [node("n1", cpu=1000)]
    hi = pod("hi", 500, HIGH)
    hi.nominated_node_name = "n1"
    sim = simulation(nodes, [pod("h", 1000, VERY_HIGH, on="n1"), hi])
    sim.run()
    ran = sim.records["default/hi"].pod  # the simulation's own copy of the pod (the input is left alone)
    assert ran.nominated_node_name == "" and hi.nominated_node_name == "n1"
    assert sim.scheduler.nominator.node_of("default/hi") is None


# -- victims on one node (SelectVictimsOnNode) --------------------------------------------------------------


def test_reprieve_keeps_the_small_lower_priority_pod() -> None:
    """TestDryRunPreemption "medium priority pod is preempted, but lower priority one stays as it is
    small"."""
    nodes = [node("node1"), node("node2")]
    pods = [
        pod("p1.1", SMALL, LOW, on="node1"),
        pod("p1.2", LARGE, MID, on="node1"),
        pod("p2", LARGE, MID, on="node2"),
    ]
    sim = simulation(nodes, pods)
    assert victims_on(sim, pod("p", LARGE, HIGH), "node1") == (["p1.2"], 0, Status())
    assert victims_on(sim, pod("p", LARGE, HIGH), "node2") == (["p2"], 0, Status())


def test_mixed_priority_pods_are_preempted() -> None:
    """TestDryRunPreemption "mixed priority pods are preempted": the most important pods are added back first;
    the higher-priority p1.4 is never a victim."""
    nodes = [node("node1"), node("node2")]
    pods = [
        pod("p1.1", SMALL, MID, on="node1"),
        pod("p1.2", SMALL, LOW, on="node1"),
        pod("p1.3", MEDIUM, MID, on="node1"),
        pod("p1.4", SMALL, HIGH, on="node1"),
        pod("p2", LARGE, HIGH, on="node2"),
    ]
    sim = simulation(nodes, pods)
    names, violations, st = victims_on(sim, pod("p", LARGE, HIGH), "node1")
    assert (names, violations, st.ok) == (["p1.3", "p1.2"], 0, True)  # most important first
    names, _, st = victims_on(sim, pod("p", LARGE, HIGH), "node2")
    assert names == [] and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert st.reasons == ["No preemption victims found for incoming pod"]


def test_equal_priorities_reprieve_the_earlier_started_pod() -> None:
    """TestDryRunPreemption "... pick later StartTime one when priorities are equal"."""
    nodes = [node("node1"), node("node2")]
    pods = [
        pod("p1.1", SMALL, LOW, on="node1"),
        pod("p1.2", SMALL, LOW, on="node1"),
        pod("p1.3", MEDIUM, MID, on="node1"),
        pod("p1.4", SMALL, HIGH, on="node1"),
        pod("p2", LARGE, HIGH, on="node2"),
    ]
    sim = simulation(nodes, pods, start={"p1.1": 5, "p1.2": 4, "p1.3": 3, "p1.4": 2, "p2": 1})
    names, _, _ = victims_on(sim, pod("p", LARGE, HIGH), "node1")
    assert names == ["p1.3", "p1.1"]


def test_victim_selection_leaves_the_snapshot_as_it_was() -> None:
    nodes = [node("node1"), node("node2")]
    pods = [
        pod("a", SMALL, LOW, on="node1"),
        pod("b", MEDIUM, MID, on="node1"),
        pod("c", SMALL, HIGH, on="node1"),
        pod("d", SMALL, LOW, on="node1"),
        pod("e", LARGE, LOW, on="node2"),
    ]
    sim = simulation(nodes, pods)
    snap = sim.snapshot
    before = (
        snap.requested.copy(),
        snap.nonzero.copy(),
        snap.pod_count.copy(),
        [list(d) for d in snap.pods_on],
    )
    cols = {k: p.node for k, p in snap.pods.items()}
    for preemptor in (pod("x", LARGE, HIGH), pod("y", VERY_LARGE, HIGH), pod("z", VERY_LARGE, VERY_HIGH)):
        for name in ("node1", "node2"):
            victims_on(sim, preemptor, name)
    assert np.array_equal(snap.requested, before[0])
    assert np.array_equal(snap.nonzero, before[1])
    assert np.array_equal(snap.pod_count, before[2])
    assert [list(d) for d in snap.pods_on] == before[3]
    assert {k: p.node for k, p in snap.pods.items()} == cols


def test_pdb_violations_are_counted_per_budget() -> None:
    """TestDryRunPreemption "preemption with violation of same pdb": a budget allowing one disruption, two
    victims from it: one violation."""
    pods = [
        pod("p1.1", MEDIUM, MID, on="node1", labels={"app": "foo"}),
        pod("p1.2", MEDIUM, MID, on="node1", labels={"app": "foo"}),
    ]
    for p in pods:  # a controller's pods (maxUnavailable is taken of them; a budget over bare pods allows nothing)
        p.owner_refs = (OwnerRef("ReplicaSet", "foo", api_version="apps/v1"),)
    sim = simulation([node("node1")], pods, pdbs=[pdb("budget", "foo", max_unavailable=1)])
    assert [b.disruptions_allowed for b in sim.scheduler.pdbs()] == [1]
    names, violations, st = victims_on(sim, pod("p", VERY_LARGE, HIGH), "node1")
    assert sorted(names) == ["p1.1", "p1.2"] and violations == 1 and st.ok


@dataclass
class FakeBudget:
    allowed: int
    app: str

    @property
    def disruptions_allowed(self) -> int:
        return self.allowed

    def matches(self, pod: PodInfo) -> bool:
        return pod.pod.labels.get("app") == self.app


def test_filter_pods_with_pdb_violation() -> None:
    infos = [
        make_pod_info(pod(n, labels=lb))
        for n, lb in [
            ("a", {"app": "x"}),
            ("b", {"app": "x"}),
            ("c", {"app": "y"}),
            ("d", {}),
            ("e", {"app": "x"}),
        ]
    ]
    budgets = [FakeBudget(1, "x"), FakeBudget(0, "y"), FakeBudget(5, "x")]
    violating, ok = filter_pods_with_pdb_violation(infos, budgets)
    assert [p.pod.name for p in violating] == ["b", "c", "e"]
    assert [p.pod.name for p in ok] == ["a", "d"]


def test_pod_without_labels_never_violates() -> None:
    """Upstream skips pods without labels, even for a budget whose selector would match them."""

    class MatchesAll(FakeBudget):
        def matches(self, pod: PodInfo) -> bool:
            return True

    violating, ok = filter_pods_with_pdb_violation([make_pod_info(pod("a"))], [MatchesAll(0, "")])
    assert violating == [] and len(ok) == 1


def test_pdb_protected_pods_are_spared_when_another_node_needs_no_violation() -> None:
    nodes = [node("n1", cpu=1000), node("n2", cpu=1000)]
    pods = [
        pod("guarded", 1000, LOW, on="n1", labels={"app": "db"}),
        pod("free", 1000, MID, on="n2"),
        pod("hi", 500, HIGH),
    ]
    sim = simulation(nodes, pods, pdbs=[pdb("db", "db", min_available=1)])
    sim.run()
    # n1's victim has the lower priority, but evicting it would violate the budget
    assert events(sim, PREEMPTED_EVENT) == [("default/free", "n2")]
    assert events(sim, SCHEDULED) == [("default/hi", "n2")]


def test_pdb_violation_accepted_when_no_other_node_helps() -> None:
    nodes = [node("n1", cpu=1000), node("n2", cpu=1000)]
    pods = [
        pod("guarded", 1000, LOW, on="n1", labels={"app": "db"}),
        pod("top", 1000, VERY_HIGH, on="n2"),
        pod("hi", 500, HIGH),
    ]
    sim = simulation(nodes, pods, pdbs=[pdb("db", "db", min_available=1)])
    sim.run()
    assert events(sim, PREEMPTED_EVENT) == [("default/guarded", "n1")]


def test_min_highest_priority_beats_pdb_tie() -> None:
    """TestPostFilter "pod can be made schedulable on minHighestPriority node": one violation on each node,
    then node2's highest victim priority is lower."""
    nodes = [node("node1", pods=1), node("node2", pods=1)]
    pods = [
        pod("p1", 0, HIGH, on="node1", labels={"pdb": "non-violating"}),
        pod("p2", 0, LOW, on="node1", labels={"pdb": "violating"}),
        pod("p3", 0, MID, on="node2", labels={"pdb": "violating"}),
    ]
    budgets = [
        PodDisruptionBudget("violating", "default", LabelSelector((("pdb", "violating"),)), min_available="100%"),
        PodDisruptionBudget("non-violating", "default", LabelSelector((("pdb", "non-violating"),)), 0),
    ]
    sim = simulation(nodes, pods, pdbs=budgets)
    res = post_filter(sim, pod("p", 0, VERY_HIGH))
    assert res.nominated_node == "node2" and res.status.ok


# -- the dry run: how many candidates, from where ---------------------------------------------------------


def five_nodes(prios: Sequence[int], labelled: Sequence[bool] = (False,) * 5) -> tuple[list[Node], list[Pod]]:
    nodes = [node(f"node{i}") for i in range(1, 6)]
    pods = [
        pod(f"p{i}", LARGE, prio, on=f"node{i}", labels={"app": "foo"} if lab else None)
        for i, (prio, lab) in enumerate(zip(prios, labelled, strict=True), start=1)
    ]
    return nodes, pods


def test_dry_run_stops_at_the_number_of_candidates() -> None:
    """TestDryRunPreemption "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2"."""
    setup = Setup(args=DefaultPreemptionArgs(40, 1), counting=True)
    sim = simulation(*five_nodes([MID] * 5), setup=setup)
    counter = setup.plugins["CountingFilter"]
    assert isinstance(counter, CountingFilter)
    counter.calls = 0
    cands = dry_run(sim, pod("p", LARGE, HIGH), offset=4, batched=False)
    assert [c.name for c in cands] == ["node5", "node1"]
    assert [[v.pod.name for v in c.victims] for c in cands] == [["p5"], ["p1"]]
    assert counter.calls - 1 == 4  # minus the diagnosis' own filter run over all nodes
    # batched: one call for the first check of both nodes, one for the reprieve step
    counter.calls = 0
    cands = dry_run(sim, pod("p", LARGE, HIGH), offset=4, batched=True)
    assert [c.name for c in cands] == ["node5", "node1"]
    assert counter.calls - 1 == 2


def test_dry_run_skips_nodes_without_victims() -> None:
    """TestDryRunPreemption "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2"."""
    setup = Setup(args=DefaultPreemptionArgs(40, 1), counting=True)
    sim = simulation(*five_nodes([MID, VERY_HIGH, MID, MID, VERY_HIGH]), setup=setup)
    counter = setup.plugins["CountingFilter"]
    assert isinstance(counter, CountingFilter)
    counter.calls = 0
    cands = dry_run(sim, pod("p", LARGE, HIGH), offset=4, batched=False)
    assert [c.name for c in cands] == ["node1", "node3"]
    assert counter.calls - 1 == 4
    assert [c.name for c in dry_run(sim, pod("p", LARGE, HIGH), offset=4, batched=True)] == ["node1", "node3"]


def test_dry_run_looks_past_num_candidates_for_a_non_violating_node() -> None:
    """TestDryRunPreemption "preemption looks past numCandidates until a non-PDB violating node is found":
    the violating list is full after node5 and node1, node2's candidate is dropped, node3 ends the search."""
    setup = Setup(args=DefaultPreemptionArgs(40, 2), counting=True)
    nodes, pods = five_nodes([MID] * 5, [True, True, False, False, True])
    sim = simulation(nodes, pods, setup=setup, pdbs=[pdb("foo", "foo", max_unavailable=0)])
    counter = setup.plugins["CountingFilter"]
    assert isinstance(counter, CountingFilter)
    counter.calls = 0
    cands = dry_run(sim, pod("p", LARGE, HIGH), offset=4, batched=False)
    assert [(c.name, c.num_pdb_violations) for c in cands] == [("node3", 0), ("node5", 1), ("node1", 1)]
    assert counter.calls - 1 == 8
    cands = dry_run(sim, pod("p", LARGE, HIGH), offset=4, batched=True)
    assert [(c.name, c.num_pdb_violations) for c in cands] == [("node3", 0), ("node5", 1), ("node1", 1)]


@pytest.mark.parametrize(
    ("pct", "absolute", "n", "expected"),
    [
        (10, 100, 50, 50),
        (10, 100, 5000, 500),
        (10, 100, 500, 100),
        (40, 1, 5, 2),
        (0, 3, 10, 3),
        (100, 0, 7, 7),
    ],
)
def test_calculate_num_candidates(pct: int, absolute: int, n: int, expected: int) -> None:
    sim = simulation([node("n")], [], setup=Setup(args=DefaultPreemptionArgs(pct, absolute)))
    _, plugin = plugin_of(sim)
    assert plugin.policy.calculate_num_candidates(n) == expected


def test_offset_comes_from_the_seeded_generator() -> None:
    """Every node is an equally good candidate: the dry run starts at the random offset, and the first
    candidate found (the offset's node) wins the final tie. The same seed gives the same node."""
    n = 30

    def nominated(seed: int) -> str | None:
        nodes = [node(f"n{i:02d}") for i in range(n)]
        pods = [pod(f"l{i:02d}", VERY_LARGE, LOW, on=f"n{i:02d}") for i in range(n)]
        sim = simulation(nodes, [*pods, pod("hi", LARGE, HIGH)], seed=seed)
        sim.run()
        got = events(sim, NOMINATED)
        assert len(got) == 1
        return got[0][1]

    for seed in (0, 1, 2, 7):
        want = f"n{int(np.random.default_rng(seed).integers(n)):02d}"  # the first draw of a fresh generator
        assert nominated(seed) == want
        assert nominated(seed) == want
    assert len({nominated(s) for s in range(8)}) > 1


# -- choosing the node (TestSelectBestCandidate) ------------------------------------------------------------

PodSpec = tuple[str, int, int, float]  # name, cpu, priority, start time


def best_node(node_names: Sequence[str], preemptor: Pod, specs: Sequence[PodSpec]) -> str | None:
    nodes = [node(n) for n in node_names]
    pods = [pod(name, cpu, prio, on=f"node{name[1]}") for name, cpu, prio, _ in specs]
    sim = simulation(nodes, pods, start={name: t for name, _, _, t in specs})
    return post_filter(sim, preemptor).nominated_node


SELECT_BEST = [
    (
        "node with min highest priority pod is picked",
        [
            ("p1.1", MEDIUM, MID, 0),
            ("p1.2", LARGE, MID, 0),
            ("p2.1", MEDIUM, MID, 0),
            ("p2.2", MEDIUM, LOW, 0),
            ("p3.1", MEDIUM, LOW, 0),
            ("p3.2", MEDIUM, LOW, 0),
        ],
        HIGH,
        "node3",
    ),
    (
        "when highest priorities are the same, minimum sum of priorities is picked",
        [
            ("p1.1", MEDIUM, MID, 0),
            ("p1.2", LARGE, MID, 0),
            ("p2.1", LARGE, MID, 0),
            ("p2.2", MEDIUM, LOW, 0),
            ("p3.1", MEDIUM, MID, 0),
            ("p3.2", MEDIUM, MID, 0),
        ],
        HIGH,
        "node2",
    ),
    (
        "when highest priority and sum are the same, minimum number of pods is picked",
        [
            ("p1.1", SMALL, MID, 0),
            ("p1.2", SMALL, NEG, 0),
            ("p1.3", SMALL, MID, 0),
            ("p1.4", SMALL, NEG, 0),
            ("p2.1", LARGE, MID, 0),
            ("p2.2", MEDIUM, NEG, 0),
            ("p3.1", MEDIUM, MID, 0),
            ("p3.2", SMALL, NEG, 0),
            ("p3.3", SMALL, LOW, 0),
        ],
        HIGH,
        "node2",
    ),
    (
        "sum of adjusted priorities is considered",
        [
            ("p1.1", SMALL, MID, 0),
            ("p1.2", SMALL, NEG, 0),
            ("p1.3", SMALL, NEG, 0),
            ("p2.1", LARGE, MID, 0),
            ("p2.2", MEDIUM, NEG, 0),
            ("p3.1", MEDIUM, MID, 0),
            ("p3.2", SMALL, NEG, 0),
            ("p3.3", SMALL, LOW, 0),
        ],
        HIGH,
        "node2",
    ),
    (
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        [
            ("p1.1", SMALL, MID, 0),
            ("p1.2", SMALL, LOW, 0),
            ("p1.3", SMALL, LOW, 0),
            ("p2.1", LARGE, HIGH, 0),
            ("p3.1", MEDIUM, MID, 0),
            ("p3.2", SMALL, LOW, 0),
            ("p3.3", SMALL, LOW, 0),
            ("p3.4", MEDIUM, LOW, 0),
            ("p4.1", MEDIUM, MID, 0),
            ("p4.2", SMALL, MID, 0),
            ("p4.3", SMALL, MID, 0),
            ("p4.4", SMALL, NEG, 0),
        ],
        VERY_HIGH,
        "node1",
    ),
    (
        "same priority, same number of victims, different start time for each node's pod",
        [
            ("p1.1", MEDIUM, MID, 2),
            ("p1.2", MEDIUM, MID, 2),
            ("p2.1", MEDIUM, MID, 3),
            ("p2.2", MEDIUM, MID, 3),
            ("p3.1", MEDIUM, MID, 1),
            ("p3.2", MEDIUM, MID, 1),
        ],
        HIGH,
        "node2",
    ),
    (
        "same priority, same number of victims, different start time for all pods",
        [
            ("p1.1", MEDIUM, MID, 4),
            ("p1.2", MEDIUM, MID, 2),
            ("p2.1", MEDIUM, MID, 5),
            ("p2.2", MEDIUM, MID, 1),
            ("p3.1", MEDIUM, MID, 3),
            ("p3.2", MEDIUM, MID, 6),
        ],
        HIGH,
        "node3",
    ),
    (
        "different priority, same number of victims, different start time for all pods",
        [
            ("p1.1", MEDIUM, LOW, 4),
            ("p1.2", MEDIUM, MID, 2),
            ("p2.1", MEDIUM, MID, 6),
            ("p2.2", MEDIUM, LOW, 1),
            ("p3.1", MEDIUM, LOW, 3),
            ("p3.2", MEDIUM, MID, 5),
        ],
        HIGH,
        "node2",
    ),
]


@pytest.mark.parametrize(("name", "specs", "priority", "expected"), SELECT_BEST, ids=[c[0] for c in SELECT_BEST])
def test_select_best_candidate(name: str, specs: list[PodSpec], priority: int, expected: str) -> None:
    node_names = sorted({f"node{s[0][1]}" for s in specs})
    assert best_node(node_names, pod("p", VERY_LARGE, priority), specs) == expected


def test_select_best_candidate_full_tie_is_the_first_in_dry_run_order() -> None:
    """Two candidates equal on every criterion: the first the dry run found wins. The dry run starts at the
    seeded random offset among the potential nodes (upstream: rand.Int31n), so the seed decides which."""
    specs: list[PodSpec] = [("p1", LARGE, MID, 0), ("p2", LARGE, MID, 0)]
    nodes = [node("node1"), node("node2")]
    picked = set()
    for seed in range(8):
        pods = [pod(name, cpu, prio, on=f"node{name[1]}") for name, cpu, prio, _ in specs]
        sim = simulation(nodes, pods, seed=seed)
        offset = int(np.random.default_rng(seed).integers(2))  # the first draw of the scheduler's generator
        expected = ["node1", "node2"][offset]
        assert post_filter(sim, pod("p", LARGE, HIGH)).nominated_node == expected
        picked.add(expected)
    assert picked == {"node1", "node2"}  # both offsets occur among these seeds


def cand(name: str, prios: Sequence[int], starts: Sequence[float] | None = None, pdb_violations: int = 0) -> Candidate:
    starts = starts or [0.0] * len(prios)
    victims = []
    for i, (p, t) in enumerate(zip(prios, starts, strict=True)):
        info = make_pod_info(pod(f"{name}-{i}", priority=p))
        info.start_time = t
        victims.append(info)
    victims.sort(key=lambda v: (-v.priority, v.start_time))
    return Candidate(name, 0, victims, pdb_violations)


def pick(cands: Sequence[Candidate]) -> str | None:
    c = pick_one_node_for_preemption(cands)
    return None if c is None else c.name


def test_pick_one_node_criteria_in_order() -> None:
    assert pick([]) is None
    # 1. fewest PDB violations, whatever the priorities
    assert pick([cand("a", [1], pdb_violations=1), cand("b", [1000, 1000])]) == "b"
    # 2. lowest highest priority
    assert pick([cand("a", [500]), cand("b", [100, 100, 100])]) == "b"
    # 3. lowest sum, each priority shifted by 2^31: more victims of a negative priority do not win
    assert pick([cand("a", [-100, -100, -100]), cand("b", [-100, -100])]) == "b"
    assert pick([cand("a", [5, 3]), cand("b", [5, 1])]) == "b"
    # 4. fewest victims: with the shift, equal sums and different counts need a victim at -2^31
    assert pick([cand("a", [0, -(2**31)]), cand("b", [0])]) == "b"
    # 5. latest earliest-start among the highest-priority victims (lower-priority victims do not count)
    assert pick([cand("a", [5, 5, 1], [1.0, 4.0, 9.0]), cand("b", [5, 5, 1], [2.0, 3.0, 0.0])]) == "b"
    # 6. then the first one
    assert pick([cand("x", [5]), cand("y", [5])]) == "x"
    assert pick([cand("y", [5]), cand("x", [5])]) == "y"


# -- nominations -------------------------------------------------------------------------------------------


def test_nominated_higher_priority_pod_is_respected_by_the_next_pod() -> None:
    nodes = [node("n1", cpu=1000)]
    pods = [pod("low", 1000, LOW, on="n1"), pod("hi", 1000, HIGH), pod("mid", 500, MID)]
    sim = simulation(nodes, pods)
    sim.run()
    # hi preempts and is nominated to n1; mid is tried while hi waits in backoff: n1 is free, but with hi
    # (nominated, higher priority) added it does not fit, and there is nothing left mid may preempt.
    kinds = [(e.kind, e.pod) for e in sim.events]
    assert kinds[:4] == [
        ("preempted", "default/low"),
        ("unschedulable", "default/hi"),
        ("nominated", "default/hi"),
        ("unschedulable", "default/mid"),
    ]
    mid = next(e for e in sim.events if e.pod == "default/mid")
    assert mid.reason == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    assert events(sim, SCHEDULED) == [("default/hi", "n1")]


def test_dry_run_counts_nominated_pods_of_higher_priority() -> None:
    """A node where a higher-priority pod is nominated: removing the lower-priority pods must leave room for
    the nominated pod as well."""
    nodes = [node("n1", cpu=1000), node("n2", cpu=1000)]
    pods = [pod("l1", 1000, LOW, on="n1"), pod("l2", 1000, LOW, on="n2")]
    sim = simulation(nodes, pods)
    waiting = make_pod_info(pod("waiting", 600, VERY_HIGH))
    sim.scheduler.nominator.nominate(waiting, 0)
    res = post_filter(sim, pod("p", 600, HIGH))
    assert res.nominated_node == "n2"


def test_lower_priority_nominations_on_the_node_are_cleared() -> None:
    nodes = [node("n1", cpu=1000)]
    mid = pod("mid", 400, MID)
    mid.nominated_node_name = "n1"
    pods = [pod("low", 1000, LOW, on="n1"), pod("hi", 1000, HIGH), mid]
    sim = simulation(nodes, pods)
    assert sim.scheduler.nominator.node_of("default/mid") == 0
    ran = sim.records["default/mid"].pod  # the simulation's own copy of the pod
    seen: list[tuple[str, int | None, str]] = []
    sim.on_cycle = lambda r: seen.append(
        (r.pod.pod.name, sim.scheduler.nominator.node_of("default/mid"), ran.nominated_node_name)
    )
    sim.run()
    assert seen[0] == ("hi", None, "")  # hi preempted low on n1 and cleared mid's nomination there


# -- eligibility ---------------------------------------------------------------------------------------------


def test_pod_eligible_to_preempt_others() -> None:
    nodes = [node("node1"), node("node2")]
    nodes[1].taints = [Taint("k", "v", "NoSchedule")]
    sim = simulation([*nodes], [pod("p1", VERY_LARGE, LOW, on="node1"), pod("p2", VERY_LARGE, LOW, on="node2")])
    _, plugin = plugin_of(sim)

    def check(p: Pod) -> tuple[bool, str]:
        info = make_pod_info(p)
        _, diag = diagnose(sim, info)
        return plugin.policy.eligible(CycleState(), info, diag)

    assert check(pod("p", LARGE, HIGH)) == (True, "")
    assert check(pod("p", LARGE, HIGH, policy=PREEMPT_NEVER)) == (
        False,
        "not eligible due to preemptionPolicy=Never.",
    )
    nominated = pod("p", LARGE, HIGH)
    nominated.nominated_node_name = "node1"
    assert check(nominated) == (True, "")
    p1 = sim.snapshot.pods["default/p1"].pod
    # terminating, but not by a scheduler's preemption (no DisruptionTarget condition): no reason to wait
    p1.terminating = True
    assert check(nominated) == (True, "")
    # a victim of an earlier preemption still terminating on the nominated node: wait for it
    p1.preempted_by_scheduler = True
    assert check(nominated) == (False, "not eligible due to a terminating pod on the nominated node.")
    # ... unless the nominated node is now UnschedulableAndUnresolvable (tainted)
    nominated.nominated_node_name = "node2"
    assert check(nominated) == (True, "")
    # only lower-priority terminating pods count
    nominated.nominated_node_name = "node1"
    nominated.priority = LOW
    assert check(nominated) == (True, "")
    # a nominated node that is gone
    nominated.nominated_node_name = "gone"
    assert check(nominated) == (True, "")


# -- errors --------------------------------------------------------------------------------------------------


def test_remove_pod_error_on_the_only_node() -> None:
    """TestPostFilter "only one node but failed with TestPlugin"."""
    setup = Setup(error_plugin=True)
    sim = simulation([node("node1", cpu=LARGE, labels={"error": "true"})], [pod("p1", SMALL, on="node1")], setup)
    res = post_filter(sim, pod("p", LARGE, HIGH))
    assert res.nominated_node is None
    assert res.status.code == Code.ERROR
    assert res.status.message == (
        'preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p'
    )
    assert sim.snapshot.pods_on[0].keys() == {"default/p1"}  # restored


def test_add_pod_error_during_reprieve() -> None:
    setup = Setup(error_plugin=True)
    sim = simulation([node("node1", cpu=LARGE, labels={"error": "add"})], [pod("p1", SMALL, on="node1")], setup)
    res = post_filter(sim, pod("p", LARGE, HIGH))
    assert (res.nominated_node, res.status.code) == (None, Code.ERROR)
    assert res.status.message == ('preemption: running AddPod on PreFilter plugin "test-plugin": failed to add pod: p')
    assert list(sim.snapshot.pods_on[0]) == ["default/p1"] and sim.snapshot.pods["default/p1"].node == 0


def test_error_on_one_node_and_the_other_passes() -> None:
    """TestPostFilter "one failed with TestPlugin and the other pass"."""
    setup = Setup(error_plugin=True)
    nodes = [node("node1", cpu=LARGE, labels={"error": "true"}), node("node2", cpu=LARGE)]
    sim = simulation(nodes, [pod("p1", SMALL, on="node1"), pod("p2", MEDIUM, on="node2")], setup)
    res = post_filter(sim, pod("p", LARGE, HIGH))
    assert res.nominated_node == "node2" and res.status.ok


def test_aggregate_errors() -> None:
    assert pre.aggregate_errors(["a"]) == "a"
    assert pre.aggregate_errors(["a", "a"]) == "a"
    assert pre.aggregate_errors(["a", "b", "a"]) == "[a, b]"


# -- the batched dry run equals the node-by-node one --------------------------------------------------------


def random_cluster(rng: np.random.Generator) -> tuple[list[Node], list[Pod], list[PodDisruptionBudget]]:
    nodes = []
    for i in range(int(rng.integers(1, 9))):
        nd = node(f"n{i}", cpu=int(rng.choice([300, 500, 1000])), pods=int(rng.integers(1, 7)))
        if rng.random() < 0.2:
            nd.taints = [Taint("d", "x", "NoSchedule")]
        nodes.append(nd)
    pods = []
    for i in range(int(rng.integers(0, 25))):
        on = nodes[int(rng.integers(len(nodes)))]
        p = pod(
            f"p{i}",
            int(rng.choice([0, 100, 200, 300])),
            int(rng.choice([NEG, LOW, MID, HIGH])),
            on=on.name if rng.random() < 0.8 else "",
            labels={"app": str(rng.choice(["a", "b", "c"]))},
        )
        p.tolerations = [Toleration("d", "Exists")] if rng.random() < 0.3 else []
        pods.append(p)
    budgets = [pdb("a", "a", min_available=int(rng.integers(0, 3))), pdb("b", "b", max_unavailable=1)]
    return nodes, pods, budgets


def summary(found: pre.DryRunResult) -> tuple[object, ...]:
    return (
        [(c.name, [v.key for v in c.victims], c.num_pdb_violations) for c in found.candidates],
        {col: (st.code, st.reasons) for col, st in found.statuses.items()},
        found.errors,
    )


@pytest.mark.parametrize("seed", range(40))
def test_batched_dry_run_equals_node_by_node(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nodes, pods, budgets = random_cluster(rng)
    sim = simulation(nodes, pods, pdbs=budgets)
    fwk, plugin = plugin_of(sim)
    snap = sim.snapshot
    for col in rng.permutation(snap.n)[: int(rng.integers(0, 3))].tolist():  # some nominations
        waiting = make_pod_info(pod(f"w{col}", int(rng.choice([100, 300])), int(rng.choice([MID, VERY_HIGH]))))
        sim.scheduler.nominator.nominate(waiting, col)
    pdbs = list(sim.scheduler.pdbs())
    before = (snap.requested.copy(), snap.pod_count.copy(), [list(d) for d in snap.pods_on])
    for _ in range(5):
        preemptor = make_pod_info(pod("x", int(rng.choice([100, 300, 500])), int(rng.choice([MID, HIGH, VERY_HIGH]))))
        state, diag = diagnose(sim, preemptor)
        potential = np.arange(snap.n, dtype=np.int64) if rng.random() < 0.5 else pre.potential_nodes(diag)
        if len(potential) == 0:
            continue
        offset = int(rng.integers(len(potential)))
        num = int(rng.integers(1, len(potential) + 1))
        one = plugin.evaluator.dry_run(fwk, state, preemptor, potential, pdbs, offset, num, batched=False)
        many = plugin.evaluator.dry_run(fwk, state, preemptor, potential, pdbs, offset, num, batched=True)
        assert summary(one) == summary(many)
        assert np.array_equal(snap.requested, before[0]) and np.array_equal(snap.pod_count, before[1])
        assert [list(d) for d in snap.pods_on] == before[2]


class FilteringExtensions(ErrorExtensions):
    """A PreFilter plugin with AddPod/RemovePod that also filters (as PodTopologySpread does)."""

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        return []


def test_node_by_node_only_when_a_plugin_filters_on_its_extension_state() -> None:
    # an extension plugin that does not filter: the filters never read what AddPod/RemovePod change
    fwk, _ = plugin_of(simulation([node("n")], [], setup=Setup(error_plugin=True)))
    assert fwk.has_active_extensions(CycleState())
    assert not pre.filters_read_extension_state(fwk, CycleState())
    # the same plugin filtering too: each node must be judged with its own cycle state
    fwk.filters.append(FilteringExtensions())
    assert pre.filters_read_extension_state(fwk, CycleState())
    state = CycleState()
    state.skip_filter.add("test-plugin")
    assert not pre.filters_read_extension_state(fwk, state) and not fwk.has_active_extensions(state)
    fwk, _ = plugin_of(simulation([node("n")], []))
    assert not fwk.has_active_extensions(CycleState())


# -- the factory ---------------------------------------------------------------------------------------------


def test_factory_defaults_and_validation() -> None:
    sim = simulation([node("n")], [])
    plugin = new_default_preemption(None, sim.scheduler)
    assert (plugin.args.min_candidate_nodes_percentage, plugin.args.min_candidate_nodes_absolute) == (10, 100)
    assert plugin.name == "DefaultPreemption"
    with pytest.raises(TypeError, match="want args to be of type DefaultPreemptionArgs, got dict"):
        new_default_preemption({}, sim.scheduler)
    with pytest.raises(ValueError, match=r"minCandidateNodesPercentage: Invalid value: 101"):
        new_default_preemption(DefaultPreemptionArgs(101, 1), sim.scheduler)
    with pytest.raises(ValueError, match=r"minCandidateNodesAbsolute: Invalid value: -1"):
        new_default_preemption(DefaultPreemptionArgs(10, -1), sim.scheduler)
    with pytest.raises(ValueError, match="cannot be zero at the same time"):
        new_default_preemption(DefaultPreemptionArgs(0, 0), sim.scheduler)


def test_prefilter_unschedulable_makes_every_node_a_potential_node() -> None:
    diag = Diagnosis.all_rejected(3, Status(Code.UNSCHEDULABLE, ["nope"], "X"))
    assert pre.potential_nodes(diag).tolist() == [0, 1, 2]
    diag = Diagnosis.all_rejected(3, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["nope"], "X"))
    assert pre.potential_nodes(diag).tolist() == []


def test_fit_error_message_format() -> None:
    st = [
        Status(Code.UNSCHEDULABLE, ["Insufficient cpu", "Insufficient memory"]),
        Status(Code.UNSCHEDULABLE, ["b"]),
    ]
    assert pre.fit_error_message(12, st, ["Preemption is not helpful for scheduling"]) == (
        "0/12 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 b, "
        "10 Preemption is not helpful for scheduling."
    )
