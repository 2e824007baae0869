"""Upstream's DynamicResources plugin table (``TestPlugin`` in dynamicresources_test.go, v1.37.2), ported as data:
per case the cluster objects, the pod, and what each extension point answers (PreEnqueue, PreFilter, Filter per
node, PostFilter, Reserve, PreBind, Unreserve) with the claims' state after it.

The driver follows upstream's: PreEnqueue; PreFilter; Filter on each node in order (an Error ends the case); with
no node left PostFilter, else Reserve on the first node that passed (the best score when several did) and PreBind
(or Unreserve where upstream's case skips the binding or fails it afterwards). Upstream's ``verify`` compares a
rejecting status by its message only; a case here names the code the plugin's code gives as well.

How our setup differs from upstream's:

- Upstream runs the table on the 1.37 code with some gates switched (DRAPrioritizedList, DRAExtendedResource off
  unless a case turns them on). Those two are locked on in our 1.37, so a case that needs one off runs at the
  release where it could be off (named in the case). PostFilter's empty messages are 1.37's; at 1.34-1.36
  packsched answers with those releases' words (``no new claims to deallocate``, ``still not schedulable``).
- Claims are objects of the simulator's DRA catalog, not of a fake API server: Reserve's in-flight allocations are
  ``DraObjects.in_flight``; PreBind writes the claim in place (the simulator's PreBind), and an extended-resource
  claim lives in ``DraObjects.extended_claims``.
- A Filter Error is raised as ``PluginError`` wrapped as the framework words it (``running "DynamicResources"
  filter plugin: ...``); packsched's Filter takes every node in one call, so an error ends the cycle at the first
  node in order, as upstream's driver does.

TestPlugin has 94 cases: 57 ported (all pass), 37 left out with a reason each
(SKIPPED below; test_the_table_is_accounted_for checks the count). The file also ports
extendeddynamicresources_test.go (the claim's requests, 8 cases; its request mappings, 7 cases) and
noderesources/fit_test.go's DRA cases (TestEnoughRequests 7, TestFitScore 2 as one, TestFitSignPod 2; 4 left out:
FIT_SKIPPED).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from packsched.api.dra import EXACT_COUNT, DeviceClass, DraObjects
from packsched.api.manifests import Cluster, load_manifests
from packsched.api.objects import Container, Node, Pod
from packsched.backend.dra.extended import claim_requests, request_mappings
from packsched.config.types import LEAST_ALLOCATED, NodeResourcesFitArgs, ResourceSpec, ScoringStrategy
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.interface import RESOURCE_CLAIM, SIGN_RESOURCES, UPDATE, ClusterEvent
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import Code, PluginError, Status
from packsched.plugins.dynamicresources.dynamic_resources import BINDING_POLL_S, STATE_KEY, new_dynamic_resources
from packsched.plugins.noderesources.fit import Fit

UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
UNSCHEDULABLE = Code.UNSCHEDULABLE
ERROR = Code.ERROR
SKIP = Code.SKIP

# Upstream cases not ported, with the reason (one line each).
SKIPPED: dict[str, str] = {
    "podgroup-claim-reference-feature-disabled-reserves-for-pod": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "podgroup-claim-reference": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "podgroup-claim-template": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "podgroup-with-resources": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "podgroup-with-resources-feature-disabled-reserves-for-pod": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "with-resources-has-finalizer": "claim finalizers are API-server bookkeeping packsched does not model",
    "with-resources-finalizer-gets-removed": "claim finalizers are API-server bookkeeping packsched does not model",
    "with-resources-finalizer-gets-added": "claim finalizers are API-server bookkeeping packsched does not model",
    "allocated-skip-node-operations-missing-feature": "DRAOptionalNodeOperations (skipNodeOperations) not modelled",
    "allocated-skip-node-operations-with-feature": "DRAOptionalNodeOperations (skipNodeOperations) not modelled",
    "bind-failure-preserves-inflight-until-unreserve": "an API-server client error injected by a reactor",
    "bind-podgroup-failure": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "postfilter-deallocate-reserved-podgroup": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "postfilter-skip-deallocate-reserved-podgroup-feature-disabled": "PodGroup-owned claims",
    "postfilter-deallocate-unreserved-podgroup": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "postfilter-skip-deallocate-reserved-podgroup-when-pods-active": "PodGroup-owned claims",
    "reserved-okay-podgroup": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "extended-resource-name-with-resources-fail-patch": "an API-server patch failure (failPatch)",
    "extended-resource-name-claim-creation-failure": "an API-server create failure injected by a reactor",
    "canceled": "a canceled Filter context (goroutine cancellation)",
    "timeout": "DRASchedulerFilterTimeout: packsched's Filter has no time limit",
    "timeout_disabled": "DRASchedulerFilterTimeout: packsched's Filter has no time limit",
    "timeout_zero": "DRASchedulerFilterTimeout: packsched's Filter has no time limit",
    "add-allocation-timestamp-failure": "an API-server client error injected by a reactor",
    "bind-failure-concurrent-deallocation": "a concurrent API-server write during PreBind",
    **{
        name: "DRANodeAllocatableResources (node-allocatable devices) is not modelled"
        for name in (
            "node-allocatable-resource-multiplier",
            "node-allocatable-mapping-and-overhead-in-same-device",
            "node-allocatable-resource-capacitykey",
            "node-allocatable-resource-capacitykey-and-multiplier",
            "node-allocatable-resource-insufficient-resources-with-multiplier",
            "node-allocatable-resource-insufficient-with-capacityKey",
            "node-allocatable-direct-mapped-sharing-rejected",
            "node-allocatable-mapping-and-overhead-sharing-rejected",
            "node-allocatable-overhead-only-sharing-allowed",
            "node-allocatable-unreferenced-claim-direct-mapped",
            "node-allocatable-unreferenced-claim-overhead",
        )
    },
    "DRA-disabled": "DynamicResourceAllocation off: locked on from 1.34; before, the profile has no DynamicResources",
}

NODE = "worker"
NODE2 = "worker-2"
NODE3 = "worker-3"
DRIVER = "some-driver"
POD = "my-pod"
POD_UID = "1234"
CLAIM = "my-pod-my-resource"
CLAIM2 = "my-pod-my-resource-2"
OTHER = "not-my-claim"
CLASS = "my-resource-class"
NS = "default"
ATTR = "healthy"  # a device attribute that only the devices of worker-2 and worker-3 have
BROKEN = f'device.attributes["{DRIVER}"].{ATTR}'  # a selector that fails at run time on worker's device
CEL_NO_KEY = (
    f"CEL runtime error: no such key: {ATTR}. consider using CEL optional chaining (.? followed by orValue()) "
    "or guarding the check with has() for optional fields"
)
CEL_ERROR_ON_WORKER = (
    f"claim default/my-pod-my-resource: selector #0 on device {DRIVER}/{NODE}/instance-1: {CEL_NO_KEY}"
)
EXT = "example.com/gpu"
EXT2 = "example.com/gpu2"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS}"
EXT_CLAIM_MADE = "my-pod-extended-resources-0"  # upstream's name for the claim an earlier cycle created
DRIVER2 = "some-driver-2"
EXT_CLAIM = "<extended>"  # in Want.in_flight: the claim Filter made for the pod's extended resources
HEALTHY = f'device.attributes["{DRIVER}"].{ATTR}'
# "10 minutes ago" (upstream: time.Now() less 10 minutes, a moment before the case looks): past the 600 s timeout
TEN_MINUTES_AGO = -600.001


# -- objects --------------------------------------------------------------------------------------------------


def node(name: str, allocatable: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"} | (allocatable or {})},
    }


def node_slice(
    name: str,
    devices: list[str] | None = None,
    healthy: bool | None = None,
    taint: bool = False,
    driver: str = DRIVER,
    binding: bool = False,
) -> dict[str, Any]:
    """upstream st.MakeResourceSlice(node, driver): one pool named after the node, one slice; ``binding``: upstream's
    fabricSlice (a device binding to the node with binding conditions, the slice selecting the node by name)."""
    listed: list[dict[str, Any]] = []
    for dev in devices or ["instance-1"]:
        item: dict[str, Any] = {"name": dev}
        if healthy is not None:
            item["attributes"] = {ATTR: {"bool": healthy}}
        if taint:
            item["taints"] = [{"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}]
        if binding:
            item |= {"bindsToNode": True, "bindingConditions": ["condition"], "bindingFailureConditions": ["failed"]}
        listed.append(item)
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
        "devices": listed,
    }
    if binding:
        spec["nodeSelector"] = by_name((name,))
    else:
        spec["nodeName"] = name
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{name}-{driver}"},
        "spec": spec,
    }


def device_class(name: str = CLASS, selectors: tuple[str, ...] = (), extended: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in selectors]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def by_name(nodes: tuple[str, ...]) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": list(nodes)}]}]}


def by_label(key: str, value: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}


def result(
    device: str = "instance-1", request: str = "req-1", admin: bool = False, driver: str = DRIVER, binding: bool = False
) -> dict[str, Any]:
    out: dict[str, Any] = {"request": request, "driver": driver, "pool": NODE, "device": device}
    if admin:
        out["adminAccess"] = True
    if binding:  # upstream allocationResultWithBindingConditions
        out |= {"bindingConditions": ["condition"], "bindingFailureConditions": ["failed"]}
    return out


def device_status(device: str = "instance-1", driver: str = DRIVER, **conditions: bool) -> dict[str, Any]:
    """A claim's ``status.devices`` entry with the given conditions."""
    listed = [{"type": t, "status": "True" if v else "False"} for t, v in conditions.items()]
    return {"driver": driver, "pool": NODE, "device": device, "conditions": listed}


