"""The chart builder: every chart packsched draws, described once as a Vega-Lite specification (built with Altair)
from a plain chart description (:mod:`packsched.sim.htmlreport.charts`). The HTML report embeds the specifications
and draws them in the browser with the Vega-Embed bundle that vl-convert ships (inlined: the page stays offline);
the PNGs of ``replay``, ``compare`` and ``tune`` are the same specifications rendered by vl-convert.

Chart kinds: ``line`` (lines over a numeric, time or step axis: bands, dashed and reference lines, points, a hover
rule listing every line), ``bars`` (grouped or stacked, whiskers, a note where a bar is missing), ``heatmap`` (rows
x columns, one matrix per layer, a radio button per layer) and ``timeline`` (lanes of events over virtual time).

Rules every chart follows: a title, axis titles with their unit; one colour means one thing on a whole page
(:class:`Palette`); solid lines are drawn over dashed ones (packsched's median over the published mean); count axes
tick whole numbers only; legends sit under the plot, never over the data; the same description gives the same
specification, byte for byte."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast

import altair as alt

from packsched.api.annotations import format_duration
from packsched.api.files import replacing

Spec = dict[str, Any]
Chart = Mapping[str, Any]

# Okabe-Ito (without its yellow and black) and Paul Tol's: told apart by colour-blind readers.
PALETTE = (
    "#0072b2",
    "#d55e00",
    "#009e73",
    "#cc79a7",
    "#e69f00",
    "#56b4e9",
    "#8c564b",
    "#332288",
    "#882255",
    "#117733",
    "#999933",
    "#44aa99",
)
REFERENCE = "#8c959f"  # reference lines (the diagonal of the allocation curves)
MUTED = "#59636e"
NO_VALUE = "#e4e4e7"  # heat map: not applicable
OVER = "#b2182b"  # heat map: above 100 %
WIDTH = 480  # the plot area of a line or bar chart, in pixels (axes, title and legend come around it)
HEIGHT = 250
TIMELINE_WIDTH = 1000
SUBTITLE_CHARS = 95  # a caption is wrapped to lines of about this many characters
FEW_POINTS = 12  # a line of at most this many points shows them


class Palette:
    """One colour per meaning on a page (a policy, a configuration, a resource, a kind of event): the first key
    seen takes the first colour, and so on; keys given in ``fixed`` keep their colour."""

    def __init__(self, fixed: Mapping[str, str] | None = None) -> None:
        self.fixed = dict(fixed or {})
        self.assigned: dict[str, str] = {}

    def __call__(self, key: str) -> str:
        if key in self.fixed:
            return self.fixed[key]
        if key not in self.assigned:
            self.assigned[key] = PALETTE[len(self.assigned) % len(PALETTE)]
        return self.assigned[key]

    def scale(self, keys: Sequence[str]) -> alt.Scale:
        keys = list(dict.fromkeys(keys))
        return alt.Scale(domain=keys, range=[self(k) for k in keys])


# -- helpers ---------------------------------------------------------------------------------------------------


def _title(chart: Chart) -> alt.Title:
    lines: list[str] = []
    for paragraph in str(chart.get("caption") or "").split("\n"):
        lines += textwrap.wrap(paragraph, SUBTITLE_CHARS, break_on_hyphens=False) or [""]
    if lines:
        return alt.Title(str(chart["title"]), subtitle=[line for line in lines if line], anchor="start")
    return alt.Title(str(chart["title"]), anchor="start")


def _config(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """The look every chart shares (fonts, colours of text and grid, legends under the plot)."""
    configured = (
        chart.configure(font="sans-serif", padding=6)
        .configure_title(fontSize=13, subtitleFontSize=11, subtitleColor=MUTED, offset=8, subtitlePadding=4)
        .configure_axis(labelColor=MUTED, titleColor="#1f2328", gridColor="#e6e9ec", labelFontSize=10, titleFontSize=11)
        .configure_legend(
            orient="bottom",
            direction="horizontal",
            labelLimit=280,
            titleFontSize=11,
            labelFontSize=10,
            columnPadding=14,
        )
        .configure_view(stroke="#d1d9e0")
    )
    return cast(alt.TopLevelMixin, configured)


def to_dict(chart: alt.TopLevelMixin, validate: bool = False) -> Spec:
    """The Vega-Lite JSON of an Altair chart; ``validate`` checks it against Vega-Lite's schema (slow: tests)."""
    out: Spec = chart.to_dict(validate=validate)
    return out


