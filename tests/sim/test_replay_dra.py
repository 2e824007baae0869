"""``replay --as-dra``: the GPU trace as DRA devices with a 1,000-milli consumable capacity and the GPU pods as
claims (sim/dratrace.py). DRA's allocator takes the first device that fits, so every curve must equal the GPUShare
replay's with ``gpuChoice: FirstFit``, whatever the policy; and the replay refuses a profile where GPUShare would
take GPUs too, or where DynamicResources does not run."""

from __future__ import annotations

import numpy as np
import pytest

from packsched.api.errors import InputError
from packsched.config.loader import load_config_data
from packsched.plugins.registry import in_tree_registry
from packsched.sim.dratrace import claim_for, trace_dra_objects
from packsched.sim.policies import policy_config, policy_document
from packsched.sim.replay import check_replay, replay, seeded_nodes, target_workload
from packsched.sim.trace import Trace, TraceNode, TracePod

KNOWN = set(in_tree_registry())


def trace() -> Trace:
    nodes = tuple(
        TraceNode(f"node-{i:02d}", 32000, 131072, g, m)
        for i, (g, m) in enumerate([(1, "T4"), (2, "T4"), (4, "V100"), (8, "V100"), (2, "T4"), (0, "")])
    )
    rng = np.random.default_rng(0)
    pods = []
    for i in range(60):
        kind = i % 5
        models: tuple[str, ...] = ("V100",) if i % 7 == 0 else ()
        if kind == 0:
            pods.append(TracePod(f"pod-{i:03d}", 2000, 1024, 0, 0))
        elif kind in (1, 4):
            pods.append(TracePod(f"pod-{i:03d}", 1000, 1024, 1, int(rng.integers(1, 10)) * 100, models))
        elif kind == 2:
            pods.append(TracePod(f"pod-{i:03d}", 4000, 2048, 1, 1000, models))
        else:
            pods.append(TracePod(f"pod-{i:03d}", 8000, 4096, 2, 1000))
    return Trace(nodes, tuple(pods), "nodes.csv", "pods.csv")


@pytest.mark.parametrize("policy", ["FGD", "BestFit", "LeastAllocated", "MostAllocated", "Random", "Clustering"])
def test_dra_gives_the_figures_of_gpushare_first_fit(policy: str) -> None:
    t = trace()
    target = target_workload(t)
    first_fit = replay(t, policy_config(policy, KNOWN, target, gpu_choice="FirstFit"), 7, target=target)
    dra = replay(t, policy_config(policy, KNOWN, target, as_dra=True), 7, target=target, as_dra=True)
    assert dra.scheduled == first_fit.scheduled > 0
    assert dra.curves == first_fit.curves


def test_best_fit_and_first_fit_differ_somewhere() -> None:
    """The comparison can fail: GPUShare's default (best fit) leaves other GPUs free than first fit."""
    t = trace()
    target = target_workload(t)
    differ = False
    for seed in range(5):
        best = replay(t, policy_config("LeastAllocated", KNOWN, target), seed, target=target)
        dra = replay(t, policy_config("LeastAllocated", KNOWN, target, as_dra=True), seed, target=target, as_dra=True)
        differ |= best.curves != dra.curves
    assert differ


def test_the_claims_and_slices() -> None:
    t = trace()
    nodes = seeded_nodes(t, np.random.default_rng(1))
    dra = trace_dra_objects(nodes)
    assert sum(len(s.devices) for s in dra.slices) == sum(n.gpus for n in t.nodes)
    assert all(d.allow_multiple and d.cel.capacity == (("milli", 1000),) for s in dra.slices for d in s.devices)
    share = TracePod("p", 1000, 64, 1, 300, ("V100", "T4")).to_pod()
    claim = claim_for(share, TracePod("p", 1000, 64, 1, 300, ("V100", "T4")).demand)
    [request] = claim.spec.requests
    assert request.exactly is not None
    assert request.exactly.capacity == (("milli", 300),)
    assert request.exactly.count == 1
    assert "V100" in request.exactly.selectors[0] and "T4" in request.exactly.selectors[0]


def test_a_profile_with_gpushare_or_without_dynamic_resources_is_refused() -> None:
    t = trace()
    with pytest.raises(InputError, match="GPUShare must not run at filter, reserve"):
        check_replay(t, policy_config("FGD", KNOWN), as_dra=True)
    check_replay(t, policy_config("FGD", KNOWN, as_dra=True), as_dra=True)  # the policy's own profile passes
    doc = policy_document("FGD", as_dra=True)
    doc["profiles"][0]["plugins"]["filter"] = {"disabled": [{"name": "DynamicResources"}]}
    with pytest.raises(InputError, match="DynamicResources allocates the GPUs' devices and must run at"):
        check_replay(t, load_config_data(doc, "<test>", KNOWN), as_dra=True)
