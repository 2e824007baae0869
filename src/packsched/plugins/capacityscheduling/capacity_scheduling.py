"""CapacityScheduling: elastic quotas (scheduler-plugins' ``pkg/capacityscheduling``), as specified in
``../shared/spec/capacity-scheduling.md``.

* PreFilter: a pod of a namespace with an ElasticQuota is rejected (Unschedulable, so that preemption runs)
  when its quota's usage plus the pod (plus equal-or-higher-priority pods of the namespace nominated to a node)
  would exceed ``max``, or when the usage of all quotas plus the pod (plus those nominated pods and the
  nominated pods of quotas within their min) would exceed the sum of all mins.
* PreFilter extensions AddPod / RemovePod keep the cycle's copy of the quotas right during preemption's dry run.
* PostFilter: preemption with quota rules (spec §7). A pod whose quota would go over its min may evict only
  lower-priority pods of its own namespace; a pod within its min reclaims from quotas that are over their min,
  whatever the priorities. Every node the filters did not rule out for good is dry-run (no sampling).
* Reserve / Unreserve count the pod in (and out of) its quota; cluster events keep the count as the plugin's
  informers would (an assigned pod added, finished or deleted; a quota added, changed or deleted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from packsched.api.objects import PREEMPT_NEVER, ElasticQuota, Pod
from packsched.config.types import DefaultPreemptionArgs, PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.interface import (
    ADD,
    DELETE,
    ELASTIC_QUOTA,
    POD,
    UPDATE,
    BudgetView,
    ClusterEvent,
    Handle,
    PostFilterResult,
    PreFilterExtensions,
)
from packsched.framework.runtime import Framework
from packsched.framework.snapshot import IntArray, PodInfo, Snapshot
from packsched.framework.status import Code, Status
from packsched.plugins.capacityscheduling.elastic_quota import (
    QuotaInfo,
    QuotaInfos,
    Res,
    add_to,
    aggregated_over,
    pod_quota_request,
)
from packsched.plugins.defaultpreemption.default_preemption import (
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    CandidateCollector,
    DefaultPreemption,
    DryRunResult,
    filter_pods_with_pdb_violation,
    importance_key,
    restore_order,
    status_from_groups,
)

NAME = "CapacityScheduling"
PRE_FILTER_KEY = "PreFilter" + NAME
SNAPSHOT_KEY = "ElasticQuotaSnapshot"

NOT_ELIGIBLE_NO_STATE = "not eligible due to failed to read from cycleState"
NO_SNAPSHOT = "Failed to read elasticQuotaSnapshot from cycleState"
NO_PRE_FILTER_STATE = "Failed to read preFilterState from cycleState"
QUOTA_EXCEEDED = "global quota max exceeded"

TERMINAL_PHASES = ("Succeeded", "Failed")
LIVE_PHASES = ("Running", "Pending")


def pod_uid(pod: Pod) -> str:
    """Upstream counts pods by UID; a manifest pod may have none, and its namespace/name is as unique."""
    return pod.uid or pod.key


@dataclass
class PreFilterState:
    """The pod's request, and the two sums PreFilter checks (spec §5.3)."""

    pod_req: Res
    in_quota_req: Res = field(default_factory=dict)  # + nominated pods of the namespace, priority >= the pod's
    all_req: Res = field(default_factory=dict)  # + those + nominated pods of other quotas within their min

    def clone(self) -> PreFilterState:
        return self  # never changed after PreFilter


def _summed(*parts: Res) -> Res:
    out: Res = {}
    for part in parts:
        for name, amount in part.items():
            out[name] = out.get(name, 0) + amount
    return out


