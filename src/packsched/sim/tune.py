"""``packsched tune``: search a :class:`~packsched.sim.tunespace.TuneSpace` for the stock kube-scheduler
configuration that does best on a GPU trace replay or on a job workload, with Optuna (``pip install
'packsched[tune]'``). What the trials run on is a bench: :class:`TraceBench` (the trace replay) or
:class:`JobBench` (gang-scheduled jobs simulated whole, :mod:`packsched.sim.jobtune`); the search is the same.

- The sampler is Optuna's TPE (multivariate, grouped for the strategy-dependent shape, constant liar for trials
  run side by side), seeded: for a given ``--seed``, ``--workers`` and study, the same trials in the same order.
- The study lives in an SQLite file. A second call with the same file and study name resumes it: ``--trials N``
  is the number of finished trials the study should hold, so the same command after Ctrl-C runs only the missing
  ones. Trials left running by a process that died are marked failed; the sampler's seed is offset by the trials
  already in the study, so a resumed search does not draw its first points again. A study records the setup it
  searches (trace or workload, metric, seeds, space); another setup under the same name is refused.
- A trial is one configuration replayed on every tuning seed (the published protocol, ``sim/replay.py``); its
  value is the mean of the metric over them. Trials are asked ``batch`` at a time and their replays run together
  on the local process pool (or Ray), through :mod:`packsched.sim.sweep`.
- At the end, the best configuration is replayed on the held-out seeds beside the baselines (named policies; on
  a job workload also the configuration files beside it).
"""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import math
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from packsched.api.errors import InputError
from packsched.api.files import replacing, write_text_replacing
from packsched.scheduler import TIE_NAME
from packsched.sim.defaults import DEFAULT_NODES, DEFAULT_PODS, DEFAULT_STUDY, DEFAULT_TUNE
from packsched.sim.jobtune import (
    WORKLOAD_BASELINES,
    JobRunResult,
    JobRunSpec,
    JobWorkload,
    check_job_specs,
    seed_folder,
    write_seed_workloads,
)
from packsched.sim.policies import FIT_POLICIES, PAPER_POLICIES
from packsched.sim.replay import RunResult
from packsched.sim.sweep import Interrupted, RunSpec, check_specs
from packsched.sim.tunespace import Choice, TuneSpace, config_document, describe

if TYPE_CHECKING:
    import optuna

SCHEMA = "packsched.tune/v1"
ARRIVED_PCT = 100
TRACE, JOBS = "trace", "jobs"  # what a tune runs its trials on: a GPU trace replay, a job workload
TUNED = "tuned"
USER_ATTR = "packsched"
BASELINE_SETS: dict[str, tuple[str, ...]] = {"stock": FIT_POLICIES, "paper": tuple(PAPER_POLICIES)}
OPTUNA_MISSING = "Optuna is not installed: pip install 'packsched[tune]'"
RunBatch = Callable[[Sequence[Any]], list[Any]]  # RunSpecs -> RunResults, or JobRunSpecs -> JobRunResults


@dataclass(frozen=True)
class Metric:
    name: str
    description: str
    direction: str  # "minimize" or "maximize"
    read: Callable[[Any], float | None]  # a run's value: a RunResult's (trace), a JobRunResult's (jobs)
    kind: str = TRACE

    def of(self, run: Any) -> float | None:
        return self.read(run)

    def better(self, a: float, b: float) -> bool:
        return a < b if self.direction == "minimize" else a > b


def _curve(name: str) -> Callable[[Any], float | None]:
    def read(run: RunResult) -> float | None:
        return run.at(name, ARRIVED_PCT)

    return read


def _unallocated(run: RunResult) -> float | None:
    return run.unallocated(ARRIVED_PCT)


