"""A fake Kubernetes API server for the tests: loopback only, one process, real semantics for what packsched
uses.

- resourceVersion: one counter for every write; lists answer the current one; watches send every change
  after the version they start from, in order, then bookmarks while idle, until their timeoutSeconds.
- a watch from a version older than the retained history gets an ERROR event with a 410 Status (as the real
  server answers a watch, with 200 and the error in the stream); :meth:`FakeApiServer.compact` drops history.
- pods/binding: 201 with a ``Status`` (not the Binding); 409 when the pod is already bound or its uid does
  not match; 404 when the pod does not exist.
- pods/eviction: 429 when a PodDisruptionBudget of the pod forbids it (computed as the disruption controller
  does), else the pod is deleted.
- PUT checks resourceVersion (409 on a stale one): leases rely on it. POST of an existing name is 409.
- PATCH of pods/status merges conditions by type (strategic merge) and deletes ``null`` fields; a strategic
  patch of a claim's ``reservedFor`` deletes the entries ``{"$patch": "delete", "uid": ...}`` names.
- PUT of a status subresource replaces the status only; PUT of a kind with a status subresource (ResourceClaims)
  keeps the status.
- DRA (resource.k8s.io): not served until :meth:`FakeApiServer.serve_dra` (at one version, as a cluster serves
  its newest); other versions' paths answer 404, and so does the group's discovery document (``/apis/<group>``)
  while it is not served.
- GenericWorkload (scheduling.k8s.io's Workloads and PodGroups): not served until
  :meth:`FakeApiServer.serve_generic_workload` (the kind and version one Kubernetes release serves); the
  group's discovery document lists v1 and that version. The PodGroups are stored as ``podgroups.scheduling.k8s.io``
  (``podgroups`` is scheduler-plugins' PodGroup).
- latency: every write (POST, PUT, PATCH, DELETE) takes ``write_latency_s`` (default 4 ms, about what a real
  API server on loopback with etcd takes), reads ``read_latency_s`` (default 0); requests are served
  concurrently, so the latency hides nothing but a synchronous client.
- outage: :meth:`outage` makes the server drop every request and watch unanswered for a while (as a restarting
  API server: clients see the connection close).
- faults: :meth:`inject` makes matching requests answer an error status, or hang (after applying the request,
  or without), :meth:`drop_watches` cuts every open watch stream without ending it cleanly.
"""

from __future__ import annotations

import bisect
import contextlib
import copy
import datetime as dt
import json
import math
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Obj = dict[str, Any]

