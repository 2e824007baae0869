"""What PodTopologySpread works from: the constraints it applies to a pod (its own, or the default ones with the
selector deduced from the Services and controllers that select it), and which nodes each constraint counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from packsched.api.objects import HONOR, LabelSelector, OwnerRef, Pod, Requirement, Service, TopologySpreadConstraint
from packsched.backend.podcounts import PodFilter, pod_counts
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.plugins.helper.labels import selector_mask, terms_mask

HOSTNAME = "kubernetes.io/hostname"
MAX_INT32 = 2**31 - 1


@dataclass(frozen=True)
class Constraint:
    """A constraint as the plugin applies it: ``selector`` None matches no pod (a constraint without a
    labelSelector); the policies resolved (Honor for node affinity and Ignore for taints when not set)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int
    honor_affinity: bool
    honor_taints: bool

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.selector is not None and self.selector.matches(dict(labels))


def _merge_match_label_keys(
    selector: LabelSelector | None, keys: Sequence[str], labels: Mapping[str, str]
) -> LabelSelector | None:
    """matchLabelKeys: the pod's values of those keys join the selector (a missing selector stays one that
    matches nothing)."""
    extra = tuple(sorted((k, labels[k]) for k in dict.fromkeys(keys) if k in labels))
    if selector is None or not extra:
        return selector
    return LabelSelector(extra + selector.match_labels, selector.match_expressions)


@dataclass(frozen=True)
class Features:
    """Fields the kube-scheduler being imitated reads (``KubeVersion``): older releases drop them."""

    match_label_keys: bool = True  # 1.27+
    node_inclusion_policies: bool = True  # 1.26+; before, every node counts as under Honor / Ignore
    min_domains: bool = True  # 1.27+


def select_constraints(
    constraints: Sequence[TopologySpreadConstraint],
    labels: Mapping[str, str],
    action: str,
    features: Features = Features(),
) -> list[Constraint]:
    """The constraints with ``whenUnsatisfiable == action``, resolved as the scheduler applies them."""
    out: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        keys = c.match_label_keys if features.match_label_keys else ()
        policies = features.node_inclusion_policies
        out.append(
            Constraint(
                c.max_skew,
                c.topology_key,
                _merge_match_label_keys(c.label_selector, keys, labels),
                c.min_domains if c.min_domains is not None and features.min_domains else 1,
                (c.node_affinity_policy or HONOR) == HONOR if policies else True,
                c.node_taints_policy == HONOR if policies else False,
            )
        )
    return out


def controller_of(pod: Pod) -> OwnerRef | None:
    """The pod's controller: the ownerReference marked controller, or the workload packsched expanded it from."""
    for ref in pod.owner_refs:
        if ref.controller:
            return ref
    return pod.owner


# Kinds whose selector the default constraints use, with the apiVersion their owner references must name
# ("" for the pods packsched itself expands from a workload, which name none). A Deployment's pods are owned
# by its ReplicaSet, whose selector is the Deployment's (plus the pod-template-hash label, the same for every
# pod of one template), so a pod expanded from a Deployment uses the Deployment's selector.
_SELECTOR_OWNERS = {
    "ReplicationController": "v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Deployment": "",
}


def default_selector(
    pod: Pod,
    services: Mapping[str, Service],
    selectors: Mapping[tuple[str, str, str], LabelSelector | None],
) -> LabelSelector | None:
    """upstream DefaultSelector: the selectors of the pod's Services (merged), and of its controller when that
    is a ReplicationController, ReplicaSet or StatefulSet; None when that leaves nothing to select by."""
    labels: dict[str, str] = {}
    for svc in services.values():
        if svc.namespace != pod.namespace or svc.selector is None:
            continue
        if all(pod.labels.get(k) == v for k, v in svc.selector.items()):
            labels.update(svc.selector)
    extra: list[Requirement] = []
    ref = controller_of(pod)
    if ref is not None and ref.kind in _SELECTOR_OWNERS and ref.api_version in ("", _SELECTOR_OWNERS[ref.kind]):
        owner = selectors.get((pod.namespace, ref.kind, ref.name))
        if owner is not None and ref.kind == "ReplicationController":
            labels.update(dict(owner.match_labels))
        elif owner is not None:
            extra += [Requirement(k, "In", (v,)) for k, v in owner.match_labels]
            extra += owner.match_expressions
    if not labels and not extra:
        return None
    return LabelSelector(tuple(sorted(labels.items())), tuple(extra))


def untolerated_mask(snap: Snapshot, pod: Pod) -> BoolArray:
    """Nodes with a NoSchedule or NoExecute taint the pod does not tolerate."""
    rows = [r for r in snap.hard_taint_rows if not any(t.tolerates(snap.taints[r]) for t in pod.tolerations)]
    if not rows:
        return np.zeros(snap.n, dtype=bool)
    out: BoolArray = np.asarray((snap.taint_pos[rows] >= 0).any(axis=0), dtype=bool)
    return out


def required_affinity_mask(snap: Snapshot, pod: Pod) -> BoolArray:
    """Nodes matching the pod's nodeSelector and required node affinity (GetRequiredNodeAffinity)."""
    mask = selector_mask(snap, pod.node_selector)
    if pod.node_affinity is not None and pod.node_affinity.required is not None:
        mask &= terms_mask(snap, pod.node_affinity.required)
    return mask


KEY_CODES = "PodTopologySpread/keycodes"


@dataclass(frozen=True)
class KeyCodes:
    """Each node's value code of one label key as int64 (-1: the node lacks the key), whether every node has
    it, and the key's number of values; for scoring, the codes with a missing label read as the value ""
    (upstream reads a missing label as "": the code of "" where a node has it, else one past the last code), and
    their number of codes."""

    codes: IntArray
    every: bool
    size: int
    extended: IntArray
    extended_size: int


