"""PodTopologySpreadArgs through the config loader: decoding, defaulting (System) and upstream's validation with
field paths (validation_pluginargs.go ValidatePodTopologySpreadArgs)."""

from __future__ import annotations

from typing import Any

import pytest

from packsched.api.errors import InputError
from packsched.api.objects import TopologySpreadConstraint
from packsched.config import default_config, load_config_data
from packsched.config.types import LIST_DEFAULTING, SYSTEM_DEFAULTING, KubeSchedulerConfiguration, PodTopologySpreadArgs
from packsched.plugins.registry import in_tree_registry

KNOWN = frozenset(in_tree_registry())
ARGS = "profiles[0].pluginConfig[0].args"


def cfg(args: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    return {
        "apiVersion": f"kubescheduler.config.k8s.io/{version}",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "s", "pluginConfig": [{"name": "PodTopologySpread", "args": args}]}],
    }


def load(doc: dict[str, Any]) -> KubeSchedulerConfiguration:
    return load_config_data(doc, "cfg.yaml", KNOWN)


def errors_of(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(InputError) as exc:
        load(doc)
    return [f"{e.path}: {e.message}" for e in exc.value.errors]


def test_default_profile_runs_pod_topology_spread_with_system_defaulting() -> None:
    c = default_config(KNOWN)
    prof = c.profiles[0]
    assert "PodTopologySpread" not in prof.omitted_default_plugins
    assert ("PodTopologySpread", 2) in [(r.name, r.weight) for r in prof.plugins.multi_point.enabled]
    assert prof.plugin_config["PodTopologySpread"] == PodTopologySpreadArgs([], SYSTEM_DEFAULTING)


@pytest.mark.parametrize("version", ["v1", "v1beta3", "v1beta2"])
def test_empty_args_default_to_system(version: str) -> None:
    prof = load(cfg({}, version)).profiles[0]
    assert prof.plugin_config["PodTopologySpread"] == PodTopologySpreadArgs([], SYSTEM_DEFAULTING)


def test_v1beta1_defaults_to_list_when_constraints_are_given() -> None:
    args = {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]}
    prof = load(cfg(args, "v1beta1")).profiles[0]
    assert prof.plugin_config["PodTopologySpread"] == PodTopologySpreadArgs(
        [TopologySpreadConstraint(1, "zone", "ScheduleAnyway")], LIST_DEFAULTING
    )


def test_list_defaulting_with_constraints() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2},
        ],
    }
    prof = load(cfg(args)).profiles[0]
    assert prof.plugin_config["PodTopologySpread"] == PodTopologySpreadArgs(
        [
            TopologySpreadConstraint(2, "kubernetes.io/hostname", "DoNotSchedule"),
            TopologySpreadConstraint(1, "zone", "ScheduleAnyway", min_domains=2),
        ],
        LIST_DEFAULTING,
    )


# upstream's TestValidatePodTopologySpreadArgs, each case with the field path and message it reports
VALIDATION_CASES = [
    (
        "system defaulting with constraints",
        {
            "defaultingType": "System",
            "defaultConstraints": [{"maxSkew": 1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}],
        },
        [f'{ARGS}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty'],
    ),
    (
        "unknown defaulting type",
        {"defaultingType": "Sometimes"},
        [f'{ARGS}.defaultingType: Unsupported value: "Sometimes": supported values: "System", "List"'],
    ),
    (
        "maxSkew not positive",
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": -1, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule"}],
        },
        [f"{ARGS}.defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)"],
    ),
    (
        "empty topology key",
        {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}]},
        [f"{ARGS}.defaultConstraints[0].topologyKey: Required value: can not be empty"],
    ),
    (
        "topology key that is no label name",
        {
            "defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 1, "topologyKey": "a/b/c", "whenUnsatisfiable": "ScheduleAnyway"}],
        },
        [
            f'{ARGS}.defaultConstraints[0].topologyKey: Invalid value: "a/b/c": a qualified name must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ],
    ),
    (
        "whenUnsatisfiable missing and unknown",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "a"},
                {"maxSkew": 1, "topologyKey": "b", "whenUnsatisfiable": "Unknown"},
            ],
        },
        [
            f"{ARGS}.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty",
            f'{ARGS}.defaultConstraints[1].whenUnsatisfiable: Unsupported value: "Unknown": supported values: '
            '"DoNotSchedule", "ScheduleAnyway"',
        ],
    ),
    (
        "duplicated constraints",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
            ],
        },
        [f'{ARGS}.defaultConstraints[1]: Duplicate value: "{{node, DoNotSchedule}}"'],
    ),
    (
        "label selector present",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "key",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"a": "b"}},
                }
            ],
        },
        [
            f"{ARGS}.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they "
            "deduced for each pod"
        ],
    ),
]


@pytest.mark.parametrize(("args", "want"), [pytest.param(c[1], c[2], id=c[0]) for c in VALIDATION_CASES])
def test_validation(args: dict[str, Any], want: list[str]) -> None:
    assert errors_of(cfg(args)) == want


def test_unknown_field_in_args_is_an_error() -> None:
    (err,) = errors_of(cfg({"defaultConstraint": []}))
    assert "defaultConstraint" in err and ARGS in err
