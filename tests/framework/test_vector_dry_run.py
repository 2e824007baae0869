"""Preemption's dry run on arrays (framework/vector_dry_run.py) against the per-pod dry run, the reference: on
random clusters (priorities, start times, pods counted by resources and pod count, nominated pods) both find the
same candidates with the same victims in the same order, and pickOneNodeForPreemption chooses the same one."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from helpers import make_config, make_profile, node
from packsched.api.manifests import Cluster
from packsched.api.objects import Container, Pod
from packsched.config.loader import default_config
from packsched.framework import vector_dry_run as vdr
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.podinfo import make_pod_info
from packsched.framework.preemption import pick_one_node_for_preemption, potential_nodes
from packsched.framework.snapshot import IntArray
from packsched.framework.vector_dry_run import importance_order
from packsched.plugins.defaultpreemption.default_preemption import DefaultPreemption
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation

GiB = 2**30


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    n_nodes = draw(st.integers(1, 8))
    nodes = [
        node(
            f"n{i}",
            cpu=draw(st.sampled_from([1000, 2000, 4000])),
            memory=draw(st.sampled_from([2, 4])) * GiB,
            pods=draw(st.integers(1, 8)),
        )
        for i in range(n_nodes)
    ]
    pods = []
    for i in range(draw(st.integers(0, 30))):
        p = Pod(
            f"p{i}",
            "default",
            uid=f"p{i}",
            containers=[
                Container(
                    "c",
                    {
                        "cpu": draw(st.sampled_from([0, 250, 500, 1000])),
                        "memory": draw(st.sampled_from([0, 1, 2])) * GiB // 2,
                    },
                )
            ],
            priority=draw(st.sampled_from([-10, 0, 100, 1000])),
        )
        p.node_name = f"n{draw(st.integers(0, n_nodes - 1))}"
        pods.append(p)
    return Cluster(nodes=nodes, pods=pods)


def _pod(name: str, draw: st.DrawFn) -> Pod:
    return Pod(
        name,
        "default",
        uid=name,
        containers=[
            Container(
                "c",
                {"cpu": draw(st.sampled_from([250, 500, 1000, 2000])), "memory": draw(st.sampled_from([0, 1])) * GiB},
            )
        ],
        priority=draw(st.sampled_from([0, 100, 1000, 5000])),
    )


def _preemption(cluster: Cluster, full_profile: bool = False) -> tuple[Simulation, Any, Any]:
    """A simulation of ``cluster`` with DefaultPreemption (the whole default profile, or only it beside the
    defaults make_profile gives): the simulation, its profile and preemption's evaluator."""
    small = make_config(make_profile(post_filter=["DefaultPreemption"]))
    config = default_config(list(in_tree_registry())) if full_profile else small
    sim = Simulation(cluster, config, in_tree_registry())
    fwk = sim.scheduler.frameworks["default-scheduler"]
    plugin = fwk.plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    return sim, fwk, plugin.evaluator


def _failed_cycle(fwk: Any, snap: Any, info: Any, data: st.DataObject) -> tuple[CycleState, IntArray, int, int] | None:
    """The pod's failed cycle, as PostFilter sees it: its cycle state, the nodes preemption may help, and a drawn
    offset and candidate count; None when PreFilter rejects it or no node may be helped."""
    state = CycleState()
    if not fwk.run_pre_filter(state, info).ok:
        return None
    alive, groups = fwk.run_filters_with_nominated(state, info, slice(None))
    potential = potential_nodes(Diagnosis(snap.n, alive, groups))
    if len(potential) == 0:
        return None
    return state, potential, data.draw(st.integers(0, len(potential) - 1)), data.draw(st.integers(1, len(potential)))


def _planned_failure(
    fwk: Any, snap: Any, info: Any, data: st.DataObject
) -> tuple[CycleState, IntArray, int, int, Any] | None:
    """``_failed_cycle`` and the vector dry run's plan for it (these profiles always have one)."""
    failed = _failed_cycle(fwk, snap, info, data)
    if failed is None:
        return None
    the_plan = vdr.plan(fwk, failed[0], [])
    assert the_plan is not None
    return (*failed, the_plan)


