"""The profile runtime: builds a profile's plugins and runs each extension point over arrays of nodes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from packsched.api.errors import FieldError, InputError
from packsched.config.types import EXTENSION_POINTS, PluginArgs, PluginRef, Profile
from packsched.framework.batch import OpportunisticBatch
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis, RejectGroup
from packsched.framework.equivalence import EquivalenceCache, PodClass
from packsched.framework.interface import (
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    MIN_NODE_SCORE,
    SIGN_SCHEDULER_NAME,
    BindPlugin,
    ClusterEvent,
    ClusterEventPlugin,
    ExtraPods,
    FilterPlugin,
    Handle,
    NodeDetailsPlugin,
    NodeSel,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ResourceFitFilter,
    ScoreExtensions,
    ScorePlugin,
    SignPlugin,
    filter_reads_pods,
    implements,
    normalizes_by_top,
    scores_zero_if_pre_filter_skips,
    zeros_normalize_uniformly,
)
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import BoolArray, IntArray
from packsched.framework.status import Code, PluginError, Status

# the nominated pods' second Filter pass judges every selected node (whole rows) instead of gathering the nodes
# to judge when at least one in this many selected nodes is to be judged
_WHOLE_SELECTION = 8
# up to this many selected nodes, that pass first asks for the pods nominated on each of them
_FEW_NODES = 8

# a one-node row of raw zeros, for a NormalizeScore that gives every node of an all-zero row one value
_ONE_ZERO = np.zeros(1, dtype=np.int64)
_NO_NAMES: frozenset[str] = frozenset()
# a pod's signature as JSON text (json.dumps with these options, the encoder made once rather than per pod; no
# check for circular references: a signature is made of the pod's values, never of itself)
_SIGNATURE_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), check_circular=False)

# Builds one plugin from its args (None: the plugin was given none) for one profile.
PluginFactory = Callable[[PluginArgs | None, Handle], Plugin]


class FrameworkError(InputError):
    """A profile that cannot be built (unknown plugin, a plugin at a point it does not implement, ...)."""


@dataclass
class WeightedScore:
    plugin: ScorePlugin
    weight: int
    normalizer: ScoreExtensions | None = None  # the plugin itself when it normalizes its scores


@dataclass
class ScoreResult:
    cols: IntArray
    per_plugin: dict[str, IntArray]  # normalized plugin score (0..100) per node, before the weight
    weights: dict[str, int]
    totals: IntArray
    raw: dict[str, IntArray] = field(default_factory=dict)  # each plugin's score before NormalizeScore


def _expand(profile: Profile, point: str, plugins: Mapping[str, Plugin]) -> list[PluginRef]:
    """The plugins of one extension point after multiPoint expansion, in upstream's order: plugins the point
    names that override a multiPoint entry, then multiPoint plugins, then the point's other plugins."""
    pset = profile.plugins.at(point)
    enabled = list(pset.enabled)
    disabled = {p.name for p in pset.disabled}
    if "*" in disabled:
        return enabled  # upstream skips multiPoint expansion for this point entirely
    mp_names = {p.name for p in profile.plugins.multi_point.enabled}
    overrides = [p.name for p in enabled if p.name in mp_names]
    from_mp: list[PluginRef] = []
    if "*" not in disabled:
        seen: set[str] = set()
        for ref in profile.plugins.multi_point.enabled:
            plugin = plugins.get(ref.name)
            if plugin is None or not implements(plugin, point):
                continue
            if ref.name in disabled or ref.name in overrides:
                continue
            if ref.name in seen:
                raise FrameworkError.single(
                    f"plugin {ref.name!r} already registered as {point!r}",
                    path=f"profiles[{profile.scheduler_name}].plugins.multiPoint",
                )
            seen.add(ref.name)
            from_mp.append(ref)
    first = [p for p in enabled if p.name in overrides]
    rest = [p for p in enabled if p.name not in overrides]
    return first + from_mp + rest


