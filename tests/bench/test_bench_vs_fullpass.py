"""bench/bench_vs_fullpass.py at tiny sizes: the numpy full-pass loop is the work packsched's NodeResourcesFit-only
profile does (same pods placed, on the same nodes, with both tie-breaks on the node name), so that the ratio it
prints compares like with like; and the command line prints its table and JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers import load_script
from packsched.config.types import SEMANTICS_CURRENT, UtilizationShapePoint
from packsched.plugins.helper.shape import broken_linear, scaled_points

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "bench_vs_fullpass.py"


def _module() -> Any:
    return load_script(SCRIPT, "bench_vs_fullpass")


bench = _module()


@pytest.mark.parametrize(
    "shape",
    [
        [(0, 0), (100, 10)],
        [(0, 10), (100, 0)],
        [(0, 0), (30, 7), (60, 2), (100, 9)],
        [(20, 3), (50, 10), (80, 1)],
    ],
)
def test_the_loops_shape_is_packscheds(shape: list[tuple[int, int]]) -> None:
    points = [{"utilization": u, "score": s} for u, s in shape]
    scaled = scaled_points([UtilizationShapePoint(u, s) for u, s in shape], SEMANTICS_CURRENT)
    assert bench.shape_lookup(points).tolist() == [broken_linear(scaled, p) for p in range(101)]


def _placements(nodes: int, pods: int, seed: int) -> tuple[dict[str, str], dict[str, str]]:
    base_nodes, base_pods = bench.make_cluster(nodes, pods, seed)
    prob = bench.problem(base_nodes, base_pods, bench.CONFIG)
    chosen = bench.full_pass(prob)
    numpy_nodes = {base_pods[k].name: prob.names[int(c)] for k, c in enumerate(chosen) if c >= 0}
    run_nodes, run_pods = bench.make_cluster(nodes, pods, seed)
    _setup, _t, _cpu, placed = bench.run_packsched(run_nodes, run_pods, "fit", 100, seed)
    return numpy_nodes, placed


@pytest.mark.parametrize(("nodes", "pods", "seed"), [(40, 300, 1), (12, 200, 3), (4, 300, 2)])
def test_the_full_pass_places_as_packscheds_fit_profile(nodes: int, pods: int, seed: int) -> None:
    numpy_nodes, placed = _placements(nodes, pods, seed)
    assert numpy_nodes == placed
    assert len(placed) > 0


@pytest.mark.parametrize(("nodes", "pods", "seed"), [(40, 300, 1), (12, 200, 3), (2, 300, 5)])
def test_the_incremental_loop_chooses_as_the_full_pass(nodes: int, pods: int, seed: int) -> None:
    base_nodes, base_pods = bench.make_cluster(nodes, pods, seed)
    prob = bench.problem(base_nodes, base_pods, bench.CONFIG)
    full = bench.full_pass(prob)
    assert bench.incremental_pass(prob).tolist() == full.tolist()
    assert (full >= 0).any()


def test_a_full_cluster_leaves_the_same_pods_out() -> None:
    numpy_nodes, placed = _placements(2, 300, 5)  # one GPU node, one CPU node: most GPU pods cannot fit
    assert 0 < len(placed) < 300
    assert numpy_nodes == placed


def test_the_loop_checks_every_resource() -> None:
    base_nodes, base_pods = bench.make_cluster(2, 2, 1)
    prob = bench.problem(base_nodes, base_pods, bench.CONFIG)
    prob.requests = np.array([[1000, 1, 1, 0], [1000, 1, 1, 9], [64_000, 1, 1, 0]], dtype=np.int64)
    # node-00000 has the GPUs; both nodes have 64 cpu: the third pod fits only the node the first did not take
    chosen = bench.full_pass(prob).tolist()
    assert chosen[1] == -1  # 9 GPUs fit no node
    assert chosen[2] == 1 - chosen[0]


def test_the_command_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["--nodes", "20", "--pods", "60", "--repeat", "2"]
    assert bench.main([*args, "-o", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["fullpass"]["placed"] == 60 and len(report["fullpass"]["pods_per_s_runs"]) == 2
    floor = report["incremental_loop"]
    assert floor["same_choices_as_full_pass"] is True and len(floor["pods_per_s_runs"]) == 2 and floor["ratio"] > 0
    fit = report["profiles"]["fit"]
    assert fit["agreement"] == 1.0 and fit["placed"] == 60 and fit["ratio"] > 0 and fit["cpu_ratio"] > 0
    default = report["profiles"]["default"]
    assert default["placed"] == 60 and default["same_node"] <= 60
    assert report["machine"]["numpy"] and report["percentage_of_nodes_to_score"] == 100
    assert bench.main(["--nodes", "10", "--pods", "20", "--repeat", "1", "--profile", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| full-pass numpy loop |" in out and "packsched / full pass" in out and "pods per CPU s" in out
    assert "| incremental numpy loop, no framework (reference) |" in out and "same as the full pass" in out
    assert "| packsched, NodeResourcesFit only (`fit`) |" in out and "(100.0 %)" in out
    assert "top 15 by cumulative time" in out and (tmp_path / "default.prof").exists()
    with pytest.raises(SystemExit):
        bench.main(["--profiles", "nosuch"])


@pytest.mark.parametrize("profile", ["none", "none-nobatch"])
def test_the_floor_profile_has_no_filter_or_score_and_places_every_pod(profile: str) -> None:
    plugins = bench.packsched_config(profile, 100)["profiles"][0]["plugins"]["multiPoint"]
    assert plugins["enabled"] == [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]
    nodes, pods = bench.make_cluster(2, 300, 5)  # the fit profile leaves GPU pods out here; no filter leaves none
    _setup, _t, _cpu, placed = bench.run_packsched(nodes, pods, profile, 100, 5)
    assert len(placed) == 300


def test_same_pods_are_one_class_that_fit_places_as_the_full_pass() -> None:
    """--same-pods: one class of pods (which `fit` batches), placed by `fit` as by the loop."""
    nodes, pods = bench.make_cluster(30, 200, 1, same_pods=True)
    assert {tuple(sorted(p.containers[0].requests.items())) for p in pods} == {(("cpu", 1000), ("memory", 1024**3))}
    prob = bench.problem(nodes, pods, bench.CONFIG)
    chosen = bench.full_pass(prob)
    numpy_nodes = {pods[k].name: prob.names[int(c)] for k, c in enumerate(chosen) if c >= 0}
    run_nodes, run_pods = bench.make_cluster(30, 200, 1, same_pods=True)
    _setup, _t, _cpu, placed = bench.run_packsched(run_nodes, run_pods, "fit", 100, 1)
    assert placed == numpy_nodes and len(placed) == 200


def test_the_binpack_profile_is_the_default_without_topology_spread() -> None:
    config = bench.packsched_config("binpack", 100)
    assert config["profiles"][0]["plugins"] == {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}
    assert config["profiles"][0]["pluginConfig"] == bench.CONFIG["profiles"][0]["pluginConfig"]
    nodes, pods = bench.make_cluster(20, 100, 1, same_pods=True)
    _setup, _t, _cpu, placed = bench.run_packsched(nodes, pods, "binpack", 100, 1)
    assert len(placed) == 100
    assert not any(name.endswith(("0", "2", "4", "6", "8")) for name in placed.values())  # GPU nodes: tainted
