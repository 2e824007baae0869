"""The long-running commands behave as Unix tools (issue 13): Ctrl-C stops ``compare`` and ``replay`` at once and
keeps the runs that finished (exit 130); a bad ``--out-dir`` fails before any run; a Ray cluster that does not
answer fails after ``--ray-timeout``; progress goes to a non-terminal standard error as plain lines; ``validate``
reads big files with libyaml's loader.

Every trace here is a small synthetic one built in the test's own folder."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from helpers import write_small_trace
from packsched.api.errors import InputError
from packsched.cli.main import _is_config_file, app
from packsched.cli.progress import INTERVAL_ENV, elapsed_text, interval_from_env
from packsched.cli.unix import Terminated, exit_code
from packsched.sim import sweep
from packsched.sim.sweep import Interrupted, RunSpec

runner = CliRunner()
EX = Path(__file__).resolve().parents[2] / "examples"
PROGRESS = re.compile(r"^(compare|replay): (\d+)/(\d+) runs done, \d+s elapsed")


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    """A run takes some tens of milliseconds."""
    folder = tmp_path / "trace"
    folder.mkdir()
    return write_small_trace(folder, 6, 100)


# -- Ctrl-C ----------------------------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def test_ctrl_c_stops_compare_at_once_and_keeps_the_finished_runs(tmp_path: Path) -> None:
    """SIGINT to ``compare --workers 2`` with 60 queued runs: exit 130 within a few seconds (not after the queue),
    the worker processes ended, the finished runs in the table, runs.csv and summary.json, no plot."""
    trace = tmp_path / "trace"
    trace.mkdir()
    write_small_trace(trace, 60, 1200)  # some tenths of a second per run
    out_dir = tmp_path / "out"
    command = [sys.executable, "-m", "packsched.cli.main", "compare", str(trace), "--policies", "BestFit,Random"]
    command += ["--seeds", "1-30", "--workers", "2", "--out-dir", str(out_dir)]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, INTERVAL_ENV: "0.1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job's is ignored
    )
    assert proc.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until a run has finished (progress lines come every 0.1 s)
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        match = PROGRESS.match(line)
        if match and int(match.group(2)) >= 1:
            break
    else:
        proc.kill()
        pytest.fail(f"no run finished: {seen}")
    assert proc.poll() is None, f"compare ended before Ctrl-C: {seen}"
    workers = _children(proc.pid)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert proc.returncode == 130, stderr
    assert took < 5, f"{took:.1f} s after Ctrl-C"
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()], "worker processes left running"
    assert "Traceback" not in stderr
    match = re.search(r"interrupted after \S+: (\d+) of 60 runs finished \((.*)\); the others were cancelled", stderr)
    assert match, stderr
    done = int(match.group(1))
    assert 1 <= done < 60
    assert f"partial results written: {out_dir / 'runs.csv'}, {out_dir / 'summary.json'}" in stderr
    assert f"interrupted: {done} of 60 runs" in stdout  # the table's title; the table holds the finished runs
    summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["interrupted"] == {"runs_done": done, "runs_total": 60}
    assert sum(len(p["runs"]) for p in summary["policies"]) == done
    lines = (out_dir / "runs.csv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 131 * done
    assert not list(out_dir.glob("*.png"))
    assert "runs done" not in stdout  # progress only on standard error


# -- SIGTERM: as Ctrl-C, exit code 143 -------------------------------------------------------------------------

ANY_PROGRESS = re.compile(r"^(\w+): (\d+)/(\d+) runs done")
TUNE_SPACE = """apiVersion: packsched.io/v1alpha1
kind: TuneSpace
spec:
  strategies: [LeastAllocated, MostAllocated]
  resources:
  - {name: cpu, weight: {min: 0, max: 5}}
  - {name: alibabacloud.com/gpu-milli, weight: {min: 1, max: 5}}
