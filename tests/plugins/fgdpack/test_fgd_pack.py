"""FGDPackScore (issue 14): its score on a hand-built node, its demand-discounted target workload, and over a
replay of a small synthetic trace, under both policies built on it (FGDPack, FGDDemand), that it never
over-commits a GPU and places every pod the same way twice with the same seed."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import packsched.sim.replay as replay_mod
from packsched.api.gpushare import MILLI
from packsched.backend.gpu.frag import FragState, Shape, TargetWorkload
from packsched.backend.gpu.table import DeviceTable, device_table
from packsched.config.loader import load_config_data
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.plugins.fgd.fgd import FGDScore
from packsched.plugins.fgdpack.fgd_pack import FGDPackScore, rank_scores
from packsched.plugins.helper.gpu import CHOICE_KEY
from packsched.plugins.registry import in_tree_registry
from packsched.sim.policies import POLICIES, file_config, policy_config, policy_document
from packsched.sim.replay import replay, target_workload
from packsched.sim.trace import Trace, TraceNode, TracePod

# One shape: half a GPU with 1 core (p = 1).
HALF = TargetWorkload((Shape(1000, 500, 1, ()),), (1.0,))


def one_node(frees: list[int]) -> Snapshot:
    """A 32-core node with one GPU per entry of ``frees``, that many milli free (share pods of 1 core each)."""
    snap = Snapshot([TraceNode("n", 32000, 131072, len(frees), "T4").to_node()])
    for g, free in enumerate(frees):
        if free < MILLI:
            pod = TracePod(f"used-{g}", 1000, 64, 1, MILLI - free)
            info = make_pod_info(pod.to_pod(), g)
            snap.add_pod(info, 0)
            device_table(snap).assign(info, 0, pod.demand, (g,))
    return snap


def plugin(**args: Any) -> FGDPackScore:
    return FGDPackScore({"targetWorkload": HALF.as_args(), **args}, None)  # type: ignore[arg-type]


COL = np.array([0], dtype=np.int64)


def test_value_on_a_hand_built_node_is_the_fragment_decrease_minus_the_packing_term() -> None:
    # GPUs free: 1000, 600, 300, 1000. F_n for the half-GPU shape = milli on GPUs below 500 = 300.
    snap = one_node([1000, 600, 300, 1000])
    assert FragState(snap, HALF).cluster_fragment() == 300.0
    pod = make_pod_info(TracePod("p", 1000, 64, 1, 200).to_pod(), 9)
    # 200 milli on GPU 0: 800 left, still >= 500: F stays 300 (decrease 0). On GPU 1: 400 left, below 500:
    # F = 700 (decrease -400). On GPU 2: 100 left: F = 100 (decrease +200, the best). GPU 3 as GPU 0.
    state = CycleState()
    values = plugin(resolution="exact", packWeight=0.0).values(state, pod, snap, COL)
    assert values.tolist() == [200.0]
    assert state.read(CHOICE_KEY)(0) == (2,)
    # left after = 0.5 * (32000 - 2000 - 1000) / 128000 + 0.5 * (2900 - 200) / 8000
    left = 0.5 * 29000 / 128000 + 0.5 * 2700 / 8000
    packed = plugin(resolution="exact", packWeight=0.5).values(CycleState(), pod, snap, COL)
    assert packed[0] == pytest.approx(200.0 - 0.5 * 1000 * left)
    # the default (hybrid, packWeight 2): FGD's integer score of the best GPU, 2 points per unit of left
    sig = plugin().values(CycleState(), pod, snap, COL)
    fgd = FGDScore({"targetWorkload": HALF.as_args()}, None).score(CycleState(), pod, snap, COL)  # type: ignore[arg-type]
    assert int(fgd[0]) == 54 and sig[0] == pytest.approx(54 - 2 * left)
    # a coarser sigmoid: int(100 * sigmoid(200 / 2000)) = 52
    coarse = plugin(sigmoidScale=2000, packWeight=0).values(CycleState(), pod, snap, COL)
    assert coarse.tolist() == [52.0]


def test_hybrid_picks_the_gpu_by_the_exact_decrease() -> None:
    # 20 milli on GPU 0 (1000 free) changes nothing (decrease 0); on GPU 1 (300 free) the fragment shrinks by 20.
    # FGD's integer score is 50 for both: sigmoid keeps the lowest index, hybrid takes GPU 1.
    snap = one_node([1000, 300])
    pod = make_pod_info(TracePod("p", 1000, 64, 1, 20).to_pod(), 9)
    for resolution, gpu in (("sigmoid", 0), ("hybrid", 1), ("exact", 1)):
        state = CycleState()
        plugin(resolution=resolution, packWeight=0).values(state, pod, snap, COL)
        assert state.read(CHOICE_KEY)(0) == (gpu,), resolution


def test_whole_gpu_and_cpu_only_pods() -> None:
    snap = one_node([1000, 600, 300, 1000])
    # one whole GPU takes a completely free GPU: the idle milli shrinks, the fragment (300) stays
    whole = make_pod_info(TracePod("w", 1000, 64, 1, 1000).to_pod(), 9)
    exact = plugin(resolution="exact", packWeight=0)
    assert exact.values(CycleState(), whole, snap, COL).tolist() == [0.0]
    # a CPU-only pod that leaves less than 1 core makes every idle GPU milli a fragment: 2900 - 300
    cpu = make_pod_info(TracePod("c", 29500, 64, 0, 0).to_pod(), 10)
    assert exact.values(CycleState(), cpu, snap, COL).tolist() == [-2600.0]


def test_rank_scores_keeps_the_best_alone_at_100() -> None:
    assert rank_scores(np.array([3.0, 2.9999, -5.0, 3.0])).tolist() == [100, 98, 0, 100]
    assert rank_scores(np.array([1.0, 1.0])).tolist() == [100, 100]
    assert rank_scores(np.array([], dtype=np.float64)).tolist() == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"resolution": "round"}, "resolution"),
        ({"packWeight": -1}, "packWeight"),
        ({"packWeight": True}, "packWeight"),
        ({"sigmoidScale": 0}, "sigmoidScale"),
        ({"demandExponent": -0.5}, "demandExponent"),
        ({"demandExponent": True}, "demandExponent"),
        ({"demandExponent": "0.5"}, "demandExponent"),
        ({"demandFloor": 0}, "demandFloor"),
        ({"demandFloor": 50.5}, "demandFloor"),
        ({"demandFloor": 8001}, "demandFloor"),
        ({"other": 1}, "unknown field"),
        ({"targetWorkload": []}, "at least one shape"),
    ],
)
def test_bad_args_are_refused(args: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        FGDPackScore(args, None)  # type: ignore[arg-type]


def small_trace(n_pods: int = 60) -> Trace:
    nodes = tuple(TraceNode(f"node-{i:02d}", 32000, 131072, g, "T4") for i, g in enumerate([1, 2, 4, 8, 2, 1, 4]))
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


def replay_tables(
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    policy: str = "FGDPack",
    config: KubeSchedulerConfiguration | None = None,
) -> DeviceTable:
    """Replays the small trace under a policy (or a config) and returns the run's device table."""
    tables: list[DeviceTable] = []

    def keep(snap: Snapshot) -> DeviceTable:
        table = device_table(snap)
        tables.append(table)
        return table

    monkeypatch.setattr(replay_mod, "device_table", keep)
    trace = small_trace()
    cfg = config or policy_config(policy, set(in_tree_registry()), target_workload(trace))
    result = replay(trace, cfg, seed)
    assert result.scheduled > 0
    return tables[0]


