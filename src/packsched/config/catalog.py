"""What kube-scheduler itself knows about its plugins, per configuration version: the in-tree plugin names,
the default plugins and weights of every API version, the plugins each version rejects, and which plugins
score.

Sources (kubernetes/kubernetes): ``pkg/scheduler/apis/config/<version>/default_plugins.go``,
``pkg/scheduler/apis/config/validation/validation.go`` and ``pkg/scheduler/framework/plugins/names``. Where
the lists changed between the releases that served one API version, the release chosen is named next to the
list.
"""

from __future__ import annotations

from typing import Final

from packsched.config.versions import KubeVersion

GROUP: Final = "kubescheduler.config.k8s.io"
V1: Final = f"{GROUP}/v1"
V1BETA3: Final = f"{GROUP}/v1beta3"
V1BETA2: Final = f"{GROUP}/v1beta2"
V1BETA1: Final = f"{GROUP}/v1beta1"
API_VERSIONS: Final = (V1, V1BETA3, V1BETA2, V1BETA1)

# Every plugin name kube-scheduler has shipped in-tree since v1.18 (pkg/scheduler/framework/plugins/names
# and the plugins removed since). A name outside this set "does not exist" (packsched runs no out-of-tree
# plugins).
UPSTREAM_PLUGINS: Final = frozenset(
    {
        "PrioritySort",
        "SchedulingGates",
        "NodeUnschedulable",
        "NodeName",
        "NodePorts",
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "DefaultPreemption",
        "DefaultBinder",
        "VolumeRestrictions",
        "VolumeBinding",
        "VolumeZone",
        "NodeVolumeLimits",
        "EBSLimits",
        "GCEPDLimits",
        "AzureDiskLimits",
        "CinderLimits",
        "PodTopologySpread",
        "InterPodAffinity",
        "ImageLocality",
        "DynamicResources",
        "GangScheduling",
        "SelectorSpread",
        "DefaultPodTopologySpread",
        "NodeLabel",
        "ServiceAffinity",
        "NodePreferAvoidPods",
        "NodeResourcesLeastAllocated",
        "NodeResourcesMostAllocated",
        "RequestedToCapacityRatio",
        "NodeResourceLimits",
    }
)

# Plugins that implement Score upstream (used for weights, the overflow check and the lint).
SCORE_PLUGINS: Final = frozenset(
    {
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "InterPodAffinity",
        "PodTopologySpread",
        "DynamicResources",
        "VolumeBinding",
        "SelectorSpread",
        "DefaultPodTopologySpread",
        "NodeLabel",
        "ServiceAffinity",
        "NodePreferAvoidPods",
        "NodeResourcesLeastAllocated",
        "NodeResourcesMostAllocated",
        "RequestedToCapacityRatio",
        "NodeResourceLimits",
    }
)

Entry = tuple[str, int]  # (plugin name, weight; 0 = not set)

# v1 (v1.34 with default feature gates: the non-CSI volume-limit plugins left the defaults in v1.31
# (PR #124500), DynamicResources joins before DefaultPreemption since DRA is on by default, with weight 2 as
# upstream's applyDynamicResources gives it: 1.35.4-1.37.2's source, and their recorded score_plugin_weights).
V1_DEFAULT_MULTIPOINT: Final[tuple[Entry, ...]] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)

_IN_TREE_VOLUME_LIMITS: Final = {
    "VolumeRestrictions": ("EBSLimits", "GCEPDLimits"),
    "NodeVolumeLimits": ("AzureDiskLimits",),
}


def default_multipoint(api_version: str, version: KubeVersion) -> tuple[Entry, ...]:
    """The multiPoint defaults of v1 or v1beta3 as the kube-scheduler release ``version`` builds them with its
    default feature gates: SchedulingGates from 1.27 (PodSchedulingReadiness beta), the in-tree volume-limit
    plugins until 1.30 (kubernetes#124500), DynamicResources from 1.34 (DRA GA), and GangScheduling appended last
    when its feature gate is on (``KubeVersion.gang_scheduling_default``; upstream applyFeatureGates). The lists
    above are the newest releases' ones; where upstream appended a plugin at the end instead, packsched keeps the
    order above (only PreEnqueue, where SchedulingGates is alone, could tell)."""
    base = V1_DEFAULT_MULTIPOINT if api_version == V1 else V1BETA3_DEFAULT_MULTIPOINT
    out: list[Entry] = []
    for name, weight in base:
        if name == "SchedulingGates" and not version.scheduling_gates:
            continue
        if name == "DynamicResources" and not version.dynamic_resources_default:
            continue
        out.append((name, weight))
        if api_version == V1 and version.in_tree_volume_limit_plugins:
            out += [(extra, 0) for extra in _IN_TREE_VOLUME_LIMITS.get(name, ())]
    if api_version == V1 and version.gang_scheduling_default:
        out.append(("GangScheduling", 0))
    return tuple(out)


