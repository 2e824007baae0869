"""conformance/generate.py's seeded generators: the same seed gives the same scenario, and the quotas area makes
what CapacityScheduling needs (ElasticQuotas over the scenario's namespaces, pods that borrow and reclaim)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from helpers import load_script

HERE = Path(__file__).resolve().parents[2] / "conformance"


def _generate() -> ModuleType:
    return load_script(HERE / "generate.py", "conformance_generate")


gen = _generate()


@pytest.mark.parametrize("area", sorted(gen.GENERATORS))
def test_same_seed_same_scenario(area: str) -> None:
    assert gen.dump(gen.scenario(area, 3, 1)[1]) == gen.dump(gen.scenario(area, 3, 1)[1])
    assert gen.dump(gen.scenario(area, 3, 1)[1]) != gen.dump(gen.scenario(area, 3, 2)[1])


def test_out_of_tree_areas_name_their_releases() -> None:
    assert set(gen.RELEASES_OF) <= set(gen.GENERATORS)
    assert gen.RELEASES_OF["quotas"] == gen.RELEASES_OF["coscheduling"] == ("1.34",)


@pytest.mark.parametrize("k", range(6))
def test_quotas_scenario(k: int) -> None:
    _, doc = gen.scenario("quotas", 1, k)
    objs = doc["objects"]
    namespaces = {n["metadata"]["name"] for n in objs["namespaces"]}
    quota_ns = [q["metadata"]["namespace"] for q in objs["elasticquotas"]]
    assert len(set(quota_ns)) == len(quota_ns) >= 2 and set(quota_ns) <= namespaces  # one quota per namespace
    for q in objs["elasticquotas"]:
        assert q["apiVersion"] == "scheduling.x-k8s.io/v1alpha1" and q["kind"] == "ElasticQuota"
        assert set(q["spec"].get("min", {})) | set(q["spec"].get("max", {})) <= {"cpu", "memory", "nvidia.com/gpu"}
    profile = doc["scheduler_config"]["profiles"][0]
    assert profile["plugins"]["postFilter"]["enabled"] == [{"name": "CapacityScheduling"}]
    assert {p["metadata"]["namespace"] for p in doc["pods"]} <= namespaces
    assert {p["spec"]["priorityClassName"] for p in doc["pods"]} <= {"low", "mid", "high"}
    for p in doc["pods"]:
        res = p["spec"]["containers"][0]["resources"]
        assert res["requests"].get("nvidia.com/gpu") == res.get("limits", {}).get("nvidia.com/gpu")


def test_for_release_drops_what_1_34_refuses() -> None:
    # gen_dra raises DynamicResources' score weight now and then; 1.34's plugin has no Score and refuses it
    docs = [gen.scenario("dra", 1, k)[1] for k in range(12)]
    raised = [d for d in docs if "plugins" in d["scheduler_config"]["profiles"][0]]
    assert raised, "the generator raises the weight in some scenarios"
    for doc in raised:
        before = gen.dump(doc)
        assert gen.dump(gen.for_release(doc, "1.35")) == before
        profile = gen.for_release(doc, "1.34")["scheduler_config"]["profiles"][0]
        assert "DynamicResources" not in gen.dump(profile)


@pytest.mark.parametrize("k", range(4))
def test_volumes_scenario(k: int) -> None:
    _, doc = gen.scenario("volumes", 1, k)
    objs = doc["objects"]
    claims = {c["metadata"]["name"]: c for c in objs["persistentvolumeclaims"]}
    classes = {c["metadata"]["name"]: c for c in objs["storageclasses"]}
    assert {c["volumeBindingMode"] for c in classes.values()} == {"WaitForFirstConsumer", "Immediate"}
    for pvc in claims.values():
        assert pvc["spec"]["storageClassName"] in classes and pvc["metadata"]["uid"]
    volumes = {v["metadata"]["name"]: v for v in objs["persistentvolumes"]}
    for pv in volumes.values():  # a volume and its claim are bound both ways, as the PV controller leaves them
        ref = pv["spec"].get("claimRef")
        if ref is not None:
            pvc = claims[ref["name"]]
            assert pvc["spec"]["volumeName"] == pv["metadata"]["name"] and ref["uid"] == pvc["metadata"]["uid"]
            assert pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
            assert pv["status"]["phase"] == pvc["status"]["phase"] == "Bound"
        else:
            assert pv["status"]["phase"] == "Available"
    sizes = [v["spec"]["capacity"]["storage"] for v in volumes.values() if v["spec"]["storageClassName"] == "local"]
    assert len(sizes) == len(set(sizes))  # the smallest local volume that fits a claim is one volume
    nodes = {n["metadata"]["name"] for n in objs["nodes"]}
    assert {c["metadata"]["name"] for c in objs["csinodes"]} <= nodes
    for pod in doc["pods"]:
        names = [v["persistentVolumeClaim"]["claimName"] for v in pod["spec"].get("volumes", [])]
        assert set(names) <= set(claims) | {"missing-0"}
        assert len(names) == len(set(names))


@pytest.mark.parametrize("k", range(6))
def test_coscheduling_scenario(k: int) -> None:
    _, doc = gen.scenario("coscheduling", 1, k)
    assert doc["keep_pods"] is True and len(doc["pods"]) <= 26  # the replay's spacing keeps Permit's wait
    groups = {g["metadata"]["name"]: g["spec"]["minMember"] for g in doc["objects"]["podgroups"]}
    assert list(groups) == sorted(groups)  # created in name order: the queue's ties follow the pods' names
    seen: dict[str, list[str]] = {}
    for i, pod in enumerate(doc["pods"]):
        group = pod["metadata"]["labels"].get(gen.POD_GROUP_LABEL)
        if group in groups:
            seen.setdefault(group, []).append(pod["metadata"]["name"])
        if pod["metadata"].get("annotations", {}).get(gen.WITH_PREVIOUS) == "true":
            # created with the pod before it: a member of the same group, right after it
            assert i > 0 and doc["pods"][i - 1]["metadata"]["labels"][gen.POD_GROUP_LABEL] == group
    for group, names in seen.items():
        assert names == sorted(names)  # a group's members keep their order
        assert len(names) >= groups[group] - 1
    profile = doc["scheduler_config"]["profiles"][0]
    assert profile["plugins"]["queueSort"]["enabled"] == [{"name": "Coscheduling"}]
