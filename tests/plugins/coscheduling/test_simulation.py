"""Coscheduling's behaviour across scheduling cycles, through the simulator: what upstream's unit tests check one
call at a time (backoff after PostFilter, the wait at Permit and its timeout, PodGroup not found, too few
siblings), here as the pods' histories."""

from __future__ import annotations

from typing import Any

import pytest

from gang_support import GPU, gang_config, mk_group, mk_pod
from helpers import node
from packsched.api.gangs import PodGroup
from packsched.api.manifests import Cluster
from packsched.api.objects import Pod
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import PENDING, RUNNING, SCHEDULED, UNSCHEDULABLE, WAITING, SimResult, Simulation


def simulate(pods: list[Pod], groups: list[PodGroup], gpus: tuple[int, ...] = (8,), **args: Any) -> Simulation:
    nodes = [node(f"gpu-{i}", cpu=64000, extra={GPU: g}) for i, g in enumerate(gpus)]
    return Simulation(Cluster(nodes=nodes, pods=pods, pod_groups=groups), gang_config(**args), in_tree_registry())


def history(res: SimResult) -> list[tuple[float, str, str]]:
    return [(e.time, e.kind, e.pod.split("/")[1]) for e in res.events]


def test_a_pod_naming_a_missing_pod_group_stays_pending_rejected_at_permit() -> None:
    sim = simulate([mk_pod("lost", group="nowhere", gpu=1)], [])
    res = sim.run()
    rec = res.records[0]
    assert rec.phase == PENDING
    assert rec.reason == "0/1 nodes are available: 1 PodGroup not found."
    # rejected by Coscheduling alone, no event moves it; the periodic flush tries it once more (the first 30 s tick
    # more than 5 minutes after it failed) since the cluster changed (it was created) after the last flush; then
    # nothing changes, so no more flushes (kube-scheduler would flush it every 5 minutes, to the same verdict)
    assert history(res) == [(0.0, UNSCHEDULABLE, "lost"), (330.0, UNSCHEDULABLE, "lost")]
    # the room it was assumed on is free again
    assert not sim.snapshot.pods


def test_too_few_pods_for_min_member_stay_pending_with_upstreams_reason() -> None:
    pods = [mk_pod(n, group="g", gpu=1) for n in ("a", "b")]
    res = simulate(pods, [mk_group("g", min_member=3)]).run()
    assert [r.phase for r in res.records] == [PENDING, PENDING]
    assert res.records[0].reason is not None
    assert res.records[0].reason.startswith(
        "0/1 nodes are available: pre-filter pod a cannot find enough sibling pods, "
        "current pods number: 2, minMember of group: 3."
    )
    # then once more each, by the periodic flush (the cluster changed since the last flush: they were created)
    assert history(res) == [
        (0.0, UNSCHEDULABLE, "a"),
        (0.0, UNSCHEDULABLE, "b"),
        (330.0, UNSCHEDULABLE, "a"),
        (330.0, UNSCHEDULABLE, "b"),
    ]


def test_a_gang_that_fits_waits_then_is_bound_together() -> None:
    pods = [mk_pod(n, group="g", gpu=4) for n in ("a", "b", "c")]
    res = simulate(pods, [mk_group("g", min_member=3)], gpus=(8, 8)).run()
    assert history(res) == [
        (0.0, WAITING, "a"),
        (0.0, WAITING, "b"),
        (0.0, SCHEDULED, "c"),
        (0.0, SCHEDULED, "a"),
        (0.0, SCHEDULED, "b"),
    ]
    assert all(r.phase == RUNNING for r in res.records)


@pytest.mark.parametrize(
    ("permit_wait", "group_timeout", "times_out_at"),
    [
        pytest.param(30, None, 30.0, id="permitWaitingTimeSeconds"),
        pytest.param(30, 12, 12.0, id="scheduleTimeoutSeconds"),
        pytest.param(30, 0, 30.0, id="scheduleTimeoutSeconds 0 is unset"),
        pytest.param(0, None, 60.0, id="permitWaitingTimeSeconds 0 is 60"),
        pytest.param(30, -5, 0.0, id="a negative scheduleTimeoutSeconds ends the wait at once"),
    ],
)
def test_the_wait_at_permit_times_out(permit_wait: int, group_timeout: int | None, times_out_at: float) -> None:
    """One member of two fits; the other is too big for any node, which leaves it pending while the first waits
    (a 50 % gap is over the default reject percentage only if PostFilter runs: it runs, so reject 100 % keeps
    the waiting member)."""
    pods = [mk_pod("small", group="g", gpu=1), mk_pod("huge", group="g", gpu=16)]
    groups = [mk_group("g", min_member=2, timeout=group_timeout)]
    res = simulate(pods, groups, permitWaitingTimeSeconds=permit_wait, podGroupRejectPercentage=100).run()
    first_timeout = next(e for e in res.events if e.pod == "ns/small" and e.kind == UNSCHEDULABLE)
    assert first_timeout.time == times_out_at
    asked = {60.0: "1m0s", 0.0: "-5s"}.get(times_out_at, f"{int(times_out_at)}s")
    assert first_timeout.reason == (
        f"0/1 nodes are available: 1 rejected due to timeout after waiting {asked} at plugin Coscheduling."
    )