SCHEDULING_POD_GROUPS = "podgroups.scheduling.k8s.io"  # the store's name of scheduling.k8s.io's PodGroups
# plural -> (group/version, kind, namespaced)
KINDS: dict[str, tuple[str, str, bool]] = {
    "nodes": ("v1", "Node", False),
    "pods": ("v1", "Pod", True),
    "namespaces": ("v1", "Namespace", False),
    "poddisruptionbudgets": ("policy/v1", "PodDisruptionBudget", True),
    "priorityclasses": ("scheduling.k8s.io/v1", "PriorityClass", False),
    "leases": ("coordination.k8s.io/v1", "Lease", True),
    "events": ("events.k8s.io/v1", "Event", True),
    "elasticquotas": ("scheduling.x-k8s.io/v1alpha1", "ElasticQuota", True),
    "podgroups": ("scheduling.x-k8s.io/v1alpha1", "PodGroup", True),
    "services": ("v1", "Service", True),
    "replicationcontrollers": ("v1", "ReplicationController", True),
    "replicasets": ("apps/v1", "ReplicaSet", True),
    "statefulsets": ("apps/v1", "StatefulSet", True),
    "persistentvolumeclaims": ("v1", "PersistentVolumeClaim", True),
    "persistentvolumes": ("v1", "PersistentVolume", False),
    "storageclasses": ("storage.k8s.io/v1", "StorageClass", False),
    "csinodes": ("storage.k8s.io/v1", "CSINode", False),
    "deployments": ("apps/v1", "Deployment", True),
    "jobs": ("batch/v1", "Job", True),
    "configmaps": ("v1", "ConfigMap", True),
    "secrets": ("v1", "Secret", True),  # never asked for by packsched: tests assert so
    "deviceclasses": ("resource.k8s.io/v1", "DeviceClass", False),
    "resourceslices": ("resource.k8s.io/v1", "ResourceSlice", False),
    "resourceclaims": ("resource.k8s.io/v1", "ResourceClaim", True),
    # kube-scheduler's own pod groups (GenericWorkload): served only after serve_generic_workload; the PodGroup is
    # stored under a name of its own (scheduler-plugins' PodGroup above has the plural "podgroups")
    "workloads": ("scheduling.k8s.io/v1alpha1", "Workload", True),
    SCHEDULING_POD_GROUPS: ("scheduling.k8s.io/v1beta1", "PodGroup", True),
}
DRA_PLURALS = frozenset({"deviceclasses", "resourceslices", "resourceclaims"})
GENERIC_WORKLOAD_PLURALS = frozenset({"workloads", SCHEDULING_POD_GROUPS})
SCHEDULING_GROUP = "scheduling.k8s.io"
# the GenericWorkload kind each release serves, and its version
GENERIC_WORKLOAD_BY_MINOR = {
    35: ("workloads", "v1alpha1"),
    36: (SCHEDULING_POD_GROUPS, "v1alpha2"),
    37: (SCHEDULING_POD_GROUPS, "v1beta1"),
}
WITH_STATUS = frozenset({"resourceclaims"})  # kinds whose main PUT leaves status alone (a status subresource)

_GROUP = re.compile(r"^/apis/(?P<group>[^/]+)$")
_PATH = re.compile(
    r"^/(?:api/v1|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[a-z]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>[a-z]+))?$"
)


class ApiFailure(Exception):
    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message

    def status(self) -> Obj:
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int = 500
    count: int = 1
    hang_s: float = 0.0  # > 0: hang this long (past the client's timeout), then close without answering
    apply_first: bool = False  # with hang_s: apply the request, then hang (the answer is lost)
    apply_late: bool = False  # with hang_s: hang, then apply the request (after the client gave up on it)


@dataclass
class _Event:
    rv: int
    plural: str
    namespace: str
    type: str
    obj: Obj


