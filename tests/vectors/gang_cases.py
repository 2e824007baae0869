"""kube-scheduler's own gang scheduling, recorded by ``conformance/`` (a scenario with a ``gangs`` key, see
docs/reference/conformance.md, "Gangs"), replayed through packsched's simulator.

A gang's pods are not decided one at a time, so the whole scenario is simulated: pod ``i`` arrives at
``SPACING * (i + 1)`` seconds (a group object the recorder created just before pod ``k`` arrives
``SPACING * (k + 1) - SPACING / 2``), and the simulation stops ``SPACING`` after the last pod. The spacing is longer
than the longest backoff (10 s), so that each pod meets a scheduler with nothing left to do, as the recorder waits
for quiescence before the next; and short enough that a wait at Permit (five minutes) does not end within a
scenario of up to 26 pods (the recorder's run takes seconds). Compared per pod with the recording: the outcome
(``bound``, ``waiting`` at Permit, ``pending``), the node, after which pod's arrival it was bound, and a pending
pod's message (none: never tried, held at PreEnqueue).

Ties: kube-scheduler picks among the best-scored nodes at random, so where the nodes packsched scores best for a
pod include the node the recording has it on, packsched takes that node (as ``-follow`` does for the recorder);
a node with a lower total is never taken that way. Likewise the siblings one event lets into the queue are put
in a pod-group cycle in the recording's order (``_follow_sibling_order``: upstream's order among them is Go's map
order). OpportunisticBatching is off, as in the recorder.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

from packsched.api.manifests import load_manifests
from packsched.config import load_config
from packsched.config.versions import parse_kube_version
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import Scheduler, best_scored
from packsched.sim.engine import RUNNING, SCHEDULED, WAITING, Simulation

SPACING = 11  # seconds between two pods' arrivals
MAX_PODS = 300 // SPACING - 1  # a wait at Permit that began with the first pod (at SPACING) outlasts the run
CREATE_BEFORE = "conformance.packsched.io/create-before-pod"
WITH_PREVIOUS = "conformance.packsched.io/with-previous"
ARRIVAL = "packsched.io/arrival-time"


def is_gang_scenario(scenario: dict[str, Any]) -> bool:
    """A scenario whose pods all stay and whose final state is recorded: kube-scheduler's gangs, or one marked
    ``keep_pods`` (scheduler-plugins' Coscheduling)."""
    return "gangs" in scenario or bool(scenario.get("keep_pods"))


def arrivals(pods: list[dict[str, Any]]) -> list[int]:
    """Each pod's arrival, in units of ``SPACING``: pod ``i`` at ``i + 1``, and the pods the recorder created
    together with the one before (``conformance.packsched.io/with-previous``) with the last of their batch, when the
    recorder let the scheduler run."""
    out = [i + 1 for i in range(len(pods))]
    for i in range(len(pods) - 1, 0, -1):
        if pods[i]["metadata"].get("annotations", {}).get(WITH_PREVIOUS) == "true":
            out[i - 1] = out[i]
    return out


def _documents(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for objs in scenario["objects"].values():
        for obj in objs:
            obj = json.loads(json.dumps(obj))
            at = obj.get("metadata", {}).get("annotations", {}).get(CREATE_BEFORE)
            if at is not None:
                obj["metadata"]["annotations"][ARRIVAL] = f"{SPACING * (int(at) + 1) - SPACING // 2}s"
            docs.append(obj)
    for pod, at in zip(scenario["pods"], arrivals(scenario["pods"]), strict=True):
        pod = json.loads(json.dumps(pod))
        pod["metadata"].setdefault("annotations", {})[ARRIVAL] = f"{SPACING * at}s"
        docs.append(pod)
    return docs


def simulate(scenario: dict[str, Any], kube_version: str) -> list[dict[str, Any]]:
    """Every pod's state at the end of packsched's run of the scenario, in the recording's terms."""
    pods = scenario["pods"]
    if len(pods) > MAX_PODS:
        raise ValueError(f"{scenario['id']}: {len(pods)} pods, more than the {MAX_PODS} a gang scenario may have")
    with tempfile.TemporaryDirectory() as tmp:
        cluster_file = Path(tmp) / "cluster.json"
        cluster_file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _documents(scenario)}))
        config_file = Path(tmp) / "config.json"
        config_file.write_text(json.dumps(scenario["scheduler_config"]))
        cluster = load_manifests([str(cluster_file)])
        registry = in_tree_registry()
        version = parse_kube_version(kube_version)
        gates = {"OpportunisticBatching": False} if version.minor >= 35 else {}  # off in the recorder (1.35+)
        gates.update({k: bool(v) for k, v in (scenario.get("feature_gates") or {}).items()})
        cfg = load_config(
            str(config_file), set(registry), kube_version=parse_kube_version(kube_version), feature_gates=gates
        )
    sim = Simulation(cluster, cfg, registry, seed=0)
    _follow_ties(sim.scheduler, {r["pod"]: r["node"] for r in scenario.get("results", []) if r.get("node")})
    order = {r["pod"]: r["last_cycle"] for r in scenario.get("results", []) if r.get("last_cycle") is not None}
    if order:
        _follow_sibling_order(sim.scheduler, order)
    sim.run_until(float(SPACING * (len(pods) + 1)))
    result = sim.result()
    bound_at: dict[str, float] = {}
    waiting_on: dict[str, str | None] = {}
    for ev in result.events:
        if ev.kind == SCHEDULED:
            bound_at[ev.pod] = ev.time
            waiting_on.pop(ev.pod, None)
        elif ev.kind == WAITING:
            waiting_on[ev.pod] = ev.node
    out = []
    for i, pod in enumerate(pods):
        key = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
        rec = sim.records[key]
        got: dict[str, Any] = {"index": i, "pod": key}
        if rec.phase == RUNNING:
            got.update(outcome="bound", node=rec.node, bound_after=math.floor(bound_at[key] / SPACING) - 1)
        elif rec.reason is not None and rec.reason.startswith("waiting at Permit"):
            got.update(outcome="waiting", node=waiting_on.get(key))
        else:
            got.update(outcome="pending", node=None, message=rec.reason if rec.attempts else None)
        out.append(got)
    return out


