"""What a report shows beyond a command's ``-o json`` document, computed from the runs themselves: each node's
utilisation over time, each ElasticQuota's use over time, every pod's explain table (``simulate --html``,
``run --html``), the full allocation curves of trace replays (``replay --html``, ``compare --html``) and the trials
and best configuration of a tune (``tune --html``, or ``report`` of its ``summary.json`` beside its files).

The result is the ``extras`` dict that :func:`packsched.sim.htmlreport.render_html` takes beside the document.
The JSON documents themselves (and their schemas) are left as they are."""

from __future__ import annotations

import copy
import csv
import math
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from packsched.api.annotations import format_duration
from packsched.api.manifests import Cluster, load_manifests
from packsched.api.objects import ElasticQuota, Node
from packsched.api.quantity import MAX_INT64
from packsched.api.quota import first_per_namespace, max_from_spec, min_from_spec, pod_quota_request
from packsched.config.loader import default_config, load_config
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework.runtime import PluginFactory
from packsched.framework.snapshot import Snapshot
from packsched.scheduler import CycleResult
from packsched.sim.engine import (
    COMPLETED,
    DELETED_EVENT,
    EVICTED_EVENT,
    PREEMPTED_EVENT,
    SCHEDULED,
    Event,
    PodRecord,
    SimResult,
    Simulation,
    run_simulation,
)
from packsched.sim.replay import RunResult
from packsched.sim.report import event_json, explain_json, placement

MAX_HEATMAP_NODES = 200  # rows of the utilisation heat map
MAX_COLUMNS = 60  # its columns: every instant something changed, or as many time buckets (the peak in each)
MAX_QUOTA_POINTS = 400
MAX_EXPLAIN_PODS = 2000  # pods whose explain table the page embeds
MAX_EXPLAIN_CELLS = 2_000_000  # pods x nodes explained (each explain table starts with every node)
MAX_EXPLAIN_NODES = 25  # nodes per explain table (the chosen one, the best scored, then rejected ones)
_LEAVES = (COMPLETED, PREEMPTED_EVENT, EVICTED_EVENT, DELETED_EVENT)
CURVE_NAMES = ("gpu_alloc_pct", "frag_rate_pct")


@dataclass(frozen=True)
class _Change:
    time: float
    node: str
    key: str
    sign: int


def _changes(records: Sequence[PodRecord], events: Sequence[Event]) -> list[_Change]:
    """Every pod arriving on or leaving a node, in time order: pods bound by their manifests when they are created,
    then the events (scheduled; completed, preempted, evicted, deleted from a node)."""
    out = [
        _Change(rec.started, rec.pod.node_name, rec.pod.key, +1)
        for rec in records
        if rec.pod.node_name and rec.started is not None
    ]
    for e in events:
        if e.node is None:
            continue
        if e.kind == SCHEDULED:
            out.append(_Change(e.time, e.node, e.pod, +1))
        elif e.kind in _LEAVES:
            out.append(_Change(e.time, e.node, e.pod, -1))
    out.sort(key=lambda c: c.time)  # stable: the events' own order within an instant
    return out


def _grouped(changes: Sequence[_Change]) -> list[tuple[float, list[_Change]]]:
    groups: list[tuple[float, list[_Change]]] = []
    for c in changes:
        if groups and groups[-1][0] == c.time:
            groups[-1][1].append(c)
        else:
            groups.append((c.time, [c]))
    return groups


