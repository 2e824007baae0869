"""A synthetic workload of GPU training jobs, for comparing gang-aware and pod-by-pod scheduling without a trace
(``packsched gen-jobs``). Seeded: the same options give the same files.

The distributions (documented in docs/guides/gangs.md, "A synthetic job workload"):

- workers per job: 1, 2, 4, 8 or 16 with probabilities 0.35, 0.20, 0.20, 0.15, 0.10;
- GPUs per worker: 1, 2, 4 or 8 with probabilities 0.30, 0.20, 0.20, 0.30, at most the GPUs of a node (larger draws
  are cut to a whole node); 8 CPUs and 64 GiB of memory per GPU; a job never asks more GPUs than half the cluster
  (its workers are cut to fit);
- run time: log-normal with a median of 30 minutes (sigma 1.0), cut to [1 minute, 24 hours], whole seconds;
- arrivals: a Poisson process whose rate makes the offered load (GPU-seconds asked per second over the cluster's
  GPUs) equal ``load``; the first job arrives at 0.

Each job is a PodGroup (``minMember`` = its workers) and a Job of that many workers carrying the group's label and
the ``packsched.io/arrival-time`` and ``packsched.io/run-duration`` annotations. The cluster is ``nodes`` identical
nodes with ``gpus_per_node`` GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import yaml

from packsched.api.annotations import ARRIVAL_TIME, RUN_DURATION, format_duration
from packsched.api.gangs import POD_GROUP_LABEL
from packsched.config.defaults import DEFAULT_SCHEDULER_NAME
from packsched.sim.jobtrace import TaskSpec, TraceJob

WORKERS = (1, 2, 4, 8, 16)
WORKER_P = (0.35, 0.20, 0.20, 0.15, 0.10)
GPUS = (1, 2, 4, 8)
GPU_P = (0.30, 0.20, 0.20, 0.30)
MEDIAN_RUN_S = 1800.0
RUN_SIGMA = 1.0
MIN_RUN_S, MAX_RUN_S = 60.0, 86400.0
NAMESPACE = "jobs"
GPU = "nvidia.com/gpu"
MI = 1024 * 1024
GI = 1024 * MI


@dataclass(frozen=True)
class JobSpec:
    name: str
    workers: int
    gpus: int  # per worker
    arrival: float
    run: float


def draw_jobs(jobs: int, nodes: int, gpus_per_node: int, load: float, seed: int) -> list[JobSpec]:
    if jobs < 1 or nodes < 1 or gpus_per_node < 1 or not load > 0:
        raise ValueError("jobs, nodes and gpus per node must be at least 1, load above 0")
    rng = np.random.default_rng(seed)
    workers = rng.choice(WORKERS, size=jobs, p=WORKER_P)
    gpus = np.minimum(rng.choice(GPUS, size=jobs, p=GPU_P), gpus_per_node)
    workers = np.maximum(np.minimum(workers, (nodes * gpus_per_node // 2) // gpus), 1)
    runs = np.clip(np.round(rng.lognormal(np.log(MEDIAN_RUN_S), RUN_SIGMA, size=jobs)), MIN_RUN_S, MAX_RUN_S)
    demand = float(np.mean(workers * gpus * runs))  # GPU-seconds per job
    rate = load * nodes * gpus_per_node / demand  # jobs per second
    gaps = rng.exponential(1.0 / rate, size=jobs)
    gaps[0] = 0.0
    arrivals = np.round(np.cumsum(gaps), 3)
    return [
        JobSpec(f"job-{i:05d}", int(workers[i]), int(gpus[i]), float(arrivals[i]), float(runs[i])) for i in range(jobs)
    ]


def cluster_documents(nodes: int, gpus_per_node: int) -> list[dict[str, Any]]:
    alloc = {
        "cpu": str(8 * gpus_per_node + 8),
        "memory": f"{64 * gpus_per_node + 64}Gi",
        GPU: str(gpus_per_node),
        "pods": "110",
    }
    docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}]
    for i in range(nodes):
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"gpu-{i:04d}"},
                "status": {"allocatable": dict(alloc), "capacity": dict(alloc)},
            }
        )
    return docs


def job_documents(specs: list[JobSpec]) -> list[dict[str, Any]]:
    """The synthetic jobs' PodGroups and Jobs: each job one kind of worker (8 CPUs and 64 GiB a GPU)."""
    return gang_documents(
        [
            TraceJob(
                j.name, j.arrival, j.run, (TaskSpec("worker", j.workers, 8000 * j.gpus, 64 * j.gpus * GI, j.gpus),)
            )
            for j in specs
        ]
    )


def gang_documents(jobs: list[TraceJob]) -> list[dict[str, Any]]:
    """A PodGroup per job (``minMember``: all of its pods) and a Job per task (named as the job when it has one
    task, else ``JOB-TASK``), arriving together and running as long as the job."""
    docs: list[dict[str, Any]] = []
    for j in jobs:
        at = format_duration(j.arrival)
        docs.append(
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": j.name, "namespace": NAMESPACE, "annotations": {ARRIVAL_TIME: at}},
                "spec": {"minMember": j.pods},
            }
        )
        for t in j.tasks:
            docs.append(_job(j, t, at))
    return docs


def _job(j: TraceJob, t: TaskSpec, at: str) -> dict[str, Any]:
    requests: dict[str, str] = {"cpu": _cpu(t.cpu_milli), "memory": _memory(t.memory_bytes)}
    limits: dict[str, str] = {}
    if t.gpus:
        requests[GPU] = limits[GPU] = str(t.gpus)
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = limits
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": j.name if len(j.tasks) == 1 else f"{j.name}-{t.name}", "namespace": NAMESPACE},
        "spec": {
            "parallelism": t.count,
            "completions": t.count,
            "template": {
                "metadata": {
                    "labels": {POD_GROUP_LABEL: j.name},
                    "annotations": {ARRIVAL_TIME: at, RUN_DURATION: format_duration(j.run)},
                },
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "worker", "image": "registry.example.com/train:1.0", "resources": resources}
                    ],
                },
            },
        },
    }


def _cpu(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def _memory(size: int) -> str:
    for unit, factor in (("Gi", GI), ("Mi", MI), ("G", 10**9), ("M", 10**6)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def config_document(gangs: bool) -> dict[str, Any]:
    """RequestedToCapacityRatio bin packing of GPUs, with Coscheduling (``gangs``) or without."""
    plugins: dict[str, Any] = {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}
    if gangs:
        plugins["multiPoint"] = {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]}
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [
            {
                "schedulerName": DEFAULT_SCHEDULER_NAME,
                "plugins": plugins,
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "RequestedToCapacityRatio",
                                "resources": [
                                    {"name": GPU, "weight": 5},
                                    {"name": "cpu", "weight": 1},
                                    {"name": "memory", "weight": 1},
                                ],
                                "requestedToCapacityRatio": {
                                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                                },
                            }
                        },
                    }
                ],
            }
        ],
    }


def dump(docs: list[dict[str, Any]], header: str) -> str:
    return header + yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=None, explicit_start=True)
