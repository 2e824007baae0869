"""The index's counts per topology domain, kept as pods come and go and dropped when node labels change, equal
the counts summed afresh from its per-node vectors."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from packsched.api.objects import LabelSelector, Node, Pod, PodAffinity, PodAffinityTerm, WeightedPodAffinityTerm
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.plugins.interpodaffinity.index import (
    PREFERRED_ANTI,
    REQUIRED_ANTI,
    affinity_index,
    node_positive,
    node_values,
    per_domain,
)

HOST, ZONE = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
APPS = ("a", "b")


def _node(i: int, zone: int | None) -> Node:
    labels = {HOST: f"n{i}"}
    if zone is not None:
        labels[ZONE] = f"z{zone}"
    return Node(f"n{i}", labels=labels, allocatable={"pods": 110})


def _pod(i: int, app: str, key: str) -> PodInfo:
    sel = LabelSelector((("app", app),))
    anti = PodAffinity(
        required=(PodAffinityTerm(key, sel),),
        preferred=(WeightedPodAffinityTerm(3, PodAffinityTerm(ZONE, sel)),),
    )
    return make_pod_info(Pod(f"p{i}", labels={"app": app}, pod_anti_affinity=anti))


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 3), st.sampled_from(APPS), st.sampled_from((HOST, ZONE))),
        st.tuples(st.just("remove"), st.integers(0, 50)),
        st.tuples(st.just("relabel"), st.integers(0, 3), st.one_of(st.none(), st.integers(0, 2))),
        st.tuples(st.just("ask"), st.sampled_from(APPS), st.sampled_from((HOST, ZONE))),
    ),
    max_size=25,
)


@settings(max_examples=25, deadline=None)
@given(OPS)
def test_kept_domain_counts_equal_fresh_sums(ops: list[tuple[object, ...]]) -> None:
    snap = Snapshot([_node(i, i % 2 if i < 3 else None) for i in range(4)])
    idx = affinity_index(snap)
    placed: list[PodInfo] = []
    for n, op in enumerate(ops):
        if op[0] == "add":
            info = _pod(n, str(op[2]), str(op[3]))
            snap.add_pod(info, int(op[1]))  # type: ignore[call-overload]
            placed.append(info)
        elif op[0] == "remove" and placed:
            snap.remove_pod(placed.pop(int(op[1]) % len(placed)))  # type: ignore[call-overload]
        elif op[0] == "relabel":
            zone = op[2]
            snap.update_node(_node(int(op[1]), None if zone is None else int(zone)))  # type: ignore[call-overload]
        elif op[0] == "ask":
            sel = ((frozenset({"default"}), None, LabelSelector((("app", str(op[1])),))),)
            idx.matching_domains(sel, str(op[2]))
        # every count per domain the index keeps equals the sum of its per-node vector
        for sig, dom in idx.carried_terms((REQUIRED_ANTI, PREFERRED_ANTI)):
            want = per_domain(snap, sig[1].topology_key, idx.carried[sig])
            assert (dom is None) == (want is None)
            if dom is not None and want is not None:
                assert np.array_equal(dom, want)
        for sel, doms in idx.selection_domains.items():
            for key, dom in doms.items():
                want = per_domain(snap, key, idx.selections[sel])
                assert dom is not None and want is not None and np.array_equal(dom, want)
    # the node values read back through the fast paths (hostname columns, few domains all alike, all or no
    # domain positive) equal a plain walk over the nodes
    some = np.array([3, 1], dtype=np.int64)
    for key in (HOST, ZONE):
        codes = snap.labels.column(key)
        assert codes is not None
        size = len(snap.labels.vocab.get(key, {}))
        base = np.arange(1, size + 1, dtype=np.int64)
        for by_code in (base, 0 * base, base % 2, base - 1, 0 * base + 7, base[:1]):
            want = np.array([int(by_code[c]) if 0 <= c < len(by_code) else 0 for c in codes.tolist()], dtype=np.int64)
            for sel in (slice(None), some):
                assert np.array_equal(node_values(snap, key, by_code, sel), want[sel])
                assert np.array_equal(node_positive(snap, key, by_code, sel), want[sel] > 0)
            got = node_values(snap, key, by_code, slice(None))
            got += 1  # the answer is the caller's own
            assert np.array_equal(node_values(snap, key, by_code, slice(None)), want)
