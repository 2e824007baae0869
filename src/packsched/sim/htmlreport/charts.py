"""The page model's building blocks: plain dicts. ``assets/report.js`` draws the tables, text and figures; a chart
is a description (``kind``: ``line``, ``bars``, ``heatmap``, ``timeline``; its title, caption, axis titles with their
units, and data) that :mod:`packsched.sim.chartspec` turns into a Vega-Lite specification, for the page and for
the PNGs alike.

Every section has a ``type`` (``kpis``, ``table``, ``charts``, ``text``, ``code``), an ``id`` and a ``title``.
Numbers stay numbers (the page formats them, a column's ``fmt`` says how: ``time`` in virtual seconds as a Go
duration, ``pct``, ``num``); text is always set as text by the page, never as markup.

Colours are not chosen here: a series, bar group or lane names its ``key`` (what its colour means: a policy, a
configuration, a resource), and the page gives each key one colour (:class:`packsched.sim.chartspec.Palette`)."""

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
    """An axis title: ``cpu (cores)``, ``memory (GiB)``, ``nvidia.com/gpu (count)``."""
    _, name = unit(resource)
    return f"{resource} ({name or 'count'})"


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


def code(section_id: str, title: str, body: str, caption: str = "") -> Section:
    """A file's text, shown as it is (monospaced)."""
    return {"type": "code", "id": section_id, "title": title, "caption": caption, "text": body}


def series(
    label: str,
    x: Sequence[Any],
    y: Sequence[float | None],
    *,
    lo: Sequence[float | None] | None = None,
    hi: Sequence[float | None] | None = None,
    key: str | None = None,
    dash: bool = False,
    ref: bool = False,
    points: bool = False,
) -> dict[str, Any]:
    """A line. ``key``: what its colour means (default: the label; the colour legend names the keys, the hover
    tooltip the labels); ``lo``/``hi``: a band under it; ``dash``: dashed, and drawn under the solid lines (say in
    the caption what dashed means); ``ref``: a reference line (a diagonal) that the y axis does not stretch to fit;
    ``points``: points only, no line. ``x``: numbers, or step names on a step axis."""
    out: dict[str, Any] = {
        "label": label,
        "x": [clean(v) if isinstance(v, int | float) else v for v in x],
        "y": [clean(v) for v in y],
    }
    if lo is not None and hi is not None:
        out["lo"] = [clean(v) for v in lo]
        out["hi"] = [clean(v) for v in hi]
    if key is not None and key != label:
        out["key"] = key
    if dash:
        out["dash"] = True
    if ref:
        out["ref"] = True
    if points:
        out["points"] = True
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
    step: bool = False,
    counts: bool = False,
    x_counts: bool = False,
    categories: Sequence[str] = (),
    legend: str = "",
) -> Chart:
    """Lines over a shared x axis: ``x_fmt`` ``num``, ``time`` (virtual seconds, ticks as durations) or ``step``
    (one place per scenario step, ``categories`` in order). ``y_zero``: the y axis includes 0 (else it fits the
    data in ``x_domain``); ``step``: each value holds until the next x; ``counts``/``x_counts``: the y/x axis counts
    things (whole-number ticks); ``legend``: the colour legend's title."""
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
    for name, on in (("y_zero", y_zero), ("step", step), ("counts", counts), ("x_counts", x_counts)):
        if on:
            chart[name] = True
    if categories:
        chart["categories"] = list(categories)
    if legend:
        chart["legend"] = legend
    return chart


def bars(
    title: str,
    y_label: str,
    categories: Sequence[str],
    groups: Sequence[dict[str, Any]],
    caption: str = "",
    *,
    x_label: str = "",
    color_by: str = "group",
    stacked: bool = False,
    counts: bool = False,
    legend: str = "",
) -> Chart:
    """Bars: one per category and group, side by side (``stacked``: one on another). A group: ``label``,
    ``values`` (None: no bar, and the group's ``missing`` text is written in its place), optional ``errors``
    (whiskers, ±). ``color_by``: ``group`` (a colour per group, with a legend) or ``category`` (the category's
    colour, when the categories are what other charts of the page colour: policies); ``counts``: whole-number
    ticks."""
    chart: Chart = {
        "kind": "bars",
        "title": title,
        "x_label": x_label,
        "y_label": y_label,
        "categories": list(categories),
        "groups": list(groups),
        "caption": caption,
        "color_by": color_by,
    }
    if stacked:
        chart["stacked"] = True
    if counts:
        chart["counts"] = True
    if legend:
        chart["legend"] = legend
    return chart


def bar_group(
    label: str,
    values: Sequence[float | None],
    errors: Sequence[float | None] | None = None,
    *,
    missing: str = "",
    key: str | None = None,
    faded: bool = False,
) -> dict[str, Any]:
    """``faded``: drawn lighter, outlined (a published figure beside ours, in the same colour)."""
    out: dict[str, Any] = {"label": label, "values": [clean(v) for v in values]}
    if errors is not None:
        out["errors"] = [clean(v) for v in errors]
    if missing:
        out["missing"] = missing
    if key is not None and key != label:
        out["key"] = key
    if faded:
        out["faded"] = True
    return out


def heatmap(
    title: str, rows: Sequence[str], layers: Sequence[dict[str, Any]], *, col_label: str, caption: str = ""
) -> Chart:
    """Rows (nodes) x columns, one matrix per layer (a resource); values are percentages (None: not applicable,
    or the node did not exist then). A layer: ``name``, ``cols`` (labels), ``values`` (rows x cols)."""
    return {
        "kind": "heatmap",
        "title": title,
        "rows": list(rows),
        "layers": list(layers),
        "col_label": col_label,
        "caption": caption,
    }


def timeline(title: str, lanes: Sequence[dict[str, Any]], end: float, caption: str = "") -> Chart:
    """Lanes of events over virtual time. A lane: ``label``, ``events``: [time, pod, text], optional ``key`` (what
    its colour means, when another chart of the page colours the same thing: ``preemptions``)."""
    return {"kind": "timeline", "title": title, "lanes": list(lanes), "end": clean(end), "caption": caption}


def concat(title: str, parts: Sequence[Chart], caption: str = "") -> Chart:
    """Charts side by side in one figure (a PNG of several panels)."""
    return {"kind": "concat", "title": title, "charts": list(parts), "caption": caption}
