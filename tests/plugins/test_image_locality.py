"""ImageLocality against upstream's table (image_locality_test.go, in our words) with v1.28+ thresholds: the
maximum grows with the number of containers, init containers count."""

from __future__ import annotations

import numpy as np
import pytest

from packsched.api.objects import Container, Node, NodeImage, Pod
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import make_pod_info
from packsched.framework.snapshot import Snapshot
from packsched.plugins.imagelocality.image_locality import ImageLocality, normalized_image_name

MB = 1024 * 1024

# node 1 holds the 40 MB, 300 MB and 2000 MB images; node 2 the 250 MB and 10 MB ones; node 3 none.
NODE1 = (
    NodeImage(("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40 * MB),
    NodeImage(("gcr.io/300:latest", "gcr.io/300:v1"), 300 * MB),
    NodeImage(("gcr.io/2000:latest",), 2000 * MB),
)
NODE2 = (NodeImage(("gcr.io/250:latest",), 250 * MB), NodeImage(("gcr.io/10:latest", "gcr.io/10:v1"), 10 * MB))


def _pod(*images: str, init: tuple[str, ...] = ()) -> Pod:
    return Pod(
        "p",
        containers=[Container(f"c{i}", image=im) for i, im in enumerate(images)],
        init_containers=[Container(f"i{i}", image=im) for i, im in enumerate(init)],
    )


def _scores(pod: Pod, nodes: list[tuple[NodeImage, ...]]) -> list[int]:
    snap = Snapshot([Node(f"n{i}", images=imgs) for i, imgs in enumerate(nodes)])
    plugin = ImageLocality()
    out = plugin.score(CycleState(), make_pod_info(pod), snap, np.arange(snap.n))
    return [int(x) for x in out]


CASES = [
    # 40 MB / 2 nodes = 20 MB < 23 MB minimum -> 0; 250 MB / 2 = 125 MB -> 100 * 102 MB / (2000 - 23) MB = 5
    ("larger image wins", _pod("gcr.io/40", "gcr.io/250"), [NODE1, NODE2], [0, 5]),
    # (40 + 300) / 2 = 170 MB -> 100 * 147 / 1977 = 7; node 2 holds neither
    ("both images on one node", _pod("gcr.io/40", "gcr.io/300"), [NODE1, NODE2], [7, 0]),
    # 2000 / 2 = 1000 MB -> 100 * 977 / 1977 = 49; 10 / 2 MB is below the minimum
    ("huge image, two containers", _pod("gcr.io/10", "gcr.io/2000"), [NODE1, NODE2], [49, 0]),
    # spread 1/3: int(2000 MB * (1/3)) bytes -> 100 * (that - 23 MB) // 1977 MB = 32
    ("third node without images", _pod("gcr.io/10", "gcr.io/2000"), [NODE1, NODE2, ()], [32, 0, 0]),
    # one container: the maximum is 1000 MB, 2000 / 2 MB reaches it
    ("one container at the maximum", _pod("gcr.io/2000"), [NODE1, NODE2], [100, 0]),
    # init containers count, in the sum and in the threshold: (300 + 40) / 2 = 170 MB over 2 containers
    ("init container", _pod("gcr.io/40", init=("gcr.io/300",)), [NODE1, NODE2], [7, 0]),
    # a tagged name must match exactly: gcr.io/40:v2 is on no node; 300 / 2 = 150 MB -> 100 * 127 / 1977 = 6
    ("other tag", _pod("gcr.io/40:v2", "gcr.io/300:v1"), [NODE1, NODE2], [6, 0]),
]


@pytest.mark.parametrize(("name", "pod", "nodes", "want"), CASES, ids=[c[0] for c in CASES])
def test_image_locality_scores(name: str, pod: Pod, nodes: list[tuple[NodeImage, ...]], want: list[int]) -> None:
    assert _scores(pod, nodes) == want


def test_third_node_score_is_the_exact_integer_formula() -> None:
    size = int(float(2000 * MB) * (1.0 / 3.0))
    want = 100 * (size - 23 * MB) // (2000 * MB - 23 * MB)
    assert _scores(_pod("gcr.io/10", "gcr.io/2000"), [NODE1, NODE2, ()])[0] == want == 32


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@sha256:" + "ab" * 32, "root@sha256:" + "ab" * 32),
        ("docker.io/library/nginx", "docker.io/library/nginx:latest"),
    ],
)
def test_normalized_image_name(given: str, want: str) -> None:
    assert normalized_image_name(given) == want


def test_image_states_follow_node_changes() -> None:
    snap = Snapshot([Node("a", images=NODE2), Node("b")])
    plugin = ImageLocality()
    pod = make_pod_info(_pod("gcr.io/250"))
    assert plugin.score(CycleState(), pod, snap, np.arange(2)).tolist() == [10, 0]  # 125 MB over one container
    snap.update_node(Node("b", images=NODE2))
    # on both nodes now: the full 250 MB counts -> 100 * 227 / 977 = 23
    assert plugin.score(CycleState(), pod, snap, np.arange(2)).tolist() == [23, 23]
