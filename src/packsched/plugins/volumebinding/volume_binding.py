"""VolumeBinding: the pod's PersistentVolumeClaims must be usable on the node.

- A bound claim's volume must admit the node (its ``nodeAffinity``): else "node(s) had volume node affinity
  conflict"; a claim bound to a volume that does not exist: "node(s) unavailable due to one or more pvc(s) bound to
  non-existent pv(s)".
- An unbound claim whose StorageClass binds on first consumer (``WaitForFirstConsumer``) needs, on the node, either
  an available static volume (class, capacity, access modes, volume mode, selector, node affinity; the smallest
  that fits, claims taken in increasing size) or dynamic provisioning (a provisioner, the class's
  ``allowedTopologies`` admitting the node): else "node(s) didn't find available persistent volumes to bind". A
  claim already given a node (``volume.kubernetes.io/selected-node``) fits only that node.
- An unbound claim of any other class: the pod waits ("pod has unbound immediate PersistentVolumeClaims").
Every rejection is UnschedulableAndUnresolvable (preemption cannot help).

The score (StorageCapacityScoring: beta and on by default from 1.37, off before, when PreScore skips): every node
gets one, 0 unless the pod would bind static volumes there; then, per storage class (the volume's), the summed
claim requests over the summed volume capacities, through ``VolumeBindingArgs.shape``, averaged over the classes
and rounded. Upstream also scores claims to be provisioned, where a CSIStorageCapacity gives the node's capacity
for the class; packsched does not model CSIStorageCapacity, so those give no class (and, alone, a score of 0).

In the simulator, PreBind does what the PV controller then does: the claim is bound to the chosen static volume,
or to a volume provisioned for the node (with the node's values of the class's topology keys as node affinity),
so that later pods see it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from packsched.api.objects import NodeSelectorTerm, Pod, Requirement
from packsched.api.storage import (
    ANN_SELECTED_NODE,
    CLAIM_BOUND,
    CLAIM_LOST,
    NOT_SUPPORTED_PROVISIONER,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimRef,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageObjects,
    claim_name_of,
)
from packsched.config.defaults import DEFAULT_VOLUME_BINDING_SHAPE
from packsched.config.types import SEMANTICS_CURRENT, PluginArgs, UtilizationShapePoint, VolumeBindingArgs
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import STORAGE, Handle, NodeSel, Rejection, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.helper import signers
from packsched.plugins.helper.shape import MAX_UTILIZATION, broken_linear, scaled_points
from packsched.plugins.helper.volumes import claim_not_found, terms_label_mask, volume_node_mask

NAME = "VolumeBinding"
STATE_KEY = "PreFilter" + NAME
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"  # 1.33+
ERR_REASON_NODE_CONFLICT_BEFORE_1_33 = "node(s) had volume node affinity conflict"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass
class NodeVolumes:
    """What a node needs for the pod: static volumes to bind, claims to provision."""

    bindings: list[tuple[PersistentVolumeClaim, PersistentVolume]] = field(default_factory=list)
    provisions: list[PersistentVolumeClaim] = field(default_factory=list)


@dataclass
class _State:
    bound: list[tuple[PersistentVolumeClaim, PersistentVolume | None]]
    delayed: list[PersistentVolumeClaim]  # unbound WaitForFirstConsumer claims
    rejections: list[tuple[BoolArray, str]] | None = None  # over every node, computed on the first Filter
    group_of: IntArray | None = None  # node column -> index in ``groups``
    groups: list[NodeVolumes] = field(default_factory=list)
    chosen: NodeVolumes | None = None  # set by Reserve

    def clone(self) -> _State:
        return self  # the filter's results do not depend on the pods placed


def pod_claims(pod: Pod, storage: StorageObjects) -> tuple[list[PersistentVolumeClaim], Status]:
    """The pod's claims, or the status that keeps it from being scheduled (upstream podHasPVCs)."""
    out: list[PersistentVolumeClaim] = []
    for vol in pod.volumes:
        name = claim_name_of(vol, pod.name)
        if not name:
            continue
        pvc = storage.claim(pod.namespace, name)
        if pvc is None:
            if vol.source == "ephemeral":
                msg = f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
            else:
                msg = claim_not_found(name)
            return out, Status.unschedulable(msg, unresolvable=True)
        if pvc.phase == CLAIM_LOST:
            msg = f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume "{pvc.volume_name}"'
            return out, Status.unschedulable(msg, unresolvable=True)
        if pvc.deleting:
            return out, Status.unschedulable(f'persistentvolumeclaim "{name}" is being deleted', unresolvable=True)
        if vol.source == "ephemeral" and not _owned_by(pvc, pod):
            msg = (
                f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} (pod is not owner)"
            )
            return out, Status.unschedulable(msg, unresolvable=True)
        out.append(pvc)
    return out, Status()


