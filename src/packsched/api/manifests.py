"""Loading Kubernetes manifests (YAML or JSON, many documents per file, ``kind: List``) into a cluster.

The files are read strictly (``api.strict``), each object by its kind's decoder (``api.kinds.KINDS``); workloads
are expanded into the pods their controllers would create (``api.workloads``). Every problem in every file is
collected first; nothing is returned unless all input is valid.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from packsched.api.cluster import Cluster, Workload
from packsched.api.decoding import PendingPod, Reading, in_document
from packsched.api.dra import ADMIN_NAMESPACE_LABEL, ADMIN_NAMESPACE_MESSAGE
from packsched.api.errors import ErrorList, FieldError, InputError
from packsched.api.files import STDIN, display_name
from packsched.api.kinds import KINDS, NAMESPACE_NAME_LABEL, decode_object
from packsched.api.nesting import TOO_DEEP
from packsched.api.objects import PREEMPT_LOWER_PRIORITY, SYSTEM_PRIORITY_CLASSES, Pod, PriorityClass
from packsched.api.podgroups import POD_GROUP_API_VERSION_1_37, SchedulingPodGroup
from packsched.api.storage import ANN_BETA_STORAGE_CLASS, PersistentVolumeClaim, StorageObjects
from packsched.api.strict import parse_documents, read_file
from packsched.api.workloads import (
    MAX_WORKLOAD_PODS,
    TEMPLATE_SPEC,
    daemon_fits,
    daemon_node,
    daemon_pod,
    instantiate,
    owned_by,
    statefulset_claim,
)

__all__ = [
    "MAX_WORKLOAD_PODS",
    "NAMESPACE_NAME_LABEL",
    "Cluster",
    "Workload",
    "decode_document",
    "decode_template",
    "instantiate",
    "iter_manifest_files",
    "load_manifests",
    "read_documents",
    "resolve_priority",
    "statefulset_claim",
]


def iter_manifest_files(paths: Iterable[str]) -> Iterator[str]:
    """Files named directly (``-``: standard input), and *.yaml / *.yml / *.json under directories (sorted,
    recursively); a file named twice, or named and found in a directory, comes once."""
    seen: set[str] = set()

    def first(path: str) -> bool:
        key = path if path == STDIN else os.path.realpath(path)
        if key in seen:
            return False
        seen.add(key)
        return True

    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith((".yaml", ".yml", ".json")) and first(os.path.join(root, name)):
                        yield os.path.join(root, name)
        elif first(path):
            yield path


def read_documents(path: str, errors: ErrorList) -> list[tuple[str, Any]]:
    """Parse one file into (label, document) pairs; a syntax error is reported with its line and column."""
    text = read_file(path, errors)
    if text is None:
        return []
    if not text.strip():
        return []  # no documents: the caller tells whether an empty file is an error
    docs = parse_documents(text, path, errors, duplicate_at="field")
    if docs is None:
        return []
    out: list[tuple[str, Any]] = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        label = f"document {i + 1}" if len(docs) > 1 else ""
        if _is_list(doc):
            items = doc["items"]
            if not isinstance(items, list):
                errors.add(f"{label} items".strip(), "must be a list")
                continue
            out.extend((f"{label} items[{j}]".strip(), _list_item(doc, item)) for j, item in enumerate(items))
        else:
            out.append((label, doc))
    return out


def _is_list(doc: Any) -> bool:
    """``kind: List``, or a typed list as the API server returns it (``NodeList``, ``PodList``: a kind ending in
    List, with items)."""
    if not isinstance(doc, dict) or "items" not in doc:
        return False
    kind = doc.get("kind")
    return isinstance(kind, str) and (kind == "List" or (kind.endswith("List") and len(kind) > len("List")))


def _list_item(doc: dict[str, Any], item: Any) -> Any:
    """An item of a typed list: the API server leaves out its kind and apiVersion (they are the list's)."""
    kind: str = doc["kind"]
    if kind == "List" or not isinstance(item, dict) or "kind" in item:
        return item
    api_version = doc.get("apiVersion")
    return (
        {"apiVersion": api_version, "kind": kind[: -len("List")], **item}
        if api_version
        else {"kind": kind[:-4], **item}
    )


class _Builder:
    """Decodes documents into a Cluster, one file at a time."""

    def __init__(self, strict: bool = False) -> None:
        self.reading = Reading(strict=strict)
        self.all_errors: list[FieldError] = []
        self.documents = 0  # read from every file so far
        self.empty_files: list[str] = []  # the files that hold no document

    def add_file(self, path: str, named: bool = True) -> None:
        """``named``: the user named this file (not found in a directory), so a wrong kind in it is an error."""
        errors = ErrorList(file=display_name(path))
        self.reading.named = named
        docs = read_documents(path, errors)
        if not docs and not errors:
            self.empty_files.append(display_name(path))
        self.documents += len(docs)
        for label, doc in docs:
            try:
                decode_object(self.reading, doc, label, errors, display_name(path))
            except RecursionError:  # aliases can nest a value deeper than the text does
                errors.add(label, TOO_DEEP)
        self.all_errors.extend(errors.items)

    def _daemon_pods(self) -> None:
        """Each DaemonSet's pods: one for every node it should run on and has none for yet, placed where the
        DaemonSet was written among the pods."""
        cluster = self.reading.cluster
        made: list[tuple[int, list[Pod]]] = []
        for w, file, label in self.reading.daemon_sets:
            have = {daemon_node(p) for p in cluster.pods if p.namespace == w.namespace and owned_by(p, w.kind, w.name)}
            pods = []
            for node in cluster.nodes:
                if node.name not in have and daemon_fits(w.template, node)[0]:
                    pod = daemon_pod(w, node.name)
                    pod.source = w.source
                    pods.append(pod)
                    self.reading.pods.append(PendingPod(pod, file, label, TEMPLATE_SPEC))
            made.append((w.position, pods))
        for position, pods in reversed(made):  # later positions first, so the earlier ones stay right
            cluster.pods[position:position] = pods

    def finish(self) -> Cluster:
        """The checks across objects: priorities, pod names and the nodes pods are bound to, then storage."""
        cluster, pending = self.reading.cluster, self.reading.pods
        classes = {pc.name: pc for pc in SYSTEM_PRIORITY_CLASSES}
        classes.update(cluster.priority_classes)
        cluster.priority_classes = classes
        defaults = [pc for pc in classes.values() if pc.global_default]
        if len(defaults) > 1:
            names = ", ".join(pc.name for pc in defaults)
            self.all_errors.append(
                FieldError("globalDefault", f"more than one PriorityClass is the global default: {names}")
            )
        default = defaults[0] if defaults else None
        self._daemon_pods()
        # the templates the simulator makes pods from later (a DaemonSet's for new nodes, a CronJob's Jobs)
        for template, file, path in self.reading.templates:
            late = ErrorList(file=file)
            resolve_priority(template, classes, default, late, path)
            self.all_errors.extend(late.items)
        # Errors found only now carry the file (not pod.source, which adds the document), as all others do.
        for p in pending:
            late = ErrorList(file=p.file)
            resolve_priority(p.pod, classes, default, late, in_document(p.label, p.spec))
            self.all_errors.extend(late.items)
        for group in cluster.scheduling_pod_groups:
            if group.api_version == POD_GROUP_API_VERSION_1_37:
                late = ErrorList(file=group.file)
                resolve_pod_group_priority(group, classes, default, late, group.label)
                self.all_errors.extend(late.items)
        keys: dict[str, str] = {}
        for p in pending:
            if p.pod.key in keys:
                message = f"duplicate pod {p.pod.key} (also from {keys[p.pod.key]})"
                self.all_errors.append(FieldError(in_document(p.label, "metadata.name"), message, p.file))
            keys[p.pod.key] = p.pod.source
        node_names = {n.name for n in cluster.nodes}
        for p in pending:
            if p.pod.node_name and p.pod.node_name not in node_names:
                message = f"pod {p.pod.key} is bound to node {p.pod.node_name!r}, which no manifest defines"
                self.all_errors.append(FieldError(in_document(p.label, f"{p.spec}.nodeName"), message, p.file))
        pending.clear()
        self._check_admin_access()
        _finish_storage(cluster.storage, self.reading.made_claims)
        self.reading.made_claims = []
        if self.all_errors:
            raise InputError(_dedupe(self.all_errors))
        return cluster

    def _check_admin_access(self) -> None:
        """What the API server checks of a ResourceClaim or template asking for admin access to devices: its
        namespace carries ``resource.kubernetes.io/admin-access: "true"`` (a Namespace the manifests define)."""
        namespaces = self.reading.cluster.namespaces
        for namespace, file, label, path in self.reading.admin_access:
            ns = namespaces.get(namespace)
            if ns is None or ns.labels.get(ADMIN_NAMESPACE_LABEL) != "true":
                self.all_errors.append(FieldError(in_document(label, path), ADMIN_NAMESPACE_MESSAGE, file))
        self.reading.admin_access = []


def _finish_storage(storage: StorageObjects, made: list[PersistentVolumeClaim]) -> None:
    """Claims made by controllers join the ones the manifests define (those win), then claims without a class
    get the default StorageClass, as the DefaultStorageClass admission plugin does."""
    for claim in made:
        storage.claims.setdefault(claim.key, claim)
    defaults = [sc for sc in storage.classes.values() if sc.is_default]
    if defaults:
        for claim in storage.claims.values():
            if claim.storage_class_name is None and ANN_BETA_STORAGE_CLASS not in claim.annotations:
                claim.storage_class_name = defaults[-1].name


def _dedupe(errors: list[FieldError]) -> list[FieldError]:
    seen: set[FieldError] = set()
    out: list[FieldError] = []
    for e in errors:
        if e not in seen:
            seen.add(e)
            out.append(e)
    return out


def resolve_priority(
    pod: Pod, classes: dict[str, PriorityClass], default: PriorityClass | None, errors: ErrorList, path: str
) -> None:
    """What the Priority admission plugin does: the class's value (or the global default's, or 0)."""
    if pod.priority_class_name:
        pc = classes.get(pod.priority_class_name)
        if pc is None:
            errors.add(f"{path}.priorityClassName", f"no PriorityClass with name {pod.priority_class_name} was found")
            return
        if pod.priority_set and pod.priority != pc.value:
            errors.add(
                f"{path}.priority",
                f"the integer value of priority ({pod.priority}) must "
                f"not be provided in pod spec; priority admission controller computed "
                f"{pc.value} from the given PriorityClass name",
            )
        pod.priority = pc.value
    elif not pod.priority_set and default is not None:
        pod.priority = default.value
        pc = default
    else:
        pc = None
    if not pod.preemption_policy:
        pod.preemption_policy = pc.preemption_policy if pc is not None else PREEMPT_LOWER_PRIORITY


def resolve_pod_group_priority(
    group: SchedulingPodGroup,
    classes: dict[str, PriorityClass],
    default: PriorityClass | None,
    errors: ErrorList,
    label: str,
) -> None:
    """What the Priority admission plugin does to a kube-scheduler 1.37 PodGroup: its class's value (or the global
    default class's, or 0), refused when ``spec.priority`` was written and differs."""
    if group.priority_class_name:
        pc = classes.get(group.priority_class_name)
        if pc is None:
            message = f"no PriorityClass with name {group.priority_class_name} was found"
            errors.add(in_document(label, "spec.priorityClassName"), message)
            return
        value = pc.value
    else:
        value = default.value if default is not None else 0
    if group.priority_set and group.priority != value:
        errors.add(
            in_document(label, "spec.priority"),
            f"priority set in the pod group ({group.priority}) must match the priority computed ({value}) based on "
            "the priority class set in the spec",
        )
    group.priority = value


def decode_document(doc: Any, where: str, errors: ErrorList) -> Cluster:
    """One object (an API server's, a scenario step's template) decoded on its own, by its kind's decoder: no
    checks across objects (duplicates, priority classes, nodes named by pods). Problems are added to ``errors``;
    the Cluster holds what could be read."""
    reading = Reading()
    decode_object(reading, doc, "", errors, where)
    return reading.cluster


def decode_template(kind: str, fields: dict[str, Any], where: str, errors: ErrorList) -> Cluster:
    """An object of ``kind`` written without apiVersion and kind (a scenario step's template), decoded as
    ``decode_document`` decodes a manifest, with the kind's first apiVersion (``fields`` may still give others)."""
    return decode_document({"apiVersion": KINDS[kind].api_versions[0], "kind": kind, **fields}, where, errors)


def load_manifests(paths: Iterable[str], strict: bool = False) -> Cluster:
    """Read every manifest under ``paths``. Raises InputError listing every problem in every file. Objects of kinds
    packsched does not model (custom resources included) are skipped and counted in ``Cluster.skipped``, or, with
    ``strict``, are errors."""
    builder = _Builder(strict)
    paths = list(paths)
    named = {p for p in paths if not os.path.isdir(p)}
    files = list(iter_manifest_files(paths))
    if not files:
        raise InputError.single("no manifest files found (expected *.yaml, *.yml or *.json)")
    for path in files:
        builder.add_file(path, named=path in named)
    if not builder.documents:  # an empty file beside others holds nothing; empty files alone are a mistake
        builder.all_errors += [
            FieldError("", "the file is empty: it holds no Kubernetes objects", f) for f in builder.empty_files
        ]
    return builder.finish()
