"""What-if scenarios (``kind: Scenario``): a base cluster, a scheduler configuration and timed steps, run on the
embedded simulator with a report after every step.

A scenario file::

    apiVersion: packsched.io/v1alpha1
    kind: Scenario
    metadata: {name: drain-pool-a}
    spec:
      base: [snapshot/]            # manifests or a snapshot directory, relative to this file
      config: binpack.yaml         # optional: kube-scheduler's defaults otherwise
      seed: 0
      steps:
      - name: a training job arrives
        at: 0s                     # Go duration or seconds; steps run in order, at non-decreasing times
        createPods: {count: 40, namePrefix: train, template: {metadata: {...}, spec: {...}}}
      - at: 60s
        drain: {selector: {matchLabels: {pool: a}}}

Step actions (one per step): ``createPods``, ``scale`` (a Deployment, ReplicaSet, StatefulSet or Job to a number of
replicas, parallelism for a Job), ``addNodes``, ``removeNodes`` (the nodes fail or are deleted: their pods are
deleted and their controllers re-create them elsewhere), ``cordon``, ``uncordon``, ``drain`` (cordon, then evict
every pod but DaemonSet pods through the Eviction API's check of PodDisruptionBudgets; a refused eviction is
retried every ``retryEvery`` until ``timeout``; controllers re-create evicted pods), ``setConfig`` (another
scheduler configuration from then on, as after a restart), ``setQuota`` (an ElasticQuota's min and max),
``setMinCount`` (a kube-scheduler 1.37 PodGroup's gang minCount) and ``setDeviceConditions`` (a DRA driver sets
conditions of an allocated device in the ``status.devices`` of the claims it is allocated to: the binding conditions
kube-scheduler waits for at PreBind, or a binding failure condition).

A step's changes happen at its time, before anything else that happens then; the simulator then runs until the
next step's time (the last one until nothing is left to do), and the step's report is taken: pods running and
pending (with the reasons), preemptions and evictions during the step, utilisation per resource, nodes left
completely free, and quota usage.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from packsched.api.annotations import parse_duration
from packsched.api.decode import Reader
from packsched.api.dra import DeviceCondition
from packsched.api.errors import ErrorList, InputError
from packsched.api.manifests import (
    MAX_WORKLOAD_PODS,
    Cluster,
    decode_template,
    load_manifests,
    read_documents,
    resolve_priority,
)
from packsched.api.objects import ElasticQuota, LabelSelector, Node, Pod
from packsched.api.podgroups import POD_GROUP_API_VERSION_1_37, GroupPolicy
from packsched.api.pods import decode_label_selector
from packsched.api.quantity import MAX_INT64, format_quantity
from packsched.api.quota import first_per_namespace, max_from_spec, min_from_spec, quota_used
from packsched.api.resources import is_gpu
from packsched.config.loader import default_config, load_config
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework.interface import (
    ADD,
    ELASTIC_QUOTA,
    POD,
    RESOURCE_CLAIM,
    SCHEDULING_POD_GROUP,
    UPDATE,
    ClusterEvent,
)
from packsched.framework.runtime import PluginFactory
from packsched.sim.engine import (
    DELETED,
    EVICTED,
    EVICTED_EVENT,
    PENDING,
    PREEMPTED_EVENT,
    RUNNING,
    Simulation,
    cluster_objects,
)
from packsched.sim.gangs import gang_rows_of, gang_summary, gangs_of

API_VERSION = "packsched.io/v1alpha1"
KIND = "Scenario"
SCHEMA = "packsched.scenario-report/v1"
ACTIONS = (
    "createPods",
    "scale",
    "addNodes",
    "removeNodes",
    "cordon",
    "uncordon",
    "drain",
    "setConfig",
    "setQuota",
    "setMinCount",
    "setDeviceConditions",
)
CONDITION_STATUSES = ("True", "False", "Unknown")
SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet", "Job", "ReplicationController")
DEFAULT_DRAIN_TIMEOUT = 600.0
DEFAULT_RETRY = 5.0
MAX_NEW_NODES = 100_000


@dataclass
class Step:
    """One timed step: its action and the action's arguments (already checked)."""

    name: str
    at: float
    action: str
    args: dict[str, Any]
    path: str  # spec.steps[i], for messages


