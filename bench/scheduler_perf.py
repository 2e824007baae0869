"""kube-scheduler's own scheduler_perf workloads, run through packsched's real scheduler (issue 10).

The workloads (``bench/scheduler_perf/workloads.yaml``) restate upstream's
``test/integration/scheduler_perf/config/performance-config.yaml``: make the nodes, make the init pods and let
the scheduler place them, then make the measured pods and time them. Every case runs in a fresh Python process
(so that its peak RSS is its own) under the embedded simulator with the default profile of packsched:

* the objects are written as Kubernetes manifests (nodes, namespaces, pods, and for SchedulingCSIPVs the CSINodes,
  PersistentVolumes and PersistentVolumeClaims; for the DRA workloads a ResourceSlice per node, the DeviceClass,
  ResourceClaims (those upstream's allocResourceClaims allocates come allocated, to nodes drawn with the seed) and
  the ResourceClaimTemplate) and read by packsched's manifest reader; kinds this build of packsched does not read
  are left out and named in the output;
* init pods arrive at virtual time 0 and the measured pods at 1 s, so the scheduler sees them after the init pods
  (pods that never fit, Unschedulable's, stay in the queue and are retried as the scheduler decides);
* throughput, as upstream's SchedulingThroughput counts it: measured pods scheduled / wall time from the start of
  the first measured pod's attempt to the end of the last measured attempt;
* absent: the default-profile plugins the workload is about that packsched lacks, and pod fields the scheduler
  ignored (``Pod.unsupported_features``), so that no number is mistaken for the full profile's;
* beside each row, the SchedulingThroughput threshold upstream's CI holds the same testCase to
  (``bench/scheduler_perf/thresholds.yaml``, recorded from upstream's files, with the upstream workload it belongs
  to when that workload's size differs), or "-": a reference for upstream's machines and Go, not a target here.

Run: ``make bench-perf`` or ``.venv/bin/python bench/scheduler_perf.py [--workloads A,B] [--sizes 500,5000]
[--repeat N] [-o json] [--profile DIR]``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import platform
import pstats
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from typing import Any

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS_FILE = os.path.join(HERE, "scheduler_perf", "workloads.yaml")
THRESHOLDS_FILE = os.path.join(HERE, "scheduler_perf", "thresholds.yaml")
ZONE = "topology.kubernetes.io/zone"
CSI_DRIVER = "ebs.csi.aws.com"
CSI_LIMIT_RESOURCE = f"attachable-volumes-csi-{CSI_DRIVER}"
ARRIVAL = "packsched.io/arrival-time"
MEASURED_ARRIVAL = "1s"
DRA_DRIVER = "test-driver.cdi.k8s.io"
DIVIDE_INT = re.compile(r"\{\{\s*DivideInt\s+\.Index\s+(\d+|\.\w+)\s*\}\}")


def load_workloads(path: str = WORKLOADS_FILE) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.safe_load(fh)
    return data


def load_thresholds(path: str = THRESHOLDS_FILE) -> dict[tuple[str, str], dict[str, Any] | None]:
    """Upstream's thresholds by (workload, size): the entry of ``thresholds.yaml``, or None for a size listed as
    having none. A size in neither list is absent from the result (and prints "-" as well)."""
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    out: dict[tuple[str, str], dict[str, Any] | None] = {}
    for entry in data.get("thresholds") or []:
        out[(entry["testCase"], entry["workload"])] = entry
    for entry in data.get("none") or []:
        out[(entry["testCase"], entry["workload"])] = None
    return out


def size_nodes(size: dict[str, Any], steps: list[dict[str, Any]]) -> int:
    """How many nodes a size makes (its node steps' parameters summed)."""
    return sum(int(size[s["nodes"]]) for s in steps if "nodes" in s)


def select_cases(
    data: dict[str, Any], workloads: Iterable[str] | None, sizes: Iterable[int] | None
) -> list[tuple[str, str]]:
    """(workload, size name) pairs to run, in the file's order. Sizes select by node count."""
    names = list(data["workloads"]) if workloads is None else list(workloads)
    unknown = [n for n in names if n not in data["workloads"]]
    if unknown:
        raise SystemExit(f"unknown workload(s): {', '.join(unknown)} (known: {', '.join(data['workloads'])})")
    wanted = None if sizes is None else set(sizes)
    out = []
    for name in names:
        w = data["workloads"][name]
        for size in w["sizes"]:
            if wanted is None or size_nodes(size, w["steps"]) in wanted:
                out.append((name, size["name"]))
    return out


# -- the objects -----------------------------------------------------------------------------------------------


def _node_doc(name: str, template: dict[str, Any], labels: dict[str, str], csi: int) -> dict[str, Any]:
    capacity = dict(template["capacity"])
    if csi:
        capacity[CSI_LIMIT_RESOURCE] = str(csi)
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": capacity},
    }
    if template.get("taints"):
        doc["spec"] = {"taints": [dict(t) for t in template["taints"]]}
    return doc


