"""Removing preemption's victims from the cluster (upstream prepareCandidate, one victim at a time): mark the victim
(DisruptionTarget), remove it through the Eviction API (PodDisruptionBudgets are honoured by the server too) or a
plain graceful delete, record it; and remember which preemptor waits for which victims to go."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from packsched.framework.snapshot import PodInfo
from packsched.live.port import PODS, ApiError, ApiPort
from packsched.live.recorder import Recorder

LOG = logging.getLogger("packsched.live")

EVICT = "evict"
DELETE = "delete"
REMOVAL_MODES = (EVICT, DELETE)

# How long a preemptor waits for its victims to go before it may preempt again.
VICTIM_WAIT_S = 120.0


@dataclass
class Stats:
    """What the live adapter counts (the metrics have most of it too)."""

    attempts: int = 0
    bound: int = 0
    conflicts: int = 0
    bind_errors: int = 0
    unschedulable: int = 0
    evictions: int = 0
    eviction_refusals: int = 0
    decode_errors: int = 0
    events_handled: int = 0


@dataclass
class _Victim:
    preemptor: str
    since: float


class VictimRemover:
    def __init__(
        self, port: ApiPort, recorder: Recorder, removal: str, clock: Callable[[], float], stats: Stats
    ) -> None:
        if removal not in REMOVAL_MODES:
            raise ValueError(f"removal must be one of {REMOVAL_MODES}")
        self.port = port
        self.recorder = recorder
        self.removal = removal
        self.clock = clock
        self.stats = stats
        self.victims: dict[str, _Victim] = {}  # victims removed, not yet seen gone
        self.removed_now = 0  # victims removed in the current attempt

    def remove(self, victim: PodInfo, preemptor: PodInfo, node: str) -> None:
        """Mark, remove and record one victim. It stays in the snapshot until the watch shows it gone."""
        self.removed_now += 1
        pod = victim.pod
        self.recorder.patch_pod_status(
            pod.namespace,
            pod.name,
            {
                "status": {
                    "conditions": [
                        {
                            "type": "DisruptionTarget",
                            "status": "True",
                            "reason": "PreemptionByScheduler",
                            "message": f"{preemptor.pod.scheduler_name}: preempting to accommodate a "
                            "higher priority pod",
                            "lastTransitionTime": self.recorder.now(),
                        }
                    ]
                }
            },
            wait=True,
        )
        try:
            if self.removal == EVICT:
                self.port.evict(pod.namespace, pod.name, pod.uid)
            else:
                self.port.delete(PODS, pod.namespace, pod.name, pod.uid)
        except ApiError as exc:
            if not exc.not_found:
                if exc.too_many_requests:
                    self.stats.eviction_refusals += 1
                LOG.warning(
                    "preemption: could not remove victim",
                    extra={"victim": victim.key, "preemptor": preemptor.key, "error": str(exc)},
                )
                return
        self.stats.evictions += 1
        self.victims[victim.key] = _Victim(preemptor.key, self.clock())
        self.recorder.event(
            pod, "Normal", "Preempted", "Preempting", f"Preempted by pod {preemptor.pod.uid} on node {node}"
        )

    def gone(self, key: str) -> None:
        """The pod was deleted (victim or not)."""
        self.victims.pop(key, None)

    def waiting(self, preemptor: str, now: float, exists: Callable[[str], bool]) -> bool:
        """Whether ``preemptor`` still waits for a victim it removed (for at most VICTIM_WAIT_S)."""
        for vkey, v in list(self.victims.items()):
            if now - v.since > VICTIM_WAIT_S:
                del self.victims[vkey]
            elif v.preemptor == preemptor and exists(vkey):
                return True
        return False
