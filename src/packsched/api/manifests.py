"""Loading Kubernetes manifests (YAML or JSON, many documents per file, ``kind: List``) into a cluster.

Workloads (Deployment, ReplicaSet, StatefulSet, Job) are expanded into the pods their controllers would
create, unless they were read back from an API server (``metadata.creationTimestamp`` set): their pods are then
in the input already.
Every problem in every file is collected first; nothing is returned unless all input is valid.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from packsched.api import schema
from packsched.api.annotations import read_timing
from packsched.api.decode import Reader
from packsched.api.errors import ErrorList, FieldError, InputError
from packsched.api.files import STDIN, display_name
from packsched.api.names import int32_errors, namespace_errors, object_name_errors
from packsched.api.nesting import TOO_DEEP
from packsched.api.objects import (
    ELASTIC_QUOTA_API_VERSIONS,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    SYSTEM_PRIORITY_CLASSES,
    TAINT_EFFECTS,
    ElasticQuota,
    LabelSelector,
    Namespace,
    Node,
    NodeImage,
    OwnerRef,
    Pod,
    PodDisruptionBudget,
    PodVolume,
    PriorityClass,
    Service,
    Taint,
)
from packsched.api.pods import decode_label_selector, decode_pod_spec, template_pod
from packsched.api.resources import PODS, parse_resource_list
from packsched.api.storage import (
    ANN_BETA_STORAGE_CLASS,
    STORAGE_API_VERSIONS,
    PersistentVolumeClaim,
    StorageObjects,
    controller_owner,
    decode_claim,
    decode_claim_template,
    decode_csi_node,
    decode_storage_class,
    decode_volume,
)
from packsched.api.strict import parse_documents, read_file

# The most pods one workload may be expanded into (a simulator's sanity bound, far above real controllers).
MAX_WORKLOAD_PODS = 1_000_000


NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job", "ReplicationController")


@dataclass
class Workload:
    """A controller that owns pods; kept so that the simulator can replace pods it loses."""

    kind: str
    name: str
    namespace: str
    replicas: int
    template: Pod
    source: str = ""
    # Job only: spec.completions (None: absent) and the pods it runs at once (0 when suspended).
    completions: int | None = None
    parallelism: int = 0
    # StatefulSet only: its volumeClaimTemplates (each pod gets a claim ``<template>-<pod>`` made from one).
    claim_templates: list[PersistentVolumeClaim] = field(default_factory=list)
    # spec.selector (a ReplicationController's map as matchLabels); None: not given (a Job may omit it)
    selector: LabelSelector | None = None


@dataclass
class Cluster:
    """Everything read from the manifests, in the order it was written."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    priority_classes: dict[str, PriorityClass] = field(default_factory=dict)
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    elastic_quotas: list[ElasticQuota] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    services: list[Service] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # PersistentVolumeClaims (those StatefulSets and ephemeral volumes make included), PersistentVolumes,
    # StorageClasses and CSINodes
    storage: StorageObjects = field(default_factory=StorageObjects)

    def pod(self, key: str) -> Pod | None:
        for p in self.pods:
            if p.key == key:
                return p
        return None


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
        if isinstance(doc, dict) and doc.get("kind") == "List" and "items" in doc:
            items = doc["items"]
            if not isinstance(items, list):
                errors.add(f"{label} items".strip(), "must be a list")
                continue
            out.extend((f"{label} items[{j}]".strip(), item) for j, item in enumerate(items))
        else:
            out.append((label, doc))
    return out


