"""The gang examples under examples/gangs, run through the command line (golden tests): the facts
docs/guides/gangs.md states about each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from packsched.cli.main import app

EX = Path(__file__).resolve().parents[1] / "examples" / "gangs"
runner = CliRunner()
TIMEOUT = "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin Coscheduling."


def run(command: str, workload: str) -> dict[str, Any]:
    args = [command, str(EX / "cluster.yaml"), str(EX / workload), "--config", str(EX / "config.yaml"), "-o", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def events_of(data: dict[str, Any], prefix: str) -> list[tuple[float, str, str]]:
    return [(e["time"], e["kind"], e["pod"]) for e in data["events"] if e["pod"].startswith(prefix)]


def only_gang(data: dict[str, Any]) -> dict[str, Any]:
    (gang,) = data["gangs"]
    row: dict[str, Any] = gang
    return row


def test_a_gang_that_fits_is_bound_together_at_0s() -> None:
    sim = run("simulate", "gang-fits.yaml")
    train = [f"prod/llm-train-{i}" for i in range(3)]
    # the first two wait at Permit, the third completes the gang: the three are bound at 0s
    assert events_of(sim, "prod/llm-train")[:5] == [
        (0.0, "waiting", train[0]),
        (0.0, "waiting", train[1]),
        (0.0, "scheduled", train[2]),
        (0.0, "scheduled", train[0]),
        (0.0, "scheduled", train[1]),
    ]
    placed = {p["pod"]: p for p in sim["placements"]}
    assert all(placed[p]["started"] == 0.0 and placed[p]["finished"] == 3600.0 for p in train)
    gang = only_gang(run("gangs", "gang-fits.yaml"))
    assert (gang["phase"], gang["started"], gang["wait"], gang["permit_timeouts"]) == ("Finished", 0.0, 0.0, 0)
    assert gang["occupied_by"] == "prod/llm-train"  # the workers' owner, the Job
    assert gang["gpu_seconds_held_at_permit"] == 0.0


def test_a_gang_waits_for_a_quota_reclaim_and_is_bound_at_10s() -> None:
    sim = run("simulate", "gang-quota-reclaim.yaml")
    gang = events_of(sim, "prod/sweep")
    # 3 workers fit at once and wait; the other 7 are nominated at 10s (research's borrowed pods preempted)
    assert [p for t, k, p in gang if k == "waiting" and t == 10.0][:3] == [f"prod/sweep-{i}" for i in range(3)]
    nominated = [p for t, k, p in gang if k == "nominated"]
    assert sorted(nominated) == [f"prod/sweep-{i}" for i in range(3, 10)]
    assert all(t == 10.0 for t, k, _ in gang if k == "nominated")
    preempted = [e for e in sim["events"] if e["kind"] == "preempted"]
    assert len(preempted) == 7 and all(e["pod"].startswith("research/") and e["time"] == 10.0 for e in preempted)
    # each of the 7 backs off after its preempting cycle (10 + 1 = 11.0 s, window 11 s: the 12 s flush), but once
    # the research Job's replacements are rejected nothing is active, so Pop takes them from the backoff queue at
    # 10s (SchedulerPopFromBackoffQ): they are placed then, the last completes the gang, and the ten are bound
    # together at 10s (before: at 11s, after their 1 s backoff)
    assert [p for t, k, p in gang if k == "waiting" and t == 10.0][3:] == [f"prod/sweep-{i}" for i in range(3, 9)]
    bound = [(t, p) for t, k, p in gang if k == "scheduled"]
    assert sorted(p for _, p in bound) == [f"prod/sweep-{i}" for i in range(10)]
    assert {t for t, _ in bound} == {10.0}
    row = only_gang(run("gangs", "gang-quota-reclaim.yaml"))
    assert (row["submitted"], row["started"], row["wait"], row["permit_timeouts"]) == (10.0, 10.0, 0.0, 0)


def test_a_gang_that_times_out_four_times_then_starts_at_5m() -> None:
    sim = run("simulate", "gang-times-out.yaml")
    gang = [e for e in sim["events"] if e["pod"].startswith("dev/sweep")]
    # 9 of the 10 workers fit and wait at 10s, the tenth fits nowhere (one missing member is within
    # podGroupRejectPercentage: the nine are not rejected in PostFilter)
    at_10 = [(e["kind"], e["pod"]) for e in gang if e["time"] == 10.0]
    assert [k for k, _ in at_10] == ["waiting"] * 9 + ["unschedulable"]
    assert "optimistic rejection" not in json.dumps(gang)
    timeouts = [e for e in gang if e["reason"] == TIMEOUT]
    assert len(timeouts) == 36
    assert sorted({e["time"] for e in timeouts}) == [70.0, 130.0, 190.0, 250.0]  # four rounds of 9
    bound = [e for e in gang if e["kind"] == "scheduled"]
    assert len(bound) == 10 and {e["time"] for e in bound} == {300.0}
    assert not [e for e in sim["events"] if e["pod"].startswith("dev/batch") and e["kind"] == "preempted"]
    row = only_gang(run("gangs", "gang-times-out.yaml"))
    assert (row["submitted"], row["started"], row["wait"], row["permit_timeouts"]) == (10.0, 300.0, 290.0, 36)
    assert f"{row['gpu_seconds_held_at_permit'] / 3600:.2f}" == "0.72"


def test_the_guides_summary_line() -> None:
    result = runner.invoke(
        app, ["gangs", str(EX / "cluster.yaml"), str(EX / "gang-times-out.yaml"), "--config", str(EX / "config.yaml")]
    )
    assert result.exit_code == 0, result.output
    assert (
        "1 group(s): 1 started, 0 never started; wait mean 4m50s, p50 4m50s, p95 4m50s; 0.72 GPU-hours held at "
        "Permit, 0.00 in partial gangs; 36 Permit timeout(s)"
    ) in " ".join(result.output.split())


# -- kube-scheduler's own gang scheduling (examples/gangs/upstream-gang-1.35.yaml, -1.36.yaml) ---------------------

# 1.35 (1.36 places the Job's last pod first: its creation let the gang into the queue, before the siblings it woke)
UPSTREAM_EVENTS = [
    (0.0, "waiting", "default/llm-train-0"),
    (0.0, "waiting", "default/llm-train-1"),
    (0.0, "scheduled", "default/llm-train-2"),
    (0.0, "scheduled", "default/llm-train-0"),
    (0.0, "scheduled", "default/llm-train-1"),
    (60.0, "waiting", "default/eval-0"),
    (60.0, "scheduled", "default/eval-1"),
    (60.0, "scheduled", "default/eval-0"),
]


def simulate_upstream(release: str, *args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["simulate", str(EX / f"upstream-gang-{release}.yaml"), "-o", "json", *args])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_upstream_gangs_are_bound_together_and_wait_for_their_group_object() -> None:
    gates = {"1.35": "GenericWorkload=true,GangScheduling=true", "1.36": "GenericWorkload=true,GangScheduling=true"}
    gates["1.37"] = "GenericWorkload=true"  # 1.37 has no GangScheduling gate
    for release in ("1.35", "1.36", "1.37"):
        sim = simulate_upstream(release, "--config", str(EX / f"config-upstream-{release}.yaml"))
        expected = UPSTREAM_EVENTS
        if release == "1.36":
            rename = {"default/llm-train-0": "default/llm-train-2", "default/llm-train-1": "default/llm-train-0"}
            rename["default/llm-train-2"] = "default/llm-train-1"
            expected = [(t, k, rename.get(p, p)) for t, k, p in UPSTREAM_EVENTS]
        assert [(t, k, p) for t, k, p in events_of(sim, "default/") if k != "completed"] == expected
        assert sim["summary"] == {"pods": 5, "succeeded": 5} and not sim["warnings"]
        # the same with the gates on the command line instead of the config file
        flags = ["--kube-version", release, "--feature-gates", gates[release]]
        assert simulate_upstream(release, *flags)["events"] == sim["events"]


def test_upstream_gangs_with_the_gates_off_are_scheduled_pod_by_pod() -> None:
    sim = simulate_upstream("1.35", "--kube-version", "1.35")
    assert not [e for e in sim["events"] if e["kind"] == "waiting"]
    assert {e["time"] for e in sim["events"] if e["kind"] == "scheduled"} == {0.0}
    assert (
        "spec.workloadRef: the API server drops the field with the feature gate GenericWorkload off"
        in (sim["warnings"][0])
    )


def gangs_upstream(release: str, *args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["gangs", str(EX / f"upstream-gang-{release}.yaml"), "-o", "json", *args])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_gangs_reports_kube_schedulers_own_gangs() -> None:
    """`packsched gangs` on the upstream examples: the 1.35 Workload's pod groups and the 1.36 PodGroups, the
    training gang bound at 0s, the evaluation gang at 1m0s when its object appears (its wait starts there)."""
    names = {"1.35": ("llm-train/workers", "eval/shards"), "1.36": ("llm-train", "eval"), "1.37": ("llm-train", "eval")}
    apis = {"1.35": ("Workload", "scheduling.k8s.io/v1alpha1"), "1.36": ("PodGroup", "scheduling.k8s.io/v1alpha2")}
    apis["1.37"] = ("PodGroup", "scheduling.k8s.io/v1beta1")
    for release in ("1.35", "1.36", "1.37"):
        data = gangs_upstream(release, "--config", str(EX / f"config-upstream-{release}.yaml"))
        kind, api = apis[release]
        common = {"namespace": "default", "kind": kind, "api_version": api, "phase": None, "occupied_by": None}
        common |= {"running": 0, "failed": 0}
        common |= {"gpu_seconds_held_at_permit": 0.0, "gpu_seconds_in_partial_gangs": 0.0, "permit_timeouts": 0}
        assert data["gangs"] == [
            {**common, "name": names[release][0], "min_member": 3, "members": 3, "succeeded": 3}
            | {"submitted": 0.0, "started": 0.0, "wait": 0.0},
            {**common, "name": names[release][1], "min_member": 2, "members": 2, "succeeded": 2}
            | {"submitted": 60.0, "started": 60.0, "wait": 0.0},
        ]
        assert data["warnings"] == []
        assert (data["summary"]["groups"], data["summary"]["started"]) == (2, 2)


def test_gangs_table_names_the_api_of_each_group() -> None:
    result = runner.invoke(
        app, ["gangs", str(EX / "upstream-gang-1.36.yaml"), "--config", str(EX / "config-upstream-1.36.yaml")]
    )
    assert result.exit_code == 0, result.output
    lines = [" ".join(line.replace("│", " ").split()) for line in result.output.splitlines()]
    assert "default/llm-train PodGroup k8s.io 3 3 - 0s 0s 0s 0.00 0.00 0" in lines
    assert "default/eval PodGroup k8s.io 2 2 - 1m0s 1m0s 0s 0.00 0.00 0" in lines


def test_gangs_with_the_gates_off_warn_and_wait_no_less_than_zero() -> None:
    """Without GenericWorkload the eval pods are bound at 0s, before their PodGroup exists: the gang had no effect,
    and its wait counts from its first pod, not from the PodGroup."""
    data = gangs_upstream("1.36", "--kube-version", "1.36")
    assert data["warnings"][0] == (
        "kube-scheduler 1.36 runs no GangScheduling (it needs the feature gates GenericWorkload and GangScheduling): "
        "the PodGroups (scheduling.k8s.io/v1alpha2) have no effect (pods are scheduled one by one)"
    )
    evals = data["gangs"][1]
    assert (evals["name"], evals["submitted"], evals["started"], evals["wait"]) == ("eval", 0.0, 0.0, 0.0)


def test_1_37_gangs_with_the_gate_off_name_the_one_gate_1_37_has() -> None:
    data = gangs_upstream("1.37", "--kube-version", "1.37")
    assert data["warnings"][0] == (
        "kube-scheduler 1.37 runs no GangScheduling (it needs the feature gate GenericWorkload): the PodGroups "
        "(scheduling.k8s.io/v1beta1) have no effect (pods are scheduled one by one)"
    )


def test_explain_of_an_upstream_gang_member_shows_its_group() -> None:
    args = ["explain", str(EX / "upstream-gang-1.35.yaml"), "--config", str(EX / "config-upstream-1.35.yaml")]
    result = runner.invoke(app, [*args, "--pod", "default/eval-1", "-o", "json"])
    assert result.exit_code == 0, result.output
    group = json.loads(result.stdout)["group"]
    assert {k: group[k] for k in ("name", "kind", "api_version", "exists", "min_member", "bound")} == {
        "name": "eval/shards",
        "kind": "Workload",
        "api_version": "scheduling.k8s.io/v1alpha1",
        "exists": True,
        "min_member": 2,
        "bound": 2,
    }
    assert [m["pod"] for m in group["members"]] == ["default/eval-0", "default/eval-1"]
    table = runner.invoke(app, [*args, "--pod", "default/eval-1"])
    assert "default/eval/shards (minCount 2): 2 bound, 0 waiting at Permit, 0 pending" in table.output


WAITS_1_35 = """
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  allocatable: {cpu: "96", memory: 1000Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: train, namespace: default}
spec:
  podGroups:
  - name: workers
    policy: {gang: {minCount: 3}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: default}
