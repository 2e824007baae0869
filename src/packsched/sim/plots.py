"""PNG plots of replays (matplotlib, Agg backend: no display needed): GPU allocation and fragmentation rate
against arrived workload (median over seeds with the interquartile band), and the comparison bar chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from packsched.sim.replay import RunResult

TITLES = {
    "gpu_alloc_pct": "GPU allocation ratio (%)",
    "frag_rate_pct": "Fragmentation rate (% of idle GPU)",
    "frag_total_pct": "Fragment / total GPU (%)",
}


def _band(runs: Sequence[RunResult], curve: str) -> tuple[np.ndarray[Any, Any], ...]:
    data = np.array([[np.nan if v is None else v for v in r.curves[curve]] for r in runs], dtype=float)
    x = np.arange(data.shape[1])
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=RuntimeWarning)
            med = np.nanmedian(data, axis=0)
            lo = np.nanpercentile(data, 25, axis=0)
            hi = np.nanpercentile(data, 75, axis=0)
    return x, med, lo, hi


def plot_curves(
    groups: Mapping[str, Sequence[RunResult]],
    curve: str,
    path: Path,
    published: Mapping[str, Sequence[float]] | None = None,
) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, runs in groups.items():
        x, med, lo, hi = _band(runs, curve)
        line = ax.plot(x, med, label=f"{label} (n={len(runs)})")[0]
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
        if published and label in published:
            ax.plot(
                np.arange(len(published[label])),
                published[label],
                linestyle="--",
                color=line.get_color(),
                linewidth=1,
                label=f"{label}, published mean",
            )
    if curve == "gpu_alloc_pct":
        ax.plot([0, 130], [0, 130], color="grey", linewidth=0.8, linestyle=":", label="arrived")
    ax.set_xlabel("Arrived workload (% of cluster GPUs)")
    ax.set_ylabel(TITLES.get(curve, curve))
    ax.set_xlim(0, 130)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_comparison(
    groups: Mapping[str, Sequence[RunResult]], summaries: Mapping[str, Mapping[str, Any]], path: Path
) -> Path:
    """Left: GPU allocation vs arrived workload per policy; right: unallocated GPU % at 100% arrived,
    ours (mean +- SD) beside the published figure where there is one."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for label, runs in groups.items():
        x, med, lo, hi = _band(runs, "gpu_alloc_pct")
        line = ax1.plot(x, med, label=label)[0]
        ax1.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
    ax1.set_xlim(60, 130)
    ax1.set_ylim(55, 100)
    ax1.set_xlabel("Arrived workload (% of cluster GPUs)")
    ax1.set_ylabel("GPU allocation ratio (%)")
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    labels = list(summaries)
    ours = [summaries[k]["mean"]["100"] or 0.0 for k in labels]
    ours_sd = [summaries[k]["sd"]["100"] or 0.0 for k in labels]
    pub = [(summaries[k].get("published") or {}).get("mean", {}).get("100") for k in labels]
    pub_sd = [(summaries[k].get("published") or {}).get("sd", {}).get("100") for k in labels]
    xs = np.arange(len(labels))
    ax2.bar(xs - 0.2, ours, 0.4, yerr=ours_sd, capsize=3, label="packsched")
    ax2.bar(
        xs + 0.2,
        [p or 0.0 for p in pub],
        0.4,
        yerr=[s or 0.0 for s in pub_sd],
        capsize=3,
        label="published (Weng et al., ATC '23)",
    )
    ax2.set_xticks(xs, labels, rotation=30, ha="right", fontsize=8)
    ax2.set_ylabel("Unallocated GPU % at 100% arrived")
    ax2.grid(axis="y", alpha=0.3)
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
