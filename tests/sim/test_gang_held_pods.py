"""A big gang's pods held at PreEnqueue: when one more pod of the group arrives, GangScheduling's PreEnqueue is asked
once for the group, not once per held pod, and when the count has not reached minCount nothing else runs; and each
member's Permit activates its siblings once per instant. The history is the same as when every held pod is asked
(the plugin's ``pre_enqueue_per_group`` off), in kube-scheduler 1.37 (pod-group cycles) and 1.35 (one pod at a
time)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from packsched.cli.main import app
from packsched.framework.podinfo import PodInfo
from packsched.framework.status import Status
from packsched.plugins.gangscheduling import gang_scheduling
from packsched.plugins.gangscheduling.gang_scheduling import _GangScheduling

EX = Path(__file__).resolve().parents[2] / "examples" / "gangs"
runner = CliRunner()
PODS = 16
MIN_COUNT = 14

NODES = """apiVersion: v1
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
"""

GROUP = {
    37: """---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: train, namespace: default}}
spec:
  schedulingPolicy: {{gang: {{minCount: {min_count}}}}}
""",
    35: """---
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {{name: train, namespace: default}}
spec:
  podGroups:
  - name: workers
    policy: {{gang: {{minCount: {min_count}}}}}
""",
}
REF = {37: "schedulingGroup: {podGroupName: train}", 35: "workloadRef: {name: train, podGroup: workers}"}


def pod(i: int, minor: int, gated: bool) -> str:
    # one pod a second; a gated one keeps a scheduling gate of its own (never lifted): SchedulingGates holds it
    gate = "\n  schedulingGates: [{name: example.com/hold}]" if gated else ""
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: w-{i:02d}
  namespace: default
  annotations: {{packsched.io/arrival-time: {i}s, packsched.io/run-duration: 1h}}
spec:
  {REF[minor]}{gate}
  restartPolicy: Never
  containers:
  - name: c
    image: x
    resources:
      requests: {{cpu: "1", nvidia.com/gpu: "1"}}
      limits: {{nvidia.com/gpu: "1"}}
"""


def simulate(tmp_path: Path, minor: int, gated: int) -> tuple[dict[str, Any], int]:
    """The simulation's JSON and how many times GangScheduling's PreEnqueue ran."""
    manifest = tmp_path / f"gang-{minor}-{gated}.yaml"
    pods = "".join(pod(i, minor, i < gated) for i in range(PODS))
    manifest.write_text(NODES + GROUP[minor].format(min_count=MIN_COUNT) + pods)
    calls = 0
    original = _GangScheduling.pre_enqueue

    def counted(self: _GangScheduling, info: PodInfo) -> Status:
        nonlocal calls
        calls += 1
        return original(self, info)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_GangScheduling, "pre_enqueue", counted)
        result = runner.invoke(
            app, ["simulate", str(manifest), "--config", str(EX / f"config-upstream-1.{minor}.yaml"), "-o", "json"]
        )
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data, calls


@pytest.mark.parametrize(("minor", "gated"), [(37, 0), (37, 2), (35, 2)])
def test_a_gang_arriving_pod_by_pod_asks_pre_enqueue_once_per_arrival(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minor: int, gated: int
) -> None:
    once, calls = simulate(tmp_path, minor, gated)
    monkeypatch.setattr(gang_scheduling._GangScheduling, "pre_enqueue_per_group", False)
    every, calls_every = simulate(tmp_path, minor, gated)
    assert once["events"] == every["events"]
    assert once["placements"] == every["placements"]
    bound = sum(1 for p in once["placements"] if p["node"] is not None)
    # two pods held by their own gate: 1.37 holds the group's whole entity back (nothing placed), 1.35 places the
    # other 14 (minCount counts every pod of the group); without the gates all 16 run
    assert bound == (PODS if not gated else 0 if minor == 37 else PODS - gated)
    if minor == 37 and not gated:
        # each arrival asks once for the group (plus the pod's own PreEnqueue), where asking every held pod costs
        # 1 + 2 + ... + 13 more before the 14th arrival lets the group in
        assert calls <= 3 * PODS < calls_every
        assert calls_every - calls >= sum(range(1, MIN_COUNT - 1))
