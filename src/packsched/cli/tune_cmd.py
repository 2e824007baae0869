"""``packsched tune``: search the stock kube-scheduler configurations of a TuneSpace for the best one on a GPU
trace replay (Optuna's TPE; see :mod:`packsched.sim.tune`), then check it on held-out seeds beside baselines."""

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
    DataArg,
    NodesOpt,
    OutputOpt,
    PodsOpt,
    TieOpt,
    TuneOpt,
    WorkersOpt,
    _check_common,
    _check_out_dir,
    _fail,
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
    METRIC_NAMES,
    RAY_CONNECT_TIMEOUT_S,
    STORAGE_FILE,
)
from packsched.sim.policies import POLICIES

if TYPE_CHECKING:  # the tuner, the replay and the sweeps are imported where the command runs
    from packsched.sim.replay import RunResult
    from packsched.sim.sweep import RunSpec
    from packsched.sim.tune import Tuner

MAX_TRIALS = 100_000


def _seeds(text: str, option: str) -> list[int]:
    """parse_seeds, naming ``option`` in its errors; an empty text is no seed."""
    if not text.strip():
        return []
    try:
        return parse_seeds(text)
    except InputError as exc:  # naming --seeds
        raise _fail([str(exc).replace("--seeds", option)]) from None


def _check(metric: str, trials: int, baselines: list[str], seeds: list[int], holdout: list[int]) -> None:
    from packsched.sim.tune import BASELINE_SETS, seeds_text

    problems = []
    if metric not in METRIC_NAMES:
        problems.append(f"--metric must be one of {', '.join(METRIC_NAMES)}, got {metric!r}")
    if not 1 <= trials <= MAX_TRIALS:
        problems.append(f"--trials must be between 1 and {MAX_TRIALS:,}, got {trials}")
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


def tune(
    data_dir: DataArg,
    space: Annotated[Path, typer.Option("--space", help="a TuneSpace file: what to search (examples/tune/space.yaml)")],
    metric: Annotated[
        str,
        typer.Option("--metric", help=f"what to optimise at 100% arrived: {', '.join(METRIC_NAMES)}"),
    ] = "unallocated-gpu",
    trials: Annotated[
        int, typer.Option("--trials", help="finished trials the study should hold (a rerun resumes up to this)")
    ] = 30,
    seeds: Annotated[str, typer.Option("--seeds", help="tuning seeds: each trial replays all of them")] = "42-44",
    holdout_seeds: Annotated[
        str, typer.Option("--holdout-seeds", help="seeds the best configuration is checked on ('' for none)")
    ] = "45-54",
    baselines: Annotated[
        str,
        typer.Option("--baselines", help="policies replayed on the held-out seeds: names, stock, paper ('' for none)"),
    ] = "stock",
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
    """Search stock kube-scheduler configurations (a TuneSpace) for the best one on a GPU trace replay, with
    Optuna's seeded TPE; resumable; the best is checked on held-out seeds beside baselines."""
    _check_common(output, tie_break, tune, workers)
    check_html(html)
    if not 0 < ray_timeout < float("inf"):
        raise _fail([f"--ray-timeout must be a number of seconds above 0, got {ray_timeout}"])
    seed_list = _seeds(seeds, "--seeds")
    holdout = _seeds(holdout_seeds, "--holdout-seeds")
    names = [b.strip() for b in baselines.split(",") if b.strip()]
    _check(metric, trials, names, seed_list, holdout)
    from packsched.sim.sweep import Interrupted, connect_ray, default_workers, run_local, run_ray
    from packsched.sim.tune import METRICS, Tuner, TuneSettings, batch_size, expand_baselines, storage_error
    from packsched.sim.tunespace import load_space

    tune_space = _guard(lambda: load_space(str(space)))
    _check_out_dir(out_dir)
    n = workers or default_workers()
    settings = TuneSettings(
        data_dir=str(data_dir),
        space=tune_space,
        metric=METRICS[metric],
        seeds=seed_list,
        holdout_seeds=holdout,
        trials=trials,
        out_dir=out_dir,
        storage=storage or out_dir / STORAGE_FILE,
        baselines=expand_baselines(names),
        study_name=study_name,
        seed=seed,
        batch=batch_size(n, len(seed_list)),
        pods=pods,
        nodes=nodes,
        tune=tune,
        tie_break=tie_break,
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

            def run_batch(specs: Sequence[RunSpec]) -> list[RunResult]:
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
        for col in (f"{metric['name']} (mean ± SD)", "unallocated GPU % @100%", "s/run"):
            table.add_column(col, justify="right")
        for g in data["holdout"]:
            label = f"{TUNED} (trial {best['trial']})" if g["label"] == TUNED else g["label"]
            table.add_row(label, _cell(g), _cell(g, "unallocated_gpu_pct"), f"{g['seconds_per_run']:.1f}")
        out.print(table)
    for name, path in data["outputs"].items():
        out.print(f"{name}: {path}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("tune")(tune)
