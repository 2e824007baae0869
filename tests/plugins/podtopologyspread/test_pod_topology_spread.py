"""PodTopologySpread against upstream's own unit-test tables (filtering_test.go, scoring_test.go), rewritten as
data: a cluster is ``{node: labels}``, existing pods are ``(node, labels)`` (or ``(node, labels, namespace)``),
and a constraint is ``(maxSkew, key, whenUnsatisfiable, selector)`` where ``FOO`` / ``BAR`` are the ``Exists``
selectors of the upstream tables."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packsched.api.manifests import Workload
from packsched.api.objects import (
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    NO_SCHEDULE,
    SCHEDULE_ANYWAY,
    LabelSelector,
    Node,
    OwnerRef,
    Pod,
    Requirement,
    Service,
    Taint,
    TopologySpreadConstraint,
)
from packsched.config.types import LIST_DEFAULTING, SYSTEM_DEFAULTING, PodTopologySpreadArgs
from packsched.config.versions import parse_kube_version
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import ADD, DELETE, SERVICE, WORKLOAD, ClusterEvent
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code
from packsched.plugins.podtopologyspread.common import MAX_INT32
from packsched.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    CriticalPaths,
    PreFilterState,
    critical_paths,
)
from packsched.plugins.podtopologyspread.pod_topology_spread import PRE_FILTER_KEY, PodTopologySpread

FOO = LabelSelector((), (Requirement("foo", "Exists"),))
BAR = LabelSelector((), (Requirement("bar", "Exists"),))
HOST = "kubernetes.io/hostname"
DNS, ANY = DO_NOT_SCHEDULE, SCHEDULE_ANYWAY

ZONES_4 = {
    "node-a": {"zone": "zone1", "node": "node-a"},
    "node-b": {"zone": "zone1", "node": "node-b"},
    "node-x": {"zone": "zone2", "node": "node-x"},
    "node-y": {"zone": "zone2", "node": "node-y"},
}


def zone_host(*spec: tuple[str, str]) -> dict[str, dict[str, str]]:
    return {n: {"zone": z, HOST: n} for n, z in spec}


def hosts(*names: str) -> dict[str, dict[str, str]]:
    return {n: {HOST: n} for n in names}


def tsc(skew: int, key: str, when: str, sel: LabelSelector | None, **kw: Any) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(skew, key, when, sel, **kw)


def build(
    nodes: dict[str, dict[str, str]],
    existing: list[tuple[Any, ...]],
    taints: dict[str, list[Taint]] | None = None,
) -> Snapshot:
    snap = Snapshot()
    for name, labels in nodes.items():
        snap.add_node(Node(name, labels=dict(labels), allocatable={"pods": 110}, taints=(taints or {}).get(name, [])))
    for i, item in enumerate(existing):
        where, labels = item[0], item[1]
        ns = item[2] if len(item) > 2 else "default"
        snap.add_pod(make_pod_info(Pod(f"e{i}", ns, labels=dict(labels))), snap.index[where])
    return snap


def incoming(*constraints: TopologySpreadConstraint, labels: dict[str, str] | None = None, **kw: Any) -> PodInfo:
    pod = Pod("p", labels={"foo": ""} if labels is None else labels, **kw)
    pod.topology_spread_constraints = tuple(constraints)
    return make_pod_info(pod)


def plugin(args: PodTopologySpreadArgs | None = None, version: str = "1.34") -> PodTopologySpread:
    return PodTopologySpread(args, None, parse_kube_version(version))  # type: ignore[arg-type]


def domains(state: PreFilterState, i: int) -> dict[str, int]:
    values = state.values[i]
    return {values[c]: int(state.match[i][c]) for c in np.flatnonzero(state.present[i])}


def pre_filter(pl: PodTopologySpread, snap: Snapshot, pod: PodInfo) -> tuple[CycleState, PreFilterState]:
    state = CycleState()
    st = pl.pre_filter(state, pod, snap)
    assert st.ok, st.message
    s = state.read(PRE_FILTER_KEY)
    assert isinstance(s, PreFilterState)
    return state, s


def verdicts(pl: PodTopologySpread, snap: Snapshot, state: CycleState, pod: PodInfo) -> dict[str, str]:
    """Each node: "ok", or the reason and code of its rejection."""
    out = {n.name: "ok" for n in snap.nodes}
    for r in pl.filter(state, pod, snap, slice(None)):
        for col in np.flatnonzero(r.mask):
            out[snap.nodes[col].name] = f"{r.reason} [{r.code.label}]"
    return out


SKEW = f"{ERR_REASON_CONSTRAINTS_NOT_MATCH} [Unschedulable]"
LABEL = f"{ERR_REASON_NODE_LABEL_NOT_MATCH} [UnschedulableAndUnresolvable]"

# --- PreFilter state (TestPreFilterState) ------------------------------------------------------------------

PRE_FILTER_CASES = [
    (
        "clean cluster with one constraint",
        ZONES_4,
        [],
        [tsc(5, "zone", DNS, LabelSelector((("foo", "bar"),)))],
        [{"zone1": 0, "zone2": 0}],
        [0],
    ),
    (
        "one constraint, pods spread 3/2",
        ZONES_4,
        [*[("node-a", {"foo": ""})] * 2, ("node-b", {"foo": ""}), *[("node-y", {"foo": ""})] * 2],
        [tsc(1, "zone", DNS, FOO)],
        [{"zone1": 3, "zone2": 2}],
        [2],
    ),
    (
        "no label selector matches no pod",
        ZONES_4,
        [("node-a", {"foo": ""}), ("node-y", {"foo": ""})],
        [tsc(1, "zone", DNS, None)],
        [{"zone1": 0, "zone2": 0}],
        [0],
    ),
    (
        "a third, empty zone is the minimum",
        {**ZONES_4, "node-o": {"zone": "zone3", "node": "node-o"}, "node-p": {"zone": "zone3", "node": "node-p"}},
        [*[("node-a", {"foo": ""})] * 2, ("node-b", {"foo": ""}), *[("node-y", {"foo": ""})] * 2],
        [tsc(1, "zone", DNS, FOO)],
        [{"zone1": 3, "zone2": 2, "zone3": 0}],
        [0],
    ),
    (
        "pods of other namespaces do not count",
        ZONES_4,
        [
            ("node-a", {"foo": ""}),
            ("node-a", {"foo": ""}, "ns1"),
            ("node-b", {"foo": ""}),
            ("node-y", {"foo": ""}, "ns2"),
            ("node-y", {"foo": ""}),
        ],
        [tsc(1, "zone", DNS, FOO)],
        [{"zone1": 2, "zone2": 1}],
        [1],
    ),
    (
        "two constraints",
        ZONES_4,
        [("node-a", {"foo": ""})] * 2 + [("node-b", {"foo": ""})] + [("node-y", {"foo": ""})] * 4,
        [tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, FOO)],
        [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
        [3, 0],
    ),
    (
        "soft constraints are not PreFilter's",
        {k: v for k, v in ZONES_4.items() if k != "node-x"},
        [("node-a", {"foo": ""})] * 2 + [("node-b", {"foo": ""})] + [("node-y", {"foo": ""})] * 4,
        [
            tsc(1, "zone", ANY, FOO),
            tsc(1, "zone", DNS, FOO),
            tsc(1, "node", ANY, FOO),
            tsc(1, "node", DNS, FOO),
        ],
        [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
        [3, 1],
    ),
    (
        "different selectors per constraint",
        {k: v for k, v in ZONES_4.items() if k != "node-x"},
        [("node-a", {"foo": ""}), ("node-b", {"bar": ""})],
        [tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, BAR)],
        [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
        [0, 0],
    ),
    (
        "a node without every key takes part in no constraint",
        {**ZONES_4, "node-n": {"zone": "zone3"}},
        [("node-a", {"foo": ""}), ("node-n", {"foo": ""})],
        [tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, FOO)],
        [{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-b": 0, "node-x": 0, "node-y": 0}],
        [0, 0],
    ),
]


@pytest.mark.parametrize(
    ("nodes", "existing", "constraints", "want", "want_min"),
    [pytest.param(*c[1:], id=c[0]) for c in PRE_FILTER_CASES],
)
def test_pre_filter_state(
    nodes: dict[str, dict[str, str]],
    existing: list[tuple[Any, ...]],
    constraints: list[TopologySpreadConstraint],
    want: list[dict[str, int]],
    want_min: list[int],
) -> None:
    snap = build(nodes, existing)
    _, s = pre_filter(plugin(), snap, incoming(*constraints))
    assert [domains(s, i) for i in range(len(want))] == want
    assert [s.min_match(i) for i in range(len(want))] == want_min


def test_node_affinity_policy_honor_counts_only_matching_nodes() -> None:
    # upstream: "NodeAffinityPolicy honored with nodeAffinity": node-x and node-y (zone2) do not match the pod's
    # node selector, so zone2 is no domain
    snap = build(ZONES_4, [("node-a", {"foo": ""}), ("node-y", {"foo": ""})])
    pod = incoming(tsc(1, "zone", DNS, FOO), node_selector={"zone": "zone1"})
    _, s = pre_filter(plugin(), snap, pod)
    assert domains(s, 0) == {"zone1": 1}
    pod = incoming(tsc(1, "zone", DNS, FOO, node_affinity_policy=IGNORE), node_selector={"zone": "zone1"})
    _, s = pre_filter(plugin(), snap, pod)
    assert domains(s, 0) == {"zone1": 1, "zone2": 1}


def test_node_taints_policy_honor_leaves_out_untolerated_nodes() -> None:
    taints = {"node-x": [Taint("t", "", NO_SCHEDULE)], "node-y": [Taint("t", "", NO_SCHEDULE)]}
    snap = build(ZONES_4, [("node-a", {"foo": ""}), ("node-y", {"foo": ""})], taints)
    _, s = pre_filter(plugin(), snap, incoming(tsc(1, "zone", DNS, FOO, node_taints_policy=HONOR)))
    assert domains(s, 0) == {"zone1": 1}
    # Ignore (the default): the tainted zone still counts, and caps the others
    _, s = pre_filter(plugin(), snap, incoming(tsc(1, "zone", DNS, FOO)))
    assert domains(s, 0) == {"zone1": 1, "zone2": 1}


def test_match_label_keys_join_the_selector() -> None:
    snap = build(ZONES_4, [("node-a", {"foo": "", "ver": "1"}), ("node-x", {"foo": "", "ver": "2"})])
    pod = incoming(tsc(1, "zone", DNS, FOO, match_label_keys=("ver", "absent")), labels={"foo": "", "ver": "1"})
    _, s = pre_filter(plugin(), snap, pod)
    assert domains(s, 0) == {"zone1": 1, "zone2": 0}


def test_terminating_pods_do_not_count() -> None:
    snap = build(ZONES_4, [])
    gone = Pod("gone", labels={"foo": ""}, terminating=True)
    snap.add_pod(make_pod_info(gone), snap.index["node-a"])
    _, s = pre_filter(plugin(), snap, incoming(tsc(1, "zone", DNS, FOO)))
    assert domains(s, 0) == {"zone1": 0, "zone2": 0}


def test_pods_without_hard_constraints_are_skipped() -> None:
    snap = build(ZONES_4, [])
    pl = plugin()
    st = pl.pre_filter(CycleState(), incoming(tsc(1, "zone", ANY, FOO)), snap)
    assert st.code == Code.SKIP
    st = pl.pre_filter(CycleState(), incoming(), snap)  # no constraints, nothing selects it
    assert st.code == Code.SKIP


# --- Filter (TestSingleConstraint, TestMultipleConstraints) ------------------------------------------------


FILTER_CASES = [
    (
        "no existing pods",
        ZONES_4,
        [],
        [tsc(1, "zone", DNS, FOO)],
        {},
        {"node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": "ok"},
    ),
    (
        "no existing pods, the pod does not match itself",
        ZONES_4,
        [],
        [tsc(1, "zone", DNS, BAR)],
        {},
        {"node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": "ok"},
    ),
    (
        "pods spread 2/1 across zones: the fuller zone is out",
        ZONES_4,
        [("node-a", {"foo": ""}), ("node-b", {"foo": ""}), ("node-x", {"foo": ""})],
        [tsc(1, "zone", DNS, FOO)],
        {},
        {"node-a": SKEW, "node-b": SKEW, "node-x": "ok", "node-y": "ok"},
    ),
    (
        "maxSkew 2 lets the fuller zone in",
        ZONES_4,
        [("node-a", {"foo": ""}), ("node-b", {"foo": ""}), ("node-x", {"foo": ""})],
        [tsc(2, "zone", DNS, FOO)],
        {},
        {"node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": "ok"},
    ),
    (
        "a node without the key is unresolvable",
        {**ZONES_4, "node-n": {"node": "node-n"}},
        [],
        [tsc(1, "zone", DNS, FOO)],
        {},
        {"node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": "ok", "node-n": LABEL},
    ),
    (
        "spread on hostname, pods 2/1/0/3",
        ZONES_4,
        [("node-a", {"foo": ""})] * 2 + [("node-b", {"foo": ""})] + [("node-y", {"foo": ""})] * 3,
        [tsc(1, "node", DNS, FOO)],
        {},
        {"node-a": SKEW, "node-b": SKEW, "node-x": "ok", "node-y": SKEW},
    ),
    (
        "two constraints: zone and node must both hold",
        ZONES_4,
        [("node-a", {"foo": ""}), ("node-b", {"foo": ""}), ("node-x", {"foo": ""})] + [("node-y", {"foo": ""})] * 2,
        [tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, FOO)],
        {},
        {"node-a": "ok", "node-b": "ok", "node-x": SKEW, "node-y": SKEW},
    ),
    (
        "minDomains above the domains: the global minimum is 0",
        ZONES_4,
        [("node-a", {"foo": ""}), ("node-x", {"foo": ""})],
        [tsc(1, "zone", DNS, FOO, min_domains=3)],
        {},
        {"node-a": SKEW, "node-b": SKEW, "node-x": SKEW, "node-y": SKEW},
    ),
    (
        "minDomains reached: the usual minimum",
        ZONES_4,
        [("node-a", {"foo": ""}), ("node-x", {"foo": ""})],
        [tsc(1, "zone", DNS, FOO, min_domains=2)],
        {},
        {"node-a": "ok", "node-b": "ok", "node-x": "ok", "node-y": "ok"},
    ),
    (
        "the first constraint a node breaks gives its reason",
        {**ZONES_4, "node-n": {"node": "node-n"}},
        [("node-a", {"foo": ""})],
        [tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, FOO)],
        {},
        {"node-a": SKEW, "node-b": SKEW, "node-x": "ok", "node-y": "ok", "node-n": LABEL},
    ),
]


@pytest.mark.parametrize(
    ("nodes", "existing", "constraints", "pod_kw", "want"),
    [pytest.param(*c[1:], id=c[0]) for c in FILTER_CASES],
)
def test_filter(
    nodes: dict[str, dict[str, str]],
    existing: list[tuple[Any, ...]],
    constraints: list[TopologySpreadConstraint],
    pod_kw: dict[str, Any],
    want: dict[str, str],
) -> None:
    snap = build(nodes, existing)
    pl = plugin()
    pod = incoming(*constraints, **pod_kw)
    state, _ = pre_filter(pl, snap, pod)
    assert verdicts(pl, snap, state, pod) == want
    # the same verdicts for a selection of nodes (Filter takes any subset)
    sel = np.array([1, 0], dtype=np.intp)
    got = {snap.nodes[c].name: "ok" for c in sel}
    for r in pl.filter(state, pod, snap, sel):
        for i in np.flatnonzero(r.mask):
            got[snap.nodes[sel[i]].name] = f"{r.reason} [{r.code.label}]"
    assert got == {name: want[name] for name in got}


# --- AddPod / RemovePod (TestPreFilterStateAddPod, TestPreFilterStateRemovePod) -----------------------------


def test_add_and_remove_pod_update_counts_and_critical_paths() -> None:
    snap = build(ZONES_4, [("node-a", {"foo": ""}), ("node-x", {"foo": ""})])
    pl = plugin()
    pod = incoming(tsc(1, "zone", DNS, FOO), tsc(1, "node", DNS, FOO))
    state, s = pre_filter(pl, snap, pod)
    assert (domains(s, 0), s.min_match(1)) == ({"zone1": 1, "zone2": 1}, 0)
    clone = state.clone()
    other = make_pod_info(Pod("o", labels={"foo": ""}))
    assert pl.add_pod(clone, pod, other, snap.index["node-b"], snap).ok
    cs = clone.read(PRE_FILTER_KEY)
    assert domains(cs, 0) == {"zone1": 2, "zone2": 1}
    assert domains(cs, 1) == {"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 0}
    assert (cs.min_match(0), cs.min_match(1)) == (1, 0)
    assert domains(s, 0) == {"zone1": 1, "zone2": 1}  # the original is untouched
    assert pl.remove_pod(clone, pod, make_pod_info(Pod("a", labels={"foo": ""})), snap.index["node-x"], snap).ok
    assert (domains(cs, 0), cs.min_match(0)) == ({"zone1": 2, "zone2": 0}, 0)


def test_add_pod_of_another_namespace_or_not_matching_changes_nothing() -> None:
    snap = build(ZONES_4, [])
    pl = plugin()
    pod = incoming(tsc(1, "zone", DNS, FOO))
    state, s = pre_filter(pl, snap, pod)
    pl.add_pod(state, pod, make_pod_info(Pod("o", "other", labels={"foo": ""})), 0, snap)
    pl.add_pod(state, pod, make_pod_info(Pod("q", labels={"bar": ""})), 0, snap)
    assert domains(s, 0) == {"zone1": 0, "zone2": 0}


def test_add_pod_on_a_node_outside_the_inclusion_policy_changes_nothing() -> None:
    snap = build(ZONES_4, [])
    pl = plugin()
    pod = incoming(tsc(1, "zone", DNS, FOO), node_selector={"zone": "zone1"})
    state, s = pre_filter(pl, snap, pod)
    pl.add_pod(state, pod, make_pod_info(Pod("o", labels={"foo": ""})), snap.index["node-x"], snap)
    assert domains(s, 0) == {"zone1": 0}


def test_critical_paths_keep_upstreams_approximation_after_additions() -> None:
    # three empty domains; two additions to the two recorded paths leave the true minimum (0, in the third)
    # unseen, as upstream's two-entry critical paths do
    p = CriticalPaths()
    for value in ("a", "b", "c"):
        p.update(value, 0)
    p.update("a", 1)
    p.update("b", 1)
    assert p.min == 1
    p.update("c", 0)  # a decrease (or a known value) is always exact
    assert p.min == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0, 1, 2, 3, MAX_INT32 - 1, MAX_INT32, MAX_INT32 + 5]), st.booleans()), max_size=12
    ),
    st.integers(-1, 11),
)
def test_critical_paths_of_prefilter_equal_the_walk_over_the_domains(
    domains_: list[tuple[int, bool]], blank: int
) -> None:
    # the array computation gives the names and counts the per-domain walk (upstream's order: by code) gives,
    # ties, counts at MAX_INT32 and a domain named "" (the empty paths' name) included
    values = [("" if i == blank else f"d{i}") for i in range(len(domains_))]
    match = np.array([c for c, _ in domains_], dtype=np.int64)
    present = np.array([p for _, p in domains_], dtype=bool)
    walk = CriticalPaths()
    for code in np.flatnonzero(present).tolist():
        walk.update(values[code], int(match[code]))
    empty = values.index("") if "" in values else None
    assert critical_paths(values, match, present, empty).paths == walk.paths


# --- Score (TestPodTopologySpreadScore) ----------------------------------------------------------------------

FOUR_HOSTS = hosts("node-a", "node-b", "node-c", "node-d")
SPREAD_4321 = (
    [("node-a", {"foo": ""})] * 4
    + [("node-b", {"foo": ""})] * 3
    + [("node-c", {"foo": ""})] * 2
    + [("node-d", {"foo": ""})]
)
SPREAD_4213 = (
    [("node-a", {"foo": ""})] * 4
    + [("node-b", {"foo": ""})] * 2
    + [("node-x", {"foo": ""})]
    + [("node-y", {"foo": ""})] * 3
)
ABXY_ZONES = zone_host(("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2"))

SCORE_CASES = [
    (
        "one constraint on hostname, maxSkew 3",
        FOUR_HOSTS,
        [],
        SPREAD_4321,
        [tsc(3, HOST, ANY, FOO)],
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    (
        "one constraint on hostname, 3 of 4 nodes candidates",
        hosts("node-a", "node-b", "node-x"),
        ["node-y"],
        SPREAD_4213,
        [tsc(1, HOST, ANY, FOO)],
        {"node-a": 33, "node-b": 83, "node-x": 100},
    ),
    (
        "a candidate without the key scores 0",
        {"node-a": {HOST: "node-a"}, "node-b": {"n": "node-b"}, "node-x": {HOST: "node-x"}},
        ["node-y"],
        SPREAD_4213,
        [tsc(1, HOST, ANY, FOO)],
        {"node-a": 16, "node-b": 0, "node-x": 100},
    ),
    (
        "one constraint on zone, 3 of 4 nodes candidates",
        {k: v for k, v in ABXY_ZONES.items() if k != "node-y"},
        ["node-y"],
        SPREAD_4213,
        [tsc(1, "zone", ANY, FOO)],
        {"node-a": 75, "node-b": 75, "node-x": 100},
    ),
    (
        "zone and hostname, 2 of 4 nodes candidates",
        {k: v for k, v in ABXY_ZONES.items() if k in ("node-a", "node-x")},
        ["node-b", "node-y"],
        [("node-a", {"foo": ""})] * 2
        + [("node-b", {"foo": ""})]
        + [("node-x", {"foo": ""})] * 2
        + [("node-y", {"foo": ""})] * 4,
        [tsc(1, "zone", ANY, FOO), tsc(1, HOST, ANY, FOO)],
        {"node-a": 100, "node-x": 63},
    ),
    (
        "two constraints on zone with different selectors",
        {"node-a": {"zone": "zone1"}, "node-x": {"zone": "zone2"}},
        ["node-b", "node-y"],
        [
            ("node-a", {"foo": "", "bar": ""}),
            ("node-a", {"foo": ""}),
            ("node-b", {"foo": "", "bar": ""}),
            ("node-y", {"foo": ""}),
            ("node-y", {"foo": "", "bar": ""}),
            ("node-y", {"foo": ""}),
        ],
        [tsc(1, "zone", ANY, FOO), tsc(1, "zone", ANY, BAR)],
        {"node-a": 85, "node-x": 100},
    ),
    (
        "zone and hostname with different selectors",
        ABXY_ZONES,
        [],
        [
            ("node-a", {"foo": ""}),
            ("node-b", {"foo": "", "bar": ""}),
            ("node-y", {"foo": ""}),
            ("node-y", {"bar": ""}),
        ],
        [tsc(1, "zone", ANY, FOO), tsc(1, HOST, ANY, BAR)],
        {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
    ),
    (
        "zone and hostname with different selectors, some nodes empty",
        ABXY_ZONES,
        [],
        [("node-b", {"bar": ""}), ("node-x", {"foo": ""}), ("node-y", {"foo": "", "bar": ""})],
        [tsc(1, "zone", ANY, FOO), tsc(1, HOST, ANY, BAR)],
        {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
    ),
    (
        "zone and hostname with different selectors, 3 of 4 nodes candidates",
        {k: v for k, v in ABXY_ZONES.items() if k != "node-y"},
        ["node-y"],
        [
            ("node-a", {"foo": ""}),
            ("node-b", {"foo": "", "bar": ""}),
            ("node-y", {"foo": ""}),
            ("node-y", {"bar": ""}),
        ],
        [tsc(1, "zone", ANY, FOO), tsc(1, HOST, ANY, BAR)],
        {"node-a": 50, "node-b": 25, "node-x": 100},
    ),
]


def scores(pl: PodTopologySpread, snap: Snapshot, pod: PodInfo, candidates: list[str]) -> dict[str, int] | None:
    cols = np.array([snap.index[n] for n in candidates], dtype=np.int64)
    state = CycleState()
    st = pl.pre_score(state, pod, snap, cols)
    if st.code == Code.SKIP:
        return None
    raw = pl.score(state, pod, snap, cols)
    out = pl.normalize_score(state, pod, raw)
    return {n: int(s) for n, s in zip(candidates, out.tolist(), strict=True)}


@pytest.mark.parametrize(
    ("nodes", "failed", "existing", "constraints", "want"),
    [pytest.param(*c[1:], id=c[0]) for c in SCORE_CASES],
)
def test_score(
    nodes: dict[str, dict[str, str]],
    failed: list[str],
    existing: list[tuple[Any, ...]],
    constraints: list[TopologySpreadConstraint],
    want: dict[str, int],
) -> None:
    all_nodes = dict(nodes)
    for name in failed:  # nodes that failed filtering still hold their pods
        all_nodes[name] = ABXY_ZONES.get(name, {HOST: name})
    snap = build(all_nodes, existing)
    assert scores(plugin(), snap, incoming(*constraints), list(nodes)) == want


def _service_selects_foo(pl: PodTopologySpread) -> None:
    pl.on_cluster_event(ClusterEvent(SERVICE, ADD, None, Service("s", "default", {"foo": ""})))


def test_system_defaults_for_a_pod_a_service_selects() -> None:
    # upstream: "system defaulting, nodes don't have zone, pods match service": the same scores as one
    # hostname constraint with maxSkew 3
    snap = build(FOUR_HOSTS, SPREAD_4321)
    pl = plugin(PodTopologySpreadArgs(defaulting_type=SYSTEM_DEFAULTING))
    assert scores(pl, snap, incoming(), list(FOUR_HOSTS)) is None  # nothing selects it yet
    _service_selects_foo(pl)
    assert scores(pl, snap, incoming(), list(FOUR_HOSTS)) == {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}
    pl.on_cluster_event(ClusterEvent(SERVICE, DELETE, Service("s", "default", {"foo": ""}), None))
    assert scores(pl, snap, incoming(), list(FOUR_HOSTS)) is None


def test_system_defaults_score_a_node_without_zone_on_hostname_alone() -> None:
    nodes = {"node-a": {HOST: "node-a", "topology.kubernetes.io/zone": "z1"}, "node-b": {HOST: "node-b"}}
    snap = build(nodes, [("node-a", {"foo": ""})])
    pl = plugin()
    _service_selects_foo(pl)
    got = scores(pl, snap, incoming(), ["node-a", "node-b"])
    # explicit soft constraints would leave node-b out (0); the defaults still score it, on hostname alone, and
    # its missing zone still counts as a domain ("") for the zone weight: node-a 1*ln4 + 2 + 1*ln4 + 4 = 8.77 -> 9,
    # node-b 0*ln4 + 2 = 2; normalised 100 * (9 + 2 - s) / 9
    assert got == {"node-a": 22, "node-b": 100}


def test_default_selector_from_controllers() -> None:
    pl = plugin()
    rs = Workload("ReplicaSet", "rs", "default", 0, Pod(""), selector=LabelSelector((("app", "web"),)))
    pl.on_cluster_event(ClusterEvent(WORKLOAD, ADD, None, rs))
    pod = Pod("p", labels={"app": "web"})
    pod.owner_refs = (OwnerRef("ReplicaSet", "rs", True, "apps/v1"),)
    (c1, c2) = pl.constraints(make_pod_info(pod), ANY)
    assert (c1.max_skew, c1.topology_key, c2.max_skew, c2.topology_key) == (3, HOST, 5, "topology.kubernetes.io/zone")
    assert c1.selector == LabelSelector((), (Requirement("app", "In", ("web",)),))
    assert pl.constraints(make_pod_info(pod), DNS) == []  # the system defaults are all ScheduleAnyway
    pod.owner_refs = (OwnerRef("ReplicaSet", "rs", True, "extensions/v1beta1"),)  # another group: not looked up
    assert pl.constraints(make_pod_info(pod), ANY) == []
    pl.on_cluster_event(ClusterEvent(WORKLOAD, DELETE, rs, None))
    pod.owner_refs = (OwnerRef("ReplicaSet", "rs", True, "apps/v1"),)
    assert pl.constraints(make_pod_info(pod), ANY) == []


def test_list_defaulting_uses_the_given_constraints() -> None:
    args = PodTopologySpreadArgs([tsc(1, "zone", DNS, None)], LIST_DEFAULTING)
    pl = plugin(args)
    _service_selects_foo(pl)
    snap = build(ZONES_4, [("node-a", {"foo": ""})])
    state, s = pre_filter(pl, snap, incoming())
    assert domains(s, 0) == {"zone1": 1, "zone2": 0}
    assert verdicts(pl, snap, state, incoming())["node-a"] == SKEW
    assert plugin(PodTopologySpreadArgs([], LIST_DEFAULTING)).constraints(incoming(), ANY) == []


def test_wrong_args_type_is_refused() -> None:
    with pytest.raises(TypeError, match="PodTopologySpreadArgs"):
        PodTopologySpread({"x": 1}, None)  # type: ignore[arg-type]


def test_older_releases_drop_the_newer_fields() -> None:
    # 1.26: matchLabelKeys and minDomains dropped; 1.25: node inclusion policies dropped too (Honor / Ignore)
    snap = build(ZONES_4, [("node-a", {"foo": "", "ver": "2"})], {"node-x": [Taint("t", "", NO_SCHEDULE)]})
    keys = incoming(tsc(1, "zone", DNS, FOO, match_label_keys=("ver",)), labels={"foo": "", "ver": "1"})
    assert domains(pre_filter(plugin(version="1.27"), snap, keys)[1], 0) == {"zone1": 0, "zone2": 0}
    assert domains(pre_filter(plugin(version="1.26"), snap, keys)[1], 0) == {"zone1": 1, "zone2": 0}
    minimum = incoming(tsc(1, "zone", DNS, FOO, min_domains=3))
    assert pre_filter(plugin(version="1.27"), snap, minimum)[1].min_match(0) == 0
    assert pre_filter(plugin(version="1.26"), snap, minimum)[1].min_match(0) == 0  # zone2 empty: 0 anyway
    assert pre_filter(plugin(version="1.26"), snap, minimum)[1].constraints[0].min_domains == 1
    taints = incoming(
        tsc(1, "zone", DNS, FOO, node_taints_policy=HONOR, node_affinity_policy=IGNORE), node_selector={"zone": "zone1"}
    )
    s = pre_filter(plugin(version="1.26"), snap, taints)[1]
    assert [int(x) for x in s.eligible[0]] == [1, 1, 0, 1]  # the tainted node-x is left out; the selector ignored
    s = pre_filter(plugin(version="1.25"), snap, taints)[1]
    assert [int(x) for x in s.eligible[0]] == [1, 1, 0, 0]  # as Honor (selector) / Ignore (taints)


def test_filter_without_pre_filter_state_is_an_error() -> None:
    snap = build(ZONES_4, [])
    with pytest.raises(LookupError):
        plugin().filter(CycleState(), incoming(tsc(1, "zone", DNS, FOO)), snap, slice(None))


def test_a_pods_constraints_follow_service_events() -> None:
    # one PodInfo asked again after each event (a pod retried): its constraints follow the Services
    snap = build(FOUR_HOSTS, SPREAD_4321)
    pl = plugin(PodTopologySpreadArgs(defaulting_type=SYSTEM_DEFAULTING))
    pod = incoming()
    assert scores(pl, snap, pod, list(FOUR_HOSTS)) is None
    _service_selects_foo(pl)
    assert scores(pl, snap, pod, list(FOUR_HOSTS)) == {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}
    pl.on_cluster_event(ClusterEvent(SERVICE, DELETE, Service("s", "default", {"foo": ""}), None))
    assert scores(pl, snap, pod, list(FOUR_HOSTS)) is None


def test_label_codes_follow_a_node_relabelled_in_the_snapshot() -> None:
    # the label codes are cached per label-index version: a node that loses its zone is then missing the key,
    # and its pod no longer counts for zone2
    snap = build(ABXY_ZONES, [("node-x", {"foo": ""})])
    pl = plugin()
    pod = incoming(tsc(1, "zone", DO_NOT_SCHEDULE, FOO))
    state, _ = pre_filter(pl, snap, pod)
    assert verdicts(pl, snap, state, pod) == {"node-a": "ok", "node-b": "ok", "node-x": SKEW, "node-y": SKEW}
    snap.update_node(Node("node-x", labels={HOST: "node-x"}, allocatable={"pods": 110}))
    state, _ = pre_filter(pl, snap, pod)
    assert verdicts(pl, snap, state, pod) == {"node-a": "ok", "node-b": "ok", "node-x": LABEL, "node-y": "ok"}


# --- the array paths against a per-node walk --------------------------------------------------------------------


def _go_round_scalar(x: float) -> int:
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from([None, "z1", "z2", ""]), min_size=1, max_size=7),
    st.lists(st.tuples(st.integers(0, 6), st.sampled_from([{"foo": ""}, {"bar": ""}, {}])), max_size=10),
    st.lists(
        st.tuples(st.integers(1, 3), st.sampled_from(["zone", HOST]), st.sampled_from([DNS, ANY]), st.booleans()),
        min_size=1,
        max_size=2,
    ),
    st.integers(0, 127),
)
def test_filter_and_scores_equal_a_walk_over_the_nodes(
    zones: list[str | None],
    existing: list[tuple[int, dict[str, str]]],
    spec: list[tuple[int, str, str, bool]],
    pick: int,
) -> None:
    names = [f"n{i}" for i in range(len(zones))]
    nodes = {n: ({HOST: n} if z is None else {HOST: n, "zone": z}) for n, z in zip(names, zones, strict=True)}
    snap = build(nodes, [(names[i % len(names)], labels) for i, labels in existing])
    pod = incoming(*(tsc(skew, key, when, FOO if foo else BAR) for skew, key, when, foo in spec))
    pl = plugin()
    # Filter: the first constraint a node breaks names its reason
    state = CycleState()
    if pl.pre_filter(state, pod, snap).ok:
        s = state.read(PRE_FILTER_KEY)
        assert isinstance(s, PreFilterState)
        want = {}
        for col, name in enumerate(names):
            verdict = "ok"
            for i, c in enumerate(s.constraints):
                code = int(snap.labels.codes[c.topology_key][col]) if c.topology_key in snap.labels.codes else -1
                if code < 0:
                    verdict = LABEL
                    break
                if int(s.match[i][code]) + int(s.self_match[i]) - s.min_match(i) > c.max_skew:
                    verdict = SKEW
                    break
            want[name] = verdict
        assert verdicts(pl, snap, state, pod) == want
    # Score and NormalizeScore over some candidates
    candidates = [n for i, n in enumerate(names) if pick >> i & 1] or names[:1]
    cols = np.array([snap.index[n] for n in candidates], dtype=np.int64)
    state = CycleState()
    if not pl.pre_score(state, pod, snap, cols).ok:
        return
    ps = state.read("PreScore" + "PodTopologySpread")
    raw = pl.score(state, pod, snap, cols)
    want_raw = []
    for j, col in enumerate(cols.tolist()):
        total = 0.0
        for i, c in enumerate(ps.constraints):
            codes = snap.labels.codes.get(c.topology_key)
            if codes is None or codes[col] < 0:
                continue
            counts = ps.domain_counts[i]
            if counts is None:
                cnt = sum(1 for p in snap.pods_on[col].values() if c.matches(p.pod.labels))
            else:
                cnt = int(counts[ps.ext_codes[i][col]])
            total = total + (cnt * ps.weights[i] + float(c.max_skew - 1))
        want_raw.append(0 if ps.ignored[j] else _go_round_scalar(total))
    assert raw.tolist() == want_raw
    kept = [s for j, s in enumerate(want_raw) if not ps.ignored[j]]
    got = pl.normalize_score(state, pod, raw).tolist()
    if kept:
        lo, hi = min(kept), max(kept)
        want_norm = [
            0 if ps.ignored[j] else (100 if hi == 0 else 100 * (hi + lo - s) // hi) for j, s in enumerate(want_raw)
        ]
        assert got == want_norm
    else:
        assert got == [0] * len(cols)
