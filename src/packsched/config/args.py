"""Plugin args: strict decoding, defaulting and validation of the typed args packsched understands.

Current versions (v1beta2, v1beta3, v1) use upstream's field-error validators (``validation_pluginargs.go``):
every problem is reported, each at its field path. v1beta1 (kube-scheduler v1.19-v1.21) and the legacy Policy
use the older validators that return only the first problem as a plain sentence (spec §3.3).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from packsched.api.decode import Reader
from packsched.api.errors import ErrorList, FieldError
from packsched.api.objects import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, TopologySpreadConstraint
from packsched.api.pods import decode_label_selector, decode_node_affinity
from packsched.config import catalog
from packsched.config.defaults import (
    DEFAULT_BIND_TIMEOUT_SECONDS,
    DEFAULT_DRA_BINDING_TIMEOUT_S,
    DEFAULT_DRA_FILTER_TIMEOUT_S,
    DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DEFAULT_RESOURCE_WEIGHT,
    DEFAULT_RESOURCES,
    DEFAULT_VOLUME_BINDING_SHAPE,
)
from packsched.config.fielderr import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    child,
    duplicate,
    index,
    invalid,
    required,
    unsupported,
)
from packsched.config.types import (
    LEAST_ALLOCATED,
    LIST_DEFAULTING,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SCORING_STRATEGY_TYPES,
    SYSTEM_DEFAULTING,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginArgs,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoreOnlyResourceArgs,
    ScoringStrategy,
    TypedPluginArgs,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion

MAX_CUSTOM_PRIORITY_SCORE = 10  # shape scores are configured on 0..10
MAX_SCORE = MAX_CUSTOM_PRIORITY_SCORE
MIN_UTILIZATION, MAX_UTILIZATION = 0, 100
MAX_RESOURCE_WEIGHT = 100

TYPE_META = ("apiVersion", "kind")

# v1beta1 score plugins that became NodeResourcesFit scoring strategies in v1.22.
V1BETA1_SCORE_ONLY = {
    "NodeResourcesLeastAllocated": LEAST_ALLOCATED,
    "NodeResourcesMostAllocated": MOST_ALLOCATED,
    "RequestedToCapacityRatio": REQUESTED_TO_CAPACITY_RATIO,
}

# Plugins whose args packsched decodes into typed args, per API version (upstream registers an <Name>Args kind
# for each; args of other plugins are passed through as plain maps, as upstream passes runtime.Unknown).
_CURRENT_TYPED = frozenset(
    {
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "DefaultPreemption",
        "NodeAffinity",
        "InterPodAffinity",
        "PodTopologySpread",
        "VolumeBinding",
    }
)
TYPED_ARGS: dict[str, frozenset[str]] = {
    catalog.V1: _CURRENT_TYPED | {"DynamicResources"},  # DynamicResourcesArgs: v1 only (1.30+)
    catalog.V1BETA3: _CURRENT_TYPED,
    catalog.V1BETA2: _CURRENT_TYPED,
    # BalancedAllocation had no args before v1beta2.
    catalog.V1BETA1: frozenset(
        {
            "NodeResourcesFit",
            "DefaultPreemption",
            "NodeAffinity",
            "InterPodAffinity",
            "PodTopologySpread",
            "VolumeBinding",
            *V1BETA1_SCORE_ONLY,
        }
    ),
}
# InterPodAffinity's hardPodAffinityWeight bounds (validation_pluginargs.go).
MIN_HARD_POD_AFFINITY_WEIGHT, MAX_HARD_POD_AFFINITY_WEIGHT = 0, 100
SPREAD_CONSTRAINT_FIELDS = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)


def default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(name, weight) for name, weight in DEFAULT_RESOURCES]


# -- names (k8s.io/apimachinery/pkg/util/validation) ---------------------------------------------------------

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(f"^{_QNAME_FMT}$")
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_DNS1123_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_DNS1123_RE = re.compile(f"^{_DNS1123_FMT}$")
_DNS1123_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character"
)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_RE.match(value):
        errs.append(_regex_error(_DNS1123_MSG, _DNS1123_FMT, "example.com"))
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """Upstream IsQualifiedName: an optional DNS-subdomain prefix and '/', then a name of at most 63 chars."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QNAME_RE.match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


# -- decoding ------------------------------------------------------------------------------------------------


def read_int(r: Reader, raw: object, path: str, *, bits: int = 32) -> int | None:
    """An integer that must fit the Go field's type (int32 or int64); None when absent or wrong."""
    value = r.int(raw, path)
    if value is None:
        return None
    lo, hi = (INT32_MIN, INT32_MAX) if bits == 32 else (INT64_MIN, INT64_MAX)
    if not lo <= value <= hi:
        r.errors.add(path, invalid(value, f"must fit in a {bits}-bit integer"))
        return None
    return value


