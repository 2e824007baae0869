"""Every default of the configuration, written once (upstream: ``pkg/scheduler/apis/config/v1/defaults.go`` and
the plugins' ``SetDefaults_*Args``). The types, the decoders, the plugins and the scheduling queue use these
names; no other module writes the numbers."""

from __future__ import annotations

from packsched.api.objects import DEFAULT_SCHEDULER_NAME

__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "DEFAULT_PARALLELISM",
    "DEFAULT_POD_INITIAL_BACKOFF_SECONDS",
    "DEFAULT_POD_MAX_BACKOFF_SECONDS",
    "DEFAULT_SCHEDULER_NAME",
]

# KubeSchedulerConfiguration
DEFAULT_PARALLELISM = 16
DEFAULT_POD_INITIAL_BACKOFF_SECONDS = 1
DEFAULT_POD_MAX_BACKOFF_SECONDS = 10
# clientConnection's defaults in kube-scheduler's v1 configuration (SetDefaults_KubeSchedulerConfiguration)
DEFAULT_CLIENT_QPS = 50.0
DEFAULT_CLIENT_BURST = 100

# DefaultPreemptionArgs
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
