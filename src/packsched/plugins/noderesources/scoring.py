"""Resource scoring strategies over arrays of nodes: LeastAllocated, MostAllocated, RequestedToCapacityRatio
(and, for RequestedToCapacityRatio, the older releases' arithmetic), plus BalancedAllocation's fraction spread.

Everything is integer arithmetic with upstream's rounding: truncation toward zero inside the shape,
round-half-away-from-zero for the RequestedToCapacityRatio mean, floor for the other two means.
See ``shared/spec/requested-to-capacity-ratio.md`` §4-§6.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from packsched.api.dra import DeviceClass, DraObjects
from packsched.api.resources import CPU, MEMORY, is_scalar_resource, is_scored_resource
from packsched.backend.dra.extended import backed_resources, class_for, device_totals
from packsched.config.types import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SEMANTICS_CURRENT,
    ResourceSpec,
    ScoringStrategy,
)
from packsched.framework.interface import MAX_NODE_SCORE, Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.framework.status import PluginError

# the shape function is shared with VolumeBinding's score (upstream's plugins/helper/shape_score.go)
from packsched.plugins.helper.shape import (
    MAX_UTILIZATION,
    Points,
    broken_linear,
    scaled_points,
)


def shape_table(points: Points) -> IntArray:
    """f(p) for every integer utilisation 0..100: the shape becomes one array lookup per node."""
    return np.array([broken_linear(points, p) for p in range(MAX_UTILIZATION + 1)], dtype=np.int64)


def scaled_utilization(requested: int, capacity: int, max_value: int = MAX_UTILIZATION) -> int:
    """floor(requested * max / capacity) clamped to [0, max]; exact for any size (the overflow-safe helper)."""
    if capacity <= 0 or requested <= 0:
        return 0
    if requested >= capacity:
        return max_value
    return requested * max_value // capacity


def _as_exact(a: IntArray) -> IntArray:
    """The same numbers as Python integers, so that ``x * 100`` cannot overflow."""
    return a.astype(object)


@dataclass
class ResourceColumns:
    """For one configured resource: its weight, and per node the allocatable and the requested total
    including the incoming pod (``None`` when the resource is skipped for this pod entirely)."""

    name: str
    weight: int
    alloc: IntArray
    requested: IntArray


def requests_key(pod: PodInfo, dra: DraObjects | None) -> Hashable | None:
    """Everything of the pod the resource plugins read (NodeLocalPlugin's key): its requests and the amounts it
    counts for scoring. None when a DeviceClass serves one of its resources (``dra``: DRA-backed extended
    resources are on): devices are state beyond a node's sums."""
    if dra is not None and dra.classes and backed_resources(dra, pod.requests):
        return None
    key = pod.__dict__.get("_requests_key")  # kept on the PodInfo: several plugins ask, and its amounts never change
    if key is None:
        key = pod.__dict__["_requests_key"] = (
            frozenset(pod.requests.items()),
            pod.non_zero_cpu,
            pod.non_zero_memory,
            pod.incoming_non_zero,
        )
    return key


def pod_request_for(pod: PodInfo, name: str, non_zero: bool) -> int:
    """What the pod being scheduled asks of ``name``, as the scorer counts it."""
    if non_zero and name in (CPU, MEMORY):
        incoming = pod.incoming_non_zero
        if incoming is not None:
            return incoming[0] if name == CPU else incoming[1]
        return pod.non_zero_cpu if name == CPU else pod.non_zero_memory
    return pod.requests.get(name, 0)


def gather(
    snap: Snapshot,
    pod: PodInfo,
    resources: Sequence[ResourceSpec],
    cols: IntArray,
    *,
    non_zero: bool,
    legacy: bool = False,
    dra: DraObjects | None = None,
) -> list[ResourceColumns]:
    """The per-resource (allocatable, requested + pod) columns a scorer combines, with upstream's skips:
    a scalar resource the pod does not request is skipped (current versions only), a name that is not a
    resource the scorer knows reads as allocatable 0 (skipped now, scored as full in v1.16-v1.21).

    ``dra`` (DRAExtendedResource on): a requested resource that a DeviceClass serves is counted, on the nodes
    whose allocatable lacks it, from the class's devices there (allocatable: the devices; requested: those
    allocated, plus the pod's request)."""
    out: list[ResourceColumns] = []
    for spec in resources:
        name = spec.name
        pod_req = pod_request_for(pod, name, non_zero)
        if not legacy and pod_req == 0 and is_scalar_resource(name):
            continue
        row = snap.row.get(name)
        cls = class_for(dra, name) if dra is not None and not legacy and pod_req > 0 else None
        if cls is not None and dra is not None:
            out.append(_dra_columns(snap, dra, cls, spec, row, cols, pod_req))
            continue
        if not is_scored_resource(name) or row is None:
            if legacy:
                zeros = np.zeros(len(cols), dtype=np.int64)
                out.append(ResourceColumns(name, spec.weight, zeros, zeros + pod_req))
            continue
        alloc = snap.alloc[row, cols]
        if non_zero and name == CPU:
            node_req = snap.nonzero[0, cols]
        elif non_zero and name == MEMORY:
            node_req = snap.nonzero[1, cols]
        else:
            node_req = snap.requested[row, cols]
        out.append(ResourceColumns(name, spec.weight, alloc, node_req + pod_req))
    return out


# Up to this many nodes, the scorers below (and NodeResourcesFit's filter) work node by node with Python integers
# (``scalar_terms``): after a bind the equivalence cache filters and scores again the one or few nodes changed since
# a class was last used, where numpy's fixed cost per call outweighs the arithmetic (measured on the 2-core machine:
# the array path is slower below about ten nodes). The results are the array path's to the bit
# (tests/plugins/noderesources/test_scalar_scoring.py).
SCALAR_NODES = 8

# One resource as the node-by-node scorers read it: its name and weight, the snapshot matrix and row of its
# allocatable (None: the name is no resource the scorer knows, read as 0 in the legacy arithmetic), the matrix and
# row of what the node's pods request, and what the incoming pod adds.
ScalarTerm = tuple[str, int, IntArray | None, int, IntArray | None, int, int]


def scalar_terms(
    snap: Snapshot,
    pod: PodInfo,
    resources: Sequence[ResourceSpec],
    *,
    non_zero: bool,
    legacy: bool = False,
    dra: DraObjects | None = None,
) -> list[ScalarTerm] | None:
    """``gather``'s resources, with its skips, for reading node by node (``node_amounts``); None where a
    DeviceClass serves one of them (those are counted from devices: the array path's job)."""
    out: list[ScalarTerm] = []
    for spec in resources:
        name = spec.name
        pod_req = pod_request_for(pod, name, non_zero)
        if not legacy and pod_req == 0 and is_scalar_resource(name):
            continue
        if dra is not None and not legacy and pod_req > 0 and class_for(dra, name) is not None:
            return None
        row = snap.row.get(name)
        if not is_scored_resource(name) or row is None:
            if legacy:
                out.append((name, spec.weight, None, 0, None, 0, pod_req))
            continue
        if non_zero and name == CPU:
            out.append((name, spec.weight, snap.alloc, row, snap.nonzero, 0, pod_req))
        elif non_zero and name == MEMORY:
            out.append((name, spec.weight, snap.alloc, row, snap.nonzero, 1, pod_req))
        else:
            out.append((name, spec.weight, snap.alloc, row, snap.requested, row, pod_req))
    return out


def node_amounts(terms: Sequence[ScalarTerm], col: int) -> list[tuple[int, int, int]]:
    """Per term on node ``col``: (weight, allocatable, requested including the incoming pod), Python integers."""
    out: list[tuple[int, int, int]] = []
    for _name, weight, alloc_m, arow, used_m, urow, pod_req in terms:
        alloc = alloc_m.item(arow, col) if alloc_m is not None else 0
        used = used_m.item(urow, col) if used_m is not None else 0
        out.append((weight, alloc, used + pod_req))
    return out


def _dra_columns(
    snap: Snapshot,
    dra: DraObjects,
    cls: DeviceClass,
    spec: ResourceSpec,
    row: int | None,
    cols: IntArray,
    pod_req: int,
) -> ResourceColumns:
    """upstream calculateResourceAllocatableRequest for a DRA-backed resource: a node advertising it keeps its
    allocatable and requests; a node advertising none counts the class's devices, when it has any."""
    if row is None:
        alloc = np.zeros(len(cols), dtype=np.int64)
        node_req = np.zeros(len(cols), dtype=np.int64)
    else:
        alloc = snap.alloc[row, cols].copy()
        node_req = snap.requested[row, cols].copy()
    lacking = np.flatnonzero(alloc == 0)
    if len(lacking):
        nodes = [snap.nodes[int(c)] for c in cols[lacking].tolist()]
        capacity, used = device_totals(dra, cls, nodes, dra.allocated_devices())
        alloc[lacking] = capacity
        node_req[lacking] = np.where(capacity > 0, used, node_req[lacking])
    return ResourceColumns(spec.name, spec.weight, alloc, node_req + pod_req)


class Scorer:
    """One configured strategy, evaluated for many nodes at once. With a ``handle`` (DRAExtendedResource on),
    resources that DeviceClasses serve are counted from the devices on nodes that do not advertise them."""

    def __init__(self, strategy: ScoringStrategy, handle: Handle | None = None) -> None:
        self.handle = handle
        self.type = strategy.type
        self.resources = list(strategy.resources)
        self.semantics = strategy.semantics
        self.table: IntArray | None = None
        self._shape: list[int] = []  # the table as Python integers, for the node-by-node path
        self._nonnegative = True  # every value of the table is >= 0 (``combine``'s shorter path relies on it)
        if self.type == REQUESTED_TO_CAPACITY_RATIO:
            shape = strategy.requested_to_capacity_ratio.shape if strategy.requested_to_capacity_ratio else []
            if not shape:
                raise ValueError("RequestedToCapacityRatio needs a shape with at least one point")
            self.table = shape_table(scaled_points(shape, self.semantics))
            self._shape = [int(v) for v in self.table.tolist()]
            self._nonnegative = min(self._shape) >= 0  # validation keeps shape scores in 0..10
        elif self.type not in (LEAST_ALLOCATED, MOST_ALLOCATED):
            raise ValueError(f"scoring strategy type {self.type!r} is not supported")

    @property
    def legacy(self) -> bool:
        return self.type == REQUESTED_TO_CAPACITY_RATIO and self.semantics != SEMANTICS_CURRENT

    def score(self, snap: Snapshot, pod: PodInfo, cols: IntArray) -> IntArray:
        if not self.resources:
            raise PluginError("resources not found")
        dra = self.handle.dra() if self.handle is not None else None
        if len(cols) <= SCALAR_NODES:
            terms = scalar_terms(snap, pod, self.resources, non_zero=True, legacy=self.legacy, dra=dra)
            if terms is not None:
                return np.array([self.score_node(node_amounts(terms, c)) for c in cols.tolist()], dtype=np.int64)
        if not snap.big and not self.legacy and self._nonnegative and len(cols):
            terms = scalar_terms(snap, pod, self.resources, non_zero=True, dra=dra)
            if terms:
                scores = self._score_matrix(snap, terms, cols)
                if scores is not None:
                    return scores
        columns = gather(snap, pod, self.resources, cols, non_zero=True, legacy=self.legacy, dra=dra)
        return self.combine(columns, len(cols), exact=snap.big)

    def _score_matrix(self, snap: Snapshot, terms: Sequence[ScalarTerm], cols: IntArray) -> IntArray | None:
        """``combine``'s allocatable path (``_combine_allocatable``) for every resource at once, over resources x
        nodes matrices (a gather per snapshot matrix, not two a resource; the equivalence cache's catch-up scores
        a few dozen nodes, where numpy's fixed cost per call is most of the work), empty nodes of one allocatable
        scored once (``by_matrices``). The same integers, as the sums over resources are exact in any order. None
        where a node lacks a resource's allocatable: the per-resource path then decides (it leaves such a resource
        out on that node)."""
        return by_matrices(snap, terms, cols, self._matrix_scores)

    def _matrix_scores(self, alloc: IntArray, used: IntArray, pod_req: IntArray, weight: IntArray) -> IntArray:
        """``_score_matrix``'s arithmetic on ``_term_matrices``' matrices."""
        req = used + pod_req
        if self.type == REQUESTED_TO_CAPACITY_RATIO:
            assert self.table is not None
            util = np.where(req > alloc, MAX_UTILIZATION, np.maximum(req, 0) * MAX_UTILIZATION // alloc)
            per = self.table[util]  # never negative here (``_nonnegative``)
            num = (per * weight).sum(axis=0)
            safe = np.maximum(((per > 0) * weight).sum(axis=0), 1)
            # math.Round(num / den), half away from zero; a node where every resource scored 0 has num 0: 0
            return np.asarray((2 * num + safe) // (2 * safe), dtype=np.int64)
        if self.type == LEAST_ALLOCATED:
            per = np.where(req > alloc, 0, (alloc - req) * MAX_NODE_SCORE // alloc)
        else:
            per = np.minimum(req, alloc) * MAX_NODE_SCORE // alloc
        den = int(weight.sum())
        num = (per * weight).sum(axis=0)
        return np.asarray(num // den if den > 0 else num, dtype=np.int64)

    def score_node(self, amounts: Sequence[tuple[int, int, int]]) -> int:
        """``combine`` for one node from its (weight, allocatable, requested) per resource, in Python integers
        (exact for any size, as ``combine`` with ``exact``)."""
        rtcr = self.type == REQUESTED_TO_CAPACITY_RATIO
        legacy = self.legacy
        num = den = 0
        for weight, alloc, req in amounts:
            if not legacy and alloc <= 0:
                continue
            per = self.resource_score_node(alloc, req)
            if rtcr and per <= 0:
                continue  # a resource scoring 0 is dropped from both sums
            num += per * weight
            den += weight
        if den <= 0:
            return 0
        return (2 * num + den) // (2 * den) if rtcr else num // den

    def resource_score_node(self, alloc: int, req: int) -> int:
        """``resource_score`` for one node and resource."""
        cap = alloc if alloc > 0 else 1
        if self.type == LEAST_ALLOCATED:
            return 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // cap
        if self.type == MOST_ALLOCATED:
            return min(req, alloc) * MAX_NODE_SCORE // cap
        if self.legacy:
            util = (
                MAX_UTILIZATION
                if alloc == 0 or req > alloc
                else MAX_UTILIZATION - (alloc - req) * MAX_UTILIZATION // cap
            )
        else:
            util = MAX_UTILIZATION if req > alloc else max(req, 0) * MAX_UTILIZATION // cap
        return self._shape[util]

    def combine(self, columns: Sequence[ResourceColumns], n: int, exact: bool = False) -> IntArray:
        """The node scores from per-resource columns; ``exact`` computes with Python integers (huge amounts)."""
        if not exact and not self.legacy and self._nonnegative and n and all(int(c.alloc.min()) > 0 for c in columns):
            return self._combine_allocatable(columns, n)
        return self._combine_general(columns, n, exact)

    def _combine_general(self, columns: Sequence[ResourceColumns], n: int, exact: bool = False) -> IntArray:
        num = np.zeros(n, dtype=np.int64)
        den = np.zeros(n, dtype=np.int64)
        for c in columns:
            per = self.resource_score(c, exact)
            counted = (c.alloc > 0) if not self.legacy else np.ones(n, dtype=bool)
            if self.type == REQUESTED_TO_CAPACITY_RATIO:
                counted = counted & (per > 0)  # a resource scoring 0 is dropped from both sums
            num += np.where(counted, per * c.weight, 0)
            den += np.where(counted, c.weight, 0)
        safe = np.where(den > 0, den, 1)
        if self.type == REQUESTED_TO_CAPACITY_RATIO:
            # math.Round(num / den), half away from zero; all values are >= 0
            result = (2 * num + safe) // (2 * safe)
        else:
            result = num // safe
        return np.where(den > 0, result, 0).astype(np.int64)

    def _combine_allocatable(self, columns: Sequence[ResourceColumns], n: int) -> IntArray:
        """``combine`` where every node has every resource (allocatable > 0) and amounts fit in int64, in fewer
        array passes (the equivalence cache's catch-up calls it for a few nodes at numpy's fixed cost per pass):
        no resource is left out for lacking allocatable, and a resource scoring 0 adds 0 to the numerator, so
        only the denominator needs the test. The same integers as ``combine``'s general path."""
        num = np.zeros(n, dtype=np.int64)
        if self.type != REQUESTED_TO_CAPACITY_RATIO:
            den_all = 0
            for c in columns:
                alloc, req = c.alloc, c.requested
                if self.type == LEAST_ALLOCATED:
                    per = np.where(req > alloc, 0, (alloc - req) * MAX_NODE_SCORE // alloc)
                else:
                    per = np.minimum(req, alloc) * MAX_NODE_SCORE // alloc
                num += per * c.weight
                den_all += c.weight
            return num // den_all if den_all > 0 else num
        assert self.table is not None
        den = np.zeros(n, dtype=np.int64)
        for c in columns:
            alloc, req = c.alloc, c.requested
            util = np.where(req > alloc, MAX_UTILIZATION, np.maximum(req, 0) * MAX_UTILIZATION // alloc)
            per = self.table[util]  # never negative here (``_nonnegative``)
            num += per * c.weight
            den += (per > 0) * c.weight
        safe = np.maximum(den, 1)
        # math.Round(num / den), half away from zero; a node where every resource scored 0 has num 0: 0
        return np.asarray((2 * num + safe) // (2 * safe), dtype=np.int64)

    def resource_score(self, c: ResourceColumns, exact: bool) -> IntArray:
        alloc = _as_exact(c.alloc) if exact else c.alloc
        req = _as_exact(c.requested) if exact else c.requested
        cap = np.where(alloc > 0, alloc, 1)
        if self.type == LEAST_ALLOCATED:
            per = np.where(req > alloc, 0, (alloc - req) * MAX_NODE_SCORE // cap)
        elif self.type == MOST_ALLOCATED:
            per = np.minimum(req, alloc) * MAX_NODE_SCORE // cap
        else:
            assert self.table is not None
            if self.legacy:
                # v1.16-v1.21: utilisation = 100 - floor((cap - req) * 100 / cap); cap 0 or req > cap: 100
                util = MAX_UTILIZATION - (alloc - req) * MAX_UTILIZATION // cap
                util = np.where((alloc == 0) | (req > alloc), MAX_UTILIZATION, util)
            else:
                util = np.where(req > alloc, MAX_UTILIZATION, np.maximum(req, 0) * MAX_UTILIZATION // cap)
            per = self.table[np.asarray(util, dtype=np.int64)]
        # nodes without the resource get a meaningless value here; combine() does not count them
        return np.asarray(per, dtype=np.int64)


def balanced_score(columns: Sequence[ResourceColumns], n: int) -> IntArray:
    """NodeResourcesBalancedAllocation: (1 - std of the capped fractions) * 100, truncated, in float64 as
    upstream computes it (for two resources std is |f0 - f1| / 2; resources a node lacks are left out)."""
    if len(columns) == 2 and n and int(columns[0].alloc.min()) > 0 and int(columns[1].alloc.min()) > 0:
        # the common case (cpu and memory on every node) in fewer array passes: the same float64 operations
        f0 = np.minimum(columns[0].requested / columns[0].alloc, 1.0)
        f1 = np.minimum(columns[1].requested / columns[1].alloc, 1.0)
        return _two_balanced(f0, f1)
    return _balanced_general(columns, n)


def _two_balanced(f0: npt.NDArray[np.float64], f1: npt.NDArray[np.float64]) -> IntArray:
    """The balanced score from two resources' capped fractions: (1 - |f0 - f1| / 2) * 100, truncated."""
    return np.asarray(((1.0 - np.abs((f0 - f1) / 2)) * MAX_NODE_SCORE).astype(np.int64), dtype=np.int64)


Scores = TypeVar("Scores", int, IntArray)


def balance_change(with_pod: Scores, without_pod: Scores) -> Scores:
    """BalancedAllocation from 1.36 (kubernetes#135573): how much the pod improves or worsens the node's balance,
    from its balanced scores with and without the pod (Python integers or arrays). Both lie in [50, 100], so the
    sum is never negative and floor division is Go's integer division."""
    half = MAX_NODE_SCORE // 2
    return half + (half + with_pod - without_pod) // 2


def _term_matrices(
    snap: Snapshot, terms: Sequence[ScalarTerm], cols: IntArray
) -> tuple[IntArray, IntArray, IntArray, IntArray] | None:
    """``terms`` (``scalar_terms``) over ``cols`` as resources x nodes matrices, in one gather per snapshot
    matrix (the rows read from ``snap.nonzero``, then those from ``snap.requested``): allocatable, what the
    nodes' pods use, and as columns the incoming pod's amounts and the weights. None where a node lacks a
    resource's allocatable (or a term reads no snapshot matrix): the per-resource paths then decide."""
    alloc_rows: list[int] = []
    parts: list[IntArray] = []
    pod_req: list[int] = []
    weights: list[int] = []
    for matrix in (snap.nonzero, snap.requested):
        rows = [t for t in terms if t[4] is matrix]
        if rows:
            alloc_rows += [t[3] for t in rows]
            pod_req += [t[6] for t in rows]
            weights += [t[1] for t in rows]
            parts.append(matrix[np.array([t[5] for t in rows], dtype=np.intp)[:, None], cols])
    if len(alloc_rows) != len(terms) or any(t[2] is not snap.alloc for t in terms):
        return None
    alloc = snap.alloc[np.array(alloc_rows, dtype=np.intp)[:, None], cols]
    if int(alloc.min()) <= 0:
        return None
    used = parts[0] if len(parts) == 1 else np.concatenate(parts)
    column = np.array([pod_req, weights], dtype=np.int64)[:, :, None]
    return alloc, used, column[0], column[1]


def balanced_matrix(snap: Snapshot, terms: Sequence[ScalarTerm], cols: IntArray, change: bool) -> IntArray | None:
    """BalancedAllocation over ``cols`` for two resources every node has (``terms``: ``scalar_terms`` with real
    requests), both read in one gather per matrix (empty nodes of one allocatable scored once: ``by_matrices``):
    ``balanced_score``'s two-resource path, the same float64 operations node by node; with ``change`` (1.36+) the
    score of how much the pod changes the node's balance. None where it does not apply (not two resources, or a
    node lacking one): the per-resource path decides."""
    if len(terms) != 2:
        return None

    def scores(alloc: IntArray, used: IntArray, pod_req: IntArray, _weight: IntArray) -> IntArray:
        f = np.minimum((used + pod_req) / alloc, 1.0)
        with_pod = _two_balanced(f[0], f[1])
        if not change:
            return with_pod
        g = np.minimum(used / alloc, 1.0)  # the node's requests without the pod
        return np.asarray(balance_change(with_pod, without_pod=_two_balanced(g[0], g[1])), dtype=np.int64)

    return by_matrices(snap, terms, cols, scores)


# From this many nodes on, ``by_matrices`` looks for empty nodes that share their allocatable (a class's first
# row: every node it may place on; fewer nodes are the catch-up's few changed ones, most of them holding pods).
SHARED_MIN = 64
_GROUPS = "noderesources/allocatable-groups"

MatrixScores = Callable[[IntArray, IntArray, IntArray, IntArray], IntArray]


def by_matrices(snap: Snapshot, terms: Sequence[ScalarTerm], cols: IntArray, scores: MatrixScores) -> IntArray | None:
    """``scores`` over ``_term_matrices(snap, terms, cols)`` (allocatable, what the nodes' pods use, the pod's
    amounts, the weights), computed once for each group of nodes that hold no pod and have the same allocatable
    (``shared_empty``): on a large cluster mostly empty, as a simulation starts, a class's first row is computed
    for the few busy nodes and a handful of node shapes instead of every node. A node's score reads only its
    allocatable and what its pods use, and a node without pods uses nothing (the snapshot's rows are sums over
    its pods), so every node of a group scores as the group's first node would empty. None where
    ``_term_matrices`` is (some node lacks a resource's allocatable)."""
    shared = shared_empty(snap, cols)
    if shared is None:
        matrices = _term_matrices(snap, terms, cols)
        return None if matrices is None else scores(*matrices)
    share, inverse, first = shared
    matrices = _term_matrices(snap, terms, first)
    if matrices is None:
        return None
    alloc, used, pod_req, weight = matrices
    out = np.empty(len(cols), dtype=np.int64)
    out[share] = scores(alloc, np.zeros_like(used), pod_req, weight)[inverse]
    busy = ~share
    if busy.any():
        matrices = _term_matrices(snap, terms, cols[busy])
        if matrices is None:
            return None
        out[busy] = scores(*matrices)
    return out


def shared_empty(snap: Snapshot, cols: IntArray) -> tuple[BoolArray, IntArray, IntArray] | None:
    """Of ``cols`` (``SHARED_MIN`` or more), the nodes holding no pod, grouped by allocatable: a mask over
    ``cols``, for each masked node its group's position in the third array, and each group's first node (by
    column). None where such nodes are fewer than half of ``cols``: the plain path costs less then."""
    if len(cols) < SHARED_MIN:
        return None
    groups = allocatable_groups(snap)
    of = groups.take(cols)
    share = (snap.pod_count.take(cols) == 0) & (of >= 0)
    if int(np.count_nonzero(share)) * 2 < len(cols):
        return None
    of = of[share]
    seen = np.zeros(snap.n, dtype=bool)
    seen[of] = True
    first = np.flatnonzero(seen)
    position = np.zeros(snap.n, dtype=np.intp)
    position[first] = np.arange(len(first), dtype=np.intp)
    return share, position.take(of), first


def allocatable_groups(snap: Snapshot) -> IntArray:
    """Per node, the first column (a group's name) whose allocatable equals this node's in every resource row; -1
    for the rare node whose hash of its allocatable another node's different allocatable shares. Kept on the
    snapshot while its nodes and rows stay (``node_generation``); computed in O(n log n), in numpy."""
    key = (snap.node_generation, snap.alloc.shape)
    kept = snap.extensions.get(_GROUPS)
    if isinstance(kept, tuple) and kept[0] == key:
        groups: IntArray = kept[1]
        return groups
    alloc = snap.alloc
    digest = np.zeros(snap.n, dtype=np.int64)
    with np.errstate(over="ignore"):
        for row in alloc:
            digest = digest * np.int64(1_000_003) + row  # wraps around: a hash, checked below
    _, first, inverse = np.unique(digest, return_index=True, return_inverse=True)
    rep = first[inverse.reshape(-1)]
    same = (alloc == alloc[:, rep]).all(axis=0)
    groups = np.where(same, rep, -1).astype(np.int64)
    snap.extensions[_GROUPS] = (key, groups)
    return groups


def _balanced_general(columns: Sequence[ResourceColumns], n: int) -> IntArray:
    fractions: list[npt.NDArray[np.float64]] = []
    valid: list[npt.NDArray[np.bool_]] = []
    for c in columns:
        ok = c.alloc > 0
        frac = c.requested / np.where(ok, c.alloc, 1)
        fractions.append(np.where(ok, np.minimum(frac, 1.0), 0.0))
        valid.append(ok)
    if not fractions:
        return np.full(n, MAX_NODE_SCORE, dtype=np.int64)
    if len(fractions) == 2 and bool(valid[0].all()) and bool(valid[1].all()):
        std = np.abs((fractions[0] - fractions[1]) / 2)  # the common case: cpu and memory on every node
    else:
        f = np.vstack(fractions)
        v = np.vstack(valid)
        count = v.sum(axis=0)
        safe = np.where(count > 0, count, 1)
        mean = np.where(v, f, 0.0).sum(axis=0) / safe
        var = np.where(v, (f - mean) ** 2, 0.0).sum(axis=0) / safe
        std = np.where(count > 2, np.sqrt(var), 0.0)
        if (count == 2).any():
            std = np.where(count == 2, _first_two_valid(f, v), std)
    return np.asarray(((1.0 - std) * MAX_NODE_SCORE).astype(np.int64), dtype=np.int64)


def balanced_node(amounts: Sequence[tuple[int, int]]) -> int | None:
    """``balanced_score`` for one node from its (allocatable, requested) per resource, in the same float64
    arithmetic; None for more than two resources (the array path's mean and deviation)."""
    if not amounts:
        return MAX_NODE_SCORE
    if len(amounts) > 2:
        return None
    fractions = [min(float(req) / float(alloc), 1.0) for alloc, req in amounts if alloc > 0]
    std = abs((fractions[0] - fractions[1]) / 2) if len(fractions) == 2 else 0.0
    return int((1.0 - std) * MAX_NODE_SCORE)


def _first_two_valid(f: npt.NDArray[np.float64], v: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """|a - b| / 2 for the first two valid fractions of each node (only used where exactly two are valid)."""
    order = np.argsort(~v, axis=0, kind="stable")
    a = np.take_along_axis(f, order[0:1], axis=0)[0]
    b = np.take_along_axis(f, order[1:2], axis=0)[0]
    return np.asarray(np.abs((a - b) / 2), dtype=np.float64)