def _job(key: str) -> Callable[[Any], float | None]:
    def read(run: JobRunResult) -> float | None:
        value = getattr(run, key)
        return None if value is None else float(value)

    return read


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("unallocated-gpu", "unallocated GPU % at 100% arrived", "minimize", _unallocated),
        Metric(
            "pending-pods", "pods left pending (fitting nowhere) up to 100% arrived", "minimize", _curve("dropped_pods")
        ),
        Metric("free-nodes", "nodes left without any pod at 100% arrived", "maximize", _curve("free_nodes")),
    )
}
# On a job workload (sim/jobtune.py), from the gang report; a job never started waits until the simulation's end.
JOB_METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "job-wait-mean",
            "mean job wait (s), never-started jobs waiting to the horizon",
            "minimize",
            _job("wait_mean"),
            JOBS,
        ),
        Metric(
            "job-wait-p50",
            "median job wait (s), never-started jobs waiting to the horizon",
            "minimize",
            _job("wait_p50"),
            JOBS,
        ),
        Metric(
            "job-wait-p95",
            "p95 job wait (s), never-started jobs waiting to the horizon",
            "minimize",
            _job("wait_p95"),
            JOBS,
        ),
        Metric("jobs-never-started", "jobs never started", "minimize", _job("never_started"), JOBS),
        Metric(
            "gpu-hours-held-at-permit",
            "GPU-hours held at Permit (gangs waiting for their last member)",
            "minimize",
            _job("gpu_hours_held_at_permit"),
            JOBS,
        ),
        Metric(
            "gpu-hours-in-partial-gangs",
            "GPU-hours in partial gangs (bound while the rest of the job was not)",
            "minimize",
            _job("gpu_hours_in_partial_gangs"),
            JOBS,
        ),
    )
}
DEFAULT_METRIC = {TRACE: "unallocated-gpu", JOBS: "job-wait-mean"}


def seeds_text(seeds: Sequence[int]) -> str:
    """[42, 43, 44] -> ``42-44``; [1, 5, 6] -> ``1,5-6``."""
    parts: list[str] = []
    i = 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        parts.append(str(seeds[i]) if i == j else f"{seeds[i]}-{seeds[j]}")
        i = j + 1
    return ",".join(parts)


def expand_baselines(names: Sequence[str]) -> list[str]:
    """``stock`` and ``paper`` stand for the NodeResourcesFit strategies and the paper's six policies."""
    out: list[str] = []
    for name in names:
        for policy in BASELINE_SETS.get(name, (name,)):
            if policy not in out:
                out.append(policy)
    return out


def storage_error(exc: BaseException) -> str | None:
    """What went wrong, in one line, when ``exc`` (or an error behind it) is the study's database failing:
    SQLAlchemy's and SQLite's errors (a full disk, an I/O error, a read-only file); None for any other error."""
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__module__.split(".")[0] in ("sqlalchemy", "sqlite3"):
            orig = getattr(seen, "orig", None)  # SQLAlchemy's error wraps SQLite's, whose message is the short one
            return (str(orig if orig is not None else seen).strip().splitlines() or [type(seen).__name__])[0]
        seen = seen.__cause__ or seen.__context__
    return None


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise InputError.single(OPTUNA_MISSING, path="packsched tune") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    # When Ctrl-C or SIGTERM lands inside one of the study's queries, SQLAlchemy logs the cursor it then fails to
    # close ("Error closing cursor") with a traceback, through Python's last-resort handler onto stderr. The
    # interruption itself is handled (partial results, exit 130 or 143), and a real database error is raised and
    # reported in one line (storage_error): its log says nothing more.
    logging.getLogger("sqlalchemy").setLevel(logging.CRITICAL)
    return optuna


