"""Invariants of the simulator over time (hypothesis), over random small clusters and random event sequences
(pods and workloads arriving at random times, running for random durations, preempting each other):

- no node is ever over-committed, after any scheduling cycle or at the end;
- every pod ends in exactly one phase, consistent with where it is (Running pods are on their node, Pending,
  Preempted and Succeeded pods hold nothing), and each name is alive at most once;
- controllers keep their promises (a Deployment keeps its replicas, a Job never exceeds its completions);
- the same seed gives the identical event history.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import make_config, make_profile, node, pod
from packsched.api.manifests import Cluster, Workload, instantiate
from packsched.api.objects import Pod
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import CycleResult
from packsched.sim.engine import PENDING, PHASES, PREEMPTED, RUNNING, SUCCEEDED, Simulation


@dataclass(frozen=True)
class PodSpec:
    cpu: int
    priority: int
    arrival: float
    run: float | None


@dataclass(frozen=True)
class Spec:
    """A drawn scenario, as plain data, so that it can be built twice into fresh objects."""

    nodes: tuple[tuple[int, int], ...]  # (cpu, max pods)
    bare: tuple[PodSpec, ...]
    workloads: tuple[tuple[str, int, int | None, PodSpec], ...]  # (kind, count, Job completions, template)


times = st.sampled_from([0.0, 0.0, 0.5, 1.0, 10.0, 30.0, 60.0, 90.0])
durations = st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, 5.0, 20.0, 45.0, 120.0]))


@st.composite
def pod_specs(draw: st.DrawFn) -> PodSpec:
    return PodSpec(
        draw(st.sampled_from([100, 500, 1000, 1500, 2000, 3000])),
        draw(st.sampled_from([0, 10, 100, 1000])),
        draw(times),
        draw(durations),
    )


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    nodes = tuple(
        (draw(st.sampled_from([1000, 2000, 4000])), draw(st.integers(1, 6))) for _ in range(draw(st.integers(1, 3)))
    )
    bare = tuple(draw(st.lists(pod_specs(), max_size=6)))
    workloads = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["Deployment", "ReplicaSet", "StatefulSet", "Job"]))
        count = draw(st.integers(1, 3))
        completions = draw(st.one_of(st.none(), st.integers(1, 5))) if kind == "Job" else None
        workloads.append((kind, count, completions, draw(pod_specs())))
    return Spec(nodes, bare, tuple(workloads))


def build(spec: Spec) -> Cluster:
    def make(name: str, p: PodSpec) -> Pod:
        out = pod(name, cpu=p.cpu, priority=p.priority)
        out.arrival_time, out.run_duration = p.arrival, p.run
        return out

    cluster = Cluster(nodes=[node(f"n{i}", cpu=cpu, pods=cap) for i, (cpu, cap) in enumerate(spec.nodes)])
    cluster.pods = [make(f"bare-{i}", p) for i, p in enumerate(spec.bare)]
    for i, (kind, count, completions, p) in enumerate(spec.workloads):
        template = make("", p)
        n = count if completions is None else min(count, completions)
        cluster.workloads.append(
            Workload(kind, f"w{i}", "default", n, template, "", completions, count if kind == "Job" else 0)
        )
        cluster.pods += [instantiate(template, kind, f"w{i}", j) for j in range(n)]
    return cluster


def run(spec: Spec, seed: int, check: bool = True) -> Simulation:
    cluster = build(spec)
    sim: Simulation

    def after_cycle(_: CycleResult) -> None:
        snap = sim.snapshot
        assert np.all(snap.requested <= snap.alloc), f"over-committed at {sim.now}s"
        assert np.all(snap.pod_count <= snap.allowed_pods)

    sim = Simulation(
        cluster,
        make_config(make_profile(post_filter=["DefaultPreemption"])),
        in_tree_registry(),
        seed=seed,
        on_cycle=after_cycle if check else None,
    )
    sim.run()
    return sim


@settings(max_examples=80, deadline=None)
@given(specs(), st.integers(0, 2**32 - 1))
def test_never_over_committed_and_every_pod_ends_in_one_phase(spec: Spec, seed: int) -> None:
    sim = run(spec, seed)
    snap = sim.snapshot
    assert np.all(snap.requested <= snap.alloc)
    for rec in sim.history:
        assert rec.phase in PHASES
        assert rec.arrived
        placed = snap.pods.get(rec.pod.key) is rec.info
        assert placed == (rec.phase == RUNNING), (rec.pod.key, rec.phase)
        if rec.phase == RUNNING:
            assert rec.node == snap.nodes[rec.info.node].name and rec.started is not None and rec.finished is None
        elif rec.phase == SUCCEEDED:
            assert rec.node is not None and rec.started is not None and rec.finished is not None
            assert rec.run_duration is not None
            assert rec.finished == round(rec.started + rec.run_duration, 9)
        elif rec.phase == PREEMPTED:
            assert rec.node is None and rec.started is not None and rec.finished is not None
            assert rec.preempted_by is not None
        else:
            assert rec.phase == PENDING and rec.node is None and rec.finished is None
    alive = Counter(r.pod.key for r in sim.history if r.phase in (RUNNING, PENDING))
    assert all(n == 1 for n in alive.values()), alive
    assert sum(1 for r in sim.history if r.phase == RUNNING) == int(snap.pod_count.sum())
    # controllers
    for i, (kind, count, completions, p) in enumerate(spec.workloads):
        mine = [r for r in sim.history if r.pod.owner is not None and r.pod.owner.name == f"w{i}"]
        live = [r for r in mine if r.phase in (RUNNING, PENDING)]
        if kind != "Job":
            assert len(live) == count  # replaced one for one; never completes
            assert all(r.phase != SUCCEEDED for r in mine)
        else:
            succeeded = sum(1 for r in mine if r.phase == SUCCEEDED)
            assert succeeded <= (completions if completions is not None else count)
            if completions is not None and p.run is not None and not live:
                assert succeeded == completions  # nothing left pending: the Job finished
    # every completion and preemption is in the history, at the time the record gives
    ends = {(e.pod, e.time) for e in sim.events if e.kind in ("completed", "preempted")}
    for rec in sim.history:
        if rec.finished is not None:
            assert (rec.pod.key, rec.finished) in ends


@settings(max_examples=40, deadline=None)
@given(specs(), st.integers(0, 2**32 - 1))
def test_same_seed_same_history(spec: Spec, seed: int) -> None:
    first, second = run(spec, seed, check=False), run(spec, seed, check=False)
    assert first.events == second.events
    assert [(r.pod.key, r.phase, r.node, r.created, r.started, r.finished) for r in first.history] == [
        (r.pod.key, r.phase, r.node, r.created, r.started, r.finished) for r in second.history
    ]
