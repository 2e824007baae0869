"""Shared GPUs as Kubernetes objects carry them (the GPU-share convention of the Alibaba GPU trace).

A node announces its GPUs as extended resources (``alibabacloud.com/gpu-count`` GPUs,
``alibabacloud.com/gpu-milli`` = count x 1000) and its GPU model as the label ``alibabacloud.com/gpu-card-model``.
A pod asks for GPUs in *annotations*, not in ``resources``: ``alibabacloud.com/gpu-milli`` is the share of each
GPU in thousandths (1-1000), ``alibabacloud.com/gpu-count`` the number of GPUs, and
``alibabacloud.com/gpu-card-model`` the accepted models separated by ``|``. When the pod is reserved the device
plugin writes the GPUs it picked into ``alibabacloud.com/gpu-index`` (``"3"`` or ``"0-1-2-3"``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packsched.api.errors import FieldError
from packsched.api.objects import Node, Pod

PREFIX = "alibabacloud.com/"
GPU_MILLI = PREFIX + "gpu-milli"
GPU_COUNT = PREFIX + "gpu-count"
GPU_MODEL = PREFIX + "gpu-card-model"
GPU_INDEX = PREFIX + "gpu-index"
MILLI = 1000  # one whole GPU
MAX_GPUS_PER_POD = 64


@dataclass(frozen=True)
class GpuDemand:
    """What a pod asks of the GPUs of one node: ``count`` GPUs with ``milli`` thousandths free on each."""

    milli: int = 0
    count: int = 0
    models: tuple[str, ...] = ()  # accepted GPU models; empty: any

    @property
    def wants_gpu(self) -> bool:
        return self.count > 0 and self.milli > 0

    @property
    def sharing(self) -> bool:
        """Part of one GPU (the rest of that GPU can go to other pods)."""
        return self.count == 1 and 0 < self.milli < MILLI

    @property
    def total_milli(self) -> int:
        return self.count * self.milli if self.wants_gpu else 0


NO_GPU = GpuDemand()


class GpuAnnotationError(ValueError):
    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(f"annotation {key}: {message}")


def _int_annotation(annotations: dict[str, str], key: str, low: int, high: int) -> int:
    raw = annotations.get(key)
    if raw is None:
        return 0
    text = raw.strip()
    if not text.isdigit():
        raise GpuAnnotationError(key, f"must be a whole number from {low} to {high}, got {raw!r}")
    val = int(text)
    if not low <= val <= high:
        raise GpuAnnotationError(key, f"must be a whole number from {low} to {high}, got {raw!r}")
    return val


def parse_models(raw: str) -> tuple[str, ...]:
    """``V100M16|V100M32|V100M32`` -> ("V100M16", "V100M32"): repeats and blanks dropped, order kept."""
    return tuple(dict.fromkeys(m.strip() for m in raw.split("|") if m.strip()))


def pod_gpu_demand(pod: Pod) -> GpuDemand:
    """The pod's GPU demand from its annotations; raises :class:`GpuAnnotationError` on a malformed value."""
    ann = pod.annotations
    if GPU_MILLI not in ann and GPU_COUNT not in ann:
        return NO_GPU
    milli = _int_annotation(ann, GPU_MILLI, 0, MILLI)
    count = _int_annotation(ann, GPU_COUNT, 0, MAX_GPUS_PER_POD)
    if GPU_MILLI in ann and GPU_COUNT not in ann and milli > 0:
        count = 1  # a share without a count means one GPU
    if count > 1 and milli not in (0, MILLI):
        raise GpuAnnotationError(GPU_MILLI, f"a pod asking for {count} GPUs must take whole GPUs (1000), got {milli}")
    if count > 0 and GPU_MILLI not in ann:
        milli = MILLI  # a count without a share means whole GPUs
    if count == 0 or milli == 0:
        return NO_GPU
    return GpuDemand(milli, count, parse_models(ann.get(GPU_MODEL, "")))


def gpu_annotation_errors(pods: Iterable[Pod]) -> list[FieldError]:
    """One error per pod whose GPU annotations cannot be read, naming its file and annotation."""
    out: list[FieldError] = []
    for pod in pods:
        try:
            pod_gpu_demand(pod)
        except GpuAnnotationError as exc:
            msg = str(exc).split(": ", 1)[1]
            out.append(FieldError(f"{pod.key}: metadata.annotations[{exc.key}]", msg, pod.source))
    return out


def node_gpus(node: Node) -> tuple[int, str]:
    """How many GPUs the node has, and their model ("" when the node does not say)."""
    return int(node.allocatable.get(GPU_COUNT, 0)), node.labels.get(GPU_MODEL, "")


def parse_gpu_index(raw: str) -> tuple[int, ...] | None:
    """``"0-1-2"`` -> (0, 1, 2); None when the text is not a list of GPU indexes."""
    parts = raw.strip().split("-")
    if not parts or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def format_gpu_index(ids: Iterable[int]) -> str:
    return "-".join(str(i) for i in ids)
