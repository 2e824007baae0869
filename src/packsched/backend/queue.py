"""The scheduling queue, as kube-scheduler keeps it: an active heap ordered by the QueueSort plugin, backoff
heaps ordered by expiry (with SchedulerPopFromBackoffQ: by 1 s window, then as the active heap, and a second one for
errors), and the unschedulable pods waiting for a cluster change. kube-scheduler 1.37's
pod-group entities (:class:`GroupEntity`) are kept beside the pods: a group's pods stay queued one by one, and share
the entity's order key, backoff expiry and counts."""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from packsched.config.defaults import DEFAULT_POD_INITIAL_BACKOFF_SECONDS, DEFAULT_POD_MAX_BACKOFF_SECONDS
from packsched.framework.podinfo import PodInfo

SortKey = Callable[[PodInfo], tuple[float | int | str, ...]]


@dataclass
class QueuedPod:
    info: PodInfo
    attempts: int = 0
    backoff_until: float = 0.0
    last_reason: str = ""
    gated: bool = False
    gate_plugin: str = ""  # the PreEnqueue plugin that holds it back (when gated)
    moves_seen: int = 0  # the queue's move requests when it was popped (see add_unschedulable)
    unschedulable_plugins: frozenset[str] = frozenset()  # the plugins that rejected it last
    in_backoff: bool = False  # its latest heap entry is in the backoff heap
    unschedulable_since: float = 0.0  # when it last failed (the periodic flush moves pods waiting too long)
    error: bool = False  # it came back after an error (upstream's error backoff queue: never popped early)
    backoff_popped_at: float | None = None  # the instant it was last popped from backoff (SchedulerPopFromBackoffQ)


# (schedulerName, the PreEnqueue plugin that holds a pod back, its reason)
GateKind = tuple[str, str, str]

# kube-scheduler's backoff ordering window (SchedulerPopFromBackoffQ, on from 1.33): a backoff expiry is truncated to
# a whole second, and the backoff queue is flushed at each whole second (of the scheduler's clock: virtual time in
# the simulator, the monotonic clock in live mode). Single pods and pod-group entities alike (``backoff_end``).
BACKOFF_WINDOW_S = 1.0


def backoff_end(now: float, duration: float, windows: bool) -> float:
    """When a pod (or entity) sent back at ``now`` for ``duration`` leaves backoff. Without windows: at its expiry.
    With them (upstream alignToWindow, isEntityBackingoff): the expiry is truncated to its window, the pod backs off
    while that is not before the current window's start, so the first whole-second flush after the truncated
    expiry moves it (expiry 3.4 s -> window 3 s -> out at the 4 s flush; expiry 3.0 s -> out at 4 s too)."""
    expiry = round(now + duration, 9)
    if not windows:
        return expiry
    return (math.floor(expiry / BACKOFF_WINDOW_S) + 1) * BACKOFF_WINDOW_S


@dataclass
class GroupEntity:
    """kube-scheduler 1.37's queue entity for a pod group (upstream QueuedPodGroupInfo's QueueingParams), kept from
    the end of the group's first pod-group cycle while pods of the group wait in the queue: the group's pods wait
    and are popped as one, ordered by the PodGroup's ``priority`` and the entity's timestamp (``stamp``, an order
    as ``PodInfo.arrival``), and back off together by the entity's own counts (cycles rejected since it last fitted,
    or consecutive errors) until ``backoff_until``. ``queued``: the keys of its pods in the queue."""

    stamp: int
    priority: int
    unschedulable: int = 0
    errors: int = 0
    backoff_until: float = 0.0
    queued: set[str] = field(default_factory=set)


# How a pod-group cycle ended, for its entity (upstream AddAttemptedPodGroupIfNeeded's status)
ENTITY_FITS = "fits"
ENTITY_REJECTED = "rejected"
ENTITY_ERROR = "error"


class _Entry(NamedTuple):
    """A heap entry, ordered by ``key`` then ``seq`` (unique, so ``item`` is never compared): a tuple, which the
    heap compares in C (a dataclass's generated ``__lt__`` built two tuples per comparison)."""

    key: tuple[float | int | str, ...]
    seq: int
    item: QueuedPod


