"""The ``packsched`` command line."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
import yaml
from rich.markup import escape

from packsched.api.annotations import format_duration, parse_duration
from packsched.api.errors import InputError
from packsched.api.files import read_text
from packsched.api.gpushare import gpu_annotation_errors
from packsched.api.manifests import Cluster, iter_manifest_files, load_manifests
from packsched.api.nesting import SAFE_LOADER, yaml_too_deep
from packsched.cli.console import make_console
from packsched.cli.report_cmd import HtmlOpt, check_html, write_html
from packsched.cli.unix import Group, flush_stdout
from packsched.config import DEFAULT_SCHEDULER_NAME, default_config, load_config
from packsched.config.features import parse_feature_gates
from packsched.config.lint import lint
from packsched.config.loader import FEATURE_GATES_OPTION, apply_feature_gates, load_config_data, resolve_version
from packsched.config.types import RTCR_SEMANTICS, SEMANTICS_CURRENT, KubeSchedulerConfiguration
from packsched.config.versions import NEWEST, OLDEST_MODELLED, KubeVersion, parse_kube_version
from packsched.live.binding import DEFAULT_WORKERS
from packsched.live.serve import DEFAULT_BIND_ADDRESS, DEFAULT_PORT
from packsched.live.victims import DELETE
from packsched.plugins.capacityscheduling.capacity_scheduling import recommended_plugins
from packsched.plugins.registry import in_tree_registry

# What only the simulating commands use (the simulator, its reports, quota lint) is imported in their bodies:
# `packsched serve` starts watching sooner without it (tests/cli/test_lazy_imports.py keeps it so).

app = typer.Typer(
    cls=Group,  # SIGTERM as Ctrl-C, a closed pipe, a full disk: packsched.cli.unix
    add_completion=True,
    no_args_is_help=True,
    help="Kubernetes scheduling simulator: kube-scheduler's bin packing and elastic quotas.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
out = make_console()
err = make_console(stderr=True)
EXIT_INPUT = 2
T = TypeVar("T")
MAX_PORT = 65535


def _in_range(option: str, low: int, high: int | None = None) -> Callable[[int], int]:
    """A callback that rejects a value of ``option`` below ``low`` (or above ``high``) while the arguments are
    parsed: one error line and exit code 2."""

    def check(value: int) -> int:
        if value < low or (high is not None and value > high):
            where = f"between {low} and {high}" if high is not None else f"{low} or more"
            err.print(f"[red]error:[/red] {option} must be {where}, got {value}", highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_INPUT)
        return value

    return check


OutputOpt = Annotated[str, typer.Option("--output", "-o", help="table or json")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="KubeSchedulerConfiguration or Policy file")]
StrictOpt = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="an object of a kind packsched does not model (a custom resource, say) is an error, not skipped",
    ),
]
SeedOpt = Annotated[
    int, typer.Option("--seed", help="seed for tie-breaks and preemption offsets", callback=_in_range("--seed", 0))
]
SemanticsOpt = Annotated[
    str,
    typer.Option(
        "--rtcr-semantics",
        help="alias of --kube-version for RequestedToCapacityRatio's arithmetic: current (no change), v1.17 "
        "(= --kube-version 1.17: v1.17-v1.21) or v1.16 (= --kube-version 1.16: 0-10 scores)",
    ),
]
KubeVersionOpt = Annotated[
    str | None,
    typer.Option(
        "--kube-version",
        help=f"imitate this kube-scheduler minor version, 1.{OLDEST_MODELLED}-1.{NEWEST} (default: 1.{NEWEST}, or "
        "the config file's PackschedConfiguration); see docs/reference/semantics.md",
    ),
]


FeatureGatesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--feature-gates",
        help="feature gates over the release's defaults, as kube-scheduler takes them: Name=true,Other=false "
        "(repeatable; wins over the config file's PackschedConfiguration featureGates); see "
        "docs/reference/semantics.md",
        metavar="NAME=BOOL,...",
    ),
]


def _print_version(value: bool) -> None:
    if not value:
        return
    from importlib.metadata import PackageNotFoundError  # 40 ms of imports: not for every command's start
    from importlib.metadata import version as package_version

    try:
        text = package_version("packsched")
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        text = "unknown (not installed)"
    flush_stdout(f"packsched {text}\n")  # before any command: its write errors are handled here
    raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", help="print packsched's version and exit", callback=_print_version, is_eager=True),
    ] = False,
) -> None:
    pass


def _guard(fn: Callable[[], T]) -> T:
    """Run ``fn``; bad input prints every problem (file: field path: message) and exits with code 2."""
    try:
        return fn()
    except InputError as exc:
        for e in exc.errors:
            err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_INPUT) from None


def _check_output(output: str) -> None:
    if output not in ("table", "json"):
        err.print(f"[red]error:[/red] --output must be table or json, got {output!r}")
        raise typer.Exit(EXIT_INPUT)


def _check_semantics(semantics: str) -> None:
    if semantics not in RTCR_SEMANTICS:
        err.print(f"[red]error:[/red] --rtcr-semantics must be one of {', '.join(RTCR_SEMANTICS)}")
        raise typer.Exit(EXIT_INPUT)


def _kube_version(text: str | None, semantics: str) -> KubeVersion | None:
    """The --kube-version given (None: not given), checked against the --rtcr-semantics alias; exit 2 when
    either is wrong."""
    _check_semantics(semantics)
    try:
        version = None if text is None else parse_kube_version(text)
        if version is not None or semantics != SEMANTICS_CURRENT:
            version = resolve_version(version, semantics)
    except ValueError as exc:
        err.print(f"[red]error:[/red] --kube-version: {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_INPUT) from None
    if version is not None and not version.modelled:
        err.print(
            f"warning: kube-scheduler {version} is older than packsched models (1.{OLDEST_MODELLED}): only "
            f"RequestedToCapacityRatio's arithmetic follows {version}, the rest follows 1.{OLDEST_MODELLED}",
            highlight=False,
            soft_wrap=True,
        )
    return version


def _feature_gates(texts: list[str] | None) -> dict[str, bool]:
    """The gates of --feature-gates (none: {}); a pair kube-scheduler's parser would refuse exits 2. Whether the
    release has them is checked when the configuration is made (it may name the release)."""
    try:
        return parse_feature_gates(texts or [])
    except ValueError as exc:
        err.print(f"[red]error:[/red] {FEATURE_GATES_OPTION}: {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_INPUT) from None


def known_plugins() -> set[str]:
    return set(in_tree_registry())


def _config(
    path: Path | None, version: KubeVersion | None, gates: dict[str, bool] | None = None
) -> KubeSchedulerConfiguration:
    if path is None:
        return default_config(known_plugins(), version, gates)
    return load_config(str(path), known_plugins(), kube_version=version, feature_gates=gates)


def _load(
    paths: list[Path],
    config: Path | None,
    version: KubeVersion | None,
    strict: bool = False,
    gates: dict[str, bool] | None = None,
) -> tuple[Cluster, KubeSchedulerConfiguration]:
    def load() -> tuple[Cluster, KubeSchedulerConfiguration]:
        errors = []
        cluster = cfg = None
        try:
            cfg = _config(config, version, gates)
        except InputError as exc:
            errors += exc.errors
        try:
            cluster = load_manifests([str(p) for p in paths], strict)
            errors += gpu_annotation_errors(cluster.pods)
        except InputError as exc:
            errors += exc.errors
        if errors or cluster is None or cfg is None:
            raise InputError(errors)
        return cluster, cfg

    return _guard(load)


def _emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")


@app.command()
def simulate(
    paths: Annotated[list[Path], typer.Argument(help="manifest files or directories (-: standard input)")],
    config: ConfigOpt = None,
    seed: SeedOpt = 0,
    output: OutputOpt = "table",
    rtcr_semantics: SemanticsOpt = SEMANTICS_CURRENT,
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
    limit: Annotated[
        int, typer.Option("--limit", help="rows per table in table output", callback=_in_range("--limit", 0))
    ] = 200,
    html: HtmlOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Schedule every pod of the manifests; show placements, per-node utilisation and pending pods."""
    _check_output(output)
    version = _kube_version(kube_version, rtcr_semantics)
    cluster, cfg = _load(paths, config, version, strict, _feature_gates(feature_gates))
    if not cluster.nodes and not cluster.pods and not cluster.workloads:
        err.print("[red]error:[/red] the manifests define no nodes and no pods: nothing to simulate", soft_wrap=True)
        raise typer.Exit(EXIT_INPUT)
    check_html(html)
    from packsched.plugins.capacityscheduling.lint import not_enforced_warning
    from packsched.sim import report
    from packsched.sim.engine import run_simulation

    if html is not None:  # the same run, and what the page adds (history, every pod's explain table)
        from packsched.sim.htmlreport.history import simulate_with_extras  # the page's modules: only for --html

        result, extras = _guard(lambda: simulate_with_extras(cluster, cfg, in_tree_registry(), seed))
    else:
        result = _guard(lambda: run_simulation(cluster, cfg, in_tree_registry(), seed))
    unenforced = not_enforced_warning(cluster, cfg)
    if unenforced:
        result.warnings.append(unenforced)
    if html is not None:
        title = f"packsched simulate {' '.join(map(str, paths))}"
        write_html(html, report.simulate_json(result, cfg, seed), extras, title)
    if output == "json":
        _emit_json(report.simulate_json(result, cfg, seed))
    else:
        _print_notes(cfg, cluster)
        report.print_simulation(out, result, limit, warnings_to=err)


