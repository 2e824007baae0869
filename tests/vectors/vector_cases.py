"""kube-scheduler's recorded decisions (``../shared/spec/kube-scheduler-vectors/s*.json``) replayed through
``packsched explain``, one decision at a time.

For decision ``i`` of a scenario the cluster is the scenario's objects plus the pods bound before ``i`` (at the
nodes the recording names, through ``spec.nodeName``); pod ``i`` is explained with the scenario's
``scheduler_config`` (a real KubeSchedulerConfiguration file, read by packsched's config loader). What is compared
with the recording: the outcome, the set of best-scored nodes, every score plugin's weighted score on every
feasible node, the number of feasible nodes, and the unschedulable message word for word.

The recording comes from kube-scheduler v1.31 (a mid-May 2024 master build): every decision is explained with
``--kube-version 1.31`` (which, for one, words TaintToleration's reason as v1.31 did).

Run ``python tests/vectors/vector_cases.py`` for agreement counts per scenario family.
"""

from __future__ import annotations

import copy
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from packsched.cli.main import app

VECTORS = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "kube-scheduler-vectors"
_runner = CliRunner()
KUBE_VERSION = "1.31"  # the recording's kube-scheduler


@dataclass(frozen=True)
class Decision:
    scenario: dict[str, Any]
    index: int

    @property
    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = self.scenario["results"][self.index]
        return out

    @property
    def id(self) -> str:
        return f"{self.scenario['id']}-{self.index:02d}-{self.result['pod']}"

    @property
    def family(self) -> str:
        return str(self.scenario["family"])


def load_scenarios() -> list[dict[str, Any]]:
    if not VECTORS.is_dir():
        return []
    return [json.loads(p.read_text()) for p in sorted(VECTORS.glob("s*.json"))]


def decisions() -> Iterator[Decision]:
    for scenario in load_scenarios():
        for i in range(len(scenario["results"])):
            yield Decision(scenario, i)


# The order in which a scenario's ``objects`` were created (kinds not listed follow, by name); the recorder in
# ``conformance/`` creates them in the same order.
OBJECT_ORDER = (
    "namespaces",
    "priorityclasses",
    "storageclasses",
    "csidrivers",
    "csinodes",
    "nodes",
    "persistentvolumes",
    "persistentvolumeclaims",
    "services",
    "replicationcontrollers",
    "replicasets",
    "statefulsets",
    "poddisruptionbudgets",
    "resourcequotas",
    "pods",
)


def cluster_documents(d: Decision) -> list[dict[str, Any]]:
    """The objects and pods as the API server held them just before pod ``d.index`` was created.

    With DRA (results carrying ``claims``, recorded by ``conformance/``): each bound pod's claims hold the
    allocation recorded for them and list the pods bound so far in ``status.reservedFor``; a claim made from a
    template is there as the resourceclaim controller made it (owned by its pod, named in the pod's
    ``status.resourceClaimStatuses``), for the bound pods and for pod ``d.index`` itself."""
    sc = d.scenario
    objs = sc["objects"]
    docs: list[dict[str, Any]] = []
    shared = {c["metadata"]["name"]: copy.deepcopy(c) for c in objs.get("resourceclaims", [])}
    storage = _storage_documents(sc, d.index)
    for kind in [k for k in OBJECT_ORDER if k in objs] + sorted(k for k in objs if k not in OBJECT_ORDER):
        if kind == "resourceclaims":
            docs += [shared[o["metadata"]["name"]] for o in objs[kind]]
        else:
            docs += storage.get(kind, objs[kind])
    # pods preempted by an earlier decision are gone (the recorder saw the scheduler delete them)
    gone = {v for res in sc["results"][: d.index] for v in (res.get("preemption") or {}).get("victims") or []}
    for i in range(d.index + 1):
        res = sc["results"][i]
        if i < d.index and (res["outcome"] != "bound" or res["pod"] in gone):
            continue  # the recorder deleted unschedulable pods (and their claims) right after the decision
        pod = copy.deepcopy(sc["pods"][i])
        if i < d.index:
            pod["spec"]["nodeName"] = res["node"]
            # the recorder's binding set status.startTime, in the order of the decisions (a second apart here)
            pod.setdefault("status", {})["startTime"] = f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}Z"
        docs.append(pod)
        docs += _claim_documents(sc, pod, res.get("claims") or [], shared, bound=i < d.index)
    return docs


