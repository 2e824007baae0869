"""The resource scorers' node-by-node path (a few nodes, Python integers: ``scoring.SCALAR_NODES``) against their
array path (many nodes, numpy): every node's score must be the same to the bit, on random nodes and pods, for every
strategy and semantics, BalancedAllocation before and after 1.36, huge amounts, missing and unknown resources."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from packsched.api.objects import Container, Node, Pod
from packsched.config.types import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SEMANTICS_CURRENT,
    SEMANTICS_V1_16,
    SEMANTICS_V1_17,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from packsched.config.versions import parse_kube_version
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code
from packsched.plugins.noderesources.balanced_allocation import BalancedAllocation
from packsched.plugins.noderesources.fit import Fit
from packsched.plugins.noderesources.scoring import (
    SCALAR_NODES,
    SHARED_MIN,
    ResourceColumns,
    Scorer,
    _balanced_general,
    _term_matrices,
    allocatable_groups,
    balanced_matrix,
    balanced_score,
    gather,
    scalar_terms,
)

GPU = "nvidia.com/gpu"
RESOURCES = ("cpu", "memory", GPU, "example.com/foo", "not-a-resource")
STRATEGIES = [
    (LEAST_ALLOCATED, SEMANTICS_CURRENT),
    (MOST_ALLOCATED, SEMANTICS_CURRENT),
    (REQUESTED_TO_CAPACITY_RATIO, SEMANTICS_CURRENT),
    (REQUESTED_TO_CAPACITY_RATIO, SEMANTICS_V1_16),
    (REQUESTED_TO_CAPACITY_RATIO, SEMANTICS_V1_17),
]


class _NoDra:
    """The one thing BalancedAllocation asks its handle here: no DRA objects."""

    def dra(self) -> None:
        return None


def _amount(big: bool) -> st.SearchStrategy[int]:
    return st.integers(0, 2**62 if big else 64_000)


@st.composite
def cases(draw: st.DrawFn, full: bool = False) -> tuple[Snapshot, Any, list[ResourceSpec]]:
    """Random nodes, placed pods, an incoming pod and scored resources; ``full``: every node has every resource
    (allocatable at least 1) and amounts are small, as the scorer's matrix path needs."""
    big = False if full else draw(st.booleans())
    nodes = []
    for i in range(draw(st.integers(SCALAR_NODES + 1, SCALAR_NODES + 4))):
        if full:
            alloc = {r: max(1, draw(_amount(big))) for r in RESOURCES[:4]}
        else:
            alloc = {r: draw(_amount(big)) for r in RESOURCES[:4] if draw(st.booleans())}
        alloc["pods"] = 110
        nodes.append(Node(f"n{i}", allocatable=alloc, capacity=dict(alloc)))
    snap = Snapshot(nodes)
    for j in range(draw(st.integers(0, 12))):
        requests = {r: draw(_amount(big)) // 4 for r in RESOURCES[:4] if draw(st.booleans())}
        col = draw(st.integers(0, len(nodes) - 1))
        snap.add_pod(make_pod_info(Pod(f"p{j}", containers=[Container("c", requests)])), col)
    requests = {r: draw(_amount(big)) // 2 for r in RESOURCES[:4] if draw(st.booleans())}
    pod = make_pod_info(Pod("incoming", containers=[Container("c", requests)]))
    names = draw(st.lists(st.sampled_from(RESOURCES), min_size=1, max_size=4, unique=True))
    specs = [ResourceSpec(n, draw(st.integers(1, 5))) for n in names]
    return snap, pod, specs


def _scorer(strategy: tuple[str, str], specs: list[ResourceSpec], utils: list[int], data: st.DataObject) -> Scorer:
    """A scorer of ``strategy`` (type, semantics) over ``specs``; for RequestedToCapacityRatio a shape through
    ``utils`` with drawn scores, which may score 0 (such a resource is left out of the mean) and give halves to
    round."""
    kind, semantics = strategy
    points = [UtilizationShapePoint(u, data.draw(st.integers(0, 10))) for u in sorted(utils)]
    shape = RequestedToCapacityRatioParam(points) if kind == REQUESTED_TO_CAPACITY_RATIO else None
    return Scorer(ScoringStrategy(kind, specs, shape, semantics))


def _one_by_one(score: Any, n: int) -> list[int]:
    """Each node scored alone (the node-by-node path), in column order."""
    out: list[int] = []
    for col in range(n):
        out.extend(score(np.array([col], dtype=np.int64)).tolist())
    return out


@settings(max_examples=60, deadline=None)
@given(
    case=cases(),
    which=st.integers(0, len(STRATEGIES) - 1),
    utils=st.lists(st.integers(0, 100), min_size=1, max_size=4, unique=True),
    data=st.data(),
)
def test_a_scorer_scores_a_few_nodes_as_it_scores_many(
    case: tuple[Snapshot, Any, list[ResourceSpec]], which: int, utils: list[int], data: st.DataObject
) -> None:
    snap, pod, specs = case
    scorer = _scorer(STRATEGIES[which], specs, utils, data)
    every = np.arange(snap.n, dtype=np.int64)
    assert len(every) > SCALAR_NODES  # the array path
    assert _one_by_one(lambda cols: scorer.score(snap, pod, cols), snap.n) == scorer.score(snap, pod, every).tolist()


@settings(max_examples=60, deadline=None)
@given(
    case=cases(full=True),
    which=st.sampled_from([i for i, s in enumerate(STRATEGIES) if s[1] == SEMANTICS_CURRENT]),
    utils=st.lists(st.integers(0, 100), min_size=1, max_size=4, unique=True),
    data=st.data(),
)
def test_the_matrix_path_scores_as_the_per_resource_path(
    case: tuple[Snapshot, Any, list[ResourceSpec]], which: int, utils: list[int], data: st.DataObject
) -> None:
    """Where every node has every resource, ``Scorer.score`` reads all resources at once (``_score_matrix``): the
    same integers as combining the per-resource columns, for each strategy, any shape and any weights."""
    snap, pod, specs = case
    scorer = _scorer(STRATEGIES[which], specs, utils, data)
    every = np.arange(snap.n, dtype=np.int64)
    terms = scalar_terms(snap, pod, specs, non_zero=True)
    assert terms is not None
    per_resource = scorer.combine(gather(snap, pod, specs, every, non_zero=True), snap.n).tolist()
    if terms:  # some resource is scored: the matrix path answers
        matrix = scorer._score_matrix(snap, terms, every)
        assert matrix is not None
        assert matrix.tolist() == per_resource
    assert scorer.score(snap, pod, every).tolist() == per_resource


@settings(max_examples=60, deadline=None)
@given(case=cases(full=True), change=st.booleans())
def test_balanced_allocation_reads_two_resources_at_once_as_one_by_one(
    case: tuple[Snapshot, Any, list[ResourceSpec]], change: bool
) -> None:
    """``balanced_matrix`` (two resources every node has, read in one gather) gives the scores of the per-resource
    columns through ``balanced_score``, with and without 1.36's balance change."""
    snap, pod, specs = case
    every = np.arange(snap.n, dtype=np.int64)
    terms = scalar_terms(snap, pod, specs, non_zero=False)
    assert terms is not None
    columns = gather(snap, pod, specs, every, non_zero=False)
    matrix = balanced_matrix(snap, terms, every, change)
    if len(columns) != 2:
        assert matrix is None
        return
    assert matrix is not None
    with_pod = balanced_score(columns, snap.n)
    if change:
        without = [
            ResourceColumns(c.name, c.weight, c.alloc, c.requested - t[6]) for c, t in zip(columns, terms, strict=True)
        ]
        half = 50
        want = half + (half + with_pod - balanced_score(without, snap.n)) // 2
    else:
        want = with_pod
    assert matrix.tolist() == want.tolist()


@settings(max_examples=40, deadline=None)
@given(case=cases(), minor=st.sampled_from([35, 36]))
def test_balanced_allocation_scores_a_few_nodes_as_it_scores_many(
    case: tuple[Snapshot, Any, list[ResourceSpec]], minor: int
) -> None:
    snap, pod, specs = case
    names = [s.name for s in specs if s.name != "not-a-resource"][:2] or ["cpu"]
    args = NodeResourcesBalancedAllocationArgs([ResourceSpec(n, 1) for n in names])
    plugin = BalancedAllocation(args, cast(Any, _NoDra()), parse_kube_version(f"1.{minor}"))
    state = CycleState()
    every = np.arange(snap.n, dtype=np.int64)
    many = plugin.score(state, pod, snap, every).tolist()
    assert _one_by_one(lambda cols: plugin.score(state, pod, snap, cols), snap.n) == many


def test_a_resource_scoring_zero_is_left_out_node_by_node_too() -> None:
    # cpu: nothing requested, utilisation 0 scores 0 and leaves the mean; memory: half used scores 50
    nodes = [Node(f"n{i}", allocatable={"cpu": 1000, "memory": 1000, "pods": 10}) for i in range(SCALAR_NODES + 1)]
    snap = Snapshot(nodes)
    pod = make_pod_info(Pod("incoming", containers=[Container("c", {"cpu": 0, "memory": 500})]))
    shape = RequestedToCapacityRatioParam([UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)])
    specs = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
    scorer = Scorer(ScoringStrategy(REQUESTED_TO_CAPACITY_RATIO, specs, shape, SEMANTICS_CURRENT))
    every = np.arange(snap.n, dtype=np.int64)
    assert scorer.score(snap, pod, every).tolist() == [50] * snap.n
    assert _one_by_one(lambda cols: scorer.score(snap, pod, cols), snap.n) == [50] * snap.n


def _verdicts(rejections: list[Any], n: int) -> list[set[tuple[str, Any]]]:
    """Per selected node: the (reason, code) pairs that reject it."""
    out: list[set[tuple[str, Any]]] = [set() for _ in range(n)]
    for r in rejections:
        for i in np.flatnonzero(r.mask).tolist():
            out[i].add((r.reason, r.code))
    return out


@settings(max_examples=40, deadline=None)
@given(case=cases(), minor=st.sampled_from([33, 34, 36]), pods=st.integers(0, 3))
def test_the_fit_filter_judges_a_few_nodes_as_it_judges_many(
    case: tuple[Snapshot, Any, list[ResourceSpec]], minor: int, pods: int
) -> None:
    snap, pod, _specs = case
    snap.allowed_pods[:] = pods  # some nodes full
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(LEAST_ALLOCATED, [ResourceSpec("cpu", 1)]))
    plugin = Fit(args, cast(Any, _NoDra()), parse_kube_version(f"1.{minor}"))
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap).ok
    every = np.arange(snap.n, dtype=np.intp)
    many = _verdicts(plugin.filter(state, pod, snap, every), snap.n)
    few: list[set[tuple[str, Any]]] = []
    for col in range(0, snap.n, 2):  # two nodes at a time, in the node-by-node path
        sel = every[col : col + 2]
        few.extend(_verdicts(plugin.filter(state, pod, snap, sel), len(sel)))
    assert few == many
    # the verdicts alone (VerdictFilter, what the equivalence cache's catch-up asks), over many nodes and a few
    passing = [not reasons for reasons in many]
    assert plugin.passes(state, pod, snap, every).tolist() == passing
    assert [v for col in range(0, snap.n, 2) for v in plugin.passes(state, pod, snap, every[col : col + 2])] == passing
    assert plugin.passes(state, pod, snap, slice(None)).tolist() == passing


