"""InterPodAffinity: required pod affinity and anti-affinity (Filter), the required anti-affinity of pods already
placed (Filter, both ways), and preferred terms of the pod and of placed pods (Score, min-max normalised).

PreFilter counts, per topology domain, the placed pods that match the incoming pod's terms and the placed pods
whose required anti-affinity the incoming pod matches; Filter reads only those counts, which AddPod/RemovePod keep
right while preemption adds and removes pods. Counts per node come from the snapshot's index
(:mod:`.index`), so no cycle walks every placed pod.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from packsched.config.types import InterPodAffinityArgs, PluginArgs
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import (
    MAX_NODE_SCORE,
    NAMESPACES,
    SIGN_LABELS,
    Handle,
    NodeSel,
    Rejection,
    SignFragments,
)
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.framework.status import Code, PluginError, Status
from packsched.plugins.interpodaffinity.index import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI,
    affinity_index,
    node_positive,
    node_values,
)
from packsched.plugins.interpodaffinity.terms import (
    PodTerms,
    Term,
    namespace_labels,
    pod_terms,
    with_namespace_selector_quirk,
)

NAME = "InterPodAffinity"
# the kinds of placed pods' terms PreFilter counts, and those PreScore counts (REQUIRED_AFFINITY only with a
# positive hardPodAffinityWeight)
_FILTER_CARRIED = (REQUIRED_ANTI,)
_PREFERRED = (PREFERRED_AFFINITY, PREFERRED_ANTI)
_PREFERRED_OR_REQUIRED = (REQUIRED_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI)
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

# Counts per topology domain: label key -> int64 array indexed by the snapshot's value code of that key.
DomainCounts = dict[str, IntArray]


def _add(counts: DomainCounts, key: str, by_code: IntArray) -> None:
    have = counts.get(key)
    if have is None:
        counts[key] = by_code.copy()
    elif len(have) < len(by_code):
        grown = np.zeros(len(by_code), dtype=np.int64)
        grown[: len(have)] = have
        counts[key] = grown + by_code
    else:
        have[: len(by_code)] += by_code


def _bump(counts: DomainCounts, snap: Snapshot, key: str, col: int, by: int) -> None:
    """Add ``by`` to the domain of node ``col`` for ``key`` (nothing when the node lacks the key)."""
    codes = snap.labels.column(key)
    if codes is None or codes[col] < 0:
        return
    code = int(codes[col])
    arr = counts.get(key)
    if arr is None or len(arr) <= code:
        grown = np.zeros(len(snap.labels.vocab[key]), dtype=np.int64)
        if arr is not None:
            grown[: len(arr)] = arr
        arr = counts[key] = grown
    arr[code] += by


def _empty(counts: DomainCounts) -> bool:
    """Upstream's ``len(map) == 0``: no domain with a count other than zero."""
    return not any(arr.any() for arr in counts.values())


def _clone(counts: DomainCounts) -> DomainCounts:
    return {k: v.copy() for k, v in counts.items()}


@dataclass
class PreFilterState:
    """Upstream's preFilterState: the incoming pod's terms, its namespace's labels, and three counts per topology
    domain (existing pods' required anti-affinity matching the pod; placed pods matching all of the pod's required
    affinity terms; placed pods matching each of its required anti-affinity terms)."""

    info: PodInfo
    terms: PodTerms
    ns_labels: dict[str, str]
    existing_anti: DomainCounts = field(default_factory=dict)
    affinity: DomainCounts = field(default_factory=dict)
    anti: DomainCounts = field(default_factory=dict)

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.info,
            self.terms,
            self.ns_labels,
            _clone(self.existing_anti),
            _clone(self.affinity),
            _clone(self.anti),
        )

    def update_with_pod(self, snap: Snapshot, other: PodInfo, col: int, sign: int) -> None:
        """Upstream updateWithPod: ``other`` comes to (+1) or leaves (-1) node ``col``."""
        pod = self.info.pod
        for t in pod_terms(other).required_anti:
            if t.matches(pod, self.ns_labels):
                _bump(self.existing_anti, snap, t.topology_key, col, sign)
        req_aff = self.terms.required_affinity
        if req_aff:
            labels = namespace_labels(snap, other.pod.namespace)
            if all(t.matches(other.pod, labels) for t in req_aff):
                for t in req_aff:
                    _bump(self.affinity, snap, t.topology_key, col, sign)
        if self.terms.required_anti:
            labels = namespace_labels(snap, other.pod.namespace)
            for t in self.terms.required_anti:
                if t.matches(other.pod, labels):
                    _bump(self.anti, snap, t.topology_key, col, sign)


@dataclass
class PreScoreState:
    """Score per topology domain (label key -> int64 array by value code)."""

    topology_score: DomainCounts

    def clone(self) -> PreScoreState:
        return self  # read-only once written, as upstream


