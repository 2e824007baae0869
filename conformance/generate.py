"""Seeded random scenarios in the vector format (``../shared/spec/kube-scheduler-vectors/README.md``), without
``results``: the recorder (``conformance/main.go``) fills those from the real kube-scheduler.

One generator per area; the same ``--seed`` gives the same files.

    python conformance/generate.py --out DIR [--areas resources,spread,dra,preemption,volumes] [--per-area 3] [--seed 1]
                                      [--kube 1.35]

Areas:
- ``resources``: NodeResourcesFit's scoring strategies (LeastAllocated, MostAllocated, RequestedToCapacityRatio
  with an extended resource), resource weights, NodeResourcesBalancedAllocation, plugin weights, init and sidecar
  containers, pods without requests, nodes too small, PreferNoSchedule / NoSchedule taints, preferred node affinity.
- ``spread``: PodTopologySpread (hard and soft, zone and hostname, maxSkew, minDomains, matchLabelKeys, node
  inclusion policies, nodes without the zone label) and InterPodAffinity (required and preferred affinity and
  anti-affinity, zone and hostname, matchLabelKeys), with Services and ReplicaSets for the default constraints.
- ``dra``: DynamicResources at resource.k8s.io/v1: DeviceClasses with CEL selectors, per-node ResourceSlices of
  GPUs (and NICs), ResourceClaimTemplates (ExactCount, All, firstAvailable, matchAttribute), a shared claim.
- ``preemption``: priority classes (a Never policy, a global default), nodes filled by low priorities, then pods
  that preempt, PodDisruptionBudgets with an integer or percentage minAvailable or a maxUnavailable.
- ``gangs``: kube-scheduler's own gang scheduling (GangScheduling, GenericWorkload): groups with a minCount that
  complete, wait or never complete, a group object created late or never, plain pods in between; written for one
  release by :func:`for_release` (``--kube``).
- ``quotas``: scheduler-plugins' CapacityScheduling: ElasticQuotas (min / max over cpu, memory, nvidia.com/gpu),
  pods that borrow past their namespace's min and pods that reclaim it (its preemption); recorded at 1.34 only.
- ``volumes``: VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits: static and provisioned
  WaitForFirstConsumer claims, bound and never bound Immediate claims, zonal volumes, CSINode attach limits,
  ReadWriteOncePod claims, a missing claim.
- ``coscheduling``: scheduler-plugins' Coscheduling: PodGroups whose members are created together or one at a time,
  groups that cannot complete, minResources, a missing group; every pod stays (``keep_pods``); 1.34 only.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

FORMAT = "packsched-ref-vectors/1"
SCHEDULER = "conformance"
EXT = "example.com/gpu"

Doc = dict[str, Any]


def _config(profile_extra: Doc | None = None) -> Doc:
    profile: Doc = {"schedulerName": SCHEDULER, "percentageOfNodesToScore": 100}
    profile.update(profile_extra or {})
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [profile],
    }


def _node(
    name: str, cpu: int, mem_gi: int, labels: Doc, *, pods: int = 110, gpu: int = 0, taints: list[Doc] | None = None
) -> Doc:
    cap = {"cpu": str(cpu), "memory": f"{mem_gi}Gi", "pods": str(pods), "ephemeral-storage": "100Gi"}
    if gpu:
        cap[EXT] = str(gpu)
    node: Doc = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **labels}},
        "spec": {},
        "status": {
            "capacity": dict(cap),
            "allocatable": dict(cap),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "no kubelet"}],
        },
    }
    if taints:
        node["spec"]["taints"] = taints
    return node


def _container(name: str, requests: Doc | None, limits: Doc | None = None) -> Doc:
    c: Doc = {"name": name, "image": "registry.k8s.io/pause:3.10"}
    res: Doc = {}
    if requests and EXT in requests:  # an extended resource is not overcommitted: its limit must equal its request
        limits = {**(limits or {}), EXT: requests[EXT]}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    if res:
        c["resources"] = res
    return c


def _pod(ns: str, name: str, containers: list[Doc], labels: Doc | None = None, **spec: Any) -> Doc:
    body: Doc = {"schedulerName": SCHEDULER, "terminationGracePeriodSeconds": 0, "containers": containers}
    body.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
        "spec": body,
    }


def _scenario(sid: str, seed: int, family: str, config: Doc, objects: Doc, pods: list[Doc]) -> Doc:
    return {
        "format": FORMAT,
        "id": sid,
        "seed": seed,
        "family": family,
        "profile": SCHEDULER,
        "scheduler_name": SCHEDULER,
        "scheduler_config": config,
        "objects": objects,
        "pods": pods,
    }


def _namespace(ns: str) -> Doc:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"conformance": ns}}}


# -- resources and scoring strategies ---------------------------------------------------------------------------


def _scoring_args(rng: random.Random) -> tuple[Doc, str]:
    kind = rng.choice(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", "RequestedToCapacityRatio"])
    resources = [{"name": "cpu", "weight": rng.randint(1, 3)}, {"name": "memory", "weight": rng.randint(1, 3)}]
    if rng.random() < 0.6:
        resources.append({"name": EXT, "weight": rng.randint(1, 5)})
    strategy: Doc = {"type": kind, "resources": resources}
    if kind == "RequestedToCapacityRatio":
        if rng.random() < 0.5:
            shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]  # bin packing
        else:
            mid = rng.choice([30, 50, 70])
            shape = [
                {"utilization": 0, "score": rng.randint(0, 10)},
                {"utilization": mid, "score": rng.randint(0, 10)},
                {"utilization": 100, "score": rng.randint(0, 10)},
            ]
        strategy["requestedToCapacityRatio"] = {"shape": shape}
    return {"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}, kind


def _resources_profile(rng: random.Random) -> tuple[Doc, str]:
    fit_args, kind = _scoring_args(rng)
    plugin_config = [fit_args]
    if rng.random() < 0.5:
        bal = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
        if rng.random() < 0.5:
            bal.append({"name": EXT, "weight": 1})
        plugin_config.append({"name": "NodeResourcesBalancedAllocation", "args": {"resources": bal}})
    extra: Doc = {"pluginConfig": plugin_config}
    if rng.random() < 0.5:
        extra["plugins"] = {
            "score": {
                "enabled": [
                    {"name": "NodeResourcesFit", "weight": rng.randint(1, 5)},
                    {"name": "NodeResourcesBalancedAllocation", "weight": rng.randint(1, 3)},
                ]
            }
        }
    return extra, kind


def _resource_requests(rng: random.Random, gpu_ok: bool) -> Doc | None:
    if rng.random() < 0.1:
        return None  # no requests: scored as 100m / 200Mi
    req: Doc = {}
    if rng.random() < 0.9:
        req["cpu"] = f"{rng.choice([100, 250, 500, 1000, 1500, 2000, 3000])}m"
    if rng.random() < 0.9:
        req["memory"] = f"{rng.choice([128, 256, 512, 1024, 2048, 4096, 8192])}Mi"
    if gpu_ok and rng.random() < 0.35:
        req[EXT] = str(rng.randint(1, 2))
    return req or None


def gen_resources(seed: int, sid: str) -> Doc:
    rng = random.Random(seed)
    ns = f"c{sid}"
    extra, kind = _resources_profile(rng)
    nodes = []
    for i in range(rng.randint(4, 7)):
        labels = {"pool": rng.choice(["a", "b"])}
        taints = None
        r = rng.random()
        if r < 0.15:
            taints = [{"key": "dedicated", "value": "batch", "effect": "PreferNoSchedule"}]
        elif r < 0.22:
            taints = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
        gpu = rng.choice([0, 0, 2, 4, 8])
        nodes.append(
            _node(
                f"{ns}-n{i:02d}", rng.choice([2, 4, 8, 16]), rng.choice([4, 8, 16, 32]), labels, gpu=gpu, taints=taints
            )
        )
    pods = []
    for j in range(rng.randint(10, 14)):
        main = _container("c", _resource_requests(rng, True))
        spec: Doc = {}
        r = rng.random()
        if r < 0.15:
            spec["initContainers"] = [_container("init", _resource_requests(rng, False))]
        elif r < 0.25:
            side = _container("side", {"cpu": "200m", "memory": "128Mi"})
            side["restartPolicy"] = "Always"
            spec["initContainers"] = [side]
        if rng.random() < 0.2:
            spec["affinity"] = {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": rng.randint(1, 100),
                            "preference": {
                                "matchExpressions": [
                                    {"key": "pool", "operator": "In", "values": [rng.choice(["a", "b"])]}
                                ]
                            },
                        }
                    ]
                }
            }
        if rng.random() < 0.2:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        containers = [main]
        if rng.random() < 0.15:
            containers.append(_container("c2", _resource_requests(rng, False)))
        pods.append(_pod(ns, f"p{j:03d}", containers, {"app": rng.choice(["x", "y"])}, **spec))
    objects = {"namespaces": [_namespace(ns)], "nodes": nodes}
    return _scenario(sid, seed, f"resources-{kind}", _config(extra), objects, pods)


# -- topology spread and inter-pod affinity ------------------------------------------------------------------------

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def _selector(rng: random.Random, app: str) -> Doc:
    r = rng.random()
    if r < 0.6:
        return {"matchLabels": {"app": app}}
    if r < 0.8:
        return {
            "matchExpressions": [{"key": "app", "operator": "In", "values": [app, rng.choice(["web", "db", "cache"])]}]
        }
    return {"matchExpressions": [{"key": "tier", "operator": rng.choice(["Exists", "DoesNotExist"])}]}


def _spread_constraint(rng: random.Random, app: str) -> Doc:
    c: Doc = {
        "maxSkew": rng.choice([1, 1, 2, 3]),
        "topologyKey": rng.choice([ZONE, ZONE, HOST]),
        "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
        "labelSelector": _selector(rng, app),
    }
    if c["whenUnsatisfiable"] == "DoNotSchedule" and rng.random() < 0.2:
        c["minDomains"] = rng.choice([2, 3, 4])
    if rng.random() < 0.2:
        c["matchLabelKeys"] = ["version"]
    if rng.random() < 0.15:
        c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
    if rng.random() < 0.15:
        c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
    return c


def _affinity_term(rng: random.Random, app: str, ns: str) -> Doc:
    term: Doc = {"labelSelector": _selector(rng, app), "topologyKey": rng.choice([ZONE, HOST])}
    if rng.random() < 0.15:
        term["matchLabelKeys"] = ["version"]
    if rng.random() < 0.1:
        term["namespaces"] = [ns]
    return term


def _pod_affinity(rng: random.Random, ns: str) -> Doc:
    aff: Doc = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if rng.random() < 0.35:
            part: Doc = {}
            if rng.random() < 0.5:
                part["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    _affinity_term(rng, rng.choice(["web", "db", "cache"]), ns)
                ]
            else:
                part["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {
                        "weight": rng.randint(1, 100),
                        "podAffinityTerm": _affinity_term(rng, rng.choice(["web", "db", "cache"]), ns),
                    }
                ]
            aff[kind] = part
    return aff


def gen_spread(seed: int, sid: str) -> Doc:
    rng = random.Random(seed)
    ns = f"c{sid}"
    zones = ["zone-a", "zone-b", "zone-c"][: rng.randint(2, 3)]
    nodes = []
    for i in range(rng.randint(5, 9)):
        labels: Doc = {"pool": rng.choice(["a", "b"])}
        if rng.random() < 0.9:
            labels[ZONE] = rng.choice(zones)
        taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.1 else None
        nodes.append(_node(f"{ns}-n{i:02d}", rng.choice([4, 8]), rng.choice([16, 32]), labels, taints=taints))
    extra: Doc = {}
    if rng.random() < 0.3:
        extra["pluginConfig"] = [{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": rng.choice([1, 10])}}]
    if rng.random() < 0.3:
        extra["plugins"] = {
            "score": {
                "enabled": [
                    {"name": "PodTopologySpread", "weight": rng.randint(1, 5)},
                    {"name": "InterPodAffinity", "weight": rng.randint(1, 5)},
                ]
            }
        }
    services = []
    if rng.random() < 0.6:
        services.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web", "namespace": ns},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
            }
        )
    replicasets = []
    if rng.random() < 0.4:
        replicasets.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": "db", "namespace": ns},
                "spec": {
                    "replicas": 0,
                    "selector": {"matchLabels": {"app": "db"}},
                    "template": {
                        "metadata": {"labels": {"app": "db"}},
                        "spec": {"containers": [_container("c", None)]},
                    },
                },
            }
        )
    pods = []
    for j in range(rng.randint(12, 16)):
        app = rng.choice(["web", "web", "db", "cache"])
        labels = {"app": app, "version": rng.choice(["v1", "v2"])}
        if rng.random() < 0.3:
            labels["tier"] = "front"
        spec: Doc = {}
        r = rng.random()
        if r < 0.55:
            constraints: dict[tuple[str, str], Doc] = {}
            for _ in range(rng.randint(1, 2)):
                c = _spread_constraint(rng, app)
                constraints.setdefault((c["topologyKey"], c["whenUnsatisfiable"]), c)  # the API server refuses twins
            spec["topologySpreadConstraints"] = list(constraints.values())
        aff = _pod_affinity(rng, ns)
        if aff and rng.random() < 0.7:
            spec["affinity"] = aff
        if rng.random() < 0.1:
            spec["nodeSelector"] = {"pool": rng.choice(["a", "b"])}
        req = {"cpu": f"{rng.choice([250, 500, 1000])}m", "memory": f"{rng.choice([256, 512, 1024])}Mi"}
        pods.append(_pod(ns, f"p{j:03d}", [_container("c", req)], labels, **spec))
    objects: Doc = {"namespaces": [_namespace(ns)], "nodes": nodes, "services": services, "replicasets": replicasets}
    return _scenario(sid, seed, "spread-affinity", _config(extra), objects, pods)


# -- dynamic resource allocation (resource.k8s.io/v1) ---------------------------------------------------------------

GPU = "gpu.example.com"
NIC = "nic.example.com"
NUMA = "dra.example.com/numa"  # an attribute both drivers publish, for matchAttribute across them
DRA_V1 = "resource.k8s.io/v1"


def _device(name: str, attributes: Doc, capacity: Doc | None = None) -> Doc:
    dev: Doc = {"name": name, "attributes": attributes}
    if capacity:
        dev["capacity"] = capacity
    return dev


def _slice(node: str, driver: str, devices: list[Doc]) -> Doc:
    """One ResourceSlice per node and driver, its pool named after the node (one pool per node and driver: the
    allocator takes pools in Go map order, so two pools of one driver on a node could be taken either way)."""
    return {
        "apiVersion": DRA_V1,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _device_class(name: str, *expressions: str) -> Doc:
    return {
        "apiVersion": DRA_V1,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


def _exact(device_class: str, rng: random.Random, *, count: int = 1) -> Doc:
    exact: Doc = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}
    # a request's own selector, on a GPU's model: only for a class of GPUs (on a NIC, the attribute is missing
    # and the allocator's CEL runtime error fails the whole scheduling cycle)
    if device_class.startswith("gpu") and rng.random() < 0.2:
        model = rng.choice(["A100", "H100", "L4"])
        exact["selectors"] = [{"cel": {"expression": f'device.attributes["{GPU}"].model != "{model}"'}}]
    return exact


def _claim_spec(rng: random.Random, kind: str) -> Doc:
    """A ResourceClaim's spec of one of the shapes the area draws from."""
    if kind == "one":
        requests = [{"name": "gpu", "exactly": _exact(rng.choice(["gpu", "gpu", "gpu-big"]), rng)}]
        return {"devices": {"requests": requests}}
    if kind == "pair":  # two GPUs of one NUMA node
        requests = [{"name": "gpus", "exactly": _exact("gpu", rng, count=2)}]
        return {"devices": {"requests": requests, "constraints": [{"requests": ["gpus"], "matchAttribute": NUMA}]}}
    if kind == "all":  # every H100 of the node
        requests = [{"name": "gpus", "exactly": {"deviceClassName": "gpu-h100", "allocationMode": "All"}}]
        return {"devices": {"requests": requests}}
    if kind == "prioritized":  # two H100s, else one big GPU, else any GPU
        subs = [
            {"name": "two-h100", "deviceClassName": "gpu-h100", "allocationMode": "ExactCount", "count": 2},
            {"name": "big", "deviceClassName": "gpu-big", "allocationMode": "ExactCount", "count": 1},
        ]
        if rng.random() < 0.6:
            subs.append({"name": "any", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1})
        return {"devices": {"requests": [{"name": "gpu", "firstAvailable": subs}]}}
    # "gpu-nic": a GPU and a NIC on the same NUMA node
    requests = [
        {"name": "gpu", "exactly": _exact("gpu", rng)},
        {"name": "nic", "exactly": _exact("nic", rng)},
    ]
    return {"devices": {"requests": requests, "constraints": [{"matchAttribute": NUMA}]}}


