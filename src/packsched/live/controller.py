"""The live scheduler: the shared :class:`~packsched.scheduler.Scheduler` making the decisions, on the cluster as
the informers report it, with the API server carrying them out.

One thread (the caller of :meth:`Controller.run`) owns the scheduler (its queue, cache and snapshot) and every
decision; informer threads only put events on :attr:`Controller.inbox`, applied by
:class:`~packsched.live.handlers.InformerHandlers`. Binding cycles run on a
:class:`~packsched.live.binding.BindingPool` while the next pods are scheduled against the assumed pods; their
answers come back through the same inbox and are applied in the scheduling thread. API writes that decide
nothing (events, conditions) go out through a :class:`~packsched.live.recorder.Recorder` thread. Victims are removed by
:class:`~packsched.live.victims.VictimRemover`; ElasticQuota gauges and status by
:class:`~packsched.live.quota_status.QuotaStatusController`; PodGroup status by
:class:`~packsched.live.podgroup_status.PodGroupStatusController`; the condition kube-scheduler 1.36+ writes on its own
PodGroups by :class:`~packsched.live.podgroup_conditions.PodGroupConditionWriter`.
"""

from __future__ import annotations

import logging
import queue as queue_mod
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from packsched.api.dra import DraObjects
from packsched.api.storage import StorageObjects
from packsched.backend.disruption import BudgetStatus
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework.interface import ClusterActions
from packsched.framework.podinfo import PodInfo
from packsched.framework.preemption import NOT_ELIGIBLE_TERMINATING
from packsched.framework.runtime import PluginFactory
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code, Status
from packsched.live.binding import BindingDone, BindingPool
from packsched.live.claims import ClaimWriter
from packsched.live.handlers import InformerHandlers, Tracked
from packsched.live.health_port import ApiHealth, Prober
from packsched.live.metrics import ERROR, SCHEDULED, UNSCHEDULABLE, WAITING_ON_PREEMPTION, Metrics
from packsched.live.pod_status import PodStatusWriter
from packsched.live.podgroup_conditions import PodGroupConditionWriter
from packsched.live.podgroup_status import PodGroupStatusController
from packsched.live.port import PODS, RESOURCE_CLAIMS, ApiError, ApiPort, Obj, Resource
from packsched.live.quota_status import QuotaStatusController
from packsched.live.record import RecordWriter
from packsched.live.recorder import Recorder
from packsched.live.victims import DELETE, EVICT, REMOVAL_MODES, Stats, VictimRemover
from packsched.scheduler import CycleResult, QueuedPod, QueueView, Scheduler

__all__ = ["DELETE", "EVICT", "REMOVAL_MODES", "Controller", "Stats", "Tracked", "blocked_nomination"]

LOG = logging.getLogger("packsched.live")

# How long a pod whose bind got 409 waits for the watch to show its node before it is tried again.
CONFLICT_WAIT_S = 30.0
# kube-scheduler's podMaxInUnschedulablePodsDuration: unschedulable pods are retried at least this often.
UNSCHEDULABLE_FLUSH_S = 300.0
# How long a stopping scheduler waits for the bindings it has in flight.
BIND_DRAIN_S = 5.0
# After a bind got no answer, the same binding is sent again until the API server answers it (see
# _Actions._bind_again): the first pause between the tries, doubled after each up to the longest (0.2 s, 0.4 s, ...
# 3.2 s, then every 3.2 s). A server error (5xx, 429) answering a try is tried again RESEND_TRIES times at most.
RESEND_PAUSE_S = 0.2
RESEND_MAX_PAUSE_S = 3.2
RESEND_TRIES = 6


