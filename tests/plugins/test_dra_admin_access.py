"""Admin access to devices (DRAAdminAccess) end to end: the namespace label the API server requires of a claim or
template asking for it (``resource.kubernetes.io/admin-access: "true"``; a missing one is an input error naming the
file and field path, exit 2), a device given to an admin-access claim that stays free for everyone else, and the
gate turned off in 1.34-1.35 (the API server drops the field, the simulator says so)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import simulate_placements
from packsched.api.dra import ADMIN_NAMESPACE_MESSAGE
from packsched.cli.main import app

runner = CliRunner()

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
"""

ADMIN_NS = """
---
apiVersion: v1
kind: Namespace
metadata: {name: ops, labels: {resource.kubernetes.io/admin-access: "%s"}}
"""


def template(name: str, namespace: str, admin: bool) -> str:
    extra = ", adminAccess: true" if admin else ""
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly: {{deviceClassName: gpu{extra}}}
"""


def pod(name: str, namespace: str, tmpl: str) -> str:
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  containers:
  - name: c
    resources: {{claims: [{{name: g}}]}}
  resourceClaims:
  - name: g
    resourceClaimTemplateName: {tmpl}
"""


MONITOR = template("monitor", "ops", True) + pod("probe", "ops", "monitor")
WORKLOAD = template("one", "default", False) + pod("a", "default", "one") + pod("b", "default", "one")


def test_an_admin_claim_shares_the_device_it_monitors(tmp_path: Path) -> None:
    got = simulate_placements(tmp_path, CLUSTER + ADMIN_NS % "true" + WORKLOAD + MONITOR)
    assert got["default/a"] == ("n1", None)
    assert got["ops/probe"] == ("n1", None)  # the device is allocated to default/a already
    node, reason = got["default/b"]  # default/a holds the only device
    assert node is None and "cannot allocate all claims" in str(reason)


def test_a_device_held_for_admin_access_stays_free_for_others(tmp_path: Path) -> None:
    got = simulate_placements(tmp_path, CLUSTER + ADMIN_NS % "true" + MONITOR + WORKLOAD)
    assert got["ops/probe"] == ("n1", None)
    assert got["default/a"] == ("n1", None)


def test_explain_shows_the_admin_access_result(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER + ADMIN_NS % "true" + MONITOR)
    run = runner.invoke(app, ["explain", str(path), "--pod", "ops/probe", "-o", "json"])
    assert run.exit_code == 0, run.output
    (claim,) = {n["node"]: n for n in json.loads(run.stdout)["nodes"]}["n1"]["claims"]
    assert claim["devices"] == [
        {"request": "g", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0", "adminAccess": True}
    ]


@pytest.mark.parametrize("label", ["false", None])
def test_the_namespace_must_grant_admin_access(tmp_path: Path, label: str | None) -> None:
    path = tmp_path / "cluster.yaml"
    namespace = "" if label is None else ADMIN_NS % label
    claim = """
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: watch, namespace: ops}
spec:
  devices:
    requests:
    - {name: plain, deviceClassName: gpu}
    - {name: all, deviceClassName: gpu, allocationMode: All, adminAccess: true}
"""
    path.write_text(CLUSTER + namespace + MONITOR + claim)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    out = " ".join(result.output.split())
    documents = 4 if label is None else 5
    assert f"document {documents}: spec.spec.devices.requests[0].exactly.adminAccess: {ADMIN_NAMESPACE_MESSAGE}" in out
    assert f"document {documents + 2}: spec.devices.requests[1].adminAccess: {ADMIN_NAMESPACE_MESSAGE}" in out
    assert "cluster.yaml" in out and "Traceback" not in out


def test_with_the_gate_off_the_api_server_drops_admin_access(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER + ADMIN_NS % "true" + WORKLOAD + MONITOR)
    args = ["simulate", str(path), "-o", "json", "--kube-version", "1.35", "--feature-gates", "DRAAdminAccess=false"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    got = {p["pod"]: (p["node"], p["reason"]) for p in data["placements"]}
    assert got["default/a"] == ("n1", None)
    node, reason = got["ops/probe"]  # an ordinary request now: the only device is taken
    assert node is None and "cannot allocate all claims" in str(reason)
    assert any("adminAccess dropped from 1 ResourceClaim(s) and template(s)" in w for w in data["warnings"])
    # locked on from 1.36
    result = runner.invoke(app, [*args[:5], "1.36", *args[6:]])
    assert result.exit_code == 2
    assert "cannot set feature gate DRAAdminAccess to false, feature is locked to true" in result.output


def test_a_set_config_turning_the_gate_off_drops_admin_access_as_at_the_start(tmp_path: Path) -> None:
    """A scenario's setConfig to 1.35 with DRAAdminAccess off: the templates read as that API server keeps them,
    as a run started with that configuration reads them (one function does both): the probe's claim, made after
    the step, is an ordinary request, and the device default/a holds is not free for it."""
    late_probe = MONITOR.replace("metadata: {name: probe, namespace: ops}", LATE)
    assert LATE in late_probe
    (tmp_path / "base.yaml").write_text(CLUSTER + ADMIN_NS % "true" + WORKLOAD + late_probe)
    (tmp_path / "off.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n---\n"
        "apiVersion: packsched.io/v1alpha1\nkind: PackschedConfiguration\nkubeVersion: '1.35'\n"
        "featureGates: {DRAAdminAccess: false}\n"
    )
    scenario = {
        "apiVersion": "packsched.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "gate-off"},
        "spec": {"base": "base.yaml", "steps": [{"at": "1s", "setConfig": {"path": "off.yaml"}}]},
    }
    (tmp_path / "s.yaml").write_text(json.dumps(scenario))
    result = runner.invoke(app, ["run", str(tmp_path / "s.yaml"), "-o", "json"])
    assert result.exit_code == 0, result.output
    base, step = json.loads(result.stdout)["steps"]
    assert not base["notes"]
    assert any("adminAccess dropped from 1 ResourceClaim(s) and template(s)" in n for n in step["notes"])
    # at 5 s the probe arrives: default/a runs, default/b and the probe wait for the one device
    assert (step["until"], step["running"], step["pending"]) == (5.0, 1, 2)
    assert list(step["pending_reasons"]) == [
        "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are "
        "available: 1 Preemption is not helpful for scheduling."
    ]


LATE = "metadata: {name: probe, namespace: ops, annotations: {packsched.io/arrival-time: 5s}}"
