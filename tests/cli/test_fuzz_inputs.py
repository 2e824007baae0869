"""Malformed input, generated: every command that reads files gets broken structures, deep nesting, bad encodings,
odd sizes and numbers, and answers either normally (exit 0, when the mutation left a valid input) or with exit code
2 and only ``error:`` lines that name the file — never a traceback, never another exit code.

The inputs are mutations of valid manifests, configurations and scenarios from examples/ (a field's value replaced
by a value of another type, a huge or negative number, a malformed quantity, a string in another script, a key
removed or duplicated, the document truncated or nested deeply) and random YAML trees. Each generated input is run
through ``simulate``, ``validate``, ``explain``, ``quotas`` or ``run``, in process."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from packsched.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
runner = CliRunner()

MANIFESTS = [EX / "gpu-demo" / "nodes.yaml", EX / "gpu-demo" / "workloads.yaml", EX / "what-if" / "cluster.yaml"]
CONFIGS = [EX / "gpu-demo" / "config-rtcr-binpack.yaml", EX / "what-if" / "binpack.yaml"]
SCENARIO = EX / "what-if" / "scenario.yaml"

ODD_VALUES: list[Any] = [
    None,
    True,
    -1,
    0,
    2**31,
    -(2**63),
    10**30,
    1.5,
    float("inf"),
    "",
    "1.5.3Gi",
    "-5",
    "NaN",
    "１２",  # full-width digits
    "ümlaut",
    "a" * 5000,
    [],
    {},
    [1, [2, [3]]],
    {"x": {"y": {"z": 1}}},
    "\x00",
]


@functools.cache
def _parsed(path: Path) -> tuple[Any, ...]:
    """The documents of a source file, parsed once (with PyYAML's pure-Python loader, parsing them again for every
    example was a third of test_mutated_manifests' time); the examples mutate copies (:func:`_docs`)."""
    return tuple(d for d in yaml.safe_load_all(path.read_text()) if d is not None)


def _docs(path: Path) -> list[Any]:
    """A fresh copy of the source's documents, for an example to mutate."""
    return copy.deepcopy(list(_parsed(path)))


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if len(prefix) > 40:  # a nest an earlier mutation made: no need to walk all of it
        return out
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return root


def _delete(root: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return None
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    return root


@st.composite
def mutated(draw: st.DrawFn, sources: list[Path]) -> tuple[str, str]:
    """(file name, text): a source file with one to three mutations."""
    source = draw(st.sampled_from(sources))
    docs = _docs(source)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(docs) - 1))
        path = draw(st.sampled_from(_paths(docs[i])))
        how = draw(st.sampled_from(["value", "value", "delete", "nest"]))
        if how == "value":
            # a copy: a later mutation may write inside it, and ODD_VALUES serves every example
            docs[i] = _set(docs[i], path, copy.deepcopy(draw(st.sampled_from(ODD_VALUES))))
        elif how == "delete" and path:
            docs[i] = _delete(docs[i], path)
        else:
            deep: Any = "x"
            for _ in range(draw(st.sampled_from([5, 200, 3000]))):
                deep = [deep]
            docs[i] = _set(docs[i], path, deep)
        event(f"mutation: {how}")
    as_json = draw(st.booleans()) and len(docs) == 1
    try:
        text = (
            json.dumps(docs[0], allow_nan=True)
            if as_json
            else yaml.safe_dump_all(docs, allow_unicode=True, default_flow_style=True, width=10**6)
        )
    except (RecursionError, ValueError):
        text = "[" * 5000  # deeper than the dumper goes: the reader must say so too
    cut = draw(st.sampled_from([None, None, None, 0.5, 0.9]))
    if cut is not None:
        text = text[: int(len(text) * cut)]
        event("truncated")
    return ("input.json" if as_json else source.name), text


yaml_trees = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20), st.sampled_from(ODD_VALUES[:12])),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=30,
)


def _check(args: list[str], named: Path) -> None:
    result = runner.invoke(app, args)
    event(f"exit {result.exit_code}")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args}: {type(result.exception).__name__}: {result.exception}") from result.exception
    assert result.exit_code in (0, 2), (args, result.exit_code, result.output[-2000:])
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if line.strip()]
        assert errors and errors[0].startswith("error:"), result.stderr[-2000:]
        # a problem of one file names it; a problem of the input as a whole (nothing to do) says so
        whole = any(phrase in errors[0] for phrase in WHOLE_INPUT)
        assert whole or any(named.name in line for line in errors), errors[:5]


COMMANDS = ["simulate", "validate", "quotas", "explain"]
# messages about the input as a whole rather than one file's field
WHOLE_INPUT = ("define no ElasticQuota", "define no nodes and no pods", "no pod default/inference-0")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(MANIFESTS), st.sampled_from(COMMANDS), st.data())
def test_mutated_manifests(tmp_path_factory: Any, case: tuple[str, str], command: str, data: st.DataObject) -> None:
    name, text = case
    path = tmp_path_factory.mktemp("fuzz") / name
    encoding = data.draw(st.sampled_from(["utf-8", "utf-8", "utf-16", "latin-1"]))
    path.write_bytes(text.encode(encoding, errors="replace"))
    args = [command, str(path)]
    if command == "explain":
        args += ["--pod", "default/inference-0"]
    if command != "validate":
        args += ["--config", str(CONFIGS[0])]
    _check(args, path)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(CONFIGS))
def test_mutated_configurations(tmp_path_factory: Any, case: tuple[str, str]) -> None:
    name, text = case
    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_text(text)
    _check(["simulate", str(EX / "gpu-demo" / "nodes.yaml"), "--config", str(path)], path)
    _check(["validate", str(path)], path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated([SCENARIO]))
def test_mutated_scenarios(tmp_path_factory: Any, case: tuple[str, str]) -> None:
    _, text = case
    where = tmp_path_factory.mktemp("fuzz")
    for f in ("cluster.yaml", "binpack.yaml"):
        (where / f).write_text((EX / "what-if" / f).read_text())
    path = where / "scenario.yaml"
    path.write_text(text)
    _check(["run", str(path), "-o", "json"], path)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_trees, st.sampled_from(["simulate", "validate", "run"]))
def test_random_trees(tmp_path_factory: Any, tree: Any, command: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "random.yaml"
    path.write_text(yaml.safe_dump(tree, allow_unicode=True))
    _check([command, str(path)], path)
