"""DevicePacking (packsched's own, opt-in; not an upstream plugin): a score plugin that packs DRA devices the way
RequestedToCapacityRatio packs node resources.

DynamicResources' Filter finds, per node, the devices the pod's claims would get there. DevicePacking scores that
placement by how full it leaves the *units* it touches, a unit being what a device is carved from:

- a counter set of a pool (DRAPartitionableDevices), e.g. one physical GPU whose MIG-style partitions consume its
  ``memory`` and ``slices`` counters: its resources are the set's counters;
- a device that allows multiple allocations (DRAConsumableCapacity): its resources are its capacities;
- any other device: one resource, ``devices``, fully used once taken.

For each resource name r, the utilisation is what the touched units use of r after the placement (devices already
allocated and the new ones) over what they have, in percent (rounded down); the node's score is the weighted mean,
over the configured resources present, of the shape at each utilisation (RequestedToCapacityRatio's broken-linear
function, scores 0-10 scaled to 0-100). With the default shape (0 -> 0, 100 -> 10) a pod goes where it fills a
partly used GPU rather than opening a fresh one, which leaves the fewest partly used GPUs and the fewest partitions
stranded by counters spent on several GPUs. A pod without claims to allocate scores 0 everywhere.

Args: ``shape`` ([{utilization, score}], as RequestedToCapacityRatio's), ``resources`` ([{name, weight}]: the counter
and capacity names scored, with weights; default every resource with weight 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from packsched.api.dra import Allocation, Device, DraObjects, ResourceSlice
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.plugins.helper.dra import FOUND_KEY
from packsched.plugins.helper.shape import MAX_CUSTOM_PRIORITY_SCORE, broken_linear

NAME = "DevicePacking"
DEVICES = "devices"
DEFAULT_SHAPE = ((0, 0), (100, 10))
DeviceID = tuple[str, str, str]
Unit = tuple[str, ...]


@dataclass(frozen=True)
class _Catalog:
    """Every device by ID with its slice, and each pool's counter sets."""

    devices: dict[DeviceID, tuple[ResourceSlice, Device]]
    counter_sets: dict[tuple[str, str, str], dict[str, Fraction]]  # (driver, pool, set) -> counter -> total


def _catalog(dra: DraObjects) -> _Catalog:
    devices: dict[DeviceID, tuple[ResourceSlice, Device]] = {}
    sets: dict[tuple[str, str, str], dict[str, Fraction]] = {}
    newest: dict[tuple[str, str], int] = {}
    for s in dra.slices:
        newest[(s.driver, s.pool)] = max(newest.get((s.driver, s.pool), s.generation), s.generation)
    for s in dra.slices:
        if s.generation != newest[(s.driver, s.pool)]:
            continue
        for d in s.devices:
            devices[(s.driver, s.pool, d.name)] = (s, d)
        for name, counters in s.shared_counters:
            sets[(s.driver, s.pool, name)] = dict(counters)
    return _Catalog(devices, sets)


def _args(args: PluginArgs | None) -> tuple[list[tuple[int, int]], dict[str, int] | None]:
    if not args:
        return [(u, s * 10) for u, s in DEFAULT_SHAPE], None
    if not isinstance(args, Mapping) or set(args) - {"shape", "resources"}:
        raise ValueError(f"{NAME} takes shape and resources")
    shape = [(u, s * 10) for u, s in DEFAULT_SHAPE]
    if "shape" in args:
        shape = []
        for i, point in enumerate(_list(args["shape"], "shape")):
            u, s = _int(point, "utilization", f"shape[{i}]"), _int(point, "score", f"shape[{i}]")
            if not 0 <= u <= 100:
                raise ValueError(f"shape[{i}].utilization: must be 0-100, got {u}")
            if not 0 <= s <= MAX_CUSTOM_PRIORITY_SCORE:
                raise ValueError(f"shape[{i}].score: must be 0-{MAX_CUSTOM_PRIORITY_SCORE}, got {s}")
            if shape and u <= shape[-1][0]:
                raise ValueError(f"shape[{i}].utilization: must be greater than the previous point's")
            shape.append((u, s * 10))
        if not shape:
            raise ValueError("shape: must have at least one point")
    weights: dict[str, int] | None = None
    if "resources" in args:
        weights = {}
        for i, item in enumerate(_list(args["resources"], "resources")):
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str) or not item["name"]:
                raise ValueError(f"resources[{i}].name: required")
            weight = _int({"weight": item.get("weight", 1)}, "weight", f"resources[{i}]")
            if weight <= 0:
                raise ValueError(f"resources[{i}].weight: must be greater than zero, got {weight}")
            weights[item["name"]] = weight
    return shape, weights


