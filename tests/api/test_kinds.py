"""The table from kind to decoder (packsched.api.kinds.KINDS): it reads every kind the reader read before it was a
table, as docs/reference/manifests.md lists them; a new kind is one entry; a scenario step's template and a
manifest decode the same object identically."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from packsched.api import schema
from packsched.api.decoding import DecodeContext, Decoder
from packsched.api.errors import InputError
from packsched.api.kinds import KINDS
from packsched.api.manifests import load_manifests
from packsched.config.loader import default_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim.scenario import Step, _Runner, load_scenario

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference" / "manifests.md"
EXAMPLE = ROOT / "examples" / "what-if" / "scenario.yaml"

# What the reader accepted before it was a table (api/manifests.py's _API_VERSIONS and _CLUSTER_SCOPED).
BEFORE: dict[str, tuple[str, ...]] = {
    "Node": ("v1",),
    "Pod": ("v1",),
    "Namespace": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1"),
    "PodDisruptionBudget": ("policy/v1", "policy/v1beta1"),
    "Deployment": ("apps/v1",),
    "ReplicaSet": ("apps/v1",),
    "StatefulSet": ("apps/v1",),
    "Job": ("batch/v1",),
    "ReplicationController": ("v1",),
    "Service": ("v1",),
    "ElasticQuota": ("scheduling.x-k8s.io/v1alpha1", "scheduling.sigs.k8s.io/v1alpha1"),
    "PersistentVolumeClaim": ("v1",),
    "PersistentVolume": ("v1",),
    "StorageClass": ("storage.k8s.io/v1", "storage.k8s.io/v1beta1"),
    "CSINode": ("storage.k8s.io/v1", "storage.k8s.io/v1beta1"),
}
# Kinds added since (issue 24: whatever a real cluster holds).
ADDED: dict[str, tuple[str, ...]] = {
    "DaemonSet": ("apps/v1",),
    "CronJob": ("batch/v1", "batch/v1beta1"),
    "LimitRange": ("v1",),
    "ResourceQuota": ("v1",),
}
CLUSTER_SCOPED_BEFORE = {"Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass", "CSINode"}


KIND_LIST = re.compile(r"[A-Z][A-Za-z]+(, [A-Z][A-Za-z]+)*")


def _reference_rows() -> dict[str, list[str]]:
    """kind -> its apiVersion columns (a kind two API groups define has a row for each), from the table in
    docs/reference/manifests.md."""
    rows: dict[str, list[str]] = {}
    for line in REFERENCE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] != "kind" and KIND_LIST.fullmatch(cells[0]):
            for kind in cells[0].split(", "):
                rows.setdefault(kind, []).append(cells[1])
    return rows


def test_the_table_reads_every_kind_read_before() -> None:
    known = BEFORE | ADDED  # the DRA kinds are tested in tests/plugins/test_dynamic_resources.py
    assert {kind: d.api_versions for kind, d in KINDS.items() if kind in known} == known
    assert {kind for kind, d in KINDS.items() if d.cluster_scoped and kind in BEFORE} == CLUSTER_SCOPED_BEFORE
    tops = {kind: d.top for kind, d in KINDS.items() if d.top != schema.TOP and kind in known}
    assert tops == {"PriorityClass": schema.PRIORITY_CLASS, "StorageClass": schema.STORAGE_CLASS}


def test_the_reference_lists_every_kind_of_the_table() -> None:
    rows = _reference_rows()
    assert set(rows) == set(KINDS)
    for kind, columns in rows.items():
        decoder = KINDS[kind]
        # one row per API group of the kind, naming the apiVersion that group's decoder writes
        groups: dict[str, str] = {}
        for version in decoder.api_versions:
            groups.setdefault(version.rpartition("/")[0] if decoder.variants else "", version)
        firsts = list(groups.values())
        assert len(columns) == len(firsts), (kind, columns)
        for first, column in zip(firsts, columns, strict=True):
            assert first in column, (kind, column)


def test_an_unknown_kind_is_skipped_and_counted_or_with_strict_names_the_table(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Gadget\nmetadata: {name: g}\n---\n"
        "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c}\nspec: {secretName: s}\n---\n"
        "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: d}\n"
    )
    cluster = load_manifests([str(path)])
    assert cluster.skipped == {
        "Gadget": [f"{path} document 1"],
        "Certificate": [f"{path} document 2", f"{path} document 3"],
    }
    assert (
        cluster.skipped_summary() == "skipped 3 objects of kinds packsched does not model: Certificate (2), Gadget (1)"
    )
    with pytest.raises(InputError) as exc:
        load_manifests([str(path)], strict=True)
    known = ", ".join(sorted(KINDS))
    assert [str(e) for e in exc.value.errors] == [
        f'{path}: document {i}: kind: kind "{kind}" is not one packsched models (--strict; it reads {known})'
        for i, kind in ((1, "Gadget"), (2, "Certificate"), (3, "Certificate"))
    ]


def test_a_new_kind_is_one_table_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[tuple[str, str, str, int | None]] = []

    def pod_group(ctx: DecodeContext) -> None:
        spec = ctx.r.fields(ctx.data.get("spec"), "spec", ("minMember",))
        read.append((ctx.kind, ctx.namespace, ctx.name, ctx.r.int(spec.get("minMember"), "spec.minMember")))

    monkeypatch.setitem(KINDS, "PodGroup", Decoder(pod_group, ("scheduling.x-k8s.io/v1alpha1",)))
    path = tmp_path / "groups.yaml"
    path.write_text(
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: team}\n"
        "spec: {minMember: 3}\n"
    )
    load_manifests([str(path)])
    assert read == [("PodGroup", "team", "g", 3)]
    group = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {{name: {}, namespace: team}}\n"
    path.write_text(
        "---\n".join(
            [
                group.format("g") + "spec: {minMember: x}\n",
                "apiVersion: v1\nkind: PodGroup\nmetadata: {name: h}\n",
                group.format("g2"),
                group.format("g2"),
            ]
        )
    )
    with pytest.raises(InputError) as exc:
        load_manifests([str(path)])
    assert [str(e) for e in exc.value.errors] == [
        f"{path}: document 1: spec.minMember: must be an integer, got string 'x'",
        f"{path}: document 2: apiVersion: PodGroup must have apiVersion scheduling.x-k8s.io/v1alpha1, got 'v1'",
        f"{path}: document 4: metadata.name: duplicate PodGroup team/g2 (first defined in {path} document 3)",
    ]


def _runner() -> _Runner:
    scenario = load_scenario(str(EXAMPLE))
    registry = in_tree_registry()
    return _Runner(scenario, load_manifests(scenario.base), default_config(set(registry)), registry)


def _as_manifest(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "object.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_scenario_step_and_a_manifest_decode_the_same_pod(tmp_path: Path) -> None:
    runner = _runner()
    create = runner.scenario.steps[0]
    assert create.action == "createPods"
    from_step = runner._pod(create, "train-0")
    template = create.args["template"]
    manifest = {"apiVersion": "v1", "kind": "Pod", **template, "metadata": {**template["metadata"], "name": "train-0"}}
    cluster = load_manifests([*runner.scenario.base, str(_as_manifest(tmp_path, manifest))])
    from_manifest = cluster.pod("default/train-0")
    assert from_manifest is not None and from_step.priority > 0  # its class's value, resolved in both
    assert replace(from_step, source="") == replace(from_manifest, source="")


def test_a_scenario_step_and_a_manifest_decode_the_same_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = _runner()
    add = runner.scenario.steps[-1]
    assert add.action == "addNodes"
    made: list[Any] = []
    monkeypatch.setattr(runner.sim, "set_node", made.append)
    runner._addNodes(add)
    template = add.args["template"]
    name = made[0].name
    manifest = {"apiVersion": "v1", "kind": "Node", **template, "metadata": {**template["metadata"], "name": name}}
    (from_manifest,) = load_manifests([str(_as_manifest(tmp_path, manifest))]).nodes
    assert [replace(n, source="") for n in made] == [replace(from_manifest, source="")]


def test_a_scenario_step_and_a_manifest_decode_the_same_quota(tmp_path: Path) -> None:
    runner = _runner()
    limits = {"min": {"cpu": "2", "nvidia.com/gpu": 1}, "max": {"cpu": "8"}}
    runner._setQuota(Step("quota", 0.0, "setQuota", {"namespace": "team", "name": "q", **limits}, "spec.steps[9]"))
    from_step = runner.cluster.elastic_quotas[-1]
    manifest = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "q", "namespace": "team"},
        "spec": limits,
    }
    (from_manifest,) = load_manifests([str(_as_manifest(tmp_path, manifest))]).elastic_quotas
    assert replace(from_step, source="") == replace(from_manifest, source="")
