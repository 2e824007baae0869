"""``packsched tune`` on a job workload (sim/jobtune.py): end to end on a tiny ``gen-jobs`` workload (8 jobs on 2
nodes, a run takes a few hundredths of a second), the gang metrics, seeds that redraw a synthetic workload's jobs,
and the errors. A tune here runs at most 2 trials on one tuning seed, with one worker; one full tune (the module's
fixture) is read by several tests."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from packsched.cli.main import app
from packsched.plugins.registry import in_tree_registry
from packsched.sim import jobgen
from packsched.sim.jobtune import JobRunResult, JobRunSpec, horizon, read_workload, run_job
from packsched.sim.tune import JOB_FIGURES, JOB_METRICS

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
GEN_ARGS = "--jobs 8 --nodes 2 --gpus-per-node 8 --load 1.5 --seed 1"
SPACE = """apiVersion: packsched.io/v1alpha1
kind: TuneSpace
spec:
  strategies: [LeastAllocated, MostAllocated]
  resources:
  - {name: cpu, weight: 1}
  - {name: nvidia.com/gpu, weight: {min: 1, max: 5}}
  coscheduling:
    permitWaitingTimeSeconds: {min: 10, max: 600}
    podGroupBackoffSeconds: {min: 0, max: 300}
"""


@pytest.fixture(scope="module")
def jobs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("jobs") / "jobs"
    result = runner.invoke(app, ["gen-jobs", str(folder), *GEN_ARGS.split()])
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture(scope="module")
def space(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("space") / "space.yaml"
    path.write_text(SPACE, encoding="utf-8")
    return path


def tune(workload: Path, space: Path, out: Path, *extra: str, code: int = 0) -> Any:
    args = ["tune", str(workload), "--space", str(space), "--trials", "2", "--seeds", "1", "--holdout-seeds", "2"]
    result = runner.invoke(app, [*args, "--workers", "1", "--out-dir", str(out), *extra, "-o", "json"])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout) if code == 0 else result.output


@pytest.fixture(scope="module")
def tuned(jobs_dir: Path, space: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """One tune with every default (metric, baselines), read by the tests below."""
    out = tmp_path_factory.mktemp("tuned") / "out"
    return out, tune(jobs_dir, space, out)


def trial_values(out: Path) -> list[tuple[str, ...]]:
    """trials.csv less what may differ between two identical tunes (the run times, the folder of the configs)."""
    with (out / "trials.csv").open(newline="", encoding="utf-8") as fh:
        return [tuple(v for k, v in row.items() if k not in ("config", "run_seconds")) for row in csv.DictReader(fh)]


def test_tune_on_a_gen_jobs_folder_end_to_end(jobs_dir: Path, tuned: tuple[Path, Any]) -> None:
    out, data = tuned
    assert data["trace"] is None
    workload = data["workload"]
    assert workload["path"] == str(jobs_dir / "workload") and workload["seeds_draw_jobs"]
    assert workload["generator"] == f"gen-jobs {GEN_ARGS}"
    assert data["metric"]["name"] == "job-wait-mean" and data["metric"]["arrived_pct"] is None
    assert data["study"]["complete"] == 2 and data["best"] is not None
    # baselines by default: gen-jobs' two configurations, then the stock strategies
    labels = [g["label"] for g in data["holdout"]]
    assert labels == [
        "tuned",
        "config-coscheduling",
        "config-pod-by-pod",
        "LeastAllocated",
        "MostAllocated",
        "RequestedToCapacityRatio",
    ]
    for group in data["holdout"]:
        assert set(group["values"]) == {"2"} and group["mean"] is not None
        assert group["jobs"]["never_started"]["mean"] == 0.0
    # pod by pod, a gang's first members run while the rest wait; with Coscheduling never
    by_label = {g["label"]: g for g in data["holdout"]}
    assert by_label["config-pod-by-pod"]["jobs"]["gpu_hours_in_partial_gangs"]["mean"] > 0
    assert by_label["config-coscheduling"]["jobs"]["gpu_hours_in_partial_gangs"]["mean"] == 0
    # every seed its own job set, drawn as gen-jobs draws it: seed 1's is the workload's own jobs.yaml
    folder = out / "workloads" / "jobs8-nodes2-gpus8-load1.5"
    drawn = {s: (folder / f"jobs-seed-{s}.yaml").read_text(encoding="utf-8") for s in (1, 2)}
    assert drawn[1] != drawn[2]
    assert drawn[1] == (jobs_dir / "workload" / "jobs.yaml").read_text(encoding="utf-8")
    # the best configuration: deployable (no GPUShare, Coscheduling with the chosen args), and it loads
    best = (out / "best-config.yaml").read_text(encoding="utf-8")
    assert "GPUShare" not in best and "name: Coscheduling" in best and "permitWaitingTimeSeconds" in best
    assert runner.invoke(app, ["validate", str(out / "best-config.yaml")]).exit_code == 0
    assert (out / "search.png").is_file() and (out / "trials.csv").is_file()


def test_the_reproduce_line_gives_the_held_out_value(tuned: tuple[Path, Any]) -> None:
    """best-config.yaml's `packsched gangs` command simulates the first held-out seed as the tune did."""
    out, data = tuned
    line = next(x for x in (out / "best-config.yaml").read_text().splitlines() if "Reproduce one seed" in x)
    result = runner.invoke(app, [*line.split("packsched ", 1)[1].split(), "-o", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"]
    assert summary["never_started"] == 0  # then the gang report's mean wait is the metric's
    assert summary["wait_mean"] == pytest.approx(data["holdout"][0]["values"]["2"], abs=1e-3)


def test_the_same_seed_gives_the_same_trials_and_best(
    jobs_dir: Path, space: Path, tuned: tuple[Path, Any], tmp_path: Path
) -> None:
    out, data = tuned
    again = tune(jobs_dir, space, tmp_path / "again", "--baselines", "", "--holdout-seeds", "")
    assert trial_values(tmp_path / "again") == trial_values(out)
    assert again["best"] == data["best"]


def test_a_resumed_study_must_tune_the_same_workload(space: Path, tuned: tuple[Path, Any], tmp_path: Path) -> None:
    out, _ = tuned
    other = tmp_path / "other"
    assert runner.invoke(app, ["gen-jobs", str(other), "--jobs", "6", "--nodes", "3"]).exit_code == 0
    message = tune(other, space, out, "--baselines", "", code=2)
    assert "searched another setup (workload differ)" in message


def test_a_fixed_workload_is_one_job_set_whatever_the_seed(tmp_path: Path, space: Path) -> None:
    """Manifests without gen-jobs' line (here its jobs.yaml renamed): no drawing, the seeds are the simulator's."""
    folder = tmp_path / "fixed"
    assert runner.invoke(app, ["gen-jobs", str(folder), "--jobs", "6", "--nodes", "3"]).exit_code == 0
    jobs = folder / "workload" / "jobs.yaml"
    jobs.rename(folder / "workload" / "my-jobs.yaml")
    out = tmp_path / "out"
    data = tune(folder / "workload", space, out, "--trials", "1", "--baselines", "", "--holdout-seeds", "")
    assert data["workload"]["generator"] is None and not data["workload"]["seeds_draw_jobs"]
    assert not (out / "workloads").exists()
    assert "one fixed set of jobs" in (out / "best-config.yaml").read_text(encoding="utf-8")


def test_metrics_count_a_job_never_started_as_waiting_until_the_end() -> None:
    rows = [
        {"wait": 10.0, "submitted": 0.0, "started": 10.0, "gpu_seconds_held_at_permit": 3600.0,
         "gpu_seconds_in_partial_gangs": 0.0, "permit_timeouts": 1},
        {"wait": 30.0, "submitted": 5.0, "started": 35.0, "gpu_seconds_held_at_permit": 0.0,
         "gpu_seconds_in_partial_gangs": 7200.0, "permit_timeouts": 0},
        {"wait": None, "submitted": 40.0, "started": None, "gpu_seconds_held_at_permit": 1800.0,
         "gpu_seconds_in_partial_gangs": 0.0, "permit_timeouts": 2},
    ]  # fmt: skip
    r = JobRunResult.of("x", 1, rows, 100.0, 0.5)
    assert (r.jobs, r.started, r.never_started, r.permit_timeouts) == (3, 2, 1, 3)
    assert r.wait_mean == pytest.approx((10 + 30 + 60) / 3)
    assert r.wait_p50 == 30.0 and r.wait_p95 == pytest.approx(30 + 0.9 * 30)
    assert (r.gpu_hours_held_at_permit, r.gpu_hours_in_partial_gangs) == (1.5, 2.0)
    values = {name: m.of(r) for name, m in JOB_METRICS.items()}
    assert values == {
        "job-wait-mean": r.wait_mean,
        "job-wait-p50": 30.0,
        "job-wait-p95": r.wait_p95,
        "jobs-never-started": 1.0,
        "gpu-hours-held-at-permit": 1.5,
        "gpu-hours-in-partial-gangs": 2.0,
    }
    assert JobRunResult.of("x", 1, [], 0.0, 0.0).wait_mean is None


def test_a_job_that_never_fits_waits_until_the_horizon(tmp_path: Path) -> None:
    """A job whose pod asks more GPUs than a node has never starts: the run stops at the horizon (the last
    arrival plus every job's run time plus an hour) and counts it as waiting until then."""
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / "cluster.yaml").write_text(jobgen.dump(jobgen.cluster_documents(2, 8), ""), encoding="utf-8")
    specs = [jobgen.JobSpec("fits", 2, 4, 0.0, 600.0), jobgen.JobSpec("huge", 1, 8, 100.0, 300.0)]
    docs = jobgen.job_documents(specs)
    docs[-1]["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"][jobgen.GPU] = "16"
    docs[-1]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"][jobgen.GPU] = "16"
    (folder / "jobs.yaml").write_text(jobgen.dump(docs, ""), encoding="utf-8")
    workload = read_workload(str(folder))
    assert workload.generator is None and workload.jobs == 2
    from packsched.api.manifests import load_manifests

    assert horizon(load_manifests([str(folder)])) == 100.0 + 600.0 + 300.0 + 3600.0
    config = tmp_path / "config.yaml"
    config.write_text(jobgen.dump([jobgen.config_document(True)], ""), encoding="utf-8")
    r = run_job(JobRunSpec("x", 0, workload.manifests, None, str(config)))
    assert (r.started, r.never_started, r.end_time) == (1, 1, 4600.0)
    assert r.wait_mean == pytest.approx((0.0 + 4500.0) / 2)
    assert set(in_tree_registry())  # (the registry the run used)


@pytest.mark.parametrize(
    ("setup", "extra", "message"),
    [
        ("no-jobs", (), "no job: the manifests define no PodGroup"),
        ("empty", (), "no manifest files"),
        ("trace-space", (), "spec.resources[1].name: 'alibabacloud.com/gpu-milli' is the GPU trace's"),
        ("", ("--pods", "default", "--tie-break", "random"), "--pods, --tie-break: only for a GPU trace"),
        ("", ("--metric", "unallocated-gpu"), "(unallocated-gpu is for a GPU trace)"),
        ("", ("--baselines", "FGD"), "--baselines: unknown 'FGD' on a job workload"),
        ("no-configs", ("--baselines", "workload"), "--baselines workload: no config-*.yaml beside the workload"),
    ],
)
def test_bad_input_is_one_clear_error_with_exit_code_2(
    jobs_dir: Path, space: Path, tmp_path: Path, setup: str, extra: tuple[str, ...], message: str
) -> None:
    workload, space_path = jobs_dir, space
    if setup in ("no-jobs", "no-configs"):
        workload = tmp_path / "w"
        workload.mkdir()
        (workload / "cluster.yaml").write_bytes((jobs_dir / "workload" / "cluster.yaml").read_bytes())
        if setup == "no-configs":
            (workload / "jobs.yaml").write_bytes((jobs_dir / "workload" / "jobs.yaml").read_bytes())
    elif setup == "empty":
        workload = tmp_path / "w"
        (workload / "workload").mkdir(parents=True)
    elif setup == "trace-space":
        space_path = tmp_path / "trace-space.yaml"
        space_path.write_text(SPACE.replace("nvidia.com/gpu", "alibabacloud.com/gpu-milli"), encoding="utf-8")
    output = tune(workload, space_path, tmp_path / "out", *extra, code=2)
    assert message in output.replace("\n", " ")
    assert "Traceback" not in output


def test_the_command_lines_job_metric_names_and_the_pages_figures_are_the_tuners() -> None:
    from packsched.sim.defaults import JOB_METRIC_NAMES
    from packsched.sim.htmlreport.page import JOB_FIGURES as PAGE_FIGURES
    from packsched.sim.htmlreport.page import TUNE_AXES

    assert tuple(JOB_METRICS) == JOB_METRIC_NAMES
    assert all(m.direction == "minimize" for m in JOB_METRICS.values())
    assert tuple(k for k, _ in PAGE_FIGURES) == JOB_FIGURES
    assert set(JOB_METRICS) <= set(TUNE_AXES)


def test_the_example_jobs_space_loads_and_makes_loadable_configurations() -> None:
    from packsched.config.loader import load_config_data
    from packsched.sim.jobtune import check_space
    from packsched.sim.tunespace import config_document, load_space

    space = load_space(str(ROOT / "examples" / "tune" / "space-jobs.yaml"))
    check_space(space)
    assert [a.name for a in space.coscheduling] == [
        "permitWaitingTimeSeconds",
        "podGroupBackoffSeconds",
        "podGroupRejectPercentage",
    ]
    choice = space.pick(lambda _n, rng: rng.high, lambda _n, options: options[-1])
    cfg = load_config_data(config_document(choice, gpu_share=False), "generated", set(in_tree_registry()))
    (profile,) = cfg.profiles
    assert "GPUShare" not in [p.name for p in profile.plugins.multi_point.enabled]
    assert profile.plugin_config["Coscheduling"]["podGroupRejectPercentage"] == 100


def test_the_summary_validates_and_the_page_shows_the_gang_figures(tuned: tuple[Path, Any]) -> None:
    from jsonschema import Draft202012Validator

    from packsched.sim.htmlreport.page import tune_page

    out, data = tuned
    schema = json.loads((ROOT / "schemas" / "tune.v1.schema.json").read_text(encoding="utf-8"))
    for doc in (data, json.loads((out / "summary.json").read_text(encoding="utf-8"))):
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in Draft202012Validator(schema).iter_errors(doc)]
        assert not errors
    page = tune_page(data, {"trials": [], "best_config": None})
    text = json.dumps(page, ensure_ascii=False)
    assert "job workload" in text and "jobs never started (mean ± SD)" in text
    assert "GPU-h in partial gangs (mean ± SD)" in text and "unallocated GPU %" not in text


