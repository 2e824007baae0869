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

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from packsched.api.objects import PREEMPT_NEVER, ElasticQuota, Pod
from packsched.config.types import PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.interface import (
    ADD,
    DELETE,
    ELASTIC_QUOTA,
    POD,
    UPDATE,
    ClusterEvent,
    Handle,
    PostFilterResult,
)
from packsched.framework.podinfo import PodInfo
from packsched.framework.preemption import NOT_ELIGIBLE_NEVER, NOT_ELIGIBLE_TERMINATING, Evaluator
from packsched.framework.snapshot import Snapshot
from packsched.framework.status import SUCCESS, Code, Status
from packsched.plugins.capacityscheduling.elastic_quota import (
    QuotaInfo,
    QuotaInfos,
    Res,
    add_to,
    pod_quota_request,
)

NAME = "CapacityScheduling"
PRE_FILTER_KEY = "PreFilter" + NAME
SNAPSHOT_KEY = "ElasticQuotaSnapshot"

NOT_ELIGIBLE_NO_STATE = "not eligible due to failed to read from cycleState"
NO_SNAPSHOT = "Failed to read elasticQuotaSnapshot from cycleState"
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


def _no_snapshot() -> Status:
    return Status(Code.ERROR, [f'error reading "{SNAPSHOT_KEY}" from cycleState'], NAME)


def _summed(*parts: Res) -> Res:
    out: Res = {}
    for part in parts:
        for name, amount in part.items():
            out[name] = out.get(name, 0) + amount
    return out


class CapacityScheduling:
    name = NAME
    cluster_events = (POD, ELASTIC_QUOTA)  # the live adapter watches nothing else for it

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.quotas = QuotaInfos()  # the live cache, by namespace
        self._objects: dict[str, ElasticQuota] = {}  # what the ElasticQuota lister would list, by ns/name
        self._requests: dict[str, Res] = {}  # request of each counted pod, by uid (requests never change)
        self._by_object: dict[int, tuple[Pod, Res]] = {}  # request of each nominated pod seen, by id()
        self.evaluator = Evaluator(handle, QuotaPolicy(self, handle), NAME)

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
        return self._request(pod_uid(pod), pod)

    def _request(self, uid: str, pod: Pod) -> Res:
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
        """Count ``other`` in its quota in this cycle's copy of the quotas."""
        quotas = state.read(SNAPSHOT_KEY)
        if not isinstance(quotas, QuotaInfos):
            return _no_snapshot()
        uid = pod_uid(other.pod)
        quotas.count(other.pod.namespace, uid, self._request(uid, other.pod))
        return SUCCESS

    def remove_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        """Count ``other`` out of its quota in this cycle's copy of the quotas."""
        quotas = state.read(SNAPSHOT_KEY)
        if not isinstance(quotas, QuotaInfos):
            return _no_snapshot()
        uid = pod_uid(other.pod)
        quotas.uncount(other.pod.namespace, uid, self._request(uid, other.pod))
        return SUCCESS

    # -- PostFilter -----------------------------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult:
        # Unlike DefaultPreemption, the evaluator's message is returned as is (no "preemption: " prefix).
        result = self.evaluator.preempt(state, pod, diagnosis)
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