# kube-scheduler's defaults plus CapacityScheduling as scheduler-plugins configures it.
CAPACITY_SCHEDULING_CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": DEFAULT_SCHEDULER_NAME, "plugins": recommended_plugins()}],
}


@app.command()
def quotas(
    paths: Annotated[list[Path], typer.Argument(help="manifest files or directories (-: standard input)")],
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="scheduler configuration (default: CapacityScheduling's profile)"),
    ] = None,
    seed: SeedOpt = 0,
    output: OutputOpt = "table",
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Per ElasticQuota after the simulation: min / used / max per resource, what it borrows beyond its min
    (and so could lose to reclaim), and what of its min it leaves to others."""
    from packsched.plugins.capacityscheduling.lint import not_enforced_warning, quota_warnings
    from packsched.sim import quotas as quota_report
    from packsched.sim.engine import run_simulation

    _check_output(output)
    version = _kube_version(kube_version, SEMANTICS_CURRENT)
    gates = _feature_gates(feature_gates)
    if config is None:
        cluster = _guard(lambda: load_manifests([str(p) for p in paths], strict))
        cfg = _guard(
            lambda: load_config_data(
                CAPACITY_SCHEDULING_CONFIG, "(built in)", known_plugins(), kube_version=version, feature_gates=gates
            )
        )
    else:
        cluster, cfg = _load(paths, config, version, strict, gates)
    if not cluster.elastic_quotas:
        err.print("[red]error:[/red] the manifests define no ElasticQuota")
        raise typer.Exit(EXIT_INPUT)
    result = _guard(lambda: run_simulation(cluster, cfg, in_tree_registry(), seed))
    warnings = quota_warnings(cluster)
    unenforced = not_enforced_warning(cluster, cfg)
    if unenforced:
        warnings.insert(0, unenforced)
    rows = quota_report.quota_rows(cluster, result)
    if output == "json":
        _emit_json(quota_report.quotas_json(rows, warnings))
        return
    for w in warnings:
        err.print(f"[yellow]warning:[/yellow] {w}", highlight=False, soft_wrap=True)
    quota_report.print_quotas(out, rows)


@app.command()
def gangs(
    paths: Annotated[list[Path], typer.Argument(help="manifest files or directories (-: standard input)")],
    config: ConfigOpt = None,
    seed: SeedOpt = 0,
    output: OutputOpt = "table",
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Per gang after the simulation (scheduler-plugins' PodGroups; kube-scheduler's own from --kube-version 1.35,
    with GenericWorkload on): when its job was submitted and started, the wait, the GPU-hours its placed members
    held while waiting at Permit, Permit timeouts, and the phase the PodGroup controller writes."""
    from packsched.sim import gangs as gang_report
    from packsched.sim.engine import run_simulation

    _check_output(output)
    version = _kube_version(kube_version, SEMANTICS_CURRENT)
    cluster, cfg = _load(paths, config, version, strict, _feature_gates(feature_gates))
    if not gang_report.gangs_of(cluster, cfg.kube_version, cluster.pods):
        err.print(
            "[red]error:[/red] the manifests define no gang: no PodGroup of scheduling.x-k8s.io, nor (kube-scheduler "
            "1.35) a Workload or (1.36) a PodGroup of scheduling.k8s.io with a gang policy",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_INPUT)
    result = _guard(lambda: run_simulation(cluster, cfg, in_tree_registry(), seed))
    gangs = gang_report.gangs_of(cluster, cfg.kube_version, (r.pod for r in result.records))
    warnings = [*gang_report.gang_warnings(gangs, cfg), *result.warnings]
    rows = gang_report.gang_rows(gangs, result)
    if output == "json":
        _emit_json(gang_report.gangs_json(rows, warnings))
        return
    for w in warnings:
        err.print(f"[yellow]warning:[/yellow] {w}", highlight=False, soft_wrap=True)
    gang_report.print_gangs(out, rows)


