"""ImageLocality: favours nodes that already hold the pod's container images (node ``status.images``).

Each image of the pod (init containers included, as upstream since v1.28; image volumes from 1.36) that a node
holds adds its size scaled by the share of all nodes that hold it (spreading: an image on every node counts fully,
one on few nodes little). The sum is clamped to [23 MiB, 1000 MiB x number of containers (and, from 1.37, image
volumes)] and mapped linearly onto 0..100, with upstream's integer and floating-point steps. Image names are
matched as written in the node status; the pod's are normalised only by appending ``:latest`` to a name without a
tag or digest, as upstream does.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from packsched.api.objects import Pod
from packsched.config.types import PluginArgs
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import MAX_NODE_SCORE, Handle, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.plugins.helper import signers

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """A name with no tag after its last path segment gets ``:latest`` (upstream normalizedImageName)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(size: int, num_nodes: int, total_nodes: int) -> int:
    """The image size times its spread, in float64 as upstream, truncated toward zero."""
    spread = float(num_nodes) / float(total_nodes)
    return int(float(size) * spread)


def calculate_priority(sum_scores: IntArray, num_containers: int) -> IntArray:
    """Clamp to [min, max threshold] and scale onto 0..MaxNodeScore (all terms are non-negative: // truncates)."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = np.clip(sum_scores, MIN_THRESHOLD, max(max_threshold, MIN_THRESHOLD))
    if max_threshold <= MIN_THRESHOLD:  # a pod without containers: upstream would divide by a negative number
        return np.zeros(len(sum_scores), dtype=np.int64)
    out: IntArray = MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
    return out


class ImageStates:
    """Per image name: its size (as the first node listing it reports it) and the nodes holding it."""

    def __init__(self, snap: Snapshot) -> None:
        self.total = snap.n
        self.size: dict[str, int] = {}
        self.nodes: dict[str, BoolArray] = {}
        for col, node in enumerate(snap.nodes):
            for image in node.images:
                for name in image.names:
                    mask = self.nodes.get(name)
                    if mask is None:
                        mask = self.nodes[name] = np.zeros(snap.n, dtype=bool)
                        self.size[name] = image.size
                    mask[col] = True
        self.count = {name: int(mask.sum()) for name, mask in self.nodes.items()}


class ImageLocality:
    name = NAME
    score_reads_pods = False  # a node's images are node fields

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod)."""
        return signers.image_names(pod.pod, normalized_image_name)

    def __init__(self, version: KubeVersion = DEFAULT_KUBE_VERSION) -> None:
        self.volumes_in_sum = version.image_locality_scores_image_volumes
        self.volumes_in_threshold = version.image_locality_threshold_counts_image_volumes
        self._states: ImageStates | None = None
        self._gen = -1
        self._snap: Snapshot | None = None

    def _image_states(self, snap: Snapshot) -> ImageStates:
        if self._states is None or self._gen != snap.node_generation or self._snap is not snap:
            self._states = ImageStates(snap)
            self._gen = snap.node_generation
            self._snap = snap
        return self._states

    def raw_scores(self, pod: Pod, snap: Snapshot) -> IntArray:
        """sumImageScores for every node."""
        states = self._image_states(snap)
        total = np.zeros(snap.n, dtype=np.int64)
        images = [c.image for c in [*pod.init_containers, *pod.containers]]
        if self.volumes_in_sum:
            images += [v.image for v in pod.volumes if v.source == "image"]
        for image in images:
            name = normalized_image_name(image)
            mask = states.nodes.get(name)
            if mask is None:
                continue
            total += np.where(mask, scaled_image_score(states.size[name], states.count[name], states.total), 0)
        return total

    def equivalence_key(self, pod: PodInfo) -> Hashable:
        # the containers' images (so how many containers there are) and the image volumes' images; the nodes'
        # images are node fields
        p = pod.pod
        images = [c.image for c in p.containers]
        if p.init_containers:
            images = [c.image for c in p.init_containers] + images
        if not p.volumes:
            return tuple(images)
        return (tuple(images), tuple([v.image for v in p.volumes if v.source == "image"]))

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        containers = len(pod.pod.init_containers) + len(pod.pod.containers)
        if self.volumes_in_threshold:
            containers += sum(1 for v in pod.pod.volumes if v.source == "image")
        if not self._image_states(snap).nodes:
            return calculate_priority(np.zeros(len(cols), dtype=np.int64), containers)
        return calculate_priority(self.raw_scores(pod.pod, snap)[cols], containers)


def new_image_locality(args: PluginArgs | None, handle: Handle) -> ImageLocality:
    return ImageLocality(handle.kube_version)
