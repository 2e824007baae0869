"""The legacy scheduler Policy (``kind: Policy``, ``apiVersion: v1``; removed in kube-scheduler v1.23),
converted the way the v1.18-v1.22 legacy registry did it
(``pkg/scheduler/framework/plugins/legacy_registry.go`` and ``factory.go`` createFromConfig):

* ``predicates`` absent -> the default predicate set; present (even empty) -> only those. The mandatory
  predicates (PodToleratesNodeTaints, CheckNodeUnschedulable) are always added, and so are PrioritySort,
  DefaultPreemption (postFilter) and DefaultBinder, which were never predicates.
* ``priorities`` absent -> the default priorities; present -> only those, each priority's weight becoming the
  score plugin's weight. ``EqualPriority`` is skipped.
* Plugins are appended per predicate in upstream's predicate order, then per priority in sorted key order;
  a plugin already present at a point keeps its first weight (upstream meant to keep the larger one but
  updated a copy).

The RequestedToCapacityRatio priority's arguments follow spec §2.1: empty ``resources`` -> memory 1, cpu 1;
weight 0 -> 1; a negative weight is only reported (the v1.16 scorer only logged it); an invalid shape is an
error with the legacy first-error sentence. Each resource may name itself with ``name`` or with ``resource``
(the KEP-964 draft's key).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from packsched.api.decode import Reader
from packsched.api.errors import ErrorList
from packsched.config import args as pluginargs
from packsched.config import catalog
from packsched.config.defaults import (
    DEFAULT_LEGACY_RTCR_RESOURCES,
    DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
    DEFAULT_RESOURCE_WEIGHT,
    DEFAULT_SCHEDULER_NAME,
)
from packsched.config.fielderr import child, index, invalid, required
from packsched.config.types import (
    REQUESTED_TO_CAPACITY_RATIO,
    SEMANTICS_V1_16,
    KubeSchedulerConfiguration,
    PluginRef,
    Plugins,
    Profile,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoreOnlyResourceArgs,
    ScoringStrategy,
)

POLICY_FIELDS = (
    "kind",
    "apiVersion",
    "predicates",
    "priorities",
    "extenders",
    "hardPodAffinitySymmetricWeight",
    "alwaysCheckAllPredicates",
)

# predicate -> (extension point, plugin) in the order the producer appends them.
PREDICATE_PLUGINS: dict[str, tuple[tuple[str, str], ...]] = {
    "GeneralPredicates": (
        ("filter", "NodeResourcesFit"),
        ("preFilter", "NodeResourcesFit"),
        ("filter", "NodeName"),
        ("filter", "NodePorts"),
        ("preFilter", "NodePorts"),
        ("filter", "NodeAffinity"),
        ("preFilter", "NodeAffinity"),
    ),
    "PodToleratesNodeTaints": (("filter", "TaintToleration"),),
    "PodFitsResources": (("filter", "NodeResourcesFit"), ("preFilter", "NodeResourcesFit")),
    "HostName": (("filter", "NodeName"),),
    "PodFitsHostPorts": (("filter", "NodePorts"), ("preFilter", "NodePorts")),
    "MatchNodeSelector": (("filter", "NodeAffinity"), ("preFilter", "NodeAffinity")),
    "CheckNodeUnschedulable": (("filter", "NodeUnschedulable"),),
    "CheckVolumeBinding": (
        ("preFilter", "VolumeBinding"),
        ("filter", "VolumeBinding"),
        ("reserve", "VolumeBinding"),
        ("preBind", "VolumeBinding"),
    ),
    "NoDiskConflict": (("filter", "VolumeRestrictions"),),
    "NoVolumeZoneConflict": (("filter", "VolumeZone"),),
    "MaxCSIVolumeCountPred": (("filter", "NodeVolumeLimits"),),
    "MaxEBSVolumeCount": (("filter", "EBSLimits"),),
    "MaxGCEPDVolumeCount": (("filter", "GCEPDLimits"),),
    "MaxAzureDiskVolumeCount": (("filter", "AzureDiskLimits"),),
    "MaxCinderVolumeCount": (("filter", "CinderLimits"),),
    "MatchInterPodAffinity": (("filter", "InterPodAffinity"), ("preFilter", "InterPodAffinity")),
    "CheckNodeLabelPresence": (("filter", "NodeLabel"),),
    "CheckServiceAffinity": (("filter", "ServiceAffinity"), ("preFilter", "ServiceAffinity")),
    "EvenPodsSpread": (("preFilter", "PodTopologySpread"), ("filter", "PodTopologySpread")),
}

PREDICATE_ORDER = (
    "CheckNodeUnschedulable",
    "GeneralPredicates",
    "HostName",
    "PodFitsHostPorts",
    "MatchNodeSelector",
    "PodFitsResources",
    "NoDiskConflict",
    "PodToleratesNodeTaints",
    "CheckNodeLabelPresence",
    "CheckServiceAffinity",
    "MaxEBSVolumeCount",
    "MaxGCEPDVolumeCount",
    "MaxCSIVolumeCountPred",
    "MaxAzureDiskVolumeCount",
    "MaxCinderVolumeCount",
    "CheckVolumeBinding",
    "NoVolumeZoneConflict",
    "EvenPodsSpread",
    "MatchInterPodAffinity",
)

MANDATORY_PREDICATES = frozenset({"PodToleratesNodeTaints", "CheckNodeUnschedulable"})
DEFAULT_PREDICATES = frozenset(
    {
        "NoVolumeZoneConflict",
        "MaxEBSVolumeCount",
        "MaxGCEPDVolumeCount",
        "MaxAzureDiskVolumeCount",
        "MaxCSIVolumeCountPred",
        "MatchInterPodAffinity",
        "NoDiskConflict",
        "GeneralPredicates",
        "PodToleratesNodeTaints",
        "CheckVolumeBinding",
        "CheckNodeUnschedulable",
        "EvenPodsSpread",
    }
)

# priority key -> (extension point, plugin, takes the priority weight). SelectorSpreadPriority maps to
# PodTopologySpread because DefaultPodTopologySpread is on (v1.20+).
PRIORITY_PLUGINS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "SelectorSpreadPriority": (
        ("score", "PodTopologySpread", True),
        ("preScore", "PodTopologySpread", False),
    ),
    "TaintTolerationPriority": (("preScore", "TaintToleration", False), ("score", "TaintToleration", True)),
    "NodeAffinityPriority": (("preScore", "NodeAffinity", False), ("score", "NodeAffinity", True)),
    "ImageLocalityPriority": (("score", "ImageLocality", True),),
    "InterPodAffinityPriority": (
        ("preScore", "InterPodAffinity", False),
        ("score", "InterPodAffinity", True),
    ),
    "NodePreferAvoidPodsPriority": (("score", "NodePreferAvoidPods", True),),
    "MostRequestedPriority": (("score", "NodeResourcesMostAllocated", True),),
    "BalancedResourceAllocation": (("score", "NodeResourcesBalancedAllocation", True),),
    "LeastRequestedPriority": (("score", "NodeResourcesLeastAllocated", True),),
    "RequestedToCapacityRatio": (("score", "RequestedToCapacityRatio", True),),
    "NodeLabel": (("score", "NodeLabel", True),),
    "ServiceAffinity": (("score", "ServiceAffinity", True),),
    "EvenPodsSpreadPriority": (
        ("preScore", "PodTopologySpread", False),
        ("score", "PodTopologySpread", True),
    ),
}

DEFAULT_PRIORITIES: dict[str, int] = {
    "SelectorSpreadPriority": 1,
    "InterPodAffinityPriority": 1,
    "LeastRequestedPriority": 1,
    "BalancedResourceAllocation": 1,
    "NodePreferAvoidPodsPriority": 10000,
    "NodeAffinityPriority": 1,
    "TaintTolerationPriority": 1,
    "ImageLocalityPriority": 1,
    "EvenPodsSpreadPriority": 2,
}

EQUAL_PRIORITY = "EqualPriority"
MAX_WEIGHT = catalog.MAX_TOTAL_SCORE // catalog.MAX_NODE_SCORE


def _append(plugins: Plugins, point: str, name: str, weight: int) -> None:
    pset = plugins.at(point)
    if any(p.name == name for p in pset.enabled):
        return  # first registration's weight stays (upstream's "keep the max" updated a copy)
    pset.enabled.append(PluginRef(name, weight))


def convert_policy(
    data: Mapping[str, Any], known: Collection[str], errors: ErrorList, semantics: str
) -> KubeSchedulerConfiguration:
    r = Reader(errors)
    top = r.fields(data, "", POLICY_FIELDS)
    warnings: list[str] = []
    _policy_settings(r, top, warnings)

    plugins = Plugins()
    plugins.at("queueSort").enabled.append(PluginRef("PrioritySort"))
    plugins.at("postFilter").enabled.append(PluginRef("DefaultPreemption"))
    plugins.at("bind").enabled.append(PluginRef("DefaultBinder"))
    explicit: dict[str, tuple[str, str]] = {}  # plugin -> (path, what) where the user asked for it
    _add_predicates(r, top.get("predicates"), plugins, explicit)
    rtcr_args = _add_priorities(r, top.get("priorities"), plugins, explicit, semantics, warnings)
    omitted = _leave_out_unimplemented(plugins, known, explicit, errors)

    profile = Profile(scheduler_name=DEFAULT_SCHEDULER_NAME, plugins=plugins, omitted_default_plugins=omitted)
    _policy_plugin_config(profile, rtcr_args, errors)
    cfg = KubeSchedulerConfiguration(
        profiles=[profile], percentage_of_nodes_to_score=DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE, source_version="Policy"
    )
    cfg.warnings.extend(warnings)
    return cfg


def _policy_settings(r: Reader, top: Mapping[str, Any], warnings: list[str]) -> None:
    """The Policy's top-level settings besides predicates and priorities: checked, and none of them used."""
    errors = r.errors
    if r.list(top.get("extenders"), "extenders"):
        errors.add("extenders", "extenders are not supported by packsched")
    hard = pluginargs.read_int(r, top.get("hardPodAffinitySymmetricWeight"), "hardPodAffinitySymmetricWeight") or 0
    if not 0 <= hard <= 100:
        errors.add("hardPodAffinitySymmetricWeight", invalid(hard, "not in valid range [0-100]"))
    elif hard:
        warnings.append(
            "hardPodAffinitySymmetricWeight configures InterPodAffinity, which packsched does not implement"
        )
    if r.bool(top.get("alwaysCheckAllPredicates"), "alwaysCheckAllPredicates"):
        warnings.append(
            "alwaysCheckAllPredicates only changes which failure reasons kube-scheduler reports; packsched ignores it"
        )