def allocation(*results: dict[str, Any], selector: dict[str, Any] | None = None) -> dict[str, Any]:
    """upstream allocationResult and its kind: worker's instance-1 for req-1, bound to worker by name."""
    return {
        "devices": {"results": list(results) or [result()]},
        "nodeSelector": by_name((NODE,)) if selector is None else selector,
    }


def claim(
    name: str = CLAIM,
    cls: str = CLASS,
    owned: bool = True,
    alloc: dict[str, Any] | None = None,
    reserved: tuple[str, ...] = (),
    admin: bool = False,
    selectors: tuple[str, ...] = (),
    subrequests: tuple[tuple[Any, ...], ...] = (),  # (name, class, count[, a CEL selector])
    owner_uid: str = POD_UID,
    deleting: bool = False,
    lists: tuple[tuple[tuple[str, str, int], ...], ...] = (),
    devices: tuple[dict[str, Any], ...] = (),
    requests_named: str = "req-1",
) -> dict[str, Any]:
    """upstream st.MakeResourceClaim().Request(class): one request ``req-1`` of one device; ``owned`` is upstream's
    pendingClaim (controlled by the pod, as the resourceclaim controller makes it)."""
    request: dict[str, Any]
    requests: list[dict[str, Any]] = []
    if lists:  # several prioritized lists: req-1, req-2, ...
        for i, subs in enumerate(lists):
            listed = [{"name": s, "deviceClassName": c, "count": n} for s, c, n in subs]
            requests.append({"name": f"req-{i + 1}", "firstAvailable": listed})
        request = requests[0]
    elif subrequests:
        request = {
            "name": "req-1",
            "firstAvailable": [
                {"name": x[0], "deviceClassName": x[1], "count": x[2]}
                | ({"selectors": [{"cel": {"expression": x[3]}}]} if len(x) > 3 else {})
                for x in subrequests
            ],
        }
    else:
        exactly: dict[str, Any] = {"deviceClassName": cls}
        if admin:
            exactly["adminAccess"] = True
        if selectors:
            exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
        request = {"name": requests_named, "exactly": exactly}
    meta: dict[str, Any] = {"name": name, "namespace": NS}
    if owned:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": owner_uid, "controller": True}
        ]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    out: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": requests or [request]}},
    }
    status: dict[str, Any] = {}
    if alloc is not None:
        status["allocation"] = alloc
    if devices:
        status["devices"] = list(devices)
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": p, "uid": POD_UID} for p in reserved]
    if status:
        out["status"] = status
    return out


def pod(
    claim_name: str = "",
    template: str = "",
    in_status: bool = False,
    requests: dict[str, str] | None = None,
    second: dict[str, str] | None = None,
    claim2: str = "",
) -> dict[str, Any]:
    """upstream podWithClaimName (``claim_name``; ``claim2``: podWithTwoClaimNames), podWithClaimTemplate(InStatus)
    (``template``), or a pod asking for extended resources (``requests``, and a second container's)."""
    containers: list[dict[str, Any]] = []
    for i, asked in enumerate([requests, second] if second else [requests]):
        container: dict[str, Any] = {"name": f"c{i}"}
        if asked:
            container["resources"] = {"requests": asked, "limits": asked}
        containers.append(container)
    spec: dict[str, Any] = {"containers": containers}
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": POD, "namespace": NS, "uid": POD_UID},
        "spec": spec,
    }
    if claim_name:
        spec["resourceClaims"] = [{"name": "my-resource", "resourceClaimName": claim_name}]
        if claim2:
            spec["resourceClaims"].append({"name": "my-resource-2", "resourceClaimName": claim2})
    elif template:
        spec["resourceClaims"] = [{"name": "my-resource", "resourceClaimTemplateName": template}]
        if in_status:
            out["status"] = {"resourceClaimStatuses": [{"name": "my-resource", "resourceClaimName": CLAIM}]}
    return out


POD_WITH_CLAIM = pod(claim_name=CLAIM)
POD_WITH_TWO_CLAIMS = pod(claim_name=CLAIM, claim2=CLAIM2)
EXT_POD = pod(requests={EXT: "1"})
POD_WITH_TEMPLATE_IN_STATUS = pod(template=CLAIM, in_status=True)
ALLOCATED = claim(alloc=allocation())
OTHER_CLAIM = claim(OTHER, owned=False)
OTHER_ALLOCATED = claim(OTHER, owned=False, alloc=allocation())

# admin access needs the namespace's label (the API server's admission check, which packsched's loader makes)
ADMIN_NAMESPACE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": NS, "labels": {"resource.kubernetes.io/admin-access": "true"}},
}

# -- the table --------------------------------------------------------------------------------------------------

Verdict = tuple[Code, str]
# a claim's state: the devices of its allocation as (request, driver, pool, device) and the pods it is reserved
# for; None: not allocated
ClaimState = tuple[tuple[tuple[str, str, str, str], ...], tuple[str, ...]] | None
DEVICE_1 = (("req-1", DRIVER, NODE, "instance-1"),)
DEVICE_2 = (("req-2", DRIVER2, NODE, "instance-2"),)
BINDING_1 = DEVICE_1
EXT_ALLOCATED: ClaimState = ((("container-0-request-0", DRIVER, NODE, "instance-1"),), (POD,))
# upstream boundClaim, boundClaim2, failedBindingClaim(2): allocations of devices with binding conditions
BOUND = claim(alloc=allocation(result(binding=True)), devices=(device_status(condition=True, failed=False),))
FAILED_BINDING = claim(alloc=allocation(result(binding=True)), devices=(device_status(condition=False, failed=True),))
BOUND2 = claim(
    CLAIM2,
    alloc=allocation(result("instance-2", "req-2", driver=DRIVER2, binding=True)),
    devices=(device_status("instance-2", DRIVER2, condition=True, failed=False),),
)
FAILED_BINDING2 = claim(
    CLAIM2,
    alloc=allocation(result("instance-2", "req-2", driver=DRIVER2, binding=True)),
    devices=(device_status("instance-2", DRIVER2, condition=False, failed=True),),
)


@dataclass(frozen=True)
class Want:
    preenqueue: Verdict | None = None
    prefilter: Verdict | None = None
    filter: dict[str, Verdict] = field(default_factory=dict)  # node -> verdict; a node not named passes
    postfilter: Verdict | None = None  # checked when no node passed (upstream's driver calls it then)
    in_flight: tuple[str, ...] = ()  # the claims whose allocation Reserve holds in flight
    prebind: Verdict | None = None
    claims: dict[str, ClaimState] = field(default_factory=dict)  # after the last step
    node: str = ""  # the node Reserve took (checked when set)
    extended: ClaimState | str = "-"  # the claim made for the pod's extended resources ("-": not checked)
    stamped: tuple[str, ...] | None = None  # the claims with an allocationTimestamp after PreBind (None: unchecked)
    scores: dict[str, int] = field(default_factory=dict)  # Score per node, and NormalizeScore's answers
    normalized: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    name: str
    pod: dict[str, Any]
    claims: tuple[dict[str, Any], ...] = ()
    classes: tuple[dict[str, Any], ...] = ()
    slices: tuple[dict[str, Any], ...] = ()
    nodes: tuple[dict[str, Any], ...] = (node(NODE),)
    in_flight: tuple[dict[str, Any], ...] = ()  # claims allocated by another cycle not yet bound
    minor: int = 37
    gates: dict[str, bool] = field(default_factory=dict)
    want: Want = Want()
    unreserve: str = ""  # "before-prebind" (upstream skip-bind) or "after-prebind" (upstream bind-failure)
    args: dict[str, Any] | None = None  # DynamicResourcesArgs
    allocated_at: dict[str, float] = field(default_factory=dict)  # claim -> allocationTimestamp (the clock is 0)
    extended_claim: str = ""  # a claim an earlier cycle made for the pod's extended resources (live mode's watch)
    xfail: str = ""