@app.command("gen-jobs")
def gen_jobs(
    out_dir: Annotated[Path, typer.Argument(help="the directory to write (new or empty)")],
    jobs: Annotated[
        int,
        typer.Option("--jobs", help="how many training jobs (with --from-trace: the first N by arrival)", metavar="N"),
    ] = 200,
    nodes: Annotated[int, typer.Option("--nodes", help="nodes of the cluster", metavar="N")] = 32,
    gpus_per_node: Annotated[int, typer.Option("--gpus-per-node", help="GPUs of each node", metavar="N")] = 8,
    load: Annotated[
        float | None,
        typer.Option(
            "--load",
            help="offered load of the synthetic jobs: GPU-seconds asked per second over the cluster's GPUs "
            "\\[default: 0.9]",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option("--seed", help="seed of the synthetic jobs \\[default: 0]", show_default=False, min=0),
    ] = None,
    from_trace: Annotated[
        Path | None,
        typer.Option(
            "--from-trace",
            help="read the jobs from a job trace instead (Alibaba PAI's pai_task_table.csv, or a pod list with a "
            "job_id column): each job a gang",
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Write a workload of GPU training jobs (PodGroups and Jobs arriving over time) and two configurations, with
    Coscheduling and without, to compare gang-aware and pod-by-pod scheduling: synthetic and seeded, or read from a
    job trace (--from-trace)."""
    from packsched.api.files import write_text_replacing
    from packsched.sim import jobgen
    from packsched.sim.jobtrace import TraceJob, read_job_trace

    if jobs < 1 or nodes < 1 or gpus_per_node < 1 or not (load is None or load > 0):
        err.print("[red]error:[/red] --jobs, --nodes and --gpus-per-node must be at least 1, --load above 0")
        raise typer.Exit(EXIT_INPUT)
    if from_trace is not None and (load is not None or seed is not None):
        err.print("[red]error:[/red] --load and --seed shape the synthetic jobs; a trace (--from-trace) has its own")
        raise typer.Exit(EXIT_INPUT)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        err.print(f"[red]error:[/red] {escape(str(out_dir))}: not a new or empty directory", highlight=False)
        raise typer.Exit(EXIT_INPUT)
    notes: list[str] = []
    specs: list[TraceJob]
    if from_trace is None:
        load, seed = 0.9 if load is None else load, seed or 0
        synthetic = jobgen.draw_jobs(jobs, nodes, gpus_per_node, load, seed)
        docs = jobgen.job_documents(synthetic)
        specs = [TraceJob(j.name, j.arrival, j.run, ()) for j in synthetic]
        pods = sum(j.workers for j in synthetic)
        note = f"--jobs {jobs} --nodes {nodes} --gpus-per-node {gpus_per_node} --load {load} --seed {seed}"
    else:
        trace = from_trace
        reading = _guard(lambda: read_job_trace(trace, jobs))
        specs = reading.jobs
        docs = jobgen.gang_documents(specs)
        pods = sum(j.pods for j in specs)
        note = f"--jobs {jobs} --nodes {nodes} --gpus-per-node {gpus_per_node} --from-trace {from_trace.name}"
        if reading.unfinished:
            notes.append(f"{reading.unfinished} job(s) left out: a task without a start or an end time")
        if reading.rounded_tasks:
            notes.append(f"{reading.rounded_tasks} task(s) asked a fraction of a GPU: rounded up to whole GPUs")
        too_big = sum(1 for j in specs if any(t.gpus > gpus_per_node for t in j.tasks))
        if too_big:
            notes.append(
                f"{too_big} job(s) have a pod asking more GPUs than a node has ({gpus_per_node}): never placed"
            )
    header = f"# packsched gen-jobs {note}\n"
    files = {
        out_dir / "workload" / "cluster.yaml": jobgen.dump(jobgen.cluster_documents(nodes, gpus_per_node), header),
        out_dir / "workload" / "jobs.yaml": jobgen.dump(docs, header),
        out_dir / "config-coscheduling.yaml": jobgen.dump([jobgen.config_document(True)], header),
        out_dir / "config-pod-by-pod.yaml": jobgen.dump([jobgen.config_document(False)], header),
    }

    def write() -> None:
        (out_dir / "workload").mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            write_text_replacing(path, text)

    _guard(write)
    source = "" if from_trace is None else f" from {escape(str(from_trace))}"
    out.print(
        f"{len(specs)} jobs ({pods} pods){source} over {format_duration(specs[-1].arrival)} on {nodes} nodes x "
        f"{gpus_per_node} GPUs in {escape(str(out_dir))}; compare them with\n  packsched compare "
        f"{escape(str(out_dir / 'workload'))} --config {escape(str(out_dir / 'config-coscheduling.yaml'))} --config "
        f"{escape(str(out_dir / 'config-pod-by-pod.yaml'))}",
        highlight=False,
        soft_wrap=True,
    )
    for line in notes:
        err.print(f"note: {line}", highlight=False, soft_wrap=True)


@app.command()
def explain(
    paths: Annotated[list[Path], typer.Argument(help="manifest files or directories (-: standard input)")],
    pod: Annotated[str, typer.Option("--pod", help="namespace/name of the pod to explain")],
    config: ConfigOpt = None,
    seed: SeedOpt = 0,
    output: OutputOpt = "table",
    rtcr_semantics: SemanticsOpt = SEMANTICS_CURRENT,
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
    strict: StrictOpt = False,
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            metavar="DURATION",
            help="the state at this virtual time (90s, 5m, 1h2m) instead of at the end of the simulation",
        ),
    ] = None,
) -> None:
    """For one pod: every node's filter verdict and reasons, each score plugin's score and the chosen node; for a
    gang member, its group (members placed, waiting at Permit, pending, and where each unplaced one does not fit)."""
    from packsched.sim import gangs as gang_report
    from packsched.sim import report
    from packsched.sim.engine import Simulation

    _check_output(output)
    until: float | None = None
    if at is not None:
        try:
            until = parse_duration(at)
        except ValueError as exc:
            err.print(f"[red]error:[/red] --at: {escape(str(exc))}, got {escape(repr(at))}", highlight=False)
            raise typer.Exit(EXIT_INPUT) from None
    version = _kube_version(kube_version, rtcr_semantics)
    cluster, cfg = _load(paths, config, version, strict, _feature_gates(feature_gates))
    key = pod if "/" in pod else f"default/{pod}"
    target = cluster.pod(key)
    # a gang member's siblings are explained too (where each one that is not placed does not fit)
    capture = {key, *gang_report.sibling_keys(cluster, cfg.kube_version, key)}

    def simulate() -> Simulation:
        sim = Simulation(cluster, cfg, in_tree_registry(), seed, capture)
        sim.run_until(until)
        return sim

    sim = _guard(simulate)
    result = sim.result()
    if target is None and not any(r.pod.key == key for r in result.records):
        # not in the manifests, nor created during the simulation (a replacement, a Job's next pod)
        err.print(f"[red]error:[/red] no pod {key} in the manifests or the simulation")
        raise typer.Exit(EXIT_INPUT)
    cycles = result.captured.get(key, [])
    data = report.explain_json(
        key,
        cycles[-1] if cycles else None,
        result.snapshot,
        len(cycles),
        cfg,
        bound_by_manifest=(target.node_name or None) if target is not None else None,
    )
    if until is not None:
        data["at"] = result.end_time
    preempting = report.preemption_json(key, cycles, result.events)
    if preempting is not None:
        data["preemption"] = preempting
    waiting = {w.pod.key: w for w in sim.scheduler.waiting_pods()}
    gangs = gang_report.gangs_of(cluster, cfg.kube_version, (r.pod for r in result.records), basic=True)
    group = gang_report.group_detail(gangs, result, key, cfg.kube_version, waiting)
    if group is not None:
        data["group"] = group
    if output == "json":
        _emit_json(data)
    else:
        report.print_explain(out, data)
        if group is not None:
            gang_report.print_group(out, group)


# "Policy" as a word of its own (not imagePullPolicy, restartPolicy, ...), or a backslash (an escape in a quoted
# string could spell a kind without its letters appearing).
_MAY_NAME_A_CONFIG_KIND = re.compile(r"KubeSchedulerConfiguration|(?<![\w.-])Policy(?![\w.-])|\\")


def _is_config_file(path: str) -> bool:
    """Whether a document of the file is a KubeSchedulerConfiguration or a Policy. A file whose text cannot name
    either kind (most manifests) is not parsed here; the others are read with libyaml's loader, as manifests are
    (PyYAML's pure-Python loader took minutes on a 50 MB manifest file)."""
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError):
        return False
    if _MAY_NAME_A_CONFIG_KIND.search(text) is None:
        return False
    if yaml_too_deep(text, SAFE_LOADER):
        return True  # nested too deeply to tell: the config loader reports it, naming the file
    try:
        docs = list(yaml.load_all(text, Loader=SAFE_LOADER))
    except RecursionError:  # aliases nesting a value deeper than the text does
        return True
    except yaml.YAMLError:
        return False
    kinds = {d.get("kind") for d in docs if isinstance(d, dict) and isinstance(d.get("kind"), str)}
    return bool(kinds & {"KubeSchedulerConfiguration", "Policy"})


@app.command()
def validate(
    files: Annotated[
        list[Path], typer.Argument(help="configs and manifests (files or directories; -: standard input)")
    ],
    rtcr_semantics: SemanticsOpt = SEMANTICS_CURRENT,
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
    strict: StrictOpt = False,
) -> None:
    """Check configs and manifests: every problem with its file and field path, and bin-packing traps."""
    from packsched.plugins.capacityscheduling.lint import not_enforced_warning, quota_warnings

    version = _kube_version(kube_version, rtcr_semantics)
    gates = _feature_gates(feature_gates)
    problems: list[str] = []
    warnings: list[str] = []
    all_files = list(iter_manifest_files(str(f) for f in files))
    configs = [f for f in all_files if _is_config_file(f)]
    manifests = [f for f in all_files if f not in configs]
    loaded: list[KubeSchedulerConfiguration] = []
    if gates and not configs:  # no file names the release: the gates are checked against the one given
        try:
            apply_feature_gates(resolve_version(version, SEMANTICS_CURRENT), {}, gates)
        except InputError as exc:
            problems += [str(e) for e in exc.errors]
    for path in configs:
        try:
            cfg = load_config(path, known_plugins(), kube_version=version, feature_gates=gates)
        except InputError as exc:
            problems += [str(e) for e in exc.errors]
            continue
        loaded.append(cfg)
        warnings += [f"{cfg.source_file}: {w}" for w in cfg.warnings + lint(cfg)]
        for p in cfg.profiles:
            if p.omitted_default_plugins:
                warnings.append(
                    f"{cfg.source_file}: profile {p.scheduler_name}: default plugins packsched does not simulate "
                    f"yet (left out): {', '.join(p.omitted_default_plugins)}"
                )
    if manifests:
        try:
            cluster = load_manifests(manifests, strict)
            warnings += cluster_notes(cluster, [str(c) for c in configs])
            if cluster.skipped_summary():
                warnings.append(cluster.skipped_summary())
            warnings += quota_warnings(cluster)
            if loaded and cluster.elastic_quotas:
                unenforced = [c for c in loaded if not_enforced_warning(cluster, c)]
                warnings += [f"{c.source_file}: {not_enforced_warning(cluster, c)}" for c in unenforced]
        except InputError as exc:
            problems += [str(e) for e in exc.errors]
    for w in warnings:
        err.print(f"[yellow]warning:[/yellow] {escape(w)}", highlight=False, soft_wrap=True)
    for problem in problems:
        err.print(f"[red]error:[/red] {escape(problem)}", highlight=False, soft_wrap=True)
    if problems:
        raise typer.Exit(EXIT_INPUT)
    out.print(
        f"ok: {len(configs)} config file(s), {len(manifests)} manifest file(s)"
        + (f", {len(warnings)} warning(s)" if warnings else "")
    )


def _print_notes(cfg: KubeSchedulerConfiguration, cluster: Cluster) -> None:
    for p in cfg.profiles:
        if p.omitted_default_plugins:
            err.print(
                f"note: profile {p.scheduler_name}: default plugins not simulated: "
                f"{', '.join(p.omitted_default_plugins)}",
                highlight=False,
            )
    for note in cluster_notes(cluster, [cfg.source_file]):
        err.print(f"note: {escape(note)}", highlight=False, soft_wrap=True)


def cluster_notes(cluster: Cluster, configs: list[str]) -> list[str]:
    """The notes of reading the manifests (kinds skipped, configurations found among them, pods without a node's
    room), less "configuration skipped: pass it with --config" for a file that was passed with --config."""
    given = {Path(c).resolve() for c in configs if c}
    out = []
    for note in cluster.notes:
        where, _, text = note.partition(": ")
        if "pass it with --config" in text and Path(where).resolve() in given:
            continue
        out.append(note)
    return out


@app.command()
def demo(
    path: Annotated[Path, typer.Argument(help="the demo folder")] = Path("examples/gpu-demo"),
    seed: SeedOpt = 0,
    output: OutputOpt = "table",
) -> None:
    """The bundled GPU demo: the same cluster and pods under LeastAllocated and RequestedToCapacityRatio."""
    _check_output(output)
    from packsched.sim.compare import DEMO_SCHEMA, compare_configs, print_comparison

    if not path.is_dir():
        err.print(f"[red]error:[/red] demo folder {path} not found (run from the repository root)")
        raise typer.Exit(EXIT_INPUT)
    configs = sorted(path.glob("config-*.yaml"))
    manifests = [p for p in sorted(path.glob("*.yaml")) if p not in configs]
    if not configs or not manifests:
        missing = "no config-*.yaml (scheduler configurations)" if not configs else "no manifests (*.yaml)"
        err.print(
            f"[red]error:[/red] {escape(str(path))}: {missing} in the demo folder", highlight=False, soft_wrap=True
        )
        raise typer.Exit(EXIT_INPUT)
    rows = _guard(
        lambda: compare_configs(
            [str(m) for m in manifests], [str(c) for c in configs], known_plugins(), in_tree_registry(), seed
        )
    )
    if output == "json":
        _emit_json({"schema": DEMO_SCHEMA, "configs": [r.as_json() for r in rows]})
    else:
        print_comparison(out, rows)


@app.command()
def serve(
    config: ConfigOpt = None,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            "--kubeconfig",
            help="kubeconfig file; default: the config's clientConnection.kubeconfig, else the in-cluster "
            "service account",
        ),
    ] = None,
    bind_address: Annotated[str, typer.Option("--bind-address", help="address for health and metrics")] = (
        DEFAULT_BIND_ADDRESS
    ),
    port: Annotated[
        int,
        typer.Option(
            "--port", help="port for /healthz, /readyz and /metrics (0: any)", callback=_in_range("--port", 0, MAX_PORT)
        ),
    ] = DEFAULT_PORT,
    leader_elect: Annotated[
        bool | None,
        typer.Option("--leader-elect/--no-leader-elect", help="override the config's leaderElection.leaderElect"),
    ] = None,
    preemption_mode: Annotated[
        str,
        typer.Option(
            "--preemption-mode",
            "--preemption-removal",
            help="how preemption removes victims: delete (as kube-scheduler) or evict (Eviction API: a "
            "PodDisruptionBudget may refuse it); --preemption-removal is the old name",
        ),
    ] = DELETE,
    allow_concurrent: Annotated[
        bool,
        typer.Option(
            "--allow-concurrent-scheduler",
            help="with leader election off, start even when another instance holds the lease (both will bind "
            "pods of the same profiles: over-commit is possible)",
        ),
    ] = False,
    binding_workers: Annotated[
        int, typer.Option("--binding-workers", help="binding cycles in flight at once (kube-scheduler: unbounded)")
    ] = DEFAULT_WORKERS,
    identity: Annotated[
        str, typer.Option("--identity", help="leader-election identity (default: <hostname>_<random UUID>)")
    ] = "",
    log_format: Annotated[str, typer.Option("--log-format", help="json or text")] = "json",
    log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning or error")] = "info",
    write_quota_status: Annotated[
        bool,
        typer.Option(
            "--write-quota-status/--no-write-quota-status",
            help="write ElasticQuota status.used as scheduler-plugins' controller does (needs "
            "deploy/rbac-elasticquota-status.yaml)",
        ),
    ] = False,
    write_podgroup_status: Annotated[
        bool,
        typer.Option(
            "--write-podgroup-status/--no-write-podgroup-status",
            help="write PodGroup status (phase, running, succeeded, failed) as scheduler-plugins' controller does "
            "(needs deploy/rbac-podgroup-status.yaml)",
        ),
    ] = False,
    record: Annotated[
        Path | None,
        typer.Option(
            "--record",
            help="write every scheduling decision, with the cluster events before it, to FILE (JSON lines; "
            "packsched verify-record FILE replays it)",
            metavar="FILE",
        ),
    ] = None,
    seed: SeedOpt = 0,
    rtcr_semantics: SemanticsOpt = SEMANTICS_CURRENT,
    kube_version: KubeVersionOpt = None,
    feature_gates: FeatureGatesOpt = None,
) -> None:
    """Run as a scheduler on a real cluster: bind every pending pod whose schedulerName is one of the profiles."""
    import gc
    import signal

    from packsched.live import logs
    from packsched.live.controller import REMOVAL_MODES
    from packsched.live.kube import KubernetesPort
    from packsched.live.record import RecordError
    from packsched.live.serve import SWITCH_INTERVAL_S, ServeOptions, Server

    version = _kube_version(kube_version, rtcr_semantics)
    gates = _feature_gates(feature_gates)
    if preemption_mode not in REMOVAL_MODES:
        err.print(f"[red]error:[/red] --preemption-mode must be one of {', '.join(REMOVAL_MODES)}")
        raise typer.Exit(EXIT_INPUT)
    if binding_workers < 1:
        err.print("[red]error:[/red] --binding-workers must be at least 1")
        raise typer.Exit(EXIT_INPUT)
    if log_format not in ("json", "text"):
        err.print("[red]error:[/red] --log-format must be json or text")
        raise typer.Exit(EXIT_INPUT)
    if log_level.lower() not in ("debug", "info", "warning", "error"):
        err.print("[red]error:[/red] --log-level must be debug, info, warning or error")
        raise typer.Exit(EXIT_INPUT)
    cfg = _guard(lambda: _config(config, version, gates))
    path = str(kubeconfig) if kubeconfig is not None else (cfg.kubeconfig or None)
    api = _guard(lambda: KubernetesPort.connect(path, qps=cfg.client_qps, burst=cfg.client_burst))
    logs.setup(log_format, log_level)
    options = ServeOptions(
        bind_address=bind_address,
        port=port,
        identity=identity,
        removal=preemption_mode,
        binding_workers=binding_workers,
        allow_concurrent=allow_concurrent,
        seed=seed,
        leader_elect=leader_elect,
        quota_status=write_quota_status,
        pod_group_status=write_podgroup_status,
        record=str(record) if record is not None else "",
    )
    try:
        server = Server(api, cfg, in_tree_registry(), options)
    except RecordError as exc:
        err.print(f"[red]error:[/red] --record {escape(str(record))}: {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_INPUT) from None
    except OSError as exc:
        err.print(f"[red]error:[/red] cannot listen on {bind_address}:{port}: {exc.strerror or exc}")
        raise typer.Exit(EXIT_INPUT) from None

    def on_signal(signum: int, _frame: object) -> None:
        server.stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # What the start-up made (modules, the configuration, the plugins: tens of thousands of objects that live as
    # long as the process) leaves the garbage collector's generations, so that its full collections (one or more
    # while the informers' first lists are applied) no longer walk it. Not collected first: that would cost a full
    # collection itself, and the start-up leaves no cyclic garbage worth it.
    gc.freeze()
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # shorter turns at the interpreter lock for serve's I/O threads
    raise typer.Exit(server.run())


from packsched.cli.trace_cmds import register as _register_trace_commands  # noqa: E402

_register_trace_commands(app)

from packsched.cli.snapshot_cmd import register as _register_snapshot_command  # noqa: E402

_register_snapshot_command(app)

from packsched.cli.scenario_cmd import register as _register_scenario_command  # noqa: E402

_register_scenario_command(app)

from packsched.cli.record_cmd import register as _register_record_command  # noqa: E402

_register_record_command(app)

from packsched.cli.report_cmd import register as _register_report_command  # noqa: E402

_register_report_command(app)

from packsched.cli.tune_cmd import register as _register_tune_command  # noqa: E402

_register_tune_command(app)

from packsched.cli.metavars import install as _show_metavars  # noqa: E402

_show_metavars()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
