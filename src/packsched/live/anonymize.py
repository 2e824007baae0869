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


def _labels(labels: Any) -> Any:
    if not isinstance(labels, dict):
        return labels
    return {k: hashed(v) if isinstance(v, str) else v for k, v in labels.items()}


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
    for key in ("containers", "initContainers"):
        if isinstance(out.get(key), list):
            out[key] = [
                dict(c, name=hashed(c["name"]), image=_image(c["image"]))
                if isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("image"), str)
                else c
                for c in out[key]
            ]
    vols = out.get("volumes")
    if isinstance(vols, list):
        out["volumes"] = [_volume(v) for v in vols]
    return out


def _volume(v: Any) -> Any:
    if not isinstance(v, dict):
        return v
    out = dict(v)
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
    kind = obj.get("kind")
    out = dict(obj, metadata=_metadata(obj.get("metadata") or {}))
    spec = obj.get("spec")
    status = obj.get("status")
    if kind == "Pod":
        out["spec"] = _pod_spec(spec)
        if isinstance(status, dict) and isinstance(status.get("nominatedNodeName"), str):
            out["status"] = dict(status, nominatedNodeName=hashed(status["nominatedNodeName"]))
    elif kind in ("ReplicaSet", "Deployment", "StatefulSet", "Job", "ReplicationController"):
        out["spec"] = _workload_spec(spec)
    elif kind == "Service" and isinstance(spec, dict):
        out["spec"] = dict(spec, selector=_labels(spec.get("selector"))) if "selector" in spec else spec
    elif kind == "PodDisruptionBudget" and isinstance(spec, dict) and "selector" in spec:
        out["spec"] = dict(spec, selector=_selector(spec["selector"]))
    elif kind == "PersistentVolumeClaim":
        out["spec"] = _claim_spec(spec)
    elif kind == "PersistentVolume" and isinstance(spec, dict):
        pv = dict(spec)
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
        out["spec"] = pv
    elif kind == "StorageClass":
        topo = obj.get("allowedTopologies")
        if isinstance(topo, list):
            out["allowedTopologies"] = [
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
    elif kind == "CSINode" and isinstance(spec, dict) and isinstance(spec.get("drivers"), list):
        out["spec"] = dict(
            spec,
            drivers=[
                dict(d, nodeID=hashed(d["nodeID"])) if isinstance(d, dict) and isinstance(d.get("nodeID"), str) else d
                for d in spec["drivers"]
            ],
        )
    elif kind == "Node" and isinstance(status, dict) and isinstance(status.get("images"), list):
        out["status"] = dict(
            status,
            images=[
                dict(i, names=[_image(n) for n in i.get("names") or [] if isinstance(n, str)])
                if isinstance(i, dict)
                else i
                for i in status["images"]
            ],
        )
    return out