def _owned_by(pvc: PersistentVolumeClaim, pod: Pod) -> bool:
    if pvc.owner_pod:
        return pvc.owner_pod == pod.key
    return bool(pvc.owner_uid) and pvc.owner_uid == pod.uid


def find_matching_volume(
    claim: PersistentVolumeClaim,
    volumes: list[tuple[int, PersistentVolume]],
    valid: BoolArray,
    chosen: set[str],
) -> PersistentVolume | None:
    """Upstream FindMatchingVolume on the scheduler's path: a volume pre-bound to the claim (if the node suits
    it), else the smallest available one that fits. ``valid[i]``: volume ``i`` admits the node."""
    smallest: PersistentVolume | None = None
    for i, pv in volumes:
        if pv.name in chosen or (pv.claim_ref is not None and not pv.bound_to(claim)):
            continue
        if pv.capacity < claim.request or pv.volume_mode != claim.volume_mode or pv.deleting:
            continue
        if pv.bound_to(claim):
            return pv if valid[i] else None
        if pv.phase != VOLUME_AVAILABLE:
            continue
        if claim.selector is not None and not claim.selector.matches(pv.labels):
            continue
        if pv.class_name != claim.class_name or not valid[i]:
            continue
        if not set(claim.access_modes) <= set(pv.access_modes):
            continue
        if smallest is None or smallest.capacity > pv.capacity:
            smallest = pv
    return smallest


