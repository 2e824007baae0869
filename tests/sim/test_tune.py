"""``packsched tune`` end to end on a small synthetic trace where the best strategy is known: 64 eight-GPU nodes
and 16 CPU-only nodes; half-GPU pods, whole-node eight-GPU pods and CPU-only pods. Spreading (LeastAllocated) puts
a half-GPU pod on every node, so the eight-GPU pods find no free node (about 60 % of the GPUs unallocated at 100 %
arrived) and the CPU-only pods take the CPU-only nodes; packing (MostAllocated) leaves about 1 % unallocated and
the 16 CPU-only nodes free."""

from __future__ import annotations

import csv
import functools
import json
import signal
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
from typer.testing import CliRunner

from packsched.cli.main import app
from packsched.config.loader import load_config
from packsched.plugins.registry import in_tree_registry
from packsched.sim import sweep
from packsched.sim.policies import file_config, policy_config
from packsched.sim.replay import RunResult, check_replay, replay
from packsched.sim.sweep import Interrupted, RunSpec
from packsched.sim.trace import load_trace
from packsched.sim.tune import METRICS, held_signals
from packsched.sim.tunespace import GPU_SHARE, TuneSpace, load_space

runner = CliRunner()
SEEDS = [1, 2]
HOLDOUT = [3, 4]

SPACE = """apiVersion: packsched.io/v1alpha1
kind: TuneSpace
metadata: {name: spread-or-pack}
spec:
  strategies: [LeastAllocated, MostAllocated]
  resources:
  - {name: cpu, weight: 1}
  - {name: alibabacloud.com/gpu-milli, weight: 1}
"""
# A space of every kind of value, for resumes and determinism.
WIDE_SPACE = """apiVersion: packsched.io/v1alpha1
kind: TuneSpace
spec:
  strategies: [LeastAllocated, MostAllocated, RequestedToCapacityRatio]
  resources:
  - {name: cpu, weight: {min: 0, max: 5}}
  - {name: alibabacloud.com/gpu-milli, weight: {min: 1, max: 5}}
  shape:
  - {utilization: 0, score: {min: 0, max: 10}}
  - {utilization: {min: 40, max: 60, step: 10}, score: {min: 0, max: 10}}
  - {utilization: 100, score: {min: 0, max: 10}}
  scorePlugins:
  - {name: NodeResourcesFit, weight: {min: 1, max: 3}}
  - {name: NodeResourcesBalancedAllocation, weight: {min: 0, max: 2}}
  percentageOfNodesToScore: {min: 50, max: 100}
"""


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("trace")
    nodes = ["sn,cpu_milli,memory_mib,gpu,model"]
    nodes += [f"gpu-node-{i:02d},64000,262144,8,T4" for i in range(64)]
    nodes += [f"cpu-node-{i:02d},64000,262144,0," for i in range(16)]
    pods = ["name,cpu_milli,memory_mib,num_gpu,gpu_milli"]
    pods += [f"half-{i:03d},1000,1024,1,500" for i in range(160)]
    pods += [f"whole-{i:03d},8000,8192,8,1000" for i in range(50)]
    pods += [f"cpu-{i:03d},4000,1024,0,0" for i in range(60)]
    (folder / "openb_node_list_gpu_node.csv").write_text("\n".join(nodes) + "\n", encoding="utf-8")
    (folder / "openb_pod_list_default.csv").write_text("\n".join(pods) + "\n", encoding="utf-8")
    return folder


