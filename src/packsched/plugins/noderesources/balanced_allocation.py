"""NodeResourcesBalancedAllocation: prefers nodes whose resource fractions stay close to each other (from 1.36: nodes
whose balance the pod improves most)."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from packsched.api.dra import DraObjects
from packsched.config.types import NodeResourcesBalancedAllocationArgs, PluginArgs, ResourceSpec
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.framework.status import Status
from packsched.plugins.helper import signers
from packsched.plugins.noderesources.scoring import (
    SCALAR_NODES,
    ResourceColumns,
    balance_change,
    balanced_matrix,
    balanced_node,
    balanced_score,
    gather,
    node_amounts,
    pod_request_for,
    requests_key,
    scalar_terms,
)

NAME = "NodeResourcesBalancedAllocation"


class BalancedAllocation:
    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle, version: KubeVersion = DEFAULT_KUBE_VERSION) -> None:
        if args is None:
            args = NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 1), ResourceSpec("memory", 1)])
        if not isinstance(args, NodeResourcesBalancedAllocationArgs):
            raise TypeError(f"want args to be of type NodeResourcesBalancedAllocationArgs, got {type(args).__name__}")
        self.resources = list(args.resources)
        self.handle = handle
        self.skip_zero_request_pods = version.balanced_allocation_skips_zero_request_pods
        self.scores_change = version.balanced_allocation_scores_change
        self.dra_extended = version.dra_extended_resource  # DRA-backed resources counted from devices (1.36+)

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod); None for a pod
        asking for a DRA-backed extended resource."""
        return signers.resources(pod, self.handle, self.dra_extended)

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> Status:
        # A pod requesting none of the resources (best effort) is not scored by this plugin (kubernetes#129138,
        # from 1.33); older releases score it from the node's existing requests alone.
        if self.skip_zero_request_pods:
            for r in self.resources:
                if pod_request_for(pod, r.name, non_zero=False) != 0:
                    return Status()
            return Status.skip()
        return Status()

    def equivalence_key(self, pod: PodInfo) -> Hashable | None:
        return requests_key(pod, self.handle.dra() if self.dra_extended else None)

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        # Real requests on both sides (no 100m/200Mi defaults), unlike NodeResourcesFit's scoring.
        dra = self.handle.dra() if self.dra_extended else None
        if len(cols) <= SCALAR_NODES:
            scores = self._score_nodes(pod, snap, cols, dra)
            if scores is not None:
                return scores
        if len(cols):
            terms = scalar_terms(snap, pod, self.resources, non_zero=False, dra=dra)
            if terms is not None:
                scores = balanced_matrix(snap, terms, cols, self.scores_change)
                if scores is not None:
                    return scores
        columns = gather(snap, pod, self.resources, cols, non_zero=False, dra=dra)
        with_pod = balanced_score(columns, len(cols))
        if not self.scores_change:
            return with_pod
        # 1.36+: how much the pod improves or worsens the node's balance
        without = [
            ResourceColumns(c.name, c.weight, c.alloc, c.requested - pod_request_for(pod, c.name, non_zero=False))
            for c in columns
        ]
        return balance_change(with_pod, balanced_score(without, len(cols)))

    def _score_nodes(self, pod: PodInfo, snap: Snapshot, cols: IntArray, dra: DraObjects | None) -> IntArray | None:
        """``score`` node by node in Python (a few nodes: those the equivalence cache re-scores after a bind); None
        where only the array path applies (devices counted, more than two resources)."""
        terms = scalar_terms(snap, pod, self.resources, non_zero=False, dra=dra)
        if terms is None or len(terms) > 2:
            return None
        out: list[int] = []
        for col in cols.tolist():
            amounts = node_amounts(terms, col)
            with_pod = balanced_node([(alloc, req) for _w, alloc, req in amounts])
            assert with_pod is not None
            if not self.scores_change:
                out.append(with_pod)
                continue
            without = [(alloc, req - t[6]) for (_w, alloc, req), t in zip(amounts, terms, strict=True)]
            without_pod = balanced_node(without)
            assert without_pod is not None
            out.append(balance_change(with_pod, without_pod))
        return np.array(out, dtype=np.int64)


def new_balanced_allocation(args: PluginArgs | None, handle: Handle) -> BalancedAllocation:
    return BalancedAllocation(args, handle, handle.kube_version)
