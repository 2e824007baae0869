"""Prometheus metrics under kube-scheduler's names, on a registry of our own."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"
ERROR = "error"
WAITING_ON_PREEMPTION = "waiting_on_preemption"  # a pod group's attempt that preempted and waits for the victims

CONTENT_TYPE = CONTENT_TYPE_LATEST


def _exponential(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


class Metrics:
    """``pod_groups``: kube-scheduler 1.36+ with GenericWorkload on, where upstream registers its pod-group metrics
    (``scheduler_podgroup_*``); they are absent otherwise, as there."""

    def __init__(self, pod_groups: bool = False) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
            "scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"],
            registry=r,
        )
        self.attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"],
            buckets=_exponential(0.001, 2, 15),
            registry=r,
        )
        self.pending_pods = Gauge(
            "scheduler_pending_pods",
            "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' "
            "means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods; "
            "'gated' is the number of unschedulable pods that the scheduling gates keep back.",
            ["queue"],
            registry=r,
        )
        self.preemption_attempts = Counter(
            "scheduler_preemption_attempts", "Total preemption attempts in the cluster till now", registry=r
        )
        self.preemption_victims = Histogram(
            "scheduler_preemption_victims",
            "Number of selected preemption victims",
            buckets=_exponential(1, 2, 7),
            registry=r,
        )
        self.permit_wait = Histogram(
            "scheduler_permit_wait_duration_seconds",
            "Duration of waiting on permit.",
            ["result"],
            buckets=_exponential(0.001, 2, 15),
            registry=r,
        )
        self.pod_group_attempts: Counter | None = None
        self.pod_group_attempt_duration: Histogram | None = None
        self.pod_group_algorithm_duration: Histogram | None = None
        if pod_groups:
            self.pod_group_attempts = Counter(
                "scheduler_podgroup_schedule_attempts",
                "Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod group could "
                "not be scheduled, while 'error' means an internal scheduler problem.",
                ["result", "profile"],
                registry=r,
            )
            self.pod_group_attempt_duration = Histogram(
                "scheduler_podgroup_scheduling_attempt_duration_seconds",
                "Pod group scheduling attempt latency in seconds",
                ["result", "profile"],
                buckets=_exponential(0.001, 2, 15),
                registry=r,
            )
            self.pod_group_algorithm_duration = Histogram(
                "scheduler_podgroup_scheduling_algorithm_duration_seconds",
                "Pod group scheduling algorithm latency in seconds",
                buckets=_exponential(0.001, 2, 15),
                registry=r,
            )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
            "master. 'name' is the string used to identify the lease.",
            ["name"],
            registry=r,
        )
        self.bind_conflicts = Counter(
            "packsched_binding_conflicts",
            "Bindings the API server refused with 409 Conflict (the pod was bound by someone else meanwhile)",
            registry=r,
        )
        # per ElasticQuota and resource: min, max (absent when unbounded) and used as CapacityScheduling counts it
        self.quota_min = Gauge(
            "packsched_elasticquota_min",
            "ElasticQuota min per resource (effective bound, scheduler units)",
            ["namespace", "name", "resource"],
            registry=r,
        )
        self.quota_max = Gauge(
            "packsched_elasticquota_max",
            "ElasticQuota max per resource (effective bound; absent when unbounded)",
            ["namespace", "name", "resource"],
            registry=r,
        )
        self.quota_used = Gauge(
            "packsched_elasticquota_used",
            "Requests of the quota's pods bound (or being bound) to nodes, as CapacityScheduling counts them",
            ["namespace", "name", "resource"],
            registry=r,
        )
        self.relists = Counter(
            "packsched_informer_relists",
            "Lists after a watch's resourceVersion expired (410 Gone)",
            ["resource"],
            registry=r,
        )

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
