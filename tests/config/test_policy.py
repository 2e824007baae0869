"""The legacy Policy (kind: Policy) converted as kube-scheduler v1.18-v1.22's legacy registry did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from packsched.api.errors import InputError
from packsched.config import load_config, load_config_data
from packsched.config.types import (
    REQUESTED_TO_CAPACITY_RATIO,
    SEMANTICS_V1_16,
    KubeSchedulerConfiguration,
    PluginRef,
    Profile,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoreOnlyResourceArgs,
    ScoringStrategy,
    UtilizationShapePoint,
)

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
DATA = Path(__file__).resolve().parent / "data"
BINPACK = RequestedToCapacityRatioParam([UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)])
FILTERS = [
    ("NodeUnschedulable", 0),
    ("NodeResourcesFit", 0),
    ("NodeName", 0),
    ("NodePorts", 0),
    ("NodeAffinity", 0),
    ("TaintToleration", 0),
]


def points(prof: Profile) -> dict[str, list[tuple[str, int]]]:
    return {p: [(r.name, r.weight) for r in s.enabled] for p, s in prof.plugins.sets.items()}


def policy(**fields: Any) -> dict[str, Any]:
    return {"kind": "Policy", "apiVersion": "v1", **fields}


def rtcr(resources: list[dict[str, Any]] | None = None, shape: list[dict[str, int]] | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"shape": shape or [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}
    if resources is not None:
        args["resources"] = resources
    return {
        "name": "RequestedToCapacityRatioPriority",
        "weight": 2,
        "argument": {"requestedToCapacityRatioArguments": args},
    }


def load(doc: dict[str, Any], **kw: Any) -> KubeSchedulerConfiguration:
    return load_config_data(doc, "policy.json", KNOWN, **kw)


def errors_of(doc: dict[str, Any], **kw: Any) -> list[str]:
    with pytest.raises(InputError) as exc:
        load(doc, **kw)
    return [f"{e.path}: {e.message}" for e in exc.value.errors]


def test_docs_example_policy() -> None:
    cfg = load_config(str(DATA / "policy-docs-example.json"), KNOWN)
    assert cfg.source_version == "Policy"
    assert (cfg.percentage_of_nodes_to_score, cfg.parallelism) == (0, 16)
    [prof] = cfg.profiles
    assert prof.scheduler_name == "default-scheduler"
    # Predicates absent: the default set (the volume, spread and affinity ones are left out, and named).
    assert points(prof) == {
        "queueSort": [("PrioritySort", 0)],
        "postFilter": [("DefaultPreemption", 0)],
        "bind": [("DefaultBinder", 0)],
        "filter": FILTERS,
        "preFilter": [("NodeResourcesFit", 0), ("NodePorts", 0), ("NodeAffinity", 0)],
        "score": [("RequestedToCapacityRatio", 2)],
    }
    assert prof.omitted_default_plugins == [
        "VolumeRestrictions",
        "EBSLimits",
        "GCEPDLimits",
        "NodeVolumeLimits",
        "AzureDiskLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
    ]
    assert prof.plugin_config["RequestedToCapacityRatio"] == ScoreOnlyResourceArgs(
        ScoringStrategy(
            REQUESTED_TO_CAPACITY_RATIO,
            [ResourceSpec("intel.com/foo", 5), ResourceSpec("memory", 1), ResourceSpec("cpu", 3)],
            BINPACK,
        )
    )
    assert cfg.warnings == []


def test_kep_draft_resource_key_and_explicit_predicates() -> None:
    cfg = load_config(str(DATA / "policy-kep-draft.yaml"), KNOWN, rtcr_semantics=SEMANTICS_V1_16)
    [prof] = cfg.profiles
    assert prof.omitted_default_plugins == []  # predicates given: only those (+ the mandatory ones)
    assert points(prof)["filter"] == FILTERS
    assert points(prof)["score"] == [("NodeResourcesLeastAllocated", 1), ("RequestedToCapacityRatio", 2)]
    strategy = prof.plugin_config["RequestedToCapacityRatio"].scoring_strategy
    assert strategy.resources == [ResourceSpec("nvidia.com/gpu", 5), ResourceSpec("cpu", 1)]  # weight 0 -> 1
    assert strategy.semantics == SEMANTICS_V1_16


def test_default_priorities_and_empty_predicates() -> None:
    cfg = load(policy(predicates=[]))
    [prof] = cfg.profiles
    # Only the mandatory predicates, in upstream's order.
    assert points(prof)["filter"] == [("NodeUnschedulable", 0), ("TaintToleration", 0)]
    assert "preFilter" not in prof.plugins.sets
    # Default priorities, sorted by key; SelectorSpread/EvenPodsSpread/ImageLocality/InterPodAffinity are
    # left out.
    assert points(prof)["score"] == [
        ("NodeResourcesBalancedAllocation", 1),
        ("NodeResourcesLeastAllocated", 1),
        ("NodeAffinity", 1),
        ("NodePreferAvoidPods", 10000),
        ("TaintToleration", 1),
    ]
    assert points(prof)["preScore"] == [("NodeAffinity", 0), ("TaintToleration", 0)]
    assert prof.omitted_default_plugins == ["PodTopologySpread", "ImageLocality", "InterPodAffinity"]


def test_empty_priorities_means_no_score_plugin() -> None:
    [prof] = load(policy(priorities=[])).profiles
    assert "score" not in prof.plugins.sets


def test_rtcr_resources_defaults_and_weights() -> None:
    [prof] = load(policy(priorities=[rtcr()])).profiles
    strategy = prof.plugin_config["RequestedToCapacityRatio"].scoring_strategy
    assert strategy.resources == [ResourceSpec("memory", 1), ResourceSpec("cpu", 1)]

    cfg = load(policy(priorities=[rtcr([{"name": "cpu", "weight": -3}, {"resource": "memory", "name": "memory"}])]))
    strategy = cfg.profiles[0].plugin_config["RequestedToCapacityRatio"].scoring_strategy
    assert strategy.resources == [ResourceSpec("cpu", -3), ResourceSpec("memory", 1)]
    assert cfg.warnings == [
        "priorities[0].argument.requestedToCapacityRatioArguments.resources[0].weight: resource cpu weight "
        "-3 "
        "must not be less than 1 (kube-scheduler only logged this; the weight is used as written)"
    ]


def test_name_and_resource_must_agree() -> None:
    errs = errors_of(policy(priorities=[rtcr([{"name": "cpu", "resource": "memory"}])]))
    assert errs == [
        'priorities[0].argument.requestedToCapacityRatioArguments.resources[0]: Invalid value: "memory": '
        '"resource" (the KEP draft key) and "name" differ ("cpu")'
    ]


@pytest.mark.parametrize(
    ("shape", "semantics", "message"),
    [
        (
            [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 11}],
            "current",
            "score values must not be greater than 10. Score[1]==11",
        ),
        (
            [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 11}],
            SEMANTICS_V1_16,
            "score valuses not be greater than 10. Score[1]==11",
        ),
        (
            [{"utilization": 50, "score": 0}, {"utilization": 50, "score": 10}],
            "current",
            "utilization values must be sorted. Utilization[0]==50 >= Utilization[1]==50",
        ),
    ],
)
def test_invalid_shape_uses_the_legacy_sentence(shape: list[dict[str, int]], semantics: str, message: str) -> None:
    errs = errors_of(policy(priorities=[rtcr(shape=shape)]), rtcr_semantics=semantics)
    assert errs == [f"priorities[0].argument.requestedToCapacityRatioArguments: {message}"]


def test_policy_validation_errors() -> None:
    doc = policy(
        predicates=[{"name": "NoDiskConflict"}, {"name": "MadeUp"}],
        priorities=[
            {"name": "LeastRequestedPriority", "weight": 0},
            {"name": "InterPodAffinityPriority", "weight": 1},
            {"name": "Unheard", "weight": 1},
            rtcr(),
            {**rtcr(), "name": "Second"},
            {"name": "X", "weight": 1, "argument": {}},
            {
                "name": "Y",
                "weight": 1,
                "argument": {
                    "labelPreference": {"label": "a", "presence": True},
                    "requestedToCapacityRatioArguments": {"shape": [{"utilization": 0, "score": 0}]},
                },
            },
        ],
        extenders=[{"urlPrefix": "http://127.0.0.1/"}],
        hardPodAffinitySymmetricWeight=101,
    )
    assert errors_of(doc) == [
        "extenders: extenders are not supported by packsched",
        "hardPodAffinitySymmetricWeight: Invalid value: 101: not in valid range [0-100]",
        'predicates[1].name: predicate type not found for "MadeUp"',
        "priorities[0].weight: priority LeastRequestedPriority should have a positive weight applied to it "
        "or it "
        "has overflown",
        'priorities[4]: priority "Second" redeclares custom priority "RequestedToCapacityRatio", from: '
        '"RequestedToCapacityRatioPriority"',
        "priorities[5].argument: no priority arguments set for priority X",
        'priorities[2].name: priority type not found for "Unheard"',
        'priorities[6].argument: exactly 1 priority argument is required, numArgs: 2, priority "Y"',
        'predicates[0].name: plugin "VolumeRestrictions" (predicate "NoDiskConflict") is not implemented by '
        "packsched yet",
        'priorities[1].name: plugin "InterPodAffinity" (priority "InterPodAffinityPriority") is not '
        "implemented "
        "by packsched yet",
    ]


def test_equal_priority_is_skipped_and_aliases_work() -> None:
    cfg = load(
        policy(
            predicates=[{"name": "PodFitsPorts"}],
            priorities=[
                {"name": "EqualPriority", "weight": 1},
                {"name": "MostRequestedPriority", "weight": 4},
            ],
            alwaysCheckAllPredicates=True,
        )
    )
    [prof] = cfg.profiles
    assert points(prof)["preFilter"] == [("NodePorts", 0)]
    assert points(prof)["score"] == [("NodeResourcesMostAllocated", 4)]
    assert prof.plugins.sets["filter"].enabled == [
        PluginRef("NodeUnschedulable"),
        PluginRef("NodePorts"),
        PluginRef("TaintToleration"),
    ]
    assert cfg.warnings == [
        "alwaysCheckAllPredicates only changes which failure reasons kube-scheduler reports; packsched ignores it",
        "priorities[0]: EqualPriority is skipped, as kube-scheduler skips it",
    ]


def test_policy_strict_fields() -> None:
    doc = policy(priorities=[{"name": "LeastRequestedPriority", "weight": 1, "argumnet": {}}], extra=1)
    assert errors_of(doc) == ["extra: unknown field", "priorities[0].argumnet: unknown field"]
