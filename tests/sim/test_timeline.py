"""The simulator over time: arrivals, run durations, completions, preemption with controllers replacing pods,
and the annotations' errors through the command line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import make_config, make_profile
from packsched.api.annotations import format_duration, parse_duration
from packsched.api.manifests import load_manifests
from packsched.api.objects import Pod
from packsched.cli.main import app
from packsched.config.versions import KubeVersion
from packsched.framework.interface import ADD, DELETE, POD, UPDATE, ClusterEvent
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import PREEMPTED, RUNNING, SUCCEEDED, SimResult, Simulation
from packsched.sim.report import simulate_json

runner = CliRunner()


def node(name: str, cpu: str = "4") -> str:
    return f"""
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 16Gi, pods: "110"}}}}
"""


def annotations(arrive: str | None, run: str | None) -> str:
    pairs = []
    if arrive is not None:
        pairs.append(f'packsched.io/arrival-time: "{arrive}"')
    if run is not None:
        pairs.append(f'packsched.io/run-duration: "{run}"')
    return "{" + ", ".join(pairs) + "}"


def pod(name: str, cpu: str, arrive: str | None = None, run: str | None = None, prio: str = "") -> str:
    pc = f"\n  priorityClassName: {prio}" if prio else ""
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {annotations(arrive, run)}}}
spec:{pc}
  containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


def workload(
    kind: str, name: str, cpu: str, count_fields: str, arrive: str | None = None, run: str | None = None, prio: str = ""
) -> str:
    api = "batch/v1" if kind == "Job" else "apps/v1"
    selector = "" if kind == "Job" else f"\n  selector: {{matchLabels: {{app: {name}}}}}"
    pc = f"\n      priorityClassName: {prio}" if prio else ""
    restart = "Never" if kind == "Job" else "Always"
    return f"""
apiVersion: {api}
kind: {kind}
metadata: {{name: {name}}}
spec:
  {count_fields}{selector}
  template:
    metadata: {{labels: {{app: {name}}}, annotations: {annotations(arrive, run)}}}
    spec:{pc}
      restartPolicy: {restart}
      containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


