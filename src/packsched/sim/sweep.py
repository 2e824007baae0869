"""Many replays (configs or policies x seeds): in parallel worker processes on this machine, or on a Ray cluster
with the optional ``packsched[ray]`` extra. Every run is independent and seeded, so the results do not depend on
where or in which order the runs execute.

Ctrl-C (SIGINT) stops a sweep at once: runs not yet started are cancelled, the worker processes (or Ray tasks)
still running are ended, and :class:`Interrupted` carries the runs that had finished. Any KeyboardInterrupt does
the same: the CLI raises one on SIGTERM (``packsched.cli.unix.Terminated``), whose ``signum`` the Interrupted
keeps."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import logging
import os
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from packsched.api.errors import InputError
from packsched.api.files import replacing, write_text_replacing
from packsched.config.types import KubeSchedulerConfiguration
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import TIE_NAME
from packsched.sim.defaults import DEFAULT_NODES, DEFAULT_PODS, DEFAULT_TUNE, RAY_CONNECT_TIMEOUT_S
from packsched.sim.policies import PAPER_POLICIES, file_config, policy_config
from packsched.sim.replay import (
    CURVES,
    RunResult,
    check_replay,
    replay,
    summarize,
    target_workload,
)
from packsched.sim.trace import Trace, load_trace

EXPECTED_DIR = "fgd-expected-results"
ALLOC_FILE = "analysis_allo_discrete.csv"
POLL_S = 0.5  # how often a waiting sweep wakes up (Ctrl-C is handled at once regardless)
STOP_WAIT_S = 2.0  # how long an ended worker process is waited for


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a sweep: ``done`` holds the runs that finished (in the order of the specs) out
    of ``total`` (RunResults, or what :func:`run_all`'s function returns); the others were cancelled.
    ``signum``: the signal that stopped it (SIGINT for Ctrl-C)."""

    def __init__(self, done: list[Any], total: int, signum: int = signal.SIGINT) -> None:
        super().__init__(f"interrupted: {len(done)} of {total} runs finished")
        self.done = done
        self.total = total
        self.signum = signum


def _signum(stop: KeyboardInterrupt) -> int:
    """The signal behind ``stop``: its ``signum`` (SIGTERM for the CLI's Terminated), else SIGINT (Ctrl-C)."""
    return int(getattr(stop, "signum", signal.SIGINT))


@dataclass(frozen=True)
class RunSpec:
    """One replay: a named policy or a config file, one seed."""

    label: str
    seed: int
    data_dir: str
    pods: str = DEFAULT_PODS
    nodes: str = DEFAULT_NODES
    policy: str | None = None
    config: str | None = None
    tune: float = DEFAULT_TUNE
    tie_break: str = TIE_NAME
    gpu_choice: str = "BestFit"  # GPUShare's gpuChoice for a named policy
    as_dra: bool = False  # the GPUs as DRA devices with consumable capacity (sim/dratrace.py)


@lru_cache(maxsize=4)
def _trace(data_dir: str, pods: str, nodes: str) -> Trace:
    return load_trace(Path(data_dir), pods, nodes)


def build_config(spec: RunSpec, trace: Trace) -> KubeSchedulerConfiguration:
    known = set(in_tree_registry())
    target = target_workload(trace)
    if spec.config is not None:
        return file_config(spec.config, known, target)
    assert spec.policy is not None
    return policy_config(spec.policy, known, target, gpu_choice=spec.gpu_choice, as_dra=spec.as_dra)


class MetricOutOfRange(RuntimeError):
    """A replay's metric outside what its definition allows: a bug, never printed as a result."""


def check_metric_ranges(result: RunResult) -> None:
    """Every percentage curve of a replay within 0-100 % (allocation and fragmentation are shares of the
    cluster's capacity or idle GPUs), every count not negative; raises MetricOutOfRange otherwise."""
    for name, values in result.curves.items():
        low, high = (0.0, 100.0) if name.endswith("_pct") else (0.0, float("inf"))
        for i, v in enumerate(values):
            if v is not None and not low - 1e-6 <= v <= high + 1e-6:
                raise MetricOutOfRange(
                    f"run {result.label} seed {result.seed}: {name} is {v:g} at {i} % arrived, outside its range "
                    f"{low:g}-{high:g}: a packsched bug, please report it with the command line"
                )


def run_spec(spec: RunSpec, progress: Callable[[int, int], None] | None = None) -> RunResult:
    trace = _trace(spec.data_dir, spec.pods, spec.nodes)
    cfg = build_config(spec, trace)
    result = replay(
        trace,
        cfg,
        spec.seed,
        label=spec.label,
        tune=spec.tune,
        progress=progress,
        target=target_workload(trace),
        tie_break=spec.tie_break,
        as_dra=spec.as_dra,
    )
    check_metric_ranges(result)
    return result


def check_specs(specs: Sequence[RunSpec]) -> None:
    """Load the trace and every config once, so that bad input fails before any worker starts."""
    seen: set[tuple[str | None, str | None]] = set()
    for spec in specs:
        trace = _trace(spec.data_dir, spec.pods, spec.nodes)
        key = (spec.policy, spec.config)
        if key not in seen:
            seen.add(key)
            check_replay(trace, build_config(spec, trace), as_dra=spec.as_dra)