def test_the_fit_filter_node_by_node_lets_an_exact_fit_through() -> None:
    nodes = [Node(f"n{i}", allocatable={"cpu": 1000, "pods": 10}) for i in range(SCALAR_NODES + 1)]
    snap = Snapshot(nodes)
    snap.add_pod(make_pod_info(Pod("a", containers=[Container("c", {"cpu": 400})])), 0)
    snap.add_pod(make_pod_info(Pod("b", containers=[Container("c", {"cpu": 401})])), 1)
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(LEAST_ALLOCATED, [ResourceSpec("cpu", 1)]))
    plugin = Fit(args, cast(Any, _NoDra()), parse_kube_version("1.36"))
    pod = make_pod_info(Pod("incoming", containers=[Container("c", {"cpu": 600})]))
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap).ok
    for sel in (np.array([0, 1], dtype=np.intp), np.arange(snap.n, dtype=np.intp)):
        verdicts = _verdicts(plugin.filter(state, pod, snap, sel), len(sel))
        assert verdicts[:2] == [set(), {("Insufficient cpu", Code.UNSCHEDULABLE)}]
        assert plugin.passes(state, pod, snap, sel).tolist()[:2] == [True, False]


@st.composite
def allocatable_columns(draw: st.DrawFn) -> tuple[list[ResourceColumns], int]:
    """Per-resource columns where every node has every resource (allocatable > 0): requests below, at and above
    it, zero included."""
    n = draw(st.integers(1, 12))
    out: list[ResourceColumns] = []
    for i in range(draw(st.integers(0, 4))):
        alloc = draw(st.lists(st.integers(1, 64_000), min_size=n, max_size=n))
        req = draw(st.lists(st.integers(0, 80_000), min_size=n, max_size=n))
        out.append(
            ResourceColumns(f"r{i}", draw(st.integers(1, 100)), np.array(alloc, np.int64), np.array(req, np.int64))
        )
    return out, n


