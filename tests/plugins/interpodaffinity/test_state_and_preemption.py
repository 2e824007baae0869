"""InterPodAffinity's PreFilter state under AddPod/RemovePod and clone, and preemption through the shared
evaluator: a pod blocked by a lower-priority pod's anti-affinity (or by its own anti-affinity to one) preempts
it; one blocked by a higher-priority pod's anti-affinity does not."""

from __future__ import annotations

import numpy as np

from helpers import node
from packsched.api.manifests import Cluster
from packsched.api.objects import Container, LabelSelector, Pod, PodAffinity, PodAffinityTerm
from packsched.config.loader import default_config
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.plugins.interpodaffinity.inter_pod_affinity import (
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    PRE_FILTER_KEY,
    InterPodAffinity,
)
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import run_simulation

HOST = "kubernetes.io/hostname"


def anti(app: str) -> PodAffinity:
    return PodAffinity(required=(PodAffinityTerm(HOST, LabelSelector((("app", app),))),))


def test_add_and_remove_pod_keep_the_counts_and_clones_are_independent() -> None:
    snap = Snapshot([node("n1"), node("n2")])
    placed = make_pod_info(Pod("e", labels={"app": "db"}))
    snap.add_pod(placed, 0)
    plugin = InterPodAffinity(None, None)  # type: ignore[arg-type]
    incoming = make_pod_info(Pod("p", labels={"app": "web"}, pod_anti_affinity=anti("db")))
    state = CycleState()
    assert plugin.pre_filter(state, incoming, snap).ok

    def reasons(st: CycleState) -> list[str | None]:
        out: list[str | None] = [None, None]
        for r in plugin.filter(st, incoming, snap, slice(None)):
            for c in np.flatnonzero(r.mask):
                out[c] = r.reason
        return out

    assert reasons(state) == [ERR_REASON_ANTI_AFFINITY, None]
    trial = state.clone()
    assert plugin.remove_pod(trial, incoming, placed, 0, snap).ok
    assert reasons(trial) == [None, None]
    assert reasons(state) == [ERR_REASON_ANTI_AFFINITY, None]  # the original is untouched
    # a pod whose own anti-affinity the incoming pod matches, added to n2 (a nominated pod, say)
    guard = make_pod_info(Pod("g", labels={"app": "x"}, pod_anti_affinity=anti("web")))
    assert plugin.add_pod(trial, incoming, guard, 1, snap).ok
    assert reasons(trial) == [None, ERR_REASON_EXISTING_ANTI_AFFINITY]
    assert plugin.remove_pod(trial, incoming, guard, 1, snap).ok
    assert plugin.add_pod(trial, incoming, placed, 0, snap).ok
    assert reasons(trial) == reasons(state)
    assert state.read(PRE_FILTER_KEY) is not trial.read(PRE_FILTER_KEY)


def _cluster(victim_priority: int, symmetric: bool) -> Cluster:
    nodes = [node("n1", cpu=2000)]
    victim = Pod("low", labels={"app": "db"}, containers=[Container("c", {"cpu": 100})], priority=victim_priority)
    victim.node_name = "n1"
    high = Pod("high", labels={"app": "web"}, containers=[Container("c", {"cpu": 100})], priority=100)
    if symmetric:
        victim.pod_anti_affinity = anti("web")  # the placed pod keeps the newcomer away
    else:
        high.pod_anti_affinity = anti("db")  # the newcomer keeps away from the placed pod
    for p in (victim, high):
        p.priority_set = True
    return Cluster(nodes=nodes, pods=[victim, high])


def _outcome(victim_priority: int, symmetric: bool) -> dict[str, tuple[str, str | None, str | None]]:
    cfg = default_config(in_tree_registry())
    result = run_simulation(_cluster(victim_priority, symmetric), cfg, in_tree_registry())
    return {r.pod.name: (r.phase, r.node, r.preempted_by) for r in result.records}


def test_existing_pods_anti_affinity_blocks_until_the_lower_priority_pod_is_preempted() -> None:
    out = _outcome(0, symmetric=True)
    assert out["high"][:2] == ("Running", "n1")
    assert out["low"][2] == "default/high"


def test_the_pods_own_anti_affinity_preempts_the_lower_priority_pod() -> None:
    out = _outcome(0, symmetric=False)
    assert out["high"][:2] == ("Running", "n1")
    assert out["low"][2] == "default/high"


def test_a_higher_priority_blocker_is_not_preempted() -> None:
    out = _outcome(1000, symmetric=True)
    assert out["low"][:2] == ("Running", "n1")
    assert out["high"][1] is None and out["low"][2] is None
