"""``packsched serve --record`` against the fake API server, and ``packsched verify-record`` on what it wrote: every
decision replayed by packsched's own scheduler, ties apart, differences listed, malformed records refused."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from live.fakeapi import SCHEDULING_POD_GROUPS, FakeApiServer
from live.harness import ROOT, SCHEDULER, all_bound, check_cluster, node, pod, start, wait, write_config
from packsched.cli.main import app
from packsched.live.record import SCHEMA

runner = CliRunner()
GANG_OF_2 = {"schedulingPolicy": {"gang": {"minCount": 2}}}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _verify(path: Path) -> tuple[int, dict[str, Any]]:
    res = runner.invoke(app, ["verify-record", str(path), "-o", "json"])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.stdout)


def _pending_condition(api: FakeApiServer, name: str) -> bool:
    p = api.get("pods", "default", name) or {}
    return any(
        c["type"] == "PodScheduled" and c["reason"] == "Unschedulable"
        for c in p.get("status", {}).get("conditions") or []
    )


def _record_waves(api: FakeApiServer, tmp_path: Path) -> tuple[Path, int, set[str]]:
    """serve --record over a few waves: a first pod alone (its binding seen before anything else happens), a
    wave that fills the nodes, pods that fit nowhere, a preemption, a node that joins. Answers the record, the
    scheduling attempts serve made and the pods it scheduled."""
    api.create("priorityclasses", {"metadata": {"name": "low"}, "value": 10})
    api.create("priorityclasses", {"metadata": {"name": "high"}, "value": 1000})
    for i in range(3):
        api.create("nodes", node(f"n{i}", cpu="2", memory="4Gi"))
    record = tmp_path / "decisions.jsonl"
    run = start(api, tmp_path, record=str(record))
    ctl = run.server.controller
    ours: set[str] = set()
    try:
        run.wait_ready()
        api.create("pods", pod("first", priority_class="low"))  # three empty nodes: a three-way tie
        ours.add("first")
        assert api.wait_for(all_bound(["first"]), 10)
        wave = [f"w{i}" for i in range(11)]  # 12 x 500m: every cpu of the three nodes
        for name in wave:
            api.create("pods", pod(name, priority_class="low"))
        ours |= set(wave)
        assert api.wait_for(all_bound(wave), 15)
        for name in ("big", "also-big"):  # fit nowhere, and may not preempt (priority 0)
            api.create("pods", pod(name, cpu="3"))
            ours.add(name)
        assert wait(lambda: _pending_condition(api, "big") and _pending_condition(api, "also-big"), 10)
        api.create("pods", pod("urgent", cpu="1", priority_class="high"))  # preempts two low pods
        ours.add("urgent")
        assert api.wait_for(all_bound(["urgent"]), 15)
        assert wait(lambda: any(e["reason"] == "Preempted" for e in api.objects("events")), 5)
        api.create("nodes", node("n3", cpu="4", memory="8Gi"))  # room for one of the big pods
        assert wait(lambda: len([n for n in ("big", "also-big") if all_bound([n])(api)]) == 1, 15)
    finally:
        assert run.stop() == 0
    check_cluster(api)
    return record, ctl.stats.attempts, {f"default/{n}" for n in ours}


def test_a_record_of_serve_verifies_with_no_differences(api: FakeApiServer, tmp_path: Path) -> None:
    record, attempts, ours = _record_waves(api, tmp_path)
    lines = _lines(record)
    head = lines[0]
    assert head["schema"] == SCHEMA and head["seed"] == 0 and head["preemptionMode"] == "delete"
    assert head["profiles"] == [SCHEDULER] and "RequestedToCapacityRatio" in head["config"]["text"]
    decisions = [ln for ln in lines if "decision" in ln]
    assert len(decisions) == attempts  # one line per scheduling cycle serve ran
    assert {d["decision"] for d in decisions} == ours  # every pod of ours was decided on; nobody else's
    assert decisions[0]["decision"] == "default/first" and decisions[0]["top"] == ["n0", "n1", "n2"]
    (preempting,) = [d for d in decisions if d["victims"]]
    assert preempting["decision"] == "default/urgent" and preempting["outcome"] == "unschedulable"
    assert len(preempting["victims"]) == 2 and preempting["nominated"]
    assert any(d["outcome"] == "unschedulable" and "Insufficient cpu" in d["message"] for d in decisions)
    assert {ln["resource"] for ln in lines if "event" in ln} >= {"nodes", "pods", "priorityclasses"}
    victim = preempting["victims"][0]
    assert any(
        ln.get("event") == "DELETED" and ln["object"]["metadata"]["name"] == victim.split("/")[1] for ln in lines
    )
    assert all(ln["ok"] for ln in lines if "bind" in ln)

    code, report = _verify(record)
    assert report["differences"] == [] and code == 0, report["differences"]
    assert report["counts"]["decisions"] == attempts
    assert report["counts"]["identical"] + report["counts"]["ties"] == attempts
    assert report["record"]["binds"] == len([ln for ln in lines if "bind" in ln])

    table = runner.invoke(app, ["verify-record", str(record)])
    assert table.exit_code == 0 and "no differences" in table.stdout


def test_a_tampered_decision_is_a_difference_and_another_best_node_a_tie(api: FakeApiServer, tmp_path: Path) -> None:
    record, _, _ = _record_waves(api, tmp_path)
    lines = _lines(record)
    nodes = {"n0", "n1", "n2", "n3"}
    # The first pod's three-way tie recorded as another of the three: a tie-break, not a difference.
    first = next(i for i, ln in enumerate(lines) if ln.get("decision") == "default/first")
    tied = [*lines]
    tied[first] = {**lines[first], "node": next(n for n in lines[first]["top"] if n != lines[first]["node"])}
    _write(tmp_path / "tie.jsonl", tied)
    code, report = _verify(tmp_path / "tie.jsonl")
    assert code == 0 and report["differences"] == []
    assert [(t["line"], t["fields"]) for t in report["ties"]] == [(first + 1, ["node"])]
    table = runner.invoke(app, ["verify-record", str(tmp_path / "tie.jsonl")])
    assert table.exit_code == 0 and "Tie-breaks" in table.stdout and "1 tie-break(s) apart" in table.stdout

    # A pod placed on a node that was not among the best: a difference, exit code 1.
    at = next(
        i for i, ln in enumerate(lines) if ln.get("outcome") == "scheduled" and len(ln["top"]) == 1 and i != first
    )
    other = sorted(nodes - {lines[at]["node"]})[0]
    tampered = [*lines]
    tampered[at] = {**lines[at], "node": other}
    _write(tmp_path / "tampered.jsonl", tampered)
    code, report = _verify(tmp_path / "tampered.jsonl")
    assert code == 1
    found = next(d for d in report["differences"] if d["line"] == at + 1)
    assert found["fields"] == ["node"] and found["recorded"]["node"] == other
    assert found["replayed"]["node"] == lines[at]["node"]
    table = runner.invoke(app, ["verify-record", str(tmp_path / "tampered.jsonl")])
    assert table.exit_code == 1 and "Differences" in table.stdout and lines[at]["decision"] in table.stdout


def test_malformed_records_are_refused_with_the_line(tmp_path: Path) -> None:
    head = {"schema": SCHEMA, "seed": 0, "kubeVersion": "", "preemptionMode": "delete", "config": None}
    event = {"t": 0.1, "event": "ADDED", "resource": "nodes", "object": node("n0")}
    cases: list[tuple[str, str]] = [
        (json.dumps(head) + "\n" + json.dumps(event) + "\n{not json\n", "line 3: malformed JSON"),
        (json.dumps({**head, "schema": "packsched.record/v9"}) + "\n", 'line 1: unknown schema "packsched.record/v9"'),
        ('{"seed": 0}\n', 'line 1: not a packsched record: no "schema" field'),
        ("", "line 1: empty record"),
        (json.dumps(head) + "\n" + json.dumps({**event, "resource": "widgets"}) + "\n", "line 2: unknown resource"),
        (json.dumps({**head, "featureGates": {"GenericWorkload": "yes"}}) + "\n", 'line 1: field "featureGates.'),
        (json.dumps({**head, "featureGates": {"Nope": True}}) + "\n", "line 1: featureGates: unrecognized feature"),
        (
            json.dumps(head) + '\n{"t": 1, "decision": "p", "outcome": "scheduled", "node": "n0"}\n',
            'line 2: field "decision"',
        ),
    ]
    for i, (text, message) in enumerate(cases):
        path = tmp_path / f"bad{i}.jsonl"
        path.write_text(text)
        res = runner.invoke(app, ["verify-record", str(path)])
        assert res.exit_code == 2, (text, res.output)
        assert res.stderr.startswith(f"error: {path}: {message}"), res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
    res = runner.invoke(app, ["verify-record", str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 2 and "cannot read" in res.stderr
    # serve killed while writing its last line: what comes before is verified, with a note
    cut = tmp_path / "cut.jsonl"
    cut.write_text(json.dumps(head) + "\n" + json.dumps(event) + "\n" + json.dumps(event)[:40])
    code, report = _verify(cut)
    assert code == 0 and report["record"]["events"] == 1
    (note,) = report["notes"]
    assert note.startswith("line 3 is cut short (malformed JSON: ") and note.endswith("up to the line before")


def test_a_record_with_only_events_and_defaults_verifies(tmp_path: Path) -> None:
    head = {"schema": SCHEMA, "seed": 3, "kubeVersion": "1.31", "preemptionMode": "delete", "config": None}
    lines = [
        head,
        {"t": 0.0, "event": "ADDED", "resource": "nodes", "object": node("n0")},
        {"t": 0.1, "event": "ADDED", "resource": "pods", "object": pod("a", scheduler="default-scheduler")},
        {
            "t": 0.2,
            "decision": "default/a",
            "profile": "default-scheduler",
            "outcome": "scheduled",
            "node": "n0",
            "top": ["n0"],
            "message": "",
            "nominated": None,
            "victims": [],
        },
        {"t": 0.3, "bind": "default/a", "node": "n0", "ok": True},
        {"t": 0.4, "decision": "default/nobody", "outcome": "unschedulable", "message": "0/1 nodes are available"},
    ]
    _write(tmp_path / "r.jsonl", lines)
    code, report = _verify(tmp_path / "r.jsonl")
    assert report["counts"] == {"decisions": 2, "identical": 1, "ties": 0, "differences": 1}
    assert report["differences"][0]["replayed"]["outcome"] == "unknown" and code == 1


def test_a_record_with_coschedulings_podgroups_reads_back(tmp_path: Path) -> None:
    """serve with Coscheduling records its PodGroups' events (resource "podgroups"): verify-record reads them (it
    refused the line as an unknown resource before)."""
    head = {"schema": SCHEMA, "seed": 0, "kubeVersion": "1.31", "preemptionMode": "delete", "config": None}
    group = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "g"}}
    group["metadata"]["namespace"] = "default"
    group["spec"] = {"minMember": 1}
    lines = [
        head,
        {"t": 0.0, "event": "ADDED", "resource": "nodes", "object": node("n0")},
        {"t": 0.0, "event": "ADDED", "resource": "podgroups", "object": group},
        {"t": 0.1, "event": "ADDED", "resource": "pods", "object": pod("a", scheduler="default-scheduler")},
        {"t": 0.2, "decision": "default/a", "profile": "default-scheduler", "outcome": "scheduled", "node": "n0"},
    ]
    _write(tmp_path / "r.jsonl", lines)
    code, report = _verify(tmp_path / "r.jsonl")
    assert report["counts"]["decisions"] == 1 and report["counts"]["identical"] == 1 and code == 0


def test_the_replay_follows_the_recorded_decision_not_its_own(tmp_path: Path) -> None:
    """A recorded failure where the replay finds room: one difference; the room stays free for the next pod, as it
    was in the recorded cluster."""
    head = {"schema": SCHEMA, "seed": 0, "kubeVersion": "", "preemptionMode": "delete", "config": None}

    def decided(t: float, name: str, **fields: Any) -> dict[str, Any]:
        return {"t": t, "decision": f"default/{name}", "profile": "default-scheduler", "top": [], "message": ""} | (
            {"nominated": None, "victims": []} | fields
        )

    lines = [
        head,
        {"t": 0.0, "event": "ADDED", "resource": "nodes", "object": node("n0", cpu="4")},
        {"t": 0.1, "event": "ADDED", "resource": "pods", "object": pod("a", cpu="3", scheduler="default-scheduler")},
        {"t": 0.1, "event": "ADDED", "resource": "pods", "object": pod("b", cpu="3", scheduler="default-scheduler")},
        decided(0.2, "a", outcome="unschedulable", message="0/1 nodes are available: 1 Insufficient cpu."),
        decided(0.3, "b", outcome="scheduled", node="n0", top=["n0"]),
        {"t": 0.4, "bind": "default/b", "node": "n0", "ok": True},
    ]
    _write(tmp_path / "r.jsonl", lines)
    code, report = _verify(tmp_path / "r.jsonl")
    assert code == 1 and report["counts"] == {"decisions": 2, "identical": 1, "ties": 0, "differences": 1}
    (diff,) = report["differences"]
    assert diff["pod"] == "default/a" and diff["fields"] == ["outcome"] and diff["replayed"]["node"] == "n0"


def test_serve_record_option_writes_the_record_on_sigterm(api: FakeApiServer, tmp_path: Path) -> None:
    """As a user runs it, with kube-scheduler 1.37's own gangs on (--feature-gates GenericWorkload=true): a gang of
    two is recorded and replayed with the plain pods."""
    kubeconfig = api.kubeconfig(str(tmp_path / "kubeconfig"))
    api.serve_generic_workload(37)
    for i in range(2):
        api.create("nodes", node(f"n{i}"))
    for i in range(4):
        api.create("pods", pod(f"p{i}"))
    api.create("pods", pod("huge", cpu="64"))
    api.create(SCHEDULING_POD_GROUPS, {"metadata": {"name": "g", "namespace": "default"}, "spec": GANG_OF_2})
    for name in ("g0", "g1"):
        member = pod(name)
        member["spec"]["schedulingGroup"] = {"podGroupName": "g"}
        api.create("pods", member)
    config = write_config(tmp_path)
    record = tmp_path / "serve.jsonl"
    args = ["serve", "--config", config, "--kubeconfig", kubeconfig, "--no-leader-elect", "--port", "0"]
    args += ["--feature-gates", "GenericWorkload=true"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "packsched.cli.main", *args, "--record", str(record)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert api.wait_for(all_bound([f"p{i}" for i in range(4)] + ["g0", "g1"]), 30)
        assert wait(lambda: _pending_condition(api, "huge"), 10)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr
    lines = _lines(record)  # complete lines only: flushed on the way out
    assert lines[0]["config"]["path"] == config and lines[0]["featureGates"] == {"GenericWorkload": True}
    assert {ln["decision"] for ln in lines if "decision" in ln} == {f"default/p{i}" for i in range(4)} | {
        "default/huge",
        "default/g0",
        "default/g1",
    }
    assert any(ln.get("resource") == "podgroups.v1beta1.scheduling.k8s.io" for ln in lines)
    code, report = _verify(record)
    assert code == 0 and report["counts"]["differences"] == 0

    bad = str(tmp_path / "no" / "such" / "dir.jsonl")
    refused = subprocess.run(
        [sys.executable, "-m", "packsched.cli.main", *args, "--record", bad],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"error: --record {bad}: cannot write: No such file or directory"
