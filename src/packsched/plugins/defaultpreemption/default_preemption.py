"""DefaultPreemption: when a pod fits no node, evict lower-priority pods from one node so that it can run
there.

kube-scheduler's ``defaultpreemption`` plugin: the shared preemption evaluator
(:mod:`packsched.framework.preemption`) with the default policy:

* eligibility: ``preemptionPolicy`` is not ``Never``, and no lower-priority victim of an earlier preemption is
  still terminating on the pod's nominated node (unless that node is now ruled out for good);
* candidates: a random offset among the potential nodes, and ``minCandidateNodesPercentage`` of them but at
  least ``minCandidateNodesAbsolute``;
* potential victims: every pod of the node with a lower priority than the preemptor.

Its messages start with ``preemption: ``.
"""

from __future__ import annotations

from packsched.api.objects import PREEMPT_NEVER
from packsched.config import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    default_preemption_args_errors,
)
from packsched.config.types import DefaultPreemptionArgs, PluginArgs
from packsched.framework.cycle_state import CycleState
from packsched.framework.diagnosis import Diagnosis
from packsched.framework.interface import Handle, PostFilterResult
from packsched.framework.podinfo import PodInfo
from packsched.framework.preemption import (
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    Evaluator,
    aggregate_errors,
    pod_terminating_by_preemption,
)
from packsched.framework.status import Code, Status

NAME = "DefaultPreemption"

MSG_PREFIX = "preemption: "
NO_VICTIMS = "No preemption victims found for incoming pod"


class DefaultPolicy:
    """The default preemption policy (upstream's ``defaultpreemption`` plugin's side of the evaluator)."""

    # every lower-priority pod is a potential victim, no node or reprieve is refused: the dry run may use arrays
    victims_are_lower_priority_pods = True

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle

    def eligible(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> tuple[bool, str]:
        """Upstream PodEligibleToPreemptOthers."""
        if pod.pod.preemption_policy == PREEMPT_NEVER:
            return False, NOT_ELIGIBLE_NEVER
        snap = self.handle.snapshot
        nominated = pod.pod.nominated_node_name
        if nominated:
            col = snap.index.get(nominated)
            if col is None:
                return True, ""  # upstream: the node is gone, nothing on it can be terminating
            # A nominated node the filters now rule out for good: the pod may preempt elsewhere.
            if diagnosis.node_status(col).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            for p in snap.pods_on[col].values():
                if p.priority < pod.priority and pod_terminating_by_preemption(p.pod):
                    return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def calculate_num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random offset in [0, num_nodes) from the scheduler's seeded generator, and how many candidates
        the dry run should find."""
        offset = int(self.handle.rng.integers(num_nodes))
        return offset, self.calculate_num_candidates(num_nodes)

    def victim_groups(self, state: CycleState, pod: PodInfo) -> list[tuple[str, int]]:
        return [g for g in self.handle.snapshot.groups if g[1] < pod.priority]

    def potential_victims(self, state: CycleState, pod: PodInfo, col: int) -> list[PodInfo]:
        """Every lower-priority pod of the node (upstream isPreemptionAllowed; IsEligiblePod is always true)."""
        return [p for p in self.handle.snapshot.pods_on[col].values() if p.priority < pod.priority]

    def no_victims(self, node: str, pod: PodInfo) -> Status:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_VICTIMS])

    def refuse_node(self, node_state: CycleState, pod: PodInfo) -> Status | None:
        return None

    def refuse_reprieve(self, node_state: CycleState, pod: PodInfo) -> bool:
        return False


class DefaultPreemption:
    """The PostFilter plugin. ``handle`` is the scheduler (framework.interface.Handle)."""

    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.policy = DefaultPolicy(args, handle)
        self.evaluator = Evaluator(handle, self.policy)

    def post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult:
        result = self.evaluator.preempt(state, pod, diagnosis)
        msg = result.status.message
        if msg:
            result.status = Status(result.status.code, [MSG_PREFIX + msg], result.status.plugin or NAME)
        elif not result.status.ok:
            result.status.plugin = result.status.plugin or NAME
        return result


def new_default_preemption(args: PluginArgs | None, handle: Handle) -> DefaultPreemption:
    if args is None:
        args = DefaultPreemptionArgs(DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE, DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
    if not isinstance(args, DefaultPreemptionArgs):
        raise TypeError(f"want args to be of type DefaultPreemptionArgs, got {type(args).__name__}")
    # the config loader validates too (at the file's field paths); this guards args built in code
    if errs := default_preemption_args_errors(args):
        raise ValueError(aggregate_errors(errs))
    return DefaultPreemption(args, handle)
