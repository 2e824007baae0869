"""Vectorised node-selector matching over the snapshot's label index."""

from __future__ import annotations

import numpy as np

from packsched.api.objects import NodeSelectorTerm, Requirement
from packsched.framework.snapshot import BoolArray, Snapshot


def _label_int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def requirement_mask(snap: Snapshot, req: Requirement) -> BoolArray:
    """Nodes whose labels satisfy one node-selector requirement (In, NotIn, Exists, DoesNotExist, Gt, Lt)."""
    codes = snap.labels.column(req.key)
    n = snap.n
    if codes is None:
        present = np.zeros(n, dtype=bool)
        if req.operator in ("NotIn", "DoesNotExist"):
            return np.ones(n, dtype=bool)
        return present
    vocab = snap.labels.vocab[req.key]
    if req.operator in ("In", "NotIn"):
        wanted = [vocab[v] for v in req.values if v in vocab]
        hit = np.isin(codes, wanted) if wanted else np.zeros(n, dtype=bool)
        return hit if req.operator == "In" else ~hit
    if req.operator == "Exists":
        return codes >= 0
    if req.operator == "DoesNotExist":
        return codes < 0
    if req.operator in ("Gt", "Lt"):
        bound = _label_int(req.values[0]) if req.values else None
        if bound is None:
            return np.zeros(n, dtype=bool)
        ok_codes = []
        for value, code in vocab.items():
            number = _label_int(value)
            if number is not None and (number > bound if req.operator == "Gt" else number < bound):
                ok_codes.append(code)
        return np.isin(codes, ok_codes) if ok_codes else np.zeros(n, dtype=bool)
    return np.zeros(n, dtype=bool)


def field_mask(snap: Snapshot, req: Requirement) -> BoolArray:
    """matchFields: only metadata.name is supported (as upstream)."""
    n = snap.n
    if req.key != "metadata.name":
        return np.zeros(n, dtype=bool)
    hit = np.zeros(n, dtype=bool)
    for name in req.values:
        col = snap.index.get(name)
        if col is not None:
            hit[col] = True
    return hit if req.operator == "In" else (~hit if req.operator == "NotIn" else np.zeros(n, dtype=bool))


def term_mask(snap: Snapshot, term: NodeSelectorTerm) -> BoolArray:
    """A term matches when all its requirements do; a term with no requirements matches no node."""
    if not term.match_expressions and not term.match_fields:
        return np.zeros(snap.n, dtype=bool)
    mask = np.ones(snap.n, dtype=bool)
    for req in term.match_expressions:
        mask &= requirement_mask(snap, req)
    for req in term.match_fields:
        mask &= field_mask(snap, req)
    return mask


def terms_mask(snap: Snapshot, terms: tuple[NodeSelectorTerm, ...]) -> BoolArray:
    """Terms are ORed."""
    mask = np.zeros(snap.n, dtype=bool)
    for term in terms:
        mask |= term_mask(snap, term)
    return mask


def selector_mask(snap: Snapshot, selector: dict[str, str]) -> BoolArray:
    mask = np.ones(snap.n, dtype=bool)
    for key, value in selector.items():
        mask &= requirement_mask(snap, Requirement(key, "In", (value,)))
    return mask
