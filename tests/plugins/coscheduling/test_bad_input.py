"""Bad PodGroups and bad CoschedulingArgs through ``packsched simulate``: one error line naming the file and the
field, exit code 2, no traceback; and the gangs that cannot start stay pending with upstream's reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from packsched.cli.main import app

runner = CliRunner()

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110", nvidia.com/gpu: "8"}}
"""


def group(spec: str, name: str = "g") -> str:
    return f"""---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: {name}, namespace: ns}}
spec: {spec}
"""


def member(name: str, group_name: str = "g") -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ns, labels: {{scheduling.x-k8s.io/pod-group: {group_name}}}}}
spec: {{containers: [{{name: c, resources: {{requests: {{nvidia.com/gpu: "1"}}}}}}]}}
"""


def config(args: str) -> str:
    return f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{{name: Coscheduling}}]
      disabled: [{{name: PrioritySort}}]
  pluginConfig:
  - name: Coscheduling
    args: {args}
"""


def simulate(tmp_path: Path, manifests: str, args: str = "{}", *extra: str) -> tuple[int, str]:
    (tmp_path / "cluster.yaml").write_text(NODE + manifests)
    (tmp_path / "config.yaml").write_text(config(args))
    result = runner.invoke(
        app, ["simulate", str(tmp_path / "cluster.yaml"), "--config", str(tmp_path / "config.yaml"), *extra]
    )
    return result.exit_code, result.output


def assert_one_error(code: int, output: str, *needles: str) -> None:
    assert code == 2, output
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    for needle in needles:
        assert needle in errors[0], output


BAD_GROUPS = [
    pytest.param(
        "{minMember: 0}",
        "spec.minMember: Invalid value: 0: spec.minMember in body should be greater than or equal to 1",
        id="minMember 0",
    ),
    pytest.param(
        "{scheduleTimeoutSeconds: 30}",
        "spec.minMember: Required value",
        id="minMember missing",
    ),
    pytest.param('{minMember: "3"}', "spec.minMember: must be an integer, got string '3'", id="minMember a string"),
    pytest.param(
        "{minMember: 2, scheduleTimeoutSeconds: 1.5}",
        "spec.scheduleTimeoutSeconds: must be an integer, got number 1.5",
        id="scheduleTimeoutSeconds a fraction",
    ),
    pytest.param(
        "{minMember: 2, scheduleTimeoutSeconds: 1m}",
        "spec.scheduleTimeoutSeconds: must be an integer, got string '1m'",
        id="scheduleTimeoutSeconds a duration",
    ),
    pytest.param("{minMember: 2, minMembers: 3}", "spec.minMembers: unknown field", id="unknown spec field"),
]


@pytest.mark.parametrize(("spec", "message"), BAD_GROUPS)
def test_a_bad_pod_group_is_one_clear_error(tmp_path: Path, spec: str, message: str) -> None:
    code, output = simulate(tmp_path, group(spec) + member("a") + member("b"))
    assert_one_error(code, output, "cluster.yaml: document 2: ", message)


BAD_ARGS = [
    pytest.param(
        "{permitWaitingTimeSeconds: -1}",
        "permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0",
        id="negative permitWaitingTimeSeconds",
    ),
    pytest.param(
        "{podGroupRejectPercentage: 101}",
        "podGroupRejectPercentage: Invalid value: 101: must be between 0 and 100",
        id="podGroupRejectPercentage 101",
    ),
    pytest.param(
        "{podGroupBackoffSeconds: -5}",
        "podGroupBackoffSeconds: Invalid value: -5: must be greater than 0",
        id="negative podGroupBackoffSeconds",
    ),
    pytest.param(
        "{permitWaitingTime: 5}",
        "unknown field(s) ['permitWaitingTime']; the fields are permitWaitingTimeSeconds, podGroupBackoffSeconds, "
        "podGroupRejectPercentage",
        id="unknown field",
    ),
    pytest.param(
        "{permitWaitingTimeSeconds: 1m}",
        "permitWaitingTimeSeconds: Invalid value: '1m': must be an integer",
        id="permitWaitingTimeSeconds a duration",
    ),
]


@pytest.mark.parametrize(("args", "message"), BAD_ARGS)
def test_bad_coscheduling_args_are_one_clear_error(tmp_path: Path, args: str, message: str) -> None:
    code, output = simulate(tmp_path, group("{minMember: 1}") + member("a"), args)
    assert_one_error(code, output, "config.yaml: profiles[0].pluginConfig: plugin 'Coscheduling': ", message)


def placements(tmp_path: Path, manifests: str) -> dict[str, dict[str, object]]:
    code, output = simulate(tmp_path, manifests, "{}", "-o", "json")
    assert code == 0, output
    return {p["pod"]: p for p in json.loads(output)["placements"]}


def test_a_pod_naming_a_missing_pod_group_stays_pending(tmp_path: Path) -> None:
    pods = placements(tmp_path, group("{minMember: 1}", "other") + member("lost", "nowhere"))
    assert pods["ns/lost"]["phase"] == "Pending"
    assert "PodGroup not found" in str(pods["ns/lost"]["reason"])


def test_min_member_above_the_number_of_pods_stays_pending(tmp_path: Path) -> None:
    pods = placements(tmp_path, group("{minMember: 3}") + member("a") + member("b"))
    for name in ("ns/a", "ns/b"):
        assert pods[name]["phase"] == "Pending"
        assert "cannot find enough sibling pods, current pods number: 2, minMember of group: 3" in str(
            pods[name]["reason"]
        )