class SchedulingQueue:
    """``pop`` returns the next pod to try; failed pods wait in ``unschedulable`` until :meth:`move_all`
    (a cluster event) sends them to backoff, then back to the active heap when their backoff expires."""

    def __init__(
        self,
        sort_key: SortKey,
        initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
        max_backoff: float = DEFAULT_POD_MAX_BACKOFF_SECONDS,
        pop_from_backoff: bool = False,
    ) -> None:
        self.sort_key = sort_key
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        # SchedulerPopFromBackoffQ: ordering windows, and Pop takes the backoff heap's head when nothing is active
        self.pop_from_backoff = pop_from_backoff
        self._active: list[_Entry] = []
        # the backoff heap; with pop_from_backoff it holds the pods a plugin rejected, ordered by (the end of their
        # backoff, the active heap's key), and ``_error_backoff`` (by end alone) the pods back after an error and
        # the pods of pod-group entities, which Pop never takes early (upstream's two backoff heaps)
        self._backoff: list[_Entry] = []
        self._error_backoff: list[_Entry] = []
        self.unschedulable: dict[str, QueuedPod] = {}
        # the plugins whose rejections a newly assigned pod may lift, and the unschedulable pods one of them rejected
        self.hinted_plugins: frozenset[str] = frozenset()
        self._hinted: dict[str, QueuedPod] = {}
        self.gated: dict[str, QueuedPod] = {}
        # the gated pods of each pod group (kube-scheduler's own, by PodGroupRef.key), in the order of ``gated``, and
        # how many of them are held by each (schedulerName, PreEnqueue plugin, reason)
        self._gated_by_group: dict[str, dict[str, QueuedPod]] = {}
        self._gate_kinds: dict[str, dict[GateKind, int]] = {}
        self._queued: dict[str, QueuedPod] = {}  # every pod in any sub-queue, by key
        self._seq = itertools.count()
        self._stamp = itertools.count()
        self._first_active = itertools.count()
        self.move_requests = 0  # how many times move_all was called (upstream's moveRequestCycle)
        # kube-scheduler 1.37's pod-group entities, by PodGroupRef key (empty in every other release)
        self.entities: dict[str, GroupEntity] = {}

    def __len__(self) -> int:
        return len(self._queued)

    def __contains__(self, key: str) -> bool:
        return key in self._queued

    def pods(self) -> Iterator[QueuedPod]:
        return iter(list(self._queued.values()))

    def _push_active(self, qp: QueuedPod, restamp: bool = True) -> None:
        qp.in_backoff = False
        if qp.info.first_active is None:
            qp.info.first_active = next(self._first_active)
        entity = self._entity_of(qp) if self.entities else None
        if entity is not None:  # the entity's timestamp and priority order it (QueueSort on the entity)
            qp.info.arrival = entity.stamp
            info = qp.info
            if info.priority != entity.priority:  # a pod the cycle refuses (validatePodGroup): the group's counts
                info = replace(info, pod=replace(info.pod, priority=entity.priority))
            heapq.heappush(self._active, _Entry(self.sort_key(info), next(self._seq), qp))
            return
        if restamp:
            qp.info.arrival = next(self._stamp)  # the queue timestamp QueueSort compares
        heapq.heappush(self._active, _Entry(self.sort_key(qp.info), next(self._seq), qp))

    def _entity_of(self, qp: QueuedPod) -> GroupEntity | None:
        ref = qp.info.pod_group
        return self.entities.get(ref.key) if ref is not None else None

    def _left(self, qp: QueuedPod) -> None:
        """The pod left the queue (popped, taken or removed): out of its entity's queued pods."""
        entity = self._entity_of(qp)
        if entity is not None:
            entity.queued.discard(qp.info.key)

    def add(self, info: PodInfo, gate_reason: str = "", gate_plugin: str = "", now: float = 0.0) -> QueuedPod:
        """A new pod. With ``gate_reason`` (``gate_plugin``, a PreEnqueue plugin, refused it) it waits without
        being tried. A pod of a pod group whose 1.37 entity waits in the queue joins it (``now``: the clock, to
        tell whether the entity is backing off)."""
        qp = QueuedPod(info)
        self._queued[info.key] = qp
        entity = self._joined(qp) if self.entities else None
        if gate_reason:
            qp.gated = True
            qp.last_reason = gate_reason
            qp.gate_plugin = gate_plugin
            qp.info.arrival = next(self._stamp)  # kept when it is let in (upstream's queue timestamp)
            self._gate(qp)
        elif entity is not None and entity.backoff_until > now:
            qp.info.arrival = entity.stamp
            self._wait_backoff(qp, entity.backoff_until)
        else:
            self._push_active(qp)
        return qp

    def _joined(self, qp: QueuedPod) -> GroupEntity | None:
        """The entity of the pod's group that waits in the queue, the pod now one of its pods; None when the group
        has none there (a record whose pods all left is dropped: upstream makes a new entity, its counts fresh)."""
        ref = qp.info.pod_group
        entity = self.entities.get(ref.key) if ref is not None else None
        if entity is None or ref is None:
            return None
        if not entity.queued:
            del self.entities[ref.key]
            return None
        entity.queued.add(qp.info.key)
        return entity

    def _wait_backoff(self, qp: QueuedPod, until: float) -> None:
        qp.backoff_until = until
        qp.in_backoff = True
        if not self.pop_from_backoff:
            heapq.heappush(self._backoff, _Entry((until,), next(self._seq), qp))
        elif qp.error or self._entity_of(qp) is not None:
            heapq.heappush(self._error_backoff, _Entry((until,), next(self._seq), qp))
        else:  # same window: as the active heap orders them (upstream lessBackoffCompletedWithPriority)
            heapq.heappush(self._backoff, _Entry((until, *self.sort_key(qp.info)), next(self._seq), qp))

    def requeue_entity(
        self,
        group: str,
        pods: list[tuple[QueuedPod, str, frozenset[str]]],
        now: float,
        outcome: str,
        priority: int,
        stamp: int,
    ) -> None:
        """kube-scheduler 1.37 after a pod-group cycle (upstream AddAttemptedPodGroupIfNeeded): the group's ``pods``
        that go back, each with its reason and rejecting plugins, make its entity again, with the counts it had.
        ``outcome``: ENTITY_FITS (the group fitted: counts reset, its timestamp ``stamp`` — the one it was popped
        by — kept so that the pods left over are tried at once, ahead of later entities), ENTITY_REJECTED (one
        more unschedulable cycle, errors reset) or ENTITY_ERROR (one more consecutive error); the last two take a
        new timestamp and back off for the count (errors first), the cap scaled by the square root of the pods
        going back, the expiry truncated to its 1 s window and left at the next whole-second flush after it. No
        pod going back: the entity is gone (a later pod of the group makes a new one)."""
        if not pods:
            self.entities.pop(group, None)
            return
        entity = self.entities.get(group)
        if entity is None:
            entity = self.entities[group] = GroupEntity(stamp, priority)
        entity.priority = priority
        if outcome == ENTITY_FITS:
            entity.unschedulable = entity.errors = 0
            entity.stamp = stamp
        else:
            if outcome == ENTITY_REJECTED:
                entity.unschedulable += 1
                entity.errors = 0
            else:
                entity.errors += 1
            entity.stamp = next(self._stamp)
        entity.backoff_until = self._entity_backoff(entity, len(pods), now) if outcome != ENTITY_FITS else 0.0
        for qp, reason, plugins in pods:
            qp.last_reason, qp.unschedulable_plugins, qp.unschedulable_since = reason, plugins, now
            qp.info.arrival = entity.stamp
            self._queued[qp.info.key] = qp
            entity.queued.add(qp.info.key)
            if entity.backoff_until > now:
                self._wait_backoff(qp, entity.backoff_until)
            else:
                qp.backoff_until = entity.backoff_until
                self._push_active(qp)

    def _entity_backoff(self, entity: GroupEntity, size: int, now: float) -> float:
        """When the entity leaves backoff (upstream getBackoffTime with the ordering window, then the flush that
        finds it done): 0 without a count or with backoff off."""
        count = entity.errors or entity.unschedulable
        if count == 0 or self.max_backoff <= 0:
            return 0.0
        return backoff_end(now, self.backoff_duration(count, self.group_max_backoff(size)), self.pop_from_backoff)

    def join_entity(self, qp: QueuedPod, now: float, reason: str, plugins: frozenset[str], priority: int) -> None:
        """kube-scheduler 1.37: a pod of a pod group back from outside a pod-group cycle (rejected while waiting at
        Permit, or its binding failed): it joins its group's entity where that waits in the queue (and waits out
        its backoff), else makes a new one, its counts fresh, which goes to the active queue at once (upstream
        addPodGroupMember)."""
        qp.last_reason, qp.unschedulable_plugins, qp.unschedulable_since = reason, plugins, now
        entity = self._joined(qp)
        ref = qp.info.pod_group
        if entity is None and ref is not None and not self._plain_member_queued(ref.key, qp.info.key):
            entity = self.entities[ref.key] = GroupEntity(next(self._stamp), priority, queued={qp.info.key})
        # (a pod of the group queued on its own, as packsched queues a group's pods until its first cycle sends some
        # back: upstream's entity would hold both and go active at once; the pod goes active beside it)
        self._queued[qp.info.key] = qp
        if entity is not None and entity.backoff_until > now:
            qp.info.arrival = entity.stamp
            self._wait_backoff(qp, entity.backoff_until)
            return
        qp.backoff_until = 0.0
        self._push_active(qp)

    def _plain_member_queued(self, group: str, key: str) -> bool:
        """Whether a pod of ``group`` other than ``key`` waits in the queue outside any entity (rare: a join scans
        the queue)."""
        return any(
            k != key and o.info.pod_group is not None and o.info.pod_group.key == group for k, o in self._queued.items()
        )

    def _gate(self, qp: QueuedPod) -> None:
        """``qp`` is held back at PreEnqueue. A pod gated again (the same key) keeps its place, in ``gated`` and in
        its group's list."""
        key = qp.info.key
        before = self.gated.get(key)
        old_ref = before.info.pod_group if before is not None else None
        ref = qp.info.pod_group
        moved = before is not None and (old_ref.key if old_ref else None) != (ref.key if ref else None)
        if before is not None and old_ref is not None:
            self._count_kind(old_ref.key, before, -1)
            if moved:
                self._leave_group(old_ref.key, key)
        self.gated[key] = qp
        if ref is not None:
            if moved:  # now in another group, at the place it keeps in ``gated`` (rare: the group list is rebuilt)
                self._gated_by_group[ref.key] = {
                    k: g
                    for k, g in self.gated.items()
                    if g.info.pod_group is not None and g.info.pod_group.key == ref.key
                }
            else:
                self._gated_by_group.setdefault(ref.key, {})[key] = qp
            self._count_kind(ref.key, qp, 1)

    def _leave_group(self, group: str, key: str) -> None:
        members = self._gated_by_group.get(group)
        if members is not None:
            members.pop(key, None)
            if not members:
                del self._gated_by_group[group]

    def _ungate(self, key: str) -> QueuedPod | None:
        qp = self.gated.pop(key, None)
        ref = qp.info.pod_group if qp is not None else None
        if qp is not None and ref is not None:
            self._leave_group(ref.key, key)
            self._count_kind(ref.key, qp, -1)
        return qp

    def _count_kind(self, group: str, qp: QueuedPod, step: int) -> None:
        kind = (qp.info.pod.scheduler_name, qp.gate_plugin, qp.last_reason)
        kinds = self._gate_kinds.setdefault(group, {})
        left = kinds.get(kind, 0) + step
        if left > 0:
            kinds[kind] = left
        else:
            kinds.pop(kind, None)
            if not kinds:
                del self._gate_kinds[group]

    def hold_again(self, qp: QueuedPod, reason: str, plugin: str) -> None:
        """A gated pod that PreEnqueue held back once more: ``plugin`` holds it now, for ``reason``."""
        ref = qp.info.pod_group if self.gated.get(qp.info.key) is qp else None
        if ref is not None:
            self._count_kind(ref.key, qp, -1)
        qp.last_reason, qp.gate_plugin = reason, plugin
        if ref is not None:
            self._count_kind(ref.key, qp, 1)

    def gate_kinds(self, group: str) -> Mapping[GateKind, int]:
        """For the pod group ``group``'s gated pods: how many each (schedulerName, PreEnqueue plugin, reason)
        holds."""
        return self._gate_kinds.get(group, {})

    def first_gated_in_group(self, group: str) -> QueuedPod | None:
        members = self._gated_by_group.get(group)
        return next(iter(members.values())) if members else None

    def gated_pods(self) -> list[QueuedPod]:
        return list(self.gated.values())

    def gated_in_group(self, group: str) -> list[QueuedPod]:
        """The gated pods of the pod group ``group`` (a PodGroupRef key), in the order :meth:`gated_pods` lists
        them."""
        members = self._gated_by_group.get(group)
        return list(members.values()) if members else []

    def ungate(self, key: str) -> bool:
        """A gated pod whose PreEnqueue plugins now let it in goes to the active heap (upstream moveToActiveQ after
        PreEnqueue passes). False when it is not gated."""
        qp = self._ungate(key)
        if qp is None:
            return False
        qp.gated = False
        qp.gate_plugin = ""
        self._push_active(qp, restamp=False)
        return True

    def pop_specific(self, key: str) -> QueuedPod | None:
        """Take this pod out of the queue wherever it waits, but not when a PreEnqueue plugin holds it back
        (upstream PopSpecificPod: activate it, then pop it from the active heap). None when it is not queued."""
        qp = self._queued.get(key)
        if qp is None or qp.gated:
            return None
        del self._queued[key]
        if self.entities:
            self._left(qp)
        self.unschedulable.pop(key, None)
        self._hinted.pop(key, None)
        qp = replace(qp)  # its heap entry (active or backoff) goes stale, even once the pod is queued again
        qp.attempts += 1
        qp.moves_seen = self.move_requests
        return qp

    def requeue_after_backoff(self, qp: QueuedPod, now: float, reason: str, plugins: frozenset[str]) -> None:
        """After a failed attempt, back through backoff without waiting for a cluster event (kube-scheduler 1.36:
        a pod of a pod group, whose retries follow the backoff alone; 1.37 backs off its entity,
        :meth:`requeue_entity`)."""
        qp.last_reason = reason
        qp.unschedulable_plugins = plugins
        qp.unschedulable_since = now
        self.requeue_now(qp, now, error=not plugins)

    def backoff_duration(self, attempts: int, max_backoff: float | None = None) -> float:
        top = self.max_backoff if max_backoff is None else max_backoff
        duration = self.initial_backoff
        for _ in range(1, attempts):
            duration *= 2
            if duration >= top:
                return top
        return min(duration, top)

    def group_max_backoff(self, size: int) -> float:
        """kube-scheduler 1.37's cap on a pod group's backoff: the configured one times the square root of the
        group's queued pods (Go's float64 product, truncated to nanoseconds)."""
        return int(self.max_backoff * 1e9 * math.sqrt(size)) / 1e9 if size > 1 else self.max_backoff

    def pop(self, now: float) -> QueuedPod | None:
        """The next pod to try at ``now``: the backoff that ended by then is flushed first (with windows, ends are
        whole seconds, so this is the flush of the latest tick), then the active heap's head; with
        SchedulerPopFromBackoffQ, when nothing is active, the head of the backoff heap (still backing off; not a
        pod back after an error nor a pod-group entity's). The simulator's guard: a cycle takes no time there, so a
        pod popped from backoff is not popped from backoff again at the same instant (upstream would retry it
        for as long as the active queue stays empty); the next is tried at its window's flush."""
        if self._backoff or self._error_backoff:
            self._flush_backoff(now)
        while self._active:
            entry = heapq.heappop(self._active)
            qp = entry.item
            if self._queued.get(qp.info.key) is qp:
                return self._popped(qp)
        if self.pop_from_backoff:
            return self._pop_backoff(now)
        return None

    def _popped(self, qp: QueuedPod) -> QueuedPod:
        del self._queued[qp.info.key]
        if self.entities:
            self._left(qp)
        qp.attempts += 1
        qp.moves_seen = self.move_requests
        return qp

    def _pop_backoff(self, now: float) -> QueuedPod | None:
        head = self._valid_head(self._backoff)
        if head is None or head.backoff_popped_at == now:
            return None
        heapq.heappop(self._backoff)
        head.in_backoff = False
        head.backoff_popped_at = now
        if head.info.first_active is None:
            head.info.first_active = next(self._first_active)
        return self._popped(head)

    def _valid_head(self, heap: list[_Entry]) -> QueuedPod | None:
        """The head of a backoff heap once its stale entries (pods taken, removed or moved since) are dropped."""
        while heap:
            head = heap[0].item
            if self._queued.get(head.info.key) is head:
                return head
            heapq.heappop(heap)
        return None

    def _flush_backoff(self, now: float) -> None:
        """Upstream flushBackoffQCompleted: the backoff heap's pods whose backoff ended, then the error heap's."""
        for heap in (self._backoff, self._error_backoff):
            while heap and float(heap[0].key[0]) <= now:
                qp = heapq.heappop(heap).item
                if self._queued.get(qp.info.key) is qp:
                    self._push_active(qp)

    def next_backoff_expiry(self) -> float | None:
        """When the next backoff ends (with windows: the whole-second flush that moves it), None when no pod backs
        off: the simulator and live mode wake at it, and tick only while something waits."""
        ends = [float(h[0].key[0]) for h in (self._backoff, self._error_backoff) if self._valid_head(h) is not None]
        return min(ends) if ends else None

    def add_unschedulable(self, qp: QueuedPod, now: float, reason: str, plugins: frozenset[str] = frozenset()) -> None:
        """After a failed attempt: wait for a cluster change, then for the backoff. A cluster change that came
        while the pod was being tried (a move request since it was popped: its own victims left, say) did not move
        it, so it goes to backoff at once (upstream AddUnschedulableIfNotPresent with moveRequestCycle)."""
        qp.last_reason = reason
        qp.unschedulable_plugins = plugins
        qp.unschedulable_since = now
        qp.error = not plugins  # no plugin rejected it: upstream's error backoff heap
        qp.backoff_until = self._backoff_end(qp, now)
        self._queued[qp.info.key] = qp
        if qp.moves_seen != self.move_requests:
            self._to_backoff_or_active(qp, now)
        else:
            self.unschedulable[qp.info.key] = qp
            if plugins & self.hinted_plugins:
                self._hinted[qp.info.key] = qp

    def park(self, qp: QueuedPod, now: float) -> None:
        """Back among the unschedulable pods as it was (its reason and plugins), whatever moved meanwhile: it waits
        for the next move or flush."""
        qp.moves_seen = self.move_requests
        entity = self._entity_of(qp) if self.entities else None
        if entity is not None:
            entity.queued.add(qp.info.key)
        self.add_unschedulable(qp, now, qp.last_reason, qp.unschedulable_plugins)

    def requeue_now(self, qp: QueuedPod, now: float, error: bool = True) -> None:
        """Back to backoff (or active) at once: a pod whose attempt ended in an error (``error``: it waits in
        the error backoff heap, which Pop never takes early), or one sent back after its backoff alone."""
        qp.error = error
        qp.backoff_until = self._backoff_end(qp, now)
        self._queued[qp.info.key] = qp
        self._to_backoff_or_active(qp, now)

    def _backoff_end(self, qp: QueuedPod, now: float) -> float:
        """When the pod, sent back at ``now`` after its latest attempt, leaves backoff (``backoff_end``); with
        windows and backoff off (``podMaxBackoffSeconds: 0``), at once, as upstream's zero expiry."""
        if self.pop_from_backoff and self.max_backoff <= 0:
            return 0.0
        if not self.pop_from_backoff:  # today's arithmetic, unrounded
            return now + self.backoff_duration(qp.attempts)
        return backoff_end(now, self.backoff_duration(qp.attempts), True)

    def _to_backoff_or_active(self, qp: QueuedPod, now: float) -> None:
        if qp.backoff_until <= now:
            self._push_active(qp)
        else:
            self._wait_backoff(qp, qp.backoff_until)

    def move_some(self, now: float, which: Callable[[QueuedPod], bool]) -> int:
        """A cluster event that may make some pods schedulable: the unschedulable pods rejected by one of the
        ``hinted_plugins`` that ``which`` picks go back.
        Counts as a move request for pods being tried (upstream movePodsToActiveOrBackoffQueue)."""
        self.move_requests += 1
        moved = [qp for qp in self._hinted.values() if self.unschedulable.get(qp.info.key) is qp and which(qp)]
        for qp in moved:
            del self.unschedulable[qp.info.key]
            del self._hinted[qp.info.key]
            self._to_backoff_or_active(qp, now)
        return len(moved)

    def move_all(self, now: float, keep: str | None = None, stay: Callable[[QueuedPod], bool] | None = None) -> int:
        """A cluster event that may make pods schedulable: every unschedulable pod goes back, but ``keep`` and
        those ``stay`` picks (the event is not one their plugins registered)."""
        self.move_requests += 1
        moved: list[QueuedPod] = []
        kept: list[QueuedPod] = []
        for key, qp in self.unschedulable.items():
            (kept if key == keep or (stay is not None and stay(qp)) else moved).append(qp)
        self.unschedulable.clear()
        self._hinted.clear()
        for qp in kept:
            self.unschedulable[qp.info.key] = qp
            if qp.unschedulable_plugins & self.hinted_plugins:
                self._hinted[qp.info.key] = qp
        for qp in moved:
            self._to_backoff_or_active(qp, now)
        return len(moved)

    def activate(self, keys: Iterable[str], now: float) -> int:
        """Upstream Activate (a plugin's PodsToActivate): each of these pods that waits as unschedulable or in
        backoff goes to the active heap now; gated pods, pods already active and pods not queued stay as they
        are. A pod taken out of the backoff heap is queued as a fresh entry (the stale heap entry is skipped)."""
        moved = 0
        for key in keys:
            qp = self._queued.get(key)
            if qp is None or qp.gated:
                continue
            if self.unschedulable.pop(key, None) is not None:
                self._hinted.pop(key, None)
            elif qp.in_backoff:
                qp = replace(qp)
                self._queued[key] = qp
            else:
                continue
            entity = self._entity_of(qp) if self.entities else None
            if entity is not None:  # the whole entity is active now (a pod joining it does not wait)
                entity.backoff_until = min(entity.backoff_until, now)
            self._push_active(qp)
            moved += 1
        return moved

    def flush_unschedulable(self, now: float, older_than: float) -> int:
        """Upstream flushUnschedulablePodsLeftover: the unschedulable pods that failed more than ``older_than``
        seconds ago go back (to backoff, or active if their backoff is over). Not a move request."""
        old = [qp for qp in self.unschedulable.values() if now - qp.unschedulable_since > older_than]
        for qp in old:
            del self.unschedulable[qp.info.key]
            self._hinted.pop(qp.info.key, None)
            self._to_backoff_or_active(qp, now)
        return len(old)

    def oldest_unschedulable(self, which: Callable[[QueuedPod], bool]) -> float | None:
        """When the longest-waiting unschedulable pod that ``which`` picks failed, or None."""
        return min((qp.unschedulable_since for qp in self.unschedulable.values() if which(qp)), default=None)

    def take(self, key: str) -> QueuedPod | None:
        """Take this pod out of the queue wherever it waits, as :meth:`pop` would have (one attempt more): a
        record's replay tries the pods in the recorded order. None when it is not queued."""
        qp = self.remove(key)
        if qp is not None:
            qp.attempts += 1
            qp.moves_seen = self.move_requests
        return qp

    def remove(self, key: str) -> QueuedPod | None:
        """Forget a pod (deleted); stale heap entries are skipped when popped."""
        qp = self._queued.pop(key, None)
        if qp is not None and self.entities:
            self._left(qp)
        self.unschedulable.pop(key, None)
        self._hinted.pop(key, None)
        self._ungate(key)
        return qp