def test_postfilter_rejects_the_waiting_members_and_backs_the_group_off() -> None:
    """(TestPodGroupBackoffTime over cycles) two of three members fit and wait; the third fits nowhere: PostFilter
    rejects the two (their GPUs are free at once) and backs the group off for 30 s, during which PreFilter
    refuses every member."""
    pods = [mk_pod(n, group="g", gpu=1) for n in ("a", "b", "c")]
    sim = simulate(pods, [mk_group("g", min_member=3)], gpus=(2,), podGroupBackoffSeconds=30)
    sim.run_until(20.0)
    res = sim.result()
    assert history(res)[:5] == [
        (0.0, WAITING, "a"),
        (0.0, WAITING, "b"),
        (0.0, UNSCHEDULABLE, "c"),
        (0.0, UNSCHEDULABLE, "a"),
        (0.0, UNSCHEDULABLE, "b"),
    ]
    assert [e.reason for e in res.events[3:5]] == ["0/1 nodes are available: 1 optimistic rejection in PostFilter."] * 2
    assert not sim.snapshot.pods  # nothing held
    later = [e for e in res.events[5:] if e.kind != UNSCHEDULABLE or "failed recently" not in (e.reason or "")]
    assert later == []
    assert any("podGroup ns/g failed recently" in (e.reason or "") for e in res.events[5:])


def test_a_member_rejected_at_permit_is_tried_again_when_a_pod_is_bound() -> None:
    """A pod turned down at Permit is recorded as rejected by Coscheduling (upstream's FitError names the plugin),
    so an event Coscheduling registers, an assigned pod added, tries it again."""
    other = mk_pod("other", "else", gpu=1)
    other.arrival_time = 5.0
    res = simulate([mk_pod("lost", group="nowhere", gpu=1), other], []).run()
    # then, rejected by Coscheduling alone and moved by nothing else, it is tried by the periodic flush: the first
    # 30 s tick more than 5 minutes after it failed (5 s), 330 s; nothing changes after that, so no more flushes
    assert history(res) == [
        (0.0, UNSCHEDULABLE, "lost"),
        (5.0, SCHEDULED, "other"),
        (5.0, UNSCHEDULABLE, "lost"),
        (330.0, UNSCHEDULABLE, "lost"),
    ]


def test_a_backed_off_gang_is_tried_again_after_its_backoff() -> None:
    # kube-scheduler retries the pods unschedulable for 5 minutes (podMaxInUnschedulablePodsDuration, flushed every
    # 30 s); Coscheduling's backoff ends with no event, so the flush is what starts the gang
    blocker = mk_pod("blocker", "else", gpu=1)
    blocker.run_duration = 10.0
    pods = [blocker, *(mk_pod(n, group="g", gpu=1) for n in ("a", "b", "c"))]
    res = simulate(pods, [mk_group("g", min_member=3)], gpus=(3,), podGroupBackoffSeconds=30).run()
    assert [r.phase for r in res.records[1:]] == [RUNNING] * 3


@pytest.mark.timeout(60)
def test_a_wait_at_permit_ending_off_the_nanosecond_grid_ends() -> None:
    """A wait of 60 s from 16353.065 ends at 16413.065000000002 in floating point: the simulator's clock, kept to
    the nanosecond, used to round that down to 16413.065, never reach the deadline, and spin there forever (seen
    in `packsched tune` on a job workload). It moves to the first nanosecond at or after it instead."""
    pods = [mk_pod("small", group="g", gpu=1), mk_pod("huge", group="g", gpu=16)]
    for pod in pods:
        pod.arrival_time = 16353.065
    groups = [mk_group("g", min_member=2, created=16353.065)]
    sim = simulate(pods, groups, permitWaitingTimeSeconds=60, podGroupRejectPercentage=100)
    sim.run_until(16500.0)
    timeout = next(e for e in sim.result().events if e.pod == "ns/small" and e.kind == UNSCHEDULABLE)
    assert timeout.time == pytest.approx(16413.065, abs=2e-9)
    assert "rejected due to timeout after waiting 1m0s" in (timeout.reason or "")