CASES: list[Case] = [
    # upstream's driver reaches Reserve and PreBind after a skipped PreFilter (its PostFilter want is not checked)
    Case("empty", pod(), want=Want(prefilter=(SKIP, ""))),
    Case("empty-with-extended-resources-enabled", pod(), want=Want(prefilter=(SKIP, ""))),
    Case(
        "claim-reference",
        POD_WITH_CLAIM,
        claims=(ALLOCATED, OTHER_CLAIM),
        want=Want(claims={CLAIM: (DEVICE_1, (POD,)), OTHER: None}),
    ),
    Case(
        "claim-template",
        POD_WITH_TEMPLATE_IN_STATUS,
        claims=(ALLOCATED, OTHER_CLAIM),
        want=Want(claims={CLAIM: (DEVICE_1, (POD,)), OTHER: None}),
    ),
    Case(
        "missing-claim",
        pod(template=CLAIM),  # no template of that name, no claim in the pod's status
        claims=(ALLOCATED, OTHER_CLAIM),
        want=Want(preenqueue=(UNRESOLVABLE, 'pod "default/my-pod": ResourceClaim not created yet')),
    ),
    Case(
        "deleted-claim",
        POD_WITH_TEMPLATE_IN_STATUS,
        claims=(claim(alloc=allocation(), deleting=True),),
        want=Want(preenqueue=(UNRESOLVABLE, 'resourceclaim "my-pod-my-resource" is being deleted')),
    ),
    Case(
        "wrong-claim",
        POD_WITH_TEMPLATE_IN_STATUS,
        claims=(claim(alloc=allocation(), owner_uid=POD_UID + "123"),),
        want=Want(
            preenqueue=(
                UNRESOLVABLE,
                "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod (Pod is not owner)",
            )
        ),
    ),
    Case(
        "no-resources",
        POD_WITH_CLAIM,
        claims=(claim(),),
        classes=(device_class(),),
        want=Want(filter={NODE: (UNRESOLVABLE, "cannot allocate all claims")}, postfilter=(UNSCHEDULABLE, "")),
    ),
    Case(
        "with-resources",
        POD_WITH_CLAIM,
        claims=(claim(),),
        classes=(device_class(),),
        slices=(node_slice(NODE),),
        want=Want(in_flight=(CLAIM,), claims={CLAIM: (DEVICE_1, (POD,))}),
    ),
    Case(
        "skip-bind",
        POD_WITH_CLAIM,
        claims=(claim(),),
        classes=(device_class(),),
        slices=(node_slice(NODE),),
        unreserve="before-prebind",
        want=Want(in_flight=(CLAIM,), claims={CLAIM: None}),
    ),
    Case(
        "exhausted-resources-in-informer-cache",
        POD_WITH_CLAIM,
        claims=(claim(), OTHER_ALLOCATED),
        classes=(device_class(),),
        slices=(node_slice(NODE),),
        want=Want(filter={NODE: (UNRESOLVABLE, "cannot allocate all claims")}, postfilter=(UNSCHEDULABLE, "")),
    ),
    Case(
        "exhausted-resources-in-flight-claim",
        POD_WITH_CLAIM,
        claims=(claim(), OTHER_CLAIM),
        in_flight=(OTHER_ALLOCATED,),
        classes=(device_class(),),
        slices=(node_slice(NODE),),
        want=Want(filter={NODE: (UNRESOLVABLE, "cannot allocate all claims")}, postfilter=(UNSCHEDULABLE, "")),
    ),
    Case(
        "other-resources-in-flight-claim",
        POD_WITH_CLAIM,
        claims=(claim(), OTHER_CLAIM),
        in_flight=(claim(OTHER, owned=False, alloc=allocation(result("instance-1-other"))),),
        classes=(device_class(),),
        slices=(node_slice(NODE),),
        want=Want(in_flight=(CLAIM, OTHER), claims={CLAIM: (DEVICE_1, (POD,)), OTHER: None}),
    ),
    Case(
        "tainted-device-disabled",
        POD_WITH_CLAIM,
        claims=(claim(),),
        classes=(device_class(),),
        slices=(node_slice(NODE, taint=True),),
        gates={"DRADeviceTaints": False},
        want=Want(in_flight=(CLAIM,), claims={CLAIM: (DEVICE_1, (POD,))}),
    ),
    Case(
        "tainted-device-enabled",
        POD_WITH_CLAIM,
        claims=(claim(),),
        classes=(device_class(),),
        slices=(node_slice(NODE, taint=True),),
        gates={"DRADeviceTaints": True},
        want=Want(filter={NODE: (UNRESOLVABLE, "cannot allocate all claims")}, postfilter=(UNSCHEDULABLE, "")),
    ),
    Case(
        "request-admin-access-with-DRAAdminAccess-featuregate",
        POD_WITH_CLAIM,
        claims=(claim(admin=True), OTHER_ALLOCATED),
        classes=(device_class(), ADMIN_NAMESPACE),
        slices=(node_slice(NODE),),
        want=Want(in_flight=(CLAIM,), claims={CLAIM: ((("req-1", DRIVER, NODE, "instance-1"),), (POD,))}),
    ),
    Case(
        "request-admin-access-without-DRAAdminAccess-featuregate",
        POD_WITH_CLAIM,
        claims=(claim(admin=True), OTHER_ALLOCATED),
        classes=(device_class(), ADMIN_NAMESPACE),
        slices=(node_slice(NODE),),
        minor=35,  # upstream emulates 1.35 with DRAAdminAccess off
        gates={"DRAAdminAccess": False},
        # upstream's want names UnschedulableAndUnresolvable, but its verify compares the message only: the
        # allocator's plain error makes Filter's status an Error (which ends the case before PostFilter)
        want=Want(
            filter={
                NODE: (
                    ERROR,
                    "claim default/my-pod-my-resource, request req-1: admin access is requested, but the feature "
                    "is disabled",
                )
            },
        ),
    ),
    Case(
        "structured-ignore-allocated-admin-access",
        POD_WITH_CLAIM,
        claims=(claim(), claim(OTHER, owned=False, admin=True, alloc=allocation(result(admin=True)))),
        classes=(device_class(), ADMIN_NAMESPACE),
        slices=(node_slice(NODE),),
        want=Want(in_flight=(CLAIM,), claims={CLAIM: (DEVICE_1, (POD,))}),
    ),
    Case(
        "claim-parameters-CEL-runtime-error",
        POD_WITH_CLAIM,
        claims=(claim(selectors=(BROKEN,)),),
        classes=(device_class(),),
        slices=(node_slice(NODE),),
        want=Want(
            filter={
                NODE: (
                    ERROR,
                    f"claim default/my-pod-my-resource: selector #0 on device {DRIVER}/{NODE}/instance-1: {CEL_NO_KEY}",
                )
            }
        ),
    ),
    Case(
        "class-parameters-CEL-runtime-error",
        POD_WITH_CLAIM,
        claims=(claim(),),
        classes=(device_class(selectors=(BROKEN,)),),
        slices=(node_slice(NODE),),
        want=Want(
            filter={NODE: (ERROR, f"class {CLASS}: selector #0 on device {DRIVER}/{NODE}/instance-1: {CEL_NO_KEY}")}
        ),
    ),
    Case(
        "CEL-runtime-error-for-one-of-two-nodes",
        POD_WITH_CLAIM,
        nodes=(node(NODE), node(NODE2)),
        claims=(claim(selectors=(BROKEN,)),),
        classes=(device_class(),),
        slices=(node_slice(NODE), node_slice(NODE2, healthy=True)),
        want=Want(
            filter={
                NODE: (
                    ERROR,
                    f"claim default/my-pod-my-resource: selector #0 on device {DRIVER}/{NODE}/instance-1: {CEL_NO_KEY}",
                )
            }
        ),
    ),
    Case(
        "CEL-runtime-error-for-one-of-three-nodes",
        POD_WITH_CLAIM,
        nodes=(node(NODE), node(NODE2), node(NODE3)),
        claims=(claim(selectors=(BROKEN,)),),
        classes=(device_class(),),
        slices=(node_slice(NODE), node_slice(NODE2, healthy=True), node_slice(NODE3, healthy=True)),
        # upstream's want names UnschedulableAndUnresolvable and a PreScore status, but its verify compares the
        # message only and the plugin has no PreScore: the code's answer is the Error, as with two nodes
        want=Want(filter={NODE: (ERROR, CEL_ERROR_ON_WORKER)}),
    ),
    Case(
        "missing-class",
        POD_WITH_CLAIM,
        claims=(claim(),),
        want=Want(
            prefilter=(UNRESOLVABLE, f"request req-1: device class {CLASS} does not exist"),
            postfilter=(UNSCHEDULABLE, ""),
        ),
    ),
    Case(
        "wrong-topology",
        POD_WITH_CLAIM,
        claims=(claim(alloc=allocation(selector=by_label("no-such-label", "no-such-value"))),),
        want=Want(
            filter={NODE: (UNRESOLVABLE, "resourceclaim not available on the node")},
            postfilter=(UNSCHEDULABLE, "deallocation of ResourceClaim completed"),
            claims={CLAIM: None},
        ),
    ),
    Case(
        "good-topology",
        POD_WITH_CLAIM,
        claims=(claim(alloc=allocation(selector=by_label("kubernetes.io/hostname", NODE))),),
        want=Want(claims={CLAIM: (DEVICE_1, (POD,))}),
    ),
    Case(
        "bind-failure",
        POD_WITH_CLAIM,
        claims=(claim(alloc=allocation(selector=by_label("kubernetes.io/hostname", NODE))),),
        unreserve="after-prebind",
        want=Want(claims={CLAIM: (DEVICE_1, ())}),
    ),
    Case(
        "reserved-okay",
        POD_WITH_CLAIM,
        claims=(claim(alloc=allocation(), reserved=(POD,)),),
        want=Want(claims={CLAIM: (DEVICE_1, (POD,))}),
    ),
    Case(
        "claim-with-request-with-unknown-device-class",
        POD_WITH_CLAIM,
        claims=(claim(owned=False, cls="does-not-exist"),),
        # upstream's statusUnschedulable gives UnschedulableAndUnresolvable (its verify compares the message only)
        want=Want(
            prefilter=(UNRESOLVABLE, "request req-1: device class does-not-exist does not exist"),
            postfilter=(UNSCHEDULABLE, ""),
        ),
    ),
    Case(
        "claim-with-prioritized-list-feature-disabled",
        POD_WITH_CLAIM,
        claims=(claim(owned=False, subrequests=(("subreq-1", CLASS, 1),)),),
        classes=(device_class(),),
        minor=36,  # DRAPrioritizedList is locked on in 1.37
        gates={"DRAPrioritizedList": False},
        want=Want(
            prefilter=(
                UNRESOLVABLE,
                # upstream's want is a part of the message (its verify: ErrorContains); the code's whole message
                "resource claim default/my-pod-my-resource, request req-1: has subrequests, but the DRAPrioritizedList "
                "feature is disabled",
            ),
            postfilter=(UNSCHEDULABLE, "no new claims to deallocate"),  # 1.36's words (see the top)
        ),
    ),
    Case(
        "claim-with-prioritized-list-unknown-device-class",
        POD_WITH_CLAIM,
        claims=(claim(owned=False, subrequests=(("subreq-1", "does-not-exist", 1),)),),
        want=Want(
            prefilter=(UNRESOLVABLE, "request req-1/subreq-1: device class does-not-exist does not exist"),
            postfilter=(UNSCHEDULABLE, ""),
        ),
    ),
    Case(
        "claim-with-prioritized-list",
        POD_WITH_CLAIM,
        claims=(claim(subrequests=(("subreq-1", CLASS, 1),)),),
        classes=(device_class(),),
        slices=(node_slice(NODE),),
        want=Want(in_flight=(CLAIM,), claims={CLAIM: ((("req-1/subreq-1", DRIVER, NODE, "instance-1"),), (POD,))}),
    ),
    # -- DRA-backed extended resources (DRAExtendedResource) --
    Case(
        "extended-resource-name-with-node-resource",
        EXT_POD,
        nodes=(node(NODE, {EXT: "1"}),),
        classes=(device_class(extended=EXT),),
        want=Want(extended=None),  # a device plugin gives it: no claim
    ),
    Case(
        "extended-resource-one-device-plugin-one-dra",
        pod(requests={EXT: "1", EXT2: "1"}),
        nodes=(node(NODE, {EXT: "1"}),),
        classes=(device_class(extended=EXT), device_class(CLASS + "2", extended=EXT2)),
        slices=(node_slice(NODE),),
        want=Want(in_flight=(EXT_CLAIM,), extended=((("container-0-request-1", DRIVER, NODE, "instance-1"),), (POD,))),
    ),
    Case(
        "extended-resource-name-with-zero-allocatable",
        EXT_POD,
        nodes=(node(NODE, {EXT: "0"}),),
        classes=(device_class(extended=EXT),),
        slices=(node_slice(NODE),),
        want=Want(in_flight=(EXT_CLAIM,), extended=EXT_ALLOCATED),
    ),
    Case(
        "non-DRA-extended-resource-name-with-zero-allocatable",
        EXT_POD,
        nodes=(node(NODE, {EXT: "0"}),),
        classes=(device_class(),),
        slices=(node_slice(NODE),),
        want=Want(prefilter=(SKIP, ""), extended=None),
    ),
    Case(
        "extended-resource-name-no-resource",
        EXT_POD,
        classes=(device_class(extended=EXT),),
        want=Want(filter={NODE: (UNRESOLVABLE, "cannot allocate all claims")}, postfilter=(UNSCHEDULABLE, "")),
    ),
    Case(
        "extended-resource-name-with-resources",
        EXT_POD,
        classes=(device_class(extended=EXT),),
        slices=(node_slice(NODE),),
        want=Want(in_flight=(EXT_CLAIM,), extended=EXT_ALLOCATED),
    ),
    Case(
        "implicit-extended-resource-name-with-resources",
        pod(requests={IMPLICIT: "1", EXT: "2"}),
        classes=(device_class(extended=EXT),),
        slices=(node_slice(NODE, [f"instance-{i}" for i in range(1, 5)]),),
        want=Want(
            in_flight=(EXT_CLAIM,),
            extended=(
                (
                    ("container-0-request-0", DRIVER, NODE, "instance-1"),
                    ("container-0-request-1", DRIVER, NODE, "instance-2"),
                    ("container-0-request-1", DRIVER, NODE, "instance-3"),
                ),
                (POD,),
            ),
        ),
    ),
    Case(
        "implicit-extended-resource-name-two-containers-with-resources",
        pod(requests={IMPLICIT: "1"}, second={EXT: "2"}),
        classes=(device_class(extended=EXT),),
        slices=(node_slice(NODE, [f"instance-{i}" for i in range(1, 5)]),),
        want=Want(
            in_flight=(EXT_CLAIM,),
            extended=(
                (
                    ("container-0-request-0", DRIVER, NODE, "instance-1"),
                    ("container-1-request-0", DRIVER, NODE, "instance-2"),
                    ("container-1-request-0", DRIVER, NODE, "instance-3"),
                ),
                (POD,),
            ),
        ),
    ),
    Case(
        "extended-resource-name-with-resources-has-claim",
        EXT_POD,
        claims=(
            claim(
                EXT_CLAIM_MADE,
                requests_named="container-0-request-0",
                alloc=allocation(result(request="container-0-request-0")),
            ),
        ),
        extended_claim=EXT_CLAIM_MADE,
        classes=(device_class(extended=EXT),),
        slices=(node_slice(NODE),),
        want=Want(
            filter={NODE: (UNRESOLVABLE, "cannot schedule extended resource claim")},
            postfilter=(UNSCHEDULABLE, "deletion of ResourceClaim completed"),
            extended=None,
        ),
    ),
    Case(
        "extended-resource-name-with-resources-delete-claim",
        EXT_POD,
        claims=(
            claim(
                EXT_CLAIM_MADE,
                requests_named="container-0-request-0",
                alloc=allocation(result(request="container-0-request-0"), selector=by_name((NODE2,))),
            ),
        ),
        extended_claim=EXT_CLAIM_MADE,
        classes=(device_class(extended=EXT),),
        slices=(node_slice(NODE),),
        want=Want(
            filter={NODE: (UNRESOLVABLE, "cannot schedule extended resource claim")},
            postfilter=(UNSCHEDULABLE, "deletion of ResourceClaim completed"),
            extended=None,
        ),
    ),
    Case(
        "extended-resource-name-bind-failure",
        EXT_POD,
        classes=(device_class(extended=EXT),),
        slices=(node_slice(NODE),),
        unreserve="after-prebind",
        want=Want(in_flight=(EXT_CLAIM,), extended=None),  # Unreserve deletes the claim PreBind created
    ),
    Case(
        "extended-resource-name-skip-bind",
        EXT_POD,
        classes=(device_class(extended=EXT),),
        slices=(node_slice(NODE),),
        unreserve="before-prebind",
        want=Want(in_flight=(EXT_CLAIM,), extended=None),
    ),
    # -- allocation timestamps and device binding conditions (DRADeviceBindingConditions) --
    Case(
        "dont-add-allocation-timestamp",
        POD_WITH_CLAIM,
        claims=(claim(),),
        classes=(device_class(),),
        slices=(node_slice(NODE),),
        gates={"DRADeviceBindingConditions": False},
        want=Want(in_flight=(CLAIM,), claims={CLAIM: (DEVICE_1, (POD,))}, stamped=()),
    ),
    Case(
        "add-allocation-timestamp",
        POD_WITH_CLAIM,
        claims=(claim(),),
        classes=(device_class(),),
        slices=(node_slice(NODE),),
        want=Want(in_flight=(CLAIM,), claims={CLAIM: (DEVICE_1, (POD,))}, stamped=(CLAIM,)),
    ),
    Case(
        "bind-claim-with-binding-conditions",
        POD_WITH_CLAIM,
        claims=(claim(),),
        classes=(device_class(),),
        slices=(node_slice(NODE, binding=True),),
        args={"bindingTimeout": "1s"},
        want=Want(
            in_flight=(CLAIM,),
            prebind=(ERROR, "device binding timeout: context deadline exceeded"),
            claims={CLAIM: (DEVICE_1, (POD,))},
            stamped=(CLAIM,),
        ),
    ),
    Case(
        "bound-claim-with-succeeded-binding-conditions",
        POD_WITH_CLAIM,
        claims=(BOUND,),
        want=Want(claims={CLAIM: (DEVICE_1, (POD,))}),
    ),
    Case(
        "bound-claim-with-failed-binding",
        POD_WITH_CLAIM,
        claims=(FAILED_BINDING,),
        slices=(node_slice(NODE),),
        want=Want(
            filter={NODE: (UNRESOLVABLE, "resourceclaim not available on the node")},
            postfilter=(UNSCHEDULABLE, "deallocation of ResourceClaim completed"),
            claims={CLAIM: None},
        ),
    ),
    Case(
        "bound-claim-with-timed-out-binding",
        POD_WITH_CLAIM,
        claims=(claim(alloc=allocation(result(binding=True)), devices=(device_status(),)),),
        allocated_at={CLAIM: TEN_MINUTES_AGO},
        want=Want(
            filter={NODE: (UNRESOLVABLE, "resourceclaim not available on the node")},
            postfilter=(UNSCHEDULABLE, "deallocation of ResourceClaim completed"),
            claims={CLAIM: None},
        ),
    ),
    Case(
        "prebind-fail-with-binding-timeout",
        POD_WITH_CLAIM,
        claims=(claim(alloc=allocation(result(binding=True)), devices=(device_status(),)),),
        allocated_at={CLAIM: -590.0},  # the 600 s binding timeout runs out 10 s into the case
        args={"bindingTimeout": "600s"},
        want=Want(prebind=(ERROR, f"device binding timeout: claim={CLAIM}"), claims={CLAIM: (BINDING_1, (POD,))}),
    ),
    Case(
        "bound-claim-with-mixed-binding-conditions",
        POD_WITH_CLAIM,
        claims=(
            claim(alloc=allocation(result(binding=True)), devices=(device_status(condition1=True, condition2=False),)),
        ),
        allocated_at={CLAIM: TEN_MINUTES_AGO},
        want=Want(
            filter={NODE: (UNRESOLVABLE, "resourceclaim not available on the node")},
            postfilter=(UNSCHEDULABLE, "deallocation of ResourceClaim completed"),
            claims={CLAIM: None},
        ),
    ),
    Case(
        "bound-claim-without-binding-conditions",
        POD_WITH_TEMPLATE_IN_STATUS,
        claims=(ALLOCATED, OTHER_CLAIM),
        want=Want(claims={CLAIM: (DEVICE_1, (POD,)), OTHER: None}, stamped=(CLAIM,)),
    ),
    Case(
        "multi-claims-binding-conditions-all-success",
        POD_WITH_TWO_CLAIMS,
        claims=(BOUND, BOUND2),
        classes=(device_class(),),
        slices=(node_slice(NODE, binding=True), node_slice(NODE, ["instance-2"], driver=DRIVER2, binding=True)),
        want=Want(claims={CLAIM: (DEVICE_1, (POD,)), CLAIM2: (DEVICE_2, (POD,))}),
    ),
    Case(
        "multi-claims-binding-conditions-one-fail",
        POD_WITH_TWO_CLAIMS,
        claims=(BOUND, FAILED_BINDING2),
        classes=(device_class(),),
        slices=(node_slice(NODE, binding=True), node_slice(NODE, ["instance-2"], driver=DRIVER2, binding=True)),
        want=Want(
            filter={NODE: (UNRESOLVABLE, "resourceclaim not available on the node")},
            postfilter=(UNSCHEDULABLE, "deallocation of ResourceClaim completed"),
            claims={CLAIM: (DEVICE_1, ()), CLAIM2: None},
        ),
    ),
    # -- Score: prioritized lists (upstream's comparison ignores which device a result names; ours are checked) --
    Case(
        "single-claim-prioritized-list-scoring",
        POD_WITH_CLAIM,
        claims=(claim(subrequests=(("subreq-1", CLASS, 1, HEALTHY), ("subreq-2", CLASS, 1))),),
        classes=(device_class(),),
        nodes=(node(NODE), node(NODE2)),
        slices=(node_slice(NODE, healthy=True), node_slice(NODE2, healthy=False)),
        want=Want(
            scores={NODE: 8, NODE2: 7},
            normalized={NODE: 100, NODE2: 87},
            node=NODE,
            in_flight=(CLAIM,),
            claims={CLAIM: ((("req-1/subreq-1", DRIVER, NODE, "instance-1"),), (POD,))},
        ),
    ),
    Case(
        "multiple-claims-prioritized-list-scoring",
        POD_WITH_TWO_CLAIMS,
        claims=(
            claim(subrequests=(("subreq-1", CLASS, 1),)),
            claim(
                CLAIM2,
                subrequests=(
                    ("subreq-1", CLASS, 4),
                    ("subreq-2", CLASS, 3),
                    ("subreq-3", CLASS, 2),
                    ("subreq-4", CLASS, 1),
                ),
            ),
        ),
        classes=(device_class(),),
        nodes=(node(NODE), node(NODE2), node(NODE3)),
        slices=(
            node_slice(NODE, [f"instance-{i}" for i in range(1, 5)]),
            node_slice(NODE2, ["instance-1", "instance-2"]),
            node_slice(NODE3),
        ),
        want=Want(
            filter={NODE3: (UNRESOLVABLE, "cannot allocate all claims")},
            scores={NODE: 15, NODE2: 13},
            normalized={NODE: 100, NODE2: 86},
            node=NODE,
            in_flight=(CLAIM, CLAIM2),
            claims={
                CLAIM: ((("req-1/subreq-1", DRIVER, NODE, "instance-1"),), (POD,)),
                CLAIM2: (
                    tuple(("req-1/subreq-2", DRIVER, NODE, f"instance-{i}") for i in (2, 3, 4)),
                    (POD,),
                ),
            },
        ),
    ),
    Case(
        "multiple-requests-prioritized-list-scoring",
        POD_WITH_CLAIM,
        claims=(claim(lists=((("subreq-1", CLASS, 2), ("subreq-2", CLASS, 1)),) * 2),),
        classes=(device_class(),),
        nodes=(node(NODE), node(NODE2), node(NODE3)),
        slices=(
            node_slice(NODE, [f"instance-{i}" for i in range(1, 5)]),
            node_slice(NODE2, [f"instance-{i}" for i in range(1, 4)]),
            node_slice(NODE3, ["instance-1", "instance-2"]),
        ),
        want=Want(
            scores={NODE: 16, NODE2: 15, NODE3: 14},
            normalized={NODE: 100, NODE2: 93, NODE3: 87},
            node=NODE,
            in_flight=(CLAIM,),
            claims={
                CLAIM: (
                    (
                        ("req-1/subreq-1", DRIVER, NODE, "instance-1"),
                        ("req-1/subreq-1", DRIVER, NODE, "instance-2"),
                        ("req-2/subreq-1", DRIVER, NODE, "instance-3"),
                        ("req-2/subreq-1", DRIVER, NODE, "instance-4"),
                    ),
                    (POD,),
                )
            },
        ),
    ),
]


