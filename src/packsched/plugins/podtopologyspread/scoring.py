"""PodTopologySpread's PreScore, Score and NormalizeScore: ScheduleAnyway constraints (or the default ones)
prefer nodes whose domains hold fewer matching pods, each constraint weighted by the log of its number of
domains; the node with the fewest gets 100."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from packsched.framework.interface import MAX_NODE_SCORE
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.plugins.podtopologyspread.common import HOSTNAME, Constraint, NodeMasks, key_codes, matching_per_node

FloatArray = npt.NDArray[np.float64]


@dataclass
class PreScoreState:
    constraints: list[Constraint]
    ignored: BoolArray  # aligned with the scored nodes: nodes missing a topology key (score 0)
    domain_counts: list[IntArray | None]  # per constraint (None for hostname): matching pods per domain
    ext_codes: list[IntArray]  # per constraint: each node's domain, a missing label being the value ""
    weights: list[float]

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore, as upstream


def compute_pre_score(
    snap: Snapshot, pod: PodInfo, constraints: Sequence[Constraint], cols: IntArray, require_all: bool
) -> PreScoreState:
    masks = NodeMasks(snap, pod.pod, constraints)
    every = all(key_codes(snap, c.topology_key).every for c in constraints)
    if require_all and not every:
        ignored = ~masks.all_keys[cols]
        kept = cols[~ignored]
        counted = masks.all_keys
    else:  # no node is left out
        ignored = np.zeros(len(cols), dtype=bool)
        kept = cols
        counted = None
    state = PreScoreState(list(constraints), ignored, [], [], [])
    for c in constraints:
        kc = key_codes(snap, c.topology_key)
        ext, size = kc.extended, kc.extended_size
        state.ext_codes.append(ext)
        if c.topology_key == HOSTNAME:
            state.domain_counts.append(None)
            state.weights.append(math.log(len(kept) + 2))
            continue
        exists = np.bincount(ext[kept], minlength=size) > 0
        eligible = masks.included(c) & exists[ext]
        if counted is not None:
            eligible &= counted
        per_node = matching_per_node(snap, c, pod.pod.namespace)
        # every extended code is a domain: the sums of the eligible nodes' counts, ineligible ones weighing nothing
        sums = np.bincount(ext, weights=per_node * eligible, minlength=size)[:size]
        state.domain_counts.append(sums.astype(np.int64))
        state.weights.append(math.log(int(np.count_nonzero(exists)) + 2))
    return state


def _go_round(x: FloatArray) -> IntArray:
    """Go's math.Round: halves away from zero."""
    t = np.trunc(x)
    out: IntArray = (t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0)).astype(np.int64)
    return out


def score_nodes(state: PreScoreState, snap: Snapshot, pod: PodInfo, cols: IntArray) -> IntArray:
    """Each node: the sum over constraints whose key it has of count x weight + maxSkew - 1, rounded as Go
    rounds. A constraint's term is the same for every node of a domain, so it is worked out per domain and read
    back per node (the same floating-point operations, element by element)."""
    first = state.domain_counts[0] if len(state.constraints) == 1 else None
    if first is not None:
        c = state.constraints[0]
        kc = key_codes(snap, c.topology_key)
        if kc.every:  # one constraint every node has the key of: round per domain, then read back
            per_domain = first.astype(np.float64) * state.weights[0] + float(c.max_skew - 1)
            out: IntArray = _go_round(0.0 + per_domain)[state.ext_codes[0][cols]]
            if state.ignored.any():
                out[state.ignored] = 0
            return out
    score = np.zeros(len(cols), dtype=np.float64)
    for i, c in enumerate(state.constraints):
        kc = key_codes(snap, c.topology_key)
        by_domain = state.domain_counts[i]
        if by_domain is None:
            cnt = matching_per_node(snap, c, pod.pod.namespace)[cols]
            term = cnt.astype(np.float64) * state.weights[i] + float(c.max_skew - 1)
        else:
            per_domain = by_domain.astype(np.float64) * state.weights[i] + float(c.max_skew - 1)
            term = per_domain[state.ext_codes[i][cols]]
        if kc.every:
            score = score + term
        else:
            score = np.where(kc.codes[cols] >= 0, score + term, score)
    out = _go_round(score)
    out[state.ignored] = 0
    return out


def normalize(state: PreScoreState, scores: IntArray) -> IntArray:
    """Fewest matching pods -> 100: MaxNodeScore * (max + min - s) / max over the nodes not ignored."""
    if not state.ignored.any():  # every node kept: the same arithmetic without the masks
        if len(scores) == 0:
            return np.zeros(0, dtype=np.int64)
        lo, hi = int(scores.min()), int(scores.max())
        if hi == 0:
            return np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64)
        every: IntArray = (MAX_NODE_SCORE * (hi + lo - scores) // hi).astype(np.int64)
        return every
    kept = ~state.ignored
    out = np.zeros(len(scores), dtype=np.int64)
    if not kept.any():
        return out
    low, high = int(scores[kept].min()), int(scores[kept].max())
    if high == 0:
        out[kept] = MAX_NODE_SCORE
        return out
    out[kept] = MAX_NODE_SCORE * (high + low - scores[kept]) // high
    return out
