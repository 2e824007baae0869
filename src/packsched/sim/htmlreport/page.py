"""From a command's ``-o json`` document (and the optional extras of ``--html``) to the page model: the sections
``assets/report.js`` draws (chart descriptions that :mod:`packsched.sim.chartspec` turns into Vega-Lite), and the
pods it can drill into. The PNGs of ``replay``, ``compare`` and ``tune`` are charts of these pages."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from packsched.api.quantity import QuantityError, format_quantity, milli_value, parse_quantity, value
from packsched.sim.htmlreport import charts as c
from packsched.sim.scenario import WHATIF_METRICS

Page = dict[str, Any]
PUBLISHED = "published (Weng et al., ATC '23)"
NO_PUBLISHED = "no published figure"
ARRIVED = "Arrived workload (% of cluster GPU capacity)"
BAND = "solid line: median over seeds; band: interquartile range"
WHISKERS = "whiskers: ± population SD over seeds"
DIAGONAL = "arrived (all allocated)"  # the reference line of the allocation curves (grey)
STEP_AXIS = "scenario step"
STEP_TITLE = f"{STEP_AXIS} (the state at its end)"


class ReportError(ValueError):
    """The document is not one a report can be made of."""


def _pm(mean: float | None, sd: float | None) -> str:
    return "-" if mean is None else f"{mean:.2f} ± {(sd or 0.0):.2f}"


# -- simulations: placements, heat map, timeline, quotas, pods -------------------------------------------------


def _placement_rows(placements: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    return [
        [
            p["pod"],
            p.get("node"),
            p.get("phase"),
            p.get("reason"),
            p.get("priority"),
            p.get("owner"),
            p.get("created"),
            p.get("started"),
            p.get("finished"),
            p.get("attempts"),
            p.get("replaces"),
        ]
        for p in placements
    ]


PLACEMENT_COLUMNS = [
    c.column("pod", pod=True),
    c.column("node"),
    c.column("phase"),
    c.column("reason"),
    c.column("priority", fmt="num"),
    c.column("owner"),
    c.column("created", fmt="time"),
    c.column("started", fmt="time"),
    c.column("finished", fmt="time"),
    c.column("attempts", fmt="num"),
    c.column("replaces", pod=True),
]


def _end_state_heatmap(nodes: Sequence[Mapping[str, Any]]) -> c.Chart:
    """Nodes x resources at the end (a saved document has no history)."""
    resources: list[str] = []
    for n in nodes:
        resources += [r for r in n.get("allocatable", {}) if r not in resources]
    shown = list(nodes)[:200]
    values = []
    for n in shown:
        util = n.get("utilization", {})
        row = [util.get(r) for r in resources]
        allowed = n.get("allowed_pods") or 0
        row.append(round(100.0 * n.get("pods", 0) / allowed, 1) if allowed else None)
        values.append(row)
    caption = (
        "requested / allocatable at the end of the simulation, per resource (grey: the node has none; red: over 100 %)"
    )
    if len(nodes) > len(shown):
        caption += f"; the first {len(shown)} of {len(nodes)} nodes"
    return c.heatmap(
        "Per-node utilisation at the end (%)",
        [n["node"] for n in shown],
        [{"name": "end of the simulation", "cols": [*resources, "pods"], "values": values}],
        col_label="resource",
        caption=caption,
    )


def _history_heatmap(usage: Mapping[str, Any]) -> c.Chart:
    if len(usage["cols"]) == 1:  # one instant (nothing arrives or leaves later): nodes x resources
        names = [layer["name"] for layer in usage["layers"]]
        values = [[layer["values"][i][0] for layer in usage["layers"]] for i in range(len(usage["nodes"]))]
        caption = f"requested / allocatable per node at {usage['cols'][0]}, when everything happened"
        if usage["nodes_total"] > len(usage["nodes"]):
            caption += f"; the first {len(usage['nodes'])} of {usage['nodes_total']} nodes"
        layer = {"name": f"at {usage['cols'][0]}", "cols": names, "values": values}
        return c.heatmap("Per-node utilisation (%)", usage["nodes"], [layer], col_label="resource", caption=caption)
    layers = [{"name": layer["name"], "cols": usage["cols"], "values": layer["values"]} for layer in usage["layers"]]
    how = (
        "the peak within each time bucket"
        if usage.get("bucketed")
        else "each column is an instant something changed, or the end (the state after it)"
    )
    caption = (
        f"requested / allocatable per node over virtual time, one resource at a time; {how}; grey: the node did not "
        "exist yet, or has none of the resource; red: over 100 %"
    )
    if usage["nodes_total"] > len(usage["nodes"]):
        caption += f"; the first {len(usage['nodes'])} of {usage['nodes_total']} nodes"
    return c.heatmap(
        "Per-node utilisation over time (%)", usage["nodes"], layers, col_label="virtual time", caption=caption
    )


def _victims(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Preemptions: one per preemptor and instant, with its victims."""
    out: dict[tuple[float, str], dict[str, Any]] = {}
    for e in events:
        if e["kind"] != "preempted" or not e.get("by"):
            continue
        entry = out.setdefault((e["time"], e["by"]), {"time": e["time"], "by": e["by"], "victims": [], "nodes": []})
        entry["victims"].append(e["pod"])
        if e.get("node") and e["node"] not in entry["nodes"]:
            entry["nodes"].append(e["node"])
        if e.get("reason"):
            entry.setdefault("replaced", []).append(e["reason"])
    return list(out.values())


LANES = ("arrived", "scheduled", "unschedulable", "preemption", "completed", "evicted / deleted")
LANE_KEYS = {"preemption": "preemptions", "evicted / deleted": "evictions"}  # the colours of the step charts' bars


def _timeline(
    placements: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]],
    end: float,
    steps: Sequence[Mapping[str, Any]] = (),
) -> c.Chart:
    lanes: dict[str, list[list[Any]]] = {name: [] for name in LANES}
    lanes["scenario step"] = [[s["at"], "", s["name"]] for s in steps[1:]]  # the first is the base cluster
    for p in placements:
        if p.get("created") is not None:
            lanes["arrived"].append([p["created"], p["pod"], "arrived"])
    for e in events:
        kind = e["kind"]
        if kind == "scheduled":
            lanes["scheduled"].append([e["time"], e["pod"], f"scheduled on {e.get('node')}"])
        elif kind == "unschedulable":
            lanes["unschedulable"].append([e["time"], e["pod"], e.get("reason") or "unschedulable"])
        elif kind == "completed":
            lanes["completed"].append([e["time"], e["pod"], f"completed on {e.get('node')}"])
        elif kind in ("evicted", "deleted"):
            lanes["evicted / deleted"].append([e["time"], e["pod"], f"{kind} from {e.get('node')}: {e.get('reason')}"])
    for p in _victims(events):
        victims = ", ".join(p["victims"])
        lanes["preemption"].append([p["time"], p["by"], f"preempted {victims} on {', '.join(p['nodes'])}"])
    return c.timeline(
        "Event timeline",
        [
            {"label": name, "key": LANE_KEYS.get(name, name), "events": lanes[name]}
            for name in ("scenario step", *LANES)
        ],
        end,
        caption="a mark's size: how many events it holds; hover a mark for the pods and what happened, click it "
        "for the first pod's details",
    )


