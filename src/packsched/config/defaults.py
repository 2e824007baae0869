"""Every default of the configuration, written once (upstream: ``pkg/scheduler/apis/config/v1/defaults.go``,
componentbaseconfig's ``RecommendedDefaultLeaderElectionConfiguration`` and the plugins' ``SetDefaults_*Args``;
packsched's own plugins' args at the end). The types, the decoders, the plugins, the scheduling queue, the live
client and the simulator's policies use these names; no other module writes the numbers
(tests/test_guard_rails.py checks it)."""

from __future__ import annotations

from packsched.api.gpushare import MILLI
from packsched.api.objects import DEFAULT_SCHEDULER_NAME, SCHEDULE_ANYWAY, TopologySpreadConstraint

__all__ = [
    "DEFAULT_CLIENT_BURST",
    "DEFAULT_CLIENT_QPS",
    "DEFAULT_FGD_PACK_DEMAND_EXPONENT",
    "DEFAULT_FGD_PACK_DEMAND_FLOOR_MILLI",
    "DEFAULT_FGD_PACK_RESOLUTION",
    "DEFAULT_FGD_PACK_SIGMOID_SCALE",
    "DEFAULT_FGD_PACK_WEIGHT",
    "DEFAULT_HARD_POD_AFFINITY_WEIGHT",
    "DEFAULT_LEADER_ELECT",
    "DEFAULT_LEASE_DURATION_SECONDS",
    "DEFAULT_LEASE_NAME",
    "DEFAULT_LEASE_NAMESPACE",
    "DEFAULT_LEGACY_RTCR_RESOURCES",
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "DEFAULT_PARALLELISM",
    "DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE",
    "DEFAULT_POD_INITIAL_BACKOFF_SECONDS",
    "DEFAULT_POD_MAX_BACKOFF_SECONDS",
    "DEFAULT_RENEW_DEADLINE_SECONDS",
    "DEFAULT_RESOURCES",
    "DEFAULT_RESOURCE_LOCK",
    "DEFAULT_RESOURCE_WEIGHT",
    "DEFAULT_RETRY_PERIOD_SECONDS",
    "DEFAULT_SCHEDULER_NAME",
    "SYSTEM_DEFAULT_CONSTRAINTS",
]

# KubeSchedulerConfiguration
DEFAULT_PARALLELISM = 16
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0  # adaptive (the pointer is defaulted to 0)
DEFAULT_POD_INITIAL_BACKOFF_SECONDS = 1
DEFAULT_POD_MAX_BACKOFF_SECONDS = 10
# clientConnection's defaults in kube-scheduler's v1 configuration (SetDefaults_KubeSchedulerConfiguration; a bare
# client-go rest.Config would have 5 and 10)
DEFAULT_CLIENT_QPS = 50.0
DEFAULT_CLIENT_BURST = 100
# leaderElection (durations in seconds): componentbaseconfig's recommended defaults, with kube-scheduler's lease
DEFAULT_LEADER_ELECT = True
DEFAULT_LEASE_DURATION_SECONDS = 15.0
DEFAULT_RENEW_DEADLINE_SECONDS = 10.0
DEFAULT_RETRY_PERIOD_SECONDS = 2.0
DEFAULT_RESOURCE_LOCK = "leases"
DEFAULT_LEASE_NAME = "kube-scheduler"
DEFAULT_LEASE_NAMESPACE = "kube-system"

# DefaultPreemptionArgs
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100

# VolumeBindingArgs: bindTimeoutSeconds when none is given; the shape when StorageCapacityScoring is on and none is
# given, (utilization, score on 0..10): emptier nodes' volumes score higher.
DEFAULT_BIND_TIMEOUT_SECONDS = 600
# DynamicResourcesArgs (DynamicResourcesFilterTimeoutDefault, DynamicResourcesBindingTimeoutDefault), in seconds
DEFAULT_DRA_FILTER_TIMEOUT_S = 10.0
DEFAULT_DRA_BINDING_TIMEOUT_S = 600.0
DEFAULT_VOLUME_BINDING_SHAPE = ((0, 10), (100, 0))

# InterPodAffinityArgs
DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1

# NodeResourcesFitArgs' scoringStrategy.resources and NodeResourcesBalancedAllocationArgs' resources when none is
# given, (name, weight); a given resource of weight 0 gets DEFAULT_RESOURCE_WEIGHT.
DEFAULT_RESOURCES = (("cpu", 1), ("memory", 1))
DEFAULT_RESOURCE_WEIGHT = 1
# The legacy Policy's RequestedToCapacityRatioPriority without resources (v1.18-v1.22 legacy registry).
DEFAULT_LEGACY_RTCR_RESOURCES = (("memory", 1), ("cpu", 1))

# PodTopologySpreadArgs with defaultingType System: kube-scheduler's built-in default constraints.
SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(3, "kubernetes.io/hostname", SCHEDULE_ANYWAY),
    TopologySpreadConstraint(5, "topology.kubernetes.io/zone", SCHEDULE_ANYWAY),
)

# FGDPackScore's args (packsched's plugin, issue 14; the fields are described in plugins/fgdpack/fgd_pack.py).
DEFAULT_FGD_PACK_RESOLUTION = "hybrid"
DEFAULT_FGD_PACK_WEIGHT = 2.0  # chosen on seeds 42-44 of the default trace (bench/RESULTS.md, issue 14)
DEFAULT_FGD_PACK_SIGMOID_SCALE = float(MILLI)  # milli-GPU: one whole GPU
DEFAULT_FGD_PACK_DEMAND_EXPONENT = 0.0
# A shape asking for less GPU than this (a CPU-only one: none) counts as asking this much (TargetWorkload.discounted).
DEFAULT_FGD_PACK_DEMAND_FLOOR_MILLI = 100
