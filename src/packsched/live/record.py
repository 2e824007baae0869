"""``packsched serve --record FILE``: every scheduling decision, with the cluster events that preceded it, as JSON
lines; ``packsched verify-record FILE`` (:mod:`packsched.live.verify`) replays them.

One JSON object a line. The first is the header; then, in the order the scheduling thread handled them, every
cluster event as the informers delivered it (the API object itself, decoded again by packsched's own decoder on
replay), every scheduling cycle's decision and every binding cycle's answer::

    {"schema": "packsched.record/v1", "packsched": "0.1.0", "created": "...", "seed": 0, "kubeVersion": "1.33",
     "featureGates": {}, "preemptionMode": "delete", "profiles": ["packsched"],
     "config": {"path": "config.yaml", "text": "..."}}
    {"t": 0.0121, "event": "ADDED", "resource": "pods", "object": {"metadata": {...}, "spec": {...}, ...}}
    {"t": 0.0203, "decision": "default/web-1", "profile": "packsched", "outcome": "scheduled", "node": "n2",
     "top": ["n2", "n3"], "message": "", "nominated": null, "victims": [], "blocked": "", "refused": "",
     "internal": false}
    {"t": 0.0311, "bind": "default/web-1", "node": "n2", "ok": true}

``t`` is seconds since the record began, on the scheduler's clock. ``config`` is null for kube-scheduler's defaults
(no configuration file); ``featureGates`` the gates set away from the release's defaults, by ``--feature-gates`` or
the file's PackschedConfiguration (absent in records of packsched before it: none). An event's ``resource`` is the
kind's plural, except for kube-scheduler's own pod-group kinds (scheduling.k8s.io, feature gate GenericWorkload),
named ``plural.version.group`` as kubectl names a kind fully (``podgroups.v1beta1.scheduling.k8s.io``): their
plural is also that of Coscheduling's PodGroup (``podgroups``, scheduling.x-k8s.io). A decision's ``outcome`` is
``scheduled`` (``node`` chosen, its binding cycle started, or held at Permit), ``unschedulable`` or ``error``
(``message`` says why; ``internal``: the attempt raised); ``top`` the nodes with the best score in that cycle
(selectHost broke a tie between them when there are several); ``nominated`` what preemption said of the nomination
(a node, ``""`` cleared, null left alone); ``victims`` the pods preemption chose; ``blocked`` why a victim could not be
removed (the preemption stopped there) and ``refused`` that victim when a PodDisruptionBudget refused its eviction.
A pod-group cycle (kube-scheduler 1.36+) writes one decision for each pod it tried, one after the other, the
cycle's victims in each. The end of a wait at Permit is not a line: its binding answer is. A binding answer that
failed carries ``error`` and, when the API server answered, its ``code`` and ``reason``.

Lines are encoded and written by a thread of their own from a bounded queue, into a buffered file flushed whenever
the queue runs dry and on close: the scheduling thread only queues references (the informers never change an
object after delivering it). Should the queue fill up (a disk much slower than the scheduler), the scheduler waits
for it rather than leave a gap that would make the record useless; should a write fail, recording stops with an
error in the log and scheduling goes on.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import queue as queue_mod
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code, Status
from packsched.live.port import (
    DRA_RESOURCES,
    ELASTIC_QUOTAS,
    NAMESPACES,
    NODES,
    PDBS,
    POD_GROUPS,
    PODS,
    PRIORITY_CLASSES,
    SCHEDULING_POD_GROUPS,
    SCHEDULING_POD_GROUPS_1_36,
    SCHEDULING_WORKLOADS,
    SERVICES,
    STORAGE_RESOURCES,
    WORKLOADS,
    ApiError,
    Obj,
    Resource,
    is_generic_workload,
)
from packsched.scheduler import BindingCycle, CycleResult

LOG = logging.getLogger("packsched.live")

SCHEMA = "packsched.record/v1"
SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"
OUTCOMES = (SCHEDULED, UNSCHEDULABLE, ERROR)
EVENT_TYPES = ("ADDED", "MODIFIED", "DELETED")


def record_name(res: Resource) -> str:
    """The name a record gives a kind: its plural; ``plural.version.group`` for kube-scheduler's own pod-group kinds,
    whose plural ``podgroups`` Coscheduling's PodGroup (scheduling.x-k8s.io) has too."""
    return f"{res.plural}.{res.version}.{res.group}" if is_generic_workload(res) else res.plural