@dataclass
class Scenario:
    name: str
    file: str
    base: list[str]
    config: str | None
    seed: int
    steps: list[Step] = field(default_factory=list)


# -- reading ----------------------------------------------------------------------------------------------------


def load_scenario(path: str) -> Scenario:
    """Read and check a scenario file: every problem with its field path, at once (InputError)."""
    errors = ErrorList(file=path)
    docs = read_documents(path, errors)
    errors.raise_if_any()
    if len(docs) != 1:
        raise InputError.single("a scenario file holds exactly one document", file=path)
    _, doc = docs[0]
    r = Reader(errors)
    data = r.fields(doc, "", ("apiVersion", "kind", "metadata", "spec"))
    if data.get("apiVersion") != API_VERSION:
        errors.add("apiVersion", f"must be {API_VERSION}, got {data.get('apiVersion')!r}")
    if data.get("kind") != KIND:
        errors.add("kind", f"must be {KIND}, got {data.get('kind')!r}")
    meta = r.fields(data.get("metadata"), "metadata", ("name", "annotations", "labels"))
    spec = r.fields(data.get("spec"), "spec", ("base", "config", "seed", "steps"))
    here = os.path.dirname(os.path.abspath(path))
    base_raw = spec.get("base")
    base = [base_raw] if isinstance(base_raw, str) else r.str_list(base_raw, "spec.base")
    if not base:
        errors.add("spec.base", "Required value: the manifests or snapshot directory the scenario starts from")
    bases = [
        _found(errors, here, b, "spec.base" if isinstance(base_raw, str) else f"spec.base[{i}]", directory=True)
        for i, b in enumerate(base)
    ]
    config = r.str(spec.get("config"), "spec.config") or None
    config_path = _found(errors, here, config, "spec.config") if config else None
    seed = r.int(spec.get("seed"), "spec.seed", 0) or 0
    if seed < 0:  # as --seed: the seeded generator takes none below 0
        errors.add("spec.seed", f"must be 0 or more, got {seed}")
        seed = 0
    scenario = Scenario(
        r.str(meta.get("name"), "metadata.name") or os.path.basename(path),
        path,
        bases,
        config_path,
        seed,
    )
    last = 0.0
    for i, raw in enumerate(r.list(spec.get("steps"), "spec.steps")):
        where = f"spec.steps[{i}]"
        step = r.fields(raw, where, ("name", "at", *ACTIONS))
        actions = [a for a in ACTIONS if a in step]
        if len(actions) != 1:
            errors.add(where, f"must have exactly one of {', '.join(ACTIONS)}")
            continue
        at = last
        if "at" in step:
            try:
                at = parse_duration(str(step["at"]))
            except ValueError as exc:
                errors.add(f"{where}.at", str(exc))
        if at < last:
            errors.add(f"{where}.at", f"steps run in order: {at:g}s is before the previous step's {last:g}s")
        last = at
        action = actions[0]
        args = _check_args(r, action, step[action], f"{where}.{action}", here)
        scenario.steps.append(Step(r.str(step.get("name"), f"{where}.name") or action, at, action, args, where))
    if not scenario.steps and not errors:
        errors.add("spec.steps", "Required value: at least one step")
    errors.raise_if_any()
    return scenario


def _found(errors: ErrorList, here: str, name: str, where: str, *, directory: bool = False) -> str:
    """``name`` joined to the scenario file's folder; a file (or, with ``directory``, a folder too) that is not
    there is this file's error at ``where``, not an unreadable path when the scenario runs."""
    full = os.path.join(here, name)
    if not (os.path.exists(full) if directory else os.path.isfile(full)):
        errors.add(where, f"Not found: {name!r} (a path relative to the scenario file)")
    return full


