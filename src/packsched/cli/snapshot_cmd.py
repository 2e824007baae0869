"""``packsched snapshot``: dump a real cluster's scheduling objects into a directory for offline what-ifs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from packsched.api.errors import InputError
from packsched.cli.console import make_console
from packsched.cli.unix import exit_code, stop_text
from packsched.live.port import DEFAULT_PAGE_SIZE

err = make_console(stderr=True)
EXIT_INPUT = 2
EXIT_CLUSTER = 1


def _fail(message: str, code: int = EXIT_INPUT) -> typer.Exit:
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def snapshot(
    out_dir: Annotated[Path, typer.Option("--output-dir", "-o", help="the directory to write (new or empty)")],
    kubeconfig: Annotated[
        Path | None, typer.Option("--kubeconfig", help="kubeconfig file (default: the pod's service account)")
    ] = None,
    context: Annotated[str | None, typer.Option("--context", help="the kubeconfig context to use")] = None,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="only this namespace's objects (repeatable; bound pods are all kept)"),
    ] = None,
    anonymize: Annotated[
        bool, typer.Option("--anonymize", help="hash names, namespaces, label values and images (stable hashes)")
    ] = False,
    scheduler_config: Annotated[
        Path | None, typer.Option("--scheduler-config", help="the scheduler's configuration file, kept beside")
    ] = None,
    scheduler_configmap: Annotated[
        str | None,
        typer.Option("--scheduler-configmap", help="NAMESPACE/NAME of a ConfigMap holding the configuration"),
    ] = None,
    page_size: Annotated[int, typer.Option("--page-size", help="objects per list request")] = DEFAULT_PAGE_SIZE,
) -> None:
    """Write what scheduling depends on (nodes, pods, namespaces, priority classes, budgets, quotas, services,
    controllers, storage) into a directory that simulate, explain and quotas read. Read-only; never reads Secrets."""
    from packsched.live.kube import KubernetesPort
    from packsched.live.snapshot import SnapshotError, read_config_map, take_snapshot

    if page_size < 1:
        raise _fail("--page-size must be at least 1")
    if scheduler_config is not None and scheduler_configmap:
        raise _fail("give --scheduler-config or --scheduler-configmap, not both")
    config_text: str | None = None
    if scheduler_config is not None:
        try:
            config_text = scheduler_config.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _fail(f"{scheduler_config}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise _fail(f"{out_dir}: exists and is not an empty directory; give a new one with -o")
    try:
        port = KubernetesPort.connect(str(kubeconfig) if kubeconfig is not None else None, context=context)
    except InputError as exc:
        for e in exc.errors:
            err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_INPUT) from None
    try:
        if scheduler_configmap:
            config_text = read_config_map(port, scheduler_configmap)
        report = take_snapshot(
            port,
            str(out_dir),
            namespaces=namespace or (),
            anonymize=anonymize,
            page_size=page_size,
            scheduler_config=config_text,
            progress=lambda msg: err.print(escape(msg), highlight=False),
            server=port.host,
        )
    except SnapshotError as exc:
        raise _fail(str(exc), EXIT_CLUSTER) from None
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (packsched.cli.unix): take_snapshot removed its files
        err.print(f"{stop_text(stop)}: no snapshot written", highlight=False)
        raise typer.Exit(exit_code(stop)) from None
    finally:
        port.close()
    total = sum(report.counts.values())
    err.print(
        f"wrote {total} objects of {len(report.counts)} kinds to {escape(str(out_dir))} ({report.pages} list requests)",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("snapshot")(snapshot)
