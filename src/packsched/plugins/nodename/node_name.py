"""NodeName: a pod that names a node (spec.nodeName) fits only that node."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import SIGN_NODE_NAME, Handle, NodeSel, Rejection, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod)."""
        return {SIGN_NODE_NAME: pod.pod.node_name}

    filter_reads_pods = False  # its verdict reads the node and the pod only, no placed pod

    def equivalence_key(self, pod: PodInfo) -> Hashable:
        return pod.pod.node_name

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        wanted = pod.pod.node_name
        if not wanted:
            return []
        cols = np.arange(snap.n)[sel]
        mask = cols != snap.index.get(wanted, -1)
        return [Rejection(mask, ERR_REASON, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)] if mask.any() else []


def new_node_name(args: PluginArgs | None, handle: Handle) -> NodeName:
    return NodeName()
