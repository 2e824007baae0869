"""The array-backed cluster snapshot: every node's resources as columns of int64 matrices.

Row ``r`` of :attr:`Snapshot.alloc` is one resource (cpu in millicores, memory in bytes, ``nvidia.com/gpu`` as a
count, ...) and column ``n`` is one node. Filters and scores read whole rows at once; placing or removing a pod
updates one column. Labels, taints and host ports have their own indexes, built for vectorised look-ups.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from packsched.api.objects import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Node, Pod, Taint
from packsched.api.pods import pod_non_zero_requests, pod_requests
from packsched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
# Above this, ``amount * 100`` could overflow int64; scoring then switches to exact Python integers.
BIG_AMOUNT = (2**63 - 1) // 128

FIXED_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)


@dataclass(eq=False)
class PodInfo:
    """A pod with what the scheduler computes once: its requests and its host ports."""

    pod: Pod
    requests: dict[str, int]  # non-zero entries only, no defaults (what the Fit filter checks)
    non_zero_cpu: int  # with the 100m per-container default, for scoring
    non_zero_memory: int  # with the 200Mi per-container default, for scoring
    host_ports: tuple[tuple[str, str, int], ...]  # (protocol, hostIP, port)
    arrival: int = 0  # order in which the pod entered the queue
    node: int = -1  # column of the node it is placed on, -1 when not placed
    start_time: float = 0.0  # when it was bound (virtual seconds); preemption prefers evicting recent pods
    start_seq: int = 0  # order of binding among pods started at the same virtual time (later = started later)

    @property
    def key(self) -> str:
        return self.pod.key

    @property
    def priority(self) -> int:
        return self.pod.priority

    @property
    def start_key(self) -> tuple[float, int]:
        """When the pod started, for "more important pod" comparisons: time, then binding order."""
        return (self.start_time, self.start_seq)


def make_pod_info(pod: Pod, arrival: int = 0) -> PodInfo:
    cpu, mem = pod_non_zero_requests(pod)
    ports = tuple((p.protocol or "TCP", p.host_ip or "0.0.0.0", p.host_port) for p in pod.host_ports())
    return PodInfo(pod, pod_requests(pod), cpu, mem, ports, arrival)


@dataclass
class LabelIndex:
    """Per label key, each node's value as an integer code (-1: the node lacks the key)."""

    n: int = 0
    codes: dict[str, npt.NDArray[np.int32]] = field(default_factory=dict)
    vocab: dict[str, dict[str, int]] = field(default_factory=dict)
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
            voc = self.vocab[key]
            code = voc.setdefault(val, len(voc))
            arr[col] = code
        self.version += 1

    def grow(self, n: int) -> None:
        for key, arr in self.codes.items():
            self.codes[key] = np.concatenate([arr, np.full(n - self.n, -1, dtype=np.int32)])
        self.n = n

    def column(self, key: str) -> npt.NDArray[np.int32] | None:
        return self.codes.get(key)


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
        self.pods: dict[str, PodInfo] = {}  # every placed pod by key
        for node in nodes:
            self.add_node(node)

    # -- shape ----------------------------------------------------------------------------------------

    @property
    def n(self) -> int:
        return len(self.nodes)

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
        self.requested = np.hstack(
            [self.requested, np.zeros((len(self.resources), len(batch)), dtype=np.int64)]
        )
        self.nonzero = np.hstack([self.nonzero, np.zeros((2, len(batch)), dtype=np.int64)])
        self.pod_count = np.concatenate([self.pod_count, np.zeros(len(batch), dtype=np.int64)])
        self.allowed_pods = np.concatenate([self.allowed_pods, np.zeros(len(batch), dtype=np.int64)])
        self.unschedulable = np.concatenate([self.unschedulable, np.zeros(len(batch), dtype=bool)])
        self.taint_pos = np.hstack(
            [self.taint_pos, np.full((len(self.taints), len(batch)), -1, dtype=np.int32)]
        )
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
        if info.key in self.pods:
            raise ValueError(
                f"pod {info.key} is already placed on {self.nodes[self.pods[info.key].node].name}"
            )
        self._account(info, col, +1)
        info.node = col
        self.pods_on[col][info.key] = info
        self.pods[info.key] = info
        for proto, ip, port in info.host_ports:
            self.ports.setdefault((proto, port), {}).setdefault(col, []).append(ip)

    def remove_pod(self, info: PodInfo) -> None:
        col = info.node
        if col < 0 or self.pods.get(info.key) is not info:
            raise ValueError(f"pod {info.key} is not placed")
        self._account(info, col, -1)
        del self.pods_on[col][info.key]
        del self.pods[info.key]
        for proto, ip, port in info.host_ports:
            users = self.ports[(proto, port)]
            users[col].remove(ip)
            if not users[col]:
                del users[col]
            if not users:
                del self.ports[(proto, port)]
        info.node = -1

    def _account(self, info: PodInfo, col: int, sign: int) -> None:
        for name, amount in info.requests.items():
            row = self.ensure_resource(name)
            self.requested[row, col] += sign * amount
            if amount > BIG_AMOUNT or self.requested[row, col] > BIG_AMOUNT:
                self.big = True
        self.nonzero[0, col] += sign * info.non_zero_cpu
        self.nonzero[1, col] += sign * info.non_zero_memory
        if max(info.non_zero_cpu, info.non_zero_memory) > BIG_AMOUNT:
            self.big = True
        self.pod_count[col] += sign
        self.generation += 1

    def free(self, row: int) -> IntArray:
        """Allocatable minus requested for one resource, over all nodes."""
        out: IntArray = self.alloc[row] - self.requested[row]
        return out

    def node_names(self, cols: Iterable[int]) -> list[str]:
        return [self.nodes[c].name for c in cols]
