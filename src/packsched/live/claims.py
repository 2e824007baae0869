"""What DynamicResources writes on the API server in live mode, as kube-scheduler's plugin does (its
:class:`~packsched.api.dra.ClaimApi`):

- PreBind, per claim not reserved for the pod yet: the allocation Reserve found (when the claim had none) into
  ``status.allocation``, after the ``resource.kubernetes.io/delete-protection`` finalizer is added with a plain
  update, and the pod into ``status.reservedFor``: one status update with the claim's resourceVersion. With
  device binding conditions on (DRADeviceBindingConditions and DRAResourceClaimDeviceStatus), an allocation
  without ``allocationTimestamp`` gets one (the wall clock's, to the second), as upstream's PreBind writes it:
  Filter measures the binding timeout from it (live/dra_objects.py). A conflict
  (409) reads the claim again and tries again, five tries in all (client-go's ``retry.DefaultRetry``); a claim
  deleted, or allocated by someone else meanwhile, fails the write.
- the claim for a pod's DRA-backed extended resources: created (``generateName`` ``<pod>-extended-resources-``,
  owned by the pod, annotated ``resource.kubernetes.io/extended-resource-claim: "true"``), then allocated as
  above, then named in the pod's ``status.extendedResourceClaimStatus``.
- Unreserve: the pod leaves ``reservedFor`` (a strategic-merge patch deleting its entry by uid); the extended-resource
  claim created is deleted. PostFilter: a claim no pod uses loses its allocation.

Every write runs on the thread that asks (PreBind on a binding worker). The claims are written as read: the
writer keeps the last object each claim's watch delivered (:meth:`ClaimWriter.observe`), so that the first try
needs no read.
"""

from __future__ import annotations

import copy
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable

from packsched.api.dra import EXTENDED_CLAIM_ANNOTATION, Allocation, ClaimSpec, ClaimWriteError, ResourceClaim
from packsched.api.objects import NodeSelectorTerm, Pod, Requirement, Toleration
from packsched.backend.dra.capacity import quantity_text
from packsched.live.port import DELETED, PODS, ApiError, ApiPort, Obj, Resource
from packsched.live.recorder import rfc3339

LOG = logging.getLogger("packsched.live")

FINALIZER = "resource.kubernetes.io/delete-protection"  # resourceapi.Finalizer
CONFLICT_TRIES = 5  # retry.DefaultRetry: 5 steps
CONFLICT_PAUSE_S = 0.01  # retry.DefaultRetry: 10 ms


def _requirement(req: Requirement) -> Obj:
    out: Obj = {"key": req.key, "operator": req.operator}
    if req.values:
        out["values"] = list(req.values)
    return out


def _toleration(t: Toleration) -> Obj:
    out: Obj = {"operator": t.operator}
    for name, value in (("key", t.key), ("value", t.value), ("effect", t.effect)):
        if value:
            out[name] = value
    if t.seconds is not None:
        out["tolerationSeconds"] = t.seconds
    return out


def _term(term: NodeSelectorTerm) -> Obj:
    out: Obj = {}
    if term.match_expressions:
        out["matchExpressions"] = [_requirement(r) for r in term.match_expressions]
    if term.match_fields:
        out["matchFields"] = [_requirement(r) for r in term.match_fields]
    return out


def allocation_json(alloc: Allocation) -> Obj:
    """``status.allocation`` as resource.k8s.io writes it."""
    results: list[Obj] = []
    for r in alloc.results:
        item: Obj = {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device}
        if r.admin_access is not None:
            item["adminAccess"] = r.admin_access
        if r.share_id is not None:
            item["shareID"] = r.share_id
        if r.consumed is not None:
            item["consumedCapacity"] = {name: quantity_text(amount) for name, amount in r.consumed}
        if r.binding_conditions:  # DRADeviceBindingConditions: the device's, which PreBind then waits for
            item["bindingConditions"] = list(r.binding_conditions)
            item["bindingFailureConditions"] = list(r.binding_failure_conditions)
        if r.tolerations:  # the request's, which the device taint eviction controller reads here
            item["tolerations"] = [_toleration(t) for t in r.tolerations]
        results.append(item)
    out: Obj = {"devices": {"results": results}}
    if alloc.node_selector is not None:
        out["nodeSelector"] = {"nodeSelectorTerms": [_term(t) for t in alloc.node_selector]}
    return out


