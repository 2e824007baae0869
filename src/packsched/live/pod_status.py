"""What the live adapter writes on a pod it could not place, as kube-scheduler does: a FailedScheduling event every
attempt; the PodScheduled=False condition and status.nominatedNodeName only when they change.

Writes are sent later, by the recorder's threads (held while the API server is down). A write made before a later
outcome of the same pod — the pod bound, or gone — is dropped when its turn comes, never applied after it: a
failure written during an outage must not overwrite the PodScheduled=True condition of the bind that followed."""

from __future__ import annotations

import itertools

from packsched.api.objects import Pod
from packsched.live.port import Obj
from packsched.live.recorder import Recorder


class PodStatusWriter:
    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self._last: dict[str, tuple[str, str, str]] = {}  # (reason, message, nominated) last written, by pod key
        # by pod key: the outcome a write belongs to; a bind (or the pod's end) starts a new one
        self._epoch: dict[str, int] = {}
        self._epochs = itertools.count(1)

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
        self._patch(pod, {"status": status})

    def nomination_cleared(self, pod: Pod) -> None:
        """status.nominatedNodeName removed (upstream ClearNominatedNodeName)."""
        last = self._last.get(pod.key)
        if last is not None:
            self._last[pod.key] = (last[0], last[1], "")
        self._patch(pod, {"status": {"nominatedNodeName": None}})

    def bound(self, key: str) -> None:
        """The pod is bound: writes about its earlier attempts still waiting to be sent are dropped."""
        self._last.pop(key, None)
        self._epoch[key] = next(self._epochs)

    def forget(self, key: str) -> None:
        """The pod is gone: nothing more is written about it."""
        self._last.pop(key, None)
        self._epoch.pop(key, None)  # a write queued before compares its epoch with None: dropped

    def _patch(self, pod: Pod, patch: dict[str, object]) -> None:
        key = pod.key
        epoch = self._epoch.setdefault(key, next(self._epochs))
        self.recorder.patch_pod_status(pod.namespace, pod.name, patch, current=lambda: self._epoch.get(key) == epoch)
