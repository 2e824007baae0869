"""Benchmark: ``packsched serve`` (the real command, in a process of its own) against the fake API server of the
test suite, which runs in this process on loopback.

Every pod goes the whole way: created on the API server, seen through the pods watch, scheduled, bound with a POST
to ``pods/binding``, the binding confirmed by the watch, a ``Scheduled`` event written. Reports pods bound per
second (from the first bind to the last) and checks, as the fault tests do, that every pod was bound exactly once
and no node is over-committed. Every write to the fake API server takes ``--write-latency-ms`` (5 ms: a real API
server with etcd on loopback), so a synchronous binding path shows. The scheduler's configuration is the one
shipped in deploy/ with ``clientConnection.qps`` set to ``--qps`` (1000, as in the comparison with kube-scheduler
on a real cluster). ``--faults`` adds faults while it runs: every watch cut every second, 1% of binds answered 500,
the watch history compacted once (410 Gone, relist), and an outage of ``--outage-s`` seconds (every request
dropped unanswered) a third of the way through; it reports the scheduler's log lines during the outage.

Run: ``.venv/bin/python bench/bench_live.py [--nodes N] [--pods N] [--faults]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import threading
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
    ap.add_argument("--write-latency-ms", type=float, default=5.0)
    ap.add_argument("--qps", type=float, default=1000.0)
    ap.add_argument("--outage-s", type=float, default=10.0)
    ap.add_argument("--binding-workers", type=int, default=16)
    ap.add_argument(
        "--serve-src",
        default="",
        help="run `packsched serve` from this source tree (its src/ folder) instead: a baseline before this change, "
        "given only the options it knows",
    )
    args = ap.parse_args()
    rng = random.Random(7)
    api = FakeApiServer(max_watch_s=30.0, write_latency_s=args.write_latency_ms / 1000).start()
    tmp = Path(tempfile.mkdtemp(prefix="packsched-bench-"))
    kubeconfig = api.kubeconfig(str(tmp / "kubeconfig"))
    config = write_config(tmp, fast_election=False, qps=args.qps)
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
        "info",
    ]
    env = dict(os.environ)
    if args.serve_src:
        env["PYTHONPATH"] = str(Path(args.serve_src).resolve() / "src")
    else:
        cmd += ["--binding-workers", str(args.binding_workers)]
    if args.faults:
        # An outage as long as renewDeadline (10 s) loses the lease, and kube-scheduler exits then too: the fault
        # run measures one scheduler riding the outage out, without leader election.
        cmd.append("--no-leader-elect")
    lines: list[tuple[float, str]] = []  # the scheduler's log lines, with when they came
    proc = subprocess.Popen(cmd, cwd=args.serve_src or ROOT, stderr=subprocess.PIPE, text=True, env=env)
    reader = threading.Thread(target=_read_lines, args=(proc, lines), daemon=True)
    reader.start()
    start = time.monotonic()
    deadline = start + args.timeout
    cpu0 = _cpu_s(proc.pid)
    compacted = False
    outage: tuple[float, float] | None = None
    last_drop = start
    try:
        while time.monotonic() < deadline:
            bound = len(api.stats.bindings)
            if bound >= args.pods:
                break
            now = time.monotonic()
            if args.faults and outage is None and bound > args.pods // 3:
                api.outage(args.outage_s)
                outage = (now, now + args.outage_s)
            if args.faults and now - last_drop >= 1.0 and not api.is_down():
                api.drop_watches()
                last_drop = now
            if args.faults and not compacted and bound > args.pods // 2 and not api.is_down():
                with api.lock:
                    api.compact()
                compacted = True
            time.sleep(0.05)
    finally:
        cpu = _cpu_s(proc.pid) - cpu0
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        reader.join(5)
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
    print(
        f"serve from {args.serve_src or 'this tree'}; write latency {args.write_latency_ms:g} ms, qps {args.qps:g}, "
        f"binding workers {'-' if args.serve_src else args.binding_workers}; "
        f"scheduler CPU {cpu:.1f} s ({1000 * cpu / max(len(bound_pods), 1):.2f} ms/pod); "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    peak = next((text for _, text in reversed(lines) if "bindingsInFlightPeak" in text), "")
    if peak:
        print(f"binding cycles in flight at most: {json.loads(peak).get('bindingsInFlightPeak')}")
    if outage is not None:
        t0, t1 = outage
        span = max(last - first - args.outage_s, 1e-9)
        busy = (len(bound_pods) - 1) / span
        print(f"first to last bind less the {args.outage_s:g} s outage: {span:.1f}s -> {busy:.0f} pods/s")
        during = [text for t, text in lines if t0 <= t <= t1 + 1.0]
        dropped = api.stats.dropped_in_outage
        print(
            f"outage {args.outage_s:g} s: {dropped} requests dropped; scheduler log lines during it: {len(during)} "
            f"({len(during) / args.outage_s:.2f}/s); log lines in all: {len(lines)}"
        )
        for text in during:
            print("  | " + text[:200])
    if proc.returncode != 0 or len(bound_pods) != args.pods:
        print("\n".join(text for _, text in lines[-30:]))
        sys.exit(1)
    api.stop()


def _read_lines(proc: subprocess.Popen[str], out: list[tuple[float, str]]) -> None:
    assert proc.stderr is not None
    for line in proc.stderr:
        out.append((time.monotonic(), line.rstrip("\n")))


def _cpu_s(pid: int) -> float:
    """User and system CPU seconds of a running process (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