def _quota_charts(series: Sequence[Mapping[str, Any]]) -> list[c.Chart]:
    out = []
    for q in series[:24]:
        res = q["resource"]
        div, _ = c.unit(res)
        xs = q["times"]
        used = [None if v is None else v / div for v in q["used"]]
        lo = [None if v is None else v / div for v in q["min"]]
        hi = [None if v is None else v / div for v in q["max"]]
        lines = [c.series("min", xs, lo, dash=True)]
        caption = "dashed: min and max; max: unbounded" if all(v is None for v in hi) else "dashed: min and max"
        if any(v is not None for v in hi):
            lines.append(c.series("max", xs, hi, dash=True))
        lines.append(c.series("used", xs, used))  # solid: drawn over min and max
        title = f"{q['namespace']}/{q['name']}: {res}"
        out.append(
            c.line(
                title,
                "virtual time",
                c.with_unit(res),
                lines,
                x_fmt="time",
                x_domain=(0.0, max([0.0, *xs]) or 1.0),
                caption=caption,
                y_zero=True,
                step=True,
            )
        )
    return out


def _pods(
    placements: Sequence[Mapping[str, Any]], events: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]
) -> dict[str, Any]:
    explains = extras.get("explain", {})
    requests = extras.get("requests", {})
    pods: dict[str, Any] = {}
    for p in placements:
        entry = pods.setdefault(p["pod"], {"placements": [], "events": []})
        entry["placements"].append(dict(p))
        if p["pod"] in explains:
            entry["explain"] = explains[p["pod"]]
        if p["pod"] in requests:
            entry["requests"] = {r: _quantity(r, a) for r, a in requests[p["pod"]].items()}
    for e in events:
        for who, role in ((e["pod"], ""), (e.get("by"), "preemptor")):
            if who and who in pods:
                detail = "; ".join(
                    x for x in (f"by {e['by']}" if e.get("by") and not role else None, e.get("reason")) if x
                )
                if role:
                    detail = f"preempted {e['pod']}"
                pods[who]["events"].append([e["time"], e["kind"], e.get("node"), detail])
    return pods


def _quantity(resource: str, amount: int) -> str:
    try:
        return format_quantity(resource, amount)
    except (ValueError, TypeError):
        return str(amount)


def _simulation_sections(
    placements: Sequence[Mapping[str, Any]],
    events: Sequence[Mapping[str, Any]],
    nodes: Sequence[Mapping[str, Any]] | None,
    end: float,
    extras: Mapping[str, Any],
    steps: Sequence[Mapping[str, Any]] = (),
) -> list[c.Section]:
    sections = [
        c.table(
            "placements",
            f"Placements ({len(placements)} pods)",
            PLACEMENT_COLUMNS,
            _placement_rows(placements),
            caption="click a column to sort, type to filter (every column), click a pod for its details and "
            "explain table",
        )
    ]
    heat = []
    if extras.get("usage"):
        heat.append(_history_heatmap(extras["usage"]))
    elif nodes:
        heat.append(_end_state_heatmap(nodes))
    if heat:
        sections.append(c.charts("utilisation", "Utilisation per node", heat))
    sections.append(c.charts("timeline", "Timeline", [_timeline(placements, events, end, steps)]))
    preemptions = _victims(events)
    if preemptions:
        sections.append(
            c.table(
                "preemptions",
                f"Preemptions ({len(preemptions)})",
                [c.column("time", fmt="time"), c.column("preemptor", pod=True), c.column("victims"), c.column("nodes")],
                [[p["time"], p["by"], ", ".join(p["victims"]), ", ".join(p["nodes"])] for p in preemptions],
            )
        )
    if extras.get("quotas"):
        sections.append(
            c.charts(
                "quotas",
                "ElasticQuotas over time: min / used / max",
                _quota_charts(extras["quotas"]),
                caption="used: the requests of the quota's running pods as CapacityScheduling counts them",
            )
        )
    sections.append(
        c.table(
            "events",
            f"Events ({len(events)})",
            [
                c.column("time", fmt="time"),
                c.column("kind"),
                c.column("pod", pod=True),
                c.column("node"),
                c.column("by", pod=True),
                c.column("reason"),
            ],
            [[e["time"], e["kind"], e["pod"], e.get("node"), e.get("by"), e.get("reason")] for e in events],
        )
    )
    return sections


def _drill_note(extras: Mapping[str, Any]) -> str:
    if "explain" in extras:
        return str(extras.get("explain_note", ""))
    if "explain_note" in extras:
        return str(extras["explain_note"])
    return (
        "this page was made from a saved JSON document, which has no explain tables: `--html FILE` on the command "
        "embeds them, or run `packsched explain ... --pod NAMESPACE/NAME`"
    )


