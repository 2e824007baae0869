"""DynamicResources decides with its device counts and the incrementally kept allocated devices exactly as with the
allocator on every node and every claim counted again at each read.

Property: random small DRA clusters (nodes with a slice of 0-4 devices of two models, now and then a tainted
device, a node whose slice is split in two, or a slice for all nodes), pods arriving and leaving (their claims made
from templates of one or two devices, with or without a selector, or claims shared by name), some of higher
priority asking for more CPU than is left (preemption: the victims' claims are released); claims of other shapes
(``firstAvailable``, a constraint) take the allocator with its verdicts kept per node. Simulated both ways:
the histories, the events and the claims' allocations at the end must be identical.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packsched.api.dra import DraObjects
from packsched.api.manifests import load_manifests
from packsched.config.loader import default_config
from packsched.plugins.dynamicresources.dynamic_resources import DynamicResources
from packsched.plugins.registry import in_tree_registry
from packsched.sim.engine import Simulation

DRIVER = "gpu.example.com"
TEMPLATES = {
    "one": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}],
    "two": [{"name": "g", "exactly": {"deviceClassName": "gpu", "count": 2}}],
    "model-a": [
        {
            "name": "g",
            "exactly": {
                "deviceClassName": "gpu",
                "selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "a"'}}],
            },
        }
    ],
    "pair": [
        {"name": "g", "exactly": {"deviceClassName": "gpu"}},
        {"name": "h", "exactly": {"deviceClassName": "gpu"}},
    ],
    "class-b": [{"name": "g", "exactly": {"deviceClassName": "gpu-b"}}],
    # claims of other shapes: the allocator decides, its verdicts kept per node between cycles
    "either": [
        {
            "name": "g",
            "firstAvailable": [
                {"name": "two", "deviceClassName": "gpu", "count": 2},
                {"name": "one", "deviceClassName": "gpu-b"},
            ],
        }
    ],
    "same-model": [{"name": "g", "exactly": {"deviceClassName": "gpu", "count": 2}}],
}
CONSTRAINTS = {"same-model": [{"matchAttribute": f"{DRIVER}/model"}]}


def _device(name: str, model: str, tainted: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "attributes": {"model": {"string": model}}}
    if tainted:
        out["taints"] = [{"key": "broken", "effect": "NoSchedule"}]
    return out


def _slice(name: str, pool: str, devices: list[dict[str, Any]], count: int = 1, **where: Any) -> dict[str, Any]:
    spec = {"driver": DRIVER, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count}, "devices": devices}
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec | where,
    }


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for name, selectors in (("gpu", []), ("gpu-b", [f'device.attributes["{DRIVER}"].model == "b"'])):
        cel = [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}] + [
            {"cel": {"expression": e}} for e in selectors
        ]
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": name},
                "spec": {"selectors": cel},
            }
        )
    for name, requests in TEMPLATES.items():
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": requests, "constraints": CONSTRAINTS.get(name, [])}}},
            }
        )
    nodes = draw(st.integers(2, 5))
    for i in range(nodes):
        node = f"n{i}"
        cpu = draw(st.sampled_from(["2", "4"]))
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": node},
                "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "20"}},
            }
        )
        devices = [
            _device(f"gpu-{d}", draw(st.sampled_from("ab")), draw(st.integers(0, 9)) == 0)
            for d in range(draw(st.integers(0, 4)))
        ]
        if len(devices) >= 2 and draw(st.integers(0, 4)) == 0:  # one pool in two slices
            docs.append(_slice(f"{node}-0", node, devices[:1], 2, nodeName=node))
            docs.append(_slice(f"{node}-1", node, devices[1:], 2, nodeName=node))
        elif devices:
            docs.append(_slice(node, node, devices, nodeName=node))
    if draw(st.integers(0, 5)) == 0:
        docs.append(_slice("everywhere", "everywhere", [_device("net-0", "a", False)], allNodes=True))
    for c in range(2):
        docs.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"shared-{c}", "namespace": "default"},
                "spec": {"devices": {"requests": TEMPLATES["one"]}},
            }
        )
    for p in range(draw(st.integers(3, 14))):
        ref: dict[str, Any]
        if draw(st.integers(0, 4)) == 0:
            ref = {"name": "g", "resourceClaimName": f"shared-{draw(st.integers(0, 1))}"}
        else:
            ref = {"name": "g", "resourceClaimTemplateName": draw(st.sampled_from(sorted(TEMPLATES)))}
        high = draw(st.integers(0, 5)) == 0
        annotations = {"packsched.io/arrival-time": f"{draw(st.integers(0, 8))}s"}
        if draw(st.booleans()):
            annotations["packsched.io/run-duration"] = f"{draw(st.integers(1, 6))}s"
        cpu = "1500m" if high else draw(st.sampled_from(["100m", "500m", "1"]))
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"p{p}", "namespace": "default", "annotations": annotations},
                "spec": {
                    "priority": 100 if high else 0,
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}, "claims": [{"name": "g"}]}}],
                    "resourceClaims": [ref],
                },
            }
        )
    return docs


def run(docs: list[dict[str, Any]], path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    monkeypatch.setattr(DynamicResources, "fast", fast)
    monkeypatch.setattr(DraObjects, "incremental", fast)
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    cluster = load_manifests([str(path)])
    sim = Simulation(cluster, default_config(set(in_tree_registry())), in_tree_registry(), 7)
    result = sim.run()
    history = [(r.pod.key, r.phase, r.node, r.reason, r.attempts, r.preempted_by) for r in sim.history]
    events = [(e.time, e.kind, e.pod, e.node, e.by, e.reason) for e in result.events]
    claims = sorted((k, c.allocation, tuple(c.reserved_for)) for k, c in cluster.dra.claims.items())
    return history, events, claims


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=clusters())
def test_the_counts_decide_as_the_allocator(
    docs: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cluster.json"
    assert run(docs, path, True, monkeypatch) == run(docs, path, False, monkeypatch)