# -- the driver -------------------------------------------------------------------------------------------------


@dataclass
class FakeHandle:
    snapshot: Snapshot
    store: DraObjects
    kube_version: KubeVersion
    written: list[ClusterEvent] = field(default_factory=list)
    now: float = 0.0

    def dra(self) -> DraObjects | None:
        return self.store

    def clock(self) -> float:
        return self.now

    def object_written(self, event: ClusterEvent) -> None:
        self.written.append(event)


@dataclass
class Got:
    """What the plugin answered, in Want's terms."""

    preenqueue: Verdict | None = None
    prefilter: Verdict | None = None
    filter: dict[str, Verdict] = field(default_factory=dict)
    postfilter: Verdict | None = None
    in_flight: tuple[str, ...] = ()
    prebind: Verdict | None = None
    claims: dict[str, ClaimState] = field(default_factory=dict)
    node: str = ""
    extended: ClaimState | str = "-"
    stamped: tuple[str, ...] | None = None
    scores: dict[str, int] = field(default_factory=dict)
    normalized: dict[str, int] = field(default_factory=dict)


def _verdict(st: Status) -> Verdict | None:
    return None if st.ok else (st.code, st.message)


def _state(store: DraObjects, name: str) -> ClaimState:
    c = store.claim(NS, name)
    assert c is not None, name
    if c.allocation is None:
        return None
    devices = tuple((r.request, r.driver, r.pool, r.device) for r in c.allocation.results)
    return devices, tuple(key.split("/", 1)[1] for key in c.reserved_for)


