"""Resource names and resource lists as exact integers.

A resource list maps a name to an integer amount in the unit the scheduler uses: cpu in millicores, every
other resource rounded up to a whole number (bytes for memory and storage, a count for devices and pods).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from packsched.api.errors import ErrorList
from packsched.api.quantity import MAX_INT64, QuantityError, milli_value, parse_quantity, value

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
STORAGE = "storage"

# The defaults kube-scheduler substitutes, per container, when scoring a pod that leaves cpu or memory unset.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_NATIVE_PREFIX = "kubernetes.io/"
_HUGEPAGES_PREFIX = "hugepages-"
_ATTACHABLE_PREFIX = "attachable-volumes-"

ResourceList = dict[str, int]


def is_native_resource(name: str) -> bool:
    """Unprefixed names and names under kubernetes.io/ belong to Kubernetes itself."""
    return "/" not in name or is_prefixed_native(name)


def is_prefixed_native(name: str) -> bool:
    """Upstream checks for the substring, so ``foo.kubernetes.io/bar`` is native too."""
    return _NATIVE_PREFIX in name


@lru_cache(maxsize=4096)  # asked for the same few names in every scheduling cycle
def is_extended_resource(name: str) -> bool:
    """A fully qualified name outside kubernetes.io/ (``nvidia.com/gpu``), and not a requests. prefix."""
    return not is_native_resource(name) and not name.startswith("requests.")


def is_hugepages(name: str) -> bool:
    return name.startswith(_HUGEPAGES_PREFIX)


@lru_cache(maxsize=4096)  # asked for the same few names in every scheduling cycle
def is_scalar_resource(name: str) -> bool:
    """Every resource the scheduler tracks besides cpu, memory, ephemeral-storage and pods."""
    return (
        is_extended_resource(name)
        or is_hugepages(name)
        or name.startswith(_ATTACHABLE_PREFIX)
        or is_prefixed_native(name)
    )


def is_gpu(name: str) -> bool:
    """The GPUs packsched's reports count: every extended resource named ``*/gpu`` (``nvidia.com/gpu``,
    ``amd.com/gpu``, ...)."""
    return name.endswith("/gpu")


def gpu_count(requests: Mapping[str, int]) -> int:
    """The GPUs among these amounts (:func:`is_gpu`)."""
    return sum(v for k, v in requests.items() if is_gpu(k))


def is_scored_resource(name: str) -> bool:
    """Names a resource-scoring strategy can look at; anything else (``pods``, typos) is silently skipped."""
    return name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar_resource(name)


def amount_of(name: str, raw: object) -> int:
    """One quantity in the scheduler's integer unit for ``name``. Raises QuantityError."""
    if type(raw) is str:  # the common case: a cluster's pods repeat a handful of quantity strings
        return _text_amount(name == CPU, raw)
    return _amount(name == CPU, raw)


@lru_cache(maxsize=4096)
def _text_amount(milli: bool, raw: str) -> int:
    """:func:`_amount` of a quantity string, remembered (a refused one raises each time: errors are not kept)."""
    return _amount(milli, raw)


def _amount(milli: bool, raw: object) -> int:
    q = parse_quantity(raw)
    if q < 0:  # checked before rounding up, which would turn "-0.1m" into 0 (upstream rejects any negative)
        raise QuantityError(f"must be greater than or equal to 0, got {raw!r}")
    amount = milli_value(q) if milli else value(q)
    if amount > MAX_INT64:
        raise QuantityError(f"quantity {raw!r} is too large (the limit is {MAX_INT64} in the base unit)")
    return amount


def parse_resource_list(raw: object, path: str, errors: ErrorList) -> ResourceList:
    """Decode ``{name: quantity}``; every bad entry is reported at ``path.name``."""
    out: ResourceList = {}
    if raw is None:
        return out
    if not isinstance(raw, Mapping):
        errors.add(path, f"must be a map of resource name to quantity, got {type(raw).__name__}")
        return out
    for key, item in raw.items():
        if not isinstance(key, str) or not key:
            errors.add(f"{path}", f"resource names must be non-empty strings, got {key!r}")
            continue
        try:
            out[key] = amount_of(key, item)
        except QuantityError as exc:
            errors.add(f"{path}.{key}", str(exc))
    return out


def add_into(total: ResourceList, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        total[name] = total.get(name, 0) + amount


def max_into(total: ResourceList, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        if amount > total.get(name, 0):
            total[name] = amount
