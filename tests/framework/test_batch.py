"""OpportunisticBatch (framework/batch.py) on its own: upstream's batch_test.go tables (kube-scheduler 1.35.4's
TestBatchBasic, 1.37.2's TestBatchBasic, TestBatchRescore and TestBatchRescoreChain), ported, with a profile
stand-in whose filter lets a node hold one "blocking" pod (uid starting with ``b``) and whose one score plugin
gives the re-scored node a fixed score."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from packsched.api.manifests import Cluster
from packsched.api.objects import Container, Pod
from packsched.config.loader import load_config_data
from packsched.config.versions import KubeVersion
from packsched.framework.batch import (
    EXPIRED,
    MAX_BATCH_AGE,
    NODE_NOT_FULL,
    FloatArray,
    OpportunisticBatch,
    SortedNodes,
    TieOrder,
    _insertion,
    best_first,
    sort_scored,
)
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import RejectGroup
from packsched.framework.interface import NodeSel
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.runtime import Framework
from packsched.framework.snapshot import BoolArray, IntArray
from packsched.framework.status import PluginError, Status
from packsched.plugins.helper.normalize import default_normalize_score
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation

NODES = ["n1", "n2", "n3", "n4"]
INDEX = {name: i for i, name in enumerate(NODES)}
SCORE = "configurableScore"
SEEN = "configurableScore/seen"
# ties by column (every test list here has distinct totals or says its order)
TIES = TieOrder(lambda cols: cols.astype(np.float64), per_node=True)


def info(uid: str, nominated: str = "") -> PodInfo:
    pod = Pod(uid, uid=uid, containers=[Container("c", {"cpu": 100})], nominated_node_name=nominated)
    return make_pod_info(pod, 0, KubeVersion(37))


@dataclass
class Profile:
    """The test framework: one filter (one blocking pod per node) and one score plugin."""

    placed: dict[str, list[str]] = field(default_factory=dict)  # node -> uids of its pods
    score: int = 0
    filter_err: bool = False
    pre_score_err: bool = False
    score_err: bool = False
    norm_err: bool = False
    flip_above: int | None = None  # NormalizeScore: max - score for every node when the max is above this

    def run_filters(self, state: CycleState, pod: PodInfo, sel: NodeSel) -> tuple[BoolArray, list[RejectGroup]]:
        if self.filter_err:
            raise PluginError("injected filter error")
        assert not isinstance(sel, slice)
        name = NODES[int(np.asarray(sel)[0])]
        blocked = pod.pod.uid.startswith("b") and any(u.startswith("b") for u in self.placed.get(name, []))
        return np.array([not blocked]), []

    def run_pre_score(self, state: CycleState, pod: PodInfo, cols: IntArray) -> Status:
        if self.pre_score_err:
            return Status.error("injected prescore error")
        state.write(SEEN, {NODES[c] for c in cols.tolist()})
        return Status()

    def run_raw_score(self, state: CycleState, pod: PodInfo, cols: IntArray) -> dict[str, IntArray]:
        if self.score_err:
            raise PluginError("injected score error")
        return {SCORE: np.full(len(cols), self.score, dtype=np.int64)}

    def top_normalized(self, state: CycleState) -> list[str] | None:
        return None if self.flip_above is not None else []

    def rescored_total(self, state: CycleState, pod: PodInfo, raw: Mapping[str, int], tops: Mapping[str, int]) -> int:
        if self.norm_err:
            raise PluginError("injected normalize error")
        return raw[SCORE]

    def normalize_scores(
        self, state: CycleState, pod: PodInfo, cols: IntArray, raw: Mapping[str, IntArray]
    ) -> IntArray:
        if self.norm_err:
            raise PluginError("injected normalize error")
        seen = state.read(SEEN)
        # upstream's plugin checks that NormalizeScore sees only nodes PreScore saw
        if seen is None or any(NODES[c] not in seen for c in cols.tolist()):
            raise PluginError("NormalizeScore called for a node PreScore did not see")
        scores = np.asarray(raw[SCORE], dtype=np.int64)
        if self.flip_above is not None and int(scores.max()) > self.flip_above:
            return scores.max() - scores
        return scores


def nodes(names: list[str] | None, raw: list[int] | None = None) -> SortedNodes | None:
    """A cached list in the given order (a test list, as upstream's testSortedScoredNodes)."""
    if names is None:
        return None
    n = len(names)
    scores = np.asarray(raw if raw is not None else list(range(n, 0, -1)), dtype=np.int64)
    return SortedNodes(np.array(names, dtype=object), scores, np.zeros(n), {SCORE: scores})


@dataclass
class Basic:
    first_uid: str
    first_sig: str
    first_ok: bool
    first_chosen: str
    first_others: list[str] | None
    second_uid: str
    second_sig: str
    second_chosen: str
    hint: str
    remaining: list[str] | None = None  # the batch after the second pod stored its results (None: empty)
    skip_pod: bool = False
    same_cycle: bool = False
    generic_workload: bool = False
    nominated: str = ""


# 1.35.4 TestBatchBasic (1.36.3 has the same table)
BASIC_135 = {
    "a second pod with the same signature gets a hint": Basic(
        "b-1", "sig", True, "n3", ["n1"], "b-2", "sig", "n1", "n1"
    ),
    "a second pod with a different signature doesn't get a hint": Basic(
        "a-1", "sig", True, "n3", ["n1"], "a-2", "sig2", "n1", ""
    ),
    "a second pod doesn't get a hint if it's not 1-pod-per-node": Basic(
        "a-1", "sig", True, "n3", ["n1"], "a-2", "sig", "n1", ""
    ),
    "pod doesn't get hint if previous pod didn't scheduled": Basic(
        "b-1", "sig", False, "n3", ["n1"], "b-2", "sig", "n1", ""
    ),
    "empty list": Basic("b-1", "sig", True, "n3", [], "b-2", "sig", "n4", ""),
    "nil list": Basic("b-1", "sig", True, "n3", None, "b-2", "sig", "n4", ""),
    "pod doesn't get hint because the previous pod is to a different profile": Basic(
        "b-1", "sig", True, "n3", ["n1"], "b-2", "sig", "n1", "", skip_pod=True
    ),
    "pod uses batch from preceding pod and leaves remaining batch to next pod": Basic(
        "b-1", "sig", True, "n3", ["n1", "n2"], "b-2", "sig", "n1", "n1", remaining=["n2"]
    ),
}

# 1.37.2 TestBatchBasic: the cases 1.35 does not have
BASIC_137 = {
    "same cycle (a pod-group cycle), GenericWorkload disabled": Basic(
        "b-1", "sig", True, "n3", ["n1"], "b-2", "sig", "n1", "", same_cycle=True
    ),
    "same cycle (a pod-group cycle), GenericWorkload enabled": Basic(
        "b-1", "sig", True, "n3", ["n1"], "b-2", "sig", "n1", "n1", same_cycle=True, generic_workload=True
    ),
    "a second pod with a nominated node does not get a hint": Basic(
        "b-1", "sig", True, "n3", ["n1"], "b-2", "sig", "n1", "", nominated="n1"
    ),
    "pod uses batch from preceding pod and leaves remaining batch to next pod": BASIC_135[
        "pod uses batch from preceding pod and leaves remaining batch to next pod"
    ],
}


def run_basic(tt: Basic, batch: OpportunisticBatch) -> None:
    profile = Profile()
    state = CycleState()
    assert batch.get_node_hint(profile, state, info(tt.first_uid), tt.first_sig, 1, 0.0, INDEX, TIES) == ""
    if tt.first_ok:
        batch.store_schedule_results(tt.first_sig, "", tt.first_chosen, nodes(tt.first_others), 1, 0.0)
    cycle = 3 if tt.skip_pod else 1 if tt.same_cycle else 2
    profile.placed = {tt.first_chosen: [tt.first_uid]}  # the first pod is on its node
    pod2 = info(tt.second_uid, tt.nominated)
    hint = batch.get_node_hint(profile, state, pod2, tt.second_sig, cycle, 0.0, INDEX, TIES)
    assert hint == tt.hint
    batch.store_schedule_results(tt.second_sig, hint, tt.second_chosen, None, cycle, 0.0)
    if tt.remaining is None:
        assert batch.state is None or len(batch.state.nodes) == 0
    else:
        assert batch.state is not None
        assert batch.state.signature == tt.second_sig
        assert batch.state.nodes.remaining().names.tolist() == tt.remaining


@pytest.mark.parametrize("case", list(BASIC_135))
def test_basic_135(case: str) -> None:
    run_basic(BASIC_135[case], OpportunisticBatch())


@pytest.mark.parametrize("case", list(BASIC_137))
def test_basic_137(case: str) -> None:
    tt = BASIC_137[case]
    run_basic(tt, OpportunisticBatch(rescore=True, same_cycle=tt.generic_workload, nominated_gives_up=True))


def test_135_takes_the_hint_out_for_a_nominated_pod() -> None:
    """1.35-1.36 ask for a hint for a pod with a nominated node too (the scheduler then tries the nominated
    node): the head of the list is handed out all the same; 1.37 gives up at once."""
    old, new = OpportunisticBatch(), OpportunisticBatch(rescore=True, nominated_gives_up=True)
    for batch in (old, new):
        batch.store_schedule_results("sig", "", "n3", nodes(["n1", "n2"]), 1, 0.0)
    profile = Profile(placed={"n3": ["b-1"]})
    pod = info("b-2", nominated="n4")
    assert old.get_node_hint(profile, CycleState(), pod, "sig", 2, 0.0, INDEX, TIES) == "n1"
    assert new.get_node_hint(profile, CycleState(), pod, "sig", 2, 0.0, INDEX, TIES) == ""


def test_a_batch_expires_after_max_batch_age_on_the_given_clock() -> None:
    profile = Profile(placed={"n3": ["b-1"]})
    for age, want in ((MAX_BATCH_AGE, "n1"), (MAX_BATCH_AGE + 0.001, "")):
        batch = OpportunisticBatch()
        batch.store_schedule_results("sig", "", "n3", nodes(["n1"]), 1, 10.0)
        assert batch.get_node_hint(profile, CycleState(), info("b-2"), "sig", 2, 10.0 + age, INDEX, TIES) == want
    assert batch.unusable[EXPIRED] == 1


def test_a_batch_without_signature_is_not_kept() -> None:
    batch = OpportunisticBatch()
    batch.store_schedule_results(None, "", "n3", nodes(["n1"]), 1, 0.0)
    assert batch.state is None


def test_135_gives_up_when_the_last_node_still_fits_and_counts_it() -> None:
    batch = OpportunisticBatch()
    batch.store_schedule_results("sig", "", "n3", nodes(["n1"]), 1, 0.0)
    assert batch.get_node_hint(Profile(), CycleState(), info("a-2"), "sig", 2, 0.0, INDEX, TIES) == ""
    assert batch.unusable[NODE_NOT_FULL] == 1
    assert batch.state is not None  # only counted, as upstream: the cycle's own results replace it


@dataclass
class Rescore:
    score: int = 0
    filter_err: bool = False
    pre_score_err: bool = False
    score_err: bool = False
    norm_err: bool = False
    chosen_missing: bool = False
    cached_missing: bool = False
    hint: str = ""
    remaining: tuple[str, ...] = ("n1",)


# 1.37.2 TestBatchRescore: n1 cached with raw score 50; n2 (the last chosen node, still feasible) re-scored
RESCORE = {
    "rescored node wins": Rescore(score=100, hint="n2", remaining=("n1",)),
    "rescored node loses": Rescore(score=10, hint="n1", remaining=("n2",)),
    "filter error gives no hint": Rescore(score=100, filter_err=True),
    "prescore error gives no hint": Rescore(pre_score_err=True),
    "score error gives no hint": Rescore(score_err=True),
    "normalize error gives no hint": Rescore(norm_err=True),
    "chosen node missing from lister gives no hint": Rescore(chosen_missing=True),
    "cached node missing from lister gives no hint": Rescore(score=100, cached_missing=True),
}


@pytest.mark.parametrize("case", list(RESCORE))
def test_rescore_137(case: str) -> None:
    tt = RESCORE[case]
    profile = Profile(
        score=tt.score,
        filter_err=tt.filter_err,
        pre_score_err=tt.pre_score_err,
        score_err=tt.score_err,
        norm_err=tt.norm_err,
    )
    batch = OpportunisticBatch(rescore=True)
    batch.get_node_hint(profile, CycleState(), info("a-1"), "sig", 1, 0.0, INDEX, TIES)
    batch.store_schedule_results("sig", "", "n2", nodes(["n1"], [50]), 1, 0.0)
    index = dict(INDEX)
    if tt.chosen_missing:
        index = {}
    elif tt.cached_missing:
        del index["n1"]
    profile.placed = {"n2": ["a-1"]}
    hint = batch.get_node_hint(profile, CycleState(), info("a-2"), "sig", 2, 0.0, index, TIES)
    assert hint == tt.hint
    assert batch.state is not None
    assert tuple(batch.state.nodes.remaining().names.tolist()) == tt.remaining


def test_rescore_chain_137() -> None:
    """Three pods: each time the last node (n2) still fits, is re-scored to 100 and beats n1's cached 50; n1
    stays in the batch for a fourth pod."""
    profile = Profile(score=100)
    batch = OpportunisticBatch(rescore=True)
    batch.get_node_hint(profile, CycleState(), info("a-1"), "sig", 1, 0.0, INDEX, TIES)
    batch.store_schedule_results("sig", "", "n2", nodes(["n1"], [50]), 1, 0.0)
    profile.placed = {"n2": ["a-1"]}
    hint2 = batch.get_node_hint(profile, CycleState(), info("a-2"), "sig", 2, 0.0, INDEX, TIES)
    assert hint2 == "n2"
    batch.store_schedule_results("sig", hint2, "n2", None, 2, 0.0)
    hint3 = batch.get_node_hint(profile, CycleState(), info("a-3"), "sig", 3, 0.0, INDEX, TIES)
    assert hint3 == "n2"
    assert batch.state is not None
    assert batch.state.nodes.remaining().names.tolist() == ["n1"]
    assert batch.batched_pods == 1  # pod 2 took its hint (pod 3 has not stored yet)


def test_a_rescore_that_reorders_the_cached_nodes_sorts_them_again() -> None:
    """The re-normalization changes the cached nodes' totals, and their order: n1 (raw 50) led n3 (raw 20);
    n2 re-scored to 100 flips every score (max - score), so n3 (80) now leads n1 (50), and n2 (0) is last. The
    list is sorted again, not n2 put into the old order."""
    profile = Profile(score=100, flip_above=60)
    batch = OpportunisticBatch(rescore=True)
    batch.store_schedule_results("sig", "", "n2", nodes(["n1", "n3"], [50, 20]), 1, 0.0)
    profile.placed = {"n2": ["a-1"]}
    assert batch.get_node_hint(profile, CycleState(), info("a-2"), "sig", 2, 0.0, INDEX, TIES) == "n3"
    assert batch.state is not None
    rest = batch.state.nodes.remaining()
    assert rest.names.tolist() == ["n1", "n2"]
    assert rest.totals.tolist() == [50, 0]
    assert rest.raw[SCORE].tolist() == [50, 100]


def test_a_rescore_that_keeps_the_cached_order_puts_the_node_in_place() -> None:
    """No re-normalization moves the cached nodes (four of them, two with equal totals ordered by key): the
    re-scored node goes where its total puts it, after the nodes with its total and a lower key, and the arrays
    move with it."""
    profile = Profile(score=30)
    batch = OpportunisticBatch(rescore=True)
    cached = SortedNodes(
        np.array(["n4", "n1", "n3"], dtype=object),
        np.array([40, 30, 10], dtype=np.int64),
        np.array([3.0, 0.0, 2.0]),
        {SCORE: np.array([40, 30, 10], dtype=np.int64)},
    )
    batch.store_schedule_results("sig", "", "n2", cached, 1, 0.0)
    profile.placed = {"n2": ["a-1"]}
    assert batch.get_node_hint(profile, CycleState(), info("a-2"), "sig", 2, 0.0, INDEX, TIES) == "n4"
    assert batch.state is not None
    rest = batch.state.nodes.remaining()
    assert rest.names.tolist() == ["n1", "n2", "n3"]  # n2 (30, key 1) after n1 (30, key 0)
    assert rest.totals.tolist() == [30, 30, 10]
    assert rest.raw[SCORE].tolist() == [30, 30, 10]
    assert rest.ties.tolist() == [0.0, 1.0, 2.0]
    assert rest.node_cols is not None and rest.node_cols.tolist() == [0, 1, 2]


def test_a_normalizing_rescore_of_a_cycles_list_sorts_it_again() -> None:
    """As above, on a list a cycle made (columns and the snapshot's index known, where a plugin without
    NormalizeScore would be re-scored in place): NormalizeScore moves the cached totals, so the list is sorted
    again."""
    names = np.array(NODES, dtype=object)
    raw = np.array([90, 50, 20], dtype=np.int64)  # n2 (the cycle's choice), n1, n3
    _, rest = sort_scored(names, np.array([1, 0, 2], dtype=np.int64), raw, {SCORE: raw.copy()}, TIES, INDEX)
    profile = Profile(score=100, flip_above=60)
    batch = OpportunisticBatch(rescore=True)
    batch.store_schedule_results("sig", "", "n2", rest, 1, 0.0)
    profile.placed = {"n2": ["a-1"]}
    assert batch.get_node_hint(profile, CycleState(), info("a-2"), "sig", 2, 0.0, INDEX, TIES) == "n3"
    assert batch.state is not None
    assert batch.state.nodes.remaining().names.tolist() == ["n1", "n2"]


def test_the_rescore_state_does_not_leak_into_the_cycle() -> None:
    profile = Profile(score=100)
    batch = OpportunisticBatch(rescore=True)
    batch.store_schedule_results("sig", "", "n2", nodes(["n1"], [50]), 1, 0.0)
    state = CycleState()
    assert batch.get_node_hint(profile, state, info("a-2"), "sig", 2, 0.0, INDEX, TIES) == "n2"
    assert state.read(SEEN) is None


def test_sort_scored_takes_the_best_and_orders_ties_by_key() -> None:
    cols = np.array([3, 0, 2, 1], dtype=np.int64)
    totals = np.array([5, 9, 9, 1], dtype=np.int64)
    raw = {SCORE: totals * 2}
    by_col = TieOrder(lambda c: c.astype(np.float64), per_node=True)
    names = np.array(["a", "b", "c", "d"], dtype=object)  # by column
    chosen, rest = sort_scored(names, cols, totals, raw, by_col)
    assert len(rest) == 3
    assert chosen == 0  # total 9, the lower key of the two nines
    left = rest.remaining()
    assert left.names.tolist() == ["c", "d", "b"]
    assert left.totals.tolist() == [9, 5, 1]
    assert left.raw[SCORE].tolist() == [18, 10, 2]
    assert rest.pop() == "c" and len(rest) == 2


def test_equal_totals_and_keys_keep_the_chosen_node_out_of_the_list() -> None:
    same = TieOrder(lambda c: np.zeros(len(c)), per_node=False)
    names = np.array([f"n{i}" for i in range(8)], dtype=object)
    cols = np.array([7, 5, 6], dtype=np.int64)
    chosen, rest = sort_scored(names, cols, np.array([4, 4, 4], dtype=np.int64), {}, same)
    assert chosen == 7
    assert rest.remaining().names.tolist() == ["n5", "n6"]


def test_random_tie_keys_choose_uniformly_among_the_best() -> None:
    rng = np.random.default_rng(7)
    ties = TieOrder(lambda c: rng.random(len(c)), per_node=False)
    cols = np.arange(4, dtype=np.int64)
    totals = np.array([7, 7, 7, 3], dtype=np.int64)
    names = np.array(list("abcd"), dtype=object)
    picks = [sort_scored(names, cols, totals, {}, ties)[0] for _ in range(600)]
    counts = np.bincount(picks, minlength=4)
    assert counts[3] == 0
    assert counts[:3].min() > 150  # about 200 each


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 3)), min_size=1, max_size=30),
    st.sampled_from(["no", "totals", "totals and keys"]),
)
def test_inserting_the_rescored_node_is_the_stable_sort(pairs: list[tuple[int, int]], presorted: str) -> None:
    """_rescore_last's shortcut: where the cached nodes are still in order (highest total, then lowest key), the
    rescored node (the last) goes where a stable lexsort of them all puts it; otherwise it answers None. Few
    distinct totals and keys, so that equal pairs and equal totals with different keys both come up."""
    *cached, last = pairs
    if presorted == "totals":
        cached.sort(key=lambda pair: -pair[0])
    elif presorted == "totals and keys":
        cached = [cached[i] for i in np.lexsort(([k for _, k in cached], [-t for t, _ in cached]))]
    totals = np.array([t for t, _ in cached] + [last[0]], dtype=np.int64)
    keys = np.array([k for _, k in cached] + [last[1]], dtype=np.float64)
    order = np.lexsort((keys, -totals))
    in_order = order[order != len(cached)].tolist() == list(range(len(cached)))
    at = _insertion(totals, keys)
    if at is None:
        assert not in_order
        return
    assert in_order
    assert int(np.flatnonzero(order == len(cached))[0]) == at
    if presorted == "totals and keys":  # the caller's shortcut: a list's own order, not checked again
        assert _insertion(totals, keys, in_order=True) == at


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.integers(0, 5), st.integers(-(2**40), 2**40)),
            st.one_of(st.integers(0, 6).map(float), st.floats(0, 1, exclude_max=True)),
        ),
        max_size=40,
    )
)
def test_best_first_is_the_lexsort(pairs: list[tuple[int, float]]) -> None:
    """The batch's sort against the lexsort it replaces: few and far-apart totals (the radix and the plain stable
    sort), keys that repeat (the lexsort itself) and keys that do not."""
    totals = np.array([t for t, _ in pairs], dtype=np.int64)
    ties = np.array([k for _, k in pairs], dtype=np.float64)
    assert best_first(totals, ties).tolist() == np.lexsort((ties, -totals)).tolist()


