"""NodePreferAvoidPods (upstream's v1.21 plugin, node_prefer_avoid_pods_test.go in our words): 0 on a node whose
``scheduler.alpha.kubernetes.io/preferAvoidPods`` annotation names the pod's ReplicaSet or ReplicationController,
100 elsewhere and for every other pod; an annotation that does not parse avoids nothing."""

from __future__ import annotations

import json

import numpy as np
import pytest

from packsched.api.objects import Container, Node, OwnerRef, Pod
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.plugins.nodepreferavoidpods.node_prefer_avoid_pods import (
    ANNOTATION,
    NodePreferAvoidPods,
    _avoided,
    new_node_prefer_avoid_pods,
)


def avoid(*controllers: tuple[str, str]) -> str:
    return json.dumps(
        {
            "preferAvoidPods": [
                {"podSignature": {"podController": {"apiVersion": "v1", "kind": k, "name": n, "uid": "u"}}}
                for k, n in controllers
            ]
        }
    )


RC_NODE = Node("rc-node", annotations={ANNOTATION: avoid(("ReplicationController", "foo"))})
RS_NODE = Node("rs-node", annotations={ANNOTATION: avoid(("ReplicaSet", "foo"), ("ReplicaSet", "bar"))})
PLAIN = Node("plain", annotations={"other": "x"})


def scores(owner: OwnerRef | None, nodes: list[Node], cols: list[int] | None = None) -> list[int]:
    snap = Snapshot(nodes)
    pod = make_pod_info(Pod("p", owner=owner, containers=[Container("c")]))
    plugin = new_node_prefer_avoid_pods(None, None)  # type: ignore[arg-type]
    assert isinstance(plugin, NodePreferAvoidPods) and plugin.name == "NodePreferAvoidPods"
    picked = np.arange(snap.n) if cols is None else np.array(cols, dtype=np.int64)
    return [int(x) for x in plugin.score(CycleState(), pod, snap, picked)]


@pytest.mark.parametrize(
    ("owner", "want"),
    [
        (OwnerRef("ReplicationController", "foo"), [0, 100, 100]),
        (OwnerRef("ReplicaSet", "foo"), [100, 0, 100]),
        (OwnerRef("ReplicaSet", "bar"), [100, 0, 100]),
        (OwnerRef("ReplicaSet", "baz"), [100, 100, 100]),  # another ReplicaSet
        (OwnerRef("Deployment", "foo"), [100, 0, 100]),  # a Deployment's pods are its ReplicaSet's
        (OwnerRef("StatefulSet", "foo"), [100, 100, 100]),  # other controllers are not avoided
        (None, [100, 100, 100]),
    ],
)
def test_scores(owner: OwnerRef | None, want: list[int]) -> None:
    assert scores(owner, [RC_NODE, RS_NODE, PLAIN]) == want


def test_scores_follow_the_columns_asked_for() -> None:
    assert scores(OwnerRef("ReplicaSet", "foo"), [RC_NODE, RS_NODE, PLAIN], [2, 1]) == [100, 0]


@pytest.mark.parametrize(
    "annotation",
    [
        "not json",
        "[]",
        '"text"',
        '{"preferAvoidPods": {"kind": "ReplicaSet"}}',
        '{"preferAvoidPods": ["x"]}',
        '{"preferAvoidPods": [{"podSignature": "x"}]}',
        '{"preferAvoidPods": [{"podSignature": {"podController": "x"}}]}',
        '{"preferAvoidPods": [{"podSignature": {"podController": {"kind": 1, "name": "foo"}}}]}',
        # a bad entry beside a good one: upstream's json.Unmarshal fails on the whole annotation
        '{"preferAvoidPods": [{"podSignature": {"podController": {"kind": "ReplicaSet", "name": "foo"}}}, 3]}',
    ],
)
def test_an_annotation_that_does_not_parse_avoids_nothing(annotation: str) -> None:
    assert _avoided(annotation) == set()
    node = Node("n", annotations={ANNOTATION: annotation})
    assert scores(OwnerRef("ReplicaSet", "foo"), [node]) == [100]


def test_entries_without_kind_or_name_are_skipped() -> None:
    text = json.dumps(
        {
            "preferAvoidPods": [
                None,
                {},
                {"podSignature": None},
                {"podSignature": {"podController": {"kind": "ReplicaSet"}}},
                {"podSignature": {"podController": {"kind": "ReplicaSet", "name": "foo"}}, "reason": "r"},
            ]
        }
    )
    assert _avoided(text) == {("ReplicaSet", "foo")}