class Framework:
    """One profile: its plugins per extension point, their weights, and the code that runs them."""

    def __init__(
        self,
        profile: Profile,
        registry: Mapping[str, PluginFactory],
        handle: Handle,
        source_file: str = "",
        index: int = 0,
    ) -> None:
        self.profile = profile
        self.name = profile.scheduler_name
        self.handle = handle
        where = f"profiles[{index}].plugins"
        needed: list[str] = []
        for point in EXTENSION_POINTS:
            needed += [p.name for p in profile.plugins.at(point).enabled]
        needed += [p.name for p in profile.plugins.multi_point.enabled]
        instances: dict[str, Plugin] = {}
        errors: list[FieldError] = []
        for name in dict.fromkeys(needed):
            factory = registry.get(name)
            if factory is None:
                errors.append(FieldError(where, f"plugin {name!r} is not implemented by packsched", source_file))
                continue
            try:
                instances[name] = factory(profile.plugin_config.get(name), handle)
            except (ValueError, TypeError) as exc:
                errors.append(FieldError(f"profiles[{index}].pluginConfig", f"plugin {name!r}: {exc}", source_file))
        if errors:
            raise FrameworkError(errors)
        self.plugins = instances
        self.points: dict[str, list[tuple[Plugin, int]]] = {}
        for point in EXTENSION_POINTS:
            refs = _expand(profile, point, instances)
            out: list[tuple[Plugin, int]] = []
            names: set[str] = set()
            for ref in refs:
                plugin = instances[ref.name]
                if not implements(plugin, point):
                    errors.append(
                        FieldError(
                            f"{where}.{point}",
                            f"plugin {ref.name!r} does not extend {point} plugin",
                            source_file,
                        )
                    )
                    continue
                if ref.name in names:
                    errors.append(
                        FieldError(
                            f"{where}.{point}",
                            f"plugin {ref.name!r} already registered as {point!r}",
                            source_file,
                        )
                    )
                    continue
                names.add(ref.name)
                out.append((plugin, ref.weight or 1))
            self.points[point] = out
        if len(self.points["queueSort"]) != 1:
            errors.append(
                FieldError(f"{where}.queueSort", "exactly one queue sort plugin must be enabled", source_file)
            )
        if not self.points["bind"]:
            errors.append(FieldError(f"{where}.bind", "at least one bind plugin is needed", source_file))
        total = sum(w * MAX_NODE_SCORE for _, w in self.points["score"])
        if total > MAX_TOTAL_SCORE:
            errors.append(FieldError(f"{where}.score", "total score of Score plugins could overflow", source_file))
        if errors:
            raise FrameworkError(errors)
        # Typed lists per point: every plugin in self.points[point] implements the point (checked above), so
        # each isinstance below only narrows the type and keeps every plugin.
        pts = self.points
        self.queue_sort: QueueSortPlugin = next(p for p, _ in pts["queueSort"] if isinstance(p, QueueSortPlugin))
        self.pre_enqueue = [p for p, _ in pts["preEnqueue"] if isinstance(p, PreEnqueuePlugin)]
        self.pre_filter = [p for p, _ in pts["preFilter"] if isinstance(p, PreFilterPlugin)]
        self.filters = [p for p, _ in pts["filter"] if isinstance(p, FilterPlugin)]
        # each filter as arithmetic_filters needs it: the filter, itself again if it judges a node by its free
        # amounts and pod count alone (a ResourceFitFilter), and whether its verdict may read placed pods
        self._filter_kinds = [
            (p, p if isinstance(p, ResourceFitFilter) else None, filter_reads_pods(p)) for p in self.filters
        ]
        self.post_filters = [p for p, _ in pts["postFilter"] if isinstance(p, PostFilterPlugin)]
        self.pre_scores = [p for p, _ in pts["preScore"] if isinstance(p, PreScorePlugin)]
        self.scores = [
            WeightedScore(p, w, p if isinstance(p, ScoreExtensions) else None)
            for p, w in pts["score"]
            if isinstance(p, ScorePlugin)
        ]
        # the Score plugins that score 0 on every node in a cycle where their PreFilter skipped
        self._zero_if_skipped = frozenset(
            s.plugin.name for s in self.scores if scores_zero_if_pre_filter_skips(s.plugin)
        )
        # the Score plugins that zeros_normalize_uniformly (asked once, as the equivalence cache asks), and per such
        # plugin the one value its NormalizeScore gives a row of zeros
        self._zeros_uniform = frozenset(s.plugin.name for s in self.scores if zeros_normalize_uniformly(s.plugin))
        # the Score plugins whose NormalizeScore reads only the top raw score (in the profile's order), and those
        # whose NormalizeScore reads more (``top_normalized``; asked once)
        self._by_top = [
            s.plugin.name for s in self.scores if s.normalizer is not None and normalizes_by_top(s.normalizer)
        ]
        self._by_more = frozenset(
            s.plugin.name for s in self.scores if s.normalizer is not None and not normalizes_by_top(s.normalizer)
        )
        self._uniform: dict[str, int] = {}
        # the PreFilter plugins with AddPod/RemovePod, in the profile's order (checked once: isinstance on a
        # runtime protocol is slow, and preemption asks for every attempt)
        self.extensions = [p for p in self.pre_filter if isinstance(p, PreFilterExtensions)]
        self.reserves = [p for p, _ in pts["reserve"] if isinstance(p, ReservePlugin)]
        self.permits = [p for p, _ in pts["permit"] if isinstance(p, PermitPlugin)]
        self.pre_binds = [p for p, _ in pts["preBind"] if isinstance(p, PreBindPlugin)]
        self.binds = [p for p, _ in pts["bind"] if isinstance(p, BindPlugin)]
        self.post_binds = [p for p, _ in pts["postBind"] if isinstance(p, PostBindPlugin)]
        self.event_handlers = [p for p in instances.values() if isinstance(p, ClusterEventPlugin)]
        self.equivalence = EquivalenceCache(self.filters, [s.plugin for s in self.scores])
        self.detailers = [p for p in instances.values() if isinstance(p, NodeDetailsPlugin)]
        # Opportunistic batching (1.35+): only when every PreFilter, Filter, PreScore and Score plugin signs pods
        # (upstream computeBatchablePlugins; packsched has no extenders, which would also rule it out)
        self.signers, self.batch = _batching(handle, pts)
        self._refused_last: SignPlugin | None = None  # the signing plugin that last refused a pod

    def sign_pod(self, pod: PodInfo) -> str | None:
        """The pod's signature (upstream SignPod): the scheduler name and every signing plugin's fragments, one
        JSON text; None when the profile cannot sign pods or a plugin refuses this one."""
        if self.signers is None:
            return None
        # the plugin that refused the last pod is asked first: where one refuses most pods (PodTopologySpread with
        # system default constraints), the others are not asked in vain (signing reads the pod only)
        refused = self._refused_last
        if refused is not None and refused.sign_pod(pod) is None:
            return None
        sig: dict[str, object] = {SIGN_SCHEDULER_NAME: pod.pod.scheduler_name}
        for p in self.signers:
            fragments = p.sign_pod(pod)
            if fragments is None:
                self._refused_last = p
                return None
            sig.update(fragments)
        return _SIGNATURE_JSON.encode(sig)

    def plugin_names(self, point: str) -> list[str]:
        return [p.name for p, _ in self.points[point]]

    def weights(self) -> dict[str, int]:
        return {s.plugin.name: s.weight for s in self.scores}

    def node_details(self, state: CycleState) -> dict[str, dict[str, object]]:
        """explain's extra fields per node name, from every plugin that has some (:class:`NodeDetailsPlugin`)."""
        out: dict[str, dict[str, object]] = {}
        for p in self.detailers:
            for node, fields in p.node_details(state).items():
                out.setdefault(node, {}).update(fields)
        return out

    def dispatch(self, event: ClusterEvent) -> None:
        """Deliver a cluster event to every plugin of this profile that keeps a view of the cluster."""
        for p in self.event_handlers:
            p.on_cluster_event(event)

    # -- queue --------------------------------------------------------------------------------------------

    def run_pre_enqueue(self, pod: PodInfo) -> Status:
        for p in self.pre_enqueue:
            st = p.pre_enqueue(pod)
            if st.code != Code.SUCCESS:  # (the code itself: ``ok`` is a call, and these loops run per pod)
                st.plugin = st.plugin or p.name
                return st
        return Status()

    # -- filtering ----------------------------------------------------------------------------------------

    def run_pre_filter(self, state: CycleState, pod: PodInfo) -> Status:
        snap = self.handle.snapshot
        skipped = state.skip_filter
        for p in self.pre_filter:
            st = p.pre_filter(state, pod, snap)
            code = st.code
            if code == Code.SUCCESS:
                continue
            if code == Code.SKIP:
                skipped.add(p.name)
                continue
            st.plugin = st.plugin or p.name
            return st
        return Status()

    def run_filters(self, state: CycleState, pod: PodInfo, sel: NodeSel) -> tuple[BoolArray, list[RejectGroup]]:
        """Every filter over the selected nodes; a node keeps the reasons of the first plugin that rejects it."""
        return self._run_filter_list(self.filters, state, pod, sel)

    def _run_filter_list(
        self, filters: Sequence[FilterPlugin], state: CycleState, pod: PodInfo, sel: NodeSel
    ) -> tuple[BoolArray, list[RejectGroup]]:
        snap = self.handle.snapshot
        size = snap.n if isinstance(sel, slice) else len(sel)
        alive = np.ones(size, dtype=bool)
        groups: list[RejectGroup] = []
        for p in filters:
            if p.name in state.skip_filter:
                continue
            rejections = p.filter(state, pod, snap, sel)
            if not rejections:
                continue
            rejected = np.zeros(size, dtype=bool)
            for r in rejections:
                mask = r.mask & alive
                if mask.any():
                    groups.append(RejectGroup(p.name, mask, r.reason, r.code))
                rejected |= r.mask
            alive &= ~rejected
            if not alive.any():
                break
        return alive, groups

    def run_filters_cached(self, state: CycleState, pod: PodInfo) -> BoolArray:
        """Every node's verdict, as ``run_filters`` over all nodes gives it, from the pod's class in the
        equivalence cache (framework/equivalence.py): only the nodes whose pods changed since the class was last
        used are filtered again by the node-local plugins. The reasons of rejected nodes are not kept; nominated
        pods are not added (the caller uses it only where no pod is nominated). The cycle's Score then reads the
        class's kept scores too."""
        cls = self.equivalence.lookup(state, pod)
        state.pod_class = cls
        return self.equivalence.feasible(cls, state, pod, self.handle.snapshot)

    def run_filters_cached_first(
        self, state: CycleState, pod: PodInfo, order: IntArray | None, start: int, k: int
    ) -> tuple[IntArray, int]:
        """``run_filters_cached`` for a cycle that needs only the first ``k`` (fewer than the nodes) feasible
        nodes in ``order`` (None: the columns') rotated to ``start``: those nodes, and how many places of the
        order were looked at. The filters outside the class run only until ``k`` nodes pass."""
        cls = self.equivalence.lookup(state, pod)
        state.pod_class = cls
        return self.equivalence.feasible_first(cls, state, pod, self.handle.snapshot, order, start, k)

    def run_filters_with_nominated(
        self, state: CycleState, pod: PodInfo, sel: NodeSel
    ) -> tuple[BoolArray, list[RejectGroup]]:
        """As kube-scheduler: on a node where pods of equal or higher priority are nominated, the pod must fit
        with those pods added (and also without them)."""
        feasible, groups = self.run_filters(state, pod, sel)
        has_extensions = self.has_active_extensions(state)
        arithmetic = None if has_extensions else self.arithmetic_filters(state)
        if arithmetic is not None:
            # every filter reads amounts and pod counts only, or no placed pod at all: add the nominated pods'
            # totals to the arrays instead of placing each pod
            fit = arithmetic[0]
            name = next(p.name for p, as_fit, _ in self._filter_kinds if as_fit is fit)
            self._filter_with_nominated_totals(state, pod, sel, feasible, groups, fit, name)
            return feasible, groups
        marked = self.handle.nominated_nodes()
        if not marked:
            return feasible, groups
        snap = self.handle.snapshot
        if isinstance(sel, slice):
            positions = {col: col for col in marked}
        else:
            where = {int(c): i for i, c in enumerate(np.asarray(sel).tolist())}
            positions = {col: where[col] for col in marked if col in where}
        todo: list[tuple[int, int, list[PodInfo]]] = []  # (column, position in sel, nominated pods to add)
        for col, i in sorted(positions.items()):
            if not feasible[i] or col >= snap.n:
                continue
            nominated = [
                p
                for p in self.handle.nominated_pods(col)
                if p.key != pod.key and p.priority >= pod.priority and p.node < 0
            ]
            if nominated:
                todo.append((col, i, nominated))
        if not todo:
            return feasible, groups
        if has_extensions:
            # AddPod may change the cycle state a filter reads: each node with its own copy, one at a time
            verdicts = [self._filter_with_added(state, pod, col, extra) for col, _, extra in todo]
        else:
            verdicts = self._filter_many_with_added(state, pod, todo)
        for (_, i, _), (ok, sub_groups) in zip(todo, verdicts, strict=True):
            if not ok:
                feasible[i] = False
                for g in sub_groups:
                    mask = np.zeros(len(feasible), dtype=bool)
                    mask[i] = True
                    groups.append(RejectGroup(g.plugin, mask, g.reason, g.code))
        return feasible, groups

    def _filter_with_nominated_totals(
        self,
        state: CycleState,
        pod: PodInfo,
        sel: NodeSel,
        feasible: BoolArray,
        groups: list[RejectGroup],
        fit: ResourceFitFilter,
        name: str,
    ) -> None:
        """``run_filters_with_nominated``'s second pass where the filters read amounts and pod counts only: the
        feasible nodes holding nominated pods (equal or higher priority) are judged again by ``fit`` (the plugin
        ``name``), the one filter among them that reads amounts and counts, with those pods' totals counted
        beside each node's own (``filter_with_extra``; the snapshot is not touched). Every other filter reads no
        placed pod and already passed those nodes: the first plugin to reject a node here is ``fit``, as it is
        when every filter runs again. Updates ``feasible`` and ``groups`` in place."""
        chosen = None if isinstance(sel, slice) else np.asarray(sel, dtype=np.intp)
        if chosen is not None and len(chosen) <= _FEW_NODES:
            # a few nodes (a pod's nominated node, tried first): the pods nominated there, before any totals
            on = self.handle.nominated_pods
            if not any(p.key != pod.key and p.priority >= pod.priority for c in chosen.tolist() for p in on(c)):
                return
        snap = self.handle.snapshot
        names = [snap.resources[row] for row, _ in fit.fit_demand(state, pod, snap)]
        totals = self.handle.nominated_totals(pod, names)
        if totals is None:
            return
        count, amounts = totals
        todo = feasible & (count[sel] > 0 if chosen is None else count[chosen] > 0)
        many = int(np.count_nonzero(todo))
        if many == 0:
            return
        extra = ExtraPods(count, dict(zip(names, amounts, strict=True)))
        at: IntArray | None = None
        if many * _WHOLE_SELECTION >= len(todo):
            # many nodes: judge every selected node (whole rows), keep the verdicts of those to judge
            rejections = fit.filter_with_extra(state, pod, snap, sel, extra)
        else:
            at = np.flatnonzero(todo)
            cols = np.arange(snap.n, dtype=np.intp)[sel][at] if chosen is None else chosen[at]
            rejections = fit.filter_with_extra(state, pod, snap, cols, extra)
        rejected = np.zeros(len(feasible), dtype=bool)
        for r in rejections:
            if at is None:
                mask = r.mask & todo
            else:
                mask = np.zeros(len(feasible), dtype=bool)
                mask[at[r.mask]] = True
            if mask.any():
                groups.append(RejectGroup(name, mask, r.reason, r.code))
                rejected |= mask
        feasible &= ~rejected

    def _filter_many_with_added(
        self, state: CycleState, pod: PodInfo, todo: Sequence[tuple[int, int, list[PodInfo]]]
    ) -> list[tuple[bool, list[RejectGroup]]]:
        """``_filter_with_added`` for many nodes with one filter call, when no PreFilter extension is active (the
        cycle state does not change): every node's nominated pods are added at once; a filter judges a node by
        that node alone."""
        snap = self.handle.snapshot
        added = [(p, col) for col, _, extra in todo for p in extra]
        snap.add_pods(added)
        try:
            cols = np.array([col for col, _, _ in todo], dtype=np.intp)
            ok, groups = self.run_filters(state, pod, cols)
        finally:
            snap.remove_pods([p for p, _ in added])
        out: list[tuple[bool, list[RejectGroup]]] = []
        for j in range(len(todo)):
            mine = [RejectGroup(g.plugin, g.mask[j : j + 1], g.reason, g.code) for g in groups if g.mask[j]]
            out.append((bool(ok[j]), mine))
        return out

    def _filter_with_added(
        self, state: CycleState, pod: PodInfo, col: int, extra: Sequence[PodInfo]
    ) -> tuple[bool, list[RejectGroup]]:
        snap = self.handle.snapshot
        trial = state.clone()
        added: list[PodInfo] = []
        try:
            for other in extra:
                if other.node >= 0:
                    continue
                snap.add_pod(other, col)
                added.append(other)
                st = self.run_add_pod(trial, pod, other, col)
                if not st.ok:
                    return False, [RejectGroup(st.plugin, np.ones(1, dtype=bool), st.message, st.code)]
            feasible, groups = self.run_filters(trial, pod, np.array([col], dtype=np.intp))
            return bool(feasible[0]), groups
        finally:
            for other in reversed(added):
                snap.remove_pod(other)

    def has_active_extensions(self, state: CycleState) -> bool:
        """Whether a PreFilter plugin of this cycle (not skipped) must hear of pods added or removed."""
        return any(p.name not in state.skip_filter for p in self.extensions)

    def run_add_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int) -> Status:
        """Upstream RunPreFilterExtensionAddPod: ``other`` now counts on node ``col``."""
        return self._run_extensions(True, state, pod, other, col)

    def run_remove_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int) -> Status:
        """Upstream RunPreFilterExtensionRemovePod: ``other`` no longer counts on node ``col``."""
        return self._run_extensions(False, state, pod, other, col)

    def _run_extensions(self, add: bool, state: CycleState, pod: PodInfo, other: PodInfo, col: int) -> Status:
        """AddPod (``add``) or RemovePod of ``other`` on node ``col`` for each PreFilter extension of this cycle
        (not skipped), in the profile's order, until one fails: its status, naming the plugin. The one loop over
        the extensions (preemption's dry run calls it too)."""
        snap = self.handle.snapshot
        for p in self.extensions:
            if p.name in state.skip_filter:
                continue
            st = p.add_pod(state, pod, other, col, snap) if add else p.remove_pod(state, pod, other, col, snap)
            if not st.ok:
                st.plugin = st.plugin or p.name
                return st
        return Status()

    def arithmetic_filters(self, state: CycleState) -> tuple[ResourceFitFilter, list[FilterPlugin]] | None:
        """This cycle's filters (skipped ones left out) when each judges a node by its free amounts and pod count
        alone (exactly one ResourceFitFilter: NodeResourcesFit) or reads no placed pod (``filter_reads_pods``):
        that fit filter and the others, in order; None otherwise. Then pods can be counted on nodes as sums
        (``run_filters_with_nominated``, preemption's dry run on arrays) instead of being placed one by one."""
        fit: ResourceFitFilter | None = None
        static: list[FilterPlugin] = []
        for p, as_fit, reads_pods in self._filter_kinds:
            if p.name in state.skip_filter:
                continue
            if as_fit is not None:
                if fit is not None:
                    return None
                fit = as_fit
            elif reads_pods:
                return None
            else:
                static.append(p)
        return (fit, static) if fit is not None else None

    def run_post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult:
        """PostFilter plugins in order until one succeeds (or one answers UnschedulableAndUnresolvable)."""
        messages: list[str] = []
        nominated: str | None = None  # a rejecting plugin's word on the nomination ("" clears it) is kept
        for p in self.post_filters:
            res = p.post_filter(state, pod, diagnosis)
            if res.status.ok:
                return res
            if res.status.message:
                messages.append(res.status.message)
            if res.status.code in (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR):
                res.status.reasons = messages
                return res
            if res.nominated_node is not None:
                nominated = res.nominated_node
        return PostFilterResult(nominated, Status(Code.UNSCHEDULABLE, messages))

    # -- scoring ------------------------------------------------------------------------------------------

    def run_pre_score(self, state: CycleState, pod: PodInfo, cols: IntArray) -> Status:
        snap = self.handle.snapshot
        skipped = state.skip_score
        for p in self.pre_scores:
            st = p.pre_score(state, pod, snap, cols)
            code = st.code
            if code == Code.SUCCESS:
                continue
            if code == Code.SKIP:
                skipped.add(p.name)
                continue
            st.plugin = st.plugin or p.name
            return st
        return Status()

    def run_score(
        self, state: CycleState, pod: PodInfo, cols: IntArray, *, details: bool = True, raw: bool = False
    ) -> ScoreResult:
        """Every Score plugin of this cycle on ``cols``: NormalizeScore, the range check, the weighted totals.
        ``details``: the result names every plugin's scores (``per_plugin``, ``raw``); without it, a cycle whose
        filters ran through the equivalence cache may fold the class's kept scores into the totals
        (:meth:`_score_from_class`), and then names only the plugins it scored in this cycle, or with ``raw``
        every plugin's raw scores all the same (what opportunistic batching keeps), a kept plugin's read from the
        class's row. A plugin that scores 0 everywhere when its PreFilter skipped
        (``scores_zero_if_pre_filter_skips``) is not called in such a cycle: its row of zeros is taken as it is."""
        snap = self.handle.snapshot
        active = [s for s in self.scores if s.plugin.name not in state.skip_score]
        zero = self._zero_if_skipped.intersection(state.skip_filter) if self._zero_if_skipped else _NO_NAMES
        cls: PodClass | None = state.pod_class
        if cls is not None and not details and active:
            folded = self._score_from_class(cls, active, state, pod, cols, zero)
            if folded is not None:
                if raw:
                    self._folded_raw(cls, state, pod, zero, folded)
                return folded
        totals = np.zeros(len(cols), dtype=np.int64)
        per_plugin: dict[str, IntArray] = {}
        weights: dict[str, int] = {}
        raws: dict[str, IntArray] = {}
        for entry in active:
            plugin = entry.plugin
            if plugin.name in zero:
                scores = np.zeros(len(cols), dtype=np.int64)
            elif cls is not None and plugin.name in cls.cached_scores:
                scores = self.equivalence.scores(cls, plugin, state, pod, snap, cols)
            else:
                scores = np.asarray(plugin.score(state, pod, snap, cols), dtype=np.int64)
            raws[plugin.name] = scores
            scores, top = _normalized_top(entry, state, pod, scores)
            per_plugin[plugin.name] = scores
            weights[plugin.name] = entry.weight
            if top == 0:
                continue  # every node scores 0 here: nothing to add
            totals += scores if entry.weight == 1 else scores * entry.weight
        if not self.scores:
            totals[:] = 1  # upstream: with no score plugins every node scores one
        return ScoreResult(cols, per_plugin, weights, totals, raws)

    def _score_from_class(
        self,
        cls: PodClass,
        active: Sequence[WeightedScore],
        state: CycleState,
        pod: PodInfo,
        cols: IntArray,
        zero: frozenset[str],
    ) -> ScoreResult | None:
        """``run_score``'s totals with the pod class's kept scores folded in: the kept plugins without
        NormalizeScore through the class's weighted per-node sum (one gather), a kept plugin that scores 0 on
        every node and normalises zeros to one value (``zeros_normalize_uniformly``) as that value, a plugin of
        ``zero`` (0 everywhere: its PreFilter skipped) as nothing without NormalizeScore and else as such a
        plugin, and the other plugins as ``run_score`` runs them. The same totals, as integers add up the same in
        any order. None (run plugin by plugin instead) when a kept score or that one value lies outside [MIN_NODE_SCORE,
        MAX_NODE_SCORE]: the plugin-by-plugin pass fails exactly where upstream does. Decided before any plugin
        outside the class is called, so none is called twice."""
        snap = self.handle.snapshot
        eq = self.equivalence
        kept: list[tuple[ScorePlugin, int]] = []
        uniform = 0
        rest: list[WeightedScore] = []
        for entry in active:
            plugin = entry.plugin
            name = plugin.name
            normalizer = entry.normalizer
            if name in zero:  # 0 on every node in this cycle
                if normalizer is None:
                    continue  # adds nothing
                uniformly = name in self._zeros_uniform
            elif name not in cls.cached_scores:
                rest.append(entry)
                continue
            elif normalizer is None:
                kept.append((plugin, entry.weight))
                continue
            else:
                uniformly = name in self._zeros_uniform and eq.all_zero(cls, plugin, state, pod, snap)
            if not uniformly:
                rest.append(entry)
                continue
            value = self._uniform.get(name)
            if value is None:  # the same for every pod and cycle (zeros_normalize_uniformly): asked once
                one = normalizer.normalize_score(state, pod, _ONE_ZERO.copy())
                value = self._uniform[name] = int(np.asarray(one, dtype=np.int64)[0])
            if not MIN_NODE_SCORE <= value <= MAX_NODE_SCORE:
                return None
            uniform += value * entry.weight
        if kept:
            summed = eq.kept_totals(cls, kept, state, pod, snap, cols)
            if summed is None:
                return None
            # in place: the sum is the cycle's own array
            totals = np.add(summed, uniform, out=summed) if uniform else summed
        else:
            totals = np.full(len(cols), uniform, dtype=np.int64)
        per_plugin: dict[str, IntArray] = {}
        raw: dict[str, IntArray] = {}
        for entry in rest:
            plugin = entry.plugin
            if plugin.name in zero:
                scores = np.zeros(len(cols), dtype=np.int64)
            elif plugin.name in cls.cached_scores:
                scores = eq.scores(cls, plugin, state, pod, snap, cols)
            else:
                scores = np.asarray(plugin.score(state, pod, snap, cols), dtype=np.int64)
            raw[plugin.name] = scores
            scores, top = _normalized_top(entry, state, pod, scores)
            per_plugin[plugin.name] = scores
            if top:
                totals += scores if entry.weight == 1 else scores * entry.weight
        return ScoreResult(cols, per_plugin, {s.plugin.name: s.weight for s in active}, totals, raw)

    def _folded_raw(
        self, cls: PodClass, state: CycleState, pod: PodInfo, zero: frozenset[str], folded: ScoreResult
    ) -> None:
        """Add to ``folded.raw`` the raw scores of the plugins ``_score_from_class`` folded (those of the cycle,
        ``folded.weights``, it names no raw scores for): zeros for a plugin of ``zero``, the class's kept row (up
        to date) for the others."""
        snap = self.handle.snapshot
        cols, raw = folded.cols, folded.raw
        for entry in self.scores:
            name = entry.plugin.name
            if name in folded.weights and name not in raw:
                raw[name] = (
                    np.zeros(len(cols), dtype=np.int64)
                    if name in zero
                    else self.equivalence.scores(cls, entry.plugin, state, pod, snap, cols)
                )

    def run_raw_score(self, state: CycleState, pod: PodInfo, cols: IntArray) -> dict[str, IntArray]:
        """Each Score plugin of this cycle (not skipped) on ``cols``, before NormalizeScore and weights (upstream
        RunRawScorePlugins: 1.37's batch re-scores one node with it)."""
        snap = self.handle.snapshot
        return {
            s.plugin.name: np.asarray(s.plugin.score(state, pod, snap, cols), dtype=np.int64)
            for s in self.scores
            if s.plugin.name not in state.skip_score
        }

    def normalize_scores(
        self, state: CycleState, pod: PodInfo, cols: IntArray, raw: Mapping[str, IntArray]
    ) -> IntArray:
        """The totals of ``cols`` from raw scores (``run_raw_score``'s, one array per plugin over ``cols``):
        each plugin of this cycle normalized over these nodes, checked, weighted and summed (upstream
        NormalizeScores; a plugin with no raw scores counts 0, and with no plugin every total is 0)."""
        totals = np.zeros(len(cols), dtype=np.int64)
        for entry in self.scores:
            name = entry.plugin.name
            if name in state.skip_score:
                continue
            scores = np.asarray(raw.get(name, np.zeros(len(cols), dtype=np.int64)), dtype=np.int64).copy()
            totals += _normalized(entry, state, pod, scores) * entry.weight
        return totals

    def top_normalized(self, state: CycleState) -> list[str] | None:
        """The Score plugins of this cycle (not skipped) whose NormalizeScore reads only a node's raw score and the
        highest raw score (``normalizes_by_top``), when every other has no NormalizeScore: a node's total then
        follows from its raw scores and those highest ones (``rescored_total``), as ``run_score`` gave the cycle's
        nodes theirs. None when a plugin normalizes otherwise, or the profile has no Score plugin (a cycle's
        totals are then all 1)."""
        skipped = state.skip_score
        if not self.scores or not self._by_more.issubset(skipped):
            return None
        return [name for name in self._by_top if name not in skipped]

    def rescored_total(self, state: CycleState, pod: PodInfo, raw: Mapping[str, int], tops: Mapping[str, int]) -> int:
        """One node's total from its raw scores (``run_raw_score``'s, one per plugin of this cycle), each plugin of
        ``top_normalized`` normalized as among nodes whose highest raw score is ``tops[plugin]`` (at least the
        node's own), checked and weighted as ``normalize_scores`` does (a PluginError naming the plugin)."""
        total = 0
        for entry in self.scores:
            name = entry.plugin.name
            if name in state.skip_score:
                continue
            value = raw.get(name, 0)
            if entry.normalizer is not None:  # normalized with a node holding the top (which normalizes validly)
                value = int(_normalized(entry, state, pod, np.array([value, tops[name]], dtype=np.int64))[0])
            elif not MIN_NODE_SCORE <= value <= MAX_NODE_SCORE:
                raise _invalid_score(name, value)
            total += value * entry.weight
        return total

    # -- reserve, permit, bind ----------------------------------------------------------------------------

    def run_reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        for i, p in enumerate(self.reserves):
            st = p.reserve(state, pod, node)
            if st.code != Code.SUCCESS:
                st.plugin = st.plugin or p.name
                for q in reversed(self.reserves[: i + 1]):
                    q.unreserve(state, pod, node)
                return st
        return Status()

    def run_unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        for p in reversed(self.reserves):
            p.unreserve(state, pod, node)

    def run_permit(self, state: CycleState, pod: PodInfo, node: str) -> tuple[Status, dict[str, float]]:
        """Upstream RunPermitPlugins: the first rejection (or error) ends it; otherwise Wait when any plugin asked
        to wait, with each such plugin's timeout."""
        if not self.permits:
            return Status(), {}
        waits: dict[str, float] = {}
        waiting = Status()
        for p in self.permits:
            st, timeout = p.permit(state, pod, node)
            if st.ok:
                continue
            st.plugin = st.plugin or p.name
            if st.code == Code.WAIT:
                waits[p.name] = timeout
                waiting = st
                continue
            if st.code not in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
                return Status.error(f"running Permit plugin {p.name!r}: {st.message}", p.name), {}
            return st, {}
        if waits:
            # 1.36+ keeps the last waiting plugin's reasons and adds its own; 1.35 and older say only their own
            if self.handle.kube_version.minor >= 36:
                reasons = [*waiting.reasons, "one or more plugins asked to wait and no plugin rejected pod"]
                return Status(Code.WAIT, reasons, waiting.plugin), waits
            return Status(
                Code.WAIT, [f'one or more plugins asked to wait and no plugin rejected pod "{pod.pod.name}"']
            ), waits
        return Status(), {}

    def run_pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        for p in self.pre_binds:
            st = p.pre_bind(state, pod, node)
            if st.code != Code.SUCCESS:
                st.plugin = st.plugin or p.name
                return st
        return Status()

    def run_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        for p in self.binds:
            st = p.bind(state, pod, node)
            if st.code == Code.SKIP:
                continue
            st.plugin = st.plugin or p.name
            return st
        return Status(Code.ERROR, ["no bind plugin bound the pod"])

    def run_post_bind(self, state: CycleState, pod: PodInfo, node: str) -> None:
        for p in self.post_binds:
            p.post_bind(state, pod, node)


