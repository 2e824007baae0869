"""scheduler-plugins' Coscheduling unit tests (v0.34: ``pkg/coscheduling/coscheduling_test.go``,
``pkg/coscheduling/core/core_test.go``), as tables run against packsched's plugin.

Upstream drives the plugin directly, with a fake client holding the PodGroups, a pod informer holding the pods and
a waiting-pods map; so do these tests, with the small fake Handle of ``gang_support``. Each table is named after
the upstream test function it ports; its rows keep upstream's case names. Messages are upstream's text; the
``resource gap`` map is Go's ``%v`` of a ``v1.ResourceList`` (each Quantity's raw fields: api/goquantity.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from gang_support import FakeHandle, cpu_nodes, mk_group, mk_pod, plugin
from packsched.api.gangs import PodGroup
from packsched.api.objects import Pod
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.status import Code

SUCCESS, WAIT = Code.SUCCESS, Code.WAIT
UNSCHED, UNRESOLVABLE = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def no_fit(n: int) -> Diagnosis:
    """What PostFilter is given: no node fits (upstream passes nil, or a reader naming the one node)."""
    return Diagnosis(n, np.zeros(n, dtype=bool))


def row(name: str, *values: Any, marks: Any = ()) -> Any:
    return pytest.param(*values, id=name, marks=marks)


# -- coscheduling_test.go: TestPodGroupBackoffTime ----------------------------------------------------------


def test_pod_group_backoff_time() -> None:
    """ "prevent pod falling into infinite scheduling loop": pod1's Permit waits and activates its two siblings;
    pod2 fails even after PostFilter, which rejects the group and backs it off (1 s, the group has its 3 pods);
    pod3's PreFilter then refuses the group as failed recently."""
    pods = [mk_pod(f"pod{i}", group="pg1") for i in (1, 2, 3)]
    h = FakeHandle(cpu_nodes("node"), pods)
    pl = plugin(h, [mk_group("pg1", min_member=3)], permit_wait=10, backoff=1)
    st, _ = pl.permit(CycleState(), h.info("pod1"), "node")
    assert st.code == WAIT
    assert sorted(h.activated) == ["ns/pod2", "ns/pod3"]
    pl.post_filter(CycleState(), h.info("pod2"), no_fit(1))
    st = pl.pre_filter(CycleState(), h.info("pod3"), h.snapshot)
    assert (st.code, st.reasons) == (UNRESOLVABLE, ["podGroup ns/pg1 failed recently"])
    # (derived) the backoff lasts podGroupBackoffSeconds: a second later the group may be tried again
    h.now = 1.0
    assert pl.pre_filter(CycleState(), h.info("pod3"), h.snapshot).ok


# -- coscheduling_test.go: TestLess -------------------------------------------------------------------------

NOW = 1000.0
LOW, HIGH = 10, 100


@dataclass(frozen=True)
class Q:
    """A queued pod: name, namespace, priority, its group label, and when it entered the queue (upstream's
    InitialAttemptTimestamp; None where upstream leaves it unset)."""

    name: str
    ns: str
    priority: int
    group: str = ""
    queued: float | None = None

    def info(self) -> PodInfo:
        info = make_pod_info(mk_pod(self.name, self.ns, self.group, priority=self.priority))
        info.queued_at = self.queued
        return info


def groups_at(*spec: tuple[str, str, float]) -> list[PodGroup]:
    """PodGroups (name, namespace, creation time); a group without ``Time`` upstream is created at Go's zero
    time, the earliest of all: 0 here."""
    return [mk_group(name, ns, created=t) for name, ns, t in spec]


PG1_NS1_PG2_NS2 = groups_at(("pg1", "ns1", NOW + 1), ("pg2", "ns2", NOW + 2))