def storage_utilization_score(points: Sequence[tuple[int, int]], requested: int, capacity: int) -> int:
    """One storage class's score: the shape (points on the 0..100 score scale) at requested * 100 / capacity,
    truncated; a capacity of 0 or a request above it counts as 100 %."""
    if capacity == 0 or requested > capacity:
        return broken_linear(points, MAX_UTILIZATION)
    return broken_linear(points, requested * MAX_UTILIZATION // capacity)


def static_bindings_score(points: Sequence[tuple[int, int]], volumes: NodeVolumes) -> int:
    """Upstream's volume capacity score for one node: requests and capacities of the static bindings summed per
    storage class (the volume's ``spec.storageClassName``, not the beta annotation), each class scored, the mean
    rounded half away from zero; 0 without bindings."""
    per_class: dict[str, list[int]] = {}
    for pvc, pv in volumes.bindings:
        acc = per_class.setdefault(pv.storage_class_name, [0, 0])
        acc[0] += pvc.request
        acc[1] += pv.capacity
    if not per_class:
        return 0
    total = sum(storage_utilization_score(points, req, cap) for req, cap in per_class.values())
    return math.floor(total / len(per_class) + 0.5)  # math.Round of a value >= 0


class VolumeBinding:
    name = NAME
    # a pod its PreFilter skips (no claim, or no storage objects) writes no state and scores 0 on every node
    scores_zero_if_pre_filter_skips = True

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod)."""
        return signers.volumes(pod.pod)

    cluster_reads = (STORAGE,)

    def __init__(
        self, handle: Handle, args: PluginArgs | None = None, version: KubeVersion = DEFAULT_KUBE_VERSION
    ) -> None:
        if args is None:
            args = VolumeBindingArgs()
        if not isinstance(args, VolumeBindingArgs):
            raise TypeError(f"want args to be of type VolumeBindingArgs, got {type(args).__name__}")
        self.handle = handle
        self._provisioned = 0
        self.args = args
        self.node_conflict = (
            ERR_REASON_NODE_CONFLICT if version.volume_node_conflict_names_pv else ERR_REASON_NODE_CONFLICT_BEFORE_1_33
        )
        # Score only with StorageCapacityScoring on (the release's default); the shape defaults as upstream's.
        self.points: list[tuple[int, int]] | None = None
        if version.storage_capacity_scoring:
            shape = args.shape or [UtilizationShapePoint(u, sc) for u, sc in DEFAULT_VOLUME_BINDING_SHAPE]
            self.points = scaled_points(shape, SEMANTICS_CURRENT)

    # -- PreFilter ----------------------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        storage = self.handle.storage()
        if storage is None or not pod.pod.volumes:  # a pod without volumes has no claim
            return Status.skip()
        claims, st = pod_claims(pod.pod, storage)
        if not st.ok:
            return st
        if not claims:
            return Status.skip()
        bound: list[tuple[PersistentVolumeClaim, PersistentVolume | None]] = []
        delayed: list[PersistentVolumeClaim] = []
        immediate = False
        for pvc in claims:
            if pvc.volume_name and pvc.phase == CLAIM_BOUND:
                bound.append((pvc, storage.volume(pvc.volume_name)))
                continue
            sc = storage.storage_class(pvc.class_name) if pvc.class_name else None
            if sc is not None and sc.binding_mode == WAIT_FOR_FIRST_CONSUMER and not pvc.volume_name:
                delayed.append(pvc)
            else:
                immediate = True
        if immediate:
            return Status.unschedulable(ERR_UNBOUND_IMMEDIATE, unresolvable=True)
        state.write(STATE_KEY, _State(bound, delayed))
        return Status()

    # -- Filter -------------------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        data = state.read(STATE_KEY)
        storage = self.handle.storage()
        if not isinstance(data, _State) or storage is None:
            return []
        if data.rejections is None:
            data.rejections = self._evaluate(data, snap, storage)
        out: list[Rejection] = []
        for mask, reason in data.rejections:
            part = mask[sel]
            if part.any():
                out.append(Rejection(part, reason, Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
        return out

    def _evaluate(self, data: _State, snap: Snapshot, storage: StorageObjects) -> list[tuple[BoolArray, str]]:
        if not data.delayed and all(pv is not None and pv.node_affinity is None for _pvc, pv in data.bound):
            return []  # bound volumes that admit every node, nothing to bind
        n = snap.n
        node_conflict = np.zeros(n, dtype=bool)
        pv_missing = np.zeros(n, dtype=bool)
        decided = np.zeros(n, dtype=bool)
        for _pvc, pv in data.bound:
            if pv is None:
                pv_missing |= ~decided
                break
            bad = ~volume_node_mask(snap, pv)
            node_conflict |= bad & ~decided
            decided |= bad
        bind_conflict = np.zeros(n, dtype=bool)
        if data.delayed:
            bind_conflict = ~self._match_unbound(data, snap, storage)
        out: list[tuple[BoolArray, str]] = []
        for mask, reason in (
            (node_conflict, self.node_conflict),
            (bind_conflict, ERR_REASON_BIND_CONFLICT),
            (pv_missing, ERR_REASON_PV_NOT_EXIST),
        ):
            if mask.any():
                out.append((mask, reason))
        return out

    def _match_unbound(self, data: _State, snap: Snapshot, storage: StorageObjects) -> BoolArray:
        """Nodes where every unbound claim finds a static volume or can be provisioned; records per group of
        alike nodes which volumes they would use."""
        n = snap.n
        ok = np.ones(n, dtype=bool)
        if n == 0:
            return ok
        selected = [c for c in data.delayed if ANN_SELECTED_NODE in c.annotations]
        for claim in selected:
            col = snap.index.get(claim.annotations[ANN_SELECTED_NODE], -1)
            only = np.zeros(n, dtype=bool)
            if col >= 0:
                only[col] = True
            ok &= only
        to_match = sorted((c for c in data.delayed if ANN_SELECTED_NODE not in c.annotations), key=lambda c: c.request)
        classes = list(dict.fromkeys(c.class_name for c in to_match))
        volumes = [pv for cls in classes for pv in storage.volumes_of_class(cls)]
        if volumes:
            matrix = np.stack([volume_node_mask(snap, pv) for pv in volumes])  # volume x node
            packed = np.ascontiguousarray(np.packbits(matrix, axis=0).T)
            keys = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
            _, first, group_of = np.unique(keys, return_index=True, return_inverse=True)
        else:
            matrix = np.zeros((0, n), dtype=bool)
            first, group_of = np.zeros(1, dtype=np.intp), np.zeros(n, dtype=np.intp)
        by_class = {cls: [(i, pv) for i, pv in enumerate(volumes) if pv.class_name == cls] for cls in classes}
        groups: list[NodeVolumes] = []
        provision_masks: list[BoolArray] = []
        for col in np.asarray(first).tolist():
            valid = matrix[:, col] if len(volumes) else np.zeros(0, dtype=bool)
            chosen: set[str] = set()
            node_vols = NodeVolumes()
            unmatched: list[PersistentVolumeClaim] = []
            for claim in to_match:
                pv = find_matching_volume(claim, by_class[claim.class_name], valid, chosen)
                if pv is None:
                    unmatched.append(claim)
                    continue
                chosen.add(pv.name)
                node_vols.bindings.append((claim, pv))
            node_vols.provisions = selected + unmatched
            groups.append(node_vols)
            mask = self._provisionable(node_vols.provisions, snap, storage)
            provision_masks.append(mask)
        data.groups = groups
        data.group_of = np.asarray(group_of, dtype=np.int64).reshape(n)
        per_node: BoolArray = np.stack(provision_masks)[data.group_of, np.arange(n)]
        return ok & per_node

    @staticmethod
    def _provisionable(claims: list[PersistentVolumeClaim], snap: Snapshot, storage: StorageObjects) -> BoolArray:
        """Upstream checkVolumeProvisions: a class with a provisioner whose allowedTopologies admit the node
        (storage capacity is not tracked: always enough)."""
        ok = np.ones(snap.n, dtype=bool)
        for claim in claims:
            sc = storage.storage_class(claim.class_name)
            if sc is None or not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return np.zeros(snap.n, dtype=bool)
            if sc.allowed_topologies:
                ok &= terms_label_mask(snap, sc.allowed_topologies)
        return ok

    # -- Score (StorageCapacityScoring, on by default from 1.37) --------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> Status:
        # With the gate on upstream never skips: a pod without claims is scored 0 on every node.
        return Status() if self.points is not None else Status.skip()

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        out = np.zeros(len(cols), dtype=np.int64)
        data = state.read(STATE_KEY)
        if self.points is None or not isinstance(data, _State) or data.group_of is None:
            return out  # no claims, or nothing to bind on any node
        # Nodes with the same volumes share a group: score each group once.
        per_group: dict[int, int] = {}
        for i, col in enumerate(np.asarray(cols).tolist()):
            g = int(data.group_of[col])
            if g not in per_group:
                per_group[g] = static_bindings_score(self.points, data.groups[g])
            out[i] = per_group[g]
        return out

    # -- explain -------------------------------------------------------------------------------------------

    def node_details(self, state: CycleState) -> dict[str, dict[str, object]]:
        """For explain, per node whose unbound claims found their volumes: ``volumes``, each of the pod's unbound
        WaitForFirstConsumer claims (by name) with the static volume it would be bound to there, or null for a
        claim to be provisioned (what Reserve and PreBind would do if the node were chosen)."""
        data = state.read(STATE_KEY)
        if not isinstance(data, _State) or not data.delayed or data.group_of is None or data.rejections is None:
            return {}
        rejected = np.zeros(self.handle.snapshot.n, dtype=bool)
        for mask, _reason in data.rejections:
            rejected |= mask
        out: dict[str, dict[str, object]] = {}
        for col, node in enumerate(self.handle.snapshot.nodes):
            if rejected[col]:
                continue
            group = data.groups[int(data.group_of[col])]
            volumes: list[dict[str, object]] = [{"claim": c.key, "volume": pv.name} for c, pv in group.bindings]
            volumes += [{"claim": c.key, "volume": None} for c in group.provisions]
            out[node.name] = {"volumes": sorted(volumes, key=lambda v: str(v["claim"]))}
        return out

    # -- Reserve, PreBind ---------------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        data = state.read(STATE_KEY)
        if not isinstance(data, _State):
            return Status()
        data.chosen = None
        col = self.handle.snapshot.index.get(node, -1)
        if data.group_of is not None and 0 <= col < len(data.group_of):
            data.chosen = data.groups[int(data.group_of[col])]
        return Status()

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        data = state.read(STATE_KEY)
        if isinstance(data, _State):
            data.chosen = None

    def pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        data = state.read(STATE_KEY)
        storage = self.handle.storage()
        if not isinstance(data, _State) or data.chosen is None or storage is None:
            return Status()
        if storage.mirror and (data.chosen.bindings or data.chosen.provisions):
            # Live mode: upstream writes the PV's claimRef / the claim's selected-node annotation and waits for the
            # PV controller; packsched does not write them yet, and binding the pod without would leave it
            # waiting for volumes nobody binds.
            claims = ", ".join(pvc.key for pvc in [*(b[0] for b in data.chosen.bindings), *data.chosen.provisions])
            return Status(Code.ERROR, [f"binding volumes is not supported in live mode yet (claims {claims})"])
        for pvc, pv in data.chosen.bindings:
            storage.bind(pvc, pv)
        for pvc in data.chosen.provisions:
            storage.bind(pvc, self._provision(pvc, node, storage))
        data.chosen = None
        return Status()

    def _provision(self, pvc: PersistentVolumeClaim, node: str, storage: StorageObjects) -> PersistentVolume:
        """The volume a provisioner makes for ``pvc`` on ``node``: node affinity on the node's values of the
        class's allowedTopologies keys and of the driver's CSINode topology keys."""
        sc = storage.storage_class(pvc.class_name)
        provisioner = sc.provisioner if sc is not None else ""
        keys: list[str] = []
        if sc is not None:
            keys += [r.key for t in sc.allowed_topologies for r in t.match_expressions]
        csi = storage.csi_node(node)
        if csi is not None:
            keys += list(csi.topology_keys.get(provisioner, ()))
        col = self.handle.snapshot.index.get(node, -1)
        labels = self.handle.snapshot.nodes[col].labels if col >= 0 else {}
        reqs = tuple(Requirement(k, "In", (labels[k],)) for k in dict.fromkeys(keys) if k in labels)
        self._provisioned += 1
        name = f"pvc-{pvc.uid}" if pvc.uid else f"pvc-{pvc.namespace}-{pvc.name}"
        while storage.volume(name) is not None:
            name = f"{name}-{self._provisioned}"
        pv = PersistentVolume(
            name,
            capacity=pvc.request,
            access_modes=pvc.access_modes,
            storage_class_name=pvc.class_name,
            volume_mode=pvc.volume_mode,
            claim_ref=ClaimRef(pvc.namespace, pvc.name, pvc.uid),
            node_affinity=(NodeSelectorTerm(reqs),) if reqs else None,
            csi_driver=provisioner,
            csi_handle=name,
            phase=VOLUME_BOUND,
            source=f"provisioned by {provisioner} for {pvc.key} on {node}",
        )
        storage.add_volume(pv)
        return pv


def new_volume_binding(args: PluginArgs | None, handle: Handle) -> VolumeBinding:
    return VolumeBinding(handle, args, handle.kube_version)
