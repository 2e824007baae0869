"""Pods waiting at Permit (framework/waiting.py, Scheduler.settle_waiting), driven through the simulator with a
Permit plugin written here: it holds every pod of a pair until both are placed, for at most ``timeout`` seconds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import make_config, make_profile, node, pod
from packsched.api.manifests import Cluster
from packsched.config.types import PluginArgs, PluginRef
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.status import Code, Status
from packsched.framework.waiting import MAX_PERMIT_TIMEOUT, WaitingPods
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import SCHEDULED, UNSCHEDULABLE, WAITING, Simulation


class Pairs:
    """Pods named ``<x>-a`` and ``<x>-b`` wait for each other."""

    name = "Pairs"
    timeout = 30.0

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        self.handle = handle

    def permit(self, state: CycleState, p: PodInfo, node_name: str) -> tuple[Status, float]:
        if not p.pod.name.endswith(("-a", "-b")):
            return Status(), 0.0
        stem = p.pod.name.rsplit("-", 1)[0]
        other = f"{p.pod.namespace}/{stem}-{'b' if p.pod.name.endswith('-a') else 'a'}"
        waiting = self.handle.get_waiting_pod(other)
        if waiting is None:
            return Status(Code.WAIT), self.timeout
        waiting.allow(self.name)
        return Status(), 0.0


def _sim(pods: list, nodes: list, timeout: float = 30.0) -> Simulation:
    Pairs.timeout = timeout
    registry = dict(in_tree_registry())
    registry["Pairs"] = Pairs
    prof = make_profile()
    prof.plugins.at("permit").enabled = [PluginRef("Pairs")]
    return Simulation(Cluster(nodes=nodes, pods=pods), make_config(prof), registry)


def test_a_pair_is_bound_together_when_its_second_pod_is_placed() -> None:
    sim = _sim([pod("x-a", cpu=1000), pod("x-b", cpu=1000)], [node("n1")])
    res = sim.run()
    kinds = [(e.kind, e.pod) for e in res.events]
    assert kinds == [
        (WAITING, "default/x-a"),
        (SCHEDULED, "default/x-b"),
        (SCHEDULED, "default/x-a"),
    ]
    assert all(r.phase == "Running" and r.node == "n1" for r in res.records)
    assert all(r.started == 0.0 for r in res.records)


def test_a_waiting_pod_holds_its_room() -> None:
    # x-a waits on n1 (4 cpus, 3 taken by it): lone-1 needs 2 and must not fit while x-a holds its room
    sim = _sim([pod("x-a", cpu=3000), pod("lone-1", cpu=2000)], [node("n1")])
    res = sim.run()
    lone = next(r for r in res.records if r.pod.name == "lone-1")
    first_try = next(e for e in res.events if e.pod == "default/lone-1")
    assert first_try.kind == UNSCHEDULABLE and "Insufficient cpu" in (first_try.reason or "")
    # after x-a's wait timed out (30 s) its room is free: lone-1 runs
    assert lone.phase == "Running" and lone.started is not None and lone.started >= 30.0


def test_a_wait_times_out_with_upstreams_message_and_the_pod_goes_back() -> None:
    sim = _sim([pod("x-a", cpu=1000)], [node("n1")], timeout=30.0)
    res = sim.run()
    timed_out = [e for e in res.events if e.kind == UNSCHEDULABLE]
    assert timed_out[0].time == 30.0
    assert timed_out[0].reason == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin Pairs."
    )
    rec = res.records[0]
    assert rec.phase == "Pending" and rec.reason == timed_out[0].reason
    # back in the queue as unschedulable: nothing changes in the cluster, so it is not tried again
    assert "default/x-a" in sim.queue.unschedulable
    assert [e.kind for e in res.events] == [WAITING, UNSCHEDULABLE]


def test_a_rejected_pod_frees_its_room_for_the_others() -> None:
    sim = _sim([pod("x-a", cpu=3000), pod("lone-1", cpu=2000), pod("y-a", cpu=1000)], [node("n1")])
    res = sim.run()
    assert [(e.time, e.kind, e.pod) for e in res.events] == [
        (0.0, WAITING, "default/x-a"),
        (0.0, UNSCHEDULABLE, "default/lone-1"),
        (0.0, WAITING, "default/y-a"),
        (30.0, UNSCHEDULABLE, "default/x-a"),
        (30.0, UNSCHEDULABLE, "default/y-a"),
        (30.0, SCHEDULED, "default/lone-1"),
        # y-a was being tried when x-a's rejection moved the queue: it goes to backoff (30 + 1 = 31.0 s, window 31 s,
        # flushed at 32 s), not to wait, and so does x-a; nothing is active, so Pop takes them from the backoff
        # queue at 30 s, in its order (same window: the active queue's order, x-a queued first)
        (30.0, UNSCHEDULABLE, "default/x-a"),
        (30.0, WAITING, "default/y-a"),
        # y-a's rejection (its 30 s timeout) frees its room and moves x-a (which still does not fit beside lone-1)
        (60.0, UNSCHEDULABLE, "default/y-a"),
        (60.0, UNSCHEDULABLE, "default/x-a"),
    ]


def test_timeouts_are_capped_at_fifteen_minutes() -> None:
    sim = _sim([pod("x-a", cpu=1000)], [node("n1")], timeout=3600.0)
    res = sim.run()
    first = next(e for e in res.events if e.kind == UNSCHEDULABLE)
    assert first.time == MAX_PERMIT_TIMEOUT
    assert "after waiting 15m0s at plugin Pairs" in (first.reason or "")


def test_a_pod_deleted_while_waiting_frees_its_room_and_is_not_requeued() -> None:
    sim = _sim([pod("x-a", cpu=3000), pod("lone-1", cpu=2000)], [node("n1")])
    sim.call_at(5.0, lambda: sim.remove_pod("default/x-a", "Deleted", "deleted by the test", replace_it=False))
    res = sim.run()
    lone = next(r for r in res.records if r.pod.name == "lone-1")
    assert lone.phase == "Running" and lone.started == 5.0
    assert not [e for e in res.events if e.pod == "default/x-a" and e.kind == UNSCHEDULABLE]
    assert "default/x-a" not in sim.queue


def test_the_waiting_map_settles_once() -> None:
    m = WaitingPods()
    wp = m.add(make_pod_info(pod("p")), "n1", {"A": 10.0, "B": 20.0}, 0.0, None)
    wp.allow("A")
    assert m.get("default/p") is wp and not m.has_settled()
    m.expire(15.0)  # B's deadline is 20
    assert not m.has_settled()
    assert wp.reject("B", "no") and not wp.reject("B", "again")
    assert [w.pod.key for w in m.take_settled()] == ["default/p"]
    assert m.get("default/p") is None and len(m) == 0
    assert wp.outcome is not None and wp.outcome.code == Code.UNSCHEDULABLE and wp.outcome.plugin == "B"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "allow", "reject", "expire", "take", "next"]),
            st.integers(0, 3),  # the pod
            st.sampled_from(["A", "B"]),  # the plugin
            st.integers(-5, 40),  # a wait, or a time
        ),
        max_size=25,
    )
)
def test_an_idle_map_has_nothing_to_expire_or_settle(ops: list[tuple[str, int, str, int]]) -> None:
    """``idle`` (the fast path of Scheduler.settle_waiting, which then skips expire and take_settled) holds only
    where the general path would do nothing: after any waits added, allowed, rejected, expired and taken, an idle
    map's expire at any time ends no wait, and it has nothing settled."""
    m = WaitingPods()
    now = 0.0
    for op, i, plugin, t in ops:
        key = f"default/p{i}"
        if op == "add":
            if m.get(key) is None:
                m.add(make_pod_info(pod(f"p{i}")), "n1", {"A": float(t), "B": float(t) + 5.0}, now, None)
        elif op == "allow" and m.get(key) is not None:
            m.get(key).allow(plugin)  # type: ignore[union-attr]
        elif op == "reject" and m.get(key) is not None:
            m.get(key).reject(plugin, "no")  # type: ignore[union-attr]
        elif op == "expire":
            now = max(now, float(t))
            m.expire(now)
        elif op == "take":
            m.take_settled()
        elif op == "next":
            m.next_deadline()
        if m.idle():
            assert not m.has_settled()
            waiting = list(m)
            m.expire(float("inf"))
            assert not m.has_settled() and list(m) == waiting