def decode_resources(r: Reader, raw: object, path: str) -> list[ResourceSpec]:
    out: list[ResourceSpec] = []
    for i, item in enumerate(r.list(raw, path)):
        ip = index(path, i)
        data = r.fields(item, ip, ("name", "weight"))
        name = r.str(data.get("name"), child(ip, "name"))
        weight = read_int(r, data.get("weight"), child(ip, "weight"), bits=64)
        out.append(ResourceSpec(name, weight or 0))
    return out


def decode_shape(r: Reader, raw: object, path: str) -> list[UtilizationShapePoint]:
    out: list[UtilizationShapePoint] = []
    for i, item in enumerate(r.list(raw, path)):
        ip = index(path, i)
        data = r.fields(item, ip, ("utilization", "score"))
        util = read_int(r, data.get("utilization"), child(ip, "utilization"))
        score = read_int(r, data.get("score"), child(ip, "score"))
        out.append(UtilizationShapePoint(util or 0, score or 0))
    return out


def decode_scoring_strategy(r: Reader, raw: object, path: str) -> ScoringStrategy | None:
    if raw is None:
        return None
    data = r.fields(raw, path, ("type", "resources", "requestedToCapacityRatio"))
    strategy = ScoringStrategy(
        type=r.str(data.get("type"), child(path, "type")),  # not defaulted when the strategy is given
        resources=decode_resources(r, data.get("resources"), child(path, "resources")),
    )
    rtcr_raw = data.get("requestedToCapacityRatio")
    if rtcr_raw is not None or "requestedToCapacityRatio" in data:
        rp = child(path, "requestedToCapacityRatio")
        rtcr = r.fields(rtcr_raw, rp, ("shape",))
        strategy.requested_to_capacity_ratio = RequestedToCapacityRatioParam(
            decode_shape(r, rtcr.get("shape"), child(rp, "shape"))
        )
    return strategy


def decode_fit_args(r: Reader, raw: object, path: str, api_version: str) -> NodeResourcesFitArgs:
    known = ["ignoredResources", "ignoredResourceGroups", *TYPE_META]
    if api_version != catalog.V1BETA1:
        known.append("scoringStrategy")
    data = r.fields(raw, path, known)
    return NodeResourcesFitArgs(
        ignored_resources=r.str_list(data.get("ignoredResources"), child(path, "ignoredResources")),
        ignored_resource_groups=r.str_list(data.get("ignoredResourceGroups"), child(path, "ignoredResourceGroups")),
        scoring_strategy=decode_scoring_strategy(r, data.get("scoringStrategy"), child(path, "scoringStrategy"))
        if "scoringStrategy" in known
        else None,
    )


def decode_balanced_allocation_args(r: Reader, raw: object, path: str) -> NodeResourcesBalancedAllocationArgs:
    data = r.fields(raw, path, ("resources", *TYPE_META))
    return NodeResourcesBalancedAllocationArgs(decode_resources(r, data.get("resources"), child(path, "resources")))


def decode_default_preemption_args(r: Reader, raw: object, path: str) -> DefaultPreemptionArgs:
    data = r.fields(raw, path, ("minCandidateNodesPercentage", "minCandidateNodesAbsolute", *TYPE_META))
    pct = read_int(r, data.get("minCandidateNodesPercentage"), child(path, "minCandidateNodesPercentage"))
    absolute = read_int(r, data.get("minCandidateNodesAbsolute"), child(path, "minCandidateNodesAbsolute"))
    return DefaultPreemptionArgs(
        min_candidate_nodes_percentage=DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
        if pct is None
        else pct,  # defaults applied with the pointer semantics
        min_candidate_nodes_absolute=DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE if absolute is None else absolute,
    )


def decode_node_affinity_args(r: Reader, raw: object, path: str) -> NodeAffinityArgs:
    data = r.fields(raw, path, ("addedAffinity", *TYPE_META))
    return NodeAffinityArgs(decode_node_affinity(r, data.get("addedAffinity"), child(path, "addedAffinity")))


def decode_inter_pod_affinity_args(r: Reader, raw: object, path: str, api_version: str) -> InterPodAffinityArgs:
    """hardPodAffinityWeight (absent: 1, as SetDefaults_InterPodAffinityArgs); ignorePreferredTermsOfExistingPods
    exists from v1beta2 on (v1beta1 predates it)."""
    known = ["hardPodAffinityWeight", *TYPE_META]
    if api_version != catalog.V1BETA1:
        known.append("ignorePreferredTermsOfExistingPods")
    data = r.fields(raw, path, known)
    weight = read_int(r, data.get("hardPodAffinityWeight"), child(path, "hardPodAffinityWeight"))
    ignore = r.bool(data.get("ignorePreferredTermsOfExistingPods"), child(path, "ignorePreferredTermsOfExistingPods"))
    return InterPodAffinityArgs(DEFAULT_HARD_POD_AFFINITY_WEIGHT if weight is None else weight, ignore)


