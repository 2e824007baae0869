"""Anonymising a cluster snapshot: names, namespaces, label values and images replaced by stable hashes, so that a
snapshot can leave the cluster's owner without saying what runs there, and still schedule the same way.

One function (:func:`hashed`) maps every string that identifies something: the same string always gives the same
hash, wherever it occurs. So a label value and the selector values that match it stay equal, a pod's
``spec.nodeName`` stays the name of its node, a claim keeps its volume and class, an owner reference its owner.
Label *keys* are kept (the scheduler gives some of them meaning: ``kubernetes.io/hostname``,
``topology.kubernetes.io/zone``), and so are amounts, taints' keys and effects, priorities and everything the
scheduler computes with. Annotations are dropped except those the scheduler or packsched reads. Hashes are
unsalted SHA-256 prefixes: stable across runs and snapshots, but a guessed name can be checked against them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from packsched.api.schema import PV_SPEC_NOT_SOURCE

Obj = dict[str, Any]

# Annotations packsched reads (the rest may carry anything: they are dropped); those whose value names an object
# are hashed like names.
_KEEP_ANNOTATION_PREFIXES = ("packsched.io/", "alibabacloud.com/")
_KEEP_ANNOTATIONS = {
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
}
_NAME_ANNOTATIONS = {"volume.beta.kubernetes.io/storage-class", "volume.kubernetes.io/selected-node"}
# Names that mean something to Kubernetes itself and are kept as they are.
_KEPT_NAMES = {
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "system-cluster-critical",
    "system-node-critical",
}
# Selector operators whose values are label values.
_VALUE_OPERATORS = {"In", "NotIn"}
# A container's fields the scheduler reads.
_CONTAINER_FIELDS = {"name", "image", "resources", "ports", "restartPolicy", "resizePolicy"}
# Fields of a volume source that carry no identity (kept as they are); every other string is hashed.
_KEPT_SOURCE_FIELDS = {"driver", "fsType", "readOnly", "type", "partition", "kind", "medium", "sizeLimit", "lun"}
# PersistentVolume spec fields that are not the volume source.
_PV_FIELDS = frozenset(PV_SPEC_NOT_SOURCE)
# Node fields that locate or identify the machine and mean nothing to the scheduler.
_NODE_SPEC_DROPPED = ("providerID", "externalID", "podCIDR", "podCIDRs", "configSource")
_NODE_STATUS_DROPPED = ("addresses", "nodeInfo", "daemonEndpoints", "config", "volumesAttached", "volumesInUse")
# Service fields that locate it (addresses, DNS names); the scheduler reads its selector alone.
_SERVICE_SPEC_DROPPED = (
    "clusterIP",
    "clusterIPs",
    "externalIPs",
    "loadBalancerIP",
    "loadBalancerSourceRanges",
    "externalName",
)


def hashed(value: str) -> str:
    """The stable stand-in for ``value``: a letter and 12 hex digits (a valid name, label value and DNS label)."""
    if value == "" or value in _KEPT_NAMES:
        return value
    return "a" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]


def _image(value: str) -> str:
    """Images are hashed after upstream's normalisation (``:latest`` where no tag is given), so that a pod's image
    and the same image in a node's ``status.images`` still match."""
    if value.rfind(":") <= value.rfind("/"):
        value += ":latest"
    return hashed(value) + ":latest"


# Labels whose value the API server reads (a namespace granting admin access to devices): kept as they are.
_KEEP_LABEL_VALUES = {"resource.kubernetes.io/admin-access"}


def _labels(labels: Any) -> Any:
    if not isinstance(labels, dict):
        return labels
    return {k: hashed(v) if isinstance(v, str) and k not in _KEEP_LABEL_VALUES else v for k, v in labels.items()}


def _expressions(exprs: Any, values: Callable[[str], str] = hashed) -> Any:
    if not isinstance(exprs, list):
        return exprs
    out = []
    for e in exprs:
        if isinstance(e, dict) and e.get("operator") in _VALUE_OPERATORS and isinstance(e.get("values"), list):
            e = dict(e, values=[values(v) if isinstance(v, str) else v for v in e["values"]])
        out.append(e)
    return out