CLAIM_KINDS = ("one", "one", "pair", "all", "prioritized", "prioritized", "gpu-nic")


def gen_dra(seed: int, sid: str) -> Doc:
    rng = random.Random(seed)
    ns = f"c{sid}"
    nodes: list[Doc] = []
    slices: list[Doc] = []
    n_nodes = rng.randint(3, 6)
    with_gpus = set(rng.sample(range(n_nodes), rng.randint(max(1, n_nodes - 3), n_nodes)))
    for i in range(n_nodes):
        name = f"{ns}-n{i:02d}"
        nodes.append(_node(name, rng.choice([8, 16]), rng.choice([32, 64]), {"pool": rng.choice(["a", "b"])}))
        if i not in with_gpus:
            continue
        model = rng.choice(["A100", "H100", "H100", "L4"])
        memory = {"A100": "40Gi", "H100": "80Gi", "L4": "24Gi"}[model]
        gpus = [
            _device(
                f"gpu-{k}",
                {"model": {"string": model}, "index": {"int": k}, NUMA: {"int": k % 2}},
                {"memory": {"value": memory}},
            )
            for k in range(rng.choice([1, 2, 2, 4]))
        ]
        slices.append(_slice(name, GPU, gpus))
        if rng.random() < 0.5:
            nics = [_device(f"nic-{k}", {NUMA: {"int": k}}) for k in range(rng.randint(1, 2))]
            slices.append(_slice(name, NIC, nics))
    on = f'device.driver == "{GPU}"'
    classes = [
        _device_class("gpu", on),
        _device_class("gpu-big", on, f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) >= 0'),
        _device_class("gpu-h100", f'{on} && device.attributes["{GPU}"].model == "H100"'),
        _device_class("nic", f'device.driver == "{NIC}"'),
    ]
    kinds = sorted(set(rng.sample(CLAIM_KINDS, rng.randint(2, 4))))
    templates = [
        {
            "apiVersion": DRA_V1,
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": kind, "namespace": ns},
            "spec": {"spec": _claim_spec(rng, kind)},
        }
        for kind in kinds
    ]
    claims = []
    if rng.random() < 0.5:  # one claim that several pods share
        claims.append(
            {
                "apiVersion": DRA_V1,
                "kind": "ResourceClaim",
                "metadata": {"name": "shared", "namespace": ns},
                "spec": _claim_spec(rng, "one"),
            }
        )
    pods = []
    for j in range(rng.randint(6, 12)):
        req = {"cpu": f"{rng.choice([500, 1000, 2000, 4000])}m", "memory": f"{rng.choice([1, 2, 4])}Gi"}
        refs: list[Doc] = []
        if rng.random() < 0.8:
            refs.append({"name": "gpu", "resourceClaimTemplateName": rng.choice(kinds)})
            if rng.random() < 0.15:
                refs.append({"name": "extra", "resourceClaimTemplateName": rng.choice(kinds)})
        if claims and rng.random() < 0.25:
            refs.append({"name": "shared", "resourceClaimName": "shared"})
        main = _container("c", req)
        spec: Doc = {}
        if refs:
            spec["resourceClaims"] = refs
            main.setdefault("resources", {})["claims"] = [{"name": r["name"]} for r in refs]
        if rng.random() < 0.15:
            spec["nodeSelector"] = {"pool": rng.choice(["a", "b"])}
        pods.append(_pod(ns, f"p{j:03d}", [main], {"app": rng.choice(["train", "serve"])}, **spec))
    extra: Doc = {}
    if rng.random() < 0.3:
        extra["plugins"] = {"score": {"enabled": [{"name": "DynamicResources", "weight": rng.randint(2, 5)}]}}
    objects: Doc = {
        "namespaces": [_namespace(ns)],
        "nodes": nodes,
        "deviceclasses": classes,
        "resourceslices": slices,
        "resourceclaimtemplates": templates,
        "resourceclaims": claims,
    }
    return _scenario(sid, seed, "dra", _config(extra), objects, pods)


