"""Storage kinds in manifests: PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode; pod volumes,
container images, node images, owner references; claims StatefulSets and ephemeral volumes make."""

from __future__ import annotations

from pathlib import Path

import pytest

from packsched.api.errors import InputError
from packsched.api.manifests import load_manifests
from packsched.api.objects import NodeImage, OwnerRef

GOOD = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "1", pods: "10"}
  images:
  - {names: ["nginx:1.25", "docker.io/library/nginx@sha256:ab"], sizeBytes: 1000}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: std, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions: [{key: zone, values: [a, b]}]
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers: [{name: csi.example.com, nodeID: n1, topologyKeys: [zone], allocatable: {count: 3}}]
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1, labels: {zone: a}}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  storageClassName: std
  csi: {driver: csi.example.com, volumeHandle: h1}
  nodeAffinity:
    required:
      nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c1, namespace: ns}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 2Gi}}
  selector: {matchLabels: {zone: a}}
---
apiVersion: v1
kind: Pod
metadata:
  name: solo
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u1, controller: true}]
spec:
  containers: [{name: c, image: nginx}]
  initContainers: [{name: i, image: busybox:1}]
  volumes:
  - {name: a, persistentVolumeClaim: {claimName: c1}}
  - {name: b, gcePersistentDisk: {pdName: disk-1, readOnly: true}}
  - {name: c, rbd: {monitors: [m1], image: img}}
  - {name: d, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce],
                                                       resources: {requests: {storage: 1Gi}}}}}}
  - {name: e, configMap: {name: cm}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: postgres:16}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def test_storage_kinds_and_pod_volumes(tmp_path: Path) -> None:
    cluster = load_manifests([str(_write(tmp_path, GOOD))])
    st = cluster.storage
    assert cluster.nodes[0].images == (NodeImage(("nginx:1.25", "docker.io/library/nginx@sha256:ab"), 1000),)
    sc = st.classes["std"]
    assert sc.is_default and sc.binding_mode == "WaitForFirstConsumer" and sc.provisioner == "csi.example.com"
    assert [(r.key, r.operator, r.values) for r in sc.allowed_topologies[0].match_expressions] == [
        ("zone", "In", ("a", "b"))
    ]
    assert st.csi_nodes["n1"].drivers == {"csi.example.com": 3}
    assert st.csi_nodes["n1"].topology_keys == {"csi.example.com": ("zone",)}
    pv = st.volumes["pv1"]
    assert pv.capacity == 5 * 1024**3 and pv.csi_handle == "h1" and pv.phase == "Available"
    assert pv.node_affinity is not None and pv.node_affinity[0].match_expressions[0].values == ("a",)
    claim = st.claims["ns/c1"]
    assert claim.request == 2 * 1024**3 and claim.phase == "Pending"
    assert claim.class_name == "std"  # the default class, as admission gives it
    assert claim.selector is not None and claim.selector.matches({"zone": "a"})
    solo = cluster.pod("default/solo")
    assert solo is not None
    assert solo.owner == OwnerRef("ReplicaSet", "web-abc")
    assert [c.image for c in solo.containers + solo.init_containers] == ["nginx", "busybox:1"]
    assert [(v.name, v.source, v.claim_name) for v in solo.volumes] == [
        ("a", "persistentVolumeClaim", "c1"),
        ("b", "gcePersistentDisk", ""),
        ("c", "rbd", ""),
        ("d", "ephemeral", ""),
        ("e", "configMap", ""),
    ]
    assert solo.volumes[1].disk == ("disk-1",) and solo.volumes[1].read_only
    assert solo.volumes[2].disk == ("rbd", "img") and solo.volumes[2].monitors == ("m1",)
    assert solo.unsupported_features == []
    eph = st.claims["default/solo-d"]
    assert eph.owner_pod == "default/solo" and eph.class_name == "std"
    db0 = cluster.pod("default/db-0")
    assert db0 is not None and db0.owner == OwnerRef("StatefulSet", "db")
    assert db0.labels == {"app": "db", "statefulset.kubernetes.io/pod-name": "db-0"}
    assert [(v.name, v.claim_name) for v in db0.volumes] == [("data", "data-db-0")]
    assert {"default/data-db-0", "default/data-db-1"} <= set(st.claims)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


BAD = [
    (
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accesModes: [ReadWriteOnce]}\n",
        "spec.accesModes: unknown field",
    ),
    (
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [Sometimes]}\n",
        'spec.accessModes[0]: Unsupported value: "Sometimes"',
    ),
    (
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: p}\nspec: {csi: {volumeHandle: h}}\n",
        "spec.csi.driver: Required value",
    ),
    ("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\n", "provisioner: Required value"),
    (
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: s}\nprovisioner: x\nbindingMode: y\n",
        "bindingMode: unknown field",
    ),
    (
        "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n}\nspec: {drivers: [{name: d, limit: 3}]}\n",
        "spec.drivers[0].limit: unknown field",
    ),
    (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
        "  volumes: [{name: v, persistentVolumeClaim: {claim: x}}]\n",
        "spec.volumes[0].persistentVolumeClaim.claim: unknown field",
    ),
    (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
        "  volumes: [{name: v, emptyDir: {}, hostPath: {path: /x}}]\n",
        "spec.volumes[0]: Forbidden: may not specify more than 1 volume type",
    ),
    (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {images: [{names: [a], size: 3}]}\n",
        "status.images[0].size: unknown field",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_storage_manifests_name_the_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(InputError) as exc:
        load_manifests([str(_write(tmp_path, text))])
    assert message in str(exc.value)


def test_claim_written_in_the_manifests_wins_over_the_statefulset_one(tmp_path: Path) -> None:
    own = "\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data-db-0}\nspec:\n"
    own += "  accessModes: [ReadWriteMany]\n  resources: {requests: {storage: 9Gi}}\n"
    cluster = load_manifests([str(_write(tmp_path, GOOD + own))])
    assert cluster.storage.claims["default/data-db-0"].access_modes == ("ReadWriteMany",)
