"""Per-node counts InterPodAffinity reads instead of walking every pod in every cycle, kept in the snapshot and
updated as pods are placed and removed (binding, preemption's dry run):

- for every term carried by placed pods (required anti-affinity, required affinity, preferred affinity and
  anti-affinity, with the weight), how many placed pods on each node carry it;
- for the pod selections that incoming pods ask about (a conjunction of terms without topology), how many placed
  pods on each node match (built on first use, then kept up to date; the least recently used are dropped).

Counts per topology domain are one ``np.bincount`` over the snapshot's label codes the first time a vector is asked
for them by a topology key; they are then kept beside the vector and bumped as pods come and go, until a node's
labels change (the label index's version), which drops them.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from packsched.framework.interface import NodeSel
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.plugins.interpodaffinity.terms import MatchKey, Term, matches_key, namespace_labels, pod_terms

INDEX_KEY = "InterPodAffinity/index"
MAX_SELECTIONS = 256
FEW_DOMAINS = 64  # node_values looks for a value every domain shares only among this many

REQUIRED_ANTI, REQUIRED_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI = "ra", "rf", "pa", "pn"
# (kind, term, weight): a term placed pods carry
Signature = tuple[str, Term, int]
Selection = tuple[MatchKey, ...]


def _signatures(info: PodInfo) -> list[Signature]:
    """The terms ``info`` carries (computed once per PodInfo: pods come and go many times in preemption's dry
    runs)."""
    cached: list[Signature] | None = info.__dict__.get("_ipa_signatures")
    if cached is None:
        cached = info.__dict__["_ipa_signatures"] = _compute_signatures(info)
    return cached


def _compute_signatures(info: PodInfo) -> list[Signature]:
    t = pod_terms(info)
    if t.empty:
        return []
    out: list[Signature] = [(REQUIRED_ANTI, term, 0) for term in t.required_anti]
    out += [(REQUIRED_AFFINITY, term, 0) for term in t.required_affinity]
    out += [(PREFERRED_AFFINITY, term, w) for w, term in t.preferred_affinity]
    out += [(PREFERRED_ANTI, term, w) for w, term in t.preferred_anti]
    return out


class AffinityIndex:
    """The snapshot's per-node counts for InterPodAffinity (a PodListener of the snapshot)."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.n = snap.n
        self.carried: dict[Signature, IntArray] = {}
        self.selections: OrderedDict[Selection, IntArray] = OrderedDict()
        # the same counts summed per topology domain, for the keys asked about so far (None: no node has the key)
        self.carried_domains: dict[Signature, IntArray | None] = {}
        self.selection_domains: dict[Selection, dict[str, IntArray | None]] = {}
        self.labels_version = snap.labels.version
        self._shapes: dict[str, tuple[bool, int, bool]] = {}
        for info in snap.pods.values():
            self._carry(info, info.node, +1)
        snap.listeners.append(self)

    # -- upkeep ---------------------------------------------------------------------------------------------

    def _grow(self) -> None:
        """Follow the snapshot: new nodes pad the vectors; changed labels drop the counts per domain."""
        if self.snap.labels.version != self.labels_version:
            self.labels_version = self.snap.labels.version
            self.carried_domains.clear()
            self.selection_domains.clear()
            self._shapes.clear()
        n = self.snap.n
        if n == self.n:
            return
        pad = np.zeros(n - self.n, dtype=np.int64)
        for table in (self.carried, self.selections):
            for key, vec in table.items():
                table[key] = np.concatenate([vec, pad])  # type: ignore[index]
        self.n = n

    def _carry(self, info: PodInfo, col: int, sign: int) -> None:
        for sig in _signatures(info):
            vec = self.carried.get(sig)
            if vec is None:
                vec = self.carried[sig] = np.zeros(self.n, dtype=np.int64)
            vec[col] += sign
            dom = self.carried_domains.get(sig)
            if dom is not None:
                code = self.snap.labels.codes[sig[1].topology_key][col]
                if code >= 0:
                    dom[code] += sign
            if sign < 0 and not vec.any():
                del self.carried[sig]
                self.carried_domains.pop(sig, None)

    def _select(self, info: PodInfo, col: int, sign: int) -> None:
        if not self.selections:
            return
        pod = info.pod
        labels = namespace_labels(self.snap, pod.namespace)
        for sel, vec in self.selections.items():
            if all(matches_key(k, pod, labels) for k in sel):
                vec[col] += sign
                doms = self.selection_domains.get(sel)
                if doms:
                    for key, dom in doms.items():
                        if dom is not None:
                            code = self.snap.labels.codes[key][col]
                            if code >= 0:
                                dom[code] += sign

    def pod_added(self, info: PodInfo, col: int) -> None:
        if self.selections or _signatures(info):
            self._grow()
            self._carry(info, col, +1)
            self._select(info, col, +1)

    def pod_removed(self, info: PodInfo, col: int) -> None:
        if self.selections or _signatures(info):
            self._grow()
            self._carry(info, col, -1)
            self._select(info, col, -1)

    def namespaces_changed(self) -> None:
        """A namespace's labels changed: the selections matched namespace selectors against the old ones (the
        terms placed pods carry do not depend on them)."""
        self.selections.clear()
        self.selection_domains.clear()

    # -- questions ------------------------------------------------------------------------------------------

    def matching(self, sel: Selection) -> IntArray:
        """How many placed pods on each node match every term of ``sel``."""
        self._grow()
        vec = self.selections.get(sel)
        if vec is not None:
            self.selections.move_to_end(sel)
            return vec
        vec = np.zeros(self.n, dtype=np.int64)
        snap = self.snap
        for info in snap.pods.values():
            pod = info.pod
            labels = namespace_labels(snap, pod.namespace)
            if all(matches_key(k, pod, labels) for k in sel):
                vec[info.node] += 1
        self.selections[sel] = vec
        if len(self.selections) > MAX_SELECTIONS:
            dropped, _ = self.selections.popitem(last=False)
            self.selection_domains.pop(dropped, None)
        return vec

    def matching_domains(self, sel: Selection, key: str) -> IntArray | None:
        """``matching(sel)`` summed per value of label ``key`` (as :func:`per_domain`; do not write to it)."""
        vec = self.matching(sel)
        doms = self.selection_domains.get(sel)
        if doms is None:
            doms = self.selection_domains[sel] = {}
        elif key in doms:
            return doms[key]
        out = doms[key] = per_domain(self.snap, key, vec)
        return out

    def carries(self, kinds: tuple[str, ...]) -> bool:
        """Whether some placed pod carries a term of one of ``kinds`` (``carried_terms`` would list one)."""
        return any(sig[0] in kinds for sig in self.carried)

    def carried_terms(self, kinds: tuple[str, ...]) -> list[tuple[Signature, IntArray | None]]:
        """The terms placed pods carry, of the given kinds, each with how many placed pods carry it per value of
        its topology key (as :func:`per_domain`; do not write to them)."""
        self._grow()
        out: list[tuple[Signature, IntArray | None]] = []
        for sig, vec in self.carried.items():
            if sig[0] not in kinds:
                continue
            if sig in self.carried_domains:
                dom = self.carried_domains[sig]
            else:
                dom = self.carried_domains[sig] = per_domain(self.snap, sig[1].topology_key, vec)
            out.append((sig, dom))
        return out

    def key_shape(self, key: str) -> tuple[bool, int, bool]:
        """Whether every node has label ``key``, one more than its largest code, and whether node ``i`` has code
        ``i`` (a hostname label, nodes named in the order they came) (cached per label version)."""
        self._grow()
        shape = self._shapes.get(key)
        if shape is None:
            codes = self.snap.labels.column(key)
            if codes is None or len(codes) == 0:
                shape = (False, 0, False)
            else:
                every = bool(codes.min() >= 0)
                shape = (every, int(codes.max()) + 1, every and bool((codes == np.arange(len(codes))).all()))
            self._shapes[key] = shape
        return shape