# -- priorities, preemption and PodDisruptionBudgets -------------------------------------------------------------

PRIORITIES = {"low": 100, "mid": 1000, "high": 10000}


def _priority_class(name: str, value: int, *, never: bool = False, default: bool = False) -> Doc:
    pc: Doc = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    if never:
        pc["preemptionPolicy"] = "Never"
    if default:
        pc["globalDefault"] = True
    return pc


def _budget_shape(rng: random.Random, pdb: Doc) -> None:
    """Half the budgets keep their integer minAvailable; the others get a percentage minAvailable or a
    maxUnavailable (an integer or a percentage). The pods they select have no controller, for which the disruption
    controller expects no pod: such a budget allows no disruption at all."""
    kind = rng.choice(["int", "int", "min%", "max", "max%"])
    if kind == "int":
        return
    del pdb["spec"]["minAvailable"]
    if kind == "min%":
        pdb["spec"]["minAvailable"] = rng.choice(["34%", "50%", "75%"])
    elif kind == "max":
        pdb["spec"]["maxUnavailable"] = rng.randint(0, 2)
    else:
        pdb["spec"]["maxUnavailable"] = rng.choice(["25%", "50%"])


def gen_preemption(seed: int, sid: str) -> Doc:
    """Small nodes filled by low and mid priority pods, then higher priority pods that only fit by preempting:
    DefaultPreemption's choice of node and victims (fewest PDB violations, lowest priorities, fewest victims, ...),
    PodDisruptionBudgets (integer minAvailable; the recorder keeps their status as the disruption controller
    would), preemptionPolicy Never, a global default class, pods that no preemption can help; some budgets with a
    percentage minAvailable or a maxUnavailable (:func:`_budget_shape`)."""
    rng = random.Random(seed)
    ns = f"c{sid}"
    nodes = [
        _node(f"{ns}-n{i:02d}", rng.choice([2, 4]), rng.choice([4, 8]), {"pool": rng.choice(["a", "b"])})
        for i in range(rng.randint(3, 5))
    ]
    classes = [_priority_class(n, v, default=(n == "low" and rng.random() < 0.3)) for n, v in PRIORITIES.items()]
    classes.append(_priority_class("high-never", PRIORITIES["high"], never=True))
    apps = ["web", "db", "batch"]
    pdbs = [
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": app, "namespace": ns},
            "spec": {"minAvailable": rng.randint(1, 3), "selector": {"matchLabels": {"app": app}}},
        }
        for app in rng.sample(apps, rng.randint(0, 2))
    ]
    shape = random.Random(seed * 7919 + 1)  # apart from rng: the rest of the scenario is what it was before
    for pdb in pdbs:
        _budget_shape(shape, pdb)
    pods = []
    n_pods = rng.randint(8, 14)
    for j in range(n_pods):
        late = j >= n_pods // 2  # the first half fills the nodes, the second half preempts
        weights = [1, 2, 4] if late else [4, 2, 0.3]
        cls = rng.choices(["low", "mid", "high"], weights=weights)[0]
        if cls == "high" and rng.random() < 0.15:
            cls = "high-never"
        spec: Doc = {}
        if not (cls == "low" and any(c.get("globalDefault") for c in classes) and rng.random() < 0.5):
            spec["priorityClassName"] = cls  # else the global default class gives it
        req = {"cpu": f"{rng.choice([500, 1000, 1500, 2000])}m", "memory": f"{rng.choice([512, 1024, 2048])}Mi"}
        if late and rng.random() < 0.1:
            req["cpu"] = "8"  # larger than any node: preemption cannot help
        if rng.random() < 0.15:
            spec["nodeSelector"] = {"pool": rng.choice(["a", "b"])}
        labels = {"app": rng.choice(apps)}
        pods.append(_pod(ns, f"p{j:03d}", [_container("c", req)], labels, **spec))
    objects: Doc = {
        "namespaces": [_namespace(ns)],
        "priorityclasses": classes,
        "nodes": nodes,
        "poddisruptionbudgets": pdbs,
    }
    return _scenario(sid, seed, "preemption", _config(), objects, pods)


