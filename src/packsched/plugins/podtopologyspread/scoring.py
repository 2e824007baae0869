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
from packsched.plugins.podtopologyspread.common import HOSTNAME, Constraint, NodeMasks, matching_per_node

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


def _extended_codes(snap: Snapshot, masks: NodeMasks, key: str) -> tuple[IntArray, int]:
    """Each node's topology value as a code, nodes without the label counting as the value "" (upstream reads
    a missing label as ""), and the number of codes."""
    codes = masks.codes(key)
    vocab = snap.labels.vocab.get(key, {})
    empty = vocab.get("", len(vocab))
    return np.where(codes < 0, empty, codes), len(vocab) + 1


def compute_pre_score(
    snap: Snapshot, pod: PodInfo, constraints: Sequence[Constraint], cols: IntArray, require_all: bool
) -> PreScoreState:
    masks = NodeMasks(snap, pod.pod, constraints)
    ignored = ~masks.all_keys[cols] if require_all else np.zeros(len(cols), dtype=bool)
    kept = cols[~ignored]
    state = PreScoreState(list(constraints), ignored, [], [], [])
    counted = masks.all_keys if require_all else np.ones(snap.n, dtype=bool)
    for c in constraints:
        ext, size = _extended_codes(snap, masks, c.topology_key)
        state.ext_codes.append(ext)
        if c.topology_key == HOSTNAME:
            state.domain_counts.append(None)
            state.weights.append(math.log(len(kept) + 2))
            continue
        exists = np.bincount(ext[kept], minlength=size) > 0
        eligible = counted & masks.included(c) & exists[ext]
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
    score = np.zeros(len(cols), dtype=np.float64)
    for i, c in enumerate(state.constraints):
        col = snap.labels.column(c.topology_key)
        has = np.zeros(len(cols), dtype=bool) if col is None else col[cols] >= 0
        counts = state.domain_counts[i]
        if counts is None:
            cnt = matching_per_node(snap, c, pod.pod.namespace)[cols]
        else:
            cnt = counts[state.ext_codes[i][cols]]
        term = cnt.astype(np.float64) * state.weights[i] + float(c.max_skew - 1)
        score = np.where(has, score + term, score)
    out = _go_round(score)
    out[state.ignored] = 0
    return out


def normalize(state: PreScoreState, scores: IntArray) -> IntArray:
    """Fewest matching pods -> 100: MaxNodeScore * (max + min - s) / max over the nodes not ignored."""
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