def _list(raw: Any, path: str) -> list[Any]:
    if not isinstance(raw, list):
        raise ValueError(f"{path}: must be a list")
    return raw


def _int(item: Any, key: str, path: str) -> int:
    value = item.get(key) if isinstance(item, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{path}.{key}: must be an integer")
    return value


class DevicePacking:
    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        self.handle = handle
        self.shape, self.weights = _args(args)

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        out = np.zeros(len(cols), dtype=np.int64)
        found: dict[str, list[Allocation]] | None = state.read(FOUND_KEY)
        dra = self.handle.dra()
        if not found or dra is None:
            return out
        catalog = _catalog(dra)
        held = dra.allocated_state(True)
        for i, col in enumerate(cols.tolist()):
            allocations = found.get(snap.nodes[int(col)].name)
            if allocations:
                out[i] = self.node_score(catalog, held.dedicated | held.shared, held.capacity, allocations)
        return out

    def node_score(
        self,
        catalog: _Catalog,
        allocated: set[DeviceID],
        capacity: Mapping[DeviceID, Mapping[str, Fraction]],
        allocations: Sequence[Allocation],
    ) -> int:
        used: dict[Unit, dict[str, Fraction]] = {}
        total: dict[Unit, dict[str, Fraction]] = {}
        new: set[DeviceID] = set()
        for alloc in allocations:
            for r in alloc.results:
                if r.admin_access:
                    continue
                entry = catalog.devices.get(r.device_id)
                if entry is None:
                    continue
                device = entry[1]
                if device.consumes:
                    new.add(r.device_id)
                    for set_name, _counters in device.consumes:
                        key = (r.driver, r.pool, set_name)
                        if key in catalog.counter_sets:
                            total[("set", *key)] = catalog.counter_sets[key]
                elif device.allow_multiple and device.cel.capacity:
                    unit: Unit = ("device", *r.device_id)
                    total[unit] = dict(device.cel.capacity)
                    have = used.setdefault(unit, dict(capacity.get(r.device_id, {})))
                    for name, amount in r.consumed or ():
                        have[name] = have.get(name, Fraction(0)) + amount
                else:
                    total[("device", *r.device_id)] = {DEVICES: Fraction(1)}
                    used[("device", *r.device_id)] = {DEVICES: Fraction(1)}
        _count_counters(catalog, allocated | new, total, used)
        sums: dict[str, list[Fraction]] = {}
        for unit, resources in total.items():
            for name, amount in resources.items():
                acc = sums.setdefault(name, [Fraction(0), Fraction(0)])
                acc[0] += used.get(unit, {}).get(name, Fraction(0))
                acc[1] += amount
        weighted = weight_sum = 0
        for name in sorted(sums):
            u, t = sums[name]
            weight = 1 if self.weights is None else self.weights.get(name, 0)
            if weight == 0 or t <= 0:
                continue
            utilization = min(100, int(u * 100 / t))
            weighted += weight * broken_linear(self.shape, utilization)
            weight_sum += weight
        return weighted // weight_sum if weight_sum else 0


def _count_counters(
    catalog: _Catalog,
    devices: set[DeviceID],
    total: Mapping[Unit, Mapping[str, Fraction]],
    used: dict[Unit, dict[str, Fraction]],
) -> None:
    """What the allocated and the new devices consume of the counter sets the placement touches."""
    for did in devices:
        entry = catalog.devices.get(did)
        if entry is None:
            continue
        for set_name, counters in entry[1].consumes:
            unit: Unit = ("set", did[0], did[1], set_name)
            if unit not in total:
                continue
            have = used.setdefault(unit, {})
            for name, amount in counters:
                have[name] = have.get(name, Fraction(0)) + amount


def new_device_packing(args: PluginArgs | None, handle: Handle) -> DevicePacking:
    return DevicePacking(args, handle)
