"""TaintToleration: NoSchedule/NoExecute taints the pod does not tolerate rule the node out (Filter);
untolerated PreferNoSchedule taints lower the node's score (Score, normalised and reversed)."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from packsched.api.objects import PREFER_NO_SCHEDULE, Taint, Toleration
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle, NodeSel, Rejection, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.helper import signers
from packsched.plugins.helper.normalize import default_normalize_score

NAME = "TaintToleration"
ERR_REASON = "node(s) had untolerated taint(s)"


def named_reason(taint: Taint) -> str:
    """The message of kube-scheduler before 1.34 (kubernetes#134740): the node's first untolerated taint."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def _untolerated_rows(snap: Snapshot, rows: list[int], tolerations: list[Toleration]) -> list[int]:
    return [r for r in rows if not any(t.tolerates(snap.taints[r]) for t in tolerations)]


class TaintToleration:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod)."""
        return signers.tolerations(pod.pod)

    filter_reads_pods = False  # its verdict reads the node and the pod only, no placed pod
    score_reads_pods = False  # so does its score
    zeros_normalize_uniformly = True  # DefaultNormalizeScore: all-zero raw scores normalise to one value
    normalizes_by_top = True  # DefaultNormalizeScore: a node's value reads its raw score and the highest

    def __init__(self, name_taints: bool = False) -> None:
        self.name_taints = name_taints
        self._cache: dict[tuple[int, tuple[Toleration, ...]], BoolArray] = {}
        self._cache_gen = -1

    def _blocked(self, snap: Snapshot, tolerations: list[Toleration]) -> BoolArray:
        """Nodes carrying at least one NoSchedule/NoExecute taint that no toleration matches (cached)."""
        if self._cache_gen != snap.node_generation:
            self._cache.clear()
            self._cache_gen = snap.node_generation
        key = (snap.node_generation, tuple(tolerations))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        rows = _untolerated_rows(snap, snap.hard_taint_rows, tolerations)
        blocked: BoolArray = np.zeros(snap.n, dtype=bool)
        if rows:
            blocked = np.asarray((snap.taint_pos[rows] >= 0).any(axis=0), dtype=bool)
        self._cache[key] = blocked
        return blocked

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        if not snap.taints:
            return []
        mask = self._blocked(snap, pod.pod.tolerations)[sel]
        if not mask.any():
            return []
        if self.name_taints:
            return self._named(snap, pod.pod.tolerations, sel, mask)
        return [Rejection(mask, ERR_REASON, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)]

    def _named(self, snap: Snapshot, tolerations: list[Toleration], sel: NodeSel, mask: BoolArray) -> list[Rejection]:
        """One rejection per message: each rejected node names its first untolerated NoSchedule/NoExecute
        taint (in the node's own order), as upstream's FindMatchingUntoleratedTaint does."""
        rows = np.asarray(_untolerated_rows(snap, snap.hard_taint_rows, tolerations), dtype=np.intp)
        pos = snap.taint_pos[rows][:, sel].astype(np.int64)
        pos[pos < 0] = np.iinfo(np.int64).max
        first = rows[np.argmin(pos, axis=0)]
        out: dict[str, BoolArray] = {}
        for row in np.unique(first[mask]).tolist():
            reason = named_reason(snap.taints[row])
            hit = mask & (first == row)
            out[reason] = out[reason] | hit if reason in out else hit
        return [Rejection(m, r, Code.UNSCHEDULABLE_AND_UNRESOLVABLE) for r, m in out.items()]

    def equivalence_key(self, pod: PodInfo) -> Hashable:
        return tuple(pod.pod.tolerations)

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> Status:
        prefer = [t for t in pod.pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
        state.write(NAME, prefer)
        return Status()

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        prefer = state.read(NAME)
        if prefer is None:
            prefer = [t for t in pod.pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
        rows = _untolerated_rows(snap, snap.soft_taint_rows, prefer)
        if not rows:
            return np.zeros(len(cols), dtype=np.int64)
        hits = snap.taint_pos[np.ix_(np.asarray(rows, dtype=np.int64), cols)] >= 0
        return np.asarray(hits.sum(axis=0), dtype=np.int64)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return default_normalize_score(scores, reverse=True)


def new_taint_toleration(args: PluginArgs | None, handle: Handle) -> TaintToleration:
    return TaintToleration(name_taints=handle.kube_version.taint_message_names_taint)
