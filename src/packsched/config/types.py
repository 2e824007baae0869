"""Internal configuration types: what every config format (v1, v1beta3, v1beta2, v1beta1, legacy Policy) becomes
after decoding, defaulting and conversion. The framework and the plugins read only these."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from packsched.api.objects import NodeAffinity, TopologySpreadConstraint
from packsched.config.defaults import (
    DEFAULT_BIND_TIMEOUT_SECONDS,
    DEFAULT_CLIENT_BURST,
    DEFAULT_CLIENT_QPS,
    DEFAULT_HARD_POD_AFFINITY_WEIGHT,
    DEFAULT_LEADER_ELECT,
    DEFAULT_LEASE_DURATION_SECONDS,
    DEFAULT_LEASE_NAME,
    DEFAULT_LEASE_NAMESPACE,
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DEFAULT_PARALLELISM,
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    DEFAULT_RENEW_DEADLINE_SECONDS,
    DEFAULT_RESOURCE_LOCK,
    DEFAULT_RESOURCE_WEIGHT,
    DEFAULT_RETRY_PERIOD_SECONDS,
    DEFAULT_SCHEDULER_NAME,
)
from packsched.config.versions import (
    DEFAULT as DEFAULT_KUBE_VERSION,
)
from packsched.config.versions import SEMANTICS_CURRENT as SEMANTICS_CURRENT
from packsched.config.versions import SEMANTICS_V1_16 as SEMANTICS_V1_16
from packsched.config.versions import SEMANTICS_V1_17 as SEMANTICS_V1_17
from packsched.config.versions import KubeVersion

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

# How RequestedToCapacityRatio scores are computed (spec requested-to-capacity-ratio.md §1, §6): defined with the
# kube-scheduler versions that decide them (config/versions.py).
RTCR_SEMANTICS = (SEMANTICS_CURRENT, SEMANTICS_V1_17, SEMANTICS_V1_16)


@dataclass
class ResourceSpec:
    name: str
    weight: int = DEFAULT_RESOURCE_WEIGHT


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


SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"


@dataclass
class PodTopologySpreadArgs:
    """``defaultConstraints`` apply to pods that have no constraints of their own and that a Service,
    ReplicationController, ReplicaSet or StatefulSet selects; ``defaultingType`` System uses kube-scheduler's
    built-in ones instead (and then no list may be given)."""

    default_constraints: list[TopologySpreadConstraint] = field(default_factory=list)
    defaulting_type: str = ""  # "" until defaulted


@dataclass
class InterPodAffinityArgs:
    """hardPodAffinityWeight (0..100, default 1): the score weight of existing pods' required affinity terms that
    the incoming pod matches. ignorePreferredTermsOfExistingPods (v1.26+): unless the incoming pod has preferred
    terms of its own, existing pods' terms are not scored."""

    hard_pod_affinity_weight: int = DEFAULT_HARD_POD_AFFINITY_WEIGHT
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass
class ScoreOnlyResourceArgs:
    """v1beta1 NodeResourcesLeastAllocated / NodeResourcesMostAllocated / RequestedToCapacityRatio plugins:
    converted to a scoring strategy that a score-only plugin of that name runs."""

    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


@dataclass
class VolumeBindingArgs:
    """bindTimeoutSeconds (>= 0, default 600): how long PreBind waits for the volumes to be bound (packsched's
    simulator binds them at once). shape: how VolumeBinding scores a node by the utilisation of the volumes it
    would use there; only with StorageCapacityScoring on (1.37+), which defaults it to 10 at 0 %, 0 at 100 %.
    None: not given."""

    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS
    shape: list[UtilizationShapePoint] | None = None


@dataclass
class DynamicResourcesArgs:
    """Upstream's DynamicResourcesArgs, in seconds (None: not given, or not defaulted at this release):
    ``filterTimeout`` (with DRASchedulerFilterTimeout, beta and on from 1.34: default 10 s, 0 for no limit; a
    limit on one node's allocation in Filter, which packsched's allocator does not time: accepted, not used) and
    ``bindingTimeout`` (from 1.35, with DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on: default
    600 s, at least 1 s; how long PreBind waits for devices' binding conditions)."""

    filter_timeout: float | None = None
    binding_timeout: float | None = None


# A plugin's args after decoding: one of the typed *Args above, or the plain map of a plugin that reads its own
# args (packsched's GPU plugins).
TypedPluginArgs: TypeAlias = (
    NodeResourcesFitArgs
    | NodeResourcesBalancedAllocationArgs
    | DefaultPreemptionArgs
    | NodeAffinityArgs
    | InterPodAffinityArgs
    | PodTopologySpreadArgs
    | ScoreOnlyResourceArgs
    | VolumeBindingArgs
    | DynamicResourcesArgs
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

    leader_elect: bool = DEFAULT_LEADER_ELECT
    lease_duration_s: float = DEFAULT_LEASE_DURATION_SECONDS
    renew_deadline_s: float = DEFAULT_RENEW_DEADLINE_SECONDS
    retry_period_s: float = DEFAULT_RETRY_PERIOD_SECONDS
    resource_lock: str = DEFAULT_RESOURCE_LOCK
    resource_name: str = DEFAULT_LEASE_NAME
    resource_namespace: str = DEFAULT_LEASE_NAMESPACE


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
    # Not an upstream field: which kube-scheduler release to imitate (--kube-version, or the config file's
    # PackschedConfiguration document; docs/reference/semantics.md).
    kube_version: KubeVersion = DEFAULT_KUBE_VERSION

    def profile(self, scheduler_name: str) -> Profile | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None
