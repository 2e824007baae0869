"""The paper's policies as score plugins, on hand-computed cases (shared/spec/gpu-trace-evaluation.md §3.3)."""

from __future__ import annotations

import numpy as np
import pytest

from packsched.backend.gpu.table import device_table
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.plugins.bestfit.best_fit import BestFitScore, min_max_normalize
from packsched.plugins.dotproduct.dot_product import DotProductScore
from packsched.plugins.fgd.fgd import FGDScore
from packsched.plugins.gpuclustering.gpu_clustering import GpuClusteringScore
from packsched.plugins.gpupacking.gpu_packing import GpuPackingScore
from packsched.plugins.helper.gpu import CHOICE_KEY, sigmoid_score
from packsched.sim.trace import TraceNode, TracePod


def place(snap: Snapshot, node: int, pod: TracePod, gpus: tuple[int, ...], i: int) -> None:
    info = make_pod_info(pod.to_pod(), i)
    snap.add_pod(info, node)
    device_table(snap).assign(info, node, pod.demand, gpus)


@pytest.fixture
def snap() -> Snapshot:
    # n0: 8 GPUs, one shared GPU with 300 free (a 700 share) and 2 whole GPUs used; n1: 2 GPUs, empty;
    # n2: 8 GPUs, empty; n3: 4 GPUs, holding only share pods (GPU 0 has 600 free)
    s = Snapshot(
        [
            TraceNode("n0", 96000, 393216, 8, "G2").to_node(),
            TraceNode("n1", 64000, 262144, 2, "P100").to_node(),
            TraceNode("n2", 96000, 393216, 8, "G2").to_node(),
            TraceNode("n3", 32000, 131072, 4, "T4").to_node(),
        ]
    )
    place(s, 0, TracePod("a", 8000, 1024, 1, 700), (0,), 0)
    place(s, 0, TracePod("b", 16000, 1024, 2, 1000), (1, 2), 1)
    place(s, 3, TracePod("c", 4000, 1024, 1, 400), (0,), 2)
    return s


COLS = np.arange(4, dtype=np.int64)


def score(plugin: object, snap: Snapshot, pod: TracePod) -> list[int]:
    info = make_pod_info(pod.to_pod(), 99)
    return [int(x) for x in plugin.score(CycleState(), info, snap, COLS)]  # type: ignore[attr-defined]


def test_packing_tiers(snap: Snapshot) -> None:
    share = TracePod("s", 1000, 64, 1, 300)
    # n0: fits on the 300-free GPU -> 100 - (30 // 10) = 97; n1 and n2 empty: max(33 - 2, 2) = 31, max(33 - 8, 8) = 25;
    # n3: best-fit GPU has 600 free -> 100 - 6 = 94
    assert score(GpuPackingScore(None, None), snap, share) == [97, 31, 25, 94]  # type: ignore[arg-type]
    whole = TracePod("w", 1000, 64, 2, 1000)
    # used nodes need 2 free GPUs: 50 - 2 = 48
    assert score(GpuPackingScore(None, None), snap, whole) == [48, 31, 25, 48]  # type: ignore[arg-type]
    assert score(GpuPackingScore(None, None), snap, TracePod("cpu", 1000, 64, 0, 0)) == [0, 0, 0, 0]  # type: ignore[arg-type]


def test_clustering_tiers(snap: Snapshot) -> None:
    share = TracePod("s", 1000, 64, 1, 300)
    # n0 holds share + 2-gpu pods (mixed, includes share): 25 * (8000 - 5300) // 8000 + 50 = 58
    # n1, n2 empty: 25 * 6000 // 8000 + 25 = 43, 25 * 0 // 8000 + 25 = 25; n3 only shares: 25 * 4400 // 8000 + 75 = 88
    assert score(GpuClusteringScore(None, None), snap, share) == [58, 43, 25, 88]  # type: ignore[arg-type]
    one = TracePod("o", 1000, 64, 1, 1000)
    # nobody holds 1-GPU pods: n0 and n3 hold other classes (tier 0)
    assert score(GpuClusteringScore(None, None), snap, one) == [8, 43, 25, 13]  # type: ignore[arg-type]


