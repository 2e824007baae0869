"""Decoding pods (and pod templates) and computing their resource requests exactly as kube-scheduler does."""

from __future__ import annotations

import json
from typing import Any

from packsched.api import schema
from packsched.api.decode import Reader
from packsched.api.names import dns1123_label, dns1123_subdomain, int32_errors
from packsched.api.objects import (
    DEFAULT_SCHEDULER_NAME,
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    SCHEDULE_ANYWAY,
    TAINT_EFFECTS,
    Container,
    ContainerPort,
    LabelSelector,
    NodeAffinity,
    NodeSelectorTerm,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodResourceClaim,
    PodVolume,
    PreferredTerm,
    Requirement,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    WorkloadReference,
)
from packsched.api.quantity import QuantityError, parse_quantity
from packsched.api.resources import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    ResourceList,
    add_into,
    is_extended_resource,
    max_into,
    parse_resource_list,
)

NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def decode_requirements(
    r: Reader, raw: object, path: str, operators: tuple[str, ...], field_keys: bool = False
) -> tuple[Requirement, ...]:
    out: list[Requirement] = []
    for i, item in enumerate(r.list(raw, path)):
        p = f"{path}[{i}]"
        data = r.fields(item, p, schema.REQUIREMENT)
        key = r.str(data.get("key"), f"{p}.key")
        if not key:
            r.errors.add(f"{p}.key", "Required value")
        if field_keys and key and key != "metadata.name":
            r.errors.add(f"{p}.key", f'Unsupported value: "{key}": supported values: "metadata.name"')
        op = r.one_of(data.get("operator"), f"{p}.operator", operators)
        if data.get("operator") is None:
            r.errors.add(f"{p}.operator", "Required value")
        values = tuple(r.str_list(data.get("values"), f"{p}.values"))
        if op in ("In", "NotIn") and not values:
            r.errors.add(f"{p}.values", "Required value: must be specified when `operator` is 'In' or 'NotIn'")
        if op in ("Exists", "DoesNotExist") and values:
            r.errors.add(f"{p}.values", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        if op in ("Gt", "Lt"):
            if len(values) != 1:
                r.errors.add(
                    f"{p}.values",
                    "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            else:
                try:
                    int(values[0])
                except ValueError:
                    r.errors.add(f"{p}.values[0]", f"Invalid value: {values[0]!r}: must be an integer")
        if field_keys and op in ("In", "NotIn") and len(values) != 1:
            r.errors.add(
                f"{p}.values",
                "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
        out.append(Requirement(key, op, values))
    return tuple(out)


def decode_label_selector(r: Reader, raw: object, path: str) -> LabelSelector:
    data = r.fields(raw, path, schema.LABEL_SELECTOR)
    labels = r.str_map(data.get("matchLabels"), f"{path}.matchLabels")
    exprs = decode_requirements(r, data.get("matchExpressions"), f"{path}.matchExpressions", LABEL_SELECTOR_OPERATORS)
    return LabelSelector(tuple(sorted(labels.items())), exprs)


def _selector_keys(sel: LabelSelector | None) -> set[str]:
    if sel is None:
        return set()
    return {k for k, _ in sel.match_labels} | {e.key for e in sel.match_expressions}


def decode_spread_constraint(r: Reader, raw: object, path: str) -> TopologySpreadConstraint:
    """One spec.topologySpreadConstraints entry, with the API server's validation of its fields."""
    data = r.fields(raw, path, schema.TOPOLOGY_SPREAD_CONSTRAINT)
    skew = r.int(data.get("maxSkew"), f"{path}.maxSkew", 0) or 0
    if skew <= 0:
        r.errors.add(f"{path}.maxSkew", f"Invalid value: {skew}: must be greater than zero")
    key = r.str(data.get("topologyKey"), f"{path}.topologyKey")
    if not key:
        r.errors.add(f"{path}.topologyKey", "Required value: can not be empty")
    when = r.one_of(data.get("whenUnsatisfiable"), f"{path}.whenUnsatisfiable", (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY))
    if data.get("whenUnsatisfiable") is None:
        r.errors.add(f"{path}.whenUnsatisfiable", "Required value")
    min_domains = r.int(data.get("minDomains"), f"{path}.minDomains")
    if min_domains is not None:
        if min_domains <= 0:
            r.errors.add(f"{path}.minDomains", f"Invalid value: {min_domains}: must be greater than 0")
        elif when != DO_NOT_SCHEDULE:
            r.errors.add(
                f"{path}.minDomains",
                f"Invalid value: {min_domains}: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}",
            )
    selector = None
    if data.get("labelSelector") is not None:
        selector = decode_label_selector(r, data.get("labelSelector"), f"{path}.labelSelector")
    policies = (HONOR, IGNORE)
    affinity_policy = r.one_of(data.get("nodeAffinityPolicy"), f"{path}.nodeAffinityPolicy", policies) or None
    taints_policy = r.one_of(data.get("nodeTaintsPolicy"), f"{path}.nodeTaintsPolicy", policies) or None
    keys = tuple(r.str_list(data.get("matchLabelKeys"), f"{path}.matchLabelKeys"))
    in_selector = _selector_keys(selector)
    for i, k in enumerate(keys):
        if k in in_selector:
            r.errors.add(
                f"{path}.matchLabelKeys[{i}]",
                f'Invalid value: "{k}": exists in both matchLabelKeys and labelSelector',
            )
    return TopologySpreadConstraint(skew, key, when, selector, min_domains, affinity_policy, taints_policy, keys)


def decode_spread_constraints(r: Reader, raw: object, path: str) -> tuple[TopologySpreadConstraint, ...]:
    out: list[TopologySpreadConstraint] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(r.list(raw, path)):
        c = decode_spread_constraint(r, item, f"{path}[{i}]")
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            r.errors.add(
                f"{path}[{i}].{{topologyKey, whenUnsatisfiable}}",
                f'Duplicate value: "{{{c.topology_key}, {c.when_unsatisfiable}}}"',
            )
        seen.add(pair)
        out.append(c)
    return tuple(out)


def decode_node_selector_term(r: Reader, raw: object, path: str) -> NodeSelectorTerm:
    data = r.fields(raw, path, schema.NODE_SELECTOR_TERM)
    return NodeSelectorTerm(
        decode_requirements(r, data.get("matchExpressions"), f"{path}.matchExpressions", NODE_SELECTOR_OPERATORS),
        decode_requirements(r, data.get("matchFields"), f"{path}.matchFields", ("In", "NotIn"), field_keys=True),
    )


def decode_node_affinity(r: Reader, raw: object, path: str) -> NodeAffinity | None:
    if raw is None:
        return None
    data = r.fields(raw, path, schema.NODE_AFFINITY)
    required: tuple[NodeSelectorTerm, ...] | None = None
    req_raw = data.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req_raw is not None:
        rp = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
        req = r.fields(req_raw, rp, schema.NODE_SELECTOR)
        terms_raw = r.list(req.get("nodeSelectorTerms"), f"{rp}.nodeSelectorTerms")
        if not terms_raw:
            r.errors.add(f"{rp}.nodeSelectorTerms", "Required value: must have at least one node selector term")
        required = tuple(
            decode_node_selector_term(r, t, f"{rp}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms_raw)
        )
    preferred: list[PreferredTerm] = []
    pp = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, item in enumerate(r.list(data.get("preferredDuringSchedulingIgnoredDuringExecution"), pp)):
        ip = f"{pp}[{i}]"
        term = r.fields(item, ip, schema.PREFERRED_TERM)
        weight = r.int(term.get("weight"), f"{ip}.weight", 0) or 0
        if not 1 <= weight <= 100:
            r.errors.add(f"{ip}.weight", f"Invalid value: {weight}: must be in the range 1-100")
        preferred.append(
            PreferredTerm(weight, decode_node_selector_term(r, term.get("preference"), f"{ip}.preference"))
        )
    return NodeAffinity(required, tuple(preferred))


def decode_pod_label_selector(r: Reader, raw: object, path: str) -> LabelSelector | None:
    """A metav1.LabelSelector; None when absent (upstream: a nil selector selects nothing)."""
    if raw is None:
        return None
    data = r.fields(raw, path, schema.LABEL_SELECTOR)
    labels = r.str_map(data.get("matchLabels"), f"{path}.matchLabels")
    exprs = decode_requirements(r, data.get("matchExpressions"), f"{path}.matchExpressions", LABEL_SELECTOR_OPERATORS)
    return LabelSelector(tuple(sorted(labels.items())), exprs)


def decode_pod_affinity_term(r: Reader, raw: object, path: str) -> PodAffinityTerm:
    data = r.fields(raw, path, schema.POD_AFFINITY_TERM)
    selector = decode_pod_label_selector(r, data.get("labelSelector"), f"{path}.labelSelector")
    topology_key = r.str(data.get("topologyKey"), f"{path}.topologyKey")
    if not topology_key:
        r.errors.add(f"{path}.topologyKey", "Required value: can not be empty")
    match_keys = tuple(r.str_list(data.get("matchLabelKeys"), f"{path}.matchLabelKeys"))
    mismatch_keys = tuple(r.str_list(data.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys"))
    for name, keys in (("matchLabelKeys", match_keys), ("mismatchLabelKeys", mismatch_keys)):
        if keys and selector is None:
            r.errors.add(f"{path}.{name}", "Forbidden: must not be specified when labelSelector is not set")
    for i, key in enumerate(mismatch_keys):
        if key in match_keys:
            r.errors.add(
                f"{path}.mismatchLabelKeys[{i}]",
                f"Invalid value: {key!r}: exists in both matchLabelKeys and mismatchLabelKeys",
            )
    return PodAffinityTerm(
        topology_key,
        selector,
        tuple(r.str_list(data.get("namespaces"), f"{path}.namespaces")),
        decode_pod_label_selector(r, data.get("namespaceSelector"), f"{path}.namespaceSelector"),
        match_keys,
        mismatch_keys,
    )


def decode_pod_affinity(r: Reader, raw: object, path: str) -> PodAffinity | None:
    """spec.affinity.podAffinity or podAntiAffinity (None when absent)."""
    if raw is None:
        return None
    data = r.fields(raw, path, schema.POD_AFFINITY)
    rp = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    required = tuple(
        decode_pod_affinity_term(r, t, f"{rp}[{i}]")
        for i, t in enumerate(r.list(data.get("requiredDuringSchedulingIgnoredDuringExecution"), rp))
    )
    pp = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    preferred: list[WeightedPodAffinityTerm] = []
    for i, item in enumerate(r.list(data.get("preferredDuringSchedulingIgnoredDuringExecution"), pp)):
        ip = f"{pp}[{i}]"
        wt = r.fields(item, ip, schema.WEIGHTED_POD_AFFINITY_TERM)
        weight = r.int(wt.get("weight"), f"{ip}.weight", 0) or 0
        if not 1 <= weight <= 100:
            r.errors.add(f"{ip}.weight", f"Invalid value: {weight}: must be in the range 1-100")
        term = decode_pod_affinity_term(r, wt.get("podAffinityTerm"), f"{ip}.podAffinityTerm")
        preferred.append(WeightedPodAffinityTerm(weight, term))
    return PodAffinity(required, tuple(preferred))


def merge_label_keys(term: PodAffinityTerm, labels: dict[str, str]) -> PodAffinityTerm:
    """What the API server does to a term when it creates the pod (MatchLabelKeysInPodAffinity, on by default
    since v1.31): each matchLabelKeys key the pod has adds ``key In (value)`` to the label selector, each
    mismatchLabelKeys key ``key NotIn (value)``; keys the pod lacks add nothing; a term without a label selector
    is left alone (it selects nothing anyway)."""
    if term.label_selector is None or not (term.match_label_keys or term.mismatch_label_keys):
        return term
    extra = [Requirement(k, "In", (labels[k],)) for k in term.match_label_keys if k in labels]
    extra += [Requirement(k, "NotIn", (labels[k],)) for k in term.mismatch_label_keys if k in labels]
    if not extra:
        return term
    sel = term.label_selector
    merged = LabelSelector(sel.match_labels, sel.match_expressions + tuple(extra))
    return PodAffinityTerm(
        term.topology_key,
        merged,
        term.namespaces,
        term.namespace_selector,
        term.match_label_keys,
        term.mismatch_label_keys,
    )


def _merge_affinity(aff: PodAffinity | None, labels: dict[str, str]) -> PodAffinity | None:
    if aff is None:
        return None
    return PodAffinity(
        tuple(merge_label_keys(t, labels) for t in aff.required),
        tuple(WeightedPodAffinityTerm(w.weight, merge_label_keys(w.term, labels)) for w in aff.preferred),
    )


def apply_label_keys(pod: Pod) -> None:
    """Merge matchLabelKeys / mismatchLabelKeys into the pod's (anti-)affinity terms once, with its labels as
    they are now (the API server does it at creation); a pod read from a cluster is already merged."""
    if pod.label_keys_merged:
        return
    pod.pod_affinity = _merge_affinity(pod.pod_affinity, pod.labels)
    pod.pod_anti_affinity = _merge_affinity(pod.pod_anti_affinity, pod.labels)
    pod.label_keys_merged = True


def decode_tolerations(r: Reader, raw: object, path: str) -> list[Toleration]:
    out: list[Toleration] = []
    for i, item in enumerate(r.list(raw, path)):
        p = f"{path}[{i}]"
        data = r.fields(item, p, schema.TOLERATION)
        key = r.str(data.get("key"), f"{p}.key")
        op = r.one_of(data.get("operator"), f"{p}.operator", ("Equal", "Exists"), "Equal")
        value = r.str(data.get("value"), f"{p}.value")
        effect = r.one_of(data.get("effect"), f"{p}.effect", ("", *TAINT_EFFECTS), "")
        if op == "Exists" and value:
            r.errors.add(f"{p}.operator", "Invalid value: value must be empty when `operator` is 'Exists'")
        if not key and op != "Exists":
            r.errors.add(f"{p}.operator", "Invalid value: operator must be Exists when `key` is empty")
        out.append(Toleration(key, op, value, effect))
    return out


def _check_container_resources(
    r: Reader, res: dict[str, Any], requests: ResourceList, limits: ResourceList, path: str
) -> None:
    """Requests against limits: extended resources are integers and requests equal limits; others at most."""
    for rname in set(requests) | set(limits):
        if is_extended_resource(rname):
            for kind in ("requests", "limits"):
                lst = res.get(kind)
                if isinstance(lst, dict) and rname in lst:
                    try:
                        if parse_quantity(lst[rname]).denominator != 1:
                            r.errors.add(f"{path}.resources.{kind}.{rname}", "must be an integer")
                    except QuantityError:
                        pass  # already reported
            if rname in requests and rname in limits and requests[rname] != limits[rname]:
                r.errors.add(f"{path}.resources.requests.{rname}", f"must be equal to {rname} limit")
        elif rname in requests and rname in limits and requests[rname] > limits[rname]:
            r.errors.add(f"{path}.resources.requests.{rname}", f"must be less than or equal to {rname} limit")


def _decode_container_ports(r: Reader, raw: object, path: str) -> list[ContainerPort]:
    ports: list[ContainerPort] = []
    for i, item in enumerate(r.list(raw, path)):
        pp = f"{path}[{i}]"
        pd = r.fields(item, pp, schema.CONTAINER_PORT)
        cport = r.int(pd.get("containerPort"), f"{pp}.containerPort", 0) or 0
        hport = r.int(pd.get("hostPort"), f"{pp}.hostPort", 0) or 0
        if not 1 <= cport <= 65535:
            r.errors.add(f"{pp}.containerPort", f"Invalid value: {cport}: must be between 1 and 65535, inclusive")
        if hport and not 1 <= hport <= 65535:
            r.errors.add(f"{pp}.hostPort", f"Invalid value: {hport}: must be between 1 and 65535, inclusive")
        proto = r.one_of(pd.get("protocol"), f"{pp}.protocol", ("TCP", "UDP", "SCTP"), "TCP")
        ports.append(ContainerPort(cport, hport, proto, r.str(pd.get("hostIP"), f"{pp}.hostIP")))
    return ports


# spec.restartPolicy's values (the API server's validation; Always when absent)
RESTART_POLICIES = ("Always", "OnFailure", "Never")


def _decode_container(r: Reader, raw: object, path: str, init: bool) -> Container:
    data = r.fields(raw, path, schema.CONTAINER)
    name = r.str(data.get("name"), f"{path}.name")
    if not name:
        r.errors.add(f"{path}.name", "Required value")
    res = r.fields(data.get("resources"), f"{path}.resources", schema.RESOURCE_REQUIREMENTS)
    requests = parse_resource_list(res.get("requests"), f"{path}.resources.requests", r.errors)
    limits = parse_resource_list(res.get("limits"), f"{path}.resources.limits", r.errors)
    _check_container_resources(r, res, requests, limits, path)
    # API-server defaulting: a limit without a request makes the request equal to the limit.
    for rname, amount in limits.items():
        requests.setdefault(rname, amount)
    ports = _decode_container_ports(r, data.get("ports"), f"{path}.ports")
    restart = ""
    if init:
        restart = r.one_of(data.get("restartPolicy"), f"{path}.restartPolicy", ("Always",), "")
    elif data.get("restartPolicy") is not None:
        r.errors.add(f"{path}.restartPolicy", "Forbidden: may not be set for non-init containers")
    return Container(name, requests, limits, ports, restart, r.str(data.get("image"), f"{path}.image"))


def decode_pod_spec(r: Reader, raw: object, path: str, pod: Pod) -> None:
    """Fill ``pod`` from a PodSpec; problems go to ``r.errors`` with paths under ``path``."""
    spec = r.fields(raw, path, schema.POD_SPEC)
    containers_raw = r.list(spec.get("containers"), f"{path}.containers")
    if not containers_raw:
        r.errors.add(f"{path}.containers", "Required value")
    pod.containers = [_decode_container(r, c, f"{path}.containers[{i}]", False) for i, c in enumerate(containers_raw)]
    pod.init_containers = [
        _decode_container(r, c, f"{path}.initContainers[{i}]", True)
        for i, c in enumerate(r.list(spec.get("initContainers"), f"{path}.initContainers"))
    ]
    pod.overhead = parse_resource_list(spec.get("overhead"), f"{path}.overhead", r.errors)
    r.one_of(spec.get("restartPolicy"), f"{path}.restartPolicy", RESTART_POLICIES, "Always")
    pod.node_name = r.str(spec.get("nodeName"), f"{path}.nodeName")
    pod.node_selector = r.str_map(spec.get("nodeSelector"), f"{path}.nodeSelector")
    aff = r.fields(spec.get("affinity"), f"{path}.affinity", schema.AFFINITY)
    pod.node_affinity = decode_node_affinity(r, aff.get("nodeAffinity"), f"{path}.affinity.nodeAffinity")
    pod.pod_affinity = decode_pod_affinity(r, aff.get("podAffinity"), f"{path}.affinity.podAffinity")
    pod.pod_anti_affinity = decode_pod_affinity(r, aff.get("podAntiAffinity"), f"{path}.affinity.podAntiAffinity")
    pod.tolerations = decode_tolerations(r, spec.get("tolerations"), f"{path}.tolerations")
    pod.scheduler_name = r.str(spec.get("schedulerName"), f"{path}.schedulerName", DEFAULT_SCHEDULER_NAME)
    pod.priority_class_name = r.str(spec.get("priorityClassName"), f"{path}.priorityClassName")
    explicit_priority = r.int(spec.get("priority"), f"{path}.priority")
    for message in int32_errors(explicit_priority) if explicit_priority is not None else []:
        r.errors.add(f"{path}.priority", message)
    pod.priority = explicit_priority if explicit_priority is not None else 0
    pod.priority_set = explicit_priority is not None
    policy = spec.get("preemptionPolicy")
    pod.preemption_policy = r.one_of(policy, f"{path}.preemptionPolicy", (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER), "")
    gates: list[str] = []
    for i, g in enumerate(r.list(spec.get("schedulingGates"), f"{path}.schedulingGates")):
        gd = r.fields(g, f"{path}.schedulingGates[{i}]", ("name",))
        gates.append(r.str(gd.get("name"), f"{path}.schedulingGates[{i}].name"))
    pod.scheduling_gates = gates
    pod.topology_spread_constraints = decode_spread_constraints(
        r, spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints"
    )
    pod.workload_ref = _decode_workload_ref(r, spec.get("workloadRef"), f"{path}.workloadRef")
    pod.scheduling_group = _decode_scheduling_group(r, spec.get("schedulingGroup"), f"{path}.schedulingGroup")
    unsupported: list[str] = []
    pod.volumes = decode_pod_volumes(r, spec.get("volumes"), f"{path}.volumes")
    pod.resource_claims = decode_pod_resource_claims(r, spec, path)
    if spec.get("resources"):
        unsupported.append("pod-level resources (spec.resources)")
    pod.unsupported_features = unsupported


def _decode_workload_ref(r: Reader, raw: object, path: str) -> WorkloadReference | None:
    """1.35's ``spec.workloadRef``, validated as the API server does (validateWorkloadReference)."""
    if raw is None:
        return None
    data = r.fields(raw, path, ("name", "podGroup", "podGroupReplicaKey"))
    name = r.str(data.get("name"), f"{path}.name")
    group = r.str(data.get("podGroup"), f"{path}.podGroup")
    replica = r.str(data.get("podGroupReplicaKey"), f"{path}.podGroupReplicaKey")
    checks = [("name", name, dns1123_subdomain), ("podGroup", group, dns1123_label)]
    if replica:
        checks.append(("podGroupReplicaKey", replica, dns1123_label))
    for field_name, value, check in checks:
        for message in check(value):
            r.errors.add(f"{path}.{field_name}", f"Invalid value: {json.dumps(value)}: {message}")
    return WorkloadReference(name, group, replica)


def _decode_scheduling_group(r: Reader, raw: object, path: str) -> str | None:
    """1.36's ``spec.schedulingGroup``: its ``podGroupName`` (validateSchedulingGroup)."""
    if raw is None:
        return None
    data = r.fields(raw, path, ("podGroupName",))
    if data.get("podGroupName") is None:
        r.errors.add(f"{path}.podGroupName", "Invalid value: null: must specify one of: `podGroupName`")
        return None
    name = r.str(data.get("podGroupName"), f"{path}.podGroupName")
    for message in dns1123_label(name):
        r.errors.add(f"{path}.podGroupName", f"Invalid value: {json.dumps(name)}: {message}")
    return name


def decode_pod_resource_claims(r: Reader, spec: dict[str, Any], path: str) -> tuple[PodResourceClaim, ...]:
    """spec.resourceClaims, and the names the containers' resources.claims give (each must be one of them)."""
    out: list[PodResourceClaim] = []
    names: list[str] = []
    for i, item in enumerate(r.list(spec.get("resourceClaims"), f"{path}.resourceClaims")):
        p = f"{path}.resourceClaims[{i}]"
        data = r.fields(item, p, ("name", "resourceClaimName", "resourceClaimTemplateName"))
        name = r.str(data.get("name"), f"{p}.name")
        if not name:
            r.errors.add(f"{p}.name", "Required value")
        elif name in names:
            r.errors.add(f"{p}.name", f'Duplicate value: "{name}"')
        names.append(name)
        claim = r.str(data.get("resourceClaimName"), f"{p}.resourceClaimName")
        template = r.str(data.get("resourceClaimTemplateName"), f"{p}.resourceClaimTemplateName")
        if bool(claim) == bool(template):
            which = "at most" if claim else "exactly"
            r.errors.add(
                p, f"Invalid value: must specify {which} one of `resourceClaimName`, `resourceClaimTemplateName`"
            )
        out.append(PodResourceClaim(name, claim, template))
    for kind in ("initContainers", "containers"):
        for i, c in enumerate(r.list(spec.get(kind), f"{path}.{kind}")):
            res = c.get("resources") if isinstance(c, dict) else None
            raw = res.get("claims") if isinstance(res, dict) else None
            for j, item in enumerate(r.list(raw, f"{path}.{kind}[{i}].resources.claims")):
                cp = f"{path}.{kind}[{i}].resources.claims[{j}]"
                data = r.fields(item, cp, ("name", "request"))
                name = r.str(data.get("name"), f"{cp}.name")
                if not name:
                    r.errors.add(f"{cp}.name", "Required value")
                elif name not in names:
                    supported = ", ".join(f'"{n}"' for n in sorted(names))
                    r.errors.add(f"{cp}.name", f'Unsupported value: "{name}": supported values: {supported}')
    return tuple(out)


def _sum_requests(pod: Pod, non_zero: bool, with_sidecars: bool = True) -> ResourceList:
    """Upstream PodRequests: sidecars run beside the app containers, each plain init container runs alone
    (with the sidecars started before it), the pod needs the per-resource maximum of those phases, plus
    overhead.
    With ``non_zero``, a container with no cpu (memory) entry counts as 100m (200Mi), as scoring does.
    ``with_sidecars=False``: restartPolicy on init containers is ignored (kube-scheduler before 1.29, whose API server
    drops the field), every init container runs alone."""

    def of(c: Container) -> ResourceList:
        req = dict(c.requests)
        if non_zero:
            req.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
            req.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
        return req

    running: ResourceList = {}
    for c in pod.containers:
        add_into(running, of(c))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for c in pod.init_containers:
        req = of(c)
        if with_sidecars and c.restart_policy == "Always":
            add_into(running, req)
            add_into(sidecars, req)
            max_into(init_peak, sidecars)
        else:
            candidate = dict(sidecars)
            add_into(candidate, req)
            max_into(init_peak, candidate)
    total = dict(running)
    max_into(total, init_peak)
    add_into(total, pod.overhead)
    return total


def pod_requests(pod: Pod, sidecars: bool = True) -> ResourceList:
    """What the pod needs, as the NodeResourcesFit filter and quota checks count it (no defaults).
    ``sidecars``: whether restartable init containers are sidecars (kube-scheduler 1.29+)."""
    return {k: v for k, v in _sum_requests(pod, non_zero=False, with_sidecars=sidecars).items() if v != 0}


def _legacy_non_zero(pod: Pod) -> tuple[int, int]:
    """kube-scheduler 1.29-1.31's scoring requests of a pod placed on a node (its NodeInfo's
    ``calculateResource``): max(the sum over app containers, each init container's value), then overhead. An init
    container's value is what upstream's PodRequests hands its callback: a sidecar's, every sidecar declared up
    to it; a plain init container's, its own requests plus the sidecars declared before it. Each value gets the
    100m / 200Mi default when it has no cpu (memory) entry at all. Sidecars are not added to the app containers."""
    cpu = sum(c.requests.get(CPU, DEFAULT_MILLI_CPU_REQUEST) for c in pod.containers)
    mem = sum(c.requests.get(MEMORY, DEFAULT_MEMORY_REQUEST) for c in pod.containers)
    sidecars: ResourceList = {}
    for c in pod.init_containers:
        if c.restart_policy == "Always":
            add_into(sidecars, c.requests)
            value = dict(sidecars)
        else:
            value = dict(c.requests)
            add_into(value, sidecars)
        cpu = max(cpu, value.get(CPU, DEFAULT_MILLI_CPU_REQUEST))
        mem = max(mem, value.get(MEMORY, DEFAULT_MEMORY_REQUEST))
    return cpu + pod.overhead.get(CPU, 0), mem + pod.overhead.get(MEMORY, 0)


def pod_non_zero_requests(pod: Pod, sidecars: bool = True, sidecars_in_sum: bool = True) -> tuple[int, int]:
    """cpu (millicores) and memory (bytes) with the per-container scoring defaults. ``sidecars``: as in
    :func:`pod_requests`; ``sidecars_in_sum``: whether the sum counts sidecars like the real requests do (the pod
    being scheduled, always; a placed pod, kube-scheduler 1.32+) or takes 1.29-1.31's formula for placed pods
    (:func:`_legacy_non_zero`)."""
    if sidecars and not sidecars_in_sum:
        return _legacy_non_zero(pod)
    total = _sum_requests(pod, non_zero=True, with_sidecars=sidecars)
    return total.get(CPU, 0), total.get(MEMORY, 0)


def pod_requests_and_non_zero(
    pod: Pod, sidecars: bool = True, sidecars_in_sum: bool = True
) -> tuple[ResourceList, int, int]:
    """``pod_requests(pod, sidecars)`` and ``pod_non_zero_requests(pod, sidecars, sidecars_in_sum)`` together (a
    PodInfo needs both): for a pod of app containers only (no init containers, no overhead, as most are), in one
    pass over them, where both formulas come down to the containers' sums (with the per-container defaults for
    the second); otherwise each function as it is."""
    if pod.init_containers or pod.overhead:
        return pod_requests(pod, sidecars), *pod_non_zero_requests(pod, sidecars, sidecars_in_sum)
    running: ResourceList = {}
    cpu = mem = 0
    for c in pod.containers:
        req = c.requests
        for name, amount in req.items():
            running[name] = running.get(name, 0) + amount
        cpu += req.get(CPU, DEFAULT_MILLI_CPU_REQUEST)
        mem += req.get(MEMORY, DEFAULT_MEMORY_REQUEST)
    return {k: v for k, v in running.items() if v != 0}, cpu, mem


def template_pod(r: Reader, raw: object, path: str, namespace: str) -> tuple[Pod, dict[str, Any]]:
    """Decode a PodTemplateSpec into a prototype pod (name filled in by the owner)."""
    data = r.fields(raw, path, schema.POD_TEMPLATE)
    meta = r.fields(data.get("metadata"), f"{path}.metadata", schema.OBJECT_META)
    pod = Pod(name="", namespace=namespace)
    pod.labels = r.str_map(meta.get("labels"), f"{path}.metadata.labels")
    pod.annotations = r.str_map(meta.get("annotations"), f"{path}.metadata.annotations")
    if data.get("spec") is None:
        r.errors.add(f"{path}.spec", "Required value")
    decode_pod_spec(r, data.get("spec"), f"{path}.spec", pod)
    return pod, meta


_DISK_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # source: (its schema, the fields that name the disk)
    "gcePersistentDisk": (schema.GCE_PD_SOURCE, ("pdName",)),
    "awsElasticBlockStore": (schema.AWS_EBS_SOURCE, ("volumeID",)),
    "iscsi": (schema.ISCSI_SOURCE, ("iqn",)),
    "rbd": (schema.RBD_SOURCE, ("pool", "image")),
}


def decode_pod_volumes(r: Reader, raw: object, path: str) -> list[PodVolume]:
    """A pod's ``spec.volumes`` (an ephemeral volume keeps its claim template undecoded: the manifest loader makes
    the claim, as the ephemeral volume controller does)."""
    out: list[PodVolume] = []
    for i, item in enumerate(r.list(raw, path)):
        p = f"{path}[{i}]"
        data = r.fields(item, p, schema.VOLUME)
        name = r.str(data.get("name"), f"{p}.name")
        if not name:
            r.errors.add(f"{p}.name", "Required value")
        sources = [k for k in data if k != "name"]
        source = sources[0] if sources else "emptyDir"  # the API server defaults a volume without a source
        if len(sources) > 1:
            r.errors.add(p, "Forbidden: may not specify more than 1 volume type")
        sp = f"{p}.{source}"
        body = data.get(source)
        if source == "persistentVolumeClaim":
            d = r.fields(body, sp, schema.PVC_VOLUME_SOURCE)
            claim = r.str(d.get("claimName"), f"{sp}.claimName")
            if not claim:
                r.errors.add(f"{sp}.claimName", "Required value")
            out.append(PodVolume(name, source, claim, r.bool(d.get("readOnly"), f"{sp}.readOnly")))
        elif source in _DISK_FIELDS:
            keys, ident = _DISK_FIELDS[source]
            d = r.fields(body, sp, keys)
            disk = [r.str(d.get(k), f"{sp}.{k}", "rbd" if k == "pool" else "") for k in ident]
            monitors = tuple(r.str_list(d.get("monitors"), f"{sp}.monitors")) if source == "rbd" else ()
            out.append(PodVolume(name, source, "", r.bool(d.get("readOnly"), f"{sp}.readOnly"), tuple(disk), monitors))
        elif source == "image":
            d = r.map(body, sp)
            ref = d.get("reference")
            out.append(PodVolume(name, source, image=ref if isinstance(ref, str) else ""))
        elif source == "ephemeral":
            d = r.fields(body, sp, schema.EPHEMERAL_SOURCE)
            if d.get("volumeClaimTemplate") is None:
                r.errors.add(f"{sp}.volumeClaimTemplate", "Required value")
            out.append(PodVolume(name, source, claim_template=d.get("volumeClaimTemplate")))
        else:
            r.map(body, sp)
            out.append(PodVolume(name, source))
    return out