def _selector(sel: Any) -> Any:
    """A LabelSelector: matchLabels and In/NotIn values hashed."""
    if not isinstance(sel, dict):
        return sel
    out = dict(sel)
    if "matchLabels" in out:
        out["matchLabels"] = _labels(out["matchLabels"])
    if "matchExpressions" in out:
        out["matchExpressions"] = _expressions(out["matchExpressions"])
    return out


def _node_selector_terms(terms: Any) -> Any:
    """NodeSelectorTerms: label values hashed; ``matchFields`` on metadata.name hold node names, hashed too."""
    if not isinstance(terms, list):
        return terms
    out = []
    for t in terms:
        if isinstance(t, dict):
            t = dict(t)
            if "matchExpressions" in t:
                t["matchExpressions"] = _expressions(t["matchExpressions"])
            if "matchFields" in t:
                t["matchFields"] = _expressions(t["matchFields"])
        out.append(t)
    return out


def _node_affinity(na: Any) -> Any:
    if not isinstance(na, dict):
        return na
    out = dict(na)
    req = out.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, dict) and "nodeSelectorTerms" in req:
        out["requiredDuringSchedulingIgnoredDuringExecution"] = dict(
            req, nodeSelectorTerms=_node_selector_terms(req["nodeSelectorTerms"])
        )
    pref = out.get("preferredDuringSchedulingIgnoredDuringExecution")
    if isinstance(pref, list):
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            dict(p, preference=_node_selector_terms([p.get("preference")])[0]) if isinstance(p, dict) else p
            for p in pref
        ]
    return out


def _pod_term(term: Any) -> Any:
    if not isinstance(term, dict):
        return term
    out = dict(term)
    for key in ("labelSelector", "namespaceSelector"):
        if key in out:
            out[key] = _selector(out[key])
    if isinstance(out.get("namespaces"), list):
        out["namespaces"] = [hashed(n) if isinstance(n, str) else n for n in out["namespaces"]]
    return out


def _pod_affinity(pa: Any) -> Any:
    if not isinstance(pa, dict):
        return pa
    out = dict(pa)
    req = out.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, list):
        out["requiredDuringSchedulingIgnoredDuringExecution"] = [_pod_term(t) for t in req]
    pref = out.get("preferredDuringSchedulingIgnoredDuringExecution")
    if isinstance(pref, list):
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            dict(p, podAffinityTerm=_pod_term(p.get("podAffinityTerm"))) if isinstance(p, dict) else p for p in pref
        ]
    return out


def _metadata(meta: Any) -> Any:
    if not isinstance(meta, dict):
        return meta
    out = dict(meta)
    for key in ("name", "namespace"):
        if isinstance(out.get(key), str):
            out[key] = hashed(out[key])
    out.pop("generateName", None)
    if "labels" in out:
        out["labels"] = _labels(out["labels"])
    annotations = out.pop("annotations", None)
    if isinstance(annotations, dict):
        kept = {}
        for k, v in annotations.items():
            if k in _NAME_ANNOTATIONS and isinstance(v, str):
                kept[k] = hashed(v)
            elif k in _KEEP_ANNOTATIONS or k.startswith(_KEEP_ANNOTATION_PREFIXES):
                kept[k] = v
        if kept:
            out["annotations"] = kept
    refs = out.get("ownerReferences")
    if isinstance(refs, list):
        out["ownerReferences"] = [
            dict(r, name=hashed(r["name"])) if isinstance(r, dict) and isinstance(r.get("name"), str) else r
            for r in refs
        ]
    return out