class CapacityScheduling:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.quotas = QuotaInfos()  # the live cache, by namespace
        self._objects: dict[str, ElasticQuota] = {}  # what the ElasticQuota lister would list, by ns/name
        self._requests: dict[str, Res] = {}  # request of each counted pod, by uid (requests never change)
        self._by_object: dict[int, tuple[Pod, Res]] = {}  # request of each nominated pod seen, by id()
        self.preemption = _QuotaPreemption(self, handle)

    # -- cluster events (the plugin's informers) ----------------------------------------------------------

    def on_cluster_event(self, event: ClusterEvent) -> None:
        if event.resource == ELASTIC_QUOTA:
            self._quota_event(event)
        elif event.resource == POD:
            self._pod_event(event)

    def _quota_event(self, event: ClusterEvent) -> None:
        if event.action == ADD and isinstance(event.new, ElasticQuota):
            q = event.new
            self._objects[q.key] = q
            if q.namespace not in self.quotas:  # a second quota in a namespace is ignored, as upstream
                self.quotas[q.namespace] = QuotaInfo.from_quota(q)
        elif event.action == UPDATE and isinstance(event.new, ElasticQuota) and isinstance(event.old, ElasticQuota):
            new = event.new
            self._objects.pop(event.old.key, None)
            self._objects[new.key] = new
            info = QuotaInfo.from_quota(new)
            old = self.quotas.get(event.old.namespace)
            if old is not None:  # the usage and the counted pods carry over
                info.used, info._base, info._added, info._removed = old.used, old._base, old._added, old._removed
            self.quotas[new.namespace] = info
        elif event.action == DELETE and isinstance(event.old, ElasticQuota):
            self._objects.pop(event.old.key, None)
            self.quotas.pop(event.old.namespace, None)

    def _pod_event(self, event: ClusterEvent) -> None:
        if event.action == ADD and isinstance(event.new, Pod):
            pod = event.new
            info = self.quotas.get(pod.namespace)
            if info is None:
                # upstream lists the namespace's ElasticQuotas and takes the first
                first = next((q for q in self._objects.values() if q.namespace == pod.namespace), None)
                if first is None:
                    return
                info = self.quotas[pod.namespace] = QuotaInfo.from_quota(first)
            self._count(info, pod)  # the phase is not looked at (upstream counts even a Succeeded pod here)
        elif event.action == UPDATE and isinstance(event.new, Pod) and isinstance(event.old, Pod):
            if event.old.phase in TERMINAL_PHASES:
                return
            if event.new.phase not in LIVE_PHASES:
                info = self.quotas.get(event.new.namespace)
                if info is not None:
                    self._uncount(info, event.new)
        elif event.action == DELETE and isinstance(event.old, Pod):
            info = self.quotas.get(event.old.namespace)
            if info is not None:
                self._uncount(info, event.old)

    def request(self, pod: Pod) -> Res:
        uid = pod_uid(pod)
        req = self._requests.get(uid)
        if req is None:
            req = self._requests[uid] = pod_quota_request(pod)
        return req

    def _nominated_request(self, pod: Pod) -> Res:
        """A nominated pod's request, computed once per Pod object (every PreFilter adds up all nominated pods;
        keyed by the object, not the uid, so that a pod object never borrows another's request)."""
        hit = self._by_object.get(id(pod))
        if hit is None or hit[0] is not pod:
            hit = self._by_object[id(pod)] = (pod, pod_quota_request(pod))
        return hit[1]

    def _count(self, info: QuotaInfo, pod: Pod) -> None:
        info.add_pod_if_absent(pod_uid(pod), self.request(pod))

    def _uncount(self, info: QuotaInfo, pod: Pod) -> None:
        info.delete_pod_if_present(pod_uid(pod), self.request(pod))

    # -- PreFilter ------------------------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        snapshot = self.quotas.snapshot()
        pod_req = pod_quota_request(pod.pod)
        state.write(SNAPSHOT_KEY, snapshot)
        own = snapshot.get(pod.pod.namespace)
        if own is None:
            state.write(PRE_FILTER_KEY, PreFilterState(pod_req))
            return Status()
        in_quota: list[Res] = [pod_req]
        everything: list[Res] = [pod_req]
        uid = pod_uid(pod.pod)
        for col in self.handle.nominated_nodes():
            for other in self.handle.nominated_pods(col):
                if pod_uid(other.pod) == uid:
                    continue
                ns = other.pod.namespace
                live = self.quotas.get(ns)  # upstream reads the live cache here, not the snapshot
                if live is None:
                    continue
                req = self._nominated_request(other.pod)
                if ns == pod.pod.namespace and other.priority >= pod.priority:
                    in_quota.append(req)
                    everything.append(req)
                elif ns != pod.pod.namespace and not live.over_min():
                    everything.append(req)
        pfs = PreFilterState(pod_req, _summed(*in_quota), _summed(*everything))
        state.write(PRE_FILTER_KEY, pfs)
        who = f"{pod.pod.namespace}/{pod.pod.name}"
        if own.over_max_with(pfs.in_quota_req):
            return Status(
                Code.UNSCHEDULABLE,
                [f"Pod {who} is rejected in PreFilter because ElasticQuota {own.namespace} is more than Max"],
                NAME,
            )
        if snapshot.aggregated_over_min_with(pfs.all_req):
            return Status(
                Code.UNSCHEDULABLE,
                [f"Pod {who} is rejected in PreFilter because total ElasticQuota used is more than min"],
                NAME,
            )
        return Status()

    # -- PreFilter extensions -------------------------------------------------------------------------------

    def add_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        return self._in_cycle_snapshot(state, other, add=True)

    def remove_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        return self._in_cycle_snapshot(state, other, add=False)

    def _in_cycle_snapshot(self, state: CycleState, other: PodInfo, add: bool) -> Status:
        """Count ``other`` in (or out of) its quota in this cycle's copy of the quotas."""
        snapshot = state.read(SNAPSHOT_KEY)
        if not isinstance(snapshot, QuotaInfos):
            return Status(Code.ERROR, [f'error reading "{SNAPSHOT_KEY}" from cycleState'], NAME)
        info = snapshot.get(other.pod.namespace)
        if info is not None:
            change = info.add_pod_if_absent if add else info.delete_pod_if_present
            change(pod_uid(other.pod), self.request(other.pod))
        return Status()

    # -- PostFilter -----------------------------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult:
        # Unlike DefaultPreemption, the evaluator's message is returned as is (no "preemption: " prefix).
        result = self.preemption.preempt(state, pod, diagnosis)
        if not result.status.ok:
            result.status.plugin = result.status.plugin or NAME
        return result

    # -- Reserve --------------------------------------------------------------------------------------------

    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        info = self.quotas.get(pod.pod.namespace)
        if info is not None:
            self._count(info, pod.pod)
        return Status()

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        info = self.quotas.get(pod.pod.namespace)
        if info is not None:
            self._uncount(info, pod.pod)


