"""``packsched snapshot``: a read-only dump of what scheduling depends on, from a real cluster into a directory that
``simulate``, ``explain`` and ``quotas`` read like any manifests.

Every kind is listed page by page (``limit`` / ``continue``), never watched; Secrets are never asked for, and
ConfigMaps only by name (the scheduler's configuration, when given as a ConfigMap). Each kind goes to one
``<plural>.json`` file holding a ``kind: List`` as ``kubectl get -o json`` writes it, less what scheduling never
reads and what may be sensitive: managed fields, the last-applied configuration, containers' environment,
commands, arguments and probes, and the parts of pod and node status the scheduler does not use. Pods that have
finished (Succeeded, Failed) hold nothing and are left out. ``--anonymize`` hashes names, namespaces, label values
and images (:mod:`packsched.live.anonymize`). The directory is written beside its final place and renamed into it
when complete, so an interrupted snapshot (Ctrl-C, SIGTERM, an error, a full disk) leaves nothing half-written: the
temporary directory is removed on the way out. A file that cannot be written is an
:class:`~packsched.api.files.OutputError` naming it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import yaml

from packsched.api.files import write_error
from packsched.live.anonymize import anonymize as anonymize_object
from packsched.live.port import (
    CONFIG_MAPS,
    CSI_NODES,
    DEFAULT_PAGE_SIZE,
    DEPLOYMENTS,
    ELASTIC_QUOTAS,
    JOBS,
    NAMESPACES,
    NODES,
    PDBS,
    PODS,
    PRIORITY_CLASSES,
    PVCS,
    PVS,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    SERVICES,
    STATEFUL_SETS,
    STORAGE_CLASSES,
    ApiError,
    Resource,
)

Obj = dict[str, Any]

# What scheduling depends on, in the order they are read (nodes first: a progress line says how big the cluster is).
SNAPSHOT_RESOURCES: tuple[Resource, ...] = (
    NODES,
    NAMESPACES,
    PRIORITY_CLASSES,
    PODS,
    PDBS,
    ELASTIC_QUOTAS,
    SERVICES,
    REPLICATION_CONTROLLERS,
    REPLICA_SETS,
    STATEFUL_SETS,
    DEPLOYMENTS,
    JOBS,
    PVCS,
    PVS,
    STORAGE_CLASSES,
    CSI_NODES,
)
CONFIG_FILE = "scheduler-config.yaml"
INFO_FILE = "SNAPSHOT.md"
_FINISHED = ("Succeeded", "Failed")
_DROP_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
_DROP_CONTAINER_FIELDS = (
    "env",
    "envFrom",
    "command",
    "args",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
_POD_STATUS_KEPT = ("phase", "conditions", "nominatedNodeName", "startTime", "qosClass")
_NODE_STATUS_KEPT = ("allocatable", "capacity", "images", "conditions")


class SnapshotError(Exception):
    """The cluster refused or failed a read the snapshot needs (the message says which and what to do)."""


class ListPort(Protocol):
    """What the snapshot asks of an API server (KubernetesPort has it)."""

    def list_page(
        self, res: Resource, namespace: str = "", limit: int = 0, continue_token: str = ""
    ) -> tuple[list[Obj], str, str]: ...

    def get(self, res: Resource, namespace: str, name: str) -> Obj: ...


@dataclass
class SnapshotReport:
    """What was written: objects per kind, kinds the server does not serve, pages read."""

    counts: dict[str, int] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    pages: int = 0
    skipped_finished_pods: int = 0
    config: str = ""


def take_snapshot(
    port: ListPort,
    out_dir: str,
    *,
    namespaces: Sequence[str] = (),
    anonymize: bool = False,
    page_size: int = DEFAULT_PAGE_SIZE,
    scheduler_config: str | None = None,
    progress: Callable[[str], None] = lambda _msg: None,
    server: str = "",
) -> SnapshotReport:
    """Read the cluster through ``port`` and write the snapshot directory ``out_dir`` (which must not exist or be
    empty). ``namespaces``: only these namespaces' objects (pods bound to a node are kept from every namespace:
    they hold the node's resources). ``scheduler_config``: the configuration's text, written beside the objects.
    Whatever stops it (an error, Ctrl-C, SIGTERM) removes what it had written; a write error (a full disk) is an
    OutputError naming the file."""
    if os.path.isdir(out_dir) and os.listdir(out_dir):
        raise SnapshotError(f"{out_dir}: exists and is not empty; give a new directory with -o")
    parent = os.path.dirname(os.path.abspath(out_dir)) or "."
    try:
        os.makedirs(parent, exist_ok=True)
        work = tempfile.mkdtemp(prefix=".snapshot-", dir=parent)
    except OSError as exc:
        raise write_error(out_dir, exc) from None
    report = SnapshotReport()

    def write(name: str, text: str) -> None:
        try:
            with open(os.path.join(work, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise write_error(os.path.join(out_dir, name), exc) from None

    try:
        for res in SNAPSHOT_RESOURCES:
            items = _read(port, res, namespaces, page_size, report, progress)
            if items is None:
                continue
            if res is PODS:
                kept = [p for p in items if (p.get("status") or {}).get("phase") not in _FINISHED]
                report.skipped_finished_pods = len(items) - len(kept)
                items = kept
            items = [_trim(obj) for obj in items]
            if anonymize:
                items = [anonymize_object(obj) for obj in items]
            report.counts[res.kind] = len(items)
            write(f"{res.plural}.json", _list_text(items))
        if scheduler_config is not None:
            write(CONFIG_FILE, scheduler_config)
            report.config = CONFIG_FILE
        write(INFO_FILE, _info(report, server, namespaces, anonymize))
        try:
            if os.path.isdir(out_dir):
                os.rmdir(out_dir)  # empty: checked above
            os.replace(work, out_dir)
        except OSError as exc:
            raise write_error(out_dir, exc) from None
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return report


def _read(
    port: ListPort,
    res: Resource,
    namespaces: Sequence[str],
    page_size: int,
    report: SnapshotReport,
    progress: Callable[[str], None],
) -> list[Obj] | None:
    """Every object of ``res`` (None where the server does not serve the kind, e.g. a CRD not installed)."""
    scopes: Sequence[str] = [""]
    if res.namespaced and namespaces and res is not PODS:
        scopes = namespaces
    items: list[Obj] = []
    started = time.monotonic()
    for ns in scopes:
        token = ""
        while True:
            try:
                page, _rv, token = port.list_page(res, ns, page_size, token)
            except ApiError as exc:
                if exc.status == 404:
                    report.missing.append(res.kind)
                    progress(f"{res.plural}: not served by this cluster (skipped)")
                    return None
                if exc.status in (401, 403):
                    raise SnapshotError(
                        f"listing {res.plural} was refused ({exc.status} {exc.reason}): the snapshot needs list on "
                        f"{res.plural}; deploy/snapshot/rbac.yaml grants what it reads"
                    ) from None
                if exc.status == 410:
                    raise SnapshotError(
                        f"listing {res.plural}: the list changed too much between pages (410 Gone); run again"
                    ) from None
                raise SnapshotError(f"listing {res.plural} failed: {exc}") from None
            report.pages += 1
            items.extend(page)
            if not token:
                break
            progress(f"{res.plural}: {len(items)} so far")
    if res is PODS and namespaces:
        wanted = set(namespaces)
        items = [
            p
            for p in items
            if (p.get("metadata") or {}).get("namespace") in wanted or (p.get("spec") or {}).get("nodeName")
        ]
    progress(f"{res.plural}: {len(items)} ({time.monotonic() - started:.1f} s)")
    return items


def read_config_map(port: ListPort, ref: str) -> str:
    """The scheduler configuration held by ConfigMap ``NAMESPACE/NAME``: the first data value that is a
    KubeSchedulerConfiguration (or a Policy)."""
    ns, _, name = ref.partition("/")
    if not ns or not name:
        raise SnapshotError(f"--scheduler-configmap {ref!r}: expected NAMESPACE/NAME")
    try:
        cm = port.get(CONFIG_MAPS, ns, name)
    except ApiError as exc:
        if exc.status in (401, 403):
            raise SnapshotError(
                f"reading ConfigMap {ref} was refused ({exc.status} {exc.reason}): the snapshot needs get on it; "
                f"deploy/snapshot/rbac.yaml's Role grants it on one ConfigMap: set its namespace to {ns} and its "
                f"resourceNames to [{name}]"
            ) from None
        raise SnapshotError(f"reading ConfigMap {ref} failed: {exc}") from None
    for _key, text in sorted((cm.get("data") or {}).items()):
        try:
            doc = yaml.safe_load(text) if isinstance(text, str) else None
        except yaml.YAMLError:
            continue
        if isinstance(doc, dict) and doc.get("kind") in ("KubeSchedulerConfiguration", "Policy"):
            return str(text)
    raise SnapshotError(f"ConfigMap {ref} holds no KubeSchedulerConfiguration or Policy in its data")


def _trim(obj: Obj) -> Obj:
    """The object less what scheduling never reads and what may be sensitive."""
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    for key in ("managedFields", "selfLink", "resourceVersion", "generation"):
        meta.pop(key, None)
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        kept = {k: v for k, v in annotations.items() if k not in _DROP_ANNOTATIONS}
        if kept:
            meta["annotations"] = kept
        else:
            meta.pop("annotations")
    out["metadata"] = meta
    kind = out.get("kind")
    if kind == "Pod":
        out["spec"] = _trim_pod_spec(out.get("spec"))
        status = out.get("status")
        if isinstance(status, dict):
            out["status"] = {k: v for k, v in status.items() if k in _POD_STATUS_KEPT}
    elif kind in ("ReplicaSet", "Deployment", "StatefulSet", "Job", "ReplicationController"):
        spec = out.get("spec")
        if isinstance(spec, dict) and isinstance(spec.get("template"), dict):
            tmpl = spec["template"]
            out["spec"] = dict(spec, template=dict(tmpl, spec=_trim_pod_spec(tmpl.get("spec"))))
        out.pop("status", None)
    elif kind == "Node":
        status = out.get("status")
        if isinstance(status, dict):
            out["status"] = {k: v for k, v in status.items() if k in _NODE_STATUS_KEPT}
    return out


def _trim_pod_spec(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        if isinstance(out.get(key), list):
            out[key] = [
                {k: v for k, v in c.items() if k not in _DROP_CONTAINER_FIELDS} if isinstance(c, dict) else c
                for c in out[key]
            ]
    return out


def _list_text(items: list[Obj]) -> str:
    return (
        json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}, separators=(",", ":")) + "\n"
    )


def _info(report: SnapshotReport, server: str, namespaces: Sequence[str], anonymized: bool) -> str:
    """SNAPSHOT.md: where and when the snapshot was taken, what it holds, and commands that read it."""
    lines = [
        "# packsched snapshot",
        "",
        f"- taken: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        f"- API server: {'(anonymised)' if anonymized else server or '(unknown)'}",
        f"- namespaces: {', '.join(namespaces) if namespaces else 'all'}",
        f"- anonymised: {'yes' if anonymized else 'no'}",
        f"- scheduler configuration: {report.config or 'none (simulate uses the defaults unless --config is given)'}",
        f"- finished pods left out: {report.skipped_finished_pods}",
        "",
        "| kind | objects |",
        "|---|---:|",
        *[f"| {kind} | {n} |" for kind, n in report.counts.items()],
        "",
    ]
    if report.missing:
        lines.append(f"Not served by the cluster (left out): {', '.join(report.missing)}.")
        lines.append("")
    config = f" --config DIR/{report.config}" if report.config else ""
    lines += [
        "Use it (DIR: this directory; NAMESPACE/NAME: a pod's namespace and name):",
        "",
        "```sh",
        f"packsched simulate DIR{config}",
        f"packsched explain DIR --pod NAMESPACE/NAME{config}",
        "```",
    ]
    return "\n".join(lines) + "\n"
