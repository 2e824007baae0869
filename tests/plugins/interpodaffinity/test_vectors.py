"""Replays kube-scheduler's recorded decisions (``shared/spec/kube-scheduler-vectors``) one pod at a time on the
cluster as it was before that pod, and compares what InterPodAffinity decides: the feasible nodes, the message
of an unschedulable pod, InterPodAffinity's normalised score on every scored node (or its absence when it
skipped), and the top-score set where no plugin packsched lacks (PodTopologySpread) scored."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from packsched.api.errors import ErrorList
from packsched.api.manifests import decode_document
from packsched.api.objects import Pod
from packsched.config.loader import load_config_data
from packsched.framework.snapshot import Snapshot, make_pod_info
from packsched.framework.status import Status
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import Scheduler

VECTORS = Path(__file__).resolve().parents[4] / "shared" / "spec" / "kube-scheduler-vectors"
MISSING = ("PodTopologySpread",)  # scored upstream, not on this branch


class _Actions:
    def bind(self, pod: Any, node: str) -> Status:
        return Status()

    def preempt(self, victim: Any, preemptor: Any) -> None:
        raise AssertionError("the vectors have no preemption")


def _decode(doc: dict[str, Any]) -> Any:
    errors = ErrorList()
    cluster = decode_document(doc, doc["metadata"]["name"], errors)
    assert not errors.items, errors.items
    return cluster


@dataclass
class Decision:
    scenario: str
    index: int
    pod: str
    problems: list[str] = field(default_factory=list)
    comparable_top: bool = True


def replay(path: Path) -> list[Decision]:
    data = json.loads(path.read_text())
    known = in_tree_registry()
    cfg = load_config_data(data["scheduler_config"], path.name, known)
    snap = Snapshot()
    for doc in data["objects"]["nodes"]:
        snap.add_nodes(_decode(doc).nodes)
    for doc in data["objects"]["namespaces"]:
        snap.namespaces.update({k: v.labels for k, v in _decode(doc).namespaces.items()})
    sched = Scheduler(cfg, known, _Actions(), snap, seed=1)
    pods: dict[str, Pod] = {}
    for doc in data["pods"]:
        for p in _decode(doc).pods:
            p.priority_set = True
            pods[p.key] = p
    out: list[Decision] = []
    for i, rec in enumerate(data["results"]):
        d = Decision(path.stem, i, rec["pod"])
        info = make_pod_info(pods[rec["pod"]], i)
        res = sched.schedule_one(info, explain=True)
        if res.scheduled:
            sched.cache.remove_pod(info.key)
        diag = res.diagnosis
        feasible = sorted(snap.nodes[c].name for c in range(snap.n) if diag is not None and diag.feasible[c])
        if rec["outcome"] == "bound":
            if len(feasible) != rec["feasible_nodes"] or rec["node"] not in feasible:
                d.problems.append(f"feasible {feasible} != {rec['feasible_nodes']} nodes with {rec['node']}")
        else:
            if res.scheduled or res.message != rec["message"]:
                d.problems.append(f"message {res.message!r} != {rec['message']!r}")
        if rec["outcome"] == "bound" and rec.get("scored"):
            _compare_scores(d, rec, res.scores, snap)
        if rec["outcome"] == "bound":
            placed = make_pod_info(info.pod, i)  # a fresh PodInfo: the one scheduled was assumed, then removed
            sched.cache.add_pod(placed, rec["node"])
        out.append(d)
    return out


def _compare_scores(d: Decision, rec: dict[str, Any], scores: Any, snap: Snapshot) -> None:
    if scores is None:
        d.problems.append("not scored")
        return
    ours = {snap.nodes[int(c)].name: j for j, c in enumerate(scores.cols)}
    ipa = scores.per_plugin.get("InterPodAffinity")
    for name, plugins in rec["plugin_scores_normalized"].items():
        want = plugins.get("InterPodAffinity")
        if (want is None) != (ipa is None):
            d.problems.append(f"InterPodAffinity {'skipped' if ipa is None else 'scored'} on {name}")
            return
        if ipa is not None and name in ours and int(ipa[ours[name]]) != want:
            d.problems.append(f"InterPodAffinity on {name}: {int(ipa[ours[name]])} != {want}")
    if any(m in p for p in rec["plugin_scores_weighted"].values() for m in MISSING):
        d.comparable_top = False
        return
    totals = {name: int(scores.totals[j]) for name, j in ours.items()}
    for name, want in rec["total_scores"].items():
        if totals.get(name) != want:
            d.problems.append(f"total on {name}: {totals.get(name)} != {want}")
    if totals:
        best = max(totals.values())
        top = sorted(n for n, v in totals.items() if v == best)
        if top != sorted(rec["top_nodes"]):
            d.problems.append(f"top {top} != {sorted(rec['top_nodes'])}")


def ipa_scenarios() -> list[Path]:
    out = []
    for path in sorted(VECTORS.glob("s*.json")):
        if json.loads(path.read_text())["family"].startswith("ipa-"):
            out.append(path)
    return out


@pytest.mark.skipif(not VECTORS.is_dir(), reason="the shared vectors are not beside this checkout")
@pytest.mark.parametrize("path", ipa_scenarios() if VECTORS.is_dir() else [], ids=lambda p: p.stem)
def test_inter_pod_affinity_scenarios_agree_with_kube_scheduler(path: Path) -> None:
    decisions = replay(path)
    assert decisions
    wrong = [f"{d.index} {d.pod}: {p}" for d in decisions for p in d.problems]
    assert wrong == []


def test_the_replay_sees_a_broken_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: without the existing pods' anti-affinity (symmetry) decisions differ."""
    if not VECTORS.is_dir():
        pytest.skip("the shared vectors are not beside this checkout")
    from packsched.plugins.interpodaffinity import inter_pod_affinity as ipa

    monkeypatch.setattr(ipa.InterPodAffinity, "_existing_fails", lambda self, s, snap, sel, size: np.zeros(size, bool))
    path = next(p for p in ipa_scenarios() if p.stem == "s25")
    assert any(d.problems for d in replay(path))
