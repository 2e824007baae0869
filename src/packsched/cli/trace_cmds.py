"""``packsched replay`` and ``packsched compare``: the published GPU-trace protocol on any config or policy."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.markup import escape

from packsched.api.errors import InputError
from packsched.cli.console import make_console
from packsched.cli.report_cmd import HtmlOpt, check_html, write_trace_html
from packsched.cli.unix import exit_code, stop_text
from packsched.scheduler import TIE_BREAKS, TIE_NAME
from packsched.sim.defaults import DEFAULT_NODES, DEFAULT_PODS, DEFAULT_TUNE, RAY_CONNECT_TIMEOUT_S
from packsched.sim.policies import PAPER_POLICIES, POLICIES

if TYPE_CHECKING:  # the replay and the sweeps are imported where the commands run (not by `packsched serve`)
    from packsched.sim.replay import RunResult
    from packsched.sim.sweep import Interrupted, RunSpec

EXIT_INPUT = 2
MAX_SEEDS = 1000
out = make_console()
err = make_console(stderr=True)
T = TypeVar("T")

DataArg = Annotated[Path, typer.Argument(help="folder with the openb_*.csv files")]
PodsOpt = Annotated[str, typer.Option("--pods", help="pod list: default, cpu050, gpushare40, ... or a .csv")]
NodesOpt = Annotated[str, typer.Option("--nodes", help="node list: gpu_node (the paper's), all_node, or a .csv")]
SeedsOpt = Annotated[str, typer.Option("--seeds", help="seeds: 42-51, 42,43 or 42")]
TuneOpt = Annotated[float, typer.Option("--tune", help="inflate the GPU request to this multiple of capacity")]
TieOpt = Annotated[str, typer.Option("--tie-break", help="name (the paper's simulator) or random (kube-scheduler)")]
WorkersOpt = Annotated[int, typer.Option("--workers", help="worker processes (0: one per core, at most 8)")]
OutDirOpt = Annotated[Path | None, typer.Option("--out-dir", help="write runs.csv, summary.json and PNG plots here")]
OutputOpt = Annotated[str, typer.Option("--output", "-o", help="table or json")]


def _fail(messages: Sequence[str]) -> typer.Exit:
    for m in messages:
        err.print(f"[red]error:[/red] {escape(m)}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_INPUT)


def _guard(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except InputError as exc:
        raise _fail([str(e) for e in exc.errors]) from None


def parse_seeds(text: str) -> list[int]:
    """``42-51`` -> 42..51, ``1,5,9`` -> [1, 5, 9]; raises InputError naming --seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise InputError.single(
                f"{text!r}: expected a seed (42), a range (42-51) or a list (42,43)", path="--seeds"
            ) from None
        if a < 0 or b < a:
            raise InputError.single(f"{text!r}: a range must go up from a non-negative seed", path="--seeds")
        seeds.extend(range(a, b + 1))
        if len(seeds) > MAX_SEEDS:
            raise InputError.single(f"{text!r}: at most {MAX_SEEDS} seeds", path="--seeds")
    if len(set(seeds)) != len(seeds):
        raise InputError.single(f"{text!r}: a seed appears twice", path="--seeds")
    return seeds


def _check_common(output: str, tie_break: str, tune: float, workers: int) -> None:
    problems = []
    if output not in ("table", "json"):
        problems.append(f"--output must be table or json, got {output!r}")
    if tie_break not in TIE_BREAKS:
        problems.append(f"--tie-break must be one of {', '.join(TIE_BREAKS)}, got {tie_break!r}")
    if not 0 < tune <= 10:
        problems.append(f"--tune must be above 0 and at most 10, got {tune}")
    if workers < 0:
        problems.append(f"--workers must be 0 or more, got {workers}")
    if problems:
        raise _fail(problems)


