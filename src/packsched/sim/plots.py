"""The PNGs of ``replay --out-dir`` and ``compare --out-dir``: the HTML report's own charts of the run
(:mod:`packsched.sim.htmlreport.page`), rendered by vl-convert (:mod:`packsched.sim.chartspec`), so that a PNG and
the page never disagree: GPU allocation and fragmentation rate against arrived workload (median over seeds with the
interquartile band, the published mean dashed under ours), and for a comparison the allocation curves beside the
bars at 100% arrived (ours, the published figure beside it where there is one)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from packsched.sim import chartspec
from packsched.sim.htmlreport import charts as c
from packsched.sim.htmlreport import page_palette
from packsched.sim.htmlreport.history import curve_extras
from packsched.sim.htmlreport.page import (
    allocation_chart,
    fragmentation_chart,
    trace_groups,
    trace_text,
    unallocated_bars,
)
from packsched.sim.replay import RunResult


def trace_charts(doc: Mapping[str, Any], extras: Mapping[str, Any]) -> dict[str, c.Chart]:
    """The charts of a ``replay`` or ``compare`` document (and the curves of its runs: ``extras``), by file."""
    groups = trace_groups(doc)
    seeds = sorted({r["seed"] for g in groups for r in g.get("runs", [])})
    out = {
        "allocation.png": allocation_chart(doc, groups, extras),
        "fragmentation.png": fragmentation_chart(doc, groups, extras),
    }
    if "policies" in doc and len(groups) > 1:
        alloc, bars = out["allocation.png"], unallocated_bars(groups, "100", seeds)
        notes = alloc["caption"].split("\n")[1:]  # the first line: the trace, said once for both
        caption = "\n".join([trace_text(doc, seeds), "left: " + "; ".join(notes), "right: " + bars["caption"]])
        panels = [{**alloc, "caption": ""}, {**bars, "caption": ""}]
        out["comparison.png"] = c.concat("Policies compared", panels, caption=caption)
    return out


def write_trace_pngs(
    out_dir: Path,
    doc: Mapping[str, Any],
    groups: Mapping[str, Sequence[RunResult]],
    published: Mapping[str, Mapping[str, Any] | None],
) -> dict[str, str]:
    """allocation.png, fragmentation.png and (several policies) comparison.png in ``out_dir``: the paths, by
    the output's name in the document (``allocation_png``, ...)."""
    files = {}
    for name, chart in trace_charts(doc, curve_extras(groups, published)).items():
        path = chartspec.write_png(chart, out_dir / name, page_palette())
        files[name.replace(".", "_")] = str(path)
    return files