def _check_args(r: Reader, action: str, raw: object, path: str, here: str) -> dict[str, Any]:
    """The action's arguments, with unknown fields, missing ones and bad values reported at ``path``."""
    if action in ("createPods", "addNodes"):
        return _check_make(r, action, raw, path)
    if action == "scale":
        return _check_scale(r, raw, path)
    if action in ("removeNodes", "cordon", "uncordon", "drain"):
        return _check_nodes(r, action, raw, path)
    if action == "setConfig":
        args = r.fields(raw, path, ("path",))
        p = r.str(args.get("path"), f"{path}.path")
        if not p:
            r.errors.add(f"{path}.path", "Required value: a KubeSchedulerConfiguration file")
            args["path"] = os.path.join(here, p)
        else:
            args["path"] = _found(r.errors, here, p, f"{path}.path")
        return args
    if action == "setMinCount":
        args = r.fields(raw, path, ("namespace", "name", "minCount"))
        for name in ("namespace", "name"):
            if not r.str(args.get(name), f"{path}.{name}"):
                r.errors.add(f"{path}.{name}", "Required value")
        count = r.int(args.get("minCount"), f"{path}.minCount", 0)
        if count is None or count < 1:
            r.errors.add(f"{path}.minCount", f"Invalid value: {count}: must be greater than or equal to 1")
        args["minCount"] = count
        return args
    if action == "setDeviceConditions":
        return _check_device_conditions(r, raw, path)
    args = r.fields(raw, path, ("namespace", "name", "min", "max"))  # setQuota
    if not r.str(args.get("namespace"), f"{path}.namespace"):
        r.errors.add(f"{path}.namespace", "Required value")
    return args


def _check_device_conditions(r: Reader, raw: object, path: str) -> dict[str, Any]:
    """``driver``, ``pool``, ``device`` and ``conditions`` (each ``type``, ``status`` True/False/Unknown, optional
    ``reason`` and ``message``)."""
    args = r.fields(raw, path, ("driver", "pool", "device", "conditions"))
    for key in ("driver", "pool", "device"):
        if not r.str(args.get(key), f"{path}.{key}"):
            r.errors.add(f"{path}.{key}", "Required value")
    conditions: list[tuple[str, str, str, str]] = []
    items = r.list(args.get("conditions"), f"{path}.conditions")
    if not items:
        r.errors.add(f"{path}.conditions", "Required value: at least one condition")
    for i, item in enumerate(items):
        cp = f"{path}.conditions[{i}]"
        c = r.fields(item, cp, ("type", "status", "reason", "message"))
        kind = r.str(c.get("type"), f"{cp}.type")
        if not kind:
            r.errors.add(f"{cp}.type", "Required value")
        status = r.one_of(c.get("status"), f"{cp}.status", CONDITION_STATUSES)
        if not status:
            r.errors.add(f"{cp}.status", f"Required value: one of {', '.join(CONDITION_STATUSES)}")
        conditions.append(
            (kind, status, r.str(c.get("reason"), f"{cp}.reason"), r.str(c.get("message"), f"{cp}.message"))
        )
    args["conditions"] = conditions
    return args


def _check_make(r: Reader, action: str, raw: object, path: str) -> dict[str, Any]:
    args = r.fields(raw, path, ("count", "namePrefix", "template"))
    count = r.int(args.get("count"), f"{path}.count", 1)
    most = MAX_WORKLOAD_PODS if action == "createPods" else MAX_NEW_NODES
    if count is None or not 1 <= count <= most:
        r.errors.add(f"{path}.count", f"must be between 1 and {most:,}")
    args["count"] = count  # as read: an explicit null is the default, 1
    what = "a Pod manifest (metadata and spec)" if action == "createPods" else "a Node manifest (labels, status)"
    template = args.get("template")
    if not isinstance(template, dict):
        r.errors.add(f"{path}.template", f"Required value: {what} to copy")
    else:
        meta = r.map(template.get("metadata"), f"{path}.template.metadata")  # the rest is checked when decoded
        r.str(meta.get("namespace"), f"{path}.template.metadata.namespace")
        r.str_map(meta.get("labels"), f"{path}.template.metadata.labels")
    r.str(args.get("namePrefix"), f"{path}.namePrefix")
    if action == "addNodes" and not r.str(args.get("namePrefix"), f"{path}.namePrefix"):
        r.errors.add(f"{path}.namePrefix", "Required value")
    return args


def _check_scale(r: Reader, raw: object, path: str) -> dict[str, Any]:
    args = r.fields(raw, path, ("kind", "namespace", "name", "replicas"))
    if not r.one_of(args.get("kind"), f"{path}.kind", SCALABLE):
        r.errors.add(f"{path}.kind", f"Required value: one of {', '.join(SCALABLE)}")
    if not r.str(args.get("name"), f"{path}.name"):
        r.errors.add(f"{path}.name", "Required value")
    r.str(args.get("namespace"), f"{path}.namespace")
    replicas = r.int(args.get("replicas"), f"{path}.replicas")
    if replicas is None or not 0 <= replicas <= MAX_WORKLOAD_PODS:
        r.errors.add(f"{path}.replicas", f"Required value: a number of replicas, 0 to {MAX_WORKLOAD_PODS:,}")
    return args