def _normalized(entry: WeightedScore, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
    """One plugin's scores after its NormalizeScore (if it has one), checked to lie in [0, 100] as upstream checks
    them (a PluginError naming the plugin otherwise)."""
    return _normalized_top(entry, state, pod, scores)[0]


def _normalized_top(entry: WeightedScore, state: CycleState, pod: PodInfo, scores: IntArray) -> tuple[IntArray, int]:
    """``_normalized``, and the highest of the scores (0 for none)."""
    if entry.normalizer is not None:
        scores = np.asarray(entry.normalizer.normalize_score(state, pod, scores), dtype=np.int64)
    top = _top(scores)
    if top > MAX_NODE_SCORE:
        bad = int(scores.max() if scores.max() > MAX_NODE_SCORE else scores.min())
        raise _invalid_score(entry.plugin.name, bad)
    return scores, top


def _invalid_score(plugin: str, bad: int) -> PluginError:
    """Upstream's error for a score outside [MIN_NODE_SCORE, MAX_NODE_SCORE] after NormalizeScore."""
    return PluginError(
        f"plugin {plugin!r} returns an invalid score {bad}, it should in the "
        f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
    )


def _top(scores: IntArray) -> int:
    """The highest score, or more than MAX_NODE_SCORE when one lies outside [MIN_NODE_SCORE, MAX_NODE_SCORE]; 0 for
    no scores. For int64 scores in one pass: read as unsigned, a negative score is larger than any valid one."""
    if not len(scores):
        return 0
    if MIN_NODE_SCORE == 0 and scores.dtype == np.int64:
        return int(scores.view(np.uint64).max())
    if scores.min() < MIN_NODE_SCORE:
        return MAX_NODE_SCORE + 1
    return int(scores.max())


def _signers(points: Mapping[str, list[tuple[Plugin, int]]]) -> list[SignPlugin] | None:
    """The plugins whose fragments make a pod's signature, each once in upstream's order (PreFilter, Filter,
    PreScore, Score), or None when one of them cannot sign pods (a plugin upstream does not have, or one without
    SignPod there): the profile never batches."""
    out: dict[str, SignPlugin] = {}
    for point in ("preFilter", "filter", "preScore", "score"):
        for plugin, _ in points[point]:
            if plugin.name in out:
                continue
            if not isinstance(plugin, SignPlugin):
                return None
            out[plugin.name] = plugin
    return list(out.values())


def _batching(
    handle: Handle, points: Mapping[str, list[tuple[Plugin, int]]]
) -> tuple[list[SignPlugin] | None, OpportunisticBatch | None]:
    """A profile's signing plugins and its batch, when the release batches (1.35+ with OpportunisticBatching) and
    the profile can sign pods; (None, None) otherwise."""
    version = handle.kube_version
    if not version.opportunistic_batching:
        return None, None
    signers = _signers(points)
    if signers is None:
        return None, None
    batch = OpportunisticBatch(
        rescore=version.batch_rescores_last_node,
        same_cycle=version.batch_rescores_last_node and version.generic_workload,
        nominated_gives_up=version.batch_rescores_last_node,
    )
    return signers, batch
