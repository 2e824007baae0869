"""Agreement between packsched and kube-scheduler's recorded decisions, per area, with every difference and the
scenario file it comes from.

    python conformance/compare.py FILE_OR_DIR... [--kube-version 1.35] [-v]
    python conformance/compare.py --recordings EXPECTED_DIR GOT_DIR     # two recordings (e.g. 1.31 against 1.35)

Each recorded decision is replayed as ``tests/vectors/vector_cases.py`` replays the v1.31 vectors: the cluster is
the scenario's objects plus the pods bound before it, at their recorded nodes, and the pod is run through
``packsched explain`` with the scenario's KubeSchedulerConfiguration. Compared: the outcome, the set of best-scored
nodes, every score plugin's weighted score on every node, the number of feasible nodes, each rejected node's
plugin and reasons (``filter_status``) and the unschedulable message word for word.

packsched models kube-scheduler up to ``NEWEST`` of ``packsched.config.versions``; a recording of a newer release
is replayed with that version, and the report says so.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from packsched.api.errors import InputError  # noqa: E402
from packsched.config.versions import NEWEST  # noqa: E402
from vectors import gang_cases  # noqa: E402
from vectors.vector_cases import Decision, differences, explain  # noqa: E402


def area_of(scenario: dict[str, Any]) -> str:
    """The generator's area (``resources-MostAllocated`` -> ``resources``); other families as they are."""
    family = str(scenario.get("family", "?"))
    return family.split("-")[0] if family.startswith(("resources-", "spread-")) else family  # dra, preemption


def packsched_version(recorded: str) -> str:
    """The ``--kube-version`` packsched is given for a recording of kube-scheduler ``recorded`` (e.g. 1.35.4)."""
    parts = recorded.lstrip("v").split(".")
    minor = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else NEWEST
    return f"1.{min(minor, NEWEST)}"


def scenario_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        files += sorted(p.glob("*.json")) if p.is_dir() else [p]
    return files


def compare_packsched(files: list[Path], kube_version: str | None, verbose: bool) -> int:
    total: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    notes: set[str] = set()
    for path in files:
        scenario = json.loads(path.read_text())
        recorded = str(scenario.get("kubernetes_version", "?"))
        version = kube_version or packsched_version(recorded)
        if version != ".".join(recorded.split(".")[:2]):
            notes.add(f"recorded with kube-scheduler {recorded}, replayed with packsched --kube-version {version}")
        area = area_of(scenario)
        if gang_cases.is_gang_scenario(scenario):
            total[area], agree[area] = _compare_gangs(path, scenario, version, total[area], agree[area], notes)
            continue
        for i in range(len(scenario.get("results", []))):
            d = Decision(scenario, i)
            if d.result["outcome"] not in ("bound", "unschedulable"):
                continue  # refused by the API server, or gated: no decision to compare
            if d.result.get("timed_out"):
                notes.add("decisions that timed out in the recorder (no outcome within -timeout) are not compared")
                print(f"TIMED OUT {path} #{i} {d.result['pod']} (not compared)")
                continue
            with tempfile.TemporaryDirectory() as tmp:
                diffs = differences(d, explain(d, Path(tmp), version))
            total[area] += 1
            if not diffs:
                agree[area] += 1
                continue
            print(f"DIFF {path} #{i} {d.result['pod']}:\n  " + "\n  ".join(diffs))
        if verbose:
            print(f"{path}: done")
    return _report(total, agree, notes)