class _QuotaPreemption(DefaultPreemption):
    """The generic preemption evaluator with CapacityScheduling's eligibility, candidate count and victim
    selection (spec §7)."""

    def __init__(self, plugin: CapacityScheduling, handle: Handle) -> None:
        super().__init__(DefaultPreemptionArgs(), handle)  # its sampling args are not used: every node is tried
        self.plugin = plugin

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes  # every potential node is dry-run

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, diagnosis: Diagnosis, state: CycleState | None = None
    ) -> tuple[bool, str]:
        if pod.pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        pfs = state.read(PRE_FILTER_KEY) if state is not None else None
        if not isinstance(pfs, PreFilterState):
            return False, NOT_ELIGIBLE_NO_STATE
        nominated = pod.pod.nominated_node_name
        if not nominated:
            return True, ""
        snap = self.handle.snapshot
        col = snap.index.get(nominated)
        if col is not None and diagnosis.node_status(col).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        quotas = state.read(SNAPSHOT_KEY) if state is not None else None
        if not isinstance(quotas, QuotaInfos) or col is None:
            return True, ""
        own = quotas.get(pod.pod.namespace)
        on_node = snap.pods_on[col].values()
        if own is not None:
            over_min = own.over_min_with(pfs.in_quota_req)
            for p in on_node:
                if not p.pod.terminating:
                    continue
                theirs = quotas.get(p.pod.namespace)
                if theirs is None:
                    continue
                if p.pod.namespace == pod.pod.namespace and p.priority < pod.priority:
                    return False, NOT_ELIGIBLE_TERMINATING
                if p.pod.namespace != pod.pod.namespace and not over_min and theirs.over_min():
                    return False, NOT_ELIGIBLE_TERMINATING
        else:
            for p in on_node:
                if p.pod.namespace in quotas:
                    continue
                if p.pod.terminating and p.priority < pod.priority:
                    return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def potential_victims(self, quotas: QuotaInfos, pfs: PreFilterState, pod: PodInfo, col: int) -> list[PodInfo]:
        """The pods of node ``col`` that preemption may evict for ``pod``, in the order upstream removes them
        (spec §7.3 step 2). Pure: the re-evaluation of "over min" after each removal runs on private copies of
        the quotas it touches, exactly as the RemovePod extension then changes the node's own snapshot."""
        on_node = self.handle.snapshot.pods_on[col].values()
        ns = pod.pod.namespace
        own = quotas.get(ns)
        out: list[PodInfo] = []
        if own is None:  # a preemptor without quota: lower-priority pods of namespaces without quota
            return [
                p
                for p in sorted(on_node, key=_least_important_first)
                if p.pod.namespace not in quotas and p.priority < pod.priority
            ]
        if own.over_min_with(pfs.in_quota_req):  # over its min: lower-priority pods of its own namespace
            return [
                p
                for p in sorted(on_node, key=_least_important_first)
                if p.pod.namespace == ns and p.priority < pod.priority
            ]
        # within its min: pods of other quotas while they are over their min, whatever their priority
        candidates = [p for p in on_node if p.pod.namespace != ns and p.pod.namespace in quotas]
        if not candidates:
            return out
        # Each pod is visited once, so un-counting it from a copy of its namespace's usage is what
        # delete_pod_if_present on a clone of the record would do: subtract it if the record counts it.
        local: dict[str, Res] = {}
        for p in sorted(candidates, key=_least_important_first):
            info = quotas[p.pod.namespace]
            used = local.get(p.pod.namespace)
            if used is None:
                used = local[p.pod.namespace] = dict(info.used)
            if info.over_min(used):
                out.append(p)
                if info.tracks(pod_uid(p.pod)):
                    add_to(used, self.plugin.request(p.pod), -1)
        return out

    def victim_groups(self, quotas: QuotaInfos, pfs: PreFilterState, pod: PodInfo) -> list[tuple[str, int]]:
        """The (namespace, priority) groups of placed pods among which ``potential_victims`` finds at least
        one pod on every node that holds one (and none on a node that holds none). In the within-min mode,
        the walk makes the first pod of a namespace that is over its min a victim before anything changes
        that namespace's count, and pods of namespaces within their min never change any count: so a node
        has victims exactly when it holds a pod of another quota'd namespace that is over its min now."""
        ns = pod.pod.namespace
        own = quotas.get(ns)
        groups = self.handle.snapshot.groups
        if own is None:
            return [(n, prio) for n, prio in groups if n not in quotas and prio < pod.priority]
        if own.over_min_with(pfs.in_quota_req):
            return [(n, prio) for n, prio in groups if n == ns and prio < pod.priority]
        over = {n for n, info in quotas.items() if n != ns and info.over_min()}
        return [(n, prio) for n, prio in groups if n in over]

    def dry_run_preemption(
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        potential: IntArray,
        pdbs: Sequence[BudgetView],
        offset: int,
        num_candidates: int,
        batched: bool | None = None,
    ) -> DryRunResult:
        """Every potential node, as upstream. Equivalent to one ``select_victims_on_node`` per node, but with
        all nodes in play at once: every node's potential victims leave the snapshot together, one filter call
        judges all those nodes, and each reprieve step adds back the next pod of every node still in play and
        judges them all with one filter call. Each node keeps its own copy of the quotas, changed exactly as
        the RemovePod / AddPod extensions would change the node's clone of the cycle state; the filters never
        read the quotas, so one shared cycle state serves them all."""
        quotas, pfs = state.read(SNAPSHOT_KEY), state.read(PRE_FILTER_KEY)
        others = [
            p.name
            for p in fwk.pre_filter
            if isinstance(p, PreFilterExtensions) and p.name != NAME and p.name not in state.skip_filter
        ]
        if (
            batched is False
            or others
            or NAME in state.skip_filter
            or not isinstance(quotas, QuotaInfos)
            or not isinstance(pfs, PreFilterState)
        ):
            # another plugin's filter may depend on its AddPod/RemovePod (or this plugin's are not run): node
            # by node, as upstream
            return super().dry_run_preemption(fwk, state, pod, potential, pdbs, offset, num_candidates, False)
        snap = self.handle.snapshot
        order: list[int] = np.concatenate([potential[offset:], potential[:offset]]).tolist()
        # Only nodes holding a pod of a group that may lose pods can have potential victims: one numpy
        # look-up instead of walking every node's pods.
        maybe = snap.nodes_holding(self.victim_groups(quotas, pfs, pod)).tolist()
        plans = {col: self.potential_victims(quotas, pfs, pod, col) for col in order if maybe[col]}
        busy = [col for col in order if plans.get(col)]
        results: dict[int, tuple[list[PodInfo], int, Status]] = {}
        if busy:
            results = self._select_victims_on_nodes(fwk, state, pod, busy, plans, quotas, pfs, pdbs)
        found = CandidateCollector(snap.nodes, num_candidates)
        for col in order:
            res = results.get(col)
            if res is None:
                res = ([], 0, self.no_victims(snap.nodes[col].name, pod))
            if found.add(col, *res):
                break
        return found.result()

    def _select_victims_on_nodes(  # noqa: C901
        self,
        fwk: Framework,
        state: CycleState,
        pod: PodInfo,
        busy: list[int],
        plans: dict[int, list[PodInfo]],
        quotas: QuotaInfos,
        pfs: PreFilterState,
        pdbs: Sequence[BudgetView],
    ) -> dict[int, tuple[list[PodInfo], int, Status]]:
        """``select_victims_on_node`` for every node of ``busy`` (each with potential victims ``plans[col]``),
        step by step over all of them. The snapshot is restored before returning."""
        snap = self.handle.snapshot
        request = self.plugin.request
        ns = pod.pod.namespace
        out: dict[int, tuple[list[PodInfo], int, Status]] = {}
        orders = {col: list(snap.pods_on[col]) for col in busy}
        removed: dict[int, tuple[PodInfo, int]] = {}  # by id(): the pods now out of the snapshot, and where
        try:
            taken = [p for col in busy for p in plans[col]]
            snap.remove_pods(taken)
            for col in busy:
                for p in plans[col]:
                    removed[id(p)] = (p, col)
            fits, groups = fwk.run_filters_with_nominated(state, pod, np.array(busy, dtype=np.intp))
            live: list[int] = []
            for j, col in enumerate(busy):
                if fits[j]:
                    live.append(col)
                else:
                    out[col] = ([], 0, status_from_groups([g for g in groups if g.mask[j]]))
            # each node's own quotas, after RemovePod of its potential victims
            used_sum, min_sum = quotas.sums()
            local: dict[int, _NodeQuotas] = {}
            sequences: dict[int, list[PodInfo]] = {}
            num_violating_first: dict[int, int] = {}
            playing: list[int] = []
            own_quota = ns in quotas
            for col in live:
                qs = _NodeQuotas(quotas, used_sum, min_sum)
                for p in plans[col]:
                    qs.uncount(p.pod.namespace, pod_uid(p.pod), request(p.pod))
                own = qs.get(ns)
                if own is not None and (own.over_max_with(pfs.pod_req) or qs.aggregated_over_min_with(pfs.pod_req)):
                    out[col] = ([], 0, Status(Code.UNSCHEDULABLE, [QUOTA_EXCEEDED]))
                    continue
                local[col] = qs
                pot = sorted(plans[col], key=importance_key)
                violating, non_violating = filter_pods_with_pdb_violation(pot, pdbs)
                sequences[col] = violating + non_violating
                num_violating_first[col] = len(violating)
                out[col] = ([], 0, Status())
                playing.append(col)
            victims: dict[int, list[PodInfo]] = {col: [] for col in playing}
            violations = dict.fromkeys(playing, 0)
            step = 0
            while True:
                now = [col for col in playing if step < len(sequences[col])]
                if not now:
                    break
                back = [(sequences[col][step], col) for col in now]
                snap.add_pods(back)
                for p, col in back:
                    del removed[id(p)]
                    local[col].count(p.pod.namespace, pod_uid(p.pod), request(p.pod))
                fits, _ = fwk.run_filters_with_nominated(state, pod, np.array(now, dtype=np.intp))
                out_again: list[PodInfo] = []
                for col, ok in zip(now, fits.tolist(), strict=True):
                    qs = local[col]
                    # Upstream also runs the quota re-check after a pod that did not fit was made a victim,
                    # and then fails removing it a second time (spec §12.9a); a pod is made a victim once here.
                    if ok and not (
                        own_quota
                        and (qs.own(ns).over_max_with(pfs.in_quota_req) or qs.aggregated_over_min_with(pfs.all_req))
                    ):
                        continue
                    p = sequences[col][step]
                    out_again.append(p)
                    removed[id(p)] = (p, col)
                    qs.uncount(p.pod.namespace, pod_uid(p.pod), request(p.pod))
                    victims[col].append(p)
                    if not ok and step < num_violating_first[col]:
                        violations[col] += 1
                snap.remove_pods(out_again)  # nodes are independent: all of this step's victims at once
                step += 1
            for col in playing:
                vs = victims[col]
                n_violating = num_violating_first[col]
                if 0 < n_violating < len(sequences[col]):
                    vs.sort(key=importance_key)
                out[col] = (vs, violations[col], Status())
            return out
        finally:
            snap.add_pods(list(removed.values()))
            for col, names in orders.items():
                restore_order(snap.pods_on[col], names)

    @staticmethod
    def no_victims(node: str, pod: PodInfo) -> Status:
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [f"No victims found on node {node} for preemptor pod {pod.pod.name}"]
        )

    def select_victims_on_node(  # noqa: C901
        self, fwk: Framework, state: CycleState, pod: PodInfo, col: int, pdbs: Sequence[BudgetView]
    ) -> tuple[list[PodInfo], int, Status]:
        """Upstream's SelectVictimsOnNode for quotas (spec §7.3). ``state`` is this node's own clone."""
        quotas = state.read(SNAPSHOT_KEY)
        if not isinstance(quotas, QuotaInfos):
            return [], 0, Status(Code.UNSCHEDULABLE, [NO_SNAPSHOT])
        pfs = state.read(PRE_FILTER_KEY)
        if not isinstance(pfs, PreFilterState):
            return [], 0, Status(Code.UNSCHEDULABLE, [NO_PRE_FILTER_STATE])
        snap = self.handle.snapshot
        on_node = snap.pods_on[col]
        order = list(on_node)
        removed: dict[int, PodInfo] = {}
        sel = np.array([col], dtype=np.intp)

        def remove(p: PodInfo) -> Status:
            snap.remove_pod(p)
            removed[id(p)] = p
            return fwk.run_remove_pod(state, pod, p, col)

        def add(p: PodInfo) -> Status:
            snap.add_pod(p, col)
            del removed[id(p)]
            return fwk.run_add_pod(state, pod, p, col)

        own = quotas.get(pod.pod.namespace)
        try:
            potential = self.potential_victims(quotas, pfs, pod, col)
            if not potential:
                return [], 0, self.no_victims(snap.nodes[col].name, pod)
            for p in potential:
                st = remove(p)
                if not st.ok:
                    return [], 0, Status(Code.ERROR, [st.message])
            feasible, groups = fwk.run_filters_with_nominated(state, pod, sel)
            if not feasible[0]:
                return [], 0, status_from_groups(groups)
            if own is not None and (own.over_max_with(pfs.pod_req) or quotas.aggregated_over_min_with(pfs.pod_req)):
                return [], 0, Status(Code.UNSCHEDULABLE, [QUOTA_EXCEEDED])
            potential.sort(key=importance_key)
            violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
            victims: list[PodInfo] = []
            num_violating = 0

            def reprieve(p: PodInfo) -> tuple[bool, Status]:
                st = add(p)
                if not st.ok:
                    return False, st
                fits = bool(fwk.run_filters_with_nominated(state, pod, sel)[0][0])
                # Upstream also runs the quota re-check after a pod that did not fit was made a victim, and
                # then fails removing it a second time (spec §12.9a); a pod is made a victim once here.
                quota_says_no = (
                    fits
                    and own is not None
                    and (own.over_max_with(pfs.in_quota_req) or quotas.aggregated_over_min_with(pfs.all_req))
                )
                if not fits or quota_says_no:
                    st = remove(p)
                    if not st.ok:
                        return False, st
                    victims.append(p)
                return fits, Status()

            for p in violating:
                fits, st = reprieve(p)
                if not st.ok:
                    return [], 0, Status(Code.ERROR, [st.message])
                if not fits:
                    num_violating += 1
            for p in non_violating:
                _, st = reprieve(p)
                if not st.ok:
                    return [], 0, Status(Code.ERROR, [st.message])
            if violating and non_violating:
                victims.sort(key=importance_key)
            return victims, num_violating, Status()
        finally:
            for p in list(removed.values()):
                snap.add_pod(p, col)
            restore_order(on_node, order)


