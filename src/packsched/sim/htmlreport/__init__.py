"""One self-contained HTML report of a packsched command's result, readable offline: the page model (built from
the command's ``-o json`` document, plus what ``--html`` adds: see :mod:`.history`) embedded as JSON, its charts as
Vega-Lite specifications (:mod:`packsched.sim.chartspec`); drawn by the package's small script and style sheet
(``assets/``) and the Vega-Embed bundle of vl-convert, all inlined: nothing is fetched.

``packsched report FILE.json -o report.html`` turns a saved document into a page; ``--html FILE`` on ``simulate``,
``run``, ``replay`` and ``compare`` writes one directly."""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from importlib.resources import files
from typing import Any

from packsched.sim import chartspec
from packsched.sim.htmlreport.page import BUILDERS, DIAGONAL, ReportError, build_page

__all__ = ["BUILDERS", "ReportError", "build_page", "page_json", "page_palette", "render_html", "with_specs"]

_ASSETS = files("packsched.sim.htmlreport") / "assets"


def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def _version() -> str:
    try:
        return package_version("packsched")
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        return "unknown"


def page_json(page: Mapping[str, Any]) -> str:
    """The page model as JSON that is safe inside a ``<script>`` element (no ``<``, so no ``</script>``)."""
    return json.dumps(page, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c")


def page_palette() -> chartspec.Palette:
    """One colour per meaning over a whole page (the diagonal of the allocation curves: grey)."""
    return chartspec.Palette({DIAGONAL: chartspec.REFERENCE})


def with_specs(page: Mapping[str, Any]) -> dict[str, Any]:
    """The page model as the page embeds it: each chart description replaced by its Vega-Lite specification,
    the colours given over the whole page."""
    palette = page_palette()
    sections = []
    for section in page["sections"]:
        if section["type"] == "charts":
            charts = [{"kind": ch["kind"], "spec": chartspec.spec(ch, palette)} for ch in section["charts"]]
            section = {**section, "charts": charts}
        sections.append(section)
    return {**page, "sections": sections}


def _generated() -> str:
    """When the page was made; SOURCE_DATE_EPOCH (reproducible builds) fixes it, for byte-identical pages."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    when = datetime.fromtimestamp(int(epoch), UTC) if epoch.isdigit() else datetime.now(UTC)
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _script(text: str) -> str:
    return text.replace("</script", "<\\/script")


def render_html(doc: Any, extras: Mapping[str, Any] | None = None, title: str | None = None) -> str:
    """The report page of a ``-o json`` document; raises :class:`ReportError` for a document it cannot read."""
    page = build_page(doc, extras)
    if title:
        page["title"] = title
    page["generator"] = f"packsched {_version()}"
    page["generated"] = _generated()
    embedded = with_specs(page)
    has_charts = any(s["type"] == "charts" and s["charts"] for s in page["sections"])
    vega = f"<script>\n{_script(chartspec.javascript())}\n</script>\n" if has_charts else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f'<meta name="generator" content="{html.escape(page["generator"])}">\n'
        f"<title>{html.escape(str(page['title']))}</title>\n"
        f"<style>\n{_asset('report.css')}</style>\n</head>\n<body>\n"
        '<noscript><p class="noscript">This report draws its tables and charts with JavaScript: enable it to '
        "read the page (nothing is fetched from the network).</p></noscript>\n"
        '<div id="app"></div>\n'
        f'<script type="application/json" id="packsched-data">{page_json(embedded)}</script>\n'
        f"{vega}"
        f"<script>\n{_asset('report.js')}</script>\n</body>\n</html>\n"
    )
