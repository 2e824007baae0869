"""Benchmark: ``packsched serve`` (the real command, in a process of its own) against the fake API server of the
test suite, which runs in this process on loopback.

Every pod goes the whole way: created on the API server, seen through the pods watch, scheduled, bound with a POST
to ``pods/binding``, the binding confirmed by the watch, a ``Scheduled`` event written. Reports pods bound per
second (from the first bind to the last) and checks, as the fault tests do, that every pod was bound exactly once
and no node is over-committed. ``--faults`` adds faults while it runs: every watch cut every second, 1% of binds
answered 500, and the watch history compacted once (410 Gone, relist).

Run: ``.venv/bin/python bench/bench_live.py [--nodes N] [--pods N] [--faults]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from live.fakeapi import FakeApiServer  # noqa: E402
from live.harness import SCHEDULER, check_cluster, node, pod, write_config  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--pods", type=int, default=3000)
    ap.add_argument("--faults", action="store_true")
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args()
    rng = random.Random(7)
    api = FakeApiServer(max_watch_s=30.0).start()
    tmp = Path(tempfile.mkdtemp(prefix="packsched-bench-"))
    kubeconfig = api.kubeconfig(str(tmp / "kubeconfig"))
    config = write_config(tmp)
    api.create_many("nodes", [node(f"node-{i:04d}", cpu="32", memory="128Gi", pods=110) for i in range(args.nodes)])
    sizes = [("250m", "256Mi"), ("500m", "512Mi"), ("1", "1Gi"), ("2", "4Gi")]
    names = [f"p{i:05d}" for i in range(args.pods)]
    pods = []
    for n in names:
        cpu, mem = rng.choice(sizes)
        pods.append(pod(n, cpu=cpu, memory=mem))
    api.create_many("pods", pods)
    if args.faults:
        api.inject("POST", r"/binding$", status=500, count=args.pods // 100)
    cmd = [
        sys.executable,
        "-m",
        "packsched.cli.main",
        "serve",
        "--config",
        config,
        "--kubeconfig",
        kubeconfig,
        "--port",
        "0",
        "--log-level",
        "warning",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    start = time.monotonic()
    deadline = start + args.timeout
    compacted = False
    last_drop = start
    try:
        while time.monotonic() < deadline:
            bound = len(api.stats.bindings)
            if bound >= args.pods:
                break
            now = time.monotonic()
            if args.faults and now - last_drop >= 1.0:
                api.drop_watches()
                last_drop = now
                if not compacted and bound > args.pods // 2:
                    with api.lock:
                        api.compact()
                    compacted = True
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    wall = time.monotonic() - start
    placed = check_cluster(api)
    bound_pods = [k for k in placed if k.split("/", 1)[1] in set(names)]
    first, last = api.first_bind, api.last_bind
    rate = (len(bound_pods) - 1) / (last - first) if last and first and last > first else 0.0
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"nodes={args.nodes} pods={args.pods} faults={args.faults} scheduler={SCHEDULER}")
    print(f"bound {len(bound_pods)}/{args.pods} exactly once each (API server's count); no node over-committed")
    print(f"wall from start of serve: {wall:.1f}s; first to last bind: {last - first:.1f}s -> {rate:.0f} pods/s")
    print(
        f"API requests: {api.stats.requests}, watches: {api.stats.watches}, 410s: {api.stats.gone}, "
        f"faults fired: {api.stats.faults_fired}, exit code: {proc.returncode}"
    )
    if proc.returncode != 0 or len(bound_pods) != args.pods:
        print(stderr[-3000:])
        sys.exit(1)
    api.stop()


if __name__ == "__main__":
    main()