LESS_CASES = [
    row("p1.priority less than p2.priority", Q("p1", "ns1", LOW), Q("p2", "ns2", HIGH), [], False),
    row("p1.priority greater than p2.priority", Q("p1", "ns1", HIGH), Q("p2", "ns2", LOW), [], True),
    row(
        "equal priority. p1 is added to schedulingQ earlier than p2",
        Q("p1", "ns1", HIGH, queued=NOW + 1),
        Q("p2", "ns2", HIGH, queued=NOW + 2),
        [],
        True,
    ),
    row(
        "equal priority. p2 is added to schedulingQ earlier than p1",
        Q("p1", "ns1", HIGH, queued=NOW + 2),
        Q("p2", "ns2", HIGH, queued=NOW + 1),
        [],
        False,
    ),
    row(
        "p1.priority less than p2.priority, p1 belongs to pg1",
        Q("p1", "ns1", LOW, "pg1"),
        Q("p2", "ns2", HIGH),
        groups_at(("pg1", "ns1", 0.0)),
        False,
    ),
    row(
        "p1.priority greater than p2.priority, p1 belongs to pg1",
        Q("p1", "ns1", HIGH, "pg1"),
        Q("p2", "ns2", LOW),
        groups_at(("pg1", "ns1", 0.0)),
        True,
    ),
    row(
        "equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
        Q("p1", "ns1", HIGH, "pg1", queued=NOW + 1),
        Q("p2", "ns2", HIGH, queued=NOW + 2),
        groups_at(("pg1", "ns1", NOW + 1)),
        True,
    ),
    row(
        "equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
        Q("p1", "ns1", HIGH, "pg1", queued=NOW + 2),
        Q("p2", "ns2", HIGH, queued=NOW + 1),
        groups_at(("pg1", "ns1", NOW + 2)),
        False,
    ),
    row(
        "p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
        Q("p1", "ns1", LOW, "pg1"),
        Q("p2", "ns2", HIGH, "pg2"),
        PG1_NS1_PG2_NS2,
        False,
    ),
    row(
        "p1.priority greater than p2.priority, p1 belongs to pg1 and and p2 belongs to pg2",
        Q("p1", "ns1", HIGH, "pg1"),
        Q("p2", "ns2", LOW, "pg1"),  # (upstream labels p2 pg1 too: ns2 has no such group)
        PG1_NS1_PG2_NS2,
        True,
    ),
    row(
        "equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1 and p2 belongs to pg2",
        Q("p1", "ns1", HIGH, "pg1", queued=NOW + 1),
        Q("p2", "ns2", HIGH, "pg2", queued=NOW + 2),
        PG1_NS1_PG2_NS2,
        True,
    ),
    row(
        "equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg2 and p2 belongs to pg1",
        Q("p1", "ns", LOW, "pg2", queued=NOW + 1),
        Q("p2", "ns", HIGH, "pg1", queued=NOW + 2),
        groups_at(("pg1", "ns", NOW + 1), ("pg2", "ns", NOW + 2)),
        False,
    ),
    row(
        "equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
        # p1 names pg2 in ns1, where there is none: its own queue time counts (NOW+1), before pg2's creation
        Q("p1", "ns1", HIGH, "pg2", queued=NOW + 1),
        Q("p2", "ns2", HIGH, "pg2", queued=NOW + 1),
        PG1_NS1_PG2_NS2,
        True,
    ),
    row(
        "equal priority and creation time, and p2 belong to pg2",
        Q("p1", "ns1", HIGH, queued=NOW + 1),
        Q("p2", "ns2", HIGH, "pg2", queued=NOW + 1),
        groups_at(("pg2", "ns2", NOW + 2)),
        True,
    ),
]


@pytest.mark.parametrize(("p1", "p2", "groups", "want"), LESS_CASES)
def test_less(p1: Q, p2: Q, groups: list[PodGroup], want: bool) -> None:
    pl = plugin(FakeHandle([]), groups)
    assert pl.less(p1.info(), p2.info()) is want


# -- coscheduling_test.go: TestLessAfterScheduleFailure --------------------------------------------------


def test_less_after_schedule_failure() -> None:
    """pg1 (older) sorts before pg2; once pg1 failed (here: its pod is rejected even after PostFilter) it sorts
    by the failure's time, after pg2; once pg1 is complete at Permit it sorts by its creation again."""
    pods = [mk_pod(n, group="pg1") for n in ("p1", "p1b", "p1c")] + [mk_pod("p2", group="pg2")]
    h = FakeHandle(cpu_nodes("node"), pods, now=NOW)
    pl = plugin(h, [mk_group("pg1", min_member=3, created=NOW - 10), mk_group("pg2", min_member=3, created=NOW - 5)])
    p1, p2 = h.info("p1"), h.info("p2")
    p1.queued_at = p2.queued_at = NOW
    assert pl.less(p1, p2)
    post = pl.post_filter(CycleState(), p1, no_fit(1))
    assert post.status.message == "PodGroup ns/pg1 gets rejected due to Pod p1 is unschedulable even after PostFilter"
    assert not pl.less(p1, p2)
    assert pl.less(p2, p1)
    for name in ("p1", "p1b", "p1c"):
        st, _ = pl.permit(CycleState(), h.info(name), "node")
    assert st.code == SUCCESS
    assert pl.less(p1, p2)


