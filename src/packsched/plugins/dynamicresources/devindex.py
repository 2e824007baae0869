"""DynamicResources' Filter without the allocator on every node: for the common claim, a count per node.

A pod whose claims to allocate ask only for ``ExactCount`` devices of one DeviceClass with the same selectors (no
``firstAvailable``, admin access, capacity requests or constraints) gets devices on a node exactly when the node
has at least that many unallocated devices that the class's and the request's selectors match: the allocator takes
them in pool, slice and device order, the first free ones, and nothing else can refuse one of them where the node's
devices are *plain* (its pools complete and valid, its matching devices without counters, without a taint that
the feature gates apply, not shared with DRAConsumableCapacity, within their own capacity). :class:`DeviceIndex`
keeps, per such *matcher* (the class and the selectors), every node's matching devices and how many are free, as
numpy arrays over the snapshot's columns; the Filter then decides every node in a few array operations, and the
allocator runs only on the node that Reserve takes (``_Found``, in the plugin), where it finds those devices.

What it must follow: the slices (a new list or a longer one rebuilds everything: ``SliceLayout``), the snapshot
(another snapshot, nodes added or changed), and the allocated devices, through the journal of devices whose state
changed that :class:`~packsched.api.dra.DraObjects` keeps (only the nodes of those devices are counted again; a
journal that no longer reaches back rebuilds). A cluster with a slice that is not a node's own (``allNodes``, a node
selector, per-device node selection, shared counters), a selector that does not compile or fails on some device,
or a node that is not plain leaves the decision to the allocator (the whole cluster, the matcher, or that node).
``DynamicResources.fast = False`` turns the shortcut off (the tests compare both).
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from packsched.api.dra import NO_EXECUTE, NO_SCHEDULE, Device, DeviceClass, DraObjects, ResourceSlice
from packsched.api.dracel import CelDevice, CelRuntimeError, compile_selector
from packsched.api.objects import Node
from packsched.backend.dra.allocator import DeviceID, Features, Pool, gather_pools
from packsched.backend.dra.capacity import CapacityError, fits
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot

_MAX_MATCHERS = 16

Matcher = tuple[DeviceClass, tuple[str, ...]]  # the class, and the request's selectors


@dataclass(eq=False)
class SliceLayout:
    """The slices as the allocator looks them up: each node's own slices (``nodeName``) and the others."""

    slices: list[ResourceSlice]
    on_node: dict[str, list[ResourceSlice]]
    shared: list[ResourceSlice]
    found: dict[str, list[Pool]] = field(default_factory=dict)  # node name -> its pools (see pools)

    @staticmethod
    def of(slices: Sequence[ResourceSlice]) -> SliceLayout:
        on_node: dict[str, list[ResourceSlice]] = {}
        shared: list[ResourceSlice] = []
        for s in slices:
            if s.node_name:
                on_node.setdefault(s.node_name, []).append(s)
            else:
                shared.append(s)
        return SliceLayout(list(slices), on_node, shared)

    def pools(self, node: Node, features: Features) -> list[Pool]:
        """The node's pools as the allocator gathers them, kept per node when every slice is a node's own (then
        they depend on the slices alone)."""
        if self.shared:
            return gather_pools(self.on_node.get(node.name, []) + self.shared, node, features, self.slices)
        known = self.found.get(node.name)
        if known is None:
            known = self.found[node.name] = gather_pools(self.on_node.get(node.name, []), node, features, self.slices)
        return known


class _Kept(Protocol):
    """What the index keeps per snapshot and slice layout (:class:`_Counts`, :class:`_Versions`)."""

    layout: SliceLayout
    snap: weakref.ref[Snapshot]
    n: int
    node_generation: int
    pos: int  # the allocated-devices journal position brought up to


def _same_basis(kept: _Kept, layout: SliceLayout, snap: Snapshot) -> bool:
    """Whether ``kept`` was made for this slice layout and this snapshot, its nodes unchanged since (else it is
    made again; when it is, the journal since ``kept.pos`` says which devices changed)."""
    return (
        kept.layout is layout
        and kept.snap() is snap
        and kept.n == snap.n
        and kept.node_generation == snap.node_generation
    )


def _lone(s: ResourceSlice) -> bool:
    """A node's slice that is a whole pool by itself, with devices only (no counters, no per-device nodes)."""
    return s.slice_count == 1 and not s.shared_counters and not s.per_device


@dataclass(eq=False)
class _Versions:
    """Per snapshot column: a number bumped whenever something the allocator reads for that node may have changed
    (a device of a pool the node has a slice of); every column when the device is in a slice that is not a node's
    own. ``token``: another one when the numbering starts again (another snapshot, slices or journal gap)."""

    token: int
    layout: SliceLayout
    snap: weakref.ref[Snapshot]
    n: int
    node_generation: int
    pos: int
    version: IntArray
    pool_cols: dict[tuple[str, str], list[int]]  # a pool -> the columns with one of its slices (node-local)
    shared_pools: set[tuple[str, str]]


