"""Storage objects the volume plugins read (PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode), the
catalog that holds them (what upstream's informer listers give the plugins), and their decoding.

The catalog is also what the simulator changes when a pod's WaitForFirstConsumer claim is bound: the claim gets
its volume (a static one the scheduler chose, or one provisioned for the node) and later pods see it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from packsched.api import schema
from packsched.api.decode import Reader
from packsched.api.objects import LabelSelector, NodeSelectorTerm, OwnerRef, PodVolume, Requirement
from packsched.api.pods import (
    LABEL_SELECTOR_OPERATORS,
    decode_node_selector_term,
    decode_requirements,
)
from packsched.api.resources import STORAGE, parse_resource_list

# Access modes, volume binding modes and the annotations the volume plugins read.
READ_WRITE_ONCE = "ReadWriteOnce"
READ_ONLY_MANY = "ReadOnlyMany"
READ_WRITE_MANY = "ReadWriteMany"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
ACCESS_MODES = (READ_WRITE_ONCE, READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE_POD)
IMMEDIATE = "Immediate"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
FILESYSTEM = "Filesystem"
BLOCK = "Block"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
CLAIM_BOUND, CLAIM_PENDING, CLAIM_LOST = "Bound", "Pending", "Lost"
VOLUME_AVAILABLE, VOLUME_BOUND = "Available", "Bound"

STORAGE_API_VERSIONS = ("storage.k8s.io/v1", "storage.k8s.io/v1beta1")

# What a change to the catalog touched (StorageObjects.changes): a claim (namespace/name) or a volume (name).
CLAIM_CHANGED, VOLUME_CHANGED = "claim", "volume"
MAX_CHANGES = 1 << 16  # the journal starts afresh beyond this (its readers then resolve everything again)


@dataclass(frozen=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str = ""


@dataclass
class PersistentVolumeClaim:
    name: str
    namespace: str = "default"
    uid: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    access_modes: tuple[str, ...] = ()
    request: int = 0  # spec.resources.requests.storage, bytes
    selector: LabelSelector | None = None
    volume_name: str = ""
    storage_class_name: str | None = None  # None: not written (the default class may apply)
    volume_mode: str = FILESYSTEM
    phase: str = CLAIM_PENDING
    deleting: bool = False
    owner_uid: str = ""  # the controlling owner's uid (an ephemeral volume's claim belongs to its pod)
    owner_pod: str = ""  # namespace/name of the pod whose ephemeral volume made it (pods may have no uid)
    source: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def class_name(self) -> str:
        """Upstream GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
        if ANN_BETA_STORAGE_CLASS in self.annotations:
            return self.annotations[ANN_BETA_STORAGE_CLASS]
        return self.storage_class_name or ""


@dataclass
class PersistentVolume:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    capacity: int = 0  # spec.capacity.storage, bytes
    access_modes: tuple[str, ...] = ()
    storage_class_name: str = ""
    volume_mode: str = FILESYSTEM
    claim_ref: ClaimRef | None = None
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None  # spec.nodeAffinity.required's terms
    csi_driver: str = ""
    csi_handle: str = ""
    phase: str = VOLUME_AVAILABLE
    deleting: bool = False
    source: str = ""

    @property
    def class_name(self) -> str:
        """Upstream GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName."""
        if ANN_BETA_STORAGE_CLASS in self.annotations:
            return self.annotations[ANN_BETA_STORAGE_CLASS]
        return self.storage_class_name

    def bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """Upstream IsVolumeBoundToClaim: the claimRef names the claim (and its uid, when it has one)."""
        ref = self.claim_ref
        if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
            return False
        return not ref.uid or ref.uid == claim.uid


@dataclass
class StorageClass:
    name: str
    provisioner: str = ""
    binding_mode: str | None = IMMEDIATE  # None: not set (VolumeZone then refuses to decide)
    allowed_topologies: tuple[NodeSelectorTerm, ...] = ()  # each term's requirements are "key In values"
    is_default: bool = False
    source: str = ""


@dataclass
class CSINode:
    name: str
    drivers: dict[str, int | None] = field(default_factory=dict)  # driver -> allocatable.count (None: no limit)
    topology_keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    source: str = ""