def _check_nodes(r: Reader, action: str, raw: object, path: str) -> dict[str, Any]:
    extra = ("timeout", "retryEvery") if action == "drain" else ()
    args = r.fields(raw, path, ("nodes", "selector", *extra))
    if ("nodes" in args) == ("selector" in args):
        r.errors.add(path, "give either nodes (a list of names) or selector (a label selector)")
    r.str_list(args.get("nodes"), f"{path}.nodes")
    if "selector" in args:
        args["selector"] = decode_label_selector(r, args["selector"], f"{path}.selector")
    for key in extra:
        if key in args:
            try:
                args[key] = parse_duration(str(args[key]))
            except ValueError as exc:
                r.errors.add(f"{path}.{key}", str(exc))
    return args


def is_whatif_input(path: str) -> bool:
    """Whether ``path`` is a scenario file or a cluster (manifests, a snapshot directory) rather than a GPU trace
    folder (``openb_*.csv``): ``compare`` then compares configurations on it."""
    if os.path.isdir(path):
        names = os.listdir(path)
        if any(n.startswith("openb_") and n.endswith(".csv") for n in names):
            return False
        return any(n.endswith((".yaml", ".yml", ".json")) for n in names)
    return path.endswith((".yaml", ".yml", ".json"))


def scenario_or_cluster(path: str) -> Scenario:
    """A scenario file as it is, or a cluster (manifests, snapshot) as a scenario without steps."""
    if os.path.isfile(path):
        errors = ErrorList(file=path)
        docs = read_documents(path, errors)
        if any(isinstance(d, dict) and d.get("kind") == KIND for _, d in docs):
            return load_scenario(path)
    return Scenario(os.path.basename(os.path.normpath(path)), path, [path], None, 0)


# -- running ----------------------------------------------------------------------------------------------------


@dataclass
class StepReport:
    name: str
    at: float
    until: float
    running: int
    pending: int
    pending_reasons: dict[str, int]
    preemptions: int
    evictions: int
    evictions_blocked: int
    utilisation: dict[str, float]  # requested / allocatable over every node, per resource
    free_nodes: int
    nodes: int
    quotas: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    # GPUs (api/resources.py is_gpu): free ones, and free ones on nodes where some are in use (fragmented: a
    # pod that needs a whole node's GPUs cannot have them)
    free_gpus: int = 0
    fragmented_gpus: int = 0
    # gangs (scheduler-plugins PodGroups, kube-scheduler's own): sim/gangs.py's summary over the whole run so far;
    # None without any
    gangs: dict[str, Any] | None = None


def run_scenario(
    scenario: Scenario,
    registry: Mapping[str, PluginFactory],
    config_override: KubeSchedulerConfiguration | None = None,
    strict: bool = False,
) -> list[StepReport]:
    """Run the scenario; one report for the base cluster as it settles before the first step, then one per
    step. ``config_override``: the configuration to start with instead of the scenario's (``compare``);
    ``strict``: an object of a kind packsched does not model is an error, not skipped."""
    cluster = load_manifests(scenario.base, strict)
    if config_override is not None:
        config = config_override
    elif scenario.config:
        config = load_config(scenario.config, set(registry))
    else:
        config = default_config(set(registry))
    runner = _Runner(scenario, cluster, config, registry)
    return runner.run()