@dataclass
class Stats:
    requests: int = 0
    bindings: dict[str, int] = field(default_factory=dict)  # successful binds per pod key
    binding_conflicts: int = 0
    evictions: int = 0
    evictions_refused: int = 0
    watches: int = 0
    log: list[tuple[str, str, bool]] = field(default_factory=list)  # (method, path, watch) of each request
    queries: list[str] = field(default_factory=list)  # each request's query string, as log
    times: list[float] = field(default_factory=list)  # monotonic arrival time of each request, as log
    lists: list[tuple[str, float]] = field(default_factory=list)  # (plural, monotonic time answered) of each list
    dropped_in_outage: int = 0
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (method, path) of each request dropped so
    gone: int = 0
    faults_fired: int = 0


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pdb_allows(pdb: Obj, pods: list[Obj]) -> bool:
    """disruptionsAllowed > 0, as the disruption controller computes it."""
    spec = pdb.get("spec") or {}
    sel = spec.get("selector") or {}
    if not sel:
        return True

    def matches(p: Obj) -> bool:
        labels = p["metadata"].get("labels") or {}
        if any(labels.get(k) != v for k, v in (sel.get("matchLabels") or {}).items()):
            return False
        for e in sel.get("matchExpressions") or []:
            have = labels.get(e["key"])
            op = e["operator"]
            vals = e.get("values") or []
            if (op == "In" and have not in vals) or (op == "NotIn" and have in vals):
                return False
            if (op == "Exists" and have is None) or (op == "DoesNotExist" and have is not None):
                return False
        return True

    mine = [p for p in pods if matches(p)]
    expected = len(mine)
    healthy = sum(1 for p in mine if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp"))

    def scaled(v: Any) -> int:
        if isinstance(v, str) and v.endswith("%"):
            return math.ceil(int(v[:-1]) * expected / 100)
        return int(v)

    if spec.get("maxUnavailable") is not None:
        desired = max(0, expected - scaled(spec["maxUnavailable"]))
    elif spec.get("minAvailable") is not None:
        desired = scaled(spec["minAvailable"])
    else:
        desired = 0
    return healthy - desired > 0


class FakeApiServer:
    def __init__(
        self,
        token: str = "test-token",
        bookmark_interval_s: float = 0.5,
        max_watch_s: float = 5.0,
        write_latency_s: float = 0.004,
        read_latency_s: float = 0.0,
    ) -> None:
        self.token = token
        self.write_latency_s = write_latency_s
        self.read_latency_s = read_latency_s
        self.down_until = 0.0  # monotonic time an outage ends
        self.bookmark_interval_s = bookmark_interval_s
        self.max_watch_s = max_watch_s
        self.lock = threading.Condition()
        self.rv = 1000  # never "0", which a watch reads as "from any version"
        self.kinds = dict(KINDS)  # this server's: serve_dra sets the DRA kinds' version
        self.store: dict[str, dict[tuple[str, str], Obj]] = {p: {} for p in KINDS}
        self.unserved: set[str] = set()  # plurals answered 404, as kinds a cluster does not serve (CRDs not installed)
        self.dra_version = ""  # the resource.k8s.io version served ("": none)
        self.generic_workload: dict[str, str] = {}  # GenericWorkload store name -> the version served
        self.history: list[_Event] = []
        self.history_rvs: list[int] = []
        self.compacted_rv = 0
        self.max_history = 200_000
        self.faults: list[Fault] = []
        self.watch_epoch = 0
        self.bind_latency_s = 0.0  # every binding takes this long (a slow API server)
        self.first_bind = 0.0  # monotonic time of the first and the last successful binding
        self.last_bind = 0.0
        self.stats = Stats()
        self.closed = False
        server = self

        class Handler(_Handler):
            api = server

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), name="fakeapi", daemon=True)

    # -- lifecycle -------------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> FakeApiServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        with self.lock:
            self.closed = True
            self.watch_epoch += 1
            self.lock.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def kubeconfig(self, path: str) -> str:
        data = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "packsched", "user": {"token": self.token}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "packsched"}}],
            "current-context": "fake",
        }
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        return path

    def serve_dra(self, version: str = "v1") -> None:
        """Serve resource.k8s.io at ``version`` only (objects carry that apiVersion)."""
        with self.lock:
            self.dra_version = version
            for plural in DRA_PLURALS:
                _, kind, namespaced = self.kinds[plural]
                self.kinds[plural] = (f"resource.k8s.io/{version}", kind, namespaced)

    def serve_generic_workload(self, minor: int) -> None:
        """Serve the Workloads (1.35) or the PodGroups (1.36, 1.37) of scheduling.k8s.io at the version Kubernetes
        ``1.<minor>`` serves with GenericWorkload on (objects carry that apiVersion); the others answer 404."""
        name, version = GENERIC_WORKLOAD_BY_MINOR[minor]
        with self.lock:
            self.generic_workload = {name: version}
            _, kind, namespaced = self.kinds[name]
            self.kinds[name] = (f"{SCHEDULING_GROUP}/{version}", kind, namespaced)
            for obj in self.store[name].values():  # served at that version now (as the server converts them)
                obj["apiVersion"] = f"{SCHEDULING_GROUP}/{version}"

    @staticmethod
    def store_name(group: str | None, plural: str) -> str:
        """The store's name of the kind a path names (scheduling.k8s.io's PodGroups have one of their own)."""
        return SCHEDULING_POD_GROUPS if group == SCHEDULING_GROUP and plural == "podgroups" else plural

    def _served(self, plural: str, group: str | None, version: str | None) -> bool:
        if plural not in KINDS or plural in self.unserved:
            return False
        if plural in DRA_PLURALS:
            return bool(self.dra_version) and group == "resource.k8s.io" and version == self.dra_version
        if plural in GENERIC_WORKLOAD_PLURALS:
            return group == SCHEDULING_GROUP and self.generic_workload.get(plural) == version
        return True

    def _discovery(self, group: str) -> Obj | None:
        """The API group's discovery document, for the groups whose served versions a test chooses."""
        versions: list[str] = []
        if group == "resource.k8s.io" and self.dra_version:
            versions = [self.dra_version]
        elif group == SCHEDULING_GROUP:
            versions = ["v1", *self.generic_workload.values()]
        if not versions:
            return None
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": gvs, "preferredVersion": gvs[0]}

    # -- faults ----------------------------------------------------------------------------------------------

    def inject(
        self,
        method: str,
        pattern: str,
        status: int = 500,
        count: int = 1,
        hang_s: float = 0.0,
        apply_first: bool = False,
        apply_late: bool = False,
    ) -> None:
        with self.lock:
            self.faults.append(Fault(method, re.compile(pattern), status, count, hang_s, apply_first, apply_late))

    def drop_watches(self) -> None:
        """Cut every open watch mid-stream (no final chunk): clients see a broken connection."""
        with self.lock:
            self.watch_epoch += 1
            self.lock.notify_all()

    def compact(self) -> None:
        """Forget the history: a watch from any earlier resourceVersion now gets 410 Gone."""
        with self.lock:
            self.compacted_rv = self.rv
            self.history.clear()
            self.history_rvs.clear()
            self.watch_epoch += 1  # open watches end too, as after an etcd compaction they would
            self.lock.notify_all()

    def outage(self, seconds: float) -> None:
        """For ``seconds`` from now every request is dropped unanswered and open watches are cut."""
        with self.lock:
            self.down_until = time.monotonic() + seconds
            self.watch_epoch += 1
            self.lock.notify_all()

    def is_down(self) -> bool:
        return time.monotonic() < self.down_until

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for f in self.faults:
                if f.count > 0 and f.method == method and f.pattern.search(path):
                    f.count -= 1
                    self.stats.faults_fired += 1
                    return f
        return None

    # -- storage (callers hold the lock) --------------------------------------------------------------------

    def _record(self, plural: str, etype: str, obj: Obj) -> None:
        ns = obj["metadata"].get("namespace", "")
        self.history.append(_Event(self.rv, plural, ns, etype, copy.deepcopy(obj)))
        self.history_rvs.append(self.rv)
        if len(self.history) > self.max_history:
            cut = len(self.history) // 2
            self.compacted_rv = self.history_rvs[cut - 1]
            del self.history[:cut]
            del self.history_rvs[:cut]
        self.lock.notify_all()

    def _bump(self, obj: Obj) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)

    def _key(self, plural: str, ns: str, name: str) -> tuple[str, str]:
        return (ns if self.kinds[plural][2] else "", name)

    def _create(self, plural: str, ns: str, obj: Obj) -> Obj:
        gv, kind, namespaced = self.kinds[plural]
        obj = copy.deepcopy(obj)
        obj["apiVersion"], obj["kind"] = gv, kind
        meta = obj.setdefault("metadata", {})
        if namespaced:
            meta["namespace"] = ns or meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        name = meta.get("name")
        if not name and meta.get("generateName"):
            name = meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        if not name:
            raise ApiFailure(422, "Invalid", "metadata.name: Required value")
        key = self._key(plural, meta.get("namespace", ""), name)
        if key in self.store[plural]:
            raise ApiFailure(409, "AlreadyExists", f'{plural} "{name}" already exists')
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = _now()
        meta.pop("resourceVersion", None)
        if plural == "pods":
            self._admit_pod(obj)
        self._bump(obj)
        self.store[plural][key] = obj
        self._record(plural, "ADDED", obj)
        return obj

    def _admit_pod(self, pod: Obj) -> None:
        spec = pod.setdefault("spec", {})
        spec.setdefault("schedulerName", "default-scheduler")
        pc_name = spec.get("priorityClassName")
        if pc_name:
            pc = self.store["priorityclasses"].get(("", pc_name))
            if pc is None:
                raise ApiFailure(403, "Forbidden", f"no PriorityClass with name {pc_name} was found")
            spec["priority"] = pc.get("value", 0)
            spec.setdefault("preemptionPolicy", pc.get("preemptionPolicy", "PreemptLowerPriority"))
        else:
            spec.setdefault("priority", 0)
            spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        pod.setdefault("status", {}).setdefault("phase", "Pending")

    def _get(self, plural: str, ns: str, name: str) -> Obj:
        obj = self.store[plural].get(self._key(plural, ns, name))
        if obj is None:
            raise ApiFailure(404, "NotFound", f'{plural} "{name}" not found')
        return obj

    def _update(self, plural: str, ns: str, name: str, body: Obj) -> Obj:
        cur = self._get(plural, ns, name)
        want = body.get("metadata", {}).get("resourceVersion")
        if want and want != cur["metadata"]["resourceVersion"]:
            raise ApiFailure(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {plural} "{name}": the object has been modified; '
                "please apply your changes to the latest version and try again",
            )
        new = copy.deepcopy(body)
        new["apiVersion"], new["kind"] = self.kinds[plural][0], self.kinds[plural][1]
        mutable = {k: v for k, v in new.get("metadata", {}).items() if k in ("labels", "annotations", "finalizers")}
        new["metadata"] = {**cur["metadata"], **mutable}
        if plural in WITH_STATUS:
            new["status"] = copy.deepcopy(cur.get("status") or {})
        self._bump(new)
        self.store[plural][self._key(plural, ns, name)] = new
        self._record(plural, "MODIFIED", new)
        return new

    def _delete(self, plural: str, ns: str, name: str, uid: str = "") -> Obj:
        cur = self._get(plural, ns, name)
        if uid and cur["metadata"].get("uid") != uid:
            raise ApiFailure(409, "Conflict", "Precondition failed: UID in precondition does not match")
        del self.store[plural][self._key(plural, ns, name)]
        gone = copy.deepcopy(cur)
        self._bump(gone)
        self._record(plural, "DELETED", gone)
        return gone

    def _bind(self, ns: str, name: str, body: Obj) -> Obj:
        pod = self._get("pods", ns, name)
        uid = (body.get("metadata") or {}).get("uid")
        target = ((body.get("target") or {}).get("name")) or ""
        if not target:
            raise ApiFailure(422, "Invalid", "target.name: Required value")
        if uid and pod["metadata"]["uid"] != uid:
            raise ApiFailure(409, "Conflict", "Precondition failed: UID in precondition does not match")
        if pod["spec"].get("nodeName"):
            self.stats.binding_conflicts += 1
            raise ApiFailure(409, "Conflict", f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"')
        pod = copy.deepcopy(pod)
        pod["spec"]["nodeName"] = target
        conds = [c for c in pod["status"].get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append({"type": "PodScheduled", "status": "True", "lastTransitionTime": _now()})
        pod["status"]["conditions"] = conds
        self._bump(pod)
        self.store["pods"][(ns, name)] = pod
        self._record("pods", "MODIFIED", pod)
        key = f"{ns}/{name}"
        self.stats.bindings[key] = self.stats.bindings.get(key, 0) + 1
        self.last_bind = time.monotonic()
        self.first_bind = self.first_bind or self.last_bind
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    def _evict(self, ns: str, name: str, body: Obj) -> Obj:
        pod = self._get("pods", ns, name)
        uid = ((body.get("deleteOptions") or {}).get("preconditions") or {}).get("uid", "")
        if pod["spec"].get("nodeName"):
            pods = [p for (pns, _), p in self.store["pods"].items() if pns == ns]
            for (pns, _), pdb in self.store["poddisruptionbudgets"].items():
                if pns == ns and not _pdb_allows(pdb, pods) and _pdb_selects(pdb, pod):
                    self.stats.evictions_refused += 1
                    raise ApiFailure(
                        429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget."
                    )
        self._delete("pods", ns, name, uid)
        self.stats.evictions += 1
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    def _update_status(self, plural: str, ns: str, name: str, body: Obj) -> Obj:
        cur = self._get(plural, ns, name)
        want = body.get("metadata", {}).get("resourceVersion")
        if want and want != cur["metadata"]["resourceVersion"]:
            raise ApiFailure(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {plural} "{name}": the object has been modified; '
                "please apply your changes to the latest version and try again",
            )
        new = copy.deepcopy(cur)
        new["status"] = copy.deepcopy(body.get("status") or {})
        self._bump(new)
        self.store[plural][self._key(plural, ns, name)] = new
        self._record(plural, "MODIFIED", new)
        return new

    def _patch_status(self, plural: str, ns: str, name: str, patch: Obj, strategic: bool) -> Obj:
        cur = copy.deepcopy(self._get(plural, ns, name))
        uid = (patch.get("metadata") or {}).get("uid")
        if uid and uid != cur["metadata"].get("uid"):
            raise ApiFailure(409, "Conflict", "Precondition failed: UID in precondition does not match")
        status = cur.setdefault("status", {})
        for k, v in (patch.get("status") or {}).items():
            if v is None:
                status.pop(k, None)
            elif k == "reservedFor" and strategic:
                gone = {e.get("uid") for e in v if e.get("$patch") == "delete"}
                kept = [e for e in status.get(k) or [] if e.get("uid") not in gone]
                status[k] = kept + [e for e in v if e.get("$patch") != "delete"]
            elif k == "conditions" and strategic:
                by_type = {c.get("type"): c for c in status.get("conditions") or []}
                for c in v:
                    by_type[c.get("type")] = {**by_type.get(c.get("type"), {}), **c}
                status["conditions"] = list(by_type.values())
            elif isinstance(v, dict) and isinstance(status.get(k), dict) and not strategic:
                status[k] = {**status[k], **v}
            else:
                status[k] = v
        self._bump(cur)
        self.store[plural][self._key(plural, ns, name)] = cur
        self._record(plural, "MODIFIED", cur)
        return cur

    # -- in-process access for tests ------------------------------------------------------------------------

    def create(self, plural: str, obj: Obj) -> Obj:
        with self.lock:
            return copy.deepcopy(self._create(plural, obj.get("metadata", {}).get("namespace", ""), obj))

    def create_many(self, plural: str, objs: list[Obj]) -> None:
        with self.lock:
            for obj in objs:
                self._create(plural, obj.get("metadata", {}).get("namespace", ""), obj)

    def update(self, plural: str, obj: Obj) -> Obj:
        """PUT ``obj`` (as read: its resourceVersion must be the current one)."""
        meta = obj.get("metadata", {})
        with self.lock:
            return copy.deepcopy(self._update(plural, meta.get("namespace", ""), meta["name"], obj))

    def patch_status(self, plural: str, ns: str, name: str, patch: Obj) -> Obj:
        """A strategic-merge patch of the status (as a controller writes it)."""
        with self.lock:
            return copy.deepcopy(self._patch_status(plural, ns, name, patch, strategic=True))

    def delete(self, plural: str, ns: str, name: str) -> None:
        with self.lock:
            self._delete(plural, ns, name)

    def objects(self, plural: str) -> list[Obj]:
        with self.lock:
            return [copy.deepcopy(o) for o in self.store[plural].values()]

    def get(self, plural: str, ns: str, name: str) -> Obj | None:
        with self.lock:
            obj = self.store[plural].get(self._key(plural, ns, name))
            return copy.deepcopy(obj) if obj else None

    def wait_for(self, predicate: Any, timeout_s: float) -> bool:
        """Wait (bounded) until ``predicate(self)`` holds; checked at every write."""
        deadline = time.monotonic() + timeout_s
        with self.lock:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.lock.wait(min(left, 0.1))
            return True


def _pdb_selects(pdb: Obj, pod: Obj) -> bool:
    sel = (pdb.get("spec") or {}).get("selector") or {}
    labels = pod["metadata"].get("labels") or {}
    return bool(sel) and all(labels.get(k) == v for k, v in (sel.get("matchLabels") or {}).items())


class _QuietServer(ThreadingHTTPServer):
    # A real API server listens with the system's full backlog; socketserver's default of 5 drops the SYNs of a
    # client opening its connections at once (informers, lease, health) while the accept thread waits for the
    # interpreter lock, and each dropped SYN costs that client a 1 s retransmit.
    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # clients that hang up (timeouts, dropped watches) are part of the tests


class _Handler(BaseHTTPRequestHandler):
    api: FakeApiServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in separate writes: no 40 ms delayed-ACK stalls

    def log_message(self, format: str, *args: object) -> None:
        return

    def _send(self, code: int, body: Obj) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Obj:
        n = int(self.headers.get("Content-Length") or 0)
        if not n:
            return {}
        data = json.loads(self.rfile.read(n))
        return data if isinstance(data, dict) else {}

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        api = self.api
        body = self._body()
        url = urlsplit(self.path)
        with api.lock:
            api.stats.requests += 1
            api.stats.log.append((method, url.path, "watch=true" in url.query or "watch=1" in url.query))
            api.stats.queries.append(url.query)
            api.stats.times.append(time.monotonic())
            if api.is_down():
                api.stats.dropped_in_outage += 1
                api.stats.dropped.append((method, url.path))
                self.close_connection = True
                return  # no answer at all: the client sees the connection close
        if self.headers.get("Authorization") != f"Bearer {api.token}":
            self._send(401, ApiFailure(401, "Unauthorized", "Unauthorized").status())
            return
        fault = api._take_fault(method, url.path)
        if fault is not None and fault.hang_s <= 0:
            self._send(fault.status, ApiFailure(fault.status, "InternalError", "injected fault").status())
            return
        g = _GROUP.match(url.path)
        discovery = api._discovery(g.group("group")) if method == "GET" and g is not None else None
        if discovery is not None:
            self._send(200, discovery)
            return
        m = _PATH.match(url.path)
        plural = api.store_name(m.group("group"), m.group("plural")) if m is not None else ""
        if m is None or not api._served(plural, m.group("group"), m.group("version")):
            self._send(404, ApiFailure(404, "NotFound", f"the server could not find {url.path}").status())
            return
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        latency = api.write_latency_s if method != "GET" else api.read_latency_s
        if url.path.endswith("/binding"):
            latency += api.bind_latency_s
        if latency > 0 and "watch=" not in url.query:
            time.sleep(latency)
        if fault is not None and fault.apply_late:  # a request the server gets to after the client gave up
            self._hang(fault)
            with contextlib.suppress(ApiFailure):  # (nobody hears a refusal)
                self._dispatch(method, plural, m, body, query)
            return
        if fault is not None and not fault.apply_first:
            self._hang(fault)
            return
        try:
            if method == "GET" and m.group("name") is None and query.get("watch") in ("true", "1"):
                self._watch(plural, m.group("ns") or "", query)
                return
            code, answer = self._dispatch(method, plural, m, body, query)
        except ApiFailure as exc:
            code, answer = exc.code, exc.status()
        if fault is not None:
            self._hang(fault)
            return
        self._send(code, answer)
        if method == "GET" and m.group("name") is None and code == 200:
            with api.lock:
                api.stats.lists.append((plural, time.monotonic()))

    def _hang(self, fault: Fault) -> None:
        time.sleep(fault.hang_s)
        self.close_connection = True

    def _dispatch(
        self, method: str, plural: str, m: re.Match[str], body: Obj, query: dict[str, str]
    ) -> tuple[int, Obj]:
        api = self.api
        ns, name, sub = m.group("ns") or "", m.group("name"), m.group("sub")
        strategic = "strategic" in (self.headers.get("Content-Type") or "")
        with api.lock:
            if name is None:
                if method == "GET":
                    gv, kind, _ = api.kinds[plural]
                    keys = [k for k in api.store[plural] if not ns or k[0] == ns]
                    # pagination as the API server does it: at most `limit` items, and a token for the rest
                    start = int(query.get("continue") or 0)
                    limit = int(query.get("limit") or 0)
                    end = start + limit if limit > 0 else len(keys)
                    items = [copy.deepcopy(api.store[plural][k]) for k in keys[start:end]]
                    meta: Obj = {"resourceVersion": str(api.rv)}
                    if end < len(keys):
                        meta["continue"] = str(end)
                    return 200, {"kind": f"{kind}List", "apiVersion": gv, "metadata": meta, "items": items}
                if method == "POST":
                    return 201, copy.deepcopy(api._create(plural, ns, body))
            elif sub is None:
                if method == "GET":
                    return 200, copy.deepcopy(api._get(plural, ns, name))
                if method == "PUT":
                    return 200, copy.deepcopy(api._update(plural, ns, name, body))
                if method == "DELETE":
                    uid = (body.get("preconditions") or {}).get("uid", "")
                    return 200, copy.deepcopy(api._delete(plural, ns, name, uid))
            elif plural == "pods" and sub == "binding" and method == "POST":
                return 201, api._bind(ns, name, body)
            elif plural == "pods" and sub == "eviction" and method == "POST":
                return 201, api._evict(ns, name, body)
            elif sub == "status" and method == "PUT":
                return 200, copy.deepcopy(api._update_status(plural, ns, name, body))
            elif sub == "status" and method == "PATCH":
                return 200, copy.deepcopy(api._patch_status(plural, ns, name, body, strategic))
        raise ApiFailure(405, "MethodNotAllowed", f"{method} is not supported on {self.path}")

    # -- watch ------------------------------------------------------------------------------------------------

    def _chunk(self, obj: Obj) -> None:
        data = json.dumps(obj).encode() + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _watch(self, plural: str, ns: str, query: dict[str, str]) -> None:
        api = self.api
        timeout = min(float(query.get("timeoutSeconds") or api.max_watch_s), api.max_watch_s)
        bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
        deadline = time.monotonic() + timeout
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        with api.lock:
            api.stats.watches += 1
            epoch = api.watch_epoch
            start = query.get("resourceVersion", "")
            if start in ("", "0"):
                cursor = api.rv
                initial = [copy.deepcopy(o) for (ons, _), o in api.store[plural].items() if not ns or ons == ns]
            else:
                cursor = int(start)
                initial = []
                if cursor < api.compacted_rv:
                    api.stats.gone += 1
                    gone = ApiFailure(410, "Expired", f"too old resource version: {cursor} ({api.compacted_rv})")
                    initial = [{"type": "ERROR", "object": gone.status()}]
        try:
            for obj in initial:
                self._chunk(obj if obj.get("type") == "ERROR" else {"type": "ADDED", "object": obj})
            if initial and initial[0].get("type") == "ERROR":
                self._end()
                return
            last_bookmark = time.monotonic()
            while True:
                with api.lock:
                    i = bisect.bisect_right(api.history_rvs, cursor)
                    events = [e for e in api.history[i:] if e.plural == plural and (not ns or e.namespace == ns)]
                    # Every change up to here has been looked at: a bookmark may carry this version (not one
                    # read after the wait below, which could skip changes made during it).
                    cursor = max(cursor, api.rv)
                    current = cursor
                    if not events:
                        left = deadline - time.monotonic()
                        if left > 0 and api.watch_epoch == epoch:
                            api.lock.wait(min(left, api.bookmark_interval_s))
                    dropped = api.watch_epoch != epoch
                if dropped:
                    self.close_connection = True
                    return  # no final chunk: the client sees the stream break
                for e in events:
                    self._chunk({"type": e.type, "object": e.obj})
                now = time.monotonic()
                if now >= deadline:
                    self._end()
                    return
                if bookmarks and not events and now - last_bookmark >= api.bookmark_interval_s:
                    gv, kind, _ = api.kinds[plural]
                    self._chunk(
                        {
                            "type": "BOOKMARK",
                            "object": {
                                "kind": kind,
                                "apiVersion": gv,
                                "metadata": {"resourceVersion": str(current)},
                            },
                        }
                    )
                    cursor = max(cursor, current)
                    last_bookmark = now
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