# v1beta3 (its last releases, v1.27-v1.28: PodSchedulingReadiness is on, so SchedulingGates is appended).
V1BETA3_DEFAULT_MULTIPOINT: Final[tuple[Entry, ...]] = (
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("EBSLimits", 0),
    ("GCEPDLimits", 0),
    ("NodeVolumeLimits", 0),
    ("AzureDiskLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
    ("SchedulingGates", 0),
)

# v1beta2 (v1.22, its first release; VolumeCapacityPriority off).
V1BETA2_DEFAULTS: Final[dict[str, tuple[Entry, ...]]] = {
    "queueSort": (("PrioritySort", 0),),
    "preFilter": (
        ("NodeResourcesFit", 0),
        ("NodePorts", 0),
        ("VolumeRestrictions", 0),
        ("PodTopologySpread", 0),
        ("InterPodAffinity", 0),
        ("VolumeBinding", 0),
        ("NodeAffinity", 0),
    ),
    "filter": (
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 0),
        ("NodeAffinity", 0),
        ("NodePorts", 0),
        ("NodeResourcesFit", 0),
        ("VolumeRestrictions", 0),
        ("EBSLimits", 0),
        ("GCEPDLimits", 0),
        ("NodeVolumeLimits", 0),
        ("AzureDiskLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 0),
        ("InterPodAffinity", 0),
    ),
    "postFilter": (("DefaultPreemption", 0),),
    "preScore": (
        ("InterPodAffinity", 0),
        ("PodTopologySpread", 0),
        ("TaintToleration", 0),
        ("NodeAffinity", 0),
    ),
    "score": (
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("InterPodAffinity", 1),
        ("NodeResourcesFit", 1),
        ("NodeAffinity", 1),
        ("PodTopologySpread", 2),
        ("TaintToleration", 1),
    ),
    "reserve": (("VolumeBinding", 0),),
    "preBind": (("VolumeBinding", 0),),
    "bind": (("DefaultBinder", 0),),
}

# v1beta1 (v1.21-v1.22 with DefaultPodTopologySpread on, so no SelectorSpread; VolumeCapacityPriority off).
V1BETA1_DEFAULTS: Final[dict[str, tuple[Entry, ...]]] = {
    "queueSort": (("PrioritySort", 0),),
    "preFilter": (
        ("NodeResourcesFit", 0),
        ("NodePorts", 0),
        ("PodTopologySpread", 0),
        ("InterPodAffinity", 0),
        ("VolumeBinding", 0),
        ("NodeAffinity", 0),
    ),
    "filter": (
        ("NodeUnschedulable", 0),
        ("NodeName", 0),
        ("TaintToleration", 0),
        ("NodeAffinity", 0),
        ("NodePorts", 0),
        ("NodeResourcesFit", 0),
        ("VolumeRestrictions", 0),
        ("EBSLimits", 0),
        ("GCEPDLimits", 0),
        ("NodeVolumeLimits", 0),
        ("AzureDiskLimits", 0),
        ("VolumeBinding", 0),
        ("VolumeZone", 0),
        ("PodTopologySpread", 0),
        ("InterPodAffinity", 0),
    ),
    "postFilter": (("DefaultPreemption", 0),),
    "preScore": (
        ("InterPodAffinity", 0),
        ("PodTopologySpread", 0),
        ("TaintToleration", 0),
        ("NodeAffinity", 0),
    ),
    "score": (
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("InterPodAffinity", 1),
        ("NodeResourcesLeastAllocated", 1),
        ("NodeAffinity", 1),
        ("NodePreferAvoidPods", 10000),
        ("PodTopologySpread", 2),
        ("TaintToleration", 1),
    ),
    "reserve": (("VolumeBinding", 0),),
    "preBind": (("VolumeBinding", 0),),
    "bind": (("DefaultBinder", 0),),
}

# Plugins a configuration version rejects, with the version that dropped them and the verb upstream used:
# v1.22-v1.30 validation.go said "was removed in version" (list kept from v1beta2 on); v1.31+ says "was
# invalid in version" for the non-CSI volume-limit plugins under v1.
_REMOVED_IN_V1BETA2: Final = (
    "NodeLabel",
    "ServiceAffinity",
    "NodePreferAvoidPods",
    "NodeResourcesLeastAllocated",
    "NodeResourcesMostAllocated",
    "RequestedToCapacityRatio",
)
_INVALID_IN_V1: Final = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


def rejected_plugin(api_version: str, name: str) -> str | None:
    """The upstream validation detail when ``name`` may not be used under ``api_version``, else None."""
    if api_version == V1BETA1:
        return None
    if name in _REMOVED_IN_V1BETA2:
        return f'was removed in version "{V1BETA2}" (KubeSchedulerConfiguration is version "{api_version}")'
    if api_version == V1 and name in _INVALID_IN_V1:
        return f'was invalid in version "{V1}" (KubeSchedulerConfiguration is version "{api_version}")'
    return None


# The Go interface name of each extension point, as framework errors print it.
POINT_INTERFACE: Final = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}

# Score upstream adds up: MaxNodeScore per plugin times its weight must stay below MaxTotalScore (max int64).
MAX_NODE_SCORE: Final = 100
MAX_TOTAL_SCORE: Final = 2**63 - 1