@contextlib.contextmanager
def held_signals() -> Iterator[None]:
    """Ctrl-C and SIGTERM held while the block runs (the study's database written or read), then delivered: the
    handler in place when the block began runs as the block ends, as if the signal came then. A signal landing
    inside one of SQLAlchemy's transactions leaves the connection it interrupted holding SQLite's lock, never
    closed, and the next write (the trials marked failed) waited SQLite's five seconds and failed with "database is
    locked" (exit 2 instead of 143). Outside the main thread, where no signal handler runs, it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}

    def hold(signum: int, _frame: object) -> None:
        held.append(signum)

    for signum in previous:
        signal.signal(signum, hold)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for came in dict.fromkeys(held):  # each signal once, in the order they came
            signal.raise_signal(came)


@dataclass(frozen=True)
class Baseline:
    """A configuration replayed beside the best one on the held-out seeds: a named policy or a file."""

    label: str
    policy: str | None = None
    config: str | None = None


def _mean_sd(values: Sequence[float | None]) -> dict[str, float | None]:
    vals = [v for v in values if v is not None]
    return {
        "mean": _round(float(np.mean(vals))) if vals else None,
        "sd": _round(float(np.std(vals))) if vals else None,
    }


@dataclass
class TraceBench:
    """Trials replayed on a GPU trace (the published protocol, ``sim/replay.py``)."""

    data_dir: str
    pods: str = DEFAULT_PODS
    nodes: str = DEFAULT_NODES
    tune: float = DEFAULT_TUNE
    tie_break: str = TIE_NAME
    kind: str = TRACE
    gpu_share: bool = True  # the generated configurations have GPUShare (the replay needs it)

    def fingerprint(self) -> dict[str, Any]:
        return {"pods": self.pods, "nodes": self.nodes, "tune": self.tune, "tie_break": self.tie_break}

    def prepare(self, seeds: Sequence[int]) -> None:
        """Nothing to prepare: every seed replays the same trace."""

    def spec(self, label: str, seed: int, *, policy: str | None = None, config: Path | None = None) -> RunSpec:
        return RunSpec(
            label,
            seed,
            self.data_dir,
            self.pods,
            self.nodes,
            policy,
            str(config.resolve()) if config is not None else None,
            self.tune,
            self.tie_break,
        )

    def check(self, specs: Sequence[Any]) -> None:
        check_specs(specs)

    def baselines(self, names: Sequence[str]) -> list[Baseline]:
        return [Baseline(name, name) for name in expand_baselines(names)]

    def info(self) -> dict[str, Any]:
        """The summary's description of what the trials ran on."""
        return {
            "trace": {
                "data_dir": self.data_dir,
                "pods": self.pods,
                "nodes": self.nodes,
                "tune": self.tune,
                "tie_break": self.tie_break,
            }
        }

    def extras(self, runs: Sequence[Any]) -> dict[str, Any]:
        """A held-out group's figures beside the metric."""
        return {"unallocated_gpu_pct": _mean_sd([r.unallocated(ARRIVED_PCT) for r in runs])}

    def best_lines(self, path: Path, seeds: Sequence[int]) -> tuple[str, list[str]]:
        """best-config.yaml's comment: what the trials ran on, and how to reproduce and deploy the result."""
        return (
            f"Trace: {self.data_dir}, pods {self.pods}, nodes {self.nodes}, tune {self.tune:g}, tie-break "
            f"{self.tie_break}.",
            [
                f"Reproduce: packsched replay {self.data_dir} --pods {self.pods} --config {path} --seeds "
                f"{seeds_text(seeds)}",
                "To deploy (deploy/configmap.yaml): set schedulerName to the one your pods name (deploy/ uses "
                "packsched);",
                "GPUShare is packsched's per-GPU accounting of the alibabacloud.com/gpu-* annotations, which the "
                "replay",
                "needs; the replay drops pods that fit nowhere, hence postFilter (preemption) disabled: remove that",
                "block to keep kube-scheduler's preemption.",
            ],
        )


# The figures of the gang report a held-out group of a job workload shows beside the metric (mean and SD).
JOB_FIGURES = (
    "never_started",
    "wait_mean",
    "wait_p95",
    "gpu_hours_held_at_permit",
    "gpu_hours_in_partial_gangs",
    "permit_timeouts",
)