# -- gangs: kube-scheduler's own gang scheduling (KEP-4671) ----------------------------------------------------

GANG_ANNOTATION = "conformance.packsched.io/gang"  # the pod's group, until for_release names it the release's way
CREATE_BEFORE = "conformance.packsched.io/create-before-pod"  # the recorder creates the object just before that pod
# per release: the feature gates, the group object (kind key of ``objects``, apiVersion, kind) and the pod's field
GANG_RELEASES: dict[str, tuple[Doc, str, str, str]] = {
    "1.35": ({"GenericWorkload": True, "GangScheduling": True}, "workloads", "scheduling.k8s.io/v1alpha1", "Workload"),
    "1.36": ({"GenericWorkload": True, "GangScheduling": True}, "podgroups", "scheduling.k8s.io/v1alpha2", "PodGroup"),
    "1.37": ({"GenericWorkload": True}, "podgroups", "scheduling.k8s.io/v1beta1", "PodGroup"),
}
WORKLOAD_POD_GROUP = "members"  # 1.35: the one pod group of each Workload


def gen_gangs(seed: int, sid: str) -> Doc:
    """Gangs contending for 3-6 small nodes of distinct sizes (so that scores rarely tie): 2-4 groups with a
    minCount of 2-4, members of differing sizes, groups that cannot complete (a member short, or a member larger
    than any node), a group whose object is created late (before a later pod) or never, a ``basic`` group now and
    then, and plain pods in between. Release-neutral: the ``gangs`` key describes the groups and each member
    carries the ``conformance.packsched.io/gang`` annotation; :func:`for_release` writes the release's objects,
    pod fields and feature gates."""
    rng = random.Random(seed)
    ns = f"c{sid}"
    sizes = rng.sample([3, 4, 5, 6, 7, 8, 10, 12], rng.randint(3, 6))
    nodes = [_node(f"{ns}-n{i:02d}", cpu, cpu * rng.choice([2, 3, 4]), {}) for i, cpu in enumerate(sizes)]
    biggest = max(sizes)
    gangs: list[Doc] = []
    units: list[list[Doc]] = []  # each group's members (in order), and each plain pod alone
    n_groups = rng.randint(2, 4)
    for g in range(n_groups):
        name = f"g{g}"
        min_count = rng.randint(2, 4)
        policy = "basic" if rng.random() < 0.12 else "gang"
        members = min_count + rng.choice([0, 0, 0, 1, -1])  # -1: a member short, the gang cannot complete
        gangs.append({"name": name, "policy": policy, "minCount": min_count, "arrival": "start"})
        big_one = rng.random() < 0.15  # a member larger than any node: the gang cannot complete
        group = []
        for m in range(max(members, 1)):
            cpu = rng.choice([500, 750, 1000, 1500, 2000, 2500, 3000])
            if big_one and m == members - 1:
                cpu = (biggest + 1) * 1000
            req = {"cpu": f"{cpu}m", "memory": f"{rng.choice([256, 512, 1024, 1536, 2048])}Mi"}
            pod = _pod(ns, f"{name}-m{m}", [_container("c", req)], {"group": name})
            pod["metadata"]["annotations"] = {GANG_ANNOTATION: name}
            group.append(pod)
        units.append(group)
    for j in range(rng.randint(2, 6)):
        cpu = rng.choice([250, 500, 1000, 2000, 3000, 4000])
        req = {"cpu": f"{cpu}m", "memory": f"{rng.choice([256, 512, 1024, 2048])}Mi"}
        units.append([_pod(ns, f"plain-{j}", [_container("c", req)], {"app": "plain"})])
    # interleave: a unit's pods keep their order, units mix
    pods: list[Doc] = []
    queues = [list(u) for u in units]
    while queues:
        q = rng.choice(queues)
        pods.append(q.pop(0))
        if not q:
            queues.remove(q)
    # one group's object comes late (just before a later pod) or never
    late = rng.choice(gangs) if rng.random() < 0.6 else None
    if late is not None:
        first = next(
            i for i, p in enumerate(pods) if p["metadata"].get("annotations", {}).get(GANG_ANNOTATION) == late["name"]
        )
        if rng.random() < 0.25 or first + 1 >= len(pods):
            late["arrival"] = "never"
        else:
            late["arrival"] = rng.randint(first + 1, len(pods) - 1)
    objects: Doc = {"namespaces": [_namespace(ns)], "nodes": nodes}
    doc = _scenario(sid, seed, "gangs", _config(), objects, pods)
    doc["gangs"] = gangs
    return doc