# Every kind serve may watch, by the name a record gives it (DRA's objects carry the version they were served at in
# their apiVersion).
RESOURCES: dict[str, Resource] = {
    record_name(r): r
    for r in (
        NODES,
        PODS,
        PDBS,
        PRIORITY_CLASSES,
        ELASTIC_QUOTAS,
        POD_GROUPS,
        NAMESPACES,
        SERVICES,
        *WORKLOADS,
        *STORAGE_RESOURCES,
        *DRA_RESOURCES,
        SCHEDULING_WORKLOADS,
        SCHEDULING_POD_GROUPS_1_36,
        SCHEDULING_POD_GROUPS,
    )
}
_NAMES = {r: name for name, r in RESOURCES.items()}  # (a DRA kind served at an older version: its plural)
QUEUE_CAPACITY = 100_000  # lines waiting for the writer before the scheduler waits for it
BUFFER_BYTES = 1 << 20


class RecordError(Exception):
    """A record that cannot be written, or read back (``line``: 1 for the header, 0 for the file as a whole)."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}" if line else message)


class TruncatedRecord(RecordError):
    """The last line is cut short (no newline ends it): serve was killed while writing it. What comes before is a
    record all the same."""


def packsched_version() -> str:
    from importlib.metadata import PackageNotFoundError  # imported when a record is written, not at serve's start
    from importlib.metadata import version as package_version

    try:
        return package_version("packsched")
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        return "unknown"


def header(
    config_path: str | None,
    config_text: str | None,
    seed: int,
    kube_version: str,
    preemption_mode: str,
    profiles: Sequence[str],
    feature_gates: Mapping[str, bool] | None = None,
) -> Obj:
    """The first line. ``config_text`` None: kube-scheduler's defaults (no configuration file). ``feature_gates``:
    those set away from the release's defaults (the command line's are not in the configuration's text)."""
    return {
        "schema": SCHEMA,
        "packsched": packsched_version(),
        "created": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seed": seed,
        "kubeVersion": kube_version,
        "featureGates": dict(sorted((feature_gates or {}).items())),
        "preemptionMode": preemption_mode,
        "profiles": list(profiles),
        "config": None if config_text is None else {"path": config_path or "", "text": config_text},
    }


def outcome_of(result: CycleResult) -> str:
    if result.node is not None:
        return SCHEDULED
    return ERROR if result.status.code == Code.ERROR else UNSCHEDULABLE


def decision_fields(result: CycleResult, snapshot: Snapshot, victims: Sequence[str]) -> Obj:
    """What a cycle decided, as a record (and ``verify-record``) compares it; read right after the cycle."""
    outcome = outcome_of(result)
    return {
        "profile": result.profile,
        "outcome": outcome,
        "node": result.node,
        "top": result.top_nodes(snapshot),
        "message": "" if outcome == SCHEDULED else result.message,
        "nominated": result.nominated_node,
        "victims": list(victims),
    }


def _encode(item: Obj) -> str:
    return json.dumps(item, separators=(",", ":"), ensure_ascii=False) + "\n"