@dataclass
class Alike:
    """A profile stand-in for many nodes: every node fits, one score plugin gives the re-scored node ``score``;
    its NormalizeScore: none, or DefaultNormalizeScore (``top``: "up" or "reversed"). ``plain``: whether the
    profile says so (the in-place re-scoring) or not (the rebuilt list)."""

    plain: bool
    score: int = 0
    top: str = ""

    def _normalize(self, scores: IntArray) -> IntArray:
        return default_normalize_score(scores, reverse=self.top == "reversed") if self.top else scores

    def run_filters(self, state: CycleState, pod: PodInfo, sel: NodeSel) -> tuple[BoolArray, list[RejectGroup]]:
        return np.ones(1, dtype=bool), []

    def run_pre_score(self, state: CycleState, pod: PodInfo, cols: IntArray) -> Status:
        return Status()

    def run_raw_score(self, state: CycleState, pod: PodInfo, cols: IntArray) -> dict[str, IntArray]:
        return {SCORE: np.full(len(cols), self.score, dtype=np.int64)}

    def normalize_scores(
        self, state: CycleState, pod: PodInfo, cols: IntArray, raw: Mapping[str, IntArray]
    ) -> IntArray:
        return self._normalize(np.asarray(raw[SCORE], dtype=np.int64))

    def top_normalized(self, state: CycleState) -> list[str] | None:
        return ([SCORE] if self.top else []) if self.plain else None

    def rescored_total(self, state: CycleState, pod: PodInfo, raw: Mapping[str, int], tops: Mapping[str, int]) -> int:
        if not self.top:
            return raw[SCORE]
        return int(self._normalize(np.array([raw[SCORE], tops[SCORE]], dtype=np.int64))[0])


