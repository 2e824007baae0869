"""Benchmark: the CPU one API request costs serve's client, for the two writes every bound pod makes (its
``pods/binding`` POST and its ``Scheduled`` event).

The fake API server of the test suite runs in a process of its own (as in ``bench_live_start.py``), holding
``--requests`` pending pods; this process binds each of them once, one request after another on one thread,
through the port serve uses (``KubernetesPort`` behind ``MonitoredPort``), then records one ``Scheduled`` event
per pod through an unstarted ``Recorder`` (the write is sent in the calling thread). Reported per request: the
thread's CPU time (``time.thread_time``: user and system, the client's part only) and the wall time. Every write
takes ``--write-latency-ms`` on the server (5 ms, as in bench_live), so each request waits for its answer as in
serve. Runs ``--runs`` times (each with a fresh server) and prints each run and the medians. The client is the one
on ``PYTHONPATH``: run it with ``PYTHONPATH=<tree>/src`` to measure another tree's client with the same server.

Run: ``PYTHONPATH=src .venv/bin/python bench/bench_requests.py [--requests N] [--runs N] [--write-latency-ms MS]``
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from bench_live_start import _api_process  # noqa: E402


def one_run(requests: int, latency_s: float) -> tuple[float, float, float, float]:
    """(bind CPU us, bind wall ms, event CPU us, event wall ms) per request."""
    import packsched
    from packsched.api.objects import Pod
    from packsched.live.health_port import ApiHealth, MonitoredPort
    from packsched.live.kube import KubernetesPort
    from packsched.live.recorder import Recorder

    print(f"client from {Path(packsched.__file__).resolve().parents[1]}", file=sys.stderr)
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    nodes = requests // 10 + 1  # ten pods a node at most: none over-committed
    api = ctx.Process(target=_api_process, args=(child, nodes, requests, latency_s, tempfile.mkdtemp()), daemon=True)
    api.start()
    try:
        kubeconfig = parent.recv()
        port = MonitoredPort(KubernetesPort.connect(kubeconfig, qps=1e6, burst=1_000_000), ApiHealth(time.monotonic))
        c0, w0 = time.thread_time(), time.perf_counter()
        for i in range(requests):
            port.bind("default", f"p{i:05d}", "", f"node-{i % nodes:04d}")
        c1, w1 = time.thread_time(), time.perf_counter()
        recorder = Recorder(port, "bench")  # not started: each write is sent here
        pods = []
        for i in range(requests):
            p = Pod(name=f"p{i:05d}", namespace="default")
            p.uid = f"uid-{i}"
            pods.append(p)
        c2, w2 = time.thread_time(), time.perf_counter()
        for p in pods:
            recorder.event(p, "Normal", "Scheduled", "Binding", f"Successfully assigned {p.key} to node-0001")
        c3, w3 = time.thread_time(), time.perf_counter()
        if recorder.stats.sent != requests:
            raise SystemExit(f"{recorder.stats.sent} of {requests} events sent")
        parent.send(("check", None))
        problem = parent.recv()
        if problem:
            raise SystemExit(f"cluster check failed: {problem}")
    finally:
        parent.send(("stop", None))
        parent.recv()
        api.join(10)
    n = requests
    return 1e6 * (c1 - c0) / n, 1e3 * (w1 - w0) / n, 1e6 * (c3 - c2) / n, 1e3 * (w3 - w2) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2000, help="binds, then events (one per pod)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--write-latency-ms", type=float, default=5.0, help="time every write to the API server takes")
    args = ap.parse_args()
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}, load {os.getloadavg()}")
    print(f"requests={args.requests} write latency {args.write_latency_ms:g} ms")
    print(f"{'run':>6} | {'bind CPU us':>11} | {'bind ms':>7} | {'event CPU us':>12} | {'event ms':>8}")
    rows = []
    for i in range(args.runs):
        row = one_run(args.requests, args.write_latency_ms / 1000)
        rows.append(row)
        print(f"{i + 1:>6} | {row[0]:>11.1f} | {row[1]:>7.2f} | {row[2]:>12.1f} | {row[3]:>8.2f}")
    med = [statistics.median(r[k] for r in rows) for k in range(4)]
    print(f"{'median':>6} | {med[0]:>11.1f} | {med[1]:>7.2f} | {med[2]:>12.1f} | {med[3]:>8.2f}")


if __name__ == "__main__":
    main()