def _add_predicates(r: Reader, raw: object, plugins: Plugins, explicit: dict[str, tuple[str, str]]) -> None:
    """The filter plugins of the predicates (the default ones when the Policy names none), in upstream's order."""
    if raw is None:
        predicate_keys = set(DEFAULT_PREDICATES)
    else:
        predicate_keys = set()
        for i, item in enumerate(r.list(raw, "predicates")):
            ip = index("predicates", i)
            key = _predicate_key(r, item, ip)
            if key:
                predicate_keys.add(key)
                for _, plugin in PREDICATE_PLUGINS[key]:
                    explicit.setdefault(plugin, (child(ip, "name"), f'predicate "{key}"'))
    predicate_keys |= MANDATORY_PREDICATES
    ordered = [k for k in PREDICATE_ORDER if k in predicate_keys]
    ordered += sorted(predicate_keys - set(ordered))
    for key in ordered:
        for point, plugin in PREDICATE_PLUGINS[key]:
            _append(plugins, point, plugin, 0)


def _add_priorities(
    r: Reader,
    raw: object,
    plugins: Plugins,
    explicit: dict[str, tuple[str, str]],
    semantics: str,
    warnings: list[str],
) -> ScoreOnlyResourceArgs | None:
    """The score plugins of the priorities (the default ones when the Policy names none), with their weights;
    returns RequestedToCapacityRatioPriority's args when it has some."""
    rtcr_args: ScoreOnlyResourceArgs | None = None
    if raw is None:
        priority_keys = dict(DEFAULT_PRIORITIES)
    else:
        priority_keys = {}
        raw_priorities = r.list(raw, "priorities")
        decoded = [_decode_priority(r, item, index("priorities", i)) for i, item in enumerate(raw_priorities)]
        _validate_policy_priorities(r.errors, decoded)
        for i, (name, weight, argument) in enumerate(decoded):
            ip = index("priorities", i)
            if name == EQUAL_PRIORITY:
                warnings.append(f"{ip}: EqualPriority is skipped, as kube-scheduler skips it")
                continue
            key = _priority_key(r.errors, name, argument, ip)
            if not key:
                continue
            priority_keys[key] = weight  # a key given twice: the last weight wins (a Go map)
            for _, plugin, _ in PRIORITY_PLUGINS[key]:
                explicit.setdefault(plugin, (child(ip, "name"), f'priority "{name}"'))
            if key == REQUESTED_TO_CAPACITY_RATIO and argument is not None:
                rtcr_args = _rtcr_args(
                    r,
                    argument.get("requestedToCapacityRatioArguments"),
                    child(ip, "argument"),
                    semantics,
                    warnings,
                )
    for key in sorted(priority_keys):
        for point, plugin, weighted in PRIORITY_PLUGINS[key]:
            _append(plugins, point, plugin, priority_keys[key] if weighted else 0)
    return rtcr_args


