"""``make conformance KUBE=1.35 [SCENARIOS=dir]``: build the recorder for one kube-scheduler release, generate (or
read) scenarios, record the real scheduler's decisions on each, and compare packsched with them.

    python conformance/run.py --kube 1.35 [--scenarios DIR] [--per-area 3] [--seed 1] [--follow] [--save DIR]

Everything it writes goes under ``.cache/`` (Go's module and build caches included): the scenarios under
``.cache/conformance/<kube>/scenarios``, the recordings under ``.cache/conformance/<kube>/recorded``. ``--save DIR``
also copies the recordings to DIR (how ``tests/data/conformance/<kube>/`` is made). See
docs/reference/conformance.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = ROOT / ".cache"
sys.path.insert(0, str(HERE))

import compare  # noqa: E402
import generate  # noqa: E402

# kube-scheduler minor -> (go.mod file, build tags); each file pins k8s.io/kubernetes and its staging modules.
RELEASES = {"1.35": ("go.mod", ""), "1.36": ("go.1.36.mod", "kube1_36"), "1.37": ("go.1.37.mod", "kube1_37")}
RELEASES["1.34"] = ("go.1.34.mod", "kube1_34")  # with scheduler-plugins v0.34.7 (CapacityScheduling, Coscheduling)
GO_VERSION = "1.26"  # the go directive of go.1.36.mod and go.1.37.mod (go.mod needs 1.25)


def go_env() -> dict[str, str]:
    """Go's module and build caches under .cache/, unless GOMODCACHE / GOCACHE name others (a cache another
    checkout filled: Go's build cache keys hold the sources' paths, so it helps only at the same GOMODCACHE)."""
    env = dict(os.environ)
    env.setdefault("GOMODCACHE", str(CACHE / "gomod"))
    env.setdefault("GOCACHE", str(CACHE / "gobuild"))
    env.update(GOFLAGS="-modcacherw", GOTOOLCHAIN=env.get("GOTOOLCHAIN", "local"))
    return env


def build(kube: str) -> Path:
    modfile, tags = RELEASES[kube]
    out = CACHE / "bin" / f"recorder-{kube}"
    cmd = ["go", "build", "-p", "2", "-o", str(out)]
    if modfile != "go.mod":
        cmd += ["-modfile", modfile]
    if tags:
        cmd += ["-tags", tags]
    start = time.monotonic()
    try:
        subprocess.run([*cmd, "."], cwd=HERE, env=go_env(), check=True)
    except FileNotFoundError:
        sys.exit(f"conformance needs Go {GO_VERSION} or newer on PATH (`go version`)")
    print(f"built {out.relative_to(ROOT)} (kube-scheduler {kube}) in {time.monotonic() - start:.1f} s")
    return out


def record(binary: Path, scenario: Path, out: Path, follow: bool) -> float:
    cmd = [str(binary), "-in", str(scenario), "-out", str(out)]
    if follow:
        cmd.append("-follow")
    start = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"recorder failed on {scenario}:\n{run.stderr}")
    return time.monotonic() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kube", default="1.35", choices=sorted(RELEASES))
    ap.add_argument("--scenarios", type=Path, help="a folder of scenario files (default: generate them)")
    ap.add_argument("--areas", help="comma-separated (default: every area the release's recorder can run)")
    ap.add_argument("--per-area", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--follow", action="store_true", help="decide on the cluster the scenarios' own results left")
    ap.add_argument("--save", type=Path, help="also copy the recordings here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    if args.areas is None:  # an area of out-of-tree plugins only where the recorder has them (generate.RELEASES_OF)
        areas = [a for a in generate.GENERATORS if args.kube in generate.RELEASES_OF.get(a, (args.kube,))]
        args.areas = ",".join(areas)
    for area in args.areas.split(","):
        if area not in generate.GENERATORS:
            ap.error(f"--areas: unknown area {area!r} (known: {', '.join(generate.GENERATORS)})")
        if args.kube not in generate.RELEASES_OF.get(area, (args.kube,)):
            ap.error(f"--areas: {area} is recorded at kube-scheduler {', '.join(generate.RELEASES_OF[area])} only")
    work = CACHE / "conformance" / args.kube
    binary = build(args.kube)
    if args.scenarios:
        scenarios = compare.scenario_files([args.scenarios])
    else:
        gen_dir = work / "scenarios"
        shutil.rmtree(gen_dir, ignore_errors=True)
        gen_dir.mkdir(parents=True)
        for area in args.areas.split(","):
            for k in range(args.per_area):
                path, doc = generate.scenario(area, args.seed, k)
                (gen_dir / path).write_text(generate.dump(generate.for_release(doc, args.kube)))
        scenarios = sorted(gen_dir.glob("*.json"))
    rec_dir = work / "recorded"
    shutil.rmtree(rec_dir, ignore_errors=True)
    rec_dir.mkdir(parents=True)
    times = []
    for s in scenarios:
        seconds = record(binary, s, rec_dir / s.name, args.follow)
        times.append(seconds)
        if args.verbose:
            print(f"recorded {s.name} in {seconds:.2f} s")
    if times:
        print(f"recorded {len(times)} scenarios in {sum(times):.1f} s ({sum(times) / len(times):.2f} s each)")
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for f in sorted(rec_dir.glob("*.json")):
            shutil.copy(f, args.save / f.name)
    return compare.compare_packsched(sorted(rec_dir.glob("*.json")), None, args.verbose)


if __name__ == "__main__":
    raise SystemExit(main())