spec:
  parallelism: 3
  completions: 3
  template:
    spec:
      workloadRef: {name: train, podGroup: workers}
      restartPolicy: Never
      containers:
      - name: worker
        image: registry.example.com/train:1.0
        resources:
          requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "4"}
          limits: {nvidia.com/gpu: "4"}
"""


def explain(args: list[str], pod: str) -> tuple[dict[str, Any], str]:
    """explain's JSON and its table for ``pod``."""
    result = runner.invoke(app, ["explain", *args, "--pod", pod, "-o", "json"])
    assert result.exit_code == 0, result.output
    table = runner.invoke(app, ["explain", *args, "--pod", pod])
    assert table.exit_code == 0, table.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data, table.output


def test_explain_at_2m_shows_a_coscheduling_gang_waiting_at_permit_and_where_its_last_member_does_not_fit() -> None:
    args = [str(EX / "cluster.yaml"), str(EX / "gang-times-out.yaml"), "--config", str(EX / "config.yaml")]
    data, table = explain([*args, "--at", "2m"], "dev/sweep-9")
    # at 2m, nine workers hold the nine free GPUs at Permit (their 60 s wait runs from 1m10s), the tenth fits nowhere
    assert (data["at"], data["selected"], data["waiting"], data["reason"]) == (
        120.0,
        "gpu-2",
        "Permit",
        "waiting at Permit (Coscheduling)",
    )
    group = data["group"]
    counts = ("bound", "waiting_at_permit", "pending", "not_created", "gone")
    assert {k: group[k] for k in counts} == {
        "bound": 0,
        "waiting_at_permit": 9,
        "pending": 1,
        "not_created": 0,
        "gone": 0,
    }
    members = {m["pod"]: m for m in group["members"]}
    left = members["dev/sweep-8"]
    assert (left["state"], left["node"]) == ("pending", None)
    assert left["reason"].startswith("0/4 nodes are available: 4 Insufficient nvidia.com/gpu.")
    assert [(n["node"], n["feasible"], n["rejected_by"], n["reasons"]) for n in left["nodes"]] == [
        (f"gpu-{i}", False, "NodeResourcesFit", ["Insufficient nvidia.com/gpu"]) for i in range(4)
    ]
    assert all(m["state"] == "waiting" and m["nodes"] is None for k, m in members.items() if k != "dev/sweep-8")
    assert members["dev/sweep-9"]["node"] == "gpu-2"
    assert "dev/sweep (minMember 10): 0 bound, 9 waiting at Permit, 1 pending" in table
    assert "Assumed on node gpu-2, waiting at Permit (Coscheduling)" in table
    assert "Nodes for dev/sweep-8" in table
    assert "4: gpu-0, gpu-1, gpu-2, gpu-3" in table and "Insufficient nvidia.com/gpu (NodeResourcesFit)" in table
    # at the end the gang is bound whole: nothing waits, no member lists its nodes
    end, _ = explain(args, "dev/sweep-9")
    assert "at" not in end and "waiting" not in end
    assert (end["group"]["bound"], end["group"]["waiting_at_permit"], end["group"]["pending"]) == (10, 0, 0)
    assert all(m["nodes"] is None for m in end["group"]["members"])


