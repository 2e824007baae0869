"""Trace loading, the published protocol's rules (shuffle, inflation, binning), and the fragmentation measure on
hand-computed cases. Small synthetic traces only; the real trace is in test_trace_golden.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packsched.api.errors import InputError
from packsched.backend.gpu.frag import FragState, Shape, TargetWorkload
from packsched.framework.podinfo import make_pod_info
from packsched.plugins.registry import in_tree_registry
from packsched.sim.policies import policy_config
from packsched.sim.replay import bin_curve, pod_order, replay, summarize, target_workload
from packsched.sim.trace import Trace, TraceNode, TracePod, load_nodes, load_pods, load_trace


def small_trace(n_pods: int = 40) -> Trace:
    nodes = tuple(TraceNode(f"node-{i:02d}", 32000, 131072, g, "T4") for i, g in enumerate([1, 2, 4, 8, 2, 1]))
    rng = np.random.default_rng(0)
    pods = []
    for i in range(n_pods):
        kind = i % 4
        if kind == 0:
            pods.append(TracePod(f"pod-{i:03d}", 2000, 1024, 0, 0))
        elif kind == 1:
            pods.append(TracePod(f"pod-{i:03d}", 1000, 1024, 1, int(rng.integers(1, 10)) * 100))
        elif kind == 2:
            pods.append(TracePod(f"pod-{i:03d}", 4000, 2048, 1, 1000))
        else:
            pods.append(TracePod(f"pod-{i:03d}", 8000, 4096, 2, 1000))
    return Trace(nodes, tuple(pods), "nodes.csv", "pods.csv")


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_pod_files_with_11_and_5_columns(tmp_path: Path) -> None:
    long = write(
        tmp_path / "a.csv",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
        "creation_time,deletion_time,scheduled_time\n"
        "p0,1000,512,1,300,V100M16|V100M32|V100M32,LS,Running,0,10,0\np1,2000,512,0,0,,BE,Pending,1,2,\n",
    )
    short = write(tmp_path / "b.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,512,2,1000\n")
    a = load_pods(long)
    assert a[0] == TracePod("p0", 1000, 512, 1, 300, ("V100M16", "V100M32"))
    assert a[1].demand.wants_gpu is False
    assert load_pods(short)[0].total_milli == 2000


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,abc,512,1,300\n", "row 2, column cpu_milli"),
        ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,512,2,300\n", "row 2, column gpu_milli"),
        ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,512,1,1300\n", "must be at most 1000"),
        ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,512,1\n", "row 2: has 4 columns"),
        ("name,cpu,memory_mib,num_gpu,gpu_milli\np0,1,512,1,3\n", "unexpected columns"),
        ("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,512,1,3\np0,1,512,1,3\n", "appears twice"),
    ],
)
def test_bad_pod_file_names_file_row_and_column(tmp_path: Path, text: str, needle: str) -> None:
    path = write(tmp_path / "bad.csv", text)
    with pytest.raises(InputError) as exc:
        load_pods(path)
    msg = str(exc.value)
    assert str(path) in msg and needle in msg


def test_bad_node_file_and_missing_folder(tmp_path: Path) -> None:
    path = write(tmp_path / "n.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,1024,x,G2\nn1,1,1,2,\n")
    with pytest.raises(InputError) as exc:
        load_nodes(path)
    assert "row 2, column gpu" in str(exc.value) and "row 3, column model" in str(exc.value)
    with pytest.raises(InputError, match="does not exist"):
        load_trace(tmp_path / "nope")
    with pytest.raises(InputError, match="no such file"):
        load_trace(tmp_path, pods="missing")


def test_node_and_pod_objects_follow_the_k8s_mapping() -> None:
    node = TraceNode("n", 96000, 1024, 8, "G2").to_node()
    assert node.allocatable["alibabacloud.com/gpu-count"] == 8
    assert node.allocatable["alibabacloud.com/gpu-milli"] == 8000
    assert node.allocatable["pods"] == 1001 and node.labels["alibabacloud.com/gpu-card-model"] == "G2"
    pod = TracePod("p", 4000, 1024, 1, 250, ("A", "B")).to_pod()
    assert pod.annotations == {
        "alibabacloud.com/gpu-milli": "250",
        "alibabacloud.com/gpu-count": "1",
        "alibabacloud.com/gpu-card-model": "A|B",
    }
    assert pod.containers[0].requests == {"cpu": 4000, "memory": 1024 * 1024 * 1024, "alibabacloud.com/gpu-milli": 250}


def test_shuffle_is_seeded_and_inflation_reaches_130_percent_with_copies_last() -> None:
    trace = small_trace(12)
    a, copies_a = pod_order(trace, np.random.default_rng(42))
    b, _ = pod_order(trace, np.random.default_rng(42))
    c, _ = pod_order(trace, np.random.default_rng(43))
    assert a == b and a != c
    n = len(trace.pods)
    assert sorted(a[:n]) == list(range(n))  # every original exactly once, first
    assert len(a) == n + copies_a
    total = sum(trace.pods[i].total_milli for i in a)
    target = 1.3 * trace.gpu_capacity_milli
    assert total >= target
    assert total - trace.pods[a[-1]].total_milli < target  # stops at the first copy that crosses


def test_a_trace_larger_than_the_target_is_thinned() -> None:
    trace = small_trace(200)
    seq, copies = pod_order(trace, np.random.default_rng(1))
    total = sum(trace.pods[i].total_milli for i in seq)
    assert copies == 0 and len(seq) < 200
    assert total <= 1.3 * trace.gpu_capacity_milli + 2000


def test_bin_curve_averages_and_fills_empty_bins_from_neighbours() -> None:
    arrived = np.array([0.2, 0.6, 1.4, 3.0, 3.2])
    vals = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    out = bin_curve(arrived, vals, max_bin=5)
    assert out[0] == 1.0  # 0.2 -> 0
    assert out[1] == 4.0  # 0.6 and 1.4 -> 1
    assert out[2] == pytest.approx((3 + 5 + 7 + 9) / 4)  # empty: bins 1..3
    assert out[3] == 8.0
    assert out[4] == 8.0  # empty: bins 3..5
    assert out[5] is None


def test_fragment_measure_hand_computed() -> None:
    # one node, 2 GPUs, 9 cores; a 700-milli pod with 1 core leaves GPUs [300, 1000] and 8 cores
    trace = Trace((TraceNode("n", 9000, 65536, 2, "T4"),), (TracePod("p", 1000, 64, 1, 700),), "n", "p")
    target = TargetWorkload((Shape(1000, 0, 0), Shape(1000, 500, 1), Shape(1000, 1000, 2)), (0.5, 0.25, 0.25))
    cfg = policy_config("BestFit", set(in_tree_registry()))
    from packsched.framework.snapshot import Snapshot
    from packsched.scheduler import Scheduler
    from tests_support import Actions

    snap = Snapshot([trace.nodes[0].to_node()])
    fs = FragState(snap, target)
    assert fs.cluster_fragment() == pytest.approx(0.5 * 2000 + 0 + 0)  # empty: only the CPU-only shape
    sched = Scheduler(cfg, in_tree_registry(), Actions(), snap, 0)  # type: ignore[arg-type]
    assert sched.schedule_one(make_pod_info(trace.pods[0].to_pod(), 0)).node == "n"
    # CPU-only: all 1300 idle; share 500: fits, only the 300 GPU is a fragment; 2 whole GPUs: do not fit -> 1300
    assert fs.cluster_fragment() == pytest.approx(0.5 * 1300 + 0.25 * 300 + 0.25 * 1300)
    # 7.5 more cores: no shape's CPU fits any more -> every idle milli is a fragment
    big = TracePod("cpu", 7500, 64, 0, 0)
    assert sched.schedule_one(make_pod_info(big.to_pod(), 1)).node == "n"
    assert fs.cluster_fragment() == pytest.approx(1300)


def test_target_workload_keeps_popular_shapes_to_95_percent() -> None:
    shapes = [Shape(1, 0, 0)] * 90 + [Shape(2, 0, 0)] * 6 + [Shape(3, 0, 0)] * 4
    tw = TargetWorkload.from_shapes(shapes)
    assert tw.shapes == (Shape(1, 0, 0), Shape(2, 0, 0))
    assert tw.weights == pytest.approx((90 / 96, 6 / 96))


def test_replay_is_deterministic_and_reports_both_levels() -> None:
    # small steps (about 1% of the GPUs per pod), so that every whole-percent bin gets samples
    nodes = tuple(TraceNode(f"node-{i:02d}", 32000, 131072, g, "T4") for i, g in enumerate([1, 2, 4, 8, 2, 1]))
    pods = tuple(
        TracePod(f"pod-{i:03d}", 500 * (i % 3), 256, 1 if i % 5 else 0, 100 + 40 * (i % 5)) for i in range(100)
    )
    trace = Trace(nodes, pods, "n", "p")
    cfg = policy_config("FGD", set(in_tree_registry()), target_workload(trace))
    a = replay(trace, cfg, 42)
    b = replay(trace, cfg, 42)
    assert a.curves == b.curves
    assert a.unallocated(100) is not None and a.unallocated(130) is not None
    assert a.scheduled + a.failed == a.pods == a.originals + a.copies
    s = summarize([a, b])
    assert s["sd"]["100"] == 0.0 and s["mean"]["100"] == pytest.approx(a.unallocated(100), abs=1e-4)


def test_nodes_get_a_seeded_name_prefix_that_decides_ties() -> None:
    from packsched.sim.replay import seeded_nodes

    trace = small_trace()
    a = [n.name for n in seeded_nodes(trace, np.random.default_rng(42))]
    b = [n.name for n in seeded_nodes(trace, np.random.default_rng(43))]
    assert [n.split("-", 1)[1] for n in a] == sorted(n.name for n in trace.nodes)
    assert sorted(int(n[:4]) for n in a) == list(range(len(a)))
    assert a != b