DURATION = (
    "(datum.value >= 3600 ? floor(datum.value / 3600) + 'h' : '')"
    " + (datum.value >= 60 ? floor(datum.value % 3600 / 60) + 'm' : '')"
    " + format(datum.value % 60, '~g') + 's'"
)  # a tick of virtual seconds as Go prints a duration: 45s, 5m0s, 1h30m0s

_TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400)


def time_ticks(lo: float, hi: float, count: int = 7) -> list[float]:
    """Round durations between ``lo`` and ``hi`` (at most about ``count``)."""
    span = hi - lo
    if span <= 0:
        return [lo]
    step = next((s for s in _TIME_STEPS if span / s <= count), None)
    if step is None:
        raw = span / count
        mag = 10 ** math.floor(math.log10(raw))
        step = next(f * mag for f in (1, 2, 5, 10) if span / (f * mag) <= count)
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 6) for i in range(int((hi - first) / step + 1e-9) + 1)]


def count_ticks(lo: float, hi: float, count: int = 6) -> list[int]:
    """Whole numbers from ``lo`` to ``hi`` (rounded out to the step), at most about ``count`` of them, a step of
    1, 2, 5, 10, 20, 25, 50, ...: the ticks of an axis that counts things (Vega-Lite's tickMinStep is not kept when
    it compiles a layered chart, so the ticks are given)."""
    span = max(1.0, hi - lo)
    steps = (int(f * 10**i) for i in range(16) for f in (1, 2, 2.5, 5) if float(f * 10**i).is_integer())
    step = next(s for s in steps if span / s <= count)
    first = math.floor(lo / step) * step
    last = max(first + step, math.ceil(hi / step) * step)
    return list(range(first, last + 1, step))


def _count_axis(ticks: Sequence[int], **kwargs: Any) -> alt.Axis:
    return alt.Axis(values=list(ticks), format="d", **kwargs)