@settings(max_examples=150, deadline=None)
@example(3, [1, 1], [2, 0], "node", "up", 0)  # the re-scored node raises the top; then the list's top stays 2
@given(
    st.integers(2, 12),
    st.lists(st.integers(0, 3), min_size=2, max_size=12),
    st.lists(st.integers(0, 4), min_size=1, max_size=5),
    st.sampled_from(["node", "drawn", "equal"]),
    st.sampled_from(["", "up", "reversed"]),
    st.integers(0, 2**31),
)
def test_rescoring_in_place_gives_the_rebuilt_list(
    n: int, scores: list[int], rescored: list[int], keys: str, top: str, seed: int
) -> None:
    """1.37's re-scoring, pod after pod on one batch: put back in place (a profile without NormalizeScore) and
    rebuilt (the general path) give the same hints and the same lists, with few totals (ties everywhere), keys
    per node, drawn (the same draws on both sides) or all equal, and a plugin without NormalizeScore or with
    DefaultNormalizeScore (either way): the re-scored node's raw score may raise the highest, and a taken head
    may have held it, where only the rebuilt list is right."""
    names = np.array([f"m{i}" for i in range(n)], dtype=object)
    index = {name: i for i, name in enumerate(names.tolist())}
    cols = np.arange(n, dtype=np.int64)
    raw = np.array([scores[i % len(scores)] for i in range(n)], dtype=np.int64)
    totals = Alike(True, top=top)._normalize(raw)
    lists = []
    for plain in (True, False):
        rng = np.random.default_rng(seed)
        ties = {
            "node": TieOrder(lambda c: c.astype(np.float64), True),
            "drawn": TieOrder(lambda c, g=rng: g.random(len(c)), False),
            "equal": TieOrder(lambda c: np.zeros(len(c)), False),  # equal totals and keys: the stable order
        }[keys]
        chosen, rest = sort_scored(names, cols, totals, {SCORE: raw.copy()}, ties, index)
        batch = OpportunisticBatch(rescore=True)
        batch.store_schedule_results("sig", "", str(names[chosen]), rest, 1, 0.0)
        profile = Alike(plain, top=top)
        seen: list[object] = []
        for cycle, score in enumerate(rescored, start=2):
            if batch.state is None or not len(batch.state.nodes):
                break
            profile.score = score
            hint = batch.get_node_hint(profile, CycleState(), info(f"a-{cycle}"), "sig", cycle, 0.0, index, ties)
            left = batch.state.nodes.remaining()
            assert left.node_cols is not None
            seen.append((hint, left.names.tolist(), left.totals.tolist(), left.ties.tolist(),
                         left.raw[SCORE].tolist(), left.node_cols.tolist()))  # fmt: skip
            batch.store_schedule_results("sig", hint, hint, None, cycle, 0.0)
        lists.append(seen)
    assert lists[0] == lists[1]