class RecordWriter:
    """The record of one ``serve`` run. The header is written at once (so that a path that cannot be written is
    an error at start); every later line goes through :meth:`event`, :meth:`decision`, :meth:`failed_attempt` and
    :meth:`bind`, called from the scheduling thread, and :meth:`close` flushes it."""

    def __init__(
        self,
        path: str,
        head: Obj,
        clock: Callable[[], float] = time.monotonic,
        capacity: int = QUEUE_CAPACITY,
    ) -> None:
        self.path = path
        self.clock = clock
        self.t0 = clock()
        self.lines = 1
        self.failed = ""  # why recording stopped ("" while it goes on)
        try:
            self._file: IO[str] = open(path, "w", encoding="utf-8", buffering=BUFFER_BYTES)  # noqa: SIM115
        except OSError as exc:
            raise RecordError(0, f"cannot write: {exc.strerror or exc}") from None
        try:
            self._file.write(_encode(head))
            self._file.flush()
        except OSError as exc:
            self._file.close()
            raise RecordError(0, f"cannot write: {exc.strerror or exc}") from None
        self._queue: queue_mod.Queue[Obj | None] = queue_mod.Queue(capacity)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="record-writer", daemon=True)
        self._thread.start()

    def _t(self) -> float:
        return round(self.clock() - self.t0, 6)

    # -- called from the scheduling thread ----------------------------------------------------------------

    def event(self, res: Resource, etype: str, obj: Obj) -> None:
        """A cluster change as the scheduling thread applies it (the object is encoded later, by the writer)."""
        self._queue.put({"t": self._t(), "event": etype, "resource": _NAMES.get(res, res.plural), "object": obj})

    def decision(
        self, result: CycleResult, snapshot: Snapshot, victims: Sequence[str], blocked: str = "", refused: str = ""
    ) -> None:
        """A scheduling cycle's decision, as the scheduler made it (before the cluster carried it out)."""
        line: Obj = {"t": self._t(), "decision": result.pod.key}
        line.update(decision_fields(result, snapshot, victims))
        line.update({"blocked": blocked, "refused": refused, "internal": False})
        self._queue.put(line)

    def failed_attempt(self, pod: PodInfo, profile: str, message: str) -> None:
        """A scheduling attempt that raised (an internal error)."""
        self._queue.put(
            {
                "t": self._t(),
                "decision": pod.key,
                "profile": profile,
                "outcome": ERROR,
                "node": None,
                "top": [],
                "message": message,
                "nominated": None,
                "victims": [],
                "blocked": "",
                "refused": "",
                "internal": True,
            }
        )

    def bind(self, job: BindingCycle, status: Status) -> None:
        """A binding cycle's answer, as it came back to the scheduling thread."""
        line: Obj = {"t": self._t(), "bind": job.pod.key, "node": job.node, "ok": status.ok}
        if not status.ok:
            line["error"] = status.message
            cause = status.cause
            if isinstance(cause, ApiError):
                line.update({"code": cause.status, "reason": cause.reason, "apiMessage": cause.message})
        self._queue.put(line)

    # -- the writer thread ----------------------------------------------------------------------------------

    def _run(self) -> None:
        q = self._queue
        while True:
            try:
                item = q.get_nowait()
            except queue_mod.Empty:
                self._flush()
                item = q.get()
            if item is None:
                self._flush()
                return
            if self.failed:
                continue  # keep draining: the scheduler must never wait on a broken record
            try:
                self._file.write(_encode(item))
                self.lines += 1
            except (OSError, ValueError, TypeError, RuntimeError) as exc:
                self._fail(exc)

    def _flush(self) -> None:
        if self.failed:
            return
        try:
            self._file.flush()
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        self.failed = str(getattr(exc, "strerror", None) or exc)
        LOG.error("cannot write the record; recording stopped", extra={"record": self.path, "error": self.failed})

    def close(self, timeout_s: float = 10.0) -> None:
        """Write what is queued (waiting at most ``timeout_s``), then close the file. Idempotent."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(queue_mod.Full):
            self._queue.put(None, timeout=timeout_s)
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            LOG.error("record writer did not finish; the record may end early", extra={"record": self.path})
            return
        try:
            self._file.close()
        except OSError as exc:
            self._fail(exc)


# -- reading ---------------------------------------------------------------------------------------------------


@dataclass
class Header:
    seed: int
    kube_version: str
    preemption_mode: str
    packsched: str
    config_path: str
    config_text: str | None  # None: kube-scheduler's defaults
    profiles: list[str] = field(default_factory=list)
    feature_gates: dict[str, bool] = field(default_factory=dict)


@dataclass
class EventLine:
    line: int
    t: float
    etype: str
    res: Resource
    obj: Obj


@dataclass
class DecisionLine:
    line: int
    t: float
    pod: str
    profile: str
    outcome: str
    node: str | None
    top: list[str]
    message: str
    nominated: str | None
    victims: list[str]
    blocked: str = ""
    refused: str = ""
    internal: bool = False


@dataclass
class BindLine:
    line: int
    t: float
    pod: str
    node: str
    ok: bool
    error: str = ""
    code: int | None = None
    reason: str = ""
    api_message: str = ""

    def status(self) -> Status:
        """The answer as the binding cycle gave it (the API server's refusal as its cause)."""
        if self.ok:
            return Status()
        cause = ApiError(self.code, self.reason, self.api_message) if self.code is not None else None
        return Status(Code.ERROR, [self.error], cause=cause)


Line = EventLine | DecisionLine | BindLine


class _Fields:
    """Typed access to one line's fields; a wrong one is a RecordError naming the line."""

    def __init__(self, data: dict[str, Any], line: int) -> None:
        self.data = data
        self.line = line

    def fail(self, message: str) -> RecordError:
        return RecordError(self.line, message)

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ..., nullable: bool = False) -> Any:
        if key not in self.data:
            if default is ...:
                raise self.fail(f'missing field "{key}"')
            return default
        value = self.data[key]
        if value is None and nullable:
            return None
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            name = " or ".join(k.__name__ for k in kinds)
            raise self.fail(f'field "{key}" must be {name}, got {json.dumps(value)[:60]}')
        return value

    def str_list(self, key: str) -> list[str]:
        value = self.get(key, list, [])
        if not all(isinstance(v, str) for v in value):
            raise self.fail(f'field "{key}" must be a list of strings')
        return list(value)


