"""The same cluster and pods under several configurations, side by side (the ``demo`` command)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from packsched.api.manifests import load_manifests
from packsched.config.loader import load_config
from packsched.framework.runtime import PluginFactory
from packsched.sim.engine import PENDING, RUNNING, SimResult, run_simulation

GPU = "nvidia.com/gpu"
DEMO_SCHEMA = "packsched.demo/v1"


@dataclass
class ComparisonRow:
    name: str
    pods: int
    running: int
    pending: int
    gpu_allocated: int
    gpu_total: int
    gpu_nodes: int
    free_gpu_nodes: int  # GPU nodes with every GPU free
    pending_by_gpus: dict[int, int] = field(default_factory=dict)
    pending_pods: list[tuple[str, str]] = field(default_factory=list)

    @property
    def gpu_allocation_pct(self) -> float:
        return 100.0 * self.gpu_allocated / self.gpu_total if self.gpu_total else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "config": self.name,
            "pods": self.pods,
            "running": self.running,
            "pending": self.pending,
            "gpu_allocated": self.gpu_allocated,
            "gpu_total": self.gpu_total,
            "gpu_allocation_pct": round(self.gpu_allocation_pct, 2),
            "gpu_nodes": self.gpu_nodes,
            "fully_free_gpu_nodes": self.free_gpu_nodes,
            "pending_by_gpus": {str(k): v for k, v in sorted(self.pending_by_gpus.items())},
            "pending_pods": [{"pod": p, "reason": r} for p, r in self.pending_pods],
        }


def summarize(name: str, result: SimResult) -> ComparisonRow:
    snap = result.snapshot
    row = snap.row.get(GPU)
    if row is None:
        alloc = used = np.zeros(snap.n, dtype=np.int64)
    else:
        alloc, used = snap.alloc[row], snap.requested[row]
    gpu_nodes = alloc > 0
    pending = [r for r in result.records if r.phase == PENDING]
    by_gpus = Counter(r.info.requests.get(GPU, 0) for r in pending)
    return ComparisonRow(
        name=name,
        pods=len(result.records),
        running=sum(1 for r in result.records if r.phase == RUNNING),
        pending=len(pending),
        gpu_allocated=int(used.sum()),
        gpu_total=int(alloc.sum()),
        gpu_nodes=int(gpu_nodes.sum()),
        free_gpu_nodes=int((gpu_nodes & (used == 0)).sum()),
        pending_by_gpus=dict(by_gpus),
        pending_pods=[(r.pod.key, r.reason or "") for r in pending],
    )


def compare_configs(
    manifests: Sequence[str],
    configs: Sequence[str],
    known_plugins: Collection[str],
    registry: Mapping[str, PluginFactory],
    seed: int = 0,
) -> list[ComparisonRow]:
    rows: list[ComparisonRow] = []
    for path in configs:
        cfg = load_config(path, known_plugins)
        cluster = load_manifests(manifests)  # fresh objects per run: a run changes pods (nominations)
        rows.append(summarize(Path(path).stem.removeprefix("config-"), run_simulation(cluster, cfg, registry, seed)))
    return rows


def print_comparison(console: Console, rows: Sequence[ComparisonRow]) -> None:
    table = Table(title="Same cluster, same pods, different scoring")
    table.add_column("config")
    table.add_column("running", justify="right")
    table.add_column("pending", justify="right")
    table.add_column("pending by GPUs asked", justify="left")
    table.add_column("GPUs allocated", justify="right")
    table.add_column("fully free GPU nodes", justify="right")
    for r in rows:
        by = ", ".join(f"{k}-GPU: {v}" if k else f"CPU-only: {v}" for k, v in sorted(r.pending_by_gpus.items()))
        table.add_row(
            r.name,
            str(r.running),
            str(r.pending),
            by or "-",
            f"{r.gpu_allocated}/{r.gpu_total} ({r.gpu_allocation_pct:.1f}%)",
            f"{r.free_gpu_nodes}/{r.gpu_nodes}",
        )
    console.print(table)
    for r in rows:
        if r.pending_pods:
            console.print(f"[bold]{r.name}[/bold]: pending pods")
            for pod, reason in r.pending_pods[:10]:
                console.print(f"  {pod}: {reason}", highlight=False, soft_wrap=True)
            if len(r.pending_pods) > 10:
                console.print(f"  ... {len(r.pending_pods) - 10} more")
