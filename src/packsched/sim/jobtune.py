"""``packsched tune`` on a job workload: the gang-scheduled training jobs of ``packsched gen-jobs`` (or any manifests
with scheduler-plugins PodGroups), simulated whole under each configuration of the search, and scored by the gang
report (:mod:`packsched.sim.gangs`).

- **The workload.** ``DIR/workload`` as ``gen-jobs DIR`` writes it (``DIR`` itself is taken for it), or any
  manifests (a file or a folder) that define at least one PodGroup of ``scheduling.x-k8s.io`` and a Node.
- **Seeds.** A synthetic workload (its ``jobs.yaml`` starts with the generator's line, ``# packsched gen-jobs --jobs
  N --nodes N --gpus-per-node N --load X --seed N``) is redrawn for every seed: :func:`packsched.sim.jobgen.draw_jobs`
  with the file's parameters and the run's seed (the same distributions, another job set), written to
  ``OUT_DIR/workloads/<parameters>/jobs-seed-N.yaml`` and run with the workload's other files (its
  ``cluster.yaml``). Held-out seeds are thus job sets the search never saw. Any other workload (``gen-jobs
  --from-trace``, hand-written manifests) is one fixed set of jobs: the seeds then vary only the simulator's seed
  (kube-scheduler's random pick among the nodes of equal score), which says how much a result owes to ties, not
  how it carries over to other jobs. The simulator's seed is the run's seed in both cases.
- **A run** is one simulation of the whole workload (arrivals, runs, completions) under one configuration and one
  seed, in a worker process (:func:`run_job`), up to the workload's :func:`horizon`; its result is the gang
  report's summary (:class:`JobRunResult`).
- **Metrics** (all lower is better; ``packsched.sim.tune.JOB_METRICS``): the jobs' wait from submission to start
  (mean, median, 95th percentile), where a job that never started counts as waiting until the horizon (so a
  configuration cannot shorten the waits by starting fewer jobs), the jobs never started, and the GPU-hours
  held idle: at Permit (Coscheduling waiting for a gang's last member) or in partial gangs (bound pod by pod while
  the rest of the job was not).
- **Baselines** (``packsched.sim.tune.JobBench.baselines``): ``workload``, the ``config-*.yaml`` files beside the
  workload (gen-jobs writes RequestedToCapacityRatio packing with Coscheduling and without); ``LeastAllocated``,
  ``MostAllocated`` and ``RequestedToCapacityRatio`` (``stock``: all three): kube-scheduler's default profile with
  that scoring strategy over cpu, memory and ``nvidia.com/gpu`` (weights 1), pod by pod.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from packsched.api.cluster import Cluster
from packsched.api.errors import ErrorList, InputError
from packsched.api.files import write_text_replacing
from packsched.api.gangs import pod_group_name
from packsched.api.gpushare import GPU_MILLI
from packsched.api.manifests import iter_manifest_files, load_manifests
from packsched.config.defaults import DEFAULT_SCHEDULER_NAME
from packsched.config.loader import load_config, load_config_data
from packsched.config.types import KubeSchedulerConfiguration
from packsched.plugins.registry import in_tree_registry
from packsched.sim import jobgen
from packsched.sim.gangs import gang_rows, gangs_of
from packsched.sim.policies import FIT_POLICIES, RTCR_SHAPE
from packsched.sim.tunespace import TuneSpace

JOBS_FILE = "jobs.yaml"
WORKLOAD_DIR = "workload"
WORKLOADS_OUT = "workloads"  # in --out-dir: the job set drawn for each seed
# the first line gen-jobs writes in a synthetic workload's files
GENERATOR_LINE = re.compile(
    r"^# packsched gen-jobs --jobs (\d+) --nodes (\d+) --gpus-per-node (\d+) --load (\S+) --seed (\d+)\s*$"
)
HORIZON_MARGIN_S = 3600.0  # a run's horizon beyond the jobs' arrivals and run times (see horizon())
WORKLOAD_BASELINES = "workload"  # --baselines: the config-*.yaml files beside the workload
GPU = jobgen.GPU
# the resources of a job stock policy: what a job's pods ask
STOCK_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": GPU, "weight": 1}]
# what a space may not weigh on a job workload: the GPU trace's per-GPU accounting (GPUShare), which no job asks
TRACE_RESOURCE_PREFIX = GPU_MILLI.split("/")[0] + "/"


@dataclass(frozen=True)
class Generator:
    """gen-jobs' parameters of a synthetic workload (its files' first line)."""

    jobs: int
    nodes: int
    gpus_per_node: int
    load: float
    seed: int

    def args(self, seed: int | str | None = None) -> str:
        return (
            f"--jobs {self.jobs} --nodes {self.nodes} --gpus-per-node {self.gpus_per_node} --load {self.load:g} "
            f"--seed {self.seed if seed is None else seed}"
        )

    def text(self, seed: int) -> str:
        """The job set of ``seed``: the YAML gen-jobs writes for it (with its header line)."""
        specs = jobgen.draw_jobs(self.jobs, self.nodes, self.gpus_per_node, self.load, seed)
        return jobgen.dump(jobgen.job_documents(specs), f"# packsched gen-jobs {self.args(seed)}\n")


@dataclass(frozen=True)
class JobWorkload:
    """A job workload as ``tune`` reads it: ``manifests`` are its files (less ``jobs.yaml`` when ``generator`` is
    set: each seed draws its own); ``configs`` the ``config-*.yaml`` files beside it."""

    path: str
    manifests: tuple[str, ...]
    generator: Generator | None
    jobs: int
    pods: int
    nodes: int
    configs: tuple[str, ...]
    digest: str  # of the content of ``manifests``: a resumed study must see the same workload


def _generator(path: str) -> Generator | None:
    try:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline()
    except (OSError, UnicodeDecodeError):
        return None
    m = GENERATOR_LINE.match(first)
    if m is None:
        return None
    try:
        load = float(m.group(4))
    except ValueError:
        return None
    gen = Generator(int(m.group(1)), int(m.group(2)), int(m.group(3)), load, int(m.group(5)))
    if gen.jobs < 1 or gen.nodes < 1 or gen.gpus_per_node < 1 or not load > 0:
        return None
    return gen


def read_workload(path: str) -> JobWorkload:
    """Read and check a job workload (see the module's docstring); InputError naming the file when it holds no
    job or no node."""
    folder = Path(path)
    if not folder.exists():
        raise InputError.single("no such file or folder", file=path)
    base = folder
    if folder.is_dir() and not (folder / JOBS_FILE).is_file() and (folder / WORKLOAD_DIR).is_dir():
        folder = folder / WORKLOAD_DIR  # the folder gen-jobs wrote: its workload
    where = str(folder)
    files = list(iter_manifest_files([where]))
    if not files:
        raise InputError.single(
            "no manifest files (*.yaml, *.yml, *.json): a job workload is the folder packsched gen-jobs writes "
            "(DIR/workload), or manifests with PodGroups",
            file=where,
        )
    cluster = load_manifests([where])
    if not cluster.pod_groups:
        raise InputError.single(
            "no job: the manifests define no PodGroup (scheduling.x-k8s.io/v1alpha1); tune on a job workload "
            "scores gangs (packsched gen-jobs writes a PodGroup per job)",
            file=where,
        )
    if not cluster.nodes:
        raise InputError.single("no Node: the jobs would have nowhere to run", file=where)
    jobs_file = folder / JOBS_FILE if folder.is_dir() else None
    generator = _generator(str(jobs_file)) if jobs_file is not None and jobs_file.is_file() else None
    manifests = files
    if generator is not None and jobs_file is not None:
        manifests = [f for f in files if os.path.realpath(f) != os.path.realpath(jobs_file)]
    digest = hashlib.sha256()  # of the files the runs read (a synthetic workload's jobs: its parameters instead)
    for f in manifests:
        digest.update(Path(f).read_bytes())
    # the configurations gen-jobs writes beside the workload (none for a single manifest file)
    beside = base if folder != base else (folder.parent if folder.is_dir() else None)
    configs = tuple(sorted(str(p) for p in beside.glob("config-*.yaml"))) if beside is not None else ()
    return JobWorkload(
        where,
        tuple(str(Path(f).resolve()) for f in manifests),
        generator,
        len(cluster.pod_groups),
        len(cluster.pods),
        len(cluster.nodes),
        configs,
        digest.hexdigest()[:16],
    )


def check_space(space: TuneSpace) -> None:
    """What a space may not search on a job workload: a weight for the GPU trace's GPUShare resources
    (``alibabacloud.com/...``), which no job asks (the jobs' pods ask ``nvidia.com/gpu``)."""
    errors = ErrorList(file=space.file)
    for i, r in enumerate(space.resources):
        if r.name.startswith(TRACE_RESOURCE_PREFIX):
            errors.add(
                f"spec.resources[{i}].name",
                f"{r.name!r} is the GPU trace's per-GPU accounting (GPUShare), which no pod of a job workload asks: "
                f"weigh {GPU} instead",
            )
    errors.raise_if_any()


# -- runs ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRunSpec:
    """One simulation of a job workload: a configuration file or a job stock policy, one seed."""

    label: str
    seed: int
    manifests: tuple[str, ...]
    policy: str | None = None
    config: str | None = None


@dataclass
class JobRunResult:
    """The gang report of one run (``wait_*``: over every job, one never started counted as waiting until
    ``end_time``)."""

    label: str
    seed: int
    seconds: float
    jobs: int
    started: int
    never_started: int
    wait_mean: float | None
    wait_p50: float | None
    wait_p95: float | None
    gpu_hours_held_at_permit: float
    gpu_hours_in_partial_gangs: float
    permit_timeouts: int
    end_time: float

    @classmethod
    def of(cls, label: str, seed: int, rows: Sequence[dict[str, Any]], end_time: float, seconds: float) -> JobRunResult:
        waits = np.asarray(
            [r["wait"] if r["wait"] is not None else max(0.0, end_time - r["submitted"]) for r in rows],
            dtype=np.float64,
        )
        started = sum(1 for r in rows if r["started"] is not None)

        def stat(fn: Callable[[Any], Any]) -> float | None:
            return float(fn(waits)) if len(waits) else None

        return cls(
            label,
            seed,
            seconds,
            len(rows),
            started,
            len(rows) - started,
            stat(np.mean),
            stat(lambda w: np.percentile(w, 50)),
            stat(lambda w: np.percentile(w, 95)),
            sum(r["gpu_seconds_held_at_permit"] for r in rows) / 3600.0,
            sum(r["gpu_seconds_in_partial_gangs"] for r in rows) / 3600.0,
            sum(r["permit_timeouts"] for r in rows),
            end_time,
        )


def job_policy_document(name: str) -> dict[str, Any]:
    """A job stock policy: kube-scheduler's default profile with NodeResourcesFit's ``name`` strategy over the
    jobs' cpu, memory and GPUs (RequestedToCapacityRatio: packing), pods one by one."""
    if name not in FIT_POLICIES:
        raise InputError.single(f"unknown policy {name!r} for a job workload; one of {', '.join(FIT_POLICIES)}")
    strategy: dict[str, Any] = {"type": name, "resources": STOCK_RESOURCES}
    if name == "RequestedToCapacityRatio":
        strategy["requestedToCapacityRatio"] = {"shape": RTCR_SHAPE}
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": DEFAULT_SCHEDULER_NAME,
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}],
            }
        ],
    }


