"""A job trace read as gangs (``packsched gen-jobs DIR --from-trace FILE``): every job of the trace becomes a PodGroup
whose ``minMember`` is all of its pods, and one Job per kind of pod in it, arriving when the job first started in
the trace and running as long as the job ran there (the whole gang starts and ends together).

Two formats, told apart by the first row:

- **Alibaba PAI's task table** (``pai_task_table.csv`` of cluster-trace-gpu-v2020, Weng et al., "MLaaS in the
  Wild", NSDI '22), headerless as published or with its header row: ``job_name, task_name, inst_num, status,
  start_time, end_time, plan_cpu, plan_mem, plan_gpu, gpu_type``. One row per task of a job; the task has
  ``inst_num`` instances (pods) of ``plan_cpu`` percent of a core (600 is 6 cores), ``plan_mem`` GB (10^9 bytes) and
  ``plan_gpu`` percent of a GPU (50 is half a GPU, 200 two GPUs, empty none).
- **A pod list with a job id**: a header row with at least ``job_id, cpu_milli, memory_mib, num_gpu,
  creation_time, deletion_time`` (other columns, such as the rest of the Alibaba v2023 ``openb`` pod lists', are
  ignored). One row per pod; ``num_gpu`` whole GPUs.

What a trace cannot say is stated, never guessed silently (:class:`Reading` counts each case and ``gen-jobs`` prints
them): a job with a task or pod that has no start or end time (still waiting or running when the trace ended) is
left out; a fraction of a GPU is rounded up to a whole ``nvidia.com/gpu`` (the workload's pods ask whole GPUs; the
GPU share replay, ``packsched replay``, is the place for fractions); the GPU model (``gpu_type``) is not used, since
the workload's cluster is of one kind of node; times are in seconds, shifted so that the first job kept arrives at 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from packsched.api.errors import FieldError, InputError
from packsched.sim.trace import read_csv

PAI_COLUMNS = (
    "job_name",
    "task_name",
    "inst_num",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    "gpu_type",
)
POD_LIST_COLUMNS = ("job_id", "cpu_milli", "memory_mib", "num_gpu", "creation_time", "deletion_time")
MIB = 1024 * 1024
MAX_ERRORS = 50
_NOT_DNS = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True)
class TaskSpec:
    """``count`` identical pods of one job."""

    name: str
    count: int
    cpu_milli: int
    memory_bytes: int
    gpus: int


@dataclass(frozen=True)
class TraceJob:
    name: str
    arrival: float
    run: float
    tasks: tuple[TaskSpec, ...]

    @property
    def pods(self) -> int:
        return sum(t.count for t in self.tasks)

    @property
    def gpus(self) -> int:
        return sum(t.count * t.gpus for t in self.tasks)


@dataclass
class Reading:
    """The jobs kept and what the reader had to leave out or round."""

    jobs: list[TraceJob] = field(default_factory=list)
    unfinished: int = 0  # jobs left out: a task or pod without a start or an end time
    rounded_tasks: int = 0  # tasks (or pods) of the kept jobs whose fraction of a GPU was rounded up
    fmt: str = ""


@dataclass
class _Job:
    first_row: int
    tasks: list[TaskSpec] = field(default_factory=list)
    start: float = math.inf
    end: float = -math.inf
    unfinished: bool = False
    rounded: int = 0


def read_job_trace(path: Path, limit: int) -> Reading:
    """The first ``limit`` jobs of the trace by arrival (ties by the job's first row). Bad rows are reported
    together (file, row and column), at most :data:`MAX_ERRORS` of them."""
    file = str(path)
    rows = [r for r in read_csv(path) if any(c.strip() for c in r)]
    if not rows:
        raise InputError.single("the file is empty", file=file)
    header = [c.strip() for c in rows[0]]
    errors: list[FieldError] = []
    if tuple(header) == PAI_COLUMNS:
        jobs, fmt = _pai(rows[1:], 2, file, errors), "pai"
    elif "job_id" in header:
        missing = [c for c in POD_LIST_COLUMNS if c not in header]
        if missing:
            raise InputError.single(
                f"a pod list with job ids needs the columns {', '.join(POD_LIST_COLUMNS)}; "
                f"missing {', '.join(missing)}",
                file=file,
                path="row 1 (header)",
            )
        jobs, fmt = _pod_list(header, rows[1:], file, errors), "pod list"
    elif len(header) == len(PAI_COLUMNS):
        jobs, fmt = _pai(rows, 1, file, errors), "pai"  # PAI's tables are published without a header
    else:
        raise InputError.single(
            f"not a job trace: expected Alibaba PAI's task table ({len(PAI_COLUMNS)} columns: "
            f"{','.join(PAI_COLUMNS)}) or a header with {','.join(POD_LIST_COLUMNS)}",
            file=file,
            path="row 1",
        )
    if errors:
        raise InputError(errors[:MAX_ERRORS])
    return _finish(jobs, limit, fmt, file)


def _rows(
    rows: list[list[str]], first: int, width: int, file: str, errors: list[FieldError]
) -> Iterator[tuple[int, list[str]]]:
    for i, row in enumerate(rows, start=first):
        if len(errors) > MAX_ERRORS:
            return
        if len(row) != width:
            errors.append(FieldError(f"row {i}", f"has {len(row)} columns, expected {width}", file))
            continue
        yield i, [c.strip() for c in row]


def _number(text: str, row: int, column: str, file: str, errors: list[FieldError], *, whole: bool = False) -> float:
    """A non-negative number of the cell; empty cells are 0 (the caller checks where one is required)."""
    if not text:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or (whole and value != int(value)):
        kind = "a whole number" if whole else "a number"
        errors.append(FieldError(f"row {row}, column {column}", f"must be {kind} of at least 0, got {text!r}", file))
        return 0.0
    return value


def _times(job: _Job, start: str, end: str, row: int, file: str, errors: list[FieldError]) -> None:
    if not start or not end:
        job.unfinished = True
        return
    s = _number(start, row, "start", file, errors)
    e = _number(end, row, "end", file, errors)
    job.start, job.end = min(job.start, s), max(job.end, e)


def _gpus(fraction: float) -> tuple[int, bool]:
    """Whole GPUs for a (possibly fractional) count, and whether it was rounded."""
    whole = math.ceil(fraction - 1e-9)
    return whole, whole != fraction


def _pai(rows: list[list[str]], first: int, file: str, errors: list[FieldError]) -> dict[str, _Job]:
    jobs: dict[str, _Job] = {}
    for i, c in _rows(rows, first, len(PAI_COLUMNS), file, errors):
        name, task = c[0], c[1]
        if not name:
            errors.append(FieldError(f"row {i}, column job_name", "is empty", file))
            continue
        job = jobs.setdefault(name, _Job(i))
        count = int(_number(c[2], i, "inst_num", file, errors, whole=True))
        _times(job, c[4], c[5], i, file, errors)
        gpus, rounded = _gpus(_number(c[8], i, "plan_gpu", file, errors) / 100)
        job.rounded += rounded
        cpu = round(_number(c[6], i, "plan_cpu", file, errors) * 10)  # percent of a core -> millicores
        mem = round(_number(c[7], i, "plan_mem", file, errors) * 1e9)
        if count:
            job.tasks.append(TaskSpec(task or "task", count, cpu, mem, gpus))
    return jobs


def _pod_list(header: list[str], rows: list[list[str]], file: str, errors: list[FieldError]) -> dict[str, _Job]:
    col = {name: header.index(name) for name in POD_LIST_COLUMNS}
    jobs: dict[str, _Job] = {}
    shapes: dict[str, dict[tuple[int, int, int], int]] = {}
    for i, c in _rows(rows, 2, len(header), file, errors):
        name = c[col["job_id"]]
        if not name:
            errors.append(FieldError(f"row {i}, column job_id", "is empty", file))
            continue
        job = jobs.setdefault(name, _Job(i))
        _times(job, c[col["creation_time"]], c[col["deletion_time"]], i, file, errors)
        cpu = int(_number(c[col["cpu_milli"]], i, "cpu_milli", file, errors, whole=True))
        mem = int(_number(c[col["memory_mib"]], i, "memory_mib", file, errors, whole=True)) * MIB
        gpus = int(_number(c[col["num_gpu"]], i, "num_gpu", file, errors, whole=True))
        counts = shapes.setdefault(name, {})
        counts[(cpu, mem, gpus)] = counts.get((cpu, mem, gpus), 0) + 1
    for name, job in jobs.items():
        job.tasks = [
            TaskSpec(f"pods-{k}" if len(shapes[name]) > 1 else "pods", n, cpu, mem, gpus)
            for k, ((cpu, mem, gpus), n) in enumerate(shapes.get(name, {}).items())
        ]
    return jobs


def _dns(text: str) -> str:
    return _NOT_DNS.sub("-", text.lower()).strip("-")[:50].strip("-")


def _finish(jobs: dict[str, _Job], limit: int, fmt: str, file: str) -> Reading:
    out = Reading(fmt=fmt)
    kept: list[tuple[float, int, str, _Job]] = []
    for name, job in jobs.items():
        if job.unfinished:
            out.unfinished += 1
        elif job.tasks:
            kept.append((job.start, job.first_row, name, job))
    kept.sort(key=lambda k: (k[0], k[1]))
    kept = kept[:limit]
    if not kept:
        raise InputError.single(
            f"no job of the trace has start and end times for all of its tasks ({out.unfinished} left out)", file=file
        )
    origin = kept[0][0]
    used: set[str] = set()
    for n, (start, _row, name, job) in enumerate(kept):
        base = _dns(name) or "job"
        label = base if base not in used else f"{base}-{n}"
        used.add(label)
        tasks, seen = [], set[str]()
        for t in job.tasks:
            task = _dns(t.name) or "task"
            while task in seen:
                task += "-x"
            seen.add(task)
            tasks.append(TaskSpec(task, t.count, t.cpu_milli, t.memory_bytes, t.gpus))
        out.rounded_tasks += job.rounded
        out.jobs.append(TraceJob(label, round(start - origin, 3), max(1.0, round(job.end - start, 3)), tuple(tasks)))
    return out
