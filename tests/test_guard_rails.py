"""The project's own guard rails: the import contracts in pyproject.toml cover every plugin package; no property test
has a clock in it."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "src" / "packsched" / "plugins"
NOT_A_PLUGIN = {"helper"}  # shared helpers of the plugins


def _contract(name_start: str) -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    (found,) = [c for c in contracts if c["name"].startswith(name_start)]
    return found


def _plugin_packages() -> set[str]:
    return {
        f"packsched.plugins.{d.name}"
        for d in PLUGINS.iterdir()
        if (d / "__init__.py").is_file() and d.name not in NOT_A_PLUGIN
    }


def test_every_plugin_package_is_in_the_independence_contract() -> None:
    contract = _contract("Plugin packages are independent")
    assert contract["type"] == "independence"
    assert set(contract["modules"]) == _plugin_packages()


def test_sim_and_live_may_not_import_any_plugin_package_but_the_registry() -> None:
    contract = _contract("The simulator and the live adapter reach plugins only through")
    assert contract["type"] == "forbidden"
    assert set(contract["source_modules"]) == {"packsched.sim", "packsched.live"}
    assert set(contract["forbidden_modules"]) == _plugin_packages() | {"packsched.plugins.helper"}


# The modules that own the scheduling queue (docs/design.md, "Who owns cluster changes").
QUEUE_OWNERS = {"scheduler.py", "eventhandlers.py", "backend/queue.py"}


def test_queue_internals_are_reached_only_by_their_owner() -> None:
    """The import contract keeps other layers from importing the queue module; this keeps them from reaching the
    queue through an object (``scheduler._queue``): only the scheduler's own code uses it."""
    import ast

    src = ROOT / "src" / "packsched"
    offenders: list[str] = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel in QUEUE_OWNERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "_queue":
                owner = node.value
                if not (isinstance(owner, ast.Name) and owner.id == "self"):
                    offenders.append(f"{rel}:{node.lineno}")
    assert not offenders, f"the scheduler's queue reached from outside its owner: {offenders}"
    contract = _contract("Queue internals stay inside the scheduler")
    assert contract["forbidden_modules"] == ["packsched.backend.queue"]
    assert {"packsched.sim", "packsched.live", "packsched.cli"} <= set(contract["source_modules"])


# -- defaults written once (packsched.config.defaults) ------------------------------------------------------------

SRC = ROOT / "src" / "packsched"
DEFAULTS = SRC / "config" / "defaults.py"
API = SRC / "api"  # below config (it cannot import the defaults): scanned for the strings only
# Fields, parameters and keywords that take a default of the configuration: outside config/defaults.py they name its
# constant (or pass a value on), never a literal number or string.
DEFAULTED = frozenset(
    {
        "parallelism",
        "percentage_of_nodes_to_score",
        "pod_initial_backoff_seconds",
        "pod_max_backoff_seconds",
        "client_qps",
        "client_burst",
        "qps",
        "burst",
        "leader_elect",
        "lease_duration_s",
        "renew_deadline_s",
        "retry_period_s",
        "resource_lock",
        "resource_name",
        "resource_namespace",
        "min_candidate_nodes_percentage",
        "min_candidate_nodes_absolute",
        "hard_pod_affinity_weight",
        "pack_weight",
        "resolution",
        "sigmoid_scale",
        "demand_exponent",
        "demand_floor",
        "floor",
        "scheduler_name",
    }
)
# Names these defaults had in other modules before they moved; none may come back.
OLD_NAMES = frozenset(
    {"DEFAULT_QPS", "DEFAULT_BURST", "DEFAULT_PACK_WEIGHT", "DEFAULT_RESOLUTION", "DEMAND_FLOOR_MILLI"}
)
# Values that only config/defaults.py (and api/objects.py, for the scheduler name) may write as string literals.
DEFAULT_STRINGS = {
    "default-scheduler": {SRC / "api" / "objects.py"},
    "kube-scheduler": set(),
}