def test_explain_of_a_1_37_gang_that_cannot_complete_lists_every_members_nodes() -> None:
    args = [str(EX / "upstream-gang-waits-1.37.yaml"), "--config", str(EX / "config-upstream-1.37.yaml")]
    data, table = explain(args, "default/llm-train-4")
    group = data["group"]
    assert (group["api_version"], group["min_member"], group["bound"], group["pending"]) == (
        "scheduling.k8s.io/v1beta1",
        5,
        0,
        5,
    )
    members = {m["pod"]: m for m in group["members"]}
    # the group's last cycle placed four (filters passed on some node) and not the fifth: none is bound
    assert [n["feasible"] for n in members["default/llm-train-4"]["nodes"]] == [False, False]
    assert all(any(n["feasible"] for n in members[f"default/llm-train-{i}"]["nodes"]) for i in range(4))
    assert members["default/llm-train-0"]["reason"].startswith("pod group is unschedulable, minCount (5)")
    assert "default/llm-train (minCount 5): 0 bound, 0 waiting at Permit, 5 pending" in table
    assert "Nodes for default/llm-train-4" in table


def test_explain_at_shows_a_1_35_gang_waiting_at_permit_and_members_held_at_pre_enqueue(tmp_path: Path) -> None:
    manifest = tmp_path / "train.yaml"
    manifest.write_text(WAITS_1_35)
    config = str(EX / "config-upstream-1.35.yaml")
    data, table = explain([str(manifest), "--config", config, "--at", "1m"], "default/train-0")
    group = data["group"]
    # two workers fill the node and wait at Permit (GangScheduling's 5 min) for the third, which fits nowhere
    assert (group["bound"], group["waiting_at_permit"], group["pending"]) == (0, 2, 1)
    states = {m["pod"]: (m["state"], m["node"]) for m in group["members"]}
    assert states == {
        "default/train-0": ("waiting", "gpu-0"),
        "default/train-1": ("waiting", "gpu-0"),
        "default/train-2": ("pending", None),
    }
    assert "waiting at Permit (GangScheduling)" in table
    # eval's pods wait at PreEnqueue for their Workload (created at 60s): pending, never tried, no nodes
    data, _ = explain([str(EX / "upstream-gang-1.35.yaml"), "--config", config, "--at", "30s"], "default/eval-0")
    assert data["attempts"] == 0 and data["group"]["pending"] == 2
    assert all(m["nodes"] is None and "to appear in scheduling queue" in m["reason"] for m in data["group"]["members"])


def test_explain_at_refuses_a_bad_time() -> None:
    result = runner.invoke(app, ["explain", str(EX / "gang-fits.yaml"), "--pod", "prod/llm-train-0", "--at", "-5m"])
    assert result.exit_code == 2
    assert "--at: must not be negative" in result.output