"""


def _sigterm_after_a_run(command: list[str], to_group: bool) -> tuple[subprocess.Popen[str], list[int], str, str]:
    """Start ``packsched COMMAND`` (with worker processes) in a session of its own, wait until a run has finished,
    send SIGTERM to it alone or to its whole process group (as ``timeout`` and systemd do), and wait for it to end.
    Returns the process, its worker processes at the signal, its standard output and standard error."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "packsched.cli.main", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, INTERVAL_ENV: "0.1"},
        start_new_session=True,  # a session and process group of its own: to signal as a whole, to look for leftovers
    )
    assert proc.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # progress lines come every 0.1 s
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        match = ANY_PROGRESS.match(line)
        if match and int(match.group(2)) >= 1:
            break
    else:
        proc.kill()
        pytest.fail(f"no run finished: {seen}")
    assert proc.poll() is None, f"{command[0]} ended before SIGTERM: {seen}"
    workers = _children(proc.pid)
    if to_group:
        os.killpg(proc.pid, signal.SIGTERM)
    else:
        proc.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # before the fix: the workers, left running, hold the pipes open
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{command[0]} did not end after SIGTERM, or left its workers running")
    return proc, workers, stdout, "".join(seen) + stderr


def _left_running(session: int) -> list[int]:
    """The processes of ``session`` still running (zombies, ended but not yet reaped, apart), waited for a little:
    an ended worker may take a moment to go on a loaded machine."""
    deadline = time.monotonic() + 10
    while True:
        alive = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()  # state, ppid, pgrp, session, ...
            except OSError:
                continue
            if int(fields[3]) == session and fields[0] != "Z":
                alive.append(int(stat.parent.name))
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


@pytest.mark.parametrize("to_group", [False, True], ids=["to-packsched", "to-its-process-group"])
def test_sigterm_stops_compare_as_ctrl_c_does(tmp_path: Path, to_group: bool) -> None:
    """SIGTERM to ``compare --workers 2`` (issue 24): the workers ended, the finished runs written to runs.csv and
    summary.json and printed, exit code 143; sent to packsched alone, the workers used to be left running (under
    PID 1) and nothing was written."""
    trace = tmp_path / "trace"
    trace.mkdir()
    write_small_trace(trace, 60, 1200)
    out_dir = tmp_path / "out"
    command = ["compare", str(trace), "--policies", "BestFit,Random", "--seeds", "1-30", "--workers", "2"]
    proc, workers, stdout, stderr = _sigterm_after_a_run([*command, "--out-dir", str(out_dir)], to_group)
    assert workers, "no worker process at the signal"
    assert proc.returncode == 143, stderr
    assert not _left_running(proc.pid), "worker processes left running"
    assert "Traceback" not in stderr
    match = re.search(r"terminated \(SIGTERM\) after \S+: (\d+) of 60 runs finished \((.*)\); the others", stderr)
    assert match, stderr
    done = int(match.group(1))
    assert 1 <= done < 60
    assert f"partial results written: {out_dir / 'runs.csv'}, {out_dir / 'summary.json'}" in stderr
    assert f"interrupted: {done} of 60 runs" in stdout
    summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["interrupted"] == {"runs_done": done, "runs_total": 60}
    assert len((out_dir / "runs.csv").read_text(encoding="utf-8").splitlines()) == 1 + 131 * done


def test_sigterm_stops_replay_with_workers(tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    trace.mkdir()
    write_small_trace(trace, 60, 1200)
    out_dir = tmp_path / "out"
    command = ["replay", str(trace), "--policy", "BestFit", "--seeds", "1-40", "--workers", "2", "-o", "json"]
    proc, _, stdout, stderr = _sigterm_after_a_run([*command, "--out-dir", str(out_dir)], False)
    assert proc.returncode == 143, stderr
    assert not _left_running(proc.pid), "worker processes left running"
    data = json.loads(stdout)
    assert 1 <= data["interrupted"]["runs_done"] == len(data["runs"]) < 40
    assert json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))["interrupted"] == data["interrupted"]