def _load(case: Case, tmp: Path) -> Cluster:
    """The case's objects as the simulator holds them, with what a manifest cannot say set on them."""
    path = tmp / "cluster.json"
    items = [*case.nodes, *case.classes, *case.slices, *case.claims, case.pod]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    cluster = load_manifests([str(path)])
    store = cluster.dra
    for other in case.in_flight:  # upstream SignalClaimPendingAllocation: another cycle's allocation in flight
        held = load_manifests_one(tmp, other)
        store.in_flight[held.key] = held.allocation
        store.changed(held.key)
    for name, when in case.allocated_at.items():
        made = store.claim(NS, name)
        assert made is not None
        made.allocated_at = when
    if case.extended_claim:
        made = store.claim(NS, case.extended_claim)
        assert made is not None
        made.extended = True
        store.extended_claims[f"{NS}/{POD}"] = made.key
    return cluster


def drive(case: Case, tmp: Path) -> Got:
    cluster = _load(case, tmp)
    store = cluster.dra
    version = KubeVersion(case.minor).with_gates(case.gates) if case.gates else KubeVersion(case.minor)
    handle = FakeHandle(Snapshot(cluster.nodes), store, version)
    plugin: Any = new_dynamic_resources(case.args, handle)
    target = cluster.pod(f"{NS}/{POD}")
    assert target is not None
    info = make_pod_info(target, version=version)
    got = Got()
    got.preenqueue = _verdict(plugin.pre_enqueue(info))
    if got.preenqueue is not None:
        return _finish(got, case, store)
    state = CycleState()
    snap = handle.snapshot
    pre = plugin.pre_filter(state, info, snap)
    got.prefilter = _verdict(pre)
    passed: list[str] = []
    if pre.ok or pre.code == SKIP:
        try:
            rejections = plugin.filter(state, info, snap, slice(None))
        except PluginError as exc:
            prefix = 'running "DynamicResources" filter plugin: '
            text = str(exc)
            got.filter[snap.nodes[0].name] = (ERROR, text[len(prefix) :] if text.startswith(prefix) else text)
            return _finish(got, case, store)
        rejected = np.zeros(snap.n, dtype=bool)
        for r in rejections:
            for i in np.flatnonzero(r.mask):
                got.filter[snap.nodes[int(i)].name] = (r.code, r.reason)
            rejected |= r.mask
        passed = [snap.nodes[i].name for i in range(snap.n) if not rejected[i]]
    if not passed:
        diagnosis = Diagnosis(snap.n, np.zeros(snap.n, dtype=bool))
        st = plugin.post_filter(state, info, diagnosis).status
        got.postfilter = (st.code, st.message)
        return _finish(got, case, store)
    chosen = passed[0]
    if len(passed) > 1 and hasattr(plugin, "score"):
        cols = np.array([snap.index[n] for n in passed], dtype=np.intp)
        scores = plugin.score(state, info, snap, cols)
        normalized = plugin.normalize_score(state, info, scores.copy())
        got.scores = {n: int(s) for n, s in zip(passed, scores, strict=True)}
        got.normalized = {n: int(s) for n, s in zip(passed, normalized, strict=True)}
        chosen = passed[int(np.argmax(scores))]  # the first of the best, as upstream's driver
    got.node = chosen
    reserved = plugin.reserve(state, info, chosen)
    assert reserved.ok, reserved
    got.in_flight = tuple(
        sorted(EXT_CLAIM if store.claims[k].extended else k.split("/", 1)[1] for k in store.in_flight)
    )
    if case.unreserve == "before-prebind":
        plugin.unreserve(state, info, chosen)
        return _finish(got, case, store)
    bound = plugin.pre_bind(state, info, chosen)
    for _ in range(1000):  # Wait: the scheduler asks again after the poll interval (upstream PreBind polls)
        if bound.code != Code.WAIT:
            break
        handle.now += BINDING_POLL_S
        bound = plugin.pre_bind(state, info, chosen)
    prefix = 'running PreBind plugin "DynamicResources": '
    if bound.code == ERROR and bound.message.startswith(prefix):
        bound = Status(ERROR, [bound.message[len(prefix) :]])
    got.prebind = _verdict(bound)
    got.stamped = tuple(sorted(c.name for c in store.claims.values() if c.allocated_at is not None))
    if case.unreserve == "after-prebind":
        plugin.unreserve(state, info, chosen)
    return _finish(got, case, store)