def _decode_default_constraint(r: Reader, raw: object, path: str) -> TopologySpreadConstraint:
    """A defaultConstraints entry as written; checks are the args validator's (validate_pod_topology_spread_args)."""
    data = r.fields(raw, path, SPREAD_CONSTRAINT_FIELDS)
    selector = None
    if data.get("labelSelector") is not None:
        selector = decode_label_selector(r, data.get("labelSelector"), child(path, "labelSelector"))
    return TopologySpreadConstraint(
        max_skew=read_int(r, data.get("maxSkew"), child(path, "maxSkew")) or 0,
        topology_key=r.str(data.get("topologyKey"), child(path, "topologyKey")),
        when_unsatisfiable=r.str(data.get("whenUnsatisfiable"), child(path, "whenUnsatisfiable")),
        label_selector=selector,
        min_domains=read_int(r, data.get("minDomains"), child(path, "minDomains")),
        node_affinity_policy=r.str(data.get("nodeAffinityPolicy"), child(path, "nodeAffinityPolicy")) or None,
        node_taints_policy=r.str(data.get("nodeTaintsPolicy"), child(path, "nodeTaintsPolicy")) or None,
        match_label_keys=tuple(r.str_list(data.get("matchLabelKeys"), child(path, "matchLabelKeys"))),
    )


def decode_pod_topology_spread_args(r: Reader, raw: object, path: str) -> PodTopologySpreadArgs:
    data = r.fields(raw, path, ("defaultConstraints", "defaultingType", *TYPE_META))
    cp = child(path, "defaultConstraints")
    items = r.list(data.get("defaultConstraints"), cp)
    constraints = [_decode_default_constraint(r, c, index(cp, i)) for i, c in enumerate(items)]
    return PodTopologySpreadArgs(constraints, r.str(data.get("defaultingType"), child(path, "defaultingType")))


def decode_volume_binding_args(r: Reader, raw: object, path: str) -> VolumeBindingArgs:
    """bindTimeoutSeconds (an int64; absent or null: 600) and shape (absent or null: None, so that validation can
    tell a given shape, even an empty one, from none)."""
    data = r.fields(raw, path, ("bindTimeoutSeconds", "shape", *TYPE_META))
    timeout = read_int(r, data.get("bindTimeoutSeconds"), child(path, "bindTimeoutSeconds"), bits=64)
    raw_shape = data.get("shape")
    shape = None if raw_shape is None else decode_shape(r, raw_shape, child(path, "shape"))
    return VolumeBindingArgs(DEFAULT_BIND_TIMEOUT_SECONDS if timeout is None else timeout, shape)


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float | None:
    """A Go duration ("15s", "1m30s", "500ms", "-1s") in seconds; None when it is not one."""
    if text in ("0", "-0", "+0"):
        return 0.0
    m = re.fullmatch(r"([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+", text)
    if not m:
        return None
    total = sum(
        float(num) * _DURATION_UNITS[unit]
        for num, unit in re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", text)
    )
    return -total if m.group(1) == "-" else total


