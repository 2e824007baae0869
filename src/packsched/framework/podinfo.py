"""PodInfo: a pod with what the scheduler computes once (its requests, its host ports), and where it is placed.

The snapshot (:mod:`packsched.framework.snapshot`) and its pod table (:mod:`packsched.framework.podtable`) keep
PodInfos; every extension point takes one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packsched.api.objects import Pod
from packsched.api.podgroups import PodGroupRef, pod_group_ref
from packsched.api.pods import pod_non_zero_requests, pod_requests_and_non_zero
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion


class _Mirrored:
    """A PodInfo field the snapshot's pod table keeps a copy of while the pod is placed (``start_time``,
    ``start_seq``): setting it tells the table. It has no ``__get__``, so reading the field finds the value in the
    instance's ``__dict__`` as for a plain attribute (no Python call), and only the rare writes pay for the
    mirror; the other fields are set as on any object (a ``__setattr__`` of PodInfo's own would run on every
    write, 13 of them per PodInfo made)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __set__(self, info: PodInfo, value: object) -> None:
        d = info.__dict__
        d[self.name] = value
        table = d.get("_table")
        if table is not None:  # placed: the snapshot's pod table mirrors when it started
            table.started(info)


class _Key:
    """``PodInfo.key``, the pod's namespace/name: computed on first read and kept in the instance's ``__dict__``,
    where later reads find it as a plain attribute (no Python call: preemption's dry run reads it millions of
    times, a cycle about 17 times). A pod's namespace and name never change once the scheduler knows it."""

    def __get__(self, info: PodInfo, owner: type | None = None) -> str:
        key: str = info.pod.key
        info.__dict__["key"] = key
        return key


@dataclass(eq=False)
class PodInfo:
    """A pod with what the scheduler computes once: its requests and its host ports."""

    pod: Pod
    requests: dict[str, int]  # non-zero entries only, no defaults (what the Fit filter checks)
    non_zero_cpu: int  # with the 100m per-container default, for scoring
    non_zero_memory: int  # with the 200Mi per-container default, for scoring
    host_ports: tuple[tuple[str, str, int], ...]  # (protocol, hostIP, port)
    arrival: int = 0  # order in which the pod entered the queue
    queued_at: float | None = None  # when it first entered the queue (the scheduler's clock)
    # the order in which it first entered the active queue, let in by its PreEnqueue plugins (upstream's
    # InitialAttemptTimestamp: a gated pod gets it when it is let in, not when it was created); None: not yet
    first_active: int | None = None
    node: int = -1  # column of the node it is placed on, -1 when not placed
    start_time: float = 0.0  # when it was bound (virtual seconds); preemption prefers evicting recent pods
    start_seq: int = 0  # order of binding among pods started at the same virtual time (later = started later)
    # (cpu, memory) with the scoring defaults as the pod counts itself while it is being scheduled, where that
    # differs from how it counts once placed (kube-scheduler 1.29-1.31 and sidecars); None: the same
    incoming_non_zero: tuple[int, int] | None = None
    # kube-scheduler's own pod group (GenericWorkload) as the release sees the pod: None without one, or when the
    # API server of that release drops the field (api/podgroups.py)
    pod_group: PodGroupRef | None = None
    # The snapshot rows of ``requests`` and the amounts, for the snapshot that computed them (adding and removing
    # pods is preemption's inner loop; looking the rows up by name each time dominated it).
    account_rows: tuple[object, tuple[tuple[int, int], ...]] | None = field(default=None, init=False, repr=False)

    key = _Key()  # the pod's namespace/name, kept once read

    def set_started(self, time: float, seq: int) -> None:
        """``start_time`` and ``start_seq`` at once (a bind): the pod table, when the pod is placed, hears of it
        once."""
        d = self.__dict__
        d["start_time"] = time
        d["start_seq"] = seq
        table = d.get("_table")
        if table is not None:
            table.started(self)

    @property
    def priority(self) -> int:
        return self.pod.priority

    @property
    def start_key(self) -> tuple[float, int]:
        """When the pod started, for "more important pod" comparisons: time, then binding order."""
        return (self.start_time, self.start_seq)


def make_pod_info(pod: Pod, arrival: int = 0, version: KubeVersion = DEFAULT_KUBE_VERSION) -> PodInfo:
    """The pod as the scheduler of ``version`` counts it (sidecars' share of the requests changed in 1.29 and
    1.32; its pod group reference is kept only with GenericWorkload; see docs/reference/semantics.md)."""
    sidecars = version.sidecar_containers
    requests, cpu, mem = pod_requests_and_non_zero(pod, sidecars, version.sidecars_in_non_zero_sum)
    ports = tuple((p.protocol or "TCP", p.host_ip or "0.0.0.0", p.host_port) for p in pod.host_ports())
    info = PodInfo(pod, requests, cpu, mem, ports, arrival)
    info.pod_group = pod_group_ref(pod, version.minor, version.generic_workload)
    if sidecars and not version.sidecars_in_non_zero_sum:
        # the scorer sums the pod being scheduled with PodRequests, sidecars included, in these versions too
        incoming = pod_non_zero_requests(pod, sidecars, True)
        if incoming != (cpu, mem):
            info.incoming_non_zero = incoming
    return info


# set after the class is made: the dataclass reads the fields' defaults from the class attributes first
PodInfo.start_time = _Mirrored("start_time")  # type: ignore[assignment]
PodInfo.start_seq = _Mirrored("start_seq")  # type: ignore[assignment]
