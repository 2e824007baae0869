"""NodePreferAvoidPods (v1beta1 and older only): a node annotated with
``scheduler.alpha.kubernetes.io/preferAvoidPods`` scores 0 for pods of the ReplicaSets or
ReplicationControllers it names, 100 for everything else.

packsched's pods carry their owner's kind and name, not a UID, so an entry matches on kind and name
(a Deployment's pods count as pods of its ReplicaSet)."""

from __future__ import annotations

import json

import numpy as np

from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import MAX_NODE_SCORE, Handle
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot

NAME = "NodePreferAvoidPods"
ANNOTATION = "scheduler.alpha.kubernetes.io/preferAvoidPods"


def _object(value: object) -> dict[str, object] | None:
    """A JSON object as Go's json.Unmarshal reads it into a struct: null is an empty one; None: not an object."""
    if value is None:
        return {}
    return value if isinstance(value, dict) else None


def _avoided(annotation: str) -> set[tuple[str, str]]:
    """The (kind, name) of the controllers the annotation names; an annotation that does not decode as upstream's
    AvoidPods (not JSON, or a value of the wrong type anywhere) avoids nothing, as upstream then scores 100."""
    try:
        data = json.loads(annotation)
    except ValueError:
        return set()
    out: set[tuple[str, str]] = set()
    top = _object(data)
    entries = None if top is None else top.get("preferAvoidPods")
    if entries is None:
        return out
    if not isinstance(entries, list):
        return set()
    for entry in entries:
        item = _object(entry)
        signature = None if item is None else _object(item.get("podSignature"))
        ctrl = None if signature is None else _object(signature.get("podController"))
        if ctrl is None:
            return set()
        kind, name = ctrl.get("kind"), ctrl.get("name")
        if not isinstance(kind, str | None) or not isinstance(name, str | None):
            return set()
        if kind and name:
            out.add((kind, name))
    return out


class NodePreferAvoidPods:
    name = NAME

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        out = np.full(len(cols), MAX_NODE_SCORE, dtype=np.int64)
        owner = pod.pod.owner
        if owner is None or owner.kind not in ("ReplicaSet", "ReplicationController", "Deployment"):
            return out
        kind = "ReplicaSet" if owner.kind == "Deployment" else owner.kind
        for i, col in enumerate(cols.tolist()):
            note = snap.nodes[col].annotations.get(ANNOTATION)
            if note and (kind, owner.name) in _avoided(note):
                out[i] = 0
        return out


def new_node_prefer_avoid_pods(args: PluginArgs | None, handle: Handle) -> NodePreferAvoidPods:
    return NodePreferAvoidPods()