def duration_text(seconds: float) -> str:
    """Seconds as Go's Duration.String() writes them ("500ms", "1m0s", "10m0s", "-1s")."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)

    def trimmed(value: int, scale: int) -> str:
        whole, frac = divmod(value, scale)
        digits = str(frac).rjust(len(str(scale)) - 1, "0").rstrip("0")
        return f"{whole}.{digits}" if digits else str(whole)

    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return f"{sign}{trimmed(ns, 1_000)}µs"
    if ns < 1_000_000_000:
        return f"{sign}{trimmed(ns, 1_000_000)}ms"
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    secs = trimmed(rest, 1_000_000_000) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{secs}"
    if minutes:
        return f"{sign}{minutes}m{secs}"
    return sign + secs


def _read_duration(r: Reader, raw: object, path: str) -> float | None:
    """A metav1.Duration field: a Go duration string; None when absent or null."""
    if raw is None:
        return None
    text = r.str(raw, path)
    if not isinstance(raw, str):
        return None
    seconds = parse_duration(text)
    if seconds is None:
        r.errors.add(path, f"Invalid value: {json.dumps(text)}: time: invalid duration {json.dumps(text)}")
    return seconds


def decode_dynamic_resources_args(r: Reader, raw: object, path: str) -> DynamicResourcesArgs:
    """filterTimeout and bindingTimeout (Go durations; absent or null: not given)."""
    data = r.fields(raw, path, ("filterTimeout", "bindingTimeout", *TYPE_META))
    return DynamicResourcesArgs(
        _read_duration(r, data.get("filterTimeout"), child(path, "filterTimeout")),
        _read_duration(r, data.get("bindingTimeout"), child(path, "bindingTimeout")),
    )


def decode_v1beta1_score_only_args(r: Reader, name: str, raw: object, path: str) -> ScoreOnlyResourceArgs:
    kind = V1BETA1_SCORE_ONLY[name]
    known = ["resources", *TYPE_META]
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        known.append("shape")
    data = r.fields(raw, path, known)
    strategy = ScoringStrategy(
        type=kind, resources=decode_resources(r, data.get("resources"), child(path, "resources"))
    )
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        strategy.requested_to_capacity_ratio = RequestedToCapacityRatioParam(
            decode_shape(r, data.get("shape"), child(path, "shape"))
        )
    return ScoreOnlyResourceArgs(strategy)


def decode_plugin_args(r: Reader, name: str, raw: object, path: str, api_version: str) -> PluginArgs:
    """Typed args for the plugins of ``TYPED_ARGS`` (strict: unknown fields are errors), else the raw map."""
    if raw is not None and not isinstance(raw, Mapping):
        return r.map(raw, path)  # records "must be a map"
    if name not in TYPED_ARGS[api_version]:
        return r.map(raw, path)
    data = r.map(raw, path)
    kind = data.get("kind")
    if kind is not None and kind != f"{name}Args":
        r.errors.add(
            child(path, "kind"),
            f"args for plugin {name} were not of type {name}Args.{catalog.GROUP}, got {kind}.{catalog.GROUP}",
        )
    if name == "NodeResourcesFit":
        return decode_fit_args(r, raw, path, api_version)
    if name == "NodeResourcesBalancedAllocation":
        return decode_balanced_allocation_args(r, raw, path)
    if name == "DefaultPreemption":
        return decode_default_preemption_args(r, raw, path)
    if name == "NodeAffinity":
        return decode_node_affinity_args(r, raw, path)
    if name == "InterPodAffinity":
        return decode_inter_pod_affinity_args(r, raw, path, api_version)
    if name == "PodTopologySpread":
        return decode_pod_topology_spread_args(r, raw, path)
    if name == "VolumeBinding":
        return decode_volume_binding_args(r, raw, path)
    if name == "DynamicResources":
        return decode_dynamic_resources_args(r, raw, path)
    return decode_v1beta1_score_only_args(r, name, raw, path)


# -- defaulting ----------------------------------------------------------------------------------------------


def default_fit_args(args: NodeResourcesFitArgs) -> None:
    """SetDefaults_NodeResourcesFitArgs (v1beta2, v1beta3, v1): absent strategy -> LeastAllocated cpu/memory;
    empty resources -> cpu/memory appended; weight 0 -> 1; a given strategy's type is left alone."""
    if args.scoring_strategy is None:
        args.scoring_strategy = ScoringStrategy(LEAST_ALLOCATED, default_resources())
    if not args.scoring_strategy.resources:
        args.scoring_strategy.resources.extend(default_resources())
    for res in args.scoring_strategy.resources:
        if res.weight == 0:
            res.weight = DEFAULT_RESOURCE_WEIGHT


def default_balanced_allocation_args(args: NodeResourcesBalancedAllocationArgs) -> None:
    if not args.resources:
        args.resources = default_resources()
        return
    for res in args.resources:
        if res.weight == 0:
            res.weight = DEFAULT_RESOURCE_WEIGHT


def default_pod_topology_spread_args(args: PodTopologySpreadArgs, api_version: str) -> None:
    """SetDefaults_PodTopologySpreadArgs: an unset defaultingType is System (v1beta2 on); v1beta1 picked List
    when constraints were given."""
    if args.defaulting_type:
        return
    if api_version == catalog.V1BETA1 and args.default_constraints:
        args.defaulting_type = LIST_DEFAULTING
    else:
        args.defaulting_type = SYSTEM_DEFAULTING


def default_volume_binding_args(args: VolumeBindingArgs, version: KubeVersion) -> None:
    """SetDefaults_VolumeBindingArgs: with StorageCapacityScoring on, an absent or empty shape becomes 10 at 0 %
    utilisation, 0 at 100 % (bindTimeoutSeconds is defaulted while decoding)."""
    if version.storage_capacity_scoring and not args.shape:
        args.shape = [UtilizationShapePoint(u, score) for u, score in DEFAULT_VOLUME_BINDING_SHAPE]


def default_dynamic_resources_args(args: DynamicResourcesArgs, version: KubeVersion) -> None:
    """SetDefaults_DynamicResourcesArgs: filterTimeout 10 s with DRASchedulerFilterTimeout on; from 1.35 (the
    release that added the field) bindingTimeout 600 s with DRADeviceBindingConditions and
    DRAResourceClaimDeviceStatus on."""
    if args.filter_timeout is None and version.dra_filter_timeout:
        args.filter_timeout = DEFAULT_DRA_FILTER_TIMEOUT_S
    if args.binding_timeout is None and version.minor >= 35 and version.dra_device_binding:
        args.binding_timeout = DEFAULT_DRA_BINDING_TIMEOUT_S


