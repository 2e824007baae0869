"""Opportunistic batching (kube-scheduler 1.35+, KEP-5598) in the scheduler: where a hint changes the chosen node
against the full cycle (1.35 and 1.37 on the same input), the gate off, the default profile (PodTopologySpread's
system default constraints) never batching, which pods and profiles sign, the batch's age on the scheduler's
clock, the name tie-break, and explain leaving decisions alone."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.helpers import make_config, make_profile, node, pod

from packsched.api.manifests import Cluster
from packsched.api.objects import (
    Container,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodResourceClaim,
    PreferredTerm,
    Requirement,
    TopologySpreadConstraint,
)
from packsched.config.loader import default_config, load_config_data
from packsched.config.types import KubeSchedulerConfiguration, PluginRef, ResourceSpec, ScoringStrategy
from packsched.config.versions import KubeVersion
from packsched.framework.batch import POD_SKIPPED
from packsched.framework.podinfo import make_pod_info
from packsched.framework.runtime import Framework
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import TIE_NAME
from packsched.sim.engine import Simulation

REGISTRY = in_tree_registry()
WINDOW = 102  # 300 nodes at percentageOfNodesToScore 34


def simulate(
    cfg: KubeSchedulerConfiguration,
    pods: list[Pod],
    nodes: list[Node],
    minor: int,
    gates: dict[str, bool] | None = None,
    seed: int = 0,
    tie_break: str | None = None,
    capture: set[str] | None = None,
) -> Simulation:
    cfg.kube_version = KubeVersion(minor).with_gates(gates or {})
    sim = Simulation(Cluster(nodes=nodes, pods=pods), cfg, REGISTRY, seed=seed, capture=capture)
    if tie_break is not None:
        sim.scheduler.tie_break = tie_break
    sim.run()
    return sim


def placed(sim: Simulation) -> list[int]:
    out = []
    for rec in sim.records.values():
        assert rec.node is not None
        out.append(int(rec.node[1:]))
    return out


def window_run(minor: int, pod_cpu: int, gates: dict[str, bool] | None = None) -> Simulation:
    """Three equal pods on 300 equal nodes of 64 cpu, each cycle scoring 102 feasible nodes (the window
    rotates from where the last full cycle stopped)."""
    nodes = [node(f"n{i:03d}", cpu=64000) for i in range(300)]
    pods = [pod(f"p{i}", cpu=pod_cpu) for i in range(3)]
    return simulate(make_config(percentage=34), pods, nodes, minor, gates)


@pytest.mark.parametrize("minor", [35, 36, 37])
def test_a_hint_keeps_pods_in_the_first_window_when_each_fills_a_node(minor: int) -> None:
    """Pods that fill a node: the second and third take the next nodes of the first cycle's sorted scores,
    without filtering the other nodes, and the window does not move (the full cycle would score the next
    window: kubernetes#95709)."""
    sim = window_run(minor, 64000)
    cols = placed(sim)
    assert all(c < WINDOW for c in cols), cols
    assert len(set(cols)) == 3
    assert sim.scheduler.next_start_node_index == WINDOW
    batch = sim.scheduler.frameworks["default-scheduler"].batch
    assert batch is not None and batch.batched_pods == 2


@pytest.mark.parametrize("minor", [35, 37])
def test_gate_off_is_the_full_cycle(minor: int) -> None:
    sim = window_run(minor, 64000, {"OpportunisticBatching": False})
    assert sim.scheduler.frameworks["default-scheduler"].batch is None
    cols = placed(sim)
    assert cols[0] < WINDOW <= cols[1] < 2 * WINDOW <= cols[2]
    assert sim.scheduler.next_start_node_index == (3 * WINDOW) % 300


def test_135_gives_up_where_137_rescores_the_last_node() -> None:
    """Pods that leave room on their node: in 1.35 (and 1.36) the last chosen node still fits the next pod, so
    the batch is dropped and each pod runs a full cycle on the next window, as with the gate off; 1.37 scores the
    last node again (LeastAllocated: lower now) against the cached nodes and hints the next cached one, so every
    pod stays in the first window."""
    for minor in (35, 36):
        cols = placed(window_run(minor, 32000))
        assert cols[0] < WINDOW <= cols[1] < 2 * WINDOW <= cols[2], (minor, cols)
    sim = window_run(37, 32000)
    cols = placed(sim)
    assert all(c < WINDOW for c in cols) and len(set(cols)) == 3, cols
    assert sim.scheduler.next_start_node_index == WINDOW


def test_137_hints_the_rescored_node_itself_when_it_stays_best() -> None:
    """MostAllocated: the last node, scored again with the pod on it, beats the empty cached nodes, so 1.37 hints
    it again and the pods stack on it (as the full cycle would); 1.35 drops the batch and scores every node."""
    most = ScoringStrategy("MostAllocated", [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)])
    for minor in (35, 37):
        nodes = [node(f"n{i}", cpu=8000) for i in range(4)]
        pods = [pod(f"p{i}", cpu=1000) for i in range(3)]
        cfg = make_config(make_profile(strategy=most, score={"NodeResourcesFit": 1}))
        sim = simulate(cfg, pods, nodes, minor)
        assert len(set(placed(sim))) == 1
        batch = sim.scheduler.frameworks["default-scheduler"].batch
        assert batch is not None
        assert batch.batched_pods == (2 if minor == 37 else 0)


