"""DefaultBinder: binds the pod to the chosen node through the cluster (the simulator or the API server)."""

from __future__ import annotations

from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.status import Status

NAME = "DefaultBinder"


class DefaultBinder:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        return self.handle.actions.bind(pod, node)


def new_default_binder(args: PluginArgs | None, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
