"""One reader per kind: the table from a manifest's kind to its decoder (``KINDS``), and the reading of what every
object has (kind, apiVersion, metadata) before its decoder runs.

Adding a kind is one entry in ``KINDS`` and its decoder, a function of a :class:`DecodeContext` that adds what it
reads to ``ctx.cluster`` (docs/design.md, "Reading manifests: one reader per kind").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from packsched.api import schema
from packsched.api.admission import (
    LIMIT_TYPES,
    QUOTA_SCOPES,
    LimitRange,
    LimitRangeItem,
    ResourceQuota,
    ScopeRequirement,
    unit_of,
)
from packsched.api.annotations import ARRIVAL_TIME, parse_duration, read_timing
from packsched.api.decode import Reader
from packsched.api.decoding import DecodeContext, Decoder, Reading, in_document
from packsched.api.drakinds import DRA_KINDS
from packsched.api.errors import ErrorList
from packsched.api.gangs import POD_GROUP_API_VERSIONS, POD_GROUP_SPEC, POD_GROUP_STATUS, PodGroup
from packsched.api.goquantity import parse_go_quantity
from packsched.api.names import dns1123_label, int32_errors, namespace_errors, object_name_errors
from packsched.api.objects import (
    ELASTIC_QUOTA_API_VERSIONS,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    TAINT_EFFECTS,
    ElasticQuota,
    Namespace,
    Node,
    NodeImage,
    OwnerRef,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    Service,
    Taint,
)
from packsched.api.podgroups import (
    POD_GROUP_API_VERSION,
    POD_GROUP_API_VERSION_1_37,
    WORKLOAD_API_VERSION,
    WORKLOAD_API_VERSIONS,
    WORKLOAD_MAX_POD_GROUPS,
    GroupPolicy,
    SchedulingPodGroup,
    SchedulingWorkload,
)
from packsched.api.pods import decode_label_selector, decode_pod_spec
from packsched.api.quantity import QuantityError, format_quantity, parse_quantity
from packsched.api.resources import PODS, amount_of, parse_resource_list
from packsched.api.storage import (
    STORAGE_API_VERSIONS,
    controller_owner,
    decode_claim,
    decode_csi_node,
    decode_storage_class,
    decode_volume,
)
from packsched.api.workloads import decode_cron_job, decode_workload

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# Kinds of scheduler configuration: not manifests, but found beside them in a folder.
CONFIG_KINDS = ("KubeSchedulerConfiguration", "Policy")


# -- the kinds --------------------------------------------------------------------------------------------------


def _node(ctx: DecodeContext) -> None:
    r, data, meta, name = ctx.r, ctx.data, ctx.meta, ctx.name
    spec = r.fields(data.get("spec"), "spec", schema.NODE_SPEC)
    status = r.fields(data.get("status"), "status", schema.NODE_STATUS)
    capacity = parse_resource_list(status.get("capacity"), "status.capacity", r.errors)
    if status.get("allocatable") is None:
        allocatable = dict(capacity)  # the kubelet always reports both; a hand-written node may give one
    else:
        allocatable = parse_resource_list(status.get("allocatable"), "status.allocatable", r.errors)
    taints = _taints(r, spec.get("taints"))
    node = Node(
        name=name,
        labels=r.str_map(meta.get("labels"), "metadata.labels"),
        annotations=r.str_map(meta.get("annotations"), "metadata.annotations"),
        capacity=capacity,
        allocatable=allocatable,
        taints=taints,
        unschedulable=r.bool(spec.get("unschedulable"), "spec.unschedulable"),
        images=_node_images(r, status.get("images")),
        source=ctx.where,
    )
    # kubelet always sets the well-known hostname label; scheduling plugins rely on it.
    node.labels.setdefault("kubernetes.io/hostname", name)
    if PODS not in node.allocatable:
        ctx.note(
            f"node {name} has no 'pods' in allocatable, so no pod can be placed there "
            "(kube-scheduler checks the pod count against it)"
        )
    ctx.cluster.nodes.append(node)


def _taints(r: Reader, raw: object) -> list[Taint]:
    taints: list[Taint] = []
    for i, item in enumerate(r.list(raw, "spec.taints")):
        p = f"spec.taints[{i}]"
        t = r.fields(item, p, schema.TAINT)
        key = r.str(t.get("key"), f"{p}.key")
        if not key:
            r.errors.add(f"{p}.key", "Required value")
        effect = r.one_of(t.get("effect"), f"{p}.effect", TAINT_EFFECTS)
        if t.get("effect") is None:
            r.errors.add(f"{p}.effect", "Required value")
        taints.append(Taint(key, r.str(t.get("value"), f"{p}.value"), effect))
    return taints


def _node_images(r: Reader, raw: object) -> tuple[NodeImage, ...]:
    out: list[NodeImage] = []
    for i, item in enumerate(r.list(raw, "status.images")):
        p = f"status.images[{i}]"
        data = r.fields(item, p, schema.NODE_IMAGE)
        size = r.int(data.get("sizeBytes"), f"{p}.sizeBytes", 0) or 0
        out.append(NodeImage(tuple(r.str_list(data.get("names"), f"{p}.names")), size))
    return tuple(out)


def _pod(ctx: DecodeContext) -> None:
    r, data, meta = ctx.r, ctx.data, ctx.meta
    pod = Pod(name=ctx.name, namespace=ctx.namespace, source=ctx.where)
    pod.admitted = bool(meta.get("creationTimestamp"))
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
        ctx.note(f"pod {pod.key} is {phase} and holds no resources; skipped")
        return
    pod.nominated_node_name = r.str(status.get("nominatedNodeName"), "status.nominatedNodeName")
    for i, item in enumerate(r.list(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses")):
        rcs = r.map(item, f"status.resourceClaimStatuses[{i}]")
        if isinstance(rcs.get("name"), str) and isinstance(rcs.get("resourceClaimName"), str):
            pod.resource_claim_statuses[rcs["name"]] = rcs["resourceClaimName"]
    pod.preempted_by_scheduler = _preempted_by_scheduler(r, status.get("conditions"))
    pod.started_at = _timestamp(r, status.get("startTime"), "status.startTime")
    if phase in ("Pending", "Running", "Unknown"):
        pod.phase = str(phase)
    ctx.add_pod(pod)


def _timestamp(r: Reader, raw: object, path: str) -> float | None:
    """An RFC 3339 time (``2024-05-01T10:00:00Z``) as seconds since the epoch; None when absent."""
    text = r.str(raw, path)
    if not text:
        return None
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        r.errors.add(path, f"Invalid value: {json.dumps(text)}: not an RFC 3339 time")
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return t.timestamp()


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


def _preempted_by_scheduler(r: Reader, raw: object) -> bool:
    """Whether ``status.conditions`` holds DisruptionTarget=True with reason PreemptionByScheduler (what a
    scheduler sets on the victims it preempts; upstream's podTerminatingByPreemption reads it)."""
    for i, cond in enumerate(r.list(raw, "status.conditions")):
        c = r.map(cond, f"status.conditions[{i}]")
        if c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False


def _priority_class(ctx: DecodeContext) -> None:
    r, data, name = ctx.r, ctx.data, ctx.name
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
    ctx.cluster.priority_classes[name] = pc


def _namespace(ctx: DecodeContext) -> None:
    ctx.r.map(ctx.data.get("spec"), "spec")
    labels = ctx.r.str_map(ctx.meta.get("labels"), "metadata.labels")
    # the API server labels every namespace with its name (NamespaceDefaultLabelName, GA in v1.22)
    labels[NAMESPACE_NAME_LABEL] = ctx.name
    ctx.cluster.namespaces[ctx.name] = Namespace(ctx.name, labels)


def _pod_disruption_budget(ctx: DecodeContext) -> None:
    r = ctx.r
    spec = r.fields(ctx.data.get("spec"), "spec", schema.PDB_SPEC)
    min_av = _int_or_percent(r, spec.get("minAvailable"), "spec.minAvailable")
    max_un = _int_or_percent(r, spec.get("maxUnavailable"), "spec.maxUnavailable")
    if min_av is not None and max_un is not None:
        r.errors.add("spec", "minAvailable and maxUnavailable cannot be both set")
    selector = decode_label_selector(r, spec.get("selector"), "spec.selector")
    ctx.cluster.pdbs.append(PodDisruptionBudget(ctx.name, ctx.namespace, selector, min_av, max_un))


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


def _elastic_quota(ctx: DecodeContext) -> None:
    r = ctx.r
    spec = r.fields(ctx.data.get("spec"), "spec", schema.ELASTIC_QUOTA_SPEC)
    status = r.fields(ctx.data.get("status"), "status", schema.ELASTIC_QUOTA_STATUS)

    def listed(raw: dict[str, Any], key: str, path: str) -> dict[str, int] | None:
        # absent and present-but-empty differ upstream (defaults apply only to an absent list)
        return None if raw.get(key) is None else parse_resource_list(raw.get(key), path, r.errors)

    quota = ElasticQuota(
        ctx.name,
        ctx.namespace,
        listed(spec, "min", "spec.min"),
        listed(spec, "max", "spec.max"),
        listed(status, "used", "status.used"),
        ctx.where,
    )
    ctx.cluster.elastic_quotas.append(quota)


def _pod_group(ctx: DecodeContext) -> None:
    """scheduler-plugins' PodGroup. Its CRD requires ``minMember`` >= 1 when given (packsched requires it given);
    ``scheduleTimeoutSeconds`` has no bound (a negative one makes the placed pods time out at once, as upstream)."""
    r = ctx.r
    spec = r.fields(ctx.data.get("spec"), "spec", POD_GROUP_SPEC)
    r.fields(ctx.data.get("status"), "status", POD_GROUP_STATUS)
    raw_min_member = spec.get("minMember")
    min_member = r.int(raw_min_member, "spec.minMember")
    if raw_min_member is None:
        # the CRD would take the group without it (Go's 0: every pod alone, no gang): surely a mistake here
        r.errors.add("spec.minMember", "Required value: the number of pods to schedule together, at least 1")
    elif min_member is not None and min_member < 1:
        r.errors.add(
            "spec.minMember",
            f"Invalid value: {min_member}: spec.minMember in body should be greater than or equal to 1",
        )
    elif min_member is not None:
        for msg in int32_errors(min_member):
            r.errors.add("spec.minMember", msg)
    timeout = r.int(spec.get("scheduleTimeoutSeconds"), "spec.scheduleTimeoutSeconds")
    if timeout is not None:
        for msg in int32_errors(timeout):
            r.errors.add("spec.scheduleTimeoutSeconds", msg)
    raw_min = spec.get("minResources")
    group = PodGroup(
        ctx.name,
        ctx.namespace,
        min_member or 0,
        None if raw_min is None else parse_resource_list(raw_min, "spec.minResources", r.errors),
        timeout,
        source=ctx.where,
        labels=r.str_map(ctx.meta.get("labels"), "metadata.labels"),
    )
    if isinstance(raw_min, Mapping) and group.min_resources is not None:
        group.min_quantities = {k: parse_go_quantity(raw_min[k]) for k in group.min_resources}
    annotations = r.str_map(ctx.meta.get("annotations"), "metadata.annotations")
    arrival = annotations.get(ARRIVAL_TIME)
    if arrival is not None:
        try:
            group.created = parse_duration(arrival)
        except ValueError as exc:
            r.errors.add(f"metadata.annotations[{ARRIVAL_TIME}]", f"Invalid value: {arrival!r}: {exc}")
    ctx.cluster.pod_groups.append(group)


def _created(ctx: DecodeContext) -> float:
    """When the object appears in the simulation: its ``packsched.io/arrival-time`` annotation, else 0."""
    annotations = ctx.r.str_map(ctx.meta.get("annotations"), "metadata.annotations")
    arrival = annotations.get(ARRIVAL_TIME)
    if arrival is None:
        return 0.0
    try:
        return parse_duration(arrival)
    except ValueError as exc:
        ctx.r.errors.add(f"metadata.annotations[{ARRIVAL_TIME}]", f"Invalid value: {arrival!r}: {exc}")
        return 0.0


def _group_policy(r: Reader, raw: object, path: str, *, declarative: bool) -> GroupPolicy:
    """A pod group's policy: exactly one of ``basic`` and ``gang`` (``gang.minCount`` required, positive). 1.35's
    Workload validation words it by hand, 1.36's PodGroup by declarative validation (``declarative``)."""
    data = r.fields(raw, path, ("basic", "gang"))
    given = [f"`{k}`" for k in ("basic", "gang") if data.get(k) is not None]
    if len(given) != 1:
        if declarative:
            message = (
                'Invalid value: "": must specify one of: `basic`, `gang`'
                if not given
                else 'Invalid value: "{`basic`, `gang`}": must specify exactly one of: `basic`, `gang`'
            )
        else:
            message = (
                "Required value: exactly one of `basic`, `gang` is required"
                if not given
                else 'Invalid value: "{`basic`, `gang`}": exactly one of `basic`, `gang` is required, but multiple '
                "fields are set"
            )
        r.errors.add(path, message)
        return GroupPolicy()
    if data.get("basic") is not None:
        r.fields(data.get("basic"), f"{path}.basic", ())
        return GroupPolicy()
    gang = r.fields(data.get("gang"), f"{path}.gang", ("minCount",))
    p = f"{path}.gang.minCount"
    if gang.get("minCount") is None and declarative:
        r.errors.add(p, "Required value")
        return GroupPolicy(1)
    count = r.int(gang.get("minCount"), p, 0) or 0
    if count < 1:
        wanted = "must be greater than or equal to 1" if declarative else "must be greater than zero"
        r.errors.add(p, f"Invalid value: {count}: {wanted}")
    else:
        for msg in int32_errors(count):
            r.errors.add(p, msg)
    return GroupPolicy(max(count, 1))


def _scheduling_workload(ctx: DecodeContext) -> None:
    """kube-scheduler 1.35's Workload (scheduling.k8s.io/v1alpha1), validated as its API server does: one to eight
    ``podGroups``, names DNS labels and distinct, each with one policy."""
    r = ctx.r
    spec = r.fields(ctx.data.get("spec"), "spec", ("controllerRef", "podGroups"))
    r.fields(spec.get("controllerRef"), "spec.controllerRef", ("apiGroup", "kind", "name"))
    raw_groups = r.list(spec.get("podGroups"), "spec.podGroups")
    groups: dict[str, GroupPolicy] = {}
    if not raw_groups:
        r.errors.add("spec.podGroups", "Required value: must have at least one item")
    elif len(raw_groups) > WORKLOAD_MAX_POD_GROUPS:
        r.errors.add(
            "spec.podGroups", f"Too many: {len(raw_groups)}: must have at most {WORKLOAD_MAX_POD_GROUPS} items"
        )
    else:
        for i, item in enumerate(raw_groups):
            p = f"spec.podGroups[{i}]"
            data = r.fields(item, p, ("name", "policy"))
            name = r.str(data.get("name"), f"{p}.name")
            for message in dns1123_label(name):
                r.errors.add(f"{p}.name", f"Invalid value: {json.dumps(name)}: {message}")
            if name in groups:
                r.errors.add(f"{p}.name", f"Duplicate value: {json.dumps(name)}")
            groups[name] = _group_policy(r, data.get("policy"), f"{p}.policy", declarative=False)
    workload = SchedulingWorkload(ctx.name, ctx.namespace, groups, _created(ctx), ctx.where)
    ctx.cluster.scheduling_workloads.append(workload)


def _scheduling_workload_template(ctx: DecodeContext) -> None:
    """kube-scheduler 1.36's Workload (scheduling.k8s.io/v1alpha2): templates of PodGroups for controllers. The
    scheduler reads the PodGroups, not this; it is checked and left out."""
    spec = ctx.r.fields(ctx.data.get("spec"), "spec", ("controllerRef", "podGroupTemplates"))
    ctx.r.list(spec.get("podGroupTemplates"), "spec.podGroupTemplates")
    ctx.note(
        f"a {ctx.data.get('apiVersion')} Workload only templates PodGroups; kube-scheduler reads the PodGroups "
        "(ignored)"
    )


# PodGroup (scheduling.k8s.io/v1alpha2) fields the API server drops while their feature gates are off; packsched
# models none of those gates (they are off, as by default in 1.36).
_GATED_POD_GROUP_FIELDS = {
    "schedulingConstraints": "TopologyAwareWorkloadScheduling",
    "resourceClaims": "DRAWorkloadResourceClaims",
    "disruptionMode": "WorkloadAwarePreemption",
    "priorityClassName": "WorkloadAwarePreemption",
    "priority": "WorkloadAwarePreemption",
}


def _scheduling_pod_group(ctx: DecodeContext) -> None:
    """kube-scheduler 1.36's PodGroup (scheduling.k8s.io/v1alpha2): ``spec.schedulingPolicy``, one of ``basic``
    and ``gang: {minCount}`` (at least 1); its name is a DNS label. Fields behind gates packsched does not model
    are dropped, as the API server drops them with those gates off (a note says so)."""
    r = ctx.r
    spec = r.fields(ctx.data.get("spec"), "spec", ("podGroupTemplateRef", "schedulingPolicy", *_GATED_POD_GROUP_FIELDS))
    r.fields(ctx.data.get("status"), "status", ("conditions", "resourceClaimStatuses"))
    for message in dns1123_label(ctx.name) if ctx.name else []:
        r.errors.add("metadata.name", f"Invalid value: {json.dumps(ctx.name)}: {message}")
    template = None
    ref = r.fields(spec.get("podGroupTemplateRef"), "spec.podGroupTemplateRef", ("workload",))
    if ref.get("workload") is not None:
        w = r.fields(ref.get("workload"), "spec.podGroupTemplateRef.workload", ("workloadName", "podGroupTemplateName"))
        template = (
            r.str(w.get("workloadName"), "spec.podGroupTemplateRef.workload.workloadName"),
            r.str(w.get("podGroupTemplateName"), "spec.podGroupTemplateRef.workload.podGroupTemplateName"),
        )
    if spec.get("schedulingPolicy") is None:
        r.errors.add("spec.schedulingPolicy", "Required value")
    policy = _group_policy(r, spec.get("schedulingPolicy"), "spec.schedulingPolicy", declarative=True)
    for field_name, gate in _GATED_POD_GROUP_FIELDS.items():
        if spec.get(field_name) is not None:
            ctx.note(f"spec.{field_name} dropped: the API server drops it with the feature gate {gate} off")
    group = SchedulingPodGroup(ctx.name, ctx.namespace, policy, template, _created(ctx), ctx.where)
    ctx.cluster.scheduling_pod_groups.append(group)


# PodGroup (scheduling.k8s.io/v1beta1, kube-scheduler 1.37) fields the API server drops while their feature gates
# are off (as by default in 1.37); packsched refuses those gates on (config/features.py).
_GATED_POD_GROUP_FIELDS_1_37 = {
    "schedulingConstraints": "TopologyAwareWorkloadScheduling",
    "resourceClaims": "DRAWorkloadResourceClaims",
    "preemptionPolicy": "PodGroupPreemptionPolicy",
}
_POD_GROUP_SPEC_1_37 = (
    "parentCompositePodGroupName",
    "workloadRef",
    "schedulingPolicy",
    "disruptionMode",
    "priorityClassName",
    "priority",
    *_GATED_POD_GROUP_FIELDS_1_37,
)
# HighestUserDefinablePriority: a PodGroup's spec.priority may not exceed it (declarative validation's maximum)
_HIGHEST_USER_PRIORITY = 1_000_000_000


def _scheduling_pod_group_1_37(ctx: DecodeContext) -> None:
    """kube-scheduler 1.37's PodGroup (scheduling.k8s.io/v1beta1): ``spec.schedulingPolicy`` as in 1.36,
    ``spec.workloadRef`` (informational), ``spec.disruptionMode`` (one of ``single`` / ``all``; read by pod-group
    preemption only, which packsched does not model: checked and left out), ``spec.priorityClassName`` and
    ``spec.priority`` (resolved as the Priority admission plugin does once the PriorityClasses are known). A
    ``parentCompositePodGroupName`` (a CompositePodGroup hierarchy) is refused: the API server forbids it with the
    feature gate CompositePodGroup off, and packsched does not model it on."""
    r = ctx.r
    spec = r.fields(ctx.data.get("spec"), "spec", _POD_GROUP_SPEC_1_37)
    r.fields(ctx.data.get("status"), "status", ("conditions", "resourceClaimStatuses"))
    for message in dns1123_label(ctx.name) if ctx.name else []:
        r.errors.add("metadata.name", f"Invalid value: {json.dumps(ctx.name)}: {message}")
    if spec.get("parentCompositePodGroupName") is not None:
        r.errors.add(
            "spec.parentCompositePodGroupName",
            "Forbidden: a CompositePodGroup hierarchy needs the feature gate CompositePodGroup, which packsched does "
            "not model (the API server forbids the field with it off, as by default in 1.37)",
        )
    template = None
    ref = r.fields(spec.get("workloadRef"), "spec.workloadRef", ("workloadName", "templateName"))
    if spec.get("workloadRef") is not None:
        template = (
            r.str(ref.get("workloadName"), "spec.workloadRef.workloadName"),
            r.str(ref.get("templateName"), "spec.workloadRef.templateName"),
        )
    if spec.get("schedulingPolicy") is None:
        r.errors.add("spec.schedulingPolicy", "Required value")
    policy = _group_policy(r, spec.get("schedulingPolicy"), "spec.schedulingPolicy", declarative=True)
    mode = r.fields(spec.get("disruptionMode"), "spec.disruptionMode", ("single", "all"))
    if spec.get("disruptionMode") is not None and sum(mode.get(k) is not None for k in ("single", "all")) != 1:
        r.errors.add("spec.disruptionMode", 'Invalid value: "": must specify exactly one of: `single`, `all`')
    class_name = r.str(spec.get("priorityClassName"), "spec.priorityClassName") if spec.get("priorityClassName") else ""
    priority = None
    if spec.get("priority") is not None:
        priority = r.int(spec.get("priority"), "spec.priority", 0) or 0
        if priority > _HIGHEST_USER_PRIORITY:
            r.errors.add(
                "spec.priority", f"Invalid value: {priority}: must be less than or equal to {_HIGHEST_USER_PRIORITY}"
            )
    for field_name, gate in _GATED_POD_GROUP_FIELDS_1_37.items():
        if spec.get(field_name) is not None:
            ctx.note(f"spec.{field_name} dropped: the API server drops it with the feature gate {gate} off")
    group = SchedulingPodGroup(
        ctx.name,
        ctx.namespace,
        policy,
        template,
        _created(ctx),
        ctx.where,
        api_version=POD_GROUP_API_VERSION_1_37,
        priority_class_name=class_name,
        priority=priority,
        priority_set=priority is not None,
        file=r.errors.file,
        label=ctx.label,
    )
    ctx.cluster.scheduling_pod_groups.append(group)


def _service(ctx: DecodeContext) -> None:
    spec = ctx.r.fields(ctx.data.get("spec"), "spec", schema.SERVICE_SPEC)
    raw = spec.get("selector")
    selector = None if raw is None else ctx.r.str_map(raw, "spec.selector")
    ctx.cluster.services.append(Service(ctx.name, ctx.namespace, selector))


def _persistent_volume_claim(ctx: DecodeContext) -> None:
    claim = decode_claim(ctx.r, ctx.data, ctx.meta, ctx.name, ctx.namespace)
    claim.source = ctx.where
    ctx.cluster.storage.claims[claim.key] = claim


def _persistent_volume(ctx: DecodeContext) -> None:
    volume = decode_volume(ctx.r, ctx.data, ctx.meta, ctx.name)
    volume.source = ctx.where
    ctx.cluster.storage.volumes[ctx.name] = volume


def _storage_class(ctx: DecodeContext) -> None:
    sc = decode_storage_class(ctx.r, ctx.data, ctx.meta, ctx.name)
    sc.source = ctx.where
    ctx.cluster.storage.classes[ctx.name] = sc


def _csi_node(ctx: DecodeContext) -> None:
    node = decode_csi_node(ctx.r, ctx.data, ctx.name)
    node.source = ctx.where
    ctx.cluster.storage.csi_nodes[ctx.name] = node


def _limit_range(ctx: DecodeContext) -> None:
    r = ctx.r
    spec = r.fields(ctx.data.get("spec"), "spec", schema.LIMIT_RANGE_SPEC)
    items: list[LimitRangeItem] = []
    for i, raw in enumerate(r.list(spec.get("limits"), "spec.limits")):
        p = f"spec.limits[{i}]"
        data = r.fields(raw, p, schema.LIMIT_RANGE_ITEM)
        if data.get("type") is None:
            r.errors.add(f"{p}.type", "Required value")
        item = LimitRangeItem(
            r.one_of(data.get("type"), f"{p}.type", LIMIT_TYPES),
            parse_resource_list(data.get("max"), f"{p}.max", r.errors),
            parse_resource_list(data.get("min"), f"{p}.min", r.errors),
            parse_resource_list(data.get("default"), f"{p}.default", r.errors),
            parse_resource_list(data.get("defaultRequest"), f"{p}.defaultRequest", r.errors),
        )
        for name, q in r.map(data.get("maxLimitRequestRatio"), f"{p}.maxLimitRequestRatio").items():
            try:
                item.max_limit_request_ratio[str(name)] = Fraction(parse_quantity(q))
            except QuantityError as exc:
                r.errors.add(f"{p}.maxLimitRequestRatio.{name}", str(exc))
        for name, low in item.min.items():
            for what, bound in (("max", item.max), ("default", item.default), ("defaultRequest", item.default_request)):
                if name in bound and bound[name] < low:
                    r.errors.add(
                        f"{p}.min.{name}",
                        f"Invalid value: min value {format_quantity(name, low)} is greater than {what} value "
                        f"{format_quantity(name, bound[name])}",
                    )
        item.set_defaults()
        items.append(item)
    ctx.cluster.limit_ranges.append(LimitRange(ctx.name, ctx.namespace, items, ctx.where))


def _resource_quota(ctx: DecodeContext) -> None:
    r = ctx.r
    spec = r.fields(ctx.data.get("spec"), "spec", schema.RESOURCE_QUOTA_SPEC)
    r.fields(ctx.data.get("status"), "status", schema.RESOURCE_QUOTA_STATUS)
    hard: dict[str, int] = {}
    for name, q in r.map(spec.get("hard"), "spec.hard").items():
        try:
            hard[str(name)] = amount_of(unit_of(str(name)), q)
        except QuantityError as exc:
            r.errors.add(f"spec.hard.{name}", str(exc))
    scopes = [
        ScopeRequirement(r.one_of(s, f"spec.scopes[{i}]", QUOTA_SCOPES), "Exists")
        for i, s in enumerate(r.list(spec.get("scopes"), "spec.scopes"))
    ]
    selector = r.fields(spec.get("scopeSelector"), "spec.scopeSelector", schema.SCOPE_SELECTOR)
    for i, raw in enumerate(r.list(selector.get("matchExpressions"), "spec.scopeSelector.matchExpressions")):
        p = f"spec.scopeSelector.matchExpressions[{i}]"
        data = r.fields(raw, p, schema.SCOPED_REQUIREMENT)
        scope = r.one_of(data.get("scopeName"), f"{p}.scopeName", QUOTA_SCOPES)
        op = r.one_of(data.get("operator"), f"{p}.operator", ("In", "NotIn", "Exists", "DoesNotExist"))
        scopes.append(ScopeRequirement(scope, op, tuple(r.str_list(data.get("values"), f"{p}.values"))))
    ctx.cluster.resource_quotas.append(ResourceQuota(ctx.name, ctx.namespace, hard, tuple(scopes), ctx.where))


# -- the table --------------------------------------------------------------------------------------------------

KINDS: dict[str, Decoder] = {
    "Node": Decoder(_node, ("v1",), cluster_scoped=True),
    "Pod": Decoder(_pod, ("v1",)),
    "Namespace": Decoder(_namespace, ("v1",), cluster_scoped=True),
    "PriorityClass": Decoder(
        _priority_class,
        ("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1"),
        cluster_scoped=True,
        top=schema.PRIORITY_CLASS,
    ),
    "PodDisruptionBudget": Decoder(_pod_disruption_budget, ("policy/v1", "policy/v1beta1")),
    "Deployment": Decoder(decode_workload, ("apps/v1",)),
    "ReplicaSet": Decoder(decode_workload, ("apps/v1",)),
    "StatefulSet": Decoder(decode_workload, ("apps/v1",)),
    "Job": Decoder(decode_workload, ("batch/v1",)),
    "ReplicationController": Decoder(decode_workload, ("v1",)),
    "DaemonSet": Decoder(decode_workload, ("apps/v1",)),
    "CronJob": Decoder(decode_cron_job, ("batch/v1", "batch/v1beta1")),
    "LimitRange": Decoder(_limit_range, ("v1",)),
    "ResourceQuota": Decoder(_resource_quota, ("v1",)),
    "Service": Decoder(_service, ("v1",)),
    "ElasticQuota": Decoder(_elastic_quota, ELASTIC_QUOTA_API_VERSIONS),
    "PodGroup": Decoder.by_api_version(
        Decoder(_pod_group, POD_GROUP_API_VERSIONS),  # scheduler-plugins (Coscheduling)
        Decoder(_scheduling_pod_group, (POD_GROUP_API_VERSION,)),  # kube-scheduler 1.36 (GangScheduling)
        Decoder(_scheduling_pod_group_1_37, (POD_GROUP_API_VERSION_1_37,)),  # kube-scheduler 1.37
    ),
    "Workload": Decoder.by_api_version(
        Decoder(_scheduling_workload, (WORKLOAD_API_VERSION,)),  # kube-scheduler 1.35 (GangScheduling)
        Decoder(_scheduling_workload_template, WORKLOAD_API_VERSIONS[1:]),  # 1.36-1.37: templates, not read
    ),
    "PersistentVolumeClaim": Decoder(_persistent_volume_claim, ("v1",)),
    "PersistentVolume": Decoder(_persistent_volume, ("v1",), cluster_scoped=True),
    "StorageClass": Decoder(_storage_class, STORAGE_API_VERSIONS, cluster_scoped=True, top=schema.STORAGE_CLASS),
    "CSINode": Decoder(_csi_node, STORAGE_API_VERSIONS, cluster_scoped=True),
    **DRA_KINDS,
}


# -- what every object has --------------------------------------------------------------------------------------


def _note_ignored(reading: Reading, kind: str, where: str) -> None:
    """One note per kind that does not affect scheduling, naming the first object and counting the others."""
    notes = reading.cluster.notes
    index, first, count = reading.ignored.get(kind, (len(notes), where, 0))
    count += 1
    text = f"{first}: {kind} ignored (no effect on scheduling)"
    if count > 1:
        text += f", and {count - 1} more {kind} object{'s' if count > 2 else ''}"
    if index == len(notes):
        notes.append(text)
    else:
        notes[index] = text
    reading.ignored[kind] = (index, first, count)


def _decoder(reading: Reading, doc: Any, label: str, errors: ErrorList, path: str) -> Decoder | None:
    """The decoder of ``doc``'s kind, or None: the document is not an object packsched reads (recorded as an error,
    or as a note for a kind that does not affect scheduling)."""
    where = f"{path}{' ' + label if label else ''}"
    if not isinstance(doc, dict):
        errors.add(in_document(label, ""), "a manifest document must be a map with apiVersion and kind")
        return None
    kind = doc.get("kind")
    if not isinstance(kind, str) or not kind:
        errors.add(in_document(label, "kind"), "Required value: every document needs a kind")
        return None
    if kind in schema.IGNORED_KINDS:
        _note_ignored(reading, kind, where)
        return None
    if kind in CONFIG_KINDS:
        if reading.named:
            errors.add(
                in_document(label, "kind"),
                f"{kind} is a scheduler configuration, not a manifest: pass it with --config",
            )
        else:  # found in a folder of manifests: leave it for --config
            reading.cluster.notes.append(f"{path}: {kind} skipped (a scheduler configuration: pass it with --config)")
        return None
    decoder = KINDS.get(kind)
    if decoder is None:
        if reading.strict:
            known = ", ".join(sorted(KINDS))
            errors.add(
                in_document(label, "kind"),
                f'kind "{kind}" is not one packsched models (--strict; it reads {known})',
            )
        else:  # a custom resource, say: counted, and named in one summary line
            reading.cluster.skipped.setdefault(kind, []).append(where)
        return None
    api_version = doc.get("apiVersion")
    chosen = decoder.for_api_version(api_version) if isinstance(api_version, str) else None
    if chosen is None:
        expected = " or ".join(decoder.api_versions)
        if api_version is None:  # kubectl: "Object 'apiVersion' is missing"
            message = f"Required value: apiVersion is missing (a {kind} has apiVersion {expected})"
        else:
            message = f"{kind} must have apiVersion {expected}, got {api_version!r}"
        errors.add(in_document(label, "apiVersion"), message)
        return None
    return chosen


def decode_object(reading: Reading, doc: Any, label: str, errors: ErrorList, path: str) -> None:
    """Decode one document of the file ``path`` (``label``: which one) into ``reading``; problems go to
    ``errors``, at ``label: field path``."""
    decoder = _decoder(reading, doc, label, errors, path)
    if decoder is None:
        return
    kind: str = doc["kind"]
    before = len(errors)
    sub = ErrorList(file=errors.file)
    r = Reader(sub)
    data = r.fields(doc, "", decoder.top)
    meta = r.fields(data.get("metadata"), "metadata", schema.OBJECT_META)
    name = r.str(meta.get("name"), "metadata.name")
    if not name:
        sub.add("metadata.name", "Required value")
    namespace = "" if decoder.cluster_scoped else r.str(meta.get("namespace"), "metadata.namespace") or "default"
    for message in object_name_errors(kind, name) if name else []:
        sub.add("metadata.name", message)
    for message in namespace_errors(namespace) if namespace else []:
        sub.add("metadata.namespace", message)
    where = f"{path}{' ' + label if label else ''}"
    decoder.decode(DecodeContext(kind, data, meta, name, namespace, where, label, r, reading))
    for e in sub.items:
        errors.add(in_document(label, e.path), e.message)
    # Pods (those a workload makes included) are checked once, when every file is read, not here and there.
    if len(errors) == before and name and kind != "Pod":
        # a kind of two API groups (PodGroup): an object of each may have the same name
        group = str(doc.get("apiVersion", "")).rpartition("/")[0] if KINDS[kind].variants else ""
        key = (f"{kind}.{group}" if group else kind, namespace, name)
        if key in reading.seen:
            errors.add(
                in_document(label, "metadata.name"),
                f"duplicate {kind} {namespace + '/' if namespace else ''}{name} (first defined in {reading.seen[key]})",
            )
        reading.seen[key] = where