@dataclass
class StorageObjects:
    """The claims, volumes, classes and CSINodes of the cluster (upstream's listers, in one place)."""

    claims: dict[str, PersistentVolumeClaim] = field(default_factory=dict)  # by namespace/name
    volumes: dict[str, PersistentVolume] = field(default_factory=dict)
    classes: dict[str, StorageClass] = field(default_factory=dict)
    csi_nodes: dict[str, CSINode] = field(default_factory=dict)
    generation: int = 0  # bumped by every change, for caches
    # What each change made through the methods below touched, in order, one entry per generation bumped:
    # (CLAIM_CHANGED, namespace/name) or (VOLUME_CHANGED, name). Caches of resolved claims (NodeVolumeLimits'
    # attached volumes) re-resolve only the pods a change can affect; when generation moved by another amount
    # than the journal (the journal started afresh, or something changed the objects another way), they
    # resolve everything again.
    changes: list[tuple[str, str]] = field(default_factory=list)
    csi_generation: int = 0  # bumped when a CSINode is added, changed or removed (limits read from them)
    # The catalog mirrors an API server (live mode): only its informers change it. VolumeBinding's PreBind then
    # does not bind claims here (that is the API server's and the PV controller's job).
    mirror: bool = False

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def volume(self, name: str) -> PersistentVolume | None:
        return self.volumes.get(name)

    def storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    def volumes_of_class(self, class_name: str) -> list[PersistentVolume]:
        return [pv for pv in self.volumes.values() if pv.class_name == class_name]

    def _changed(self, kind: str, name: str) -> None:
        if len(self.changes) >= MAX_CHANGES:
            self.changes.clear()
        self.changes.append((kind, name))
        self.generation += 1

    def add_claim(self, pvc: PersistentVolumeClaim) -> None:
        self.claims[pvc.key] = pvc
        self._changed(CLAIM_CHANGED, pvc.key)

    def add_volume(self, pv: PersistentVolume) -> None:
        self.volumes[pv.name] = pv
        self._changed(VOLUME_CHANGED, pv.name)

    def remove_claim(self, key: str) -> None:
        if self.claims.pop(key, None) is not None:
            self._changed(CLAIM_CHANGED, key)

    def remove_volume(self, name: str) -> None:
        if self.volumes.pop(name, None) is not None:
            self._changed(VOLUME_CHANGED, name)

    def add_class(self, sc: StorageClass) -> None:
        """A class added or changed. What a claim resolves to may change with its class (an unbound claim's
        provisioner): generation moves without a journal entry, so that caches resolve everything again."""
        self.classes[sc.name] = sc
        self.generation += 1

    def remove_class(self, name: str) -> None:
        if self.classes.pop(name, None) is not None:
            self.generation += 1

    def add_csi_node(self, node: CSINode) -> None:
        self.csi_nodes[node.name] = node
        self.csi_generation += 1

    def remove_csi_node(self, name: str) -> None:
        if self.csi_nodes.pop(name, None) is not None:
            self.csi_generation += 1

    def bind(self, pvc: PersistentVolumeClaim, pv: PersistentVolume) -> None:
        """What the PV controller does once the scheduler chose ``pv`` for ``pvc``: both are Bound."""
        pv.claim_ref = ClaimRef(pvc.namespace, pvc.name, pvc.uid)
        pv.phase = VOLUME_BOUND
        pvc.volume_name = pv.name
        pvc.phase = CLAIM_BOUND
        self._changed(CLAIM_CHANGED, pvc.key)


def claim_name_of(volume: PodVolume, pod_name: str) -> str:
    """The claim a pod volume uses: its claimName, ``<pod>-<volume>`` for an ephemeral volume (upstream
    ephemeral.VolumeClaimName); "" for other volumes."""
    if volume.source == "persistentVolumeClaim":
        return volume.claim_name
    if volume.source == "ephemeral":
        return f"{pod_name}-{volume.name}"
    return ""


# -- decoding -------------------------------------------------------------------------------------------------


def decode_label_selector_opt(r: Reader, raw: object, path: str) -> LabelSelector | None:
    if raw is None:
        return None
    data = r.fields(raw, path, schema.LABEL_SELECTOR)
    labels = r.str_map(data.get("matchLabels"), f"{path}.matchLabels")
    exprs = decode_requirements(r, data.get("matchExpressions"), f"{path}.matchExpressions", LABEL_SELECTOR_OPERATORS)
    return LabelSelector(tuple(sorted(labels.items())), exprs)


def _access_modes(r: Reader, raw: object, path: str) -> tuple[str, ...]:
    out: list[str] = []
    for i, item in enumerate(r.list(raw, path)):
        out.append(r.one_of(item, f"{path}[{i}]", ACCESS_MODES))
    return tuple(out)


def _storage_amount(r: Reader, raw: object, path: str) -> int:
    amounts = parse_resource_list(raw, path, r.errors)
    return amounts.get(STORAGE, 0)