_API_VERSIONS: dict[str, tuple[str, ...]] = {
    "Node": ("v1",),
    "Pod": ("v1",),
    "Namespace": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1"),
    "PodDisruptionBudget": ("policy/v1", "policy/v1beta1"),
    "Deployment": ("apps/v1",),
    "ReplicaSet": ("apps/v1",),
    "StatefulSet": ("apps/v1",),
    "Job": ("batch/v1",),
    "ReplicationController": ("v1",),
    "Service": ("v1",),
    "ElasticQuota": ELASTIC_QUOTA_API_VERSIONS,
    "PersistentVolumeClaim": ("v1",),
    "PersistentVolume": ("v1",),
    "StorageClass": STORAGE_API_VERSIONS,
    "CSINode": STORAGE_API_VERSIONS,
}

# Kinds whose objects have no namespace, and kinds whose fields sit beside metadata (not in spec and status).
_CLUSTER_SCOPED = ("Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass", "CSINode")
_TOP_KEYS: dict[str, tuple[str, ...]] = {
    "PriorityClass": schema.PRIORITY_CLASS,
    "StorageClass": schema.STORAGE_CLASS,
}


class _Builder:
    """Decodes documents into a Cluster, one file at a time."""

    def __init__(self) -> None:
        self.cluster = Cluster()
        self.all_errors: list[FieldError] = []
        self._seen: dict[tuple[str, str, str], str] = {}
        # Every pod added, with where it was written (file, document label) and the path of its pod spec.
        self._pending_priority: list[tuple[Pod, str, str, str]] = []
        self._named = True
        # Claims the StatefulSet controller makes for its pods (a claim the manifests define wins).
        self._template_claims: list[PersistentVolumeClaim] = []
        self._in_workload = False  # the pods being added come from a workload's template
        self.documents = 0  # read from every file so far
        self.empty_files: list[str] = []  # the files that hold no document

    def add_file(self, path: str, named: bool = True) -> None:
        """``named``: the user named this file (not found in a directory), so a wrong kind in it is an error."""
        errors = ErrorList(file=display_name(path))
        self._named = named
        docs = read_documents(path, errors)
        if not docs and not errors:
            self.empty_files.append(display_name(path))
        self.documents += len(docs)
        for label, doc in docs:
            try:
                self._add_document(doc, label, Reader(errors), display_name(path))
            except RecursionError:  # aliases can nest a value deeper than the text does
                errors.add(label, TOO_DEEP)
        self.all_errors.extend(errors.items)

    def _add_document(self, doc: Any, label: str, r: Reader, path: str) -> None:
        def at(p: str) -> str:
            return f"{label}: {p}" if label and p else (label or p)

        if not isinstance(doc, dict):
            r.errors.add(at(""), "a manifest document must be a map with apiVersion and kind")
            return
        kind = doc.get("kind")
        if not isinstance(kind, str) or not kind:
            r.errors.add(at("kind"), "Required value: every document needs a kind")
            return
        if kind in schema.IGNORED_KINDS:
            self.cluster.notes.append(f"{path}{' ' + label if label else ''}: {kind} ignored (no effect on scheduling)")
            return
        if kind in ("KubeSchedulerConfiguration", "Policy"):
            if self._named:
                r.errors.add(at("kind"), f"{kind} is a scheduler configuration, not a manifest: pass it with --config")
            else:  # found in a folder of manifests: leave it for --config
                self.cluster.notes.append(f"{path}: {kind} skipped (a scheduler configuration: pass it with --config)")
            return
        if kind not in _API_VERSIONS:
            known = ", ".join(sorted(_API_VERSIONS))
            r.errors.add(at("kind"), f'unknown kind "{kind}" (packsched reads {known})')
            return
        api_version = doc.get("apiVersion")
        if api_version not in _API_VERSIONS[kind]:
            r.errors.add(at("apiVersion"), _api_version_error(kind, api_version))
            return
        where = f"{path}{' ' + label if label else ''}"
        before = len(r.errors)
        sub = ErrorList(file=r.errors.file)
        sr = Reader(sub)
        keys = _TOP_KEYS.get(kind, schema.TOP)
        data = sr.fields(doc, "", keys)
        meta = sr.fields(data.get("metadata"), "metadata", schema.OBJECT_META)
        name = sr.str(meta.get("name"), "metadata.name")
        if not name:
            sub.add("metadata.name", "Required value")
        cluster_scoped = kind in _CLUSTER_SCOPED
        namespace = (
            "" if cluster_scoped else sr.str(meta.get("namespace"), "metadata.namespace", "default") or "default"
        )
        _check_names(sub, kind, name, namespace)
        handler = getattr(self, f"_{kind.lower()}")
        handler(sr, data, meta, name, namespace, where, label)
        for e in sub.items:
            r.errors.add(at(e.path), e.message)
        # Pods (those a workload makes included) are checked once, in finish(), not here and there.
        if len(r.errors) == before and name and kind != "Pod":
            key = (kind, namespace, name)
            if key in self._seen:
                r.errors.add(
                    at("metadata.name"),
                    f"duplicate {kind} {namespace + '/' if namespace else ''}{name} "
                    f"(first defined in {self._seen[key]})",
                )
            self._seen[key] = where

    # -- kinds -----------------------------------------------------------------------------------------

    def _node(
        self,
        r: Reader,
        data: dict[str, Any],
        meta: dict[str, Any],
        name: str,
        _ns: str,
        where: str,
        _label: str,
    ) -> None:
        spec = r.fields(data.get("spec"), "spec", schema.NODE_SPEC)
        status = r.fields(data.get("status"), "status", schema.NODE_STATUS)
        capacity = parse_resource_list(status.get("capacity"), "status.capacity", r.errors)
        if status.get("allocatable") is None:
            allocatable = dict(capacity)  # the kubelet always reports both; a hand-written node may give one
        else:
            allocatable = parse_resource_list(status.get("allocatable"), "status.allocatable", r.errors)
        taints: list[Taint] = []
        for i, item in enumerate(r.list(spec.get("taints"), "spec.taints")):
            p = f"spec.taints[{i}]"
            t = r.fields(item, p, schema.TAINT)
            key = r.str(t.get("key"), f"{p}.key")
            if not key:
                r.errors.add(f"{p}.key", "Required value")
            effect = r.one_of(t.get("effect"), f"{p}.effect", TAINT_EFFECTS)
            if t.get("effect") is None:
                r.errors.add(f"{p}.effect", "Required value")
            taints.append(Taint(key, r.str(t.get("value"), f"{p}.value"), effect))
        node = Node(
            name=name,
            labels=r.str_map(meta.get("labels"), "metadata.labels"),
            annotations=r.str_map(meta.get("annotations"), "metadata.annotations"),
            capacity=capacity,
            allocatable=allocatable,
            taints=taints,
            unschedulable=r.bool(spec.get("unschedulable"), "spec.unschedulable"),
            images=_node_images(r, status.get("images")),
            source=where,
        )
        # kubelet always sets the well-known hostname label; scheduling plugins rely on it.
        node.labels.setdefault("kubernetes.io/hostname", name)
        if PODS not in node.allocatable:
            self.cluster.notes.append(
                f"{where}: node {name} has no 'pods' in allocatable, so no pod can be placed there "
                "(kube-scheduler checks the pod count against it)"
            )
        self.cluster.nodes.append(node)

    def _pod(
        self,
        r: Reader,
        data: dict[str, Any],
        meta: dict[str, Any],
        name: str,
        ns: str,
        where: str,
        label: str,
    ) -> None:
        pod = Pod(name=name, namespace=ns, source=where)
        pod.uid = r.str(meta.get("uid"), "metadata.uid")
        pod.labels = r.str_map(meta.get("labels"), "metadata.labels")
        pod.annotations = r.str_map(meta.get("annotations"), "metadata.annotations")
        pod.terminating = meta.get("deletionTimestamp") is not None
        pod.owner = controller_owner(r, meta.get("ownerReferences"), "metadata.ownerReferences")
        pod.owner_refs = _owner_refs(r, meta.get("ownerReferences"), "metadata.ownerReferences")
        if data.get("spec") is None:
            r.errors.add("spec", "Required value")
        decode_pod_spec(r, data.get("spec"), "spec", pod)
        read_timing(r, pod, "metadata.annotations")
        status = r.map(data.get("status"), "status")
        phase = status.get("phase")
        if phase in ("Succeeded", "Failed"):
            self.cluster.notes.append(f"{where}: pod {pod.key} is {phase} and holds no resources; skipped")
            return
        pod.nominated_node_name = r.str(status.get("nominatedNodeName"), "status.nominatedNodeName")
        pod.preempted_by_scheduler = _preempted_by_scheduler(r, status.get("conditions"))
        if phase in ("Pending", "Running", "Unknown"):
            pod.phase = str(phase)
        self._add_pod(pod, r, label)

    def _add_pod(self, pod: Pod, r: Reader, label: str) -> None:
        spec = "spec.template.spec" if self._in_workload else "spec"
        self._ephemeral_claims(pod, r, spec)
        self._pending_priority.append((pod, r.errors.file, label, spec))
        self.cluster.pods.append(pod)

    def _priorityclass(
        self,
        r: Reader,
        data: dict[str, Any],
        _meta: dict[str, Any],
        name: str,
        _ns: str,
        _where: str,
        _label: str,
    ) -> None:
        value = r.int(data.get("value"), "value")
        if value is None:
            r.errors.add("value", "Required value")
            value = 0
        elif int32_errors(value):
            r.errors.add("value", int32_errors(value)[0])
        elif value > 1_000_000_000 and not name.startswith("system-"):
            r.errors.add("value", "Invalid value: must be no greater than 1000000000 (higher values are reserved)")
        policy = r.one_of(
            data.get("preemptionPolicy"),
            "preemptionPolicy",
            (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER),
            PREEMPT_LOWER_PRIORITY,
        )
        pc = PriorityClass(
            name,
            value,
            r.bool(data.get("globalDefault"), "globalDefault"),
            policy,
            r.str(data.get("description"), "description"),
        )
        self.cluster.priority_classes[name] = pc

    def _namespace(
        self,
        r: Reader,
        data: dict[str, Any],
        meta: dict[str, Any],
        name: str,
        _ns: str,
        _where: str,
        _label: str,
    ) -> None:
        r.map(data.get("spec"), "spec")
        labels = r.str_map(meta.get("labels"), "metadata.labels")
        # the API server labels every namespace with its name (NamespaceDefaultLabelName, GA in v1.22)
        labels[NAMESPACE_NAME_LABEL] = name
        self.cluster.namespaces[name] = Namespace(name, labels)

    def _poddisruptionbudget(
        self,
        r: Reader,
        data: dict[str, Any],
        _meta: dict[str, Any],
        name: str,
        ns: str,
        _where: str,
        _label: str,
    ) -> None:
        spec = r.fields(data.get("spec"), "spec", schema.PDB_SPEC)
        min_av = _int_or_percent(r, spec.get("minAvailable"), "spec.minAvailable")
        max_un = _int_or_percent(r, spec.get("maxUnavailable"), "spec.maxUnavailable")
        if min_av is not None and max_un is not None:
            r.errors.add("spec", "minAvailable and maxUnavailable cannot be both set")
        selector = decode_label_selector(r, spec.get("selector"), "spec.selector")
        self.cluster.pdbs.append(PodDisruptionBudget(name, ns, selector, min_av, max_un))

    def _elasticquota(
        self,
        r: Reader,
        data: dict[str, Any],
        _meta: dict[str, Any],
        name: str,
        ns: str,
        where: str,
        _label: str,
    ) -> None:
        spec = r.fields(data.get("spec"), "spec", schema.ELASTIC_QUOTA_SPEC)
        status = r.fields(data.get("status"), "status", schema.ELASTIC_QUOTA_STATUS)

        def listed(raw: dict[str, Any], key: str, path: str) -> dict[str, int] | None:
            # absent and present-but-empty differ upstream (defaults apply only to an absent list)
            return None if raw.get(key) is None else parse_resource_list(raw.get(key), path, r.errors)

        quota = ElasticQuota(
            name,
            ns,
            listed(spec, "min", "spec.min"),
            listed(spec, "max", "spec.max"),
            listed(status, "used", "status.used"),
            where,
        )
        self.cluster.elastic_quotas.append(quota)

    def _service(
        self,
        r: Reader,
        data: dict[str, Any],
        _meta: dict[str, Any],
        name: str,
        ns: str,
        _where: str,
        _label: str,
    ) -> None:
        spec = r.fields(data.get("spec"), "spec", schema.SERVICE_SPEC)
        raw = spec.get("selector")
        selector = None if raw is None else r.str_map(raw, "spec.selector")
        self.cluster.services.append(Service(name, ns, selector))

    def _replicationcontroller(self, *args: Any) -> None:
        self._workload("ReplicationController", schema.REPLICATION_CONTROLLER_SPEC, *args)

    def _deployment(self, *args: Any) -> None:
        self._workload("Deployment", schema.DEPLOYMENT_SPEC, *args)

    def _replicaset(self, *args: Any) -> None:
        self._workload("ReplicaSet", schema.REPLICASET_SPEC, *args)

    def _statefulset(self, *args: Any) -> None:
        self._workload("StatefulSet", schema.STATEFULSET_SPEC, *args)

    def _job(self, *args: Any) -> None:
        self._workload("Job", schema.JOB_SPEC, *args)

    def _workload(
        self,
        kind: str,
        keys: tuple[str, ...],
        r: Reader,
        data: dict[str, Any],
        _meta: dict[str, Any],
        name: str,
        ns: str,
        where: str,
        label: str,
    ) -> None:
        spec = r.fields(data.get("spec"), "spec", keys)
        template, _ = template_pod(r, spec.get("template"), "spec.template", ns)
        read_timing(r, template, "spec.template.metadata.annotations")
        claim_templates = self._claim_templates(r, spec.get("volumeClaimTemplates"), template, ns)
        completions: int | None = None
        parallelism = 0
        if kind == "Job":
            # The Job controller runs min(parallelism, completions) pods at once (parallelism alone without
            # completions); a suspended Job runs none.
            parallelism = r.int(spec.get("parallelism"), "spec.parallelism", 1) or 0
            completions = r.int(spec.get("completions"), "spec.completions")
            if completions is not None and completions < 0:  # else reported below at spec.parallelism
                r.errors.add("spec.completions", "must be greater than or equal to 0")
                completions = 0
            count = parallelism if completions is None else min(parallelism, completions)
            if r.bool(spec.get("suspend"), "spec.suspend"):
                count = parallelism = 0
        else:
            count = r.int(spec.get("replicas"), "spec.replicas", 1) or 0
        count_path = "spec.replicas" if kind != "Job" else "spec.parallelism"
        if count < 0:
            r.errors.add(count_path, "must be greater than or equal to 0")
            count = 0
        elif int32_errors(count):
            r.errors.add(count_path, int32_errors(count)[0])
            count = 0
        elif count > MAX_WORKLOAD_PODS and not _meta.get("creationTimestamp"):
            r.errors.add(
                count_path, f"packsched makes at most {MAX_WORKLOAD_PODS:,} pods of one workload, got {count:,}"
            )
            count = 0
        selector_raw = spec.get("selector")
        selector: LabelSelector | None = None
        if kind == "ReplicationController":
            # a plain map; defaulted from the template's labels when absent
            labels = r.str_map(selector_raw, "spec.selector") if selector_raw is not None else dict(template.labels)
            selector_raw = labels
            selector = LabelSelector(tuple(sorted(labels.items())))
        elif kind != "Job" and selector_raw is None:
            r.errors.add("spec.selector", "Required value")
        if selector is None and selector_raw is not None:
            selector = decode_label_selector(r, selector_raw, "spec.selector")
        if selector is not None:
            if selector.empty and kind != "Job":
                r.errors.add("spec.selector", "Invalid value: empty selector is invalid for deployment")
            elif not selector.matches(template.labels):
                r.errors.add(
                    "spec.template.metadata.labels",
                    "Invalid value: `selector` does not match template `labels`",
                )
        self.cluster.workloads.append(
            Workload(
                kind,
                name,
                ns,
                count,
                template,
                where,
                completions,
                max(parallelism, 0),
                claim_templates=claim_templates,
                selector=selector,
            )
        )
        self._in_workload = True
        # A workload read back from an API server (kubectl get -o yaml, a packsched snapshot: it has a
        # creationTimestamp) has its pods in the input already, as Pods owned by it: they are not made again.
        made = 0 if _meta.get("creationTimestamp") else count
        for i in range(made):
            pod = instantiate(template, kind, name, i)
            pod.source = where
            self._add_pod(pod, r, label)
            for claim in claim_templates:
                self._template_claims.append(statefulset_claim(claim, pod))
        self._in_workload = False

    def _finish_storage(self) -> None:
        _finish_storage_impl(self.cluster.storage, self._template_claims)
        self._template_claims = []

    def _claim_templates(self, r: Reader, raw: object, template: Pod, ns: str) -> list[PersistentVolumeClaim]:
        """A StatefulSet's volumeClaimTemplates; each becomes a volume of the pod template (replacing a volume
        of the same name, as the StatefulSet controller does)."""
        out: list[PersistentVolumeClaim] = []
        for i, item in enumerate(r.list(raw, "spec.volumeClaimTemplates")):
            p = f"spec.volumeClaimTemplates[{i}]"
            meta = r.map(r.map(item, p).get("metadata"), f"{p}.metadata")
            name = r.str(meta.get("name"), f"{p}.metadata.name")
            if not name:
                r.errors.add(f"{p}.metadata.name", "Required value")
            out.append(decode_claim_template(r, item, p, name, ns))
        names = {c.name for c in out}
        template.volumes = [v for v in template.volumes if v.name not in names] + [
            PodVolume(c.name, "persistentVolumeClaim", from_template=True) for c in out
        ]
        return out

    def _ephemeral_claims(self, pod: Pod, r: Reader, spec: str) -> None:
        """The claim of each ephemeral volume, ``<pod>-<volume>``, owned by the pod (what the ephemeral volume
        controller creates)."""
        for i, vol in enumerate(pod.volumes):
            if vol.source != "ephemeral" or vol.claim_template is None:
                continue
            path = f"{spec}.volumes[{i}].ephemeral.volumeClaimTemplate"
            claim = decode_claim_template(r, vol.claim_template, path, f"{pod.name}-{vol.name}", pod.namespace)
            claim.owner_uid, claim.owner_pod = pod.uid, pod.key
            self._template_claims.append(claim)

    def _persistentvolumeclaim(
        self, r: Reader, data: dict[str, Any], meta: dict[str, Any], name: str, ns: str, where: str, _label: str
    ) -> None:
        claim = decode_claim(r, data, meta, name, ns)
        claim.source = where
        self.cluster.storage.claims[claim.key] = claim

    def _persistentvolume(
        self, r: Reader, data: dict[str, Any], meta: dict[str, Any], name: str, _ns: str, where: str, _label: str
    ) -> None:
        volume = decode_volume(r, data, meta, name)
        volume.source = where
        self.cluster.storage.volumes[name] = volume

    def _storageclass(
        self, r: Reader, data: dict[str, Any], meta: dict[str, Any], name: str, _ns: str, where: str, _label: str
    ) -> None:
        sc = decode_storage_class(r, data, meta, name)
        sc.source = where
        self.cluster.storage.classes[name] = sc

    def _csinode(
        self, r: Reader, data: dict[str, Any], _meta: dict[str, Any], name: str, _ns: str, where: str, _label: str
    ) -> None:
        node = decode_csi_node(r, data, name)
        node.source = where
        self.cluster.storage.csi_nodes[name] = node

    # -- after every file --------------------------------------------------------------------------------

    def finish(self) -> Cluster:
        classes = {pc.name: pc for pc in SYSTEM_PRIORITY_CLASSES}
        classes.update(self.cluster.priority_classes)
        self.cluster.priority_classes = classes
        defaults = [pc for pc in classes.values() if pc.global_default]
        if len(defaults) > 1:
            names = ", ".join(pc.name for pc in defaults)
            self.all_errors.append(
                FieldError("globalDefault", f"more than one PriorityClass is the global default: {names}")
            )
        default = defaults[0] if defaults else None
        # Errors found only now carry the file (not pod.source, which adds the document), as all others do.
        for pod, file, label, spec in self._pending_priority:
            late = ErrorList(file=file)
            resolve_priority(pod, classes, default, late, _at(label, spec))
            self.all_errors.extend(late.items)
        keys: dict[str, str] = {}
        for pod, file, label, _spec in self._pending_priority:
            if pod.key in keys:
                self.all_errors.append(
                    FieldError(
                        _at(label, "metadata.name"),
                        f"duplicate pod {pod.key} (also from {keys[pod.key]})",
                        file,
                    )
                )
            keys[pod.key] = pod.source
        node_names = {n.name for n in self.cluster.nodes}
        for pod, file, label, spec in self._pending_priority:
            if pod.node_name and pod.node_name not in node_names:
                self.all_errors.append(
                    FieldError(
                        _at(label, f"{spec}.nodeName"),
                        f"pod {pod.key} is bound to node {pod.node_name!r}, which no manifest defines",
                        file,
                    )
                )
        self._pending_priority.clear()
        self._finish_storage()
        if self.all_errors:
            raise InputError(_dedupe(self.all_errors))
        return self.cluster