def job_config(spec: JobRunSpec) -> KubeSchedulerConfiguration:
    """The run's configuration, read afresh (a simulation keeps state in it)."""
    known = set(in_tree_registry())
    if spec.config is not None:
        return load_config(spec.config, known)
    assert spec.policy is not None
    return load_config_data(job_policy_document(spec.policy), f"<policy {spec.policy}>", known)


def run_job(spec: JobRunSpec, progress: Callable[[int, int], None] | None = None) -> JobRunResult:
    """One simulation (in a worker process; ``progress`` is not reported: a run is one event loop)."""
    from packsched.sim.engine import Simulation  # the simulator: only where a run happens

    start = time.perf_counter()
    cluster = load_manifests(list(spec.manifests))  # fresh objects per run: a run changes them
    cfg = job_config(spec)
    sim = Simulation(cluster, cfg, in_tree_registry(), spec.seed)
    sim.run_until(horizon(cluster))
    result = sim.result()
    gangs = [g for g in gangs_of(cluster, cfg.kube_version, (r.pod for r in result.records)) if g.pod_group]
    rows = gang_rows(gangs, result)
    return JobRunResult.of(spec.label, spec.seed, rows, result.end_time, time.perf_counter() - start)


def horizon(cluster: Cluster) -> float:
    """Where a run stops: the last job's arrival plus every job's run time, the time the jobs would take one
    after another (each job the run time of its longest pod; a pod without one counts nothing), plus
    :data:`HORIZON_MARGIN_S` for the last one's waits (at Permit, in backoff). A configuration that does not leave
    jobs stuck has started them all well before; one whose gangs block one another (holding part of the cluster at
    Permit, timing out, trying again) would otherwise run for ever."""
    arrival: dict[tuple[str, str], float] = {}
    run: dict[tuple[str, str], float] = {}
    for pod in cluster.pods:
        key = (pod.namespace, pod_group_name(pod) or f"pod {pod.name}")  # a pod in no group: a job of its own
        arrival[key] = min(arrival.get(key, pod.arrival_time), pod.arrival_time)
        run[key] = max(run.get(key, 0.0), pod.run_duration or 0.0)
    return max(arrival.values(), default=0.0) + sum(run.values()) + HORIZON_MARGIN_S


