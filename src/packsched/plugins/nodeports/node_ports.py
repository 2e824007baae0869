"""NodePorts: a pod's host ports must be free on the node (same protocol and port, overlapping host IP)."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle, NodeSel, Rejection, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Status
from packsched.plugins.helper import signers

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_ANY_IP = "0.0.0.0"


class NodePorts:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod)."""
        return signers.host_ports(pod.pod)

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        return Status() if pod.host_ports else Status.skip()

    def equivalence_key(self, pod: PodInfo) -> Hashable:
        return pod.host_ports

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        if not pod.host_ports:
            return []
        conflict = np.zeros(snap.n, dtype=bool)
        for proto, ip, port in pod.host_ports:
            for col, ips in snap.ports.get((proto, port), {}).items():
                if ip == _ANY_IP or _ANY_IP in ips or ip in ips:
                    conflict[col] = True
        mask = conflict[sel]
        return [Rejection(mask, ERR_REASON)] if mask.any() else []


def new_node_ports(args: PluginArgs | None, handle: Handle) -> NodePorts:
    return NodePorts()
