"""Defaults written once (packsched.config.defaults) and DefaultPreemptionArgs' validation for args built in
code."""

from __future__ import annotations

import pytest

from packsched.backend.queue import SchedulingQueue
from packsched.config import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DEFAULT_PARALLELISM,
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    default_config,
    default_preemption_args_errors,
    defaults,
    load_config_data,
)
from packsched.config.types import DefaultPreemptionArgs, InterPodAffinityArgs, LeaderElection
from packsched.plugins.registry import in_tree_registry


def test_the_defaults_are_upstreams() -> None:
    """pkg/scheduler/apis/config/v1/defaults.go, componentbaseconfig's leader election and the plugins' args."""
    assert (DEFAULT_POD_INITIAL_BACKOFF_SECONDS, DEFAULT_POD_MAX_BACKOFF_SECONDS) == (1, 10)
    assert (DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE, DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE) == (10, 100)
    assert DEFAULT_PARALLELISM == 16
    assert defaults.DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE == 0
    assert (defaults.DEFAULT_CLIENT_QPS, defaults.DEFAULT_CLIENT_BURST) == (50, 100)
    lease = (
        defaults.DEFAULT_LEADER_ELECT,
        defaults.DEFAULT_LEASE_DURATION_SECONDS,
        defaults.DEFAULT_RENEW_DEADLINE_SECONDS,
        defaults.DEFAULT_RETRY_PERIOD_SECONDS,
        defaults.DEFAULT_RESOURCE_LOCK,
        defaults.DEFAULT_LEASE_NAMESPACE,
        defaults.DEFAULT_LEASE_NAME,
    )
    assert lease == (True, 15, 10, 2, "leases", "kube-system", "kube-scheduler")
    assert defaults.DEFAULT_HARD_POD_AFFINITY_WEIGHT == 1
    assert defaults.DEFAULT_RESOURCES == (("cpu", 1), ("memory", 1)) and defaults.DEFAULT_RESOURCE_WEIGHT == 1
    assert defaults.DEFAULT_LEGACY_RTCR_RESOURCES == (("memory", 1), ("cpu", 1))
    assert [(c.max_skew, c.topology_key, c.when_unsatisfiable) for c in defaults.SYSTEM_DEFAULT_CONSTRAINTS] == [
        (3, "kubernetes.io/hostname", "ScheduleAnyway"),
        (5, "topology.kubernetes.io/zone", "ScheduleAnyway"),
    ]


def test_the_types_and_the_decoders_take_them() -> None:
    known = set(in_tree_registry())
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    decoded = load_config_data(doc, "cfg.yaml", known)
    assert decoded.leader_election == LeaderElection()
    assert (decoded.client_qps, decoded.client_burst) == (50, 100)
    assert decoded.percentage_of_nodes_to_score == 0
    assert decoded.profiles[0].plugin_config["InterPodAffinity"] == InterPodAffinityArgs(1, False)
    assert InterPodAffinityArgs().hard_pod_affinity_weight == 1


def test_every_place_uses_the_same_defaults() -> None:
    known = set(in_tree_registry())
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    decoded = load_config_data(doc, "cfg.yaml", known)
    for cfg in (decoded, default_config(known)):
        assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
        assert cfg.parallelism == 16
    assert decoded.profiles[0].plugin_config["DefaultPreemption"] == DefaultPreemptionArgs(10, 100)
    assert DefaultPreemptionArgs() == DefaultPreemptionArgs(10, 100)
    queue = SchedulingQueue(lambda p: (0,))
    assert (queue.initial_backoff, queue.max_backoff) == (1, 10)


@pytest.mark.parametrize(
    ("pct", "absolute", "expected"),
    [
        (10, 100, []),
        (0, 1, []),
        (100, 0, []),
        (101, 1, ["minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"]),
        (-1, 1, ["minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"]),
        (10, -1, ["minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"]),
        (
            101,
            -1,
            [
                "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
                "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
            ],
        ),
        (
            0,
            0,
            [
                "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesAbsolute",
                "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesPercentage",
            ],
        ),
    ],
)
def test_default_preemption_args_errors(pct: int, absolute: int, expected: list[str]) -> None:
    """The messages of upstream's ValidateDefaultPreemptionArgs, as the plugin reports them for args built in
    code."""
    assert default_preemption_args_errors(DefaultPreemptionArgs(pct, absolute)) == expected