# -- coscheduling_test.go: TestPermit ---------------------------------------------------------------------

PG1_MIN1_PG2_MIN2 = [mk_group("pg1", min_member=1), mk_group("pg2", min_member=2)]

PERMIT_CASES = [
    row("pods do not belong to any podGroup", mk_pod("p"), PG1_MIN1_PG2_MIN2, SUCCESS),
    row("pods belong to a pg1, but quorum not satisfied", mk_pod("p", group="pg2"), PG1_MIN1_PG2_MIN2, WAIT),
    row("pods belong to a podGroup, and quorum satisfied", mk_pod("p", group="pg1"), PG1_MIN1_PG2_MIN2, SUCCESS),
]


@pytest.mark.parametrize(("pod", "groups", "want"), PERMIT_CASES)
def test_permit(pod: Pod, groups: list[PodGroup], want: Code) -> None:
    h = FakeHandle(cpu_nodes("node"), [pod])
    pl = plugin(h, groups, permit_wait=10)
    st, wait = pl.permit(CycleState(), h.info("p"), "node")
    assert st.code == want
    assert wait == (10.0 if want == WAIT else 0.0)


# -- coscheduling_test.go: TestPostFilter and TestPostFilterRejectThreshold -------------------------------

REJECTED_P = "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter"

POST_FILTER_CASES = [
    row(
        "pod does not belong to any pod group",
        mk_pod("p"),
        [],
        [mk_group("pg1", min_member=2)],
        (UNSCHED, ["can not find pod group"]),
    ),
    row(
        "enough pods assigned, do not reject all",
        mk_pod("p", group="pg1"),
        [mk_pod("p1", group="pg1", node="node")],
        [mk_group("pg1", min_member=1)],
        (UNSCHED, []),
    ),
    row(
        "pod failed at filter phase, reject all pods",
        mk_pod("p", group="pg1"),
        [mk_pod("p1", group="pg1", node="node")],
        [mk_group("pg1", min_member=2)],
        (UNSCHED, [REJECTED_P]),
    ),
]


@pytest.mark.parametrize(("pod", "existing", "groups", "want"), POST_FILTER_CASES)
def test_post_filter(pod: Pod, existing: list[Pod], groups: list[PodGroup], want: tuple[Code, list[str]]) -> None:
    h = FakeHandle(cpu_nodes("node"), [*existing, pod])
    pl = plugin(h, groups, permit_wait=10)
    st = pl.post_filter(CycleState(), h.info("p"), no_fit(1)).status
    assert (st.code, st.reasons) == want


THRESHOLD_CASES = [
    # (upstream's threshold as a fraction; CoschedulingArgs take the percentage)
    row("default 10%: 9/10 assigned (10% gap) -> no rejection", 10, 10, 9, False),
    row("default 10%: 8/10 assigned (20% gap) -> rejection", 10, 10, 8, True),
    row("0%: 9/10 assigned (10% gap) -> rejection (always reject)", 0, 10, 9, True),
    row("100%: 0/10 assigned (100% gap) -> no rejection (never reject)", 100, 10, 0, False),
    row("50%: 6/10 assigned (40% gap) -> no rejection", 50, 10, 6, False),
    row("50%: 4/10 assigned (60% gap) -> rejection", 50, 10, 4, True),
]


