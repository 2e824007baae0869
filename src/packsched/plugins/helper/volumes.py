"""What the volume plugins share: API-style "not found" messages, a PersistentVolume's node affinity over every
node, and the CSI attach-limit key."""

from __future__ import annotations

import hashlib

import numpy as np

from packsched.api.objects import NodeSelectorTerm
from packsched.api.storage import PersistentVolume
from packsched.framework.snapshot import BoolArray, Snapshot
from packsched.plugins.helper.labels import requirement_mask

CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
_RESOURCE_NAME_LENGTH_LIMIT = 63


def claim_not_found(name: str) -> str:
    return f'persistentvolumeclaim "{name}" not found'


def volume_not_found(name: str) -> str:
    return f'persistentvolume "{name}" not found'


def class_not_found(name: str) -> str:
    return f'storageclass.storage.k8s.io "{name}" not found'


def csi_attach_limit_key(driver: str) -> str:
    """The node allocatable key of a CSI driver's volume limit (upstream GetCSIAttachLimitKey): a name too long
    for a resource name keeps 23 characters and adds 16 hex digits of its SHA-1."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


def _label_term_mask(snap: Snapshot, term: NodeSelectorTerm) -> BoolArray:
    """A node-selector term matched against node labels only (upstream CheckNodeAffinity builds a node with
    labels and no name: ``metadata.name In`` never matches, ``NotIn`` always does)."""
    if not term.match_expressions and not term.match_fields:
        return np.zeros(snap.n, dtype=bool)
    mask = np.ones(snap.n, dtype=bool)
    for req in term.match_expressions:
        mask &= requirement_mask(snap, req)
    for req in term.match_fields:
        if not (req.operator == "NotIn" and "" not in req.values):
            mask[:] = False
    return mask


def terms_label_mask(snap: Snapshot, terms: tuple[NodeSelectorTerm, ...]) -> BoolArray:
    mask = np.zeros(snap.n, dtype=bool)
    for term in terms:
        mask |= _label_term_mask(snap, term)
    return mask


def volume_node_mask(snap: Snapshot, pv: PersistentVolume) -> BoolArray:
    """The nodes a PersistentVolume's required node affinity admits (every node when it has none)."""
    if pv.node_affinity is None:
        return np.ones(snap.n, dtype=bool)
    return terms_label_mask(snap, pv.node_affinity)
