"""``packsched gangs`` and ``compare`` on kube-scheduler 1.35's own gangs when a gang does not fit at once.

Two nodes of 8 GPUs; a plain pod holds one node's 8 GPUs for 10 minutes; a Workload's gang of 3 workers x 4 GPUs
(``minCount: 3``) arrives at 0s, and a pod naming the same pod group under another replica key; one pod of the
Workload's ``basic`` pod group, one naming a Workload that does not exist. With GangScheduling
two workers fit and wait at Permit, time out after 5 minutes twice, and the gang is bound at 10m when the plain pod
ends; pod by pod (the gates off) the two fitting workers run at once and the third joins at 10m.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from packsched.cli.main import app

EX = Path(__file__).resolve().parents[2] / "examples" / "gangs"
runner = CliRunner()

MANIFEST = """apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  allocatable: {cpu: "96", memory: 1000Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
status:
  allocatable: {cpu: "96", memory: 1000Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: blocker
  namespace: default
  annotations: {packsched.io/run-duration: 10m}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: x
    resources:
      requests: {nvidia.com/gpu: "8"}
      limits: {nvidia.com/gpu: "8"}
---
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: train, namespace: default}
spec:
  podGroups:
  - name: workers
    policy: {gang: {minCount: 3}}
  - name: helpers
    policy: {basic: {}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: default}
spec:
  parallelism: 3
  completions: 3
  template:
    metadata:
      annotations: {packsched.io/run-duration: 1h}
    spec:
      workloadRef: {name: train, podGroup: workers}
      restartPolicy: Never
      containers:
      - name: worker
        image: x
        resources:
          requests: {nvidia.com/gpu: "4"}
          limits: {nvidia.com/gpu: "4"}
---
apiVersion: v1
kind: Pod
metadata: {name: helper, namespace: default}
spec:
  workloadRef: {name: train, podGroup: helpers}
  containers:
  - {name: c, image: x}
---
apiVersion: v1
kind: Pod
metadata: {name: lost, namespace: default}
spec:
  workloadRef: {name: nowhere, podGroup: workers}
  containers:
  - {name: c, image: x}
---
apiVersion: v1
kind: Pod
metadata: {name: shard-a, namespace: default}
spec:
  workloadRef: {name: train, podGroup: workers, podGroupReplicaKey: r1}
  containers:
  - {name: c, image: x}
"""

GATES_OFF = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
---
apiVersion: packsched.io/v1alpha1
kind: PackschedConfiguration
kubeVersion: "1.35"
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    workload = tmp_path / "blocked.yaml"
    workload.write_text(MANIFEST)
    off = tmp_path / "gates-off.yaml"
    off.write_text(GATES_OFF)
    return workload, off


def gangs(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["gangs", *args, "-o", "json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_a_gang_held_at_permit_until_it_fits(files: tuple[Path, Path]) -> None:
    workload, _ = files
    data = gangs(str(workload), "--config", str(EX / "config-upstream-1.35.yaml"))
    # the basic pod group "helpers" is no gang; the replica key r1 is a gang of its own
    assert [(g["name"], g["members"]) for g in data["gangs"]] == [("train/workers", 3), ("train/workers/r1", 1)]
    train, r1 = data["gangs"]
    assert (train["started"], train["wait"], train["permit_timeouts"]) == (600.0, 600.0, 4)
    # two workers x 4 GPUs held at Permit for two 5-minute waits
    assert train["gpu_seconds_held_at_permit"] == 2 * 4 * 600.0
    assert train["gpu_seconds_in_partial_gangs"] == 0.0
    assert (r1["started"], r1["running"]) == (None, 0)  # one pod of 3: held at PreEnqueue
    assert data["warnings"] == []


def test_the_same_pod_by_pod(files: tuple[Path, Path]) -> None:
    workload, off = files
    data = gangs(str(workload), "--config", str(off))
    train = data["gangs"][0]
    assert (train["started"], train["gpu_seconds_held_at_permit"], train["permit_timeouts"]) == (600.0, 0.0, 0)
    # 8 GPUs of two workers bound from 0s to 10m, then 4 of the last one from 1h (the first two finished) to 1h10m
    assert train["gpu_seconds_in_partial_gangs"] == 8 * 600.0 + 4 * 600.0
    assert "have no effect" in data["warnings"][0]


def test_compare_reports_upstream_gangs(files: tuple[Path, Path]) -> None:
    workload, off = files
    result = runner.invoke(
        app,
        [
            "compare",
            str(workload),
            "--config",
            str(EX / "config-upstream-1.35.yaml"),
            "--config",
            str(off),
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    results = json.loads(result.stdout)["results"]
    gang, pod_by_pod = results["config-upstream-1.35"], results["gates-off"]
    assert (gang["jobs_started"], gang["jobs_never_started"]) == (1, 1)
    assert gang["gpu_hours_held_at_permit"] == round(4800 / 3600, 6)
    assert (gang["gpu_hours_in_partial_gangs"], pod_by_pod["gpu_hours_held_at_permit"]) == (0.0, 0.0)
    assert pod_by_pod["gpu_hours_in_partial_gangs"] == 2.0


def test_no_gang_at_all_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "plain.yaml"
    path.write_text(MANIFEST.split("---")[0])
    result = runner.invoke(app, ["gangs", str(path)])
    assert result.exit_code == 2
    assert "the manifests define no gang" in result.output


def test_explain_shows_the_gang_of_a_member_only(files: tuple[Path, Path]) -> None:
    """A pod of a basic pod group is in no gang; a pod naming a missing Workload is shown with it, as missing."""
    workload, _ = files
    cfg = ["--config", str(EX / "config-upstream-1.35.yaml"), "-o", "json"]

    def group_of(pod: str) -> Any:
        result = runner.invoke(app, ["explain", str(workload), "--pod", pod, *cfg])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout).get("group")

    assert group_of("default/helper") is None
    lost = group_of("default/lost")
    assert (lost["name"], lost["kind"], lost["exists"], lost["min_member"]) == (
        "nowhere/workers",
        "Workload",
        False,
        None,
    )
    shard = group_of("default/shard-a")
    assert (shard["name"], shard["exists"], shard["min_member"], shard["bound"]) == ("train/workers/r1", True, 3, 0)


def test_in_1_36_a_gang_that_does_not_fit_holds_nothing_at_permit(tmp_path: Path) -> None:
    """The same gang as a 1.36 PodGroup: the pod-group cycle places the three together or not at all, so nothing
    waits at Permit; the gang starts at 10m all the same."""
    text = MANIFEST[: MANIFEST.index("---\napiVersion: scheduling.k8s.io/v1alpha1")]
    text += """---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: train, namespace: default}
spec:
  schedulingPolicy: {gang: {minCount: 3}}
"""
    job = MANIFEST[
        MANIFEST.index("---\napiVersion: batch/v1") : MANIFEST.index(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: helper"
        )
    ]
    text += job.replace("workloadRef: {name: train, podGroup: workers}", "schedulingGroup: {podGroupName: train}")
    path = tmp_path / "blocked-1.36.yaml"
    path.write_text(text)
    data = gangs(str(path), "--config", str(EX / "config-upstream-1.36.yaml"))
    (train,) = data["gangs"]
    assert (train["name"], train["api_version"], train["members"]) == ("train", "scheduling.k8s.io/v1alpha2", 3)
    assert (train["started"], train["gpu_seconds_held_at_permit"], train["permit_timeouts"]) == (600.0, 0.0, 0)
    assert train["gpu_seconds_in_partial_gangs"] == 0.0