def _check_out_dir(out_dir: Path | None) -> None:
    """Create ``--out-dir`` and write a file in it before any run: a folder that cannot take the results is an
    input error now (exit 2), not after the runs."""
    if out_dir is None:
        return
    if out_dir.exists() and not out_dir.is_dir():
        raise _fail([f"--out-dir {out_dir}: exists and is not a folder"])
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocking = next((p for p in out_dir.parents if p.exists() and not p.is_dir()), None)
        why = f"{blocking} is not a folder" if blocking is not None else (exc.strerror or str(exc))
        raise _fail([f"--out-dir {out_dir}: cannot create the folder: {why}"]) from None
    try:
        with tempfile.NamedTemporaryFile(dir=out_dir, prefix=".packsched-write-test-"):
            pass
    except OSError as exc:
        raise _fail([f"--out-dir {out_dir}: cannot write in the folder: {exc.strerror or exc}"]) from None


@dataclass
class _Sweep:
    runs: list[RunResult]  # in the order of the specs; on Ctrl-C or SIGTERM, those that finished
    total: int
    seconds: float
    stop: Interrupted | None = None  # what stopped the runs (Ctrl-C, SIGTERM), if anything did

    @property
    def interrupted(self) -> bool:
        return self.stop is not None


def _run(
    specs: list[RunSpec],
    workers: int,
    command: str,
    out_dir: Path | None,
    use_ray: bool = False,
    ray_address: str | None = None,
    ray_timeout: float = RAY_CONNECT_TIMEOUT_S,
) -> _Sweep:
    """Every run, with progress on standard error. Bad specs, an ``--out-dir`` that cannot be written and a Ray
    cluster that does not answer exit with code 2 before any run; Ctrl-C (or SIGTERM) returns the runs that
    finished."""
    from packsched.sim.sweep import (
        Interrupted,
        MetricOutOfRange,
        check_specs,
        connect_ray,
        default_workers,
        run_local,
        run_ray,
    )

    _guard(lambda: check_specs(specs))
    _check_out_dir(out_dir)
    if use_ray:
        _guard(lambda: connect_ray(ray_address, ray_timeout))
    n = workers or default_workers()
    start = time.monotonic()
    try:
        from packsched.cli.progress import RunProgress  # rich's progress bars: only for sweeps

        with RunProgress(err, command, len(specs)) as progress:
            if use_ray:
                runs = _guard(lambda: run_ray(specs, ray_address, progress.run_done, timeout=ray_timeout))
            else:
                runs = run_local(specs, n, progress.run_done, progress.pods)
    except Interrupted as stop:
        return _Sweep(stop.done, len(specs), time.monotonic() - start, stop)
    except MetricOutOfRange as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    return _Sweep(runs, len(specs), time.monotonic() - start)


def _mark_interrupted(sweep: _Sweep, data: dict[str, Any]) -> None:
    """After Ctrl-C or SIGTERM, the JSON output (and summary.json) say how many runs they hold."""
    if sweep.interrupted:
        data["interrupted"] = {"runs_done": len(sweep.runs), "runs_total": sweep.total}