@dataclass(frozen=True)
class PendingCounts:
    """How many pods wait in each sub-queue (kube-scheduler's ``scheduler_pending_pods`` gauge)."""

    active: int
    backoff: int
    unschedulable: int
    gated: int


class QueueView:
    """What the scheduler's drivers (the simulator, live mode, tests) may read of the queue: membership, counts and
    the next backoff expiry. Only the scheduler changes the queue."""

    def __init__(self, queue: SchedulingQueue) -> None:
        self._q = queue

    def __len__(self) -> int:
        return len(self._q)

    def __contains__(self, key: str) -> bool:
        return key in self._q

    @property
    def unschedulable(self) -> frozenset[str]:
        """Keys of the pods waiting for a cluster change."""
        return frozenset(self._q.unschedulable)

    @property
    def gated(self) -> frozenset[str]:
        """Keys of the pods a PreEnqueue plugin holds back."""
        return frozenset(self._q.gated)

    def is_gated(self, key: str) -> bool:
        return key in self._q.gated

    def reason(self, key: str) -> str:
        """Why the pod's last attempt failed ('' when it was not tried, or is not queued)."""
        qp = self._q._queued.get(key)
        return qp.last_reason if qp is not None else ""

    def next_backoff_expiry(self) -> float | None:
        return self._q.next_backoff_expiry()

    def counts(self, now: float) -> PendingCounts:
        q = self._q
        unsched, gated = len(q.unschedulable), len(q.gated)
        backoff = sum(
            1
            for qp in q._queued.values()
            if qp.info.key not in q.unschedulable and not qp.gated and qp.backoff_until > now
        )
        return PendingCounts(len(q) - unsched - gated - backoff, backoff, unsched, gated)
