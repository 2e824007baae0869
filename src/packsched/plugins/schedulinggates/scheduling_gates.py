"""SchedulingGates: a pod with spec.schedulingGates is not tried until every gate is removed."""

from __future__ import annotations

from packsched.config.types import PluginArgs
from packsched.framework.interface import Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.status import Status

NAME = "SchedulingGates"


class SchedulingGates:
    """``honoured``: False for kube-scheduler 1.25-1.26, whose API server drops spec.schedulingGates (the
    PodSchedulingReadiness gate is off): the pod is then tried at once."""

    name = NAME

    def __init__(self, honoured: bool = True) -> None:
        self.honoured = honoured

    def pre_enqueue(self, pod: PodInfo) -> Status:
        gates = pod.pod.scheduling_gates
        if not gates or not self.honoured:
            return Status()
        return Status.unschedulable(
            f"waiting for scheduling gates: [{' '.join(gates)}]", plugin=NAME, unresolvable=True
        )


def new_scheduling_gates(args: PluginArgs | None, handle: Handle) -> SchedulingGates:
    return SchedulingGates(honoured=handle.kube_version.scheduling_gates)