class _Actions:
    """ClusterActions on the API server: bind through pods/binding (the API server's refusal travels on the
    Status); preempt through the victim remover."""

    def __init__(self, ctl: Controller) -> None:
        self.ctl = ctl

    def bind(self, pod: PodInfo, node: str) -> Status:
        try:
            self.ctl.port.bind(pod.pod.namespace, pod.pod.name, pod.pod.uid, node)
        except ApiError as exc:
            if exc.status == 0:
                return self._bind_again(pod, node)
            return Status(Code.ERROR, [f"binding rejected: {exc}"], cause=exc)
        return Status()

    def _bind_again(self, pod: PodInfo, node: str) -> Status:
        """The bind got no answer (a timeout, a cut connection): it may have been applied, and may still be (a
        loaded server gets to a request after the client gave up on it). Asking whether the pod is bound cannot
        settle it: "not bound yet" is not "never", and freeing the pod's room then over-commits the node once the
        late bind lands (322 pods bound on room for 320, beside a loaded make test). The same binding is sent
        again until the server answers it: 201, bound now (a late first bind is refused as a conflict); 409, bound
        already, by us when the pod shows on this node with its uid; any other answer, refused (a server error is
        tried again, RESEND_TRIES times). The pod stays assumed meanwhile (this runs on a binding worker, off the
        scheduling thread); when the scheduler stops before an answer, it is given up as not bound."""
        pause, errors = RESEND_PAUSE_S, 0
        while not self.ctl.stopping.wait(pause):
            pause = min(2 * pause, RESEND_MAX_PAUSE_S)
            try:
                self.ctl.port.bind(pod.pod.namespace, pod.pod.name, pod.pod.uid, node)
            except ApiError as exc:
                if exc.conflict:
                    return self._bound_here(pod, node, exc)
                if exc.status == 0:
                    continue  # no answer again
                if exc.status >= 500 or exc.status == 429:
                    errors += 1
                    if errors < RESEND_TRIES:
                        continue
                return Status(Code.ERROR, [f"binding rejected: {exc}"], cause=exc)
            return Status()
        return Status(Code.ERROR, ["binding rejected: scheduler stopping before the API server answered"])

    def _bound_here(self, pod: PodInfo, node: str, conflict: ApiError) -> Status:
        """A binding sent again was refused as a conflict: the pod is bound (or re-created under its name). Bound
        by our lost first bind when the API server shows this very pod (same uid) on ``node``: asked until it
        answers (once bound, a pod's node does not change). Otherwise the conflict is the answer."""
        pause = RESEND_PAUSE_S
        while True:
            try:
                obj = self.ctl.port.get(PODS, pod.pod.namespace, pod.pod.name)
            except ApiError as exc:
                if exc.status != 0 and exc.status < 500:
                    return Status(Code.ERROR, [f"binding rejected: {exc}"], cause=exc)  # gone (404), or unreadable
                if self.ctl.stopping.wait(pause):
                    return Status(Code.ERROR, [f"binding rejected: {conflict}"], cause=conflict)
                pause = min(2 * pause, RESEND_MAX_PAUSE_S)
                continue
            meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
            if spec.get("nodeName") == node and (not pod.pod.uid or meta.get("uid") == pod.pod.uid):
                return Status()
            return Status(Code.ERROR, [f"binding rejected: {conflict}"], cause=conflict)

    def preempt(self, victim: PodInfo, preemptor: PodInfo) -> None:
        snap = self.ctl.scheduler.snapshot
        node = snap.nodes[victim.node].name if victim.node >= 0 else ""
        self.ctl.victims.remove(victim, preemptor, node)