def default_v1beta1_score_only_args(args: ScoreOnlyResourceArgs) -> None:
    """v1.19-v1.21 SetDefaults_*Args: only an empty resource list is defaulted; a weight of 0 stays 0 (and
    fails validation), as it did before v1.22."""
    if not args.scoring_strategy.resources:
        args.scoring_strategy.resources = default_resources()


def default_args(name: str, api_version: str, version: KubeVersion = DEFAULT_KUBE_VERSION) -> TypedPluginArgs | None:
    """Defaulted args for a plugin that has typed args and was given none; None for other plugins. ``version``:
    the kube-scheduler release whose feature gates decide the defaults."""
    if name == "NodeResourcesFit":
        fit = NodeResourcesFitArgs()
        default_fit_args(fit)
        return fit
    if name == "NodeResourcesBalancedAllocation":
        return NodeResourcesBalancedAllocationArgs(default_resources())
    if name == "DefaultPreemption":
        return DefaultPreemptionArgs()
    if name == "NodeAffinity":
        return NodeAffinityArgs()
    if name == "InterPodAffinity":
        return InterPodAffinityArgs()
    if name == "PodTopologySpread":
        spread = PodTopologySpreadArgs()
        default_pod_topology_spread_args(spread, api_version)
        return spread
    if name == "VolumeBinding":
        binding = VolumeBindingArgs()
        default_volume_binding_args(binding, version)
        return binding
    if name == "DynamicResources" and api_version == catalog.V1:
        dra = DynamicResourcesArgs()
        default_dynamic_resources_args(dra, version)
        return dra
    if api_version == catalog.V1BETA1 and name in (
        "NodeResourcesLeastAllocated",
        "NodeResourcesMostAllocated",
    ):
        return ScoreOnlyResourceArgs(ScoringStrategy(V1BETA1_SCORE_ONLY[name], default_resources()))
    if api_version == catalog.V1BETA1 and name == "RequestedToCapacityRatio":
        # Shape has no default: validation then reports "at least one point must be specified".
        return ScoreOnlyResourceArgs(
            ScoringStrategy(REQUESTED_TO_CAPACITY_RATIO, default_resources(), RequestedToCapacityRatioParam([]))
        )
    return None


def apply_defaults(
    name: str, args: TypedPluginArgs, api_version: str, version: KubeVersion = DEFAULT_KUBE_VERSION
) -> None:
    if isinstance(args, NodeResourcesFitArgs):
        default_fit_args(args)
    elif isinstance(args, NodeResourcesBalancedAllocationArgs):
        default_balanced_allocation_args(args)
    elif isinstance(args, PodTopologySpreadArgs):
        default_pod_topology_spread_args(args, api_version)
    elif isinstance(args, VolumeBindingArgs):
        default_volume_binding_args(args, version)
    elif isinstance(args, DynamicResourcesArgs):
        default_dynamic_resources_args(args, version)
    elif isinstance(args, ScoreOnlyResourceArgs) and api_version == catalog.V1BETA1:
        default_v1beta1_score_only_args(args)


# -- validation: current versions (field errors) -------------------------------------------------------------