def _parse(text: str, line: int) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(line, f"malformed JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise RecordError(line, "malformed JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise RecordError(line, f"expected a JSON object, got {type(data).__name__}")
    return data


def parse_header(text: str) -> Header:
    data = _parse(text, 1)
    f = _Fields(data, 1)
    schema = data.get("schema")
    if schema is None:
        raise f.fail(f'not a packsched record: no "schema" field (expected "{SCHEMA}")')
    if schema != SCHEMA:
        raise f.fail(f"unknown schema {json.dumps(schema)[:80]} (this packsched reads {SCHEMA})")
    config = f.get("config", dict, None, nullable=True)
    path, text_ = "", None
    if config is not None:
        c = _Fields(config, 1)
        path = c.get("path", str, "")
        text_ = c.get("text", str)
    return Header(
        seed=f.get("seed", int, 0),
        kube_version=f.get("kubeVersion", str, ""),
        preemption_mode=f.get("preemptionMode", str, ""),
        packsched=f.get("packsched", str, ""),
        config_path=path,
        config_text=text_,
        profiles=f.str_list("profiles"),
        feature_gates=_gates(f),
    )


def _gates(f: _Fields) -> dict[str, bool]:
    gates = f.get("featureGates", dict, {})
    for name, value in gates.items():
        if not isinstance(value, bool):
            raise f.fail(f'field "featureGates.{name}" must be bool, got {json.dumps(value)[:60]}')
    return dict(gates)


def parse_line(text: str, line: int) -> Line:
    data = _parse(text, line)
    f = _Fields(data, line)
    t = float(f.get("t", (int, float)))
    if "event" in data:
        etype = f.get("event", str)
        if etype not in EVENT_TYPES:
            raise f.fail(f"unknown event type {etype!r} (one of {', '.join(EVENT_TYPES)})")
        plural = f.get("resource", str)
        res = RESOURCES.get(plural)
        if res is None:
            raise f.fail(f"unknown resource {plural!r}")
        obj = f.get("object", dict)
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
            raise f.fail("the object has no metadata.name")
        return EventLine(line, t, etype, res, obj)
    if "decision" in data:
        outcome = f.get("outcome", str)
        if outcome not in OUTCOMES:
            raise f.fail(f"unknown outcome {outcome!r} (one of {', '.join(OUTCOMES)})")
        node = f.get("node", str, None, nullable=True)
        if outcome == SCHEDULED and not node:
            raise f.fail('a scheduled decision needs "node"')
        return DecisionLine(
            line,
            t,
            pod=_pod_key(f, "decision"),
            profile=f.get("profile", str, ""),
            outcome=outcome,
            node=node if outcome == SCHEDULED else None,
            top=f.str_list("top"),
            message=f.get("message", str, ""),
            nominated=f.get("nominated", str, None, nullable=True),
            victims=f.str_list("victims"),
            blocked=f.get("blocked", str, ""),
            refused=f.get("refused", str, ""),
            internal=f.get("internal", bool, False),
        )
    if "bind" in data:
        return BindLine(
            line,
            t,
            pod=_pod_key(f, "bind"),
            node=f.get("node", str),
            ok=f.get("ok", bool),
            error=f.get("error", str, ""),
            code=f.get("code", int, None, nullable=True),
            reason=f.get("reason", str, ""),
            api_message=f.get("apiMessage", str, ""),
        )
    raise f.fail('expected an "event", a "decision" or a "bind" line')


def _pod_key(f: _Fields, key: str) -> str:
    value = f.get(key, str)
    if value.count("/") != 1 or value.startswith("/") or value.endswith("/"):
        raise f.fail(f'field "{key}" must be a pod key namespace/name, got {value!r}')
    return str(value)


def read_record(stream: IO[str]) -> tuple[Header, Iterator[Line]]:
    """The header, then the lines one at a time (a malformed one raises RecordError when it is reached;
    TruncatedRecord when it is the last one and no newline ends it)."""
    first = stream.readline()
    if not first.strip():
        raise RecordError(1, 'empty record: expected a header line with a "schema" field')
    head = parse_header(first)

    def lines() -> Iterator[Line]:
        for n, text in enumerate(stream, start=2):
            if not text.strip():
                continue
            try:
                line = parse_line(text, n)
            except RecordError as exc:
                if text.endswith("\n"):
                    raise
                raise TruncatedRecord(n, exc.message) from None
            yield line

    return head, lines()