class QuotaPolicy:
    """CapacityScheduling's side of the preemption evaluator (spec §7): its eligibility, every potential node
    dry-run, victims chosen by the quota rules, and the quota checks after the victims leave and at each
    reprieve."""

    victims_are_lower_priority_pods = False  # quota rules choose the victims: the per-pod dry run

    def __init__(self, plugin: CapacityScheduling, handle: Handle) -> None:
        self.plugin = plugin
        self.handle = handle

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        return 0, num_nodes  # every potential node is dry-run

    def eligible(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> tuple[bool, str]:
        if pod.pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        pfs = state.read(PRE_FILTER_KEY)
        if not isinstance(pfs, PreFilterState):
            return False, NOT_ELIGIBLE_NO_STATE
        nominated = pod.pod.nominated_node_name
        if not nominated:
            return True, ""
        snap = self.handle.snapshot
        col = snap.index.get(nominated)
        if col is not None and diagnosis.node_status(col).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        quotas = state.read(SNAPSHOT_KEY)
        if not isinstance(quotas, QuotaInfos) or col is None:
            return True, ""
        if self._victim_terminating(quotas, pfs, pod, snap.pods_on[col].values()):
            return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    @staticmethod
    def _victim_terminating(quotas: QuotaInfos, pfs: PreFilterState, pod: PodInfo, on_node: Iterable[PodInfo]) -> bool:
        """Whether a pod the preemptor could have made a victim is still terminating on its nominated node
        (upstream looks at the deletion timestamp alone here: any terminating pod, whatever removes it)."""
        own = quotas.get(pod.pod.namespace)
        if own is None:
            return any(
                p.pod.terminating and p.pod.namespace not in quotas and p.priority < pod.priority for p in on_node
            )
        over_min = own.over_min_with(pfs.in_quota_req)
        for p in on_node:
            theirs = quotas.get(p.pod.namespace)
            if not p.pod.terminating or theirs is None:
                continue
            if p.pod.namespace == pod.pod.namespace and p.priority < pod.priority:
                return True
            if p.pod.namespace != pod.pod.namespace and not over_min and theirs.over_min():
                return True
        return False

    @staticmethod
    def _read(state: CycleState) -> tuple[QuotaInfos, PreFilterState] | None:
        quotas, pfs = state.read(SNAPSHOT_KEY), state.read(PRE_FILTER_KEY)
        if isinstance(quotas, QuotaInfos) and isinstance(pfs, PreFilterState):
            return quotas, pfs
        return None

    def potential_victims(self, state: CycleState, pod: PodInfo, col: int) -> list[PodInfo]:
        """The pods of node ``col`` that preemption may evict for ``pod``, in the order upstream removes them
        (spec §7.3 step 2). Pure: the re-evaluation of "over min" after each removal runs on private copies of
        the quotas it touches, exactly as the RemovePod extension then changes the node's own snapshot."""
        read = self._read(state)
        if read is None:
            return []
        quotas, pfs = read
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

    def victim_groups(self, state: CycleState, pod: PodInfo) -> list[tuple[str, int]] | None:
        """The (namespace, priority) groups of placed pods among which ``potential_victims`` finds at least
        one pod on every node that holds one (and none on a node that holds none). In the within-min mode,
        the walk makes the first pod of a namespace that is over its min a victim before anything changes
        that namespace's count, and pods of namespaces within their min never change any count: so a node
        has victims exactly when it holds a pod of another quota'd namespace that is over its min now."""
        read = self._read(state)
        if read is None:
            return None
        quotas, pfs = read
        ns = pod.pod.namespace
        own = quotas.get(ns)
        groups = self.handle.snapshot.groups
        if own is None:
            return [(n, prio) for n, prio in groups if n not in quotas and prio < pod.priority]
        if own.over_min_with(pfs.in_quota_req):
            return [(n, prio) for n, prio in groups if n == ns and prio < pod.priority]
        over = {n for n, info in quotas.items() if n != ns and info.over_min()}
        return [(n, prio) for n, prio in groups if n in over]

    def no_victims(self, node: str, pod: PodInfo) -> Status:
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [f"No victims found on node {node} for preemptor pod {pod.pod.name}"]
        )

    def refuse_node(self, node_state: CycleState, pod: PodInfo) -> Status | None:
        """With every potential victim gone, the pod must fit its quota's max and the sum of all mins."""
        read = self._read(node_state)
        if read is None:
            return Status(Code.UNSCHEDULABLE, [NO_SNAPSHOT])
        quotas, pfs = read
        own = quotas.get(pod.pod.namespace)
        if own is not None and (own.over_max_with(pfs.pod_req) or quotas.aggregated_over_min_with(pfs.pod_req)):
            return Status(Code.UNSCHEDULABLE, [QUOTA_EXCEEDED])
        return None

    def refuse_reprieve(self, node_state: CycleState, pod: PodInfo) -> bool:
        """A victim put back that the pod still fits beside must go all the same if the pod's quota (with the
        nominated pods PreFilter counted) would then exceed its max, or all quotas their summed min. (Upstream
        also runs this check after a pod that did not fit was made a victim, and then fails removing it a second
        time (spec §12.9a); a pod is made a victim once here.)"""
        read = self._read(node_state)
        if read is None:
            return False
        quotas, pfs = read
        own = quotas.get(pod.pod.namespace)
        return own is not None and (own.over_max_with(pfs.in_quota_req) or quotas.aggregated_over_min_with(pfs.all_req))


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