def _finish_storage_impl(storage: StorageObjects, made: list[PersistentVolumeClaim]) -> None:
    """Claims made by controllers join the ones the manifests define (those win), then claims without a class
    get the default StorageClass, as the DefaultStorageClass admission plugin does."""
    for claim in made:
        storage.claims.setdefault(claim.key, claim)
    defaults = [sc for sc in storage.classes.values() if sc.is_default]
    if defaults:
        for claim in storage.claims.values():
            if claim.storage_class_name is None and ANN_BETA_STORAGE_CLASS not in claim.annotations:
                claim.storage_class_name = defaults[-1].name


def statefulset_claim(template: PersistentVolumeClaim, pod: Pod) -> PersistentVolumeClaim:
    """The claim the StatefulSet controller makes from ``template`` for ``pod``: ``<template>-<pod>``, with the
    template's labels and the pod's StatefulSet labels."""
    return replace(
        template,
        name=f"{template.name}-{pod.name}",
        labels=dict(template.labels),
        annotations=dict(template.annotations),
        source=pod.source,
    )


def _node_images(r: Reader, raw: object) -> tuple[NodeImage, ...]:
    out: list[NodeImage] = []
    for i, item in enumerate(r.list(raw, "status.images")):
        p = f"status.images[{i}]"
        data = r.fields(item, p, schema.NODE_IMAGE)
        size = r.int(data.get("sizeBytes"), f"{p}.sizeBytes", 0) or 0
        out.append(NodeImage(tuple(r.str_list(data.get("names"), f"{p}.names")), size))
    return tuple(out)


