"""DaemonSets, CronJobs, LimitRanges and ResourceQuotas in the simulator (issue 24): a DaemonSet follows the
nodes a scenario adds and removes, a CronJob creates Jobs at its times, and admission applies at creation, with
cases taken from upstream's LimitRanger and ResourceQuota admission tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

from packsched.api.manifests import load_manifests
from packsched.config.loader import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import REJECTED, RUNNING, SUCCEEDED, SimResult, run_simulation
from packsched.sim.scenario import load_scenario, run_scenario

NODES = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def _simulate(tmp: Path, text: str) -> SimResult:
    _write(tmp, "nodes.yaml", NODES)
    _write(tmp, "objects.yaml", text)
    registry = in_tree_registry()
    return run_simulation(load_manifests([str(tmp)]), default_config(set(registry)), registry)


def _phases(result: SimResult) -> dict[str, tuple[str, str | None]]:
    return {r.pod.key: (r.phase, r.node) for r in result.records}


def _pod(name: str, resources: str = "{}", extra: str = "") -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: team{extra}}}
spec:
  containers: [{{name: c, image: x, resources: {resources}}}]
"""


# -- DaemonSet ------------------------------------------------------------------------------------------------------

DAEMONSET = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      nodeSelector: {agent: "yes"}
      containers: [{name: a, image: agent:1, resources: {requests: {cpu: "1"}}}]
"""


def test_each_daemonset_pod_is_scheduled_onto_its_node(tmp_path: Path) -> None:
    result = _simulate(tmp_path, DAEMONSET.replace('      nodeSelector: {agent: "yes"}\n', ""))
    assert _phases(result) == {"kube-system/agent-n1": (RUNNING, "n1"), "kube-system/agent-n2": (RUNNING, "n2")}


def test_a_daemonset_gains_and_loses_pods_as_a_scenario_changes_the_nodes(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "base/nodes.yaml",
        NODES.replace("metadata: {name: n1}", "metadata: {name: n1, labels: {agent: 'yes'}}"),
    )
    _write(tmp_path, "base/ds.yaml", DAEMONSET)
    scenario = _write(
        tmp_path,
        "scenario.yaml",
        """
        apiVersion: packsched.io/v1alpha1
        kind: Scenario
        metadata: {name: daemons}
        spec:
          base: [base/]
          steps:
          - name: two nodes join
            at: 10s
            addNodes:
              count: 2
              namePrefix: x-
              template:
                metadata: {labels: {agent: "yes"}}
                status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
          - name: one of them fails
            at: 20s
            removeNodes: {nodes: [x-0]}
          - name: n2 is labelled
            at: 30s
            cordon: {nodes: [n2]}
        """,
    )
    reports = run_scenario(load_scenario(str(scenario)), in_tree_registry())
    assert [r.running for r in reports] == [1, 3, 2, 2]
    # the cordon does not add a pod to n2 (its label is still missing), and the one on x-0 is not made again


def test_a_node_given_a_noexecute_taint_loses_its_daemon_pod(tmp_path: Path) -> None:
    from packsched.api.objects import Taint
    from packsched.sim.engine import DELETED, Simulation

    _write(tmp_path, "nodes.yaml", NODES)
    _write(tmp_path, "ds.yaml", DAEMONSET.replace('      nodeSelector: {agent: "yes"}\n', ""))
    registry = in_tree_registry()
    sim = Simulation(load_manifests([str(tmp_path)]), default_config(set(registry)), registry)
    sim.run_until(1.0)
    node = sim.snapshot.nodes[sim.snapshot.index["n2"]]
    sim.set_node(type(node)(**{**node.__dict__, "taints": [Taint("maintenance", "", "NoExecute")]}))
    sim.run_until(2.0)
    assert {k: r.phase for k, r in sim.records.items()} == {
        "kube-system/agent-n1": RUNNING,
        "kube-system/agent-n2": DELETED,
    }


# -- CronJob --------------------------------------------------------------------------------------------------------

CRONJOB = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: backup, namespace: team}
spec:
  schedule: "*/15 * * * *"
  POLICY
  jobTemplate:
    spec:
      template:
        metadata: {annotations: {packsched.io/run-duration: RUN}}
        spec:
          restartPolicy: Never
          containers: [{name: b, image: x, resources: {requests: {cpu: "1"}}}]
"""
# the span ends at 1h: the latest arrival of the manifests' pods
LATE_POD = _pod("late", "{}", ", annotations: {packsched.io/arrival-time: 1h}")


