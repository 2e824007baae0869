"""The array-backed cluster snapshot: every node's resources as columns of int64 matrices.

Row ``r`` of :attr:`Snapshot.alloc` is one resource (cpu in millicores, memory in bytes, ``nvidia.com/gpu`` as a
count, ...) and column ``n`` is one node. Filters and scores read whole rows at once; placing or removing a pod
updates one column. Labels, taints and host ports have their own indexes, built for vectorised look-ups.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from packsched.api.objects import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Node, Taint
from packsched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from packsched.framework.journal import Journal
from packsched.framework.podinfo import PodInfo
from packsched.framework.podtable import PodTable

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
# Above this, ``amount * 100`` could overflow int64; scoring then switches to exact Python integers.
BIG_AMOUNT = (2**63 - 1) // 128

FIXED_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)

# From this many pods on, add_pods / remove_pods update the arrays with one numpy call each instead of one
# scalar update per pod and resource.
_BULK = 8


class PodListener(Protocol):
    """Told when a pod is accounted on or taken off a node (binding, preemption, dry runs): plugins that keep
    their own per-node state (the GPU device table) follow the snapshot this way."""

    def pod_added(self, info: PodInfo, col: int) -> None: ...

    def pod_removed(self, info: PodInfo, col: int) -> None: ...


@dataclass
class LabelIndex:
    """Per label key, each node's value as an integer code (-1: the node lacks the key). Codes are given in order
    of first appearance and never change; ``names[key][code]`` is the value of a code."""

    n: int = 0
    codes: dict[str, npt.NDArray[np.int32]] = field(default_factory=dict)
    vocab: dict[str, dict[str, int]] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)
    version: int = 0

    def set_node(self, col: int, labels: dict[str, str]) -> None:
        for key in list(self.codes):
            if key not in labels:
                self.codes[key][col] = -1
        for key, val in labels.items():
            arr = self.codes.get(key)
            if arr is None:
                arr = np.full(self.n, -1, dtype=np.int32)
                self.codes[key] = arr
                self.vocab[key] = {}
                self.names[key] = []
            voc = self.vocab[key]
            code = voc.get(val)
            if code is None:
                code = voc[val] = len(voc)
                self.names[key].append(val)
            arr[col] = code
        self.version += 1

    def grow(self, n: int) -> None:
        for key, arr in self.codes.items():
            self.codes[key] = np.concatenate([arr, np.full(n - self.n, -1, dtype=np.int32)])
        self.n = n

    def column(self, key: str) -> npt.NDArray[np.int32] | None:
        return self.codes.get(key)

    def values(self, key: str) -> list[str]:
        """The key's values by code (do not write to it)."""
        return self.names.get(key, [])