def test_a_node_added_since_the_list_was_made_renumbers_the_name_keys() -> None:
    """Keys that are name ranks change when a node joins (the index grows in place): m0 joins before m1 is
    re-scored a second time, so m1's fresh key (1) would tie with m2's kept one (1, from before m0); the list is
    judged on fresh keys, and m1 (equal totals, the lower name) leads again."""
    index = {f"m{i}": i - 1 for i in range(1, 5)}

    def ranks(cols: IntArray) -> FloatArray:
        order = sorted(index, key=lambda name: name)
        rank = {index[name]: r for r, name in enumerate(order)}
        return np.array([rank[int(c)] for c in cols], dtype=np.float64)

    by_name = TieOrder(ranks, per_node=True)
    names = np.array(list(index), dtype=object)
    totals = np.full(4, 7, dtype=np.int64)
    chosen, rest = sort_scored(names, np.arange(4, dtype=np.int64), totals, {SCORE: totals.copy()}, by_name, index)
    assert names[chosen] == "m1"
    batch = OpportunisticBatch(rescore=True)
    batch.store_schedule_results("sig", "", "m1", rest, 1, 0.0)
    profile = Alike(plain=True, score=7)
    assert batch.get_node_hint(profile, CycleState(), info("a-2"), "sig", 2, 0.0, index, by_name) == "m1"
    batch.store_schedule_results("sig", "m1", "m1", None, 2, 0.0)  # the list is sorted now, on m0-less ranks
    index["m0"] = 4
    assert batch.get_node_hint(profile, CycleState(), info("a-3"), "sig", 3, 0.0, index, by_name) == "m1"
    assert batch.state is not None
    assert batch.state.nodes.remaining().names.tolist() == ["m2", "m3", "m4"]