def test_ctrl_c_keeps_the_finished_trials_and_the_same_command_resumes(
    jobs_dir: Path, space: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from packsched.sim import sweep
    from packsched.sim.sweep import Interrupted

    real = sweep.run_all  # tune imports the sweep's functions when it runs: patched there
    calls: list[int] = []

    def interrupted_second(run: Any, specs: Any, workers: int, on_done: Any = None, on_pods: Any = None) -> Any:
        calls.append(len(specs))
        if len(calls) == 2:
            raise Interrupted([], len(specs))
        return real(run, specs, workers, on_done, on_pods)

    monkeypatch.setattr(sweep, "run_all", interrupted_second)
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["tune", str(jobs_dir), "--space", str(space), "--trials", "2", "--seeds", "1", "--holdout-seeds", "",
              "--workers", "1", "--out-dir", str(out)],
    )  # fmt: skip
    assert result.exit_code == 130, result.output
    stopped = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert stopped["interrupted"] == {"phase": "search"}
    assert (stopped["study"]["complete"], stopped["study"]["failed"]) == (1, 1)
    monkeypatch.setattr(sweep, "run_all", real)
    resumed = tune(jobs_dir, space, out, "--holdout-seeds", "")
    assert (resumed["study"]["complete"], resumed["study"]["finished_now"]) == (2, 1)