def space_file(tmp_path: Path, text: str = SPACE, name: str = "space.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def tune(trace: Path, space: Path, out: Path, *extra: str, code: int = 0) -> dict[str, Any]:
    args = ["tune", str(trace), "--space", str(space), "--seeds", "1-2", "--holdout-seeds", "3-4", "--workers", "1"]
    result = runner.invoke(app, [*args, "--out-dir", str(out), *extra, "-o", "json"])
    assert result.exit_code == code, result.output
    data: dict[str, Any] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    if code == 0:
        assert json.loads(result.stdout) == data
    return data


def rows(out: Path) -> list[dict[str, str]]:
    with (out / "trials.csv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@functools.cache
def _replays(trace: Path, policy: str, seeds: tuple[int, ...]) -> tuple[RunResult, ...]:
    """The replays of ``policy`` on ``seeds``, run once for the module: a replay does not depend on the metric read
    from it, and each known-optimum test reads two policies on the same trace and seeds."""
    data = load_trace(trace, "default", "gpu_node")
    cfg = policy_config(policy, set(in_tree_registry()))
    return tuple(replay(data, cfg, s) for s in seeds)


def policy_mean(trace: Path, policy: str, seeds: list[int], metric: str) -> float:
    values = [METRICS[metric].of(r) for r in _replays(trace, policy, tuple(seeds))]
    return float(np.mean([v for v in values if v is not None]))


@pytest.mark.parametrize(
    ("metric", "known_best"),
    [("unallocated-gpu", "below 2"), ("pending-pods", "below 1"), ("free-nodes", "16")],
)
def test_the_search_finds_the_known_optimum(trace_dir: Path, tmp_path: Path, metric: str, known_best: str) -> None:
    out = tmp_path / "out"
    data = tune(trace_dir, space_file(tmp_path), out, "--trials", "6", "--metric", metric)
    best = data["best"]
    assert best["choice"]["strategy"] == "MostAllocated"
    # The space's MostAllocated point is `--policy MostAllocated` (cpu and GPU milli 1:1, every node scored).
    assert best["value"] == pytest.approx(policy_mean(trace_dir, "MostAllocated", SEEDS, metric), abs=1e-3)
    spread = policy_mean(trace_dir, "LeastAllocated", SEEDS, metric)
    if metric == "free-nodes":
        assert best["value"] == 16 and spread == 0
    else:
        assert best["value"] < float(known_best.split()[1]) < spread
    assert data["metric"]["direction"] == ("maximize" if metric == "free-nodes" else "minimize")
    values = [float(r["value"]) for r in rows(out) if r["state"] == "COMPLETE"]
    assert best["value"] == pytest.approx(max(values) if metric == "free-nodes" else min(values), abs=1e-3)
    # The held-out check: the tuned configuration beside the stock baselines, on other seeds.
    held = {g["label"]: g for g in data["holdout"]}
    assert list(held) == ["tuned", "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]
    assert set(held["tuned"]["values"]) == {"3", "4"}
    assert held["tuned"]["mean"] == pytest.approx(held["MostAllocated"]["mean"])
    for name in ("trials.csv", "summary.json", "best-config.yaml", "search.png"):
        assert (out / name).stat().st_size > 0
    assert data["schema"] == "packsched.tune/v1" and data["study"]["complete"] == 6


def test_a_second_call_resumes_the_study(trace_dir: Path, tmp_path: Path) -> None:
    out, space = tmp_path / "out", space_file(tmp_path, WIDE_SPACE)
    first = tune(trace_dir, space, out, "--trials", "3", "--holdout-seeds", "")
    assert first["study"]["complete"] == 3 and first["holdout"] == []
    second = tune(trace_dir, space, out, "--trials", "5", "--holdout-seeds", "")
    assert (second["study"]["trials"], second["study"]["complete"], second["study"]["finished_now"]) == (5, 5, 2)
    assert [r["trial"] for r in rows(out)] == ["0", "1", "2", "3", "4"]
    again = tune(trace_dir, space, out, "--trials", "5", "--holdout-seeds", "")
    assert again["study"]["finished_now"] == 0 and again["best"] == second["best"]
    # Another setup under the same study name is refused (exit 2), naming the option.
    result = runner.invoke(
        app, ["tune", str(trace_dir), "--space", str(space), "--metric", "free-nodes", "--out-dir", str(out)]
    )
    assert result.exit_code == 2
    assert "--study-name" in result.output and "metric" in result.output


def test_ctrl_c_keeps_finished_trials_and_the_same_command_resumes(
    trace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, space = tmp_path / "out", space_file(tmp_path, WIDE_SPACE)
    real = sweep.run_local  # tune imports the sweep's functions when it runs: patched there
    calls: list[int] = []

    def interrupted_third(specs: list[RunSpec], workers: int, on_done: Any = None, on_pods: Any = None) -> Any:
        calls.append(len(specs))
        if len(calls) == 3:
            raise Interrupted(real(specs[:1], 1), len(specs))  # one seed of the trial done: not a finished trial
        return real(specs, workers, on_done, on_pods)

    monkeypatch.setattr(sweep, "run_local", interrupted_third)
    stopped = tune(trace_dir, space, out, "--trials", "4", code=130)
    assert stopped["interrupted"] == {"phase": "search"}
    assert (stopped["study"]["complete"], stopped["study"]["failed"]) == (2, 1)
    assert [r["state"] for r in rows(out)] == ["COMPLETE", "COMPLETE", "FAIL"]
    monkeypatch.setattr(sweep, "run_local", real)
    resumed = tune(trace_dir, space, out, "--trials", "4")
    assert (resumed["study"]["complete"], resumed["study"]["finished_now"]) == (4, 2)
    assert "interrupted" not in resumed and resumed["holdout"]


def test_trials_left_running_by_a_dead_process_are_failed(trace_dir: Path, tmp_path: Path) -> None:
    out, space = tmp_path / "out", space_file(tmp_path, WIDE_SPACE)
    tune(trace_dir, space, out, "--trials", "2", "--holdout-seeds", "")
    study = optuna.load_study(study_name="packsched-tune", storage=f"sqlite:///{out / 'study.db'}")
    study.ask()  # as a process killed in the middle of a trial leaves it
    data = tune(trace_dir, space, out, "--trials", "3", "--holdout-seeds", "")
    assert data["study"]["stale_failed"] == 1
    assert [r["state"] for r in rows(out)] == ["COMPLETE", "COMPLETE", "FAIL", "COMPLETE"]


BAD_SPACES = [
    ("kind: TuneSpace", "kind: Scenario", "kind: must be TuneSpace"),
    ("  resources:", "  weights: {}\n  resources:", "spec.weights: unknown field"),
    ("MostAllocated]", "Packing]", 'spec.strategies[1]: Unsupported value: "Packing"'),
    ("{name: cpu, weight: 1}", "{name: cpu, weight: {min: 0, max: 101}}", "spec.resources[0].weight.max"),
    ("{name: cpu, weight: 1}", "{name: cpu, weight: {min: 3, max: 2}}", "spec.resources[0].weight: min (3)"),
    ("{name: cpu, weight: 1}", "{name: cpu, weight: {min: 0, max: 5, step: 2}}", "spec.resources[0].weight.step"),
    ("{name: cpu, weight: 1}", "{name: cpu}", "spec.resources[0].weight: Required value"),
    ("  resources:", "  scorePlugins: [{name: GPUShare, weight: 1}]\n  resources:", "spec.scorePlugins[0].name"),
    ("  resources:", "  scorePlugins: [{name: NodeResourcesFit, weight: 0}]\n  resources:", "spec.scorePlugins[0]"),
    ("  resources:", "  percentageOfNodesToScore: 0\n  resources:", "spec.percentageOfNodesToScore"),
    ("  resources:", "  shape: [{utilization: 0, score: 0}]\n  resources:", "spec.shape: only RequestedToCapacity"),
    ("MostAllocated]", "RequestedToCapacityRatio]\n  shape: [{utilization: {min: 0, max: 60}, score: 0},"
     " {utilization: {min: 50, max: 100}, score: 10}]", "spec.shape[1].utilization"),
    ("  - {name: cpu, weight: 1}\n", "  - {name: cpu, weight: 1}\n  - {name: cpu, weight: 2}\n",
     "spec.resources[1].name: Duplicate value"),
    ("spread-or-pack}", "spread-or-pack}\nstatus: {}", "status: unknown field"),
    ("  resources:", "  coscheduling: {minMember: 2}\n  resources:", "spec.coscheduling.minMember: unknown field"),
    ("  resources:", "  coscheduling: {podGroupBackoffSeconds: -1}\n  resources:",
     "spec.coscheduling.podGroupBackoffSeconds: must be between 0 and 86400"),
    ("  resources:", "  coscheduling: {podGroupRejectPercentage: {min: 0, max: 101}}\n  resources:",
     "spec.coscheduling.podGroupRejectPercentage.max"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "message"), BAD_SPACES, ids=[b[2][:40] for b in BAD_SPACES])
def test_a_bad_space_file_exits_2_naming_the_field(
    trace_dir: Path, tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert old in SPACE
    path = space_file(tmp_path, SPACE.replace(old, new, 1), "bad.yaml")
    result = runner.invoke(app, ["tune", str(trace_dir), "--space", str(path), "--out-dir", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert f"{path}: {message}" in result.output.replace("\n", " ") or (
        str(path) in result.output and message in result.output
    ), result.output
    assert not (tmp_path / "o" / "study.db").exists()  # refused before anything ran


def test_bad_options_exit_2(trace_dir: Path, tmp_path: Path) -> None:
    space = space_file(tmp_path)
    for extra, message in (
        (["--metric", "speed"], "--metric must be one of"),
        (["--seeds", "1-3", "--holdout-seeds", "3-4"], "must not share seeds"),
        (["--baselines", "Nope"], "--baselines: unknown"),
        (["--holdout-seeds", "x"], "--holdout-seeds"),
        (["--trials", "0"], "--trials must be between 1 and"),  # issue 24: it exited 0 and created a study
    ):
        result = runner.invoke(
            app, ["tune", str(trace_dir), "--space", str(space), "--out-dir", str(tmp_path / "out"), *extra]
        )
        assert result.exit_code == 2 and message in result.output, (extra, result.output)
    assert not (tmp_path / "out").exists()  # nothing created


def test_best_config_is_a_complete_configuration(trace_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    data = tune(trace_dir, space_file(tmp_path, WIDE_SPACE), out, "--trials", "4", "--baselines", "")
    path = out / "best-config.yaml"
    known = set(in_tree_registry())
    cfg = load_config(str(path), known)  # the loader kube-scheduler's files go through
    profile = cfg.profiles[0]
    assert profile.scheduler_name == "default-scheduler"
    check_replay(load_trace(trace_dir, "default", "gpu_node"), file_config(str(path), known))  # GPUShare runs
    assert GPU_SHARE in path.read_text(encoding="utf-8")
    assert data["outputs"]["best_config"] == str(path)
    validated = runner.invoke(app, ["validate", str(path)])
    assert validated.exit_code == 0, validated.output
    # `packsched replay --config best-config.yaml` on the held-out seeds gives the figure tune reported.
    replayed = runner.invoke(app, ["replay", str(trace_dir), "--config", str(path), "--seeds", "3-4", "-o", "json"])
    assert replayed.exit_code == 0, replayed.output
    tuned = data["holdout"][0]
    assert [g["label"] for g in data["holdout"]] == ["tuned"]
    assert json.loads(replayed.stdout)["mean"]["100"] == pytest.approx(tuned["unallocated_gpu_pct"]["mean"])


def _search(out: Path) -> list[dict[str, str]]:
    return [{k: v for k, v in r.items() if k not in ("run_seconds", "config")} for r in rows(out)]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_fixed_seed_gives_the_same_trials(trace_dir: Path, tmp_path: Path, workers: str) -> None:
    space = space_file(tmp_path, WIDE_SPACE)
    args = ("--trials", "5", "--holdout-seeds", "", "--workers", workers, "--seeds", "1")
    a = tune(trace_dir, space, tmp_path / "a", *args, "--seed", "7")
    b = tune(trace_dir, space, tmp_path / "b", *args, "--seed", "7")
    assert a["study"]["batch"] == int(workers)
    assert _search(tmp_path / "a") == _search(tmp_path / "b")
    assert a["best"] == b["best"]
    c = tune(trace_dir, space, tmp_path / "c", *args, "--seed", "8")
    assert c["study"]["complete"] == 5 and _search(tmp_path / "c") != _search(tmp_path / "a")


def test_the_example_space_loads() -> None:
    space = load_space(str(Path(__file__).resolve().parents[2] / "examples" / "tune" / "space.yaml"))
    assert isinstance(space, TuneSpace)
    assert space.strategies == ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
    assert "shape[1].utilization" in space.columns()


def test_a_space_with_coscheduling_tunes_its_args(tmp_path: Path) -> None:
    """``spec.coscheduling``: each arg a parameter of its own (a column of trials.csv); the generated profile has
    Coscheduling (its QueueSort, its PostFilter on while preemption is off) with the chosen args, the others at the
    plugin's defaults; a space without the section is unchanged (a study of it resumes)."""
    from packsched.config.loader import load_config_data
    from packsched.plugins.coscheduling.coscheduling import parse_args
    from packsched.sim.tune import write_config
    from packsched.sim.tunespace import config_document, describe

    text = SPACE + "  coscheduling:\n    permitWaitingTimeSeconds: {min: 10, max: 600, step: 10}\n"
    text += "    podGroupBackoffSeconds: 30\n"
    space = load_space(str(space_file(tmp_path, text, "cos.yaml")))
    cols = space.columns()
    assert cols[-2:] == ["coscheduling.permitWaitingTimeSeconds", "coscheduling.podGroupBackoffSeconds"]
    assert space.as_json()["coscheduling"] == {
        "permitWaitingTimeSeconds": {"min": 10, "max": 600, "step": 10},
        "podGroupBackoffSeconds": 30,
    }
    choice = space.from_params({"strategy": "MostAllocated", "coscheduling.permitWaitingTimeSeconds": 120})
    assert choice.coscheduling == {"permitWaitingTimeSeconds": 120, "podGroupBackoffSeconds": 30}
    assert space.flat({"strategy": "MostAllocated"})["coscheduling.podGroupBackoffSeconds"] == 30
    assert "Coscheduling permitWaitingTimeSeconds:120 podGroupBackoffSeconds:30" in describe(choice)
    cfg = load_config_data(config_document(choice), "generated", set(in_tree_registry()))
    (profile,) = cfg.profiles
    args = parse_args(profile.plugin_config["Coscheduling"])
    assert (args.permit_waiting_time_seconds, args.pod_group_backoff_seconds) == (120, 30)
    assert args.pod_group_reject_percentage == 10  # left out: the plugin's default
    assert [p.name for p in profile.plugins.multi_point.disabled] == ["PrioritySort"]
    assert [p.name for p in profile.plugins.at("postFilter").enabled] == ["Coscheduling"]
    path = write_config(tmp_path / "best.yaml", choice, ["a test"])
    validated = runner.invoke(app, ["validate", str(path)])  # the profile builds (one QueueSort, ...)
    assert validated.exit_code == 0, validated.output
    # without the section: no Coscheduling, and the space's record as before
    plain = load_space(str(space_file(tmp_path, SPACE, "plain.yaml")))
    assert "coscheduling" not in plain.as_json()
    assert not [c for c in plain.columns() if c.startswith("coscheduling.")]
    doc = config_document(plain.from_params({"strategy": "MostAllocated"}))
    assert "Coscheduling" not in json.dumps(doc)


def test_the_command_lines_metric_names_are_the_tuners() -> None:
    """`packsched tune --metric` is checked against packsched.sim.defaults (the command line does not import the
    tuner): the same names, in the same order, as METRICS."""
    from packsched.sim.defaults import METRIC_NAMES

    assert tuple(METRICS) == METRIC_NAMES


def test_a_cursor_left_open_by_an_interruption_prints_no_traceback() -> None:
    """A SIGTERM inside one of the study's queries made SQLAlchemy log "Error closing cursor" with a traceback
    through Python's last-resort handler (seen once in a loaded `make test`): the tuner quiets SQLAlchemy's log.
    In a fresh interpreter, as the command runs (pytest installs its own log handlers)."""
    import subprocess
    import sys

    script = (
        "import logging\n"
        "from packsched.sim.tune import _optuna\n"
        "_optuna()\n"
        "try:\n"
        "    raise KeyboardInterrupt\n"
        "except KeyboardInterrupt:\n"
        "    logging.getLogger('sqlalchemy.pool.impl.QueuePool').error('Error closing cursor', exc_info=True)\n"
        "logging.getLogger('packsched.check').error('still heard')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Error closing cursor" not in done.stderr
    assert "still heard" in done.stderr  # other loggers are left alone


class _Stop(Exception):
    pass


def test_held_signals_deliver_ctrl_c_and_sigterm_when_the_block_ends() -> None:
    """``held_signals`` (the study's reads and writes): a SIGTERM or Ctrl-C that comes inside the block does not
    interrupt it; the handler in place runs as the block ends, each signal once; the handlers are put back."""

    def on_sigterm(_signum: int, _frame: object) -> None:
        raise _Stop

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        finished = False
        with pytest.raises(_Stop), held_signals():
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGTERM)
            finished = True
        assert finished
        finished = False
        with pytest.raises(KeyboardInterrupt), held_signals():
            signal.raise_signal(signal.SIGINT)
            finished = True
        assert finished
        assert signal.getsignal(signal.SIGTERM) is on_sigterm
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with held_signals():  # nothing came: nothing is raised
            pass
    finally:
        signal.signal(signal.SIGTERM, previous)