class InterPodAffinity:
    name = NAME
    cluster_reads = (NAMESPACES,)  # namespaceSelector reads the snapshot's namespace labels

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod): None for a pod
        with pod affinity or anti-affinity; its labels (other pods' preferred terms may match them) unless
        ignorePreferredTermsOfExistingPods."""
        if pod.pod.pod_affinity is not None or pod.pod.pod_anti_affinity is not None:
            return None
        if self.args.ignore_preferred_terms_of_existing_pods:
            return {}
        return {SIGN_LABELS: sorted(pod.pod.labels.items())}

    def __init__(self, args: PluginArgs | None, handle: Handle, version: KubeVersion = DEFAULT_KUBE_VERSION) -> None:
        if args is not None and not isinstance(args, InterPodAffinityArgs):
            raise TypeError(f"want args to be of type InterPodAffinityArgs, got {type(args).__name__}")
        self.args = args if args is not None else InterPodAffinityArgs()
        self.namespace_selector_quirk = version.pod_affinity_namespace_selector_quirk

    def _own_terms(self, pod: PodInfo) -> PodTerms:
        """The incoming pod's terms as this release matches them against placed pods."""
        terms = pod_terms(pod)
        if not self.namespace_selector_quirk or terms.empty:
            return terms
        cached = pod.__dict__.get("_ipa_quirk_terms")
        if not isinstance(cached, PodTerms):
            cached = pod.__dict__["_ipa_quirk_terms"] = with_namespace_selector_quirk(terms)
        return cached

    # -- PreFilter ------------------------------------------------------------------------------------------

    def assigned_pod_may_help(self, waiting: PodInfo, added: PodInfo, snap: Snapshot) -> bool:
        """kube-scheduler's queue (without queueing hints) moves a pod this plugin rejected when the assigned pod
        matches one of its required affinity terms."""
        labels = namespace_labels(snap, added.pod.namespace)
        return any(t.matches(added.pod, labels) for t in pod_terms(waiting).required_affinity)

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        terms = self._own_terms(pod)
        idx = affinity_index(snap)
        if not terms.required_affinity and not terms.required_anti and not idx.carries(_FILTER_CARRIED):
            return Status.skip()  # what follows would count nothing
        s = PreFilterState(pod, terms, namespace_labels(snap, pod.pod.namespace))
        for (_, term, _), by_code in idx.carried_terms(_FILTER_CARRIED):
            if by_code is not None and term.matches(pod.pod, s.ns_labels) and by_code.any():
                _add(s.existing_anti, term.topology_key, by_code)
        if terms.required_affinity:
            sel = tuple(t.match_key for t in terms.required_affinity)
            for t in terms.required_affinity:
                by_code = idx.matching_domains(sel, t.topology_key)
                if by_code is not None and by_code.any():
                    _add(s.affinity, t.topology_key, by_code)
        for t in terms.required_anti:
            by_code = idx.matching_domains((t.match_key,), t.topology_key)
            if by_code is not None and by_code.any():
                _add(s.anti, t.topology_key, by_code)
        if _empty(s.existing_anti) and not terms.required_affinity and not terms.required_anti:
            return Status.skip()
        state.write(PRE_FILTER_KEY, s)
        return Status()

    def _state(self, state: CycleState) -> PreFilterState:
        s = state.read(PRE_FILTER_KEY)
        if not isinstance(s, PreFilterState):
            raise PluginError(f'error reading "{PRE_FILTER_KEY}" from cycleState: not found')
        return s

    def add_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        self._state(state).update_with_pod(snap, other, col, +1)
        return Status()

    def remove_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        self._state(state).update_with_pod(snap, other, col, -1)
        return Status()

    # -- Filter ---------------------------------------------------------------------------------------------

    def _affinity_bad(self, s: PreFilterState, snap: Snapshot, sel: NodeSel, size: int) -> BoolArray | None:
        """The selected nodes failing satisfyPodAffinity (None: the pod has no required affinity)."""
        terms = s.terms.required_affinity
        if not terms:
            return None
        has_all: BoolArray | None = None  # None: every node has every key
        pods_exist: BoolArray | None = None
        idx = affinity_index(snap)
        for t in terms:
            codes = snap.labels.column(t.topology_key)
            if codes is None:
                return np.ones(size, dtype=bool)
            if not idx.key_shape(t.topology_key)[0]:  # some node lacks the key
                has = codes[sel] >= 0
                has_all = has if has_all is None else has_all & has
            exist = node_positive(snap, t.topology_key, s.affinity.get(t.topology_key), sel)
            pods_exist = exist if pods_exist is None else pods_exist & exist
        # The first pod of a group whose terms select itself: no placed pod matches yet, so any node with every
        # topology key will do.
        own = _empty(s.affinity) and all(t.matches(s.info.pod, s.ns_labels) for t in terms)
        if own:
            return np.zeros(size, dtype=bool) if has_all is None else ~has_all
        assert pods_exist is not None
        return ~pods_exist if has_all is None else ~(has_all & pods_exist)

    def _anti_fails(self, s: PreFilterState, snap: Snapshot, sel: NodeSel) -> BoolArray | None:
        """The selected nodes in a domain holding a pod the pod's required anti-affinity matches (None: none is
        counted anywhere)."""
        if _empty(s.anti):
            return None
        bad: BoolArray | None = None
        for t in s.terms.required_anti:
            hit = node_positive(snap, t.topology_key, s.anti.get(t.topology_key), sel)
            bad = hit if bad is None else bad | hit
        return bad

    def _existing_fails(self, s: PreFilterState, snap: Snapshot, sel: NodeSel) -> BoolArray | None:
        """The selected nodes in a domain of a placed pod whose required anti-affinity the pod matches (None: no
        domain counts one)."""
        bad: BoolArray | None = None
        for key, by_code in s.existing_anti.items():
            if (by_code > 0).any():
                hit = node_positive(snap, key, by_code, sel)
                bad = hit if bad is None else bad | hit
        return bad

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        """Each rejected node gets the first reason it fails: affinity, then its anti-affinity, then placed pods'
        anti-affinity (the masks are built only for what the PreFilter state holds)."""
        s = self._state(state)
        size = len(range(snap.n)[sel]) if isinstance(sel, slice) else len(sel)
        out: list[Rejection] = []
        given: BoolArray | None = None  # the nodes a reason before this one rejected
        for bad, reason, code in (
            (self._affinity_bad(s, snap, sel, size), ERR_REASON_AFFINITY, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
            (self._anti_fails(s, snap, sel), ERR_REASON_ANTI_AFFINITY, Code.UNSCHEDULABLE),
            (self._existing_fails(s, snap, sel), ERR_REASON_EXISTING_ANTI_AFFINITY, Code.UNSCHEDULABLE),
        ):
            if bad is None:
                continue
            if given is not None:
                bad = bad & ~given
            if bad.any():
                out.append(Rejection(bad, reason, code))
                given = bad if given is None else given | bad
        return out

    # -- Score ----------------------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> Status:
        terms = self._own_terms(pod)
        has_constraints = bool(terms.preferred_affinity or terms.preferred_anti)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.skip()
        idx = affinity_index(snap)
        soft = _PREFERRED if self.args.hard_pod_affinity_weight <= 0 else _PREFERRED_OR_REQUIRED
        if not has_constraints and not idx.carries(soft):
            return Status.skip()  # what follows would touch no domain
        scores: DomainCounts = {}
        touched = False

        def account(term: Term, by_code: IntArray | None, weight: int) -> None:
            nonlocal touched
            if by_code is None or not by_code.any():
                return
            touched = True
            _add(scores, term.topology_key, by_code * weight)

        # the pod's preferred terms, against every placed pod
        for weight, term in terms.preferred_affinity:
            account(term, idx.matching_domains((term.match_key,), term.topology_key), weight)
        for weight, term in terms.preferred_anti:
            account(term, idx.matching_domains((term.match_key,), term.topology_key), -weight)
        # placed pods' terms, against the pod
        ns_labels = namespace_labels(snap, pod.pod.namespace)
        hard = self.args.hard_pod_affinity_weight
        kinds = _PREFERRED_OR_REQUIRED
        for (kind, term, weight), by_code in idx.carried_terms(kinds):
            if kind == REQUIRED_AFFINITY:
                if hard <= 0:
                    continue
                weight = hard
            elif kind == PREFERRED_ANTI:
                weight = -weight
            if term.matches(pod.pod, ns_labels):
                account(term, by_code, weight)
        if not touched:
            return Status.skip()
        state.write(PRE_SCORE_KEY, PreScoreState(scores))
        return Status()

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        s = state.read(PRE_SCORE_KEY)
        if not isinstance(s, PreScoreState):
            raise PluginError(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        total = np.zeros(len(cols), dtype=np.int64)
        for key, by_code in s.topology_score.items():
            total += node_values(snap, key, by_code, cols)
        return total

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        """Min-max to 0..MAX_NODE_SCORE in float64, truncated, as upstream; all equal: every node 0."""
        if len(scores) == 0:
            return scores
        lo, hi = int(scores.min()), int(scores.max())
        diff = hi - lo
        if diff <= 0:
            return np.zeros(len(scores), dtype=np.int64)
        frac = (scores - lo).astype(np.float64) / float(diff)
        out: IntArray = (float(MAX_NODE_SCORE) * frac).astype(np.int64)
        return out


def new_inter_pod_affinity(args: PluginArgs | None, handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(args, handle, handle.kube_version)
