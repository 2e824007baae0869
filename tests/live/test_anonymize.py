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


def test_what_locates_the_cluster_is_gone() -> None:
    """Issue 24: --anonymize kept node providerIDs (cloud project and zone), Service load-balancer hostnames,
    podCIDRs and local PV paths; nor may container commands, environments or addresses leave."""
    import json

    secrets = [
        "gce://acme-prod/europe-west4-a/gke-node-1",
        "10.4.2.0/24",
        "10.128.0.7",
        "a1b2c3.elb.amazonaws.com",
        "/mnt/disks/ssd0",
        "nfs.acme.internal",
        "postgres://u:p@db",
        "--token=abc",
        "5.15.0-1057-gcp",
        "projects/acme/zones/z/disks/d1",
    ]
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "gke-node-1", "labels": {"kubernetes.io/hostname": "gke-node-1"}},
        "spec": {"providerID": secrets[0], "podCIDR": secrets[1], "podCIDRs": [secrets[1]], "unschedulable": True},
        "status": {
            "allocatable": {"cpu": "4"},
            "addresses": [{"type": "InternalIP", "address": secrets[2]}],
            "nodeInfo": {"kernelVersion": secrets[8]},
            "conditions": [{"type": "Ready", "status": "True", "message": f"kernel {secrets[8]}"}],
        },
    }
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "team"},
        "spec": {"selector": {"app": "web"}, "clusterIP": secrets[2], "loadBalancerIP": secrets[2]},
        "status": {"loadBalancer": {"ingress": [{"hostname": secrets[3]}]}},
    }
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "local-pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "local": {"path": secrets[4]}, "storageClassName": "local"},
    }
    nfs = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "nfs-pv"},
        "spec": {"nfs": {"server": secrets[5], "path": secrets[4]}, "csi": {"driver": "pd.csi.storage.gke.io"}},
    }
    pod = _pod()
    pod["spec"]["containers"][0].update({"command": ["run", secrets[7]], "env": [{"name": "DB", "value": secrets[6]}]})
    pod["spec"]["volumes"] = [{"name": "d", "gcePersistentDisk": {"pdName": secrets[9], "fsType": "ext4"}}]
    pod["status"] = {"phase": "Running", "podIP": secrets[2], "hostIP": secrets[2]}
    out = [anonymize(o) for o in (node, svc, pv, nfs, pod)]
    text = json.dumps(out)
    assert not [s for s in secrets if s in text]
    # and what the scheduler reads stays
    assert out[0]["spec"]["unschedulable"] is True and out[0]["status"]["allocatable"] == {"cpu": "4"}
    assert out[0]["status"]["conditions"] == [{"type": "Ready", "status": "True"}]
    assert out[2]["spec"]["local"]["path"] == hashed(secrets[4]) and out[2]["spec"]["capacity"] == {"storage": "1Gi"}
    assert out[3]["spec"]["csi"] == {"driver": "pd.csi.storage.gke.io"}
    disk = out[4]["spec"]["volumes"][0]["gcePersistentDisk"]
    assert disk == {"pdName": hashed(secrets[9]), "fsType": "ext4"}  # two pods on one disk still conflict
    assert out[4]["spec"]["containers"][0]["resources"] == pod["spec"]["containers"][0]["resources"]


def test_the_namespace_label_granting_admin_access_keeps_its_value() -> None:
    """The API server reads ``resource.kubernetes.io/admin-access: "true"`` (DRA admin access): an anonymised
    snapshot must still grant it; other label values are hashed."""
    ns = anonymize(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "ops", "labels": {"resource.kubernetes.io/admin-access": "true", "team": "ops"}},
        }
    )
    assert ns["metadata"]["labels"] == {"resource.kubernetes.io/admin-access": "true", "team": hashed("ops")}