class Snapshot:
    """The cluster as the scheduler sees it in one cycle: nodes, their resources and the pods placed on them."""

    def __init__(self, nodes: Iterable[Node] = ()) -> None:
        self.nodes: list[Node] = []
        self.index: dict[str, int] = {}
        self.resources: list[str] = list(FIXED_RESOURCES)
        self.row: dict[str, int] = {r: i for i, r in enumerate(self.resources)}
        self.alloc: IntArray = np.zeros((len(self.resources), 0), dtype=np.int64)
        self.requested: IntArray = np.zeros_like(self.alloc)
        self.nonzero: IntArray = np.zeros((2, 0), dtype=np.int64)  # cpu, memory with scoring defaults
        self.pod_count: IntArray = np.zeros(0, dtype=np.int64)
        self.allowed_pods: IntArray = np.zeros(0, dtype=np.int64)
        self.unschedulable: BoolArray = np.zeros(0, dtype=bool)
        self.pods_on: list[dict[str, PodInfo]] = []
        self.labels = LabelIndex()
        # taints: distinct taints, and for each the position in each node's taint list (-1: not on the node)
        self.taints: list[Taint] = []
        self.taint_id: dict[Taint, int] = {}
        self.taint_pos: npt.NDArray[np.int32] = np.zeros((0, 0), dtype=np.int32)
        # host ports in use: (protocol, port) -> {node column: [host IPs]}
        self.ports: dict[tuple[str, int], dict[int, list[str]]] = {}
        self.big = False  # some amount is large enough that scores must use exact Python integers
        self.generation = 0  # bumped on every change, for caches
        self.node_generation = 0  # bumped when nodes (labels, taints, allocatable) change
        # A journal of the node columns whose placed pods changed, in order, for caches that recompute only those
        # nodes (framework/equivalence.py); see ``touched_since``.
        self.touched = Journal()
        self.pods: dict[str, PodInfo] = {}  # every placed pod by key
        self.table = PodTable(len(self.resources))  # the same pods as rows of arrays (preemption reads them)
        # How many placed pods of each (namespace, priority) each node holds: row per group, column per node.
        # Preemption asks "which nodes hold a pod it may evict" of these few rows instead of walking every
        # node's pods in Python.
        self.groups: list[tuple[str, int]] = []
        self.group_row: dict[tuple[str, int], int] = {}
        self.group_count: IntArray = np.zeros((0, 0), dtype=np.int64)
        self._group_of: dict[str, int] = {}  # each placed pod's row (its priority could change meanwhile)
        self.listeners: list[PodListener] = []
        # per-snapshot state that plugins own (e.g. the GPU device table), by plugin-chosen key
        self.extensions: dict[str, object] = {}
        # Namespace labels by namespace name (InterPodAffinity's namespaceSelector); a namespace not listed has only
        # the label the API server gives every namespace (kubernetes.io/metadata.name: <name>).
        self.namespaces: dict[str, dict[str, str]] = {}
        for node in nodes:
            self.add_node(node)

    def set_namespace(self, name: str, labels: dict[str, str] | None) -> None:
        """A namespace added or relabelled (``labels``), or deleted (None). Per-snapshot state that matched pods'
        namespace labels (an extension with ``namespaces_changed()``) is told, and starts its matches again."""
        if labels is None:
            if self.namespaces.pop(name, None) is None:
                return
        elif self.namespaces.get(name) == labels:
            return
        else:
            self.namespaces[name] = dict(labels)
        self.generation += 1
        for ext in list(self.extensions.values()):
            hook = getattr(ext, "namespaces_changed", None)
            if callable(hook):
                hook()

    # -- shape ----------------------------------------------------------------------------------------

    @property
    def n(self) -> int:
        return len(self.nodes)

    @property
    def touched_end(self) -> int:
        """The journal position after its last entry."""
        return self.touched.end

    def touched_since(self, pos: int) -> list[int] | None:
        """The columns (repeats possible) whose placed pods changed since journal position ``pos``; None when the
        journal no longer reaches back that far (then everything counts as changed)."""
        return self.touched.since(pos)

    def ensure_resource(self, name: str) -> int:
        """The row for ``name``, adding an all-zero row the first time a resource is seen."""
        row = self.row.get(name)
        if row is not None:
            return row
        row = len(self.resources)
        self.resources.append(name)
        self.row[name] = row
        zeros = np.zeros((1, self.alloc.shape[1]), dtype=np.int64)
        self.alloc = np.vstack([self.alloc, zeros])
        self.requested = np.vstack([self.requested, zeros])
        return row

    # -- nodes ----------------------------------------------------------------------------------------

    def add_node(self, node: Node) -> int:
        if node.name in self.index:
            raise ValueError(f"node {node.name} is already in the snapshot")
        col = self.n
        self.nodes.append(node)
        self.index[node.name] = col
        n = col + 1
        self.alloc = np.hstack([self.alloc, np.zeros((len(self.resources), 1), dtype=np.int64)])
        self.requested = np.hstack([self.requested, np.zeros((len(self.resources), 1), dtype=np.int64)])
        self.nonzero = np.hstack([self.nonzero, np.zeros((2, 1), dtype=np.int64)])
        self.pod_count = np.append(self.pod_count, 0)
        self.allowed_pods = np.append(self.allowed_pods, 0)
        self.unschedulable = np.append(self.unschedulable, False)
        self.taint_pos = np.hstack([self.taint_pos, np.full((len(self.taints), 1), -1, dtype=np.int32)])
        self.group_count = np.hstack([self.group_count, np.zeros((len(self.groups), 1), dtype=np.int64)])
        self.pods_on.append({})
        self.labels.grow(n)
        self._set_node_fields(col, node)
        return col

    def add_nodes(self, nodes: Iterable[Node]) -> None:
        """Add many nodes at once (one allocation instead of one per node)."""
        batch = [n for n in nodes]
        if not batch:
            return
        start = self.n
        total = start + len(batch)
        self.alloc = np.hstack([self.alloc, np.zeros((len(self.resources), len(batch)), dtype=np.int64)])
        self.requested = np.hstack([self.requested, np.zeros((len(self.resources), len(batch)), dtype=np.int64)])
        self.nonzero = np.hstack([self.nonzero, np.zeros((2, len(batch)), dtype=np.int64)])
        self.pod_count = np.concatenate([self.pod_count, np.zeros(len(batch), dtype=np.int64)])
        self.allowed_pods = np.concatenate([self.allowed_pods, np.zeros(len(batch), dtype=np.int64)])
        self.unschedulable = np.concatenate([self.unschedulable, np.zeros(len(batch), dtype=bool)])
        self.taint_pos = np.hstack([self.taint_pos, np.full((len(self.taints), len(batch)), -1, dtype=np.int32)])
        self.group_count = np.hstack([self.group_count, np.zeros((len(self.groups), len(batch)), dtype=np.int64)])
        self.labels.grow(total)
        for i, node in enumerate(batch):
            if node.name in self.index:
                raise ValueError(f"node {node.name} is already in the snapshot")
            self.nodes.append(node)
            self.index[node.name] = start + i
            self.pods_on.append({})
            self._set_node_fields(start + i, node)

    def update_node(self, node: Node) -> None:
        """Replace a node's labels, taints, allocatable and unschedulable flag, keeping its pods."""
        col = self.index[node.name]
        self.nodes[col] = node
        self._set_node_fields(col, node)

    def _set_node_fields(self, col: int, node: Node) -> None:
        self.alloc[:, col] = 0
        for name, amount in node.allocatable.items():
            if name == PODS:
                continue
            row = self.ensure_resource(name)  # may replace self.alloc: look it up after
            self.alloc[row, col] = amount
            if amount > BIG_AMOUNT:
                self.big = True
        self.allowed_pods[col] = node.allocatable.get(PODS, 0)
        self.unschedulable[col] = node.unschedulable
        self.labels.set_node(col, node.labels)
        self.taint_pos[:, col] = -1
        for pos, taint in enumerate(node.taints):
            tid = self.taint_id.get(taint)
            if tid is None:
                tid = len(self.taints)
                self.taints.append(taint)
                self.taint_id[taint] = tid
                width = self.alloc.shape[1]
                self.taint_pos = np.vstack([self.taint_pos, np.full((1, width), -1, dtype=np.int32)])
            if self.taint_pos[tid, col] < 0:
                self.taint_pos[tid, col] = pos
        self.generation += 1
        self.node_generation += 1

    def taint_rows(self, effects: tuple[str, ...]) -> list[int]:
        return [i for i, t in enumerate(self.taints) if t.effect in effects]

    @property
    def hard_taint_rows(self) -> list[int]:
        return self.taint_rows((NO_SCHEDULE, NO_EXECUTE))

    @property
    def soft_taint_rows(self) -> list[int]:
        return self.taint_rows((PREFER_NO_SCHEDULE,))

    # -- pods -----------------------------------------------------------------------------------------

    def add_pod(self, info: PodInfo, col: int) -> None:
        """Account a pod on node column ``col`` (bound or assumed)."""
        self._check_absent(info)
        self._account(info, col, +1)
        row = self._place(info, col)  # first: it may grow group_count
        self.group_count[row, col] += 1

    def _check_absent(self, info: PodInfo) -> None:
        if info.key in self.pods:
            raise ValueError(f"pod {info.key} is already placed on {self.nodes[self.pods[info.key].node].name}")

    def _place(self, info: PodInfo, col: int) -> int:
        """Everything of add_pod but the arrays; answers the pod's row in ``group_count``."""
        key, pod = info.key, info.pod
        group = (pod.namespace, pod.priority)
        row = self.group_row.get(group)
        if row is None:
            row = self.group_row[group] = len(self.groups)
            self.groups.append(group)
            self.group_count = np.vstack([self.group_count, np.zeros((1, self.n), dtype=np.int64)])
        self._group_of[key] = row
        info.node = col
        self.pods_on[col][key] = info
        self.table.add(info, col, self._rows(info))
        self.pods[key] = info
        for proto, ip, port in info.host_ports:
            self.ports.setdefault((proto, port), {}).setdefault(col, []).append(ip)
        for listener in self.listeners:
            listener.pod_added(info, col)
        return row

    def remove_pod(self, info: PodInfo) -> None:
        self._check_placed(info)
        col = info.node
        self._account(info, col, -1)
        row = self._unplace(info)
        self.group_count[row, col] -= 1

    def _check_placed(self, info: PodInfo) -> None:
        if info.node < 0 or self.pods.get(info.key) is not info:
            raise ValueError(f"pod {info.key} is not placed")

    def _unplace(self, info: PodInfo) -> int:
        """Everything of remove_pod but the arrays; answers the pod's row in ``group_count``."""
        col = info.node
        row = self._group_of.pop(info.key)
        del self.pods_on[col][info.key]
        del self.pods[info.key]
        self.table.remove(info)
        for proto, ip, port in info.host_ports:
            users = self.ports[(proto, port)]
            users[col].remove(ip)
            if not users[col]:
                del users[col]
            if not users:
                del self.ports[(proto, port)]
        info.node = -1
        for listener in self.listeners:
            listener.pod_removed(info, col)
        return row

    def add_pods(self, placements: Sequence[tuple[PodInfo, int]]) -> None:
        """``add_pod`` for each (pod, column), in order; the arrays are updated once for all of them (preemption's
        dry run puts back one pod on each of many nodes at every step). Nothing changes if one cannot be added."""
        keys = {info.key for info, _ in placements}
        if len(keys) < len(placements):
            raise ValueError("a pod is placed twice")
        for info, _ in placements:
            self._check_absent(info)
        rows, amounts, cols = self._cells(placements)
        if len(placements) < _BULK or any(a < 0 for a in amounts):
            # few pods, or a negative amount (then the size check must see every intermediate sum): one by one
            for info, col in placements:
                self.add_pod(info, col)
            return
        where = (np.array(rows, dtype=np.intp), np.array(cols, dtype=np.intp))
        amount = np.array(amounts, dtype=np.int64)
        np.add.at(self.requested, where, amount)
        # The amounts are not negative, so a sum above the limit at some point is above it at the end.
        if len(amounts) and (amount.max() > BIG_AMOUNT or self.requested[where].max() > BIG_AMOUNT):
            self.big = True
        self._bulk_common(placements, +1)
        if any(max(info.non_zero_cpu, info.non_zero_memory) > BIG_AMOUNT for info, _ in placements):
            self.big = True
        group_rows = [self._place(info, col) for info, col in placements]
        np.add.at(self.group_count, (group_rows, [col for _, col in placements]), 1)

    def remove_pods(self, infos: Sequence[PodInfo]) -> None:
        """``remove_pod`` for each pod, in order; the arrays are updated once for all of them. Nothing changes
        if one is not placed."""
        if len({id(info) for info in infos}) < len(infos):
            raise ValueError("a pod is removed twice")
        for info in infos:
            self._check_placed(info)
        if len(infos) < _BULK:
            for info in infos:
                self.remove_pod(info)
            return
        placements = [(info, info.node) for info in infos]
        rows, amounts, cols = self._cells(placements)
        np.subtract.at(self.requested, (rows, cols), amounts)  # taking pods out makes nothing larger
        self._bulk_common(placements, -1)
        group_rows = [self._unplace(info) for info in infos]
        np.subtract.at(self.group_count, (group_rows, [col for _, col in placements]), 1)

    def _cells(self, placements: Sequence[tuple[PodInfo, int]]) -> tuple[list[int], list[int], list[int]]:
        rows: list[int] = []
        amounts: list[int] = []
        cols: list[int] = []
        for info, col in placements:
            for row, amount in self._rows(info):
                rows.append(row)
                amounts.append(amount)
                cols.append(col)
        return rows, amounts, cols

    def _bulk_common(self, placements: Sequence[tuple[PodInfo, int]], sign: int) -> None:
        cols = np.array([col for _, col in placements], dtype=np.intp)
        np.add.at(self.nonzero[0], cols, [sign * info.non_zero_cpu for info, _ in placements])
        np.add.at(self.nonzero[1], cols, [sign * info.non_zero_memory for info, _ in placements])
        np.add.at(self.pod_count, cols, sign)
        self.generation += len(placements)
        self.touched.extend(col for _, col in placements)

    def _rows(self, info: PodInfo) -> tuple[tuple[int, int], ...]:
        """The pod's (row, amount) pairs in this snapshot."""
        rows = info.account_rows
        if rows is None or rows[0] is not self:
            known = self.row
            cells = []
            for name, amount in info.requests.items():
                row = known.get(name)
                cells.append((row if row is not None else self.ensure_resource(name), amount))
            rows = info.account_rows = (self, tuple(cells))
        return rows[1]

    def _account(self, info: PodInfo, col: int, sign: int) -> None:
        cells = self._rows(info)
        requested = self.requested
        if sign > 0:
            for row, amount in cells:
                total = requested[row, col] + amount  # (``+=``, the sum kept for the check below)
                requested[row, col] = total
                if amount > BIG_AMOUNT or total > BIG_AMOUNT:
                    self.big = True
            if info.non_zero_cpu > BIG_AMOUNT or info.non_zero_memory > BIG_AMOUNT:
                self.big = True
        else:
            # Taking a pod out makes nothing larger: whatever is large now was already large when it was added,
            # and ``big`` never goes back to False.
            for row, amount in cells:
                requested[row, col] -= amount
        nonzero = self.nonzero
        nonzero[0, col] += sign * info.non_zero_cpu
        nonzero[1, col] += sign * info.non_zero_memory
        self.pod_count[col] += sign
        self.generation += 1
        self.touched.add(col)

    def reorder_pods(self, col: int, keys: Sequence[str]) -> None:
        """Put the pods of node ``col`` back in the order of ``keys`` (every key of a pod there, once): a dry
        run that took pods out and put them back leaves the node as it found it."""
        on_node = self.pods_on[col]
        if list(on_node) == list(keys):
            return
        items = [(k, on_node[k]) for k in keys]
        on_node.clear()
        on_node.update(items)
        self.table.renumber([info for _, info in items])

    def nodes_holding(self, groups: Iterable[tuple[str, int]]) -> BoolArray:
        """The nodes holding at least one placed pod of the given (namespace, priority) groups."""
        rows = [self.group_row[g] for g in groups if g in self.group_row]
        if not rows:
            return np.zeros(self.n, dtype=bool)
        out: BoolArray = np.asarray(self.group_count[rows].any(axis=0), dtype=bool)
        return out

    def free(self, row: int) -> IntArray:
        """Allocatable minus requested for one resource, over all nodes."""
        out: IntArray = self.alloc[row] - self.requested[row]
        return out

    def node_names(self, cols: Iterable[int]) -> list[str]:
        return [self.nodes[c].name for c in cols]