@pytest.mark.parametrize(("percentage", "min_member", "assigned", "rejected"), THRESHOLD_CASES)
def test_post_filter_reject_threshold(percentage: int, min_member: int, assigned: int, rejected: bool) -> None:
    bound = [mk_pod(f"assigned-{i}", group="pg1", node="node") for i in range(assigned)]
    h = FakeHandle(cpu_nodes("node"), [*bound, mk_pod("p", group="pg1")])
    pl = plugin(h, [mk_group("pg1", min_member=min_member)], permit_wait=10, reject_percentage=percentage)
    st = pl.post_filter(CycleState(), h.info("p"), no_fit(1)).status
    assert (st.code, st.reasons) == (UNSCHED, [REJECTED_P] if rejected else [])


# -- core_test.go: TestPreFilter ----------------------------------------------------------------------------

GATE = ("example-gate",)


def pg1(min_member: int, **kw: Any) -> list[PodGroup]:
    return [mk_group("pg1", min_member=min_member, **kw)]


CORE_PRE_FILTER_CASES = [
    row(
        "pod does not belong to any pg",
        mk_pod("p", "default"),
        [mk_pod("p1", group="pg1"), mk_pod("p2", group="pg2")],
        [mk_group("pg1"), mk_group("pg2")],
        None,
    ),
    row(
        "pod belongs to a non-existent pg",
        mk_pod("p", group="pg-non-existent"),
        [],
        [mk_group("pg1")],
        None,
    ),
    row(
        "pod count less than minMember",
        mk_pod("p", group="pg1"),
        [mk_pod("pg2-1", group="pg2")],
        [mk_group("pg1", min_member=2), mk_group("pg2", min_member=2)],
        "pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 2",
    ),
    row(
        "pod count equal minMember",
        # (upstream's pod lister holds the pod itself too: three pods for a minMember of 2, as in the next row)
        mk_pod("p1a", group="pg1"),
        [mk_pod("p1b", group="pg1"), mk_pod("p1c", group="pg1")],
        [mk_group("pg1", min_member=2), mk_group("pg2", min_member=2)],
        None,
    ),
    row(
        "pod count more than minMember",
        mk_pod("p1a", group="pg1"),
        [mk_pod("p1b", group="pg1"), mk_pod("p1c", group="pg1")],
        [mk_group("pg1", min_member=2), mk_group("pg2", min_member=2)],
        None,
    ),
    row(
        "gated pods but still meeting quorum (minMember < replicas)",
        mk_pod("p1a", group="pg1"),
        [mk_pod("p1b", group="pg1"), mk_pod("p1c", group="pg1", gates=GATE)],
        pg1(2),
        None,
    ),
    row(
        "gated pods push group below quorum",
        mk_pod("p1a", group="pg1"),
        [mk_pod("p1b", group="pg1", gates=GATE), mk_pod("p1c", group="pg1")],
        pg1(3),
        "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup",
    ),
    row(
        "all sibling pods are gated",
        mk_pod("p1a", group="pg1"),
        [mk_pod("p1b", group="pg1", gates=GATE), mk_pod("p1c", group="pg1", gates=GATE)],
        pg1(2),
        "pre-filter pod p1a cannot proceed due to gated pods in the same PodGroup",
    ),
    row(
        "cluster's resource satisfies minResource",  # two nodes of 4 cpus: 6 are free summed (Filter decides)
        mk_pod("p1a", group="pg1"),
        [mk_pod("p1b", group="pg1"), mk_pod("p1c", group="pg1")],
        pg1(2, min_resources={"cpu": 6000}),
        None,
    ),
    row(
        "cluster's resource cannot satisfy minResource",
        mk_pod("p1a", group="pg1"),
        [mk_pod("p1b", group="pg1"), mk_pod("p1c", group="pg1")],
        pg1(2, min_resources={"cpu": 10000}),
        "resource gap: map[cpu:{{2000 -3} {<nil>}  DecimalSI}]",
    ),
]


@pytest.mark.parametrize(("pod", "others", "groups", "rejection"), CORE_PRE_FILTER_CASES)
def test_core_pre_filter(pod: Pod, others: list[Pod], groups: list[PodGroup], rejection: str | None) -> None:
    h = FakeHandle(cpu_nodes("node-a", "node-b"), [*others, pod])
    pl = plugin(h, groups, permit_wait=10)
    st = pl.pre_filter(CycleState(), h.info(pod.name, pod.namespace), h.snapshot)
    if rejection is None:
        assert st.ok, st.message
    else:
        assert (st.code, st.reasons, st.plugin) == (UNRESOLVABLE, [rejection], "Coscheduling")