def test_best_fit_and_normalisation(snap: Snapshot) -> None:
    pod = TracePod("p", 8000, 64, 1, 1000)
    raw = score(BestFitScore(None, None), snap, pod)  # type: ignore[arg-type]
    # n0: CPU left 72000-8000, GPU left 5300-1000: (1 - (0.5 * 64000/128000 + 0.5 * 4300/8000)) * 100 = 48.1 -> 48
    assert raw[0] == 48
    assert raw[1] == int((1 - (0.5 * 56000 / 128000 + 0.5 * 1000 / 8000)) * 100)
    assert min_max_normalize(np.array(raw, dtype=np.int64)).tolist() == [
        (r - min(raw)) * 100 // (max(raw) - min(raw)) for r in raw
    ]
    assert min_max_normalize(np.array([5, 5], dtype=np.int64)).tolist() == [0, 0]


def test_dot_product(snap: Snapshot) -> None:
    pod = TracePod("p", 8000, 64, 1, 1000)
    got = score(DotProductScore(None, None), snap, pod)  # type: ignore[arg-type]
    dot_n1 = (64000 / 128000 * 8000 / 128000 + 2000 / 8000 * 1000 / 8000) / 2
    assert got[1] == int(100 * (1 - dot_n1))
    assert got[2] < got[1]  # the emptier big node has the larger product


def test_fgd_prefers_the_gpu_and_node_that_fragment_least(snap: Snapshot) -> None:
    # target workload: only 500-milli shares (1 core): a GPU with less than 500 free is a fragment
    args = {"targetWorkload": [{"cpuMilli": 1000, "gpuMilli": 500, "gpuCount": 1, "weight": 1}]}
    fgd = FGDScore(args, None)  # type: ignore[arg-type]
    state = CycleState()
    pod = make_pod_info(TracePod("p", 1000, 64, 1, 300).to_pod(), 99)
    got = fgd.score(state, pod, snap, COLS).tolist()
    # n0: the 300 on GPU 0 was a fragment; taking it removes 300 of fragment -> sigmoid(0.3) * 100 = 57
    assert got[0] == int(100 / (1 + np.exp(-0.3)))
    # n3: GPU 0 has 600 free (not a fragment); 600 - 300 = 300 becomes one -> sigmoid(-0.3); a free GPU -> 700 free
    # is not a fragment -> 0 change -> 50: the free GPU wins on n3
    assert got[3] == 50 and got[1] == 50 and got[2] == 50
    choose = state.read(CHOICE_KEY)
    assert choose(0) == (0,) and choose(3) == (1,)
    assert sigmoid_score(np.array([0.0, -1e9, 1e9])).tolist() == [50, 0, 100]


def test_fgd_without_target_learns_the_workload_it_sees(snap: Snapshot) -> None:
    fgd = FGDScore(None, None)  # type: ignore[arg-type]
    listeners = len(snap.listeners)
    for i, milli in enumerate([300, 500, 300, 1000]):
        pod = make_pod_info(TracePod(f"p{i}", 1000, 64, 1, milli).to_pod(), 100 + i)
        assert len(fgd.score(CycleState(), pod, snap, COLS)) == 4
    assert len(snap.listeners) == listeners + 1  # one fragment tracker, re-targeted as shapes appear
    assert fgd._learned is not None and len(fgd._learned.shapes) == 3


def test_fgd_args_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown field"):
        FGDScore({"target": []}, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"targetWorkload\[0\].gpuMilli must be at most 1000"):
        FGDScore({"targetWorkload": [{"gpuMilli": 2000, "gpuCount": 1}]}, None)  # type: ignore[arg-type]