def load_manifests_one(tmp: Path, doc: dict[str, Any]) -> Any:
    path = tmp / "other.json"
    path.write_text(json.dumps(doc))
    loaded = load_manifests([str(path)]).dra
    [held] = loaded.claims.values()
    assert held.allocation is not None
    return held


def _finish(got: Got, case: Case, store: DraObjects) -> Got:
    got.claims = {name: _state(store, name) for name in case.want.claims}
    if case.want.extended != "-":
        key = store.extended_claims.get(f"{NS}/{POD}")
        got.extended = None if key is None else _state(store, key.split("/", 1)[1])
    return got


def _expected(case: Case, got: Got) -> Want:
    """The case's Want with what it leaves unchecked filled from what happened."""
    w = case.want
    return Want(
        w.preenqueue,
        w.prefilter,
        w.filter,
        w.postfilter,
        w.in_flight,
        w.prebind,
        w.claims,
        w.node or got.node,
        w.extended,
        got.stamped if w.stamped is None else w.stamped,
        w.scores,
        w.normalized,
    )


def _params() -> list[Any]:
    out = []
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


@pytest.mark.parametrize("case", _params())
def test_upstream_case(case: Case, tmp_path: Path) -> None:
    got = drive(case, tmp_path)
    want = _expected(case, got)
    assert (got.preenqueue, got.prefilter, got.filter) == (want.preenqueue, want.prefilter, want.filter)
    assert got.postfilter == want.postfilter
    assert (got.in_flight, got.prebind) == (want.in_flight, want.prebind)
    assert got.claims == want.claims
    assert (got.node, got.extended, got.stamped) == (want.node, want.extended, want.stamped)
    assert (got.scores, got.normalized) == (want.scores, want.normalized)


UPSTREAM_CASES = 94  # TestPlugin's table in v1.37.2


def test_the_table_is_accounted_for() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert not set(names) & set(SKIPPED)
    assert len(names) + len(SKIPPED) == UPSTREAM_CASES


# -- extendeddynamicresources_test.go: the claim made for a pod's DRA-backed extended resources ------------------
# Upstream's pods as st.MakePod builds them: Res adds app container con<i>, InitReq init container init-con<i>,
# SidecarReq init container sidecar-con<i> (restartPolicy Always); <i> counts the containers of that list. The
# resources a node must give through DRA are those of the case's list that its class map resolves.

GPU, GPU1, GPU_INIT = EXT, EXT + "1", EXT + "init"
CLASS_INIT_IMPLICIT = "deviceclass.resource.kubernetes.io/classInit"
Spec = tuple[tuple[str, dict[str, int]], ...]  # (container kind: app, init or sidecar; its requests)


def _pod_of(spec: Spec) -> Pod:
    apps: list[Container] = []
    inits: list[Container] = []
    for kind, asked in spec:
        if kind == "app":
            apps.append(Container(f"con{len(apps)}", requests=dict(asked)))
        else:
            name = f"{'init' if kind == 'init' else 'sidecar'}-con{len(inits)}"
            inits.append(Container(name, requests=dict(asked), restart_policy="Always" if kind == "sidecar" else ""))
    return Pod(POD, NS, containers=apps, init_containers=inits)


def _needed(resources: tuple[str, ...], classes: dict[str, str]) -> dict[str, DeviceClass]:
    return {n: DeviceClass(classes[n]) for n in resources if n in classes}


POD1: Spec = (("app", {GPU: 1, GPU1: 2}),)
POD2: Spec = (("app", {GPU: 1}), ("app", {GPU1: 2}))
POD_INIT: Spec = (("app", {GPU: 1}), ("init", {GPU_INIT: 2}))
POD_INIT2: Spec = (("app", {GPU: 1}), ("init", {GPU_INIT: 1}), ("init", {GPU_INIT: 2}))
POD_INIT3: Spec = (("app", {GPU: 1}), ("init", {GPU_INIT: 1}), ("sidecar", {GPU_INIT: 1}), ("init", {GPU_INIT: 2}))
DEV_MAP = {GPU: "class"}
DEV_MAP2 = {GPU: "class", GPU1: "class1"}
DEV_MAP_INIT = {GPU: "class", GPU_INIT: "classInit", CLASS_INIT_IMPLICIT: "classInit"}

# Test_createRequestsAndMappings_requests: name -> (pod, resources, class map, the requests as (name, class, count))
REQUEST_CASES: dict[str, tuple[Spec, tuple[str, ...], dict[str, str], list[tuple[str, str, int]]]] = {
    "nil": (POD1, (), {}, []),
    "one resource match": (POD1, (GPU,), DEV_MAP, [("container-0-request-0", "class", 1)]),
    "one resource match, one resource not match": (POD1, (GPU, GPU1), DEV_MAP, [("container-0-request-0", "class", 1)]),
    "two resources match": (
        POD1,
        (GPU, GPU1),
        DEV_MAP2,
        [("container-0-request-0", "class", 1), ("container-0-request-1", "class1", 2)],
    ),
    "two containers match": (
        POD2,
        (GPU, GPU1),
        DEV_MAP2,
        [("container-0-request-0", "class", 1), ("container-1-request-0", "class1", 2)],
    ),
    "one init container, one regular container": (
        POD_INIT,
        (GPU, GPU_INIT),
        DEV_MAP_INIT,
        [("container-0-request-0", "classInit", 2), ("container-1-request-0", "class", 1)],
    ),
    "two init containers, one regular container": (
        POD_INIT2,
        (GPU, GPU_INIT),
        DEV_MAP_INIT,
        [("container-1-request-0", "classInit", 2), ("container-2-request-0", "class", 1)],
    ),
    "three init containers, one sidecar, one regular container": (
        POD_INIT3,
        (GPU, GPU_INIT),
        DEV_MAP_INIT,
        [
            ("container-1-request-0", "classInit", 1),
            ("container-2-request-0", "classInit", 2),
            ("container-3-request-0", "class", 1),
        ],
    ),
}


