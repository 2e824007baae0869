"""PNG plots of replays (matplotlib, Agg backend: no display needed): GPU allocation and fragmentation rate
against arrived workload (median over seeds with the interquartile band), and the comparison bar chart.

Every plot says what it shows: the trace and the seeds in its title, what the band and the whiskers are beneath.
Published curves are drawn over ours (dashed, with a white outline); a policy without a published figure gets no
published bar (a note instead), and the legend names "published" only when some figure is there. The allocation
axis starts where some policy leaves the diagonal (below it every policy allocates all that arrived)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.patheffects as path_effects
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from packsched.sim.replay import RunResult

TITLES = {
    "gpu_alloc_pct": "GPU allocation ratio (%)",
    "frag_rate_pct": "Fragmentation rate (% of idle GPU)",
    "frag_total_pct": "Fragment / total GPU (%)",
}
ARRIVED = "Arrived workload (% of cluster GPU capacity)"
PUBLISHED = "published (Weng et al., ATC '23)"
BAND = "line: median over seeds, band: interquartile range"
MAX_ARRIVED = 130


def _band(runs: Sequence[RunResult], curve: str) -> tuple[np.ndarray[Any, Any], ...]:
    data = np.array([[np.nan if v is None else v for v in r.curves[curve]] for r in runs], dtype=float)
    x = np.arange(data.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)  # a level no run reached: all NaN
        med = np.nanmedian(data, axis=0)
        lo = np.nanpercentile(data, 25, axis=0)
        hi = np.nanpercentile(data, 75, axis=0)
    return x, med, lo, hi


def seed_text(seeds: Sequence[int]) -> str:
    """``10 seeds (42-51)``, ``2 seeds (1, 5)``, ``1 seed (42)``."""
    s = sorted(set(seeds))
    if not s:
        return "no seeds"
    if len(s) > 2 and s == list(range(s[0], s[-1] + 1)):
        return f"{len(s)} seeds ({s[0]}-{s[-1]})"
    return f"{len(s)} seed{'s' if len(s) > 1 else ''} ({', '.join(map(str, s))})"


def trace_label(summary: Mapping[str, Any]) -> str:
    """The trace a replay or compare document ran on: ``openb_pod_list_default on gpu_node``."""
    t = summary.get("trace") or {}
    pods = str(t.get("pods", ""))
    workload = Path(pods).stem if pods.endswith(".csv") else f"openb_pod_list_{pods}"
    nodes = str(t.get("nodes", ""))
    return f"{workload} on {Path(nodes).stem if nodes.endswith('.csv') else nodes}"


def _context(groups: Mapping[str, Sequence[RunResult]], trace: str) -> str:
    seeds = seed_text([r.seed for runs in groups.values() for r in runs])
    return f"{trace}, {seeds}" if trace else seeds


def zoom_start(medians: Sequence[np.ndarray[Any, Any]]) -> int:
    """The arrived level from which some median allocation is 1 point or more below the diagonal (allocated =
    arrived), less 10, rounded down to 10 (at most 80): what the allocation axis needs to show."""
    first = MAX_ARRIVED
    for med in medians:
        gap = np.arange(len(med)) - med
        below = np.flatnonzero(np.nan_to_num(gap, nan=0.0) >= 1.0)
        if len(below):
            first = min(first, int(below[0]))
    return max(0, min(80, (first - 10) // 10 * 10))


def _fit_y(ax: Axes, arrays: Sequence[np.ndarray[Any, Any]], start: int) -> None:
    """The y range of the data from ``start`` on (the diagonal does not stretch it)."""
    visible = [a[start : MAX_ARRIVED + 1] for a in arrays if len(a) > start]
    values = np.concatenate(visible) if visible else np.array([])
    values = values[np.isfinite(values)]
    if len(values):
        lo, hi = float(values.min()), float(values.max())
        pad = max(1.0, (hi - lo) * 0.08)
        ax.set_ylim(lo - pad, hi + pad)


def _draw_curves(
    ax: Axes,
    groups: Mapping[str, Sequence[RunResult]],
    curve: str,
    published: Mapping[str, Sequence[float]] | None = None,
) -> int:
    """Ours (median and band) first, the published means over them; answers where the x axis starts."""
    medians: list[np.ndarray[Any, Any]] = []
    shown: list[np.ndarray[Any, Any]] = []
    colors: dict[str, Any] = {}
    for label, runs in groups.items():
        x, med, lo, hi = _band(runs, curve)
        line = ax.plot(x, med, label=f"{label} (n={len(runs)})", linewidth=1.4, zorder=2)[0]
        colors[label] = line.get_color()
        ax.fill_between(x, lo, hi, color=colors[label], alpha=0.15, linewidth=0, zorder=1)
        medians.append(med)
        shown += [med, lo, hi]
    for label, ys in (published or {}).items():
        if label not in colors:
            continue
        pub = np.asarray(ys, dtype=float)
        ax.plot(
            np.arange(len(pub)),
            pub,
            linestyle=(0, (5, 3)),
            linewidth=1.8,
            color=colors[label],
            label=f"{label}, {PUBLISHED} mean",
            zorder=4,
            path_effects=[path_effects.withStroke(linewidth=3.6, foreground="white")],
        )
        shown.append(pub)
    start = zoom_start(medians) if curve == "gpu_alloc_pct" else 0
    if curve == "gpu_alloc_pct":
        ax.plot(
            [0, MAX_ARRIVED], [0, MAX_ARRIVED], color="grey", linewidth=0.8, linestyle=":", label="arrived", zorder=0
        )
        _fit_y(ax, shown, start)
    ax.set_xlim(start, MAX_ARRIVED)
    ax.set_xlabel(ARRIVED)
    ax.set_ylabel(TITLES.get(curve, curve))
    ax.grid(alpha=0.3)
    return start


def _titles(fig: Figure, title: str, context: str, note: str) -> None:
    fig.suptitle(title, fontsize=11, fontweight="bold", y=0.985)
    fig.text(0.5, 0.925, f"{context}\n{note}", ha="center", va="top", fontsize=8, color="#444444")


def curves_figure(
    groups: Mapping[str, Sequence[RunResult]],
    curve: str,
    published: Mapping[str, Sequence[float]] | None = None,
    trace: str = "",
) -> Figure:
    fig, ax = plt.subplots(figsize=(7, 5))
    start = _draw_curves(ax, groups, curve, published)
    note = BAND
    if published and any(k in groups for k in published):
        note += "; dashed: the published mean"
    if start > 0:
        note += f"\nbelow {start}% arrived every policy allocated all that arrived (the diagonal): not shown"
    _titles(fig, f"{TITLES.get(curve, curve)} vs arrived workload", _context(groups, trace), note)
    ax.legend(fontsize=7)
    fig.tight_layout(rect=(0, 0, 1, 0.86))
    return fig


def plot_curves(
    groups: Mapping[str, Sequence[RunResult]],
    curve: str,
    path: Path,
    published: Mapping[str, Sequence[float]] | None = None,
    trace: str = "",
) -> Path:
    fig = curves_figure(groups, curve, published, trace)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _bars(ax: Axes, summaries: Mapping[str, Mapping[str, Any]], n_seeds: int) -> None:
    labels = list(summaries)
    ours = [summaries[k]["mean"]["100"] for k in labels]
    ours_sd = [summaries[k]["sd"]["100"] or 0.0 for k in labels]
    pubs: list[Mapping[str, Any]] = [summaries[k].get("published") or {} for k in labels]
    xs = np.arange(len(labels), dtype=float)
    any_pub = any(pubs)
    width = 0.4 if any_pub else 0.6
    x_ours = xs - 0.2 if any_pub else xs
    heights = [np.nan if v is None else v for v in ours]
    ax.bar(x_ours, heights, width, yerr=ours_sd, capsize=3, label=f"packsched, {n_seeds} seed(s)")
    if any_pub:
        have = [i for i, p in enumerate(pubs) if p]
        ax.bar(
            xs[have] + 0.2,
            [pubs[i]["mean"]["100"] for i in have],
            width,
            yerr=[pubs[i]["sd"]["100"] for i in have],
            capsize=3,
            label=PUBLISHED,
        )
        for i, p in enumerate(pubs):
            if not p:
                ax.text(
                    xs[i] + 0.2,
                    0,
                    " no published figure",
                    rotation=90,
                    ha="center",
                    va="bottom",
                    fontsize=7,
                    color="#666666",
                )
    ax.set_xticks(xs, labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("Unallocated GPU % at 100% arrived")
    ax.set_title("Unallocated GPU % at 100% arrived (lower is better)", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7)


def comparison_figure(
    groups: Mapping[str, Sequence[RunResult]], summaries: Mapping[str, Mapping[str, Any]], trace: str = ""
) -> Figure:
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5))
    start = _draw_curves(ax1, groups, "gpu_alloc_pct")
    ax1.set_title("GPU allocation vs arrived workload", fontsize=9)
    ax1.legend(fontsize=7)
    seeds = {r.seed for runs in groups.values() for r in runs}
    _bars(ax2, summaries, len(seeds))
    pub_seeds = sorted({int((s.get("published") or {}).get("seeds") or 0) for s in summaries.values()} - {0})
    note = f"left: {BAND}"
    if start > 0:
        note += f" (below {start}% arrived, not shown, every policy allocated all that arrived)"
    note += "\nright: bars are means, whiskers ± population SD over seeds"
    if pub_seeds:
        note += f" (the published ones over the paper's {', '.join(map(str, pub_seeds))} seeds)"
    _titles(fig, "Policies compared", _context(groups, trace), note)
    fig.tight_layout(rect=(0, 0, 1, 0.86))
    return fig


def plot_comparison(
    groups: Mapping[str, Sequence[RunResult]],
    summaries: Mapping[str, Mapping[str, Any]],
    path: Path,
    trace: str = "",
) -> Path:
    """Left: GPU allocation vs arrived workload per policy; right: unallocated GPU % at 100% arrived, ours (mean
    ± SD) beside the published figure where there is one."""
    fig = comparison_figure(groups, summaries, trace)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