@settings(max_examples=150, deadline=None)
@given(allocatable_columns(), st.sampled_from([s for s in STRATEGIES if s[1] == SEMANTICS_CURRENT]), st.data())
def test_shorter_array_paths_equal_the_general_ones(
    drawn: tuple[list[ResourceColumns], int], strategy: tuple[str, str], data: st.DataObject
) -> None:
    """``Scorer.combine`` and ``balanced_score`` take fewer array passes where every node has every resource: the
    same integers as their general paths, for every strategy and any shape."""
    columns, n = drawn
    kind, semantics = strategy
    shape = None
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        scores = data.draw(st.lists(st.integers(0, 10), min_size=2, max_size=4))
        points = sorted(data.draw(st.sets(st.integers(0, 100), min_size=len(scores), max_size=len(scores))))
        shape = RequestedToCapacityRatioParam(
            [UtilizationShapePoint(u, v) for u, v in zip(points, scores, strict=True)]
        )
    scorer = Scorer(ScoringStrategy(kind, [ResourceSpec(c.name, c.weight) for c in columns], shape, semantics))
    assert scorer.combine(columns, n).tolist() == scorer._combine_general(columns, n).tolist()
    assert balanced_score(columns, n).tolist() == _balanced_general(columns, n).tolist()


@st.composite
def shaped_cases(draw: st.DrawFn) -> tuple[Snapshot, Any, list[ResourceSpec], np.ndarray]:
    """``SHARED_MIN`` nodes or more, each of one of a few shapes (allocatable), some holding pods (placed, and
    some removed again), an incoming pod, scored resources and the columns to score (every node or a subset)."""
    shapes = draw(
        st.lists(st.fixed_dictionaries({r: st.integers(1, 64_000) for r in RESOURCES[:4]}), min_size=1, max_size=3)
    )
    n = draw(st.integers(SHARED_MIN, SHARED_MIN + 40))
    nodes = []
    for i in range(n):
        alloc = dict(shapes[draw(st.integers(0, len(shapes) - 1))])
        alloc["pods"] = 110
        nodes.append(Node(f"n{i}", allocatable=alloc, capacity=dict(alloc)))
    snap = Snapshot(nodes)
    placed = []
    for j in range(draw(st.integers(0, n))):
        requests = {r: draw(st.integers(0, 16_000)) for r in RESOURCES[:4] if draw(st.booleans())}
        info = make_pod_info(Pod(f"p{j}", containers=[Container("c", requests)]))
        snap.add_pod(info, draw(st.integers(0, n - 1)))
        placed.append(info)
    for info in draw(st.lists(st.sampled_from(placed), unique_by=id, max_size=len(placed))) if placed else []:
        snap.remove_pod(info)  # a node whose pods all left holds none again
    requests = {r: draw(st.integers(0, 32_000)) for r in RESOURCES[:4] if draw(st.booleans())}
    pod = make_pod_info(Pod("incoming", containers=[Container("c", requests)]))
    names = draw(st.lists(st.sampled_from(RESOURCES[:4]), min_size=1, max_size=4, unique=True))
    specs = [ResourceSpec(name, draw(st.integers(1, 5))) for name in names]
    cols = np.array(
        sorted(draw(st.sets(st.integers(0, n - 1), min_size=SHARED_MIN)) if draw(st.booleans()) else range(n)),
        dtype=np.int64,
    )
    return snap, pod, specs, cols