def _follow_ties(scheduler: Scheduler, recorded: dict[str, str]) -> None:
    """Break a tie between best-scored nodes as the recording did: its node, when it is one of them."""
    choose = scheduler._choose

    def follow(fwk: Any, scores: Any, candidates: Any, result: Any) -> Any:
        want = recorded.get(result.pod.key)
        tied = best_scored(scores, candidates)
        if want is not None and len(tied) > 1:
            nodes = scheduler._snapshot.nodes
            for t in tied:
                col = int(scores.cols[t])
                if nodes[col].name == want:
                    return col, None
        return choose(fwk, scores, candidates, result)

    scheduler._choose = follow  # type: ignore[method-assign]


def _follow_sibling_order(scheduler: Scheduler, recorded: dict[str, int]) -> None:
    """Order the siblings one event let into the queue as the recording's cycles did. Upstream sorts a pod-group
    cycle's pods by priority, then by when each was first let into the active queue; the siblings that one event
    lets in (the gang's other pods, when its last pod is created) get their times in the order the queue's map of
    unschedulable pods hands them out, which Go randomizes. Only within such a batch (same virtual time, let in by
    an event rather than by their own creation) does packsched take the recording's order (``last_cycle``)."""
    queue = scheduler._queue
    batch: dict[str, tuple[float, int]] = {}
    add, ungate = queue.add, queue.ungate

    def add_seen(info: Any, gate_reason: str = "", gate_plugin: str = "", now: float = 0.0) -> Any:
        qp = add(info, gate_reason, gate_plugin, now)
        if not gate_reason:
            batch.setdefault(info.key, (scheduler.clock(), 0))
        return qp

    def ungate_seen(key: str) -> bool:
        done = ungate(key)
        if done:
            batch.setdefault(key, (scheduler.clock(), 1))
        return done

    queue.add = add_seen  # type: ignore[method-assign]
    queue.ungate = ungate_seen  # type: ignore[method-assign]
    pop_group = scheduler._pop_pod_group

    def pop(first: Any) -> Any:
        members = pop_group(first)
        keys = {id(q): i for i, q in enumerate(members)}

        def key(q: Any) -> tuple[Any, ...]:
            when = batch.get(q.info.key)
            within = recorded.get(q.info.key, 0) if when is not None and when[1] == 1 else keys[id(q)]
            return (-q.info.priority, when or (-1.0, 0), within)

        members.sort(key=key)
        return members

    scheduler._pop_pod_group = pop  # type: ignore[method-assign]


def differences(recorded: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """How packsched's state of one pod differs from the recording's (empty: they agree). A bound pod on another
    node that the recorded cycle scored as high (``top_nodes``) is a tie broken the other way, said as such."""
    if recorded["outcome"] != got["outcome"]:
        return [f"outcome: {recorded['outcome']} -> {got['outcome']} ({got.get('message') or got.get('node')})"]
    diffs = []
    if recorded.get("node") != got.get("node"):
        tie = got.get("node") in (recorded.get("top_nodes") or [])
        diffs.append(f"node: {recorded.get('node')} -> {got.get('node')}" + (" (a tie)" if tie else ""))
    if recorded["outcome"] == "bound" and recorded.get("bound_after") != got.get("bound_after"):
        diffs.append(f"bound after pod #{recorded.get('bound_after')} -> #{got.get('bound_after')}")
    if recorded["outcome"] == "pending" and recorded.get("message") != got.get("message"):
        diffs.append(f"message:\n    {recorded.get('message')}\n    {got.get('message')}")
    return diffs


def compared(results: list[dict[str, Any]]) -> list[int]:
    """The indices of the recorded pods that are compared: not refused by the API server, and only when the
    recorder's run went quiet after every pod (no ``timed_out``)."""
    return [i for i, r in enumerate(results) if r["outcome"] != "rejected" and not r.get("timed_out")]