# -- core_test.go: TestPermit -------------------------------------------------------------------------------

CORE_PERMIT_CASES = [
    # upstream's manager answers PodGroupNotSpecified / PodGroupNotFound / Wait / Success; the plugin turns them
    # into Success / Unschedulable "PodGroup not found" / Wait / Success
    row("pod does not belong to any pg", mk_pod("p"), [], pg1(2), (SUCCESS, [])),
    row(
        "pod specifies a non-existent pg",
        mk_pod("p", group="pg-non-existent"),
        [],
        pg1(2),
        (UNSCHED, ["PodGroup not found"]),
    ),
    row("pod belongs to a pg that doesn't have quorum", mk_pod("p", group="pg1"), [], pg1(2), (WAIT, [])),
    row(
        "pod belongs to a pg that have quorum satisfied",
        mk_pod("p1a", group="pg1"),
        [mk_pod("p1b", group="pg1", node="node")],
        pg1(2),
        (SUCCESS, []),
    ),
]


@pytest.mark.parametrize(("pod", "existing", "groups", "want"), CORE_PERMIT_CASES)
def test_core_permit(pod: Pod, existing: list[Pod], groups: list[PodGroup], want: tuple[Code, list[str]]) -> None:
    h = FakeHandle(cpu_nodes("node"), [*existing, pod])
    pl = plugin(h, groups, permit_wait=10)
    st, _ = pl.permit(CycleState(), h.info(pod.name), "node")
    assert (st.code, st.reasons) == want


# -- core_test.go: TestCheckClusterResource -----------------------------------------------------------------
# Upstream calls CheckClusterResource with minResources {cpu: 4} on two nodes of 3 cpus; here the same check runs
# through PreFilter, for a pending pod of pg1 (minMember 1, so the pods entry PreFilter adds is met at once).

CLUSTER_RESOURCE_CASES = [
    row("Cluster resource enough", [mk_pod("p1", node="node-a", cpu=2000)], None),
    row(
        "Cluster resource not enough",
        [mk_pod("p1", node="node-a", cpu=2000), mk_pod("p2", node="node-b", cpu=1000)],
        "resource gap: map[cpu:{{1000 -3} {<nil>}  DecimalSI}]",
    ),
    row(
        "Cluster resource enough as p1's resource needs to be excluded from minResources",
        [mk_pod("p1", "ns", "pg1", node="node-a", cpu=2000), mk_pod("p2", node="node-b", cpu=1000)],
        None,
    ),
]


@pytest.mark.parametrize(("existing", "gap"), CLUSTER_RESOURCE_CASES)
def test_check_cluster_resource(existing: list[Pod], gap: str | None) -> None:
    h = FakeHandle(cpu_nodes("node-a", "node-b", cpu=3000), [*existing, mk_pod("pending", group="pg1")])
    pl = plugin(h, pg1(1, min_resources={"cpu": 4000}))
    st = pl.pre_filter(CycleState(), h.info("pending"), h.snapshot)
    assert st.reasons == ([] if gap is None else [gap])


# -- core_test.go: TestMarkAndClearPodGroupScheduleFailure --------------------------------------------------


def test_mark_and_clear_pod_group_schedule_failure() -> None:
    """The group's queue time is its creation; after a failure (Unreserve marks one) the failure's time; after
    the group is complete at Permit, its creation again."""
    pods = [mk_pod(n, group="pg1") for n in ("p1", "p2", "p3")]
    h = FakeHandle(cpu_nodes("node"), pods, now=NOW)
    pl = plugin(h, pg1(3, created=NOW - 10))
    p1 = h.info("p1")
    assert pl.sort_key(p1)[1] == NOW - 10
    pl.unreserve(CycleState(), p1, "node")
    assert pl.sort_key(p1)[1] == NOW
    for name in ("p1", "p2", "p3"):
        pl.permit(CycleState(), h.info(name), "node")
    assert pl.sort_key(p1)[1] == NOW - 10


# -- core_test.go: TestSchemeRestriction ("GetPodGroup end-to-end"; the rest checks Go client schemes) -------


