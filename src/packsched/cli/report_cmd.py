"""``packsched report FILE.json``: one self-contained HTML page of a saved ``-o json`` document; and the
``--html FILE`` option that ``simulate``, ``run``, ``replay``, ``compare`` and ``tune`` share (:data:`HtmlOpt`,
:func:`check_html`, :func:`write_html`)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from packsched.api.files import STDIN, OutputError, display_name, read_text, write_text_replacing
from packsched.cli.console import make_console

if TYPE_CHECKING:  # the replay's modules are not needed to write a page
    from packsched.sim.replay import RunResult

err = make_console(stderr=True)
EXIT_INPUT = 2
TUNE_SCHEMA = "packsched.tune/v1"

HtmlOpt = Annotated[
    Path | None,
    typer.Option(
        "--html",
        help="also write a self-contained HTML report (tables, charts, per-pod details; readable offline) to FILE",
        metavar="FILE",
    ),
]


def _fail(message: str) -> typer.Exit:
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_INPUT)


def check_html(path: Path | None, option: str = "--html") -> None:
    """Exit with code 2 now, before any run, when ``path`` cannot be written."""
    if path is None:
        return
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise _fail(f"{option} {path}: is a folder")
    if not folder.is_dir():
        raise _fail(f"{option} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise _fail(f"{option} {path}: cannot write there (permission denied)")


def write_html(
    path: Path,
    doc: Mapping[str, Any],
    extras: Mapping[str, Any] | None = None,
    title: str | None = None,
    *,
    option: str = "--html",
    source: str | None = None,
) -> None:
    """Render and write the report; the path goes to standard error (standard output keeps the tables or JSON).
    ``option``: the option that named ``path`` (in a write error); ``source``: the document's name, if it came
    from a file (in an error about the document)."""
    # imported here: the page's modules (Altair, the charts) take half a second that other commands need not pay
    from packsched.sim.htmlreport import ReportError, render_html

    try:
        text = render_html(doc, extras, title)
    except ReportError as exc:
        raise _fail(f"{source or path}: {exc}") from None
    try:
        write_text_replacing(path, text)  # the whole page or the file as it was
    except OutputError as exc:
        raise _fail(f"{option} {path}: cannot write: {exc.reason}") from None
    err.print(f"report: {escape(str(path))}", highlight=False, soft_wrap=True)


def write_trace_html(
    path: Path | None,
    doc: Mapping[str, Any],
    groups: Mapping[str, Sequence[RunResult]],
    published: Mapping[str, Mapping[str, Any] | None],
) -> None:
    """``replay --html`` and ``compare --html``: the page, with every run's full curves (the JSON keeps a few
    levels) and the published mean curves."""
    if path is not None:
        from packsched.sim.htmlreport.history import curve_extras

        write_html(path, doc, curve_extras(groups, published))


def report(
    document: Annotated[Path, typer.Argument(help="a saved -o json output of a packsched command (-: standard input)")],
    page: Annotated[  # not named "output": that is the table|json option of the other commands
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="the HTML file to write (default: the document's path with .html; report.html for standard input)",
            metavar="FILE",
        ),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="the page's title (default: the command's)")] = None,
) -> None:
    """Turn a saved -o json output (simulate, explain, quotas, demo, replay, compare, run, verify-record, tune) into
    one self-contained HTML page: sortable, filterable tables, charts, per-pod details; readable offline."""
    source = str(document)
    shown = display_name(source)
    target = page or (Path("report.html") if source == STDIN else document.with_suffix(".html"))
    if source != STDIN and target.resolve() == document.resolve():
        raise _fail(f"-o {target}: would overwrite the document itself")
    check_html(target, "-o")
    try:
        doc = json.loads(read_text(source))
    except OSError as exc:
        raise _fail(f"{shown}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise _fail(f"{shown}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise _fail(f"{shown}: not JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    extras = None
    if isinstance(doc, dict) and doc.get("schema") == TUNE_SCHEMA:  # its trials.csv and best-config.yaml
        from packsched.sim.htmlreport.history import tune_extras_from_files

        extras = tune_extras_from_files(doc, None if source == STDIN else document.parent)
    write_html(target, doc, extras, title, option="-o", source=shown)


def register(app: typer.Typer) -> None:
    app.command("report")(report)