def _csi_node_doc(name: str, count: int) -> dict[str, Any]:
    driver = {"name": CSI_DRIVER, "nodeID": name, "allocatable": {"count": count}}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": [driver]},
    }


def _volume_docs(ns: str, i: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A PersistentVolume (CSI) bound to a claim, the claim, and the pod volume that names it (upstream's
    CreatePodWithPersistentVolume with the pv-csi and pvc templates)."""
    pv_name, claim = f"{ns}-vol-{i}", f"pvc-{i}"
    pv = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name},
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "capacity": {"storage": "1Gi"},
            "csi": {"driver": CSI_DRIVER, "volumeHandle": f"vol-{i}"},
            "persistentVolumeReclaimPolicy": "Retain",
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns, "name": claim},
        },
        "status": {"phase": "Bound"},
    }
    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "namespace": ns, "annotations": {"pv.kubernetes.io/bind-completed": "true"}},
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeName": pv_name,
        },
        "status": {"phase": "Bound"},
    }
    return [pv, pvc], {"name": "vol", "persistentVolumeClaim": {"claimName": claim}}


def _slice_doc(node: str, devices: int, pci_roots: int = 2) -> dict[str, Any]:
    """dra/templates/resourceslice-basic-devices.yaml for one node: ``devices`` devices of test-driver.cdi.k8s.io
    with upstream's attributes (an Intel GPU's) and capacity, the pool and slice named after the node."""
    out = []
    for d in range(devices):
        root = d % pci_roots
        attributes = {
            "driver": {"string": "xe"},
            "driverVersion": {"version": "1.2.3"},
            "resource.k8s.io/pciRoot": {"string": str(root)},
            "family": {"string": "Arc Pro B-Series"},
            "health": {"string": "Healthy"},
            "model": {"string": "B60"},
            "pciAddress": {"string": f"0000:0{d}:00.0"},
            "pciId": {"string": "0xe211"},
            "pciRoot": {"string": f"0{root}"},
            "resource.kubernetes.io/pciBusID": {"string": f"0000:0{d}:00.0"},
            "resource.kubernetes.io/pciRoot": {"string": f"pci0000:0{root}"},
            "sriov": {"bool": True},
            "type": {"string": "gpu"},
        }
        capacity = {"memory": {"value": "24480Mi"}, "millicores": {"value": "1k"}}
        out.append({"name": f"basic-device-{d}", "attributes": attributes, "capacity": capacity})
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"resourceslice-{node}"},
        "spec": {
            "driver": DRA_DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": out,
        },
    }


def _allocation(node: str, device: str) -> dict[str, Any]:
    """A claim's ``status.allocation`` of one device of ``node``'s slice (the first request), as the structured
    allocator writes it for a node-local device."""
    return {
        "devices": {"results": [{"request": "req-0", "driver": DRA_DRIVER, "pool": node, "device": device}]},
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
        },
    }


def _templated(value: Any, index: int, params: dict[str, Any]) -> Any:
    """``{{DivideInt .Index N}}`` in the strings of a pod template (N a number or ``.param``, the size's
    parameter), with the pod's index, as upstream's templates."""
    if isinstance(value, str):

        def divide(m: re.Match[str]) -> str:
            by = m.group(1)
            return str(index // int(params[by[1:]] if by.startswith(".") else by))

        return DIVIDE_INT.sub(divide, value)
    if isinstance(value, list):
        return [_templated(v, index, params) for v in value]
    if isinstance(value, dict):
        return {k: _templated(v, index, params) for k, v in value.items()}
    return value


class _Documents:
    """The manifests of one case, step by step (one method per kind of step: STEP_KINDS)."""

    def __init__(self, data: dict[str, Any], size: dict[str, Any], seed: int) -> None:
        self.data, self.size = data, size
        self.docs: list[dict[str, Any]] = []
        self.measured: set[str] = set()
        self.namespaces: list[str] = []
        self.node_index = 0
        self.pod_index: dict[str, int] = {}
        self.free_devices: dict[str, list[str]] = {}  # DRA nodes -> their devices not allocated yet, in slice order
        self.rng = random.Random(seed)

    def namespace(self, ns: str) -> None:
        if ns != "default" and ns not in self.namespaces:
            self.namespaces.append(ns)
            self.docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

    def nodes(self, step_no: int, step: dict[str, Any]) -> None:
        template = self.data["nodes"][step.get("template", "plain")]
        zones = step.get("zones") or []
        csi = int(step.get("csiVolumes", 0))
        devices = int(step.get("draDevices", 0))
        for k in range(int(self.size[step["nodes"]])):
            name = f"node-{self.node_index:05d}"
            self.node_index += 1
            labels = {ZONE: zones[k % len(zones)]} if zones else {}
            if devices:
                labels["node-with-dra"] = "true"
            self.docs.append(_node_doc(name, template, labels, csi))
            if csi:
                self.docs.append(_csi_node_doc(name, csi))
            if devices:
                self.docs.append(_slice_doc(name, devices))
                self.free_devices[name] = [f"basic-device-{d}" for d in range(devices)]

    def objects(self, step_no: int, step: dict[str, Any]) -> None:
        for obj in step["objects"]:
            doc = json.loads(json.dumps(self.data["objects"][obj]))
            self.namespace(doc["metadata"].get("namespace", "default"))
            self.docs.append(doc)

    def claims(self, step_no: int, step: dict[str, Any]) -> None:
        ns = step.get("namespace", "default")
        self.namespace(ns)
        spec = self.data["claims"][step["template"]]["spec"]
        for i in range(int(self.size[step["claims"]])):
            claim: dict[str, Any] = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"{step['template']}-{i}", "namespace": ns},
                "spec": json.loads(json.dumps(spec)),
            }
            if step.get("allocate"):
                with_room = [n for n, free in self.free_devices.items() if free]
                if not with_room:
                    raise SystemExit(f"no free device left for claim {i} of step {step_no}")
                node = self.rng.choice(with_room)
                claim["status"] = {"allocation": _allocation(node, self.free_devices[node].pop(0))}
            self.docs.append(claim)

    def podGroups(self, step_no: int, step: dict[str, Any]) -> None:
        ns = step.get("namespace", "default")
        self.namespace(ns)
        policy = {"gang": {"minCount": int(self.size["podsPerGroup"])}} if step["policy"] == "gang" else {"basic": {}}
        for i in range(int(self.size[step["podGroups"]])):
            self.docs.append(
                {
                    "apiVersion": "scheduling.k8s.io/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": f"{step['prefix']}-{i}", "namespace": ns},
                    "spec": {"schedulingPolicy": json.loads(json.dumps(policy))},
                }
            )

    def pods(self, step_no: int, step: dict[str, Any]) -> None:
        template = self.data["pods"][step["template"]]
        ns = step.get("namespace", "default")
        self.namespace(ns)
        is_measured = bool(step.get("measured"))
        for _ in range(int(self.size[step["pods"]])):
            i = self.pod_index.get(ns, 0)
            self.pod_index[ns] = i + 1
            name = f"pod-{step_no}-{i:05d}"
            meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": dict(template.get("labels") or {})}
            if is_measured:
                meta["annotations"] = {ARRIVAL: MEASURED_ARRIVAL}
                self.measured.add(f"{ns}/{name}")
            spec = _templated(template["spec"], i, self.size)  # a deep copy
            if step.get("volume") == "csi":
                storage, volume = _volume_docs(ns, i)
                self.docs.extend(storage)
                spec["volumes"] = [volume]
            self.docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


# A step's kind is the first of these keys it has.
STEP_KINDS = ("nodes", "objects", "claims", "podGroups", "pods")


def build_documents(
    data: dict[str, Any], workload: str, size_name: str, seed: int = 1
) -> tuple[list[dict[str, Any]], set[str]]:
    """Every manifest of one case, and the keys (namespace/name) of the measured pods. ``seed`` draws the nodes
    of the claims allocated before the run."""
    w = data["workloads"][workload]
    size = next(s for s in w["sizes"] if s["name"] == size_name)
    out = _Documents(data, size, seed)
    for step_no, step in enumerate(w["steps"]):
        kind = next(k for k in STEP_KINDS if k in step)
        getattr(out, kind)(step_no, step)
    return out.docs, out.measured


def readable_kinds(kinds: Iterable[str]) -> tuple[set[str], set[str]]:
    """Which of ``kinds`` this build's manifest reader knows (probed with an empty object of each)."""
    from packsched.api.errors import ErrorList
    from packsched.api.manifests import decode_document

    known, unknown = set(), set()
    for kind in kinds:
        errors = ErrorList(file="probe")
        decode_document({"apiVersion": "v1", "kind": kind, "metadata": {"name": "probe"}}, "probe", errors)
        if any("unknown kind" in e.message for e in errors.items):
            unknown.add(kind)
        else:
            known.add(kind)
    return known, unknown