@dataclass
class JobBench:
    """Trials simulated on a job workload (``sim/jobtune.py``): with a synthetic one, each seed its own job set."""

    workload: JobWorkload
    out_dir: Path
    kind: str = JOBS
    gpu_share: bool = False
    files: dict[int, str] = field(default_factory=dict)  # seed -> its drawn jobs (synthetic workloads)

    def fingerprint(self) -> dict[str, Any]:
        w = self.workload
        gen = w.generator
        drawn = f"gen-jobs {gen.args()}, " if gen is not None else ""
        return {"workload": f"{drawn}sha256 {w.digest}"}

    def prepare(self, seeds: Sequence[int]) -> None:
        """Draw (and write) the job set of every seed of a synthetic workload."""
        if self.workload.generator is not None:
            self.files.update(write_seed_workloads(self.workload.generator, seeds, self.out_dir))

    def manifests(self, seed: int) -> tuple[str, ...]:
        if self.workload.generator is None:
            return self.workload.manifests
        return (*self.workload.manifests, self.files[seed])

    def spec(self, label: str, seed: int, *, policy: str | None = None, config: Path | None = None) -> JobRunSpec:
        path = str(config.resolve()) if config is not None else None
        return JobRunSpec(label, seed, self.manifests(seed), policy, path)

    def check(self, specs: Sequence[Any]) -> None:
        check_job_specs(specs)

    def baselines(self, names: Sequence[str]) -> list[Baseline]:
        out: list[Baseline] = []
        for name in names:
            if name == WORKLOAD_BASELINES:
                out += [Baseline(Path(c).stem, None, c) for c in self.workload.configs]
            else:
                out += [Baseline(p, p) for p in BASELINE_SETS.get(name, (name,))]
        return list(dict.fromkeys(out))

    def info(self) -> dict[str, Any]:
        w = self.workload
        gen = w.generator
        return {
            "trace": None,
            "workload": {
                "path": w.path,
                "jobs": w.jobs,
                "pods": w.pods,
                "nodes": w.nodes,
                "generator": None if gen is None else f"gen-jobs {gen.args()}",
                "seeds_draw_jobs": gen is not None,
            },
        }

    def extras(self, runs: Sequence[Any]) -> dict[str, Any]:
        return {
            "unallocated_gpu_pct": {"mean": None, "sd": None},
            "jobs": {key: _mean_sd([getattr(r, key) for r in runs]) for key in JOB_FIGURES},
        }

    def best_lines(self, path: Path, seeds: Sequence[int]) -> tuple[str, list[str]]:
        w = self.workload
        gen = w.generator
        if gen is not None:
            folder = seed_folder(gen, self.out_dir)
            what = (
                f"Jobs: {w.path}, drawn afresh for each seed (gen-jobs {gen.args('SEED')}), {w.nodes} nodes; "
                f"the job sets are in {folder}."
            )
            again = folder / f"jobs-seed-{seeds[0] if seeds else 'N'}.yaml"
            files = " ".join([*w.manifests, str(again)])
        else:
            what = f"Jobs: {w.path} ({w.jobs} jobs, {w.pods} pods, {w.nodes} nodes), one fixed set of jobs."
            files = w.path
        return (
            what,
            [
                f"Reproduce one seed: packsched gangs {files} --config {path} --seed {seeds[0] if seeds else 0}",
                "To deploy (deploy/configmap.yaml): set schedulerName to the one your pods name (deploy/ uses "
                "packsched);",
                "with Coscheduling, install scheduler-plugins' PodGroup CRD and label each job's pods with its "
                "PodGroup.",
                "postFilter (preemption) is disabled, as in every tuned configuration: remove that block to keep",
                "kube-scheduler's preemption (the simulated jobs have one priority: it never preempts among them).",
            ],
        )


Bench = TraceBench | JobBench


@dataclass
class TuneSettings:
    bench: Bench
    space: TuneSpace
    metric: Metric
    seeds: list[int]
    holdout_seeds: list[int]
    trials: int
    out_dir: Path
    storage: Path
    baselines: list[Baseline] = field(default_factory=lambda: [Baseline(p, p) for p in FIT_POLICIES])
    study_name: str = DEFAULT_STUDY
    seed: int = 0
    batch: int = 1  # trials asked, and replayed, together

    def fingerprint(self) -> dict[str, Any]:
        """What a study's trials depend on: a resumed study must have the same."""
        return {
            **self.bench.fingerprint(),
            "metric": self.metric.name,
            "seeds": list(self.seeds),
            "space": self.space.as_json(),
        }

    def spec(self, label: str, seed: int, *, policy: str | None = None, config: Path | None = None) -> Any:
        return self.bench.spec(label, seed, policy=policy, config=config)


@dataclass
class HoldoutGroup:
    label: str
    policy: str | None
    config: str | None
    runs: list[Any]  # RunResults (trace) or JobRunResults (jobs)
    metric: Metric
    bench: Bench

    def values(self) -> list[float]:
        return [v for v in (self.metric.of(r) for r in self.runs) if v is not None]

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "policy": self.policy,
            "config": self.config,
            "values": {str(r.seed): _round(self.metric.of(r)) for r in self.runs},
            **_mean_sd(self.values()),
            **self.bench.extras(self.runs),
            "seconds_per_run": round(float(np.mean([r.seconds for r in self.runs])), 3) if self.runs else None,
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


