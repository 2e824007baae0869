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


def _avoided(annotation: str) -> set[tuple[str, str]]:
    try:
        data = json.loads(annotation)
    except ValueError:
        return set()
    out: set[tuple[str, str]] = set()
    entries = data.get("preferAvoidPods", []) if isinstance(data, dict) else []
    for entry in entries if isinstance(entries, list) else []:
        ctrl = (entry or {}).get("podSignature", {}).get("podController", {}) if isinstance(entry, dict) else {}
        if isinstance(ctrl, dict) and ctrl.get("kind") and ctrl.get("name"):
            out.add((str(ctrl["kind"]), str(ctrl["name"])))
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