def _api_version_error(kind: str, api_version: object) -> str:
    expected = " or ".join(_API_VERSIONS[kind])
    if api_version is None:  # kubectl: "Object 'apiVersion' is missing"
        return f"Required value: apiVersion is missing (a {kind} has apiVersion {expected})"
    return f"{kind} must have apiVersion {expected}, got {api_version!r}"


def _check_names(errors: ErrorList, kind: str, name: str, namespace: str) -> None:
    """``metadata.name`` and ``metadata.namespace`` as the API server validates them for ``kind``."""
    for message in object_name_errors(kind, name) if name else []:
        errors.add("metadata.name", message)
    for message in namespace_errors(namespace) if namespace else []:
        errors.add("metadata.namespace", message)


def _at(label: str, path: str) -> str:
    """A field path inside one document of a file (``document 2: spec.nodeName``)."""
    return f"{label}: {path}" if label and path else (label or path)


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


def instantiate(template: Pod, kind: str, owner: str, index: int) -> Pod:
    """One pod of a workload, named ``<owner>-<index>`` (StatefulSet pods are named so in Kubernetes too)."""
    pod = Pod(**{**template.__dict__})
    pod.name = f"{owner}-{index}"
    pod.labels = dict(template.labels)
    pod.annotations = dict(template.annotations)
    pod.owner = OwnerRef(kind, owner)
    if kind == "StatefulSet":
        pod.labels.setdefault("statefulset.kubernetes.io/pod-name", pod.name)
        pod.volumes = [
            replace(v, claim_name=f"{v.name}-{pod.name}") if v.from_template else v for v in template.volumes
        ]
    return pod


