"""Loading KubeSchedulerConfiguration files of every version: decoding, defaults, merging, conversion, "
"errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from packsched.api.errors import InputError
from packsched.config import default_config, load_config, load_config_data
from packsched.config.catalog import V1, V1BETA1, V1BETA2, V1BETA3
from packsched.config.componentconfig import _UserSet, merge_plugin_set
from packsched.config.types import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SEMANTICS_V1_16,
    SEMANTICS_V1_17,
    DefaultPreemptionArgs,
    KubeSchedulerConfiguration,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginRef,
    PluginSet,
    Profile,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoreOnlyResourceArgs,
    ScoringStrategy,
    UtilizationShapePoint,
)
from packsched.config.versions import parse_kube_version

DATA = Path(__file__).resolve().parent / "data"

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

FIT_DEFAULT = NodeResourcesFitArgs(
    scoring_strategy=ScoringStrategy(LEAST_ALLOCATED, [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)])
)
BALANCED_DEFAULT = NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 1), ResourceSpec("memory", 1)])
BINPACK_SHAPE = RequestedToCapacityRatioParam([UtilizationShapePoint(0, 0), UtilizationShapePoint(100, 10)])


def refs(*items: str | tuple[str, int]) -> list[PluginRef]:
    return [PluginRef(i) if isinstance(i, str) else PluginRef(*i) for i in items]


def points(prof: Profile) -> dict[str, list[tuple[str, int]]]:
    return {p: [(r.name, r.weight) for r in s.enabled] for p, s in prof.plugins.sets.items()}


def load(doc: dict[str, Any], **kw: Any) -> KubeSchedulerConfiguration:
    return load_config_data(doc, "cfg.yaml", KNOWN, **kw)


def errors_of(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(InputError) as exc:
        load(doc)
    return [f"{e.path}: {e.message}" for e in exc.value.errors]


def v1(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": V1, "kind": "KubeSchedulerConfiguration", **fields}


# -- defaults ------------------------------------------------------------------------------------------------

V1_EXPECTED_MULTIPOINT = refs(
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    "NodePorts",
    ("NodeResourcesFit", 1),
    "DefaultPreemption",
    ("NodeResourcesBalancedAllocation", 1),
    "DefaultBinder",
)
V1_OMITTED = [
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "ImageLocality",
]


def test_default_config_is_v1_defaults() -> None:
    cfg = default_config(KNOWN)
    assert cfg.source_version == "default"
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (16, 0)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    [prof] = cfg.profiles
    assert prof.scheduler_name == "default-scheduler"
    assert prof.percentage_of_nodes_to_score is None
    assert prof.plugins.sets == {}
    assert prof.plugins.multi_point == PluginSet(enabled=V1_EXPECTED_MULTIPOINT)
    assert prof.omitted_default_plugins == V1_OMITTED
    assert prof.plugin_config == {
        "DefaultPreemption": DefaultPreemptionArgs(10, 100),
        "NodeAffinity": NodeAffinityArgs(),
        "NodeResourcesBalancedAllocation": BALANCED_DEFAULT,
        "NodeResourcesFit": FIT_DEFAULT,
    }
    assert cfg.warnings == []


def test_default_config_with_fewer_known_plugins_omits_more() -> None:
    cfg = default_config(KNOWN - {"DefaultPreemption", "SchedulingGates"})
    assert cfg.profiles[0].omitted_default_plugins == [
        "SchedulingGates",
        *V1_OMITTED[:7],
        "DefaultPreemption",
        "ImageLocality",
    ]
    assert "DefaultPreemption" not in cfg.profiles[0].plugin_config


@pytest.mark.parametrize("version", [V1, V1BETA3, V1BETA2, V1BETA1])
def test_empty_file_of_each_version_gets_upstream_defaults(version: str) -> None:
    cfg = load({"apiVersion": version, "kind": "KubeSchedulerConfiguration"})
    assert cfg.source_version == version and cfg.source_file == "cfg.yaml"
    [prof] = cfg.profiles
    assert prof.scheduler_name == "default-scheduler"
    if version == V1BETA3:
        assert [r.name for r in prof.plugins.multi_point.enabled][-1] == "SchedulingGates"
        assert prof.plugins.multi_point.enabled[3] == PluginRef("TaintToleration", 3)
    if version == V1BETA2:
        assert points(prof)["score"] == [
            ("NodeResourcesBalancedAllocation", 1),
            ("NodeResourcesFit", 1),
            ("NodeAffinity", 1),
            ("TaintToleration", 1),
        ]
        assert "preEnqueue" not in prof.plugins.sets
        assert prof.plugins.multi_point == PluginSet()
    if version == V1BETA1:
        assert points(prof)["score"] == [
            ("NodeResourcesBalancedAllocation", 1),
            ("NodeResourcesLeastAllocated", 1),
            ("NodeAffinity", 1),
            ("NodePreferAvoidPods", 10000),
            ("TaintToleration", 1),
        ]
        assert prof.plugin_config["NodeResourcesLeastAllocated"] == ScoreOnlyResourceArgs(
            ScoringStrategy(LEAST_ALLOCATED, [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)])
        )
        assert prof.plugin_config["NodeResourcesBalancedAllocation"] == BALANCED_DEFAULT
    if version in (V1BETA2, V1BETA1):
        assert points(prof)["filter"] == [
            ("NodeUnschedulable", 0),
            ("NodeName", 0),
            ("TaintToleration", 0),
            ("NodeAffinity", 0),
            ("NodePorts", 0),
            ("NodeResourcesFit", 0),
        ]
        assert points(prof)["preScore"] == [("TaintToleration", 0), ("NodeAffinity", 0)]
        assert "reserve" not in prof.plugins.sets  # VolumeBinding was its only plugin
        assert "ImageLocality" in prof.omitted_default_plugins
    assert prof.plugin_config["NodeResourcesFit"] == FIT_DEFAULT


# -- one realistic file per version --------------------------------------------------------------------------


def test_v1_file_round_trip() -> None:
    cfg = load_config(str(DATA / "v1.yaml"), KNOWN)
    assert cfg.source_version == V1
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (8, 50)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (2, 20)
    packing, default = cfg.profiles
    assert packing.scheduler_name == "bin-packing-scheduler"
    assert packing.percentage_of_nodes_to_score == 100
    # multiPoint: NodeResourcesFit re-configured in place (weight 10), two default plugins disabled.
    assert packing.plugins.multi_point == PluginSet(
        enabled=refs(
            "SchedulingGates",
            "PrioritySort",
            "NodeUnschedulable",
            "NodeName",
            ("TaintToleration", 3),
            ("NodeAffinity", 2),
            "NodePorts",
            ("NodeResourcesFit", 10),
            "DefaultPreemption",
            "DefaultBinder",
        ),
        disabled=refs("NodeResourcesBalancedAllocation", "PodTopologySpread"),
    )
    # The score point keeps its disabled list: the framework must not expand ImageLocality there.
    assert packing.plugins.sets == {"score": PluginSet(disabled=refs("ImageLocality"))}
    assert packing.omitted_default_plugins == [n for n in V1_OMITTED if n != "PodTopologySpread"]
    assert packing.plugin_config == {
        "NodeResourcesFit": NodeResourcesFitArgs(
            ignored_resources=["example.com/not-scheduled"],
            scoring_strategy=ScoringStrategy(
                REQUESTED_TO_CAPACITY_RATIO,
                [ResourceSpec("nvidia.com/gpu", 5), ResourceSpec("cpu", 1), ResourceSpec("memory", 1)],
                BINPACK_SHAPE,
            ),
        ),
        "DefaultPreemption": DefaultPreemptionArgs(20, 100),
        "NodeAffinity": NodeAffinityArgs(),
    }
    assert default.scheduler_name == "default-scheduler"
    assert default.plugins.multi_point.enabled == V1_EXPECTED_MULTIPOINT
    assert cfg.warnings == []


def test_v1beta3_file_round_trip() -> None:
    cfg = load_config(str(DATA / "v1beta3.yaml"), KNOWN)
    [prof] = cfg.profiles
    assert prof.plugins.sets == {
        "score": PluginSet(enabled=refs(("NodeResourcesFit", 3)), disabled=refs("NodeResourcesBalancedAllocation"))
    }
    assert [r.name for r in prof.plugins.multi_point.enabled] == [
        "PrioritySort",
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
        "DefaultBinder",
        "SchedulingGates",
    ]
    # Given strategy with empty resources: cpu and memory appended, type kept.
    assert prof.plugin_config["NodeResourcesFit"] == NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(MOST_ALLOCATED, [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)])
    )
    assert "EBSLimits" in prof.omitted_default_plugins


def test_v1beta2_file_round_trip() -> None:
    cfg = load_config(str(DATA / "v1beta2.json"), KNOWN)
    [prof] = cfg.profiles
    # Re-enabled default NodeResourcesFit stays where the default was (before NodeAffinity), weight 5.
    assert points(prof)["score"] == [("NodeResourcesFit", 5), ("NodeAffinity", 1), ("TaintToleration", 1)]
    assert prof.plugins.sets["score"].disabled == []  # v1beta2 merging drops the disabled lists
    assert prof.plugin_config["NodeResourcesFit"] == NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(LEAST_ALLOCATED, [ResourceSpec("cpu", 2), ResourceSpec("memory", 1)])
    )
    # Args of a disabled plugin are still decoded, defaulted and validated, with a warning.
    assert prof.plugin_config["NodeResourcesBalancedAllocation"] == BALANCED_DEFAULT
    assert cfg.warnings == [
        'profiles[0].pluginConfig[1]: plugin "NodeResourcesBalancedAllocation" is not enabled in this '
        "profile; "
        "its args have no effect"
    ]


def test_v1beta1_file_round_trip() -> None:
    cfg = load_config(str(DATA / "v1beta1.yaml"), KNOWN, rtcr_semantics=SEMANTICS_V1_17)
    [prof] = cfg.profiles
    assert points(prof)["score"] == [
        ("NodeAffinity", 1),
        ("NodePreferAvoidPods", 10000),
        ("TaintToleration", 1),
        ("RequestedToCapacityRatio", 10),
    ]
    assert prof.plugin_config["RequestedToCapacityRatio"] == ScoreOnlyResourceArgs(
        ScoringStrategy(
            REQUESTED_TO_CAPACITY_RATIO,
            [ResourceSpec("intel.com/foo", 3), ResourceSpec("intel.com/bar", 5)],
            BINPACK_SHAPE,
            semantics=SEMANTICS_V1_17,
        )
    )
    assert "NodeResourcesLeastAllocated" not in prof.plugin_config
    assert prof.plugin_config["NodeResourcesFit"] == FIT_DEFAULT


# -- merging -------------------------------------------------------------------------------------------------

DEFAULTS = refs(("A", 1), ("B", 2), ("C", 3))


@pytest.mark.parametrize(
    ("version", "custom", "enabled", "disabled"),
    [
        # disabled "*": no default survives, custom plugins only
        (V1, _UserSet(refs(("X", 7)), refs("*")), refs(("X", 7)), refs("*")),
        (V1BETA2, _UserSet(refs(("X", 7)), refs("*")), refs(("X", 7)), []),
        (V1BETA1, _UserSet(refs(("X", 7)), refs("*")), refs(("X", 7)), []),
        # re-configured default plugin: replaced in place (v1beta2+), appended twice (v1beta1)
        (V1, _UserSet(refs(("B", 9))), refs(("A", 1), ("B", 9), ("C", 3)), []),
        (V1BETA3, _UserSet(refs(("B", 9))), refs(("A", 1), ("B", 9), ("C", 3)), []),
        (V1BETA2, _UserSet(refs(("B", 9))), refs(("A", 1), ("B", 9), ("C", 3)), []),
        (V1BETA1, _UserSet(refs(("B", 9))), refs(("A", 1), ("B", 2), ("C", 3), ("B", 9)), []),
        # custom plugins appended after the defaults, one default disabled
        (V1, _UserSet(refs("X", ("C", 4), "Y"), refs("A")), refs(("B", 2), ("C", 4), "X", "Y"), refs("A")),
        (V1BETA1, _UserSet(refs("X", "Y"), refs("A")), refs(("B", 2), ("C", 3), "X", "Y"), []),
        # a name given twice: the last one replaces the default, the first is appended
        (V1, _UserSet(refs(("B", 5), ("B", 6))), refs(("A", 1), ("B", 6), ("C", 3), ("B", 5)), []),
    ],
)
def test_merge_plugin_set(version: str, custom: _UserSet, enabled: list[PluginRef], disabled: list[PluginRef]) -> None:
    assert merge_plugin_set(DEFAULTS, custom, version) == PluginSet(enabled=enabled, disabled=disabled)


def test_v1_score_disable_star_keeps_multipoint_and_disabled() -> None:
    cfg = load(
        v1(
            profiles=[
                {
                    "plugins": {
                        "score": {
                            "disabled": [{"name": "*"}],
                            "enabled": [{"name": "NodeResourcesFit", "weight": 4}],
                        },
                        "multiPoint": {"enabled": [{"name": "NodeResourcesMostAllocated"}]}
                        if False
                        else {"disabled": [{"name": "TaintToleration"}]},
                    }
                }
            ]
        )
    )
    [prof] = cfg.profiles
    assert prof.plugins.sets["score"] == PluginSet(enabled=refs(("NodeResourcesFit", 4)), disabled=refs("*"))
    assert "TaintToleration" not in [r.name for r in prof.plugins.multi_point.enabled]
    assert prof.plugins.multi_point.disabled == refs("TaintToleration")


def test_v1beta1_re_enabled_default_plugin_is_registered_twice() -> None:
    errs = errors_of(
        {
            "apiVersion": V1BETA1,
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"score": {"enabled": [{"name": "TaintToleration", "weight": 5}]}}}],
        }
    )
    assert errs == ['profiles[0].plugins.score: plugin "TaintToleration" already registered as "ScorePlugin"']


def test_v1beta3_pre_enqueue_is_ignored_like_upstream() -> None:
    cfg = load(
        {
            "apiVersion": V1BETA3,
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"plugins": {"preEnqueue": {"enabled": [{"name": "SchedulingGates"}]}}}],
        }
    )
    assert "preEnqueue" not in cfg.profiles[0].plugins.sets
    assert cfg.warnings == [
        "profiles[0].plugins.preEnqueue: kube-scheduler's v1beta3 defaulting does not merge preEnqueue "
        "(mergePlugins skips it), so these plugins are ignored, as upstream does; use v1"
    ]


# -- args defaulting and semantics ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, FIT_DEFAULT.scoring_strategy),
        ({"scoringStrategy": None}, FIT_DEFAULT.scoring_strategy),
        (
            {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "nvidia.com/gpu"}]}},
            ScoringStrategy(MOST_ALLOCATED, [ResourceSpec("nvidia.com/gpu", 1)]),
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                    },
                }
            },
            ScoringStrategy(
                REQUESTED_TO_CAPACITY_RATIO,
                [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)],
                BINPACK_SHAPE,
            ),
        ),
    ],
)
def test_fit_args_defaults(args: dict[str, Any], expected: ScoringStrategy | None) -> None:
    cfg = load(v1(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": args}]}]))
    assert cfg.profiles[0].plugin_config["NodeResourcesFit"].scoring_strategy == expected


def test_strategy_type_is_not_defaulted() -> None:
    errs = errors_of(v1(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {}}}]}]))
    assert errs == [
        'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "": supported values: '
        '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
    ]


@pytest.mark.parametrize("semantics", [SEMANTICS_V1_16, SEMANTICS_V1_17])
def test_rtcr_semantics_is_stored_in_rtcr_strategies_only(semantics: str) -> None:
    doc = v1(
        profiles=[
            {
                "schedulerName": "a",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "RequestedToCapacityRatio",
                                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}]},
                            }
                        },
                    }
                ],
            },
            {"schedulerName": "b"},
        ]
    )
    a, b = load(doc, rtcr_semantics=semantics).profiles
    assert a.plugin_config["NodeResourcesFit"].scoring_strategy.semantics == semantics
    assert b.plugin_config["NodeResourcesFit"].scoring_strategy.semantics == "current"


def test_unknown_rtcr_semantics_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="rtcr_semantics"):
        load(v1(), rtcr_semantics="v1.99")


def test_node_affinity_added_affinity() -> None:
    affinity = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gpu"]}]}]
        }
    }
    cfg = load(v1(profiles=[{"pluginConfig": [{"name": "NodeAffinity", "args": {"addedAffinity": affinity}}]}]))
    args = cfg.profiles[0].plugin_config["NodeAffinity"]
    assert isinstance(args, NodeAffinityArgs) and args.added_affinity is not None


# -- errors --------------------------------------------------------------------------------------------------


def test_many_errors_at_once_with_exact_paths() -> None:
    path = str(DATA / "many-errors.yaml")
    with pytest.raises(InputError) as exc:
        load_config(path, KNOWN)
    assert all(e.file == path for e in exc.value.errors)
    assert [f"{e.path}: {e.message}" for e in exc.value.errors] == [
        "featureGates: unknown field",
        "extenders: extenders are not supported by packsched",
        'profiles[0].plugins.score.enabled[0]: plugin "PodTopologySpread" is not implemented by packsched yet',
        'profiles[0].plugins.score.enabled[1]: plugin "Coscheduling" does not exist',
        'profiles[0].plugins.score.enabled[2]: Invalid value: "NodeResourcesMostAllocated": was removed in '
        "version "
        '"kubescheduler.config.k8s.io/v1beta2" (KubeSchedulerConfiguration is version '
        '"kubescheduler.config.k8s.io/v1")',
        "profiles[0].pluginConfig[0].args.unknownArg: unknown field",
        "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 101: resource "
        "weight "
        "of cpu not in valid range (0, 100]",
        "profiles[0].pluginConfig[0].args.scoringStrategy.resources[1].weight: Invalid value: -1: resource "
        "weight "
        "of memory not in valid range (0, 100]",
        "profiles[0].pluginConfig[0].args.scoringStrategy.shape[1].utilization: Invalid value: 40: values "
        "must be "
        "sorted in increasing order",
        "profiles[0].pluginConfig[0].args.scoringStrategy.shape[1].score: Invalid value: 11: not in valid "
        "range "
        "[0, 10]",
        'profiles[0].pluginConfig[1]: Duplicate value: "NodeResourcesFit"',
        "parallelism: Invalid value: 0: should be an integer value greater than zero",
        'profiles[1].schedulerName: Duplicate value: "packing"',
        "profiles[1].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
        "percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]",
        "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
    ]
    assert str(exc.value.errors[0]) == f"{path}: featureGates: unknown field"


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (v1(profiles=[{"schedulerName": "x", "plugin": {}}]), ["profiles[0].plugin: unknown field"]),
        (
            v1(profiles=[{"plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "wieght": 2}]}}}]),
            ["profiles[0].plugins.score.enabled[0].wieght: unknown field"],
        ),
        (
            {
                "apiVersion": V1BETA2,
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"plugins": {"multiPoint": {}}}],
            },
            ["profiles[0].plugins.multiPoint: unknown field"],
        ),
        (
            {"apiVersion": V1BETA1, "kind": "KubeSchedulerConfiguration", "parallelism": 4},
            ["parallelism: unknown field"],
        ),
        (
            {
                "apiVersion": V1BETA3,
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"percentageOfNodesToScore": 5}],
            },
            ["profiles[0].percentageOfNodesToScore: unknown field"],
        ),
        (v1(healthzBindAddress="0.0.0.0:10251"), ["healthzBindAddress: unknown field"]),
        (
            v1(leaderElection={"leaderElect": True, "leaseDurationSeconds": 3}),
            ["leaderElection.leaseDurationSeconds: unknown field"],
        ),
        (
            {"apiVersion": V1BETA1, "kind": "KubeSchedulerConfiguration", "disablePreemption": True},
            ["disablePreemption: unknown field (it was part of v1beta1 only in kube-scheduler v1.19)"],
        ),
        (
            {
                "apiVersion": V1BETA1,
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {}}}]}],
            },
            ["profiles[0].pluginConfig[0].args.scoringStrategy: unknown field"],
        ),
    ],
)
def test_strict_decoding_per_version(doc: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(doc) == expected


@pytest.mark.parametrize(
    ("version", "name", "expected"),
    [
        (
            V1BETA2,
            "NodeResourcesLeastAllocated",
            'was removed in version "kubescheduler.config.k8s.io/v1beta2" (KubeSchedulerConfiguration is '
            "version "
            '"kubescheduler.config.k8s.io/v1beta2")',
        ),
        (
            V1BETA3,
            "NodePreferAvoidPods",
            'was removed in version "kubescheduler.config.k8s.io/v1beta2" (KubeSchedulerConfiguration is '
            "version "
            '"kubescheduler.config.k8s.io/v1beta3")',
        ),
        (
            V1,
            "RequestedToCapacityRatio",
            'was removed in version "kubescheduler.config.k8s.io/v1beta2" (KubeSchedulerConfiguration is '
            "version "
            '"kubescheduler.config.k8s.io/v1")',
        ),
        (
            V1,
            "EBSLimits",
            'was invalid in version "kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
            '"kubescheduler.config.k8s.io/v1")',
        ),
    ],
)
def test_removed_plugins(version: str, name: str, expected: str) -> None:
    doc = {
        "apiVersion": version,
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"score": {"enabled": [{"name": name}]}}, "pluginConfig": [{"name": name}]}],
    }
    assert errors_of(doc) == [
        f'profiles[0].plugins.score.enabled[0]: Invalid value: "{name}": {expected}',
        f'profiles[0].pluginConfig[0]: Invalid value: "{name}": {expected}',
    ]


def test_disabling_an_unimplemented_plugin_is_fine() -> None:
    cfg = load(v1(profiles=[{"plugins": {"multiPoint": {"disabled": [{"name": "PodTopologySpread"}]}}}]))
    assert "PodTopologySpread" not in cfg.profiles[0].omitted_default_plugins


def test_v1beta1_args_use_first_error_sentences_at_the_args_path() -> None:
    def doc(name: str, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": V1BETA1,
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "plugins": {"score": {"enabled": [{"name": name}]}},
                    "pluginConfig": [{"name": name, "args": args}],
                }
            ],
        }

    assert errors_of(
        doc(
            "RequestedToCapacityRatio",
            {"shape": [{"utilization": 10, "score": 1}], "resources": [{"name": "custom", "weight": 0}]},
        )
    ) == ["profiles[0].pluginConfig[0].args: resource custom weight 0 must not be less than 1"]
    assert errors_of(doc("NodeResourcesMostAllocated", {"resources": [{"name": "cpu", "weight": 0}]})) == [
        "profiles[0].pluginConfig[0].args: resource Weight of cpu should be a positive value, got 0"
    ]
    assert errors_of(doc("RequestedToCapacityRatio", {"shape": []})) == [
        "profiles[0].pluginConfig[0].args: at least one point must be specified"
    ]


def test_v1beta1_rtcr_without_args_needs_a_shape() -> None:
    doc = {
        "apiVersion": V1BETA1,
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"score": {"enabled": [{"name": "RequestedToCapacityRatio"}]}}}],
    }
    assert errors_of(doc) == [
        "profiles[0].pluginConfig: plugin RequestedToCapacityRatio needs args: at least one point must be specified"
    ]


def test_v1beta1_node_resources_fit_is_not_a_score_plugin() -> None:
    doc = {
        "apiVersion": V1BETA1,
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeResourcesFit"}]}}}],
    }
    [err] = errors_of(doc)
    assert err.startswith(
        'profiles[0].plugins.score.enabled[0]: Invalid value: "NodeResourcesFit": NodeResourcesFit is not'
    )


def test_profile_rules() -> None:
    two_unnamed = v1(profiles=[{}, {"schedulerName": "b"}])
    assert errors_of(two_unnamed) == ["profiles[0].schedulerName: Required value"]
    queue_sort = v1(
        profiles=[
            {"schedulerName": "a"},
            {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}}},
        ]
    )
    assert errors_of(queue_sort) == [
        'profiles[1].plugins.queueSort: Invalid value: "enabled=[PrioritySort] disabled=[]": must be the '
        "same for "
        "all profiles"
    ]


def test_other_plugin_args_are_validated() -> None:
    doc = v1(
        profiles=[
            {
                "pluginConfig": [
                    {
                        "name": "DefaultPreemption",
                        "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
                    },
                    {
                        "name": "NodeResourcesBalancedAllocation",
                        "args": {"resources": [{"name": "cpu", "weight": 2}, {"name": "cpu"}]},
                    },
                ]
            }
        ]
    )
    assert errors_of(doc) == [
        "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at "
        "the same "
        "time as minCandidateNodesAbsolute",
        "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the "
        "same "
        "time as minCandidateNodesPercentage",
        "profiles[0].pluginConfig[1].args.resources[0].weight: Invalid value: 2: must be 1",
        'profiles[0].pluginConfig[1].args.resources[1].name: Duplicate value: "cpu"',
    ]


def test_args_kind_must_match() -> None:
    doc = v1(profiles=[{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"kind": "DefaultPreemptionArgs"}}]}])
    assert errors_of(doc) == [
        "profiles[0].pluginConfig[0].args.kind: args for plugin NodeResourcesFit were not of type "
        "NodeResourcesFitArgs.kubescheduler.config.k8s.io, got "
        "DefaultPreemptionArgs.kubescheduler.config.k8s.io"
    ]


def test_args_for_unknown_plugins_are_passed_over_with_a_warning() -> None:
    cfg = load(v1(profiles=[{"pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}]}]))
    assert "Coscheduling" not in cfg.profiles[0].plugin_config
    assert cfg.warnings == [
        'profiles[0].pluginConfig[0]: plugin "Coscheduling" is not enabled in this profile; its args have no effect'
    ]


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        (
            {"apiVersion": "kubescheduler.config.k8s.io/v1alpha2", "kind": "KubeSchedulerConfiguration"},
            "apiVersion",
        ),
        ({"apiVersion": "v1", "kind": "ConfigMap"}, "kind"),
        ({"apiVersion": "v2", "kind": "Policy"}, "apiVersion"),
        ({}, "kind"),
    ],
)
def test_unsupported_kind_or_version(doc: dict[str, Any], where: str) -> None:
    [err] = errors_of(doc)
    assert err.startswith(f"{where}: unsupported configuration (")
    assert err.endswith(
        "expected kind KubeSchedulerConfiguration with apiVersion kubescheduler.config.k8s.io/v1, v1beta3, "
        "v1beta2 "
        "or v1beta1, or the legacy kind Policy with apiVersion v1"
    )


def test_wrong_types_are_reported_not_crashing() -> None:
    doc = v1(
        parallelism="many",
        profiles=[
            {
                "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 2**31}]}},
                "pluginConfig": {},
            }
        ],
    )
    errs = errors_of(doc)
    assert errs[0].startswith("parallelism: must be an integer")
    assert (
        "profiles[0].plugins.score.enabled[0].weight: Invalid value: 2147483648: must fit in a 32-bit integer" in errs
    )
    assert any(e.startswith("profiles[0].pluginConfig: must be a list") for e in errs)


# -- files ---------------------------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_malformed_yaml_has_line_and_column(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "bad.yaml",
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: [KubeSchedulerConfiguration\n",
    )
    with pytest.raises(InputError) as exc:
        load_config(path, KNOWN)
    [err] = exc.value.errors
    assert err.file == path and err.path.startswith("line 3 column 1")
    assert err.message.startswith("malformed YAML:")


def test_malformed_json_has_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.json", '{"kind": "Policy",\n "apiVersion": "v1",}\n')
    with pytest.raises(InputError) as exc:
        load_config(path, KNOWN)
    [err] = exc.value.errors
    assert err.path == "line 2 column 21" and err.message.startswith("malformed JSON:")


def test_duplicate_keys_are_errors(tmp_path: Path) -> None:
    text = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 2\nparallelism: 3\n"
    )
    with pytest.raises(InputError) as exc:
        load_config(_write(tmp_path, "dup.yaml", text), KNOWN)
    assert [f"{e.path}: {e.message}" for e in exc.value.errors] == ['line 4 column 1: duplicate field "parallelism"']


def test_one_document_per_file(tmp_path: Path) -> None:
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n---\nkind: Policy\n"
    with pytest.raises(InputError) as exc:
        load_config(_write(tmp_path, "two.yaml", text), KNOWN)
    assert exc.value.errors[0].message == (
        "a configuration file holds one document (plus at most one PackschedConfiguration), this one has 2"
    )


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        load_config(str(tmp_path / "nope.yaml"), KNOWN)
    assert exc.value.errors[0].message.startswith("cannot read file")


@pytest.mark.parametrize(("version", "weight"), [("1.33", None), ("1.35", 2), ("1.36", 2), ("1.37", 2)])
def test_dynamic_resources_default_weight(version: str, weight: int | None) -> None:
    # upstream's applyDynamicResources adds it to multiPoint with weight 2 (recorded: score_plugin_weights of
    # tests/data/conformance/1.35, 1.36 and 1.37); before 1.34 it is not a default plugin
    cfg = default_config(KNOWN | {"DynamicResources"}, parse_kube_version(version))
    weights = {p.name: p.weight for p in cfg.profiles[0].plugins.multi_point.enabled}
    assert weights.get("DynamicResources") == weight