def test_sigterm_stops_tune_and_keeps_the_finished_trials(tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    trace.mkdir()
    write_small_trace(trace, 60, 1200)
    space = tmp_path / "space.yaml"
    space.write_text(TUNE_SPACE, encoding="utf-8")
    out_dir = tmp_path / "tune"
    command = ["tune", str(trace), "--space", str(space), "--trials", "200", "--seeds", "1-2", "--workers", "2"]
    command += ["--holdout-seeds", "", "--baselines", "", "--out-dir", str(out_dir), "-o", "json"]
    proc, _, _, stderr = _sigterm_after_a_run(command, False)
    assert proc.returncode == 143, stderr
    assert not _left_running(proc.pid), "worker processes left running"
    assert "Traceback" not in stderr
    assert re.search(r"terminated \(SIGTERM\) after \S+: the study holds \d+ finished trial\(s\) of 200", stderr)
    summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["interrupted"] == {"phase": "search"}
    assert (out_dir / "trials.csv").is_file()


def test_sigterm_in_a_sweep_is_kept_by_interrupted(trace_dir: Path, fake_ray: types.SimpleNamespace) -> None:
    """Terminated (SIGTERM) stops run_local (serial or with a pool) and run_ray as Ctrl-C does; the Interrupted
    keeps the signal, for the exit code."""
    specs = [RunSpec("BestFit", s, str(trace_dir), policy="BestFit") for s in range(1, 5)]

    def on_done(_: object) -> None:
        raise Terminated

    for run in (lambda: sweep.run_local(specs, 1, on_done), lambda: sweep.run_local(specs, 2, on_done)):
        with pytest.raises(Interrupted) as caught:
            run()
        assert (len(caught.value.done), caught.value.signum, exit_code(caught.value)) == (1, signal.SIGTERM, 143)
    with pytest.raises(Interrupted) as caught:
        sweep.run_ray(specs, None, on_done)
    assert (len(caught.value.done), exit_code(caught.value)) == (1, 143)

    def ctrl_c(_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(Interrupted) as caught:
        sweep.run_local(specs, 1, ctrl_c)
    assert (caught.value.signum, exit_code(caught.value)) == (signal.SIGINT, 130)


def _interrupt_after(n: int) -> Any:
    """A run_local that finishes ``n`` runs, then meets Ctrl-C."""
    real = sweep.run_local

    def run_local(specs: list[RunSpec], workers: int, on_done: Any = None, on_pods: Any = None) -> list[Any]:
        done = real(specs[:n], 1, on_done, on_pods)
        raise Interrupted(done, len(specs))

    return run_local


def test_ctrl_c_during_replay_prints_the_finished_runs_as_json(
    trace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sweep, "run_local", _interrupt_after(2))
    out_dir = tmp_path / "out"
    args = [
        "replay",
        str(trace_dir),
        "--policy",
        "BestFit",
        "--seeds",
        "42-45",
        "-o",
        "json",
        "--out-dir",
        str(out_dir),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 130, result.output
    data = json.loads(result.stdout)
    assert [r["seed"] for r in data["runs"]] == [42, 43]
    assert data["interrupted"] == {"runs_done": 2, "runs_total": 4}
    assert data["outputs"] == {"csv": str(out_dir / "runs.csv"), "json": str(out_dir / "summary.json")}
    assert json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))["interrupted"]["runs_done"] == 2
    assert "2 of 4 runs finished (BestFit: seeds 42, 43); the others were cancelled" in result.stderr
    schema = EX.parent / "schemas" / "replay.v1.schema.json"
    if schema.is_file():  # the partial document is still a packsched.replay/v1 one
        jsonschema = pytest.importorskip("jsonschema")
        jsonschema.Draft202012Validator(json.loads(schema.read_text(encoding="utf-8"))).validate(data)


def test_ctrl_c_before_any_run_finished_prints_no_table(trace_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep, "run_local", _interrupt_after(0))
    result = runner.invoke(app, ["compare", str(trace_dir), "--policies", "BestFit", "--seeds", "1-3"])
    assert result.exit_code == 130
    assert result.stdout == ""
    assert "0 of 3 runs finished, no results" in result.stderr


def test_run_local_stops_the_pool_on_ctrl_c(trace_dir: Path) -> None:
    """Ctrl-C while the pool runs (here raised by the first result's callback): Interrupted with that run, the
    queued runs cancelled instead of run."""
    specs = [RunSpec("BestFit", s, str(trace_dir), policy="BestFit") for s in range(40)]

    def on_done(_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(Interrupted) as caught:
        sweep.run_local(specs, 2, on_done)
    assert len(caught.value.done) == 1
    assert caught.value.total == 40
    # the workers were ended and reaped (on a loaded machine the last one may take a moment to go)
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []


def test_run_local_serial_keeps_the_runs_before_ctrl_c(trace_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = sweep.run_spec

    def run_spec(spec: RunSpec, progress: Any = None) -> Any:
        if spec.seed == 3:
            raise KeyboardInterrupt
        return real(spec, progress)

    monkeypatch.setattr(sweep, "run_spec", run_spec)
    specs = [RunSpec("BestFit", s, str(trace_dir), policy="BestFit") for s in range(1, 6)]
    with pytest.raises(Interrupted) as caught:
        sweep.run_local(specs, 1)
    assert [r.seed for r in caught.value.done] == [1, 2]
    assert caught.value.total == 5


# -- --out-dir checked before any run --------------------------------------------------------------------------


def _no_runs(*_: object, **__: object) -> list[Any]:
    raise AssertionError("a run started before --out-dir was checked")


@pytest.mark.parametrize("command", ["replay", "compare"])
@pytest.mark.parametrize(
    ("where", "needle"),
    [
        ("file", "exists and is not a folder"),
        ("under-file", "cannot create the folder: {file} is not a folder"),
        ("read-only", "cannot write in the folder: Permission denied"),
    ],
)
def test_bad_out_dir_fails_before_any_run(
    trace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, where: str, needle: str
) -> None:
    monkeypatch.setattr(sweep, "run_local", _no_runs)
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    out_dir = {"file": a_file, "under-file": a_file / "sub" / "out", "read-only": tmp_path / "ro"}[where]
    if where == "read-only":

        def refuse(*_: object, **__: object) -> Any:
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(tempfile, "NamedTemporaryFile", refuse)  # root may write anywhere
    policy = ["--policy", "BestFit"] if command == "replay" else ["--policies", "BestFit"]
    result = runner.invoke(app, [command, str(trace_dir), *policy, "--seeds", "1-2", "--out-dir", str(out_dir)])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"error: --out-dir {out_dir}: {needle.format(file=a_file)}"]
    assert result.stdout == ""


def test_out_dir_is_created_before_the_runs(trace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out_dir = tmp_path / "new" / "out"
    created: list[bool] = []
    real = sweep.run_local

    def run_local(*args: Any) -> list[Any]:
        created.append(out_dir.is_dir() and not list(out_dir.iterdir()))  # made and probed, the probe removed
        return real(*args)

    monkeypatch.setattr(sweep, "run_local", run_local)
    result = runner.invoke(app, ["replay", str(trace_dir), "--policy", "BestFit", "--out-dir", str(out_dir)])
    assert result.exit_code == 0, result.output
    assert created == [True]


# -- progress on a standard error that is not a terminal -------------------------------------------------------


def test_plain_progress_lines_on_a_non_terminal_stderr(trace_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(INTERVAL_ENV, "0.02")
    result = runner.invoke(app, ["replay", str(trace_dir), "--policy", "FGD", "--seeds", "1-4", "-o", "json"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    progress = [m for m in map(PROGRESS.match, lines) if m]
    assert progress, lines
    assert all(m.group(1) == "replay" and m.group(3) == "4" for m in progress)
    assert re.fullmatch(r"replay: 4/4 runs done in \d+s", lines[-1])
    assert "runs done" not in result.stdout
    json.loads(result.stdout)  # standard output holds the JSON only


def test_no_progress_lines_when_the_interval_is_zero(trace_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(INTERVAL_ENV, "0")
    result = runner.invoke(app, ["replay", str(trace_dir), "--policy", "FGD", "--seeds", "1-2", "-o", "json"])
    assert result.exit_code == 0
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("raw", "seconds"), [(None, 5.0), ("2.5", 2.5), ("0", 0.0), ("-1", 0.0), ("soon", 5.0), ("inf", 5.0)]
)
def test_progress_interval_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, raw: str | None, seconds: float
) -> None:
    if raw is None:
        monkeypatch.delenv(INTERVAL_ENV, raising=False)
    else:
        monkeypatch.setenv(INTERVAL_ENV, raw)
    assert interval_from_env() == seconds


def test_elapsed_text() -> None:
    assert [elapsed_text(s) for s in (0.4, 59, 83, 467, 3600 + 309)] == ["0s", "59s", "1m 23s", "7m 47s", "1h 05m 09s"]


# -- Ray: a cluster that does not answer -----------------------------------------------------------------------


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.SimpleNamespace]:
    """A ``ray`` module that runs tasks in this process; ``behaviour`` says what ``init`` does."""
    state = types.SimpleNamespace(behaviour="ok", initialized=False, release=threading.Event(), cancelled=[], sent=[])
    module = types.ModuleType("ray")

    def init(address: str | None = None, ignore_reinit_error: bool = False, **_: Any) -> None:
        if state.behaviour == "hang":
            state.release.wait(30)  # a cluster that never answers
        elif state.behaviour == "refuse":
            raise ConnectionError(f"could not reach {address}")
        state.initialized = True

    class Ref:  # an object reference (hashable; the run is done at once)
        def __init__(self, fn: Any, args: tuple[Any, ...]) -> None:
            state.sent.append(args)
            self.error: Exception | None = None
            try:
                self.value = fn(*args)
            except Exception as exc:  # raised by get, as Ray does
                self.error = exc

    def get(ref: Ref) -> Any:
        if ref.error is not None:
            raise ref.error
        return ref.value

    def remote(fn: Any) -> Any:
        return types.SimpleNamespace(remote=lambda *args: Ref(fn, args))

    def wait(pending: list[Any], num_returns: int = 1, timeout: float | None = None) -> tuple[list[Any], list[Any]]:
        return pending[:num_returns], pending[num_returns:]

    module.__dict__.update(
        init=init,
        is_initialized=lambda: state.initialized,
        remote=remote,
        wait=wait,
        get=get,
        cancel=lambda ref, force=False: state.cancelled.append(ref),
    )
    monkeypatch.setitem(sys.modules, "ray", module)
    yield state
    state.release.set()


def _compare_on_ray(trace_dir: Path, *extra: str) -> Any:
    args = ["compare", str(trace_dir), "--policies", "BestFit", "--seeds", "1-2", "--ray", *extra, "-o", "json"]
    return runner.invoke(app, args)


def test_ray_address_that_does_not_answer_fails_after_the_timeout(
    trace_dir: Path, fake_ray: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_ray.behaviour = "hang"
    monkeypatch.setattr(sweep, "run_local", _no_runs)
    start = time.monotonic()
    result = _compare_on_ray(trace_dir, "--ray-address", "10.0.0.1:6379", "--ray-timeout", "0.3")
    assert time.monotonic() - start < 10
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: --ray-address: the Ray cluster at 10.0.0.1:6379 did not answer within 0.3 s (is it running? "
        "--ray-timeout waits longer)"
    ]


def test_ray_connection_error_is_one_line(trace_dir: Path, fake_ray: types.SimpleNamespace) -> None:
    fake_ray.behaviour = "refuse"
    result = _compare_on_ray(trace_dir, "--ray-address", "ray://head:10001")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: --ray-address: cannot connect to the Ray cluster at ray://head:10001: could not reach ray://head:10001"
    ]


def test_runs_on_ray_give_the_local_results(trace_dir: Path, fake_ray: types.SimpleNamespace) -> None:
    on_ray = _compare_on_ray(trace_dir)
    assert on_ray.exit_code == 0, on_ray.output
    local = runner.invoke(app, ["compare", str(trace_dir), "--policies", "BestFit", "--seeds", "1-2", "-o", "json"])

    def runs(result: Any) -> list[Any]:
        return [
            {k: v for k, v in r.items() if k != "seconds"} for r in json.loads(result.stdout)["policies"][0]["runs"]
        ]

    assert runs(on_ray) == runs(local)


def test_ctrl_c_on_ray_cancels_the_tasks_left(trace_dir: Path, fake_ray: types.SimpleNamespace) -> None:
    specs = [RunSpec("BestFit", s, str(trace_dir), policy="BestFit") for s in range(1, 4)]

    def on_done(_: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(Interrupted) as caught:
        sweep.run_ray(specs, None, on_done)
    assert [r.seed for r in caught.value.done] == [1]
    assert len(fake_ray.cancelled) == 2


def test_specs_go_to_ray_with_absolute_paths(
    trace_dir: Path, fake_ray: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ray worker runs in a folder of its own: a relative trace folder or config file would name nothing there."""
    config = trace_dir / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: default-scheduler\n  plugins: {multiPoint: {enabled: [{name: GPUShare}]}}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(trace_dir.parent)
    specs = [
        RunSpec("BestFit", 1, trace_dir.name, policy="BestFit"),
        RunSpec("mine", 1, trace_dir.name, config=f"{trace_dir.name}/config.yaml"),
    ]
    local = sweep.run_local(specs, 1)
    on_ray = sweep.run_ray(specs, None)
    sent = [args[0] for args in fake_ray.sent]
    assert [s.data_dir for s in sent] == [str(trace_dir.resolve())] * 2
    assert sent[1].config == str(config.resolve())
    assert [r.curves for r in on_ray] == [r.curves for r in local]


def test_a_failed_run_on_ray_cancels_the_others(trace_dir: Path, fake_ray: types.SimpleNamespace) -> None:
    specs = [RunSpec("BestFit", s, str(trace_dir), policy="BestFit") for s in (1, 2)]
    specs.insert(0, RunSpec("gone", 1, str(trace_dir / "missing")))
    with pytest.raises(InputError, match="the trace folder does not exist"):
        sweep.run_ray(specs, None)
    assert len(fake_ray.cancelled) == 2


def test_ray_not_installed_is_an_input_error(trace_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    result = _compare_on_ray(trace_dir)
    assert result.exit_code == 2
    assert "--ray: Ray is not installed" in result.stderr


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_bad_ray_timeout_is_an_input_error(trace_dir: Path, value: str) -> None:
    result = _compare_on_ray(trace_dir, "--ray-timeout", value)
    assert result.exit_code == 2
    assert "--ray-timeout must be a number of seconds above 0" in result.stderr


# -- standard output closed early or full; output files on a full disk ----------------------------------------

DEMO = EX / "gpu-demo"
SIMULATE = ["simulate", str(DEMO / "nodes.yaml"), str(DEMO / "workloads.yaml")]
STDOUT_CASES = pytest.mark.parametrize(
    "args", [SIMULATE, [*SIMULATE, "-o", "json"], ["--version"]], ids=["table", "json", "version"]
)
NO_SPACE = "No space left on device"


def _packsched(args: list[str], stdout: Any) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "packsched.cli.main", *args]
    return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120, check=False)


# a progress line, printed off a terminal every few seconds of a long run (how many depends on the machine's load)
PROGRESS_LINE = re.compile(r"^\w[\w-]*: \d+/\d+ (runs|pods) done")


def _errors(stderr: str) -> list[str]:
    """Standard error less the notes a command prints anyway and its progress lines."""
    return [line for line in stderr.splitlines() if not line.startswith("note:") and not PROGRESS_LINE.match(line)]


@pytest.mark.parametrize(
    "args",
    [SIMULATE, [*SIMULATE, "-o", "json"], ["--version"], ["--help"], ["simulate", "--help"]],
    ids=["table", "json", "version", "help", "command-help"],
)
def test_a_closed_standard_output_ends_the_command_quietly(args: list[str]) -> None:
    """``packsched ... | head -1`` (issue 24): the reader gone, the command exits with 0 and says nothing (rich's
    tables exited with 1, JSON with 1, and a traceback could follow)."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone before anything is written: every write meets EPIPE
    try:
        run = _packsched(args, write)
    finally:
        os.close(write)
    assert run.returncode == 0, run.stderr
    assert _errors(run.stderr) == []


def test_an_output_file_that_is_a_closed_pipe_ends_the_command_quietly(tmp_path: Path) -> None:
    """``packsched report doc.json -o /dev/stdout | head -1``: the output file is standard output, whose reader has
    gone; the command exits with 0 and says nothing, as when it prints there itself (it said ``-o /dev/stdout:
    cannot write: Broken pipe`` and exited with 2)."""
    doc = tmp_path / "sim.json"
    with open(doc, "w", encoding="utf-8") as fh:
        assert _packsched([*SIMULATE, "-o", "json"], fh).returncode == 0
    read, write = os.pipe()
    os.close(read)
    try:
        run = _packsched(["report", str(doc), "-o", "/dev/stdout"], write)
    finally:
        os.close(write)
    assert run.returncode == 0, run.stderr
    assert _errors(run.stderr) == []


@pytest.mark.parametrize(("args", "code"), [(SIMULATE, 0), (["simulate", "/no/such/file.yaml"], 2)])
def test_a_closed_standard_error_changes_neither_the_output_nor_the_exit_code(args: list[str], code: int) -> None:
    """Nobody reads the notes or the errors: the command still prints its table and exits with its own code
    (rich exited with 1, the table lost, and a failure must not look like success)."""
    read, write = os.pipe()
    os.close(read)
    try:
        command = [sys.executable, "-m", "packsched.cli.main", *args]
        run = subprocess.run(command, stdout=subprocess.PIPE, stderr=write, text=True, timeout=120, check=False)
    finally:
        os.close(write)
    assert run.returncode == code
    assert ("Placements" in run.stdout) == (code == 0)


@STDOUT_CASES
def test_a_full_standard_output_is_one_error_line(args: list[str]) -> None:
    """Standard output on a full disk (/dev/full): one line and exit code 2, not an 85-line traceback."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    with open("/dev/full", "w", encoding="utf-8") as full:
        run = _packsched(args, full)
    assert run.returncode == 2, run.stderr
    assert _errors(run.stderr) == [f"error: standard output: cannot write: {NO_SPACE}"]


def _fill(path: Path) -> None:
    """Write ``path`` until the disk is full."""
    with open(path, "wb", buffering=0) as fh, contextlib.suppress(OSError):
        for _ in range(1 << 16):  # 256 MiB at most: the disks here are far smaller
            fh.write(b"x" * 4096)


@contextlib.contextmanager
def _tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """``folder`` on a tmpfs of ``size`` (mounting needs root: the test is skipped elsewhere)."""
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 64 KiB tmpfs filled to the last byte."""
    with _tmpfs(tmp_path / "disk", "64k") as disk:
        _fill(disk / "filler")
        yield disk


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_out_dir_on_a_full_disk_is_one_error_line_and_nothing_half_written(trace_dir: Path, full_disk: Path) -> None:
    out_dir = full_disk / "out"
    run = _packsched(["replay", str(trace_dir), "--policy", "BestFit", "--out-dir", str(out_dir)], subprocess.PIPE)
    assert run.returncode == 2, run.stderr
    assert _errors(run.stderr) == [f"error: {out_dir / 'runs.csv'}: cannot write: {NO_SPACE}"]
    assert _listing(out_dir) == []  # neither a cut runs.csv nor the temporary file it was written to
    assert run.stdout == ""


def test_html_on_a_full_disk_leaves_the_old_page(full_disk: Path) -> None:
    page = full_disk / "report.html"
    (full_disk / "filler").unlink()
    page.write_text("<p>the old page</p>", encoding="utf-8")
    _fill(full_disk / "filler")
    run = _packsched([*SIMULATE, "-o", "json", "--html", str(page)], subprocess.PIPE)
    assert run.returncode == 2, run.stderr
    assert _errors(run.stderr) == [f"error: --html {page}: cannot write: {NO_SPACE}"]
    assert page.read_text(encoding="utf-8") == "<p>the old page</p>"  # it used to be cut to what fitted
    assert _listing(full_disk) == ["filler", "report.html"]


def test_tune_on_a_full_disk_is_one_error_line(trace_dir: Path, full_disk: Path, tmp_path: Path) -> None:
    space = tmp_path / "space.yaml"
    space.write_text(TUNE_SPACE, encoding="utf-8")
    out_dir = full_disk / "tune"
    command = ["tune", str(trace_dir), "--space", str(space), "--trials", "2", "--seeds", "1", "--workers", "1"]
    run = _packsched([*command, "--out-dir", str(out_dir), "--storage", str(tmp_path / "study.db")], subprocess.PIPE)
    assert run.returncode == 2, run.stderr
    trial = out_dir / "trials" / "trial-0000.yaml"
    assert _errors(run.stderr) == [f"error: {trial}: cannot write: {NO_SPACE}"]
    assert _listing(out_dir) == ["trials"]


def test_tune_study_on_a_full_disk_is_one_error_line(trace_dir: Path, tmp_path: Path) -> None:
    """The study's SQLite file on a full disk: one line naming it, exit code 2 (it was SQLAlchemy's error with
    the SQL, or a traceback once the search had begun)."""
    space = tmp_path / "space.yaml"
    space.write_text(TUNE_SPACE, encoding="utf-8")
    with _tmpfs(tmp_path / "disk", "1m") as disk:
        study = disk / "study.db"
        command = ["tune", str(trace_dir), "--space", str(space), "--seeds", "1", "--holdout-seeds", "", "--workers"]
        command += ["1", "--out-dir", str(tmp_path / "out"), "--storage", str(study), "-o", "json"]
        created = _packsched([*command, "--trials", "1"], subprocess.PIPE)  # the study, with one trial
        assert created.returncode == 0, created.stderr
        _fill(disk / "filler")
        run = _packsched([*command, "--trials", "2"], subprocess.PIPE)
        assert run.returncode == 2, run.stderr
        assert _errors(run.stderr) == [f"error: {study}: cannot write: database or disk is full"]
        study.unlink()
        _fill(disk / "filler-2")  # no room for a new study either
        run = _packsched([*command, "--trials", "2"], subprocess.PIPE)
        assert run.returncode == 2, run.stderr
        assert _errors(run.stderr) == [f"error: --storage: {study}: cannot open the study: database or disk is full"]


def test_a_failed_plot_leaves_no_half_written_file(
    trace_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write error in the middle of a file (a chart's PNG, an I/O error after some bytes): one line naming the
    file, exit code 2; the file is not there, whole or cut, nor its temporary file."""
    real_write_bytes = Path.write_bytes

    def half_written(self: Path, data: Any) -> int:
        if self.suffix != ".png":
            return real_write_bytes(self, data)
        real_write_bytes(self, b"\x89PNG half")
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(Path, "write_bytes", half_written)
    out_dir = tmp_path / "out"
    result = runner.invoke(app, ["replay", str(trace_dir), "--policy", "BestFit", "--out-dir", str(out_dir)])
    assert result.exit_code == 2, result.output
    assert _errors(result.stderr) == [f"error: {out_dir / 'allocation.png'}: cannot write: Input/output error"]
    assert _listing(out_dir) == ["runs.csv"]  # written before the plots; summary.json comes after them


def test_an_output_file_replaced_keeps_its_permissions_or_gets_the_umask(tmp_path: Path) -> None:
    from packsched.api.files import OutputError, write_text_replacing

    kept = tmp_path / "kept.json"
    kept.write_text("old", encoding="utf-8")
    kept.chmod(0o640)
    write_text_replacing(kept, "new")
    assert (kept.read_text(encoding="utf-8"), kept.stat().st_mode & 0o777) == ("new", 0o640)
    umask = os.umask(0o022)
    try:
        write_text_replacing(tmp_path / "new.json", "x")
    finally:
        os.umask(umask)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o644
    with pytest.raises(OutputError, match=r"missing/f\.json: cannot write: No such file or directory"):
        write_text_replacing(tmp_path / "missing" / "f.json", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json", "new.json"]


def test_an_output_path_that_is_a_pipe_or_a_link_stays_one(tmp_path: Path) -> None:
    """Issue 24 (finding 6, audit): an output named by a device or a pipe (``--html /dev/full``, ``-o /dev/stdout``)
    was replaced by a regular file, as root the device itself: it is written in place. A symbolic link keeps
    pointing at its file, which gets the new text."""
    import stat

    from packsched.api.files import write_text_replacing

    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there: opening it to write does not wait
    try:
        write_text_replacing(fifo, "page")
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        assert os.read(reader, 100) == b"page"
    finally:
        os.close(reader)
    real = tmp_path / "real.json"
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_text_replacing(link, "new")
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "pipe.html", "real.json"]


# -- validate reads big files with libyaml's loader ------------------------------------------------------------


def test_validate_never_uses_the_pure_python_yaml_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyYAML's pure-Python loader took 575 s on a 50 MB manifest file that libyaml reads in seconds."""
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML without libyaml")

    def pure_python(*_: object, **__: object) -> None:
        raise AssertionError("PyYAML's pure-Python loader was used")

    monkeypatch.setattr(yaml.SafeLoader, "__init__", pure_python)
    demo = EX / "gpu-demo"
    result = runner.invoke(app, ["validate", str(demo / "config-rtcr-binpack.yaml"), *map(str, demo.glob("*.yaml"))])
    assert result.exit_code == 0, result.output
    assert "config file(s)" in result.stdout


CONFIG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: {kind}\n"


@pytest.mark.parametrize(
    ("text", "is_config"),
    [
        (CONFIG.format(kind="KubeSchedulerConfiguration"), True),
        ('{"apiVersion": "v1", "kind": "Policy"}', True),
        ("kind: 'Policy'\n", True),
        ('kind: "KubeScheduler\\x43onfiguration"\n', True),  # an escape: the text search cannot rule it out
        ("kind: Pod\nspec: {containers: [{name: c, imagePullPolicy: Always}], restartPolicy: Never}\n", False),
        ("kind: Pod\nmetadata: {name: Policy-x}\n", False),
        ("kind: Policy\n  bad: [\n", False),  # a syntax error: the manifest reader reports it
    ],
)
def test_config_files_are_told_from_manifests(tmp_path: Path, text: str, is_config: bool) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(text, encoding="utf-8")
    assert _is_config_file(str(path)) is is_config


def test_a_manifest_that_cannot_name_a_config_kind_is_not_parsed_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "pods.yaml"
    path.write_text("kind: Pod\nspec: {restartPolicy: Never}\n" * 3, encoding="utf-8")

    def parse(*_: object, **__: object) -> None:
        raise AssertionError("parsed to tell whether it is a config")

    monkeypatch.setattr(yaml, "load_all", parse)
    assert _is_config_file(str(path)) is False
