"""`packsched serve` imports only what it needs before it starts watching: the modules of the other commands (the
simulator, its reports and charts, the trace sweeps, the tuner, the snapshot and record tools, rich's tables and
progress bars) are imported where those commands run. Checked in a fresh interpreter, as a user's process starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

# What serve imports before it watches: the command line, then what its body imports.
SERVE_SETUP = """
import json, sys
import packsched.cli.main
from packsched.live import logs
from packsched.live.controller import REMOVAL_MODES
from packsched.live.kube import KubernetesPort
from packsched.live.record import RecordError
from packsched.live.serve import ServeOptions, Server
print(json.dumps(sorted(sys.modules)))
"""

# Modules serve never needs (prefixes: a package and everything in it).
NOT_FOR_SERVE = (
    "altair",  # charts (the HTML report, --out-dir plots)
    "vl_convert",
    "cel",  # DRA's CEL selectors: on first use
    "optuna",  # packsched tune
    "ray",  # compare --ray
    "click",  # typer carries its own
    "rich.table",
    "rich.progress",
    "packsched.sim.engine",
    "packsched.sim.report",
    "packsched.sim.gangs",
    "packsched.sim.quotas",
    "packsched.sim.scenario",
    "packsched.sim.controllers",
    "packsched.sim.htmlreport",
    "packsched.sim.chartspec",
    "packsched.sim.plots",
    "packsched.sim.compare",
    "packsched.sim.jobgen",
    "packsched.sim.replay",  # the trace commands: their option defaults come from packsched.sim.defaults
    "packsched.sim.trace",
    "packsched.sim.sweep",
    "packsched.sim.tune",
    "packsched.sim.tunespace",
    "packsched.cli.progress",
    "packsched.live.verify",
    "packsched.live.snapshot",
    "packsched.live.anonymize",
    "packsched.plugins.capacityscheduling.lint",
)


def _loaded(code: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    names: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return names


def _offending(names: list[str]) -> list[str]:
    return [m for m in names if any(m == p or m.startswith(p + ".") for p in NOT_FOR_SERVE)]


def test_serve_setup_imports_no_module_of_other_commands() -> None:
    names = _loaded(SERVE_SETUP)
    assert "packsched.live.serve" in names and "packsched.cli.main" in names  # the check ran what serve runs
    assert str(SRC) in _loaded("import json, sys, packsched; print(json.dumps(packsched.__path__))")[0]
    assert _offending(names) == []


def test_the_guard_sees_an_eager_import() -> None:
    """The check itself: a module of another command, once imported, is reported."""
    names = _loaded(SERVE_SETUP.replace("print(", "import packsched.sim.engine, rich.table\nprint("))
    assert set(_offending(names)) >= {"packsched.sim.engine", "rich.table"}
