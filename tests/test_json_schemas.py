"""Every ``-o json`` output names its ``schema`` and validates against the JSON Schema kept in ``schemas/``.

Each command runs on a bundled example (``replay`` and ``compare`` on a tiny synthetic trace). The outputs are
validated twice: against the schema as published (open to fields added later, as docs/reference/json.md promises),
and against a strict copy that refuses any field the schema does not describe, so that a field added to the code
without its schema (and its documentation) fails here."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from helpers import write_small_trace
from packsched.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "schemas"
EX = ROOT / "examples"
JSON_DOC = ROOT / "docs" / "reference" / "json.md"
runner = CliRunner()

# A scenario whose steps change an ElasticQuota, so that the report lists quotas.
QUOTA_SCENARIO = """apiVersion: packsched.io/v1alpha1
kind: Scenario
metadata: {{name: quota-change}}
spec:
  base: {base}
  config: {config}
  steps:
  - name: quota1 grows
    at: 90s
    setQuota: {{namespace: quota1, name: quota1, max: {{cpu: 8}}}}
"""


def schema_file(name: str) -> Path:
    """``packsched.simulate/v1`` -> ``schemas/simulate.v1.schema.json``."""
    assert name.startswith("packsched."), name
    kind, _, version = name.removeprefix("packsched.").partition("/")
    return SCHEMAS / f"{kind}.{version}.schema.json"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_file(name).read_text(encoding="utf-8"))
    return data


def strict(schema: Any) -> Any:
    """The same schema, refusing properties it does not list (where it does not say what else may come)."""
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(out)
    return out


def check(data: Any, name: str) -> None:
    assert isinstance(data, dict) and data.get("schema") == name, f"expected schema {name!r}"
    schema = load(name)
    for variant, label in ((schema, "schema"), (strict(schema), "strict schema (a field the schema lacks?)")):
        errors = sorted(Draft202012Validator(variant).iter_errors(data), key=lambda e: list(e.absolute_path))
        assert not errors, f"{schema_file(name).name} ({label}): " + "; ".join(
            f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors[:5]
        )


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    """The synthetic trace of tests/helpers.py, with published figures for FGD."""
    return write_small_trace(tmp_path / "trace", published_fgd=True)


@dataclass(frozen=True)
class Case:
    schema: str
    args: tuple[str, ...]


def ex(*parts: str) -> str:
    return str(EX.joinpath(*parts))


CASES = {
    "simulate-timeline": Case("packsched.simulate/v1", ("simulate", ex("timeline"))),
    "simulate-gpu-share": Case(
        "packsched.simulate/v1",
        ("simulate", ex("gpu-share", "cluster.yaml"), "--config", ex("gpu-share", "config-bestfit.yaml")),
    ),
    "simulate-quotas-not-enforced": Case("packsched.simulate/v1", ("simulate", ex("capacity-scheduling-demo"))),
    "explain-scored": Case(
        "packsched.explain/v1",
        (
            "explain",
            ex("docs-two-node", "cluster.yaml"),
            "--pod",
            "default/incoming",
            "--config",
            ex("docs-two-node", "config.yaml"),
        ),
    ),
    "explain-pending": Case(
        "packsched.explain/v1", ("explain", ex("kep-964-story", "cluster.yaml"), "--pod", "default/needs-two-fpgas")
    ),
    "explain-volumes": Case(  # a StatefulSet pod with an unbound WaitForFirstConsumer claim: per-node volumes
        "packsched.explain/v1", ("explain", ex("zonal-pv", "cluster.yaml"), "--pod", "default/cache-0")
    ),
    "quotas-spread": Case(
        "packsched.quotas/v1", ("quotas", ex("gpu-quotas"), "--config", ex("gpu-quotas", "config-spread.yaml"))
    ),
    "explain-gang-member": Case(
        "packsched.explain/v1",
        (
            "explain",
            ex("gangs", "cluster.yaml"),
            ex("gangs", "gang-times-out.yaml"),
            "--config",
            ex("gangs", "config.yaml"),
            "--pod",
            "dev/sweep-9",
        ),
    ),
    "explain-gang-waiting": Case(  # at 2m: nine members wait at Permit, one is pending with its nodes' verdicts
        "packsched.explain/v1",
        (
            "explain",
            ex("gangs", "cluster.yaml"),
            ex("gangs", "gang-times-out.yaml"),
            "--config",
            ex("gangs", "config.yaml"),
            "--pod",
            "dev/sweep-9",
            "--at",
            "2m",
        ),
    ),
    "explain-gang-1.37-cannot-complete": Case(
        "packsched.explain/v1",
        (
            "explain",
            ex("gangs", "upstream-gang-waits-1.37.yaml"),
            "--config",
            ex("gangs", "config-upstream-1.37.yaml"),
            "--pod",
            "default/llm-train-4",
        ),
    ),
    "gangs-times-out": Case(
        "packsched.gangs/v1",
        (
            "gangs",
            ex("gangs", "cluster.yaml"),
            ex("gangs", "gang-times-out.yaml"),
            "--config",
            ex("gangs", "config.yaml"),
        ),
    ),
    "demo": Case("packsched.demo/v1", ("demo", ex("gpu-demo"))),
    "run": Case("packsched.scenario-report/v1", ("run", ex("what-if", "scenario.yaml"))),
    "compare-what-if": Case(
        "packsched.whatif-compare/v1",
        (
            "compare",
            ex("gpu-demo"),
            "--config",
            ex("gpu-demo", "config-least-allocated.yaml"),
            "--config",
            ex("gpu-demo", "config-rtcr-binpack.yaml"),
        ),
    ),
}


# A record of ``packsched serve --record`` (JSON lines): a node, a pod bound to it, and a decision about a pod the
# record never created, which verify-record reports as a difference (exit code 1).
RECORD: list[dict[str, Any]] = [
    {"schema": "packsched.record/v1", "seed": 3, "kubeVersion": "1.31", "preemptionMode": "delete", "config": None},
    {
        "t": 0.0,
        "event": "ADDED",
        "resource": "nodes",
        "object": {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n0", "uid": "u-n0", "resourceVersion": "1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        },
    },
    {
        "t": 0.1,
        "event": "ADDED",
        "resource": "pods",
        "object": {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "a", "namespace": "default", "uid": "u-a", "resourceVersion": "2"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        },
    },
    {
        "t": 0.2,
        "decision": "default/a",
        "profile": "default-scheduler",
        "outcome": "scheduled",
        "node": "n0",
        "top": ["n0"],
        "message": "",
        "nominated": None,
        "victims": [],
    },
    {"t": 0.3, "bind": "default/a", "node": "n0", "ok": True},
    {"t": 0.4, "decision": "default/nobody", "outcome": "unschedulable", "message": "0/1 nodes are available"},
]


def run_json(*args: str, exit_code: int = 0) -> Any:
    result = runner.invoke(app, [*args, "-o", "json"])
    assert result.exit_code == exit_code, result.output
    return json.loads(result.stdout)


def test_every_command_with_json_output_is_covered() -> None:
    """A command with ``-o table|json`` has its schema checked here (snapshot's ``-o`` is its output folder)."""
    group: Any = typer.main.get_command(app)
    with_json = {
        name
        for name, command in group.commands.items()
        if any(p.name == "output" and "--output" in p.opts for p in command.params)
    }
    covered = {c.args[0] for c in CASES.values()} | {"replay", "compare", "verify-record", "tune"}
    assert with_json == covered


def test_schema_files_are_valid_draft_2020_12_and_named_after_their_schema() -> None:
    files = sorted(SCHEMAS.glob("*.schema.json"))
    assert files
    for path in files:
        schema = json.loads(path.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", path.name
        name = schema["title"]
        assert schema_file(name) == path, f"{path.name}: title {name!r}"
        assert schema["properties"]["schema"] == {"const": name}, path.name
        assert "schema" in schema["required"] and len(schema["required"]) > 1, path.name


def test_every_schema_is_exercised_and_documented() -> None:
    names = {json.loads(p.read_text(encoding="utf-8"))["title"] for p in SCHEMAS.glob("*.schema.json")}
    used = {c.schema for c in CASES.values()} | {
        "packsched.replay/v1",
        "packsched.compare/v1",
        "packsched.verify-record/v1",
        "packsched.tune/v1",
    }
    assert used == names
    doc = JSON_DOC.read_text(encoding="utf-8")
    for name in names:
        assert f"`{name}`" in doc, f"docs/reference/json.md does not name {name}"
        assert f"schemas/{schema_file(name).name}" in doc, f"docs/reference/json.md does not link {name}'s file"


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_json_output_validates(case: str) -> None:
    check(run_json(*CASES[case].args), CASES[case].schema)


def test_run_with_quotas_validates(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(
        QUOTA_SCENARIO.format(
            base=ex("capacity-scheduling-demo"), config=ex("capacity-scheduling-demo", "config.yaml")
        ),
        encoding="utf-8",
    )
    data = run_json("run", str(scenario))
    assert data["steps"][-1]["quotas"], data["steps"][-1]
    check(data, "packsched.scenario-report/v1")


def test_replay_json_and_summary_validate(trace_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ("replay", str(trace_dir), "--policy", "FGD", "--seeds", "42-43", "--out-dir", str(out))
    data = run_json(*args)
    assert data["published"] is not None and data["outputs"]
    check(data, "packsched.replay/v1")
    check(json.loads((out / "summary.json").read_text(encoding="utf-8")), "packsched.replay/v1")
    plain = run_json("replay", str(trace_dir), "--config", str(EX / "gpu-share" / "config-bestfit.yaml"))
    assert plain["published"] is None and plain["outputs"] == {}
    check(plain, "packsched.replay/v1")


def test_compare_json_and_summary_validate(trace_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    data = run_json(
        "compare", str(trace_dir), "--policies", "FGD,MostAllocated", "--seeds", "42-43", "--workers", "1",
        "--out-dir", str(out),
    )  # fmt: skip
    assert [p["published"] is not None for p in data["policies"]] == [True, False]
    assert "comparison_png" in data["outputs"]
    check(data, "packsched.compare/v1")
    check(json.loads((out / "summary.json").read_text(encoding="utf-8")), "packsched.compare/v1")


def test_tune_json_and_summary_validate(trace_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ("tune", str(trace_dir), "--space", str(EX / "tune" / "space.yaml"), "--trials", "2", "--seeds", "1")
    data = run_json(*args, "--holdout-seeds", "2", "--workers", "1", "--out-dir", str(out))
    assert data["best"] is not None and data["holdout"] and data["outputs"]["best_config"]
    check(data, "packsched.tune/v1")
    check(json.loads((out / "summary.json").read_text(encoding="utf-8")), "packsched.tune/v1")


def test_json_md_examples_validate() -> None:
    """The examples in docs/reference/json.md are real JSON of their schema, fields included."""
    blocks = re.findall(r"^```json\n(.*?)^```", JSON_DOC.read_text(encoding="utf-8"), flags=re.S | re.M)
    seen = set()
    for block in blocks:
        data = json.loads(block)
        check(data, data["schema"])
        seen.add(data["schema"])
    assert seen == {json.loads(p.read_text(encoding="utf-8"))["title"] for p in SCHEMAS.glob("*.schema.json")}


def test_verify_record_json_validates(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    record.write_text("".join(json.dumps(line) + "\n" for line in RECORD), encoding="utf-8")
    data = run_json("verify-record", str(record), exit_code=1)
    assert data["counts"]["differences"] == 1 and data["differences"][0]["replayed"]["outcome"] == "unknown"
    check(data, "packsched.verify-record/v1")