def _int_or_percent(r: Reader, raw: object, path: str) -> int | str | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        r.errors.add(path, 'must be an integer or a percentage like "50%"')
        return None
    if isinstance(raw, int):
        if raw < 0:
            r.errors.add(path, "must be greater than or equal to 0")
        return raw
    if not raw.endswith("%") or not raw[:-1].isdigit():
        r.errors.add(path, f'Invalid value: {raw!r}: must be an integer or a percentage like "50%"')
        return None
    return raw


def _owner_refs(r: Reader, raw: object, path: str) -> tuple[OwnerRef, ...]:
    refs: list[OwnerRef] = []
    for i, item in enumerate(r.list(raw, path)):
        p = f"{path}[{i}]"
        data = r.fields(item, p, schema.OWNER_REFERENCE)
        kind = r.str(data.get("kind"), f"{p}.kind")
        name = r.str(data.get("name"), f"{p}.name")
        api_version = r.str(data.get("apiVersion"), f"{p}.apiVersion")
        for key, value in (("kind", kind), ("name", name), ("apiVersion", api_version)):
            if not value:
                r.errors.add(f"{p}.{key}", "Required value")
        refs.append(OwnerRef(kind, name, r.bool(data.get("controller"), f"{p}.controller"), api_version))
    if sum(ref.controller for ref in refs) > 1:
        r.errors.add(path, "Invalid value: Only one reference can have Controller set to true")
    return tuple(refs)


def decode_document(doc: Any, where: str, errors: ErrorList) -> Cluster:
    """One object (an API server's, say) decoded on its own: no checks across objects (duplicates, priority
    classes, nodes named by pods). Problems are added to ``errors``; the Cluster holds what could be read."""
    builder = _Builder()
    builder._add_document(doc, "", Reader(errors), where)
    return builder.cluster


def load_manifests(paths: Iterable[str]) -> Cluster:
    """Read every manifest under ``paths``. Raises InputError listing every problem in every file."""
    builder = _Builder()
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


def _preempted_by_scheduler(r: Reader, raw: object) -> bool:
    """Whether ``status.conditions`` holds DisruptionTarget=True with reason PreemptionByScheduler (what a
    scheduler sets on the victims it preempts; upstream's podTerminatingByPreemption reads it)."""
    for i, cond in enumerate(r.list(raw, "status.conditions")):
        c = r.map(cond, f"status.conditions[{i}]")
        if c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False