def test_policies_are_listed() -> None:
    assert "FGDPack" in POLICIES and "FGDDemand" in POLICIES


OURS = pytest.mark.parametrize("policy", ["FGDPack", "FGDDemand"])


@OURS
def test_a_replay_never_over_commits_a_gpu(monkeypatch: pytest.MonkeyPatch, policy: str) -> None:
    table = replay_tables(monkeypatch, 42, policy)
    allocated: dict[tuple[int, int], int] = defaultdict(int)
    for col, gpus, milli, _ in table.assigned.values():
        for g in gpus:
            allocated[col, g] += milli
    assert allocated and max(allocated.values()) <= MILLI
    assert (table.free >= 0).all()
    for (col, g), milli in allocated.items():
        assert table.free[col, g] == MILLI - milli


@OURS
def test_a_replay_is_deterministic_per_seed(monkeypatch: pytest.MonkeyPatch, policy: str) -> None:
    first = replay_tables(monkeypatch, 7, policy).assigned
    second = replay_tables(monkeypatch, 7, policy).assigned
    assert first == second
    assert replay_tables(monkeypatch, 8, policy).assigned != first


def test_discounted_weighs_each_shape_by_popularity_over_a_power_of_its_gpu_demand() -> None:
    cpu_only, share, eight = Shape(4000, 0, 0), Shape(1000, 500, 1), Shape(8000, 1000, 8)
    target = TargetWorkload((cpu_only, share, eight), (0.5, 0.3, 0.2))
    assert target.discounted(0) is target
    # demands 100 (the floor, for the CPU-only shape), 500 and 8000 milli
    raw = [0.5 / 100**0.5, 0.3 / 500**0.5, 0.2 / 8000**0.5]
    got = target.discounted(0.5)
    assert got.shapes == target.shapes
    assert got.weights == pytest.approx([w / sum(raw) for w in raw])
    assert got.weights[0] > 0.75 and got.weights[2] < 0.2 / 5  # small demands gain, the 8-GPU shape loses
    floored = target.discounted(1, floor=1000)  # the CPU-only shape and the share both count as 1,000 milli
    raw = [0.5 / 1000, 0.3 / 1000, 0.2 / 8000]
    assert floored.weights == pytest.approx([w / sum(raw) for w in raw])


