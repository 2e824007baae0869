"""`packsched quotas`, and the ElasticQuota warnings of `validate` and `simulate`, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from packsched.cli.main import app

EX = Path(__file__).resolve().parents[2] / "examples"
runner = CliRunner()

NODE = """apiVersion: v1
kind: Node
metadata: {name: n}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
"""


def quota(name: str, ns: str, spec: str) -> str:
    return f"""---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {{name: {name}, namespace: {ns}}}
spec: {spec}
"""


def pod(name: str, ns: str, requests: str) -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {ns}}}
spec: {{containers: [{{name: c, resources: {{requests: {requests}}}}}]}}
"""


def validate(tmp_path: Path, text: str) -> tuple[int, str]:
    f = tmp_path / "m.yaml"
    f.write_text(text)
    result = runner.invoke(app, ["validate", str(f)])
    return result.exit_code, result.output


def test_validate_warns_about_a_max_that_omits_a_requested_resource(tmp_path: Path) -> None:
    code, output = validate(
        tmp_path,
        NODE
        + quota("q", "team", "{min: {cpu: 2, memory: 1Gi}, max: {cpu: 4}}")
        + pod("p", "team", "{cpu: 1, memory: 1Gi}"),
    )
    assert code == 0
    assert "pod team/p request(s) memory, which ElasticQuota team/q's max does not list" in output
    assert "bounds memory at 0" in output
    assert "min memory 1Gi is greater than max 0" in output


def test_validate_warns_about_min_over_max_shared_namespace_and_sum_of_mins(tmp_path: Path) -> None:
    code, output = validate(
        tmp_path,
        NODE
        + quota("a", "team", "{min: {cpu: 6}, max: {cpu: 4}}")
        + quota("b", "team", "{min: {cpu: 1}}")
        + quota("c", "other", "{min: {cpu: 3}}"),
    )
    assert code == 0
    assert "ElasticQuota team/a: min cpu 6 is greater than max 4" in output
    assert "namespace team has 2 ElasticQuotas (a, b)" in output
    assert "mins add up to 9 cpu, more than the cluster's 8" in output


def test_validate_warns_when_no_min_lists_a_requested_resource(tmp_path: Path) -> None:
    _, output = validate(tmp_path, NODE + quota("q", "team", "{min: {cpu: 4}}") + pod("p", "team", "{memory: 1Gi}"))
    assert "request memory, but no quota's min lists it" in output


def test_validate_is_quiet_about_a_sound_setup() -> None:
    result = runner.invoke(app, ["validate", str(EX / "capacity-scheduling-demo")])
    assert result.exit_code == 0
    assert "ElasticQuota" not in result.output


def test_validate_and_simulate_say_when_no_profile_enforces_the_quotas(tmp_path: Path) -> None:
    demo = EX / "capacity-scheduling-demo"
    result = runner.invoke(app, ["validate", str(demo / "cluster.yaml"), str(EX / "docs-two-node" / "config.yaml")])
    assert "no profile of the configuration enables CapacityScheduling" in result.output
    result = runner.invoke(app, ["simulate", str(demo / "cluster.yaml"), str(demo / "workloads.yaml"), "-o", "json"])
    assert any("not enforced" in w for w in json.loads(result.stdout)["warnings"])


def test_quotas_reports_min_used_max_and_borrowing() -> None:
    result = runner.invoke(
        app,
        [
            "quotas",
            str(EX / "gpu-quotas" / "cluster.yaml"),
            str(EX / "gpu-quotas" / "workloads.yaml"),
            "--config",
            str(EX / "gpu-quotas" / "config-spread.yaml"),
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema"] == "packsched.quotas/v1"
    rows = {q["namespace"]: q for q in data["quotas"]}
    research, prod = rows["research"], rows["prod"]
    # spreading: prod's second 8-GPU pod finds no node to empty, and the Deployment replaces research's three
    # preempted pods on the GPUs left free, so research ends at its max while prod stays under its min
    assert (research["min"]["nvidia.com/gpu"], research["used"]["nvidia.com/gpu"]) == (16, 24)
    assert research["max"]["nvidia.com/gpu"] == 24
    assert research["borrowed"] == {"nvidia.com/gpu": 8}
    assert prod["unused_min"]["nvidia.com/gpu"] == 8
    assert (research["running"], research["pending"], research["preempted"]) == (12, 0, 3)
    assert (prod["running"], prod["pending"]) == (1, 1)
    assert research["status_used"]["nvidia.com/gpu"] == 24


def test_quotas_defaults_to_capacity_schedulings_profile_and_reads_folders() -> None:
    result = runner.invoke(app, ["quotas", str(EX / "capacity-scheduling-demo"), "-o", "json"])
    assert result.exit_code == 0, result.output
    rows = {q["namespace"]: q for q in json.loads(result.stdout)["quotas"]}
    assert rows["quota1"]["used"] == {"cpu": 4000} and rows["quota2"]["used"] == {"cpu": 4000}
    table = runner.invoke(app, ["quotas", str(EX / "capacity-scheduling-demo")])
    assert table.exit_code == 0 and "quota1/quota1" in table.output


def test_quotas_without_any_quota_is_an_input_error() -> None:
    result = runner.invoke(app, ["quotas", str(EX / "docs-two-node" / "cluster.yaml")])
    assert result.exit_code == 2
    assert "no ElasticQuota" in result.output


def test_a_bad_quota_quantity_names_file_and_field(tmp_path: Path) -> None:
    code, output = validate(tmp_path, quota("q", "team", "{max: {cpu: 1.5.3}}"))
    assert code == 2
    assert "m.yaml" in output and "spec.max.cpu" in output