def _storage_documents(sc: dict[str, Any], index: int) -> dict[str, list[dict[str, Any]]]:
    """The scenario's volumes and claims as the controllers left them before decision ``index`` (recorded by
    ``conformance/`` as each bound pod's ``volumes``): a claim VolumeBinding bound is bound to its volume (the
    claim's ``volumeName``, bind-completed annotation and phase, the volume's ``claimRef`` and phase), a volume
    provisioned for one is there as the recorder made it."""
    bindings = [b for res in sc["results"][:index] for b in res.get("volumes") or []]
    if not bindings:
        return {}
    objs = sc["objects"]
    volumes = {v["metadata"]["name"]: copy.deepcopy(v) for v in objs.get("persistentvolumes", [])}
    claims = {
        f"{c['metadata']['namespace']}/{c['metadata']['name']}": copy.deepcopy(c)
        for c in objs.get("persistentvolumeclaims", [])
    }
    for b in bindings:
        if b.get("provisioned"):
            volumes[b["volume"]] = copy.deepcopy(b["provisioned"])
        pv, pvc = volumes[b["volume"]], claims[b["claim"]]
        meta = pvc["metadata"]
        ref = {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": meta["namespace"],
            "name": meta["name"],
        }
        pv["spec"]["claimRef"] = {**ref, **({"uid": meta["uid"]} if meta.get("uid") else {})}
        pv["status"] = {"phase": "Bound"}
        pvc["spec"]["volumeName"] = b["volume"]
        meta.setdefault("annotations", {}).update(
            {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
        )
        pvc["status"] = {"phase": "Bound", "accessModes": pv["spec"]["accessModes"], "capacity": pv["spec"]["capacity"]}
    return {"persistentvolumes": list(volumes.values()), "persistentvolumeclaims": list(claims.values())}


def _claim_documents(
    sc: dict[str, Any], pod: dict[str, Any], claims: list[dict[str, Any]], shared: dict[str, Any], bound: bool
) -> list[dict[str, Any]]:
    """The recorded ``claims`` of one pod put back: the claims made from templates (returned, and named in the
    pod's status), and, for a bound pod, every claim's allocation and the pod in its ``reservedFor``."""
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    templates = {t["metadata"]["name"]: t for t in sc["objects"].get("resourceclaimtemplates", [])}
    entries = {e["name"]: e for e in pod["spec"].get("resourceClaims", [])}
    made: list[dict[str, Any]] = []
    for rec in claims:
        entry = entries[rec["name"]]
        if "resourceClaimTemplateName" in entry:
            template = templates[entry["resourceClaimTemplateName"]]
            claim: dict[str, Any] = {
                "apiVersion": template["apiVersion"],
                "kind": "ResourceClaim",
                "metadata": {
                    "name": rec["claim"],
                    "namespace": ns,
                    "annotations": {"resource.kubernetes.io/pod-claim-name": rec["name"]},
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name, "controller": True}],
                },
                "spec": copy.deepcopy(template["spec"]["spec"]),
            }
            made.append(claim)
            status = pod.setdefault("status", {}).setdefault("resourceClaimStatuses", [])
            status.append({"name": rec["name"], "resourceClaimName": rec["claim"]})
        else:
            claim = shared[rec["claim"]]
        if bound and rec.get("allocation") is not None:
            st = claim.setdefault("status", {})
            st["allocation"] = rec["allocation"]
            st.setdefault("reservedFor", []).append({"resource": "pods", "name": name})
    return made


def explain(d: Decision, workdir: Path, kube_version: str = KUBE_VERSION) -> dict[str, Any]:
    """``packsched explain <cluster> --pod ns/name --config <scheduler_config> -o json``, as a user runs it."""
    cluster = workdir / "cluster.json"
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_documents(d)}))
    config = workdir / "config.json"
    config.write_text(json.dumps(d.scenario["scheduler_config"]))
    args = ["explain", str(cluster), "--pod", d.result["pod"], "--config", str(config), "--kube-version", kube_version]
    args += ["-o", "json"]
    run = _runner.invoke(app, args)
    if run.exit_code != 0:
        raise AssertionError(f"packsched explain failed ({run.exit_code}): {run.output}")
    out: dict[str, Any] = json.loads(run.stdout)
    return out