class _Sampler:
    """A state (an array) sampled over time: at every instant it changes when there are at most ``max_cols`` of
    them, else the peak within each of ``max_cols`` equal time buckets."""

    def __init__(self, instants: Sequence[float], end: float, shape: tuple[int, ...], max_cols: int) -> None:
        times = sorted({0.0, *instants, *([end] if end > 0 else [])})  # the end: the state it was left in
        self.points = len(times) <= max_cols or end <= 0
        if self.points:
            self.starts = times
        else:
            self.starts = [end * i / max_cols for i in range(max_cols)]
        self.end = end
        self.out = np.full((len(self.starts), *shape), np.nan)
        self.current = np.zeros(shape)
        self.index = {t: i for i, t in enumerate(times)} if self.points else {}
        self.bucket = 0
        self.out[0] = self.current

    def _at(self, t: float) -> int:
        if self.points:
            return self.index[t]
        return min(len(self.starts) - 1, int(t / self.end * len(self.starts)))

    def sample(self, t: float, state: np.ndarray[Any, Any]) -> None:
        b = self._at(t)
        while self.bucket < b:  # buckets without a change hold the state carried in
            self.bucket += 1
            self.out[self.bucket] = self.current
        self.current = state.copy()
        if self.points:
            self.out[b] = state
        else:
            self.out[b] = np.fmax(self.out[b], state)

    def finish(self) -> np.ndarray[Any, Any]:
        while self.bucket < len(self.starts) - 1:
            self.bucket += 1
            self.out[self.bucket] = self.current
        return self.out

    def exists(self, born: float) -> list[bool]:
        """Per column: whether a node added at ``born`` existed then (at the instant, or before its bucket
        ended)."""
        if self.points:
            return [t >= born for t in self.starts]
        step = self.end / len(self.starts)
        return [t + step > born for t in self.starts]

    def labels(self) -> list[str]:
        if self.points:
            return [format_duration(t) for t in self.starts]
        step = self.end / len(self.starts)
        return [f"{format_duration(round(t, 3))}-{format_duration(round(t + step, 3))}" for t in self.starts]