class _Runner:
    def __init__(
        self,
        scenario: Scenario,
        cluster: Cluster,
        config: KubeSchedulerConfiguration,
        registry: Mapping[str, PluginFactory],
    ) -> None:
        self.scenario = scenario
        self.cluster = cluster
        self.registry = registry
        # the span CronJobs run Jobs in ends at the last step
        horizon = scenario.steps[-1].at if scenario.steps else 0.0
        self.sim = Simulation(cluster, config, registry, scenario.seed, horizon=horizon)
        self.blocked: set[str] = set()  # pods a drain could not evict yet
        self.notes: list[str] = []
        skipped = cluster.skipped_summary()
        if skipped:  # said in the base cluster's report
            self.notes.append(skipped)
        self.notes.extend(self.sim.dra_dropped)

    def run(self) -> list[StepReport]:
        sim = self.sim
        steps = self.scenario.steps
        reports: list[StepReport] = []
        first = steps[0].at if steps else None
        mark = len(sim.events)
        sim.run_until(first)
        reports.append(self._report("base cluster", 0.0, mark))
        for i, step in enumerate(steps):
            mark = len(sim.events)
            self.notes = []
            self._apply(step)
            nxt = steps[i + 1].at if i + 1 < len(steps) else None
            sim.run_until(nxt)
            reports.append(self._report(step.name, step.at, mark))
        return reports

    # -- actions ----------------------------------------------------------------------------------------------

    def _apply(self, step: Step) -> None:
        getattr(self, "_" + step.action)(step)

    def _createPods(self, step: Step) -> None:
        args = step.args
        prefix = args.get("namePrefix") or "scenario-pod"
        pods: list[Pod] = []
        index = 0
        for _ in range(int(args.get("count", 1))):
            while True:
                name = f"{prefix}-{index}"
                index += 1
                ns = (args["template"].get("metadata") or {}).get("namespace") or "default"
                if f"{ns}/{name}" not in self.sim.records:
                    break
            pods.append(self._pod(step, name))
        self.sim.add_pods(pods)

    def _pod(self, step: Step, name: str) -> Pod:
        template = dict(step.args["template"])
        meta = dict(template.get("metadata") or {})
        meta["name"] = name
        return self._decode_pod({**template, "metadata": meta}, f"{step.path}.createPods.template")

    def _decode_pod(self, fields: dict[str, Any], where: str) -> Pod:
        errors = ErrorList(file=self.scenario.file)
        made = decode_template("Pod", fields, where, errors)
        if not made.pods:
            errors.add(where, "the template does not make a Pod")
        errors.raise_if_any()
        pod = made.pods[0]
        classes = self.cluster.priority_classes
        default = next((pc for pc in classes.values() if pc.global_default), None)
        resolve_priority(pod, classes, default, errors, where)
        errors.raise_if_any()
        return pod

    def _scale(self, step: Step) -> None:
        args = step.args
        kind, ns, name, want = args["kind"], args.get("namespace") or "default", args["name"], int(args["replicas"])
        controllers = self.sim.controllers
        st = controllers.states.get((ns, kind, name))
        if st is not None and kind == "Deployment" and not st.active:
            # a snapshot's Deployment owns ReplicaSets, not pods: scale the one whose pods run
            owned = [s for (n, k, _), s in controllers.states.items() if n == ns and k == "ReplicaSet" and s.active]
            owned = [s for s in owned if s.workload.name.startswith(f"{name}-")]
            if owned:
                st = owned[0]
                self.notes.append(f"Deployment {ns}/{name}: scaled its ReplicaSet {st.workload.name}")
        if st is None:
            raise InputError.single(
                f"no {kind} {ns}/{name} in the base cluster", file=self.scenario.file, path=f"{step.path}.scale"
            )
        w = st.workload
        if kind == "Job":
            w.parallelism = want
        else:
            w.replicas = want
        active = [self.sim.records[k] for k in st.active if k in self.sim.records]
        have = len(active)
        if want > have:
            like = active[0].pod if active else self._template_pod(step, st.workload.template)
            self.sim.add_pods(controllers.new_pods(st, like, want - have, lambda key: key in self.sim.records))
        elif want < have:
            # ReplicaSet's order of deletion, simplified: pods not yet running first, then the newest
            order = sorted(active, key=lambda rec: (rec.phase == RUNNING, -(rec.started or 0.0), rec.pod.name))
            if kind == "StatefulSet":  # the highest ordinals go first
                order = sorted(active, key=lambda rec: -controllers.ordinal(st, rec.pod))
            for rec in order[: have - want]:
                self.sim.remove_pod(rec.pod.key, DELETED, f"scaled down to {want}", replace_it=False)

    def _template_pod(self, step: Step, template: Pod) -> Pod:
        pod = replace(template)
        classes = self.cluster.priority_classes
        default = next((pc for pc in classes.values() if pc.global_default), None)
        errors = ErrorList(file=self.scenario.file)
        resolve_priority(pod, classes, default, errors, f"{step.path}.scale")
        errors.raise_if_any()
        return pod

    def _addNodes(self, step: Step) -> None:
        args = step.args
        taken = set(self.sim.snapshot.index)
        made = 0
        index = 0
        while made < int(args.get("count", 1)):
            name = f"{args['namePrefix']}{index}"
            index += 1
            if name in taken:
                continue
            template = dict(args["template"])
            meta = dict(template.get("metadata") or {})
            meta["name"] = name
            labels = dict(meta.get("labels") or {})
            labels.setdefault("kubernetes.io/hostname", name)
            meta["labels"] = labels
            errors = ErrorList(file=self.scenario.file)
            where = f"{step.path}.addNodes.template"
            nodes = decode_template("Node", {**template, "metadata": meta}, where, errors)
            if not nodes.nodes:
                errors.add(where, "the template does not make a Node")
            errors.raise_if_any()
            self.sim.set_node(nodes.nodes[0])
            made += 1

    def _picked(self, step: Step) -> list[Node]:
        args = step.args
        snap = self.sim.snapshot
        if "nodes" in args:
            missing = [n for n in args["nodes"] if n not in snap.index]
            if missing:
                raise InputError.single(
                    f"no node named {', '.join(missing)}", file=self.scenario.file, path=f"{step.path}.{step.action}"
                )
            return [snap.nodes[snap.index[n]] for n in args["nodes"]]
        selector: LabelSelector = args["selector"]
        return [n for n in snap.nodes if selector.matches(n.labels)]

    def _removeNodes(self, step: Step) -> None:
        for node in self._picked(step):
            self.sim.remove_node(node.name, f"node {node.name} removed")

    def _cordon(self, step: Step, unschedulable: bool = True) -> None:
        for node in self._picked(step):
            if node.unschedulable != unschedulable:
                self.sim.set_node(replace(node, unschedulable=unschedulable))

    def _uncordon(self, step: Step) -> None:
        self._cordon(step, unschedulable=False)

    def _drain(self, step: Step) -> None:
        nodes = {n.name for n in self._picked(step)}
        self._cordon(step)
        deadline = step.at + float(step.args.get("timeout", DEFAULT_DRAIN_TIMEOUT))
        every = float(step.args.get("retryEvery", DEFAULT_RETRY)) or DEFAULT_RETRY
        todo = [
            r.pod.key
            for r in self.sim.records.values()
            if r.phase == RUNNING and r.node in nodes and not (r.pod.owner and r.pod.owner.kind == "DaemonSet")
        ]
        self._evict(todo, deadline, every)

    def _evict(self, keys: list[str], deadline: float, every: float) -> None:
        sim = self.sim
        left: list[str] = []
        for key in keys:
            rec = sim.records.get(key)
            if rec is None or rec.phase != RUNNING:
                continue
            if sim.disruption_allowed(key):
                self.blocked.discard(key)
                sim.remove_pod(key, EVICTED, "evicted by a drain", replace_it=True)
            else:
                self.blocked.add(key)
                left.append(key)
        if left and sim.now + every <= deadline:
            sim.call_at(sim.now + every, lambda: self._evict(left, deadline, every))

    def _setConfig(self, step: Step) -> None:
        config = load_config(step.args["path"], set(self.registry))
        sim = self.sim
        self.notes.extend(sim.reread_dra(config.kube_version))  # the fields its feature gates drop, as at the start
        sim.scheduler.set_config(config, self.registry)
        # the new plugins list the cluster, as a restarted scheduler's informers would
        running = (ClusterEvent(POD, ADD, None, rec.pod) for rec in sim.records.values() if rec.phase == RUNNING)
        sim.scheduler.replay_to_plugins(itertools.chain(cluster_objects(sim.cluster), running))

    def _setQuota(self, step: Step) -> None:
        args = step.args
        ns = args["namespace"]
        quotas = self.cluster.elastic_quotas
        old = next((q for q in quotas if q.namespace == ns and (not args.get("name") or q.name == args["name"])), None)
        fields: dict[str, Any] = {
            "metadata": {"name": args.get("name") or (old.name if old else "quota"), "namespace": ns},
            "spec": {k: args[k] for k in ("min", "max") if k in args},
        }
        errors = ErrorList(file=self.scenario.file)
        made = decode_template("ElasticQuota", fields, f"{step.path}.setQuota", errors)
        errors.raise_if_any()
        new: ElasticQuota = made.elastic_quotas[0]
        if old is not None:
            if "min" not in args:
                new.min = old.min
            if "max" not in args:
                new.max = old.max
            quotas[quotas.index(old)] = new
        else:
            quotas.append(new)
        self.sim.scheduler.object_changed(ClusterEvent(ELASTIC_QUOTA, UPDATE if old else ADD, old, new))

    def _setMinCount(self, step: Step) -> None:
        """kube-scheduler 1.37: a PodGroup's (scheduling.k8s.io/v1beta1) gang minCount changes, the one field of its
        policy that may (the API server keeps the rest immutable)."""
        args = step.args
        ns, name = args["namespace"], args["name"]
        groups = self.cluster.scheduling_pod_groups
        old = next(
            (g for g in groups if (g.namespace, g.name, g.api_version) == (ns, name, POD_GROUP_API_VERSION_1_37)),
            None,
        )
        errors = ErrorList(file=self.scenario.file)
        where = f"{step.path}.setMinCount"
        if old is None:
            errors.add(f"{where}.name", f"Not found: no PodGroup {ns}/{name} of {POD_GROUP_API_VERSION_1_37}")
        elif old.policy.min_count is None:
            errors.add(f"{where}.minCount", "Forbidden: the PodGroup's policy is basic; only a gang's minCount changes")
        errors.raise_if_any()
        assert old is not None
        new = dataclasses.replace(old, policy=GroupPolicy(int(args["minCount"])))
        groups[groups.index(old)] = new
        self.sim.scheduler.object_changed(ClusterEvent(SCHEDULING_POD_GROUP, UPDATE, old, new))

    def _setDeviceConditions(self, step: Step) -> None:
        """A DRA driver's status update: the conditions, by type, of the device in ``status.devices`` of every claim
        the device is allocated to (written by PreBind); a step that finds none says so in the report's notes."""
        args = step.args
        did = (str(args["driver"]), str(args["pool"]), str(args["device"]))
        new = tuple(DeviceCondition(*c) for c in args["conditions"])
        dra = self.sim.cluster.dra
        found = [
            c
            for c in dra.claims.values()
            if c.allocation is not None and any(r.device_id == did for r in c.allocation.results)
        ]
        if not found:
            self.notes.append(f"{step.path}: device {'/'.join(did)} is allocated to no claim: no condition set")
        for claim in found:
            kept = [c for c in claim.device_conditions.get(did, ()) if all(c.type != n.type for n in new)]
            claim.device_conditions[did] = (*kept, *new)
            dra.generation += 1
            self.sim.scheduler.object_changed(ClusterEvent(RESOURCE_CLAIM, UPDATE, claim, claim))

    # -- the report -------------------------------------------------------------------------------------------

    def _report(self, name: str, at: float, mark: int) -> StepReport:
        sim = self.sim
        records = list(sim.records.values())
        pending = [r for r in records if r.phase == PENDING and r.arrived]
        events = sim.events[mark:]
        snap = sim.snapshot
        util: dict[str, float] = {}
        for row, res in enumerate(snap.resources):
            total = int(snap.alloc[row].sum())
            if total > 0:
                util[res] = float(snap.requested[row].sum()) / total
        running_pods = [r.pod for r in records if r.phase == RUNNING]
        quotas = []
        for q in first_per_namespace(self.cluster.elastic_quotas):
            used = quota_used(q.namespace, running_pods)
            lo, hi = min_from_spec(q.min), max_from_spec(q.max)
            names = sorted(n for n in set(lo) | set(used) if lo.get(n) or used.get(n))
            quotas.append(
                {
                    "namespace": q.namespace,
                    "name": q.name,
                    "used": {n: used.get(n, 0) for n in names},
                    "min": {n: lo.get(n, 0) for n in names},
                    # None: unbounded
                    "max": {n: (None if hi.get(n, MAX_INT64) >= MAX_INT64 else hi[n]) for n in names},
                }
            )
        gangs = gangs_of(self.cluster, sim.scheduler.config.kube_version, (r.pod for r in sim.history))
        free_gpus = fragmented = 0
        for row, res in enumerate(snap.resources):
            if is_gpu(res):
                free = snap.alloc[row] - snap.requested[row]
                free_gpus += int(free.sum())
                fragmented += int(free[(snap.requested[row] > 0) & (free > 0)].sum())
        return StepReport(
            free_gpus=free_gpus,
            fragmented_gpus=fragmented,
            name=name,
            at=at,
            until=sim.now,
            running=sum(1 for r in records if r.phase == RUNNING),
            pending=len(pending),
            pending_reasons=dict(Counter(r.reason or "not tried yet" for r in pending).most_common()),
            preemptions=sum(1 for e in events if e.kind == PREEMPTED_EVENT),
            evictions=sum(1 for e in events if e.kind == EVICTED_EVENT),
            evictions_blocked=sum(1 for k in self.blocked if sim.records[k].phase == RUNNING),
            utilisation=util,
            free_nodes=int(np.count_nonzero(snap.pod_count == 0)),
            nodes=snap.n,
            quotas=quotas,
            notes=list(self.notes),
            gangs=gang_summary(gang_rows_of(gangs, sim.history, sim.events, sim.now)) if gangs else None,
        )