def differences(d: Decision, got: dict[str, Any]) -> list[str]:
    """Everything in which packsched's explanation differs from the recording (empty: they agree)."""
    res = d.result
    diffs: list[str] = []
    feasible = [n for n in got["nodes"] if n["feasible"]]
    outcome = "bound" if got["selected"] is not None else "unschedulable"
    if outcome != res["outcome"]:
        diffs.append(f"outcome: recorded {res['outcome']}, packsched {outcome} ({got.get('reason')})")
        return diffs
    if "preemption" in res:
        diffs += _preemption_differences(d, got)
        if got.get("used_nominated_node") and outcome == "bound" and not res.get("scored"):
            # the last attempt took the nominated node without looking at the others (upstream records only that
            # node; packsched's explain judges every node for its report): the node is what is compared
            if got["selected"] != res["node"]:
                diffs.append(f"node: recorded {res['node']}, packsched {got['selected']}")
            return diffs
        # scored: upstream's last attempt did not go to the nominated node first but judged and scored every node
        # (CapacityScheduling preempts synchronously: the victims' deletion can requeue the pod before the
        # nomination reaches it); that attempt is compared in full, packsched's report judging every node too
    diffs += _filter_differences(d, got)
    if outcome == "unschedulable":
        if got["reason"] != res["message"]:
            diffs.append(f"message:\n  recorded  {res['message']}\n  packsched {got['reason']}")
        return diffs
    if "feasible_nodes" in res and len(feasible) != res["feasible_nodes"]:
        diffs.append(f"feasible nodes: recorded {res['feasible_nodes']}, packsched {len(feasible)}")
    diffs += _claim_differences(d, got)
    diffs += _volume_differences(d, got)
    if not res["scored"]:
        names = sorted(n["node"] for n in feasible)
        if names != sorted(res["top_nodes"]):
            diffs.append(f"the one feasible node: recorded {res['top_nodes']}, packsched {names}")
        return diffs
    diffs += _score_differences(d, got, feasible)
    return diffs


def _preemption_differences(d: Decision, got: dict[str, Any]) -> list[str]:
    """A decision that preempted (``preemption``, recorded by ``conformance/``): the nominated node, the victims and
    the message of the attempt that preempted, against explain's ``preemption``."""
    rec = d.result["preemption"]
    ours = got.get("preemption") or {}
    diffs = []
    if (rec.get("nominated_node") or None) != ours.get("nominated_node"):
        diffs.append(f"nominated node: recorded {rec.get('nominated_node')}, packsched {ours.get('nominated_node')}")
    if sorted(rec.get("victims") or []) != ours.get("victims", []):
        diffs.append(f"victims: recorded {sorted(rec.get('victims') or [])}, packsched {ours.get('victims', [])}")
    if rec.get("message") != ours.get("message"):
        diffs.append(f"preemption message:\n  recorded  {rec.get('message')}\n  packsched {ours.get('message')}")
    return diffs


def _claim_differences(d: Decision, got: dict[str, Any]) -> list[str]:
    """With DRA (``claims`` recorded by ``conformance/``): the devices each of the pod's claims got on the node
    kube-scheduler chose, against the ones packsched's DynamicResources finds for it on that node (explain's
    ``claims``, whichever node packsched itself would pick among equal scores): request, driver, pool and device
    of every result, in order."""
    res = d.result
    if not res.get("claims"):
        return []
    ns = res["pod"].split("/")[0]
    entry = next((n for n in got["nodes"] if n["node"] == res["node"]), {})
    ours = {c["claim"]: c["devices"] for c in entry.get("claims", [])}
    keep = ("request", "driver", "pool", "device", "adminAccess")
    diffs = []
    for rec in res["claims"]:
        key = f"{ns}/{rec['claim']}"
        alloc = rec.get("allocation") or {}
        want = [{k: r[k] for k in keep if k in r} for r in (alloc.get("devices") or {}).get("results") or []]
        if ours.get(key) != want:
            diffs.append(f"claim {key} on {res['node']}: recorded {want}, packsched {ours.get(key)}")
    return diffs