class Controller:
    def __init__(
        self,
        port: ApiPort,
        config: KubeSchedulerConfiguration,
        registry: Mapping[str, PluginFactory],
        *,
        metrics: Metrics | None = None,
        recorder: Recorder | None = None,
        identity: str = "packsched",
        seed: int = 0,
        removal: str = EVICT,
        clock: Callable[[], float] = time.monotonic,
        quota_status: bool = False,
        pod_group_status: bool = False,
        binding_workers: int = 0,
        health: ApiHealth | None = None,
        prober: Callable[[threading.Event], Prober] | None = None,
        record: RecordWriter | None = None,
        actions: ClusterActions | None = None,
    ) -> None:
        """``binding_workers``: threads running binding cycles (0: each runs within :meth:`attempt`). ``health``:
        whether the API server answers (no pod is tried while it does not); ``prober`` makes what asks it while
        it is down. ``record``: where every applied cluster event, decision and binding answer is recorded
        (``serve --record``). ``actions``: how decisions reach the cluster (default: the API server; a replay
        of a record gives its own). ``quota_status``, ``pod_group_status``: write ElasticQuota and PodGroup status
        as scheduler-plugins' controllers do."""
        self.port = port
        self.config = config
        self.metrics = metrics or Metrics(pod_groups=config.kube_version.pod_group_scheduling_cycle)
        self.recorder = recorder or Recorder(port, identity)
        self.identity = identity
        self.clock = clock
        self.stopping = threading.Event()  # set as run() ends, after the bindings' drain (a bind sent again gives up)
        self.stats = Stats()
        self.health = health or ApiHealth(clock)
        self.log = self.health.log
        self._make_prober = prober
        self.record = record
        self.victims = VictimRemover(port, self.recorder, removal, clock, self.stats)
        self.statuses = PodStatusWriter(self.recorder)
        self.inbox: queue_mod.SimpleQueue[tuple[Resource, str, Obj] | BindingDone] = queue_mod.SimpleQueue()
        # the claims, volumes, classes and CSINodes the volume plugins read, as the storage informers report them
        self.storage = StorageObjects(mirror=True)
        # the DRA objects DynamicResources reads, as the DRA informers report them; its PreBind writes claims
        # through the writer (``claim_writer.resource``: the ResourceClaim version the cluster serves)
        self.claim_writer = ClaimWriter(port, lambda: RESOURCE_CLAIMS)
        self.dra = DraObjects(api=self.claim_writer)
        self.scheduler = Scheduler(
            config,
            registry,
            actions if actions is not None else _Actions(self),
            Snapshot(),
            seed,
            self._budgets,
            clock=clock,
            on_clear_nomination=lambda info: self.statuses.nomination_cleared(info.pod),
            async_binding=True,
            storage=self.storage,
            dra=self.dra,
        )
        # nothing in live mode reads a cycle's per-plugin scores (a record's top nodes read the totals): a cycle
        # through the equivalence cache may fold the class's kept scores into its totals, as the simulator's do
        self.scheduler.score_details = False
        self.binding = BindingPool(
            binding_workers, self.scheduler.run_binding_cycle, self.inbox.put, lambda: self.health.down
        )
        self.cache = self.scheduler.cache
        self.informers = InformerHandlers(
            self.scheduler,
            self.statuses,
            self.victims,
            self.recorder,
            self.stats,
            self.storage,
            dra=self.dra,
            claim_writer=self.claim_writer,
        )
        self.pods = self.informers.pods
        # write status.used as scheduler-plugins' controller does (with quota_status)
        self.quota_status = QuotaStatusController(port, self.metrics, quota_status)
        # write PodGroup status as scheduler-plugins' controller does (with pod_group_status)
        self.pod_group_status = PodGroupStatusController(port, pod_group_status, self.log, clock)
        # kube-scheduler 1.36+ (GenericWorkload): the condition each pod-group cycle writes on its PodGroup
        self.pod_group_conditions = PodGroupConditionWriter(self.recorder, config.kube_version)
        # pods held at Permit: when their scheduling attempt began (perf_counter), for the attempt's duration
        self._waiting_since: dict[str, float] = {}
        self._permit_since: dict[str, float] = {}  # pod -> when its wait at Permit began (perf_counter)
        self._last_flush = clock()
        self._last_housekeeping = 0.0
        # pods whose bind got 409 (their conflict_since set), looked at by the housekeeping (not every pod)
        self._conflicted: set[str] = set()
        self._attempt_metrics: dict[tuple[str, str], tuple[Any, Any]] = {}

    @property
    def queue(self) -> QueueView:
        """What waits in the scheduler's queue (read-only)."""
        return self.scheduler.queue

    @property
    def snapshot(self) -> Snapshot:
        return self.scheduler.snapshot

    def _budgets(self) -> list[BudgetStatus]:
        out = self.informers.budgets()
        refused = self.victims.refused_victims(self.clock())
        for b in out:  # a budget the API server just enforced allows nothing, whatever our count says
            if any(b.pdb.matches(pod) for pod in refused):
                b.desired_healthy = max(b.desired_healthy, b.healthy)
        return out

    # -- informer side --------------------------------------------------------------------------------

    def sink(self, res: Resource, etype: str, obj: Obj) -> None:
        """Called from informer threads: queue the change for the scheduling thread."""
        self.inbox.put((res, etype, obj))

    def drain(self, wait_s: float = 0.0) -> int:
        """Apply queued cluster changes; wait up to ``wait_s`` for the first one."""
        handled = 0
        try:
            item = self.inbox.get(timeout=wait_s) if wait_s > 0 else self.inbox.get_nowait()
        except queue_mod.Empty:
            return 0
        while True:
            if isinstance(item, BindingDone):
                self.binding_done(item)
            else:
                self.handle(*item)
            handled += 1
            try:
                item = self.inbox.get_nowait()
            except queue_mod.Empty:
                self.informers.flush()
                return handled

    def handle(self, res: Resource, etype: str, obj: Obj) -> None:
        if self.record is not None:
            self.record.event(res, etype, obj)
        self.pod_group_status.observe(res, etype, obj)
        self.pod_group_conditions.observe(res, etype, obj)
        self.informers.handle(res, etype, obj)

    # -- the loop ---------------------------------------------------------------------------------------

    def run(self, stop: threading.Event, is_ready: Callable[[], bool] = lambda: True) -> None:
        """Schedule until ``stop`` is set. Nothing is tried before ``is_ready()`` (the informers have listed).
        Bindings in flight when it stops are waited for (a few seconds at most) and accounted."""
        self.binding.start()
        prober = self._make_prober(stop) if self._make_prober is not None else None
        try:
            self._loop(stop, is_ready, prober)
        finally:
            self.binding.close(BIND_DRAIN_S)  # a bind still sent again holds it up to BIND_DRAIN_S
            self.stopping.set()
            self.drain(0)

    def _loop(self, stop: threading.Event, is_ready: Callable[[], bool], prober: Prober | None) -> None:
        synced = False
        while not stop.is_set():
            if not synced:
                if not is_ready():
                    self.drain(0.05)
                    continue
                synced = True
                self.drain(0)  # what the informers listed: every pod is queued before the first is picked
                LOG.info("caches synced", extra={"pods": len(self.pods), "nodes": len(self.snapshot.nodes)})
            if self.health.down:  # binds would only fail: wait for the server (the prober ends the outage)
                if prober is not None:
                    prober.kick()
                self.drain(0.1)
                continue
            self.drain(0)
            self.settle_waiting()
            if not self.step():
                now = self.clock()
                due = [t for t in (self.queue.next_backoff_expiry(), self.scheduler.next_permit_deadline()) if t]
                wait = 0.25 if not due else min(max(min(due) - now, 0.001), 0.25)
                self.drain(wait)

    def step(self) -> bool:
        """One scheduling attempt, if a pod is ready for one. Returns whether one ran."""
        now = self.clock()
        if now - self._last_housekeeping >= 0.5:
            self._housekeeping(now)
        self.informers.flush()  # (events applied through handle rather than drain)
        qp = self.scheduler.next_pod()
        if qp is None:
            return False
        self.attempt(qp)
        return True

    def _housekeeping(self, now: float) -> None:
        self._last_housekeeping = now
        if now - self._last_flush >= UNSCHEDULABLE_FLUSH_S:
            self._last_flush = now
            self.scheduler.move_all()
        for info in self.scheduler.expire_assumed():  # assumed pods whose binding the watch never confirmed
            LOG.warning("assumed pod expired", extra={"pod": info.key})
        for key in list(self._conflicted):
            tr = self.pods.get(key)
            if tr is None or tr.conflict_since is None:  # gone, or the watch showed where it went
                self._conflicted.discard(key)
            elif now - tr.conflict_since > CONFLICT_WAIT_S and key not in self.cache:
                tr.conflict_since = None
                self._conflicted.discard(key)
                LOG.warning("bind conflict not resolved by the watch; trying again", extra={"pod": key})
                self.scheduler.requeue(tr.info)
        self.update_pending_gauge(now)
        if self.informers.quotas:
            self.sync_quotas()
        self.pod_group_status.sync(self.informers.pod_groups)

    def sync_quotas(self) -> None:
        """Per-quota gauges and (with ``quota_status``) ElasticQuota status.used."""
        self.quota_status.sync(
            self.informers.quotas.values(),
            (info.pod for info in self.cache.pods()),
            (tr.info.pod for tr in self.pods.values()),
        )

    def update_pending_gauge(self, now: float | None = None) -> None:
        counts = self.queue.counts(self.clock() if now is None else now)
        for name, value in asdict(counts).items():
            self.metrics.pending_pods.labels(name).set(value)

    def attempt(self, qp: QueuedPod) -> CycleResult | None:
        info = qp.info
        key = info.key
        tr = self.pods.get(key)
        if tr is None or tr.info is not info or key in self.cache:
            return None  # deleted or bound since it was queued
        if self.scheduler.in_pod_group_cycle(info):
            self._attempt_group(qp)
            return None
        now = self.clock()
        if self.victims.waiting(key, now, self.pods.__contains__):
            # as upstream's PodEligibleToPreemptOthers answers while the victims terminate
            message = f"{tr.fit_message} preemption: {NOT_ELIGIBLE_TERMINATING}".lstrip()
            waiting = CycleResult(info, info.pod.scheduler_name, status=Status(Code.UNSCHEDULABLE, [message]))
            self.scheduler.cycle_not_run()
            self.scheduler.handle_failure(qp, waiting)
            self.statuses.failed(info.pod, "Unschedulable", message)
            return None
        self.stats.attempts += 1
        self.victims.new_attempt()
        start = time.perf_counter()
        try:
            result = self.scheduler.schedule_one(info, queued=qp)
        except Exception as exc:  # a bug on one pod's path must not stop the scheduler for every pod
            LOG.exception("scheduling attempt failed", extra={"pod": key})
            if self.record is not None:
                self.record.failed_attempt(info, info.pod.scheduler_name, f"internal error: {exc}")
            self.scheduler.forget_assumed(info)  # an assumption the failed attempt left behind
            self._observe(ERROR, info.pod.scheduler_name, time.perf_counter() - start)
            self.statuses.failed(info.pod, "SchedulerError", f"internal error: {exc}")
            failed = CycleResult(info, info.pod.scheduler_name, status=Status.error(f"internal error: {exc}"))
            self.scheduler.handle_failure(qp, failed)
            return None
        return self._after_cycle(qp, tr, result, start)

    def _attempt_group(self, qp: QueuedPod) -> None:
        """One pod-group scheduling cycle (kube-scheduler 1.36+ with GenericWorkload): ``qp`` and the other pods of
        its group waiting in the queue, tried together; each member's outcome is then applied as a single pod's
        (the scheduler has sent the ones that failed back to the queue already)."""
        info = qp.info
        self.victims.new_attempt()
        start = time.perf_counter()
        try:
            members = self.scheduler.schedule_pod_group(qp)
        except Exception as exc:  # a bug on one group's path must not stop the scheduler for every pod
            LOG.exception("pod-group scheduling cycle failed", extra={"pod": info.key})
            self._group_cycle_failed(qp, exc)
            return
        self._observe_group(members, start)
        for member, result in members:
            tr = self.pods.get(member.info.key)
            if tr is None or tr.info is not member.info:
                continue
            if result.status.ok and result.node is None:
                continue  # held back untried (its PodGroup not seen yet, or a member gated): nothing written
            self.stats.attempts += 1
            self._after_cycle(member, tr, result, start, sent_back=True)
        self.pod_group_conditions.cycle_done(members)

    def _observe_group(self, members: Sequence[tuple[QueuedPod, CycleResult]], start: float) -> None:
        """Upstream's pod-group metrics for the cycle that began at ``start`` (perf_counter): the algorithm's
        duration, and the attempt by its verdict (scheduled, unschedulable, waiting on preemption, error). A group
        held back untried has no verdict and is no attempt."""
        m = self.metrics
        if m.pod_group_attempts is None or m.pod_group_attempt_duration is None or not members:
            return
        verdict = next((r.group_status for _, r in members if r.group_status is not None), None)
        if verdict is None:
            return
        report = self.scheduler.last_pod_group_cycle
        if report.algorithm_done is not None and m.pod_group_algorithm_duration is not None:
            m.pod_group_algorithm_duration.observe(max(report.algorithm_done - start, 0.0))
        if verdict.ok:
            result = SCHEDULED
        elif verdict.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
            result = WAITING_ON_PREEMPTION if report.waiting_on_preemption else UNSCHEDULABLE
        else:
            result = ERROR
        profile = members[0][1].profile
        m.pod_group_attempts.labels(result, profile).inc()
        m.pod_group_attempt_duration.labels(result, profile).observe(time.perf_counter() - start)

    def _group_cycle_failed(self, qp: QueuedPod, exc: Exception) -> None:
        """A pod-group cycle that raised: every pod of the group taken out of the queue is sent back with the
        error (none is left out of the queue), the first one's assumption given back."""
        ref = qp.info.pod_group
        self.scheduler.forget_assumed(qp.info)
        for tr in list(self.pods.values()):
            info = tr.info
            if info.pod_group != ref or info.key in self.cache:
                continue
            self.scheduler.forget_assumed(info)
            failed = CycleResult(info, info.pod.scheduler_name, status=Status.error(f"internal error: {exc}"))
            if self.record is not None:
                self.record.failed_attempt(info, info.pod.scheduler_name, f"internal error: {exc}")
            if info is qp.info:
                self.scheduler.handle_failure(qp, failed)
            else:
                self.scheduler.requeue(info)
            self.statuses.failed(info.pod, "SchedulerError", f"internal error: {exc}")

    def _after_cycle(
        self, qp: QueuedPod, tr: Tracked, result: CycleResult, start: float, *, sent_back: bool = False
    ) -> CycleResult | None:
        """A scheduling cycle's outcome for one pod: its binding cycle started, its wait at Permit noted, or its
        failure counted, written on the pod and (unless the scheduler did: ``sent_back``) the pod sent back."""
        info = qp.info
        key = info.key
        victims = self.victims
        if self.record is not None:
            self.record.decision(result, self.snapshot, victims.chosen_now, victims.blocked_now, victims.refused_now)
        if result.binding is not None:  # assumed, reserved, permitted: the binding cycle runs on a worker
            answered = self.binding.submit(BindingDone(qp, result.binding, start))
            return result if answered is None else self.binding_done(answered)
        if result.waiting:  # held at Permit (a gang not complete yet): settle_waiting binds or requeues it
            LOG.debug("waiting at permit", extra={"pod": key, "node": result.node})
            result.shed_scores()  # recorded above; the wait keeps the result
            self._waiting_since[key] = start  # nothing is written about the pod while it waits
            if not result.waiting_in_pre_bind:
                self._permit_since[key] = time.perf_counter()
            return result
        elapsed = time.perf_counter() - start
        profile = result.profile
        if self.victims.blocked_now:  # preemption stopped at a victim it could not remove: not nominated
            result.nominated_node = blocked_nomination(info, result.nominated_node)
            result.status = Status(Code.ERROR, [f"{result.message} {self.victims.blocked_now}"])
        is_error = result.status.code == Code.ERROR
        self._observe(ERROR if is_error else UNSCHEDULABLE, profile, elapsed)
        if (not is_error or self.victims.blocked_now) and self.scheduler.frameworks[profile].post_filters:
            self.metrics.preemption_attempts.inc()
        if self.victims.removed_now:
            self.metrics.preemption_victims.observe(self.victims.removed_now)
        self.stats.unschedulable += 1
        tr.fit_message = _fit_message(result)
        if not sent_back:
            self.scheduler.handle_failure(qp, result)
        self.statuses.failed(info.pod, "SchedulerError" if is_error else "Unschedulable", result.message)
        return result

    def settle_waiting(self) -> None:
        """Pods whose wait at Permit ended: an allowed one's binding cycle goes to a worker; a rejected one (a
        timeout, its group rejected) is back in the queue (the scheduler sent it), and gets a FailedScheduling event
        and its PodScheduled condition as any other failure. An attempt's duration runs from its scheduling cycle
        to its outcome, the wait included (as kube-scheduler's)."""
        for result in self.scheduler.settle_waiting():
            key = result.pod.key
            start = self._waiting_since.pop(key, None)
            since = self._permit_since.pop(key, None)
            if since is not None and not result.waiting_in_pre_bind:
                # upstream WaitOnPermit's metric, by the wait's outcome (Success, or the rejection's code)
                outcome = Status() if result.binding is not None else result.status
                self.metrics.permit_wait.labels(outcome.code.label).observe(time.perf_counter() - since)
            job = result.binding
            if job is not None:
                qp = job.queued if job.queued is not None else QueuedPod(job.pod)
                answered = self.binding.submit(BindingDone(qp, job, time.perf_counter() if start is None else start))
                if answered is not None:
                    self.binding_done(answered)
                continue
            tr = self.pods.get(key)
            if tr is None or tr.info is not result.pod:
                continue  # deleted while it waited
            is_error = result.status.code == Code.ERROR
            if start is not None:
                self._observe(ERROR if is_error else UNSCHEDULABLE, result.profile, time.perf_counter() - start)
            self.stats.unschedulable += 1
            self.statuses.failed(result.pod.pod, "SchedulerError" if is_error else "Unschedulable", result.message)

    def binding_done(self, done: BindingDone) -> CycleResult | None:
        """A binding cycle answered (applied in the scheduling thread, in whatever order the answers come)."""
        job, qp = done.job, done.qp
        if self.record is not None:
            self.record.bind(job, done.status)
        info = job.pod
        key = info.key
        elapsed = time.perf_counter() - done.start
        if not done.status.ok and not (self.cache.is_assumed(key) and self.cache.get(key) is info):
            # The watch settled it first: the pod was deleted, or it is bound to this node (the bind went through
            # and its answer was lost). Nothing is held for it to give back.
            self.stats.late_bind_answers += 1
            LOG.debug("binding answer after the watch", extra={"pod": key, "error": done.status.message})
            job.result.binding = None
            return None
        result = self.scheduler.finish_binding_cycle(job, done.status)
        if result.scheduled and result.node is not None:
            self.stats.bound += 1
            self.statuses.bound(key)  # failures of its earlier attempts still queued are stale now
            LOG.debug("bound", extra={"pod": key, "node": result.node, "profile": result.profile})
            self._observe(SCHEDULED, result.profile, elapsed)
            self.recorder.event(
                info.pod, "Normal", "Scheduled", "Binding", f"Successfully assigned {key} to {result.node}"
            )
            return result
        tr = self.pods.get(key)
        if tr is None or tr.info is not info:
            return result  # deleted meanwhile
        if isinstance(result.status.cause, ApiError):
            return self._bind_failed(qp, tr, result.status.cause, result, elapsed)
        self.stats.bind_errors += 1
        self._observe(ERROR, result.profile, elapsed)
        self.scheduler.handle_failure(qp, result)
        self.statuses.failed(info.pod, "SchedulerError", result.message)
        return result

    def _bind_failed(
        self, qp: QueuedPod, tr: Tracked, exc: ApiError, result: CycleResult, elapsed: float
    ) -> CycleResult:
        """The API server refused the binding (the scheduler forgot the assumed pod, and moved the pods that
        did not fit: its room is free again)."""
        key = tr.info.key
        if exc.conflict:
            # Someone else (or an earlier bind of ours whose answer was lost) bound it: not ours to place.
            self.stats.conflicts += 1
            self.metrics.bind_conflicts.inc()
            tr.conflict_since = self.clock()
            self._conflicted.add(key)
            self.log.log(
                logging.INFO, "conflict", "pod already bound; waiting for the watch", {"pod": key, "error": str(exc)}
            )
            self.scheduler.handle_failure(qp, result, requeue=False)
            return result
        if exc.not_found:
            self.scheduler.handle_failure(qp, result, requeue=False)
            self.informers.forget(key)
            return result
        self.stats.bind_errors += 1
        self._observe(ERROR, result.profile, elapsed)
        self.log.failed("bind", "binding failed; retrying after backoff", exc, {"pod": key})
        self.scheduler.handle_failure(qp, result)
        self.statuses.failed(tr.info.pod, "SchedulerError", f"Binding rejected: {exc}")
        return result

    def _observe(self, result: str, profile: str, elapsed: float) -> None:
        children = self._attempt_metrics.get((result, profile))
        if children is None:  # a labelled child is looked up (under the metric's lock) once per label pair
            children = (
                self.metrics.schedule_attempts.labels(result, profile),
                self.metrics.attempt_duration.labels(result, profile),
            )
            self._attempt_metrics[(result, profile)] = children
        children[0].inc()
        children[1].observe(elapsed)


def blocked_nomination(pod: PodInfo, nominated: str | None) -> str | None:
    """The nomination after a preemption that stopped at a victim it could not remove: none (cleared when the pod
    had one or the preemption chose a node; else left alone)."""
    return "" if pod.pod.nominated_node_name or nominated else None


def _fit_message(result: CycleResult) -> str:
    """The attempt's FitError text without its preemption part."""
    d = result.diagnosis
    if d is None:
        return ""
    post, d.post_filter_msg = d.post_filter_msg, ""
    try:
        return d.message()
    finally:
        d.post_filter_msg = post
