"""GPUShare: per-GPU fit rules, GPU model constraints, best-fit Reserve, and that no GPU is ever over-allocated."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from packsched.api.gpushare import GPU_INDEX, pod_gpu_demand
from packsched.backend.gpu.table import device_table
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Status
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import TIE_NAME, Scheduler
from packsched.sim.policies import policy_config
from packsched.sim.trace import TraceNode, TracePod


class _Actions:
    def bind(self, pod: Any, node: str) -> Status:
        return Status()

    def preempt(self, victim: Any, preemptor: Any) -> None:
        raise AssertionError("no preemption")


def cluster(*nodes: TraceNode, policy: str = "BestFit") -> tuple[Snapshot, Scheduler]:
    snap = Snapshot([n.to_node() for n in nodes])
    cfg = policy_config(policy, set(in_tree_registry()))
    return snap, Scheduler(cfg, in_tree_registry(), _Actions(), snap, 1, tie_break=TIE_NAME)  # type: ignore[arg-type]


def submit(sched: Scheduler, pod: TracePod, i: int = 0) -> str | None:
    return sched.schedule_one(make_pod_info(pod.to_pod(), i)).node


def test_share_must_fit_inside_one_gpu() -> None:
    _, sched = cluster(TraceNode("n", 32000, 65536, 2, "T4"))
    assert submit(sched, TracePod("a", 1000, 1024, 1, 600), 0) == "n"
    assert submit(sched, TracePod("b", 1000, 1024, 1, 600), 1) == "n"  # the second GPU
    # 400 + 400 milli are free in total, but no single GPU has 500
    res = sched.schedule_one(make_pod_info(TracePod("c", 1000, 1024, 1, 500).to_pod(), 2))
    assert res.node is None
    assert "no GPU with enough free share" in res.message
    assert submit(sched, TracePod("d", 1000, 1024, 1, 400), 3) == "n"


def test_whole_gpus_need_completely_free_gpus() -> None:
    snap, sched = cluster(TraceNode("n", 32000, 65536, 4, "T4"))
    assert submit(sched, TracePod("share", 1000, 1024, 1, 100), 0) == "n"
    # 3 GPUs are completely free and one has 900 free: 4 whole GPUs do not fit, 3 do
    assert submit(sched, TracePod("four", 1000, 1024, 4, 1000), 1) is None
    assert submit(sched, TracePod("three", 1000, 1024, 3, 1000), 2) == "n"
    table = device_table(snap)
    assert table.free[0].tolist() == [900, 0, 0, 0]


def test_reserve_records_best_fit_gpu_on_the_pod() -> None:
    _, sched = cluster(TraceNode("n", 32000, 65536, 4, "T4"))
    pods = [TracePod(f"p{i}", 100, 64, 1, m) for i, m in enumerate([500, 300, 600])]
    infos = [make_pod_info(p.to_pod(), i) for i, p in enumerate(pods)]
    for info in infos:
        assert sched.schedule_one(info).node == "n"
    # 500 -> GPU 0; 300 fits best on GPU 0 (500 free); 600 goes to the lowest free GPU 1
    assert [i.pod.annotations[GPU_INDEX] for i in infos] == ["0", "0", "1"]
    whole = make_pod_info(TracePod("w", 100, 64, 2, 1000).to_pod(), 9)
    assert sched.schedule_one(whole).node == "n"
    assert whole.pod.annotations[GPU_INDEX] == "2-3"


def test_gpu_model_constraint() -> None:
    _, sched = cluster(TraceNode("a-t4", 32000, 65536, 2, "T4"), TraceNode("b-v100", 32000, 65536, 2, "V100M16"))
    res = sched.schedule_one(make_pod_info(TracePod("p", 100, 64, 1, 1000, ("V100M16", "V100M32")).to_pod(), 0))
    assert res.node == "b-v100"
    res = sched.schedule_one(make_pod_info(TracePod("q", 100, 64, 1, 1000, ("P100",)).to_pod(), 1))
    assert res.node is None and "GPU model not accepted" in res.message


def test_removed_pod_frees_its_gpus_and_comes_back_on_the_same_ones() -> None:
    snap, sched = cluster(TraceNode("n", 32000, 65536, 2, "T4"))
    info = make_pod_info(TracePod("p", 100, 64, 1, 700).to_pod(), 0)
    sched.schedule_one(info)
    table = device_table(snap)
    assert table.free[0].tolist() == [300, 1000]
    snap.remove_pod(info)
    assert table.free[0].tolist() == [1000, 1000]
    snap.add_pod(info, 0)  # e.g. a preemption dry run puts it back: the recorded gpu-index is honoured
    assert table.free[0].tolist() == [300, 1000]


def test_demand_parsing() -> None:
    p = TracePod("p", 100, 64, 1, 250, ("A|B",)).to_pod()
    d = pod_gpu_demand(p)
    assert (d.milli, d.count, d.sharing, d.total_milli) == (250, 1, True, 250)
    assert pod_gpu_demand(TracePod("c", 100, 64, 0, 0).to_pod()).wants_gpu is False


pod_strategy = st.tuples(
    st.sampled_from([0, 1, 1, 1, 2, 4, 8]), st.integers(min_value=50, max_value=1000), st.integers(0, 16000)
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=5),
    st.lists(pod_strategy, min_size=1, max_size=40),
    st.sampled_from(["BestFit", "FGD", "Random", "Packing", "Clustering", "DotProd", "MostAllocated"]),
)
def test_no_gpu_is_ever_over_allocated(gpus: list[int], pods: list[tuple[int, int, int]], policy: str) -> None:
    nodes = [TraceNode(f"n{i}", 32000, 131072, g, "G") for i, g in enumerate(gpus)]
    snap, sched = cluster(*nodes, policy=policy)
    table = device_table(snap)
    placed: list[tuple[int, int, int]] = []
    for i, (count, milli, cpu) in enumerate(pods):
        milli = milli if count == 1 else 1000
        info = make_pod_info(TracePod(f"p{i}", cpu, 64, count, milli if count else 0).to_pod(), i)
        node = sched.schedule_one(info).node
        if node is not None and count:
            placed.append((snap.index[node], count, milli))
        assert (table.free >= 0).all() and (table.free <= 1000).all()
        assert (snap.free(snap.row["cpu"]) >= 0).all()
    used = np.zeros_like(table.free)
    for info in snap.pods.values():
        raw = info.pod.annotations.get(GPU_INDEX)
        if raw is not None:
            for g in raw.split("-"):
                used[info.node, int(g)] += pod_gpu_demand(info.pod).milli
    assert (used + table.free == np.where(np.arange(table.width) < table.count[:, None], 1000, 0)).all()
    assert sum(c * m for _, c, m in placed) == int(used.sum())


def test_first_fit_takes_the_lowest_indexed_gpu_that_fits() -> None:
    def run(choice: str) -> list[str]:
        snap = Snapshot([TraceNode("n", 32000, 65536, 3, "T4").to_node()])
        cfg = policy_config("BestFit", set(in_tree_registry()), gpu_choice=choice)
        sched = Scheduler(cfg, in_tree_registry(), _Actions(), snap, 1, tie_break=TIE_NAME)  # type: ignore[arg-type]
        out = []
        for i, milli in enumerate((500, 700, 250)):
            info = make_pod_info(TracePod(f"p{i}", 1000, 1024, 1, milli).to_pod(), i)
            assert sched.schedule_one(info).node == "n"
            out.append(info.pod.annotations[GPU_INDEX])
        return out

    # GPU 0 has 500 free and GPU 1 300 when the 250 share comes: best fit takes GPU 1, first fit GPU 0
    assert run("BestFit") == ["0", "1", "1"]
    assert run("FirstFit") == ["0", "1", "0"]
    snap = Snapshot([TraceNode("n", 32000, 65536, 3, "T4").to_node()])
    table = device_table(snap)
    table.free[0, :3] = [100, 600, 300]
    demand = pod_gpu_demand(TracePod("x", 1000, 1024, 1, 250).to_pod())
    assert table.best_fit(0, demand) == (2,)
    assert table.first_fit(0, demand) == (1,)


def test_gpu_choice_args_are_checked() -> None:
    import pytest

    from packsched.plugins.gpushare.gpu_share import GPUShare

    with pytest.raises(ValueError, match="gpuChoice must be one of BestFit, FirstFit"):
        GPUShare({"gpuChoice": "Worst"}, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="takes only gpuChoice"):
        GPUShare({"other": 1}, None)  # type: ignore[arg-type]
