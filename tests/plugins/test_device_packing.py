"""DevicePacking (packsched's own score plugin): hand-computed scores for shared devices, partitions of a counter
set and whole devices; bad args; and the MIG-style example, where it lets a whole-GPU pod fit."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from helpers import simulate_placements
from packsched.api.dra import (
    Allocation,
    CapacityPolicy,
    ClaimSpec,
    Device,
    DeviceResult,
    DraObjects,
    ResourceClaim,
    ResourceSlice,
)
from packsched.api.dracel import CelDevice
from packsched.plugins.devicepacking.device_packing import DevicePacking, _catalog

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dra-device-packing"
D = "drv"


def shared(name: str, milli: int = 1000) -> Device:
    return Device(name, CelDevice(D, (), (("milli", Fraction(milli)),), True), policies=(("milli", CapacityPolicy()),))


def part(name: str, slices: int) -> Device:
    return Device(name, CelDevice(D), consumes=(("gpu-0", (("slices", Fraction(slices)),)),))


def result(device: str, consumed: int | None = None) -> DeviceResult:
    share = None if consumed is None else "0b5b3f0e-5f7c-4d36-9a55-1f6e2f4f8a11"
    taken = None if consumed is None else (("milli", Fraction(consumed)),)
    return DeviceResult("r", D, "p", device, None, share, taken)


def score(dra: DraObjects, *results: DeviceResult, args: dict[str, object] | None = None) -> int:
    held = dra.allocated_state(True)
    plugin = DevicePacking(args, None)  # type: ignore[arg-type]
    return plugin.node_score(_catalog(dra), held.dedicated | held.shared, held.capacity, [Allocation(results)])


def test_a_share_scores_how_full_it_leaves_its_device() -> None:
    dra = DraObjects(slices=[ResourceSlice("s", D, "p", devices=(shared("gpu-0"), shared("gpu-1")), node_name="n")])
    held = ResourceClaim("held", "default", ClaimSpec())
    held.allocation = Allocation((result("gpu-0", 600),))
    dra.claims[held.key] = held
    assert score(dra, result("gpu-0", 300)) == 90  # (600 + 300) / 1000
    assert score(dra, result("gpu-1", 300)) == 30


def test_partitions_score_the_counter_set_they_are_carved_from() -> None:
    counters = ResourceSlice("c", D, "p", slice_count=2, shared_counters=(("gpu-0", (("slices", Fraction(7)),)),))
    devices = ResourceSlice("d", D, "p", slice_count=2, node_name="n", devices=(part("a", 1), part("b", 3)))
    dra = DraObjects(slices=[counters, devices])
    assert score(dra, result("a")) == 14  # 1 of 7 slices: 14 %
    held = ResourceClaim("held", "default", ClaimSpec())
    held.allocation = Allocation((result("b"),))
    dra.claims[held.key] = held
    assert score(dra, result("a")) == 57  # 4 of 7
    # a shape that prefers empty GPUs reverses it; weights choose the resources scored
    spread = {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}
    assert score(dra, result("a"), args=spread) == 43
    assert score(dra, result("a"), args={"resources": [{"name": "memory", "weight": 1}]}) == 0


def test_a_whole_device_is_fully_used() -> None:
    dra = DraObjects(slices=[ResourceSlice("s", D, "p", devices=(Device("x", CelDevice(D)),), node_name="n")])
    assert score(dra, result("x")) == 100


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"shape": [{"utilization": 101, "score": 1}]}, "shape[0].utilization: must be 0-100"),
        ({"shape": [{"utilization": 10, "score": 11}]}, "shape[0].score: must be 0-10"),
        ({"shape": [{"utilization": 10, "score": 1}, {"utilization": 5, "score": 2}]}, "greater than the previous"),
        ({"resources": [{"weight": 1}]}, "resources[0].name: required"),
        ({"resources": [{"name": "x", "weight": 0}]}, "must be greater than zero"),
        ({"other": 1}, "takes shape and resources"),
    ],
)
def test_bad_args(args: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        DevicePacking(args, None)  # type: ignore[arg-type]


def test_the_mig_example_fits_the_whole_gpu_pod_only_with_packing(tmp_path: Path) -> None:
    text = (EXAMPLE / "cluster.yaml").read_text() + "\n---\n" + (EXAMPLE / "workloads.yaml").read_text()
    plain = simulate_placements(tmp_path, text)
    assert plain["default/small-a"][0] != plain["default/small-b"][0]
    assert plain["default/whole"][0] is None
    packed = simulate_placements(tmp_path, text, "--config", str(EXAMPLE / "config-packing.yaml"))
    assert packed["default/small-a"][0] == packed["default/small-b"][0]
    assert packed["default/whole"][0] not in (None, packed["default/small-a"][0])
