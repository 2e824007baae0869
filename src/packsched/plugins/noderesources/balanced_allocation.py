"""NodeResourcesBalancedAllocation: prefers nodes whose resource fractions stay close to each other."""

from __future__ import annotations

from packsched.config.types import NodeResourcesBalancedAllocationArgs, PluginArgs, ResourceSpec
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.framework.status import Status
from packsched.plugins.noderesources.scoring import balanced_score, gather, pod_request_for

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

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> Status:
        # A pod requesting none of the resources (best effort) is not scored by this plugin (kubernetes#129138,
        # from 1.33); older releases score it from the node's existing requests alone.
        if self.skip_zero_request_pods and all(
            pod_request_for(pod, r.name, non_zero=False) == 0 for r in self.resources
        ):
            return Status.skip()
        return Status()

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        # Real requests on both sides (no 100m/200Mi defaults), unlike NodeResourcesFit's scoring.
        columns = gather(snap, pod, self.resources, cols, non_zero=False)
        return balanced_score(columns, len(cols))


def new_balanced_allocation(args: PluginArgs | None, handle: Handle) -> BalancedAllocation:
    return BalancedAllocation(args, handle, handle.kube_version)
