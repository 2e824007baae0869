"""kube-scheduler's own gangs on the live cluster (feature gate GenericWorkload): serve watches the Workloads (1.35)
or PodGroups (1.36, 1.37) of scheduling.k8s.io at the version the --kube-version serves, schedules a group's pods
as the simulator does (1.35: each pod, held at Permit until the gang is complete; 1.36+: the pod-group cycle),
writes the condition upstream writes on a 1.36+ PodGroup, and needs only what deploy/rbac-generic-workload.yaml
grants."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import yaml

from live.fakeapi import SCHEDULING_POD_GROUPS, FakeApiServer
from live.harness import DEPLOY, all_bound, check_cluster, node, pod, wait, write_config
from live.test_deploy import DISCOVERY, _rbac_request
from packsched.config.loader import load_config
from packsched.config.versions import parse_kube_version
from packsched.live.kube import KubernetesPort
from packsched.live.port import SCHEDULING_POD_GROUPS as POD_GROUPS_RES
from packsched.live.port import SCHEDULING_WORKLOADS, Resource, generic_workload_resource
from packsched.live.serve import ServeOptions, Server
from packsched.plugins.registry import in_tree_registry

DEADLINE_S = 30  # generous: the machine running the tests may be loaded
RBAC_FILE = DEPLOY / "rbac-generic-workload.yaml"


class _Serving:
    """serve at ``1.<minor>`` with GenericWorkload (and GangScheduling) on, against the fake API server (serving
    that release's kind)."""

    def __init__(self, api: FakeApiServer, tmp: Path, minor: int, record: str = "") -> None:
        api.serve_generic_workload(minor)
        tmp.mkdir(parents=True, exist_ok=True)
        port = KubernetesPort.connect(api.kubeconfig(str(tmp / "kc")), timeout_s=2)
        cfg = load_config(
            write_config(tmp),
            set(in_tree_registry()),
            kube_version=parse_kube_version(f"1.{minor}"),
            # 1.35-1.36: the plugin has a gate of its own (1.37 enables it with GenericWorkload)
            feature_gates={"GenericWorkload": True, **({"GangScheduling": True} if minor < 37 else {})},
        )
        opts = ServeOptions(bind_address="127.0.0.1", port=0, watch_timeout_s=5, record=record)
        self.server = Server(port, cfg, in_tree_registry(), opts)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def watched(self) -> list[Resource]:
        return [i.res for i in self.server.informers]

    def __enter__(self) -> _Serving:
        self.thread.start()
        # (the GenericWorkload informer starts after the group's discovery document is read: wait for it too)
        kind = generic_workload_resource(self.server.config.kube_version.minor)

        def synced() -> bool:
            infs = list(self.server.informers)
            return any(i.res == kind for i in infs) and all(i.synced.is_set() for i in infs)

        assert wait(synced, DEADLINE_S), "informers not synced"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive(), "serve did not stop"


def _pod_group(name: str, min_count: int) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default", "generation": 1},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


def _member(name: str, group: str, cpu: str = "500m") -> dict[str, Any]:
    p = pod(name, cpu=cpu)
    p["spec"]["schedulingGroup"] = {"podGroupName": group}
    return p


def _condition(api: FakeApiServer, group: str, ctype: str) -> dict[str, Any]:
    pg = api.get(SCHEDULING_POD_GROUPS, "default", group) or {}
    conds = [c for c in (pg.get("status") or {}).get("conditions") or [] if c.get("type") == ctype]
    return conds[0] if conds else {}


def _sample(text: str, name: str, **labels: str) -> float:
    """The value of metric ``name`` whose labels include ``labels`` in a Prometheus exposition (0 when absent)."""
    total = 0.0
    for line in text.splitlines():
        head, _, value = line.rpartition(" ")
        if head.split("{", 1)[0] == name and all(f'{k}="{v}"' in head for k, v in labels.items()):
            total += float(value)
    return total


def _bound(api: FakeApiServer, name: str) -> str:
    return str((api.store["pods"].get(("default", name)) or {}).get("spec", {}).get("nodeName") or "")


def _pod_condition(api: FakeApiServer, name: str) -> dict[str, Any]:
    p = api.get("pods", "default", name) or {}
    conds = [c for c in (p.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
    return conds[0] if conds else {}


def test_a_1_37_gang_is_scheduled_in_one_pod_group_cycle_and_its_podgroup_says_so(
    api: FakeApiServer, tmp_path: Path
) -> None:
    """v1beta1 PodGroups watched (not scheduler-plugins' PodGroup); the three pods bound; the group's
    PodGroupInitiallyScheduled condition True, written once; a later gang that does not fit is bound nowhere and
    its condition says why (Unschedulable, the group's message), as do its pods'."""
    api.create("nodes", node("n0", cpu="2"))
    api.create(SCHEDULING_POD_GROUPS, _pod_group("train", 3))
    names = ["w0", "w1", "w2"]
    api.create_many("pods", [_member(n, "train") for n in names])
    with _Serving(api, tmp_path, 37) as run:
        assert api.wait_for(all_bound(names), DEADLINE_S)
        assert POD_GROUPS_RES in run.watched()
        assert "podgroups" not in [r.plural for r in run.watched() if r.group == "scheduling.x-k8s.io"]
        assert wait(lambda: _condition(api, "train", "PodGroupInitiallyScheduled"), DEADLINE_S)
        cond = _condition(api, "train", "PodGroupInitiallyScheduled")
        assert (cond["status"], cond["reason"], cond["observedGeneration"]) == ("True", "Scheduled", 1)
        assert cond["lastTransitionTime"]
        # a gang of 3 with room for one pod of 500m left: rejected as a whole, nothing bound
        api.create(SCHEDULING_POD_GROUPS, _pod_group("big", 3))
        big = ["b0", "b1", "b2"]
        api.create_many("pods", [_member(n, "big") for n in big])
        assert wait(lambda: _condition(api, "big", "PodGroupInitiallyScheduled"), DEADLINE_S)
        cond = _condition(api, "big", "PodGroupInitiallyScheduled")
        assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
        assert cond["message"].startswith("minCount (3) cannot be satisfied: 1 scheduled, 1 remaining")
        assert wait(lambda: all(_pod_condition(api, n).get("status") == "False" for n in big), DEADLINE_S)
        assert not any((api.get("pods", "default", n) or {})["spec"].get("nodeName") for n in big)
        writes = run.server.controller.pod_group_conditions.writes
        assert writes == 2  # the watch showed each condition written: none written twice
        # upstream's pod-group metrics (1.36+ with GenericWorkload): one attempt per cycle, by the group's verdict
        text = run.server.metrics.exposition().decode()
        assert _sample(text, "scheduler_podgroup_schedule_attempts_total", result="scheduled") >= 1
        assert _sample(text, "scheduler_podgroup_schedule_attempts_total", result="unschedulable") >= 1
        name = "scheduler_podgroup_schedule_attempts_total"
        cycles = sum(_sample(text, name, result=r) for r in ("scheduled", "unschedulable"))
        assert _sample(text, "scheduler_podgroup_scheduling_algorithm_duration_seconds_count") == cycles
        assert _sample(text, "scheduler_podgroup_scheduling_attempt_duration_seconds_count", result="scheduled") >= 1
        # its minCount lowered to 1 (the one field 1.37 lets change): the group fits with the one pod there is room
        # for, and its condition turns True
        pg = api.get(SCHEDULING_POD_GROUPS, "default", "big") or {}
        pg["spec"]["schedulingPolicy"]["gang"]["minCount"] = 1
        api.update(SCHEDULING_POD_GROUPS, pg)
        assert wait(lambda: _condition(api, "big", "PodGroupInitiallyScheduled").get("status") == "True", DEADLINE_S)
        assert api.wait_for(lambda s: sum(bool(_bound(s, n)) for n in big) == 1, DEADLINE_S)
    check_cluster(api, expect_bound=4)


def test_a_1_37_gang_served_with_record_verifies_and_a_tampered_decision_differs(
    api: FakeApiServer, tmp_path: Path
) -> None:
    """serve --record with GenericWorkload at 1.37 (the gate given apart from the configuration's text): the
    header keeps the gate, the PodGroups' events are recorded under their own name (not Coscheduling's "podgroups"),
    each pod-group cycle writes one decision per member; verify-record replays the cycles with no difference, and
    a member's decision changed in the record is one."""
    from typer.testing import CliRunner

    from packsched.cli.main import app

    record = tmp_path / "gangs.jsonl"
    api.create("nodes", node("n0", cpu="2"))
    api.create(SCHEDULING_POD_GROUPS, _pod_group("train", 3))
    api.create_many("pods", [_member(n, "train") for n in ("w0", "w1", "w2")])
    with _Serving(api, tmp_path, 37, record=str(record)) as run:
        assert api.wait_for(all_bound(["w0", "w1", "w2"]), DEADLINE_S)
        api.create(SCHEDULING_POD_GROUPS, _pod_group("big", 3))  # room for one pod of 500m left: rejected whole
        api.create_many("pods", [_member(n, "big") for n in ("b0", "b1", "b2")])
        assert wait(lambda: _condition(api, "big", "PodGroupInitiallyScheduled"), DEADLINE_S)
        pg = api.get(SCHEDULING_POD_GROUPS, "default", "big") or {}
        pg["spec"]["schedulingPolicy"]["gang"]["minCount"] = 1
        api.update(SCHEDULING_POD_GROUPS, pg)
        assert api.wait_for(lambda s: sum(bool(_bound(s, n)) for n in ("b0", "b1", "b2")) == 1, DEADLINE_S)
        attempts = run.server.controller.stats.attempts
    lines = [json.loads(t) for t in record.read_text().splitlines()]
    assert lines[0]["kubeVersion"] == "1.37" and lines[0]["featureGates"] == {"GenericWorkload": True}
    assert "featureGates" not in lines[0]["config"]["text"]
    resources = {ln["resource"] for ln in lines if "event" in ln}
    assert "podgroups.v1beta1.scheduling.k8s.io" in resources and "podgroups" not in resources
    decisions = [ln for ln in lines if "decision" in ln]
    assert len(decisions) == attempts
    big = [d for d in decisions if d["decision"].startswith("default/b")]
    assert {d["outcome"] for d in big} == {"scheduled", "unschedulable"}  # rejected whole, then one placed
    assert sum(d["outcome"] == "scheduled" for d in decisions) == 4

    runner = CliRunner()
    res = runner.invoke(app, ["verify-record", str(record), "-o", "json"])
    report = json.loads(res.stdout)
    assert res.exit_code == 0 and report["differences"] == [], res.output
    assert report["counts"]["decisions"] == attempts and report["record"]["featureGates"] == {"GenericWorkload": True}
    assert report["counts"]["identical"] + report["counts"]["ties"] == attempts

    # the second member of the first cycle recorded as unschedulable: a difference at its line, none elsewhere
    at = next(i for i, ln in enumerate(lines) if ln.get("decision") == decisions[1]["decision"])
    tampered = [*lines]
    tampered[at] = {**lines[at], "outcome": "unschedulable", "node": None, "message": "no room"}
    (tmp_path / "tampered.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in tampered))
    res = runner.invoke(app, ["verify-record", str(tmp_path / "tampered.jsonl"), "-o", "json"])
    report = json.loads(res.stdout)
    assert res.exit_code == 1, res.output
    assert [(d["line"], d["fields"]) for d in report["differences"]] == [(at + 1, ["outcome"])]
    assert report["differences"][0]["replayed"]["node"] == decisions[1]["node"]


def test_a_1_36_gang_has_its_podgroupscheduled_condition(api: FakeApiServer, tmp_path: Path) -> None:
    api.create("nodes", node("n0", cpu="4"))
    api.create(SCHEDULING_POD_GROUPS, _pod_group("train", 2))
    api.create_many("pods", [_member(n, "train") for n in ("a", "b")])
    with _Serving(api, tmp_path, 36) as run:
        assert api.wait_for(all_bound(["a", "b"]), DEADLINE_S)
        assert [r.version for r in run.watched() if r.plural == "podgroups"] == ["v1alpha2"]
        assert wait(lambda: _condition(api, "train", "PodGroupScheduled").get("status") == "True", DEADLINE_S)


def test_a_1_35_gang_of_a_workload_waits_at_permit_until_complete(api: FakeApiServer, tmp_path: Path) -> None:
    """1.35: the Workload's podGroups give the policy; GangScheduling's PreEnqueue holds the pods back until the
    gang has its minCount pods, then they are placed (waiting at Permit for one another) and bound; a pod of a
    group the Workload does not have stays pending."""
    api.create("nodes", node("n0", cpu="4"))
    api.create(
        "workloads",
        {
            "metadata": {"name": "job", "namespace": "default"},
            "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 3}}}]},
        },
    )

    def member(name: str, group: str = "workers") -> dict[str, Any]:
        p = pod(name, cpu="500m")
        p["spec"]["workloadRef"] = {"name": "job", "podGroup": group}
        return p

    names = ["w0", "w1", "w2"]
    api.create_many("pods", [member(n) for n in names[:2]] + [member("lost", group="nope")])
    with _Serving(api, tmp_path, 35) as run:
        assert SCHEDULING_WORKLOADS in run.watched()
        ctl = run.server.controller
        # held at PreEnqueue: two of the three the gang needs, and one of a group the Workload does not have
        assert wait(lambda: ctl.queue.counts(ctl.clock()).gated == 3, DEADLINE_S)
        assert api.stats.bindings == {}
        api.create("pods", member("w2"))
        assert api.wait_for(all_bound(names), DEADLINE_S)
        # the first two placed waited at Permit for the third (kube-scheduler's permit_wait_duration_seconds); 1.35
        # has no pod-group cycles, and so none of the podgroup metrics
        text = run.server.metrics.exposition().decode()
        assert _sample(text, "scheduler_permit_wait_duration_seconds_count", result="Success") == 2
        assert "scheduler_podgroup_" not in text
    lost = api.get("pods", "default", "lost") or {}
    assert not lost["spec"].get("nodeName")
    check_cluster(api, expect_bound=3)


def test_a_1_35_gang_recorded_replays_its_waits_at_permit(api: FakeApiServer, tmp_path: Path) -> None:
    """1.35's gangs wait at Permit, one pod's cycle after the other: the record holds the Workload's events (under
    their own name) and each pod's decision; the replay ends the waits as serve did (the last pod's Permit lets
    the others go) and every binding answer reaches a binding cycle of the replay's, with no difference."""
    from packsched.live.record import read_record
    from packsched.live.verify import Replay, recorded_config

    record = tmp_path / "gangs.jsonl"
    api.create("nodes", node("n0", cpu="4"))
    api.create(
        "workloads",
        {
            "metadata": {"name": "job", "namespace": "default"},
            "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 3}}}]},
        },
    )
    names = ["w0", "w1", "w2"]
    members = [pod(n, cpu="500m") for n in names]
    for p in members:
        p["spec"]["workloadRef"] = {"name": "job", "podGroup": "workers"}
    api.create_many("pods", members[:2])
    with _Serving(api, tmp_path, 35, record=str(record)) as run:
        ctl = run.server.controller
        assert wait(lambda: ctl.queue.counts(ctl.clock()).gated == 2, DEADLINE_S)
        api.create("pods", members[2])
        assert api.wait_for(all_bound(names), DEADLINE_S)
    with record.open() as fh:
        head, lines = read_record(fh)
        assert head.feature_gates == {"GangScheduling": True, "GenericWorkload": True}
        registry = in_tree_registry()
        replay = Replay(head, recorded_config(head, set(registry)), registry)
        seen = []
        for line in lines:
            replay.apply(line)
            seen.append(line)
    assert any(getattr(ln, "res", None) == SCHEDULING_WORKLOADS for ln in seen)
    out = replay.out
    assert out.differences == [] and out.decisions == 3 and out.binds == 3
    assert out.identical + len(out.ties) == 3
    # every wait ended, every binding cycle answered, and each pod is where serve bound it
    assert replay.ctl.scheduler.waiting_pods() == [] and replay._binding == {}
    assert replay.ctl.stats.bound == 3  # the two that waited included (their answers went through binding_done)
    placed = {info.key: replay.ctl.snapshot.nodes[info.node].name for info in replay.ctl.cache.pods()}
    assert placed == {f"default/{n}": "n0" for n in names}


def test_rbac_generic_workload_grants_exactly_what_serve_uses(api: FakeApiServer, tmp_path: Path) -> None:
    """Every request serve makes for GenericWorkload at 1.35 (Workloads) and 1.37 (PodGroups, their status) is
    allowed by the shipped roles, and every grant of rbac-generic-workload.yaml is used."""
    roles = [d for d in yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()) if d and "rules" in d]
    own = [d for d in yaml.safe_load_all(RBAC_FILE.read_text()) if d and "rules" in d]
    api.create("nodes", node("n0", cpu="4"))
    api.create(
        "workloads",
        {
            "metadata": {"name": "j", "namespace": "default"},
            "spec": {"podGroups": [{"name": "g", "policy": {"basic": {}}}]},
        },
    )
    with _Serving(api, tmp_path / "a", 35):
        pass  # synced: Workloads listed and watched
    api.create(SCHEDULING_POD_GROUPS, _pod_group("g", 1))
    api.create("pods", _member("p", "g"))
    with _Serving(api, tmp_path / "b", 37):
        assert wait(lambda: _condition(api, "g", "PodGroupInitiallyScheduled"), DEADLINE_S)
    used = {_rbac_request(m, p, w) for m, p, w in api.stats.log if not DISCOVERY.match(p)}
    used = {(g, r, v, "packsched-system" if r == "leases" else ns, n) for g, r, v, ns, n in used}

    def allowed(req: tuple[str, str, str, str, str], docs: list[dict[str, Any]]) -> bool:
        group, resource, verb, ns, _ = req
        for doc in docs:
            if doc["kind"] == "Role" and doc["metadata"]["namespace"] != ns:
                continue
            for rule in doc["rules"]:
                if group in rule["apiGroups"] and resource in rule["resources"] and verb in rule["verbs"]:
                    return True
        return False

    denied = sorted(u for u in used if not allowed(u, roles + own))
    assert not denied, f"requests the shipped RBAC denies: {denied}"
    granted = {
        (g, r, v)
        for d in own
        for rule in d["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }
    unused = granted - {(g, r, v) for g, r, v, _, _ in used}
    assert not unused, f"grants the code never uses: {sorted(unused)}"
    assert {(g, r) for g, r, _ in granted} == {
        ("scheduling.k8s.io", "workloads"),
        ("scheduling.k8s.io", "podgroups"),
        ("scheduling.k8s.io", "podgroups/status"),
    }


def _controller(minor: int) -> tuple[Any, Any]:
    """A controller at ``1.<minor>`` with GenericWorkload on, over a port that records writes (Recorder without
    threads: its writes are made at once)."""
    from live.test_cache import StubPort
    from packsched.config.loader import default_config
    from packsched.live.controller import Controller

    gates = {"GenericWorkload": True, **({"GangScheduling": True} if minor < 37 else {})}
    cfg = default_config(set(in_tree_registry()), parse_kube_version(f"1.{minor}"), gates)
    port = StubPort()
    return Controller(port, cfg, in_tree_registry()), port  # type: ignore[arg-type]


def test_the_condition_is_never_taken_back_nor_written_twice() -> None:
    """A 1.37 PodGroup's condition: False (Unschedulable) with the group's message and the object's generation,
    not written again while unchanged, then True (Scheduled), which a later error does not turn back."""
    from packsched.framework.podinfo import make_pod_info
    from packsched.framework.status import Code, Status
    from packsched.live.decode import decode
    from packsched.live.port import ADDED, MODIFIED, PODS
    from packsched.scheduler import CycleResult, QueuedPod

    ctl, port = _controller(37)
    writer = ctl.pod_group_conditions
    res = POD_GROUPS_RES
    pg = {"metadata": {"name": "g", "namespace": "default", "generation": 2}, "spec": {}, "status": {}}
    ctl.handle(res, ADDED, pg)
    info = make_pod_info(decode(PODS, _member("p", "g")).pods[0], 0, ctl.config.kube_version)

    def cycle(verdict: Status) -> None:
        result = CycleResult(info, "packsched", group_status=verdict)
        writer.cycle_done([(QueuedPod(info), result)])

    cycle(Status(Code.UNSCHEDULABLE, ["no room"]))
    ((_, patch),) = port.writes
    (cond,) = patch["status"]["conditions"]
    assert {k: cond[k] for k in ("type", "status", "reason", "message", "observedGeneration")} == {
        "type": "PodGroupInitiallyScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "no room",
        "observedGeneration": 2,
    }
    cycle(Status(Code.UNSCHEDULABLE, ["no room"]))  # the same again, not shown by the watch yet: not written
    assert len(port.writes) == 1
    ctl.handle(res, MODIFIED, {**pg, "status": {"conditions": [cond]}})
    cycle(Status())
    assert port.writes[-1][1]["status"]["conditions"][0]["status"] == "True"
    assert port.writes[-1][1]["status"]["conditions"][0]["reason"] == "Scheduled"
    cycle(Status.error("boom"))  # scheduled once: never back to False
    assert len(port.writes) == 2
    # 1.35 writes none
    assert _controller(35)[0].pod_group_conditions.resource is None


def test_a_pod_group_cycle_that_raises_sends_every_pod_of_the_group_back() -> None:
    """A bug inside the cycle (after the group's pods left the queue) loses none of them: each is back in the
    queue, with a SchedulerError written."""
    from packsched.live.port import ADDED, NODES, PODS

    ctl, port = _controller(37)
    ctl.handle(NODES, ADDED, {**node("n0"), "apiVersion": "v1", "kind": "Node"})
    ctl.handle(POD_GROUPS_RES, ADDED, _pod_group("g", 2))
    for name in ("a", "b"):
        member = _member(name, "g")
        member["spec"]["schedulerName"] = "default-scheduler"  # (the default configuration's profile)
        ctl.handle(PODS, ADDED, {**member, "apiVersion": "v1", "kind": "Pod"})
    cycle = ctl.scheduler._pod_group_cycle

    def broken(*_args: object) -> None:
        raise RuntimeError("bug")

    cycle.run = broken
    assert ctl.step()
    assert sum(vars(ctl.queue.counts(ctl.clock())).values()) == 2
    failed = [w for w in port.writes if w[0] == "patch"]
    assert {w[1]["status"]["conditions"][0]["reason"] for w in failed} == {"SchedulerError"}
    assert len(failed) == 2
