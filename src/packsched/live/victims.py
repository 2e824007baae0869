"""Removing preemption's victims from the cluster (upstream prepareCandidate, one victim at a time): mark the victim
(DisruptionTarget), then delete it as kube-scheduler does (``delete``, the default) or ask the Eviction API
(``evict``: the API server refuses, 429, while a PodDisruptionBudget forbids it); record it; and remember which
preemptor waits for which victims to go.

An eviction refused by a budget stops the preemption (the candidate's other victims are left alone, as upstream
stops at a victim it cannot remove): the refused victim's condition is set back to False, the preemptor hears why
in a Warning event, its nomination is cleared and it is tried again after a backoff; meanwhile the budgets that
refused count as allowing no disruption, so the next attempt prefers another candidate (upstream ranks
candidates by the budgets they violate first)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from packsched.api.objects import Pod
from packsched.framework.podinfo import PodInfo
from packsched.live.port import PODS, ApiError, ApiPort, Obj
from packsched.live.recorder import Recorder

LOG = logging.getLogger("packsched.live")

EVICT = "evict"
DELETE = "delete"
REMOVAL_MODES = (EVICT, DELETE)

# How long a preemptor waits for its victims to go before it may preempt again.
VICTIM_WAIT_S = 120.0
# How long a budget that refused an eviction counts as allowing no disruption.
REFUSAL_MEMORY_S = 60.0


@dataclass
class Stats:
    """What the live adapter counts (the metrics have most of it too)."""

    attempts: int = 0
    bound: int = 0
    conflicts: int = 0
    bind_errors: int = 0
    late_bind_answers: int = 0  # a bind failed (its answer lost) after the watch had shown the pod bound or gone
    unschedulable: int = 0
    evictions: int = 0
    eviction_refusals: int = 0
    decode_errors: int = 0


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
        self.blocked_now = ""  # why a victim of the current attempt could not be removed ("" when none)
        self.chosen_now: list[str] = []  # the victims preemption chose in the current attempt (removed or not)
        self.refused_now = ""  # the victim of the current attempt whose eviction a budget refused ("" when none)
        self.refused: dict[str, tuple[Pod, float]] = {}  # victims whose eviction a budget refused, and when

    def new_attempt(self) -> None:
        self.removed_now = 0
        self.blocked_now = ""
        self.chosen_now = []
        self.refused_now = ""

    def refused_victims(self, now: float) -> list[Pod]:
        """Victims a budget protected recently (their budgets allow no disruption, whatever the count says)."""
        for key, (_, since) in list(self.refused.items()):
            if now - since > REFUSAL_MEMORY_S:
                del self.refused[key]
        return [pod for pod, _ in self.refused.values()]

    def remove(self, victim: PodInfo, preemptor: PodInfo, node: str) -> None:
        """Mark, remove and record one victim. It stays in the snapshot until the watch shows it gone."""
        self.chosen_now.append(victim.key)
        if self.blocked_now:
            return  # an earlier victim of this candidate could not be removed: the preemption stopped there
        self.removed_now += 1
        pod = victim.pod
        self.recorder.patch_pod_status(
            pod.namespace, pod.name, _disruption_target(preemptor, "True", self.recorder.now()), wait=True
        )
        try:
            if self.removal == EVICT:
                self.port.evict(pod.namespace, pod.name, pod.uid)
            else:
                self.port.delete(PODS, pod.namespace, pod.name, pod.uid)
        except ApiError as exc:
            if not exc.not_found:
                self._not_removed(victim, preemptor, node, exc)
                return
        self.stats.evictions += 1
        self.victims[victim.key] = _Victim(preemptor.key, self.clock())
        self.recorder.event(
            pod, "Normal", "Preempted", "Preempting", f"Preempted by pod {preemptor.pod.uid} on node {node}"
        )

    def _not_removed(self, victim: PodInfo, preemptor: PodInfo, node: str, exc: ApiError) -> None:
        pod = victim.pod
        self.removed_now -= 1
        LOG.warning(
            "preemption: could not remove victim",
            extra={"victim": victim.key, "preemptor": preemptor.key, "error": str(exc)},
        )
        self.recorder.patch_pod_status(
            pod.namespace, pod.name, _disruption_target(preemptor, "False", self.recorder.now(), str(exc))
        )
        if exc.too_many_requests:
            self.stats.eviction_refusals += 1
            self.refused[victim.key] = (pod, self.clock())
            self.refused_now = victim.key
            self.blocked_now = (
                f"preemption: eviction of {victim.key} on node {node} refused ({exc.message}); "
                "another candidate will be tried"
            )
        else:
            self.blocked_now = f"preemption: could not remove {victim.key} on node {node}: {exc}"
        self.recorder.event(preemptor.pod, "Warning", "FailedPreemption", "Preempting", self.blocked_now)

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


def _disruption_target(preemptor: PodInfo, status: str, now: str, refused: str = "") -> Obj:
    """The victim's DisruptionTarget condition: True before it is removed (upstream's reason and message), back
    to False when it could not be."""
    message = f"{preemptor.pod.scheduler_name}: preempting to accommodate a higher priority pod"
    if refused:
        message = f"{preemptor.pod.scheduler_name}: preemption did not remove the pod: {refused}"
    return {
        "status": {
            "conditions": [
                {
                    "type": "DisruptionTarget",
                    "status": status,
                    "reason": "PreemptionByScheduler",
                    "message": message,
                    "lastTransitionTime": now,
                }
            ]
        }
    }
