"""NodeResourcesFit: does the pod fit the node's free resources (Filter), and how full would the node be (Score)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator

import numpy as np

from packsched.api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, is_extended_resource
from packsched.backend.dra.extended import class_for
from packsched.config.types import NodeResourcesFitArgs, PluginArgs, ScoringStrategy
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import ExtraPods, Handle, NodeSel, Rejection, SignFragments
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray, Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.helper import signers
from packsched.plugins.noderesources.scoring import SCALAR_NODES, Scorer, requests_key

NAME = "NodeResourcesFit"
TOO_MANY_PODS = "Too many pods"

_FIRST_CLASS = (CPU, MEMORY, EPHEMERAL_STORAGE)


class Fit:
    """Filter on every requested resource (extended ones included) and on the pod count; score with the
    configured strategy (LeastAllocated by default, MostAllocated, or RequestedToCapacityRatio)."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle, version: KubeVersion = DEFAULT_KUBE_VERSION) -> None:
        if args is None:
            args = NodeResourcesFitArgs()
        if not isinstance(args, NodeResourcesFitArgs):
            raise TypeError(f"want args to be of type NodeResourcesFitArgs, got {type(args).__name__}")
        if args.scoring_strategy is None:
            raise ValueError("scoring strategy not specified")
        self.args = args
        self.handle = handle
        self.ignored = set(args.ignored_resources)
        self.ignored_groups = set(args.ignored_resource_groups)
        # from 1.34 (kubernetes#131345) a node too small even when empty is UnschedulableAndUnresolvable
        self.unresolvable_when_too_small = version.fit_unresolvable_when_node_too_small
        # from 1.36 (DRAExtendedResource) a resource a DeviceClass serves is left to DynamicResources on the
        # nodes that do not advertise it, and scored from the class's devices there
        self.dra_extended = version.dra_extended_resource
        self.scorer = Scorer(args.scoring_strategy, handle if self.dra_extended else None)

    @property
    def strategy(self) -> ScoringStrategy:
        assert self.args.scoring_strategy is not None
        return self.args.scoring_strategy

    def _checked(self, pod: PodInfo) -> list[tuple[str, int]]:
        """The (resource, amount) pairs the filter compares, in upstream's order: cpu, memory,
        ephemeral-storage, then the scalar resources (extended ones can be ignored by the args)."""
        out = [(r, pod.requests[r]) for r in _FIRST_CLASS if pod.requests.get(r, 0) > 0]
        for name in sorted(pod.requests):
            if name in _FIRST_CLASS or pod.requests[name] == 0:
                continue
            if is_extended_resource(name) and (
                name in self.ignored or (self.ignored_groups and name.split("/")[0] in self.ignored_groups)
            ):
                continue
            out.append((name, pod.requests[name]))
        return out

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        state.write(NAME, self._checked(pod))
        return Status()

    def _checked_in(self, state: CycleState, pod: PodInfo) -> list[tuple[str, int]]:
        checked: list[tuple[str, int]] | None = state.read(NAME)
        return self._checked(pod) if checked is None else checked

    def fit_demand(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> list[tuple[int, int]]:
        """What the filter compares, as (snapshot row, amount) pairs (beside the pod count): preemption's
        vectorised dry run judges nodes with it (framework.interface.ResourceFitFilter)."""
        return [(snap.ensure_resource(name), amount) for name, amount in self._checked_in(state, pod)]

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        return self._filter(self._checked_in(state, pod), snap, sel, None)

    def filter_with_extra(
        self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel, extra: ExtraPods
    ) -> list[Rejection]:
        """``filter`` as if each selected node held ``extra``'s pods beside its own (ResourceFitFilter): the
        same rejections as adding those counts and amounts to the snapshot's arrays and calling ``filter``."""
        return self._filter(self._checked_in(state, pod), snap, sel, extra)

    def _filter(
        self, checked: list[tuple[str, int]], snap: Snapshot, sel: NodeSel, extra: ExtraPods | None
    ) -> list[Rejection]:
        if not isinstance(sel, slice) and len(sel) <= SCALAR_NODES:
            return self._filter_few(checked, snap, sel.tolist(), extra)
        out: list[Rejection] = []
        pod_count = snap.pod_count[sel]
        if extra is not None:
            pod_count = pod_count + extra.count[sel]
        too_many = pod_count + 1 > snap.allowed_pods[sel]
        if too_many.any():
            out.append(Rejection(too_many, TOO_MANY_PODS, Code.UNSCHEDULABLE))
        for name, amount, short, alloc in self._short(checked, snap, sel, extra):
            if short.any():
                self._reject(out, name, amount, short, alloc)
        return out

    def _short(
        self, checked: list[tuple[str, int]], snap: Snapshot, sel: NodeSel, extra: ExtraPods | None = None
    ) -> Iterator[tuple[str, int, BoolArray, IntArray]]:
        """Per checked (resource, amount): the selected nodes short of it, and their allocatable (array path).
        ``extra``: more pods counted on the nodes (their amounts added to the used ones)."""
        dra = self.handle.dra() if self.dra_extended else None
        for name, amount in checked:
            row = snap.ensure_resource(name)
            alloc = snap.alloc[row, sel]
            used = snap.requested[row, sel]
            if extra is not None:
                more = extra.amounts.get(name)
                if more is not None:
                    used = used + more[sel]
            short = amount > alloc - used
            if dra is not None and class_for(dra, name) is not None:
                # upstream shouldDelegateResourceToDRA: a node advertising none leaves it to DynamicResources
                short &= alloc > 0
            yield name, amount, short, alloc

    def _filter_few(
        self, checked: list[tuple[str, int]], snap: Snapshot, cols: list[int], extra: ExtraPods | None = None
    ) -> list[Rejection]:
        """``filter`` over a few nodes (the ones the equivalence cache filters again after a bind), node by node
        in Python: the same rejections, without numpy's fixed cost per call."""
        out: list[Rejection] = []
        pod_count, allowed = snap.pod_count, snap.allowed_pods
        if extra is None:
            too_many = [pod_count.item(c) + 1 > allowed.item(c) for c in cols]
        else:
            more = extra.count
            too_many = [pod_count.item(c) + more.item(c) + 1 > allowed.item(c) for c in cols]
        if any(too_many):
            out.append(Rejection(np.array(too_many, dtype=bool), TOO_MANY_PODS, Code.UNSCHEDULABLE))
        for name, amount, short, alloc in self._short_few(checked, snap, cols, extra):
            if any(short):
                self._reject(out, name, amount, np.array(short, dtype=bool), np.array(alloc, dtype=np.int64))
        return out

    def _short_few(
        self, checked: list[tuple[str, int]], snap: Snapshot, cols: list[int], extra: ExtraPods | None = None
    ) -> Iterator[tuple[str, int, list[bool], list[int]]]:
        """``_short`` node by node in Python integers (a few nodes)."""
        dra = self.handle.dra() if self.dra_extended else None
        for name, amount in checked:
            row = snap.ensure_resource(name)
            alloc_m, requested = snap.alloc, snap.requested  # read after ensure_resource, which may replace them
            alloc = [alloc_m.item(row, c) for c in cols]
            used = [requested.item(row, c) for c in cols]
            more = extra.amounts.get(name) if extra is not None else None
            if more is not None:
                used = [u + more.item(c) for u, c in zip(used, cols, strict=True)]
            delegated = dra is not None and class_for(dra, name) is not None
            short = [amount > a - u and (a > 0 or not delegated) for a, u in zip(alloc, used, strict=True)]
            yield name, amount, short, alloc

    def passes(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> BoolArray:
        """Whether each selected node passes ``filter`` (framework.interface.VerdictFilter): the same tests, with
        no rejection built (the equivalence cache's catch-up reads the verdicts only)."""
        checked = self._checked_in(state, pod)
        if not isinstance(sel, slice) and len(sel) <= SCALAR_NODES:
            cols = sel.tolist()
            pod_count, allowed = snap.pod_count, snap.allowed_pods
            ok = [pod_count.item(c) + 1 <= allowed.item(c) for c in cols]
            for _name, _amount, few_short, _few_alloc in self._short_few(checked, snap, cols):
                ok = [o and not s for o, s in zip(ok, few_short, strict=True)]
            return np.array(ok, dtype=bool)
        fits = snap.pod_count[sel] + 1 <= snap.allowed_pods[sel]
        for _name, _amount, short, _alloc in self._short(checked, snap, sel):
            fits &= ~short
        return np.asarray(fits, dtype=bool)

    def _reject(self, out: list[Rejection], name: str, amount: int, short: BoolArray, alloc: IntArray) -> None:
        """The rejections for the nodes short of ``name``: from 1.34 a node too small even when empty cannot be
        helped by preemption (UnschedulableAndUnresolvable), the others can."""
        reason = f"Insufficient {name}"
        if not self.unresolvable_when_too_small:
            out.append(Rejection(short, reason, Code.UNSCHEDULABLE))
            return
        never = short & (amount > alloc)
        if never.any():
            out.append(Rejection(never, reason, Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
            short = short & ~never
            if short.any():
                out.append(Rejection(short, reason, Code.UNSCHEDULABLE))
        else:
            out.append(Rejection(short, reason, Code.UNSCHEDULABLE))

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        return self.scorer.score(snap, pod, cols)

    def equivalence_key(self, pod: PodInfo) -> Hashable | None:
        return requests_key(pod, self.handle.dra() if self.dra_extended else None)

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod); None for a pod
        asking for a DRA-backed extended resource."""
        return signers.resources(pod, self.handle, self.dra_extended)


def new_fit(args: PluginArgs | None, handle: Handle) -> Fit:
    return Fit(args, handle, handle.kube_version)