def _cron(policy: str = "", run: str = "5m") -> str:
    return CRONJOB.replace("POLICY", policy).replace("RUN", run) + LATE_POD


def _starts(result: SimResult) -> list[tuple[str, float | None]]:
    return [(r.pod.name, r.started) for r in result.records if r.pod.name.startswith("backup")]


def test_a_cronjob_creates_a_job_at_each_scheduled_time_of_the_span(tmp_path: Path) -> None:
    result = _simulate(tmp_path, _cron())
    assert _starts(result) == [
        ("backup-15-0", 900.0),
        ("backup-30-0", 1800.0),
        ("backup-45-0", 2700.0),
        ("backup-60-0", 3600.0),
    ]
    assert {r.phase for r in result.records if r.pod.name.startswith("backup")} == {SUCCEEDED}


def test_a_cronjob_runs_its_first_time_even_past_the_span(tmp_path: Path) -> None:
    result = _simulate(tmp_path, CRONJOB.replace("POLICY", "").replace("RUN", "5m"))
    assert _starts(result) == [("backup-15-0", 900.0)]


def test_suspend_makes_no_job(tmp_path: Path) -> None:
    assert _starts(_simulate(tmp_path, _cron("suspend: true"))) == []


def test_forbid_starts_a_held_back_run_when_the_earlier_job_finishes(tmp_path: Path) -> None:
    # each Job runs 20m: the 30m run waits for the 15m Job (done at 35m), the 45m run is skipped for the 30m run
    # that started at 35m and ends at 55m, when the 45m run starts; the 60m run waits for it until 75m
    result = _simulate(tmp_path, _cron("concurrencyPolicy: Forbid", "20m"))
    assert _starts(result) == [
        ("backup-15-0", 900.0),
        ("backup-30-0", 2100.0),
        ("backup-45-0", 3300.0),
        ("backup-60-0", 4500.0),
    ]


def test_forbid_with_a_starting_deadline_drops_a_late_run(tmp_path: Path) -> None:
    result = _simulate(tmp_path, _cron("concurrencyPolicy: Forbid\n  startingDeadlineSeconds: 60", "20m"))
    # the 30m run could start at 35m, 5m late: past its 60 s deadline; the 45m run starts at 45m
    assert _starts(result) == [("backup-15-0", 900.0), ("backup-45-0", 2700.0)]


def test_replace_deletes_the_running_job(tmp_path: Path) -> None:
    result = _simulate(tmp_path, _cron("concurrencyPolicy: Replace", "20m"))
    phases = {r.pod.name: r.phase for r in result.records if r.pod.name.startswith("backup")}
    assert phases == {
        "backup-15-0": "Deleted",
        "backup-30-0": "Deleted",
        "backup-45-0": "Deleted",
        "backup-60-0": SUCCEEDED,
    }


# -- LimitRange (upstream: plugin/pkg/admission/limitranger/admission_test.go) --------------------------------------

LIMIT_RANGE = """
apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: team}
spec:
  limits:
  - type: Container
    default: {cpu: 750m, memory: 256Mi}
    defaultRequest: {cpu: 500m, memory: 128Mi}
    max: {cpu: "2"}
    min: {cpu: 100m}
"""


def test_limit_range_defaults_what_a_container_leaves_out(tmp_path: Path) -> None:
    result = _simulate(
        tmp_path,
        LIMIT_RANGE
        + _pod("bare")  # both defaults
        + _pod("limited", "{limits: {cpu: 1500m}}")  # the API server made the request from the limit
        + _pod("requested", "{requests: {memory: 1Gi}, limits: {memory: 2Gi}}"),
    )
    by_name = {r.pod.name: r for r in result.records}
    bare = by_name["bare"].pod.containers[0]
    assert (bare.requests, bare.limits) == ({"cpu": 500, "memory": 128 * 2**20}, {"cpu": 750, "memory": 256 * 2**20})
    limited = by_name["limited"].pod.containers[0]
    assert (limited.requests["cpu"], limited.limits["cpu"]) == (1500, 1500)
    requested = by_name["requested"].pod.containers[0]
    assert (requested.requests["memory"], requested.limits["memory"]) == (2**30, 2 * 2**30)
    assert by_name["bare"].info.requests["cpu"] == 500  # the scheduler sees the defaulted request
    assert {r.phase for r in result.records} == {RUNNING}