S = TypeVar("S")
R = TypeVar("R")
# One run in a worker process: (spec, progress callback or None) -> its result.
Runner = Callable[[S, Callable[[int, int], None] | None], R]


def _in_order(results: dict[int, R]) -> list[R]:
    return [results[i] for i in sorted(results)]


def _worker_signals() -> None:
    """In each worker process: Ctrl-C is the parent's to handle (a terminal sends it to the whole process group);
    SIGTERM ends the worker (the parent's handler, inherited through fork, would raise in it instead): what the
    parent sends to stop it, and a signal to the whole group reaches the parent too."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel the runs not started and end the worker processes now, instead of letting the pool finish its
    queue (what leaving ``with ProcessPoolExecutor()`` does)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # the pool has no public handle on them
    pool.shutdown(wait=False, cancel_futures=True)
    # a worker the pool started meanwhile (it replaces one that ended) is ended too
    processes += [p for p in (getattr(pool, "_processes", None) or {}).values() if p not in processes]
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(STOP_WAIT_S)


def run_local(
    specs: Sequence[RunSpec],
    workers: int,
    on_done: Callable[[RunResult], None] | None = None,
    on_pods: Callable[[RunSpec, int, int], None] | None = None,
) -> list[RunResult]:
    """Run every spec; ``workers`` > 1 uses a process pool. Results come back in the order of ``specs``. Ctrl-C
    raises :class:`Interrupted` with the runs that finished, the rest cancelled and the workers ended."""
    return run_all(run_spec, specs, workers, on_done, on_pods)


def run_all(
    run: Runner[S, R],
    specs: Sequence[S],
    workers: int,
    on_done: Callable[[R], None] | None = None,
    on_pods: Callable[[S, int, int], None] | None = None,
) -> list[R]:
    """:func:`run_local` for any kind of run: ``run`` (a module-level function, sent to the worker processes)
    called on each spec (``packsched tune`` on a job workload runs simulations through it)."""
    results: dict[int, R] = {}
    if workers <= 1 or len(specs) == 1:
        try:
            for i, spec in enumerate(specs):
                cb = (lambda done, total, s=spec: on_pods(s, done, total)) if on_pods else None
                results[i] = run(spec, cb)
                if on_done:
                    on_done(results[i])
        except KeyboardInterrupt as stop:
            raise Interrupted(_in_order(results), len(specs), _signum(stop)) from None
        return _in_order(results)
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_signals)
    try:
        pending: dict[Future[R], int] = {pool.submit(run, s, None): i for i, s in enumerate(specs)}
        while pending:
            done, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            for fut in done:
                i = pending.pop(fut)
                results[i] = fut.result()
                if on_done:
                    on_done(results[i])
    except KeyboardInterrupt as stop:
        _stop_pool(pool)
        raise Interrupted(_in_order(results), len(specs), _signum(stop)) from None
    except BaseException:
        try:
            _stop_pool(pool)  # a run failed: the others would be lost anyway
        except KeyboardInterrupt as stop:
            # a signal to the whole process group (``timeout``, systemd) may end a worker before this process's
            # handler runs: the pool breaks first, then the signal stops this process as it stops the pool
            _stop_pool(pool)
            raise Interrupted(_in_order(results), len(specs), _signum(stop)) from None
        raise
    pool.shutdown()
    return _in_order(results)


def connect_ray(address: str | None, timeout: float = RAY_CONNECT_TIMEOUT_S) -> Any:
    """The ``ray`` module, connected to the cluster at ``address`` (as for ``ray.init``). ``ray.init`` has no
    timeout of its own and waits minutes for a cluster that does not answer: it runs in a thread here, and an
    InputError (naming ``--ray-address``) says so after ``timeout`` seconds."""
    try:
        import ray
    except ImportError:
        raise InputError.single("Ray is not installed: pip install 'packsched[ray]'", path="--ray") from None
    # a task's error is raised once through ray.get; the others, cancelled after it, need no report of their own
    os.environ.setdefault("RAY_IGNORE_UNHANDLED_ERRORS", "1")
    if ray.is_initialized():
        return ray
    failed: list[BaseException] = []

    def init() -> None:
        try:
            # Ray's own log lines (connecting, worker tracebacks) would bury the command's output; a task's
            # error comes back through ray.get and is reported once.
            ray.init(address=address, ignore_reinit_error=True, logging_level=logging.ERROR, log_to_driver=False)
        except Exception as exc:  # reported below, whatever Ray raises
            failed.append(exc)

    where = f"the Ray cluster at {address}" if address else "a Ray cluster"
    thread = threading.Thread(target=init, name="ray-init", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise InputError.single(
            f"{where} did not answer within {timeout:g} s (is it running? --ray-timeout waits longer)",
            path="--ray-address",
        )
    if failed:
        raise InputError.single(f"cannot connect to {where}: {failed[0]}", path="--ray-address")
    return ray


def for_elsewhere(spec: RunSpec) -> RunSpec:
    """``spec`` with its paths (trace folder, config file, a ``.csv`` pod or node list found from here) made
    absolute: a Ray worker runs in a folder of its own, where a relative path names nothing."""

    def absolute(path: str) -> str:
        return str(Path(path).resolve())

    def listed(name: str) -> str:
        return absolute(name) if name.endswith(".csv") and Path(name).exists() else name

    return dataclasses.replace(
        spec,
        data_dir=absolute(spec.data_dir),
        config=None if spec.config is None else absolute(spec.config),
        pods=listed(spec.pods),
        nodes=listed(spec.nodes),
    )


def run_ray(
    specs: Sequence[RunSpec],
    address: str | None,
    on_done: Callable[[RunResult], None] | None = None,
    *,
    timeout: float = RAY_CONNECT_TIMEOUT_S,
) -> list[RunResult]:
    """The same runs as Ray tasks (``pip install 'packsched[ray]'``); ``address`` as for ``ray.init``, connected
    to within ``timeout`` seconds (:func:`connect_ray`). The paths of the specs are sent absolute, so every Ray
    node must see the trace (and config files) at the same paths. Ctrl-C cancels the tasks not finished and raises
    :class:`Interrupted`; a run that fails cancels the others and its error is raised."""
    ray = connect_ray(address, timeout)
    remote = ray.remote(run_spec)
    refs = {remote.remote(for_elsewhere(s)): i for i, s in enumerate(specs)}
    results: dict[int, RunResult] = {}
    pending = list(refs)

    def cancel_pending() -> None:
        for ref in pending:
            with contextlib.suppress(Exception):  # the finished runs matter more than a failed cancel
                ray.cancel(ref, force=True)

    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1, timeout=POLL_S)
            for ref in done:
                results[refs[ref]] = ray.get(ref)
                if on_done:
                    on_done(results[refs[ref]])
    except KeyboardInterrupt as stop:
        cancel_pending()
        raise Interrupted(_in_order(results), len(specs), _signum(stop)) from None
    except BaseException:
        cancel_pending()  # a run failed: the others would be lost anyway
        raise
    return _in_order(results)


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


# -- published figures ---------------------------------------------------------------------------------------


def published(data_dir: str, workload: str, policy: str | None) -> dict[str, Any] | None:
    """The authors' results for this trace and policy (``fgd-expected-results``): mean and population SD of
    unallocated GPU % at 100% and 130% arrived, and the mean allocation curve. None when not available."""
    if policy not in PAPER_POLICIES:
        return None
    path = Path(data_dir) / EXPECTED_DIR / ALLOC_FILE
    if not path.is_file():
        return None
    name = PAPER_POLICIES[policy][1]
    rows: list[list[float]] = []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        for row in reader:
            if row.get("workload") == workload and row.get("sc_policy") == name:
                rows.append([float(row[str(p)]) for p in range(131)])
    if not rows:
        return None
    alloc = np.array(rows)
    out: dict[str, Any] = {"seeds": len(rows), "mean": {}, "sd": {}}
    for p in (100, 130):
        un = 100.0 - alloc[:, p]
        out["mean"][str(p)] = round(float(un.mean()), 2)
        out["sd"][str(p)] = round(float(un.std()), 2)
    out["gpu_alloc_pct"] = [round(float(v), 4) for v in alloc.mean(axis=0)]
    return out


# -- outputs -------------------------------------------------------------------------------------------------


def write_csv(runs: Sequence[RunResult], path: Path) -> None:
    """One row per run and arrived-workload level (0..130); the whole file or none (OutputError)."""
    with replacing(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["label", "seed", "arrived_pct", "unallocated_gpu_pct", *CURVES])
        for r in runs:
            for p in range(len(r.curves["gpu_alloc_pct"])):
                alloc = r.curves["gpu_alloc_pct"][p]
                vals = [r.curves[c][p] for c in CURVES]
                w.writerow(
                    [
                        r.label,
                        r.seed,
                        p,
                        "" if alloc is None else round(100.0 - alloc, 4),
                        *["" if v is None else round(v, 4) for v in vals],
                    ]
                )


def group_summary(label: str, runs: Sequence[RunResult], pub: dict[str, Any] | None) -> dict[str, Any]:
    s = summarize(runs)
    frag = [r.at("frag_rate_pct", 80) for r in runs]
    frag_vals = [f for f in frag if f is not None]
    return {
        "label": label,
        "runs": [r.as_json() for r in runs],
        "mean": s["mean"],
        "sd": s["sd"],
        "frag_rate_pct_80": {"mean": round(float(np.mean(frag_vals)), 4) if frag_vals else None},
        "seconds_per_run": round(float(np.mean([r.seconds for r in runs])), 3),
        "published": None if pub is None else {k: pub[k] for k in ("seeds", "mean", "sd")},
    }


def write_json(data: Any, path: Path) -> None:
    write_text_replacing(path, json.dumps(data, indent=2) + "\n")
