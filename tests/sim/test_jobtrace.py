"""A job trace read as gangs (`packsched gen-jobs --from-trace`): Alibaba PAI's task table and a pod list with job
ids become PodGroups with every pod of the job, arriving and running as the job did in the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from packsched.api.errors import InputError
from packsched.api.manifests import load_manifests
from packsched.cli.main import app
from packsched.sim.jobtrace import PAI_COLUMNS, read_job_trace

runner = CliRunner()
PAI = Path(__file__).parents[2] / "examples" / "gangs" / "pai-task-table-sample.csv"


def test_pai_task_table_jobs_become_gangs_of_all_their_instances() -> None:
    r = read_job_trace(PAI, 100)
    assert r.fmt == "pai"
    assert r.unfinished == 1  # a9b8... is still Running: no end time
    assert r.rounded_tasks == 2  # 50 % and 25 % of a GPU
    by_name = {j.name: j for j in r.jobs}
    assert [j.name for j in r.jobs] == [
        "33cc44dd55ee66ff77001122",
        "6a5fc8b3d1e24f0c9b7a1e02",
        "0c2e7f9a4b1d3e5f6a7b8c9d",
        "f1e2d3c4b5a697887766554f",
    ]
    first = by_name["33cc44dd55ee66ff77001122"]
    assert (first.arrival, first.run, first.pods) == (0.0, 900.0, 3)  # 900 -> 1800 in the trace
    train = by_name["6a5fc8b3d1e24f0c9b7a1e02"]
    assert (train.arrival, train.run, train.pods, train.gpus) == (100.0, 3600.0, 5, 4)
    worker, ps = train.tasks
    assert (worker.name, worker.count, worker.cpu_milli, worker.memory_bytes, worker.gpus) == (
        "worker",
        4,
        6000,
        29 * 10**9,
        1,
    )
    assert (ps.name, ps.count, ps.cpu_milli, ps.gpus) == ("ps", 1, 4000, 0)
    assert by_name["f1e2d3c4b5a697887766554f"].tasks[0].name == "pytorchworker"  # a DNS label
    assert by_name["f1e2d3c4b5a697887766554f"].tasks[0].gpus == 8


def test_the_header_row_is_optional_and_the_limit_keeps_the_first_arrivals(tmp_path: Path) -> None:
    with_header = tmp_path / "tasks.csv"
    with_header.write_text(",".join(PAI_COLUMNS) + "\n" + PAI.read_text())
    assert read_job_trace(with_header, 100).jobs == read_job_trace(PAI, 100).jobs
    two = read_job_trace(PAI, 2).jobs
    assert [j.name for j in two] == [j.name for j in read_job_trace(PAI, 100).jobs[:2]]


def test_a_pod_list_with_job_ids_groups_its_pods_by_job_and_shape(tmp_path: Path) -> None:
    trace = tmp_path / "pods.csv"
    trace.write_text(
        "name,job_id,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,qos\n"
        "p1,Train/A,8000,65536,2,1000,50,650,LS\n"
        "p2,Train/A,8000,65536,2,1000,55,640,LS\n"
        "p3,Train/A,2000,4096,0,0,52,660,LS\n"
        "p4,b,1000,1024,1,1000,10,20,BE\n"
    )
    r = read_job_trace(trace, 10)
    assert r.fmt == "pod list"
    b, a = r.jobs
    assert (b.name, b.arrival, b.run, b.pods) == ("b", 0.0, 10.0, 1)
    assert (a.name, a.arrival, a.run, a.pods, a.gpus) == ("train-a", 40.0, 610.0, 3, 4)
    assert [(t.name, t.count, t.gpus) for t in a.tasks] == [("pods-0", 2, 2), ("pods-1", 1, 0)]


@pytest.mark.parametrize(
    ("text", "where", "says"),
    [
        ("", "", "the file is empty"),
        ("a,b,c\n1,2,3\n", "row 1", "not a job trace"),
        ("job_id,cpu_milli\nx,1\n", "row 1 (header)", "missing memory_mib"),
        (
            "j,t,1,Terminated,0,10,600,29,100,V100\nk,t,1,Terminated,0,10,600,29,100\n",
            "row 2",
            "has 9 columns, expected 10",
        ),
        ("j,t,1,Terminated,0,10,six,29,100,V100\n", "row 1, column plan_cpu", "must be a number"),
        ("j,t,1.5,Terminated,0,10,600,29,100,V100\n", "row 1, column inst_num", "must be a whole number"),
        ("j,t,1,Running,0,,600,29,100,V100\n", "", "no job of the trace has start and end times"),
    ],
)
def test_bad_traces_name_the_file_and_row(tmp_path: Path, text: str, where: str, says: str) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text(text)
    with pytest.raises(InputError) as exc:
        read_job_trace(trace, 10)
    e = exc.value.errors[0]
    assert e.file == str(trace) and e.path == where and says in e.message


def test_gen_jobs_from_a_trace_writes_gangs_that_compare(tmp_path: Path) -> None:
    out = tmp_path / "jobs"
    res = runner.invoke(app, ["gen-jobs", str(out), "--from-trace", str(PAI), "--nodes", "2", "--jobs", "2"])
    assert res.exit_code == 0, res.output
    assert "2 jobs (8 pods) from" in res.output
    cluster = load_manifests([str(out / "workload")])
    assert sorted((g.name, g.min_member) for g in cluster.pod_groups) == [
        ("33cc44dd55ee66ff77001122", 3),
        ("6a5fc8b3d1e24f0c9b7a1e02", 5),
    ]
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
    gangs = json.loads(res.output)["results"]["config-coscheduling"]
    assert gangs["jobs_started"] == 2 and gangs["jobs_never_started"] == 0


def test_gen_jobs_from_a_trace_refuses_the_synthetic_options(tmp_path: Path) -> None:
    res = runner.invoke(app, ["gen-jobs", str(tmp_path / "x"), "--from-trace", str(PAI), "--seed", "3"])
    assert res.exit_code == 2
    assert "--load and --seed shape the synthetic jobs" in res.output
    assert not (tmp_path / "x").exists()