def decode_claim_spec(r: Reader, raw: object, path: str, pvc: PersistentVolumeClaim) -> None:
    spec = r.fields(raw, path, schema.PVC_SPEC)
    pvc.access_modes = _access_modes(r, spec.get("accessModes"), f"{path}.accessModes")
    res = r.fields(spec.get("resources"), f"{path}.resources", schema.VOLUME_RESOURCES)
    pvc.request = _storage_amount(r, res.get("requests"), f"{path}.resources.requests")
    pvc.selector = decode_label_selector_opt(r, spec.get("selector"), f"{path}.selector")
    pvc.volume_name = r.str(spec.get("volumeName"), f"{path}.volumeName")
    if spec.get("storageClassName") is not None:
        pvc.storage_class_name = r.str(spec.get("storageClassName"), f"{path}.storageClassName")
    pvc.volume_mode = r.one_of(spec.get("volumeMode"), f"{path}.volumeMode", (FILESYSTEM, BLOCK), FILESYSTEM)


def decode_claim(r: Reader, data: dict[str, Any], meta: dict[str, Any], name: str, ns: str) -> PersistentVolumeClaim:
    pvc = PersistentVolumeClaim(name, ns)
    pvc.uid = r.str(meta.get("uid"), "metadata.uid")
    pvc.labels = r.str_map(meta.get("labels"), "metadata.labels")
    pvc.annotations = r.str_map(meta.get("annotations"), "metadata.annotations")
    pvc.deleting = meta.get("deletionTimestamp") is not None
    pvc.owner_uid = controller_uid(r, meta.get("ownerReferences"), "metadata.ownerReferences")
    decode_claim_spec(r, data.get("spec"), "spec", pvc)
    status = r.fields(data.get("status"), "status", schema.PVC_STATUS)
    phase = r.one_of(status.get("phase"), "status.phase", (CLAIM_PENDING, CLAIM_BOUND, CLAIM_LOST), "")
    # A claim written with spec.volumeName and no status is bound as the PV controller would bind it.
    pvc.phase = phase or (CLAIM_BOUND if pvc.volume_name else CLAIM_PENDING)
    return pvc


def controller_uid(r: Reader, raw: object, path: str) -> str:
    """The uid of the controlling owner in ``metadata.ownerReferences`` ("" when none)."""
    for i, item in enumerate(r.list(raw, path)):
        ref = r.fields(item, f"{path}[{i}]", schema.OWNER_REFERENCE)
        if r.bool(ref.get("controller"), f"{path}[{i}].controller"):
            return r.str(ref.get("uid"), f"{path}[{i}].uid")
    return ""


def controller_owner(r: Reader, raw: object, path: str) -> OwnerRef | None:
    """The controlling owner in ``metadata.ownerReferences`` (kind and name), if any."""
    for i, item in enumerate(r.list(raw, path)):
        ref = r.fields(item, f"{path}[{i}]", schema.OWNER_REFERENCE)
        if r.bool(ref.get("controller"), f"{path}[{i}].controller"):
            return OwnerRef(r.str(ref.get("kind"), f"{path}[{i}].kind"), r.str(ref.get("name"), f"{path}[{i}].name"))
    return None