def _is_literal(node: ast.expr | None) -> bool:
    """A number, a string or a boolean written out (a negative number too); not None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (bool, int, float, str)


def _literal_defaults(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) wherever one of ``DEFAULTED`` gets a literal: a class field's default, a parameter's default, a
    keyword argument, or an assignment to ``self.<name>``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and stmt.target.id in DEFAULTED
                    and _is_literal(stmt.value)
                ):
                    found.append((stmt.lineno, stmt.target.id))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True))
            pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
            found += [(d.lineno, arg.arg) for arg, d in pairs if arg.arg in DEFAULTED and _is_literal(d)]
        elif isinstance(node, ast.Call):
            found += [(k.value.lineno, k.arg) for k in node.keywords if k.arg in DEFAULTED and _is_literal(k.value)]
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                    and t.attr in DEFAULTED
                    and _is_literal(node.value)
                ):
                    found.append((node.lineno, t.attr))
    return found


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for stmt in tree.body:
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        )
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    names.add(n.id)
    return names


def _sources() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(SRC.rglob("*.py")) if p != DEFAULTS]


def test_no_default_is_written_outside_config_defaults() -> None:
    """A default of the configuration is written once, in config/defaults.py; everywhere else names it."""
    problems: list[str] = []
    defined = _module_names(ast.parse(DEFAULTS.read_text(encoding="utf-8"))) - {"__all__"}
    for path, tree in _sources():
        where = path.relative_to(ROOT)
        if API not in path.parents:  # the API objects' fields (a Job's parallelism) are not configuration
            problems += [
                f"{where}:{line}: {name} = a literal (name the constant in config/defaults.py)"
                for line, name in _literal_defaults(tree)
            ]
        problems += [
            f"{where}: defines {name} (config/defaults.py has it: import it)"
            for name in sorted(_module_names(tree) & (defined | OLD_NAMES))
        ]
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and node.value in DEFAULT_STRINGS
                and path not in DEFAULT_STRINGS[node.value]
            ):
                problems.append(f"{where}:{node.lineno}: {node.value!r} written out (name its constant)")
    assert not problems, "\n".join(problems)


def test_the_guard_rail_sees_literal_defaults() -> None:
    """The check above finds each way of writing a default (so that it cannot pass by seeing nothing)."""
    code = """
class LeaderElection:
    leader_elect: bool = True
    lease_duration_s: float = 15.0
    resource_name: str = "kube-scheduler"
def connect(kubeconfig, *, qps: float = 50.0, burst: int = -1) -> None: ...
args = InterPodAffinityArgs(hard_pod_affinity_weight=1)
class Plugin:
    def __init__(self) -> None:
        self.pack_weight = 2.0
        self.qps = QPS
"""
    assert sorted(name for _, name in _literal_defaults(ast.parse(code))) == [
        "burst",
        "hard_pod_affinity_weight",
        "leader_elect",
        "lease_duration_s",
        "pack_weight",
        "qps",
        "resource_name",
    ]


def test_the_layers_in_the_design_notes_are_the_import_contract() -> None:
    """docs/design.md lists the layers the contract enforces, in its order."""
    import re

    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    table = text.split("<!-- layers: the order of the contract, top first -->")[1].split("<!-- /layers -->")[0]
    rows = [line for line in table.splitlines() if line.startswith("| `packsched")]
    # side by side: independent (\|) or free to import each other (:), as in the contract
    documented = [
        (" : " if "` : `" in row else " | ").join(
            re.findall(r"`(packsched[\w.]*)`", row.split("|")[1] + row.split("|")[2])
        )
        for row in rows
    ]
    contract = _contract("Layers follow DESIGN.md")
    assert documented == contract["layers"]


def test_property_tests_do_not_time_their_examples() -> None:
    """tests/conftest.py turns off hypothesis' 200 ms deadline and its too-slow check for every run: on a loaded
    machine one example of a fast test took 585 ms once and failed the suite."""
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check