def default_with(disabled: list[str], minor: int) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"disabled": [{"name": n} for n in disabled]}},
            }
        ],
    }


def framework_of(cfg: KubeSchedulerConfiguration, minor: int, gates: dict[str, bool] | None = None) -> Framework:
    cfg.kube_version = KubeVersion(minor).with_gates(gates or {})
    sim = Simulation(Cluster(nodes=[node("n0")], pods=[]), cfg, REGISTRY)
    return sim.scheduler.frameworks["default-scheduler"]


@pytest.mark.parametrize("minor", [35, 36, 37])
def test_the_default_profile_never_batches(minor: int) -> None:
    """PodTopologySpread's System defaulting gives it default constraints, and upstream's plugin refuses to sign
    any pod then: no signature, no batch; the decisions are those of the gate off."""
    fwk = framework_of(default_config(set(REGISTRY), KubeVersion(minor)), minor)
    assert fwk.signers is not None  # every plugin of the default profile can sign ...
    assert fwk.sign_pod(make_pod_info(pod("p", cpu=100))) is None  # ... but PodTopologySpread refuses
    nodes = [node(f"n{i}", cpu=2000) for i in range(6)]
    pods = [pod(f"p{i}", cpu=1000) for i in range(10)]
    runs = [
        placed(simulate(default_config(set(REGISTRY), KubeVersion(minor)), pods, nodes, minor, gates, seed=3))
        for gates in ({}, {"OpportunisticBatching": False})
    ]
    assert runs[0] == runs[1]


@pytest.mark.parametrize("minor", [35, 37])
def test_the_default_profile_without_pod_topology_spread_batches(minor: int) -> None:
    data = default_with(["PodTopologySpread"], minor)
    fwk = framework_of(load_config_data(data, "cfg.yaml", set(REGISTRY)), minor)
    assert fwk.batch is not None
    assert fwk.sign_pod(make_pod_info(pod("p", cpu=100))) is not None
    nodes = [node(f"n{i}", cpu=1000) for i in range(5)]
    pods = [pod(f"p{i}", cpu=1000) for i in range(5)]
    sim = simulate(load_config_data(data, "cfg.yaml", set(REGISTRY)), pods, nodes, minor)
    assert sorted(placed(sim)) == [0, 1, 2, 3, 4]
    batch = sim.scheduler.frameworks["default-scheduler"].batch
    assert batch is not None and batch.batched_pods >= 3  # the first pod and, at most, the last score


def test_before_135_there_is_no_batching() -> None:
    assert framework_of(make_config(), 34).batch is None


def test_gate_table_and_flag() -> None:
    assert KubeVersion(35).opportunistic_batching and KubeVersion(37).opportunistic_batching
    assert not KubeVersion(35).with_gates({"OpportunisticBatching": False}).opportunistic_batching
    with pytest.raises(Exception, match="unrecognized feature gate: OpportunisticBatching"):
        KubeVersion(34).with_gates({"OpportunisticBatching": True})