def _profile_framework(disabled: list[str]) -> Framework:
    """The default profile (kube-scheduler's newest release) without ``disabled``, on a two-node cluster."""
    from helpers import node as make_node

    registry = in_tree_registry()
    data = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": [
            {"name": n} for n in disabled
        ]}}}],
    }  # fmt: skip
    cfg = load_config_data(data, "test", set(registry))
    nodes = [make_node("a", cpu=4000, memory=8 << 30), make_node("b", cpu=4000, memory=8 << 30)]
    sim = Simulation(Cluster(nodes=nodes, pods=[]), cfg, registry, seed=1)
    return sim.scheduler.frameworks["default-scheduler"]


def test_top_normalized_names_the_plugins_normalized_by_their_top_and_none_else() -> None:
    fwk = _profile_framework(["PodTopologySpread", "InterPodAffinity"])
    assert fwk.top_normalized(CycleState()) == ["TaintToleration", "NodeAffinity", "DynamicResources"]
    skipped = CycleState()
    skipped.skip_score.update({"NodeAffinity", "DynamicResources"})
    assert fwk.top_normalized(skipped) == ["TaintToleration"]
    # InterPodAffinity's NormalizeScore reads more than the top (the lowest score too): no shortcut
    assert _profile_framework(["PodTopologySpread"]).top_normalized(CycleState()) is None
    no_scores = CycleState()
    no_scores.skip_score.update(s.plugin.name for s in fwk.scores)
    assert fwk.top_normalized(no_scores) == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 100), st.integers(0, 6), st.integers(0, 4)), min_size=1, max_size=8))