def _leave_out_unimplemented(
    plugins: Plugins, known: Collection[str], explicit: Mapping[str, tuple[str, str]], errors: ErrorList
) -> list[str]:
    """Plugins packsched does not implement: an error where the Policy asked for one, else left out (and
    returned, to be named to the user)."""
    omitted: list[str] = []
    reported: set[str] = set()
    for pset in plugins.sets.values():
        kept = []
        for ref in pset.enabled:
            if ref.name in known:
                kept.append(ref)
            elif ref.name in explicit:
                if ref.name not in reported:
                    where, what = explicit[ref.name]
                    errors.add(where, f'plugin "{ref.name}" ({what}) is not implemented by packsched yet')
                    reported.add(ref.name)
            elif ref.name not in omitted:
                omitted.append(ref.name)
        pset.enabled = kept
    plugins.sets = {p: s for p, s in plugins.sets.items() if s.enabled}
    return omitted


def _policy_plugin_config(profile: Profile, rtcr_args: ScoreOnlyResourceArgs | None, errors: ErrorList) -> None:
    for name in _enabled(profile.plugins):
        if name == REQUESTED_TO_CAPACITY_RATIO:
            if rtcr_args is None:
                errors.add(
                    "priorities",
                    'priority "RequestedToCapacityRatio" has no requestedToCapacityRatioArguments: '
                    "kube-scheduler passes no args to the plugin and fails; name the priority "
                    "RequestedToCapacityRatioPriority and give its arguments",
                )
                continue
            profile.plugin_config[name] = rtcr_args
            continue
        args = pluginargs.default_args(name, catalog.V1BETA1)
        if args is not None:
            profile.plugin_config[name] = args


