"""``packsched tune``: search the stock kube-scheduler configurations of a TuneSpace for the best one on a GPU
trace replay or on a job workload (gang-scheduled training jobs, ``gen-jobs``; :mod:`packsched.sim.jobtune`), with
Optuna's TPE (:mod:`packsched.sim.tune`), then check it on held-out seeds beside baselines."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from packsched.api.errors import InputError
from packsched.api.files import OutputError
from packsched.cli.report_cmd import HtmlOpt, check_html, write_html
from packsched.cli.trace_cmds import (
    NodesOpt,
    OutputOpt,
    PodsOpt,
    TieOpt,
    TuneOpt,
    WorkersOpt,
    _check_common,
    _check_out_dir,
    _fail,
    _given,
    _guard,
    err,
    out,
    parse_seeds,
)
from packsched.cli.unix import exit_code, stop_text
from packsched.scheduler import TIE_NAME
from packsched.sim.defaults import (
    DEFAULT_NODES,
    DEFAULT_PODS,
    DEFAULT_STUDY,
    DEFAULT_TUNE,
    JOB_METRIC_NAMES,
    METRIC_NAMES,
    RAY_CONNECT_TIMEOUT_S,
    STORAGE_FILE,
)
from packsched.sim.policies import POLICIES

if TYPE_CHECKING:  # the tuner, the replay and the sweeps are imported where the command runs
    from packsched.sim.jobtune import JobWorkload
    from packsched.sim.tune import Tuner

MAX_TRIALS = 100_000
# Options that only a GPU trace takes: given with a job workload, they are an error, not ignored.
TRACE_ONLY = ("pods", "nodes", "tune", "tie_break", "ray_address", "ray_timeout")
WORKLOAD = "workload"  # --baselines on a job workload: the config-*.yaml files beside it


def _is_trace(path: Path) -> bool:
    """A GPU trace folder (openb_*.csv), or anything that is not a job workload (its errors say what is missing)."""
    from packsched.sim.scenario import is_whatif_input

    if path.is_dir() and any(path.glob("openb_*.csv")):
        return True
    return not (is_whatif_input(str(path)) or (path / WORKLOAD).is_dir())


def _seeds(text: str, option: str) -> list[int]:
    """parse_seeds, naming ``option`` in its errors; an empty text is no seed."""
    if not text.strip():
        return []
    try:
        return parse_seeds(text)
    except InputError as exc:  # naming --seeds
        raise _fail([str(exc).replace("--seeds", option)]) from None


def _check(jobs: bool, metric: str, trials: int, baselines: list[str], seeds: list[int], holdout: list[int]) -> None:
    from packsched.sim.policies import FIT_POLICIES
    from packsched.sim.tune import BASELINE_SETS, seeds_text

    problems = []
    names, other = (JOB_METRIC_NAMES, METRIC_NAMES) if jobs else (METRIC_NAMES, JOB_METRIC_NAMES)
    if metric not in names:
        why = f" ({metric} is for a {'GPU trace' if jobs else 'job workload'})" if metric in other else ""
        where = "on a job workload" if jobs else "on a GPU trace"
        problems.append(f"--metric must be one of {', '.join(names)} {where}, got {metric!r}{why}")
    if not 1 <= trials <= MAX_TRIALS:
        problems.append(f"--trials must be between 1 and {MAX_TRIALS:,}, got {trials}")
    if jobs:
        bad = [b for b in baselines if b not in FIT_POLICIES and b not in ("stock", WORKLOAD)]
        if bad:
            problems.append(
                f"--baselines: unknown {', '.join(map(repr, bad))} on a job workload; {', '.join(FIT_POLICIES)}, "
                f"stock for all three, or {WORKLOAD} for the config-*.yaml files beside the workload"
            )
    else:
        bad = [b for b in baselines if b not in POLICIES and b not in BASELINE_SETS]
        if bad:
            problems.append(
                f"--baselines: unknown {', '.join(map(repr, bad))}; policies {', '.join(POLICIES)}, or "
                f"{' / '.join(BASELINE_SETS)} for all of a kind"
            )
    if not seeds:
        problems.append("--seeds: at least one seed")
    shared = sorted(set(seeds) & set(holdout))
    if shared:
        problems.append(f"--holdout-seeds must not share seeds with --seeds: {seeds_text(shared)}")
    if problems:
        raise _fail(problems)


def _workload(path: Path | None, baselines: str | None) -> tuple[JobWorkload | None, list[str]]:
    """The job workload (None for a trace) and the baselines' names, by default ``workload,stock`` on a job
    workload with config-*.yaml files beside it, else ``stock``."""
    from packsched.sim.jobtune import read_workload

    workload = None if path is None else _guard(lambda: read_workload(str(path)))
    if baselines is None:
        baselines = f"{WORKLOAD},stock" if workload is not None and workload.configs else "stock"
    names = [b.strip() for b in baselines.split(",") if b.strip()]
    if workload is not None and WORKLOAD in names and not workload.configs:
        raise _fail([f"--baselines {WORKLOAD}: no config-*.yaml beside the workload {workload.path}"])
    return workload, names


def tune(
    ctx: typer.Context,
    data_dir: Annotated[
        Path,
        typer.Argument(
            help="folder with the openb_*.csv files (a GPU trace), or a job workload: the folder gen-jobs writes "
            "(or its workload folder), or manifests with PodGroups"
        ),
    ],
    space: Annotated[Path, typer.Option("--space", help="a TuneSpace file: what to search (examples/tune/space.yaml)")],
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            help=f"what to optimise; on a trace, at 100% arrived: {', '.join(METRIC_NAMES)}; on a job workload: "
            f"{', '.join(JOB_METRIC_NAMES)} (default: {METRIC_NAMES[0]} on a trace, {JOB_METRIC_NAMES[0]} on jobs)",
            show_default=False,
        ),
    ] = None,
    trials: Annotated[
        int, typer.Option("--trials", help="finished trials the study should hold (a rerun resumes up to this)")
    ] = 30,
    seeds: Annotated[
        str,
        typer.Option(
            "--seeds",
            help="tuning seeds: each trial runs all of them (a synthetic job workload: each seed its own job set)",
        ),
    ] = "42-44",
    holdout_seeds: Annotated[
        str, typer.Option("--holdout-seeds", help="seeds the best configuration is checked on ('' for none)")
    ] = "45-54",
    baselines: Annotated[
        str | None,
        typer.Option(
            "--baselines",
            help="policies run on the held-out seeds: names, stock, paper ('' for none); on a job workload "
            f"LeastAllocated, MostAllocated, RequestedToCapacityRatio, stock, {WORKLOAD} (the config-*.yaml beside "
            f"it) (default: stock on a trace, {WORKLOAD},stock on jobs)",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="the TPE sampler's seed", min=0)] = 0,
    study_name: Annotated[str, typer.Option("--study-name", help="the study's name in --storage")] = DEFAULT_STUDY,
    storage: Annotated[
        Path | None, typer.Option("--storage", help=f"the study's SQLite file (default: OUT_DIR/{STORAGE_FILE})")
    ] = None,
    pods: PodsOpt = DEFAULT_PODS,
    nodes: NodesOpt = DEFAULT_NODES,
    tune: TuneOpt = DEFAULT_TUNE,
    tie_break: TieOpt = TIE_NAME,
    workers: WorkersOpt = 0,
    ray_address: Annotated[
        str | None, typer.Option("--ray-address", help="run the replays on this Ray cluster (ray.init's address)")
    ] = None,
    ray_timeout: Annotated[
        float, typer.Option("--ray-timeout", help="seconds Ray may take to connect before giving up")
    ] = RAY_CONNECT_TIMEOUT_S,
    out_dir: Annotated[
        Path, typer.Option("--out-dir", help="best-config.yaml, trials.csv, summary.json, search.png")
    ] = Path("out/tune"),
    output: OutputOpt = "table",
    html: HtmlOpt = None,
) -> None:
    """Search stock kube-scheduler configurations (a TuneSpace) for the best one on a GPU trace replay or on a job
    workload (gang-scheduled jobs, as gen-jobs writes), with Optuna's seeded TPE; resumable; the best is checked on
    held-out seeds beside baselines."""
    jobs = not _is_trace(data_dir)
    if jobs:
        given = [p for p in ctx.command.params if p.name in TRACE_ONLY and _given(ctx, str(p.name))]
        if given:
            raise _fail([f"{', '.join(p.opts[0] for p in given)}: only for a GPU trace; {data_dir} is a job workload"])
    _check_common(output, tie_break, tune, workers)
    check_html(html)
    if not 0 < ray_timeout < float("inf"):
        raise _fail([f"--ray-timeout must be a number of seconds above 0, got {ray_timeout}"])
    seed_list = _seeds(seeds, "--seeds")
    holdout = _seeds(holdout_seeds, "--holdout-seeds")
    metric = metric or (JOB_METRIC_NAMES[0] if jobs else METRIC_NAMES[0])
    from packsched.sim.jobtune import check_space

    workload, names = _workload(data_dir if jobs else None, baselines)
    _check(jobs, metric, trials, names, seed_list, holdout)
    from packsched.sim.sweep import Interrupted, connect_ray, default_workers, run_all, run_local, run_ray
    from packsched.sim.tune import (
        JOB_METRICS,
        METRICS,
        JobBench,
        TraceBench,
        Tuner,
        TuneSettings,
        batch_size,
        storage_error,
    )
    from packsched.sim.tunespace import load_space

    tune_space = _guard(lambda: load_space(str(space)))
    if workload is not None:
        _guard(lambda: check_space(tune_space))
    _check_out_dir(out_dir)
    n = workers or default_workers()
    bench: JobBench | TraceBench = (
        JobBench(workload, out_dir) if workload is not None else TraceBench(str(data_dir), pods, nodes, tune, tie_break)
    )
    settings = TuneSettings(
        bench=bench,
        space=tune_space,
        metric=(JOB_METRICS if jobs else METRICS)[metric],
        seeds=seed_list,
        holdout_seeds=holdout,
        trials=trials,
        out_dir=out_dir,
        storage=storage or out_dir / STORAGE_FILE,
        baselines=bench.baselines(names),
        study_name=study_name,
        seed=seed,
        batch=batch_size(n, len(seed_list)),
    )
    tuner = Tuner(settings)
    _guard(tuner.open)
    if tuner.stale:
        err.print(
            f"note: {tuner.stale} trial(s) left running by an earlier tune were marked failed",
            markup=False,
            highlight=False,
        )
    if ray_address is not None:
        _guard(lambda: connect_ray(ray_address, ray_timeout))
    from packsched.cli.progress import RunProgress, elapsed_text  # rich's progress bars: only for runs

    try:
        with RunProgress(err, "tune", tuner.planned_runs()) as progress:

            def run_batch(specs: Sequence[Any]) -> list[Any]:
                if jobs:
                    from packsched.sim.jobtune import run_job

                    return run_all(run_job, specs, n, progress.run_done)
                if ray_address is not None:
                    return _guard(lambda: run_ray(specs, ray_address, progress.run_done, timeout=ray_timeout))
                return run_local(specs, n, progress.run_done, progress.pods)

            _guard(lambda: tuner.search(run_batch))
            _guard(lambda: tuner.evaluate_holdout(run_batch))
    except Exception as exc:  # the study's database failing (a full disk): one line naming it, exit code 2
        reason = storage_error(exc)
        if reason is None:
            raise
        raise OutputError(settings.storage, reason) from None
    except (Interrupted, KeyboardInterrupt) as stop:  # Ctrl-C, or SIGTERM (packsched.cli.unix)
        data = tuner.write(interrupted={"phase": "holdout" if tuner.remaining == 0 else "search"}, with_plot=False)
        _write_page(html, tuner, data)
        err.print(
            f"{stop_text(stop)} after {elapsed_text(data['seconds'])}: the study holds {data['study']['complete']} "
            f"finished trial(s) of {trials}; run the same command to resume. Written: "
            + ", ".join(data["outputs"].values()),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(exit_code(stop)) from None
    data = tuner.write()
    _write_page(html, tuner, data)
    if output == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    _print_table(data)


def _write_page(path: Path | None, tuner: Tuner, data: dict[str, Any]) -> None:
    """``--html``: the tune page, with every trial and best-config.yaml."""
    if path is None:
        return
    best = data["outputs"].get("best_config")
    text = Path(best).read_text(encoding="utf-8") if best else None
    from packsched.sim.htmlreport.history import tune_extras  # the page's modules: only for --html

    write_html(path, data, tune_extras(tuner.rows(), text))


TRACE_COLUMNS = {"unallocated_gpu_pct": "unallocated GPU % @100%"}
JOB_COLUMNS = {
    "never_started": "never started",
    "gpu_hours_held_at_permit": "GPU·h at Permit",
    "gpu_hours_in_partial_gangs": "GPU·h partial gangs",
}


def _cell(group: dict[str, Any], key: str | None = None) -> str:
    part = group if key is None else group[key]
    if part["mean"] is None:
        return "-"
    return f"{part['mean']:.2f} ± {part['sd']:.2f}"


def _print_table(data: dict[str, Any]) -> None:
    from packsched.sim.tune import TUNED, seeds_text

    study, best, metric = data["study"], data["best"], data["metric"]
    out.print(
        f"study {study['name']}: {study['complete']} finished trial(s) ({study['finished_now']} now, "
        f"{study['failed']} failed)",
        markup=False,
        highlight=False,
    )
    if best is None:
        out.print("no finished trial: nothing to report", markup=False, highlight=False)
        return
    out.print(
        f"best: trial {best['trial']}, {metric['description']} {best['value']:.2f} (mean over seeds "
        f"{seeds_text(data['seeds'])}): {best['description']}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if data["holdout"]:
        from rich.table import Table

        table = Table(
            title=f"Held-out seeds {seeds_text(data['holdout_seeds'])}: {metric['description']} ({metric['direction']})"
        )
        table.add_column("configuration")
        # beside the metric: unallocated GPUs on a trace; on a job workload, jobs never started and the GPU-hours
        # held idle (at Permit, in partial gangs)
        figures = JOB_COLUMNS if data.get("trace") is None else TRACE_COLUMNS
        for col in (f"{metric['name']} (mean ± SD)", *figures.values(), "s/run"):
            table.add_column(col, justify="right")
        for g in data["holdout"]:
            label = f"{TUNED} (trial {best['trial']})" if g["label"] == TUNED else g["label"]
            cells = [_cell(g.get("jobs", g), key) for key in figures]
            table.add_row(label, _cell(g), *cells, f"{g['seconds_per_run']:.1f}")
        out.print(table)
    for name, path in data["outputs"].items():
        out.print(f"{name}: {path}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("tune")(tune)
