"""``packsched verify-record FILE``: replay a ``serve --record`` file and list every decision packsched's scheduler
would have made otherwise (``serve --record`` itself is an option of ``serve``, in :mod:`packsched.cli.main`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from packsched.api.files import STDIN, STDIN_LABEL
from packsched.cli.console import make_console
from packsched.live.record import SCHEDULED, UNSCHEDULABLE, RecordError
from packsched.plugins.registry import in_tree_registry

if TYPE_CHECKING:  # the replay and rich's tables are imported where the command runs
    from rich.table import Table

    from packsched.live.verify import Finding, Verification

out = make_console()
err = make_console(stderr=True)
EXIT_DIFFERENT = 1
EXIT_INPUT = 2


def _fail(where: str, message: str) -> typer.Exit:
    err.print(f"[red]error:[/red] {escape(where)}: {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_INPUT)


def verify_record_command(
    record_file: Annotated[Path, typer.Argument(help="a record written by packsched serve --record (-: stdin)")],
    output: Annotated[str, typer.Option("--output", "-o", help="table or json")] = "table",
) -> None:
    """Replay a record of packsched serve (cluster events and decisions) into packsched's own scheduler and list
    every decision it would have made otherwise; tie-breaks between equally scored nodes are reported apart. Exit
    code 0: no difference but ties; 1: differences; 2: a malformed record."""
    if output not in ("table", "json"):
        err.print(f"[red]error:[/red] --output must be table or json, got {output!r}")
        raise typer.Exit(EXIT_INPUT)
    from packsched.live.verify import verify_record

    path = str(record_file)
    shown = STDIN_LABEL if path == STDIN else path
    try:
        if path == STDIN:
            result = verify_record(sys.stdin, in_tree_registry())
        else:
            with open(path, encoding="utf-8") as stream:
                result = verify_record(stream, in_tree_registry())
    except RecordError as exc:
        raise _fail(shown, str(exc)) from None
    except OSError as exc:
        raise _fail(shown, f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise _fail(shown, "not UTF-8 text") from None
    if output == "json":
        sys.stdout.write(json.dumps(result.as_json(shown), indent=2) + "\n")
    else:
        _print(shown, result)
    if not result.ok:
        raise typer.Exit(EXIT_DIFFERENT)


def _describe(d: dict[str, Any]) -> str:
    """One decision in a few words."""
    outcome = d["outcome"]
    if outcome == SCHEDULED:
        text = f"on {d['node']}"
    elif outcome in (UNSCHEDULABLE, "error"):
        text = f"{outcome}: {d['message']}"
    else:
        text = "no such pending pod"
    if d.get("nominated"):
        text += f"; nominated {d['nominated']}"
    elif d.get("nominated") == "":
        text += "; nomination cleared"
    if d.get("victims"):
        text += f"; victims {', '.join(sorted(d['victims']))}"
    return text


def _findings(title: str, findings: list[Finding], best: bool) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for col in ("line", "pod", "differs in", "recorded (serve)", "replayed"):
        table.add_column(col, justify="right" if col == "line" else "left")
    if best:
        table.add_column("best-scored nodes (recorded)")
    for f in findings:
        row = [str(f.line), f.pod, ", ".join(f.fields), _describe(f.recorded), _describe(f.replayed)]
        if best:
            row.append(", ".join(f.recorded["top"]))
        table.add_row(*(escape(c) for c in row))
    return table


def _print(shown: str, result: Verification) -> None:
    h = result.header
    config = h.config_path if h.config_text is not None else "kube-scheduler's defaults"
    out.print(
        f"{escape(shown)}: recorded by packsched {escape(h.packsched or '?')}, configuration {escape(config)}, "
        f"seed {h.seed}; {result.events} events, {result.decisions} decisions, {result.binds} binding answers",
        highlight=False,
        soft_wrap=True,
    )
    for note in result.notes:
        err.print(f"note: {escape(note)}", highlight=False, soft_wrap=True)
    from rich.table import Table

    summary = Table(show_header=True)
    for col in ("decisions", "identical", "ties", "differences"):
        summary.add_column(col, justify="right")
    summary.add_row(str(result.decisions), str(result.identical), str(len(result.ties)), str(len(result.differences)))
    out.print(summary)
    if result.ties:
        out.print(_findings("Tie-breaks (another node among the best-scored ones)", result.ties, best=True))
    if result.differences:
        out.print(_findings("Differences", result.differences, best=False))
    verdict = "no differences" if result.ok else f"{len(result.differences)} difference(s)"
    out.print(verdict + (f" ({len(result.ties)} tie-break(s) apart)" if result.ties else ""), highlight=False)


def register(app: typer.Typer) -> None:
    app.command("verify-record")(verify_record_command)