class Tuner:
    """One ``packsched tune`` call: :meth:`open`, :meth:`search`, :meth:`evaluate_holdout`, :meth:`write`."""

    def __init__(self, settings: TuneSettings) -> None:
        self.s = settings
        self.study: optuna.Study | None = None
        self.stale = 0  # trials found running (a process that died) and marked failed
        self.ran = 0  # trials finished by this call
        self.holdout: list[HoldoutGroup] = []
        self.started = time.monotonic()

    # -- the study -------------------------------------------------------------------------------------------

    def open(self) -> None:
        """Check the trace, open (or create) the study and check that it searches this setup; InputError else."""
        s = self.s
        s.bench.prepare([*s.seeds, *s.holdout_seeds])
        checks = [s.spec("check", s.seeds[0], policy=FIT_POLICIES[1])]
        checks += [s.spec(b.label, s.seeds[0], policy=b.policy, config=_path(b.config)) for b in s.baselines]
        s.bench.check(checks)
        optuna = _optuna()
        url = f"sqlite:///{s.storage.resolve()}"
        try:
            study = optuna.create_study(
                storage=url, study_name=s.study_name, direction=s.metric.direction, load_if_exists=True
            )
        except Exception as exc:  # SQLAlchemy's and SQLite's errors: not a database, no permission, ...
            reason = storage_error(exc) or str(exc)
            raise InputError.single(f"{s.storage}: cannot open the study: {reason}", path="--storage") from None
        mine = s.fingerprint()
        theirs = study.user_attrs.get(USER_ATTR)
        if theirs is None and study.trials:
            raise InputError.single(
                f"study {s.study_name!r} in {s.storage} was not made by packsched tune: give another --study-name",
                path="--study-name",
            )
        if theirs is None:
            study.set_user_attr(USER_ATTR, mine)
        elif theirs != mine:
            differ = ", ".join(k for k in mine if theirs.get(k) != mine[k])
            raise InputError.single(
                f"study {s.study_name!r} in {s.storage} searched another setup ({differ} differ): run it with the "
                "same trace, metric, seeds and space to resume it, or give another --study-name or --storage",
                path="--study-name",
            )
        running = optuna.trial.TrialState.RUNNING
        for t in study.get_trials(deepcopy=False, states=(running,)):
            study.tell(t.number, state=optuna.trial.TrialState.FAIL)
            self.stale += 1
        study.sampler = optuna.samplers.TPESampler(
            seed=s.seed + len(study.trials), multivariate=True, group=True, constant_liar=True
        )
        self.study = study

    def _study(self) -> optuna.Study:
        assert self.study is not None, "Tuner.open() first"
        return self.study

    def complete(self) -> list[optuna.trial.FrozenTrial]:
        optuna = _optuna()
        return self._study().get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))

    @property
    def remaining(self) -> int:
        """Trials this call still has to run."""
        return max(0, self.s.trials - len(self.complete()))

    def planned_runs(self) -> int:
        """Replays this call will run (the progress bar's total)."""
        return self.remaining * len(self.s.seeds) + len(self.s.holdout_seeds) * (1 + len(self.s.baselines))

    def best(self) -> optuna.trial.FrozenTrial | None:
        done = self.complete()
        if not done:
            return None
        return self._study().best_trial

    # -- the search ------------------------------------------------------------------------------------------

    def search(self, run_batch: RunBatch) -> None:
        """Run trials until the study holds ``trials`` finished ones. Ctrl-C (:class:`Interrupted`) tells the
        trials whose replays all finished and marks the others failed."""
        optuna = _optuna()
        s, study = self.s, self._study()
        trial_dir = s.out_dir / "trials"
        trial_dir.mkdir(parents=True, exist_ok=True)
        # Every read and write of the study runs with Ctrl-C and SIGTERM held (``held_signals``); they land in the
        # replays or between the blocks, where the trials asked are told (or marked failed) in full.
        while True:
            with held_signals():
                todo = self.remaining
            if todo <= 0:
                break
            asked: list[Any] = []  # optuna.Trial
            told: set[int] = set()
            try:
                specs: list[RunSpec] = []
                with held_signals():
                    for _ in range(min(s.batch, todo)):
                        trial = study.ask()
                        asked.append(trial)
                        choice = s.space.sample(trial)
                        path = trial_dir / f"trial-{trial.number:04d}.yaml"
                        write_config(
                            path,
                            choice,
                            [f"packsched tune: trial {trial.number} of study {s.study_name!r}"],
                            gpu_share=s.bench.gpu_share,
                        )
                        trial.set_user_attr("config", str(path))
                        specs += [s.spec(_label(trial.number), seed, config=path) for seed in s.seeds]
                s.bench.check(specs)
                try:
                    runs = run_batch(specs)
                except Interrupted as stop:
                    with held_signals():
                        self._tell(asked, stop.done, told)
                    raise
                with held_signals():
                    self._tell(asked, runs, told)
            finally:
                with held_signals():
                    for trial in asked:
                        if trial.number not in told:
                            study.tell(trial, state=optuna.trial.TrialState.FAIL)

    def _tell(self, asked: Sequence[optuna.Trial], runs: Sequence[Any], told: set[int]) -> None:
        optuna = _optuna()
        s, study = self.s, self._study()
        for trial in asked:
            mine = {r.seed: r for r in runs if r.label == _label(trial.number)}
            values = {seed: s.metric.of(mine[seed]) for seed in s.seeds if seed in mine}
            trial.set_user_attr("run_seconds", round(sum(r.seconds for r in mine.values()), 3))
            trial.set_user_attr("values", {str(k): _round(v) for k, v in values.items()})
            told.add(trial.number)
            got = [v for v in values.values() if v is not None]
            if len(got) != len(s.seeds):
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                continue
            study.tell(trial, float(np.mean(got)))
            self.ran += 1

    # -- held-out seeds --------------------------------------------------------------------------------------

    def evaluate_holdout(self, run_batch: RunBatch) -> None:
        """The best configuration and the baselines, replayed on the held-out seeds."""
        s = self.s
        best = self.best()
        if best is None or not s.holdout_seeds:
            return
        path = s.out_dir / "best-config.yaml"
        self.write_best(path, best)
        specs = [s.spec(TUNED, seed, config=path) for seed in s.holdout_seeds]
        specs += [
            s.spec(b.label, seed, policy=b.policy, config=_path(b.config))
            for b in s.baselines
            for seed in s.holdout_seeds
        ]
        s.bench.check(specs)
        runs = run_batch(specs)
        groups: dict[str, list[Any]] = {}
        for r in runs:
            groups.setdefault(r.label, []).append(r)
        self.holdout = [HoldoutGroup(TUNED, None, str(path), groups.get(TUNED, []), s.metric, s.bench)]
        self.holdout += [
            HoldoutGroup(b.label, b.policy, b.config, groups.get(b.label, []), s.metric, s.bench) for b in s.baselines
        ]

    # -- outputs ---------------------------------------------------------------------------------------------

    def rows(self) -> list[dict[str, Any]]:
        """trials.csv: one row per trial, with the best value so far."""
        s = self.s
        best: float | None = None
        out = []
        for t in sorted(self._study().get_trials(deepcopy=False), key=lambda t: t.number):
            value = t.value if t.state.name == "COMPLETE" else None
            if value is not None and (best is None or s.metric.better(value, best)):
                best = value
            values = t.user_attrs.get("values", {})
            row: dict[str, Any] = {
                "trial": t.number,
                "state": t.state.name,
                "value": _round(value),
                "best_so_far": _round(best),
            }
            row.update({f"seed_{seed}": _round(values.get(str(seed))) for seed in s.seeds})
            row["run_seconds"] = t.user_attrs.get("run_seconds")
            row.update(s.space.flat(t.params))
            row["config"] = t.user_attrs.get("config")
            out.append(row)
        return out

    def write_best(self, path: Path, best: optuna.trial.FrozenTrial) -> None:
        s = self.s
        choice = s.space.from_params(best.params)
        what, after = s.bench.best_lines(path, s.holdout_seeds or s.seeds)
        lines = [
            f"packsched tune: the best of {len(self.complete())} trials of study {s.study_name!r} "
            f"(trial {best.number}).",
            what,
            f"Metric: {s.metric.description} ({s.metric.direction}): {best.value:.4g}, the mean over the tuning "
            f"seeds {seeds_text(s.seeds)}.",
        ]
        tuned = next((g for g in self.holdout if g.label == TUNED), None)
        if tuned is not None and tuned.values():
            data = tuned.as_json()
            lines.append(
                f"Held-out seeds {seeds_text(s.holdout_seeds)}: {data['mean']:.4g} ± {data['sd']:.4g} (mean ± SD)."
            )
        lines += after
        write_config(path, choice, lines, gpu_share=s.bench.gpu_share)

    def summary(self, outputs: dict[str, str], interrupted: dict[str, Any] | None = None) -> dict[str, Any]:
        s = self.s
        trials = self._study().get_trials(deepcopy=False)
        states = [t.state.name for t in trials]
        best = self.best()
        data: dict[str, Any] = {
            "schema": SCHEMA,
            **s.bench.info(),
            "space": {"file": s.space.file, "name": s.space.name},
            "metric": {
                "name": s.metric.name,
                "description": s.metric.description,
                "direction": s.metric.direction,
                "arrived_pct": ARRIVED_PCT if s.metric.kind == TRACE else None,
            },
            "seeds": list(s.seeds),
            "holdout_seeds": list(s.holdout_seeds),
            "study": {
                "name": s.study_name,
                "storage": str(s.storage),
                "sampler": "TPE",
                "sampler_seed": s.seed,
                "trials": len(trials),
                "complete": states.count("COMPLETE"),
                "failed": states.count("FAIL"),
                "finished_now": self.ran,
                "stale_failed": self.stale,
                "batch": s.batch,
            },
            "best": None,
            "holdout": [g.as_json() for g in self.holdout],
            "seconds": round(time.monotonic() - self.started, 3),
            "outputs": outputs,
        }
        if best is not None:
            data["best"] = {
                "trial": best.number,
                "value": _round(best.value),
                "values": best.user_attrs.get("values", {}),
                "choice": s.space.flat(best.params),
                "description": describe(s.space.from_params(best.params)),
            }
        if interrupted is not None:
            data["interrupted"] = interrupted
        return data

    def write(self, interrupted: dict[str, Any] | None = None, with_plot: bool = True) -> dict[str, Any]:
        """trials.csv, best-config.yaml, search.png (unless ``with_plot`` is off) and summary.json, which is
        returned."""
        s = self.s
        s.out_dir.mkdir(parents=True, exist_ok=True)
        outputs: dict[str, str] = {}
        rows = self.rows()
        outputs["trials_csv"] = str(write_rows(rows, s.out_dir / "trials.csv", s))
        best = self.best()
        if best is not None:
            path = s.out_dir / "best-config.yaml"
            self.write_best(path, best)
            outputs["best_config"] = str(path)
        data = self.summary(outputs, interrupted)  # outputs: filled in below
        if with_plot and any(r["value"] is not None for r in rows):
            outputs["search_png"] = str(plot_search(rows, data, s.out_dir / "search.png"))
        outputs["summary_json"] = str(s.out_dir / "summary.json")
        data = self.summary(outputs, interrupted)
        write_text_replacing(s.out_dir / "summary.json", json.dumps(data, indent=2) + "\n")
        return data


