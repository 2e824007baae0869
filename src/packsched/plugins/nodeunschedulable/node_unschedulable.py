"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate its taint."""

from __future__ import annotations

from collections.abc import Hashable

from packsched.api.objects import NO_SCHEDULE, UNSCHEDULABLE_TAINT_KEY, Taint
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle, NodeSel, Rejection, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code
from packsched.plugins.helper import signers

NAME = "NodeUnschedulable"
ERR_REASON = "node(s) were unschedulable"
_TAINT = Taint(UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE)


class NodeUnschedulable:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod)."""
        return signers.tolerations(pod.pod)

    filter_reads_pods = False  # its verdict reads the node and the pod only, no placed pod

    def equivalence_key(self, pod: PodInfo) -> Hashable:
        # the verdict reads one thing of the pod: whether it tolerates the unschedulable taint
        return _tolerates(pod)

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        mask = snap.unschedulable[sel]
        if not mask.any() or _tolerates(pod):
            return []
        return [Rejection(mask, ERR_REASON, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)]


def _tolerates(pod: PodInfo) -> bool:
    tolerations = pod.pod.tolerations
    return bool(tolerations) and any(t.tolerates(_TAINT) for t in tolerations)


def new_node_unschedulable(args: PluginArgs | None, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()
