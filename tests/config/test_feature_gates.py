"""Feature gates (config/features.py, KubeVersion.with_gates): each release's defaults, the overrides
kube-scheduler's flag parser accepts and refuses (its words), and the PackschedConfiguration's featureGates."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packsched.api.errors import InputError
from packsched.config import features
from packsched.config.loader import apply_feature_gates, default_config, load_config
from packsched.config.versions import FeatureGateError, KubeVersion, format_gates
from packsched.plugins.registry import in_tree_registry

KNOWN = set(in_tree_registry())


@pytest.mark.parametrize(
    ("gate", "minor", "default"),
    [
        ("GenericWorkload", 35, False),
        ("GenericWorkload", 37, False),
        ("GenericWorkload", 34, False),  # not there yet: off
        ("GangScheduling", 36, False),
        ("GangScheduling", 37, False),  # gone
        ("DynamicResourceAllocation", 33, False),
        ("DynamicResourceAllocation", 34, True),
        ("DRAPrioritizedList", 34, True),
        ("DRAAdminAccess", 33, False),
        ("DRAPartitionableDevices", 35, False),
        ("DRAPartitionableDevices", 36, True),
        ("DRADeviceTaints", 37, True),
        ("OpportunisticBatching", 34, False),  # not there yet
        ("OpportunisticBatching", 35, True),
        ("OpportunisticBatching", 36, True),
        ("OpportunisticBatching", 37, True),
        ("SchedulerPopFromBackoffQ", 32, False),  # not there yet
        ("SchedulerPopFromBackoffQ", 33, True),
        ("SchedulerPopFromBackoffQ", 37, True),  # still beta in 1.37.2
    ],
)
def test_release_defaults(gate: str, minor: int, default: bool) -> None:
    assert features.default(gate, minor) is default
    assert KubeVersion(minor).feature(gate) is default


def test_the_dra_properties_follow_their_gates_with_the_defaults_of_before() -> None:
    for minor in range(25, 38):
        v = KubeVersion(minor)
        assert v.dra_prioritized_list == v.dra_admin_access == v.dynamic_resources_default == (minor >= 34)
        assert v.dra_partitionable_devices == v.dra_device_taints == (minor >= 36)
    v = KubeVersion(35).with_gates({"DRAPartitionableDevices": True, "DRAAdminAccess": False})
    assert v.dra_partitionable_devices and not v.dra_admin_access and not v.dra_device_taints
    assert not KubeVersion(34).with_gates({"DynamicResourceAllocation": False}).dynamic_resources_default


def test_a_version_alone_has_no_gates_and_compares_as_before() -> None:
    assert KubeVersion(35).gates == ()
    assert KubeVersion(35) < KubeVersion(36)
    gated = KubeVersion(35).with_gates({"GenericWorkload": True})
    assert gated != KubeVersion(35) and str(gated) == "1.35"
    assert gated.describe() == "1.35 with GenericWorkload=true"
    assert gated.with_gates({"GangScheduling": True}).gates == (("GangScheduling", True), ("GenericWorkload", True))


@pytest.mark.parametrize(
    ("minor", "gates", "plugin", "cycle", "field"),
    [
        (35, {}, False, False, "workloadRef"),
        (35, {"GenericWorkload": True}, False, False, "workloadRef"),
        (35, {"GenericWorkload": True, "GangScheduling": True}, True, False, "workloadRef"),
        (36, {"GenericWorkload": True}, False, True, "schedulingGroup"),
        (36, {"GenericWorkload": True, "GangScheduling": True}, True, True, "schedulingGroup"),
        (34, {}, False, False, ""),
    ],
)
def test_gang_properties(minor: int, gates: dict[str, bool], plugin: bool, cycle: bool, field: str) -> None:
    v = KubeVersion(minor).with_gates(gates)
    assert v.gang_scheduling_default is plugin
    assert v.moves_pods_on_unscheduled_pod_add is plugin
    assert v.pod_group_scheduling_cycle is cycle
    assert v.pod_group_field == field
    assert v.generic_workload is bool(gates.get("GenericWorkload"))


@pytest.mark.parametrize(
    ("minor", "gates", "messages"),
    [
        (35, {"Nope": True}, ["unrecognized feature gate: Nope"]),
        (37, {"GangScheduling": True}, ["unrecognized feature gate: GangScheduling"]),
        (34, {"GenericWorkload": True}, ["unrecognized feature gate: GenericWorkload"]),
        (31, {"DRAAdminAccess": False}, ["unrecognized feature gate: DRAAdminAccess"]),
        (
            35,
            {"DynamicResourceAllocation": False},
            ["cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"],
        ),
        (
            37,
            {"DRAPrioritizedList": False},
            ["cannot set feature gate DRAPrioritizedList to false, feature is locked to true"],
        ),
        (
            35,
            {"GangScheduling": True},
            ["GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"],
        ),
        (
            33,
            {"DRAAdminAccess": True},
            [
                "packsched models feature gate DRAAdminAccess from kube-scheduler 1.34 on, not in 1.33: it cannot be "
                "changed there"
            ],
        ),
        (
            36,
            {"Nope": True, "DRAAdminAccess": False},
            [
                "unrecognized feature gate: Nope",
                "cannot set feature gate DRAAdminAccess to false, feature is locked to true",
            ],
        ),
    ],
)
def test_refused_overrides(minor: int, gates: dict[str, bool], messages: list[str]) -> None:
    with pytest.raises(FeatureGateError) as exc:
        KubeVersion(minor).with_gates(gates)
    assert [m for _, m in exc.value.problems] == messages


def test_a_locked_gate_may_be_set_to_its_default_and_1_34_checks_no_dependencies() -> None:
    assert KubeVersion(35).with_gates({"DynamicResourceAllocation": True}).dynamic_resources_default
    # dependencies are checked from 1.35 (component-base featuregate AddDependencies)
    v = KubeVersion(34).with_gates({"DynamicResourceAllocation": False})
    assert v.dra_admin_access and not v.dynamic_resources_default


def test_1_37_with_generic_workload_is_modelled_and_its_unmodelled_gates_are_refused_by_name() -> None:
    v = KubeVersion(37).with_gates({"GenericWorkload": True})
    assert v.pod_group_placement_cycle and v.pod_group_scheduling_cycle and v.gang_scheduling_default
    assert not KubeVersion(36).with_gates({"GenericWorkload": True}).pod_group_placement_cycle
    assert KubeVersion(37).with_gates({"GenericWorkload": False}).gates == (("GenericWorkload", False),)
    for gate, part in (
        ("TopologyAwareWorkloadScheduling", "placements"),
        ("PodGroupPreemptionPolicy", "spec.preemptionPolicy"),
    ):
        with pytest.raises(FeatureGateError) as exc:
            KubeVersion(37).with_gates({"GenericWorkload": True, gate: True})
        ((name, message),) = exc.value.problems
        assert name == gate and f"does not model feature gate {gate} on" in message and part in message
        # off, as by default, it is accepted
        assert KubeVersion(37).with_gates({"GenericWorkload": True, gate: False}).feature(gate) is False
    with pytest.raises(FeatureGateError) as exc:
        KubeVersion(37).with_gates({"GenericWorkload": True, "CompositePodGroup": True})
    assert [n for n, _ in exc.value.problems] == ["CompositePodGroup"]
    assert "CompositePodGroup hierarchies" in exc.value.problems[0][1]


@pytest.mark.parametrize(
    ("texts", "parsed"),
    [
        (["A=true,B=false"], {"A": True, "B": False}),
        (["A=1", " B = F ,", "A=False"], {"A": False, "B": False}),
        ([",,"], {}),
        ([], {}),
    ],
)
def test_parse(texts: list[str], parsed: dict[str, bool]) -> None:
    assert features.parse_feature_gates(texts) == parsed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A", "missing bool value for A"),
        ("A=yes", 'invalid value of A=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'),
        ("A=true,B", "missing bool value for B"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        features.parse_feature_gates([text])
    assert str(exc.value) == message


def test_format_gates() -> None:
    assert format_gates({"B": False, "A": True}) == "A=true,B=false"


SETTINGS = "---\napiVersion: packsched.io/v1alpha1\nkind: PackschedConfiguration\n"
CONFIG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_the_config_file_sets_gates_and_the_command_line_wins_gate_by_gate(tmp_path: Path) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(
        CONFIG + SETTINGS + "kubeVersion: '1.35'\nfeatureGates: {GenericWorkload: true, GangScheduling: true}\n"
    )
    cfg = load_config(str(path), KNOWN)
    assert cfg.kube_version == KubeVersion(35, (("GangScheduling", True), ("GenericWorkload", True)))
    names = [p.name for p in cfg.profiles[0].plugins.multi_point.enabled]
    assert names[-1] == "GangScheduling"
    cfg = load_config(str(path), KNOWN, feature_gates={"GangScheduling": False})
    assert cfg.kube_version.gates == (("GangScheduling", False), ("GenericWorkload", True))
    assert "GangScheduling" not in [p.name for p in cfg.profiles[0].plugins.multi_point.enabled]


def test_a_file_gate_the_release_refuses_names_its_field(tmp_path: Path) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(CONFIG + SETTINGS + "kubeVersion: '1.36'\nfeatureGates: {GangScheduling: true, Bad: 1}\n")
    with pytest.raises(InputError) as exc:
        load_config(str(path), KNOWN)
    assert [str(e) for e in exc.value.errors] == [
        f"{path}: PackschedConfiguration.featureGates.Bad: must be true or false, got 1"
    ]
    path.write_text(CONFIG + SETTINGS + "kubeVersion: '1.36'\nfeatureGates: {GangScheduling: true}\n")
    with pytest.raises(InputError) as exc:
        load_config(str(path), KNOWN)
    assert [str(e) for e in exc.value.errors] == [
        f"{path}: PackschedConfiguration.featureGates.GangScheduling: GangScheduling is enabled, but depends on "
        "features that are disabled: [GenericWorkload]"
    ]
    # the command line names the release: the file's gates are checked against it
    with pytest.raises(InputError) as exc:
        load_config(str(path), KNOWN, kube_version=KubeVersion(37), feature_gates={"GenericWorkload": False})
    assert str(exc.value.errors[0]).startswith(
        f"{path}: PackschedConfiguration.featureGates.GangScheduling: unrecognized feature gate: GangScheduling"
    )


def test_a_dependency_turned_off_on_the_command_line_is_blamed_there() -> None:
    with pytest.raises(InputError) as exc:
        apply_feature_gates(
            KubeVersion(35), {"GenericWorkload": True, "GangScheduling": True}, {"GenericWorkload": False}
        )
    assert [str(e) for e in exc.value.errors] == [
        "--feature-gates: GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"
    ]


def test_default_config_applies_gates() -> None:
    cfg = default_config(KNOWN, KubeVersion(36), {"GenericWorkload": True, "GangScheduling": True})
    assert [p.name for p in cfg.profiles[0].plugins.multi_point.enabled][-1] == "GangScheduling"
    assert cfg.kube_version.pod_group_scheduling_cycle
    with pytest.raises(InputError, match="unrecognized feature gate: X"):
        default_config(KNOWN, None, {"X": True})


def test_dra_extended_resource_follows_its_gate_in_1_36_only() -> None:
    assert not KubeVersion(36).with_gates({"DRAExtendedResource": False}).dra_extended_resource
    with pytest.raises(FeatureGateError, match="locked to true"):
        KubeVersion(37).with_gates({"DRAExtendedResource": False})
    with pytest.raises(FeatureGateError, match=r"from kube-scheduler 1\.36 on, not in 1\.35"):
        KubeVersion(35).with_gates({"DRAExtendedResource": True})


@pytest.mark.parametrize("minor", [34, 35, 36, 37])
def test_pop_from_backoff_q_is_on_and_can_be_turned_off(minor: int) -> None:
    assert KubeVersion(minor).pop_from_backoff_q
    assert not KubeVersion(minor).with_gates({"SchedulerPopFromBackoffQ": False}).pop_from_backoff_q


def test_pop_from_backoff_q_is_unknown_before_1_33() -> None:
    assert not KubeVersion(32).pop_from_backoff_q
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: SchedulerPopFromBackoffQ"):
        KubeVersion(32).with_gates({"SchedulerPopFromBackoffQ": False})


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([*features.GATES, "NoSuchGate"]),
    st.integers(16, 37),
    st.dictionaries(st.sampled_from([*features.GATES, "NoSuchGate"]), st.booleans(), max_size=4),
)
def test_a_gate_read_through_the_memo_is_the_gate_read_afresh(name: str, minor: int, gates: dict[str, bool]) -> None:
    """KubeVersion.feature answers from a memo per (gate, release, gates set): the same as features.enabled asked
    afresh, for any gate (one the release lacks, one packsched does not know) and any gates set, asked twice."""
    version = KubeVersion(minor, tuple(sorted(gates.items())))
    expected = features.enabled(name, minor, gates)
    assert version.feature(name) == expected
    assert version.feature(name) == expected