GANG_METRICS: list[tuple[str, str]] = [
    ("jobs_started", "gangs started (minMember bound)"),
    ("jobs_never_started", "gangs never started"),
    ("job_wait_mean", "mean wait of started gangs (s)"),
    ("job_wait_p95", "p95 wait of started gangs (s)"),
    ("gpu_hours_held_at_permit", "GPU-hours held at Permit"),
    ("gpu_hours_in_partial_gangs", "GPU-hours in partial gangs"),
]

WHATIF_COMPARE_SCHEMA = "packsched.whatif-compare/v1"
# What `compare` puts side by side for a cluster or scenario: (key, what it is)
WHATIF_METRICS: list[tuple[str, str]] = [
    ("running", "pods running at the end"),
    ("pending", "pods pending at the end"),
    ("free_nodes", "nodes left completely free"),
    ("free_gpus", "GPUs free at the end"),
    ("fragmented_gpus", "free GPUs on partly used nodes"),
    ("preemptions", "preemptions, every step"),
    ("evictions", "evictions, every step"),
]


def end_metrics(reports: list[StepReport]) -> dict[str, float | int | None]:
    """WHATIF_METRICS of one run: the last step's state, preemptions and evictions summed over every step; with
    PodGroups, GANG_METRICS too (over the whole run)."""
    last = reports[-1]
    gangs: dict[str, float | int | None] = {}
    if last.gangs is not None:
        g = last.gangs
        gangs = {
            "jobs_started": g["started"],
            "jobs_never_started": g["never_started"],
            "job_wait_mean": g["wait_mean"],
            "job_wait_p95": g["wait_p95"],
            "gpu_hours_held_at_permit": round(g["gpu_hours_held_at_permit"], 6),
            "gpu_hours_in_partial_gangs": round(g["gpu_hours_in_partial_gangs"], 6),
        }
    return {
        "running": last.running,
        "pending": last.pending,
        "free_nodes": last.free_nodes,
        "free_gpus": last.free_gpus,
        "fragmented_gpus": last.fragmented_gpus,
        "preemptions": sum(r.preemptions for r in reports),
        "evictions": sum(r.evictions for r in reports),
        **gangs,
    }


def report_json(scenario: Scenario, reports: list[StepReport]) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "scenario": scenario.name,
        "steps": [
            {
                "name": r.name,
                "at": r.at,
                "until": r.until,
                "running": r.running,
                "pending": r.pending,
                "pending_reasons": r.pending_reasons,
                "preemptions": r.preemptions,
                "evictions": r.evictions,
                "evictions_blocked": r.evictions_blocked,
                "utilisation": {k: round(v, 6) for k, v in r.utilisation.items()},
                "free_nodes": r.free_nodes,
                "nodes": r.nodes,
                "free_gpus": r.free_gpus,
                "fragmented_gpus": r.fragmented_gpus,
                "quotas": [
                    {
                        **q,
                        "used": {n: format_quantity(n, a) for n, a in q["used"].items()},
                        "min": {n: format_quantity(n, a) for n, a in q["min"].items()},
                        "max": {n: None if a is None else format_quantity(n, a) for n, a in q["max"].items()},
                    }
                    for q in r.quotas
                ],
                "notes": r.notes,
            }
            for r in reports
        ],
    }