def fgd_config(score: str, args: dict[str, Any]) -> KubeSchedulerConfiguration:
    doc = policy_document("FGD")
    profile = doc["profiles"][0]
    profile["plugins"]["score"]["enabled"] = [{"name": score, "weight": 1}]
    profile["pluginConfig"] = [{"name": score, "args": args}]
    return load_config_data(doc, "<test>", set(in_tree_registry()))


@pytest.mark.parametrize("exponent", [0, 0.5])
def test_without_packing_it_places_every_pod_as_fgd_does_on_the_reweighed_workload(
    monkeypatch: pytest.MonkeyPatch, exponent: float
) -> None:
    # packWeight 0 and resolution sigmoid keep FGD's own choices; demandExponent only changes the workload's weights
    target = target_workload(small_trace())
    ours = fgd_config(
        "FGDPackScore",
        {"targetWorkload": target.as_args(), "packWeight": 0, "resolution": "sigmoid", "demandExponent": exponent},
    )
    fgd = fgd_config("FGDScore", {"targetWorkload": target.discounted(exponent).as_args()})
    for seed in (3, 4):
        placed = replay_tables(monkeypatch, seed, config=ours).assigned
        assert placed == replay_tables(monkeypatch, seed, config=fgd).assigned
    if exponent:  # and the reweighing does change placements on this trace
        plain = fgd_config("FGDScore", {"targetWorkload": target.as_args()})
        assert any(
            replay_tables(monkeypatch, seed, config=ours).assigned
            != replay_tables(monkeypatch, seed, config=plain).assigned
            for seed in (3, 4, 5)
        )


def test_a_config_file_without_target_workload_gets_the_trace_s(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "profiles:\n"
        "- schedulerName: default-scheduler\n"
        "  plugins:\n"
        "    multiPoint: {enabled: [{name: GPUShare}]}\n"
        "    score: {disabled: [{name: '*'}], enabled: [{name: FGDPackScore}]}\n"
        "  pluginConfig:\n"
        "  - name: FGDPackScore\n"
        "    args: {packWeight: 1}\n",
        encoding="utf-8",
    )
    cfg = file_config(str(path), set(in_tree_registry()), HALF)
    assert cfg.profiles[0].plugin_config["FGDPackScore"] == {"packWeight": 1, "targetWorkload": HALF.as_args()}


def test_without_target_workload_it_learns_the_shapes_it_scores() -> None:
    snap = one_node([1000, 600, 300, 1000])
    learner = FGDPackScore({"resolution": "exact", "packWeight": 0}, None)  # type: ignore[arg-type]
    pod = make_pod_info(TracePod("p", 1000, 64, 1, 200).to_pod(), 9)
    # the only shape seen is (1 core, 200 milli): no GPU is below 200 before; GPUs 0, 1 and 3 keep at least 200
    # (decrease 0, the lowest index wins), GPU 2 would keep 100, below 200 (decrease -100)
    state = CycleState()
    assert learner.values(state, pod, snap, COL).tolist() == [0.0]
    assert state.read(CHOICE_KEY)(0) == (0,)
    assert learner.seen == {Shape(1000, 200, 1, ()): 1}


def test_a_learned_workload_is_reweighed_too() -> None:
    snap = one_node([1000, 600, 300, 1000])
    learner = FGDPackScore({"demandExponent": 1, "demandFloor": 300}, None)  # type: ignore[arg-type]
    for i, milli in enumerate([200, 200, 800]):
        learner.values(CycleState(), make_pod_info(TracePod(f"p{i}", 1000, 64, 1, milli).to_pod(), i), snap, COL)
    learned = learner._learned
    assert learned is not None and learned.weights == pytest.approx([2 / 3, 1 / 3])  # (200 milli) twice, (800) once
    used = learner._frag(snap).shapes.target
    assert used.shapes == learned.shapes
    raw = [2 / 3 / 300, 1 / 3 / 800]  # 200 milli is below the floor of 300
    assert used.weights == pytest.approx([w / sum(raw) for w in raw])