def _enabled(plugins: Plugins) -> list[str]:
    names: list[str] = []
    for pset in plugins.sets.values():
        names += [p.name for p in pset.enabled]
    return list(dict.fromkeys(names))


def _predicate_key(r: Reader, item: object, path: str) -> str | None:
    data = r.fields(item, path, ("name", "argument"))
    name = r.str(data.get("name"), child(path, "name"))
    argument = None
    if data.get("argument") is not None:
        ap = child(path, "argument")
        argument = r.fields(data.get("argument"), ap, ("serviceAffinity", "labelsPresence"))
        r.fields(argument.get("serviceAffinity"), child(ap, "serviceAffinity"), ("labels",))
        r.fields(argument.get("labelsPresence"), child(ap, "labelsPresence"), ("labels", "presence"))
        count = sum(argument.get(k) is not None for k in ("serviceAffinity", "labelsPresence"))
        if count != 1:
            r.errors.add(ap, f'exactly 1 predicate argument is required, numArgs: {count}, predicate "{name}"')
            return None
    key = "PodFitsHostPorts" if name == "PodFitsPorts" else name  # kept for compatibility upstream
    if key in PREDICATE_PLUGINS:
        return key
    if argument is None:
        r.errors.add(child(path, "name"), f'predicate type not found for "{key}"')
        return None
    return "CheckServiceAffinity" if argument.get("serviceAffinity") is not None else "CheckNodeLabelPresence"


def _decode_priority(r: Reader, item: object, path: str) -> tuple[str, int, dict[str, Any] | None]:
    data = r.fields(item, path, ("name", "weight", "argument"))
    name = r.str(data.get("name"), child(path, "name"))
    weight = pluginargs.read_int(r, data.get("weight"), child(path, "weight"), bits=64) or 0
    argument = None
    if data.get("argument") is not None:
        ap = child(path, "argument")
        argument = r.fields(
            data.get("argument"),
            ap,
            ("serviceAntiAffinity", "labelPreference", "requestedToCapacityRatioArguments"),
        )
        r.fields(argument.get("serviceAntiAffinity"), child(ap, "serviceAntiAffinity"), ("label",))
        r.fields(argument.get("labelPreference"), child(ap, "labelPreference"), ("label", "presence"))
    return name, weight, argument


