"""Bin-packing traps reported by packsched.config.lint."""

from __future__ import annotations

from typing import Any

from packsched.config import lint, load_config_data
from packsched.config.catalog import V1, V1BETA1
from packsched.config.types import SEMANTICS_V1_16, SEMANTICS_V1_17, KubeSchedulerConfiguration

KNOWN = frozenset(
    {
        "PrioritySort",
        "SchedulingGates",
        "NodeUnschedulable",
        "NodeName",
        "NodePorts",
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "DefaultPreemption",
        "DefaultBinder",
        "NodeResourcesLeastAllocated",
        "NodeResourcesMostAllocated",
        "RequestedToCapacityRatio",
        "NodePreferAvoidPods",
    }
)

BINPACK = {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}
SPREAD = {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}


def load(doc: dict[str, Any], **kw: Any) -> KubeSchedulerConfiguration:
    return load_config_data(doc, "cfg.yaml", KNOWN, **kw)


def v1_profile(
    strategy: dict[str, Any] | None,
    *,
    fit_weight: int | None = None,
    disable: tuple[str, ...] = (),
    pct: int | None = 100,
) -> dict[str, Any]:
    plugins: dict[str, Any] = {}
    if fit_weight is not None:
        plugins["score"] = {"enabled": [{"name": "NodeResourcesFit", "weight": fit_weight}]}
    if disable:
        plugins.setdefault("score", {})["disabled"] = [{"name": n} for n in disable]
    doc: dict[str, Any] = {
        "apiVersion": V1,
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": plugins}],
    }
    if strategy is not None:
        doc["profiles"][0]["pluginConfig"] = [{"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}]
    if pct is not None:
        doc["percentageOfNodesToScore"] = pct
    return doc


def only(warnings: list[str], needle: str) -> list[str]:
    return [w for w in warnings if needle in w]


# -- (a) outvoting -------------------------------------------------------------------------------------------


def test_balanced_allocation_outvotes_most_allocated_at_default_weights() -> None:
    warnings = lint(load(v1_profile({"type": "MostAllocated"})))
    assert only(warnings, "outvote") == [
        'profile "default-scheduler": NodeResourcesBalancedAllocation (weight 1) can outvote bin packing by '
        "NodeResourcesFit (MostAllocated, weight 1): it prefers nodes whose resource fractions stay "
        "balanced, not "
        "full ones and adds up to 100 points against 100; raise NodeResourcesFit's weight above 1 or disable "
        "NodeResourcesBalancedAllocation"
    ]


def test_a_heavier_packing_plugin_or_a_disabled_opponent_is_fine() -> None:
    assert only(lint(load(v1_profile({"type": "MostAllocated"}, fit_weight=2))), "outvote") == []
    doc = v1_profile({"type": "MostAllocated"}, disable=("NodeResourcesBalancedAllocation",))
    assert only(lint(load(doc)), "outvote") == []


def test_rtcr_shape_direction_decides() -> None:
    rising = {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": BINPACK}
    falling = {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": SPREAD}
    assert only(lint(load(v1_profile(rising))), "outvote") != []
    assert lint(load(v1_profile(falling))) == []  # not packing: nothing to warn about
    assert lint(load(v1_profile({"type": "LeastAllocated"}))) == []


def test_v1beta1_least_allocated_outvotes_most_allocated() -> None:
    doc = {
        "apiVersion": V1BETA1,
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [
            {
                "plugins": {
                    "score": {
                        "disabled": [{"name": "NodeResourcesBalancedAllocation"}],
                        "enabled": [{"name": "NodeResourcesMostAllocated", "weight": 1}],
                    }
                }
            }
        ],
    }
    assert lint(load(doc)) == [
        'profile "default-scheduler": NodeResourcesLeastAllocated (weight 1) can outvote bin packing by '
        "NodeResourcesMostAllocated (MostAllocated, weight 1): it prefers emptier nodes (LeastAllocated) and "
        "adds "
        "up to 100 points against 100; raise NodeResourcesMostAllocated's weight above 1 or disable "
        "NodeResourcesLeastAllocated"
    ]


def test_left_out_default_scorers_are_mentioned_unless_disabled() -> None:
    warnings = lint(load(v1_profile({"type": "MostAllocated"}, fit_weight=5)))
    assert only(warnings, "would also score") == [
        'profile "default-scheduler": kube-scheduler would also score with PodTopologySpread, '
        "InterPodAffinity, "
        "ImageLocality (default plugins packsched leaves out), which can pull pods away from the fullest "
        "nodes; "
        "disable them in the real configuration or give the packing plugin a clearly larger weight"
    ]
    doc = v1_profile({"type": "MostAllocated"}, fit_weight=5, disable=("*",))
    assert only(lint(load(doc)), "would also score") == []


# -- (b) percentageOfNodesToScore ----------------------------------------------------------------------------


def test_percentage_of_nodes_to_score() -> None:
    most = {"type": "MostAllocated"}
    adaptive = lint(load(v1_profile(most, fit_weight=2, disable=("*",), pct=None)))
    assert adaptive == [
        'profile "default-scheduler": percentageOfNodesToScore is 0 (the global value; 0 = adaptive, the '
        "default): in a cluster of n >= 100 nodes the scheduler scores only max(5, 50 - n/125)% of the nodes "
        "(it "
        "stops filtering after max(100, n x that percentage / 100) feasible nodes), and each cycle starts "
        "where "
        "the last stopped, so successive pods see different nodes and packing turns into spreading "
        "(kubernetes#95709); set percentageOfNodesToScore: 100 to score every feasible node"
    ]
    partial = lint(load(v1_profile(most, fit_weight=2, disable=("*",), pct=30)))
    assert partial == [
        'profile "default-scheduler": percentageOfNodesToScore is 30 (the global value): in a cluster of n '
        ">= 100 "
        "nodes the scheduler scores only max(100, n x 30 / 100) feasible nodes, starting each cycle where "
        "the "
        "last stopped, which spreads pods instead of packing them (kubernetes#95709); set "
        "percentageOfNodesToScore: 100"
    ]
    assert lint(load(v1_profile(most, fit_weight=2, disable=("*",), pct=100))) == []
    # The profile's own value wins over the global one.
    doc = v1_profile(most, fit_weight=2, disable=("*",), pct=100)
    doc["profiles"][0]["percentageOfNodesToScore"] = 10
    [warning] = lint(load(doc))
    assert "percentageOfNodesToScore is 10 (the profile's value)" in warning


# -- (c) only extended resources -----------------------------------------------------------------------------


def test_gpu_only_resources_leave_other_pods_unscored() -> None:
    strategy = {
        "type": "RequestedToCapacityRatio",
        "resources": [{"name": "nvidia.com/gpu", "weight": 5}],
        "requestedToCapacityRatio": BINPACK,
    }
    warnings = lint(load(v1_profile(strategy, fit_weight=2, disable=("*",))))
    assert warnings == [
        'profile "default-scheduler": NodeResourcesFit scores only nvidia.com/gpu: a pod that requests none '
        "of "
        "them gets score 0 from NodeResourcesFit on every node (unrequested extended resources are skipped "
        "since "
        "v1.22, kubernetes#119849), so its placement is left to the other plugins; add cpu and memory to the "
        "resources (a small weight is enough) if such pods should be packed too"
    ]
    # The legacy arithmetic skips nothing, so the trap does not exist there.
    assert lint(load(v1_profile(strategy, fit_weight=2, disable=("*",)), rtcr_semantics=SEMANTICS_V1_17)) == []
    with_cpu = dict(strategy, resources=[{"name": "nvidia.com/gpu", "weight": 5}, {"name": "cpu", "weight": 1}])
    assert lint(load(v1_profile(with_cpu, fit_weight=2, disable=("*",)))) == []


# -- Policy notes --------------------------------------------------------------------------------------------


def test_policy_notes() -> None:
    doc = {
        "kind": "Policy",
        "apiVersion": "v1",
        "priorities": [
            {
                "name": "RequestedToCapacityRatioPriority",
                "weight": 1,
                "argument": {"requestedToCapacityRatioArguments": BINPACK},
            }
        ],
    }
    warnings = lint(load(doc, rtcr_semantics=SEMANTICS_V1_16))
    assert warnings[-2:] == [
        "kind: Policy was removed in kube-scheduler v1.23 (KEP-2901): this file works only with v1.22 and "
        "older; "
        "today the same scoring is a KubeSchedulerConfiguration v1 with NodeResourcesFit's scoringStrategy",
        "RequestedToCapacityRatio is scored as in v1.16: the 0..10 shape is used as is (node scores 0..10), "
        "utilisation is rounded up and resources absent from a node score f(100)",
    ]
    assert any("percentageOfNodesToScore is 0" in w for w in warnings)


def test_the_bin_packing_guide_names_the_plugins_validate_warns_about() -> None:
    """Issue 24: the guide named TaintToleration and NodeAffinity, which `validate` does not warn about, and left
    out PodTopologySpread and ImageLocality, which it does."""
    import re
    from pathlib import Path

    from packsched.config.lint import SPREADING_PLUGINS

    guide = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "bin-packing.md").read_text(encoding="utf-8")
    bullet = guide.split("- **Another score plugin outvotes packing.**")[1].split("\n- **")[0]
    named = set(re.findall(r"\b([A-Z][A-Za-z]+)\s+\((?:weight )?\d", bullet)) - {"NodeResourcesFit"}
    assert named == set(SPREADING_PLUGINS)