def test_get_pod_group_end_to_end() -> None:
    h = FakeHandle([], [mk_pod("p1", group="pg1")])
    pl = plugin(h, pg1(2))
    key, group = pl.group_of(h.info("p1").pod)
    assert key == "ns/pg1"
    assert group is not None and group.min_member == 2


# -- derived from core.go: what the PreFilter cases above leave out -----------------------------------------


@dataclass
class Step:
    """Advance the clock to ``at``, optionally bind ``bind`` (a pod of another group taking the room), then
    PreFilter pod ``p1a``: ``gap`` is the rejection expected (None: it passes)."""

    at: float
    gap: str | None
    bind: list[Pod] = field(default_factory=list)


PERMITTED_CACHE_CASES = [
    row(
        "a group that passed the minResources check is not checked again for permitWaitingTimeSeconds",
        10,
        [
            Step(0.0, None),
            Step(5.0, None, [mk_pod("big", node="node-a", cpu=4000), mk_pod("big2", node="node-b", cpu=3000)]),
            Step(10.0, "resource gap: map[cpu:{{5000 -3} {<nil>}  DecimalSI}]"),
        ],
    ),
    row(
        "permitWaitingTimeSeconds 0: upstream's cache keeps the group for its default of 3 s",
        0,
        [
            Step(0.0, None),
            Step(2.0, None, [mk_pod("big", node="node-a", cpu=4000), mk_pod("big2", node="node-b", cpu=3000)]),
            Step(3.0, "resource gap: map[cpu:{{5000 -3} {<nil>}  DecimalSI}]"),
        ],
    ),
]


@pytest.mark.parametrize(("permit_wait", "steps"), PERMITTED_CACHE_CASES)
def test_permitted_group_cache(permit_wait: int, steps: list[Step]) -> None:
    h = FakeHandle(cpu_nodes("node-a", "node-b"), [mk_pod("p1a", group="pg1"), mk_pod("p1b", group="pg1")])
    pl = plugin(h, pg1(2, min_resources={"cpu": 6000}), permit_wait=permit_wait)
    for step in steps:
        h.now = step.at
        for p in step.bind:
            info = make_pod_info(p)
            h.snapshot.add_pod(info, h.snapshot.index[p.node_name])
        st = pl.pre_filter(CycleState(), h.info("p1a"), h.snapshot)
        assert st.reasons == ([] if step.gap is None else [step.gap]), f"at {step.at}"


def test_post_filter_forgets_the_permitted_group_and_backs_it_off_only_when_complete() -> None:
    """PostFilter rejects: the group must pass the minResources check again; it is backed off only when all its
    minMember pods exist (upstream lists them before BackoffPodGroup)."""
    h = FakeHandle(cpu_nodes("node-a", "node-b"), [mk_pod("p1a", group="pg1"), mk_pod("p1b", group="pg1")])
    pl = plugin(h, pg1(2, min_resources={"cpu": 6000}), backoff=30)
    assert pl.pre_filter(CycleState(), h.info("p1a"), h.snapshot).ok
    h.snapshot.add_pod(make_pod_info(mk_pod("big", node="node-a", cpu=4000)), 0)
    pl.post_filter(CycleState(), h.info("p1a"), no_fit(2))
    st = pl.pre_filter(CycleState(), h.info("p1b"), h.snapshot)
    assert st.reasons == ["podGroup ns/pg1 failed recently"]
    h.now = 30.0
    st = pl.pre_filter(CycleState(), h.info("p1b"), h.snapshot)
    assert st.reasons == ["resource gap: map[cpu:{{2000 -3} {<nil>}  DecimalSI}]"]
    # a group short of pods is not backed off by PostFilter (only the sibling check refuses it)
    h2 = FakeHandle(cpu_nodes("node"), [mk_pod("q1", group="pg1")])
    pl2 = plugin(h2, pg1(2), backoff=30)
    pl2.post_filter(CycleState(), h2.info("q1"), no_fit(1))
    st = pl2.pre_filter(CycleState(), h2.info("q1"), h2.snapshot)
    assert "cannot find enough sibling pods" in st.message


