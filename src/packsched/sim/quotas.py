"""``packsched quotas``: per ElasticQuota, min / used / max per resource after a simulation, what the quota
borrows beyond its min, what of its min it leaves to others, and what could be reclaimed from it."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from packsched.api.manifests import Cluster
from packsched.api.quantity import MAX_INT64, format_quantity
from packsched.api.quota import first_per_namespace, max_from_spec, min_from_spec, quota_used, status_used
from packsched.sim.engine import PENDING, PREEMPTED, RUNNING, SimResult

QUOTAS_SCHEMA = "packsched.quotas/v1"


def _fmt(name: str, amount: int) -> str:
    return "unbounded" if amount >= MAX_INT64 else format_quantity(name, amount)


def quota_rows(cluster: Cluster, result: SimResult) -> list[dict[str, Any]]:
    """One entry per namespace's (first) ElasticQuota, with amounts in the scheduler's units."""
    running = [r.pod for r in result.records if r.phase == RUNNING]
    out: list[dict[str, Any]] = []
    for q in first_per_namespace(cluster.elastic_quotas):
        used = quota_used(q.namespace, running)
        lo, hi = min_from_spec(q.min), max_from_spec(q.max)
        names = sorted(n for n in set(lo) | set(hi) | set(used) if lo.get(n) or hi.get(n) or used.get(n))
        borrowed = {n: used.get(n, 0) - lo.get(n, 0) for n in names if used.get(n, 0) > lo.get(n, 0)}
        unused = {n: lo.get(n, 0) - used.get(n, 0) for n in names if lo.get(n, 0) > used.get(n, 0)}
        mine = [r for r in result.records if r.pod.namespace == q.namespace]
        out.append(
            {
                "namespace": q.namespace,
                "name": q.name,
                "min": {n: lo.get(n, 0) for n in names},
                # a scalar resource a present max does not list is unbounded; null stands for unbounded
                "max": {n: (None if hi.get(n, MAX_INT64) >= MAX_INT64 else hi[n]) for n in names},
                "used": {n: used.get(n, 0) for n in names},
                "borrowed": borrowed,  # also what within-min quotas could reclaim from it by preemption
                "unused_min": unused,
                # preempted pods are deleted: the controller no longer lists them
                "status_used": status_used(q, (r.pod for r in mine if r.phase != PREEMPTED)),
                "running": sum(1 for r in mine if r.phase == RUNNING),
                "pending": sum(1 for r in mine if r.phase == PENDING),
                "preempted": sum(1 for r in mine if r.phase == PREEMPTED),
            }
        )
    return out


def quotas_json(rows: list[dict[str, Any]], warnings: list[str]) -> dict[str, Any]:
    return {"schema": QUOTAS_SCHEMA, "quotas": rows, "warnings": warnings}


def print_quotas(console: Console, rows: list[dict[str, Any]]) -> None:
    table = Table(title="ElasticQuotas after the simulation (min / used / max)")
    table.add_column("quota", no_wrap=True)
    table.add_column("resource", no_wrap=True)
    for col in ("min", "used", "max", "borrowed", "unused min"):
        table.add_column(col, justify="right", no_wrap=True)

    for row in rows:
        first = True
        for name in row["used"]:
            mx = row["max"][name]
            table.add_row(
                f"{row['namespace']}/{row['name']}" if first else "",
                name,
                _fmt(name, row["min"][name]),
                _fmt(name, row["used"][name]),
                "unbounded" if mx is None else _fmt(name, mx),
                _fmt(name, row["borrowed"][name]) if name in row["borrowed"] else "-",
                _fmt(name, row["unused_min"][name]) if name in row["unused_min"] else "-",
            )
            first = False
    console.print(table)
    for row in rows:
        console.print(
            f"{row['namespace']}/{row['name']}: {row['running']} running, {row['pending']} pending, "
            f"{row['preempted']} preempted",
            highlight=False,
        )
    console.print(
        "borrowed: used beyond min; pods of a quota that borrows can be preempted by pods of quotas still within "
        "their min (reclaim), until it is back at its min. unused min: guaranteed capacity others may borrow now.",
        highlight=False,
    )
