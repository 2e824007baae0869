"""The workload controllers the simulator needs: what Deployments, ReplicaSets, StatefulSets and Jobs do when
one of their pods is preempted or completes.

- Deployment / ReplicaSet: a preempted pod is replaced by a new pod, ``<owner>-<next index>``.
- StatefulSet: a preempted pod is re-created under the same name (its ordinal identity).
- Job: it keeps ``min(parallelism, completions - succeeded)`` pods active (``parallelism`` when completions is
  unset, until one pod succeeds). A preempted pod is replaced; a pod that completes counts as one completion
  and the next pod is created while completions remain.

Replacements are made from the workload's template (annotations included), with the priority the pods of the
workload were given at admission.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from packsched.api.manifests import Workload, instantiate
from packsched.api.objects import Pod

# restartPolicy Always: their pods never complete
RESTARTING_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")


@dataclass
class WorkloadState:
    workload: Workload
    next_index: int
    active: set[str] = field(default_factory=set)  # keys of its pods that are pending or running
    succeeded: int = 0

    @property
    def label(self) -> str:
        w = self.workload
        return f"{w.kind} {w.namespace}/{w.name}"

    def wanted_active(self) -> int:
        """Job: how many pods the Job controller keeps running now."""
        w = self.workload
        if w.completions is None:  # a work queue: done once any pod succeeded
            return w.parallelism if self.succeeded == 0 else 0
        return max(0, min(w.parallelism, w.completions - self.succeeded))


class Controllers:
    """Every workload of the manifests, with the pods it owns."""

    def __init__(self, workloads: list[Workload], pods: list[Pod]) -> None:
        self.states: dict[tuple[str, str, str], WorkloadState] = {}
        for w in workloads:
            self.states[(w.namespace, w.kind, w.name)] = WorkloadState(w, w.replicas)
        for pod in pods:
            st = self.state_of(pod)
            if st is not None:
                st.active.add(pod.key)

    def state_of(self, pod: Pod) -> WorkloadState | None:
        if pod.owner is None:
            return None
        return self.states.get((pod.namespace, pod.owner.kind, pod.owner.name))

    def preempted(self, pod: Pod, taken: Callable[[str], bool]) -> list[Pod]:
        """The pods the owner creates because ``pod`` was preempted (deleted)."""
        st = self.state_of(pod)
        if st is None:
            return []
        st.active.discard(pod.key)
        kind = st.workload.kind
        if kind == "StatefulSet":
            new = self._make(st, pod, self._ordinal(st, pod))
            st.active.add(new.key)
            return [new]
        if kind == "Job":
            return self._fill_job(st, pod, taken)
        new = self._make(st, pod, self._free_index(st, taken))
        st.active.add(new.key)
        return [new]

    def completed(self, pod: Pod, taken: Callable[[str], bool]) -> list[Pod]:
        """The pods the owner creates because ``pod`` succeeded (only Jobs create any)."""
        st = self.state_of(pod)
        if st is None:
            return []
        st.active.discard(pod.key)
        if st.workload.kind != "Job":
            return []
        st.succeeded += 1
        return self._fill_job(st, pod, taken)

    def _fill_job(self, st: WorkloadState, like: Pod, taken: Callable[[str], bool]) -> list[Pod]:
        out: list[Pod] = []
        while len(st.active) < st.wanted_active():
            new = self._make(st, like, self._free_index(st, taken))
            st.active.add(new.key)
            out.append(new)
        return out

    @staticmethod
    def _free_index(st: WorkloadState, taken: Callable[[str], bool]) -> int:
        """The next index whose name no pod has had yet (a bare pod may already use ``<owner>-<n>``)."""
        w = st.workload
        while taken(f"{w.namespace}/{w.name}-{st.next_index}"):
            st.next_index += 1
        index = st.next_index
        st.next_index += 1
        return index

    def new_pods(self, st: WorkloadState, like: Pod, count: int, taken: Callable[[str], bool]) -> list[Pod]:
        """``count`` more pods of the workload (it was scaled up), like ``like``, at the next free indexes."""
        out: list[Pod] = []
        for _ in range(count):
            pod = self._make(st, like, self._free_index(st, taken))
            st.active.add(pod.key)
            out.append(pod)
        return out

    def ordinal(self, st: WorkloadState, pod: Pod) -> int:
        """A StatefulSet pod's ordinal (``<name>-<ordinal>``)."""
        return self._ordinal(st, pod)

    @staticmethod
    def _ordinal(st: WorkloadState, pod: Pod) -> int:
        return int(pod.name[len(st.workload.name) + 1 :])

    @staticmethod
    def _make(st: WorkloadState, like: Pod, index: int) -> Pod:
        w = st.workload
        pod = instantiate(w.template, w.kind, w.name, index)
        pod.source = like.source
        # Admission resolved the priority of the workload's first pods; the template itself was not resolved.
        pod.priority = like.priority
        pod.priority_set = like.priority_set
        pod.preemption_policy = like.preemption_policy
        pod.phase = "Pending"
        pod.nominated_node_name = ""
        return pod
