"""Go's raw ``resource.Quantity`` fields (api/goquantity.py), as Coscheduling's "resource gap" message prints them.

The expected strings are what apimachinery v0.35.4's ``pkg/api/resource`` (ParseQuantity, NewQuantity, Sub)
printed with ``fmt.Sprintf("%v", v1.ResourceList{...})``, run with Go 1.26 over the same inputs; the end-to-end
cases are upstream CheckClusterResource's loop (scheduler-plugins v0.34.7 pkg/coscheduling/core/core.go) over the
free room ``util.ResourceList`` builds for each node.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gang_support import FakeHandle, mk_pod, plugin
from helpers import GiB
from helpers import node as make_node
from packsched.api.goquantity import (
    BINARY_SI,
    DECIMAL_SI,
    GoQuantity,
    go_quantity_text,
    new_quantity,
    parse_go_quantity,
    resource_list_v,
    sub,
    sub_total,
)
from packsched.api.manifests import load_manifests
from packsched.framework.cycle_state import CycleState

PARSED = [
    ("4", "{{4 0} {<nil>} 4 DecimalSI}"),
    ("1Gi", "{{1073741824 0} {<nil>} 1Gi BinarySI}"),
    ("500m", "{{500 -3} {<nil>} 500m DecimalSI}"),
    ("0.5", "{{5 -1} {<nil>}  DecimalSI}"),
    ("1e3", "{{1 3} {<nil>} 1e3 DecimalExponent}"),
    ("2000m", "{{2000 -3} {<nil>}  DecimalSI}"),  # not canonical (trailing 000): nothing cached
    ("1G", "{{1 9} {<nil>} 1G DecimalSI}"),
    ("100M", "{{100 6} {<nil>} 100M DecimalSI}"),
    ("0", "{{0 0} {<nil>} 0 DecimalSI}"),
    ("+3", "{{3 0} {<nil>} +3 DecimalSI}"),
    ("-2", "{{-2 0} {<nil>} -2 DecimalSI}"),
    ("0.0001", "{{1 -4} {<nil>}  DecimalSI}"),
    (7, "{{7 0} {<nil>} 7 DecimalSI}"),  # a YAML number: the text Go's JSON decoder hands over
    (0.25, "{{25 -2} {<nil>}  DecimalSI}"),
]


@pytest.mark.parametrize(("text", "want"), PARSED)
def test_parsed_quantity_prints_as_go(text: object, want: str) -> None:
    assert parse_go_quantity(text).go_v() == want


def test_inexact_amounts_are_held_as_decimals() -> None:
    q = parse_go_quantity("1.5Gi")  # a fractional binary amount: Go keeps an inf.Dec (and prints its address)
    assert (q.value, q.scale, q.dec, q.format) == (0, 0, Fraction(1610612736), BINARY_SI)
    assert q.go_v() == "{{0 0} {<inf.Dec 1610612736>}  BinarySI}"
    assert parse_go_quantity("0.1n").dec == Fraction(1, 10**9)  # finer than a nano: rounded up


SUBTRACTED = [
    # (text, [(value, scale, format)], what Go prints after the Subs)
    ("1Ki", [(1000, 0, BINARY_SI)], "{{24 0} {<nil>}  BinarySI}"),
    ("100", [(96000, -3, DECIMAL_SI), (96000, -3, DECIMAL_SI)], "{{-92000 -3} {<nil>}  DecimalSI}"),
    ("1G", [(300000000, 0, BINARY_SI)], "{{700000000 0} {<nil>}  DecimalSI}"),
    ("0.5", [(0, 0, "")], "{{5 -1} {<nil>}  DecimalSI}"),  # a name the node lacks: the cache goes all the same
]


@pytest.mark.parametrize(("text", "subs", "want"), SUBTRACTED)
def test_sub_as_go(text: str, subs: list[tuple[int, int, str]], want: str) -> None:
    q = parse_go_quantity(text)
    for value, scale, fmt in subs:
        q = sub(q, GoQuantity(value, scale, None, "", fmt))
    assert q.go_v() == want


def test_sub_of_a_zero_takes_the_other_format_and_scale() -> None:
    q = sub(parse_go_quantity("0"), new_quantity(-5, BINARY_SI))
    assert q.go_v() == "{{5 0} {<nil>}  BinarySI}"


def test_sub_that_overflows_int64_turns_decimal() -> None:
    q = sub(parse_go_quantity("9E"), new_quantity(1, DECIMAL_SI, scale=-3))
    assert q.dec == Fraction(9 * 10**18) - Fraction(1, 1000)


@given(
    st.sampled_from(["12", "1500m", "0.5", "1G", "64Gi", "3e2", "0", "7"]),
    st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=8),
    st.sampled_from([(-3, DECIMAL_SI), (0, BINARY_SI), (0, DECIMAL_SI)]),
)
def test_sub_total_is_subtracting_one_by_one(text: str, frees: list[int], node: tuple[int, str]) -> None:
    """For an amount that stays positive after every node (what survives in upstream's map), subtracting the sum
    at once prints the same as subtracting node after node."""
    scale, fmt = node
    q = parse_go_quantity(text)
    one_by_one = q
    for f in frees:
        one_by_one = sub(one_by_one, GoQuantity(f, scale, None, "", fmt))
        if one_by_one.sign() <= 0:
            return  # deleted from upstream's map: never printed
    nonzero = [f for f in frees if f]
    at_once = sub_total(q, GoQuantity(0, scale, None, "", fmt), sum(frees), bool(nonzero), nonzero[0] if nonzero else 0)
    assert at_once.go_v() == one_by_one.go_v()


def test_resource_list_prints_sorted_keys() -> None:
    out = resource_list_v({"pods": new_quantity(3, DECIMAL_SI), "cpu": parse_go_quantity("4")})
    assert out == "map[cpu:{{4 0} {<nil>} 4 DecimalSI} pods:{{3 0} {<nil>}  DecimalSI}]"


@pytest.mark.parametrize(
    ("raw", "text"), [(4, "4"), (0.5, "0.5"), (1e3, "1000"), (1e-5, "0.00001"), (1e-7, "1e-7"), (2e21, "2e+21")]
)
def test_numbers_read_as_go_json_writes_them(raw: object, text: str) -> None:
    assert go_quantity_text(raw) == text


GROUP = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg1, namespace: ns}
spec:
  minMember: 3
  minResources: {cpu: "12", memory: 64Gi, nvidia.com/gpu: 16, example.com/foo: "1"}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg2, namespace: ns}
spec:
  minMember: 3
  minResources: {cpu: 10500m, memory: 50G}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg3, namespace: ns}
spec:
  minMember: 2
  minResources: {cpu: "0.5"}
"""

GAPS = [
    (
        "pg1",
        "resource gap: map[cpu:{{2000 -3} {<nil>}  DecimalSI} example.com/foo:{{1 0} {<nil>}  DecimalSI} "
        "memory:{{21474836480 0} {<nil>}  BinarySI} nvidia.com/gpu:{{3 0} {<nil>}  DecimalSI}]",
    ),
    (
        "pg2",
        "resource gap: map[cpu:{{500 -3} {<nil>}  DecimalSI} memory:{{2755359744 0} {<nil>}  DecimalSI}]",
    ),
]


def _groups(tmp_path: Path) -> dict[str, object]:
    path = tmp_path / "groups.yaml"
    path.write_text(GROUP)
    return {g.name: g for g in load_manifests([str(path)]).pod_groups}


@pytest.mark.parametrize(("group", "want"), GAPS)
def test_resource_gap_message_is_upstreams(tmp_path: Path, group: str, want: str) -> None:
    """Two nodes of 8 cpus, 32Gi, 8 GPUs; on the second another pod uses 6 cpus, 20Gi, 3 GPUs and 2 pod slots."""
    groups = _groups(tmp_path)
    nodes = [
        make_node("a", cpu=8000, memory=32 * GiB, pods=110, extra={"nvidia.com/gpu": 8}),
        make_node("b", cpu=8000, memory=32 * GiB, pods=110, extra={"nvidia.com/gpu": 8}),
    ]
    other = mk_pod("other", node="b", cpu=6000, gpu=3)
    other.containers[0].requests["memory"] = 20 * GiB
    filler = mk_pod("filler", node="b")
    members = [mk_pod(name, group=group) for name in ("m", "m2", "m3")]
    h = FakeHandle(nodes, [other, filler, *members])
    pl = plugin(h, [groups[group]])  # type: ignore[list-item]
    st_ = pl.pre_filter(CycleState(), h.info("m"), h.snapshot)
    assert st_.reasons == [want]


def test_resource_gap_without_nodes_prints_what_was_asked(tmp_path: Path) -> None:
    groups = _groups(tmp_path)
    h = FakeHandle([], [mk_pod("m", group="pg3"), mk_pod("n", group="pg3")])
    pl = plugin(h, [groups["pg3"]])  # type: ignore[list-item]
    st_ = pl.pre_filter(CycleState(), h.info("m"), h.snapshot)
    assert st_.reasons == ["resource gap: map[cpu:{{5 -1} {<nil>}  DecimalSI} pods:{{2 0} {<nil>}  DecimalSI}]"]
