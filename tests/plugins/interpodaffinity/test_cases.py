"""InterPodAffinity on small clusters: cases after upstream's filtering_test.go and scoring_test.go tables (the
situations they cover, restated), each with every node's verdict or score."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from packsched.api.objects import LabelSelector, Node, Pod, PodAffinity, PodAffinityTerm, Requirement
from packsched.api.objects import WeightedPodAffinityTerm as Weighted
from packsched.config.types import InterPodAffinityArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code
from packsched.plugins.interpodaffinity.inter_pod_affinity import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    InterPodAffinity,
)

ZONE, HOST, REGION = "zone", "kubernetes.io/hostname", "region"
AFF, ANTI, EXIST = ERR_REASON_AFFINITY, ERR_REASON_ANTI_AFFINITY, ERR_REASON_EXISTING_ANTI_AFFINITY


def sel(**labels: str) -> LabelSelector:
    return LabelSelector(tuple(sorted(labels.items())))


def expr(key: str, op: str, *values: str) -> LabelSelector:
    return LabelSelector((), (Requirement(key, op, values),))


def term(selector: LabelSelector | None, key: str = HOST, **kw: Any) -> PodAffinityTerm:
    return PodAffinityTerm(key, selector, **kw)


def req(*terms: PodAffinityTerm) -> PodAffinity:
    return PodAffinity(required=terms)


def pref(*terms: tuple[int, PodAffinityTerm]) -> PodAffinity:
    return PodAffinity(preferred=tuple(Weighted(w, t) for w, t in terms))


def mk_pod(
    name: str,
    labels: dict[str, str] | None = None,
    ns: str = "default",
    aff: PodAffinity | None = None,
    anti: PodAffinity | None = None,
) -> Pod:
    return Pod(name, ns, labels=labels or {}, pod_affinity=aff, pod_anti_affinity=anti)


@dataclass
class Case:
    name: str
    pod: Pod
    nodes: dict[str, dict[str, str]]
    placed: list[tuple[Pod, str]] = field(default_factory=list)
    want: dict[str, str | None] = field(default_factory=dict)  # Filter: node -> reason (None: fits)
    scores: dict[str, int] | None = None  # normalised score per node; None: PreScore skips
    args: InterPodAffinityArgs = field(default_factory=InterPodAffinityArgs)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)


def build(case: Case) -> tuple[Snapshot, InterPodAffinity]:
    snap = Snapshot([Node(n, {HOST: n, **labels}) for n, labels in case.nodes.items()])
    snap.namespaces = case.namespaces
    for i, (p, node) in enumerate(case.placed):
        snap.add_pod(make_pod_info(p, i), snap.index[node])
    return snap, InterPodAffinity(case.args, None)  # type: ignore[arg-type]


def verdicts(case: Case) -> dict[str, str | None]:
    snap, plugin = build(case)
    state = CycleState()
    info = make_pod_info(case.pod)
    st = plugin.pre_filter(state, info, snap)
    out: dict[str, str | None] = {n.name: None for n in snap.nodes}
    if st.code == Code.SKIP:
        return out
    for rej in plugin.filter(state, info, snap, slice(None)):
        for col in np.flatnonzero(rej.mask):
            assert out[snap.nodes[col].name] is None, "a node rejected twice"
            out[snap.nodes[col].name] = rej.reason
            want_code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if rej.reason == AFF else Code.UNSCHEDULABLE
            assert rej.code == want_code
    return out


def scores(case: Case) -> dict[str, int] | None:
    snap, plugin = build(case)
    state = CycleState()
    info = make_pod_info(case.pod)
    cols = np.arange(snap.n, dtype=np.int64)
    if plugin.pre_score(state, info, snap, cols).code == Code.SKIP:
        return None
    raw = plugin.score(state, info, snap, cols)
    norm = plugin.normalize_score(state, info, raw)
    return {snap.nodes[c].name: int(norm[c]) for c in cols}


SEC_S1 = {"security": "S1"}
TWO = {"n1": {REGION: "r1", ZONE: "z11"}, "n2": {REGION: "r1", ZONE: "z12"}, "n3": {REGION: "r2", ZONE: "z21"}}

FILTER_CASES = [
    Case("no affinity, empty node", mk_pod("p"), {"n1": {}}, want={"n1": None}),
    Case(
        "affinity In matches the pod on the node",
        mk_pod("p", aff=req(term(expr("service", "In", "securityscan", "value2"), REGION))),
        {"n1": {REGION: "r1"}},
        [(mk_pod("e", {"service": "securityscan"}), "n1")],
        {"n1": None},
    ),
    Case(
        "affinity NotIn: the existing pod's value is not excluded",
        mk_pod("p", aff=req(term(expr("service", "NotIn", "securityscan3", "value3"), REGION))),
        {"n1": {REGION: "r1"}},
        [(mk_pod("e", {"service": "securityscan"}), "n1")],
        {"n1": None},
    ),
    Case(
        "affinity to a pod of another namespace does not count",
        mk_pod("p", {"service": "s"}, aff=req(term(expr("service", "In", "securityscan"), REGION))),
        {"n1": {REGION: "r1"}},
        [(mk_pod("e", {"service": "securityscan"}, ns="other"), "n1")],
        {"n1": AFF},
    ),
    Case(
        "affinity names the other namespace",
        mk_pod("p", aff=req(term(expr("service", "In", "securityscan"), REGION, namespaces=("other",)))),
        {"n1": {REGION: "r1"}},
        [(mk_pod("e", {"service": "securityscan"}, ns="other"), "n1")],
        {"n1": None},
    ),
    Case(
        "affinity that no pod matches",
        mk_pod("p", aff=req(term(expr("service", "In", "antivirusscan", "value2"), REGION))),
        {"n1": {REGION: "r1"}},
        [(mk_pod("e", {"service": "securityscan"}), "n1")],
        {"n1": AFF},
    ),
    Case(
        "every term must match the same pod",
        mk_pod(
            "p",
            aff=req(
                term(expr("service", "Exists"), REGION),
                term(expr("wrongkey", "DoesNotExist"), REGION),
            ),
        ),
        {"n1": {REGION: "r1"}},
        [(mk_pod("e", {"service": "securityscan"}), "n1")],
        {"n1": None},
    ),
    Case(
        "a term no pod matches fails the node even when another matches",
        mk_pod("p", aff=req(term(expr("service", "Exists"), REGION), term(expr("service", "In", "x"), REGION))),
        {"n1": {REGION: "r1"}},
        [(mk_pod("e", {"service": "securityscan"}), "n1")],
        {"n1": AFF},
    ),
    Case(
        "affinity and anti-affinity both satisfied",
        mk_pod(
            "p",
            aff=req(term(expr("service", "In", "securityscan"), REGION)),
            anti=req(term(expr("service", "In", "antivirusscan"), ZONE)),
        ),
        {"n1": {REGION: "r1", ZONE: "z1"}},
        [(mk_pod("e", {"service": "securityscan"}), "n1")],
        {"n1": None},
    ),
    Case(
        "anti-affinity against a pod in the same zone",
        mk_pod("p", anti=req(term(expr("service", "In", "securityscan"), ZONE))),
        {"n1": {ZONE: "z1"}, "n2": {ZONE: "z1"}, "n3": {ZONE: "z2"}},
        [(mk_pod("e", {"service": "securityscan"}), "n1")],
        {"n1": ANTI, "n2": ANTI, "n3": None},
    ),
    Case(
        "anti-affinity on a key the node lacks never fails",
        mk_pod("p", anti=req(term(expr("service", "In", "securityscan"), "rack"))),
        {"n1": {ZONE: "z1"}},
        [(mk_pod("e", {"service": "securityscan"}), "n1")],
        {"n1": None},
    ),
    Case(
        "existing pod's anti-affinity is respected by a pod without any (symmetry)",
        mk_pod("p", {"service": "securityscan"}),
        {"n1": {ZONE: "z1"}, "n2": {ZONE: "z1"}, "n3": {ZONE: "z2"}},
        [(mk_pod("e", anti=req(term(sel(service="securityscan"), ZONE))), "n1")],
        {"n1": EXIST, "n2": EXIST, "n3": None},
    ),
    Case(
        "existing pod's anti-affinity in another namespace only covers its own namespace",
        mk_pod("p", {"service": "securityscan"}, ns="ns1"),
        {"n1": {ZONE: "z1"}},
        [(mk_pod("e", ns="ns2", anti=req(term(sel(service="securityscan"), ZONE))), "n1")],
        {"n1": None},
    ),
    Case(
        "existing pod's anti-affinity with a namespaceSelector matching the pod's namespace",
        mk_pod("p", {"service": "securityscan"}, ns="team-a"),
        {"n1": {ZONE: "z1"}},
        [
            (
                mk_pod(
                    "e", ns="ns2", anti=req(term(sel(service="securityscan"), ZONE, namespace_selector=sel(team="a")))
                ),
                "n1",
            )
        ],
        {"n1": EXIST},
        namespaces={"team-a": {"team": "a"}},
    ),
    Case(
        "existing pod's anti-affinity with an empty namespaceSelector covers every namespace",
        mk_pod("p", {"service": "securityscan"}, ns="x"),
        {"n1": {ZONE: "z1"}},
        [(mk_pod("e", ns="y", anti=req(term(sel(service="securityscan"), ZONE, namespace_selector=sel()))), "n1")],
        {"n1": EXIST},
    ),
    Case(
        "incoming anti-affinity with a namespaceSelector",
        mk_pod("p", anti=req(term(sel(app="db"), HOST, namespace_selector=sel(env="prod")))),
        {"n1": {}, "n2": {}},
        [(mk_pod("a", {"app": "db"}, ns="prod-1"), "n1"), (mk_pod("b", {"app": "db"}, ns="dev-1"), "n2")],
        {"n1": ANTI, "n2": None},
        namespaces={"prod-1": {"env": "prod"}, "dev-1": {"env": "dev"}},
    ),
    Case(
        "the pod's anti-affinity fails before existing pods' anti-affinity is checked",
        mk_pod("p", {"app": "x"}, anti=req(term(sel(app="x"), HOST))),
        {"n1": {}},
        [(mk_pod("e", {"app": "x"}, anti=req(term(sel(app="x"), HOST))), "n1")],
        {"n1": ANTI},
    ),
    Case(
        "affinity fails first (unresolvable), even where anti-affinity would fail too",
        mk_pod("p", aff=req(term(sel(app="nope"), HOST)), anti=req(term(sel(app="x"), HOST))),
        {"n1": {}},
        [(mk_pod("e", {"app": "x"}), "n1")],
        {"n1": AFF},
    ),
    Case(
        "first pod of a group: no pod matches yet and the pod matches its own terms",
        mk_pod("p", {"app": "web"}, aff=req(term(sel(app="web"), ZONE))),
        {"n1": {ZONE: "z1"}, "n2": {}},
        [(mk_pod("e", {"app": "other"}), "n1")],
        {"n1": None, "n2": AFF},
    ),
    Case(
        "not the first pod: once a pod matches, only its domain fits",
        mk_pod("p", {"app": "web"}, aff=req(term(sel(app="web"), ZONE))),
        {"n1": {ZONE: "z1"}, "n2": {ZONE: "z2"}, "n3": {ZONE: "z1"}},
        [(mk_pod("e", {"app": "web"}), "n1")],
        {"n1": None, "n2": AFF, "n3": None},
    ),
    Case(
        "the exception needs the pod to match its own terms",
        mk_pod("p", {"app": "api"}, aff=req(term(sel(app="web"), ZONE))),
        {"n1": {ZONE: "z1"}},
        [],
        {"n1": AFF},
    ),
    Case(
        "a nil label selector selects nothing (no exception either)",
        mk_pod("p", {"app": "web"}, aff=req(term(None, ZONE))),
        {"n1": {ZONE: "z1"}},
        [(mk_pod("e", {"app": "web"}), "n1")],
        {"n1": AFF},
    ),
    Case(
        "an empty label selector selects every pod of the namespace",
        mk_pod("p", anti=req(term(sel(), HOST))),
        {"n1": {}, "n2": {}},
        [(mk_pod("e", {"app": "anything"}), "n1")],
        {"n1": ANTI, "n2": None},
    ),
    Case(
        "matchLabelKeys is merged into the selector: only pods with the same value count",
        mk_pod("p", {"app": "web", "rev": "2"}, anti=req(term(sel(app="web"), HOST, match_label_keys=("rev",)))),
        {"n1": {}, "n2": {}},
        [(mk_pod("a", {"app": "web", "rev": "1"}), "n1"), (mk_pod("b", {"app": "web", "rev": "2"}), "n2")],
        {"n1": None, "n2": ANTI},
    ),
    Case(
        "mismatchLabelKeys: only pods with another value count",
        mk_pod("p", {"app": "web", "t": "a"}, anti=req(term(sel(app="web"), HOST, mismatch_label_keys=("t",)))),
        {"n1": {}, "n2": {}},
        [(mk_pod("a", {"app": "web", "t": "a"}), "n1"), (mk_pod("b", {"app": "web", "t": "b"}), "n2")],
        {"n1": None, "n2": ANTI},
    ),
    Case(
        "affinity on a key some nodes lack: those nodes fail",
        mk_pod("p", aff=req(term(sel(app="db"), REGION))),
        TWO | {"n4": {ZONE: "z9"}},
        [(mk_pod("e", {"app": "db"}), "n1")],
        {"n1": None, "n2": None, "n3": AFF, "n4": AFF},
    ),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.name)
def test_filter(case: Case) -> None:
    assert verdicts(case) == case.want


def _soft(w: int, s: LabelSelector, key: str = REGION, **kw: Any) -> tuple[int, PodAffinityTerm]:
    return (w, term(s, key, **kw))


SCORE_CASES = [
    Case("no affinity anywhere: skipped", mk_pod("p", SEC_S1), TWO, scores=None),
    Case(
        "preferred affinity: the region of the matching pod scores highest",
        mk_pod("p", SEC_S1, aff=pref(_soft(5, sel(security="S1")))),
        TWO,
        [(mk_pod("e", SEC_S1), "n1")],
        scores={"n1": 100, "n2": 100, "n3": 0},
    ),
    Case(
        "preferred affinity weights add up per domain",
        mk_pod("p", aff=pref(_soft(5, sel(security="S1")), _soft(3, sel(security="S2"), ZONE))),
        TWO,
        [(mk_pod("a", SEC_S1), "n1"), (mk_pod("b", {"security": "S2"}), "n2")],
        scores={"n1": 62, "n2": 100, "n3": 0},
    ),
    Case(
        "preferred anti-affinity: the matching pod's region scores lowest",
        mk_pod("p", anti=pref(_soft(5, sel(security="S1")))),
        TWO,
        [(mk_pod("e", SEC_S1), "n3")],
        scores={"n1": 100, "n2": 100, "n3": 0},
    ),
    Case(
        "affinity and anti-affinity together",
        mk_pod("p", aff=pref(_soft(8, sel(security="S1"), ZONE)), anti=pref(_soft(5, sel(security="S2"), ZONE))),
        TWO,
        [(mk_pod("a", SEC_S1), "n1"), (mk_pod("b", {"security": "S2"}), "n2")],
        scores={"n1": 100, "n2": 0, "n3": 38},
    ),
    Case(
        "existing pods' required affinity counts with hardPodAffinityWeight",
        mk_pod("p", SEC_S1),
        TWO,
        [(mk_pod("e", aff=req(term(sel(security="S1"), REGION))), "n3")],
        scores={"n1": 0, "n2": 0, "n3": 100},
    ),
    Case(
        "hardPodAffinityWeight 0: existing pods' required affinity is not scored",
        mk_pod("p", SEC_S1),
        TWO,
        [(mk_pod("e", aff=req(term(sel(security="S1"), REGION))), "n3")],
        scores=None,
        args=InterPodAffinityArgs(hard_pod_affinity_weight=0),
    ),
    Case(
        "existing pods' preferred anti-affinity pushes the pod away",
        mk_pod("p", SEC_S1),
        TWO,
        [(mk_pod("e", anti=pref(_soft(10, sel(security="S1"), ZONE))), "n2")],
        scores={"n1": 100, "n2": 0, "n3": 100},
    ),
    Case(
        "existing pods' preferred affinity pulls the pod in",
        mk_pod("p", SEC_S1),
        TWO,
        [(mk_pod("e", aff=pref(_soft(10, sel(security="S1"), ZONE))), "n2")],
        scores={"n1": 0, "n2": 100, "n3": 0},
    ),
    Case(
        "ignorePreferredTermsOfExistingPods: a pod without preferred terms skips",
        mk_pod("p", SEC_S1),
        TWO,
        [(mk_pod("e", aff=pref(_soft(10, sel(security="S1"), ZONE))), "n2")],
        scores=None,
        args=InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True),
    ),
    Case(
        "ignorePreferredTermsOfExistingPods: a pod with preferred terms still scores existing ones",
        mk_pod("p", SEC_S1, anti=pref(_soft(1, sel(app="none")))),
        TWO,
        [(mk_pod("e", aff=pref(_soft(10, sel(security="S1"), ZONE))), "n2")],
        scores={"n1": 0, "n2": 100, "n3": 0},
        args=InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True),
    ),
    Case(
        "terms that match but cancel out still score: every node 0",
        mk_pod("p", aff=pref(_soft(5, sel(security="S1"))), anti=pref(_soft(5, sel(security="S1")))),
        TWO,
        [(mk_pod("e", SEC_S1), "n1")],
        scores={"n1": 0, "n2": 0, "n3": 0},
    ),
    Case(
        "preferred terms whose pods sit on nodes without the key: skipped",
        mk_pod("p", aff=pref(_soft(5, sel(security="S1"), "rack"))),
        TWO,
        [(mk_pod("e", SEC_S1), "n1")],
        scores=None,
    ),
    Case(
        "preferred term with an empty namespaceSelector sees every namespace",
        mk_pod("p", aff=pref(_soft(5, sel(security="S1"), ZONE, namespace_selector=sel()))),
        TWO,
        [(mk_pod("e", SEC_S1, ns="elsewhere"), "n3")],
        scores={"n1": 0, "n2": 0, "n3": 100},
    ),
    Case(
        "negative and positive raw scores are spread over 0..100",
        mk_pod("p", aff=pref(_soft(3, sel(a="1"), ZONE)), anti=pref(_soft(7, sel(b="1"), ZONE))),
        TWO,
        [(mk_pod("x", {"a": "1"}), "n1"), (mk_pod("y", {"b": "1"}), "n3")],
        scores={"n1": 100, "n2": 70, "n3": 0},
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda c: c.name)
def test_score(case: Case) -> None:
    assert scores(case) == case.scores
