"""NodeAffinity: nodeSelector and required node affinity must match (Filter); preferred terms add their
weights (Score, normalised to 0..100). ``addedAffinity`` in the args applies to every pod of the profile."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial

import numpy as np

from packsched.api.objects import NodeAffinity as PodNodeAffinity
from packsched.api.objects import NodeSelectorTerm
from packsched.config.types import NodeAffinityArgs, PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle, NodeSel, Rejection, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.helper import signers
from packsched.plugins.helper.labels import selector_mask, term_mask, terms_mask
from packsched.plugins.helper.normalize import default_normalize_score

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"


class NodeAffinityPlugin:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod)."""
        return signers.node_affinity(pod.pod)

    filter_reads_pods = False  # its verdict reads the node and the pod only, no placed pod
    score_reads_pods = False  # so does its score
    zeros_normalize_uniformly = True  # DefaultNormalizeScore: all-zero raw scores normalise to one value
    normalizes_by_top = True  # DefaultNormalizeScore: a node's value reads its raw score and the highest

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        if args is not None and not isinstance(args, NodeAffinityArgs):
            raise TypeError(f"want args to be of type NodeAffinityArgs, got {type(args).__name__}")
        self.added: PodNodeAffinity | None = args.added_affinity if args is not None else None
        self._cache: dict[object, BoolArray] = {}
        self._cache_gen = -1

    def _cached(self, snap: Snapshot, key: object, build: Callable[[], BoolArray]) -> BoolArray:
        if self._cache_gen != snap.node_generation:
            self._cache.clear()
            self._cache_gen = snap.node_generation
        hit = self._cache.get(key)
        if hit is None:
            hit = build()
            self._cache[key] = hit
        return hit

    def _required(self, snap: Snapshot, pod: PodInfo) -> BoolArray:
        selector = tuple(sorted(pod.pod.node_selector.items()))
        affinity = pod.pod.node_affinity
        required = affinity.required if affinity is not None else None

        def build() -> BoolArray:
            mask = selector_mask(snap, dict(selector))
            if required is not None:
                mask &= terms_mask(snap, required)
            return mask

        return self._cached(snap, ("req", selector, required), build)

    def equivalence_key(self, pod: PodInfo) -> Hashable:
        # ``addedAffinity`` is the profile's, the same for every pod
        return (tuple(sorted(pod.pod.node_selector.items())), pod.pod.node_affinity)

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        affinity = pod.pod.node_affinity
        has_required = affinity is not None and affinity.required is not None
        added_required = self.added is not None and self.added.required is not None
        if not pod.pod.node_selector and not has_required and not added_required:
            return Status.skip()
        return Status()

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        out: list[Rejection] = []
        alive = np.ones(snap.n, dtype=bool)
        if self.added is not None and self.added.required is not None:
            required = self.added.required
            enforced = self._cached(snap, ("added",), lambda: terms_mask(snap, required))
            bad = ~enforced[sel]
            if bad.any():
                out.append(Rejection(bad, ERR_REASON_ENFORCED, Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
            alive = enforced
        affinity = pod.pod.node_affinity
        if pod.pod.node_selector or (affinity is not None and affinity.required is not None):
            bad = (~self._required(snap, pod) & alive)[sel]
            if bad.any():
                out.append(Rejection(bad, ERR_REASON_POD, Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
        return out

    def _preferred(self, pod: PodInfo) -> list[tuple[int, NodeSelectorTerm]]:
        terms: list[tuple[int, NodeSelectorTerm]] = []
        for aff in (self.added, pod.pod.node_affinity):
            if aff is not None:
                terms += [(t.weight, t.preference) for t in aff.preferred]
        return terms

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> Status:
        return Status() if self._preferred(pod) else Status.skip()

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        total = np.zeros(snap.n, dtype=np.int64)
        for weight, term in self._preferred(pod):
            if weight == 0:
                continue
            mask = self._cached(snap, ("pref", term), partial(term_mask, snap, term))
            total += np.where(mask, weight, 0)
        return total[cols]

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return default_normalize_score(scores, reverse=False)


def new_node_affinity(args: PluginArgs | None, handle: Handle) -> NodeAffinityPlugin:
    return NodeAffinityPlugin(args, handle)