def _pod_spec(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    for key in ("nodeName", "priorityClassName", "serviceAccountName", "serviceAccount", "hostname", "subdomain"):
        if isinstance(out.get(key), str):
            out[key] = hashed(out[key])
    if "nodeSelector" in out:
        out["nodeSelector"] = _labels(out["nodeSelector"])
    aff = out.get("affinity")
    if isinstance(aff, dict):
        aff = dict(aff)
        if "nodeAffinity" in aff:
            aff["nodeAffinity"] = _node_affinity(aff["nodeAffinity"])
        for key in ("podAffinity", "podAntiAffinity"):
            if key in aff:
                aff[key] = _pod_affinity(aff[key])
        out["affinity"] = aff
    tsc = out.get("topologySpreadConstraints")
    if isinstance(tsc, list):
        out["topologySpreadConstraints"] = [
            dict(c, labelSelector=_selector(c["labelSelector"])) if isinstance(c, dict) and "labelSelector" in c else c
            for c in tsc
        ]
    for key in ("containers", "initContainers", "ephemeralContainers"):
        if isinstance(out.get(key), list):
            out[key] = [_container(c) for c in out[key]]
    vols = out.get("volumes")
    if isinstance(vols, list):
        out["volumes"] = [_volume(v) for v in vols]
    return out


def _container(c: Any) -> Any:
    """What the scheduler reads of a container (requests, host ports, a sidecar's restartPolicy); its command,
    arguments, environment, mounts and probes say what runs and are dropped."""
    if not isinstance(c, dict):
        return c
    out = {k: v for k, v in c.items() if k in _CONTAINER_FIELDS}
    if isinstance(out.get("name"), str):
        out["name"] = hashed(out["name"])
    if isinstance(out.get("image"), str):
        out["image"] = _image(out["image"])
    return out


def _source(src: Any) -> Any:
    """A volume source (a pod's inline volume, a PersistentVolume's): every string that names or locates the
    storage (paths, servers, disk and volume IDs, secret names) hashed, so that two pods using the same disk still
    conflict; the kind of source, CSI driver names, file system types and flags kept."""
    if isinstance(src, str):
        return hashed(src)
    if isinstance(src, list):
        return [_source(x) for x in src]
    if not isinstance(src, dict):
        return src
    return {k: v if k in _KEPT_SOURCE_FIELDS else _source(v) for k, v in src.items()}


def _volume(v: Any) -> Any:
    if not isinstance(v, dict):
        return v
    out = {k: _source(x) if k not in ("name", "persistentVolumeClaim", "ephemeral") else x for k, x in v.items()}
    if isinstance(out.get("name"), str):
        out["name"] = hashed(out["name"])
    claim = out.get("persistentVolumeClaim")
    if isinstance(claim, dict) and isinstance(claim.get("claimName"), str):
        out["persistentVolumeClaim"] = dict(claim, claimName=hashed(claim["claimName"]))
    return out


def _workload_spec(spec: Any) -> Any:
    """ReplicaSets, Deployments, StatefulSets, Jobs, ReplicationControllers: selector and pod template."""
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    sel = out.get("selector")
    if isinstance(sel, dict):
        # a ReplicationController's selector is a plain map; the others' a LabelSelector
        out["selector"] = _selector(sel) if {"matchLabels", "matchExpressions"} & set(sel) else _labels(sel)
    tmpl = out.get("template")
    if isinstance(tmpl, dict):
        out["template"] = dict(tmpl, metadata=_metadata(tmpl.get("metadata") or {}), spec=_pod_spec(tmpl.get("spec")))
    if isinstance(out.get("serviceName"), str):
        out["serviceName"] = hashed(out["serviceName"])
    claims = out.get("volumeClaimTemplates")
    if isinstance(claims, list):
        out["volumeClaimTemplates"] = [
            dict(c, metadata=_metadata(c.get("metadata") or {}), spec=_claim_spec(c.get("spec")))
            if isinstance(c, dict)
            else c
            for c in claims
        ]
    return out


def _claim_spec(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    for key in ("volumeName", "storageClassName"):
        if isinstance(out.get(key), str):
            out[key] = hashed(out[key])
    if "selector" in out:
        out["selector"] = _selector(out["selector"])
    return out


def anonymize(obj: Obj) -> Obj:
    """A copy of one API object (as listed, with apiVersion and kind) with its identifying strings hashed."""
    out = dict(obj, metadata=_metadata(obj.get("metadata") or {}))
    rewrite = _BY_KIND.get(str(obj.get("kind")))
    if rewrite is not None:
        out.update(rewrite(obj, obj.get("spec"), obj.get("status")))
    return out


def _pod(obj: Obj, spec: Any, status: Any) -> Obj:
    out: Obj = {"spec": _pod_spec(spec)}
    if isinstance(status, dict):
        # addresses, container and image IDs, the kubelet's messages
        dropped = ("hostIP", "hostIPs", "podIP", "podIPs", "message", "containerStatuses", "initContainerStatuses")
        st = {k: v for k, v in status.items() if k not in dropped}
        if isinstance(st.get("nominatedNodeName"), str):
            st["nominatedNodeName"] = hashed(st["nominatedNodeName"])
        out["status"] = st
    return out


def _workload(obj: Obj, spec: Any, status: Any) -> Obj:
    return {"spec": _workload_spec(spec)}


def _service(obj: Obj, spec: Any, status: Any) -> Obj:
    out: Obj = {"status": {}}  # its load balancer's ingress addresses and hostnames
    if isinstance(spec, dict):
        svc = {k: v for k, v in spec.items() if k not in _SERVICE_SPEC_DROPPED}
        if "selector" in svc:
            svc["selector"] = _labels(svc["selector"])
        out["spec"] = svc
    return out


def _pdb(obj: Obj, spec: Any, status: Any) -> Obj:
    if isinstance(spec, dict) and "selector" in spec:
        return {"spec": dict(spec, selector=_selector(spec["selector"]))}
    return {}


def _pvc(obj: Obj, spec: Any, status: Any) -> Obj:
    return {"spec": _claim_spec(spec)}


def _pv(obj: Obj, spec: Any, status: Any) -> Obj:
    if not isinstance(spec, dict):
        return {}
    pv = {k: v if k in _PV_FIELDS else _source(v) for k, v in spec.items()}
    if isinstance(pv.get("storageClassName"), str):
        pv["storageClassName"] = hashed(pv["storageClassName"])
    ref = pv.get("claimRef")
    if isinstance(ref, dict):
        pv["claimRef"] = {
            k: hashed(v) if k in ("name", "namespace") and isinstance(v, str) else v
            for k, v in ref.items()
            if k != "uid" and k != "resourceVersion"
        }
    na = pv.get("nodeAffinity")
    if isinstance(na, dict) and isinstance(na.get("required"), dict):
        req = na["required"]
        pv["nodeAffinity"] = dict(
            na, required=dict(req, nodeSelectorTerms=_node_selector_terms(req.get("nodeSelectorTerms")))
        )
    return {"spec": pv}


def _storage_class(obj: Obj, spec: Any, status: Any) -> Obj:
    topo = obj.get("allowedTopologies")
    if not isinstance(topo, list):
        return {}
    return {
        "allowedTopologies": [
            dict(
                t,
                matchLabelExpressions=[
                    dict(e, values=[hashed(v) for v in e.get("values") or []]) if isinstance(e, dict) else e
                    for e in t.get("matchLabelExpressions") or []
                ],
            )
            if isinstance(t, dict)
            else t
            for t in topo
        ]
    }


def _csi_node(obj: Obj, spec: Any, status: Any) -> Obj:
    if not (isinstance(spec, dict) and isinstance(spec.get("drivers"), list)):
        return {}
    drivers = [
        dict(d, nodeID=hashed(d["nodeID"])) if isinstance(d, dict) and isinstance(d.get("nodeID"), str) else d
        for d in spec["drivers"]
    ]
    return {"spec": dict(spec, drivers=drivers)}


def _node(obj: Obj, spec: Any, status: Any) -> Obj:
    out: Obj = {}
    if isinstance(spec, dict):
        out["spec"] = {k: v for k, v in spec.items() if k not in _NODE_SPEC_DROPPED}
    if isinstance(status, dict):
        st = {k: v for k, v in status.items() if k not in _NODE_STATUS_DROPPED}
        if isinstance(st.get("images"), list):
            st["images"] = [
                dict(i, names=[_image(n) for n in i.get("names") or [] if isinstance(n, str)])
                if isinstance(i, dict)
                else i
                for i in st["images"]
            ]
        if isinstance(st.get("conditions"), list):  # their messages name the machine's kernel, runtime, ...
            st["conditions"] = [
                {k: v for k, v in c.items() if k in ("type", "status")} if isinstance(c, dict) else c
                for c in st["conditions"]
            ]
        out["status"] = st
    return out


# What each kind's identifying strings are (metadata is done for every kind); kinds not listed keep their spec.
_BY_KIND: dict[str, Callable[[Obj, Any, Any], Obj]] = {
    "Pod": _pod,
    "ReplicaSet": _workload,
    "Deployment": _workload,
    "StatefulSet": _workload,
    "Job": _workload,
    "ReplicationController": _workload,
    "Service": _service,
    "PodDisruptionBudget": _pdb,
    "PersistentVolumeClaim": _pvc,
    "PersistentVolume": _pv,
    "StorageClass": _storage_class,
    "CSINode": _csi_node,
    "Node": _node,
}