def test_limit_range_refuses_a_pod_over_max_or_under_min(tmp_path: Path) -> None:
    result = _simulate(
        tmp_path,
        LIMIT_RANGE + _pod("big", "{limits: {cpu: '3'}}") + _pod("tiny", "{requests: {cpu: 50m}}"),
    )
    assert [(r.pod.name, r.phase, r.reason) for r in result.records] == [
        ("big", REJECTED, 'pods "big" is forbidden: maximum cpu usage per Container is 2, but limit is 3'),
        ("tiny", REJECTED, 'pods "tiny" is forbidden: minimum cpu usage per Container is 100m, but request is 50m'),
    ]
    assert [e.kind for e in result.events] == ["rejected", "rejected"]


def test_a_pod_read_back_from_a_cluster_is_not_admitted_again(tmp_path: Path) -> None:
    result = _simulate(
        tmp_path, LIMIT_RANGE + _pod("old", "{limits: {cpu: '3'}}", ", creationTimestamp: '2024-05-01T10:00:00Z'")
    )
    assert [(r.pod.name, r.phase) for r in result.records] == [("old", RUNNING)]


# -- ResourceQuota (upstream: plugin/pkg/admission/resourcequota/admission_test.go) --------------------------------

QUOTA = """
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: team}
spec:
  hard: {requests.cpu: "1", limits.memory: 2Gi, pods: "3"}
"""
SMALL = "{requests: {cpu: 400m}, limits: {memory: 512Mi}}"


def test_a_pod_over_quota_is_not_created(tmp_path: Path) -> None:
    result = _simulate(tmp_path, QUOTA + _pod("a", SMALL) + _pod("b", SMALL) + _pod("c", SMALL))
    assert [(r.pod.name, r.phase) for r in result.records] == [("a", RUNNING), ("b", RUNNING), ("c", REJECTED)]
    assert result.records[2].reason == (
        'pods "c" is forbidden: exceeded quota: compute, requested: requests.cpu=400m, used: requests.cpu=800m, '
        "limited: requests.cpu=1"
    )


def test_a_quota_on_limits_needs_every_container_to_give_its_limit(tmp_path: Path) -> None:
    result = _simulate(tmp_path, QUOTA + _pod("nolimit", "{requests: {cpu: 100m}}"))
    assert (
        result.records[0].reason
        == 'pods "nolimit" is forbidden: failed quota: compute: must specify limits.memory for: c'
    )


def test_quota_freed_by_a_finished_pod_admits_a_later_one(tmp_path: Path) -> None:
    done = _pod("done", SMALL, ", annotations: {packsched.io/run-duration: 10s}").replace("SMALL", SMALL)
    later = _pod(
        "later", "{requests: {cpu: 700m}, limits: {memory: 512Mi}}", ", annotations: {packsched.io/arrival-time: 20s}"
    )
    early = _pod(
        "early", "{requests: {cpu: 700m}, limits: {memory: 512Mi}}", ", annotations: {packsched.io/arrival-time: 5s}"
    )
    result = _simulate(tmp_path, QUOTA + done + early + later)
    assert [(r.pod.name, r.phase) for r in result.records] == [
        ("done", SUCCEEDED),
        ("early", REJECTED),
        ("later", RUNNING),
    ]


def test_limit_range_defaults_count_against_quota(tmp_path: Path) -> None:
    """The LimitRanger runs before the ResourceQuota plugin: a pod that says nothing gets the defaults, which
    satisfy the quota's must-specify and count against it."""
    result = _simulate(tmp_path, LIMIT_RANGE + "---\n" + QUOTA + _pod("a") + _pod("b") + _pod("c"))
    assert [(r.pod.name, r.phase) for r in result.records] == [("a", RUNNING), ("b", RUNNING), ("c", REJECTED)]