def usage_history(
    records: Sequence[PodRecord],
    events: Sequence[Event],
    snap: Snapshot,
    end: float,
    max_nodes: int = MAX_HEATMAP_NODES,
    max_cols: int = MAX_COLUMNS,
    born: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Each node's requested / allocatable (%) per resource over time, and its pods / allowed pods. ``born``: when
    a node that was not there from the start was added (a scenario step): no value before (not 0 %)."""
    names = [n.name for n in snap.nodes]
    shown = names[:max_nodes]
    col = {name: i for i, name in enumerate(shown)}
    n = len(shown)
    resources = [r for r in snap.resources if n and bool(np.any(snap.alloc[snap.row[r], :n] > 0))]
    alloc = np.array([snap.alloc[snap.row[r], :n] for r in resources] + [snap.allowed_pods[:n]], dtype=float)
    alloc[alloc <= 0] = np.nan
    requests = {rec.pod.key: rec.info.requests for rec in records}
    changes = [c for c in _changes(records, events) if c.node in col]
    sampler = _Sampler([c.time for c in changes], end, alloc.shape, max_cols)
    used = np.zeros(alloc.shape)
    for t, group in _grouped(changes):
        for c in group:
            req = requests.get(c.key, {})
            used[:, col[c.node]] += c.sign * np.array([req.get(r, 0) for r in resources] + [1], dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            sampler.sample(t, used / alloc * 100.0)
    values = sampler.finish()  # (cols, resources + pods, nodes)
    for name, t in (born or {}).items():
        if name in col and t > 0:
            values[~np.array(sampler.exists(t)), :, col[name]] = np.nan
    layers = []
    for i, name in enumerate([*resources, "pods"]):
        matrix = [[_pct(values[t, i, node]) for t in range(values.shape[0])] for node in range(n)]
        layers.append({"name": name, "values": matrix})
    return {
        "nodes": shown,
        "nodes_total": len(names),
        "cols": sampler.labels(),
        "bucketed": not sampler.points,
        "layers": layers,
    }


def _pct(x: float) -> float | None:
    return None if math.isnan(x) else round(float(x), 1)


def quota_history(
    records: Sequence[PodRecord],
    events: Sequence[Event],
    quotas: Sequence[ElasticQuota],
    end: float,
    limits: Sequence[tuple[float, Sequence[Mapping[str, Any]]]] = (),
) -> list[dict[str, Any]]:
    """Per namespace's ElasticQuota and resource: used, min and max over time (scheduler units; max None:
    unbounded). ``limits``: (time, quota rows with ``namespace``, ``min``, ``max``) where a scenario changed them."""
    firsts = first_per_namespace(list(quotas))
    if not firsts:
        return []
    namespaces = [q.namespace for q in firsts]
    req = {rec.pod.key: pod_quota_request(rec.pod) for rec in records if rec.pod.namespace in namespaces}
    changes = [c for c in _changes(records, events) if c.key in req]
    bounds: dict[str, list[tuple[float, dict[str, int], dict[str, int | None]]]] = {}
    for q in firsts:
        hi = max_from_spec(q.max)
        lo = min_from_spec(q.min)
        bounds[q.namespace] = [(0.0, lo, {k: (None if v >= MAX_INT64 else v) for k, v in hi.items()})]
    for t, rows in limits:
        for row in rows:
            bounds.setdefault(row["namespace"], []).append((t, dict(row["min"]), dict(row["max"])))
    used: dict[str, dict[str, int]] = {ns: {} for ns in namespaces}
    times = [0.0]
    states = [copy.deepcopy(used)]
    for t, group in _grouped(changes):
        for c in group:
            ns = c.key.split("/", 1)[0]
            for name, amount in req[c.key].items():
                used[ns][name] = used[ns].get(name, 0) + c.sign * amount
        if times[-1] == t:
            states[-1] = copy.deepcopy(used)
        else:
            times.append(t)
            states.append(copy.deepcopy(used))
    times, states = _thin(times, states, MAX_QUOTA_POINTS)
    if end > times[-1]:
        times.append(end)
        states.append(states[-1])
    out = []
    for q in firsts:
        out += _quota_series(q, times, states, bounds.get(q.namespace, []))
    return out


def _thin(
    times: list[float], states: list[dict[str, dict[str, int]]], limit: int
) -> tuple[list[float], list[dict[str, dict[str, int]]]]:
    """At most ``limit`` samples, evenly spread (the last one kept)."""
    if len(times) <= limit:
        return times, states
    keep = sorted({round(i * (len(times) - 1) / (limit - 1)) for i in range(limit)})
    return [times[i] for i in keep], [states[i] for i in keep]


def _quota_series(
    q: ElasticQuota,
    times: Sequence[float],
    states: Sequence[Mapping[str, Mapping[str, int]]],
    bounds: Sequence[tuple[float, Mapping[str, int], Mapping[str, int | None]]],
) -> list[dict[str, Any]]:
    def bound_at(t: float) -> tuple[Mapping[str, int], Mapping[str, int | None]]:
        current = bounds[0]
        for b in bounds:
            if b[0] <= t:
                current = b
        return current[1], current[2]

    at = [bound_at(t) for t in times]
    names: set[str] = set()
    for lo, hi in at:
        names |= {k for k, v in lo.items() if v} | {k for k, v in hi.items() if v}
    for s in states:
        names |= {k for k, v in s.get(q.namespace, {}).items() if v}
    out = []
    for name in sorted(names):
        out.append(
            {
                "namespace": q.namespace,
                "name": q.name,
                "resource": name,
                "times": list(times),
                "used": [s.get(q.namespace, {}).get(name, 0) for s in states],
                "min": [lo.get(name, 0) for lo, _ in at],
                "max": [hi.get(name) if name in hi else None for _, hi in at],
            }
        )
    return out


# -- explain tables --------------------------------------------------------------------------------------------


class _Nodes:
    """The node list of a snapshot as it was during a cycle (what :func:`explain_json` reads of it)."""

    def __init__(self, nodes: list[Node]) -> None:
        self.nodes = nodes


@dataclass
class _Captured:
    cycle: CycleResult
    nodes: list[Node]
    attempts: int


class _Recorder:
    """Keeps, per captured pod, its last cycle and the nodes then (a scenario adds and removes nodes)."""

    def __init__(self, sim: Simulation, keys: set[str]) -> None:
        self.sim = sim
        self.keys = keys
        self.last: dict[str, _Captured] = {}
        self._nodes: list[Node] = []
        self._generation: tuple[int, int] | None = None

    def __call__(self, cycle: CycleResult) -> None:
        key = cycle.pod.key
        if key not in self.keys:
            return
        self.sim.captured.pop(key, None)  # this keeps the last one only
        before = self.last.get(key)
        snap = self.sim.snapshot
        generation = (id(snap), snap.node_generation)
        if generation != self._generation:  # the node list is shared by the cycles that saw the same one
            self._nodes, self._generation = list(snap.nodes), generation
        self.last[key] = _Captured(cycle, self._nodes, (before.attempts if before else 0) + 1)


def _history_key(events: Iterable[Event]) -> list[tuple[float, str, str, str | None, str | None]]:
    return [(e.time, e.kind, e.pod, e.node, e.by) for e in events]


def _explain_keys(records: Sequence[PodRecord], nodes: int) -> list[str]:
    """The pods to explain: the first ones, as many as the budget allows."""
    limit = min(MAX_EXPLAIN_PODS, MAX_EXPLAIN_CELLS // max(1, nodes))
    return list(dict.fromkeys(r.pod.key for r in records))[:limit]


def _trimmed(data: dict[str, Any]) -> dict[str, Any]:
    """At most MAX_EXPLAIN_NODES nodes (the chosen one, then the feasible by total score, then the rejected), and
    the count of rejected nodes per reason over all of them."""
    nodes = data.get("nodes", [])
    reasons: Counter[str] = Counter()
    for n in nodes:
        if not n["feasible"]:
            reasons.update(n["reasons"] or [f"rejected by {n['rejected_by']}"])
    selected = data.get("selected")
    ranked = sorted(
        nodes,
        key=lambda n: (n["node"] != selected, not n["feasible"], -(n["total"] if n["total"] is not None else -1)),
    )
    out = {k: v for k, v in data.items() if k not in ("nodes", "schema")}
    out["nodes"] = ranked[:MAX_EXPLAIN_NODES]
    out["nodes_total"] = len(nodes)
    out["rejections"] = dict(reasons.most_common())
    return out


def _explains(
    recorder: _Recorder, records: Sequence[PodRecord], cfg: KubeSchedulerConfiguration
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        key = rec.pod.key
        if key not in recorder.keys or key in out:
            continue
        got = recorder.last.get(key)
        data = explain_json(
            key,
            got.cycle if got else None,
            cast(Snapshot, _Nodes(got.nodes if got else [])),
            got.attempts if got else 0,
            cfg,
            bound_by_manifest=rec.pod.node_name or None,
        )
        out[key] = _trimmed(data)
    return out


def _explain_pass(
    sim: Simulation,
    run: Callable[[], object],
    plain: Sequence[Event],
    keys: list[str],
    records: Callable[[], Sequence[PodRecord]],
) -> dict[str, Any]:
    """Run the simulation again with every pod's cycle explained (every feasible node scored); the tables are kept
    when the history is the same as the plain run's (a random score plugin may draw differently)."""
    recorder = _Recorder(sim, set(keys))
    sim.capture = set(keys)
    sim.on_cycle = recorder
    run()
    if _history_key(sim.events) != _history_key(plain):
        return {
            "explain_note": "explain tables left out: explaining every pod (scoring every feasible node) changed "
            "this configuration's random choices, so they would not describe this run"
        }
    out: dict[str, Any] = {"explain": _explains(recorder, records(), sim.scheduler.config)}
    if len(keys) < len({r.pod.key for r in records()}):
        out["explain_note"] = f"explain tables of the first {len(keys)} pods only"
    return out