def _outcome(fast: Any) -> tuple[list[tuple[int, list[str]]] | None, int | None]:
    """A dry run on arrays' candidates with their victims, and the node it picks (read before the snapshot
    changes: table rows)."""
    if fast is None:
        return None, None
    got = [(int(col), [v.key for v in fast.victims(j)]) for j, col in enumerate(fast.cols)]
    return got, (int(fast.cols[fast.pick()]) if len(fast) else None)


@settings(max_examples=120, deadline=None)
@given(st.data(), st.booleans())
def test_vector_dry_run_equals_the_per_pod_dry_run(data: st.DataObject, full_profile: bool) -> None:
    sim, fwk, evaluator = _preemption(data.draw(clusters()), full_profile)
    sched, snap = sim.scheduler, sim.snapshot
    # start times and orders as binds would leave them (ties included); the pod table mirrors them
    for info in list(snap.pods.values()):
        info.start_time = float(data.draw(st.integers(0, 2)))
        info.start_seq = data.draw(st.integers(0, 3))
    # pods nominated to nodes (not placed), which the filters count there when their priority is high enough
    for i in range(data.draw(st.integers(0, 3))):
        sched.nominator.nominate(make_pod_info(_pod(f"nom{i}", data.draw)), data.draw(st.integers(0, snap.n - 1)))
    compared = 0
    for i in range(4):
        info = make_pod_info(_pod(f"x{i}", data.draw))
        failed = _failed_cycle(fwk, snap, info, data)
        if failed is None:
            continue
        state, potential, offset, num = failed
        fast = evaluator.vector_dry_run(fwk, state, info, potential, [], offset, num)
        got, picked = _outcome(fast)  # read before the per-pod dry run, which takes pods off and puts them back
        slow = evaluator.dry_run(fwk, state, info, potential, [], offset, num)
        if fast is not None and len(fast) and snap.generation != fast.generation:
            with pytest.raises(RuntimeError):
                fast.victims(0)  # the snapshot changed since
        assert fast is not None or any(e.startswith("expected at least one victim") for e in slow.errors)
        if fast is None:
            continue
        want = [(c.col, [v.key for v in c.victims]) for c in slow.candidates]
        assert got == want
        if want:
            best = pick_one_node_for_preemption(slow.candidates)
            assert best is not None and picked == best.col
            compared += 1
    event(f"preemptors compared with candidates: {compared}")


def test_importance_order_is_a_lexsort() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(0, 50))
        keys = [
            rng.integers(0, 5, n),
            -rng.integers(-3, 3, n) * 10 ** int(rng.integers(0, 12)),
            rng.integers(0, 3, n).astype(float) / 3,
            rng.integers(0, 4, n),
            rng.permutation(n) * int(rng.integers(1, 10**13)),
        ]
        assert np.array_equal(importance_order(keys), np.lexsort(tuple(reversed(keys))))


