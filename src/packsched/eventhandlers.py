"""The scheduler's reactions to cluster changes, and its queue: kube-scheduler's ``eventhandlers.go`` with the
parts of ``scheduler.go`` that feed the queue.

Every change of the cluster that the scheduler hears of — a pod created, bound, finished or deleted, a node added,
changed or removed, another object changed — comes through one method here, which updates the cache, tells the
plugins that keep their own view (:meth:`EventHandlers.dispatch`) and moves the queued pods the change may help.
The simulator (``sim/engine.py``) and live mode (``live/handlers.py``, ``live/controller.py``) call these methods
and nothing below them: they differ in where the changes come from (a virtual timeline, or watches), never in
what a change does. The queue is private to the scheduler; drivers read it through :attr:`EventHandlers.queue`
(a :class:`~packsched.backend.queue.QueueView`).

:class:`EventHandlers` is a part of :class:`packsched.scheduler.Scheduler` (its base class), kept in a file of its
own as upstream keeps its event handlers beside the scheduling cycle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from packsched.api.dra import pod_claim_keys
from packsched.api.gangs import pod_group_name
from packsched.api.objects import Node
from packsched.api.podgroups import SchedulingPodGroup
from packsched.backend.cache import Cache
from packsched.backend.nominator import Nominator
from packsched.backend.podgroups import PodGroupState, PodGroupStates
from packsched.backend.queue import QueuedPod, QueueView, SchedulingQueue
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.interface import (
    ADD,
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    DELETE,
    DRA_CHANGE,
    ELASTIC_QUOTA,
    NODE_CHANGE,
    POD,
    POD_GROUP,
    RESOURCE_CLAIM,
    SCHEDULING_POD_GROUP,
    SCHEDULING_POD_GROUP_UPDATE,
    SCHEDULING_WORKLOAD,
    STORAGE_CHANGE,
    UNSCHEDULED_POD_ADD,
    UPDATE,
    AssignedPodAddPlugin,
    ClusterEvent,
    PreEnqueuePlugin,
    QueueingHintPlugin,
)
from packsched.framework.podinfo import PodInfo
from packsched.framework.runtime import Framework
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.framework.status import Code, Status
from packsched.framework.waiting import WaitingPods

# Objects whose changes may let waiting pods fit: every unschedulable pod is tried again after one (a quota that
# grew lets its namespace's pods in; a claim PostFilter deallocated can be allocated elsewhere). Changes of other
# kinds (Services, workload controllers) only update the plugins' views, as upstream's default plugins register no
# event for them.
MOVING_KINDS = frozenset({ELASTIC_QUOTA, POD_GROUP, RESOURCE_CLAIM})
# Objects whose creation moves only the pods a plugin that registers it rejected (and its queueing hint lets
# through): kube-scheduler's own Workloads and PodGroups, registered by GangScheduling alone.
REGISTERED_KINDS = frozenset({SCHEDULING_WORKLOAD, SCHEDULING_POD_GROUP})


def _rejectors(result: FailedAttempt) -> frozenset[str]:
    """The plugins that rejected an attempt: those the diagnosis names, or the one that refused it on its chosen
    node (Reserve or Permit: upstream's FitError)."""
    if result.status.code == Code.ERROR:
        return frozenset()
    if result.rejected_on_node:
        return frozenset({result.status.plugin} - {""})
    diagnosis = result.diagnosis
    return frozenset(diagnosis.unschedulable_plugins) if diagnosis is not None else frozenset()


class EventHandlers:
    """The queue and the reactions to cluster changes (a base class of ``Scheduler``, which sets these fields)."""

    config: KubeSchedulerConfiguration
    cache: Cache
    nominator: Nominator
    frameworks: dict[str, Framework]
    clock: Callable[[], float]
    _queue: SchedulingQueue
    _snapshot: Snapshot
    _pod_add_hints: dict[str, AssignedPodAddPlugin]
    _order: IntArray | None
    _name_rank: IntArray | None
    _waiting: WaitingPods
    _declared_events: dict[str, frozenset[str]]  # plugin -> the queueing events it registers (those that declare)
    _hints: dict[str, QueueingHintPlugin]  # plugins with queueing hints for their events
    # plugin -> the events on which the pods its PreEnqueue holds back run PreEnqueue again (``pre_enqueue_events``)
    _gate_events: dict[str, frozenset[str]]
    # the pods activated at the instant ``_activated_instant`` of the clock (see activate)
    _activated_now: set[str]
    _activated_instant: float | None
    # pods that are not finished, by (namespace, scheduling group), for the gang plugins (Handle.group_members)
    _groups: dict[tuple[str, str], dict[str, PodInfo]]
    # kube-scheduler's own pod groups (GenericWorkload): every pod with a group, and where it stands
    _gangs: PodGroupStates
    _pod_group_objects: dict[str, SchedulingPodGroup]  # their PodGroup objects (1.36+), by namespace/name

    @property
    def queue(self) -> QueueView:
        """What waits in the queue, read-only."""
        return QueueView(self._queue)

    def framework_for(self, pod: PodInfo) -> Framework | None:
        return self.frameworks.get(pod.pod.scheduler_name)

    def dispatch(self, event: ClusterEvent) -> None:
        """Tell every profile's plugins of a change (their informer handlers), and nothing else: the scheduler's
        own reactions below call it; a restarted configuration's plugins are told of the cluster through it."""
        if event.resource == SCHEDULING_POD_GROUP:
            self._remember_pod_group(event)
        for fwk in self.frameworks.values():
            fwk.dispatch(event)

    def _remember_pod_group(self, event: ClusterEvent) -> None:
        """kube-scheduler's own PodGroups of the versions the release serves, as its snapshot lists them (the
        1.37 pod-group cycle reads the group's priority there, whatever plugins run)."""
        group = event.new if event.new is not None else event.old
        if not isinstance(group, SchedulingPodGroup) or not group.served_in(self.config.kube_version.minor):
            return
        if event.action == DELETE:
            self._pod_group_objects.pop(group.key, None)
        else:
            self._pod_group_objects[group.key] = group

    def pod_group_object(self, key: str) -> SchedulingPodGroup | None:
        """The PodGroup (scheduling.k8s.io, served by the release) of ``namespace/name``, or None."""
        return self._pod_group_objects.get(key)

    # -- unscheduled pods -------------------------------------------------------------------------------------

    def enqueue(self, pod: PodInfo) -> Status:
        """A new pending pod of one of the profiles enters the queue. A nomination it carries from an earlier
        preemption (status.nominatedNodeName) is honoured; a PreEnqueue plugin may hold it back (gated). Answers
        the PreEnqueue status."""
        fwk = self.framework_for(pod)
        if fwk is None:
            raise KeyError(f"no profile has schedulerName {pod.pod.scheduler_name!r}")
        nominated = pod.pod.nominated_node_name
        if nominated in self._snapshot.index:
            self.nominator.nominate(pod, self._snapshot.index[nominated])
        self._track(pod)
        self._gangs.add(pod, bound=False)
        if pod.queued_at is None:
            pod.queued_at = self.clock()
        gate = fwk.run_pre_enqueue(pod)
        self._queue.add(pod, gate_reason="" if gate.ok else gate.message, gate_plugin=gate.plugin, now=self.clock())
        if self.config.kube_version.moves_pods_on_unscheduled_pod_add:
            # kube-scheduler 1.35-1.36 with the GangScheduling gate: the new pod may complete a gang (only the
            # plugins that register the event hear it: the others' hints skip a pod that is not bound)
            self.move_all(UNSCHEDULED_POD_ADD, pod, registered_only=True)
        elif pod.pod_group is not None and self.config.kube_version.pod_group_placement_cycle:
            self._retry_gated_group(pod.pod_group.key)
        return gate

    def group_gated(self, key: str) -> bool:
        """kube-scheduler 1.37: whether a pod of the group is held back at PreEnqueue (upstream's queue then holds
        the group's whole entity back)."""
        return self._queue.first_gated_in_group(key) is not None

    def _retry_gated_group(self, key: str) -> None:
        """kube-scheduler 1.37: the queue holds a pod group's pods as one entity, and a pod joining it runs
        PreEnqueue again for every pod of the entity: the group's pods held back at PreEnqueue are tried again.

        Each pod's plugin that held it back runs first, and while it still refuses, nothing else runs (upstream
        runPreEnqueuePluginsForPod). A plugin whose verdict is one per pod group (``pre_enqueue_per_group``,
        GangScheduling: its Workload or PodGroup and how many pods the group has) is asked once for the group: when
        every held pod of the group is held by that plugin for one reason and its verdict is that reason again,
        nothing changes for any of them, and none is visited (a gang of 1,000 pods arriving one by one would
        otherwise run PreEnqueue half a million times)."""
        memo: dict[tuple[str, str, str], Status] = {}
        kinds = self._queue.gate_kinds(key)
        if len(kinds) == 1:
            ((scheduler_name, plugin_name, reason),) = kinds
            first = self._queue.first_gated_in_group(key)
            fwk = self.frameworks.get(scheduler_name)
            plugin = _pre_enqueue_plugin(fwk, plugin_name) if fwk is not None else None
            if first is not None and plugin is not None and getattr(plugin, "pre_enqueue_per_group", False):
                st = memo[(scheduler_name, plugin_name, key)] = plugin.pre_enqueue(first.info)
                if not st.ok and st.message == reason and (st.plugin or plugin_name) == plugin_name:
                    return
        for qp in self._queue.gated_in_group(key):
            fwk = self.framework_for(qp.info)
            if fwk is not None:
                self._pre_enqueue_again(fwk, qp, memo)

    def dequeue(self, pod: PodInfo) -> None:
        """The pod is no longer pending (deleted, or bound by someone else): out of the queue, no nomination.
        Nothing else moves (upstream ``deletePodFromSchedulingQueue``)."""
        self._queue.remove(pod.key)
        self.nominator.clear(pod)
        self._untrack(pod)

    def _track(self, pod: PodInfo) -> None:
        group = pod_group_name(pod.pod)
        if group:
            self._groups.setdefault((pod.pod.namespace, group), {})[pod.key] = pod

    def _untrack(self, pod: PodInfo) -> None:
        self._activated_now.discard(pod.key)
        self._gangs.delete(pod)
        group = pod_group_name(pod.pod)
        members = self._groups.get((pod.pod.namespace, group)) if group else None
        if members is not None and members.get(pod.key) is pod:
            del members[pod.key]
            if not members:
                del self._groups[(pod.pod.namespace, group)]

    def group_members(self, namespace: str, group: str) -> list[PodInfo]:
        return list(self._groups.get((namespace, group), {}).values())

    def pod_group_state(self, key: str) -> PodGroupState | None:
        return self._gangs.get(key)

    def activate(self, keys: Iterable[str]) -> None:
        """Upstream Activate, with one guard: a pod is activated at most once per instant of the scheduler's
        clock. A gang that keeps failing activates its siblings out of backoff on every round (kube-scheduler then
        spins in real time until the cluster changes); in the simulator a cycle takes no time, so without the
        guard the round would repeat forever at one instant. With it, the next round waits for the pods'
        backoff. (Each member of a gang asks for its unscheduled siblings at Permit: after the first, at one
        instant, all of them are activated already, which one set comparison finds.)"""
        now = self.clock()
        if self._activated_instant != now:
            self._activated_instant, self._activated_now = now, set()
        done = self._activated_now
        keys = list(keys)
        if done.issuperset(keys):
            return
        fresh = [k for k in keys if k not in done]
        done.update(fresh)
        self._queue.activate(fresh, now)

    def next_pod(self) -> QueuedPod | None:
        """The next pod to try now (backoffs that expired by the clock's now are flushed first), or None."""
        return self._queue.pop(self.clock())

    def take(self, key: str) -> QueuedPod | None:
        """Take the pod out of the queue to try it now, out of turn (a record's replay tries pods in the recorded
        order), as popping it would have (its attempts counted). None when it is not queued."""
        return self._queue.take(key)

    def requeue(self, info: PodInfo) -> None:
        """A pod that left the queue without an outcome (a bind conflict the watch never resolved) waits again,
        as when it was created; nothing when it is queued already."""
        if info.key not in self._queue:
            self._queue.add(info)

    def handle_failure(self, qp: QueuedPod, result: FailedAttempt, *, requeue: bool = True) -> None:
        """After an attempt that did not place the pod (upstream ``handleSchedulingFailure``): record the
        nomination preemption made (or cleared), then send the pod back: after an error to backoff at once, when
        unschedulable to wait for a cluster change. ``requeue=False``: the pod is not sent back (the cluster says
        it is gone or bound; a 1.37 pod-group cycle sends its pods back together, :meth:`requeue_pod_group`).
        kube-scheduler 1.37 (pod-group entities): a pod of a pod group joins its group's entity in the queue, or
        makes a new one (:meth:`SchedulingQueue.join_entity`)."""
        pod = qp.info
        if result.nominated_node:
            pod.pod.nominated_node_name = result.nominated_node
            self.nominator.nominate(pod, self._snapshot.index[result.nominated_node])
        elif result.nominated_node == "":
            pod.pod.nominated_node_name = ""
            self.nominator.clear(pod)
        if not requeue:
            return
        plugins = _rejectors(result)
        version = self.config.kube_version
        if pod.pod_group is not None and version.pod_group_entities:
            group = self.pod_group_object(pod.pod_group.key)
            priority = (group.priority or 0) if group is not None else pod.priority
            self._queue.join_entity(qp, self.clock(), result.message, plugins, priority)
        elif result.status.code == Code.ERROR:
            self._queue.requeue_now(qp, self.clock())
        elif pod.pod_group is not None and version.pod_group_scheduling_cycle:
            # kube-scheduler 1.36: a pod of a pod group is retried after its backoff, whatever happens
            self._queue.requeue_after_backoff(qp, self.clock(), result.message, plugins)
        else:
            self._queue.add_unschedulable(qp, self.clock(), result.message, plugins)

    def requeue_pod_group(
        self, group: str, back: Sequence[tuple[QueuedPod, FailedAttempt]], outcome: str, priority: int, stamp: int
    ) -> None:
        """kube-scheduler 1.37: the pods of a pod-group cycle that go back to the queue, as the group's entity
        (upstream AddAttemptedPodGroupIfNeeded; :meth:`SchedulingQueue.requeue_entity`): ``outcome`` is how the
        cycle ended (ENTITY_FITS, ENTITY_REJECTED, ENTITY_ERROR), ``priority`` the PodGroup's, ``stamp`` the
        timestamp the group was popped by. Their nominations are recorded first, as :meth:`handle_failure` does."""
        for qp, result in back:
            self.handle_failure(qp, result, requeue=False)
        pods = [(qp, result.message, _rejectors(result)) for qp, result in back]
        self._queue.requeue_entity(group, pods, self.clock(), outcome, priority, stamp)

    def park(self, qp: QueuedPod) -> None:
        """Put a pod whose verdict cannot change back as unschedulable, untried, with its last reason: the next
        cluster change (or the flush) moves it (the simulator's guard against a gang retried while nothing
        changes)."""
        self._queue.park(qp, self.clock())

    def move_all(self, event: str | None = None, obj: object = None, *, registered_only: bool = False) -> None:
        """A change that may let any waiting pod fit (upstream ``MoveAllToActiveOrBackoffQueue``, also its
        periodic flush of pods that waited too long): every unschedulable pod goes back, except, for an ``event``,
        the pods rejected only by plugins that declare their events and not this one (``queueing_events``), or
        whose queueing hint says ``obj`` does not help them. ``registered_only``: only pods a plugin that registers
        the event rejected move (an event no plugin of packsched's convention, "declare nothing, hear
        everything", should hear). Pods a PreEnqueue plugin with queueing hints holds back are tried at
        PreEnqueue again on the events it registers."""
        self._queue.move_all(self.clock(), stay=self._deaf_to(event, obj, registered_only))
        self._retry_gated(event, obj)

    def _hears(self, plugin: str, event: str, waiting: PodInfo, obj: object) -> bool:
        """Whether ``event`` (about ``obj``) may help a pod ``plugin`` rejected: the plugin registers it and its
        hint (if any) says so."""
        if event not in self._declared_events.get(plugin, ()):
            return False
        hint = self._hints.get(plugin)
        return hint is None or hint.queueing_hint(event, waiting, obj)

    def _deaf_to(
        self, event: str | None, obj: object = None, registered_only: bool = False
    ) -> Callable[[QueuedPod], bool] | None:
        """Which unschedulable pods ``event`` does not move (None: it moves every one)."""
        declared = self._declared_events
        if event is None or (not declared and not registered_only):
            return None

        def stays(qp: QueuedPod) -> bool:
            plugins = qp.unschedulable_plugins
            if registered_only:
                return not any(self._hears(p, event, qp.info, obj) for p in plugins)
            return bool(plugins) and all(p in declared and not self._hears(p, event, qp.info, obj) for p in plugins)

        return stays

    def _retry_gated(self, event: str | None, obj: object, only: Callable[[QueuedPod], bool] | None = None) -> None:
        """Pods held back at PreEnqueue by a plugin with queueing hints that registers ``event`` (every such pod
        for a move of everything): PreEnqueue runs again, and a pod it lets in goes to the active heap (upstream
        moves gated pods on their plugins' events, running PreEnqueue again as they enter the active queue)."""
        if not self._hints and not self._gate_events:
            return
        memo: dict[tuple[str, str, str], Status] = {}
        for qp in self._queue.gated_pods():
            if only is not None and not only(qp):
                continue
            plugin = qp.gate_plugin
            gate_events = self._gate_events.get(plugin)
            if gate_events is not None and event in gate_events:
                pass  # the plugin waits on these objects: PreEnqueue again
            elif plugin not in self._hints or (event is not None and not self._hears(plugin, event, qp.info, obj)):
                continue
            fwk = self.framework_for(qp.info)
            if fwk is None:
                continue
            self._pre_enqueue_again(fwk, qp, memo)

    def _pre_enqueue_again(
        self, fwk: Framework, qp: QueuedPod, memo: dict[tuple[str, str, str], Status] | None = None
    ) -> None:
        """PreEnqueue once more for a pod it held back, as upstream's queue runs it again: the plugin that held it
        back first, and while that one still refuses, no other; else every other plugin in the profile's order. Let
        in (to the active heap), or held with the new reason. ``memo``: verdicts of plugins whose verdict is one per
        pod group (``pre_enqueue_per_group``), by (schedulerName, plugin, group), reused while nothing changes (the
        retries of one event)."""
        info = qp.info
        holding = _pre_enqueue_plugin(fwk, qp.gate_plugin)
        if holding is not None:
            ref = info.pod_group
            if memo is not None and ref is not None and getattr(holding, "pre_enqueue_per_group", False):
                mk = (fwk.name, holding.name, ref.key)
                st = memo.get(mk)
                if st is None:
                    st = memo[mk] = holding.pre_enqueue(info)
            else:
                st = holding.pre_enqueue(info)
            if not st.ok:
                self._queue.hold_again(qp, st.message, st.plugin or holding.name)
                return
        for p in fwk.pre_enqueue:
            if p is holding:
                continue
            st = p.pre_enqueue(info)
            if not st.ok:
                self._queue.hold_again(qp, st.message, st.plugin or p.name)
                return
        self._queue.ungate(info.key)

    def next_flush(self, older_than: float, period: float) -> float | None:
        """When upstream's periodic flush (every ``period`` seconds from time 0) would next move a pod that no
        event moves here (rejected only by plugins that declare their events), or None: the first tick more than
        ``older_than`` seconds after the oldest such pod failed."""
        declared = self._declared_events
        if not declared or not self._queue.unschedulable:  # (asked before every cycle: most find no such pod)
            return None
        oldest = self._queue.oldest_unschedulable(
            lambda qp: bool(qp.unschedulable_plugins) and qp.unschedulable_plugins <= declared.keys()
        )
        if oldest is None:
            return None
        return (math.floor((oldest + older_than) / period) + 1) * period

    def flush_unschedulable(self, older_than: float) -> int:
        """Upstream's periodic flush (flushUnschedulablePodsLeftover): pods unschedulable for more than
        ``older_than`` seconds go back. Answers how many."""
        return self._queue.flush_unschedulable(self.clock(), older_than)

    # -- assigned pods ----------------------------------------------------------------------------------------

    def pod_assigned(self, info: PodInfo, node: str) -> None:
        """A pod is bound to ``node`` (bound by the scheduler, or seen bound): it holds room there (an assumed pod
        is confirmed; a pod held elsewhere moves), the plugins hear of it, and the unschedulable pods it may help
        are tried again (upstream ``addAssignedPodToCache`` with the AssignedPodAdd event)."""
        self.cache.add_pod(info, node)
        self._track(info)
        self._gangs.add(info, bound=True)
        self.dispatch(ClusterEvent(POD, ADD, None, info.pod))
        self._assigned_pod_added(info)

    def assigned_pod_seen(
        self, info: PodInfo, node: str, *, labels: dict[str, str], phase: str, terminating: bool
    ) -> None:
        """The watch shows a pod the cache holds on ``node`` with these labels, phase and deletion state: the
        first sight of a pod we bound confirms it (as :meth:`pod_assigned`); later ones are updates. When what the
        snapshot's per-node match counts read changes, the pod is counted out and in again."""
        first_sight = self.cache.is_assumed(info.key)
        before = None if first_sight else replace(info.pod)  # (a copy of every field: only an update needs it)
        self.cache.add_pod(info, node)
        recount = info.pod.labels != labels or info.pod.terminating != terminating
        if recount:
            self.cache.remove_pod(info.key)
        info.pod.labels = labels
        info.pod.phase = phase
        info.pod.terminating = terminating
        if recount:
            self.cache.add_pod(info, node)
        if first_sight:
            self.dispatch(ClusterEvent(POD, ADD, None, info.pod))
            self._assigned_pod_added(info)
        else:
            assert before is not None
            self.dispatch(ClusterEvent(POD, UPDATE, before, info.pod))

    def pod_finished(self, key: str, phase: str) -> None:
        """A bound pod reached ``phase`` (Succeeded or Failed): it no longer holds room, the plugins see the
        update, and every unschedulable pod is tried again. Nothing when the cache does not hold it."""
        held = self.cache.remove_pod(key)
        if held is None:
            return
        self._untrack(held)
        old = replace(held.pod)
        held.pod.phase = phase
        self.dispatch(ClusterEvent(POD, UPDATE, old, held.pod))
        self.move_all(ASSIGNED_POD_DELETE)

    def pod_deleted(self, info: PodInfo) -> None:
        """The pod is gone. A pod that held room (bound or assumed) frees it, the plugins hear of it and every
        unschedulable pod is tried again; a pending pod just leaves the queue. A pod waiting at Permit is
        rejected ("removed"): its wait ends, and its room is freed when the scheduler settles it."""
        waiting = self._waiting.get(info.key)
        if waiting is not None:
            waiting.reject("", "removed")
            waiting.gone = True
        self._forget_pre_bind_wait(info.key)
        held = self.cache.remove_pod(info.key)
        if held is not None:
            self.dispatch(ClusterEvent(POD, DELETE, held.pod, None))
        self.dequeue(info)
        if held is not None:
            self.move_all(ASSIGNED_POD_DELETE)

    def _forget_pre_bind_wait(self, key: str) -> None:
        """A pod deleted while a PreBind plugin made its binding cycle wait (the scheduler's): the cycle ends."""

    def expire_assumed(self) -> list[PodInfo]:
        """Assumed pods whose binding the watch never confirmed within the cache's TTL are forgotten, as deleted
        ones. Answers them."""
        gone = self.cache.cleanup_expired(self.clock())
        for info in gone:
            self.dispatch(ClusterEvent(POD, DELETE, info.pod, None))
            self.move_all(ASSIGNED_POD_DELETE)
        return gone

    def _assigned_pod_added(self, added: PodInfo) -> None:
        """Unschedulable pods that a plugin rejected and that ``added`` may help (the plugin's
        ``assigned_pod_may_help``: a spread constraint's namespace, a required pod affinity term it matches) go
        back to be tried (upstream's queueing hints for AssignedPodAdd)."""
        self._retry_gated(ASSIGNED_POD_ADD, added)
        hints = self._pod_add_hints
        if not hints:
            return
        snap = self._snapshot

        def helps(qp: QueuedPod) -> bool:
            return any(
                name in hints and hints[name].assigned_pod_may_help(qp.info, added, snap)
                for name in qp.unschedulable_plugins
            )

        self._queue.move_some(self.clock(), helps)

    # -- nodes, namespaces and other objects ------------------------------------------------------------------

    def node_set(self, node: Node) -> None:
        """A node added, or changed (cordoned, relabelled, resized): waiting pods are tried again. An update of a
        known node that changes nothing the scheduler reads of it (a kubelet's status update: conditions and
        heartbeats are not kept) changes nothing: upstream moves pods only for the scheduling properties that
        changed (NodeSchedulingPropertiesChange: none here), and the snapshot keeps its node generation, so the pod
        classes keep their verdicts and scores (a large cluster's status updates would otherwise start them all
        again, over and over)."""
        snap = self._snapshot
        col = snap.index.get(node.name)
        if col is not None and snap.nodes[col] == node:
            return
        self.cache.add_node(node)
        self.move_all(NODE_CHANGE)

    def node_removed(self, name: str) -> Snapshot:
        """The node is gone: the cache makes a new snapshot without it (columns renumbered; its pods wait, holding
        nothing, for the node or their own deletion), the scheduler schedules on it, waiting pods are tried
        again. Nominations follow their nodes' new columns; a pod nominated to the node that is gone is no longer
        nominated (it keeps status.nominatedNodeName, as in kube-scheduler, and is nominated again if the node
        comes back before it is tried). Answers the new snapshot (the current one when the node was unknown)."""
        if name not in self._snapshot.index:
            return self._snapshot
        snap = self.cache.remove_node(name)
        self._snapshot = snap
        self._order = None
        self._name_rank = None
        nominated = [p for col in self.nominator.nodes() for p in self.nominator.on_node(col)]
        for q in self._queue.pods():
            if self.nominator.node_of(q.info.key) is None:
                nominated.append(q.info)
        for info in nominated:
            self.nominator.clear(info)
            nominated_name = info.pod.nominated_node_name
            if nominated_name in snap.index and info.key not in self.cache:
                self.nominator.nominate(info, snap.index[nominated_name])
        self.move_all(NODE_CHANGE)
        return snap

    def namespace_set(self, name: str, labels: dict[str, str] | None) -> None:
        """A namespace's labels (None: the namespace is gone), for namespace selectors."""
        self._snapshot.set_namespace(name, labels)

    def object_changed(self, event: ClusterEvent) -> None:
        """Another object changed (an ElasticQuota, a Service, a workload controller): the plugins hear of it;
        when its kind is one that can let pods fit (``MOVING_KINDS``), every unschedulable pod is tried again."""
        self.dispatch(event)
        if event.resource in MOVING_KINDS:
            self.move_all(event.resource)
        elif event.resource in REGISTERED_KINDS and event.action == ADD:
            self.move_all(event.resource, event.new, registered_only=True)
        elif event.resource == SCHEDULING_POD_GROUP and event.action == UPDATE:
            # kube-scheduler 1.37: a PodGroup's minCount changed (GangScheduling hears it when it went down)
            self.move_all(SCHEDULING_POD_GROUP_UPDATE, (event.old, event.new), registered_only=True)

    def storage_changed(self) -> None:
        """A PersistentVolumeClaim, PersistentVolume, StorageClass or CSINode was added or changed in the storage
        catalog the volume plugins read (VolumeBinding, VolumeZone, ... register these events upstream)."""
        self.move_all(STORAGE_CHANGE)

    def dra_changed(self, claims: frozenset[str] | None = None) -> None:
        """DRA objects changed (live mode's DRA informers): unschedulable pods are tried again, and the pods a
        PreEnqueue plugin holds back until such objects exist (DynamicResources: a claim not created yet) run it
        again. ``claims``: only the pods using one of these claims (namespace/name) move (upstream's queueing hint
        for a claim created or whose status changed); None: every pod (a class or slice added or changed, a
        claim deallocated or deleted while allocated)."""
        if claims is None:
            self.move_all(DRA_CHANGE)
            return

        def uses(qp: QueuedPod) -> bool:
            return not claims.isdisjoint(pod_claim_keys(qp.info.pod))

        self._queue.move_all(self.clock(), stay=lambda qp: not uses(qp))
        self._retry_gated(DRA_CHANGE, None, only=uses)

    def replay_to_plugins(self, events: Iterable[ClusterEvent]) -> None:
        """The cluster as new plugins' informers list it after a configuration change: each object an ``Add``
        for the plugins, nothing moved (the waiting pods are in the new queue already)."""
        for event in events:
            self.dispatch(event)


class FailedAttempt(Protocol):
    """What :meth:`EventHandlers.handle_failure` reads of an attempt (``scheduler.CycleResult`` is one)."""

    @property
    def nominated_node(self) -> str | None: ...

    @property
    def status(self) -> Status: ...

    @property
    def message(self) -> str: ...

    @property
    def diagnosis(self) -> Diagnosis | None: ...

    @property
    def rejected_on_node(self) -> bool: ...


def _pre_enqueue_plugin(fwk: Framework, name: str) -> PreEnqueuePlugin | None:
    """The profile's PreEnqueue plugin called ``name``, or None ("": no plugin)."""
    if not name:
        return None
    return next((p for p in fwk.pre_enqueue if p.name == name), None)
