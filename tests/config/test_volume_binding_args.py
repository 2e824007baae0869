"""VolumeBindingArgs through the config loader: decoding (bindTimeoutSeconds, shape), defaulting
(SetDefaults_VolumeBindingArgs: 600 s, and the shape when StorageCapacityScoring is on) and upstream's validation
(ValidateVolumeBindingArgsWithOptions) with field paths, per kube-scheduler release."""

from __future__ import annotations

from typing import Any

import pytest

from packsched.api.errors import InputError
from packsched.config import default_config, load_config_data
from packsched.config.args import validate_volume_binding_args
from packsched.config.types import KubeSchedulerConfiguration, UtilizationShapePoint, VolumeBindingArgs
from packsched.config.versions import KubeVersion, parse_kube_version
from packsched.plugins.registry import in_tree_registry

KNOWN = frozenset(in_tree_registry())
ARGS = "profiles[0].pluginConfig[0].args"
DEFAULT_SHAPE = [UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0)]


def cfg(args: object, api: str = "v1") -> dict[str, Any]:
    return {
        "apiVersion": f"kubescheduler.config.k8s.io/{api}",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "s", "pluginConfig": [{"name": "VolumeBinding", "args": args}]}],
    }


def load(doc: dict[str, Any], version: str = "1.37") -> KubeSchedulerConfiguration:
    return load_config_data(doc, "cfg.yaml", KNOWN, kube_version=parse_kube_version(version))


def args_of(doc: dict[str, Any], version: str = "1.37") -> object:
    return load(doc, version).profiles[0].plugin_config["VolumeBinding"]


def errors_of(doc: dict[str, Any], version: str = "1.37") -> list[str]:
    with pytest.raises(InputError) as exc:
        load(doc, version)
    return [f"{e.path}: {e.message}" for e in exc.value.errors]


# -- defaults --------------------------------------------------------------------------------------------------


def test_default_profile_args_follow_the_release() -> None:
    # 1.37: StorageCapacityScoring on, the default shape filled in; 1.36: no shape
    new = default_config(KNOWN, kube_version=KubeVersion(37)).profiles[0].plugin_config["VolumeBinding"]
    assert new == VolumeBindingArgs(600, DEFAULT_SHAPE)
    old = default_config(KNOWN, kube_version=KubeVersion(36)).profiles[0].plugin_config["VolumeBinding"]
    assert old == VolumeBindingArgs(600, None)


@pytest.mark.parametrize("api", ["v1", "v1beta3", "v1beta2", "v1beta1"])
def test_empty_args_are_defaulted_in_every_api_version(api: str) -> None:
    assert args_of(cfg({}, api)) == VolumeBindingArgs(600, DEFAULT_SHAPE)
    assert args_of(cfg(None, api), "1.35") == VolumeBindingArgs(600, None)


def test_given_values_are_kept() -> None:
    shape = [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 10}]
    got = args_of(cfg({"bindTimeoutSeconds": 30, "shape": shape}))
    assert got == VolumeBindingArgs(30, [UtilizationShapePoint(0, 0), UtilizationShapePoint(50, 10)])
    assert args_of(cfg({"bindTimeoutSeconds": 0}), "1.30") == VolumeBindingArgs(0, None)


def test_an_empty_shape_is_defaulted_when_the_gate_is_on() -> None:
    assert args_of(cfg({"shape": []})) == VolumeBindingArgs(600, DEFAULT_SHAPE)
    assert args_of(cfg({"shape": None}), "1.36") == VolumeBindingArgs(600, None)  # null: not given


# -- validation ------------------------------------------------------------------------------------------------


def test_negative_bind_timeout() -> None:
    for version in ("1.37", "1.35"):
        assert errors_of(cfg({"bindTimeoutSeconds": -1}), version) == [
            f"{ARGS}.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"
        ]


@pytest.mark.parametrize(
    ("version", "gate"),
    [("1.36", "StorageCapacityScoring"), ("1.33", "StorageCapacityScoring"), ("1.32", "VolumeCapacityPriority")],
)
def test_a_shape_is_an_error_while_the_gate_is_off(version: str, gate: str) -> None:
    shape = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    assert errors_of(cfg({"shape": shape}), version) == [
        f'{ARGS}.shape: Invalid value: [{{"Utilization":0,"Score":10}},{{"Utilization":100,"Score":0}}]: '
        f"unexpected field `shape`, remove it or turn on the feature gate {gate}"
    ]
    # an empty list is still a given field (upstream tests args.Shape != nil)
    assert errors_of(cfg({"shape": []}), version) == [
        f"{ARGS}.shape: Invalid value: []: unexpected field `shape`, remove it or turn on the feature gate {gate}"
    ]


def test_the_shape_is_validated_as_requested_to_capacity_ratio_s_when_the_gate_is_on() -> None:
    shape = [{"utilization": 10, "score": 11}, {"utilization": 10, "score": -1}, {"utilization": 101, "score": 2}]
    assert errors_of(cfg({"bindTimeoutSeconds": -5, "shape": shape})) == [
        f"{ARGS}.bindTimeoutSeconds: Invalid value: -5: invalid BindTimeoutSeconds, should not be a negative value",
        f"{ARGS}.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order",
        f"{ARGS}.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
        f"{ARGS}.shape[1].score: Invalid value: -1: not in valid range [0, 10]",
        f"{ARGS}.shape[2].utilization: Invalid value: 101: not in valid range [0, 100]",
    ]


def test_validator_on_its_own() -> None:
    # as upstream's table calls it: no defaulting, empty root path
    (err,) = validate_volume_binding_args(VolumeBindingArgs(600, []), "", KubeVersion(37))
    assert (err.path, err.message) == ("shape", "Required value: at least one point must be specified")
    assert validate_volume_binding_args(VolumeBindingArgs(0, None), "", KubeVersion(36)) == []


# -- bad input: field-path errors, never a traceback -----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"bindTimeout": 5}, f"{ARGS}.bindTimeout: unknown field"),
        ({"bindTimeoutSeconds": "ten"}, f"{ARGS}.bindTimeoutSeconds:"),
        ({"bindTimeoutSeconds": 2**63}, f"{ARGS}.bindTimeoutSeconds: Invalid value:"),
        ({"shape": "flat"}, f"{ARGS}.shape:"),
        ({"shape": [{"utilization": 0, "score": 10, "weight": 1}]}, f"{ARGS}.shape[0].weight: unknown field"),
        ({"shape": [{"utilization": "x", "score": 10}]}, f"{ARGS}.shape[0].utilization:"),
        ({"kind": "NodeAffinityArgs"}, f"{ARGS}.kind: args for plugin VolumeBinding were not of type"),
        ([1, 2], f"{ARGS}:"),
    ],
)
def test_bad_input_gives_field_errors(args: object, expected: str) -> None:
    errs = errors_of(cfg(args))
    assert any(e.startswith(expected) for e in errs), errs
