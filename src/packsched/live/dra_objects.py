"""The informers' handler for DRA objects (resource.k8s.io: DeviceClasses, ResourceSlices, ResourceClaims), into
the :class:`~packsched.api.dra.DraObjects` the scheduler's DynamicResources plugin reads, decoded by the manifest
reader (any served version: v1, v1beta2, v1beta1).

Waiting pods go back to the queue on the changes upstream's DynamicResources registers, as its queueing hints say:
every pod when a DeviceClass or ResourceSlice is added or changed, or a ResourceClaim is deallocated or deleted
while allocated (devices freed); only the pods using the claim when it is created or its status changes (allocated,
a pod in or out of ``reservedFor``), and when a pending pod's claims get their names (the resourceclaim controller
wrote ``status.resourceClaimStatuses``). Pods held back at PreEnqueue (a claim not created yet) run it again then.
Other deletions move nothing. The changes of one batch of events move the pods
once (:meth:`DraHandlers.flush`, after the batch): a cluster's claims listed after its pods would otherwise run
every held-back pod's PreEnqueue once per claim.

An allocation PreBind wrote stays in flight (its devices taken for the next pods) until the claim's watch shows it;
a claim's ``allocationTimestamp`` is read onto the scheduler's clock, so that Filter finds an allocation whose device
binding outlived the binding timeout, as upstream's does (PreBind writes the timestamp: live/claims.py); the claim
made in memory for a pod's DRA-backed extended resources gives way to the one created on the server
(annotated ``resource.kubernetes.io/extended-resource-claim``, owned by the pod) once that one shows its
allocation.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

from packsched.api.dra import EXTENDED_CLAIM_ANNOTATION, DraObjects, ResourceClaim, ResourceSlice
from packsched.live.claims import ClaimWriter
from packsched.live.decode import decode_or_log
from packsched.live.port import DELETED, DRA_GROUP, Obj, Resource, key_of
from packsched.live.victims import Stats


class DraHandlers:
    def __init__(
        self,
        dra: DraObjects,
        changed: Callable[[frozenset[str] | None], None],
        stats: Stats,
        writer: ClaimWriter | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``changed``: called by :meth:`flush` after changes that may let waiting pods in (the scheduler's
        ``dra_changed``); ``clock``: the scheduler's (a claim's ``allocationTimestamp`` is read onto it)."""
        self.dra = dra
        self.clock = clock
        self.wall: Callable[[], float] = time.time
        self.changed = changed
        self.stats = stats
        self.writer = writer
        self.pending = False  # a change since the last flush may let any waiting pod in
        self.pending_claims: set[str] = set()  # claims whose change since the last flush may let their pods in
        self._slices: dict[str, ResourceSlice] = {}
        self._touched: list[str] = []  # claims the event in hand changed
        self._handlers: dict[str, Callable[[Resource, str, Obj], None]] = {
            "deviceclasses": self._on_class,
            "resourceslices": self._on_slice,
            "resourceclaims": self._on_claim,
        }

    def handles(self, res: Resource) -> bool:
        return res.group == DRA_GROUP and res.plural in self._handlers

    def handle(self, res: Resource, etype: str, obj: Obj) -> None:
        self._touched = []
        self._handlers[res.plural](res, etype, obj)
        self.dra.changed(*self._touched)  # the claims whose allocation (or entry in flight) may have changed

    def claims_named(self, keys: set[str]) -> None:
        """A pending pod's claims got their names: the pods using them are tried again at the next flush."""
        self.pending_claims |= keys

    def flush(self) -> None:
        """Move the waiting pods once for the changes handled since the last call."""
        if self.pending:
            self.changed(None)
        elif self.pending_claims:
            self.changed(frozenset(self.pending_claims))
        self.pending = False
        self.pending_claims.clear()

    def _on_class(self, res: Resource, etype: str, obj: Obj) -> None:
        name = key_of(obj)
        if etype == DELETED:
            self.dra.classes.pop(name, None)
            return
        out = decode_or_log(res, obj, self.stats)
        if out is None or name not in out.dra.classes:
            return
        self.dra.classes[name] = out.dra.classes[name]
        self.pending = True

    def _on_slice(self, res: Resource, etype: str, obj: Obj) -> None:
        name = key_of(obj)
        if etype == DELETED:
            if self._slices.pop(name, None) is not None:
                self.dra.slices = list(self._slices.values())
            return
        out = decode_or_log(res, obj, self.stats)
        if out is None or not out.dra.slices:
            return
        self._slices[name] = out.dra.slices[0]
        self.dra.slices = list(self._slices.values())  # a new list: an allocator of a cycle keeps its own
        self.pending = True

    def _on_claim(self, res: Resource, etype: str, obj: Obj) -> None:
        key = key_of(obj)
        dra = self.dra
        if self.writer is not None:
            self.writer.observe(etype, key, obj)
        old = dra.claims.get(key)
        self._touched.append(key)
        if etype == DELETED:
            dra.in_flight.pop(key, None)
            if old is not None:
                del dra.claims[key]
                if old.extended and dra.extended_claims.get(old.owner_pod) == key:
                    del dra.extended_claims[old.owner_pod]
                if old.allocation is not None:
                    self.pending = True  # its devices are free
            return
        out = decode_or_log(res, obj, self.stats)
        if out is None or key not in out.dra.claims:
            return
        new = out.dra.claims[key]
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        new.extended = annotations.get(EXTENDED_CLAIM_ANNOTATION) == "true" and bool(new.owner_pod)
        if new.allocation is not None:
            new.allocated_at = self._allocated_at(obj)
        dra.claims[key] = new
        if new.allocation is not None:
            dra.in_flight.pop(key, None)  # the allocation PreBind wrote is seen: no longer in flight
        if new.extended:
            self._extended_seen(new)
        if old is not None and old.allocation is not None and new.allocation is None:
            self.pending = True  # deallocated: its devices are free for any pod
        elif old is None or old.allocation != new.allocation or old.reserved_for != new.reserved_for:
            self.pending_claims.add(key)  # created, or its status changed: its pods may go on

    def _allocated_at(self, obj: Obj) -> float | None:
        """The claim's ``status.allocation.allocationTimestamp`` on the scheduler's clock (what Filter measures
        the binding timeout against), or None when it has none or it is not an RFC 3339 time."""
        text = ((obj.get("status") or {}).get("allocation") or {}).get("allocationTimestamp")
        if not isinstance(text, str) or not text:
            return None
        try:
            at = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        if at.tzinfo is None:
            at = at.replace(tzinfo=dt.UTC)
        return self.clock() - (self.wall() - at.timestamp())

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
            self._touched.append(placeholder)
        dra.extended_claims[claim.owner_pod] = claim.key