class _KeyCodesCache:
    """KeyCodes by key, for one version of the snapshot's label index."""

    def __init__(self, version: int, n: int) -> None:
        self.version = version
        self.n = n
        self.by_key: dict[str, KeyCodes] = {}


def key_codes(snap: Snapshot, key: str) -> KeyCodes:
    """The label key's codes (kept in the snapshot until a node's labels change; do not write to them)."""
    cache = snap.extensions.get(KEY_CODES)
    if not isinstance(cache, _KeyCodesCache) or cache.version != snap.labels.version or cache.n != snap.n:
        cache = _KeyCodesCache(snap.labels.version, snap.n)
        snap.extensions[KEY_CODES] = cache
    out = cache.by_key.get(key)
    if out is None:
        col = snap.labels.column(key)
        codes = np.full(snap.n, -1, dtype=np.int64) if col is None else col.astype(np.int64)
        vocab = snap.labels.vocab.get(key, {})
        every = bool((codes >= 0).all())
        extended = codes if every else np.where(codes < 0, vocab.get("", len(vocab)), codes)
        out = KeyCodes(codes, every, len(vocab), extended, len(vocab) + 1)
        cache.by_key[key] = out
    return out


def masked_domain_sums(per_node: IntArray, kc: KeyCodes, eligible: BoolArray, n_domains: int) -> IntArray:
    """``backend.podcounts.domain_sums`` (the sum of ``per_node`` over the eligible nodes of each domain) without
    gathering the eligible nodes first: ineligible nodes weigh nothing (the same sums, exactly: integers far
    below 2**53)."""
    weights = per_node * eligible
    if kc.every:
        sums = np.bincount(kc.codes, weights=weights, minlength=n_domains)
    else:
        has = kc.codes >= 0
        sums = np.bincount(kc.codes[has], weights=weights[has], minlength=n_domains)
    out: IntArray = sums[:n_domains].astype(np.int64)
    return out


COUNTED_KEY = "PodTopologySpread/counted"
COUNTED_LIMIT = 64


class _CountedCache:
    """``NodeMasks.counted`` answers for one state of the nodes (label index version, node generation, count)."""

    def __init__(self, stamp: tuple[int, int, int]) -> None:
        self.stamp = stamp
        self.entries: dict[object, tuple[BoolArray, BoolArray]] = {}


class NodeMasks:
    """Per-node facts about one pod, computed once per cycle: which nodes carry every constraint's key, and
    which nodes each inclusion policy keeps."""

    def __init__(self, snap: Snapshot, pod: Pod, constraints: Sequence[Constraint]) -> None:
        self.snap = snap
        self.pod = pod
        self.keys = tuple(c.topology_key for c in constraints)
        self._affinity: BoolArray | None = None
        self._tolerated: BoolArray | None = None
        self._all_keys: BoolArray | None = None

    @property
    def all_keys(self) -> BoolArray:
        """Nodes carrying every constraint's topology key (do not write to it)."""
        if self._all_keys is None:
            mask = np.ones(self.snap.n, dtype=bool)
            for key in self.keys:
                kc = key_codes(self.snap, key)
                if not kc.every:
                    mask &= kc.codes >= 0
            self._all_keys = mask
        return self._all_keys

    def counted(self, c: Constraint, n_values: int) -> tuple[BoolArray, BoolArray]:
        """The nodes constraint ``c`` counts (every key present, its inclusion policies kept) and the domains
        they make up (by value code, ``n_values`` of them). Both depend only on the nodes and on the pod's
        fields the policies read, so they are kept in the snapshot for the next pod asking the same (read-only:
        do not write to them)."""
        pod = self.pod
        aff: object = None
        if c.honor_affinity:
            required = pod.node_affinity.required if pod.node_affinity is not None else None
            aff = (tuple(sorted(pod.node_selector.items())), required)
        key = (self.keys, c.topology_key, n_values, aff, tuple(pod.tolerations) if c.honor_taints else None)
        snap = self.snap
        stamp = (snap.labels.version, snap.node_generation, snap.n)
        cache = snap.extensions.get(COUNTED_KEY)
        if not isinstance(cache, _CountedCache) or cache.stamp != stamp:
            cache = _CountedCache(stamp)
            snap.extensions[COUNTED_KEY] = cache
        hit = cache.entries.get(key)
        if hit is None:
            eligible = self.all_keys & self.included(c)
            present = np.bincount(self.codes(c.topology_key)[eligible], minlength=n_values) > 0
            hit = (eligible, present)
            if len(cache.entries) >= COUNTED_LIMIT:
                cache.entries.clear()
            cache.entries[key] = hit
        return hit

    def codes(self, key: str) -> IntArray:
        """Each node's value code of ``key`` (-1: missing; shared: do not write to it)."""
        return key_codes(self.snap, key).codes

    def included(self, c: Constraint) -> BoolArray:
        """Nodes the constraint's nodeAffinityPolicy and nodeTaintsPolicy keep."""
        mask = np.ones(self.snap.n, dtype=bool)
        if c.honor_affinity:
            if self._affinity is None:
                self._affinity = required_affinity_mask(self.snap, self.pod)
            mask &= self._affinity
        if c.honor_taints:
            if self._tolerated is None:
                self._tolerated = ~untolerated_mask(self.snap, self.pod)
            mask &= self._tolerated
        return mask


def matching_per_node(snap: Snapshot, c: Constraint, namespace: str) -> IntArray:
    """How many placed, not terminating pods of ``namespace`` matching the constraint's selector each node holds."""
    if c.selector is None:
        return np.zeros(snap.n, dtype=np.int64)
    return pod_counts(snap).counts(PodFilter(frozenset({namespace}), c.selector, skip_terminating=True))