@settings(max_examples=60, deadline=None)
@given(
    case=shaped_cases(),
    which=st.sampled_from([i for i, s in enumerate(STRATEGIES) if s[1] == SEMANTICS_CURRENT]),
    utils=st.lists(st.integers(0, 100), min_size=1, max_size=4, unique=True),
    change=st.booleans(),
    data=st.data(),
)
def test_empty_nodes_of_one_shape_scored_once_score_as_each_node_alone(
    case: tuple[Snapshot, Any, list[ResourceSpec], np.ndarray],
    which: int,
    utils: list[int],
    change: bool,
    data: st.DataObject,
) -> None:
    """``by_matrices`` scores the nodes that hold no pod once per allocatable: the scorer's and BalancedAllocation's
    scores are those of every node computed on its own (``_term_matrices`` over all the columns), whatever pods
    came and went."""
    snap, pod, specs, cols = case
    scorer = _scorer(STRATEGIES[which], specs, utils, data)
    fit_terms = scalar_terms(snap, pod, specs, non_zero=True)
    assert fit_terms is not None
    if fit_terms:
        matrices = _term_matrices(snap, fit_terms, cols)
        assert matrices is not None
        assert scorer._score_matrix(snap, fit_terms, cols).tolist() == scorer._matrix_scores(*matrices).tolist()
    balanced_terms = scalar_terms(snap, pod, specs, non_zero=False)
    assert balanced_terms is not None
    if len(balanced_terms) == 2:
        columns = gather(snap, pod, specs, cols, non_zero=False)
        with_pod = balanced_score(columns, len(cols))
        want = with_pod
        if change:
            without = [
                ResourceColumns(c.name, c.weight, c.alloc, c.requested - t[6])
                for c, t in zip(columns, balanced_terms, strict=True)
            ]
            want = 50 + (50 + with_pod - balanced_score(without, len(cols))) // 2
        got = balanced_matrix(snap, balanced_terms, cols, change)
        assert got is not None
        assert got.tolist() == want.tolist()


def test_allocatable_groups_name_equal_allocatables_and_keep_hash_collisions_apart() -> None:
    """Nodes share a group exactly when their allocatable is equal in every row; two different allocatables whose
    hash is the same (one row's 1 against the next row's 1,000,003) are not grouped together."""
    base = {"cpu": 4000, "memory": 8000, "pods": 110}
    nodes = [Node(f"n{i}", allocatable=dict(base), capacity=dict(base)) for i in range(3)]
    nodes.append(Node("other", allocatable={**base, "cpu": 2000}, capacity={**base, "cpu": 2000}))
    snap = Snapshot(nodes)
    first, second = snap.resources[-2], snap.resources[-1]
    a = {**base, first: 1, second: 0}
    b = {**base, first: 0, second: 1_000_003}
    snap.add_nodes([Node("a", allocatable=a, capacity=a), Node("b", allocatable=b, capacity=b)])
    assert snap.resources[-2:] == [first, second]
    groups = allocatable_groups(snap).tolist()
    assert groups[:3] == [0, 0, 0]
    assert groups[3] == 3
    assert sorted(groups[4:]) == [-1, 4] or sorted(groups[4:]) == [-1, 5]
