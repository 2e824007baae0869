"""A pod that waits for another pod (required pod affinity, a topology spread constraint) is tried again as soon as
that pod is bound, as kube-scheduler's AssignedPodAdd event handler does — not at the periodic flush of
unschedulable pods (300 s). Against the fake API server, through serve's real informers: our own bind is confirmed
by the watch's fast path, which must tell the scheduler too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from live.fakeapi import FakeApiServer
from live.harness import check_cluster, node, pod, start, wait

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
OTHER = "default-scheduler"  # a pod bound by another scheduler
PROMPT_S = 15.0  # far below the 300 s flush that would otherwise be the first retry


def _unschedulable(api: FakeApiServer, name: str) -> bool:
    p = api.get("pods", "default", name)
    conditions = ((p or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False" for c in conditions)


def _node_of(api: FakeApiServer, name: str) -> str:
    p = api.get("pods", "default", name)
    return str(((p or {}).get("spec") or {}).get("nodeName") or "")


def _with_affinity(p: dict[str, Any], app: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOSTNAME}
    p["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return p


def test_pod_waiting_for_pod_affinity_is_bound_once_its_target_is_bound(api: FakeApiServer, tmp_path: Path) -> None:
    for n in ("n0", "n1"):
        api.create("nodes", node(n))
    api.create("pods", _with_affinity(pod("b"), "a"))  # created first: nothing matches its affinity yet
    run = start(api, tmp_path)
    try:
        assert wait(lambda: _unschedulable(api, "b"), 10), "b was never tried"
        api.create("pods", pod("a", labels={"app": "a"}))
        assert wait(lambda: bool(_node_of(api, "a")), 10)
        assert wait(lambda: bool(_node_of(api, "b")), PROMPT_S), "b waited for the periodic flush"
        assert _node_of(api, "b") == _node_of(api, "a")
    finally:
        run.stop()
    check_cluster(api)


def test_pod_waiting_for_topology_spread_is_bound_once_a_pod_lands_in_the_empty_zone(
    api: FakeApiServer, tmp_path: Path
) -> None:
    # z1's n0 has room; z2's n1 is too small for s. One app=s pod runs in z1: s in z1 would make the skew 2.
    api.create("nodes", node("n0", cpu="8", labels={ZONE: "z1"}))
    api.create("nodes", node("n1", cpu="1", labels={ZONE: "z2"}))
    api.create("pods", pod("s0", cpu="1", labels={"app": "s"}, node_name="n0", scheduler=OTHER))
    spread = pod("s", cpu="2", labels={"app": "s"})
    spread["spec"]["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "s"}},
        }
    ]
    api.create("pods", spread)
    run = start(api, tmp_path)
    try:
        assert wait(lambda: _unschedulable(api, "s"), 10), "s was never tried"
        helper = pod("t", cpu="100m", labels={"app": "s"})
        helper["spec"]["nodeSelector"] = {HOSTNAME: "n1"}
        api.create("pods", helper)  # bound by packsched to n1: z2 now counts one app=s pod
        assert wait(lambda: _node_of(api, "t") == "n1", 10)
        assert wait(lambda: _node_of(api, "s") == "n0", PROMPT_S), "s waited for the periodic flush"
    finally:
        run.stop()
    check_cluster(api)