def check_job_specs(specs: Sequence[JobRunSpec]) -> None:
    """Read every workload and configuration once, so that bad input fails before any worker starts."""
    seen_manifests: set[tuple[str, ...]] = set()
    seen_configs: set[tuple[str | None, str | None]] = set()
    for spec in specs:
        if spec.manifests not in seen_manifests:
            seen_manifests.add(spec.manifests)
            load_manifests(list(spec.manifests))
        key = (spec.policy, spec.config)
        if key not in seen_configs:
            seen_configs.add(key)
            job_config(spec)


def seed_folder(generator: Generator, out_dir: Path) -> Path:
    """Where the job sets of a generator's seeds go: a folder per generator (the studies of two workloads may
    share an --out-dir, and a study refused for another workload leaves the files of its own alone)."""
    g = generator
    return out_dir / WORKLOADS_OUT / f"jobs{g.jobs}-nodes{g.nodes}-gpus{g.gpus_per_node}-load{g.load:g}"


def write_seed_workloads(generator: Generator, seeds: Sequence[int], out_dir: Path) -> dict[int, str]:
    """The job set of each seed, written once to ``OUT_DIR/workloads/<generator>/jobs-seed-N.yaml``; seed -> its
    path."""
    folder = seed_folder(generator, out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths: dict[int, str] = {}
    for seed in seeds:
        path = folder / f"jobs-seed-{seed}.yaml"
        text = generator.text(seed)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            write_text_replacing(path, text)
        paths[seed] = str(path.resolve())
    return paths
