"""Invariants of gang scheduling over random GPU clusters, random gangs and random single pods (hypothesis):

(a) all or nothing: after every instant of the history, each group has either none of its members running or at
    least ``minMember`` of them (reconstructed from the events: ``scheduled`` starts a pod, ``completed`` ends it);
(b) no node's GPUs are over-committed by the pods bound there and the pods held there at Permit (reconstructed
    from the events: ``waiting`` holds the pod's GPUs on its node until ``scheduled`` or ``unschedulable``), and
    the scheduler's own snapshot agrees after every cycle;
(c) a group whose wait ended in a rejection (timeout, PostFilter, Unreserve) holds nothing afterwards: when the
    scheduler settles the waits, no member of such a group is still waiting or assumed anywhere;
(d) the same input and seed give the same events.

Every pod has priority 0 and the profile has no preemption, so nothing but the gang logic decides who runs.
Members of a gang run until the end (a pod that completes would make a group drop below ``minMember`` running
legitimately); single pods finish after a while, freeing GPUs for the gangs. Each run stops at a horizon, since a
gang that partly fits may be retried for ever (upstream's behaviour too without ``podGroupBackoffSeconds``).
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from gang_support import GPU, gang_config, mk_group, mk_pod
from helpers import node
from packsched.api.gangs import PodGroup, pod_group_name
from packsched.api.manifests import Cluster
from packsched.config.types import KubeSchedulerConfiguration
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import CycleResult
from packsched.sim.engine import COMPLETED, SCHEDULED, UNSCHEDULABLE, WAITING, Event, Simulation

HORIZON = 240.0


@dataclass
class Scenario:
    cluster: Cluster
    config: KubeSchedulerConfiguration
    seed: int


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    nodes = [
        node(f"gpu-{i}", cpu=64000, extra={GPU: draw(st.sampled_from([1, 2, 4, 8]))})
        for i in range(draw(st.integers(1, 3)))
    ]
    pods = []
    groups = []
    for g in range(draw(st.integers(1, 3))):
        min_member = draw(st.integers(1, 4))
        members = min_member + draw(st.integers(0, 1))
        gpus = draw(st.integers(1, 4))
        at = float(draw(st.integers(0, 60)))
        timeout = draw(st.one_of(st.none(), st.integers(1, 40)))
        groups.append(mk_group(f"g{g}", min_member=min_member, created=at, timeout=timeout))
        for m in range(members):
            p = mk_pod(f"g{g}-{m}", group=f"g{g}", gpu=gpus + draw(st.integers(0, 1)))  # mostly alike
            p.arrival_time = at + draw(st.integers(0, 5))
            pods.append(p)
    for s in range(draw(st.integers(0, 4))):
        p = mk_pod(f"single-{s}", gpu=draw(st.integers(1, 4)))
        p.arrival_time = float(draw(st.integers(0, 60)))
        p.run_duration = float(draw(st.integers(5, 120)))
        pods.append(p)
    # Without a group backoff, a gang that partly fits and is rejected in PostFilter goes round at one instant: its
    # first member to wait activates the others (backoff or not), one of them fits nowhere and rejects the lot, and
    # so on (upstream spins the same way; the simulator gives up after MAX_ATTEMPTS_PER_POD attempts, which takes
    # seconds). So PostFilter may reject only with a backoff, and no wait is 0 (a wait that ends at once spins too).
    reject = draw(st.sampled_from([0, 10, 50, 100]))
    config = gang_config(
        permitWaitingTimeSeconds=draw(st.sampled_from([10, 30])),
        podGroupRejectPercentage=reject,
        podGroupBackoffSeconds=draw(st.sampled_from([0, 15])) if reject == 100 else draw(st.sampled_from([5, 15])),
    )
    cluster = Cluster(nodes=nodes, pods=pods, pod_groups=groups)
    return Scenario(cluster, config, draw(st.integers(0, 2**16)))


class Watched(Simulation):
    """The simulator, checking invariant (c) each time waits at Permit are settled and the snapshot's side of (b)
    after each cycle."""

    problems: list[str]

    def _settle_waiting(self) -> None:
        before = {wp.pod.key for wp in self.scheduler.waiting_pods()}
        seen = len(self.events)
        super()._settle_waiting()
        rejected = {
            group_of(e.pod)
            for e in self.events[seen:]
            if e.kind == UNSCHEDULABLE and e.pod in before and group_of(e.pod)
        }
        if not rejected:
            return
        for wp in self.scheduler.waiting_pods():
            if group_of(wp.pod.key) in rejected:
                self.problems.append(f"{self.now}: {wp.pod.key} still waits after its group was rejected")
        for key in self.snapshot.pods:
            if group_of(key) in rejected and self.cache.is_assumed(key):
                self.problems.append(f"{self.now}: {key} still assumed after its group was rejected")

    def check_snapshot(self, result: CycleResult) -> None:
        snap = self.snapshot
        row = snap.row.get(GPU)
        if row is None:
            return
        for col in range(snap.n):
            if snap.requested[row, col] > snap.alloc[row, col]:
                self.problems.append(f"{self.now}: {snap.nodes[col].name} GPUs over-committed in the snapshot")


GROUP_OF: dict[str, str] = {}


def group_of(key: str) -> str:
    return GROUP_OF.get(key, "")


def run(sc: Scenario) -> tuple[list[Event], list[str]]:
    cluster = copy.deepcopy(sc.cluster)
    GROUP_OF.clear()
    GROUP_OF.update({p.key: pod_group_name(p) for p in cluster.pods if pod_group_name(p)})
    sim = Watched(cluster, sc.config, in_tree_registry(), seed=sc.seed)
    sim.problems = []
    sim.on_cycle = sim.check_snapshot
    sim.run_until(HORIZON)
    return sim.events, sim.problems


@dataclass
class Replay:
    """The cluster as the events tell it."""

    groups: dict[str, PodGroup]
    gpus: dict[str, int]  # pod -> GPUs it requests
    alloc: dict[str, int]  # node -> GPUs
    running: dict[str, str] = field(default_factory=dict)  # pod -> node
    held: dict[str, str] = field(default_factory=dict)  # pod -> node, waiting at Permit
    problems: list[str] = field(default_factory=list)

    def apply(self, e: Event) -> None:
        if e.kind == WAITING:
            assert e.node is not None
            self.held[e.pod] = e.node
        elif e.kind == SCHEDULED:
            assert e.node is not None
            held_on = self.held.pop(e.pod, None)
            if held_on is not None and held_on != e.node:
                self.problems.append(f"{e.time}: {e.pod} held on {held_on} but bound to {e.node}")
            self.running[e.pod] = e.node
        elif e.kind == UNSCHEDULABLE:
            self.held.pop(e.pod, None)
        elif e.kind == COMPLETED:
            self.running.pop(e.pod, None)

    def check_gpus(self, t: float) -> None:
        used: dict[str, int] = defaultdict(int)
        for pod, n in [*self.running.items(), *self.held.items()]:
            used[n] += self.gpus[pod]
        for n, amount in used.items():
            if amount > self.alloc[n]:
                self.problems.append(f"{t}: {n} holds {amount} GPUs of {self.alloc[n]}")

    def check_groups(self, t: float) -> None:
        counts: dict[str, int] = defaultdict(int)
        for pod in self.running:
            if group_of(pod):
                counts[group_of(pod)] += 1
        for name, count in counts.items():
            need = self.groups[name].min_member
            if 0 < count < need:
                self.problems.append(f"{t}: group {name} has {count} of {need} members running")


def replay(sc: Scenario, events: list[Event]) -> list[str]:
    cluster = sc.cluster
    r = Replay(
        {g.name: g for g in cluster.pod_groups},
        {p.key: p.containers[0].requests.get(GPU, 0) for p in cluster.pods},
        {n.name: n.allocatable[GPU] for n in cluster.nodes},
    )
    for i, e in enumerate(events):
        r.apply(e)
        r.check_gpus(e.time)  # holding room is checked event by event
        if i + 1 == len(events) or events[i + 1].time != e.time:
            r.check_groups(e.time)  # a gang is bound member after member within one instant
    return r.problems


@settings(max_examples=100, deadline=None)
@given(scenarios())
def test_gang_invariants(sc: Scenario) -> None:
    events, problems = run(sc)
    assert problems == []
    assert replay(sc, events) == []


@settings(max_examples=30, deadline=None)
@given(scenarios())
def test_same_seed_same_history(sc: Scenario) -> None:
    first, _ = run(sc)
    second, _ = run(sc)
    assert [(e.time, e.kind, e.pod, e.node, e.reason) for e in first] == [
        (e.time, e.kind, e.pod, e.node, e.reason) for e in second
    ]