@dataclass(eq=False)
class Verdicts:
    """One claim signature's allocator verdicts per column (valid while ``seen`` equals the column's version)."""

    token: int = -1
    seen: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    reasons: dict[int, str] = field(default_factory=dict)

    def get(self, col: int, version: IntArray) -> str | None:
        if self.seen[col] != version[col]:
            return None
        return self.reasons[col]

    def put(self, col: int, version: IntArray, reason: str) -> None:
        self.seen[col] = version[col]
        self.reasons[col] = reason


@dataclass(eq=False)
class _Counts:
    """One matcher's per-node state for one snapshot and slice layout."""

    layout: SliceLayout
    snap: weakref.ref[Snapshot]
    n: int
    node_generation: int
    pos: int  # the allocated-devices journal position counted up to
    eligible: BoolArray  # plain nodes (the count decides them)
    free: IntArray  # matching devices not allocated
    devices: dict[int, list[DeviceID]] = field(default_factory=dict)  # column -> its matching devices, in order
    column: dict[DeviceID, int] = field(default_factory=dict)


class DeviceIndex:
    """Per plugin (its feature gates): the slice layout and each matcher's counts, kept up to date."""

    def __init__(self, features: Features) -> None:
        self.features = features
        self._layout: SliceLayout | None = None
        self._layout_of: tuple[list[ResourceSlice], int] | None = None
        self._counts: OrderedDict[Matcher, _Counts | None] = OrderedDict()
        self._versions: _Versions | None = None
        self._tokens = 0
        self._verdicts: OrderedDict[tuple[object, ...], Verdicts] = OrderedDict()

    def layout(self, dra: DraObjects) -> SliceLayout:
        """The layout of ``dra.slices`` (made again when the list is another one or its length changed)."""
        known = self._layout_of
        if self._layout is None or known is None or known[0] is not dra.slices or known[1] != len(dra.slices):
            self._layout = SliceLayout.of(dra.slices)
            self._layout_of = (dra.slices, len(dra.slices))
            self._counts.clear()
            self._verdicts.clear()
        return self._layout

    def counts(self, dra: DraObjects, snap: Snapshot, matcher: Matcher) -> tuple[BoolArray, IntArray] | None:
        """Per snapshot column: whether the count decides the node, and its free matching devices; None when the
        allocator must decide every node (shared slices, or a selector that does not compile or fails)."""
        layout = self.layout(dra)
        if layout.shared:
            return None
        held = dra.held()
        c = self._counts.get(matcher)
        if matcher in self._counts:
            self._counts.move_to_end(matcher)
            if c is None:
                return None
        changed = held.since(c.pos) if c is not None and _same_basis(c, layout, snap) else None
        if c is None or changed is None:
            c = self._build(dra, snap, matcher, layout)
            self._counts[matcher] = c
            while len(self._counts) > _MAX_MATCHERS:
                self._counts.popitem(last=False)
            if c is None:
                return None
        elif changed:
            cols = {col for col in (c.column.get(did) for did in changed) if col is not None}
            for col in cols:
                self._recount(dra, c, col)
        c.pos = held.end
        return c.eligible, c.free

    def verdicts(self, dra: DraObjects, snap: Snapshot, signature: tuple[object, ...]) -> tuple[Verdicts, IntArray]:
        """The allocator verdicts kept for claims of ``signature`` (their specs and classes), and the columns'
        versions they are checked against."""
        versions = self._versions_now(dra, snap)
        kept = self._verdicts.get(signature)
        if kept is None:
            kept = self._verdicts[signature] = Verdicts()
            while len(self._verdicts) > _MAX_MATCHERS:
                self._verdicts.popitem(last=False)
        else:
            self._verdicts.move_to_end(signature)
        if kept.token != versions.token:
            kept.token = versions.token
            kept.seen = np.full(snap.n, -1, dtype=np.int64)
            kept.reasons = {}
        return kept, versions.version

    def _versions_now(self, dra: DraObjects, snap: Snapshot) -> _Versions:
        layout = self.layout(dra)
        held = dra.held()
        v = self._versions
        changed = held.since(v.pos) if v is not None and _same_basis(v, layout, snap) else None
        if v is None or changed is None:
            self._tokens += 1
            pool_cols: dict[tuple[str, str], list[int]] = {}
            for name, slices in layout.on_node.items():
                col = snap.index.get(name)
                if col is not None:
                    for sl in slices:
                        pool_cols.setdefault((sl.driver, sl.pool), []).append(col)
            shared = {(sl.driver, sl.pool) for sl in layout.shared}
            v = self._versions = _Versions(
                self._tokens,
                layout,
                weakref.ref(snap),
                snap.n,
                snap.node_generation,
                held.end,
                np.zeros(snap.n, dtype=np.int64),
                pool_cols,
                shared,
            )
        elif changed:
            for did in changed:
                pool = (did[0], did[1])
                if pool in v.shared_pools:
                    v.version += 1
                else:
                    cols = v.pool_cols.get(pool)
                    if cols:
                        v.version[cols] += 1
            v.pos = held.end
        return v

    def _build(self, dra: DraObjects, snap: Snapshot, matcher: Matcher, layout: SliceLayout) -> _Counts | None:
        cls, selectors = matcher
        expressions = [*cls.selectors, *selectors]
        for expr in expressions:
            if compile_selector(expr).error:
                return None
        c = _Counts(
            layout,
            weakref.ref(snap),
            snap.n,
            snap.node_generation,
            dra.held().end,
            np.ones(snap.n, dtype=bool),
            np.zeros(snap.n, dtype=np.int64),
        )
        memo: dict[int, tuple[CelDevice, bool, bool]] = {}
        state = dra.allocated_state(self.features.consumable_capacity)  # as _recount, read once for every node
        taken, shared = state.dedicated, state.shared
        index, column = snap.index, c.column
        eligible, free = c.eligible, c.free
        try:
            for name, slices in layout.on_node.items():
                col = index.get(name)
                if col is None:
                    continue
                if len(slices) == 1 and _lone(slices[0]):
                    found = self._matching_lone(slices[0], expressions, memo)
                else:
                    found = self._matching(layout.pools(snap.nodes[col], self.features), expressions, memo)
                if found is None:
                    eligible[col] = False
                    continue
                c.devices[col] = found
                left = 0
                for did in found:
                    column[did] = col
                    if did not in taken:
                        left += 1
                free[col] = left
                eligible[col] = not shared or not any(did in shared for did in found)
        except CelRuntimeError:
            return None
        return c

    def _matching(
        self, pools: list[Pool], expressions: list[str], memo: dict[int, tuple[CelDevice, bool, bool]]
    ) -> list[DeviceID] | None:
        """The node's devices the expressions match, in the allocator's order; None when the node is not plain
        (raises CelRuntimeError when an expression fails on a device). ``memo``: per device seen (by its
        CelDevice, which the manifest reader shares between equal devices), whether the expressions match it and
        whether it is plain when nothing but its CelDevice says otherwise."""
        out: list[DeviceID] = []
        for pool in pools:
            if pool.incomplete or pool.invalid:
                return None
            for s in pool.slices:
                for dev in s.devices:
                    verdict = self._match(dev, expressions, memo)
                    if verdict is None:
                        return None
                    if verdict:
                        out.append((pool.driver, pool.name, dev.name))
        return out

    def _match(self, dev: Device, expressions: list[str], memo: dict[int, tuple[CelDevice, bool, bool]]) -> bool | None:
        """Whether the expressions match the device; None when it matches and is not plain."""
        cel = dev.cel
        known = memo.get(id(cel))
        if known is None or known[0] is not cel:
            match = all(compile_selector(e).matches(cel) for e in expressions)
            known = memo[id(cel)] = (cel, match, match and self._plain(Device(dev.name, cel)))
        if not known[1]:
            return False
        own = dev.consumes or dev.taints or dev.policies or dev.binding_conditions  # more than its CelDevice says
        return True if (self._plain(dev) if own else known[2]) else None

    def _matching_lone(
        self, s: ResourceSlice, expressions: list[str], memo: dict[int, tuple[CelDevice, bool, bool]]
    ) -> list[DeviceID] | None:
        """:meth:`_matching` for a node whose one slice is its pool (gather_pools would make a pool of it alone,
        invalid only for a device name listed twice), in one pass over the devices."""
        seen: set[str] = set()
        out: list[DeviceID] = []
        driver, pool = s.driver, s.pool
        for dev in s.devices:
            name = dev.name
            if name in seen:
                return None
            seen.add(name)
            # _match, inlined (this loop runs once per device of the cluster when a matcher's counts are built)
            cel = dev.cel
            known = memo.get(id(cel))
            if known is None or known[0] is not cel:
                self._match(dev, expressions, memo)  # (remembers the device's CelDevice)
                known = memo[id(cel)]
            if not known[1]:
                continue
            if dev.consumes or dev.taints or dev.policies or dev.binding_conditions:
                if not self._plain(dev):
                    return None
            elif not known[2]:
                return None
            out.append((driver, pool, name))
        return out

    def _plain(self, dev: Device) -> bool:
        """Nothing but being allocated can keep a matching device from a request of the shortcut's kind."""
        f = self.features
        if dev.consumes or (dev.binding_conditions and not f.device_binding):
            return False  # (a device with binding conditions the gates leave off is never picked: the allocator says)
        if f.device_taints and any(t.effect in (NO_SCHEDULE, NO_EXECUTE) for t in dev.taints):
            return False
        if not f.consumable_capacity:
            return True
        if dev.allow_multiple:
            return False
        try:
            return fits(dev, None, {}, {}, f.fractional_capacity_range, f.capacity_checks_1_37)
        except CapacityError:
            return False

    def _recount(self, dra: DraObjects, c: _Counts, col: int) -> None:
        devices = c.devices.get(col)
        if devices is None:
            return
        state = dra.allocated_state(self.features.consumable_capacity)
        taken = state.dedicated
        c.free[col] = sum(1 for did in devices if did not in taken)
        # a share on a device taken whole is the allocator's to weigh (its capacity check)
        shared = state.shared
        c.eligible[col] = not shared or not any(did in shared for did in devices)