def _validate_policy_priorities(errors: ErrorList, decoded: list[tuple[str, int, dict[str, Any] | None]]) -> None:
    """ValidatePolicy's priority checks (weights, custom priorities declared twice)."""
    declared: dict[str, tuple[str, int]] = {}
    for i, (name, weight, argument) in enumerate(decoded):
        ip = index("priorities", i)
        if weight <= 0 or weight >= MAX_WEIGHT:
            errors.add(
                child(ip, "weight"),
                f"priority {name} should have a positive weight applied to it or it has overflown",
            )
        if argument is None:
            continue
        if argument.get("labelPreference") is not None or argument.get("serviceAntiAffinity") is not None:
            kind = "LabelPreference" if argument.get("labelPreference") is not None else "ServiceAntiAffinity"
            if kind in declared and declared[kind][1] != weight:
                errors.add(ip, f'{kind}  priority "{name}" has a different weight with "{declared[kind][0]}"')
            declared[kind] = (name, weight)
        elif argument.get("requestedToCapacityRatioArguments") is not None:
            if "RequestedToCapacityRatio" in declared:
                first = declared["RequestedToCapacityRatio"][0]
                errors.add(
                    ip,
                    f'priority "{name}" redeclares custom priority "RequestedToCapacityRatio", from: "{first}"',
                )
            declared["RequestedToCapacityRatio"] = (name, weight)
        else:
            errors.add(child(ip, "argument"), f"no priority arguments set for priority {name}")


def _priority_key(errors: ErrorList, name: str, argument: dict[str, Any] | None, path: str) -> str | None:
    if argument is not None:
        kinds = ("serviceAntiAffinity", "labelPreference", "requestedToCapacityRatioArguments")
        count = sum(argument.get(k) is not None for k in kinds)
        if count != 1:
            if count > 1:
                errors.add(
                    child(path, "argument"),
                    f'exactly 1 priority argument is required, numArgs: {count}, priority "{name}"',
                )
            return None  # count == 0 was reported by the policy validation
    key = "SelectorSpreadPriority" if name == "ServiceSpreadingPriority" else name
    if key in PRIORITY_PLUGINS:
        if key == REQUESTED_TO_CAPACITY_RATIO and argument is not None:
            errors.add(
                child(path, "name"),
                'a priority named "RequestedToCapacityRatio" selects the plugin directly and kube-scheduler '
                "(v1.18-v1.22) drops its arguments; name it RequestedToCapacityRatioPriority",
            )
            return None
        return key
    if argument is None:
        errors.add(child(path, "name"), f'priority type not found for "{key}"')
        return None
    if argument.get("serviceAntiAffinity") is not None:
        return "ServiceAffinity"
    if argument.get("labelPreference") is not None:
        return "NodeLabel"
    return REQUESTED_TO_CAPACITY_RATIO  # the plugin name is forced, whatever the priority is called


def _rtcr_args(r: Reader, raw: object, path: str, semantics: str, warnings: list[str]) -> ScoreOnlyResourceArgs:
    ap = child(path, "requestedToCapacityRatioArguments")
    data = r.fields(raw, ap, ("shape", "resources"))
    shape = pluginargs.decode_shape(r, data.get("shape"), child(ap, "shape"))
    resources: list[ResourceSpec] = []
    rp = child(ap, "resources")
    for i, item in enumerate(r.list(data.get("resources"), rp)):
        ip = index(rp, i)
        entry = r.fields(item, ip, ("name", "resource", "weight"))
        by_name = r.str(entry.get("name"), child(ip, "name"))
        by_resource = r.str(entry.get("resource"), child(ip, "resource"))
        if by_name and by_resource and by_name != by_resource:
            r.errors.add(ip, invalid(by_resource, f'"resource" (the KEP draft key) and "name" differ ("{by_name}")'))
        name = by_name or by_resource
        if not name:
            r.errors.add(child(ip, "name"), required())
        weight = pluginargs.read_int(r, entry.get("weight"), child(ip, "weight"), bits=64) or 0
        if weight == 0:
            weight = DEFAULT_RESOURCE_WEIGHT
        elif weight < 0:
            warnings.append(
                f"{child(ip, 'weight')}: resource {name} weight {weight} must not be less than 1 "
                "(kube-scheduler only logged this; the weight is used as written)"
            )
        resources.append(ResourceSpec(name, weight))
    if not resources:
        resources = [ResourceSpec(name, weight) for name, weight in DEFAULT_LEGACY_RTCR_RESOURCES]
    msg = pluginargs.shape_first_error(shape, legacy_v116=semantics == SEMANTICS_V1_16)
    if msg:
        r.errors.add(ap, msg)
    strategy = ScoringStrategy(REQUESTED_TO_CAPACITY_RATIO, resources, RequestedToCapacityRatioParam(shape))
    return ScoreOnlyResourceArgs(strategy)