def test_an_unsigned_plugin_makes_the_profile_unsignable() -> None:
    """A plugin upstream does not have (here scheduler-plugins' and packsched's extras at Score) has no SignPod:
    the profile never batches."""
    prof = make_profile()
    prof.plugins.at("score").enabled.append(PluginRef("RandomScore", 1))
    fwk = framework_of(make_config(prof), 37)
    assert fwk.signers is None and fwk.batch is None


def signature(fwk: Framework, p: Pod) -> str | None:
    return fwk.sign_pod(make_pod_info(p, 0, KubeVersion(37)))


def test_inter_pod_affinity_signs_labels_and_refuses_affinity() -> None:
    fwk = framework_of(load_config_data(default_with(["PodTopologySpread"], 37), "c.yaml", set(REGISTRY)), 37)
    a, b = pod("a", cpu=100), pod("b", cpu=100)
    assert signature(fwk, a) == signature(fwk, b) is not None
    b.labels = {"app": "x"}
    assert signature(fwk, a) != signature(fwk, b)
    b.pod_anti_affinity = PodAffinity(required=(PodAffinityTerm("zone", LabelSelector((("app", "x"),))),))
    assert signature(fwk, b) is None
    data = default_with(["PodTopologySpread"], 37)
    data["profiles"][0]["pluginConfig"] = [
        {"name": "InterPodAffinity", "args": {"ignorePreferredTermsOfExistingPods": True}}
    ]
    fwk = framework_of(load_config_data(data, "c.yaml", set(REGISTRY)), 37)
    c = pod("c", cpu=100)
    c.labels = {"app": "x"}
    assert signature(fwk, a) == signature(fwk, c)  # labels do not count then


def test_a_pod_signs_the_same_after_a_pod_that_was_refused() -> None:
    """The framework asks the plugin that refused the last pod first: a refusal ends early, and a pod that plugin
    accepts gets the signature every plugin gives it, as from a framework that never saw a refusal."""
    cfg = default_with(["PodTopologySpread"], 37)
    fwk = framework_of(load_config_data(cfg, "c.yaml", set(REGISTRY)), 37)
    fresh = framework_of(load_config_data(cfg, "c.yaml", set(REGISTRY)), 37)
    refused = pod("r", cpu=100)
    refused.pod_anti_affinity = PodAffinity(required=(PodAffinityTerm("zone", LabelSelector((("app", "x"),))),))
    plain = pod("a", cpu=250)
    plain.labels = {"app": "y"}
    assert signature(fwk, refused) is None
    assert signature(fwk, plain) == signature(fresh, plain) is not None
    assert signature(fwk, refused) is None