def _end(sweep: _Sweep, files: dict[str, Any]) -> None:
    """After Ctrl-C or SIGTERM: which runs finished, where their results went, and exit code 130 (143 after
    SIGTERM)."""
    if sweep.stop is None:
        return
    from packsched.cli.progress import elapsed_text

    seeds: dict[str, list[str]] = {}
    for r in sweep.runs:
        seeds.setdefault(r.label, []).append(str(r.seed))
    finished = "; ".join(f"{label}: seed{'s' if len(s) > 1 else ''} {', '.join(s)}" for label, s in seeds.items())
    err.print(
        f"{stop_text(sweep.stop)} after {elapsed_text(sweep.seconds)}: {len(sweep.runs)} of {sweep.total} runs "
        "finished" + (f" ({finished}); the others were cancelled" if sweep.runs else ", no results"),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    if files:
        shown = ", ".join(str(v) for v in files.values())
        err.print(f"partial results written: {shown}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(exit_code(sweep.stop))


def _trace_info(data_dir: Path, pods: str, nodes: str, tune: float, tie_break: str) -> dict[str, Any]:
    return {"data_dir": str(data_dir), "pods": pods, "nodes": nodes, "tune": tune, "tie_break": tie_break}


def _workload(pods: str) -> str:
    return Path(pods).stem if pods.endswith(".csv") else f"openb_pod_list_{pods}"


def _fmt(x: float | None, sd: float | None = None) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" if sd is None else f"{x:.2f} ± {sd:.2f}"


def _write_outputs(
    out_dir: Path | None,
    groups: dict[str, list[RunResult]],
    summary: dict[str, Any],
    pubs: dict[str, Any],
    with_plots: bool = True,
) -> dict[str, Any]:
    """runs.csv, summary.json and (unless ``with_plots`` is off: after Ctrl-C, which should not wait for them) the
    plots; each file whole or not at all (a full disk: OutputError, exit 2)."""
    if out_dir is None:
        return {}
    from packsched.sim.sweep import write_csv, write_json

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _fail([f"--out-dir {out_dir}: cannot create the folder: {exc.strerror or exc}"]) from None
    all_runs = [r for rs in groups.values() for r in rs]
    files = {"csv": str(out_dir / "runs.csv"), "json": str(out_dir / "summary.json")}
    write_csv(all_runs, out_dir / "runs.csv")
    if not with_plots:
        summary["outputs"] = files
        write_json(summary, out_dir / "summary.json")
        return files
    from packsched.sim import plots

    files.update(plots.write_trace_pngs(out_dir, summary, groups, pubs))  # the HTML report's charts, as PNGs
    summary["outputs"] = files
    write_json(summary, out_dir / "summary.json")
    return files


def replay(
    data_dir: DataArg,
    pods: PodsOpt = DEFAULT_PODS,
    nodes: NodesOpt = DEFAULT_NODES,
    policy: Annotated[str | None, typer.Option("--policy", help=f"one of {', '.join(POLICIES)}")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="a KubeSchedulerConfiguration")] = None,
    seeds: SeedsOpt = "42",
    tune: TuneOpt = DEFAULT_TUNE,
    tie_break: TieOpt = TIE_NAME,
    workers: WorkersOpt = 0,
    output: OutputOpt = "table",
    out_dir: OutDirOpt = None,
    html: HtmlOpt = None,
    as_dra: Annotated[
        bool,
        typer.Option(
            "--as-dra", help="the GPUs as DRA devices with consumable capacity, allocated by DynamicResources"
        ),
    ] = False,
    gpu_choice: Annotated[
        str, typer.Option("--gpu-choice", help="GPUShare's GPU inside a node for --policy: BestFit or FirstFit")
    ] = "BestFit",
) -> None:
    """Replay a GPU trace with the published protocol (Weng et al., ATC '23): unallocated GPUs and fragmentation."""
    from packsched.sim.sweep import RunSpec, group_summary, published

    _check_common(output, tie_break, tune, workers)
    check_html(html)
    if (policy is None) == (config is None):
        raise _fail(["give exactly one of --policy NAME or --config FILE"])
    if gpu_choice not in ("BestFit", "FirstFit"):
        raise _fail([f"--gpu-choice must be BestFit or FirstFit, got {gpu_choice!r}"])
    if gpu_choice != "BestFit" and (as_dra or config is not None):
        raise _fail(["--gpu-choice sets GPUShare's args of a --policy; it does not go with --as-dra or --config"])
    if policy is not None and policy not in POLICIES:
        raise _fail([f"--policy: unknown policy {policy!r}; one of {', '.join(POLICIES)}"])
    seed_list = _guard(lambda: parse_seeds(seeds))
    label = policy or (config.stem if config else "config")
    specs = [
        RunSpec(
            label,
            s,
            str(data_dir),
            pods,
            nodes,
            policy,
            str(config) if config else None,
            tune,
            tie_break,
            gpu_choice,
            as_dra,
        )
        for s in seed_list
    ]
    sweep = _run(specs, workers, "replay", out_dir)
    runs = sweep.runs
    if not runs:
        _end(sweep, {})
    pub = published(str(data_dir), _workload(pods), policy)
    summary_group = group_summary(label, runs, pub)
    data: dict[str, Any] = {
        "schema": "packsched.replay/v1",
        "trace": _trace_info(data_dir, pods, nodes, tune, tie_break),
        "policy": policy,
        "config": str(config) if config else None,
        "as_dra": as_dra,
        "gpu_choice": gpu_choice,
        "runs": summary_group["runs"],
        "mean": summary_group["mean"],
        "sd": summary_group["sd"],
        "published": summary_group["published"],
        "seconds_per_run": summary_group["seconds_per_run"],
    }
    _mark_interrupted(sweep, data)
    files = _write_outputs(out_dir, {label: runs}, data, {label: pub}, with_plots=not sweep.interrupted)
    data["outputs"] = files
    write_trace_html(html, data, {label: runs}, {label: pub})
    if output == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        _end(sweep, files)
        return
    from rich.table import Table

    table = Table(title=f"{label} on {_workload(pods)}: unallocated GPU % (lower is better)")
    for col in ("seed", "@100% arrived", "@130% arrived", "frag rate @80%", "placed", "dropped", "seconds"):
        table.add_column(col, justify="right")
    for r in runs:
        j = r.as_json()
        table.add_row(
            str(r.seed),
            _fmt(r.unallocated(100)),
            _fmt(r.unallocated(130)),
            _fmt(j["frag_rate_pct"]["80"]),
            str(r.scheduled),
            str(r.failed),
            f"{r.seconds:.1f}",
        )
    table.add_row(
        "mean ± SD",
        _fmt(data["mean"]["100"], data["sd"]["100"]),
        _fmt(data["mean"]["130"], data["sd"]["130"]),
        "",
        "",
        "",
        "",
    )
    if pub:
        table.add_row(
            "published",
            _fmt(pub["mean"]["100"], pub["sd"]["100"]),
            _fmt(pub["mean"]["130"], pub["sd"]["130"]),
            "",
            "",
            "",
            "",
        )
    out.print(table)
    for name, path in files.items():
        out.print(f"{name}: {path}", highlight=False)
    _end(sweep, files)


# Options that only a trace folder takes: given with a cluster or a Scenario file, they are an error, not ignored.
TRACE_ONLY = (
    "policies",
    "pods",
    "nodes",
    "seeds",
    "tune",
    "tie_break",
    "workers",
    "use_ray",
    "ray_address",
    "ray_timeout",
    "out_dir",
)


def compare(
    ctx: typer.Context,
    data_dir: DataArg,
    policies: Annotated[str, typer.Option("--policies", help="comma-separated policy names ('' for none)")] = ",".join(
        PAPER_POLICIES
    ),
    config: Annotated[list[Path] | None, typer.Option("--config", "-c", help="config files (repeat)")] = None,
    pods: PodsOpt = DEFAULT_PODS,
    nodes: NodesOpt = DEFAULT_NODES,
    seeds: SeedsOpt = "42-51",
    tune: TuneOpt = DEFAULT_TUNE,
    tie_break: TieOpt = TIE_NAME,
    workers: WorkersOpt = 0,
    use_ray: Annotated[
        bool, typer.Option("--ray", help="run on a Ray cluster (pip install 'packsched\\[ray]')")
    ] = False,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="Ray cluster address (ray.init)")] = None,
    ray_timeout: Annotated[
        float, typer.Option("--ray-timeout", help="seconds Ray may take to connect (or start) before giving up")
    ] = RAY_CONNECT_TIMEOUT_S,
    output: OutputOpt = "table",
    out_dir: OutDirOpt = None,
    html: HtmlOpt = None,
) -> None:
    """Several policies and configs x seeds in parallel: mean ± SD beside the published figures, one plot. Given a
    cluster (manifests, a snapshot directory) or a Scenario file instead of a trace folder: the --config files side
    by side on it."""
    from packsched.sim.scenario import is_whatif_input

    check_html(html)
    if is_whatif_input(str(data_dir)):
        from packsched.cli.scenario_cmd import compare_whatif

        given = [p for p in ctx.command.params if p.name in TRACE_ONLY and _given(ctx, str(p.name))]
        if given:
            flags = ", ".join(p.opts[0] for p in given)
            why = f"{data_dir} is a cluster or a Scenario file, compared with --config"
            raise _fail([f"{flags}: only for a trace folder; {why}"])

        compare_whatif(data_dir, list(config or []), output, html)
        return
    from packsched.sim.sweep import RunSpec, group_summary, published

    _check_common(output, tie_break, tune, workers)
    names = [p.strip() for p in policies.split(",") if p.strip()]
    bad = [p for p in names if p not in POLICIES]
    problems = [f"--policies: unknown policy {p!r}; one of {', '.join(POLICIES)}" for p in bad]
    configs = list(config or [])
    if not names and not configs:
        problems.append("nothing to compare: give --policies and/or --config")
    labels = names + [c.stem for c in configs]
    if len(set(labels)) != len(labels):
        problems.append(f"two entries share a label: {labels}")
    if not 0 < ray_timeout < float("inf"):
        problems.append(f"--ray-timeout must be a number of seconds above 0, got {ray_timeout}")
    if problems:
        raise _fail(problems)
    seed_list = _guard(lambda: parse_seeds(seeds))
    specs = [RunSpec(p, s, str(data_dir), pods, nodes, p, None, tune, tie_break) for p in names for s in seed_list]
    specs += [
        RunSpec(c.stem, s, str(data_dir), pods, nodes, None, str(c), tune, tie_break)
        for c in configs
        for s in seed_list
    ]
    sweep = _run(specs, workers, "compare", out_dir, use_ray, ray_address, ray_timeout)
    if not sweep.runs:
        _end(sweep, {})
    groups: dict[str, list[RunResult]] = {}
    for r in sweep.runs:
        groups.setdefault(r.label, []).append(r)
    pubs = {label: published(str(data_dir), _workload(pods), label) for label in groups}
    summaries = {label: group_summary(label, rs, pubs[label]) for label, rs in groups.items()}
    data: dict[str, Any] = {
        "schema": "packsched.compare/v1",
        "trace": _trace_info(data_dir, pods, nodes, tune, tie_break),
        "seeds": seed_list,
        "policies": list(summaries.values()),
    }
    _mark_interrupted(sweep, data)
    data["outputs"] = _write_outputs(out_dir, groups, data, pubs, with_plots=not sweep.interrupted)
    write_trace_html(html, data, groups, pubs)
    if output == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        _end(sweep, data["outputs"])
        return
    partial = f", interrupted: {len(sweep.runs)} of {sweep.total} runs" if sweep.interrupted else ""
    from rich.table import Table

    table = Table(title=f"Unallocated GPU % on {_workload(pods)}, {len(seed_list)} seed(s){partial} (lower is better)")
    for col in (
        "policy",
        "@100% (mean ± SD)",
        "published @100%",
        "diff",
        "@130%",
        "published @130%",
        "frag rate @80%",
        "s/run",
    ):
        table.add_column(col, justify="right" if col != "policy" else "left")
    for label, s in summaries.items():
        p = s["published"]
        m100 = s["mean"]["100"]
        diff = "-" if not p or m100 is None else f"{m100 - p['mean']['100']:+.2f}"
        table.add_row(
            label,
            _fmt(m100, s["sd"]["100"]),
            _fmt(p["mean"]["100"], p["sd"]["100"]) if p else "-",
            diff,
            _fmt(s["mean"]["130"], s["sd"]["130"]),
            _fmt(p["mean"]["130"], p["sd"]["130"]) if p else "-",
            _fmt(s["frag_rate_pct_80"]["mean"]),
            f"{s['seconds_per_run']:.1f}",
        )
    out.print(table)
    for name, path in data["outputs"].items():
        out.print(f"{name}: {path}", highlight=False)
    _end(sweep, data["outputs"])


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the user gave the option (not its default)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)
    app.command("compare")(compare)