@pytest.mark.parametrize("name", list(REQUEST_CASES))
def test_upstream_extended_claim_requests(name: str) -> None:
    spec, resources, classes, want = REQUEST_CASES[name]
    got = claim_requests(_pod_of(spec), _needed(resources, classes))
    shown = []
    for r in got:
        assert r.exactly is not None and r.exactly.mode == EXACT_COUNT
        shown.append((r.name, r.exactly.device_class, r.exactly.count))
    assert shown == want


# Test_createRequestsAndMappings_mappings: name -> (pod, resources, class map, (container, resource, request))
MAPPING_CASES: dict[str, tuple[Spec, tuple[str, ...], dict[str, str], list[tuple[str, str, str]]]] = {
    "one container, two requests": (
        POD1,
        (GPU, GPU1),
        DEV_MAP2,
        [("con0", GPU, "container-0-request-0"), ("con0", GPU1, "container-0-request-1")],
    ),
    "one container, one explicit and one implicit request": (
        (("init", {GPU_INIT: 1, CLASS_INIT_IMPLICIT: 2}),),
        (GPU, GPU_INIT, CLASS_INIT_IMPLICIT),
        DEV_MAP_INIT,
        [("init-con0", CLASS_INIT_IMPLICIT, "container-0-request-0"), ("init-con0", GPU_INIT, "container-0-request-1")],
    ),
    "two containers, two requests": (
        POD2,
        (GPU, GPU1),
        DEV_MAP2,
        [("con0", GPU, "container-0-request-0"), ("con1", GPU1, "container-1-request-0")],
    ),
    "one init container, one regular container, one request": (
        POD_INIT,
        (GPU, GPU_INIT),
        DEV_MAP_INIT,
        [("init-con0", GPU_INIT, "container-0-request-0"), ("con0", GPU, "container-1-request-0")],
    ),
    "three containers (two are init container), two requests": (
        POD_INIT2,
        (GPU, GPU_INIT),
        DEV_MAP_INIT,
        [
            ("init-con0", GPU_INIT, "container-1-request-0"),
            ("init-con1", GPU_INIT, "container-1-request-0"),
            ("con0", GPU, "container-2-request-0"),
        ],
    ),
    "three containers (two are init container), both explicit and implicit resources": (
        (("app", {GPU: 1}), ("init", {GPU_INIT: 1}), ("init", {CLASS_INIT_IMPLICIT: 2})),
        (GPU, GPU_INIT, CLASS_INIT_IMPLICIT),
        DEV_MAP_INIT,
        [
            ("init-con0", GPU_INIT, "container-0-request-0"),
            ("init-con1", CLASS_INIT_IMPLICIT, "container-1-request-0"),
            ("con0", GPU, "container-2-request-0"),
        ],
    ),
    "four containers (two are init container, one sidecar), three requests": (
        POD_INIT3,
        (GPU, GPU_INIT),
        DEV_MAP_INIT,
        [
            ("init-con0", GPU_INIT, "container-1-request-0"),
            ("sidecar-con1", GPU_INIT, "container-1-request-0"),
            ("init-con2", GPU_INIT, "container-2-request-0"),
            ("con0", GPU, "container-3-request-0"),
        ],
    ),
}


@pytest.mark.parametrize("name", list(MAPPING_CASES))
def test_upstream_extended_claim_request_mappings(name: str) -> None:
    spec, resources, classes, want = MAPPING_CASES[name]
    got = request_mappings(_pod_of(spec), _needed(resources, classes))
    # upstream sorts the mappings by request name, then container name
    assert sorted(got, key=lambda m: (m[2], m[0])) == want


# -- noderesources/fit_test.go: NodeResourcesFit and DRA-backed extended resources -------------------------------
# TestEnoughRequests' DRA cases: the node is upstream's makeAllocatableResources(10, 20, 32, 5, 20, 5) (cpu in
# millicores, memory and storage in bytes), holding one pod of the given requests; the DRA catalog holds one
# DeviceClass serving extended.resource.dra.io/something ("no catalog": upstream's nil draManager).

FIT_DRA = "extended.resource.dra.io/something"
FIT_A, FIT_B = "example.com/aaa", "example.com/bbb"
FIT_NODE = {
    "cpu": 10,
    "memory": 20,
    "pods": 32,
    FIT_A: 5,
    "ephemeral-storage": 20,
    "hugepages-2Mi": 5,
}
# name -> (DRAExtendedResource on, a DRA catalog, the pod's requests, the node's pod's requests, the verdict or None)
FIT_CASES: dict[str, tuple[bool, bool, dict[str, int], dict[str, int], Verdict | None]] = {
    "extended resource backed by device plugin": (True, True, {FIT_A: 1}, {}, None),
    "extended resource backed by DRA": (True, True, {"cpu": 1, "memory": 1, FIT_DRA: 1}, {}, None),
    "extended resource backed by DRA, nil draManager": (True, False, {"cpu": 1, "memory": 1, FIT_A: 1}, {}, None),
    "extended resource backed by DRA not enabled": (
        False,
        True,
        {"cpu": 1, "memory": 1, FIT_DRA: 1},
        {},
        (UNRESOLVABLE, f"Insufficient {FIT_DRA}"),
    ),
    "extended resource NOT backed by DRA": (
        True,
        True,
        {"cpu": 1, "memory": 1, FIT_B: 1},
        {},
        (UNRESOLVABLE, f"Insufficient {FIT_B}"),
    ),
    "extended resource was backed by Device Plugin (Allocatable: 0)": (True, True, {FIT_DRA: 1}, {FIT_DRA: 0}, None),
    "extended resource was backed by Device Plugin (Allocatable: 0), global cache": (
        True,
        True,
        {FIT_A: 1},
        {FIT_A: 0},
        None,
    ),
}


@dataclass
class FitHandle:
    store: DraObjects | None

    def dra(self) -> DraObjects | None:
        return self.store


def _fit_catalog() -> DraObjects:
    return DraObjects(classes={"device-class-name": DeviceClass("device-class-name", extended_resource_name=FIT_DRA)})


def _fit(handle: Any, dra_extended: bool, specs: list[ResourceSpec]) -> Fit:
    # upstream emulates 1.36 with the gate off where a case turns DRAExtendedResource off
    version = KubeVersion(37) if dra_extended else KubeVersion(36).with_gates({"DRAExtendedResource": False})
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(LEAST_ALLOCATED, specs))
    return Fit(args, handle, version)


@pytest.mark.parametrize("name", list(FIT_CASES))
def test_upstream_fit_dra_cases(name: str) -> None:
    enabled, catalog, asked, held, want = FIT_CASES[name]
    snap = Snapshot([Node("node", allocatable=dict(FIT_NODE), capacity=dict(FIT_NODE))])
    snap.add_pod(make_pod_info(Pod("existing", containers=[Container("c", dict(held))])), 0)
    plugin = _fit(FitHandle(_fit_catalog() if catalog else None), enabled, [ResourceSpec("cpu", 1)])
    pod = make_pod_info(Pod("incoming", containers=[Container("c", dict(asked))]))
    state = CycleState()
    assert plugin.pre_filter(state, pod, snap).ok
    got = [(r.code, r.reason) for r in plugin.filter(state, pod, snap, slice(None)) if r.mask.any()]
    assert got == ([] if want is None else [want])


def test_upstream_fit_scores_dra_backed_extended_resources(tmp_path: Path) -> None:
    """TestFitScore's "ScoringStrategy LeastAllocated with Extended resources" (with and without PreScore, which
    packsched does not split): the resource is counted from the class's devices, 3 on node1 and 2 on node2."""
    items = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "device-class-name"},
            "spec": {"extendedResourceName": FIT_DRA},
        },
        *(node(n) for n in ("node1", "node2")),
    ]
    for n, count in (("node1", 3), ("node2", 2)):
        made = node_slice(n, [f"device-{i}" for i in range(1, count + 1)], driver="test-driver")
        items.append(made)
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    cluster = load_manifests([str(path)])
    snap = Snapshot(cluster.nodes)
    plugin = _fit(FitHandle(cluster.dra), True, [ResourceSpec(FIT_DRA, 1)])
    pod = make_pod_info(Pod("incoming", containers=[Container("c", {FIT_DRA: 1})]))
    scores = plugin.score(CycleState(), pod, snap, np.arange(snap.n, dtype=np.intp))
    assert scores.tolist() == [66, 50]


@pytest.mark.parametrize(("enabled", "signed"), [(True, False), (False, True)])
def test_upstream_fit_sign_pod_dra_cases(enabled: bool, signed: bool) -> None:
    """TestFitSignPod's "DRA extended resource enabled - returns unschedulable" (the pod is not signed: packsched's
    None) and "DRA extended resource disabled" (signed by its requests)."""
    plugin = _fit(FitHandle(_fit_catalog() if enabled else None), enabled, [ResourceSpec("cpu", 1)])
    pod = make_pod_info(Pod("p", containers=[Container("c", {"cpu": 1000, "memory": 2000, FIT_DRA: 1})]))
    fragments = plugin.sign_pod(pod)
    assert (fragments is not None) == signed
    if fragments is not None:
        assert fragments == {SIGN_RESOURCES: sorted(pod.requests.items())}


