"""PodTopologySpread: a pod's topologySpreadConstraints (or the profile's default constraints, for pods that
Services and controllers select) keep matching pods spread over topology domains. DoNotSchedule constraints
filter (skew above maxSkew, or a node without the topology key), ScheduleAnyway ones score.

The per-node match counts come from the snapshot's pod count index (``backend.podcounts``), so a cycle sums
arrays per domain instead of walking every placed pod.
"""

from __future__ import annotations

from packsched.api.objects import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, LabelSelector, Service, TopologySpreadConstraint
from packsched.config.defaults import SYSTEM_DEFAULT_CONSTRAINTS
from packsched.config.types import SYSTEM_DEFAULTING, PluginArgs, PodTopologySpreadArgs
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion
from packsched.framework.cycle_state import CycleState
from packsched.framework.interface import (
    DELETE,
    SERVICE,
    WORKLOAD,
    ClusterEvent,
    Handle,
    NodeSel,
    Rejection,
    SignFragments,
)
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import IntArray, Snapshot
from packsched.framework.status import Status
from packsched.plugins.podtopologyspread.common import Constraint, Features, default_selector, select_constraints
from packsched.plugins.podtopologyspread.filtering import (
    PreFilterState,
    compute_state,
    filter_nodes,
    update_with_pod,
)
from packsched.plugins.podtopologyspread.scoring import PreScoreState, compute_pre_score, normalize, score_nodes

NAME = "PodTopologySpread"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME


class PodTopologySpread:
    name = NAME
    # The objects its default constraints read (the simulator sends them; live mode watches them for it).
    cluster_events = (SERVICE, WORKLOAD)

    def sign_pod(self, pod: PodInfo) -> SignFragments | None:
        """Opportunistic batching (1.35+): the parts of the pod this plugin reads (upstream SignPod): None for a pod
        with spread constraints, and for every pod when the plugin has default constraints (System defaulting
        included, so the default profile never batches)."""
        if pod.pod.topology_spread_constraints or self.default_constraints:
            return None
        return {}

    def __init__(self, args: PluginArgs | None, handle: Handle, version: KubeVersion = DEFAULT_KUBE_VERSION) -> None:
        self.features = Features(
            version.match_label_keys_in_topology_spread,
            version.node_inclusion_policy_in_topology_spread,
            version.min_domains_in_topology_spread,
        )
        if args is None:
            args = PodTopologySpreadArgs(defaulting_type=SYSTEM_DEFAULTING)
        if not isinstance(args, PodTopologySpreadArgs):
            raise TypeError(f"want args to be of type PodTopologySpreadArgs, got {type(args).__name__}")
        self.system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints: tuple[TopologySpreadConstraint, ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else tuple(args.default_constraints)
        )
        self.services: dict[str, Service] = {}  # by namespace/name
        # (namespace, kind, name) -> spec.selector of ReplicationControllers, ReplicaSets, StatefulSets, Deployments
        self.selectors: dict[tuple[str, str, str], LabelSelector | None] = {}
        # the default constraints per action, when no pod's labels change them (shared: do not write to them)
        self._label_free_defaults: dict[str, list[Constraint]] = {}

    # -- the cluster objects the default constraints read -------------------------------------------------

    def on_cluster_event(self, event: ClusterEvent) -> None:
        obj = event.old if event.action == DELETE else event.new
        if event.resource == SERVICE and isinstance(obj, Service):
            if event.action == DELETE:
                self.services.pop(obj.key, None)
            else:
                self.services[obj.key] = obj
        elif event.resource == WORKLOAD and obj is not None:
            key = (str(getattr(obj, "namespace", "")), str(getattr(obj, "kind", "")), str(getattr(obj, "name", "")))
            if event.action == DELETE:
                self.selectors.pop(key, None)
            else:
                self.selectors[key] = getattr(obj, "selector", None)

    def constraints(self, pod: PodInfo, action: str) -> list[Constraint]:
        """The pod's own constraints for ``action``; when it has none at all, the default ones with the selector
        deduced from its Services and controller (none when nothing selects it)."""
        p = pod.pod
        if p.topology_spread_constraints:
            return select_constraints(p.topology_spread_constraints, p.labels, action, self.features)
        defaults = self._label_free_defaults.get(action)
        if defaults is None:
            defaults = select_constraints(self.default_constraints, p.labels, action, self.features)
            if all(c.label_selector is None for c in self.default_constraints):
                # matchLabelKeys only join a selector that is there: the pod's labels change nothing
                self._label_free_defaults[action] = defaults
        if not defaults:
            return []
        selector = default_selector(p, self.services, self.selectors)
        if selector is None:
            return []
        return [
            Constraint(c.max_skew, c.topology_key, selector, c.min_domains, c.honor_affinity, c.honor_taints)
            for c in defaults
        ]

    # -- filtering ----------------------------------------------------------------------------------------

    def assigned_pod_may_help(self, waiting: PodInfo, added: PodInfo, snap: Snapshot) -> bool:
        """kube-scheduler's queue (without queueing hints) moves a pod this plugin rejected when any pod of its
        namespace is assigned (the new pod may raise a domain's count, and with it the minimum)."""
        return waiting.pod.namespace == added.pod.namespace

    def pre_filter(self, state: CycleState, pod: PodInfo, snap: Snapshot) -> Status:
        constraints = self.constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return Status.skip()
        state.write(PRE_FILTER_KEY, compute_state(snap, pod, constraints))
        return Status()

    def _state(self, state: CycleState) -> PreFilterState:
        s = state.read(PRE_FILTER_KEY)
        if not isinstance(s, PreFilterState):
            raise LookupError(f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
        return s

    def filter(self, state: CycleState, pod: PodInfo, snap: Snapshot, sel: NodeSel) -> list[Rejection]:
        return filter_nodes(self._state(state), snap, sel)

    def add_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        update_with_pod(self._state(state), snap, pod, other, col, +1)
        return Status()

    def remove_pod(self, state: CycleState, pod: PodInfo, other: PodInfo, col: int, snap: Snapshot) -> Status:
        update_with_pod(self._state(state), snap, pod, other, col, -1)
        return Status()

    # -- scoring ------------------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> Status:
        if snap.n == 0:
            return Status.skip()
        constraints = self.constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return Status.skip()
        # Nodes must carry every topology key, except under the system defaults for pods without constraints of
        # their own (a node without a zone is then still spread by hostname).
        require_all = bool(pod.pod.topology_spread_constraints) or not self.system_defaulted
        state.write(PRE_SCORE_KEY, compute_pre_score(snap, pod, constraints, cols, require_all))
        return Status()

    def _pre_score_state(self, state: CycleState) -> PreScoreState:
        s = state.read(PRE_SCORE_KEY)
        if not isinstance(s, PreScoreState):
            raise LookupError(f'error reading "{PRE_SCORE_KEY}" from cycleState: not found')
        return s

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, cols: IntArray) -> IntArray:
        return score_nodes(self._pre_score_state(state), snap, pod, cols)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return normalize(self._pre_score_state(state), scores)


def new_pod_topology_spread(args: PluginArgs | None, handle: Handle) -> PodTopologySpread:
    return PodTopologySpread(args, handle, handle.kube_version)