def _extras(
    records: Sequence[PodRecord],
    events: Sequence[Event],
    snap: Snapshot,
    end: float,
    quotas: Sequence[ElasticQuota],
    limits: Sequence[tuple[float, Sequence[Mapping[str, Any]]]] = (),
    born: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    return {
        "usage": usage_history(records, events, snap, end, born=born),
        "quotas": quota_history(records, events, quotas, end, limits),
        "requests": {r.pod.key: dict(r.info.requests) for r in records},
    }


def simulate_with_extras(
    cluster: Cluster, cfg: KubeSchedulerConfiguration, registry: Mapping[str, PluginFactory], seed: int
) -> tuple[SimResult, dict[str, Any]]:
    """``run_simulation``'s result, and the page's extras: utilisation and quotas over time, and every pod's explain
    table (from a second run with each cycle explained, kept when it made the same history)."""
    fresh = copy.deepcopy(cluster)
    result = run_simulation(cluster, cfg, registry, seed)
    extras = _extras(result.records, result.events, result.snapshot, result.end_time, cluster.elastic_quotas)
    sim = Simulation(fresh, cfg, registry, seed)
    extras.update(
        _explain_pass(
            sim, sim.run, result.events, _explain_keys(result.records, result.snapshot.n), lambda: sim.history
        )
    )
    return result, extras


def scenario_with_extras(scenario: Any, registry: Mapping[str, PluginFactory]) -> tuple[list[Any], dict[str, Any]]:
    """``run_scenario``'s step reports and the page's extras (the scenario's pods, events, utilisation and quotas
    over time, explain tables)."""
    from packsched.sim.scenario import Step, _Runner

    class Watched(_Runner):
        """Notes when each node was added: a node a step adds has no utilisation before it."""

        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self.born = {n.name: 0.0 for n in self.sim.snapshot.nodes}

        def _apply(self, step: Step) -> None:
            super()._apply(step)
            for n in self.sim.snapshot.nodes:
                self.born.setdefault(n.name, self.sim.now)

    def runner() -> Watched:
        cluster = load_manifests(scenario.base)
        if scenario.config:
            config = load_config(scenario.config, set(registry))
        else:
            config = default_config(set(registry))
        return Watched(scenario, cluster, config, registry)

    first = runner()
    reports = first.run()
    sim = first.sim
    limits = [(r.at, r.quotas) for r in reports]
    extras = _extras(sim.history, sim.events, sim.snapshot, sim.now, first.cluster.elastic_quotas, limits, first.born)
    extras["simulation"] = {
        "placements": [placement(r) for r in sim.history],
        "events": [event_json(e) for e in sim.events],
        "end_time": sim.now,
    }
    again = runner()
    extras.update(
        _explain_pass(
            again.sim, again.run, sim.events, _explain_keys(sim.history, sim.snapshot.n), lambda: again.sim.history
        )
    )
    return reports, extras


# -- trace replays ---------------------------------------------------------------------------------------------


def _band(runs: Sequence[RunResult], curve: str) -> dict[str, list[float | None]]:
    data = np.array([[np.nan if v is None else v for v in r.curves[curve]] for r in runs], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)  # a level no run reached: all NaN
        med = np.nanmedian(data, axis=0)
        lo = np.nanpercentile(data, 25, axis=0)
        hi = np.nanpercentile(data, 75, axis=0)
    return {"median": _floats(med), "q1": _floats(lo), "q3": _floats(hi)}


def _floats(arr: np.ndarray[Any, Any]) -> list[float | None]:
    return [None if math.isnan(v) else round(float(v), 4) for v in arr]


def curve_extras(
    groups: Mapping[str, Sequence[RunResult]], published: Mapping[str, Mapping[str, Any] | None]
) -> dict[str, Any]:
    """Per label: the median and interquartile range over seeds of GPU allocation and fragmentation rate at every
    arrived level (0-130 %), and the published mean allocation curve where there is one."""
    curves = {
        label: {"seeds": [r.seed for r in runs], **{c: _band(runs, c) for c in CURVE_NAMES}}
        for label, runs in groups.items()
        if runs
    }
    pub = {label: list(p["gpu_alloc_pct"]) for label, p in published.items() if p and "gpu_alloc_pct" in p}
    return {"curves": curves, "published_curves": pub}


# -- tune ------------------------------------------------------------------------------------------------------


def tune_extras(trials: Sequence[Mapping[str, Any]], best_config: str | None) -> dict[str, Any]:
    """The tune page's extras: the trials (trials.csv's rows) and best-config.yaml's text."""
    out: dict[str, Any] = {"trials": [dict(t) for t in trials]}
    if best_config:
        out["best_config"] = best_config
    return out


def _cell(text: str) -> Any:
    """A trials.csv cell as the number it holds (empty: None)."""
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_trials(path: Path) -> list[dict[str, Any]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return [{k: _cell(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def tune_extras_from_files(doc: Mapping[str, Any], folder: Path | None) -> dict[str, Any]:
    """A saved tune ``summary.json``'s trials.csv and best-config.yaml: beside the document (``folder``), else
    where the document says they were written; a note when they are not found."""

    def find(key: str) -> Path | None:
        written = (doc.get("outputs") or {}).get(key)
        if not written:
            return None
        for path in ([folder / Path(written).name] if folder is not None else []) + [Path(written)]:
            if path.is_file():
                return path
        return None

    trials, best = find("trials_csv"), find("best_config")
    out: dict[str, Any] = {}
    try:
        if trials is not None:
            out["trials"] = read_trials(trials)
        if best is not None:
            out["best_config"] = best.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        out["trials_note"] = f"trials.csv or best-config.yaml could not be read: {exc}"
    if trials is None:
        out["trials_note"] = (
            "trials.csv was not found beside this document nor where it says it was written: the search plot "
            "and the trials table need it"
        )
    return out
