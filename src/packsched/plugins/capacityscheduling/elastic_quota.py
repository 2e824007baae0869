"""ElasticQuota arithmetic as scheduler-plugins' CapacityScheduling does it (``../shared/spec/capacity-scheduling.md``
§1-§4): quota records built from ElasticQuota specs, pod requests as the plugin counts them, and the strict
"over max" / "over min" comparisons.

A resource vector is a ``dict`` from resource name to an integer (cpu in millicores, everything else in units).
The first-class dimensions (cpu, memory, ephemeral-storage) are always compared; a scalar dimension (an extended
resource, hugepages, ...) is compared only where the rules below say so. Resources that are neither (an
unprefixed unknown name) are ignored, as upstream ignores them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from packsched.api.objects import ElasticQuota
from packsched.api.quantity import MAX_INT64

# The quota arithmetic the simulator and the live adapter share lives in api; re-exported for the plugin's users.
from packsched.api.quota import FIRST_CLASS as FIRST_CLASS
from packsched.api.quota import Res as Res
from packsched.api.quota import add_to as add_to
from packsched.api.quota import counted as counted
from packsched.api.quota import max_from_spec as max_from_spec
from packsched.api.quota import min_from_spec as min_from_spec
from packsched.api.quota import pod_quota_request as pod_quota_request
from packsched.api.quota import status_used as status_used


def _over(x: Mapping[str, int], y: Mapping[str, int], scalars: Iterable[str], missing_scalar: int) -> bool:
    """Any first-class dimension with x > y (missing = 0), or any of ``scalars`` with x > y (missing in y =
    ``missing_scalar``)."""
    for name in FIRST_CLASS:
        if x.get(name, 0) > y.get(name, 0):
            return True
    return any(name not in FIRST_CLASS and x.get(name, 0) > y.get(name, missing_scalar) for name in scalars)


def _over_with(used: Mapping[str, int], request: Mapping[str, int], bound: Mapping[str, int], missing: int) -> bool:
    """``_over(used + request, bound, request, missing)`` without building the sum (this runs for every
    reprieve step of every node in preemption's dry run)."""
    for name in FIRST_CLASS:
        if used.get(name, 0) + request.get(name, 0) > bound.get(name, 0):
            return True
    for name, amount in request.items():
        if name not in FIRST_CLASS and used.get(name, 0) + amount > bound.get(name, missing):
            return True
    return False


@dataclass
class QuotaInfo:
    """One namespace's quota record: ``min`` and ``max`` (``None``: nil, only when built directly), what its
    pods use, and the pods already counted in ``used``.

    The counted pods are a shared base set plus a private overlay (``_added`` / ``_removed``), so that the
    per-node copies preemption's dry run makes are cheap; :meth:`snapshot` makes a fully private copy."""

    namespace: str
    min: Res | None
    max: Res | None
    used: Res = field(default_factory=dict)
    _base: set[str] = field(default_factory=set)
    _added: set[str] = field(default_factory=set)
    _removed: set[str] = field(default_factory=set)

    @classmethod
    def from_quota(cls, quota: ElasticQuota) -> QuotaInfo:
        return cls(quota.namespace, min_from_spec(quota.min), max_from_spec(quota.max), {})

    # -- counted pods ------------------------------------------------------------------------------------

    def tracks(self, uid: str) -> bool:
        return uid in self._added or (uid in self._base and uid not in self._removed)

    @property
    def tracked(self) -> set[str]:
        return (self._base - self._removed) | self._added

    def add_pod_if_absent(self, uid: str, request: Mapping[str, int]) -> None:
        if not self.tracks(uid):
            self.add_untracked(uid, request)

    def delete_pod_if_present(self, uid: str, request: Mapping[str, int]) -> None:
        if self.tracks(uid):
            self.delete_tracked(uid, request)

    def add_untracked(self, uid: str, request: Mapping[str, int]) -> None:
        """Count a pod this record does not count yet (the caller checked)."""
        if uid in self._removed:
            self._removed.discard(uid)
        elif uid not in self._base:
            self._added.add(uid)
        add_to(self.used, request)

    def delete_tracked(self, uid: str, request: Mapping[str, int]) -> None:
        """Stop counting a pod this record counts (the caller checked)."""
        if uid in self._added:
            self._added.discard(uid)
        else:
            self._removed.add(uid)
        add_to(self.used, request, -1)

    # -- copies ------------------------------------------------------------------------------------------

    def snapshot(self) -> QuotaInfo:
        """A deep copy (what PreFilter takes of the live record)."""
        return QuotaInfo(
            self.namespace,
            dict(self.min) if self.min is not None else None,
            dict(self.max) if self.max is not None else None,
            dict(self.used),
            self.tracked,
        )

    def clone(self) -> QuotaInfo:
        """A copy that shares the (never mutated) base set of a snapshot."""
        return QuotaInfo(
            self.namespace,
            self.min,
            self.max,
            dict(self.used),
            self._base,
            set(self._added),
            set(self._removed),
        )

    # -- comparisons (all strict: equality passes) ---------------------------------------------------------

    def over_max_with(self, request: Mapping[str, int]) -> bool:
        """used + request > max in any dimension; scalar dimensions only for names in the request, a scalar
        that ``max`` does not list being unbounded. A nil max is never exceeded."""
        if self.max is None:
            return False
        return _over_with(self.used, request, self.max, MAX_INT64)

    def over_min_with(self, request: Mapping[str, int]) -> bool:
        """used + request > min in any dimension; scalars from the request, missing in min = 0. A nil min is
        always exceeded."""
        if self.min is None:
            return True
        return _over_with(self.used, request, self.min, 0)

    def over_min(self, used: Mapping[str, int] | None = None) -> bool:
        """used > min in any dimension; scalars from ``used``, missing in min = 0. A nil min: always over.
        ``used``: judge that usage against this record's min instead of its own."""
        if self.min is None:
            return True
        if used is None:
            used = self.used
        return _over(used, self.min, used, 0)


class QuotaInfos(dict[str, QuotaInfo]):
    """Quota records by namespace.

    :meth:`clone` is copy-on-write: the copy shares every record with the original until :meth:`count` or
    :meth:`uncount` changes one, which then gets a private copy (preemption's dry run clones the cycle's quotas
    once per node and changes a few records at most). Once cloned, neither map may change a shared record in place:
    change records through ``count`` / ``uncount``. A clone also keeps Σused and Σmin up to date, so that the
    Σmin check does not add up every record at each reprieve step."""

    _shared: set[str] | None = None  # copy-on-write: namespaces whose record may be shared with another map
    _sums: tuple[Res, Res] | None = None  # (Σused, Σmin), kept while copy-on-write

    def snapshot(self) -> QuotaInfos:
        return QuotaInfos({ns: info.snapshot() for ns, info in self.items()})

    def clone(self) -> QuotaInfos:
        out = QuotaInfos(self)
        sums = self.sums()
        self._shared = set(self)  # from now on both share every record
        self._sums = sums
        out._shared = set(self)
        out._sums = (dict(sums[0]), sums[1])
        return out

    def _own(self, ns: str, info: QuotaInfo) -> QuotaInfo:
        """``info`` (this map's record of ``ns``), copied first if another map may share it."""
        shared = self._shared
        if shared is not None and ns in shared:
            info = self[ns] = info.clone()
            shared.discard(ns)
        return info

    def count(self, ns: str, uid: str, request: Res) -> None:
        """The AddPod extension: count the pod in if its namespace has a record that does not count it."""
        info = self.get(ns)
        if info is None or info.tracks(uid):
            return
        self._own(ns, info).add_untracked(uid, request)
        if self._sums is not None:
            add_to(self._sums[0], request)

    def uncount(self, ns: str, uid: str, request: Res) -> None:
        """The RemovePod extension: count the pod out if its namespace's record counts it."""
        info = self.get(ns)
        if info is None or not info.tracks(uid):
            return
        self._own(ns, info).delete_tracked(uid, request)
        if self._sums is not None:
            add_to(self._sums[0], request, -1)

    def sums(self) -> tuple[Res, Res]:
        """Σused and Σmin of every record."""
        if self._sums is not None:
            return self._sums
        used: Res = {}
        minimum: Res = {}
        for info in self.values():
            add_to(used, info.used)
            if info.min is not None:
                add_to(minimum, info.min)
        return used, minimum

    def aggregated_over_min_with(self, request: Mapping[str, int]) -> bool:
        """Σused of every record + request > Σmin of every record, in any dimension (scalars from the summed
        usage, missing in the summed min = 0)."""
        used, minimum = self.sums()
        return aggregated_over(used, minimum, request)


def aggregated_over(used_sum: Mapping[str, int], min_sum: Mapping[str, int], request: Mapping[str, int]) -> bool:
    """``aggregated_over_min_with`` from the sums of the records' usage and mins."""
    total = dict(used_sum)
    add_to(total, request)
    return _over(total, min_sum, total, 0)