def claim_spec_json(spec: ClaimSpec) -> Obj:
    """The spec of a claim the scheduler makes (its requests are ``exactly`` requests of a class and a count)."""
    requests: list[Obj] = []
    for request in spec.requests:
        exact = request.exactly
        if exact is None:
            raise ClaimWriteError(f"request {request.name}: only exact requests are written")
        requests.append(
            {
                "name": request.name,
                "exactly": {
                    "deviceClassName": exact.device_class,
                    "allocationMode": exact.mode,
                    "count": exact.count,
                },
            }
        )
    return {"devices": {"requests": requests}}


class ClaimWriter:
    def __init__(self, port: ApiPort, resource: Callable[[], Resource]) -> None:
        """``resource``: the ResourceClaim resource at the version the cluster serves (its informer's)."""
        self.port = port
        self.resource = resource
        self._lock = threading.Lock()
        self._objects: dict[str, Obj] = {}  # claim key -> the object its watch last delivered
        self.wall: Callable[[], float] = time.time  # the wall clock allocationTimestamp is written in
        self.writes = 0  # status writes that went through
        self.conflicts = 0  # status writes answered 409 (and tried again)

    def observe(self, etype: str, key: str, obj: Obj) -> None:
        """The claim's watch delivered ``obj`` (called by the claims' informer handler)."""
        with self._lock:
            if etype == DELETED:
                self._objects.pop(key, None)
            else:
                self._objects[key] = obj

    def _cached(self, claim: ResourceClaim) -> Obj | None:
        with self._lock:
            obj = self._objects.get(claim.key)
        return copy.deepcopy(obj) if obj is not None else None

    def _get(self, claim: ResourceClaim) -> Obj:
        try:
            return self.port.get(self.resource(), claim.namespace, claim.name)
        except ApiError as exc:
            raise ClaimWriteError(f"get updated claim {claim.key} after conflict: {exc}") from None

    # -- PreBind ------------------------------------------------------------------------------------------

    def reserve(self, claim: ResourceClaim, allocation: Allocation | None, pod: Pod, stamp: bool = False) -> None:
        res = self.resource()
        obj = self._cached(claim)
        for attempt in range(CONFLICT_TRIES):
            if obj is None or attempt > 0:
                obj = self._get(claim)
            try:
                self._reserve_once(res, claim, obj, allocation, pod, stamp)
                with self._lock:
                    self.writes += 1
                return
            except ApiError as exc:
                if not exc.conflict:
                    what = "add allocation and reservation to" if allocation is not None else "add reservation to"
                    raise ClaimWriteError(f"{what} claim {claim.key}: {exc}") from None
                with self._lock:
                    self.conflicts += 1
                LOG.debug("claim write conflict; reading it again", extra={"claim": claim.key, "try": attempt + 1})
                time.sleep(CONFLICT_PAUSE_S)
        raise ClaimWriteError(f"claim {claim.key}: still in conflict after {CONFLICT_TRIES} tries")

    def _reserve_once(
        self, res: Resource, claim: ResourceClaim, obj: Obj, allocation: Allocation | None, pod: Pod, stamp: bool
    ) -> None:
        meta = obj.setdefault("metadata", {})
        if meta.get("deletionTimestamp"):
            raise ClaimWriteError(f"claim {claim.key} got deleted in the meantime")
        if allocation is not None:
            if (obj.get("status") or {}).get("allocation"):
                raise ClaimWriteError(f"claim {claim.key} got allocated elsewhere in the meantime")
            finalizers = meta.get("finalizers") or []
            if FINALIZER not in finalizers:
                meta["finalizers"] = [*finalizers, FINALIZER]
                obj = self.port.update(res, claim.namespace, claim.name, obj)
        status = obj.get("status") or {}
        obj["status"] = status
        if allocation is not None:
            status["allocation"] = allocation_json(allocation)
        status["reservedFor"] = [
            *(status.get("reservedFor") or []),
            {"resource": "pods", "name": pod.name, "uid": pod.uid},
        ]
        if stamp:  # as upstream, with DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on (1.35+)
            written = status.get("allocation")
            if not written:
                raise ClaimWriteError(f"claim {claim.key} got deallocated elsewhere in the meantime")
            if not written.get("allocationTimestamp"):
                written["allocationTimestamp"] = rfc3339(dt.datetime.fromtimestamp(self.wall(), dt.UTC))
        self.port.update_status(res, claim.namespace, claim.name, obj)

    def create_extended(self, claim: ResourceClaim, pod: Pod) -> ResourceClaim:
        body: Obj = {
            "apiVersion": self.resource().api_version,
            "kind": "ResourceClaim",
            "metadata": {
                "generateName": f"{pod.name}-extended-resources-",
                "namespace": pod.namespace,
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid, "controller": True}
                ],
                "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
            },
            "spec": claim_spec_json(claim.spec),
        }
        try:
            made = self.port.create(self.resource(), pod.namespace, body)
        except ApiError as exc:
            raise ClaimWriteError(f"create claim for extended resources {claim.key}: {exc}") from None
        meta = made.get("metadata") or {}
        out = ResourceClaim(
            str(meta.get("name", "")),
            pod.namespace,
            claim.spec,
            uid=str(meta.get("uid", "")),
            owner_pod=pod.key,
            extended=True,
            source=claim.source,
        )
        self.observe("ADDED", out.key, made)
        return out

    def record_extended(self, pod: Pod, claim: ResourceClaim, mappings: list[tuple[str, str, str]]) -> None:
        if not mappings:
            raise ClaimWriteError(
                f"nil or empty request mappings, no update of pod {pod.key} ExtendedResourceClaimStatus"
            )
        status: Obj = {
            "extendedResourceClaimStatus": {
                "requestMappings": [{"containerName": c, "resourceName": r, "requestName": q} for c, r, q in mappings],
                "resourceClaimName": claim.name,
            }
        }
        try:
            self.port.patch_status(PODS, pod.namespace, pod.name, {"status": status})
        except ApiError as exc:
            raise ClaimWriteError(f"update pod {pod.key} ExtendedResourceClaimStatus: {exc}") from None

    # -- Unreserve, PostFilter ----------------------------------------------------------------------------

    def unreserve(self, claim: ResourceClaim, pod: Pod) -> None:
        patch: Obj = {"metadata": {"uid": claim.uid}, "status": {"reservedFor": [{"$patch": "delete", "uid": pod.uid}]}}
        try:
            self.port.patch_status(self.resource(), claim.namespace, claim.name, patch)
        except ApiError as exc:
            LOG.warning("unreserve failed", extra={"claim": claim.key, "pod": pod.key, "error": str(exc)})
            raise ClaimWriteError(f"unreserve claim {claim.key}: {exc}") from None

    def delete(self, claim: ResourceClaim) -> None:
        """Delete the claim, its finalizer removed first (as upstream deleteClaim)."""
        res = self.resource()
        try:
            for attempt in range(CONFLICT_TRIES):
                obj = self._cached(claim) if attempt == 0 else None
                if obj is None:
                    obj = self.port.get(res, claim.namespace, claim.name)
                meta = obj.setdefault("metadata", {})
                finalizers = meta.get("finalizers") or []
                if FINALIZER in finalizers:
                    meta["finalizers"] = [f for f in finalizers if f != FINALIZER]
                    try:
                        self.port.update(res, claim.namespace, claim.name, obj)
                    except ApiError as exc:
                        if exc.conflict:
                            continue
                        raise
                self.port.delete(res, claim.namespace, claim.name, claim.uid)
                return
        except ApiError as exc:
            if exc.not_found:
                return
            LOG.warning("claim not deleted", extra={"claim": claim.key, "error": str(exc)})
            raise ClaimWriteError(f"delete claim {claim.key}: {exc}") from None
        raise ClaimWriteError(f"delete claim {claim.key}: still in conflict after {CONFLICT_TRIES} tries")

    def deallocate(self, claim: ResourceClaim) -> None:
        res = self.resource()
        obj = self._cached(claim)
        for attempt in range(CONFLICT_TRIES):
            if obj is None or attempt > 0:
                obj = self._get(claim)
            status = obj.get("status") or {}
            status["allocation"] = None
            status["reservedFor"] = None
            status["devices"] = None  # upstream clears the devices' status with the allocation
            obj["status"] = {k: v for k, v in status.items() if v is not None}
            try:
                self.port.update_status(res, claim.namespace, claim.name, obj)
                return
            except ApiError as exc:
                if not exc.conflict:
                    raise ClaimWriteError(f"deallocate claim {claim.key}: {exc}") from None
                time.sleep(CONFLICT_PAUSE_S)
        raise ClaimWriteError(f"deallocate claim {claim.key}: still in conflict after {CONFLICT_TRIES} tries")