@settings(max_examples=100, deadline=None)
@given(st.data(), st.booleans())
def test_kept_reprieves_equal_a_fresh_dry_run(data: st.DataObject, few_by_pods: bool) -> None:
    """The reprieve outcomes kept between dry runs (ReprieveCache) give what a dry run without them gives, and
    (at the end) what the per-pod dry run gives, while the cluster changes between preemptors: start times set,
    pods placed, removed and reordered on nodes, pods nominated; preemptors of two kinds, so that kept outcomes are
    reused."""
    sim, fwk, evaluator = _preemption(data.draw(clusters()))
    sched, snap = sim.scheduler, sim.snapshot
    cache = vdr.ReprieveCache()
    kinds = [_pod("k0", data.draw), _pod("k1", data.draw)]
    few = 0 if not few_by_pods else vdr.FEW_NODES
    reused = 0
    for step in range(6):
        placed = sorted(snap.pods)
        change = data.draw(st.sampled_from(["none", "start", "add", "remove", "reorder", "nominate"]))
        if change == "start":
            for key in data.draw(st.lists(st.sampled_from(placed), max_size=4)) if placed else []:
                snap.pods[key].start_time = float(data.draw(st.integers(0, 2)))
                snap.pods[key].start_seq = data.draw(st.integers(0, 3))
        elif change == "add":
            snap.add_pod(make_pod_info(_pod(f"a{step}", data.draw)), data.draw(st.integers(0, snap.n - 1)))
        elif change == "remove" and placed:
            snap.remove_pod(snap.pods[data.draw(st.sampled_from(placed))])
        elif change == "reorder":
            col = data.draw(st.integers(0, snap.n - 1))
            snap.reorder_pods(col, list(reversed(list(snap.pods_on[col]))))
        elif change == "nominate":
            # a nominated pod changes a node's amounts and count but none of its pods (the pod table's journal):
            # drawn at the top priority often, on a node with pods, so that it counts for the next preemptor where
            # victims are
            nominee = _pod(f"nom{step}", data.draw)
            if data.draw(st.booleans()):
                nominee.priority = 5000
            busy = [c for c in range(snap.n) if snap.pods_on[c]]
            col = data.draw(st.sampled_from(busy)) if busy else data.draw(st.integers(0, snap.n - 1))
            sched.nominator.nominate(make_pod_info(nominee), col)
        info = make_pod_info(kinds[data.draw(st.integers(0, 1))])
        failed = _planned_failure(fwk, snap, info, data)
        if failed is None:
            continue
        state, potential, offset, num, the_plan = failed
        results = []
        for kept in (cache, None):
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(vdr, "FEW_NODES", few)
                fast = vdr.run(sched, the_plan, state, info, potential, offset, num, kept)
            results.append(_outcome(fast))
        assert results[0] == results[1]
        got, picked = results[0]
        if got:
            reused += 1
        if step < 5 or got is None:
            continue  # the per-pod dry run takes pods off and puts them back: kept outcomes go stale
        slow = evaluator.dry_run(fwk, state, info, potential, [], offset, num)
        assert got == [(c.col, [v.key for v in c.victims]) for c in slow.candidates]
        if slow.candidates:
            best = pick_one_node_for_preemption(slow.candidates)
            assert best is not None and picked == best.col
    event(f"dry runs with candidates: {reused}")


def test_kept_reprieve_goes_stale_when_a_nomination_changes_the_nodes_amounts() -> None:
    """A pod nominated to a node changes what the dry run counts there (its used amount and pod count) but none
    of the node's pods (the pod table's journal): the kept outcome must not be reused. One node, four 1-CPU pods of
    priority 0; a 1-CPU preemptor evicts one of them, and two once a 1-CPU pod of higher priority is nominated
    there."""
    low = [Pod(f"low{i}", "default", uid=f"low{i}", containers=[Container("c", {"cpu": 1000})]) for i in range(4)]
    for p in low:
        p.node_name = "n0"
    sim, fwk, _ = _preemption(Cluster(nodes=[node("n0", cpu=4000)], pods=low))
    sched = sim.scheduler

    def preemptor(name: str, priority: int) -> Any:
        return make_pod_info(
            Pod(name, "default", uid=name, containers=[Container("c", {"cpu": 1000})], priority=priority)
        )

    cache = vdr.ReprieveCache()

    def victims() -> list[tuple[list[tuple[int, list[str]]] | None, int | None]]:
        info = preemptor("high", 1000)
        state = CycleState()
        assert fwk.run_pre_filter(state, info).ok
        alive, groups = fwk.run_filters_with_nominated(state, info, slice(None))
        potential = potential_nodes(Diagnosis(sched.snapshot.n, alive, groups))
        the_plan = vdr.plan(fwk, state, [])
        assert the_plan is not None
        return [_outcome(vdr.run(sched, the_plan, state, info, potential, 0, 1, kept)) for kept in (cache, None)]

    before = victims()
    assert before[0] == before[1]
    assert before[0][0] is not None and len(before[0][0][0][1]) == 1
    sched.nominator.nominate(preemptor("nominated", 5000), 0)
    after = victims()
    assert after[0] == after[1]
    assert after[0][0] is not None and len(after[0][0][0][1]) == 2


