"""Shared test helpers: small clusters, hand-built profiles (no config file needed) and a tiny GPU trace."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from packsched.api.objects import Container, Node, Pod
from packsched.config.types import (
    KubeSchedulerConfiguration,
    NodeResourcesFitArgs,
    PluginRef,
    Profile,
    ResourceSpec,
    ScoringStrategy,
)

GiB = 1024**3


def load_script(path: Path, name: str) -> ModuleType:
    """A script that is not a package module (a bench or conformance script), imported from its file as module
    ``name`` (registered in ``sys.modules``, so that its dataclasses and pickling find it)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit"]


def make_profile(
    score: dict[str, int] | None = None,
    strategy: ScoringStrategy | None = None,
    post_filter: list[str] | None = None,
    name: str = "default-scheduler",
) -> Profile:
    """A profile like kube-scheduler's default (without the plugins packsched lacks)."""
    prof = Profile(scheduler_name=name)
    points = {
        "preEnqueue": ["SchedulingGates"],
        "queueSort": ["PrioritySort"],
        "preFilter": ["NodeAffinity", "NodePorts", "NodeResourcesFit"],
        "filter": FILTERS,
        "postFilter": post_filter or [],
        "preScore": ["TaintToleration", "NodeAffinity", "NodeResourcesBalancedAllocation"],
        "bind": ["DefaultBinder"],
    }
    for point, names in points.items():
        prof.plugins.at(point).enabled = [PluginRef(n) for n in names]
    weights = (
        score
        if score is not None
        else {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1}
    )
    prof.plugins.at("score").enabled = [PluginRef(n, w) for n, w in weights.items()]
    prof.plugin_config["NodeResourcesFit"] = NodeResourcesFitArgs(
        scoring_strategy=strategy or ScoringStrategy("LeastAllocated", [ResourceSpec("cpu"), ResourceSpec("memory")])
    )
    return prof


def make_config(*profiles: Profile, percentage: int | None = None) -> KubeSchedulerConfiguration:
    return KubeSchedulerConfiguration(
        profiles=list(profiles) or [make_profile()], percentage_of_nodes_to_score=percentage
    )


def node(
    name: str, cpu: int = 4000, memory: int = 8 * GiB, pods: int = 110, extra: dict[str, int] | None = None
) -> Node:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    alloc.update(extra or {})
    return Node(name, {"kubernetes.io/hostname": name}, {}, dict(alloc), alloc)


def pod(
    name: str,
    cpu: int = 0,
    memory: int = 0,
    namespace: str = "default",
    priority: int = 0,
    extra: dict[str, int] | None = None,
) -> Pod:
    req = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    req.update(extra or {})
    return Pod(name, namespace, containers=[Container("c", req)], priority=priority)


def capacity_config() -> KubeSchedulerConfiguration:
    """The profile upstream's CapacityScheduling tests use: the default plugins, CapacityScheduling in PreFilter and
    Reserve, and CapacityScheduling as the only PostFilter plugin."""
    prof = make_profile(post_filter=["CapacityScheduling"])
    prof.plugins.at("preFilter").enabled.append(PluginRef("CapacityScheduling"))
    prof.plugins.at("reserve").enabled = [PluginRef("CapacityScheduling")]
    return KubeSchedulerConfiguration(profiles=[prof])


def write_small_trace(folder: Path, nodes: int = 6, pods: int = 100, published_fgd: bool = False) -> Path:
    """A tiny Alibaba-format trace in ``folder``: ``nodes`` T4 nodes (1, 2, 4, 8, 2, 1 GPUs, repeating) and
    ``pods`` pods (every fifth CPU-only, the others sharing one GPU); with ``published_fgd``, published figures for
    FGD (seeds 42 and 43) as the authors' ``fgd-expected-results`` gives them. A replay takes tens of
    milliseconds."""
    gpus = [1, 2, 4, 8, 2, 1]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "openb_node_list_gpu_node.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\n"
        + "".join(f"openb-node-{i:04d},32000,131072,{gpus[i % 6]},T4\n" for i in range(nodes)),
        encoding="utf-8",
    )
    rows = ["name,cpu_milli,memory_mib,num_gpu,gpu_milli"]
    for i in range(pods):
        gpu = 1 if i % 5 else 0
        rows.append(f"openb-pod-{i:04d},{500 * (i % 3)},256,{gpu},{(100 + 40 * (i % 5)) if gpu else 0}")
    (folder / "openb_pod_list_default.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    if published_fgd:
        expected = folder / "fgd-expected-results"
        expected.mkdir(exist_ok=True)
        header = "workload,sc_policy,tune,seed,total_gpus," + ",".join(str(p) for p in range(131))
        lines = [
            f"openb_pod_list_default,06-FGD,1.3,{seed},18," + ",".join(str(min(p, 95 - seed % 2)) for p in range(131))
            for seed in (42, 43)
        ]
        (expected / "analysis_allo_discrete.csv").write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    return folder


def simulate_placements(tmp_path: Path, text: str, *args: str) -> dict[str, tuple[str | None, str | None]]:
    """``packsched simulate -o json`` on manifest ``text`` (written to a file under ``tmp_path``): each pod's key ->
    (node, reason)."""
    import json

    from typer.testing import CliRunner

    from packsched.cli.main import app

    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", "json", *args])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return {p["pod"]: (p["node"], p["reason"]) for p in data["placements"]}
