"""The project's own guard rails: the import contracts in pyproject.toml cover every plugin package."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

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