# fit_test.go's DRA cases not ported, with the reason
FIT_SKIPPED: dict[str, str] = {
    "requested-resources-dra-in-node": "haveAnyRequestedResourcesIncreased: a queueing-hint helper packsched lacks",
    "requested-resources-dra-not-in-node": "haveAnyRequestedResourcesIncreased: a queueing-hint helper packsched lacks",
    "requested-resources-dra-zero-capacity": "haveAnyRequestedResourcesIncreased: a queueing-hint helper packsched "
    "lacks",
    "Register events with DRAExtendedResource feature enabled": "EventsToRegister's list (queueing internals)",
}


# -- PodGroupPostFilter (TestPodGroupPostFilter, v1.37.2) ----------------------------------------------------------
#
# Upstream's driver writes each unscheduled pod's state with its claims and the claims it names as unavailable,
# then calls PodGroupPostFilter once. Ours runs PreFilter for each pod of the group (it builds the state) and then
# marks the named claims unavailable, as upstream does. Upstream compares a rejecting status by its message only
# (an Unschedulable without words matches any message); the cases here check the code and the whole message.

GROUP_DONE = "deallocation and deletion of ResourceClaims completed"

GROUP_SKIPPED: dict[str, str] = {
    "disabled": "DynamicResourceAllocation off: locked on from 1.34",
    "deallocate-podgroup-level-claim": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "unreserve-podgroup-claim": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "unreserve-podgroup-multiple-unscheduled-pods": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "mixed-pod-level-and-podgroup-claims": "PodGroup-owned claims (DRAWorkloadResourceClaims)",
    "skip-deallocate-feature-disabled": "a claim reserved for a PodGroup (packsched keeps pods in reservedFor only)",
    "skip-deallocate-topology-aware-podgroup": "TopologyAwareWorkloadScheduling (packsched refuses it on)",
}


def group_pod(name: str, claim_name: str = "", requests: dict[str, str] | None = None) -> dict[str, Any]:
    """upstream groupedPodWithClaimName and its kind: a pod of the PodGroup, named ``name`` (uid ``<name>-uid``)."""
    out = pod(claim_name=claim_name, requests=requests)
    out["metadata"] |= {"name": name, "uid": f"{name}-uid"}
    out["spec"]["schedulingGroup"] = {"podGroupName": "my-pod-group"}
    return out


def reserved_for(doc: dict[str, Any], *pods: str) -> dict[str, Any]:
    doc["status"]["reservedFor"] = [{"resource": "pods", "name": p, "uid": f"{p}-uid"} for p in pods]
    return doc


@dataclass(frozen=True)
class GroupCase:
    name: str
    pods: tuple[dict[str, Any], ...]
    claims: tuple[dict[str, Any], ...] = ()
    unavailable: tuple[str, ...] = ()  # claim names, in every pod's state that has them
    classes: tuple[dict[str, Any], ...] = ()
    extended_claim: str = ""  # a claim an earlier cycle made for the first pod's extended resources
    want: Verdict = (UNSCHEDULABLE, GROUP_DONE)
    claims_after: dict[str, ClaimState | str] = field(default_factory=dict)  # "deleted": gone from the catalog


IN_USE = reserved_for(claim(alloc=allocation()), POD)  # upstream inUseClaim
STALE = claim(alloc=allocation(selector=by_name((NODE2,))))  # allocated for a node that is gone, reserved for none
GROUP_CASES: list[GroupCase] = [
    # upstream's cases, the pod named as upstream's
    GroupCase("empty", (group_pod(POD, CLAIM),), claims=(claim(),), claims_after={CLAIM: None}),
    GroupCase(
        "deallocate-pod-level-claim",
        (group_pod(POD, CLAIM),),
        claims=(IN_USE,),
        unavailable=(CLAIM,),
        claims_after={CLAIM: None},
    ),
    GroupCase(
        "delete-pod-level-extended-claim",
        (group_pod(POD, CLAIM, requests={EXT: "1"}),),
        claims=(
            claim(),
            reserved_for(
                claim(EXT_CLAIM_MADE, requests_named="container-0-request-0", alloc=allocation(result())), POD
            ),
        ),
        classes=(device_class(extended=EXT),),
        extended_claim=EXT_CLAIM_MADE,
        claims_after={CLAIM: None, EXT_CLAIM_MADE: "deleted"},
    ),
    # ours: a claim per pod, each deallocated
    GroupCase(
        "ours-each-pod-frees-one-claim",
        (group_pod("a", CLAIM), group_pod("b", CLAIM2)),
        claims=(STALE, claim(CLAIM2, alloc=allocation(selector=by_name((NODE2,))))),
        unavailable=(CLAIM, CLAIM2),
        claims_after={CLAIM: None, CLAIM2: None},
    ),
    # ours: a claim another pod holds is kept
    GroupCase(
        "ours-a-claim-reserved-for-another-pod-is-kept",
        (group_pod("a", CLAIM),),
        claims=(reserved_for(claim(alloc=allocation(selector=by_name((NODE2,)))), "other"),),
        unavailable=(CLAIM,),
        claims_after={CLAIM: (DEVICE_1, ("other",))},
    ),
    # ours: two pods share a claim no pod holds: the second writes it from the copy it read, a conflict
    GroupCase(
        "ours-a-shared-claim-written-twice-conflicts",
        (group_pod("a", CLAIM), group_pod("b", CLAIM)),
        claims=(STALE,),
        unavailable=(CLAIM,),
        want=(
            ERROR,
            f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "{CLAIM}": the object has been '
            "modified; please apply your changes to the latest version and try again",
        ),
        claims_after={CLAIM: None},
    ),
    # ours: a shared claim held by the first pod only: the second pod's copy names the first, so it leaves it
    GroupCase(
        "ours-a-shared-claim-held-by-the-first-pod-is-written-once",
        (group_pod("a", CLAIM), group_pod("b", CLAIM)),
        claims=(reserved_for(claim(alloc=allocation(selector=by_name((NODE2,)))), "a"),),
        unavailable=(CLAIM,),
        claims_after={CLAIM: None},
    ),
]


def drive_group(case: GroupCase, tmp: Path) -> tuple[Verdict, dict[str, ClaimState | str], list[ClusterEvent]]:
    path = tmp / "cluster.json"
    items = [node(NODE), *case.classes, node_slice(NODE), *case.claims, *case.pods]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    cluster = load_manifests([str(path)])
    store = cluster.dra
    first = f"{NS}/{case.pods[0]['metadata']['name']}"
    if case.extended_claim:
        made = store.claim(NS, case.extended_claim)
        assert made is not None
        made.extended = True
        made.owner_pod, made.owner_uid = first, ""
        store.extended_claims[first] = made.key
    version = KubeVersion(37)
    handle = FakeHandle(Snapshot(cluster.nodes), store, version)
    plugin: Any = new_dynamic_resources(None, handle)
    tried = []
    for doc in case.pods:
        target = cluster.pod(f"{NS}/{doc['metadata']['name']}")
        assert target is not None
        info = make_pod_info(target, version=version)
        state = CycleState()
        plugin.pre_filter(state, info, handle.snapshot)
        data = state.read(STATE_KEY)
        if data is not None:
            data.unavailable = {i for i, c in enumerate(data.claims) if c.name in case.unavailable}
        tried.append((info, state))
    st = plugin.pod_group_post_filter(tried)
    after: dict[str, ClaimState | str] = {
        name: _state(store, name) if store.claim(NS, name) is not None else "deleted" for name in case.claims_after
    }
    return (st.code, st.message), after, handle.written


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in GROUP_CASES])
def test_upstream_pod_group_post_filter_case(case: GroupCase, tmp_path: Path) -> None:
    got, after, _events = drive_group(case, tmp_path)
    assert got == case.want
    assert after == case.claims_after


def test_pod_group_post_filter_sends_one_event_per_claim_written(tmp_path: Path) -> None:
    """Each deallocation is a claim status write the queue hears (its event requeues the group's pods)."""
    case = next(c for c in GROUP_CASES if c.name == "ours-each-pod-frees-one-claim")
    _got, _after, written = drive_group(case, tmp_path)
    assert [(e.resource, e.action, getattr(e.new, "name", "")) for e in written] == [
        (RESOURCE_CLAIM, UPDATE, CLAIM),
        (RESOURCE_CLAIM, UPDATE, CLAIM2),
    ]


UPSTREAM_GROUP_CASES = 10  # TestPodGroupPostFilter's table in v1.37.2


def test_the_pod_group_table_is_accounted_for() -> None:
    ported = [c.name for c in GROUP_CASES if not c.name.startswith("ours-")]
    assert not set(ported) & set(GROUP_SKIPPED)
    assert len(ported) + len(GROUP_SKIPPED) == UPSTREAM_GROUP_CASES
