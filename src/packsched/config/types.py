"""Internal configuration types: what every config format (v1, v1beta3, v1beta2, v1beta1, legacy Policy) becomes
after decoding, defaulting and conversion. The framework and the plugins read only these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from packsched.api.objects import NodeAffinity
from packsched.config.defaults import (
    DEFAULT_CLIENT_BURST,
    DEFAULT_CLIENT_QPS,
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DEFAULT_PARALLELISM,
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    DEFAULT_SCHEDULER_NAME,
)

# Extension points, in the order a scheduling cycle visits them.
EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

# How RequestedToCapacityRatio scores are computed (spec requested-to-capacity-ratio.md §1, §6).
SEMANTICS_CURRENT = "current"  # v1.22+: 0..100, floor utilisation, skips (the default)
SEMANTICS_V1_17 = "v1.17"  # v1.17-v1.21: shape x10, ceil utilisation, no skips
SEMANTICS_V1_16 = "v1.16"  # v1.16: 0..10 unscaled shape, ceil utilisation, no skips
RTCR_SEMANTICS = (SEMANTICS_CURRENT, SEMANTICS_V1_17, SEMANTICS_V1_16)


@dataclass
class ResourceSpec:
    name: str
    weight: int = 1


@dataclass
class UtilizationShapePoint:
    utilization: int
    score: int


@dataclass
class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] = field(default_factory=list)


@dataclass
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: list[ResourceSpec] = field(default_factory=list)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None
    # Not an upstream field: which release's RequestedToCapacityRatio arithmetic to use (see SEMANTICS_*).
    semantics: str = SEMANTICS_CURRENT


@dataclass
class NodeResourcesFitArgs:
    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: ScoringStrategy | None = None


@dataclass
class NodeResourcesBalancedAllocationArgs:
    resources: list[ResourceSpec] = field(default_factory=list)


@dataclass
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE


@dataclass
class NodeAffinityArgs:
    added_affinity: NodeAffinity | None = None


@dataclass
class ScoreOnlyResourceArgs:
    """v1beta1 NodeResourcesLeastAllocated / NodeResourcesMostAllocated / RequestedToCapacityRatio plugins:
    converted to a scoring strategy that a score-only plugin of that name runs."""

    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


# A plugin's args after decoding: one of the typed *Args above, or the plain map of a plugin that reads its own
# args (packsched's GPU plugins).
TypedPluginArgs: TypeAlias = (
    NodeResourcesFitArgs
    | NodeResourcesBalancedAllocationArgs
    | DefaultPreemptionArgs
    | NodeAffinityArgs
    | ScoreOnlyResourceArgs
)
PluginArgs: TypeAlias = TypedPluginArgs | dict[str, Any]


@dataclass
class PluginRef:
    name: str
    weight: int = 0  # 0 = not set; the framework uses 1 for an enabled score plugin


@dataclass
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[PluginRef] = field(default_factory=list)


@dataclass
class Plugins:
    """Per extension point (``EXTENSION_POINTS``) plus ``multiPoint``."""

    sets: dict[str, PluginSet] = field(default_factory=dict)
    multi_point: PluginSet = field(default_factory=PluginSet)

    def at(self, point: str) -> PluginSet:
        return self.sets.setdefault(point, PluginSet())


@dataclass
class Profile:
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    plugins: Plugins = field(default_factory=Plugins)
    plugin_config: dict[str, PluginArgs] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    # Default plugins upstream enables that packsched does not implement; dropped from this profile and shown
    # to the user (never silently) by validate and explain.
    omitted_default_plugins: list[str] = field(default_factory=list)


@dataclass
class LeaderElection:
    """componentbaseconfig.LeaderElectionConfiguration with kube-scheduler's defaults (durations in seconds).
    Only ``packsched serve`` uses it."""

    leader_elect: bool = True
    lease_duration_s: float = 15.0
    renew_deadline_s: float = 10.0
    retry_period_s: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass
class KubeSchedulerConfiguration:
    profiles: list[Profile] = field(default_factory=list)
    percentage_of_nodes_to_score: int | None = None  # None/0 = adaptive
    pod_initial_backoff_seconds: int = DEFAULT_POD_INITIAL_BACKOFF_SECONDS
    pod_max_backoff_seconds: int = DEFAULT_POD_MAX_BACKOFF_SECONDS
    parallelism: int = DEFAULT_PARALLELISM
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    kubeconfig: str = ""  # clientConnection.kubeconfig
    # clientConnection.qps and .burst: the client's token bucket (kube-scheduler's defaults; qps < 0: no limit)
    client_qps: float = DEFAULT_CLIENT_QPS
    client_burst: int = DEFAULT_CLIENT_BURST
    # Where it came from: "kubescheduler.config.k8s.io/v1", ..., "Policy", or "default".
    source_version: str = "default"
    source_file: str = ""
    # Non-fatal findings (traps, notes) collected while loading; `validate` prints them.
    warnings: list[str] = field(default_factory=list)

    def profile(self, scheduler_name: str) -> Profile | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None
