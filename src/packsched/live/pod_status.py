"""What the live adapter writes on a pod it could not place, as kube-scheduler does: a FailedScheduling event every
attempt; the PodScheduled=False condition and status.nominatedNodeName only when they change."""

from __future__ import annotations

from packsched.api.objects import Pod
from packsched.live.port import Obj
from packsched.live.recorder import Recorder


class PodStatusWriter:
    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self._last: dict[str, tuple[str, str, str]] = {}  # (reason, message, nominated) last written, by pod key

    def failed(self, pod: Pod, reason: str, message: str) -> None:
        self.recorder.event(pod, "Warning", "FailedScheduling", "Scheduling", message)
        self.condition(pod, reason, message)

    def condition(self, pod: Pod, reason: str, message: str) -> None:
        nominated = pod.nominated_node_name
        state = (reason, message, nominated)
        if self._last.get(pod.key) == state:
            return
        self._last[pod.key] = state
        status: Obj = {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": reason,
                    "message": message,
                    "lastProbeTime": None,
                    "lastTransitionTime": self.recorder.now(),
                }
            ],
            "nominatedNodeName": nominated or None,
        }
        self.recorder.patch_pod_status(pod.namespace, pod.name, {"status": status})

    def nomination_cleared(self, pod: Pod) -> None:
        """status.nominatedNodeName removed (upstream ClearNominatedNodeName)."""
        last = self._last.get(pod.key)
        if last is not None:
            self._last[pod.key] = (last[0], last[1], "")
        self.recorder.patch_pod_status(pod.namespace, pod.name, {"status": {"nominatedNodeName": None}})

    def forget(self, key: str) -> None:
        self._last.pop(key, None)
