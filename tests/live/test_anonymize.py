"""The snapshot's anonymiser on every kind of object it rewrites: identifying strings hashed the same wherever they
occur, the scheduler's own keys and amounts kept."""

from __future__ import annotations

from typing import Any

from packsched.live.anonymize import anonymize, hashed

SEL = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]}
TERMS = [
    {
        "matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}],
        "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-1"]}],
    }
]


def _pod() -> dict[str, Any]:
    term = {"labelSelector": SEL, "namespaceSelector": SEL, "namespaces": ["team"], "topologyKey": "zone"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-1",
            "namespace": "team",
            "generateName": "web-",
            "labels": {"app": "web", "tier": "gold"},
            "annotations": {
                "secret-ish": "x",
                "packsched.io/run-duration": "5m",
                "volume.kubernetes.io/selected-node": "node-1",
            },
            "ownerReferences": [{"kind": "ReplicaSet", "name": "web-5d"}],
        },
        "spec": {
            "nodeName": "node-1",
            "priorityClassName": "system-node-critical",
            "nodeSelector": {"zone": "z1"},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": TERMS},
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": TERMS[0]}],
                },
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]},
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": term}]
                },
            },
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "labelSelector": SEL}],
            "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}],
        },
        "status": {"phase": "Pending", "nominatedNodeName": "node-2"},
    }


def test_a_pod_keeps_its_meaning_and_loses_its_names() -> None:
    out = anonymize(_pod())
    meta, spec = out["metadata"], out["spec"]
    assert meta["name"] == hashed("web-1") and meta["namespace"] == hashed("team") and "generateName" not in meta
    assert meta["labels"] == {"app": hashed("web"), "tier": hashed("gold")}
    assert meta["annotations"] == {
        "packsched.io/run-duration": "5m",
        "volume.kubernetes.io/selected-node": hashed("node-1"),
    }
    assert meta["ownerReferences"] == [{"kind": "ReplicaSet", "name": hashed("web-5d")}]
    assert spec["nodeName"] == hashed("node-1") and spec["priorityClassName"] == "system-node-critical"
    assert spec["nodeSelector"] == {"zone": hashed("z1")}
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == [hashed("z1")]
    assert terms[0]["matchFields"][0]["values"] == [hashed("node-1")]
    pref = spec["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["preference"]
    assert pref == terms[0]
    req = spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert req["labelSelector"]["matchLabels"] == {"app": hashed("web")}
    assert req["labelSelector"]["matchExpressions"][0]["values"] == [hashed("gold")]
    assert req["namespaces"] == [hashed("team")] and req["topologyKey"] == "zone"
    anti = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["podAffinityTerm"] == req and anti["weight"] == 5
    assert spec["topologySpreadConstraints"][0]["labelSelector"]["matchLabels"] == {"app": hashed("web")}
    assert spec["containers"][0]["image"] == hashed("nginx:latest") + ":latest"
    assert spec["containers"][0]["resources"] == {"requests": {"cpu": "1"}}
    assert spec["volumes"] == [{"name": hashed("data"), "persistentVolumeClaim": {"claimName": hashed("data-web-1")}}]
    assert out["status"]["nominatedNodeName"] == hashed("node-2")


def test_workloads_services_budgets_and_storage() -> None:
    template = {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "pg:16"}]}}
    sts = anonymize(
        {
            "kind": "StatefulSet",
            "metadata": {"name": "db"},
            "spec": {
                "selector": {"matchLabels": {"app": "db"}},
                "serviceName": "db",
                "template": template,
                "volumeClaimTemplates": [
                    {"metadata": {"name": "data"}, "spec": {"storageClassName": "fast", "selector": SEL}}
                ],
            },
        }
    )
    assert sts["spec"]["selector"] == {"matchLabels": {"app": hashed("db")}}
    assert sts["spec"]["serviceName"] == hashed("db")
    assert sts["spec"]["template"]["metadata"]["labels"] == {"app": hashed("db")}
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == hashed("pg:16") + ":latest"
    claim = sts["spec"]["volumeClaimTemplates"][0]
    assert claim["metadata"]["name"] == hashed("data") and claim["spec"]["storageClassName"] == hashed("fast")
    rc = anonymize({"kind": "ReplicationController", "metadata": {"name": "rc"}, "spec": {"selector": {"app": "x"}}})
    assert rc["spec"]["selector"] == {"app": hashed("x")}  # a plain map
    svc = anonymize({"kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": {"app": "x"}, "ports": []}})
    assert svc["spec"] == {"selector": {"app": hashed("x")}, "ports": []}
    pdb = anonymize({"kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "spec": {"selector": SEL}})
    assert pdb["spec"]["selector"]["matchLabels"] == {"app": hashed("web")}
    pvc = anonymize({"kind": "PersistentVolumeClaim", "metadata": {"name": "c"}, "spec": {"volumeName": "pv-1"}})
    assert pvc["spec"] == {"volumeName": hashed("pv-1")}
    pv = anonymize(
        {
            "kind": "PersistentVolume",
            "metadata": {"name": "pv-1"},
            "spec": {
                "storageClassName": "fast",
                "claimRef": {"name": "c", "namespace": "team", "uid": "u", "resourceVersion": "1"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": TERMS}},
            },
        }
    )
    assert pv["spec"]["storageClassName"] == hashed("fast")
    assert pv["spec"]["claimRef"] == {"name": hashed("c"), "namespace": hashed("team")}
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [
        hashed("node-1")
    ]
    sc = anonymize(
        {
            "kind": "StorageClass",
            "metadata": {"name": "fast", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["z1"]}]}],
        }
    )
    assert sc["metadata"] == {
        "name": hashed("fast"),
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
    }
    assert sc["allowedTopologies"][0]["matchLabelExpressions"][0] == {"key": "zone", "values": [hashed("z1")]}
    csi = anonymize({"kind": "CSINode", "metadata": {"name": "node-1"}, "spec": {"drivers": [{"nodeID": "node-1"}]}})
    assert csi["metadata"]["name"] == csi["spec"]["drivers"][0]["nodeID"] == hashed("node-1")
    node = anonymize(
        {
            "kind": "Node",
            "metadata": {"name": "n"},
            "status": {"images": [{"names": ["docker.io/x/y:1"], "sizeBytes": 5}]},
        }
    )
    assert node["status"]["images"] == [{"names": [hashed("docker.io/x/y:1") + ":latest"], "sizeBytes": 5}]


def test_hashes_are_stable_valid_names_and_keep_kubernetes_own() -> None:
    assert hashed("web") == hashed("web") != hashed("web2")
    assert hashed("web").isalnum() and hashed("web")[0].isalpha() and len(hashed("web")) == 13
    assert hashed("kube-system") == "kube-system" and hashed("") == ""