def _gangs_for_release(doc: Doc, kube: str) -> Doc:
    """A scenario made for kube-scheduler ``kube`` (1.35, 1.36, 1.37): a ``gangs`` scenario gets the release's
    group objects (1.35: a Workload with one pod group; 1.36: a v1alpha2 PodGroup; 1.37: a v1beta1 PodGroup), the
    pods' reference (1.35 ``spec.workloadRef``, from 1.36 ``spec.schedulingGroup``) and ``feature_gates``; other
    scenarios are left as they are."""
    if "gangs" not in doc:
        return doc
    gates, kind_key, api_version, kind = GANG_RELEASES[kube]
    ns = doc["objects"]["namespaces"][0]["metadata"]["name"]
    objs = []
    for g in doc["gangs"]:
        if g["arrival"] == "never":
            continue
        policy: Doc = {"gang": {"minCount": g["minCount"]}} if g["policy"] == "gang" else {"basic": {}}
        meta: Doc = {"name": g["name"], "namespace": ns}
        if isinstance(g["arrival"], int):
            meta["annotations"] = {CREATE_BEFORE: str(g["arrival"])}
        if kind == "Workload":
            spec: Doc = {"podGroups": [{"name": WORKLOAD_POD_GROUP, "policy": policy}]}
        else:
            spec = {"schedulingPolicy": policy}
        objs.append({"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec})
    doc["objects"][kind_key] = objs
    for pod in doc["pods"]:
        group = pod["metadata"].get("annotations", {}).get(GANG_ANNOTATION)
        if group is None:
            continue
        if kind == "Workload":
            pod["spec"]["workloadRef"] = {"name": group, "podGroup": WORKLOAD_POD_GROUP}
        else:
            pod["spec"]["schedulingGroup"] = {"podGroupName": group}
    doc["feature_gates"] = dict(gates)
    doc["kube"] = kube
    return doc


# -- quotas: scheduler-plugins' CapacityScheduling ------------------------------------------------------------

NVIDIA_GPU = "nvidia.com/gpu"

# CapacityScheduling as scheduler-plugins' manifests configure it: every extension point it has (multiPoint), and
# the only PostFilter (its preemption replaces DefaultPreemption's).
CAPACITY_SCHEDULING = {
    "plugins": {
        "multiPoint": {"enabled": [{"name": "CapacityScheduling"}]},
        "postFilter": {"enabled": [{"name": "CapacityScheduling"}], "disabled": [{"name": "*"}]},
    }
}


def _elastic_quota(ns: str, min_: Doc, max_: Doc) -> Doc:
    spec: Doc = {}
    if min_:
        spec["min"] = min_
    if max_:
        spec["max"] = max_
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": f"{ns}-quota", "namespace": ns},
        "spec": spec,
    }


def _quota_bounds(rng: random.Random, share: float, cpu: int, mem_gi: int, gpus: int) -> tuple[Doc, Doc]:
    """One namespace's min (half to all of ``share`` of the cluster; a resource left out now and then: min 0)
    and max (min to twice min, GPUs left out now and then: unbounded; sometimes no max at all). A max without
    cpu or memory would bound them at 0 (the plugin compares those always): the generator always names them."""
    min_: Doc = {}
    max_: Doc = {}
    for name, total, unit in (("cpu", cpu, ""), ("memory", mem_gi, "Gi"), (NVIDIA_GPU, gpus, "")):
        if name == NVIDIA_GPU and not gpus:
            continue
        low = max(1, round(total * share * rng.choice([0.5, 0.75, 1.0])))
        if rng.random() < 0.9:
            min_[name] = f"{low}{unit}"
        if name != NVIDIA_GPU or rng.random() < 0.7:
            max_[name] = f"{max(low, round(low * rng.choice([1.0, 1.5, 2.0])))}{unit}"
    return min_, (max_ if rng.random() < 0.85 else {})


def gen_quotas(seed: int, sid: str) -> Doc:
    """scheduler-plugins' CapacityScheduling on 2-3 small nodes (some with nvidia.com/gpu): 2-3 namespaces with
    ElasticQuotas (min and max over cpu, memory and GPUs, the mins half to all of the cluster's capacity),
    sometimes a namespace without one; the first pods mostly borrow beyond their namespace's min, the later ones come to
    namespaces still under their min (reclaiming what others borrowed: CapacityScheduling's preemption) or ask past
    a max; priorities low, mid and high."""
    rng = random.Random(seed)
    nodes = []
    for i in range(rng.randint(2, 3)):
        gpu = rng.choice([0, 2, 4]) if i else rng.choice([2, 4])
        nodes.append(_node(f"q{sid}-n{i:02d}", rng.choice([4, 6]), rng.choice([8, 12]), {}, gpu=gpu))
        if gpu:  # nvidia.com/gpu, not example.com/gpu
            for field in ("capacity", "allocatable"):
                nodes[-1]["status"][field][NVIDIA_GPU] = nodes[-1]["status"][field].pop(EXT)
    cpu = sum(int(n["status"]["allocatable"]["cpu"]) for n in nodes)
    mem = sum(int(n["status"]["allocatable"]["memory"][:-2]) for n in nodes)
    gpus = sum(int(n["status"]["allocatable"].get(NVIDIA_GPU, 0)) for n in nodes)
    names = [f"q{sid}-{t}" for t in ("a", "b", "c")[: rng.randint(2, 3)]]
    quotas = [_elastic_quota(ns, *_quota_bounds(rng, 1 / len(names), cpu, mem, gpus)) for ns in names]
    spaces = list(names)
    if rng.random() < 0.3:
        spaces.append(f"q{sid}-free")  # no ElasticQuota: CapacityScheduling leaves its pods alone
    classes = [_priority_class(n, v) for n, v in PRIORITIES.items()]
    borrowers = rng.sample(names, rng.randint(1, len(names) - 1))
    pods = []
    n_pods = rng.randint(8, 14)
    for j in range(n_pods):
        late = j >= n_pods // 2
        if rng.random() < 0.15:
            ns = rng.choice(spaces)  # anyone: past a max, or a namespace without a quota
        else:
            ns = rng.choice([n for n in names if n not in borrowers] if late else borrowers)
        cls = rng.choices(["low", "mid", "high"], weights=[1, 2, 3] if late else [4, 2, 1])[0]
        req: Doc = {"cpu": f"{rng.choice([1000, 1500, 2000, 3000])}m", "memory": f"{rng.choice([1, 2, 3, 4])}Gi"}
        if gpus and rng.random() < 0.4:
            req[NVIDIA_GPU] = str(rng.choice([1, 1, 2]))
        if rng.random() < 0.08:
            req["cpu"] = str(cpu)  # past any max (or any node)
        containers = [_container("c", req, {NVIDIA_GPU: req[NVIDIA_GPU]} if NVIDIA_GPU in req else None)]
        pods.append(_pod(ns, f"p{j:03d}", containers, {"app": ns}, priorityClassName=cls))
    objects: Doc = {
        "namespaces": [_namespace(ns) for ns in spaces],
        "priorityclasses": classes,
        "nodes": nodes,
        "elasticquotas": quotas,
    }
    return _scenario(sid, seed, "quotas", _config(CAPACITY_SCHEDULING), objects, pods)


# -- volumes: VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits ------------------------------------

CSI_DRIVER = "csi.example.com"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
ZONES = ("zone-a", "zone-b", "zone-c")
RWO, RWOP, RWX = "ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"


def _storage_class(name: str, provisioner: str, mode: str, zones: list[str] | None = None) -> Doc:
    sc: Doc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
        "reclaimPolicy": "Delete",
    }
    if zones:
        sc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": sorted(zones)}]}]
    return sc


