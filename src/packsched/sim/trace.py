"""The Alibaba GPU cluster trace v2023 ("openb", Weng et al., USENIX ATC '23) as Node and Pod objects.

Nodes (``openb_node_list_*.csv``: sn, cpu_milli, memory_mib, gpu, model) become nodes with cpu, memory,
``pods: 1001`` and the extended resources ``alibabacloud.com/gpu-count`` / ``alibabacloud.com/gpu-milli``, and the
label ``alibabacloud.com/gpu-card-model``. Pods (``openb_pod_list_*.csv``, 11 columns, or 5 for the multigpu
files) become pods requesting cpu and memory, with their GPU demand in the annotations
``alibabacloud.com/gpu-milli`` (per GPU), ``alibabacloud.com/gpu-count`` and ``alibabacloud.com/gpu-card-model``.
Each GPU pod also requests its node-level total ``alibabacloud.com/gpu-milli`` as an extended resource, so that
NodeResourcesFit's strategies (MostAllocated, RequestedToCapacityRatio) can see GPU use. Timestamps, QoS and
phases are read but not used (the published protocol ignores them).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from packsched.api.errors import FieldError, InputError
from packsched.api.gpushare import GPU_COUNT, GPU_MILLI, GPU_MODEL, MILLI, GpuDemand, parse_models
from packsched.api.objects import Container, Node, Pod
from packsched.api.resources import CPU, MEMORY, PODS
from packsched.sim.defaults import DEFAULT_NODES, DEFAULT_PODS

MIB = 1024 * 1024
PODS_PER_NODE = 1001
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS_SHORT = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
POD_COLUMNS = (*POD_COLUMNS_SHORT, "gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time")
NODE_FILE = "openb_node_list_{}.csv"
POD_FILE = "openb_pod_list_{}.csv"


@dataclass(frozen=True)
class TraceNode:
    name: str
    cpu: int  # millicores
    memory_mib: int
    gpus: int
    model: str

    def to_node(self) -> Node:
        alloc = {CPU: self.cpu, MEMORY: self.memory_mib * MIB, PODS: PODS_PER_NODE}
        if self.gpus:
            alloc[GPU_COUNT] = self.gpus
            alloc[GPU_MILLI] = self.gpus * MILLI
        labels = {GPU_MODEL: self.model} if self.model else {}
        return Node(name=self.name, labels=labels, capacity=dict(alloc), allocatable=alloc)


@dataclass(frozen=True)
class TracePod:
    name: str
    cpu: int  # millicores
    memory_mib: int
    gpus: int  # physical GPUs
    milli: int  # per GPU
    models: tuple[str, ...] = ()

    @property
    def demand(self) -> GpuDemand:
        if self.gpus == 0 or self.milli == 0:
            return GpuDemand()
        return GpuDemand(self.milli, self.gpus, self.models)

    @property
    def total_milli(self) -> int:
        return self.demand.total_milli

    def to_pod(self, name: str | None = None) -> Pod:
        requests = {CPU: self.cpu, MEMORY: self.memory_mib * MIB}
        annotations: dict[str, str] = {}
        demand = self.demand
        if demand.wants_gpu:
            annotations[GPU_MILLI] = str(self.milli)
            annotations[GPU_COUNT] = str(self.gpus)
            if self.models:
                annotations[GPU_MODEL] = "|".join(self.models)
            requests[GPU_MILLI] = demand.total_milli
        requests = {k: v for k, v in requests.items() if v}
        return Pod(
            name=name or self.name,
            annotations=annotations,
            containers=[Container(name="main", requests=requests, limits=dict(requests))],
        )


@dataclass(frozen=True)
class Trace:
    nodes: tuple[TraceNode, ...]
    pods: tuple[TracePod, ...]
    node_file: str
    pod_file: str

    @property
    def gpu_capacity_milli(self) -> int:
        return sum(n.gpus for n in self.nodes) * MILLI

    @property
    def cpu_capacity(self) -> int:
        return sum(n.cpu for n in self.nodes)

    @property
    def memory_capacity_mib(self) -> int:
        return sum(n.memory_mib for n in self.nodes)

    @property
    def workload(self) -> str:
        return Path(self.pod_file).stem


def _int(value: str, file: str, row: int, column: str, errors: list[FieldError], low: int = 0) -> int:
    text = value.strip()
    try:
        out = int(text)
    except ValueError:
        errors.append(FieldError(f"row {row}, column {column}", f"must be a whole number, got {value!r}", file))
        return 0
    if out < low:
        errors.append(FieldError(f"row {row}, column {column}", f"must be at least {low}, got {out}", file))
    return out


def read_csv(path: Path) -> list[list[str]]:
    """Every row of a CSV file; a file that is missing or unreadable is an InputError naming it."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:  # a byte-order mark (Excel's CSV) is not a column
            return list(csv.reader(fh))
    except FileNotFoundError:
        raise InputError.single("no such file", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.single(f"cannot read the file: {exc}", file=str(path)) from None


def _rows(path: Path, want: tuple[tuple[str, ...], ...]) -> tuple[list[str], list[list[str]]]:
    file = str(path)
    rows = read_csv(path)
    if not rows:
        raise InputError.single("the file is empty (expected a header row)", file=file)
    header = [h.strip() for h in rows[0]]
    if tuple(header) not in want:
        expected = " or ".join(",".join(w) for w in want)
        raise InputError.single(
            f"unexpected columns {','.join(header)!r}; expected {expected}", file=file, path="row 1 (header)"
        )
    return header, rows[1:]


def _named_rows(
    header: list[str], rows: list[list[str]], file: str, errors: list[FieldError], column: str, kind: str
) -> Iterator[tuple[int, list[str], str]]:
    """The data rows (row number, cells, name) that have the header's width; empty rows are skipped, a row of
    another width, an empty name and a repeated name are reported in ``errors``."""
    seen: set[str] = set()
    for i, row in enumerate(rows, start=2):
        if not row:
            continue
        if len(row) != len(header):
            errors.append(FieldError(f"row {i}", f"has {len(row)} columns, the header has {len(header)}", file))
            continue
        name = row[0].strip()
        if not name:
            errors.append(FieldError(f"row {i}, column {column}", f"the {kind} name is empty", file))
        elif name in seen:
            errors.append(FieldError(f"row {i}, column {column}", f"{kind} {name!r} appears twice", file))
        seen.add(name)
        yield i, row, name


def load_nodes(path: Path) -> list[TraceNode]:
    header, rows = _rows(path, (NODE_COLUMNS,))
    file = str(path)
    errors: list[FieldError] = []
    out: list[TraceNode] = []
    for i, row, name in _named_rows(header, rows, file, errors, "sn", "node"):
        cpu = _int(row[1], file, i, "cpu_milli", errors)
        mem = _int(row[2], file, i, "memory_mib", errors)
        gpus = _int(row[3], file, i, "gpu", errors)
        model = row[4].strip()
        if gpus and not model:
            errors.append(FieldError(f"row {i}, column model", "a node with GPUs needs a GPU model", file))
        out.append(TraceNode(name, cpu, mem, gpus, model))
    if errors:
        raise InputError(errors)
    if not out:
        raise InputError.single("no nodes in the file", file=file)
    return out


def load_pods(path: Path) -> list[TracePod]:
    header, rows = _rows(path, (POD_COLUMNS, POD_COLUMNS_SHORT))
    file = str(path)
    errors: list[FieldError] = []
    out: list[TracePod] = []
    for i, row, name in _named_rows(header, rows, file, errors, "name", "pod"):
        cpu = _int(row[1], file, i, "cpu_milli", errors)
        mem = _int(row[2], file, i, "memory_mib", errors)
        gpus = _int(row[3], file, i, "num_gpu", errors)
        milli = _int(row[4], file, i, "gpu_milli", errors)
        if milli > MILLI:
            errors.append(FieldError(f"row {i}, column gpu_milli", f"must be at most {MILLI}, got {milli}", file))
        if gpus > 1 and milli not in (0, MILLI):
            errors.append(
                FieldError(
                    f"row {i}, column gpu_milli",
                    f"a pod with {gpus} GPUs must take whole GPUs ({MILLI}), got {milli}",
                    file,
                )
            )
        models = parse_models(row[5]) if len(header) > 5 else ()
        out.append(TracePod(name, cpu, mem, gpus, milli, models))
        if len(errors) > 50:
            break
    if errors:
        raise InputError(errors)
    if not out:
        raise InputError.single("no pods in the file", file=file)
    return out


def resolve(data_dir: Path, name: str, pattern: str) -> Path:
    """``default`` -> DATA_DIR/openb_pod_list_default.csv; a name ending in .csv is a path."""
    if name.endswith(".csv"):
        p = Path(name)
        return p if p.is_absolute() or p.exists() else data_dir / p
    return data_dir / pattern.format(name)


def load_trace(data_dir: Path, pods: str = DEFAULT_PODS, nodes: str = DEFAULT_NODES) -> Trace:
    """Both lists, every problem of both files reported at once."""
    if not data_dir.is_dir():
        raise InputError.single("the trace folder does not exist", file=str(data_dir))
    node_path = resolve(data_dir, nodes, NODE_FILE)
    pod_path = resolve(data_dir, pods, POD_FILE)
    errors: list[FieldError] = []
    node_list: list[TraceNode] = []
    pod_list: list[TracePod] = []
    try:
        node_list = load_nodes(node_path)
    except InputError as exc:
        errors += exc.errors
    try:
        pod_list = load_pods(pod_path)
    except InputError as exc:
        errors += exc.errors
    if errors:
        raise InputError(errors)
    unknown_models(node_list, pod_list, str(pod_path), str(node_path))
    return Trace(tuple(node_list), tuple(pod_list), str(node_path), str(pod_path))


def unknown_models(nodes: list[TraceNode], pods: list[TracePod], pod_file: str, node_file: str) -> None:
    """A pod asking for a GPU model that no node of the node list has could never be placed: most likely a typo, so
    an error naming the pods (the first ten) rather than a replay that drops them silently."""
    have = {n.model for n in nodes if n.model}
    bad = [(p.name, m) for p in pods for m in p.models if m not in have]
    if not bad:
        return
    known = ", ".join(sorted(have)) or "none"
    errors = [
        FieldError(
            f"pod {name}, column gpu_spec",
            f"GPU model {model!r} is on no node of {Path(node_file).name} (its models: {known})",
            pod_file,
        )
        for name, model in bad[:10]
    ]
    if len(bad) > 10:
        errors.append(FieldError("gpu_spec", f"and {len(bad) - 10} more pods asking for models no node has", pod_file))
    raise InputError(errors)