def test_pod_topology_spread_without_defaults_signs_pods_without_constraints() -> None:
    data = default_with([], 37)
    data["profiles"][0]["pluginConfig"] = [
        {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": []}}
    ]
    fwk = framework_of(load_config_data(data, "c.yaml", set(REGISTRY)), 37)
    a = pod("a", cpu=100)
    assert signature(fwk, a) is not None
    a.topology_spread_constraints = (TopologySpreadConstraint(1, "zone", "DoNotSchedule", LabelSelector()),)
    assert signature(fwk, a) is None


def test_what_the_signature_reads() -> None:
    fwk = framework_of(load_config_data(default_with(["PodTopologySpread"], 37), "c.yaml", set(REGISTRY)), 37)
    base = signature(fwk, pod("a", cpu=100))
    assert signature(fwk, pod("b", cpu=100, namespace="other")) == base  # name and namespace are not read
    assert signature(fwk, pod("c", cpu=200)) != base
    d = pod("d", cpu=100)
    d.node_selector = {"disk": "ssd"}
    assert signature(fwk, d) != base
    e = Pod("e", containers=[Container("c", {"cpu": 100}, image="nginx")])
    assert signature(fwk, e) != base
    f = pod("f", cpu=100)
    f.scheduler_name = "other"
    assert signature(fwk, f) != base
    g = pod("g", cpu=100)
    g.resource_claims = (PodResourceClaim("gpu", "claim"),)
    assert signature(fwk, g) is None  # DynamicResources refuses pods with claims


def test_a_batch_expires_after_half_a_second_of_the_scheduler_clock() -> None:
    """maxBatchAge is measured on the scheduler's clock: virtual seconds in the simulator. Pods arriving a
    second apart each run a full cycle; pods arriving together use the batch."""
    for gap, want in ((0.0, 3), (1.0, 0)):
        nodes = [node(f"n{i}", cpu=1000) for i in range(6)]
        pods = [pod(f"p{i}", cpu=1000) for i in range(4)]
        for i, p in enumerate(pods):
            p.arrival_time = i * gap
        sim = simulate(make_config(), pods, nodes, 35)
        batch = sim.scheduler.frameworks["default-scheduler"].batch
        assert batch is not None and batch.batched_pods == want, gap


@pytest.mark.parametrize("minor", [35, 37])
def test_with_name_ties_batching_places_as_the_full_cycle(minor: int) -> None:
    """Equal nodes, ties by name: the sorted list's order among equal totals is the names', so a hint is the
    node the full cycle would choose."""
    runs = []
    for gates in ({}, {"OpportunisticBatching": False}):
        nodes = [node(f"n{i}", cpu=2000) for i in range(8)]
        pods = [pod(f"p{i}", cpu=2000) for i in range(8)]
        runs.append(placed(simulate(make_config(), pods, nodes, minor, gates, tie_break=TIE_NAME)))
    assert runs[0] == runs[1] == list(range(8))


@pytest.mark.parametrize("minor", [35, 37])
def test_explain_does_not_change_decisions(minor: int) -> None:
    def run(capture: set[str] | None) -> tuple[list[int], int]:
        nodes = [node(f"n{i}", cpu=4000) for i in range(10)]
        pods = [pod(f"p{i}", cpu=1000 + 1000 * (i % 2)) for i in range(16)]
        sim = simulate(make_config(), pods, nodes, minor, seed=5, capture=capture)
        batch = sim.scheduler.frameworks["default-scheduler"].batch
        assert batch is not None
        return placed(sim), batch.batched_pods

    plain = run(None)
    assert run({f"default/p{i}" for i in range(16)}) == plain


def test_a_hinted_cycle_reports_its_node_alone() -> None:
    nodes = [node(f"n{i}", cpu=1000) for i in range(3)]
    pods = [pod(f"p{i}", cpu=1000) for i in range(2)]
    sim = simulate(make_config(), pods, nodes, 35, capture={"default/p1"})
    (result,) = sim.captured["default/p1"]
    assert result.used_batch_hint and not result.used_nominated_node
    assert result.batch_hint == result.node
    assert result.top_nodes(sim.scheduler.snapshot) == [result.node]
    assert result.scores is None


@pytest.mark.parametrize("minor", [35, 37])
def test_a_failed_cycle_in_between_leaves_the_batch_unused(minor: int) -> None:
    """Upstream's cycle counter: a pod that fails stores nothing, so the next pod's cycle is not the one after the
    batch's and it runs a full cycle."""
    for between, want in ((False, 1), (True, 0)):
        nodes = [node(f"n{i}", cpu=1000) for i in range(4)]
        pods = [pod("p0", cpu=1000), pod("big", cpu=9000), pod("p1", cpu=1000)]
        if not between:
            del pods[1]
        sim = simulate(make_config(), pods, nodes, minor)
        batch = sim.scheduler.frameworks["default-scheduler"].batch
        assert batch is not None
        assert batch.batched_pods == want, between
        assert (batch.unusable[POD_SKIPPED] > 0) is between


@pytest.mark.parametrize("minor", [35, 37])
def test_an_attempt_decided_without_a_cycle_counts_as_one(minor: int) -> None:
    """The simulator parking a pod tried while nothing changed, and live mode answering for a preemptor whose
    victims still terminate, run no cycle where upstream runs a failing one: ``cycle_not_run`` moves the counter,
    so the next pod does not take the batch stored before it."""
    for skipped, want in ((False, 1), (True, 0)):
        nodes = [node(f"n{i}", cpu=1000) for i in range(4)]
        pods = [pod("p0", cpu=1000), pod("p1", cpu=1000)]
        cfg = make_config()
        cfg.kube_version = KubeVersion(minor)
        sim = Simulation(Cluster(nodes=nodes, pods=pods), cfg, REGISTRY, seed=0)
        if skipped:
            scheduler = sim.scheduler

            def after(result: Any, scheduler: Any = scheduler) -> None:
                if result.pod.key == "default/p0":
                    scheduler.cycle_not_run()

            sim.on_cycle = after
        sim.run()
        batch = sim.scheduler.frameworks["default-scheduler"].batch
        assert batch is not None
        assert batch.batched_pods == want, skipped
        assert (batch.unusable[POD_SKIPPED] > 0) is skipped


def test_node_affinity_signs_in_upstream_canonical_form() -> None:
    """Values, requirements and terms are sorted before signing (upstream NodeAffinitySigner): the same affinity
    written in another order signs alike; another value, weight or operator does not; no affinity differs from an
    empty one."""
    fwk = framework_of(load_config_data(default_with(["PodTopologySpread"], 37), "c.yaml", set(REGISTRY)), 37)

    def with_affinity(name: str, aff: NodeAffinity | None) -> Pod:
        p = pod(name, cpu=100)
        p.node_affinity = aff
        return p

    zone = Requirement("zone", "In", ("a", "b"))
    gpu = Requirement("gpu", "Exists")
    one = NodeAffinity(
        required=(
            NodeSelectorTerm((zone, gpu)),
            NodeSelectorTerm(match_fields=(Requirement("metadata.name", "In", ("n1",)),)),
        ),
        preferred=(PreferredTerm(5, NodeSelectorTerm((gpu,))), PreferredTerm(1, NodeSelectorTerm((zone,)))),
    )
    reordered = NodeAffinity(
        required=(
            NodeSelectorTerm(match_fields=(Requirement("metadata.name", "In", ("n1",)),)),
            NodeSelectorTerm((gpu, Requirement("zone", "In", ("b", "a")))),
        ),
        preferred=(PreferredTerm(1, NodeSelectorTerm((zone,))), PreferredTerm(5, NodeSelectorTerm((gpu,)))),
    )
    base = signature(fwk, with_affinity("a", one))
    assert base is not None and signature(fwk, with_affinity("b", reordered)) == base
    other_value = NodeAffinity(required=(NodeSelectorTerm((Requirement("zone", "In", ("a", "c")), gpu)),))
    assert signature(fwk, with_affinity("c", other_value)) != signature(
        fwk, with_affinity("d", NodeAffinity(required=(NodeSelectorTerm((zone, gpu)),)))
    )
    other_weight = NodeAffinity(preferred=(PreferredTerm(2, NodeSelectorTerm((gpu,))),))
    assert signature(fwk, with_affinity("e", other_weight)) != signature(
        fwk, with_affinity("f", NodeAffinity(preferred=(PreferredTerm(5, NodeSelectorTerm((gpu,))),)))
    )
    assert signature(fwk, with_affinity("g", NodeAffinity())) != signature(fwk, with_affinity("h", None))
    assert signature(fwk, with_affinity("i", NodeAffinity(required=()))) == signature(
        fwk, with_affinity("j", NodeAffinity())
    )


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), st.integers(1, 5000), min_size=1),
    st.dictionaries(st.sampled_from(["app", "tier", "ünïcode"]), st.text(max_size=4), max_size=2),
    st.dictionaries(st.sampled_from(["disk", "zone"]), st.sampled_from(["ssd", "a", 'q"uote']), max_size=2),
    st.sampled_from(["", "nginx", "reg/x:1"]),
)
def test_a_signature_is_the_json_dumps_text_of_its_fragments(
    requests: dict[str, int], labels: dict[str, str], selector: dict[str, str], image: str
) -> None:
    """The signature's encoder (made once, without the circular-reference check) writes what ``json.dumps`` with
    sorted keys and compact separators writes: the text read back and written again that way is the same text,
    for pods with any requests, labels (non-ASCII and quotes included), node selectors and images."""
    fwk = framework_of(load_config_data(default_with(["PodTopologySpread"], 37), "c.yaml", set(REGISTRY)), 37)
    p = Pod("p", containers=[Container("c", dict(requests), image=image)], labels=labels, node_selector=selector)
    sig = signature(fwk, p)
    assert sig is not None
    assert json.dumps(json.loads(sig), sort_keys=True, separators=(",", ":")) == sig