def _pv(name: str, gi: int, cls: str, modes: list[str], *, host: str = "", zone: str = "", labels: bool = False) -> Doc:
    """A static volume of the CSI driver (so that NodeVolumeLimits counts it), Available: pinned to a node by
    hostname, or to a zone by node affinity or only by the zone label VolumeZone reads (``labels``)."""
    pv: Doc = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": {}},
        "spec": {
            "capacity": {"storage": f"{gi}Gi"},
            "accessModes": modes,
            "storageClassName": cls,
            "persistentVolumeReclaimPolicy": "Retain",
            "volumeMode": "Filesystem",
            "csi": {"driver": CSI_DRIVER, "volumeHandle": f"h-{name}"},
        },
        "status": {"phase": "Available"},
    }
    key, value = (HOST, host) if host else (ZONE, zone)
    if labels:
        pv["metadata"]["labels"][ZONE] = zone
    else:
        term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
        pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
    return pv


def _pvc(ns: str, name: str, gi: int, cls: str, modes: list[str]) -> Doc:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}"},
        "spec": {
            "accessModes": modes,
            "resources": {"requests": {"storage": f"{gi}Gi"}},
            "storageClassName": cls,
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Pending"},
    }


def _bind(pvc: Doc, pv: Doc) -> None:
    """``pvc`` and ``pv`` as the PersistentVolume controller leaves a binding: claimRef, volumeName, the
    bind-completed annotation, phases Bound."""
    meta = pvc["metadata"]
    pv["spec"]["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": meta["namespace"],
        "name": meta["name"],
        "uid": meta["uid"],
    }
    pv["status"] = {"phase": "Bound"}
    pvc["spec"]["volumeName"] = pv["metadata"]["name"]
    meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
    pvc["status"] = {
        "phase": "Bound",
        "accessModes": pv["spec"]["accessModes"],
        "capacity": {"storage": pv["spec"]["capacity"]["storage"]},
    }


def _volume_nodes(rng: random.Random, ns: str, zones: list[str]) -> tuple[list[Doc], list[Doc]]:
    """3-6 nodes over the zones, most with a CSINode for the driver (an attach limit of 1-4, or none)."""
    nodes, csinodes = [], []
    for i in range(rng.randint(3, 6)):
        name = f"{ns}-n{i:02d}"
        nodes.append(_node(name, rng.choice([4, 8]), rng.choice([8, 16]), {ZONE: zones[i % len(zones)]}))
        if rng.random() < 0.9:
            driver: Doc = {"name": CSI_DRIVER, "nodeID": name, "topologyKeys": [ZONE]}
            if rng.random() < 0.8:
                driver["allocatable"] = {"count": rng.randint(1, 4)}
            csinodes.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSINode",
                    "metadata": {"name": name},
                    "spec": {"drivers": [driver]},
                }
            )
    return nodes, csinodes


