"""Resource names and resource lists (packsched.api.resources)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from packsched.api.errors import ErrorList
from packsched.api.quantity import MAX_INT64, QuantityError
from packsched.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    add_into,
    amount_of,
    is_extended_resource,
    is_hugepages,
    is_native_resource,
    is_prefixed_native,
    is_scalar_resource,
    is_scored_resource,
    max_into,
    parse_resource_list,
)

Gi = 2**30


def test_scheduler_defaults_are_upstreams() -> None:
    # pkg/scheduler/util: DefaultMilliCPURequest = 100, DefaultMemoryRequest = 200 * 1024 * 1024.
    assert DEFAULT_MILLI_CPU_REQUEST == 100
    assert DEFAULT_MEMORY_REQUEST == 209_715_200


# --- amount_of ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "raw", "amount"),
    [
        ("cpu", "500m", 500),
        ("cpu", "1", 1000),
        ("cpu", 1, 1000),
        ("cpu", 0.5, 500),
        ("cpu", "2.5", 2500),
        ("cpu", "0.1m", 1),  # rounded up to one millicore
        ("cpu", "1e3", 1_000_000),
        ("cpu", "100u", 1),
        ("cpu", "0", 0),
        ("cpu", "-0", 0),
        ("memory", "1Gi", Gi),
        ("memory", "1.5", 2),  # rounded up to two bytes
        ("memory", "1G", 10**9),
        ("memory", "1E", 10**18),
        ("memory", "7Ei", 7 * 2**60),
        ("memory", "128974848", 128974848),
        ("memory", "129e6", 129_000_000),
        ("memory", "123Mi", 123 * 2**20),
        ("memory", "0.5Ki", 512),
        ("memory", "500m", 1),
        ("ephemeral-storage", "10Gi", 10 * Gi),
        ("nvidia.com/gpu", 2, 2),
        ("nvidia.com/gpu", "8", 8),
        ("pods", "110", 110),
        ("hugepages-2Mi", "4Mi", 4 * 2**20),
    ],
)
def test_amount_of(name: str, raw: object, amount: int) -> None:
    assert amount_of(name, raw) == amount


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("cpu", "-1"),
        ("cpu", -1),
        ("cpu", -0.5),
        ("cpu", "-100m"),
        ("cpu", "-0.1m"),  # rounds up to 0 millicores, but is negative all the same (upstream rejects it)
        ("memory", "-0.5"),  # likewise rounds up to 0 bytes
        ("memory", "-1Gi"),
        ("nvidia.com/gpu", "-1"),
        ("memory", "-1n"),
    ],
)
def test_amount_of_rejects_negative_quantities(name: str, raw: object) -> None:
    with pytest.raises(QuantityError, match="greater than or equal to 0"):
        amount_of(name, raw)


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("memory", "8Ei"),  # 2^63
        ("memory", "9Ei"),  # upstream silently caps binary quantities at 2^63-1; packsched refuses them
        ("memory", str(MAX_INT64 + 1)),
        ("memory", "10E"),
        ("memory", 2**64),
        ("memory", 1e19),
        ("cpu", "9223372036854775.808"),  # one millicore over the int64 limit
        ("cpu", "1E"),  # 10^21 millicores
        ("cpu", "10P"),
        ("pods", "1e20"),
    ],
)
def test_amount_of_rejects_amounts_that_do_not_fit_int64(name: str, raw: object) -> None:
    with pytest.raises(QuantityError, match="too large"):
        amount_of(name, raw)


def test_amount_of_accepts_the_largest_int64() -> None:
    assert amount_of("memory", str(MAX_INT64)) == MAX_INT64
    assert amount_of("memory", MAX_INT64) == MAX_INT64
    assert amount_of("cpu", "9223372036854775.807") == MAX_INT64
    assert amount_of("cpu", "9223372036854775807m") == MAX_INT64


@pytest.mark.parametrize("raw", ["1.5.3Gi", "500mm", "", None, True, "NaN", float("inf"), [], {}])
def test_amount_of_rejects_malformed_quantities(raw: object) -> None:
    with pytest.raises(QuantityError):
        amount_of("cpu", raw)


@given(st.integers(min_value=0, max_value=MAX_INT64 // 1000))
def test_amount_of_cpu_is_in_millicores(cores: int) -> None:
    assert amount_of("cpu", cores) == cores * 1000
    assert amount_of("cpu", f"{cores}000m") == cores * 1000


@given(st.integers(min_value=0, max_value=MAX_INT64), st.sampled_from(["memory", "nvidia.com/gpu", "pods"]))
def test_amount_of_other_resources_is_in_units(n: int, name: str) -> None:
    assert amount_of(name, n) == n
    assert amount_of(name, str(n)) == n


# --- parse_resource_list --------------------------------------------------------------------------


def test_parse_resource_list_reads_every_entry() -> None:
    errors = ErrorList(file="f.yaml")
    got = parse_resource_list(
        {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": 2, "pods": 110}, "status.capacity", errors
    )
    assert not errors
    assert got == {"cpu": 4000, "memory": 8 * Gi, "nvidia.com/gpu": 2, "pods": 110}


def test_parse_resource_list_of_nothing_is_empty() -> None:
    errors = ErrorList()
    assert parse_resource_list(None, "p", errors) == {}
    assert parse_resource_list({}, "p", errors) == {}
    assert not errors


@pytest.mark.parametrize("raw", ["4", 4, ["cpu", "4"], True])
def test_parse_resource_list_needs_a_map(raw: object) -> None:
    errors = ErrorList(file="f.yaml")
    assert parse_resource_list(raw, "spec.overhead", errors) == {}
    assert len(errors) == 1
    e = errors.items[0]
    assert (e.file, e.path) == ("f.yaml", "spec.overhead")
    assert "must be a map" in e.message


def test_parse_resource_list_reports_every_bad_entry_at_its_own_path_and_keeps_the_good_ones() -> None:
    errors = ErrorList(file="f.yaml")
    got = parse_resource_list(
        {"cpu": "1.5.3Gi", "memory": "-1Gi", "pods": "10", "nvidia.com/gpu": "lots", 7: "1", "": "1"},
        "requests",
        errors,
    )
    assert got == {"pods": 10}
    by_path = {e.path: e.message for e in errors.items}
    assert set(by_path) == {"requests.cpu", "requests.memory", "requests.nvidia.com/gpu", "requests"}
    assert "1.5.3Gi" in by_path["requests.cpu"]
    assert "greater than or equal to 0" in by_path["requests.memory"]
    assert len(errors) == 5  # the two bad names are both reported at the list's own path
    assert all(e.file == "f.yaml" for e in errors.items)


# --- resource name classes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "native", "extended", "scalar", "hugepages"),
    [
        ("cpu", True, False, False, False),
        ("memory", True, False, False, False),
        ("ephemeral-storage", True, False, False, False),
        ("pods", True, False, False, False),
        ("storage", True, False, False, False),
        ("nvidia.com/gpu", False, True, True, False),
        ("example.com/foo", False, True, True, False),
        ("amd.com/gpu", False, True, True, False),
        ("hugepages-2Mi", True, False, True, True),
        ("hugepages-1Gi", True, False, True, True),
        ("attachable-volumes-aws-ebs", True, False, True, False),
        ("kubernetes.io/foo", True, False, True, False),  # prefixed native: scalar, not extended
        ("foo.kubernetes.io/bar", True, False, True, False),  # upstream checks for the substring
        ("requests.nvidia.com/gpu", False, False, False, False),  # a quota name, not a resource
    ],
)
def test_resource_name_classes(name: str, native: bool, extended: bool, scalar: bool, hugepages: bool) -> None:
    assert is_native_resource(name) is native
    assert is_extended_resource(name) is extended
    assert is_scalar_resource(name) is scalar
    assert is_hugepages(name) is hugepages


def test_prefixed_native() -> None:
    assert is_prefixed_native("kubernetes.io/foo")
    assert is_prefixed_native("foo.kubernetes.io/bar")
    assert not is_prefixed_native("nvidia.com/gpu")
    assert not is_prefixed_native("cpu")


@pytest.mark.parametrize(
    ("name", "scored"),
    [
        ("cpu", True),
        ("memory", True),
        ("ephemeral-storage", True),
        ("nvidia.com/gpu", True),
        ("hugepages-2Mi", True),
        ("kubernetes.io/foo", True),
        ("pods", False),
        ("storage", False),
        ("cpuu", False),  # a typo is silently skipped, as upstream does
    ],
)
def test_scored_resources(name: str, scored: bool) -> None:
    assert is_scored_resource(name) is scored


# --- list arithmetic ------------------------------------------------------------------------------


def test_add_into_and_max_into() -> None:
    total = {"cpu": 1000, "memory": 5}
    add_into(total, {"cpu": 500, "nvidia.com/gpu": 1})
    assert total == {"cpu": 1500, "memory": 5, "nvidia.com/gpu": 1}
    max_into(total, {"cpu": 1000, "memory": 10, "pods": 0, "example.com/x": 3})
    # max_into leaves out zeros that would only add an empty entry
    assert total == {"cpu": 1500, "memory": 10, "nvidia.com/gpu": 1, "example.com/x": 3}