def validate_function_shape(shape: Sequence[UtilizationShapePoint], path: str) -> list[FieldError]:
    """Upstream validateFunctionShape: Required when empty; the first unsorted point (one error at most); then
    range errors for every point, utilization before score."""
    if not shape:
        return [FieldError(path, required("at least one point must be specified"))]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                FieldError(
                    child(index(path, i), "utilization"),
                    invalid(shape[i].utilization, "values must be sorted in increasing order"),
                )
            )
            break
    for i, point in enumerate(shape):
        if not MIN_UTILIZATION <= point.utilization <= MAX_UTILIZATION:
            errs.append(
                FieldError(
                    child(index(path, i), "utilization"),
                    invalid(point.utilization, f"not in valid range [{MIN_UTILIZATION}, {MAX_UTILIZATION}]"),
                )
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                FieldError(
                    child(index(path, i), "score"),
                    invalid(point.score, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"),
                )
            )
    return errs


def validate_resources(resources: Sequence[ResourceSpec], path: str) -> list[FieldError]:
    return [
        FieldError(
            child(index(path, i), "weight"),
            invalid(res.weight, f"resource weight of {res.name} not in valid range (0, {MAX_RESOURCE_WEIGHT}]"),
        )
        for i, res in enumerate(resources)
        if not 0 < res.weight <= MAX_RESOURCE_WEIGHT
    ]


def validate_node_resources_fit_args(args: NodeResourcesFitArgs, path: str = "") -> list[FieldError]:
    """Upstream ValidateNodeResourcesFitArgs as of spec §3.1 (v1.22 to 2025, plus PR #132120's Required
    check).

    The shape is reported under ``scoringStrategy.shape`` (upstream's path quirk). Upstream runs this check in
    the NodeResourcesFit constructor with an empty root path (validation.go registers it under the key
    "NodeResourcesFitArgs", which never matches a plugin name); packsched runs it while loading, under the
    args' full path. The newest main branch moved the shape path to
    ``scoringStrategy.requestedToCapacityRatio.shape``, rejects a shape with another type and requires the
    strategy; those changes are not followed here (see the spec).
    """
    errs: list[FieldError] = []
    res_path = child(path, "ignoredResources")
    for i, res in enumerate(args.ignored_resources):
        errs.extend(FieldError(index(res_path, i), invalid(res, m)) for m in qualified_name_errors(res))
    group_path = child(path, "ignoredResourceGroups")
    for i, group in enumerate(args.ignored_resource_groups):
        gp = index(group_path, i)
        if "/" in group:
            errs.append(FieldError(gp, invalid(group, "resource group name can't contain '/'")))
        errs.extend(FieldError(gp, invalid(group, m)) for m in qualified_name_errors(group))
    strategy = args.scoring_strategy
    if strategy is None:
        return errs  # defaulting always fills it (spec §3.1.3)
    sp = child(path, "scoringStrategy")
    if strategy.type not in SCORING_STRATEGY_TYPES:
        errs.append(FieldError(child(sp, "type"), unsupported(strategy.type, sorted(SCORING_STRATEGY_TYPES))))
    errs.extend(validate_resources(strategy.resources, child(sp, "resources")))
    if strategy.requested_to_capacity_ratio is not None:
        errs.extend(validate_function_shape(strategy.requested_to_capacity_ratio.shape, child(sp, "shape")))
    elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        errs.append(
            FieldError(
                child(sp, "requestedToCapacityRatio"),
                required("must be specified when type is RequestedToCapacityRatio"),
            )
        )
    return errs


def validate_balanced_allocation_args(args: NodeResourcesBalancedAllocationArgs, path: str = "") -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    rp = child(path, "resources")
    for i, res in enumerate(args.resources):
        if res.name in seen:
            errs.append(FieldError(child(index(rp, i), "name"), duplicate(res.name)))
        seen.add(res.name)
        if res.weight != 1:
            errs.append(FieldError(child(index(rp, i), "weight"), invalid(res.weight, "must be 1")))
    return errs


def validate_default_preemption_args(args: DefaultPreemptionArgs, path: str = "") -> list[FieldError]:
    errs: list[FieldError] = []
    pp = child(path, "minCandidateNodesPercentage")
    ap = child(path, "minCandidateNodesAbsolute")
    pct, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    if not 0 <= pct <= 100:
        errs.append(FieldError(pp, invalid(pct, "not in valid range [0, 100]")))
    if absolute < 0:
        errs.append(FieldError(ap, invalid(absolute, "not in valid range [0, inf)")))
    if pct == 0 and absolute == 0:
        errs.append(FieldError(pp, invalid(pct, "cannot be zero at the same time as minCandidateNodesAbsolute")))
        errs.append(FieldError(ap, invalid(absolute, "cannot be zero at the same time as minCandidateNodesPercentage")))
    return errs


def validate_inter_pod_affinity_args(args: InterPodAffinityArgs, path: str = "") -> list[FieldError]:
    """Upstream ValidateInterPodAffinityArgs: hardPodAffinityWeight within [0, 100]."""
    w = args.hard_pod_affinity_weight
    if not MIN_HARD_POD_AFFINITY_WEIGHT <= w <= MAX_HARD_POD_AFFINITY_WEIGHT:
        msg = f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
        return [FieldError(child(path, "hardPodAffinityWeight"), invalid(w, msg))]
    return []


def validate_pod_topology_spread_args(args: PodTopologySpreadArgs, path: str = "") -> list[FieldError]:
    """ValidatePodTopologySpreadArgs: the defaulting type, then each default constraint (no selector allowed:
    it is deduced for each pod)."""
    errs: list[FieldError] = []
    tp = child(path, "defaultingType")
    if args.defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(FieldError(tp, unsupported(args.defaulting_type, (SYSTEM_DEFAULTING, LIST_DEFAULTING))))
    elif args.defaulting_type == SYSTEM_DEFAULTING and args.default_constraints:
        errs.append(FieldError(tp, invalid(args.defaulting_type, "when .defaultConstraints are not empty")))
    cp = child(path, "defaultConstraints")
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(args.default_constraints):
        p = index(cp, i)
        if c.max_skew <= 0:
            errs.append(FieldError(child(p, "maxSkew"), invalid(c.max_skew, "not in valid range (0, inf)")))
        kp = child(p, "topologyKey")
        if not c.topology_key:
            errs.append(FieldError(kp, required("can not be empty")))
        else:
            errs += [FieldError(kp, invalid(c.topology_key, m)) for m in qualified_name_errors(c.topology_key)]
        wp = child(p, "whenUnsatisfiable")
        if not c.when_unsatisfiable:
            errs.append(FieldError(wp, required("can not be empty")))
        elif c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            errs.append(FieldError(wp, unsupported(c.when_unsatisfiable, (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY))))
        if c.label_selector is not None:
            errs.append(
                FieldError(
                    child(p, "labelSelector"),
                    "Forbidden: constraint must not define a selector, as they deduced for each pod",
                )
            )
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            errs.append(FieldError(p, duplicate(f"{{{c.topology_key}, {c.when_unsatisfiable}}}")))
        seen.add(pair)
    return errs


def _go_internal_shape(shape: Sequence[UtilizationShapePoint]) -> str:
    """A shape as Go's field error prints the internal type (JSON of fields without tags)."""
    points = [{"Utilization": p.utilization, "Score": p.score} for p in shape]
    return json.dumps(points, separators=(",", ":"))


def validate_volume_binding_args(
    args: VolumeBindingArgs, path: str = "", version: KubeVersion = DEFAULT_KUBE_VERSION
) -> list[FieldError]:
    """Upstream ValidateVolumeBindingArgsWithOptions: bindTimeoutSeconds not negative; with the release's
    StorageCapacityScoring gate on, the shape as RequestedToCapacityRatio's; with it off, no shape at all."""
    errs: list[FieldError] = []
    if args.bind_timeout_seconds < 0:
        errs.append(
            FieldError(
                child(path, "bindTimeoutSeconds"),
                invalid(args.bind_timeout_seconds, "invalid BindTimeoutSeconds, should not be a negative value"),
            )
        )
    sp = child(path, "shape")
    if version.storage_capacity_scoring:
        errs.extend(validate_function_shape(args.shape or [], sp))
    elif args.shape is not None:
        gate = version.storage_capacity_scoring_gate
        errs.append(
            FieldError(
                sp,
                f"Invalid value: {_go_internal_shape(args.shape)}: unexpected field `shape`, remove it or turn on "
                f"the feature gate {gate}",
            )
        )
    return errs


def default_preemption_args_errors(args: DefaultPreemptionArgs) -> list[str]:
    """Upstream ValidateDefaultPreemptionArgs for args built in code (not read from a file): each problem as
    ``field: detail``, e.g. ``minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]``;
    empty when the args are valid. The config loader reports the same problems at their full field paths."""
    return [str(e) for e in validate_default_preemption_args(args)]


# -- validation: v1beta1 and legacy (first error only, plain sentences) --------------------------------------


def shape_first_error(shape: Sequence[UtilizationShapePoint], *, legacy_v116: bool = False) -> str | None:
    """The v1.16 NewFunctionShape / v1.19-v1.21 validateFunctionShape checks: sorting over all points first,
    then per point utilization below/above range and score below/above range."""
    if not shape:
        return "at least one point must be specified"
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            return (
                f"utilization values must be sorted. Utilization[{i - 1}]=={shape[i - 1].utilization} "
                f">= Utilization[{i}]=={shape[i].utilization}"
            )
    for i, point in enumerate(shape):
        if point.utilization < MIN_UTILIZATION:
            return f"utilization values must not be less than {MIN_UTILIZATION}. Utilization[{i}]=={point.utilization}"
        if point.utilization > MAX_UTILIZATION:
            return (
                f"utilization values must not be greater than {MAX_UTILIZATION}. Utilization[{i}]=={point.utilization}"
            )
        if point.score < 0:
            return f"score values must not be less than 0. Score[{i}]=={point.score}"
        if point.score > MAX_CUSTOM_PRIORITY_SCORE:
            if legacy_v116:  # upstream's typo, kept
                return f"score valuses not be greater than {MAX_SCORE}. Score[{i}]=={point.score}"
            return f"score values must not be greater than {MAX_SCORE}. Score[{i}]=={point.score}"
    return None


def rtcr_weights_first_error(resources: Sequence[ResourceSpec]) -> str | None:
    """RequestedToCapacityRatioArgs weights in v1.19-v1.20 (and the v1.16 weight map): at least 1, no
    maximum."""
    for res in resources:
        if res.weight < 1:
            return f"resource {res.name} weight {res.weight} must not be less than 1"
    return None


def resource_weights_first_error(resources: Sequence[ResourceSpec]) -> str | None:
    """NodeResourcesLeastAllocatedArgs / NodeResourcesMostAllocatedArgs in v1.19-v1.21: 1..100."""
    for res in resources:
        if res.weight <= 0:
            return f"resource Weight of {res.name} should be a positive value, got {res.weight}"
        if res.weight > MAX_RESOURCE_WEIGHT:
            return f"resource Weight of {res.name} should be less than {MAX_RESOURCE_WEIGHT}, got {res.weight}"
    return None


def v1beta1_args_first_error(args: ScoreOnlyResourceArgs) -> str | None:
    strategy = args.scoring_strategy
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        shape = strategy.requested_to_capacity_ratio.shape if strategy.requested_to_capacity_ratio else []
        return shape_first_error(shape) or rtcr_weights_first_error(strategy.resources)
    return resource_weights_first_error(strategy.resources)


def weight_map_first_error(weights: Mapping[str, int]) -> str | None:
    """v1.16 validateResourceWeightMap (only logged by the v1.16 scorer builder)."""
    if not weights:
        return "resourceToWeightMap cannot be nil"
    for name, weight in weights.items():
        if weight < 1:
            return f"resource {name} weight {weight} must not be less than 1"
    return None


def validate_dynamic_resources_args(
    args: DynamicResourcesArgs, path: str = "", version: KubeVersion = DEFAULT_KUBE_VERSION
) -> list[FieldError]:
    """Upstream ValidateDynamicResourcesArgs: filterTimeout zero or more with DRASchedulerFilterTimeout on, not
    given with it off; bindingTimeout at least 1 s with DRADeviceBindingConditions and
    DRAResourceClaimDeviceStatus on, not given with either off; 1.34's DynamicResourcesArgs has no bindingTimeout
    (its strict decoding refuses the field)."""
    errs: list[FieldError] = []
    ft, bt = child(path, "filterTimeout"), child(path, "bindingTimeout")
    if args.filter_timeout is not None:
        if not version.dra_filter_timeout:
            errs.append(FieldError(ft, "Forbidden: DRASchedulingFilterTimeout feature gate is disabled"))
        elif args.filter_timeout < 0:
            errs.append(
                FieldError(ft, f"Invalid value: {duration_text(args.filter_timeout)}: must be zero or positive")
            )
    if args.binding_timeout is not None:
        if version.minor < 35:
            errs.append(FieldError(bt, f"unknown field; DynamicResourcesArgs of {version} has only filterTimeout"))
        elif not version.dra_device_binding:
            errs.append(
                FieldError(
                    bt, "Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"
                )
            )
        elif args.binding_timeout < 1:
            errs.append(
                FieldError(bt, f"Invalid value: {duration_text(args.binding_timeout)}: must be at least 1 second")
            )
    return errs


def validate_plugin_args(
    name: str, args: TypedPluginArgs, path: str, api_version: str, version: KubeVersion = DEFAULT_KUBE_VERSION
) -> list[FieldError]:
    """Every problem in one plugin's (defaulted) args, at ``path`` (the args' own path); ``version``: the
    kube-scheduler release whose feature gates decide what is allowed."""
    if isinstance(args, NodeResourcesFitArgs):
        return validate_node_resources_fit_args(args, path)
    if isinstance(args, NodeResourcesBalancedAllocationArgs):
        return validate_balanced_allocation_args(args, path)
    if isinstance(args, DefaultPreemptionArgs):
        return validate_default_preemption_args(args, path)
    if isinstance(args, InterPodAffinityArgs):
        return validate_inter_pod_affinity_args(args, path)
    if isinstance(args, PodTopologySpreadArgs):
        return validate_pod_topology_spread_args(args, path)
    if isinstance(args, VolumeBindingArgs):
        return validate_volume_binding_args(args, path, version)
    if isinstance(args, DynamicResourcesArgs):
        return validate_dynamic_resources_args(args, path, version)
    if isinstance(args, ScoreOnlyResourceArgs):
        msg = v1beta1_args_first_error(args)
        return [FieldError(path, msg)] if msg else []
    return []


def shape_points(raw: Sequence[Mapping[str, Any]] | None) -> list[UtilizationShapePoint]:
    """Shape points from plain maps ``{utilization, score}`` (for callers holding decoded JSON)."""
    return [UtilizationShapePoint(int(p.get("utilization", 0)), int(p.get("score", 0))) for p in raw or []]


def v1beta1_first_error(plugin: str, raw: Mapping[str, Any]) -> str | None:
    """The v1.19-v1.21 first-error check of a v1beta1 args map (RequestedToCapacityRatio,
    NodeResourcesLeastAllocated or NodeResourcesMostAllocated), decoded without defaulting."""
    errors = ErrorList()
    args = decode_v1beta1_score_only_args(Reader(errors), plugin, raw, "")
    if errors:
        return str(errors.items[0])
    return v1beta1_args_first_error(args)


def legacy_v116_first_error(raw: Mapping[str, Any]) -> str | None:
    """The v1.16 priority's checks on a map holding ``shape`` (NewFunctionShape) or ``resourceToWeightMap``
    (validateResourceWeightMap, which v1.16 only logged)."""
    if "resourceToWeightMap" in raw:
        return weight_map_first_error(raw["resourceToWeightMap"])
    return shape_first_error(shape_points(raw.get("shape")), legacy_v116=True)
