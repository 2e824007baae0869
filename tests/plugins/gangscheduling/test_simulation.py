"""GangScheduling in the simulator, kube-scheduler 1.35 (Workloads, pod by pod) and 1.36 (PodGroups, pod-group
scheduling cycles) with the feature gates on: a gang bound together, a gang waiting for its Workload / PodGroup,
a gang short of minCount pods, a gang that does not fit (1.35: it waits at Permit and times out after five
minutes; 1.36: no pod is placed and the group is retried after its backoff), and the gates off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from packsched.api.manifests import load_manifests
from packsched.config.loader import default_config
from packsched.config.versions import KubeVersion
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import SimResult, run_simulation

GATES = {"GenericWorkload": True, "GangScheduling": True}
RELEASES = [35, 36]
TIMEOUT_135 = "0/1 nodes are available: 1 rejected due to timeout after waiting 5m0s at plugin GangScheduling."
# a placed pod of a 1.36 group that does not fit: errPodGroupUnschedulable's text, then its Permit message (as
# kube-scheduler 1.36.3 wrote it in tests/data/conformance/1.36/gangs-*)
WAIT_136 = "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, one or more plugins " + (
    "asked to wait and no plugin rejected pod"
)


def nodes(count: int = 2, cpu: int = 4) -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
        f'status: {{allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}}}\n'
        for i in range(count)
    )


def group(minor: int, name: str, min_count: int | None, arrival: str = "", group_name: str = "workers") -> str:
    """The object giving the group its policy: a Workload with one pod group (1.35), a PodGroup (1.36)."""
    policy = "{basic: {}}" if min_count is None else f"{{gang: {{minCount: {min_count}}}}}"
    meta = f"{{name: {name}" + (f", annotations: {{packsched.io/arrival-time: {arrival}}}" if arrival else "") + "}"
    if minor == 35:
        return (
            f"---\napiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\nmetadata: {meta}\n"
            f"spec: {{podGroups: [{{name: {group_name}, policy: {policy}}}]}}\n"
        )
    return (
        f"---\napiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {meta}\n"
        f"spec: {{schedulingPolicy: {policy}}}\n"
    )


def ref(minor: int, name: str, group_name: str = "workers", replica: str = "") -> str:
    if minor == 35:
        key = f", podGroupReplicaKey: '{replica}'" if replica else ""
        return f"workloadRef: {{name: {name}, podGroup: {group_name}{key}}}"
    return f"schedulingGroup: {{podGroupName: {name}}}"


def pods(minor: int, prefix: str, count: int, gang: str, cpu: int = 2, arrival: str = "", **kw: str) -> str:
    meta = "" if not arrival else f", annotations: {{packsched.io/arrival-time: {arrival}}}"
    return "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {prefix}-{i}{meta}}}\n"
        f'spec: {{{ref(minor, gang, **kw)}, containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}\n'
        for i in range(count)
    )


def simulate(tmp_path: Path, minor: int, text: str, gates: dict[str, bool] | None = None) -> SimResult:
    path = tmp_path / "gang.yaml"
    path.write_text(text)
    registry = in_tree_registry()
    cfg = default_config(set(registry), KubeVersion(minor), GATES if gates is None else gates)
    return run_simulation(load_manifests([str(path)]), cfg, registry)


def events(result: SimResult, prefix: str = "default/") -> list[tuple[float, str, str]]:
    return [(e.time, e.kind, e.pod) for e in result.events if e.pod.startswith(prefix)]


def placed(result: SimResult) -> dict[str, str | None]:
    return {r.pod.key: r.node for r in result.records}


def reasons(result: SimResult) -> dict[str, str]:
    return {r.pod.key: r.reason for r in result.records if r.node is None}


@pytest.mark.parametrize("minor", RELEASES)
def test_a_gang_is_bound_together(tmp_path: Path, minor: int) -> None:
    result = simulate(tmp_path, minor, nodes() + group(minor, "train", 3) + pods(minor, "t", 3, "train"))
    # the first two wait at Permit (1.36: as they are bound after the group's cycle placed all three, t-2 first:
    # its creation let the gang in, so it entered the active queue before the siblings it woke)
    order = ["t-0", "t-1", "t-2"] if minor == 35 else ["t-2", "t-0", "t-1"]
    assert events(result) == [
        (0.0, "waiting", f"default/{order[0]}"),
        (0.0, "waiting", f"default/{order[1]}"),
        (0.0, "scheduled", f"default/{order[2]}"),
        (0.0, "scheduled", f"default/{order[0]}"),
        (0.0, "scheduled", f"default/{order[1]}"),
    ]
    assert all(placed(result).values())
    assert not result.warnings


@pytest.mark.parametrize("minor", RELEASES)
def test_a_gang_waits_for_its_workload_or_pod_group(tmp_path: Path, minor: int) -> None:
    what = "workload" if minor == 35 else "pod group"
    result = simulate(tmp_path, minor, nodes() + pods(minor, "t", 2, "train"))
    assert reasons(result) == {
        f"default/t-{i}": f'waiting for pods\'s {what} "train" to appear in scheduling queue' for i in range(2)
    }
    assert not any(kind == "unschedulable" for _, kind, _ in events(result))  # held at PreEnqueue, never tried
    # created at 30s: the pods are let in then (its creation is an event GangScheduling registers)
    result = simulate(tmp_path, minor, nodes() + group(minor, "train", 2, arrival="30s") + pods(minor, "t", 2, "train"))
    assert [e for e in events(result) if e[1] == "scheduled"] == [
        (30.0, "scheduled", "default/t-1"),
        (30.0, "scheduled", "default/t-0"),
    ]


@pytest.mark.parametrize("minor", RELEASES)
def test_a_gang_short_of_min_count_pods_waits_for_them(tmp_path: Path, minor: int) -> None:
    text = nodes() + group(minor, "train", 3) + pods(minor, "t", 2, "train")
    result = simulate(tmp_path, minor, text)
    assert set(reasons(result).values()) == {"waiting for minCount pods from a gang to appear in scheduling queue"}
    # the third pod arrives at 20s: the gang is complete, every pod is let in and bound then
    result = simulate(tmp_path, minor, text + pods(minor, "late", 1, "train", arrival="20s"))
    assert {k: v is not None for k, v in placed(result).items()} == dict.fromkeys(
        ["default/t-0", "default/t-1", "default/late-0"], True
    )
    assert {t for t, kind, _ in events(result) if kind == "scheduled"} == {20.0}


def test_1_35_a_gang_that_does_not_fit_waits_at_permit_and_times_out(tmp_path: Path) -> None:
    # three pods of 3 cpus on two 4-cpu nodes: two are placed and wait, the third fits nowhere
    result = simulate(tmp_path, 35, nodes() + group(35, "train", 3) + pods(35, "t", 3, "train", cpu=3))
    first = [e for e in events(result) if e[0] <= 300.0]
    assert first[:3] == [
        (0.0, "waiting", "default/t-0"),
        (0.0, "waiting", "default/t-1"),
        (0.0, "unschedulable", "default/t-2"),
    ]
    timed_out = [e for e in result.events if e.time == 300.0 and e.kind == "unschedulable"]
    assert [(e.pod, e.reason) for e in timed_out[:2]] == [
        ("default/t-0", TIMEOUT_135),
        ("default/t-1", TIMEOUT_135),
    ]
    # the next wait starts a new five-minute deadline for the group: the waits go on in rounds, none is bound
    assert {e.time for e in result.events if e.reason == TIMEOUT_135} >= {300.0, 600.0}
    assert not any(placed(result).values())


def test_1_36_a_gang_that_does_not_fit_places_no_pod_and_retries_on_backoff(tmp_path: Path) -> None:
    result = simulate(tmp_path, 36, nodes() + group(36, "train", 3) + pods(36, "t", 3, "train", cpu=3))
    assert not any(kind in ("waiting", "scheduled") for _, kind, _ in events(result))
    first = [(e.pod, e.reason) for e in result.events if e.time == 0.0]
    assert first[:3] == [  # t-2 first: its creation let the gang in
        ("default/t-2", WAIT_136),
        ("default/t-0", WAIT_136),
        # DynamicResources' PostFilter still words "no new claims to deallocate" at 1.36 (1.36.3's source)
        ("default/t-1", "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 "
         "nodes are available: 2 No "
         "preemption victims found for incoming pod."),
    ]  # fmt: skip
    # retried after the backoff (1 s, then doubling up to 10 s), not on cluster events. SchedulerPopFromBackoffQ:
    # each backoff ends at the whole-second flush after its window, and while nothing is active Pop takes the pods
    # from the backoff queue, once each per instant (the simulator's guard), so each instant holds two attempts:
    # at 0 s attempts 1-2 (2 s: 0 + 2 = 2.0, window 2 -> flushed at 3 s), at 3 s attempts 3-4 (8 s: 11.0 -> 12 s),
    # at 12 s attempts 5-6 (capped at 10 s: 22.0 -> 23 s), at 23 s attempts 7-8 (33.0 -> 34 s)
    times = sorted({e.time for e in result.events})
    assert times[:5] == [0.0, 3.0, 12.0, 23.0, 34.0]
    assert [e.time for e in result.events if e.pod == "default/t-0"][:8] == [0.0, 0.0, 3.0, 3.0, 12.0, 12.0, 23.0, 23.0]


@pytest.mark.parametrize("minor", RELEASES)
def test_a_basic_group_schedules_pod_by_pod(tmp_path: Path, minor: int) -> None:
    result = simulate(tmp_path, minor, nodes(1) + group(minor, "svc", None) + pods(minor, "s", 3, "svc"))
    kinds = [kind for _, kind, _ in events(result)]
    assert kinds[:3] == ["scheduled", "scheduled", "unschedulable"]
    # 1.35: the pod that fits nowhere waits for a cluster event; 1.36: a pod of a group is retried on backoff
    assert (len(kinds) > 3) is (minor == 36)


def test_1_35_each_replica_key_is_a_gang_of_its_own(tmp_path: Path) -> None:
    text = (
        nodes()
        + group(35, "train", 2)
        + pods(35, "a", 2, "train", replica="0")
        + pods(35, "b", 1, "train", replica="1")
    )
    result = simulate(tmp_path, 35, text)
    assert placed(result)["default/a-0"] and placed(result)["default/a-1"]
    assert reasons(result) == {"default/b-0": "waiting for minCount pods from a gang to appear in scheduling queue"}


@pytest.mark.parametrize(("minor", "field"), [(35, "workloadRef"), (36, "schedulingGroup")])
def test_with_the_gates_off_the_reference_is_dropped_with_a_warning(tmp_path: Path, minor: int, field: str) -> None:
    text = nodes() + group(minor, "train", 3) + pods(minor, "t", 2, "train")
    result = simulate(tmp_path, minor, text, gates={})
    assert all(placed(result).values())  # one by one, no gang
    (warning,) = result.warnings
    assert warning.startswith(f"pod default/t-0 (and maybe others) names a pod group with spec.{field}: the API server")
    assert "GenericWorkload off" in warning
    # GenericWorkload alone keeps the reference but adds no GangScheduling: still one by one (1.36: in one cycle)
    result = simulate(tmp_path, minor, text, gates={"GenericWorkload": True})
    assert all(placed(result).values()) and not result.warnings


@pytest.mark.parametrize(("minor", "other"), [(35, 36), (36, 35)])
def test_the_other_release_s_field_is_not_a_field(tmp_path: Path, minor: int, other: int) -> None:
    text = nodes() + group(other, "train", 3) + pods(other, "t", 2, "train")
    result = simulate(tmp_path, minor, text)
    assert all(placed(result).values())
    field = "workloadRef" if other == 35 else "schedulingGroup"
    where = "1.35" if other == 35 else "1.36 and later"
    assert f"spec.{field}: not a field of kube-scheduler 1.{minor}'s pods (only of {where})" in result.warnings[0]


def test_1_36_a_gang_that_needs_preemption_waits_for_it_then_is_bound(tmp_path: Path) -> None:
    text = (
        nodes()
        + "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
        + "".join(
            f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: low-{i}}}\n"
            f'spec: {{nodeName: n{i}, containers: [{{name: c, resources: {{requests: {{cpu: "3"}}}}}}]}}\n'
            for i in range(2)
        )
        + group(36, "train", 2)
        + pods(36, "t", 2, "train").replace("spec: {", "spec: {priorityClassName: high, ")
    )
    result = simulate(tmp_path, 36, text)
    kinds: list[Any] = [(e.time, e.kind, e.pod, e.reason) for e in result.events if e.time == 0.0]
    assert kinds[0][1:3] == ("preempted", "default/low-1")
    # t-1 completes the gang, so the cycle places it first (it was let into the queue before t-0, which its
    # creation woke: upstream's InitialAttemptTimestamp)
    assert ("unschedulable", "default/t-0", "pod group is waiting for preemption to complete") in [k[1:] for k in kinds]
    assert placed(result)["default/t-0"] == placed(result)["default/t-1"] == "n1"
    # the gang backs off after its preempting cycle (to the 2 s flush), but nothing else is active: Pop takes its
    # pods from the backoff queue at 0 s (SchedulerPopFromBackoffQ)
    assert {e.time for e in result.events if e.kind == "scheduled"} == {0.0}
