"""Inter-pod (anti-)affinity terms as the scheduler uses them (upstream's framework.AffinityTerm): the namespaces
a term covers, its namespace selector and label selector, and its topology key."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from packsched.api.objects import LabelSelector, Pod, PodAffinity, PodAffinityTerm
from packsched.api.pods import apply_label_keys
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import Snapshot

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# Which pods a term selects, without its topology key: (namespaces, namespace selector, label selector).
MatchKey = tuple[frozenset[str], LabelSelector | None, LabelSelector | None]


@dataclass(frozen=True)
class Term:
    """``namespaces``: the names listed, or the owner's namespace when neither names nor a namespace selector are
    given. ``ns_selector`` None selects no namespace, an empty one every namespace. ``selector`` None selects no
    pod, an empty one every pod."""

    namespaces: frozenset[str]
    ns_selector: LabelSelector | None
    selector: LabelSelector | None
    topology_key: str
    # worked out once: terms key the index's tables, looked up at every bind
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.namespaces, self.ns_selector, self.selector, self.topology_key)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Term], tuple[frozenset[str], LabelSelector | None, LabelSelector | None, str]]:
        # made again from its fields (another process hashes strings differently)
        return (Term, (self.namespaces, self.ns_selector, self.selector, self.topology_key))

    @property
    def match_key(self) -> MatchKey:
        return (self.namespaces, self.ns_selector, self.selector)

    def matches(self, pod: Pod, ns_labels: dict[str, str]) -> bool:
        """Upstream AffinityTerm.Matches: the pod's namespace is covered (listed, or its labels ``ns_labels``
        match the namespace selector) and its labels match the label selector."""
        return matches_key(self.match_key, pod, ns_labels)


def matches_key(key: MatchKey, pod: Pod, ns_labels: dict[str, str]) -> bool:
    namespaces, ns_selector, selector = key
    if selector is None:
        return False
    if pod.namespace in namespaces or (ns_selector is not None and ns_selector.matches(ns_labels)):
        return selector.matches(pod.labels)
    return False


@dataclass(frozen=True)
class PodTerms:
    """A pod's processed terms: required affinity and anti-affinity, preferred ones with their weights."""

    required_affinity: tuple[Term, ...] = ()
    required_anti: tuple[Term, ...] = ()
    preferred_affinity: tuple[tuple[int, Term], ...] = ()
    preferred_anti: tuple[tuple[int, Term], ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.required_affinity or self.required_anti or self.preferred_affinity or self.preferred_anti)


NO_TERMS = PodTerms()


def _term(pod: Pod, t: PodAffinityTerm) -> Term:
    if not t.namespaces and t.namespace_selector is None:
        namespaces = frozenset((pod.namespace,))
    else:
        namespaces = frozenset(t.namespaces)
    return Term(namespaces, t.namespace_selector, t.label_selector, t.topology_key)


def _split(pod: Pod, aff: PodAffinity | None) -> tuple[tuple[Term, ...], tuple[tuple[int, Term], ...]]:
    if aff is None:
        return (), ()
    return tuple(_term(pod, t) for t in aff.required), tuple((w.weight, _term(pod, w.term)) for w in aff.preferred)


def pod_terms(info: PodInfo) -> PodTerms:
    """The pod's terms (computed once per PodInfo). matchLabelKeys / mismatchLabelKeys are merged into the
    selectors first, as the API server does when it creates a pod."""
    cached = info.__dict__.get("_ipa_terms")
    if isinstance(cached, PodTerms):
        return cached
    pod = info.pod
    if pod.pod_affinity is None and pod.pod_anti_affinity is None:
        terms = NO_TERMS
    else:
        apply_label_keys(pod)
        req_aff, pref_aff = _split(pod, pod.pod_affinity)
        req_anti, pref_anti = _split(pod, pod.pod_anti_affinity)
        terms = PodTerms(req_aff, req_anti, pref_aff, pref_anti)
    info.__dict__["_ipa_terms"] = terms
    return terms


EVERY_NAMESPACE = LabelSelector()


def _nil_labels_quirk(term: Term) -> Term:
    if term.ns_selector is not None and not term.ns_selector.empty and term.ns_selector.matches({}):
        return replace(term, ns_selector=EVERY_NAMESPACE)
    return term


def with_namespace_selector_quirk(terms: PodTerms) -> PodTerms:
    """The incoming pod's terms as kube-scheduler 1.35-1.36 matched them against other pods: its namespace
    selector was merged into the namespace list but not cleared, then tested against no labels at all, so a
    selector that an empty label set satisfies (only ``NotIn`` / ``DoesNotExist`` requirements) selected every
    namespace (fixed by kubernetes#138198 in 1.37)."""
    if terms.empty:
        return terms
    return PodTerms(
        tuple(_nil_labels_quirk(t) for t in terms.required_affinity),
        tuple(_nil_labels_quirk(t) for t in terms.required_anti),
        tuple((w, _nil_labels_quirk(t)) for w, t in terms.preferred_affinity),
        tuple((w, _nil_labels_quirk(t)) for w, t in terms.preferred_anti),
    )


def namespace_labels(snap: Snapshot, namespace: str) -> dict[str, str]:
    """A namespace's labels; one the snapshot does not list has only the label every namespace carries."""
    labels = snap.namespaces.get(namespace)
    return labels if labels is not None else {NAMESPACE_NAME_LABEL: namespace}
