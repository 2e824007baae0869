"""``packsched verify-record``: replay a ``serve --record`` file (:mod:`packsched.live.record`) into packsched's own
scheduler, and list every decision it would have made differently.

The cluster is rebuilt as serve saw it: every recorded event goes, in order, through the live adapter's own event
handlers (a :class:`~packsched.live.controller.Controller` whose API port answers nothing and whose cluster actions
only note the victims preemption chooses), so that the cache, the queue, the nominations, the budgets and the
plugins' views are serve's. At each recorded decision the same pod's scheduling cycle runs with the recorded
configuration and seed (the seeded choices come in the same order as in serve); then the replay follows the recorded
decision rather than its own (another node: the reservation moves to the recorded node; a failure: the recorded
nomination), so that one difference does not cascade into the next ones. Recorded binding answers go through the
controller's own answer handling.

A pod-group cycle (kube-scheduler 1.36+ with GenericWorkload) runs once, at the recorded decision of its first pod;
the decisions serve recorded for the group's other pods, one after the other, are compared with their results in
that cycle. Waits at Permit end as serve's loop ends them (before each decision, and at a binding answer the replay
has no binding cycle for): the record has no line for the end of a wait, so it is followed rather than compared.

A decision is identical when the outcome, the node, the message of a pod not scheduled, the nomination and the
victims (as a set) are the same. A different node where both nodes are among the recorded best-scored ones is a tie
that selectHost broke another way, reported apart from the differences.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from packsched.api.errors import InputError
from packsched.config import default_config, load_config
from packsched.config.types import KubeSchedulerConfiguration
from packsched.config.versions import parse_kube_version
from packsched.framework.podinfo import PodInfo
from packsched.framework.runtime import PluginFactory
from packsched.framework.status import Code, Status
from packsched.live.binding import BindingDone
from packsched.live.controller import DELETE, REMOVAL_MODES, Controller, blocked_nomination
from packsched.live.port import ApiError, Obj, Resource, WatchEvent
from packsched.live.record import (
    ERROR,
    SCHEDULED,
    BindLine,
    DecisionLine,
    EventLine,
    Header,
    Line,
    RecordError,
    TruncatedRecord,
    decision_fields,
    packsched_version,
    read_record,
)
from packsched.scheduler import BindingCycle, CycleResult, QueuedPod

UNKNOWN = "unknown"  # the replay has no pending pod of that name (no event created it, or it is bound)


class OfflinePort:
    """An API port with no server behind it: reads find nothing, writes succeed and change nothing."""

    def list(self, res: Resource, namespace: str = "") -> tuple[list[Obj], str]:
        return [], ""

    def watch(self, res: Resource, resource_version: str, timeout_s: int) -> Iterator[WatchEvent]:
        return iter(())

    def get(self, res: Resource, namespace: str, name: str) -> Obj:
        raise ApiError(404, "NotFound", f"{res.plural} {name!r}: replaying a record, no API server")

    def group_versions(self, group: str) -> tuple[str, ...]:
        return ()

    def create(self, res: Resource, namespace: str, body: Obj) -> Obj:
        return body

    def update(self, res: Resource, namespace: str, name: str, body: Obj) -> Obj:
        return body

    def update_status(self, res: Resource, namespace: str, name: str, body: Obj) -> Obj:
        return body

    def patch_status(self, res: Resource, namespace: str, name: str, patch: Obj) -> Obj:
        return patch

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        return None

    def evict(self, namespace: str, name: str, uid: str) -> None:
        return None

    def delete(self, res: Resource, namespace: str, name: str, uid: str = "", grace_s: int | None = None) -> None:
        return None

    def close(self) -> None:
        return None


class _NoteVictims:
    """The replay's cluster actions: nothing reaches a cluster (serve's own deletes are recorded events); the
    victims preemption chooses are noted."""

    def __init__(self) -> None:
        self.victims: list[str] = []

    def bind(self, pod: PodInfo, node: str) -> Status:
        return Status()

    def preempt(self, victim: PodInfo, preemptor: PodInfo) -> None:
        self.victims.append(victim.key)


@dataclass
class Finding:
    """A decision the replay made otherwise: ``fields`` names what differs."""

    line: int
    pod: str
    fields: list[str]
    recorded: dict[str, Any]
    replayed: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "pod": self.pod,
            "fields": self.fields,
            "recorded": self.recorded,
            "replayed": self.replayed,
        }


@dataclass
class Verification:
    header: Header
    lines: int = 1
    events: int = 0
    binds: int = 0
    decisions: int = 0
    identical: int = 0
    ties: list[Finding] = field(default_factory=list)
    differences: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def as_json(self, file: str) -> dict[str, Any]:
        h = self.header
        return {
            "file": file,
            "schema": "packsched.verify-record/v1",
            "record": {
                "packsched": h.packsched,
                "seed": h.seed,
                "kubeVersion": h.kube_version,
                "featureGates": h.feature_gates,
                "config": h.config_path if h.config_text is not None else None,
                "lines": self.lines,
                "events": self.events,
                "binds": self.binds,
            },
            "counts": {
                "decisions": self.decisions,
                "identical": self.identical,
                "ties": len(self.ties),
                "differences": len(self.differences),
            },
            "ties": [f.as_json() for f in self.ties],
            "differences": [f.as_json() for f in self.differences],
            "notes": self.notes,
        }


def recorded_config(head: Header, known_plugins: Collection[str]) -> KubeSchedulerConfiguration:
    """The configuration the record was made with (its file's text, or kube-scheduler's defaults)."""
    try:
        version = parse_kube_version(head.kube_version) if head.kube_version else None
    except ValueError as exc:
        raise RecordError(1, f"kubeVersion: {exc}") from None
    gates = head.feature_gates
    if head.config_text is None:
        try:
            return default_config(known_plugins, version, gates)
        except InputError as exc:
            raise RecordError(1, "; ".join(_gates_named(str(e)) for e in exc.errors)) from None
    name = "config.json" if head.config_path.endswith(".json") else "config.yaml"
    with tempfile.TemporaryDirectory(prefix="packsched-record-") as tmp:
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(head.config_text)
        try:
            cfg = load_config(path, known_plugins, kube_version=version, feature_gates=gates)
        except InputError as exc:
            shown = head.config_path or "config"
            problems = "; ".join(_gates_named(str(e).replace(path, shown)) for e in exc.errors)
            raise RecordError(1, f"the recorded configuration does not load: {problems}") from None
    cfg.source_file = head.config_path
    return cfg


def _gates_named(problem: str) -> str:
    """A loader's problem with the gates given as ``--feature-gates``, which a record's header names
    ``featureGates``."""
    return problem.replace("--feature-gates", "featureGates")


class Replay:
    """The recorded history, line by line, into a scheduler of its own (see the module's doc)."""

    def __init__(self, head: Header, config: KubeSchedulerConfiguration, registry: Mapping[str, PluginFactory]):
        removal = head.preemption_mode or DELETE
        if removal not in REMOVAL_MODES:
            raise RecordError(1, f"unknown preemptionMode {removal!r} (one of {', '.join(REMOVAL_MODES)})")
        if head.seed < 0:
            raise RecordError(1, f"seed must be 0 or more, got {head.seed}")
        self.now = 0.0
        self.actions = _NoteVictims()
        self.ctl = Controller(
            OfflinePort(),
            config,
            registry,
            seed=head.seed,
            removal=removal,
            clock=lambda: self.now,
            actions=self.actions,
        )
        self.out = Verification(head)
        self._binding: dict[str, tuple[QueuedPod, BindingCycle]] = {}  # binding cycles waiting for their answer
        # the pod-group cycle run last: each member's entry and result, with the cycle's victims, by pod, until its
        # recorded decision comes
        self._group: dict[str, tuple[QueuedPod, CycleResult, list[str]]] = {}
        if head.packsched and head.packsched != packsched_version():
            self.out.notes.append(
                f"recorded by packsched {head.packsched}, replayed by packsched {packsched_version()}: "
                "differences may come from changes between the two"
            )

    def apply(self, line: Line) -> None:
        self.out.lines = line.line
        self.now = max(self.now, line.t)
        if isinstance(line, EventLine):
            self._end_group_cycle()
            self.out.events += 1
            try:
                self.ctl.handle(line.res, line.etype, line.obj)
            except Exception as exc:  # an object no API server would serve (serve never saw it)
                raise RecordError(line.line, f"cannot apply the {line.res.kind} event: {exc!r}") from None
        elif isinstance(line, DecisionLine):
            self.out.decisions += 1
            self._decide(line)
        else:
            self.out.binds += 1
            self._answered(line)

    # -- decisions --------------------------------------------------------------------------------------------

    def _decide(self, d: DecisionLine) -> None:
        ctl = self.ctl
        member = self._group.pop(d.pod, None)
        if member is not None:  # one more decision of the pod-group cycle run at an earlier line
            self._decide_member(d, *member)
            return
        self._end_group_cycle()
        self._settle_waits()
        tr = ctl.pods.get(d.pod)
        if tr is None or d.pod in ctl.cache or ctl.scheduler.framework_for(tr.info) is None:
            replayed: dict[str, Any] = {"outcome": UNKNOWN, "node": None, "top": [], "message": "", "nominated": None}
            replayed["victims"] = []
            self._compare(d, replayed)
            return
        info = tr.info
        qp = ctl.scheduler.take(d.pod) or QueuedPod(info)  # serve took it off the queue to try it
        if ctl.scheduler.in_pod_group_cycle(info):
            self._group_cycle(d, qp)
            return
        self.actions.victims = []
        result: CycleResult | None = None
        try:
            result = ctl.scheduler.schedule_one(info)
        except Exception as exc:  # as serve reports an attempt that raised
            ctl.scheduler.forget_assumed(info)
            replayed = {"outcome": ERROR, "node": None, "top": [], "message": f"internal error: {exc}"}
            replayed.update({"nominated": None, "victims": []})
        else:
            replayed = decision_fields(result, ctl.snapshot, self.actions.victims)
            del replayed["profile"]
        self._compare(d, replayed)
        self._follow(d, qp, info, result)

    # -- pod-group cycles (kube-scheduler 1.36+ with GenericWorkload) ----------------------------------------------

    def _group_cycle(self, d: DecisionLine, qp: QueuedPod) -> None:
        """The first recorded decision of a pod-group cycle: the cycle runs (taking the group's other pods out of
        the queue, as serve's did); each member's result waits for that member's line (serve records one per
        member it tried, one after the other)."""
        sched = self.ctl.scheduler
        self.actions.victims = []
        try:
            members = sched.schedule_pod_group(qp)
        except Exception as exc:  # as serve answers a cycle that raised: every pod of the group back, in error
            error = Status.error(f"internal error: {exc}")
            for tr in list(self.ctl.pods.values()):
                info = tr.info
                if info.pod_group != qp.info.pod_group or info.key in self.ctl.cache:
                    continue
                sched.forget_assumed(info)
                failed = CycleResult(info, info.pod.scheduler_name, status=error)
                if info is qp.info:
                    sched.handle_failure(qp, failed)
                else:
                    sched.requeue(info)
                self._group[info.key] = (QueuedPod(info), failed, [])
        else:
            victims = list(self.actions.victims)  # serve records the cycle's victims with each member's decision
            for member, result in members:
                self._group[member.info.key] = (member, result, victims)
        first = self._group.pop(d.pod, None)
        if first is not None:
            self._decide_member(d, *first)

    def _decide_member(self, d: DecisionLine, qp: QueuedPod, result: CycleResult, victims: list[str]) -> None:
        """A member's recorded decision against its result in the replayed cycle, then the recorded one followed:
        a pod serve placed elsewhere is moved there, one serve did not place is taken back and sent to the queue
        (the cycle sent back those it did not place itself)."""
        replayed = decision_fields(result, self.ctl.snapshot, victims)
        del replayed["profile"]
        self._compare(d, replayed)
        sched = self.ctl.scheduler
        job = result.binding
        if d.outcome == SCHEDULED:
            self._follow_placed(d, qp, job, requeue=True)
            return
        if job is not None:
            sched.release(job)
            failed = CycleResult(
                qp.info,
                d.profile or qp.info.pod.scheduler_name,
                status=Status(Code.ERROR if d.outcome == ERROR else Code.UNSCHEDULABLE, [d.message]),
            )
            sched.handle_failure(qp, failed)

    def _end_group_cycle(self) -> None:
        """Members the replayed cycle placed but serve recorded no decision for (serve held them back untried):
        taken back and sent to the queue."""
        sched = self.ctl.scheduler
        for qp, result, _victims in self._group.values():
            if result.binding is not None:
                sched.release(result.binding)
                sched.requeue(qp.info)
        self._group.clear()

    def _settle_waits(self) -> None:
        """End the waits at Permit that ended by now, as serve does before each attempt: an allowed pod's binding
        cycle waits for its recorded answer; a rejected one is back in the queue (the scheduler sent it)."""
        for result in self.ctl.scheduler.settle_waiting():
            job = result.binding
            if job is not None:
                self._binding[job.pod.key] = (job.queued if job.queued is not None else QueuedPod(job.pod), job)

    def _compare(self, d: DecisionLine, replayed: dict[str, Any]) -> None:
        fields: list[str] = []
        if replayed["outcome"] != d.outcome:
            fields.append("outcome")
        elif d.outcome == SCHEDULED:
            if replayed["node"] != d.node:
                fields.append("node")
        elif replayed["message"] != d.message:
            fields.append("message")
        if replayed["nominated"] != d.nominated:
            fields.append("nominated")
        if sorted(replayed["victims"]) != sorted(d.victims):
            fields.append("victims")
        if not fields:
            self.out.identical += 1
            return
        recorded = {
            "outcome": d.outcome,
            "node": d.node,
            "top": d.top,
            "message": d.message,
            "nominated": d.nominated,
            "victims": d.victims,
        }
        finding = Finding(d.line, d.pod, fields, recorded, replayed)
        if fields == ["node"] and d.node in d.top and replayed["node"] in d.top:
            self.out.ties.append(finding)
        else:
            self.out.differences.append(finding)

    def _follow(self, d: DecisionLine, qp: QueuedPod, info: PodInfo, result: CycleResult | None) -> None:
        """Make the replay's state what serve's decision made it (whatever the replay chose)."""
        ctl = self.ctl
        sched = ctl.scheduler
        job = result.binding if result is not None else None
        if d.outcome == SCHEDULED:
            # A pod the replay found no room for stays pending here until the watch shows it bound.
            self._follow_placed(d, qp, job, requeue=False)
            return
        if job is not None:
            sched.release(job)
        if d.internal:
            sched.handle_failure(
                qp, CycleResult(info, d.profile or info.pod.scheduler_name, status=Status.error(d.message))
            )
            return
        nominated = blocked_nomination(info, d.nominated) if d.blocked else d.nominated
        if nominated and nominated not in ctl.snapshot.index:
            nominated = None
        failed = CycleResult(
            info,
            d.profile or info.pod.scheduler_name,
            status=Status(Code.ERROR if d.outcome == ERROR else Code.UNSCHEDULABLE, [d.message]),
            diagnosis=result.diagnosis if result is not None else None,
            nominated_node=nominated,
        )
        sched.handle_failure(qp, failed)
        refused = ctl.pods.get(d.refused) if d.refused else None
        if refused is not None:  # its budget counts as allowing no disruption for a while, as in serve
            ctl.victims.refused[d.refused] = (refused.info.pod, self.now)

    def _follow_placed(self, d: DecisionLine, qp: QueuedPod, job: BindingCycle | None, *, requeue: bool) -> None:
        """serve placed the pod on ``d.node``: the replay's choice is moved there (or, on a node the replay does not
        know, taken back: sent to the queue when ``requeue``), and its binding cycle waits for the recorded answer."""
        sched = self.ctl.scheduler
        if job is not None and job.node != d.node:
            if d.node in self.ctl.snapshot.index:
                job = sched.reserve_instead(job, str(d.node)).binding
            else:
                sched.release(job)
                if requeue:
                    sched.requeue(qp.info)
                job = None
        if job is not None:
            self._binding[d.pod] = (qp, job)

    def _answered(self, b: BindLine) -> None:
        if b.pod not in self._binding:
            self._settle_waits()  # a pod whose wait at Permit ended (its gang complete) since the last decision
        waiting = self._binding.pop(b.pod, None)
        if waiting is None:
            return  # the replay did not place it (reported at its decision)
        qp, job = waiting
        self.ctl.binding_done(BindingDone(qp, job, time.perf_counter(), b.status()))


def verify_record(stream: IO[str], registry: Mapping[str, PluginFactory]) -> Verification:
    """Replay the record read from ``stream``. Raises RecordError (with the line) on a malformed record."""
    head, lines = read_record(stream)
    config = recorded_config(head, set(registry))
    replay = Replay(head, config, registry)
    live_log = logging.getLogger("packsched.live")
    level = live_log.level
    live_log.setLevel(logging.ERROR)  # serve logged the replayed warnings (unreadable objects, ...) already
    try:
        for line in lines:
            replay.apply(line)
    except TruncatedRecord as exc:
        replay.out.notes.append(
            f"line {exc.line} is cut short ({exc.message}): serve was stopped while writing it; "
            "the record is verified up to the line before"
        )
    finally:
        live_log.setLevel(level)
    return replay.out