def affinity_index(snap: Snapshot) -> AffinityIndex:
    """The snapshot's index (built from the placed pods on first use; it goes away with the snapshot)."""
    idx = snap.extensions.get(INDEX_KEY)
    if not isinstance(idx, AffinityIndex):
        idx = AffinityIndex(snap)
        snap.extensions[INDEX_KEY] = idx
    return idx


def per_domain(snap: Snapshot, key: str, per_node: IntArray) -> IntArray | None:
    """``per_node`` summed per value of label ``key`` (indexed by the label index's value codes); None when no
    node has the key. Nodes without the key count nowhere."""
    codes = snap.labels.column(key)
    if codes is None:
        return None
    size = len(snap.labels.vocab[key])
    has = codes >= 0
    if not has.all():
        out: IntArray = np.bincount(codes[has], weights=per_node[has], minlength=size).astype(np.int64)
    else:
        out = np.bincount(codes, weights=per_node, minlength=size).astype(np.int64)
    return out


def node_values(snap: Snapshot, key: str, by_code: IntArray | None, cols: NodeSel) -> IntArray:
    """Each selected node's entry of ``by_code`` (0 where the node lacks the key or the code is beyond it)."""
    codes = snap.labels.column(key)
    if codes is None or by_code is None:
        return np.zeros(len(np.arange(snap.n)[cols]), dtype=np.int64)
    every, top, identity = affinity_index(snap).key_shape(key)
    if every and 0 < top <= min(len(by_code), FEW_DOMAINS) and (by_code[:top] == by_code[0]).all():
        # few domains, all alike (one zone, say): the same value on every node
        return np.full(len(range(snap.n)[cols]) if isinstance(cols, slice) else len(cols), by_code[0], dtype=np.int64)
    if every and top <= len(by_code):
        # every node has the key and every code indexes by_code (a node's own code when it is its column)
        fast: IntArray = by_code[cols] if identity else by_code[codes[cols]]
        return fast.copy() if isinstance(cols, slice) else fast
    c = codes[cols]
    ok = (c >= 0) & (c < len(by_code))
    out = np.zeros(len(c), dtype=np.int64)
    out[ok] = by_code[c[ok]]
    return out


def node_positive(snap: Snapshot, key: str, by_code: IntArray | None, cols: NodeSel) -> BoolArray:
    """``node_values(...) > 0``, answered from the domains alone when every node has the key and every domain
    or none is positive (one zone, say)."""
    if by_code is not None and snap.labels.column(key) is not None:
        every, top, _ = affinity_index(snap).key_shape(key)
        if every and top <= len(by_code):
            positive = by_code[:top] > 0
            if positive.all() or not positive.any():
                size = len(range(snap.n)[cols]) if isinstance(cols, slice) else len(cols)
                return np.full(size, bool(positive[0]) if top else False, dtype=bool)
    out: BoolArray = node_values(snap, key, by_code, cols) > 0
    return out
