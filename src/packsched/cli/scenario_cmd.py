"""``packsched run SCENARIO``: a what-if scenario (sim/scenario.py) on the embedded simulator, a report per step."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from packsched.api.errors import InputError
from packsched.api.quantity import format_quantity
from packsched.cli.console import make_console
from packsched.cli.report_cmd import HtmlOpt, check_html, write_html
from packsched.plugins.registry import in_tree_registry

if TYPE_CHECKING:
    from packsched.sim.scenario import StepReport

# The scenario engine and rich's tables are imported where a command runs: not at every start of `packsched`.

out = make_console()
err = make_console(stderr=True)
EXIT_INPUT = 2


def _fail(exc: InputError) -> typer.Exit:
    for e in exc.errors:
        err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_INPUT)


def run(
    scenario_file: Annotated[Path, typer.Argument(help="a Scenario file (apiVersion packsched.io/v1alpha1)")],
    output: Annotated[str, typer.Option("--output", "-o", help="table or json")] = "table",
    html: HtmlOpt = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="an object of a kind packsched does not model (a custom resource, say) is an error, not skipped",
        ),
    ] = False,
) -> None:
    """Run a what-if scenario: a base cluster (manifests or a snapshot), a scheduler configuration and timed
    steps (pods created, controllers scaled, nodes added, drained, cordoned or removed, configuration or quota
    changed); report placements, pending pods, preemptions, evictions, utilisation and quotas after each step."""
    if output not in ("table", "json"):
        err.print(f"[red]error:[/red] --output must be table or json, got {output!r}")
        raise typer.Exit(EXIT_INPUT)
    check_html(html)
    from packsched.sim.scenario import load_scenario, report_json, run_scenario

    extras: dict[str, Any] = {}
    try:
        scenario = load_scenario(str(scenario_file))
        if html is not None:  # the same run, and what the page adds (pods, events, history, explain tables)
            from packsched.sim.htmlreport.history import scenario_with_extras  # only for --html

            reports, extras = scenario_with_extras(scenario, in_tree_registry())
        else:
            reports = run_scenario(scenario, in_tree_registry(), strict=strict)
    except InputError as exc:
        raise _fail(exc) from None
    if html is not None:
        write_html(html, report_json(scenario, reports), extras, f"packsched run {scenario_file}")
    if output == "json":
        sys.stdout.write(json.dumps(report_json(scenario, reports), indent=2) + "\n")
        return
    print_reports(scenario.name, reports)


def print_reports(name: str, reports: list[StepReport]) -> None:
    from rich.table import Table

    table = Table(title=f"Scenario {name}: the cluster after each step")
    for col in ("step", "at", "running", "pending", "preempted", "evicted", "free nodes", "utilisation"):
        table.add_column(col, justify="left" if col in ("step", "utilisation") else "right")
    for r in reports:
        util = ", ".join(f"{res} {100 * v:.0f}%" for res, v in r.utilisation.items() if v > 0 or res in ("cpu",))
        evicted = str(r.evictions) + (f" ({r.evictions_blocked} blocked)" if r.evictions_blocked else "")
        table.add_row(
            escape(r.name),
            f"{r.at:g}s",
            str(r.running),
            str(r.pending),
            str(r.preemptions),
            evicted,
            f"{r.free_nodes}/{r.nodes}",
            util,
        )
    out.print(table)
    for r in reports:
        if r.pending_reasons:
            out.print(f"[bold]{escape(r.name)}[/bold]: pending pods by reason")
            for reason, n in r.pending_reasons.items():
                out.print(f"  {n} × {escape(reason)}", highlight=False, soft_wrap=True)
        for note in r.notes:
            out.print(f"[bold]{escape(r.name)}[/bold]: {escape(note)}", highlight=False, soft_wrap=True)
    last = reports[-1] if reports else None
    if last is not None and last.quotas:
        quotas = Table(title="ElasticQuotas after the last step (used / min / max)")
        quotas.add_column("namespace")
        quotas.add_column("resources")
        for q in last.quotas:
            parts = []
            for res, used in q["used"].items():
                hi = q["max"].get(res)
                parts.append(
                    f"{res} {format_quantity(res, used)} / {format_quantity(res, q['min'].get(res, 0))} / "
                    f"{format_quantity(res, hi) if hi is not None else '-'}"
                )
            quotas.add_row(escape(q["namespace"]), escape(", ".join(parts)))
        out.print(quotas)


def compare_whatif(path: Path, configs: list[Path], output: str, html: Path | None = None) -> None:
    """``packsched compare CLUSTER_OR_SCENARIO --config A --config B ...``: the cluster (or the scenario's
    steps) under each configuration, the end state side by side."""
    from rich.table import Table

    from packsched.config.loader import load_config
    from packsched.sim.scenario import (
        GANG_METRICS,
        WHATIF_COMPARE_SCHEMA,
        WHATIF_METRICS,
        end_metrics,
        report_json,
        run_scenario,
        scenario_or_cluster,
    )

    if output not in ("table", "json"):
        err.print(f"[red]error:[/red] --output must be table or json, got {output!r}")
        raise typer.Exit(EXIT_INPUT)
    if not configs:
        err.print("[red]error:[/red] comparing on a cluster or scenario needs --config files (repeat --config)")
        raise typer.Exit(EXIT_INPUT)
    labels = [c.stem for c in configs]
    if len(set(labels)) != len(labels):
        err.print(f"[red]error:[/red] two configs share a label (their file names): {labels}")
        raise typer.Exit(EXIT_INPUT)
    registry = in_tree_registry()
    try:
        scenario = scenario_or_cluster(str(path))
        loaded = [load_config(str(c), set(registry)) for c in configs]
        runs = {label: run_scenario(scenario, registry, cfg) for label, cfg in zip(labels, loaded, strict=True)}
    except InputError as exc:
        raise _fail(exc) from None
    results = {label: end_metrics(reports) for label, reports in runs.items()}
    data = {
        "schema": WHATIF_COMPARE_SCHEMA,
        "input": str(path),
        "configs": {label: str(c) for label, c in zip(labels, configs, strict=True)},
        "results": results,
        "steps": {label: report_json(scenario, reports)["steps"] for label, reports in runs.items()},
    }
    if html is not None:
        write_html(html, data, None, f"packsched compare {path}")
    if output == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    table = Table(title=f"{escape(scenario.name)}: the end state under each configuration")
    table.add_column("metric")
    for label in labels:
        table.add_column(escape(label), justify="right")
    for key, what in WHATIF_METRICS:
        table.add_row(what, *[str(results[label][key]) for label in labels])
    for key, what in GANG_METRICS:  # with PodGroups only
        if all(key in results[label] for label in labels):
            table.add_row(what, *[_metric(results[label][key]) for label in labels])
    out.print(table)


def _metric(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
