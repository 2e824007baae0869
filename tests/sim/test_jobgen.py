"""packsched gen-jobs: the synthetic job workload is seeded, follows its documented bounds, reads back as PodGroups
and Jobs, and compares gang-aware with pod-by-pod scheduling end to end."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from typer.testing import CliRunner

from packsched.api.manifests import load_manifests
from packsched.cli.main import app
from packsched.sim.jobgen import draw_jobs

runner = CliRunner()


def test_the_same_seed_gives_the_same_jobs_and_another_seed_others() -> None:
    a = draw_jobs(50, 8, 8, 0.9, seed=3)
    assert a == draw_jobs(50, 8, 8, 0.9, seed=3)
    assert a != draw_jobs(50, 8, 8, 0.9, seed=4)


def test_jobs_stay_within_the_documented_bounds() -> None:
    jobs = draw_jobs(400, 4, 8, 0.9, seed=1)
    assert jobs[0].arrival == 0.0
    assert all(b.arrival >= a.arrival for a, b in itertools.pairwise(jobs))
    assert all(1 <= j.workers * j.gpus <= 16 for j in jobs)  # at most half of the 4 x 8 GPUs
    assert max(j.workers * j.gpus for j in jobs) == 16
    assert all(j.gpus in (1, 2, 4, 8) for j in jobs)
    assert all(60 <= j.run <= 86400 for j in jobs)


def test_gen_jobs_writes_a_workload_that_compares_with_and_without_gangs(tmp_path: Path) -> None:
    out = tmp_path / "jobs"
    res = runner.invoke(app, ["gen-jobs", str(out), "--jobs", "12", "--nodes", "4", "--seed", "2"])
    assert res.exit_code == 0, res.output
    cluster = load_manifests([str(out / "workload")])
    assert len(cluster.nodes) == 4 and len(cluster.pod_groups) == 12
    res = runner.invoke(
        app,
        [
            "compare",
            str(out / "workload"),
            "--config",
            str(out / "config-coscheduling.yaml"),
            "--config",
            str(out / "config-pod-by-pod.yaml"),
            "-o",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    results = json.loads(res.output)["results"]
    gangs, by_pod = results["config-coscheduling"], results["config-pod-by-pod"]
    assert gangs["jobs_started"] + gangs["jobs_never_started"] == 12
    assert gangs["gpu_hours_in_partial_gangs"] == 0.0  # Coscheduling never binds part of a gang
    assert by_pod["gpu_hours_held_at_permit"] == 0.0  # nothing waits at Permit without it


def test_gen_jobs_refuses_a_directory_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("")
    res = runner.invoke(app, ["gen-jobs", str(tmp_path)])
    assert res.exit_code == 2
    assert "not a new or empty directory" in res.output