def _local_volumes(rng: random.Random, nodes: list[Doc]) -> list[Doc]:
    """Static volumes of the ``local`` class pinned by hostname to some nodes, 1-2 each, of distinct sizes (the
    smallest volume that fits a claim is then one volume, not a coin toss between equal ones)."""
    sizes = rng.sample(range(5, 101, 5), 12)
    pvs: list[Doc] = []
    for node in rng.sample(nodes, rng.randint(2, len(nodes))):
        for _ in range(min(rng.randint(1, 2), len(sizes))):
            modes = [RWOP] if rng.random() < 0.25 else [RWO]
            pvs.append(_pv(f"local-{len(pvs)}", sizes.pop(), "local", modes, host=node["metadata"]["name"]))
    return pvs


class _Claims:
    """The claims of a volumes scenario, and the choice of each pod's: new or reused claims of the two
    WaitForFirstConsumer classes, the bound Immediate ones, the never bound one, a missing one."""

    def __init__(self, rng: random.Random, ns: str, zones: list[str]) -> None:
        self.rng, self.ns = rng, ns
        self.claims: list[Doc] = []
        self.volumes: list[Doc] = []
        self.shared: list[str] = []
        self.used: dict[str, list[str]] = {"local": [], "fast": []}
        for k in range(rng.randint(1, 3)):
            modes = rng.choice([[RWO], [RWX], [RWOP]])
            gi = rng.choice([10, 20, 50])
            pv = _pv(f"zonal-{k}", gi, "standard", modes, zone=rng.choice(zones), labels=rng.random() < 0.5)
            pvc = _pvc(ns, f"shared-{k}", min(gi, 10), "standard", modes)
            _bind(pvc, pv)
            self.volumes.append(pv)
            self.claims.append(pvc)
            self.shared.append(pvc["metadata"]["name"])
        self.pending = rng.random() < 0.5
        if self.pending:
            self.claims.append(_pvc(ns, "pending-0", 5, "standard", [RWO]))

    def _new(self, kind: str, sizes: set[int]) -> str:
        gi = self.rng.choice([s for s in range(5, 61, 5) if s not in sizes])
        sizes.add(gi)  # a pod's new claims of one class differ in size: one order to bind them in
        modes = [RWOP] if self.rng.random() < 0.2 else [RWO]
        name = f"{kind}-{len(self.claims)}"
        self.claims.append(_pvc(self.ns, name, gi, kind, modes))
        self.used[kind].append(name)
        return name

    def for_pod(self) -> list[str]:
        rng = self.rng
        names: list[str] = []
        sizes: set[int] = set()
        for _ in range(rng.choices([0, 1, 2, 3], weights=[1, 4, 3, 1])[0]):
            kind = rng.choices(["local", "fast", "shared", "pending", "missing"], weights=[5, 4, 3, 1, 0.5])[0]
            if kind in self.used:  # reused: bound by now (or refused to its first pod)
                name = (
                    rng.choice(self.used[kind]) if self.used[kind] and rng.random() < 0.25 else self._new(kind, sizes)
                )
            elif kind == "shared":
                name = rng.choice(self.shared)
            elif kind == "pending" and self.pending:
                name = "pending-0"
            elif kind == "missing":
                name = "missing-0"
            else:
                continue
            if name not in names:
                names.append(name)
        return names


def gen_volumes(seed: int, sid: str) -> Doc:
    """Pods with PersistentVolumeClaims on 3-6 nodes over 2-3 zones, each node with a CSINode for one CSI driver
    (an attach limit of 1-4, or none): a WaitForFirstConsumer class of static volumes pinned to nodes by hostname,
    a WaitForFirstConsumer class the driver provisions (sometimes limited to some zones by allowedTopologies), an
    Immediate class whose claims are bound already to zonal volumes (node affinity, or only the zone label
    VolumeZone reads) or never bound (no volume, no provisioner). Pods take 0-3 claims: new or reused ones of each
    class (ReadWriteOncePod among them: a second user is refused), a claim that does not exist now and then, a
    zone nodeSelector now and then."""
    rng = random.Random(seed)
    ns = f"c{sid}"
    zones = list(ZONES[: rng.randint(2, 3)])
    nodes, csinodes = _volume_nodes(rng, ns, zones)
    fast_zones = rng.sample(zones, len(zones) - 1) if rng.random() < 0.4 else None
    classes = [
        _storage_class("local", NO_PROVISIONER, "WaitForFirstConsumer"),
        _storage_class("fast", CSI_DRIVER, "WaitForFirstConsumer", fast_zones),
        _storage_class("standard", NO_PROVISIONER, "Immediate"),
    ]
    pvs = _local_volumes(rng, nodes)
    claims = _Claims(rng, ns, zones)
    pods = []
    for j in range(rng.randint(8, 14)):
        names = claims.for_pod()
        req = {"cpu": f"{rng.choice([250, 500, 1000])}m", "memory": f"{rng.choice([256, 512, 1024])}Mi"}
        container = _container("c", req)
        spec: Doc = {}
        if names:
            spec["volumes"] = [
                {"name": f"v{v}", "persistentVolumeClaim": {"claimName": c}} for v, c in enumerate(names)
            ]
            container["volumeMounts"] = [{"name": f"v{v}", "mountPath": f"/data/{v}"} for v in range(len(names))]
        if rng.random() < 0.15:
            spec["nodeSelector"] = {ZONE: rng.choice(zones)}
        pods.append(_pod(ns, f"p{j:03d}", [container], {"app": "vol"}, **spec))
    objects: Doc = {
        "namespaces": [_namespace(ns)],
        "storageclasses": classes,
        "csinodes": csinodes,
        "nodes": nodes,
        "persistentvolumes": pvs + claims.volumes,
        "persistentvolumeclaims": claims.claims,
    }
    return _scenario(sid, seed, "volumes", _config(), objects, pods)


# -- coscheduling: scheduler-plugins' Coscheduling (PodGroups of scheduling.x-k8s.io) ----------------------------

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
WITH_PREVIOUS = "conformance.packsched.io/with-previous"  # created together with the pod before it (a Job's pods)
# scheduler-plugins' manifests/coscheduling/scheduler-config.yaml, with a Permit wait longer than a replayed run
# (tests/vectors/gang_cases.py spaces the pods 11 s apart: at most 26 pods stay within 300 s)
COSCHEDULING = {
    "plugins": {
        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
    },
    "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 300}}],
}


