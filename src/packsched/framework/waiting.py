"""Pods waiting at Permit (upstream's waitingPodsMap and waitingPod).

A Permit plugin may answer Wait with a timeout instead of Success: the pod stays assumed on its node (it holds the
room it was given) and its binding cycle does not start until every plugin that asked it to wait allows it, or
one of them (or anybody: preemption, the pod's deletion) rejects it. A plugin's wait ends by itself when its
timeout passes: the pod is then rejected with "rejected due to timeout after waiting <d> at plugin <name>".

kube-scheduler parks the binding goroutine on a channel; here the scheduler's owner asks at its own pace: the
pods that ended waiting are taken with :meth:`WaitingPods.take_settled`, and :meth:`WaitingPods.expire` ends the
waits whose time is up (the simulator calls it at virtual times, live mode on its clock). The map is shared by
every profile, as kube-scheduler shares one between its frameworks.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from packsched.api.annotations import format_duration
from packsched.framework.podinfo import PodInfo
from packsched.framework.status import Code, Status

# No plugin may make a pod wait longer (upstream framework.go maxTimeout).
MAX_PERMIT_TIMEOUT = 15 * 60.0


@dataclass(eq=False)
class WaitingPod:
    """One pod assumed on ``node`` whose binding waits for ``pending`` plugins (name -> deadline on the
    scheduler's clock). ``outcome`` is set once: Success when the last pending plugin allowed it, else the
    rejection. ``binding`` is the owner's binding cycle, opaque here."""

    pod: PodInfo
    node: str
    pending: dict[str, float]
    waits: dict[str, float]  # plugin -> the timeout it asked for (seconds), for the timeout message
    since: float
    binding: object = None
    outcome: Status | None = None
    gone: bool = False  # the pod was deleted while it waited: it is not sent back to the queue
    _owner: WaitingPods | None = field(default=None, repr=False)

    @property
    def pending_plugins(self) -> list[str]:
        return list(self.pending)

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go; when no other plugin holds it, its binding cycle may run."""
        if self.outcome is not None:
            return
        self.pending.pop(plugin, None)
        if not self.pending:
            self._settle(Status())

    def reject(self, plugin: str, message: str) -> bool:
        """The pod will not be bound: it is unreserved and forgotten, and goes back to the queue as unschedulable.
        False when its wait had already ended."""
        return self._settle(Status(Code.UNSCHEDULABLE, [message], plugin))

    def preempt(self, plugin: str, message: str) -> bool:
        """Preemption took the pod's room (kube-scheduler 1.36+ ``waitingPod.Preempt``): as a rejection, but the
        pod goes back to the queue as after an error."""
        return self._settle(Status(Code.ERROR, [message], plugin))

    def _settle(self, status: Status) -> bool:
        if self.outcome is not None:
            return False
        self.outcome = status
        self.pending.clear()
        if self._owner is not None:
            self._owner._settled.append(self)
        return True


class WaitingPods:
    """Every pod waiting at Permit, by pod key, in the order they started waiting."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._settled: list[WaitingPod] = []
        # every (deadline, plugin, order added, pod) not yet past: expiries and the next deadline without a scan of
        # every waiting pod (entries of pods allowed or settled meanwhile are dropped when they come up)
        self._deadlines: list[tuple[float, str, int, WaitingPod]] = []
        self._added = itertools.count()

    def __len__(self) -> int:
        return len(self._pods)

    def __iter__(self) -> Iterator[WaitingPod]:
        """The pods still waiting (a copy: plugins allow and reject while iterating)."""
        return iter([wp for wp in self._pods.values() if wp.outcome is None])

    def add(self, pod: PodInfo, node: str, waits: dict[str, float], now: float, binding: object) -> WaitingPod:
        """``waits``: plugin -> seconds it asked to wait (capped at ``MAX_PERMIT_TIMEOUT``; a wait of 0 or less ends
        at the next :meth:`expire`, its message giving the time as asked, "after waiting -5s", as upstream's)."""
        capped = {name: min(t, MAX_PERMIT_TIMEOUT) for name, t in waits.items()}
        wp = WaitingPod(pod, node, {n: now + t for n, t in capped.items()}, capped, now, binding, _owner=self)
        self._pods[pod.key] = wp
        order = next(self._added)
        for name, deadline in wp.pending.items():
            heapq.heappush(self._deadlines, (deadline, name, order, wp))
        return wp

    def get(self, key: str) -> WaitingPod | None:
        wp = self._pods.get(key)
        return wp if wp is not None and wp.outcome is None else None

    def has_settled(self) -> bool:
        return bool(self._settled)

    def idle(self) -> bool:
        """No wait ended and no deadline is pending: :meth:`expire` and :meth:`take_settled` would do nothing,
        whatever the time."""
        return not self._settled and not self._deadlines

    def take_settled(self) -> list[WaitingPod]:
        """The pods whose wait ended since the last call, in the order it ended; they leave the map."""
        out, self._settled = self._settled, []
        for wp in out:
            if self._pods.get(wp.pod.key) is wp:
                del self._pods[wp.pod.key]
        return out

    @staticmethod
    def _live(entry: tuple[float, str, int, WaitingPod]) -> bool:
        """Whether a deadline entry still counts: its pod still waits for that plugin."""
        deadline, name, _order, wp = entry
        return wp.outcome is None and wp.pending.get(name) == deadline

    def next_deadline(self) -> float | None:
        heap = self._deadlines
        while heap and not self._live(heap[0]):
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def expire(self, now: float) -> None:
        """End every wait whose time is up: the pod is rejected by the first plugin (earliest deadline, then
        name) whose timeout passed; the pods in the order they started waiting."""
        heap = self._deadlines
        due: dict[int, tuple[str, WaitingPod]] = {}  # order added -> the plugin whose timeout rejects it
        while heap and heap[0][0] <= now:
            entry = heapq.heappop(heap)
            if self._live(entry) and entry[2] not in due:
                due[entry[2]] = (entry[1], entry[3])
        for _order, (name, wp) in sorted(due.items()):
            wait = format_duration(wp.waits[name])
            wp.reject(name, f"rejected due to timeout after waiting {wait} at plugin {name}")
