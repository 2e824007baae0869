"""Device binding conditions in the simulator (DRADeviceBindingConditions, on from 1.36): DynamicResources writes the
claim's allocation at PreBind and waits there, polling every 5 s, for the device's binding conditions in the claim's
``status.devices``, which a scenario step (``setDeviceConditions``, what the DRA driver does) or the manifests set.
The pod is bound at the first poll after they are True; a binding failure condition, or the 600 s binding timeout,
fails the binding cycle (upstream's words), the claim stays allocated, the next attempt finds it unavailable and
PostFilter deallocates it, and the pod tries again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from helpers import simulate_placements
from packsched.api.manifests import load_manifests
from packsched.cli.main import app
from packsched.config.loader import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import SCHEDULED, UNSCHEDULABLE, WAITING
from packsched.sim.scenario import _Runner, load_scenario

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
  - name: fabric-gpu-0
    bindingConditions: [attached]
    bindingFailureConditions: [attach-failed]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly: {deviceClassName: gpu}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    resources: {claims: [{name: g}]}
  resourceClaims:
  - name: g
    resourceClaimTemplateName: one
"""

WAIT_REASON = "waiting for binding conditions for device on node n1 (DynamicResources PreBind)"
TIMEOUT = 'running PreBind plugin "DynamicResources": device binding timeout: context deadline exceeded'


def step(conditions: str, at: str = "12s") -> str:
    return f"""
  - at: {at}
    setDeviceConditions:
      driver: gpu.example.com
      pool: n1
      device: fabric-gpu-0
      conditions: {conditions}
"""


def scenario(tmp_path: Path, steps: str) -> list[tuple[float, str, str | None]]:
    """Run a scenario on CLUSTER; the pod's events (time, kind, reason)."""
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "s.yaml").write_text(
        f"""apiVersion: packsched.io/v1alpha1
kind: Scenario
metadata: {{name: attach}}
spec:
  base: cluster.yaml
  steps:{steps}
"""
    )
    loaded = load_scenario(str(tmp_path / "s.yaml"))
    registry = in_tree_registry()
    cluster = load_manifests(loaded.base)
    runner = _Runner(loaded, cluster, default_config(set(registry)), registry)
    runner.run()
    return [(e.time, e.kind, e.reason) for e in runner.sim.events if e.pod == "default/p"]


def test_the_pod_is_bound_at_the_first_poll_after_the_conditions_are_true(tmp_path: Path) -> None:
    events = scenario(tmp_path, step('[{type: attached, status: "True"}]'))
    assert events == [(0.0, WAITING, WAIT_REASON), (15.0, SCHEDULED, None)]


def test_a_binding_failure_condition_fails_the_binding_and_the_claim_is_deallocated(tmp_path: Path) -> None:
    failed = '[{type: attach-failed, status: "True", reason: Unplugged, message: "cable out"}]'
    events = scenario(tmp_path, step(failed))
    (t0, kind0, _), (t1, kind1, why1), (t2, kind2, why2), (t3, kind3, _) = events[:4]
    assert (t0, kind0) == (0.0, WAITING)
    assert (t1, kind1) == (15.0, UNSCHEDULABLE)
    assert why1 is not None and why1.startswith(
        'running PreBind plugin "DynamicResources": device binding failed: claim=p-g-'
    )
    assert why1.endswith(', reason=Unplugged, message="cable out"')
    # after its backoff (an error's: 15 + 1 = 16.0 s, window 16 s, flushed at 17 s; never popped early): the
    # claim, still allocated, failed: no node; PostFilter deallocates it
    assert (t2, kind2) == (17.0, UNSCHEDULABLE)
    assert why2 is not None and "1 resourceclaim not available on the node" in why2
    assert "deallocation of ResourceClaim completed" in why2
    # allocated afresh, waiting again (the device's status was cleared): the deallocation moved it to backoff
    # (17 + 2 = 19.0 s) during its own cycle, and with nothing active Pop takes it from the backoff queue at 17 s
    assert (t3, kind3) == (17.0, WAITING)