def _named(pod: Pod, name: str) -> Pod:
    """``pod`` (its priority and requests) under another name."""
    other = copy.copy(pod)
    other.name = other.uid = name
    return other


@settings(max_examples=150, deadline=None)
@given(st.data(), st.booleans())
def test_kept_verdicts_follow_the_journals(data: st.DataObject, short_journals: bool) -> None:
    """The verdicts and outcomes kept per preemptor kind, brought up to date from the pod table's and the
    nominations' journals (ReprieveCache), give what a dry run that keeps nothing gives, over ten preemptors with
    the cluster changing between them: start times, pods placed, removed and reordered, nominations made and
    cleared, a node's allocatable or pod room changed, the preemptor itself nominated somewhere (its own nomination
    is left out of its totals only), and journals short enough to be dropped (every node again)."""
    sim, fwk, _ = _preemption(data.draw(clusters()))
    sched, snap = sim.scheduler, sim.snapshot
    cache = vdr.ReprieveCache()
    kinds = [_pod("k0", data.draw), _pod("k1", data.draw)]
    nominees: list[Any] = []
    compared = 0
    with pytest.MonkeyPatch.context() as mp:
        if short_journals:
            mp.setattr(snap.table.journal, "limit", 3)
            mp.setattr(sched.nominator.journal, "limit", 2)
        for step in range(10):
            placed = sorted(snap.pods)
            change = data.draw(
                st.sampled_from(["none", "start", "add", "remove", "reorder", "nominate", "clear", "node", "self"])
            )
            col = data.draw(st.integers(0, snap.n - 1))
            if change == "start" and placed:
                info = snap.pods[data.draw(st.sampled_from(placed))]
                info.start_time = float(data.draw(st.integers(0, 2)))
                info.start_seq = data.draw(st.integers(0, 3))
            elif change == "add":
                snap.add_pod(make_pod_info(_pod(f"a{step}", data.draw)), col)
            elif change == "remove" and placed:
                snap.remove_pod(snap.pods[data.draw(st.sampled_from(placed))])
            elif change == "reorder":
                snap.reorder_pods(col, list(reversed(list(snap.pods_on[col]))))
            elif change == "nominate":
                nominee = make_pod_info(_pod(f"nom{step}", data.draw))
                sched.nominator.nominate(nominee, col)
                nominees.append(nominee)
            elif change == "clear" and nominees:
                sched.nominator.clear(nominees.pop(data.draw(st.integers(0, len(nominees) - 1))))
            elif change == "node":
                old = snap.nodes[col]
                snap.update_node(
                    node(
                        old.name,
                        cpu=data.draw(st.sampled_from([1000, 2000, 4000])),
                        memory=data.draw(st.sampled_from([2, 4])) * GiB,
                        pods=data.draw(st.integers(1, 8)),
                    )
                )
            # two pods of each kind (the same priority and requests, their own names): a kind's kept verdicts are
            # shared by both, while each one's own nomination is left out of its totals only
            which = data.draw(st.integers(0, 1))
            preemptor = _named(kinds[which], f"k{which}{data.draw(st.sampled_from('ab'))}")
            info = make_pod_info(preemptor)
            if change == "self":  # the preemptor nominated to a node (before or now) while its kind's runs go on
                sched.nominator.nominate(
                    make_pod_info(_named(kinds[which], f"k{which}{data.draw(st.sampled_from('ab'))}")), col
                )
            failed = _planned_failure(fwk, snap, info, data)
            if failed is None:
                continue
            state, potential, offset, num, the_plan = failed
            got = [
                _outcome(vdr.run(sched, the_plan, state, info, potential, offset, num, kept)) for kept in (cache, None)
            ]
            assert got[0] == got[1]
            compared += got[0][0] is not None
    event(f"dry runs compared: {compared}")
