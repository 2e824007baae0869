"""PodTopologySpread's PreFilter state and Filter: per constraint, the matching pods of each topology domain and
the two "critical paths" (the domains with the fewest), kept right by AddPod/RemovePod during preemption."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from packsched.framework.interface import NodeSel, Rejection
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.framework.status import Code
from packsched.plugins.podtopologyspread.common import (
    MAX_INT32,
    Constraint,
    NodeMasks,
    key_codes,
    masked_domain_sums,
    matching_per_node,
)

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"


class CriticalPaths:
    """upstream's two critical paths of one constraint: paths[0] holds the smallest match count of a domain
    (exactly, after PreFilter and after removals); paths[1] is at least as large but, after additions, not
    always the second smallest. Kept as upstream keeps it so that preemption's dry runs judge alike."""

    __slots__ = ("paths",)

    def __init__(self, paths: list[tuple[str, int]] | None = None) -> None:
        self.paths = paths if paths is not None else [("", MAX_INT32), ("", MAX_INT32)]

    def update(self, value: str, num: int) -> None:
        p = self.paths
        i = 0 if value == p[0][0] else 1 if value == p[1][0] else -1
        if i >= 0:
            p[i] = (value, num)
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = (value, num)
        elif num < p[1][1]:
            p[1] = (value, num)

    @property
    def min(self) -> int:
        return self.paths[0][1]


@dataclass
class PreFilterState:
    """Per constraint: the matching-pod count of each domain (indexed by the label code of the topology value),
    which domains exist (hold an eligible node), and the critical paths."""

    constraints: list[Constraint]
    values: list[list[str]]  # per constraint: label code -> topology value
    eligible: list[BoolArray]  # per constraint: the nodes it counts (every key present, inclusion policies)
    match: list[IntArray]
    present: list[BoolArray]
    paths: list[CriticalPaths]
    self_match: list[bool]

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.constraints,
            self.values,
            self.eligible,
            [m.copy() for m in self.match],
            self.present,  # domains come and go only with nodes, never in a cycle
            [CriticalPaths(list(p.paths)) for p in self.paths],
            self.self_match,
        )

    def min_match(self, i: int) -> int:
        """The global minimum of constraint ``i``; 0 while fewer domains than minDomains exist."""
        if int(np.count_nonzero(self.present[i])) < self.constraints[i].min_domains:
            return 0
        return self.paths[i].min


def critical_paths(values: Sequence[str], match: IntArray, present: BoolArray, empty: int | None) -> CriticalPaths:
    """The critical paths ``CriticalPaths.update`` leaves after being given every present domain in code order:
    the first two domains in (count, code) order. Computed with two argmins instead of a call per domain, the
    same result bit for bit (a domain with the value "", which the empty paths' names would match, takes the
    walk; ``empty`` is its code)."""
    if empty is not None and present[empty]:
        paths = CriticalPaths()
        for code in np.flatnonzero(present).tolist():
            paths.update(values[code], int(match[code]))
        return paths
    # absent domains read as the empty paths' count: a count never below it would not enter them either
    counts = np.where(present, match, MAX_INT32)
    out: list[tuple[str, int]] = [("", MAX_INT32), ("", MAX_INT32)]
    if len(counts):
        first = int(np.argmin(counts))  # the first (lowest code) of the smallest
        if counts[first] < MAX_INT32:
            out[0] = (values[first], int(counts[first]))
            counts[first] = MAX_INT32
            second = int(np.argmin(counts))
            if counts[second] < MAX_INT32:
                out[1] = (values[second], int(counts[second]))
    return CriticalPaths(out)


def compute_state(snap: Snapshot, pod: PodInfo, constraints: Sequence[Constraint]) -> PreFilterState:
    masks = NodeMasks(snap, pod.pod, constraints)
    state = PreFilterState(list(constraints), [], [], [], [], [], [])
    for c in constraints:
        kc = key_codes(snap, c.topology_key)
        values = snap.labels.values(c.topology_key)
        eligible, present = masks.counted(c, len(values))
        per_node = matching_per_node(snap, c, pod.pod.namespace)
        match = masked_domain_sums(per_node, kc, eligible, len(values))
        state.values.append(values)
        state.eligible.append(eligible)
        state.match.append(match)
        state.present.append(present)
        state.paths.append(critical_paths(values, match, present, snap.labels.vocab.get(c.topology_key, {}).get("")))
        state.self_match.append(c.matches(pod.pod.labels))
    return state


def update_with_pod(state: PreFilterState, snap: Snapshot, pod: PodInfo, other: PodInfo, col: int, delta: int) -> None:
    """upstream updateWithPod: ``other`` (added or removed on node ``col``) changes the counts when it is in the
    pod's namespace, the node carries every constraint's key and passes the constraint's inclusion policies."""
    if other.pod.namespace != pod.pod.namespace:
        return
    labels = snap.nodes[col].labels
    for i, c in enumerate(state.constraints):
        if not state.eligible[i][col] or not c.matches(other.pod.labels):
            continue
        code = snap.labels.vocab[c.topology_key][labels[c.topology_key]]
        state.match[i][code] += delta
        state.paths[i].update(labels[c.topology_key], int(state.match[i][code]))


def filter_nodes(state: PreFilterState, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
    """The first constraint a node breaks decides its reason: a missing topology label (unresolvable), or a
    skew above maxSkew."""
    missing_any: BoolArray | None = None
    skewed_any: BoolArray | None = None
    alive: BoolArray | None = None
    for i, c in enumerate(state.constraints):
        kc = key_codes(snap, c.topology_key)
        codes = kc.codes[sel]
        if alive is None:
            alive = np.ones(len(codes), dtype=bool)
            missing_any = np.zeros(len(codes), dtype=bool)
            skewed_any = np.zeros(len(codes), dtype=bool)
        assert missing_any is not None and skewed_any is not None
        match = state.match[i]
        bound = c.max_skew - int(state.self_match[i]) + state.min_match(i)  # skew > maxSkew: count > bound
        if kc.every and kc.size <= len(match):
            # every node has the key: no node is missing it, and every code indexes the counts
            over = match[codes] > bound
            skewed_any |= alive & over
            alive &= ~over
            continue
        missing = codes < 0
        counts = np.where(missing, 0, match[np.clip(codes, 0, max(len(match) - 1, 0))] if len(match) else 0)
        skewed = ~missing & (counts > bound)
        missing_any |= alive & missing
        alive &= ~missing
        skewed_any |= alive & skewed
        alive &= ~skewed
    out: list[Rejection] = []
    if missing_any is not None and missing_any.any():
        out.append(Rejection(missing_any, ERR_REASON_NODE_LABEL_NOT_MATCH, Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
    if skewed_any is not None and skewed_any.any():
        out.append(Rejection(skewed_any, ERR_REASON_CONSTRAINTS_NOT_MATCH, Code.UNSCHEDULABLE))
    return out