def test_rescored_total_is_the_nodes_normalized_total(rows: list[tuple[int, int, int]]) -> None:
    """For every node of a set normalized together, ``rescored_total`` from its own raw scores and the set's
    highest ones gives the total ``normalize_scores`` gives it: NodeResourcesFit without NormalizeScore,
    TaintToleration (reversed) and NodeAffinity by their top, the weights applied."""
    fwk = _profile_framework(["PodTopologySpread", "InterPodAffinity"])
    state = CycleState()
    active = [s.plugin.name for s in fwk.scores]
    state.skip_score.update(n for n in active if n not in ("NodeResourcesFit", "TaintToleration", "NodeAffinity"))
    raw = {
        "NodeResourcesFit": np.array([r[0] for r in rows], dtype=np.int64),
        "TaintToleration": np.array([r[1] for r in rows], dtype=np.int64),
        "NodeAffinity": np.array([r[2] for r in rows], dtype=np.int64),
    }
    pod_info = info("a-1")
    totals = fwk.normalize_scores(state, pod_info, np.arange(len(rows), dtype=np.int64), raw)
    assert fwk.top_normalized(state) == ["TaintToleration", "NodeAffinity"]
    tops = {k: int(v.max()) for k, v in raw.items()}
    for i in range(len(rows)):
        one = {k: int(v[i]) for k, v in raw.items()}
        assert fwk.rescored_total(state, pod_info, one, tops) == int(totals[i])


@pytest.mark.parametrize("bad", [-1, 101])
def test_rescored_total_fails_as_normalize_scores_on_a_score_out_of_range(bad: int) -> None:
    fwk = _profile_framework(["PodTopologySpread", "InterPodAffinity"])
    state = CycleState()
    state.skip_score.update(s.plugin.name for s in fwk.scores if s.plugin.name != "NodeResourcesFit")
    pod_info = info("a-1")
    with pytest.raises(PluginError) as whole:
        fwk.normalize_scores(state, pod_info, np.arange(1, dtype=np.int64), {"NodeResourcesFit": np.array([bad])})
    with pytest.raises(PluginError) as one:
        fwk.rescored_total(state, pod_info, {"NodeResourcesFit": bad}, {})
    assert str(one.value) == str(whole.value)