def decode_volume(r: Reader, data: dict[str, Any], meta: dict[str, Any], name: str) -> PersistentVolume:
    pv = PersistentVolume(name)
    pv.labels = r.str_map(meta.get("labels"), "metadata.labels")
    pv.annotations = r.str_map(meta.get("annotations"), "metadata.annotations")
    pv.deleting = meta.get("deletionTimestamp") is not None
    spec = r.fields(data.get("spec"), "spec", schema.PV_SPEC)
    pv.capacity = _storage_amount(r, spec.get("capacity"), "spec.capacity")
    pv.access_modes = _access_modes(r, spec.get("accessModes"), "spec.accessModes")
    pv.storage_class_name = r.str(spec.get("storageClassName"), "spec.storageClassName")
    pv.volume_mode = r.one_of(spec.get("volumeMode"), "spec.volumeMode", (FILESYSTEM, BLOCK), FILESYSTEM)
    if spec.get("claimRef") is not None:
        ref = r.fields(spec.get("claimRef"), "spec.claimRef", schema.OBJECT_REFERENCE)
        pv.claim_ref = ClaimRef(
            r.str(ref.get("namespace"), "spec.claimRef.namespace", "default") or "default",
            r.str(ref.get("name"), "spec.claimRef.name"),
            r.str(ref.get("uid"), "spec.claimRef.uid"),
        )
    if spec.get("nodeAffinity") is not None:
        aff = r.fields(spec.get("nodeAffinity"), "spec.nodeAffinity", schema.VOLUME_NODE_AFFINITY)
        if aff.get("required") is not None:
            rp = "spec.nodeAffinity.required"
            req = r.fields(aff.get("required"), rp, schema.NODE_SELECTOR)
            terms = r.list(req.get("nodeSelectorTerms"), f"{rp}.nodeSelectorTerms")
            pv.node_affinity = tuple(
                decode_node_selector_term(r, t, f"{rp}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)
            )
    if spec.get("csi") is not None:
        csi = r.fields(spec.get("csi"), "spec.csi", schema.CSI_PV_SOURCE)
        pv.csi_driver = r.str(csi.get("driver"), "spec.csi.driver")
        pv.csi_handle = r.str(csi.get("volumeHandle"), "spec.csi.volumeHandle")
        if not pv.csi_driver:
            r.errors.add("spec.csi.driver", "Required value")
    status = r.fields(data.get("status"), "status", schema.PV_STATUS)
    phases = ("Pending", VOLUME_AVAILABLE, VOLUME_BOUND, "Released", "Failed")
    phase = r.one_of(status.get("phase"), "status.phase", phases, "")
    pv.phase = phase or (VOLUME_BOUND if pv.claim_ref is not None else VOLUME_AVAILABLE)
    return pv


def decode_storage_class(r: Reader, data: dict[str, Any], meta: dict[str, Any], name: str) -> StorageClass:
    sc = StorageClass(name)
    sc.provisioner = r.str(data.get("provisioner"), "provisioner")
    if not sc.provisioner:
        r.errors.add("provisioner", "Required value")
    modes = (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER)
    sc.binding_mode = r.one_of(data.get("volumeBindingMode"), "volumeBindingMode", modes, IMMEDIATE)
    annotations = r.str_map(meta.get("annotations"), "metadata.annotations")
    sc.is_default = "true" in (annotations.get(ANN_DEFAULT_CLASS), annotations.get(ANN_BETA_DEFAULT_CLASS))
    terms: list[NodeSelectorTerm] = []
    for i, item in enumerate(r.list(data.get("allowedTopologies"), "allowedTopologies")):
        p = f"allowedTopologies[{i}]"
        term = r.fields(item, p, schema.TOPOLOGY_SELECTOR_TERM)
        reqs: list[Requirement] = []
        for j, expr in enumerate(r.list(term.get("matchLabelExpressions"), f"{p}.matchLabelExpressions")):
            ep = f"{p}.matchLabelExpressions[{j}]"
            e = r.fields(expr, ep, schema.TOPOLOGY_REQUIREMENT)
            key = r.str(e.get("key"), f"{ep}.key")
            values = tuple(r.str_list(e.get("values"), f"{ep}.values"))
            if not key:
                r.errors.add(f"{ep}.key", "Required value")
            if not values:
                r.errors.add(f"{ep}.values", "Required value: must specify as least one value")
            reqs.append(Requirement(key, "In", values))
        terms.append(NodeSelectorTerm(tuple(reqs)))
    sc.allowed_topologies = tuple(terms)
    return sc


def decode_csi_node(r: Reader, data: dict[str, Any], name: str) -> CSINode:
    node = CSINode(name)
    spec = r.fields(data.get("spec"), "spec", schema.CSI_NODE_SPEC)
    for i, item in enumerate(r.list(spec.get("drivers"), "spec.drivers")):
        p = f"spec.drivers[{i}]"
        d = r.fields(item, p, schema.CSI_NODE_DRIVER)
        driver = r.str(d.get("name"), f"{p}.name")
        if not driver:
            r.errors.add(f"{p}.name", "Required value")
        count: int | None = None
        if d.get("allocatable") is not None:
            alloc = r.fields(d.get("allocatable"), f"{p}.allocatable", schema.VOLUME_NODE_RESOURCES)
            count = r.int(alloc.get("count"), f"{p}.allocatable.count")
            if count is not None and count < 0:
                r.errors.add(f"{p}.allocatable.count", "Invalid value: must be greater than or equal to 0")
        node.drivers[driver] = count
        node.topology_keys[driver] = tuple(r.str_list(d.get("topologyKeys"), f"{p}.topologyKeys"))
    return node


def decode_claim_template(
    r: Reader, raw: object, path: str, name: str, namespace: str, top: tuple[str, ...] = schema.PVC_TEMPLATE
) -> PersistentVolumeClaim:
    """A claim template (a StatefulSet's volumeClaimTemplates entry, whose ``top`` fields are a whole claim's, or an
    ephemeral volume's template)."""
    data = r.fields(raw, path, top)
    meta = r.fields(data.get("metadata"), f"{path}.metadata", schema.OBJECT_META)
    pvc = PersistentVolumeClaim(name, namespace)
    pvc.labels = r.str_map(meta.get("labels"), f"{path}.metadata.labels")
    pvc.annotations = r.str_map(meta.get("annotations"), f"{path}.metadata.annotations")
    if data.get("spec") is None:
        r.errors.add(f"{path}.spec", "Required value")
    decode_claim_spec(r, data.get("spec"), f"{path}.spec", pvc)
    return pvc