def _fmt_x(value: Any, time: bool) -> str:
    if value is None:
        return ""
    if time:
        return format_duration(float(value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _valid(values: Sequence[Any]) -> list[float]:
    return [float(v) for v in values if isinstance(v, int | float) and math.isfinite(v)]


# -- lines -----------------------------------------------------------------------------------------------------


def _y_domain(chart: Chart, x_domain: Sequence[float] | None) -> list[float] | None:
    """The y range of the lines (reference lines left out) within the x range, padded; None: the data's own."""
    if chart.get("y_domain"):
        return [float(v) for v in chart["y_domain"]]
    ys: list[float] = []
    for s in chart["series"]:
        if s.get("ref"):
            continue
        for i, x in enumerate(s["x"]):
            if (
                x_domain is not None
                and isinstance(x, int | float)
                and not x_domain[0] - 1e-9 <= x <= x_domain[1] + 1e-9
            ):
                continue
            ys += _valid([s["y"][i], *(s[k][i] for k in ("lo", "hi") if k in s)])
    if chart.get("y_zero"):
        ys.append(0.0)
    if not ys:
        return [0.0, 1.0]
    lo, hi = min(ys), max(ys)
    pad = (hi - lo) * 0.06 or max(1.0, abs(hi) * 0.1)
    lo = 0.0 if lo >= 0 and lo - pad < 0 else lo - pad
    return [round(lo, 6), round(hi + pad, 6)]


def _line_rows(chart: Chart, time: bool) -> list[dict[str, Any]]:
    rows = []
    for i, s in enumerate(chart["series"]):
        n = len(_valid(s["y"]))
        row: dict[str, Any] = {
            "s": f"s{i}",
            "label": s["label"],
            "key": s.get("key") or s["label"],
            "dash": bool(s.get("dash")),
            "ref": bool(s.get("ref")),
            "pts": bool(s.get("points")) or (n <= FEW_POINTS and not chart.get("step") and not s.get("ref")),
            "only": bool(s.get("points")),
            "x": list(s["x"]),
            "y": list(s["y"]),
            "lo": list(s.get("lo") or []),
            "hi": list(s.get("hi") or []),
        }
        row["xt"] = [_fmt_x(v, time) for v in s["x"]]  # the hover tooltip's x
        rows.append(row)
    return rows


def _x_encoding(chart: Chart, x_domain: Sequence[float] | None) -> alt.X:
    kind = chart.get("x_fmt", "num")
    title = chart["x_label"]
    if kind == "step":
        return alt.X(
            "x:O",
            title=title,
            sort=list(chart.get("categories") or []),
            axis=alt.Axis(labelAngle=-30, labelLimit=160, labelAlign="right"),
            scale=alt.Scale(paddingOuter=0.3),
        )
    scale = alt.Scale(nice=False, zero=False, padding=10)
    if x_domain is not None:
        scale = alt.Scale(domain=list(x_domain), nice=False, zero=False, padding=10)
    if kind == "time":
        lo, hi = x_domain if x_domain is not None else (0.0, 1.0)
        axis = alt.Axis(values=time_ticks(lo, hi), labelExpr=DURATION, grid=True)
        return alt.X("x:Q", title=title, scale=scale, axis=axis)
    if chart.get("x_counts"):
        lo, hi = x_domain if x_domain is not None else (0.0, 1.0)
        ticks = [t for t in count_ticks(lo, hi, 12) if lo <= t <= hi]
        return alt.X("x:Q", title=title, scale=scale, axis=_count_axis(ticks))
    return alt.X("x:Q", title=title, scale=scale)


def _x_extent(chart: Chart) -> list[float] | None:
    if chart.get("x_fmt") == "step":
        return None
    if chart.get("x_domain"):
        return [float(v) for v in chart["x_domain"]]
    xs = [x for s in chart["series"] if not s.get("ref") for x in _valid(s["x"])]
    if not xs:
        return [0.0, 1.0]
    lo, hi = min(xs), max(xs)
    return [lo, hi if hi > lo else lo + 1]


def line_chart(chart: Chart, palette: Palette) -> alt.TopLevelMixin:
    time = chart.get("x_fmt") == "time"
    x_domain = _x_extent(chart)
    y_domain = _y_domain(chart, x_domain)
    rows = _line_rows(chart, time)
    x = _x_encoding(chart, x_domain)
    y_domain = y_domain or [0.0, 1.0]
    if chart.get("counts"):
        ticks = count_ticks(y_domain[0], y_domain[1])
        y_scale = alt.Scale(domain=[ticks[0], ticks[-1]], nice=False, zero=False)
        y_axis = _count_axis(ticks)
    else:
        y_scale, y_axis = alt.Scale(domain=y_domain, nice=True, zero=False), alt.Axis()
    y = alt.Y("y:Q", title=chart["y_label"], scale=y_scale, axis=y_axis)
    keys = [r["key"] for r in rows]
    color = alt.Color(
        "key:N",
        title=chart.get("legend") or None,
        scale=palette.scale(keys),
        legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2.5, symbolOpacity=1, columns=min(4, len(set(keys)))),
    )
    interpolate: Literal["step-after", "linear"] = "step-after" if chart.get("step") else "linear"
    layers: list[alt.Chart] = []
    if any(r["lo"] for r in rows):
        layers.append(
            alt.Chart(name="band")
            .mark_area(opacity=0.18, clip=True, interpolate=interpolate)
            .encode(x=x, y=alt.Y("lo:Q", scale=y_scale, title=chart["y_label"]), y2="hi:Q", color=color, detail="s:N")
            .transform_filter("isValid(datum.lo) && isValid(datum.hi)")
        )
    if any(r["ref"] for r in rows):
        layers.append(
            alt.Chart(name="reference")
            .mark_line(clip=True, strokeDash=[2, 3], strokeWidth=1.2)
            .encode(x=x, y=y, color=color, detail="s:N")
            .transform_filter("datum.ref")
        )
    for name, test in (("dashed", "datum.dash && !datum.ref"), ("solid", "!datum.dash && !datum.ref")):
        if not any(r["dash"] == (name == "dashed") and not r["ref"] and not r["only"] for r in rows):
            continue
        layers.append(
            alt.Chart(name=name)
            .mark_line(
                clip=True,
                interpolate=interpolate,
                strokeWidth=2.2 if name == "solid" else 1.8,
                strokeDash=[6, 4] if name == "dashed" else [1, 0],
            )
            .encode(x=x, y=y, color=color, detail="s:N")
            .transform_filter(f"{test} && !datum.only && isValid(datum.y)")
        )
    if any(r["pts"] for r in rows):
        layers.append(
            alt.Chart(name="points")
            .mark_point(filled=True, clip=True, opacity=1)
            .encode(x=x, y=y, color=color, size=alt.value(28), detail="s:N")
            .transform_filter("datum.pts && isValid(datum.y)")
        )
    if not chart.get("static"):  # a panel of a PNG needs no hover (nor can share its name with another panel's)
        layers.append(_hover(chart, rows, x, x_domain))
    out = alt.layer(*layers, data=alt.InlineData(values=rows)).transform_flatten(["x", "y", "lo", "hi", "xt"])
    return out.properties(title=_title(chart), width=WIDTH, height=HEIGHT)


def _hover(chart: Chart, rows: Sequence[Mapping[str, Any]], x: alt.X, x_domain: Sequence[float] | None) -> alt.Chart:
    """A band per x value, invisible until hovered, its tooltip listing every line's value there: on a step axis,
    the step's place; on a number or time axis, from halfway to the x before to halfway to the next (a step line:
    from this x to the next, where the value holds). (Not Vega-Lite's "nearest" point selection: its tooltip reads
    text fields from the hovered mark, not from the data.)"""
    hover = alt.selection_point(name="hover", fields=["x"], on="pointerover", clear="pointerout")
    tips = [alt.Tooltip("xt:N", title=chart["x_label"])]
    tips += [alt.Tooltip(f"{r['s']}:Q", title=r["label"], format=".2~f") for r in rows if not r["ref"]]
    base = (
        alt.Chart(name="hover")
        .transform_filter("!datum.ref")
        .transform_pivot("s", value="y", groupby=["x", "xt"], op="max")
    )
    opacity = alt.condition(hover, alt.value(0.15), alt.value(0.0), empty=False)
    if x_domain is None:  # a step axis: the band of the step
        band: alt.Chart = base.mark_rect(color=REFERENCE).encode(x=x, opacity=opacity, tooltip=tips)
        return band.add_params(hover)
    lo, hi = x_domain
    if chart.get("step"):
        x0, x1 = "datum.x", f"isValid(datum.next) ? datum.next : max(datum.x, {hi})"
    else:
        x0 = f"isValid(datum.prev) ? (datum.prev + datum.x) / 2 : min(datum.x, {lo})"
        x1 = f"isValid(datum.next) ? (datum.x + datum.next) / 2 : max(datum.x, {hi})"
    ranged: alt.Chart = (
        base.transform_window(
            prev="lag(x)", next="lead(x)", sort=[alt.SortField("x", order="ascending")], frame=[None, None]
        )
        .transform_calculate(x0=x0, x1=x1)
        .mark_rect(color=REFERENCE, clip=True)
        .encode(x=alt.X("x0:Q", title=chart["x_label"]), x2="x1:Q", opacity=opacity, tooltip=tips)
        .add_params(hover)
    )
    return ranged


# -- bars ------------------------------------------------------------------------------------------------------


def _bar_rows(chart: Chart) -> list[dict[str, Any]]:
    by_category = chart.get("color_by") == "category"
    rows = []
    for g in chart["groups"]:
        errors = g.get("errors") or []
        for i, cat in enumerate(chart["categories"]):
            v = g["values"][i]
            e = errors[i] if i < len(errors) else None
            rows.append(
                {
                    "c": cat,
                    "g": g["label"],
                    "key": cat if by_category else (g.get("key") or g["label"]),
                    "v": v,
                    "lo": None if v is None or not e else round(v - e, 6),
                    "hi": None if v is None or not e else round(v + e, 6),
                    "tip": "-" if v is None else (f"{v:.2f}" + (f" ± {e:.2f}" if e else "")),
                    "note": g.get("missing", "") if v is None else "",
                }
            )
    return rows


def _bar_extent(rows: Sequence[Mapping[str, Any]], stacked: bool) -> tuple[float, float]:
    """The lowest and highest value the bars (whiskers, stacks) reach, 0 included."""
    if stacked:
        totals: dict[str, float] = {}
        for r in rows:
            totals[r["c"]] = totals.get(r["c"], 0.0) + max(0.0, float(r["v"] or 0.0))
        return 0.0, max(totals.values(), default=0.0)
    tops = _valid([r["hi"] if r["hi"] is not None else r["v"] for r in rows])
    bottoms = _valid([r["lo"] if r["lo"] is not None else r["v"] for r in rows])
    return min([0.0, *bottoms]), max([0.0, *tops])


def bar_chart(chart: Chart, palette: Palette) -> alt.TopLevelMixin:
    rows = _bar_rows(chart)
    cats = list(chart["categories"])
    groups = [g["label"] for g in chart["groups"]]
    by_category = chart.get("color_by") == "category"
    stacked = bool(chart.get("stacked"))
    longest = max((len(str(c)) for c in cats), default=0)
    rotate = len(cats) > 4 or longest > 12
    x = alt.X(
        "c:N",
        title=chart.get("x_label") or None,
        sort=cats,
        axis=alt.Axis(labelAngle=-35 if rotate else 0, labelAlign="right" if rotate else "center", labelLimit=160),
        scale=alt.Scale(paddingInner=0.2, paddingOuter=0.1),
    )
    lo, hi = _bar_extent(rows, stacked)
    if chart.get("counts"):
        ticks = count_ticks(lo, hi)
        y_scale, y_axis = alt.Scale(domain=[ticks[0], ticks[-1]], nice=False), _count_axis(ticks)
    else:  # nothing above 0 (no disruption at all): an axis from 0 to 1, not a plot of height 0
        y_scale, y_axis = (alt.Scale(domain=[0, 1]) if hi <= 0 <= lo else alt.Scale()), alt.Axis()
    y = alt.Y("v:Q", title=chart["y_label"], axis=y_axis, stack="zero" if stacked else None, scale=y_scale)
    keys = [r["key"] for r in rows]
    show_colors = not by_category and (len(groups) > 1 or stacked)
    color = alt.Color(
        "key:N",
        title=chart.get("legend") or None,
        scale=palette.scale(keys),
        legend=alt.Legend(columns=min(4, len(set(keys)))) if show_colors else None,
    )
    offset: dict[str, Any] = {} if stacked or len(groups) < 2 else {"xOffset": alt.XOffset("g:N", sort=groups)}
    faded = [g["label"] for g in chart["groups"] if g.get("faded")]
    enc: dict[str, Any] = {
        "x": x,
        "y": y,
        "color": color,
        "tooltip": [
            alt.Tooltip("c:N", title=chart.get("x_label") or "category"),
            alt.Tooltip("g:N", title="bar"),
            alt.Tooltip("tip:N", title=chart["y_label"]),
        ],
        **offset,
    }
    if faded:
        enc["opacity"] = alt.Opacity(
            "g:O",
            sort=groups,
            title=None,
            scale=alt.Scale(domain=groups, range=[0.4 if g in faded else 1.0 for g in groups]),
            legend=alt.Legend(symbolType="square", symbolFillColor=MUTED, symbolStrokeWidth=0),
        )
    layers: list[alt.Chart] = [
        alt.Chart(name="bar")
        .mark_bar(stroke="#1f2328" if faded else None, strokeWidth=0.6)
        .encode(**enc)
        .transform_filter("isValid(datum.v)")
    ]
    if any(r["lo"] is not None for r in rows):
        layers.append(
            alt.Chart(name="whisker")
            .mark_rule(color="#1f2328", strokeWidth=1.3)
            .encode(x=x, y=alt.Y("lo:Q", title=chart["y_label"]), y2="hi:Q", **offset)
            .transform_filter("isValid(datum.hi)")
        )
    if any(r["note"] for r in rows):
        layers.append(
            alt.Chart(name="missing")
            .mark_text(angle=270, align="left", baseline="middle", dx=4, fontSize=10, fontStyle="italic", color=MUTED)
            .encode(x=x, y=alt.datum(0), text="note:N", **offset)
            .transform_filter("datum.note")
        )
    out = alt.layer(*layers, data=alt.InlineData(values=rows))
    per_category = WIDTH / max(1, len(cats))  # few categories: narrower bars, not a wide plot of two bars
    bars_in_one = 1 if stacked or not offset else len(groups)
    step = alt.Step(min(int(per_category), 40 * bars_in_one + 30), **{"for": "position"})
    width: Any = WIDTH if per_category <= 90 else step
    return out.properties(title=_title(chart), width=width, height=HEIGHT)


# -- heat map --------------------------------------------------------------------------------------------------


def heatmap_chart(chart: Chart, palette: Palette) -> alt.TopLevelMixin:
    """Rows x columns coloured by value (%), one layer shown at a time (radio buttons in the page)."""
    nodes = list(chart["rows"])
    layers = chart["layers"]
    cols = list(layers[0]["cols"]) if layers else []
    rows = [
        {"layer": layer["name"], "node": node, "v": list(layer["values"][i])}
        for layer in layers
        for i, node in enumerate(nodes)
    ]
    labels = json.dumps(cols)
    cell_h = 5 if len(nodes) > 60 else 10 if len(nodes) > 30 else 18
    cell_w = max(4, min(56, int(1200 / max(1, len(cols)))))
    every = max(1, math.ceil(len(cols) / 30))
    x = alt.X(
        "ci:O",
        title=chart["col_label"],
        axis=alt.Axis(
            labelExpr=f"datum.value % {every} === 0 ? {labels}[datum.value] : ''",
            labelAngle=-50,
            labelAlign="right",
            labelLimit=160,
            ticks=False,
            domain=False,
        ),
    )
    y = alt.Y(
        "node:N",
        title="node",
        sort=nodes,
        axis=alt.Axis(labels=cell_h >= 9, ticks=False, domain=False, labelLimit=220),
    )
    color = alt.Color(
        "v:Q",
        title="requested / allocatable (%)",
        scale=alt.Scale(scheme="yellowgreenblue", domain=[0, 100], clamp=True),
        legend=alt.Legend(gradientLength=200, direction="horizontal"),
        condition=[{"test": "!isValid(datum.v)", "value": NO_VALUE}, {"test": "datum.v > 100.05", "value": OVER}],
    )
    base = alt.Chart(name="cell").mark_rect(stroke="white", strokeWidth=0.5 if cell_w > 6 else 0, invalid="show")
    tooltip = [
        alt.Tooltip("node:N", title="node"),
        alt.Tooltip("col:N", title=chart["col_label"]),
        alt.Tooltip("layer:N", title="layer"),
        alt.Tooltip("vt:N", title="requested / allocatable"),
    ]
    cells = base.encode(x=x, y=y, color=color, tooltip=tooltip)
    chart_layers: list[alt.Chart] = [cells]
    if cell_w >= 30 and cell_h >= 14:
        chart_layers.append(
            alt.Chart(name="value")
            .mark_text(fontSize=9.5)
            .encode(
                x=x,
                y=y,
                text=alt.Text("v:Q", format=".0f"),
                tooltip=tooltip,  # the number sits on its cell: it answers the hover too
                color=alt.condition("datum.v > 55 && datum.v <= 100.05", alt.value("white"), alt.value("#1f2328")),
            )
            .transform_filter("isValid(datum.v)")
        )
    out = (
        alt.layer(*chart_layers, data=alt.InlineData(values=rows))
        .transform_flatten(["v"])
        .transform_window(ci="row_number()", groupby=["layer", "node"])
        .transform_calculate(
            ci="datum.ci - 1",
            col=f"{labels}[datum.ci]",
            vt="isValid(datum.v) ? format(datum.v, '.1f') + ' %' : 'n/a'",
        )
    )
    names = [layer["name"] for layer in layers]
    if len(names) > 1:
        pick = alt.param(
            name="layer_shown",
            value=names[0],
            bind=alt.binding_radio(options=names, name="shown: "),
        )
        out = out.add_params(pick).transform_filter("datum.layer === layer_shown")
    elif names:
        out = out.transform_filter(f"datum.layer === {json.dumps(names[0])}")
    return out.properties(title=_title(chart), width=alt.Step(cell_w), height=alt.Step(cell_h))


# -- timeline --------------------------------------------------------------------------------------------------


def _bins(events: Sequence[Sequence[Any]], end: float, width: int) -> list[list[Sequence[Any]]]:
    """Events close enough to share a mark (3 pixels), in time order."""
    out: dict[int, list[Sequence[Any]]] = {}
    per_px = end / max(1, width)
    for e in sorted(events, key=lambda e: float(e[0])):
        out.setdefault(round(float(e[0]) / per_px / 3), []).append(e)
    return [out[k] for k in sorted(out)]


def timeline_chart(chart: Chart, palette: Palette) -> alt.TopLevelMixin:
    lanes = [lane for lane in chart["lanes"] if lane["events"]]
    end = float(chart.get("end") or 0.0) or 1.0
    rows = []
    names = []
    for lane in lanes:
        name = f"{lane['label']} ({len(lane['events'])})"
        names.append(name)
        for group in _bins(lane["events"], end, TIMELINE_WIDTH):
            lines = [f"{format_duration(float(e[0]))}  {e[1] + ': ' if e[1] else ''}{e[2]}" for e in group[:8]]
            if len(group) > 8:
                lines.append(f"… and {len(group) - 8} more")
            rows.append(
                {
                    "t": group[0][0],
                    "lane": name,
                    "key": lane.get("key") or lane["label"],
                    "n": len(group),
                    "pod": group[0][1] or "",
                    "tip": "\n".join([f"{name}, {len(group)} here", *lines]),
                }
            )
    x = alt.X(
        "t:Q",
        title="virtual time",
        scale=alt.Scale(domain=[0, end], nice=False, padding=14),
        axis=alt.Axis(values=time_ticks(0, end, 9), labelExpr=DURATION),
    )
    y = alt.Y(
        "lane:N", title=None, sort=names, axis=alt.Axis(labelLimit=240, ticks=False, domain=False, labelFontSize=11)
    )
    marks = (
        alt.Chart(name="event")
        .mark_circle(opacity=0.8, stroke="white", strokeWidth=0.8, cursor="pointer")
        .encode(
            x=x,
            y=y,
            size=alt.Size("n:Q", scale=alt.Scale(range=[40, 420], domainMin=1), legend=None),
            color=alt.Color("key:N", scale=palette.scale([r["key"] for r in rows]), legend=None),
            tooltip=alt.Tooltip("tip:N"),
        )
    )
    out = alt.layer(marks, data=alt.InlineData(values=rows))
    return out.properties(title=_title(chart), width=TIMELINE_WIDTH, height=alt.Step(30))


# -- one entry point -------------------------------------------------------------------------------------------

BUILDERS = {"line": line_chart, "bars": bar_chart, "heatmap": heatmap_chart, "timeline": timeline_chart}


def altair_chart(chart: Chart, palette: Palette) -> alt.TopLevelMixin:
    """The Altair chart of a chart description (``kind``: line, bars, heatmap, timeline)."""
    kind = chart["kind"]
    if kind == "concat":
        parts: list[Any] = [BUILDERS[c["kind"]]({**c, "static": True}, palette) for c in chart["charts"]]
        return _config(
            alt.hconcat(*parts, spacing=40).properties(title=_title(chart)).resolve_scale(color="independent")
        )
    return _config(BUILDERS[kind](chart, palette))


def spec(chart: Chart, palette: Palette | None = None, validate: bool = False) -> Spec:
    """The Vega-Lite specification of a chart description."""
    return to_dict(altair_chart(chart, palette or Palette()), validate=validate)


# -- rendering (vl-convert) ------------------------------------------------------------------------------------


def to_png(vl_spec: Spec, scale: float = 2.0) -> bytes:
    import vl_convert

    data: bytes = vl_convert.vegalite_to_png(vl_spec, scale=scale)
    return data


def to_svg(vl_spec: Spec) -> str:
    import vl_convert

    data: str = vl_convert.vegalite_to_svg(vl_spec)
    return data


def write_png(chart: Chart, path: Path, palette: Palette | None = None) -> Path:
    """The chart as a PNG file (twice the page's pixels), written whole or not at all (:func:`replacing`)."""
    png = to_png(spec(chart, palette))
    with replacing(path) as tmp:
        tmp.write_bytes(png)
    return path


@cache
def javascript() -> str:
    """Vega, Vega-Lite and Vega-Embed in one script (``window.vegaEmbed``), from vl-convert: no network."""
    import vl_convert

    bundle: str = vl_convert.javascript_bundle("window.vegaEmbed = vegaEmbed;")
    return bundle