class _NodeQuotas:
    """One node's quotas in the batched dry run: what the node's clone of the cycle state holds after the
    RemovePod / AddPod calls of its dry run. A namespace's record is copied the first time the node counts one
    of its pods in or out (the others are the cycle's, unchanged), and the usage summed over all records is
    kept up to date alongside, so that the Σmin check does not add up every record at every step."""

    def __init__(self, base: QuotaInfos, used_sum: Res, min_sum: Res) -> None:
        self.base = base
        self.copies: dict[str, QuotaInfo] = {}
        self.used_sum = dict(used_sum)
        self.min_sum = min_sum

    def get(self, ns: str) -> QuotaInfo | None:
        info = self.copies.get(ns)
        return info if info is not None else self.base.get(ns)

    def own(self, ns: str) -> QuotaInfo:
        info = self.get(ns)
        assert info is not None
        return info

    def _copy(self, ns: str) -> QuotaInfo | None:
        info = self.copies.get(ns)
        if info is None:
            base = self.base.get(ns)
            if base is None:
                return None
            info = self.copies[ns] = base.clone()
        return info

    def count(self, ns: str, uid: str, request: Res) -> None:
        """The AddPod extension: count the pod in if its namespace has a record that does not count it."""
        info = self._copy(ns)
        if info is not None and not info.tracks(uid):
            info.add_pod_if_absent(uid, request)
            add_to(self.used_sum, request)

    def uncount(self, ns: str, uid: str, request: Res) -> None:
        """The RemovePod extension: count the pod out if its namespace's record counts it."""
        info = self._copy(ns)
        if info is not None and info.tracks(uid):
            info.delete_pod_if_present(uid, request)
            add_to(self.used_sum, request, -1)

    def aggregated_over_min_with(self, request: Res) -> bool:
        return aggregated_over(self.used_sum, self.min_sum, request)


def _least_important_first(p: PodInfo) -> tuple[int, float, int]:
    return (p.priority, -p.start_time, -p.start_seq)


def recommended_plugins() -> dict[str, Any]:
    """The ``plugins`` section scheduler-plugins' manifests give CapacityScheduling: every extension point it
    implements (multiPoint), and the only PostFilter plugin, in place of DefaultPreemption."""
    return {
        "multiPoint": {"enabled": [{"name": NAME}]},
        "postFilter": {"enabled": [{"name": NAME}], "disabled": [{"name": "*"}]},
    }


def new_capacity_scheduling(args: PluginArgs | None, handle: Handle) -> CapacityScheduling:
    if args:  # upstream ignores its args; an entry with fields is most likely a mistake
        raise TypeError("CapacityScheduling takes no arguments")
    return CapacityScheduling(handle)