def _path(config: str | None) -> Path | None:
    return None if config is None else Path(config)


def _label(number: int) -> str:
    return f"trial-{number}"


def write_config(path: Path, choice: Choice, comments: Sequence[str], *, gpu_share: bool = True) -> Path:
    header = "".join(f"# {line}\n" for line in comments)
    body = yaml.safe_dump(config_document(choice, gpu_share), sort_keys=False, default_flow_style=False)
    write_text_replacing(path, header + body)
    return path


def write_rows(rows: Sequence[dict[str, Any]], path: Path, s: TuneSettings) -> Path:
    columns = [
        "trial",
        "state",
        "value",
        "best_so_far",
        *(f"seed_{seed}" for seed in s.seeds),
        "run_seconds",
        *s.space.columns(),
        "config",
    ]
    with replacing(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, columns)
        w.writeheader()
        for row in rows:
            w.writerow({k: "" if row.get(k) is None else row[k] for k in columns})
    return path


def plot_search(rows: Sequence[dict[str, Any]], summary: dict[str, Any], path: Path) -> Path:
    """The metric of every finished trial and the best so far, titled with the trace, seeds and metric: the tune
    page's search chart, as a PNG."""
    from packsched.sim import chartspec
    from packsched.sim.htmlreport.page import search_chart

    return chartspec.write_png(search_chart(summary, rows), path)


def batch_size(workers: int, seeds: int) -> int:
    """Trials asked together: enough replays to keep ``workers`` processes busy."""
    return max(1, math.ceil(workers / max(1, seeds)))