def simulate_page(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> Page:
    placements, events = doc["placements"], doc["events"]
    cfg = doc.get("config") or {}
    summary = doc.get("summary", {})
    items: list[tuple[str, Any]] = [(k, v) for k, v in summary.items()]
    items += [("end time", {"time": doc.get("end_time", 0.0)}), ("seed", doc.get("seed"))]
    items.append(("configuration", cfg.get("file") or cfg.get("source") or "default"))
    sections = [c.kpis("summary", "Summary", items, notes=doc.get("warnings", []))]
    sections += _simulation_sections(placements, events, doc.get("nodes"), doc.get("end_time", 0.0), extras)
    return {
        "title": "packsched simulate",
        "sections": sections,
        "pods": _pods(placements, events, extras),
        "pods_note": _drill_note(extras),
    }


# -- scenarios and what-if comparisons -------------------------------------------------------------------------


def _amount(resource: str, text: Any) -> float | None:
    """A quantity of a scenario report ("16Gi") in the chart's unit (GiB), None for unbounded."""
    if text is None:
        return None
    try:
        q = parse_quantity(text)
    except (QuantityError, ValueError):
        return None
    div, _ = c.unit(resource)
    raw = milli_value(q) if resource == "cpu" else value(q)
    return round(raw / div, 4)


STEP_COLUMNS = [
    c.column("step"),
    c.column("at", fmt="time"),
    c.column("until", fmt="time"),
    c.column("running", fmt="num"),
    c.column("pending", fmt="num"),
    c.column("preemptions", fmt="num"),
    c.column("evictions", fmt="num"),
    c.column("blocked", fmt="num"),
    c.column("free nodes", fmt="num"),
    c.column("free GPUs", fmt="num"),
    c.column("fragmented GPUs", fmt="num"),
    c.column("utilisation"),
    c.column("notes"),
]


def _step_row(s: Mapping[str, Any]) -> list[Any]:
    util = ", ".join(f"{r} {100 * v:.0f}%" for r, v in s.get("utilisation", {}).items())
    return [
        s["name"],
        s["at"],
        s["until"],
        s["running"],
        s["pending"],
        s["preemptions"],
        s["evictions"],
        s.get("evictions_blocked", 0),
        f"{s['free_nodes']}/{s['nodes']}",
        s.get("free_gpus"),
        s.get("fragmented_gpus"),
        util,
        "; ".join(s.get("notes", [])),
    ]


def _steps_x(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    """A place on the step axis per step, in order: its name (made unique), so that a step that takes no time
    (the last one, often) has its own place instead of one on top of the step before."""
    out: list[str] = []
    for s in steps:
        name = str(s["name"])
        label, n = name, 1
        while label in out:
            n += 1
            label = f"{name} ({n})"
        out.append(label)
    return out


def _step_quota_charts(by_label: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[c.Chart]:
    """min / used / max per quota and resource at the end of each step (several configurations: one used line
    each, the first one's min and max)."""
    keys: dict[tuple[str, str], None] = {}
    for steps in by_label.values():
        for s in steps:
            for q in s.get("quotas", []):
                for r in q.get("used", {}):
                    keys[(q["namespace"], r)] = None
    out = []
    first = next(iter(by_label.values()), [])
    for ns, res in list(keys)[:24]:
        lines = []
        for i, (label, steps) in enumerate(by_label.items()):
            xs = _steps_x(steps)
            quota: list[Mapping[str, Any]] = [
                next((q for q in s.get("quotas", []) if q["namespace"] == ns), {}) for s in steps
            ]
            name = "used" if len(by_label) == 1 else f"used, {label}"
            used = [_amount(res, q.get("used", {}).get(res)) for q in quota]
            lines.append(c.series(name, xs, used, key="used" if len(by_label) == 1 else label))
            if i == 0:
                lines.insert(
                    0, c.series("min", xs, [_amount(res, q.get("min", {}).get(res)) for q in quota], dash=True)
                )
                lines.insert(
                    1, c.series("max", xs, [_amount(res, q.get("max", {}).get(res)) for q in quota], dash=True)
                )
        title = f"quota {ns}: {res}"
        out.append(
            c.line(
                title,
                STEP_TITLE,
                c.with_unit(res),
                lines,
                x_fmt="step",
                categories=_steps_x(first),
                y_zero=True,
                caption="dashed: min and max (a missing max: unbounded)",
            )
        )
    return out


def _pending_rows(label: str | None, steps: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    rows = []
    for s in steps:
        for reason, n in s.get("pending_reasons", {}).items():
            rows.append(([label] if label is not None else []) + [s["name"], n, reason])
    return rows


def scenario_page(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> Page:
    steps = doc["steps"]
    last = steps[-1] if steps else {}
    items: list[tuple[str, Any]] = [
        ("steps", max(0, len(steps) - 1)),
        ("running at the end", last.get("running")),
        ("pending at the end", last.get("pending")),
        ("preemptions", sum(s["preemptions"] for s in steps)),
        ("evictions", sum(s["evictions"] for s in steps)),
        ("free nodes at the end", f"{last.get('free_nodes')}/{last.get('nodes')}"),
    ]
    sections = [
        c.kpis("summary", "Summary", items),
        c.table("steps", "The cluster after each step", STEP_COLUMNS, [_step_row(s) for s in steps]),
    ]
    xs = _steps_x(steps)
    resources = list(dict.fromkeys(r for s in steps for r in s.get("utilisation", {})))
    step_charts = [
        c.line(
            "Pods after each step",
            STEP_TITLE,
            "pods (count)",
            [
                c.series("running", xs, [s["running"] for s in steps]),
                c.series("pending", xs, [s["pending"] for s in steps]),
            ],
            x_fmt="step",
            categories=xs,
            y_zero=True,
            counts=True,
        ),
        c.bars(
            "Disruptions per step",
            "pods (count)",
            xs,
            [
                c.bar_group("preemptions", [s["preemptions"] for s in steps]),
                c.bar_group("evictions", [s["evictions"] for s in steps]),
            ],
            x_label=STEP_AXIS,
            counts=True,
        ),
        c.line(
            "Cluster utilisation after each step",
            STEP_TITLE,
            "requested / allocatable (%)",
            [c.series(r, xs, [100 * s.get("utilisation", {}).get(r, 0.0) for s in steps]) for r in resources],
            x_fmt="step",
            categories=xs,
            y_zero=True,
            legend="resource",
        ),
    ]
    sections.append(c.charts("step-charts", "Step by step", step_charts))
    pending = _pending_rows(None, steps)
    if pending:
        sections.append(
            c.table(
                "pending",
                "Pending pods by reason",
                [c.column("step"), c.column("pods", fmt="num"), c.column("reason")],
                pending,
            )
        )
    sim = extras.get("simulation")
    if sim is None and any(s.get("quotas") for s in steps):
        sections.append(c.charts("quotas", "ElasticQuotas after each step", _step_quota_charts({"": steps})))
    page: Page = {"title": f"packsched run: scenario {doc.get('scenario', '')}", "sections": sections}
    if sim is not None:
        sections += _simulation_sections(sim["placements"], sim["events"], None, sim["end_time"], extras, steps)
        page["pods"] = _pods(sim["placements"], sim["events"], extras)
        page["pods_note"] = _drill_note(extras)
    return page


def whatif_page(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> Page:
    results: Mapping[str, Mapping[str, Any]] = doc["results"]
    labels = list(results)
    steps: Mapping[str, Sequence[Mapping[str, Any]]] = doc.get("steps", {})
    rows = [[what, *[results[label].get(key) for label in labels]] for key, what in WHATIF_METRICS]
    sections = [
        c.kpis("summary", "Configurations", [(label, doc.get("configs", {}).get(label, "")) for label in labels]),
        c.table(
            "results",
            "End state under each configuration",
            [c.column("metric"), *[c.column(label, fmt="num") for label in labels]],
            rows,
        ),
    ]

    def grouped(title: str, y_label: str, keys: Sequence[str]) -> c.Chart:
        """A group of bars per metric, a bar (and colour) per configuration, as in the lines below."""
        names = dict(WHATIF_METRICS)
        return c.bars(
            title,
            y_label,
            [names[k] for k in keys],
            [c.bar_group(label, [results[label].get(k) for k in keys]) for label in labels],
            x_label="at the end",
            counts=True,
            legend="configuration",
        )

    charts_ = [
        grouped("Pods at the end", "pods (count)", ["running", "pending"]),
        grouped("Nodes and GPUs left free", "nodes or GPUs (count)", ["free_nodes", "free_gpus", "fragmented_gpus"]),
        grouped("Disruptions", "pods (count)", ["preemptions", "evictions"]),
    ]
    several = any(len(ss) > 1 for ss in steps.values())  # a cluster alone has one step: nothing over time
    first = steps.get(labels[0], []) if labels else []
    for metric, title in (("running", "Pods running after each step"), ("pending", "Pods pending after each step")):
        if not several:
            break
        charts_.append(
            c.line(
                title,
                STEP_TITLE,
                "pods (count)",
                [
                    c.series(label, _steps_x(steps.get(label, [])), [s[metric] for s in steps.get(label, [])])
                    for label in labels
                ],
                x_fmt="step",
                categories=_steps_x(first),
                y_zero=True,
                counts=True,
                legend="configuration",
            )
        )
    sections.append(c.charts("comparison", "Per configuration", charts_))
    all_steps = [[label, *_step_row(s)] for label in labels for s in steps.get(label, [])]
    sections.append(
        c.table("steps", "Steps under each configuration", [c.column("configuration"), *STEP_COLUMNS], all_steps)
    )
    if any(s.get("quotas") for ss in steps.values() for s in ss):
        sections.append(c.charts("quotas", "ElasticQuotas after each step", _step_quota_charts(steps)))
    return {"title": f"packsched compare (what-if): {doc.get('input', '')}", "sections": sections}


# -- trace replays -------------------------------------------------------------------------------------------


def trace_text(doc: Mapping[str, Any], seeds: Sequence[int]) -> str:
    t = doc.get("trace", {})
    pods = str(t.get("pods", ""))
    workload = pods if pods.endswith(".csv") else f"openb_pod_list_{pods}"
    said = seed_text(seeds)
    return f"trace {workload} on {t.get('nodes')} nodes, {said}, tune {t.get('tune')}, tie-break {t.get('tie_break')}"


def seed_text(seeds: Sequence[int]) -> str:
    if not seeds:
        return "no seeds"
    s = sorted(seeds)
    if s == list(range(s[0], s[-1] + 1)) and len(s) > 2:
        return f"{len(s)} seeds ({s[0]}-{s[-1]})"
    return f"{len(s)} seed{'s' if len(s) > 1 else ''} ({', '.join(map(str, s))})"


def trace_groups(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each policy's summary (compare), or the one of a replay, in the same shape."""
    if "policies" in doc:
        return list(doc["policies"])
    label = doc.get("policy") or (str(doc.get("config") or "config").rsplit("/", 1)[-1].rsplit(".", 1)[0])
    return [{**doc, "label": label}]


def zoom_start(curves: Mapping[str, Sequence[float | None]]) -> float:
    """The arrived level from which some policy's allocation leaves the diagonal (allocated = arrived), less 10,
    rounded down to 10: below it every curve is the same diagonal."""
    first = 130
    for ys in curves.values():
        for x, y in enumerate(ys):
            if y is not None and x - y >= 1.0:
                first = min(first, x)
                break
    return float(max(0, min(80, (first - 10) // 10 * 10)))


def allocation_chart(doc: Mapping[str, Any], groups: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> c.Chart:
    curves = extras.get("curves", {})
    pub_curves = extras.get("published_curves", {})
    lines = []
    medians: dict[str, Sequence[float | None]] = {}
    published = [g["label"] for g in groups if g["label"] in pub_curves]
    for g in groups:  # the published means first: the medians are drawn over them
        label = g["label"]
        if label in pub_curves:
            ys = pub_curves[label]
            lines.append(c.series(f"{label}, {PUBLISHED} mean", list(range(len(ys))), ys, key=label, dash=True))
    for g in groups:
        label = g["label"]
        n = len(g.get("runs", []))
        if label in curves:
            band = curves[label]["gpu_alloc_pct"]
            xs = list(range(len(band["median"])))
            medians[label] = band["median"]
            lines.append(c.series(f"{label} (n={n})", xs, band["median"], lo=band["q1"], hi=band["q3"], key=label))
        else:  # a saved document: the levels it keeps, median over the runs
            pts = sorted({int(k) for r in g.get("runs", []) for k in r.get("gpu_alloc_pct", {})})
            ys = [_median([r["gpu_alloc_pct"].get(str(p)) for r in g.get("runs", [])]) for p in pts]
            med: list[float | None] = [None] * 131
            for p, y in zip(pts, ys, strict=True):
                if 0 <= p < len(med):
                    med[p] = y
            medians[label] = med
            lines.append(c.series(f"{label} (n={n})", pts, ys, key=label))
    start = zoom_start(medians)
    lines.append(c.series(DIAGONAL, [0, 130], [0, 130], ref=True))
    seeds = sorted({r["seed"] for g in groups for r in g.get("runs", [])})
    kind = BAND if curves else "points: median over seeds at the levels the JSON keeps"
    caption = f"{trace_text(doc, seeds)}\n{kind}"
    if published:
        caption += "; dashed: the published mean"
    caption += "; dotted grey: allocated = arrived"
    if start > 0:
        caption += f"\nbelow {start:.0f}% arrived every policy allocated all that arrived (the diagonal): not shown"
    return c.line(
        "GPU allocation vs arrived workload",
        ARRIVED,
        "GPU allocation ratio (%)",
        lines,
        x_domain=(start, 130),
        caption=caption,
        legend="policy",
    )


def _median(values: Sequence[float | None]) -> float | None:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    mid = len(vals) // 2
    return vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2


def fragmentation_chart(
    doc: Mapping[str, Any], groups: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]
) -> c.Chart:
    curves = extras.get("curves", {})
    lines = []
    for g in groups:
        label = g["label"]
        n = len(g.get("runs", []))
        if label in curves:
            band = curves[label]["frag_rate_pct"]
            xs = list(range(len(band["median"])))
            lines.append(c.series(f"{label} (n={n})", xs, band["median"], lo=band["q1"], hi=band["q3"], key=label))
        else:
            pts = sorted({int(k) for r in g.get("runs", []) for k in r.get("frag_rate_pct", {})})
            ys = [_median([r["frag_rate_pct"].get(str(p)) for r in g.get("runs", [])]) for p in pts]
            lines.append(c.series(f"{label} (n={n})", pts, ys, key=label))
    seeds = sorted({r["seed"] for g in groups for r in g.get("runs", [])})
    return c.line(
        "Fragmentation rate vs arrived workload",
        ARRIVED,
        "fragmentation rate (% of idle GPU)",
        lines,
        x_domain=(0, 130),
        caption=f"{trace_text(doc, seeds)}\n{BAND if curves else 'points: median over seeds'}",
        legend="policy",
    )


def unallocated_bars(groups: Sequence[Mapping[str, Any]], level: str, seeds: Sequence[int]) -> c.Chart:
    """Per policy (its colour, as in the curves): ours, and the published figure beside it, lighter."""
    labels = [g["label"] for g in groups]
    pubs = [g.get("published") or {} for g in groups]
    bar_groups = [
        c.bar_group(
            f"packsched, {seed_text(seeds)}",
            [g.get("mean", {}).get(level) for g in groups],
            [g.get("sd", {}).get(level) for g in groups],
        )
    ]
    caption = f"bars: mean over seeds; {WHISKERS}"
    if any(pubs):
        bar_groups.append(
            c.bar_group(
                PUBLISHED,
                [p.get("mean", {}).get(level) if p else None for p in pubs],
                [p.get("sd", {}).get(level) if p else None for p in pubs],
                missing=NO_PUBLISHED,
                faded=True,
            )
        )
        paper = sorted({int(p.get("seeds") or 0) for p in pubs if p} - {0})
        caption += "; lighter, outlined: the published figure"
        if paper:
            caption += f" (over the paper's {', '.join(map(str, paper))} seeds)"
    return c.bars(
        f"Unallocated GPU % at {level}% arrived (lower is better)",
        "unallocated GPU (%)",
        labels,
        bar_groups,
        caption=caption,
        x_label="policy",
        color_by="category",
    )


RUN_COLUMNS = [
    c.column("label"),
    c.column("seed", fmt="num"),
    c.column("unallocated @100%", fmt="num"),
    c.column("unallocated @130%", fmt="num"),
    c.column("frag rate @80%", fmt="num"),
    c.column("pods", fmt="num"),
    c.column("placed", fmt="num"),
    c.column("dropped", fmt="num"),
    c.column("seconds", fmt="num"),
]


def _run_rows(groups: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    return [
        [
            g["label"],
            r["seed"],
            r["unallocated_gpu_pct"].get("100"),
            r["unallocated_gpu_pct"].get("130"),
            r.get("frag_rate_pct", {}).get("80"),
            r.get("pods"),
            r.get("scheduled"),
            r.get("failed"),
            r.get("seconds"),
        ]
        for g in groups
        for r in g.get("runs", [])
    ]


def _summary_row(g: Mapping[str, Any]) -> list[Any]:
    p = g.get("published") or {}
    mean, sd = g.get("mean", {}), g.get("sd", {})
    m100 = mean.get("100")
    diff = None if not p or m100 is None else round(m100 - p["mean"]["100"], 2)
    return [
        g["label"],
        _pm(m100, sd.get("100")),
        _pm(p["mean"]["100"], p["sd"]["100"]) if p else NO_PUBLISHED,
        diff,
        _pm(mean.get("130"), sd.get("130")),
        _pm(p["mean"]["130"], p["sd"]["130"]) if p else NO_PUBLISHED,
        (g.get("frag_rate_pct_80") or {}).get("mean"),
        g.get("seconds_per_run"),
    ]


def trace_page(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> Page:
    groups = trace_groups(doc)
    seeds = sorted({r["seed"] for g in groups for r in g.get("runs", [])})
    replay = "policies" not in doc
    notes = []
    if doc.get("interrupted"):
        i = doc["interrupted"]
        notes.append(f"interrupted (Ctrl-C): {i['runs_done']} of {i['runs_total']} runs finished; these are theirs")
    items: list[tuple[str, Any]] = [("trace", trace_text(doc, seeds))]
    if replay:
        g = groups[0]
        pub = g.get("published") or {}
        items += [
            ("policy", g["label"]),
            ("unallocated GPU % @100% (mean ± SD)", _pm(g["mean"].get("100"), g["sd"].get("100"))),
            ("published @100%", _pm(pub["mean"]["100"], pub["sd"]["100"]) if pub else NO_PUBLISHED),
            ("unallocated GPU % @130%", _pm(g["mean"].get("130"), g["sd"].get("130"))),
            ("seconds per run", g.get("seconds_per_run")),
        ]
    sections = [c.kpis("summary", "Summary", items, notes=notes)]
    if not replay:
        sections.append(
            c.table(
                "policies",
                "Unallocated GPU % per policy (lower is better)",
                [
                    c.column("policy"),
                    c.column("@100% (mean ± SD)"),
                    c.column("published @100%"),
                    c.column("diff", fmt="num"),
                    c.column("@130% (mean ± SD)"),
                    c.column("published @130%"),
                    c.column("frag rate @80%", fmt="num"),
                    c.column("s/run", fmt="num"),
                ],
                [_summary_row(g) for g in groups],
            )
        )
    figures = [allocation_chart(doc, groups, extras), fragmentation_chart(doc, groups, extras)]
    figures += [unallocated_bars(groups, level, seeds) for level in ("100", "130")]
    if not replay:
        figures.append(
            c.bars(
                "Fragmentation rate at 80% arrived",
                "fragmentation rate (% of idle GPU)",
                [g["label"] for g in groups],
                [c.bar_group("packsched", [(g.get("frag_rate_pct_80") or {}).get("mean") for g in groups])],
                caption="mean over seeds",
                x_label="policy",
                color_by="category",
            )
        )
    sections.append(c.charts("charts", "Per policy" if not replay else "Curves", figures))
    sections.append(c.table("runs", "Runs (one per policy and seed)", RUN_COLUMNS, _run_rows(groups)))
    name = "compare" if not replay else "replay"
    return {"title": f"packsched {name}: {', '.join(g['label'] for g in groups)}", "sections": sections}


# -- the other documents -----------------------------------------------------------------------------------------


def explain_page(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> Page:
    items: list[tuple[str, Any]] = [
        ("pod", doc["pod"]),
        ("selected", doc.get("selected") or "none"),
        ("attempts", doc.get("attempts")),
        ("profile", doc.get("profile", "")),
    ]
    notes = [doc["reason"]] if doc.get("reason") else []
    weights: Mapping[str, int] = doc.get("weights", {})
    plugins = list(weights)
    cols = [c.column("node"), c.column("feasible"), c.column("reasons"), c.column("rejected by")]
    cols += [c.column(f"{p} (x{weights[p]})", fmt="num") for p in plugins] + [c.column("total", fmt="num")]
    rows = [
        [
            n["node"],
            "yes" if n["feasible"] else "no",
            ", ".join(n["reasons"]),
            n.get("rejected_by"),
            *[n["scores"].get(p) for p in plugins],
            n.get("total"),
        ]
        for n in doc.get("nodes", [])
    ]
    sections = [c.kpis("summary", "Explain", items, notes=notes), c.table("nodes", "Nodes", cols, rows)]
    scored = sorted((n for n in doc.get("nodes", []) if n.get("total") is not None), key=lambda n: -n["total"])[:30]
    if scored:
        sections.append(
            c.charts(
                "scores",
                "Scores",
                [
                    c.bars(
                        "Weighted score per plugin, best 30 nodes",
                        "weighted score (points: score x weight)",
                        [n["node"] for n in scored],
                        [c.bar_group(p, [n["weighted"].get(p) for n in scored]) for p in plugins],
                        caption="a bar per node, its plugins' weighted scores stacked: their sum is the node's total",
                        x_label="node",
                        stacked=True,
                        legend="plugin",
                    )
                ],
            )
        )
    return {"title": f"packsched explain {doc['pod']}", "sections": sections}


def quotas_page(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> Page:
    rows = []
    by_resource: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for q in doc["quotas"]:
        for r in q["used"]:
            mx = q["max"].get(r)
            rows.append(
                [
                    f"{q['namespace']}/{q['name']}",
                    r,
                    _quantity(r, q["min"].get(r, 0)),
                    _quantity(r, q["used"][r]),
                    "unbounded" if mx is None else _quantity(r, mx),
                    _quantity(r, q["borrowed"][r]) if r in q.get("borrowed", {}) else "-",
                    _quantity(r, q["unused_min"][r]) if r in q.get("unused_min", {}) else "-",
                    q.get("running"),
                    q.get("pending"),
                    q.get("preempted"),
                ]
            )
            by_resource[r].append(q)
    cols = [c.column(k) for k in ("quota", "resource", "min", "used", "max", "borrowed", "unused min")]
    cols += [c.column(k, fmt="num") for k in ("running", "pending", "preempted")]
    figures = []
    for r, qs in list(by_resource.items())[:12]:
        cats = [f"{q['namespace']}/{q['name']}" for q in qs]
        figures.append(
            c.bars(
                f"{r}: min / used / max",
                c.with_unit(r),
                cats,
                [
                    c.bar_group("min", [c.scaled(r, q["min"].get(r, 0)) for q in qs]),
                    c.bar_group("used", [c.scaled(r, q["used"].get(r, 0)) for q in qs]),
                    c.bar_group("max", [c.scaled(r, q["max"].get(r)) for q in qs], missing="unbounded"),
                ],
                x_label="quota",
                counts=c.unit(r)[1] == "",
            )
        )
    sections = [
        c.kpis("summary", "ElasticQuotas", [("quotas", len(doc["quotas"]))], notes=doc.get("warnings", [])),
        c.table("quotas-table", "min / used / max per quota and resource", cols, rows),
        c.charts("quota-charts", "Per resource", figures),
    ]
    return {"title": "packsched quotas", "sections": sections}


def demo_page(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> Page:
    configs = doc["configs"]
    keys = ["pods", "running", "pending", "gpu_allocated", "gpu_total", "gpu_allocation_pct", "fully_free_gpu_nodes"]
    rows = [[r["config"], *[r.get(k) for k in keys]] for r in configs]
    names = [r["config"] for r in configs]
    figures = [
        c.bars(
            "Pods",
            "pods (count)",
            names,
            [
                c.bar_group("running", [r.get("running") for r in configs]),
                c.bar_group("pending", [r.get("pending") for r in configs]),
            ],
            x_label="configuration",
            counts=True,
        ),
        c.bars(
            "GPUs allocated",
            "GPUs allocated (% of the cluster's)",
            names,
            [c.bar_group("allocated", [r.get("gpu_allocation_pct") for r in configs])],
            x_label="configuration",
        ),
    ]
    pending = [[r["config"], p["pod"], p["reason"]] for r in configs for p in r.get("pending_pods", [])]
    sections = [
        c.table(
            "configs",
            "Configurations side by side",
            [c.column("config")] + [c.column(k, fmt="num") for k in keys],
            rows,
        ),
        c.charts("demo-charts", "Side by side", figures),
        c.table("pending", "Pending pods", [c.column("config"), c.column("pod"), c.column("reason")], pending),
    ]
    return {"title": "packsched demo", "sections": sections}


def verify_page(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> Page:
    counts = doc.get("counts", {})
    record = doc.get("record", {})
    items: list[tuple[str, Any]] = [(k, v) for k, v in counts.items()]
    items += [("record", doc.get("file")), ("seed", record.get("seed")), ("kube version", record.get("kubeVersion"))]

    def rows(findings: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
        return [
            [
                f["line"],
                f["pod"],
                ", ".join(f.get("fields", [])),
                f["recorded"].get("outcome"),
                f["recorded"].get("node"),
                f["replayed"].get("outcome"),
                f["replayed"].get("node"),
                f["recorded"].get("message"),
            ]
            for f in findings
        ]

    cols = [
        c.column("line", fmt="num"),
        c.column("pod"),
        c.column("fields"),
        c.column("recorded"),
        c.column("recorded node"),
        c.column("replayed"),
        c.column("replayed node"),
        c.column("message"),
    ]
    sections = [
        c.kpis("summary", "Record", items, notes=doc.get("notes", [])),
        c.table("differences", "Differences", cols, rows(doc.get("differences", []))),
        c.table("ties", "Ties (another of the best-scored nodes)", cols, rows(doc.get("ties", []))),
    ]
    return {"title": "packsched verify-record", "sections": sections}


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _flat(value: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Dotted keys for the scalars of nested objects; a list of scalars joined; lists of objects left out."""
    out: list[tuple[str, Any]] = []
    for k, v in value.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out += _flat(v, f"{key}.")
        elif isinstance(v, list) and all(_scalar(x) for x in v):
            out.append((key, ", ".join("-" if x is None else str(x) for x in v)))
        elif _scalar(v):
            out.append((key, v))
    return out


def _object_lists(value: Mapping[str, Any], prefix: str = "", depth: int = 0) -> list[tuple[str, list[Any]]]:
    out: list[tuple[str, list[Any]]] = []
    for k, v in value.items():
        if isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            out.append((f"{prefix}{k}", v))
        elif isinstance(v, Mapping) and depth < 2:
            out += _object_lists(v, f"{prefix}{k}.", depth + 1)
    return out


# -- packsched tune ----------------------------------------------------------------------------------------------

TUNE_AXES = {  # the metric's axis title, with its unit; a count metric ticks whole numbers
    "unallocated-gpu": ("unallocated GPU at 100% arrived (%)", False),
    "pending-pods": ("pods left pending up to 100% arrived (count)", True),
    "free-nodes": ("nodes without any pod at 100% arrived (count)", True),
    # on a job workload (sim/jobtune.py)
    "job-wait-mean": ("mean job wait, never-started jobs to the horizon (s)", False),
    "job-wait-p50": ("median job wait, never-started jobs to the horizon (s)", False),
    "job-wait-p95": ("p95 job wait, never-started jobs to the horizon (s)", False),
    "jobs-never-started": ("jobs never started (count)", True),
    "gpu-hours-held-at-permit": ("GPU-hours held at Permit (GPU-h)", False),
    "gpu-hours-in-partial-gangs": ("GPU-hours in partial gangs (GPU-h)", False),
}


def _metric_axis(metric: Mapping[str, Any]) -> tuple[str, bool]:
    return TUNE_AXES.get(str(metric.get("name")), (str(metric.get("description", "value")), False))


def _seeds_range(seeds: Sequence[int]) -> str:
    """[42, 43, 44] -> ``42-44``; [1, 5, 6] -> ``1,5-6`` (as ``packsched tune`` prints them)."""
    parts: list[str] = []
    s = sorted(seeds)
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        parts.append(str(s[i]) if i == j else f"{s[i]}-{s[j]}")
        i = j + 1
    return ",".join(parts) or "none"


def _tune_context(doc: Mapping[str, Any]) -> str:
    study = doc.get("study", {})
    seeds = f"tuning seeds {_seeds_range(doc.get('seeds', []))}, TPE seed {study.get('sampler_seed')}"
    t = doc.get("trace")
    if t is None:  # a job workload
        w = doc.get("workload") or {}
        drawn = f", jobs drawn per seed ({w.get('generator')})" if w.get("seeds_draw_jobs") else ", fixed jobs"
        return f"job workload {w.get('path')}: {w.get('jobs')} jobs on {w.get('nodes')} nodes{drawn}, {seeds}"
    pods = str(t.get("pods", ""))
    workload = pods if pods.endswith(".csv") else f"openb_pod_list_{pods}"
    return f"trace {workload} on {t.get('nodes')} nodes ({t.get('data_dir')}), {seeds}"


def search_chart(doc: Mapping[str, Any], trials: Sequence[Mapping[str, Any]]) -> c.Chart:
    """Each finished trial's value (the mean over the tuning seeds) and the best so far (``search.png``)."""
    metric = doc.get("metric", {})
    axis, counts = _metric_axis(metric)
    done = [t for t in trials if t.get("value") is not None]
    better = "lower" if metric.get("direction") == "minimize" else "higher"
    xs = [t["trial"] for t in done]
    return c.line(
        f"The search: {metric.get('description', 'the metric')} per trial ({better} is better)",
        "trial (number)",
        axis,
        [
            c.series("trial: mean over the tuning seeds", xs, [t["value"] for t in done], points=True),
            c.series("best so far", xs, [t.get("best_so_far") for t in done]),
        ],
        x_domain=(min(xs, default=0) - 0.5, max(xs, default=0) + 0.5),
        caption=f"{_tune_context(doc)}\npoints: each finished trial's mean over the tuning seeds; line: the best "
        "so far",
        step=True,
        counts=counts,
        x_counts=True,
    )


# A job workload's held-out figures (packsched.sim.tune.JOB_FIGURES), with their column titles.
JOB_FIGURES = (
    ("never_started", "jobs never started"),
    ("wait_mean", "job wait mean (s)"),
    ("wait_p95", "job wait p95 (s)"),
    ("gpu_hours_held_at_permit", "GPU-h held at Permit"),
    ("gpu_hours_in_partial_gangs", "GPU-h in partial gangs"),
    ("permit_timeouts", "Permit timeouts"),
)


def _tuned_label(doc: Mapping[str, Any], label: str) -> str:
    best = doc.get("best") or {}
    return f"{label} (trial {best['trial']})" if label == "tuned" and best else label


def _holdout_chart(doc: Mapping[str, Any]) -> c.Chart:
    groups = doc.get("holdout", [])
    axis, counts = _metric_axis(doc.get("metric", {}))
    return c.bars(
        f"Held-out seeds {_seeds_range(doc.get('holdout_seeds', []))}: the best configuration and the baselines",
        axis,
        [_tuned_label(doc, g["label"]) for g in groups],
        [c.bar_group("mean over the held-out seeds", [g.get("mean") for g in groups], [g.get("sd") for g in groups])],
        caption=f"bars: mean over the held-out seeds; {WHISKERS}",
        x_label="configuration",
        color_by="category",
        counts=counts,
    )


def _trial_table(doc: Mapping[str, Any], trials: Sequence[Mapping[str, Any]]) -> c.Section:
    keys = list(dict.fromkeys(k for t in trials for k in t))
    fmt = {k: "num" for k in keys if all(isinstance(t.get(k), int | float | None) for t in trials)}
    fmt.pop("config", None)

    def cell(t: Mapping[str, Any], k: str) -> Any:
        value = t.get(k)
        return str(value).replace("\\", "/").rsplit("/", 1)[-1] if k == "config" and value else value

    return c.table(
        "trials",
        f"Trials ({len(trials)})",
        [c.column(k, k.replace("_", " "), fmt=fmt.get(k, "")) for k in keys],
        [[cell(t, k) for k in keys] for t in trials],
        caption="one row per trial (trials.csv): its state, value (the mean over the tuning seeds), the best so far, "
        "each seed's value, every parameter (empty: not used by the trial's strategy) and its configuration file "
        "(in the trials folder of --out-dir)",
    )


def tune_page(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> Page:
    """``packsched tune``: the search, the trials, the whole best configuration, and the held-out check."""
    metric, study, best = doc.get("metric", {}), doc.get("study", {}), doc.get("best")
    holdout = doc.get("holdout", [])
    tuned = next((g for g in holdout if g["label"] == "tuned"), None)
    items: list[tuple[str, Any]] = [
        ("metric", f"{metric.get('description')} ({metric.get('direction')})"),
        ("trace" if doc.get("trace") is not None else "job workload", _tune_context(doc)),
        ("search space", (doc.get("space") or {}).get("name") or (doc.get("space") or {}).get("file")),
        ("finished trials", f"{study.get('complete')} of {study.get('trials')} ({study.get('failed')} failed)"),
        ("best trial", "none" if best is None else best["trial"]),
        ("best value (tuning seeds)", None if best is None else best["value"]),
    ]
    if tuned is not None:
        held = f"{_pm(tuned.get('mean'), tuned.get('sd'))} (seeds {_seeds_range(doc.get('holdout_seeds', []))})"
        items.append(("best on the held-out seeds", held))
    items.append(("seconds", doc.get("seconds")))
    notes = []
    if doc.get("interrupted"):
        notes.append(
            f"interrupted (Ctrl-C) during the {doc['interrupted'].get('phase', 'search')}: these are the "
            "trials finished by then"
        )
    trials: Sequence[Mapping[str, Any]] = extras.get("trials") or []
    if not trials:
        notes.append(
            str(
                extras.get("trials_note")
                or "no trials.csv beside this document: the search plot and the "
                "trials table need it (packsched tune writes it in --out-dir)"
            )
        )
    sections = [c.kpis("summary", "Summary", items, notes=notes)]
    if best is not None:
        choice: Mapping[str, Any] = best.get("choice", {})
        sections.append(
            c.table(
                "best",
                f"The best configuration: trial {best['trial']}",
                [c.column("parameter"), c.column("value")],
                [[k, "- (not used)" if v is None else v] for k, v in choice.items()],
                caption=str(best.get("description", "")),
                filterable=False,
            )
        )
        if extras.get("best_config"):
            sections.append(
                c.code(
                    "best-config",
                    "best-config.yaml",
                    str(extras["best_config"]),
                    caption="the whole KubeSchedulerConfiguration, as packsched tune wrote it",
                )
            )
    figures = []
    if trials:
        figures.append(search_chart(doc, trials))
    if holdout:
        figures.append(_holdout_chart(doc))
    if figures:
        sections.append(c.charts("charts", "Search and held-out check", figures))
    if trials:
        sections.append(_trial_table(doc, trials))
    if holdout:
        seeds = [str(x) for x in doc.get("holdout_seeds", [])]
        # beside the metric: unallocated GPUs on a trace, the gang report's figures on a job workload
        shown = [(k, label) for k, label in JOB_FIGURES if doc.get("trace") is None]
        shown = shown or [("unallocated_gpu_pct", "unallocated GPU %")]

        def figure(g: Mapping[str, Any], key: str) -> str:
            group = g.get(key) if key == "unallocated_gpu_pct" else (g.get("jobs") or {}).get(key)
            return _pm((group or {}).get("mean"), (group or {}).get("sd"))

        sections.append(
            c.table(
                "holdout",
                "Held-out seeds: the best configuration and the baselines",
                [
                    c.column("configuration"),
                    c.column(f"{metric.get('name')} (mean ± SD)"),
                    *[c.column(f"seed {x}", fmt="num") for x in seeds],
                    *[c.column(f"{label} (mean ± SD)") for _, label in shown],
                    c.column("s/run", fmt="num"),
                    c.column("config"),
                ],
                [
                    [
                        _tuned_label(doc, g["label"]),
                        _pm(g.get("mean"), g.get("sd")),
                        *[g.get("values", {}).get(x) for x in seeds],
                        *[figure(g, key) for key, _ in shown],
                        g.get("seconds_per_run"),
                        g.get("config") or g.get("policy"),
                    ]
                    for g in holdout
                ],
            )
        )
    return {"title": f"packsched tune: {metric.get('description', '')}", "sections": sections}


def generic_page(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> Page:
    """A document of a command this report has no page of its own for: its scalars, and a table per list of
    objects (nested objects flattened to dotted columns)."""
    items = [(k, v) for k, v in _flat(doc) if k != "schema"]
    sections = [c.kpis("summary", "Summary", items[:30])]
    for i, (name, entries) in enumerate(_object_lists(doc)):
        flat = [dict(_flat(e)) for e in entries]
        keys = list(dict.fromkeys(k for row in flat for k in row))[:20]
        cols = [c.column(k, fmt="num" if all(isinstance(r.get(k), int | float) for r in flat) else "") for k in keys]
        sections.append(c.table(f"list-{i}", name, cols, [[r.get(k) for k in keys] for r in flat]))
    name = str(doc.get("schema", "")).removeprefix("packsched.").split("/")[0]
    return {"title": f"packsched {name}", "sections": sections}


BUILDERS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], Page]] = {
    "packsched.simulate/v1": simulate_page,
    "packsched.explain/v1": explain_page,
    "packsched.quotas/v1": quotas_page,
    "packsched.demo/v1": demo_page,
    "packsched.replay/v1": trace_page,
    "packsched.compare/v1": trace_page,
    "packsched.scenario-report/v1": scenario_page,
    "packsched.whatif-compare/v1": whatif_page,
    "packsched.verify-record/v1": verify_page,
    "packsched.tune/v1": tune_page,
}


# The JSON types of each page's top-level fields, as schemas/<command>.v1.schema.json gives them for its required
# fields (tests/sim/test_html_report.py keeps the two in step): a field of another type (`"pod": null`) is refused
# by name instead of showing as "None" on the page.
FIELD_TYPES: dict[str, dict[str, tuple[str, ...]]] = {
    "packsched.compare/v1": {"trace": ("object",), "seeds": ("array",), "policies": ("array",), "outputs": ("object",)},
    "packsched.demo/v1": {"configs": ("array",)},
    "packsched.explain/v1": {
        "pod": ("string",),
        "attempts": ("integer",),
        "selected": ("string", "null"),
        "reason": ("string", "null"),
        "nodes": ("array",),
    },
    "packsched.quotas/v1": {"quotas": ("array",), "warnings": ("array",)},
    "packsched.replay/v1": {
        "trace": ("object",),
        "policy": ("string", "null"),
        "config": ("string", "null"),
        "runs": ("array",),
        "mean": ("object",),
        "sd": ("object",),
        "seconds_per_run": ("number",),
        "outputs": ("object",),
    },
    "packsched.scenario-report/v1": {"scenario": ("string",), "steps": ("array",)},
    "packsched.simulate/v1": {
        "seed": ("integer",),
        "config": ("object",),
        "summary": ("object",),
        "placements": ("array",),
        "nodes": ("array",),
        "events": ("array",),
        "end_time": ("number",),
        "warnings": ("array",),
    },
    "packsched.tune/v1": {
        "trace": ("object", "null"),
        "space": ("object",),
        "metric": ("object",),
        "seeds": ("array",),
        "holdout_seeds": ("array",),
        "study": ("object",),
        "holdout": ("array",),
        "seconds": ("number",),
        "outputs": ("object",),
    },
    "packsched.verify-record/v1": {
        "file": ("string",),
        "record": ("object",),
        "counts": ("object",),
        "ties": ("array",),
        "differences": ("array",),
        "notes": ("array",),
    },
    "packsched.whatif-compare/v1": {
        "input": ("string",),
        "configs": ("object",),
        "results": ("object",),
        "steps": ("object",),
    },
}


def json_type(value: Any) -> str:
    """The JSON Schema type name of a parsed JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _malformed(schema: str, exc: Exception) -> ReportError:
    """A builder's error on a document that is not as its schema says, in words."""
    if isinstance(exc, KeyError):
        return ReportError(f"a {schema} document without the field {exc.args[0]!r} (or an entry without it)")
    if isinstance(exc, IndexError):
        return ReportError(f"a {schema} document with a list shorter than its other fields say")
    return ReportError(f"a {schema} document with a field of another type than its schema's ({exc})")


def build_page(doc: Any, extras: Mapping[str, Any] | None = None) -> Page:
    if not isinstance(doc, dict):
        raise ReportError("not a packsched JSON document (expected an object with a `schema` field)")
    schema = doc.get("schema")
    builder = BUILDERS.get(schema) if isinstance(schema, str) else None
    if builder is None and isinstance(schema, str) and re.fullmatch(r"packsched\.[a-z-]+/v\d+", schema):
        builder = generic_page  # a command newer than its page
    if builder is None:
        raise ReportError(
            f"unknown schema {schema!r}: expected packsched.<command>/v<N> (the -o json output of a packsched command)"
        )
    for name, types in FIELD_TYPES.get(str(schema), {}).items():
        found = json_type(doc[name]) if name in doc else None
        if found is not None and found not in types and not (found == "integer" and "number" in types):
            raise ReportError(f"{name}: must be {' or '.join(types)}, got {found} (in a {schema} document)")
    try:
        page = builder(doc, extras or {})
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise _malformed(str(schema), exc) from None
    page["schema"] = schema
    return page