def test_a_backoff_is_not_extended_by_later_failures() -> None:
    """PostFilter backs the group off with a cache Add, which leaves an entry that has not expired alone: the
    members refused as "failed recently" (PostFilter runs for them too) do not push the end of the backoff."""
    h = FakeHandle(cpu_nodes("node"), [mk_pod(n, group="pg1") for n in ("a", "b")])
    pl = plugin(h, pg1(2), backoff=30)
    pl.post_filter(CycleState(), h.info("a"), no_fit(1))
    h.now = 20.0
    assert pl.pre_filter(CycleState(), h.info("b"), h.snapshot).reasons == ["podGroup ns/pg1 failed recently"]
    pl.post_filter(CycleState(), h.info("b"), no_fit(1))
    h.now = 30.0
    assert pl.pre_filter(CycleState(), h.info("b"), h.snapshot).ok
    # once it has ended, the next failure starts a new one
    pl.post_filter(CycleState(), h.info("b"), no_fit(1))
    h.now = 59.0
    assert not pl.pre_filter(CycleState(), h.info("b"), h.snapshot).ok


# -- Permit's wait (coscheduling.go Permit with util.GetWaitTimeDuration) ------------------------------------

WAIT_TIME_CASES = [
    row("the group's scheduleTimeoutSeconds first", 60, 120, 120.0),
    row("else permitWaitingTimeSeconds", 30, None, 30.0),
    row("permitWaitingTimeSeconds 0: the default wait of 60 s", 0, None, 60.0),
    row("scheduleTimeoutSeconds 0 counts as unset: permitWaitingTimeSeconds", 30, 0, 30.0),
    row("both 0: no wait at all (the wait times out at once)", 0, 0, 0.0),
    row("a negative scheduleTimeoutSeconds is used as it is (times out at once)", 30, -5, -5.0),
]


@pytest.mark.parametrize(("permit_wait", "group_timeout", "want"), WAIT_TIME_CASES)
def test_permit_wait_time(permit_wait: int, group_timeout: int | None, want: float) -> None:
    h = FakeHandle(cpu_nodes("node"), [mk_pod("p", group="pg1"), mk_pod("q", group="pg1")])
    pl = plugin(h, pg1(2, timeout=group_timeout), permit_wait=permit_wait)
    st, wait = pl.permit(CycleState(), h.info("p"), "node")
    assert (st.code, wait) == (WAIT, want)


def test_permit_at_quorum_allows_the_waiting_siblings_only() -> None:
    pods = [mk_pod(n, group="pg1") for n in ("a", "b", "c")] + [mk_pod("other", group="pg2")]
    h = FakeHandle(cpu_nodes("node"), pods)
    pl = plugin(h, [mk_group("pg1", min_member=3), mk_group("pg2", min_member=2)])
    held = {}
    for name in ("a", "b", "other"):
        st, _ = pl.permit(CycleState(), h.info(name), "node")
        assert st.code == WAIT
        held[name] = h.hold(h.info(name), "node")
    # the first waiting pod of pg1 activated its siblings, the second did not; pg2's has none
    assert sorted(h.activated) == ["ns/b", "ns/c"]
    st, _ = pl.permit(CycleState(), h.info("c"), "node")
    assert st.code == SUCCESS
    outcomes = {n: w.outcome.code if w.outcome else None for n, w in held.items()}
    assert outcomes == {"a": SUCCESS, "b": SUCCESS, "other": None}


def test_unreserve_rejects_the_waiting_siblings_only() -> None:
    pods = [mk_pod("d", group="pg3"), mk_pod("e", group="pg3"), mk_pod("f", group="pg4")]
    h = FakeHandle(cpu_nodes("node"), pods)
    pl = plugin(h, [mk_group("pg3", min_member=3), mk_group("pg4", min_member=2)])
    for name in ("d", "f"):
        pl.permit(CycleState(), h.info(name), "node")
    held_d, held_f = h.hold(h.info("d"), "node"), h.hold(h.info("f"), "node")
    pl.permit(CycleState(), h.info("e"), "node")
    pl.unreserve(CycleState(), h.info("e"), "node")
    assert held_d.outcome is not None
    assert (held_d.outcome.code, held_d.outcome.reasons) == (UNSCHED, ["rejection in Unreserve"])
    assert held_f.outcome is None
    # e left the assigned set, d is still in it (until its own Unreserve): two more are needed for the quorum
    st, _ = pl.permit(CycleState(), h.info("e"), "node")
    assert st.code == WAIT