def load_cluster(docs: list[dict[str, Any]]) -> tuple[Any, list[str]]:
    """The manifests through packsched's reader (a JSON List in a temporary file); kinds it does not read are
    left out and reported."""
    from packsched.api.manifests import load_manifests

    _known, unknown = readable_kinds({d["kind"] for d in docs})
    dropped: dict[str, int] = {}
    kept = []
    for d in docs:
        if d["kind"] in unknown:
            dropped[d["kind"]] = dropped.get(d["kind"], 0) + 1
        else:
            kept.append(d)
    fd, path = tempfile.mkstemp(suffix=".json", prefix="scheduler-perf-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"apiVersion": "v1", "kind": "List", "items": kept}, fh)
        cluster = load_manifests([path])
    finally:
        os.unlink(path)
    notes = [f"{n} {kind} object(s) not read by this build (kind unknown to packsched)" for kind, n in dropped.items()]
    return cluster, notes


# -- one case ----------------------------------------------------------------------------------------------------


def absent_report(data: dict[str, Any], workload: str, config: Any, cluster: Any, notes: list[str]) -> list[str]:
    """What of the full default profile this case did not get: plugins the workload is about that packsched's
    profile lacks, pod fields the scheduler ignored, objects the reader left out."""
    omitted = set(config.profiles[0].omitted_default_plugins)
    out = [f"plugin {p} absent" for p in data["workloads"][workload]["plugins"] if p in omitted]
    features = sorted({f for pod in cluster.pods for f in pod.unsupported_features})
    out += [f"ignored: {f}" for f in features]
    return out + notes


class _Clock:
    """Wall times of the measured pods' attempts, from the simulator's per-cycle callback; and the process's CPU
    time over the same span (what a loaded machine's wall time hides)."""

    def __init__(self, measured: set[str]) -> None:
        self.measured = measured
        self.last_end = time.perf_counter()
        self.last_end_cpu = time.process_time()
        self.first: float | None = None
        self.last: float | None = None
        self.first_cpu = self.last_cpu = 0.0  # the same span in this process's CPU time (steadier on a busy machine)
        self.attempts = 0
        self.scheduled = 0

    def __call__(self, result: Any) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        if result.pod.key in self.measured:
            if self.first is None:
                self.first = self.last_end  # this attempt began when the previous cycle ended
                self.first_cpu = self.last_end_cpu
            self.last, self.last_cpu = now, cpu
            self.attempts += 1
            if result.scheduled:
                self.scheduled += 1
        self.last_end, self.last_end_cpu = now, cpu

    def settled(self, results: list[Any]) -> None:
        """Pods whose wait at Permit ended after a cycle (a gang completed): those bound count as scheduled then."""
        now, cpu = time.perf_counter(), time.process_time()
        for result in results:
            if result.pod.key in self.measured and result.scheduled:
                self.scheduled += 1
                self.last, self.last_cpu = now, cpu


def run_case(
    workload: str,
    size_name: str,
    seed: int = 1,
    profile_out: str | None = None,
    path: str = WORKLOADS_FILE,
    gc_freeze: bool = False,
) -> dict[str, Any]:
    """One case in this process: build, load, schedule; the numbers of the measured pods. ``gc_freeze``: what
    was built before the run leaves the garbage collector's generations (as ``serve`` does after its start-up), so
    that a full collection in the run (about 0.3 s with 5,000 nodes' objects) does not walk it."""
    from packsched.config.loader import load_config_data
    from packsched.plugins.registry import in_tree_registry
    from packsched.sim.engine import RUNNING, Simulation

    data = load_workloads(path)
    t0 = time.perf_counter()
    docs, measured = build_documents(data, workload, size_name, seed)
    cluster, notes = load_cluster(docs)
    del docs
    registry = in_tree_registry()
    config = load_config_data(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
        "default",
        set(registry),
        feature_gates=data["workloads"][workload].get("featureGates"),
    )
    clock = _Clock(measured)
    sim = Simulation(cluster, config, registry, seed=seed, on_cycle=clock)
    settle = sim.scheduler.settle_waiting

    def settle_and_count() -> Any:  # gangs: members bound when their wait at Permit ends, outside on_cycle
        results = settle()
        clock.settled(results)
        return results

    sim.scheduler.settle_waiting = settle_and_count  # type: ignore[method-assign]
    t1 = time.perf_counter()
    clock.last_end, clock.last_end_cpu = t1, time.process_time()
    if gc_freeze:
        gc.freeze()
    profiler = cProfile.Profile() if profile_out else None
    if profiler is not None:
        profiler.enable()
    result = sim.run()
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile_out)  # type: ignore[arg-type]
    t2 = time.perf_counter()
    elapsed = (clock.last - clock.first) if clock.first is not None and clock.last is not None else 0.0
    cpu = clock.last_cpu - clock.first_cpu if clock.first is not None else 0.0
    running = sum(1 for r in result.records if r.phase == RUNNING and r.pod.key in measured)
    w = data["workloads"][workload]
    size = next(s for s in w["sizes"] if s["name"] == size_name)
    return {
        "workload": workload,
        "size": size_name,
        "nodes": len(cluster.nodes),
        "pods": len(cluster.pods),
        "measured_pods": len(measured),
        "measured_scheduled": clock.scheduled,
        "measured_running_at_end": running,
        "measured_attempts": clock.attempts,
        "elapsed_s": round(elapsed, 4),
        "pods_per_s": round(clock.scheduled / elapsed, 1) if elapsed > 0 else None,
        "cpu_s": round(cpu, 4),
        "pods_per_cpu_s": round(clock.scheduled / cpu, 1) if cpu > 0 else None,
        "setup_s": round(t1 - t0, 2),
        "run_s": round(t2 - t1, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "gc_freeze": gc_freeze,
        "absent": absent_report(data, workload, config, cluster, notes),
        "profile_plugins_absent": list(config.profiles[0].omitted_default_plugins),
        "params": {k: v for k, v in size.items() if k != "name"},
        "warnings": result.warnings[:5],
    }


# -- the driver ----------------------------------------------------------------------------------------------------


def run_child(
    workload: str,
    size: str,
    seed: int,
    profile_dir: str | None,
    timeout: float | None,
    path: str = WORKLOADS_FILE,
    gc_freeze: bool = False,
) -> dict[str, Any]:
    """One case in a fresh interpreter (its peak RSS is its own). A case that fails or runs past ``timeout``
    seconds gives a row saying so."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", workload, size, "--seed", str(seed)]
    cmd += ["--workloads-file", path]
    if profile_dir:
        cmd += ["--profile", profile_dir]
    if gc_freeze:
        cmd.append("--gc-freeze")
    failed = {"workload": workload, "size": size, "pods_per_s": None, "absent": [], "measured_pods": 0}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {**failed, "error": f"did not finish in {timeout:g} s"}
    if proc.returncode != 0:
        return {**failed, "error": f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}"}
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Repeats of one case: the best run's numbers, with every run's pods/s."""
    if any("error" in r for r in runs):
        return {**runs[-1], "pods_per_s_runs": [r["pods_per_s"] for r in runs], "pods_per_s_median": None}
    rates = [r["pods_per_s"] or 0.0 for r in runs]
    best = max(runs, key=lambda r: r["pods_per_s"] or 0.0)
    return {
        **best,
        "pods_per_s_runs": rates,
        "pods_per_s_median": round(statistics.median(rates), 1),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
    }


def machine() -> dict[str, Any]:
    import numpy as np

    load = os.getloadavg()
    return {
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "loadavg": [round(x, 2) for x in load],
    }


THRESHOLDS_NOTE = (
    "upstream threshold: the SchedulingThroughput floor (pods/s) kube-scheduler's CI holds the same testCase to "
    "(bench/scheduler_perf/thresholds.yaml: release, and the upstream workload when its size differs); set for "
    "upstream's CI machines and Go, for reference only"
)


def threshold_for(
    thresholds: dict[tuple[str, str], dict[str, Any] | None], workload: str, size: str
) -> dict[str, Any] | None:
    """The row's upstream threshold as the report gives it, or None (none upstream, or a size not in the file)."""
    entry = thresholds.get((workload, size))
    if entry is None:
        return None
    return {
        "threshold": entry["threshold"],
        "metric": entry["metric"],
        "upstream_workload": f"{entry['testCase']}/{entry['upstreamWorkload']}",
        "release": entry["release"],
        "file": entry["file"],
    }


def _threshold_cell(r: dict[str, Any]) -> str:
    t = r.get("upstream_threshold")
    if not t:
        return "-"
    size = t["upstream_workload"].split("/", 1)[1]
    return f"{t['threshold']:,}" if size == r["size"] else f"{t['threshold']:,} ({size})"


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| workload | size | measured pods | scheduled | pods/s (best) | pods/s (median) | pods per CPU s (best) "
        "| upstream threshold | elapsed s | peak RSS MiB | load avg (1 min) | absent |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        limit = _threshold_cell(r)
        if "error" in r:
            lines.append(
                f"| {r['workload']} | {r['size']} | | | – | – | – | {limit} | | "
                f"| {r['loadavg_1m']:.2f} | {r['error']} |"
            )
            continue
        rate = "-" if r["pods_per_s"] is None else f"{r['pods_per_s']:,.0f}"
        per_cpu = "-" if r.get("pods_per_cpu_s") is None else f"{r['pods_per_cpu_s']:,.0f}"
        absent = "; ".join(r["absent"]) or "none"
        lines.append(
            f"| {r['workload']} | {r['size']} | {r['measured_pods']:,} | {r['measured_scheduled']:,} | {rate} "
            f"| {r['pods_per_s_median']:,.0f} | {per_cpu} | {limit} | {r['elapsed_s']:.2f} | {r['peak_rss_mib']:,.0f} "
            f"| {r['loadavg_1m']:.2f} | {absent} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", help="comma-separated workload names (default: all)")
    parser.add_argument("--sizes", help="comma-separated node counts, e.g. 500,5000 (default: all sizes)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; the best and the median are shown")
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", metavar="DIR", help="write a cProfile of each case's scheduling loop here")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per case before it is given up")
    parser.add_argument("--in-process", action="store_true", help="run cases in this process (RSS is shared)")
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() after a case is built, as serve does after its start-up (no full collection walks it)",
    )
    parser.add_argument("--workloads-file", default=WORKLOADS_FILE, help=argparse.SUPPRESS)
    parser.add_argument("--thresholds-file", default=THRESHOLDS_FILE, help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        workload, size = args.child
        prof = os.path.join(args.profile, f"{workload}-{size.replace('/', '-')}.prof") if args.profile else None
        print(json.dumps(run_case(workload, size, args.seed, prof, args.workloads_file, args.gc_freeze)))
        return 0
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
    data = load_workloads(args.workloads_file)
    workloads = args.workloads.split(",") if args.workloads else None
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    cases = select_cases(data, workloads, sizes)
    info = machine()
    thresholds = load_thresholds(args.thresholds_file)
    rows = []
    for workload, size in cases:
        runs = []
        for _ in range(max(1, args.repeat)):
            load1 = os.getloadavg()[0]
            if args.in_process:
                prof = os.path.join(args.profile, f"{workload}-{size.replace('/', '-')}.prof") if args.profile else None
                run = run_case(workload, size, args.seed, prof, args.workloads_file, args.gc_freeze)
            else:
                run = run_child(
                    workload, size, args.seed, args.profile, args.timeout, args.workloads_file, args.gc_freeze
                )
            run["loadavg_1m"] = round(load1, 2)
            runs.append(run)
            done = run.get("error") or f"{run['pods_per_s']} pods/s, {run['peak_rss_mib']} MiB, CPU {run['cpu_s']} s"
            print(f"  {workload} {size}: {done}, load {load1:.2f}", file=sys.stderr, flush=True)
        row = summarize(runs)
        row["loadavg_1m"] = max(r["loadavg_1m"] for r in runs)
        row["upstream_threshold"] = threshold_for(thresholds, workload, size)
        rows.append(row)
    if args.output == "json":
        print(json.dumps({"machine": info, "thresholds_note": THRESHOLDS_NOTE, "cases": rows}, indent=2))
    else:
        print(
            f"machine: {info['machine']} ({info['cpus']} cpus), python {info['python']}, numpy {info['numpy']}, "
            f"load average at start {info['loadavg']}"
        )
        absent = next((r["profile_plugins_absent"] for r in rows if "error" not in r), [])
        print(f"default-profile plugins packsched lacks: {', '.join(absent) or 'none'}")
        print(THRESHOLDS_NOTE)
        print(markdown(rows))
        if args.profile:
            for r in rows:
                path = os.path.join(args.profile, f"{r['workload']}-{r['size'].replace('/', '-')}.prof")
                if os.path.exists(path):
                    print(f"\n## {r['workload']} {r['size']}: top 15 by own time")
                    pstats.Stats(path, stream=sys.stdout).sort_stats("tottime").print_stats(15)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