def _pod_group(ns: str, name: str, min_member: int, min_resources: Doc | None) -> Doc:
    spec: Doc = {"minMember": min_member}
    if min_resources:
        spec["minResources"] = min_resources
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def _cosched_units(rng: random.Random, ns: str, biggest: int, cluster_cpu: int) -> tuple[list[Doc], list[list[Doc]]]:
    """2-4 PodGroups (minMember 2-4; minResources now and then, sometimes more cpu than the cluster has) and their
    members (a member short now and then, or one larger than any node), in order; the members after the first of a
    group created together carry ``WITH_PREVIOUS``."""
    groups: list[Doc] = []
    units: list[list[Doc]] = []
    for g in range(rng.randint(2, 4)):
        name = f"g{g}"
        min_member = rng.randint(2, 4)
        min_resources = None
        if rng.random() < 0.25:
            min_resources = {"cpu": str(rng.choice([min_member, cluster_cpu + 1]))}
        groups.append(_pod_group(ns, name, min_member, min_resources))
        members = max(min_member + rng.choice([0, 0, 0, 1, -1]), 1)
        big_one = rng.random() < 0.15
        pods = []
        for m in range(members):
            cpu = rng.choice([500, 750, 1000, 1500, 2000, 2500, 3000])
            if big_one and m == members - 1:
                cpu = (biggest + 1) * 1000
            req = {"cpu": f"{cpu}m", "memory": f"{rng.choice([256, 512, 1024, 1536, 2048])}Mi"}
            pods.append(_pod(ns, f"{name}-m{m}", [_container("c", req)], {POD_GROUP_LABEL: name}))
        if rng.random() < 0.5:  # created together, as a Job's controller creates them
            for pod in pods[1:]:
                pod["metadata"]["annotations"] = {WITH_PREVIOUS: "true"}
        units.append(pods)
    return groups, units


def gen_coscheduling(seed: int, sid: str) -> Doc:
    """scheduler-plugins' Coscheduling as its manifests configure it, on 3-6 nodes of distinct sizes: 2-4 PodGroups
    whose members are created together or one at a time (PreFilter refuses a member while fewer than minMember
    exist, Permit holds the placed ones until minMember are), groups that cannot complete (a member short, a member
    larger than any node: PostFilter's rejection of the waiting ones), minResources now and then, a pod naming a
    group that does not exist now and then, and 2-5 pods of no group. Every pod stays (``keep_pods``): the recorder
    records each pod's final state, as for gangs. Equal priorities."""
    rng = random.Random(seed)
    ns = f"c{sid}"
    sizes = rng.sample([3, 4, 5, 6, 7, 8, 10, 12], rng.randint(3, 6))
    nodes = [_node(f"{ns}-n{i:02d}", cpu, cpu * rng.choice([2, 3, 4]), {}) for i, cpu in enumerate(sizes)]
    groups, units = _cosched_units(rng, ns, max(sizes), sum(sizes))
    for j in range(rng.randint(2, 5)):
        cpu = rng.choice([250, 500, 1000, 2000, 3000])
        req = {"cpu": f"{cpu}m", "memory": f"{rng.choice([256, 512, 1024, 2048])}Mi"}
        labels = {"app": "plain"}
        if rng.random() < 0.15:
            labels[POD_GROUP_LABEL] = "ghost"  # no such PodGroup: Permit refuses it
        units.append([_pod(ns, f"plain-{j}", [_container("c", req)], labels)])
    pods: list[Doc] = []
    queues = [list(u) for u in units]
    while queues:  # a group created together stays together; the others' members mix, each group in order
        q = rng.choice(queues)
        if WITH_PREVIOUS in q[-1]["metadata"].get("annotations", {}):
            pods += q
            q.clear()
        else:
            pods.append(q.pop(0))
        if not q:
            queues.remove(q)
    objects: Doc = {"namespaces": [_namespace(ns)], "nodes": nodes, "podgroups": groups}
    doc = _scenario(sid, seed, "coscheduling", _config(COSCHEDULING), objects, pods)
    doc["keep_pods"] = True
    return doc


GENERATORS: dict[str, Callable[[int, str], Doc]] = {
    "resources": gen_resources,
    "spread": gen_spread,
    "dra": gen_dra,
    "preemption": gen_preemption,
    "gangs": gen_gangs,
    "quotas": gen_quotas,
    "volumes": gen_volumes,
    "coscheduling": gen_coscheduling,
}

# Areas that need plugins built into some releases' recorders only (conformance/registry_1_34.go): scheduler-plugins
# v0.34.7 pairs with kube-scheduler 1.34.
RELEASES_OF: dict[str, tuple[str, ...]] = {
    "quotas": ("1.34",),
    "coscheduling": ("1.34",),
    "gangs": tuple(GANG_RELEASES),
}
RELEASE_NAMES = ("1.34", *GANG_RELEASES)  # the releases scenarios can be written for


def scenario(area: str, seed: int, k: int) -> tuple[str, Doc]:
    """The ``k``-th scenario of ``area`` for ``seed``: its file name and its document."""
    sid = f"{area[:3]}{seed:02d}{k:02d}"
    return f"{area}-{sid}.json", GENERATORS[area](seed * 1000 + k, sid)


def for_release(doc: Doc, kube: str | None) -> Doc:
    """``doc`` as release ``kube`` accepts it (None: unchanged). A ``gangs`` scenario gets the release's group
    objects, pod fields and feature gates (:func:`_gangs_for_release`). 1.34's DynamicResources has no Score, so a
    profile that raises its score weight (gen_dra) would be refused: that entry goes (the rest is the same
    scenario as other releases get)."""
    if kube is None:
        return doc
    if "gangs" in doc:
        doc = _gangs_for_release(doc, kube)
    if kube != "1.34":
        return doc
    for profile in doc["scheduler_config"].get("profiles", []):
        score = profile.get("plugins", {}).get("score", {})
        if "enabled" in score:
            score["enabled"] = [p for p in score["enabled"] if p["name"] != "DynamicResources"]
            if not score["enabled"]:
                del score["enabled"]
        if "score" in profile.get("plugins", {}) and not score:
            del profile["plugins"]["score"]
        if "plugins" in profile and not profile["plugins"]:
            del profile["plugins"]
    return doc


def dump(doc: Doc) -> str:
    return json.dumps(doc, indent=1) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--areas", default=",".join(GENERATORS))
    ap.add_argument("--per-area", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--kube", default="1.35", choices=sorted(RELEASE_NAMES), help="the release the scenarios are written for"
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for area in args.areas.split(","):
        for k in range(args.per_area):
            name, doc = scenario(area, args.seed, k)
            (args.out / name).write_text(dump(for_release(doc, args.kube)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