PRIORITIES = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
"""


def manifest(tmp_path: Path, *docs: str, name: str = "cluster.yaml") -> Path:
    path = tmp_path / name
    path.write_text("---".join(textwrap.dedent(d) for d in (PRIORITIES, *docs)), encoding="utf-8")
    return path


Seen = tuple[str, str, str | None, str | None, str | None, str | None]


# 1.35 with SchedulerPopFromBackoffQ off: backoff ends at its exact expiry, and Pop never takes a backing-off pod
NO_POP_FROM_BACKOFF = KubeVersion(35).with_gates({"SchedulerPopFromBackoffQ": False})


def simulate(
    path: Path, seed: int = 0, recorder: list[Seen] | None = None, version: KubeVersion | None = None
) -> tuple[Simulation, SimResult]:
    cluster = load_manifests([str(path)])
    cfg = make_config(make_profile(post_filter=["DefaultPreemption"]))
    if version is not None:
        cfg.kube_version = version
    sim = Simulation(cluster, cfg, in_tree_registry(), seed=seed)
    if recorder is not None:
        real = sim.scheduler.dispatch

        def spy(event: ClusterEvent) -> None:
            # names and phases as the plugins see them at that moment (the pod objects change later)
            recorder.append(
                (
                    event.resource,
                    event.action,
                    getattr(event.old, "key", None),
                    getattr(event.old, "phase", None),
                    getattr(event.new, "key", None),
                    getattr(event.new, "phase", None),
                )
            )
            if event.action == UPDATE:
                assert isinstance(event.old, Pod) and isinstance(event.new, Pod) and event.old is not event.new
            real(event)

        sim.scheduler.dispatch = spy  # type: ignore[method-assign]
    return sim, sim.run()


def history(result: SimResult) -> list[tuple[float, str, str, str | None]]:
    return [(e.time, e.kind, e.pod, e.node) for e in result.events if e.kind != "unschedulable"]


def final(result: SimResult) -> list[tuple[str, str, str | None]]:
    return [(r.pod.key, r.phase, r.node) for r in result.records]


# -- durations -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90.0),
        ("5m", 300.0),
        ("1h2m3.5s", 3723.5),
        ("300ms", 0.3),
        ("1.5h", 5400.0),
        ("0", 0.0),
        ("90", 90.0),
        ("2.5", 2.5),
        ("1m30s", 90.0),
        ("1500us", 0.0015),
        ("2µs", 0.000002),
        ("+10s", 10.0),
        (".5s", 0.5),
        ("7ns", 0.000000007),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("5 minutes", "must be a duration"),
        ("-5s", "must not be negative"),
        ("", "empty"),
        ("1d", "must be a duration"),
        ("s", "must be a duration"),
        ("10", None),
        ("3000000h", "too large"),
    ],
)
def test_parse_duration_refuses(text: str, why: str | None) -> None:
    if why is None:
        assert parse_duration(text) == 10.0
        return
    with pytest.raises(ValueError, match=why):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.0, "0s"),
        (90.0, "1m30s"),
        (3600.0, "1h0m0s"),
        (3723.5, "1h2m3.5s"),
        (0.25, "250ms"),
        (1.5, "1.5s"),
    ],
)
def test_format_duration_as_go(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


# -- arrivals and completions ----------------------------------------------------------------------------


def test_pods_arrive_at_their_time_in_order(tmp_path: Path) -> None:
    path = manifest(
        tmp_path,
        node("n1", "8"),
        pod("late", "1", arrive="2m"),
        pod("early", "1", arrive="30s"),
        pod("now", "1"),
        pod("also-late", "1", arrive="120"),
    )
    _, result = simulate(path)
    assert [(t, k, p) for t, k, p, _ in history(result)] == [
        (0.0, "scheduled", "default/now"),
        (30.0, "scheduled", "default/early"),
        (120.0, "scheduled", "default/late"),  # same time: manifest order
        (120.0, "scheduled", "default/also-late"),
    ]
    created = {r.pod.name: (r.created, r.started) for r in result.records}
    assert created == {"late": (120.0, 120.0), "early": (30.0, 30.0), "now": (0.0, 0.0), "also-late": (120.0, 120.0)}
    assert result.end_time == 120.0


def test_completion_frees_resources_and_lets_a_pending_pod_in(tmp_path: Path) -> None:
    path = manifest(tmp_path, node("n1", "4"), pod("first", "3", run="1m"), pod("second", "3"))
    seen: list[Seen] = []
    sim, result = simulate(path, recorder=seen)
    assert history(result) == [
        (0.0, "scheduled", "default/first", "n1"),
        (60.0, "completed", "default/first", "n1"),
        (60.0, "scheduled", "default/second", "n1"),
    ]
    reasons = [e.reason for e in result.events if e.kind == "unschedulable"]
    assert reasons and reasons[0].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert final(result) == [("default/first", SUCCEEDED, "n1"), ("default/second", RUNNING, "n1")]
    assert int(sim.snapshot.requested[sim.snapshot.row["cpu"], 0]) == 3000  # only the second pod holds cpu
    # the plugins saw the first pod bound, then finished (old: Running, new: Succeeded), then the second bound
    assert seen == [
        (POD, ADD, None, None, "default/first", RUNNING),
        (POD, UPDATE, "default/first", RUNNING, "default/first", SUCCEEDED),
        (POD, ADD, None, None, "default/second", RUNNING),
    ]
    first = result.records[0]
    assert (first.started, first.finished) == (0.0, 60.0)


def test_pending_pod_waits_for_its_backoff_after_a_completion(tmp_path: Path) -> None:
    # the second pod failed at 0s and waits, unschedulable; the completion at 0.5s moves it to backoff (1 s from
    # that failure: expiry 1.0 s, window 1 s, flushed at 2 s), but the active queue is empty, so Pop takes it from
    # the backoff queue at once (SchedulerPopFromBackoffQ); with the gate off it waits for its expiry at 1 s.
    path = manifest(tmp_path, node("n1", "4"), pod("first", "3", run="500ms"), pod("second", "3"))
    _, result = simulate(path)
    assert history(result) == [
        (0.0, "scheduled", "default/first", "n1"),
        (0.5, "completed", "default/first", "n1"),
        (0.5, "scheduled", "default/second", "n1"),
    ]
    _, result = simulate(path, version=NO_POP_FROM_BACKOFF)
    assert history(result)[-1] == (1.0, "scheduled", "default/second", "n1")


def test_bound_pod_with_run_duration_completes(tmp_path: Path) -> None:
    bound = pod("bound", "4", run="10s").replace("spec:", "spec:\n  nodeName: n1")
    path = manifest(tmp_path, node("n1", "4"), bound, pod("waiting", "4", arrive="1s"))
    _, result = simulate(path)
    assert history(result) == [
        (10.0, "completed", "default/bound", "n1"),
        (10.0, "scheduled", "default/waiting", "n1"),
    ]


def test_zero_run_duration_completes_at_once(tmp_path: Path) -> None:
    path = manifest(tmp_path, node("n1", "4"), pod("blink", "4", run="0s"), pod("next", "4"))
    _, result = simulate(path)
    assert history(result) == [
        (0.0, "scheduled", "default/blink", "n1"),
        (0.0, "completed", "default/blink", "n1"),
        (0.0, "scheduled", "default/next", "n1"),  # the completion at 0s comes before the next cycle
    ]


# -- controllers -----------------------------------------------------------------------------------------


def test_deployment_pod_preempted_is_replaced(tmp_path: Path) -> None:
    path = manifest(
        tmp_path,
        node("n1", "4"),
        workload("Deployment", "web", "2", "replicas: 2", prio="low"),
        pod("urgent", "2", arrive="10s", prio="high"),
    )
    seen: list[Seen] = []
    sim, result = simulate(path, recorder=seen)
    kinds = [(t, k, p) for t, k, p, _ in history(result)]
    victim = kinds[2][2]
    assert kinds[:4] == [
        (0.0, "scheduled", "default/web-0"),
        (0.0, "scheduled", "default/web-1"),
        (10.0, "preempted", victim),  # evicted during the urgent pod's cycle, which then nominates the node
        (10.0, "nominated", "default/urgent"),
    ]
    preempted = next(e for e in result.events if e.kind == "preempted")
    assert preempted.by == "default/urgent"
    assert preempted.reason == "Deployment default/web creates default/web-2"
    # it backs off 1 s after its preempting cycle (10 s + 1 s = 11.0 s, window 11 s, flushed at 12 s), but web-2 is
    # tried and rejected at 10 s, and then the active queue is empty: Pop takes it from the backoff queue at once
    assert (10.0, "scheduled", "default/urgent") in kinds
    phases = {r.pod.key: (r.phase, r.replaces) for r in result.records}
    assert phases[victim] == (PREEMPTED, None)
    assert phases["default/web-2"] == ("Pending", victim)
    web2 = next(r for r in result.records if r.pod.name == "web-2")
    assert web2.created == 10.0 and web2.pod.priority == 10 and web2.pod.labels == {"app": "web"}
    assert (POD, DELETE, victim, RUNNING, None, None) in seen
    data = simulate_json(result, sim.config, 0)
    entry = next(p for p in data["placements"] if p["pod"] == "default/web-2")
    assert entry["owner"] == "Deployment/web" and entry["replaces"] == victim and entry["phase"] == "Pending"
    assert next(p for p in data["placements"] if p["pod"] == victim)["node"] is None


def test_statefulset_pod_is_recreated_under_its_name(tmp_path: Path) -> None:
    path = manifest(
        tmp_path,
        node("n1", "4"),
        workload("StatefulSet", "db", "4", "replicas: 1\n  serviceName: db", prio="low"),
        pod("urgent", "2", arrive="5s", run="1m", prio="high"),
    )
    _, result = simulate(path)
    db = [(r.pod.key, r.phase, r.created, r.started, r.replaces) for r in result.records if r.pod.name == "db-0"]
    # the preempted pod stays in the history; the new one with the same name runs once the urgent pod is done
    assert db == [
        ("default/db-0", PREEMPTED, 0.0, 0.0, None),
        ("default/db-0", RUNNING, 5.0, 65.0, "default/db-0"),
    ]
    # the urgent pod backs off after its preempting cycle at 5 s (to the 7 s flush: 5 + 1 = 6.0 s, window 6 s), but
    # once the new db-0 is rejected the active queue is empty, so Pop takes it from the backoff queue at 5 s
    assert [(t, k, p) for t, k, p, _ in history(result)] == [
        (0.0, "scheduled", "default/db-0"),
        (5.0, "preempted", "default/db-0"),
        (5.0, "nominated", "default/urgent"),
        (5.0, "scheduled", "default/urgent"),
        (65.0, "completed", "default/urgent"),
        (65.0, "scheduled", "default/db-0"),
    ]


def test_job_runs_parallelism_pods_until_completions(tmp_path: Path) -> None:
    path = manifest(
        tmp_path, node("n1", "4"), workload("Job", "batch", "2", "parallelism: 2\n  completions: 5", run="1m")
    )
    _, result = simulate(path)
    starts = [(r.pod.name, r.started, r.finished, r.phase) for r in result.records]
    assert starts == [
        ("batch-0", 0.0, 60.0, SUCCEEDED),
        ("batch-1", 0.0, 60.0, SUCCEEDED),
        ("batch-2", 60.0, 120.0, SUCCEEDED),
        ("batch-3", 60.0, 120.0, SUCCEEDED),
        ("batch-4", 120.0, 180.0, SUCCEEDED),  # the fifth completion: only one more pod
    ]
    assert result.end_time == 180.0


def test_job_pod_preempted_is_replaced_and_still_needs_its_completions(tmp_path: Path) -> None:
    path = manifest(
        tmp_path,
        node("n1", "4"),
        workload("Job", "train", "3", "parallelism: 1\n  completions: 2", run="100s", prio="low"),
        pod("urgent", "2", arrive="50s", run="30s", prio="high"),
    )
    _, result = simulate(path)
    rows = [(r.pod.name, r.phase, r.started, r.finished, r.replaces) for r in result.records]
    assert rows == [
        ("train-0", PREEMPTED, 0.0, 50.0, None),
        # popped from the backoff queue at 50 s (nothing else is active), not at its 1 s backoff's end
        ("urgent", SUCCEEDED, 50.0, 80.0, None),
        ("train-1", SUCCEEDED, 80.0, 180.0, "default/train-0"),
        ("train-2", SUCCEEDED, 180.0, 280.0, None),
    ]


def test_work_queue_job_stops_after_the_first_success(tmp_path: Path) -> None:
    path = manifest(tmp_path, node("n1", "8"), workload("Job", "q", "1", "parallelism: 2", run="10s"))
    _, result = simulate(path)
    assert [(r.pod.name, r.phase) for r in result.records] == [("q-0", SUCCEEDED), ("q-1", SUCCEEDED)]


def test_deployment_run_duration_is_ignored_with_a_warning(tmp_path: Path) -> None:
    path = manifest(tmp_path, node("n1", "4"), workload("Deployment", "web", "1", "replicas: 2", run="1m"))
    _, result = simulate(path)
    assert [r.phase for r in result.records] == [RUNNING, RUNNING]
    assert result.warnings == [
        "Deployment default/web: packsched.io/run-duration ignored: its pods restart (restartPolicy Always) "
        "and never complete; they run until preempted or until the simulation ends"
    ]


def test_replacement_name_skips_a_name_already_taken(tmp_path: Path) -> None:
    path = manifest(
        tmp_path,
        node("n1", "4"),
        workload("ReplicaSet", "rs", "2", "replicas: 1", prio="low"),
        pod("rs-1", "1", prio="low"),
        pod("urgent", "3", arrive="1s", prio="high"),
    )
    _, result = simulate(path)
    created = [(r.pod.name, r.replaces) for r in result.records if r.replaces]
    assert created == [("rs-2", "default/rs-0")]


# -- the command line ------------------------------------------------------------------------------------


def test_bad_annotations_are_input_errors_with_field_paths(tmp_path: Path) -> None:
    path = manifest(
        tmp_path,
        node("n1"),
        pod("p", "1", arrive="soon", run="5 minutes"),
        workload("Job", "j", "1", "completions: 1", run="-1m"),
    )
    result = runner.invoke(app, ["simulate", str(path)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert lines == [
        f"error: {path}: document 4: metadata.annotations[\"packsched.io/arrival-time\"]: Invalid value: 'soon': "
        'must be a duration such as "90s", "5m" or "1h2m3.5s", or a number of seconds',
        f'error: {path}: document 4: metadata.annotations["packsched.io/run-duration"]: Invalid value: '
        '\'5 minutes\': must be a duration such as "90s", "5m" or "1h2m3.5s", or a number of seconds',
        f'error: {path}: document 5: spec.template.metadata.annotations["packsched.io/run-duration"]: '
        "Invalid value: '-1m': must not be negative",
    ]
    assert "Traceback" not in result.output
    checked = runner.invoke(app, ["validate", str(path)])
    assert checked.exit_code == 2
    assert [line for line in checked.output.splitlines() if line.startswith("error:")] == lines


def test_simulate_json_has_events_and_final_phases(tmp_path: Path) -> None:
    path = manifest(tmp_path, node("n1", "4"), pod("a", "3", run="1m"), pod("b", "3"))
    result = runner.invoke(app, ["simulate", str(path), "-o", "json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    assert data["schema"] == "packsched.simulate/v1"
    assert [
        (p["pod"], p["phase"], p["node"], p["created"], p["started"], p["finished"]) for p in data["placements"]
    ] == [
        ("default/a", "Succeeded", "n1", 0.0, 0.0, 60.0),
        ("default/b", "Running", "n1", 0.0, 60.0, None),
    ]
    assert data["summary"] == {"pods": 2, "succeeded": 1, "running": 1}
    assert {"time": 60.0, "kind": "completed", "pod": "default/a", "node": "n1", "by": None, "reason": None} in data[
        "events"
    ]


def test_simulate_table_shows_the_events(tmp_path: Path) -> None:
    path = manifest(tmp_path, node("n1", "4"), pod("a", "3", run="90s"), pod("b", "3"))
    result = runner.invoke(app, ["simulate", str(path), "--limit", "2"])
    assert result.exit_code == 0, result.output
    assert "Events (4)" in result.output
    assert "1m30s" not in result.output  # the completion is the 3rd event: past the limit
    assert "... 2 more events" in result.output
    full = runner.invoke(app, ["simulate", str(path)])
    assert "1m30s" in full.output and "completed" in full.output


def test_explain_a_pod_created_during_the_simulation(tmp_path: Path) -> None:
    path = manifest(
        tmp_path,
        node("n1", "4"),
        workload("Deployment", "web", "2", "replicas: 2", prio="low"),
        pod("urgent", "2", arrive="10s", prio="high"),
    )
    result = runner.invoke(app, ["explain", str(path), "--pod", "default/web-2", "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["selected"] is None and data["reason"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    missing = runner.invoke(app, ["explain", str(path), "--pod", "default/web-3"])
    assert missing.exit_code == 2
    assert "no pod default/web-3 in the manifests or the simulation" in missing.output
