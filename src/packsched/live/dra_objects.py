"""The informers' handler for DRA objects (resource.k8s.io: DeviceClasses, ResourceSlices, ResourceClaims), into
the :class:`~packsched.api.dra.DraObjects` the scheduler's DynamicResources plugin reads, decoded by the manifest
reader (any served version: v1, v1beta2, v1beta1).

Waiting pods go back to the queue on the changes upstream's DynamicResources registers: a DeviceClass or
ResourceSlice added or changed; a ResourceClaim created, allocated or deallocated, or one whose ``reservedFor``
shrank (a pod left a shared claim). Pods held back at PreEnqueue (a claim not created yet) run it again then.
Deletions move nothing (a claim is deallocated before it goes). The changes of one batch of events move the pods
once (:meth:`DraHandlers.flush`, after the batch): a cluster's claims listed after its pods would otherwise run
every held-back pod's PreEnqueue once per claim.

An allocation PreBind wrote stays in flight (its devices taken for the next pods) until the claim's watch shows it;
the claim made in memory for a pod's DRA-backed extended resources gives way to the one created on the server
(annotated ``resource.kubernetes.io/extended-resource-claim``, owned by the pod) once that one shows its
allocation.
"""

from __future__ import annotations

from collections.abc import Callable

from packsched.api.dra import DraObjects, ResourceClaim, ResourceSlice
from packsched.live.claims import EXTENDED_CLAIM_ANNOTATION, ClaimWriter
from packsched.live.decode import decode_or_log
from packsched.live.port import DELETED, DRA_GROUP, Obj, Resource, key_of
from packsched.live.victims import Stats


class DraHandlers:
    def __init__(
        self, dra: DraObjects, changed: Callable[[], None], stats: Stats, writer: ClaimWriter | None = None
    ) -> None:
        """``changed``: called by :meth:`flush` after changes that may let waiting pods in (the scheduler's
        ``dra_changed``)."""
        self.dra = dra
        self.changed = changed
        self.pending = False  # a change since the last flush may let waiting pods in
        self.stats = stats
        self.writer = writer
        self._slices: dict[str, ResourceSlice] = {}
        self._handlers: dict[str, Callable[[Resource, str, Obj], bool]] = {
            "deviceclasses": self._on_class,
            "resourceslices": self._on_slice,
            "resourceclaims": self._on_claim,
        }

    def handles(self, res: Resource) -> bool:
        return res.group == DRA_GROUP and res.plural in self._handlers

    def handle(self, res: Resource, etype: str, obj: Obj) -> None:
        if self._handlers[res.plural](res, etype, obj):
            self.pending = True
        self.dra.generation += 1

    def flush(self) -> None:
        """Move the waiting pods once for the changes handled since the last call."""
        if self.pending:
            self.pending = False
            self.changed()

    def _on_class(self, res: Resource, etype: str, obj: Obj) -> bool:
        name = key_of(obj)
        if etype == DELETED:
            self.dra.classes.pop(name, None)
            return False
        out = decode_or_log(res, obj, self.stats)
        if out is None or name not in out.dra.classes:
            return False
        self.dra.classes[name] = out.dra.classes[name]
        return True

    def _on_slice(self, res: Resource, etype: str, obj: Obj) -> bool:
        name = key_of(obj)
        if etype == DELETED:
            if self._slices.pop(name, None) is not None:
                self.dra.slices = list(self._slices.values())
            return False
        out = decode_or_log(res, obj, self.stats)
        if out is None or not out.dra.slices:
            return False
        self._slices[name] = out.dra.slices[0]
        self.dra.slices = list(self._slices.values())  # a new list: an allocator of a cycle keeps its own
        return True

    def _on_claim(self, res: Resource, etype: str, obj: Obj) -> bool:
        key = key_of(obj)
        dra = self.dra
        if self.writer is not None:
            self.writer.observe(etype, key, obj)
        old = dra.claims.get(key)
        if etype == DELETED:
            dra.in_flight.pop(key, None)
            if old is not None:
                del dra.claims[key]
                if old.extended and dra.extended_claims.get(old.owner_pod) == key:
                    del dra.extended_claims[old.owner_pod]
            return False
        out = decode_or_log(res, obj, self.stats)
        if out is None or key not in out.dra.claims:
            return False
        new = out.dra.claims[key]
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        new.extended = annotations.get(EXTENDED_CLAIM_ANNOTATION) == "true" and bool(new.owner_pod)
        dra.claims[key] = new
        if new.allocation is not None:
            dra.in_flight.pop(key, None)  # the allocation PreBind wrote is seen: no longer in flight
        if new.extended:
            self._extended_seen(new)
        if old is None:
            return True
        freed = len(new.reserved_for) < len(old.reserved_for)
        return (old.allocation is None) != (new.allocation is None) or freed

    def _extended_seen(self, claim: ResourceClaim) -> None:
        """The server's claim for a pod's extended resources: it replaces the one made in memory at Reserve once its
        allocation shows (until then that one's devices stay in flight)."""
        dra = self.dra
        placeholder = dra.extended_claims.get(claim.owner_pod)
        if placeholder is not None and placeholder != claim.key:
            if claim.allocation is None:
                return
            made = dra.claims.get(placeholder)
            if made is not None and not made.uid:
                del dra.claims[placeholder]
            dra.in_flight.pop(placeholder, None)
        dra.extended_claims[claim.owner_pod] = claim.key
