"""What-if scenarios (sim/scenario.py, ``packsched run``): the example's outcome as a golden test, each step
action on a small cluster, and bad scenario files reported with their field paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from packsched.api.errors import InputError
from packsched.cli.main import app
from packsched.plugins.registry import in_tree_registry
from packsched.sim.scenario import SCHEMA, StepReport, load_scenario, run_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "what-if" / "scenario.yaml"
runner = CliRunner()


def _run_json(path: Path) -> dict[str, Any]:
    result = runner.invoke(app, ["run", str(path), "-o", "json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_the_example_gives_its_expected_outcome() -> None:
    data = _run_json(EXAMPLE)
    assert data["schema"] == SCHEMA and data["scenario"] == "drain-pool-a"
    rows = [
        (s["name"], s["at"], s["running"], s["pending"], s["preemptions"], s["evictions"], s["free_nodes"], s["nodes"])
        for s in data["steps"]
    ]
    assert rows == [
        ("base cluster", 0.0, 14, 0, 0, 0, 0, 6),
        # four 4-GPU training pods: one inference pod is preempted for them, and re-created elsewhere
        ("training job arrives", 0.0, 18, 0, 1, 0, 0, 6),
        # pool a drained: its pods evicted one by one as the budget allows (the bare training pod is not re-made)
        ("drain pool a", 30.0, 17, 0, 0, 6, 3, 6),
        ("pack GPUs", 60.0, 17, 0, 0, 0, 3, 6),
        ("scale inference up", 70.0, 19, 0, 0, 0, 3, 6),
        ("add a GPU node", 90.0, 19, 0, 0, 0, 4, 7),
    ]
    assert _run_json(EXAMPLE) == data  # deterministic


def _write(tmp: Path, name: str, doc: Any) -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
    return path


def _node(name: str, cpu: str = "4", pool: str = "a") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"pool": pool}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def _deployment(name: str, replicas: int, cpu: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]},
            },
        },
    }


def _scenario(tmp: Path, objects: list[dict[str, Any]], steps: list[dict[str, Any]], **spec: Any) -> list[StepReport]:
    _write(tmp, "base.yaml", {"apiVersion": "v1", "kind": "List", "items": objects})
    doc = {
        "apiVersion": "packsched.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "t"},
        "spec": {"base": "base.yaml", "steps": steps, **spec},
    }
    return run_scenario(load_scenario(str(_write(tmp, "s.yaml", doc))), in_tree_registry())


def test_drain_waits_for_the_budget_and_gives_up_at_its_timeout(tmp_path: Path) -> None:
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
    }
    # two replicas, spread over a0 and b0: minAvailable 2 of 2 allows no eviction, ever
    objects = [_node("a0"), _node("b0", pool="b"), _deployment("web", 2, cpu="2"), budget]
    steps = [{"at": "10s", "drain": {"selector": {"matchLabels": {"pool": "a"}}, "timeout": "20s"}}]
    base, drain = _scenario(tmp_path, objects, steps)
    assert base.running == 2 and base.free_nodes == 0
    assert drain.evictions == 0 and drain.evictions_blocked == 1
    assert drain.running == 2 and drain.until == 30.0  # retried every 5 s until its 20 s timeout


def test_drain_evicts_and_controllers_re_create_elsewhere(tmp_path: Path) -> None:
    objects = [_node("a0"), _node("b0", pool="b"), _node("b1", pool="b"), _deployment("web", 4)]
    reports = _scenario(tmp_path, objects, [{"at": "5s", "drain": {"nodes": ["a0"]}}])
    base, drain = reports
    assert base.running == 4
    assert drain.running == 4 and drain.evictions >= 1 and drain.evictions_blocked == 0
    assert drain.free_nodes == 1  # a0 is empty (and cordoned)


def test_scale_down_then_up_and_remove_nodes(tmp_path: Path) -> None:
    objects = [_node("a0"), _node("a1"), _deployment("web", 6, cpu="1")]
    steps = [
        {"at": "1s", "scale": {"kind": "Deployment", "name": "web", "replicas": 2}},
        {"at": "2s", "scale": {"kind": "Deployment", "name": "web", "replicas": 5}},
        {"at": "3s", "removeNodes": {"nodes": ["a1"]}},
    ]
    base, down, up, removed = _scenario(tmp_path, objects, steps)
    assert (base.running, down.running, up.running) == (6, 2, 5)
    # a1's pods are re-created; a0 holds 4 cpu of 1-cpu pods: one stays pending
    assert removed.nodes == 1 and removed.running == 4 and removed.pending == 1
    assert "Insufficient cpu" in next(iter(removed.pending_reasons))


def test_create_pods_cordon_uncordon_and_add_nodes(tmp_path: Path) -> None:
    template = {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3"}}}]}}
    steps = [
        {"at": "0s", "cordon": {"nodes": ["a0"]}},
        {"createPods": {"count": 2, "namePrefix": "job", "template": template}},
        {"at": "5s", "uncordon": {"nodes": ["a0"]}},
        {
            "at": "6s",
            "addNodes": {
                "count": 2,
                "namePrefix": "new-",
                "template": {"status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
            },
        },
        {"createPods": {"count": 2, "namePrefix": "job", "template": template}},
    ]
    _, _cordoned, created, uncordoned, added, more = _scenario(tmp_path, [_node("a0"), _node("a1")], steps)
    assert created.running == 1 and created.pending == 1  # a0 cordoned: one 3-cpu pod per free node
    assert "node(s) were unschedulable" in " ".join(created.pending_reasons)
    assert uncordoned.running == 2 and uncordoned.pending == 0
    assert added.nodes == 4 and more.running == 4  # names job-2, job-3: job-0/1 are taken


def test_set_config_and_set_quota_take_effect(tmp_path: Path) -> None:
    most = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}],
            }
        ],
    }
    _write(tmp_path, "most.yaml", most)
    quota = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "q"},
        "spec": {"min": {"cpu": "1"}, "max": {"cpu": "2"}},
    }
    template = {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
    steps = [
        {"at": "1s", "setConfig": {"path": "most.yaml"}},
        {"createPods": {"count": 2, "namePrefix": "p", "template": template}},
        {"at": "2s", "setQuota": {"namespace": "default", "max": {"cpu": "8"}}},
    ]
    reports = _scenario(tmp_path, [_node("a0"), _node("a1"), quota], steps)
    assert reports[2].running == 2  # the default configuration has no CapacityScheduling: the quota is not enforced
    assert reports[3].quotas == [
        {"namespace": "default", "name": "q", "used": {"cpu": 2000}, "min": {"cpu": 1000}, "max": {"cpu": 8000}}
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"steps": [{"createPods": {"count": 1}}]}, "spec.steps[0].createPods.template: Required value"),
        ({"steps": [{"frobnicate": {}}]}, "spec.steps[0].frobnicate: unknown field"),
        (
            {"steps": [{"at": "5s", "cordon": {"nodes": ["a"]}}, {"at": "1s", "cordon": {"nodes": ["a"]}}]},
            "spec.steps[1].at: steps run in order",
        ),
        ({"steps": [{"at": "soon", "cordon": {"nodes": ["a"]}}]}, "spec.steps[0].at: must be a duration"),
        ({"steps": [{"cordon": {"nodes": ["a"], "selector": {}}}]}, "give either nodes"),
        ({"steps": [{"scale": {"kind": "Pod", "name": "x", "replicas": 1}}]}, "spec.steps[0].scale.kind: Unsupported"),
        ({"steps": [{"scale": {"name": "x", "replicas": 1}}]}, "spec.steps[0].scale.kind: Required value"),
        ({"base": "gone.yaml", "steps": [{"cordon": {"nodes": ["a"]}}]}, "spec.base: Not found: 'gone.yaml'"),
        ({"base": ["b.yaml", "gone"], "steps": [{"cordon": {"nodes": ["a"]}}]}, "spec.base[1]: Not found: 'gone'"),
        ({"config": "gone.yaml", "steps": [{"cordon": {"nodes": ["a"]}}]}, "spec.config: Not found: 'gone.yaml'"),
        ({"steps": [{"setConfig": {"path": "gone.yaml"}}]}, "spec.steps[0].setConfig.path: Not found: 'gone.yaml'"),
        ({"steps": []}, "spec.steps: Required value"),
        ({"base": None, "steps": [{"cordon": {"nodes": ["a"]}}]}, "spec.base: Required value"),
        ({"seed": -1, "steps": [{"cordon": {"nodes": ["a"]}}]}, "spec.seed: must be 0 or more, got -1"),
    ],
)
def test_bad_scenarios_name_the_field(tmp_path: Path, spec: dict[str, Any], expected: str) -> None:
    (tmp_path / "b.yaml").write_text("", encoding="utf-8")  # the base exists unless the case names another
    doc = {"apiVersion": "packsched.io/v1alpha1", "kind": "Scenario", "spec": {"base": "b.yaml", **spec}}
    if doc["spec"].get("base") is None:
        del doc["spec"]["base"]
    path = _write(tmp_path, "s.yaml", doc)
    with pytest.raises(InputError) as info:
        load_scenario(str(path))
    assert any(expected in str(e) and str(path) in str(e) for e in info.value.errors), info.value.errors
    result = runner.invoke(app, ["run", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_a_step_naming_a_missing_object_exits_2(tmp_path: Path) -> None:
    _write(tmp_path, "base.yaml", {"apiVersion": "v1", "kind": "List", "items": [_node("a0")]})
    doc = {
        "apiVersion": "packsched.io/v1alpha1",
        "kind": "Scenario",
        "spec": {"base": "base.yaml", "steps": [{"scale": {"kind": "Deployment", "name": "ghost", "replicas": 2}}]},
    }
    result = runner.invoke(app, ["run", str(_write(tmp_path, "s.yaml", doc))])
    assert result.exit_code == 2 and "no Deployment default/ghost" in result.output


def test_run_prints_a_table_per_step_with_reasons_and_quotas(tmp_path: Path) -> None:
    quota = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "q"},
        "spec": {"min": {"cpu": "1"}, "max": {"cpu": "2"}},
    }
    template = {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3"}}}]}}
    _write(tmp_path, "base.yaml", {"apiVersion": "v1", "kind": "List", "items": [_node("a0"), quota]})
    doc = {
        "apiVersion": "packsched.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "table"},
        "spec": {
            "base": "base.yaml",
            "steps": [{"name": "two big pods", "createPods": {"count": 2, "template": template}}],
        },
    }
    result = runner.invoke(app, ["run", str(_write(tmp_path, "s.yaml", doc))])
    assert result.exit_code == 0, result.output
    assert "Scenario table" in result.output and "two big pods" in result.output
    assert "1 × 0/1 nodes are available: 1 Insufficient cpu." in result.output
    assert "cpu 3 / 1 / 2" in result.output  # used / min / max: no CapacityScheduling in the default profile
    bad = runner.invoke(app, ["run", str(tmp_path / "s.yaml"), "-o", "yaml"])
    assert bad.exit_code == 2


def test_compare_puts_configurations_side_by_side_on_a_cluster_and_a_scenario() -> None:
    demo = ROOT / "examples" / "gpu-demo"
    least, rtcr = demo / "config-least-allocated.yaml", demo / "config-rtcr-binpack.yaml"
    result = runner.invoke(app, ["compare", str(demo), "--config", str(least), "--config", str(rtcr), "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema"] == "packsched.whatif-compare/v1"
    spread, packed = data["results"]["config-least-allocated"], data["results"]["config-rtcr-binpack"]
    # bin packing places every pod and leaves whole nodes free; spreading strands GPUs on every node
    assert (packed["pending"], packed["fragmented_gpus"]) == (0, 0) and packed["free_nodes"] > 0
    assert spread["pending"] > 0 and spread["fragmented_gpus"] == spread["free_gpus"] > 0
    table = runner.invoke(app, ["compare", str(EXAMPLE), "--config", str(least), "--config", str(rtcr)])
    assert table.exit_code == 0 and "free GPUs on partly used nodes" in table.output
    none = runner.invoke(app, ["compare", str(EXAMPLE)])
    assert none.exit_code == 2 and "needs --config" in none.output
    # issue 24: the trace options were silently ignored on a cluster
    for extra in (["--policies", "FGD"], ["--seeds", "1-3"], ["--workers", "2"], ["--tune", "1.1"]):
        ignored = runner.invoke(app, ["compare", str(demo), "--config", str(least), *extra])
        assert ignored.exit_code == 2 and f"{extra[0]}: only for a trace folder" in ignored.output, extra


def test_a_statefulset_scales_down_from_its_highest_ordinal_and_back_up(tmp_path: Path) -> None:
    sts = _deployment("db", 3)
    sts["kind"] = "StatefulSet"
    sts["spec"]["serviceName"] = "db"
    steps = [
        {"at": "1s", "scale": {"kind": "StatefulSet", "name": "db", "replicas": 1}},
        {"at": "2s", "scale": {"kind": "StatefulSet", "name": "db", "replicas": 2}},
    ]
    path = tmp_path / "s.yaml"
    _scenario(tmp_path, [_node("a0"), sts], steps)
    data = _run_json(path)
    assert [s["running"] for s in data["steps"]] == [3, 1, 2]


@pytest.mark.timeout(60)
def test_a_config_change_while_pods_back_off_does_not_stall_the_clock(tmp_path: Path) -> None:
    # Found by the input fuzzer: the example without its drain step changes the configuration at 0 s, while the
    # training pods that did not fit wait out their backoff. The simulation kept asking the queue it had before the
    # change when the next backoff ends, and spun at that time forever.
    for source in EXAMPLE.parent.iterdir():
        (tmp_path / source.name).write_bytes(source.read_bytes())
    doc = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    doc["spec"]["steps"] = [s for s in doc["spec"]["steps"] if "drain" not in s]
    for step in doc["spec"]["steps"]:
        if "setConfig" in step:
            del step["at"]  # at the previous step's time: 0 s
    path = _write(tmp_path, "scenario.yaml", doc)
    reports = run_scenario(load_scenario(str(path)), in_tree_registry())
    assert reports[-1].name == "add a GPU node" and reports[-1].at == 90
    assert reports[-1].running > 0
