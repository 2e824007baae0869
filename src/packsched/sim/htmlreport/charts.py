"""The page model's building blocks: plain dicts that ``assets/report.js`` draws (tables, SVG charts, figures).

Every section has a ``type`` (``kpis``, ``table``, ``charts``, ``text``), an ``id`` and a ``title``; a chart has a
``kind`` (``line``, ``bars``, ``heatmap``, ``timeline``). Numbers stay numbers (the page formats them, a column's
``fmt`` says how: ``time`` in virtual seconds as a Go duration, ``pct``, ``num``); text is always set as text by the
page, never as markup."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

Section = dict[str, Any]
Chart = dict[str, Any]

GIB = 1 << 30


def unit(resource: str) -> tuple[float, str]:
    """How a resource's amounts (in the scheduler's units) are shown: divisor and unit name."""
    if resource == "cpu":
        return 1000.0, "cores"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return float(GIB), "GiB"
    return 1.0, ""


def scaled(resource: str, amount: float | None) -> float | None:
    if amount is None:
        return None
    div, _ = unit(resource)
    return round(amount / div, 4)


def with_unit(resource: str) -> str:
    _, name = unit(resource)
    return f"{resource} ({name})" if name else resource


def clean(value: float | None, digits: int = 4) -> float | None:
    """A float for JSON: rounded, and None for NaN or infinity (JSON has neither)."""
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), digits)


def kpis(section_id: str, title: str, items: Sequence[tuple[str, Any]], notes: Sequence[str] = ()) -> Section:
    return {
        "type": "kpis",
        "id": section_id,
        "title": title,
        "items": [{"label": label, "value": value} for label, value in items],
        "notes": list(notes),
    }


def column(key: str, label: str | None = None, fmt: str = "", pod: bool = False) -> dict[str, Any]:
    """A table column: ``fmt`` (``time``, ``pct``, ``num`` or plain text); ``pod``: its cells name pods, which open
    the pod's details when clicked."""
    col: dict[str, Any] = {"key": key, "label": label or key}
    if fmt:
        col["fmt"] = fmt
    if pod:
        col["pod"] = True
    return col


def table(
    section_id: str,
    title: str,
    columns: Sequence[dict[str, Any]],
    rows: Sequence[Sequence[Any]],
    *,
    caption: str = "",
    filterable: bool = True,
) -> Section:
    return {
        "type": "table",
        "id": section_id,
        "title": title,
        "caption": caption,
        "columns": list(columns),
        "rows": [list(r) for r in rows],
        "filter": filterable,
    }


def charts(section_id: str, title: str, items: Sequence[Chart], caption: str = "") -> Section:
    return {"type": "charts", "id": section_id, "title": title, "caption": caption, "charts": list(items)}


def text(section_id: str, title: str, paragraphs: Sequence[str]) -> Section:
    return {"type": "text", "id": section_id, "title": title, "paragraphs": list(paragraphs)}


def series(
    label: str,
    x: Sequence[float],
    y: Sequence[float | None],
    *,
    lo: Sequence[float | None] | None = None,
    hi: Sequence[float | None] | None = None,
    dash: bool = False,
    step: bool = False,
    color: int | None = None,
    on_top: bool = False,
    ref: bool = False,
) -> dict[str, Any]:
    """A line: ``lo``/``hi`` draw a band under it; ``dash`` a dashed line; ``step`` holds each value until the
    next x; ``on_top``: drawn after (over) the others, as published figures are; ``ref``: a reference line (a
    diagonal) that the y axis does not stretch to fit."""
    out: dict[str, Any] = {"label": label, "x": [clean(v) for v in x], "y": [clean(v) for v in y]}
    if lo is not None and hi is not None:
        out["lo"] = [clean(v) for v in lo]
        out["hi"] = [clean(v) for v in hi]
    if dash:
        out["dash"] = True
    if step:
        out["step"] = True
    if color is not None:
        out["color"] = color
    if on_top:
        out["on_top"] = True
    if ref:
        out["ref"] = True
    return out


def line(
    title: str,
    x_label: str,
    y_label: str,
    lines: Sequence[dict[str, Any]],
    *,
    x_domain: tuple[float, float] | None = None,
    y_domain: tuple[float, float] | None = None,
    x_fmt: str = "num",
    caption: str = "",
    y_zero: bool = False,
) -> Chart:
    """Lines over a shared x axis; ``y_zero``: the y axis includes 0 (else it fits the data in ``x_domain``)."""
    chart: Chart = {
        "kind": "line",
        "title": title,
        "x_label": x_label,
        "y_label": y_label,
        "series": list(lines),
        "x_fmt": x_fmt,
        "caption": caption,
    }
    if x_domain is not None:
        chart["x_domain"] = list(x_domain)
    if y_domain is not None:
        chart["y_domain"] = list(y_domain)
    if y_zero:
        chart["y_zero"] = True
    return chart


def bars(
    title: str,
    y_label: str,
    categories: Sequence[str],
    groups: Sequence[dict[str, Any]],
    caption: str = "",
) -> Chart:
    """Grouped bars: one bar per category and group. A group: ``label``, ``values`` (None: no bar, and the
    group's ``missing`` text is written in its place), optional ``errors`` (whiskers, ±)."""
    return {
        "kind": "bars",
        "title": title,
        "y_label": y_label,
        "categories": list(categories),
        "groups": list(groups),
        "caption": caption,
    }


def bar_group(
    label: str,
    values: Sequence[float | None],
    errors: Sequence[float | None] | None = None,
    *,
    missing: str = "",
    color: int | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"label": label, "values": [clean(v) for v in values]}
    if errors is not None:
        out["errors"] = [clean(v) for v in errors]
    if missing:
        out["missing"] = missing
    if color is not None:
        out["color"] = color
    return out


def heatmap(
    title: str, rows: Sequence[str], layers: Sequence[dict[str, Any]], *, col_label: str, caption: str = ""
) -> Chart:
    """Rows (nodes) x columns, one matrix per layer (a resource); values are percentages (None: not applicable).
    A layer: ``name``, ``cols`` (labels), optional ``col_times`` (virtual seconds), ``values`` (rows x cols)."""
    return {
        "kind": "heatmap",
        "title": title,
        "rows": list(rows),
        "layers": list(layers),
        "col_label": col_label,
        "caption": caption,
    }


def timeline(title: str, lanes: Sequence[dict[str, Any]], end: float, caption: str = "") -> Chart:
    """Lanes of events over virtual time. A lane: ``label``, ``color``, ``events``: [time, pod, text]."""
    return {"kind": "timeline", "title": title, "lanes": list(lanes), "end": clean(end), "caption": caption}
