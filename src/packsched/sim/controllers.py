"""The workload controllers the simulator needs: what Deployments, ReplicaSets, StatefulSets and Jobs do when
one of their pods is preempted or completes.

- Deployment / ReplicaSet: a preempted pod is replaced by a new pod, ``<owner>-<next index>``.
- StatefulSet: a preempted pod is re-created under the same name (its ordinal identity).
- Job: it keeps ``min(parallelism, completions - succeeded)`` pods active (``parallelism`` when completions is
  unset, until one pod succeeds). A preempted pod is replaced; a pod that completes counts as one completion
  and the next pod is created while completions remain.
- DaemonSet: one pod per node it should run on (its template's node selector, required node affinity and
  tolerations, as its controller checks them): a node added gets one, a node it no longer fits (a NoExecute taint,
  labels changed) loses it, a preempted pod is made again for its node while the node is there.
- CronJob: a Job at each time of its schedule (the simulator calls :meth:`Controllers.cron_fire`); with
  concurrencyPolicy Forbid a run is not started while an earlier Job is still active (it starts when that one
  finishes, unless startingDeadlineSeconds has passed by then), with Replace the active Jobs' pods are deleted.

Replacements are made from the workload's template (annotations included), with the priority the pods of the
workload were given at admission.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from packsched.api.cluster import CronJob
from packsched.api.manifests import Workload, instantiate
from packsched.api.objects import Node, Pod
from packsched.api.workloads import daemon_fits, daemon_node, daemon_pod

# restartPolicy Always: their pods never complete
RESTARTING_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")


@dataclass
class WorkloadState:
    workload: Workload
    next_index: int
    active: set[str] = field(default_factory=set)  # keys of its pods that are pending or running
    succeeded: int = 0
    daemon: dict[str, str] = field(default_factory=dict)  # DaemonSet: node -> the key of its pod there

    @property
    def finished(self) -> bool:
        """Job: all its completions are done (a work queue: one pod succeeded and none is left)."""
        w = self.workload
        if w.completions is None:
            return self.succeeded > 0 and not self.active
        return self.succeeded >= w.completions

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


@dataclass
class CronState:
    cron: CronJob
    jobs: list[WorkloadState] = field(default_factory=list)  # the Jobs it made that have not finished
    missed: float | None = None  # a run Forbid kept from starting (its scheduled time)


class Controllers:
    """Every workload of the manifests, with the pods it owns."""

    def __init__(self, workloads: list[Workload], pods: list[Pod], nodes: Iterable[Node] = ()) -> None:
        self.states: dict[tuple[str, str, str], WorkloadState] = {}
        self.nodes: dict[str, Node] = {n.name: n for n in nodes}
        self.crons: dict[tuple[str, str], CronState] = {}
        for w in workloads:
            self.states[(w.namespace, w.kind, w.name)] = WorkloadState(w, w.replicas)
        for pod in pods:
            st = self.state_of(pod)
            if st is not None:
                st.active.add(pod.key)
                if st.workload.kind == "DaemonSet":
                    st.daemon[daemon_node(pod)] = pod.key

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
        if kind == "DaemonSet":
            node = daemon_node(pod)
            if st.daemon.get(node) == pod.key:
                del st.daemon[node]
            if node not in self.nodes or not daemon_fits(st.workload.template, self.nodes[node])[0]:
                return []
            return [self._daemon(st, node, pod)]
        new = self._make(st, pod, self._free_index(st, taken))
        st.active.add(new.key)
        return [new]

    def completed(self, pod: Pod, taken: Callable[[str], bool], now: float = 0.0) -> list[Pod]:
        """The pods the owners create because ``pod`` succeeded (only Jobs create any, and a CronJob whose run
        Forbid held back until its Job finished)."""
        st = self.state_of(pod)
        if st is None:
            return []
        st.active.discard(pod.key)
        if st.workload.kind != "Job":
            return []
        st.succeeded += 1
        out = self._fill_job(st, pod, taken)
        cs = self.crons.get((st.workload.namespace, st.workload.cron_job)) if st.workload.cron_job else None
        if cs is not None and st.finished:
            cs.jobs = [j for j in cs.jobs if not j.finished]
            missed, deadline = cs.missed, cs.cron.starting_deadline
            if missed is not None and not cs.jobs:
                cs.missed = None
                if deadline is None or now <= missed + deadline:
                    out += self._start_job(cs, missed, taken)
        return out

    def forget(self, pod: Pod) -> None:
        """The pod was not created after all (admission refused it): its owner no longer counts it."""
        st = self.state_of(pod)
        if st is not None:
            st.active.discard(pod.key)
            node = daemon_node(pod)
            if st.daemon.get(node) == pod.key:
                del st.daemon[node]

    # -- DaemonSets -------------------------------------------------------------------------------------------

    def _daemon(self, st: WorkloadState, node: str, like: Pod | None = None) -> Pod:
        pod = daemon_pod(st.workload, node)
        template = st.workload.template
        pod.source = like.source if like is not None else st.workload.source
        pod.priority, pod.priority_set = template.priority, template.priority_set
        pod.preemption_policy = template.preemption_policy
        pod.phase, pod.nominated_node_name = "Pending", ""
        st.active.add(pod.key)
        st.daemon[node] = pod.key
        return pod

    def node_set(self, node: Node) -> tuple[list[Pod], list[str]]:
        """A node added or changed: the DaemonSet pods made for it, and the keys of those it no longer keeps."""
        self.nodes[node.name] = node
        made: list[Pod] = []
        gone: list[str] = []
        for st in self.states.values():
            if st.workload.kind != "DaemonSet":
                continue
            run, keep = daemon_fits(st.workload.template, node)
            key = st.daemon.get(node.name)
            if key is None and run:
                made.append(self._daemon(st, node.name))
            elif key is not None and not keep:
                gone.append(key)
        return made, gone

    def node_removed(self, name: str) -> list[str]:
        """The node is gone: the keys of the DaemonSet pods that were for it (none is made again)."""
        self.nodes.pop(name, None)
        keys = []
        for st in self.states.values():
            key = st.daemon.pop(name, None)
            if key is not None:
                keys.append(key)
        return keys

    # -- CronJobs ---------------------------------------------------------------------------------------------

    def cron_fire(self, cron: CronJob, scheduled: float, taken: Callable[[str], bool]) -> tuple[list[Pod], list[str]]:
        """The CronJob's run at ``scheduled``: the pods of the Job it creates, and the keys of the pods it deletes
        (concurrencyPolicy Replace)."""
        cs = self.crons.setdefault((cron.namespace, cron.name), CronState(cron))
        cs.jobs = [j for j in cs.jobs if not j.finished]
        gone: list[str] = []
        if cs.jobs and cron.concurrency_policy == "Forbid":
            cs.missed = scheduled
            return [], []
        if cs.jobs and cron.concurrency_policy == "Replace":
            for j in cs.jobs:
                gone += sorted(j.active)
                j.workload.parallelism = 0  # deleted: makes no more pods
            cs.jobs = []
        return self._start_job(cs, scheduled, taken), gone

    def _start_job(self, cs: CronState, scheduled: float, taken: Callable[[str], bool]) -> list[Pod]:
        cron = cs.cron
        # the controller names a Job after its scheduled time in minutes
        name = f"{cron.name}-{int(scheduled // 60)}"
        w = replace(cron.job, name=name, source=cron.source)
        st = WorkloadState(w, 0)
        self.states[(w.namespace, "Job", name)] = st
        cs.jobs.append(st)
        like = replace(w.template, source=cron.source)
        return self.new_pods(st, like, st.wanted_active(), taken)

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
