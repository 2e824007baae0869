"""Every victim preemption chooses for a topology-spread or anti-affinity reason (or for room) was necessary: on the
node the preemptor is nominated to, with the victims gone, putting back any single one of them makes the preemptor
fail the filters there again. Random clusters under the default profile (PodTopologySpread, InterPodAffinity,
NodeResourcesFit, DefaultPreemption), hypothesis."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

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
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import PodInfo
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import CycleResult
from packsched.sim.engine import Simulation

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _selector(app: str) -> LabelSelector:
    return LabelSelector((("app", app),))


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    n_nodes = draw(st.integers(2, 6))
    nodes = []
    for i in range(n_nodes):
        nd = node(f"n{i}", cpu=draw(st.sampled_from([1000, 2000])), pods=draw(st.integers(2, 6)))
        nd.labels = {HOST: f"n{i}", ZONE: f"z{i % draw(st.integers(1, 3))}"}
        nodes.append(nd)
    pods = []
    for i in range(draw(st.integers(1, 16))):
        p = Pod(
            f"low{i}",
            "default",
            uid=f"low{i}",
            labels={"app": draw(st.sampled_from(["a", "b"]))},
            containers=[Container("c", {"cpu": draw(st.sampled_from([100, 250, 500]))})],
            priority=draw(st.sampled_from([0, 10])),
        )
        p.node_name = f"n{draw(st.integers(0, n_nodes - 1))}"
        pods.append(p)
    for i in range(draw(st.integers(1, 4))):  # important pods, arriving later, each with a reason to preempt
        p = Pod(
            f"high{i}",
            "default",
            uid=f"high{i}",
            labels={"app": draw(st.sampled_from(["a", "b", "c"]))},
            containers=[Container("c", {"cpu": draw(st.sampled_from([100, 500, 1000]))})],
            priority=1000,
        )
        p.arrival_time = 1.0 + i
        reason = draw(st.sampled_from(["spread", "anti", "room"]))
        if reason == "spread":
            key = draw(st.sampled_from([ZONE, HOST]))
            app = draw(st.sampled_from(["a", "b"]))
            p.labels = {"app": app}
            p.topology_spread_constraints = (
                TopologySpreadConstraint(draw(st.integers(1, 2)), key, DO_NOT_SCHEDULE, _selector(app)),
            )
        elif reason == "anti":
            key = draw(st.sampled_from([ZONE, HOST]))
            term = PodAffinityTerm(key, _selector(draw(st.sampled_from(["a", "b"]))))
            p.pod_anti_affinity = PodAffinity(required=(term,))
        pods.append(p)
    return Cluster(nodes=nodes, pods=pods)


@dataclass
class Watch:
    sim: Simulation
    batch: list[tuple[PodInfo, PodInfo]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    preemptions: int = 0

    def on_evict(self, victim: PodInfo, preemptor: PodInfo) -> None:
        self.batch.append((victim, preemptor))

    def fits(self, preemptor: PodInfo, col: int) -> bool:
        fwk = self.sim.scheduler.frameworks["default-scheduler"]
        state = CycleState()
        if not fwk.run_pre_filter(state, preemptor).ok:
            return False
        # as the evaluator judges: with the equal- or higher-priority pods nominated to the node added
        ok, _ = fwk.run_filters_with_nominated(state, preemptor, np.array([col], dtype=np.intp))
        return bool(ok[0])

    def on_cycle(self, result: CycleResult) -> None:
        if self.batch and result.nominated_node:
            self.preemptions += 1
            snap = self.sim.snapshot
            col = snap.index[result.nominated_node]
            preemptor = self.batch[0][1]
            if not self.fits(preemptor, col):
                self.problems.append(f"{preemptor.key} does not fit {result.nominated_node} without its victims")
            for victim, _ in self.batch:
                snap.add_pod(victim, col)
                try:
                    if self.fits(preemptor, col):
                        self.problems.append(f"{victim.key} was evicted for {preemptor.key} without need")
                finally:
                    snap.remove_pod(victim)
        self.batch = []


@settings(max_examples=60, deadline=None)
@given(clusters(), st.integers(0, 2**16))
def test_every_victim_was_necessary(cluster: Cluster, seed: int) -> None:
    sim = Simulation(cluster, default_config(in_tree_registry()), in_tree_registry(), seed=seed)
    watch = Watch(sim)
    sim.on_cycle = watch.on_cycle
    evict = sim.evict

    def observed(victim: PodInfo, preemptor: PodInfo) -> None:
        watch.on_evict(victim, preemptor)
        evict(victim, preemptor)

    sim.evict = observed  # type: ignore[method-assign]
    sim.run()
    event(f"preemptions: {min(watch.preemptions, 3)}{'+' if watch.preemptions >= 3 else ''}")
    assert watch.problems == []