def _compare_gangs(
    path: Path, scenario: dict[str, Any], version: str, total: int, agree: int, notes: set[str]
) -> tuple[int, int]:
    """A gangs scenario: packsched simulates it whole and each pod's final state is compared
    (``tests/vectors/gang_cases.py``)."""
    results = scenario["results"]
    if any(r.get("timed_out") for r in results):
        notes.add("gang scenarios the recorder could not see quiet (timed_out) are not compared")
        print(f"TIMED OUT {path} (not compared)")
        return total, agree
    try:
        got = gang_cases.simulate(scenario, version)
    except InputError as exc:  # a release whose gang scheduling packsched refuses (1.37)
        n = len(gang_cases.compared(results))
        print(f"NOT MODELLED {path} ({n} pods): packsched --kube-version {version}: {exc}")
        return total + n, agree
    for i in gang_cases.compared(results):
        diffs = gang_cases.differences(results[i], got[i])
        total += 1
        if not diffs:
            agree += 1
            continue
        print(f"DIFF {path} #{i} {results[i]['pod']}:\n  " + "\n  ".join(diffs))
    return total, agree


def _report(total: Counter[str], agree: Counter[str], notes: set[str]) -> int:
    for note in sorted(notes):
        print(f"note: {note}")
    print(f"{'area':28s} agree / total")
    for area in sorted(total):
        print(f"{area:28s} {agree[area]:5d} / {total[area]:5d}")
    print(f"{'all':28s} {sum(agree.values()):5d} / {sum(total.values()):5d}")
    return 0 if sum(agree.values()) == sum(total.values()) else 1


def recording_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Two recordings of one decision (``a`` expected): outcome, best-scored set, weighted scores, message,
    feasible count. A plugin that one release does not run is left out of the score comparison when the other
    scores it 0 on every node (DynamicResources, a default plugin from 1.34)."""
    diffs: list[str] = []
    if a["outcome"] != b["outcome"]:
        return [f"outcome: {a['outcome']} -> {b['outcome']} ({b.get('message') or b.get('node')})"]
    if a["outcome"] != "bound":
        if a.get("message") != b.get("message"):
            diffs.append(f"message:\n    {a.get('message')}\n    {b.get('message')}")
        return diffs
    if a.get("feasible_nodes") != b.get("feasible_nodes"):
        diffs.append(f"feasible nodes: {a.get('feasible_nodes')} -> {b.get('feasible_nodes')}")
    if sorted(a.get("top_nodes") or []) != sorted(b.get("top_nodes") or []):
        diffs.append(f"top nodes: {sorted(a.get('top_nodes') or [])} -> {sorted(b.get('top_nodes') or [])}")
    wa, wb = a.get("plugin_scores_weighted") or {}, b.get("plugin_scores_weighted") or {}
    for node in sorted(set(wa) | set(wb)):
        sa, sb = dict(wa.get(node, {})), dict(wb.get(node, {}))
        for plugin in set(sa) ^ set(sb):
            if sa.get(plugin, 0) == 0 and sb.get(plugin, 0) == 0:
                sa.pop(plugin, None)
                sb.pop(plugin, None)
        if sa != sb:
            diffs.append(f"{node}: {sa} -> {sb}")
    return diffs


def compare_recordings(expected: Path, got: Path) -> int:
    total: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    for path in sorted(expected.glob("*.json")):
        other = got / path.name
        if not other.exists():
            continue
        a, b = json.loads(path.read_text()), json.loads(other.read_text())
        area = area_of(a)
        for i, (ra, rb) in enumerate(zip(a["results"], b["results"], strict=True)):
            diffs = recording_differences(ra, rb)
            total[area] += 1
            if diffs:
                print(f"DIFF {path.name} #{i} {ra['pod']} ({a['kubernetes_version']} -> {b['kubernetes_version']}):")
                print("  " + "\n  ".join(diffs))
            else:
                agree[area] += 1
    return _report(total, agree, set())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--kube-version", help="packsched's --kube-version (default: the recording's, at most NEWEST)")
    ap.add_argument("--recordings", nargs=2, type=Path, metavar=("EXPECTED", "GOT"))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.recordings:
        return compare_recordings(*args.recordings)
    if not args.paths:
        ap.error("give scenario files or directories")
    return compare_packsched(scenario_files(args.paths), args.kube_version, args.verbose)


if __name__ == "__main__":
    raise SystemExit(main())