def _volume_differences(d: Decision, got: dict[str, Any]) -> list[str]:
    """With volumes (``volumes`` recorded by ``conformance/``): the claims the binding bound, each to its static
    volume or to one provisioned for it, against what packsched's VolumeBinding would bind on the node
    kube-scheduler chose (explain's per-node ``volumes``: a provisioned volume has no name there)."""
    res = d.result
    if not res.get("volumes"):
        return []
    want = sorted(
        ({"claim": b["claim"], "volume": None if b.get("provisioned") else b["volume"]} for b in res["volumes"]),
        key=lambda b: str(b["claim"]),
    )
    entry = next((n for n in got["nodes"] if n["node"] == res["node"]), {})
    ours = entry.get("volumes")
    return [] if ours == want else [f"volumes on {res['node']}: recorded {want}, packsched {ours}"]


def _filter_differences(d: Decision, got: dict[str, Any]) -> list[str]:
    """Each node's filter verdict, where the recording has them (``filter_status``, recorded by ``conformance/``):
    the plugin that rejected it and its reasons (joined by ", ", as the framework's Status.Message())."""
    recorded = d.result.get("filter_status")
    if recorded is None or d.result.get("error"):
        return []  # after an Error (``error``), the verdicts are those of the nodes that ran before it: a race
    ours = {
        n["node"]: {"plugin": n["rejected_by"] or "", "reason": ", ".join(n["reasons"])}
        for n in got["nodes"]
        if not n["feasible"]
    }
    diffs = []
    for node in sorted(set(recorded) | set(ours)):
        if recorded.get(node) != ours.get(node):
            diffs.append(f"filter {node}: recorded {recorded.get(node)}, packsched {ours.get(node)}")
    return diffs


def _score_differences(d: Decision, got: dict[str, Any], feasible: list[dict[str, Any]]) -> list[str]:
    res = d.result
    diffs: list[str] = []
    best = max(n["total"] for n in feasible)
    top = sorted(n["node"] for n in feasible if n["total"] == best)
    if top != sorted(res["top_nodes"]):
        diffs.append(f"top nodes: recorded {sorted(res['top_nodes'])}, packsched {top}")
    # A default plugin packsched does not implement (``omitted_default_plugins``: DynamicResources, a default
    # plugin from 1.34) may be absent from packsched's scores only where kube-scheduler scored it 0: any other
    # score of it stays in the comparison, and fails it.
    omitted = set(got.get("omitted_default_plugins") or [])
    recorded = {
        node: {p: s for p, s in scores.items() if not (p in omitted and s == 0)}
        for node, scores in res["plugin_scores_weighted"].items()
    }
    ours = {n["node"]: n["weighted"] for n in feasible}
    if set(ours) != set(recorded):
        diffs.append(f"scored nodes: recorded {sorted(recorded)}, packsched {sorted(ours)}")
        return diffs
    for node in sorted(recorded):
        if recorded[node] != ours[node]:
            diffs.append(f"{node}: recorded {recorded[node]}, packsched {ours[node]}")
    return diffs


def run_decision(d: Decision) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        return differences(d, explain(d, Path(tmp)))


def main() -> int:
    """Agreement per scenario family (and per scenario, with each difference, with ``-v``)."""
    verbose = "-v" in sys.argv[1:]
    total: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    per_scenario: Counter[str] = Counter()
    per_scenario_ok: Counter[str] = Counter()
    for d in decisions():
        diffs = run_decision(d)
        total[d.family] += 1
        per_scenario[d.scenario["id"]] += 1
        if not diffs:
            agree[d.family] += 1
            per_scenario_ok[d.scenario["id"]] += 1
        elif verbose:
            print(f"{d.id}:\n  " + "\n  ".join(diffs))
    if not total:
        print(f"no vectors at {VECTORS}")
        return 1
    print(f"{'family':28s} agree / total")
    for family in sorted(total):
        print(f"{family:28s} {agree[family]:5d} / {total[family]:5d}")
    print(f"{'all':28s} {sum(agree.values()):5d} / {sum(total.values()):5d}")
    if verbose:
        for sid in sorted(per_scenario):
            print(f"{sid}: {per_scenario_ok[sid]} / {per_scenario[sid]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
