"""The GPU trace as Dynamic Resource Allocation (``packsched replay --as-dra``): every GPU of a node is a device of
one ResourceSlice per node that allows multiple allocations and has a consumable capacity of 1,000 milli-GPU
(``milli``), and every pod that asks for GPUs holds a ResourceClaim instead: a share is one device of which it
consumes its milli-GPU, k whole GPUs are k devices of which it consumes all 1,000 each; accepted GPU models become
a CEL selector on the device's ``model`` attribute.

DynamicResources' allocator then decides which nodes can take the pod and which GPUs it gets, where the GPUShare
replay lets GPUShare decide. Two parts of the GPUShare replay stay, as a bridge, because the GPU policy plugins
(FGD, BestFit, DotProd, Clustering, Packing, Random, FGDPack) and the replay's metrics read them and know nothing
of DRA devices:

- the pod keeps its GPU annotations, as the description of its demand those plugins read (GPUShare must not run,
  so that nothing else takes GPUs: the replay refuses a profile with GPUShare at Filter or Reserve);
- GPUShare's per-GPU table (free milli-GPU per GPU) follows the devices: after each pod the replay writes the GPUs
  its claim got into it (:func:`mirror_allocation`).

The allocator gives a share the first device (in slice order: GPU 0, 1, ...) with enough capacity left; it has no
notion of best fit, nor of a policy plugin's choice of GPU. A GPUShare replay with ``gpuChoice: FirstFit`` makes
the same choice.
"""

from __future__ import annotations

from fractions import Fraction

from packsched.api.dra import (
    CapacityPolicy,
    ClaimSpec,
    Device,
    DeviceClass,
    DeviceRequest,
    DraObjects,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)
from packsched.api.dracel import CelDevice
from packsched.api.gpushare import GPU_COUNT, GPU_MODEL, MILLI, GpuDemand
from packsched.api.objects import Node, Pod, PodResourceClaim
from packsched.backend.gpu.table import DeviceTable
from packsched.framework.podinfo import PodInfo

DRIVER = "gpu.alibabacloud.com"
DEVICE_CLASS = "alibaba-gpu"
CAPACITY = "milli"
MODEL_ATTRIBUTE = "model"
CLAIM = "gpu"  # the pod's entry in spec.resourceClaims
_WHOLE = CapacityPolicy(default=Fraction(MILLI))  # a request without an amount takes the whole GPU


def device_name(index: int) -> str:
    return f"gpu-{index}"


def device_index(name: str) -> int:
    return int(name.rsplit("-", 1)[1])


def trace_dra_objects(nodes: list[Node]) -> DraObjects:
    """The DeviceClass and one ResourceSlice per GPU node (its GPUs as devices ``gpu-0`` ...)."""
    dra = DraObjects()
    dra.classes[DEVICE_CLASS] = DeviceClass(DEVICE_CLASS, (f'device.driver == "{DRIVER}"',))
    for node in nodes:
        count = int(node.allocatable.get(GPU_COUNT, 0))
        if count <= 0:
            continue
        model = node.labels.get(GPU_MODEL, "")
        attrs = ((MODEL_ATTRIBUTE, "string", model),) if model else ()
        devices = tuple(
            Device(
                device_name(i),
                CelDevice(DRIVER, attrs, ((CAPACITY, Fraction(MILLI)),), True),
                policies=((CAPACITY, _WHOLE),),
            )
            for i in range(count)
        )
        dra.slices.append(
            ResourceSlice(
                f"{node.name}-gpus", DRIVER, node.name, 1, 1, node_name=node.name, devices=devices, source="replay"
            )
        )
    return dra


def model_selector(models: tuple[str, ...]) -> tuple[str, ...]:
    if not models:
        return ()
    attr = f'device.attributes["{DRIVER}"].{MODEL_ATTRIBUTE}'
    return (" || ".join(f'{attr} == "{m}"' for m in models),)


def claim_for(pod: Pod, demand: GpuDemand) -> ResourceClaim:
    """The pod's claim: ``count`` devices of which it consumes ``milli`` each."""
    request = ExactRequest(
        DEVICE_CLASS,
        model_selector(demand.models),
        count=demand.count,
        capacity=((CAPACITY, Fraction(demand.milli)),),
    )
    return ResourceClaim(
        f"{pod.name}-{CLAIM}",
        pod.namespace,
        ClaimSpec((DeviceRequest(CLAIM, request),)),
        uid=f"claim-{pod.name}",
        source="packsched replay --as-dra",
    )


def as_dra_pod(pod: Pod, demand: GpuDemand, dra: DraObjects) -> Pod:
    """The pod with a claim for its GPUs (added to ``dra``); pods that want no GPU are returned as they are."""
    if not demand.wants_gpu:
        return pod
    claim = claim_for(pod, demand)
    dra.claims[claim.key] = claim
    dra.changed(claim.key)
    pod.resource_claims = (PodResourceClaim(CLAIM, claim_name=claim.name),)
    return pod


def mirror_allocation(dra: DraObjects, table: DeviceTable, info: PodInfo, col: int, demand: GpuDemand) -> None:
    """Write the GPUs the pod's claim got into GPUShare's per-GPU table (what the policy plugins and the metrics
    read)."""
    claim = dra.claims.get(f"{info.pod.namespace}/{info.pod.name}-{CLAIM}")
    if claim is None or claim.allocation is None:
        raise RuntimeError(f"pod {info.key} was scheduled without an allocated claim")
    ids = tuple(device_index(r.device) for r in claim.allocation.results)
    table.assign(info, col, demand, ids)
