"""The replay and compare PNGs are the HTML report's own charts (issue 21), rendered by vl-convert: they say what
they show (issue 13: titles with the trace and the seeds, what the band and whiskers are); packsched's median is
drawn over the dashed published mean; no published bar (nor legend entry) where there is no published figure; the
allocation axis is not spent on the diagonal every policy shares; the same runs give the same PNG, byte for byte."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from packsched.sim import chartspec
from packsched.sim.htmlreport import page_palette
from packsched.sim.htmlreport.history import curve_extras
from packsched.sim.htmlreport.page import seed_text, zoom_start
from packsched.sim.plots import trace_charts, write_trace_pngs
from packsched.sim.replay import RunResult

TRACE = {"data_dir": "data", "pods": "default", "nodes": "gpu_node", "tune": 1.3, "tie_break": "name"}
PUBLISHED = "published (Weng et al., ATC '23)"


def run(label: str, seed: int, cap: float) -> RunResult:
    alloc: list[float | None] = [float(min(p, cap - seed % 2)) for p in range(131)]
    frag: list[float | None] = [float(p) / 2 for p in range(131)]
    return RunResult(label, seed, 100, 80, 20, 90, 10, 1.0, {"gpu_alloc_pct": alloc, "frag_rate_pct": frag})


GROUPS = {"FGD": [run("FGD", s, 96) for s in (42, 43)], "BestFit": [run("BestFit", s, 93) for s in (42, 43)]}
PUB = {"seeds": 10, "mean": {"100": 4.77, "130": 4.61}, "sd": {"100": 0.1, "130": 0.08}}
PUB_CURVE = [float(min(p, 95)) for p in range(131)]


def summary(label: str, mean: float, published: dict[str, Any] | None) -> dict[str, Any]:
    runs = [{"seed": r.seed, "unallocated_gpu_pct": {"100": mean, "130": mean}} for r in GROUPS[label]]
    return {
        "label": label,
        "runs": runs,
        "mean": {"100": mean, "130": mean},
        "sd": {"100": 0.3, "130": 0.3},
        "published": published,
    }


def compare_doc(with_published: bool) -> dict[str, Any]:
    groups = [summary("FGD", 4.5, PUB if with_published else None), summary("BestFit", 7.0, None)]
    return {"schema": "packsched.compare/v1", "trace": TRACE, "seeds": [42, 43], "policies": groups}


def published(with_published: bool) -> dict[str, Any]:
    return {"FGD": {**PUB, "gpu_alloc_pct": PUB_CURVE} if with_published else None, "BestFit": None}


def caption(spec: dict[str, Any]) -> str:
    return "\n".join(spec["title"].get("subtitle", []))


def test_seed_text_and_zoom_start() -> None:
    assert seed_text([44, 42, 43]) == "3 seeds (42-44)"
    assert seed_text([1, 5]) == "2 seeds (1, 5)" and seed_text([7]) == "1 seed (7)"
    diagonal = [float(x) for x in range(131)]
    assert zoom_start({"a": diagonal}) == 80  # never leaves it: the last 50 points
    assert zoom_start({"a": [min(x, 40.0) for x in diagonal]}) == 30
    assert zoom_start({"a": [min(x, 96.0) for x in diagonal]}) == 80


def test_allocation_png_titles_zoom_and_our_median_over_the_published_mean() -> None:
    charts = trace_charts(compare_doc(True), curve_extras(GROUPS, published(True)))
    spec = chartspec.spec(charts["allocation.png"], page_palette(), validate=True)
    words = caption(spec)
    assert spec["title"]["text"] == "GPU allocation vs arrived workload"
    assert "openb_pod_list_default on gpu_node nodes, 2 seeds (42, 43)" in words
    assert "interquartile range" in words and "dashed: the published mean" in words
    assert "below 80% arrived" in words  # the curves leave the diagonal at 91
    layers = {layer["name"]: layer for layer in spec["layer"]}
    x = layers["solid"]["encoding"]["x"]["scale"]["domain"]
    lo, hi = layers["solid"]["encoding"]["y"]["scale"]["domain"]
    assert x == [80.0, 130.0] and 75 < lo <= 80 and hi < 100  # the data's range, not the diagonal's (up to 130)
    names = list(layers)
    assert names.index("dashed") < names.index("solid")  # drawn first: under our median
    lines = {r["label"]: r for r in next(iter(spec["datasets"].values()))}
    assert lines["FGD, published (Weng et al., ATC '23) mean"]["dash"]
    assert lines["FGD, published (Weng et al., ATC '23) mean"]["key"] == lines["FGD (n=2)"]["key"] == "FGD"


@pytest.mark.parametrize("with_published", [True, False])
def test_comparison_bars_only_where_published(with_published: bool) -> None:
    charts = trace_charts(compare_doc(with_published), curve_extras(GROUPS, published(with_published)))
    spec = chartspec.spec(charts["comparison.png"], page_palette(), validate=True)
    left, right = spec["hconcat"]
    assert left["title"]["text"] == "GPU allocation vs arrived workload"
    assert "lower is better" in right["title"]["text"]
    rows = [r for data in spec["datasets"].values() for r in data if "c" in r]  # the bars' data
    drawn = {(r["c"], r["g"]): r["v"] for r in rows if r["v"] is not None}
    notes = [r["note"] for r in rows if r["note"]]
    words = caption(spec)
    if with_published:
        assert drawn == {
            ("FGD", "packsched, 2 seeds (42, 43)"): 4.5,
            ("BestFit", "packsched, 2 seeds (42, 43)"): 7.0,
            ("FGD", PUBLISHED): 4.77,
        }  # no zero bar for BestFit
        assert notes == ["no published figure"] and "the paper's 10 seeds" in words
    else:
        assert len(drawn) == 2 and notes == [] and not any(r["g"] == PUBLISHED for r in rows)
    assert "± population SD" in words and "2 seeds (42, 43)" in words
    # a policy has the same colour in both panels
    colors = [layer["encoding"]["color"]["scale"] for layer in (left["layer"][-1], right["layer"][0])]
    assert all(dict(zip(s["domain"], s["range"], strict=True))["FGD"] == "#0072b2" for s in colors)


def test_pngs_are_written_and_the_same_runs_give_the_same_bytes(tmp_path: Path) -> None:
    doc = compare_doc(True)
    first = write_trace_pngs(tmp_path, doc, GROUPS, published(True))
    assert sorted(first) == ["allocation_png", "comparison_png", "fragmentation_png"]
    data = {name: Path(path).read_bytes() for name, path in first.items()}
    assert all(b.startswith(b"\x89PNG") and len(b) > 20_000 for b in data.values())
    again = tmp_path / "again"
    again.mkdir()
    second = write_trace_pngs(again, doc, GROUPS, published(True))
    assert {name: Path(path).read_bytes() for name, path in second.items()} == data
    replay = {**doc, "schema": "packsched.replay/v1", "policy": "FGD"}
    del replay["policies"]
    replay.update(summary("FGD", 4.5, PUB))
    assert sorted(write_trace_pngs(again, replay, {"FGD": GROUPS["FGD"]}, published(True))) == [
        "allocation_png",
        "fragmentation_png",
    ]