def test_nothing_sets_the_conditions_the_binding_times_out(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", "json", "--kube-version", "1.36"])
    assert result.exit_code == 0, result.output
    import json

    events = [(e["time"], e["kind"], e["reason"]) for e in json.loads(result.stdout)["events"]]
    assert events[:3] == [
        (0.0, WAITING, WAIT_REASON),
        (600.0, UNSCHEDULABLE, TIMEOUT),
        (
            # the timeout at 600 s is an error: its backoff (600 + 1 = 601.0 s, window 601 s) ends at the 602 s flush
            602.0,
            UNSCHEDULABLE,
            "0/1 nodes are available: 1 resourceclaim not available on the node. deallocation of ResourceClaim "
            "completed, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
        ),
    ]


def test_conditions_already_true_in_the_manifests_bind_at_once(tmp_path: Path) -> None:
    claim = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held}
spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}
status:
  allocation:
    devices:
      results:
      - {request: g, driver: gpu.example.com, pool: n1, device: fabric-gpu-0, bindingConditions: [attached],
         bindingFailureConditions: [attach-failed]}
  devices:
  - driver: gpu.example.com
    pool: n1
    device: fabric-gpu-0
    conditions: [{type: attached, status: "True", reason: Done, lastTransitionTime: "2026-01-01T00:00:00Z"}]
"""
    text = CLUSTER.replace("resourceClaimTemplateName: one", "resourceClaimName: held") + claim
    assert simulate_placements(tmp_path, text)["default/p"] == ("n1", None)


def test_a_bad_step_is_reported_at_its_path(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    bad: dict[str, Any] = {"driver": "gpu.example.com", "conditions": [{"type": "attached", "status": "Yes"}]}
    import yaml

    (tmp_path / "s.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "packsched.io/v1alpha1",
                "kind": "Scenario",
                "metadata": {"name": "bad"},
                "spec": {"base": "cluster.yaml", "steps": [{"at": "1s", "setDeviceConditions": bad}]},
            }
        )
    )
    result = CliRunner().invoke(app, ["run", str(tmp_path / "s.yaml")])
    assert result.exit_code == 2, result.output
    out = " ".join(result.output.split())
    assert "spec.steps[0].setDeviceConditions.pool: Required value" in out
    assert "spec.steps[0].setDeviceConditions.device: Required value" in out
    assert "spec.steps[0].setDeviceConditions.conditions[0].status" in out
    assert "Traceback" not in out


def _config(tmp_path: Path, args: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: DynamicResources
    args: {args}
"""
    )
    return path


def test_the_binding_timeout_comes_from_the_plugin_args(tmp_path: Path) -> None:
    import json

    (tmp_path / "c.yaml").write_text(CLUSTER)
    config = _config(tmp_path, "{bindingTimeout: 30s}")
    result = CliRunner().invoke(app, ["simulate", str(tmp_path / "c.yaml"), "--config", str(config), "-o", "json"])
    assert result.exit_code == 0, result.output
    events = [(e["time"], e["reason"]) for e in json.loads(result.stdout)["events"]]
    assert events[1] == (30.0, TIMEOUT)


def test_bad_binding_timeouts_are_config_errors(tmp_path: Path) -> None:
    """DynamicResourcesArgs are typed args (config/args.py): each problem names the file and the field path, in
    upstream's words per release."""
    (tmp_path / "c.yaml").write_text(CLUSTER)
    at = "profiles[0].pluginConfig[0].args"
    cases = [
        ("{bindingTimeout: 500ms}", (), f"{at}.bindingTimeout: Invalid value: 500ms: must be at least 1 second"),
        ("{bindingTimeout: soon}", (), f'{at}.bindingTimeout: Invalid value: "soon": time: invalid duration "soon"'),
        ("{filterTimeout: -1s}", (), f"{at}.filterTimeout: Invalid value: -1s: must be zero or positive"),
        ("{filterTimeout: 1s, bindTimeout: 1s}", (), f"{at}.bindTimeout: unknown field"),
        (
            "{bindingTimeout: 60s}",
            ("--kube-version", "1.35"),
            f"{at}.bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature "
            "gate is disabled",
        ),
        ("{bindingTimeout: 60s}", ("--kube-version", "1.34"), f"{at}.bindingTimeout: unknown field"),
        (
            "{filterTimeout: 5s}",
            ("--feature-gates", "DRASchedulerFilterTimeout=false"),
            f"{at}.filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled",
        ),
    ]
    for args, extra, message in cases:
        config = _config(tmp_path, args)
        result = CliRunner().invoke(app, ["simulate", str(tmp_path / "c.yaml"), "--config", str(config), *extra])
        assert result.exit_code == 2, (args, result.output)
        out = " ".join(result.output.split())
        assert "config.yaml" in out and message in out, out
        assert "Traceback" not in out
