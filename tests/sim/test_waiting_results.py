"""A pod waiting at Permit keeps its cycle's result until its wait ends; the per-node scores in it are let go once
the cycle is recorded (thousands of waiting gang members each held arrays of every node: 8,000 members on 5,000
nodes peaked at 1.8 GiB), except for a pod explain captures."""

from __future__ import annotations

from packsched.api.gangs import POD_GROUP_LABEL, PodGroup
from packsched.api.manifests import Cluster
from packsched.api.objects import Container, Node, Pod
from packsched.config.loader import load_config_data
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import CycleResult
from packsched.sim.engine import Simulation
from packsched.sim.jobgen import config_document

GPU = "nvidia.com/gpu"


def test_a_waiting_pods_result_lets_go_of_its_scores_unless_explained() -> None:
    alloc = {"cpu": 64_000, "memory": 512 * 2**30, GPU: 8, "pods": 110}
    nodes = [Node(f"gpu-{i}", {}, {}, dict(alloc), dict(alloc)) for i in range(6)]
    requests = {"cpu": 4_000, "memory": 32 * 2**30, GPU: 1}
    # a gang of four: the first three wait at Permit for the fourth
    pods = [
        Pod(f"w-{i}", "default", labels={POD_GROUP_LABEL: "job"}, uid=f"w-{i}", containers=[Container("w", requests)])
        for i in range(4)
    ]
    registry = in_tree_registry()
    cfg = load_config_data(config_document(True), "config", set(registry))
    sim = Simulation(Cluster(nodes=nodes, pods=pods, pod_groups=[PodGroup("job", "default", 4)]), cfg, registry, 1)
    sim.capture = {"default/w-2"}
    seen: list[CycleResult] = []
    at_last: dict[str, tuple[bool, bool]] = {}  # when the fourth pod's cycle is recorded: (waiting, has scores)

    def on_cycle(result: CycleResult) -> None:
        if result.pod.key == "default/w-3":
            at_last.update({r.pod.key: (r.waiting, r.scores is not None and r.sampled is not None) for r in seen})
        seen.append(result)

    sim.on_cycle = on_cycle
    sim.run()
    assert at_last == {"default/w-0": (True, False), "default/w-1": (True, False), "default/w-2": (True, True)}
    assert all(r.scheduled for r in seen)  # the gang was bound together
