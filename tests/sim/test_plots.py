"""The replay plots say what they show (issue 13): titles with the trace and the seeds, what the band and whiskers
are; published curves over ours; no published bar (nor legend entry) where there is no published figure; the
allocation axis not spent on the diagonal every policy shares."""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from packsched.sim.plots import comparison_figure, curves_figure, seed_text, trace_label, zoom_start
from packsched.sim.replay import RunResult


def run(label: str, seed: int, cap: float) -> RunResult:
    alloc: list[float | None] = [float(min(p, cap - seed % 2)) for p in range(131)]
    frag: list[float | None] = [float(p) / 2 for p in range(131)]
    return RunResult(label, seed, 100, 80, 20, 90, 10, 1.0, {"gpu_alloc_pct": alloc, "frag_rate_pct": frag})


GROUPS = {"FGD": [run("FGD", s, 96) for s in (42, 43)], "BestFit": [run("BestFit", s, 93) for s in (42, 43)]}


def summary(mean: float, published: dict[str, Any] | None) -> dict[str, Any]:
    return {"mean": {"100": mean, "130": mean}, "sd": {"100": 0.3, "130": 0.3}, "published": published}


def texts(fig: Figure) -> str:
    return "\n".join([fig.get_suptitle(), *(t.get_text() for t in fig.texts)])


def legend(ax: Any) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_seed_and_trace_labels() -> None:
    assert seed_text([44, 42, 43]) == "3 seeds (42-44)"
    assert seed_text([1, 5]) == "2 seeds (1, 5)" and seed_text([7]) == "1 seed (7)"
    assert trace_label({"trace": {"pods": "default", "nodes": "gpu_node"}}) == "openb_pod_list_default on gpu_node"
    assert trace_label({"trace": {"pods": "x/my.csv", "nodes": "y/n.csv"}}) == "my on n"


def test_allocation_plot_titles_zoom_and_published_curve_on_top() -> None:
    published = {"FGD": [float(min(p, 95)) for p in range(131)]}
    fig = curves_figure(GROUPS, "gpu_alloc_pct", published, "openb_pod_list_default on gpu_node")
    try:
        words = texts(fig)
        assert "GPU allocation" in fig.get_suptitle()
        assert "openb_pod_list_default on gpu_node, 2 seeds (42, 43)" in words
        assert "interquartile range" in words and "dashed: the published mean" in words
        ax = fig.axes[0]
        start = ax.get_xlim()[0]
        assert start == 80 and f"below {start:.0f}% arrived" in words  # the curves leave the diagonal at 91
        lo, hi = ax.get_ylim()
        assert 75 < lo <= 80 and hi < 100  # the data's range, not the diagonal's (up to 130)
        lines = {line.get_label(): line for line in ax.get_lines()}
        pub = lines["FGD, published (Weng et al., ATC '23) mean"]
        assert pub.get_zorder() > max(lines["FGD (n=2)"].get_zorder(), lines["BestFit (n=2)"].get_zorder())
    finally:
        plt.close(fig)


def test_zoom_start() -> None:
    import numpy as np

    diagonal = np.arange(131, dtype=float)
    assert zoom_start([diagonal]) == 80  # never leaves it: the last 50 points
    assert zoom_start([np.minimum(diagonal, 40.0)]) == 30
    assert zoom_start([np.minimum(diagonal, 96.0)]) == 80


@pytest.mark.parametrize("with_published", [True, False])
def test_comparison_bars_only_where_published(with_published: bool) -> None:
    pub = {"seeds": 10, "mean": {"100": 4.77, "130": 4.61}, "sd": {"100": 0.1, "130": 0.08}}
    summaries = {"FGD": summary(4.5, pub if with_published else None), "BestFit": summary(7.0, None)}
    fig = comparison_figure(GROUPS, summaries, "openb_pod_list_default on gpu_node")
    try:
        bars_ax = fig.axes[1]
        containers = bars_ax.containers
        bars = [c for c in containers if hasattr(c, "patches")]
        heights = [[p.get_height() for p in c.patches] for c in bars]
        names = legend(bars_ax)
        notes = [t.get_text().strip() for t in bars_ax.texts]
        if with_published:
            assert heights == [[4.5, 7.0], [4.77]]  # no zero bar for BestFit
            assert "published (Weng et al., ATC '23)" in names and notes == ["no published figure"]
            assert "the paper's 10 seeds" in texts(fig)
        else:
            assert heights == [[4.5, 7.0]] and notes == []
            assert not any("published" in n for n in names)
        assert "± population SD" in texts(fig) and "2 seeds (42, 43)" in texts(fig)
        assert "lower is better" in bars_ax.get_title()
    finally:
        plt.close(fig)
