"""DynamicResourcesArgs through the config loader: typed in v1, defaulted per release as upstream's
SetDefaults_DynamicResourcesArgs (filterTimeout 10 s with DRASchedulerFilterTimeout on; bindingTimeout 600 s from
1.35 with device binding conditions on), and Go's duration text in validation messages. The validation cases
with field paths run through `simulate` in tests/sim/test_dra_binding_conditions.py."""

from __future__ import annotations

import pytest

from packsched.config import default_config
from packsched.config.args import duration_text, parse_duration
from packsched.config.types import DynamicResourcesArgs
from packsched.config.versions import KubeVersion
from packsched.plugins.registry import in_tree_registry

KNOWN = frozenset(in_tree_registry())


@pytest.mark.parametrize(
    ("minor", "gates", "expected"),
    [
        (34, {}, DynamicResourcesArgs(10.0, None)),  # 1.34's args have no bindingTimeout
        (35, {}, DynamicResourcesArgs(10.0, None)),  # DRADeviceBindingConditions off (alpha)
        (35, {"DRADeviceBindingConditions": True}, DynamicResourcesArgs(10.0, 600.0)),
        (36, {}, DynamicResourcesArgs(10.0, 600.0)),
        (37, {"DRASchedulerFilterTimeout": False}, DynamicResourcesArgs(None, 600.0)),
    ],
)
def test_the_default_profile_gets_each_releases_defaults(
    minor: int, gates: dict[str, bool], expected: DynamicResourcesArgs
) -> None:
    config = default_config(KNOWN, kube_version=KubeVersion(minor).with_gates(gates))
    assert config.profiles[0].plugin_config["DynamicResources"] == expected


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0.0), ("500ms", 0.5), ("1s", 1.0), ("90s", 90.0), ("10m", 600.0), ("1h2m3.5s", 3723.5), ("-1s", -1.0)],
)
def test_durations_read_and_print_as_go_does(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds
    go = {"0": "0s", "90s": "1m30s", "10m": "10m0s"}.get(text, text)
    assert duration_text(seconds) == go


# time.Duration(ns).String() as Go 1.26.8 printed each value (a throwaway `go run` of the stdlib, 2026-11-26)
GO_PRINTED = [
    (0, "0s"),
    (1, "1ns"),
    (999, "999ns"),
    (1000, "1µs"),
    (1500, "1.5µs"),
    (999999, "999.999µs"),
    (1000000, "1ms"),
    (1500000, "1.5ms"),
    (999999999, "999.999999ms"),
    (1000000000, "1s"),
    (1500000000, "1.5s"),
    (59999999999, "59.999999999s"),
    (60000000000, "1m0s"),
    (61500000000, "1m1.5s"),
    (3599000000000, "59m59s"),
    (3600000000000, "1h0m0s"),
    (3661001000000, "1h1m1.001s"),
    (600000000000, "10m0s"),
    (-1000000000, "-1s"),
    (-1500000, "-1.5ms"),
    (123456789012, "2m3.456789012s"),
    (86400000000000, "24h0m0s"),
    (10000000, "10ms"),
    (100000, "100µs"),
]


@pytest.mark.parametrize(("ns", "go"), GO_PRINTED)
def test_durations_print_as_gos_duration_string(ns: int, go: str) -> None:
    assert duration_text(ns / 1e9) == go
