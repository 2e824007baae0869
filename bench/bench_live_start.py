"""Benchmark: how soon ``packsched serve`` binds after it is started, and how fast it binds then.

The fake API server of the test suite (``tests/live/fakeapi.py``) runs in a process of its own (so that neither it
nor this script takes the scheduler's interpreter lock), holding ``--nodes`` nodes and ``--pods`` pending pods of
the ``packsched`` scheduler before serve starts; every write to it takes ``--write-latency-ms`` (5 ms). Then
``python -m packsched serve`` (what the ``packsched`` command runs) starts as a process of its own, with the shipped
configuration of deploy/ (``clientConnection.qps`` set to ``--qps``), and runs until every pod is bound.

Measured from the moment serve's process is started (one monotonic clock: the three processes share it):

- first log line: serve's first line on standard error (its imports, configuration and client are ready);
- lists answered: the fake API server sent its answer to the last of serve's initial lists;
- caches synced: serve's "caches synced" log line (absent in versions before it was added: "-");
- first bind: the fake API server accepted the first Binding;
- last bind: it accepted the last one;
- pods/s: (pods - 1) / (last bind - first bind);
- sync -> bind: first bind less caches synced (or less lists answered, where serve does not say);
- CPU@bind1: serve's CPU time (user + system, all its threads) when the first bind came, polled every 5 ms: what
  start-up costs, less sensitive than the times above to other load on the machine; CPU@log1, CPU@sync: the same
  when its first log line and its "caches synced" line came; CPU: at the last bind; CPU ms/pod: (CPU - CPU@bind1)
  / (pods - 1), what binding costs serve.

Every run checks, as the fault tests do, that every pod was bound exactly once and that no node is over-committed.
Runs ``--runs`` times (3) and prints each run and the medians. ``--serve-src DIR`` runs serve from another source
tree (its ``src/``): a baseline.

Run: ``.venv/bin/python bench/bench_live_start.py [--nodes N] [--pods N] [--runs N] [--write-latency-ms MS]``
(``make bench-live-start``; ``--help`` lists every option).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from live.fakeapi import FakeApiServer  # noqa: E402
from live.harness import check_cluster, node, pod, write_config  # noqa: E402

SIZES = [("250m", "256Mi"), ("500m", "512Mi"), ("1", "1Gi"), ("2", "4Gi")]  # as bench_live.py's pods
SYNCED_MSG = "caches synced"


def _api_process(conn: Connection, nodes: int, pods: int, latency_s: float, tmp: str) -> None:
    """The fake API server's process: fill it, tell the parent where it is, answer its questions until told to
    stop."""
    api = FakeApiServer(max_watch_s=60.0, write_latency_s=latency_s).start()
    api.create_many("nodes", [node(f"node-{i:04d}", cpu="32", memory="128Gi", pods=110) for i in range(nodes)])
    rng = random.Random(7)
    objs = []
    for i in range(pods):
        cpu, mem = rng.choice(SIZES)
        objs.append(pod(f"p{i:05d}", cpu=cpu, memory=mem))
    api.create_many("pods", objs)
    conn.send(api.kubeconfig(os.path.join(tmp, "kubeconfig")))
    while True:
        cmd, arg = conn.recv()
        if cmd == "first_bind":  # when it came (monotonic), 0.0 before
            conn.send(api.first_bind)
        elif cmd == "wait":  # until every pod is bound, or arg seconds
            api.wait_for(lambda s: len(s.stats.bindings) >= pods, arg)
            conn.send(len(api.stats.bindings))
        elif cmd == "stats":
            with api.lock:
                lists: dict[str, float] = {}
                for plural, t in api.stats.lists:
                    lists.setdefault(plural, t)  # each resource's first list
                conn.send(
                    {
                        "first_request": api.stats.times[0] if api.stats.times else 0.0,
                        "lists_answered": max(lists.values()) if lists else 0.0,
                        "first_bind": api.first_bind,
                        "last_bind": api.last_bind,
                        "bound": len(api.stats.bindings),
                        "requests": api.stats.requests,
                    }
                )
        elif cmd == "check":
            try:
                check_cluster(api, expect_bound=pods)
                conn.send("")
            except AssertionError as exc:
                conn.send(str(exc) or "check failed")
        else:
            api.stop()
            conn.send("stopped")
            return


@dataclass
class Run:
    first_line: float
    lists_answered: float
    synced: float | None
    first_bind: float
    last_bind: float
    rate: float
    cpu_first_line: float
    cpu_synced: float | None
    cpu_first_bind: float
    cpu_s: float
    requests: int

    pods: int = 0

    @property
    def sync_to_bind(self) -> float:
        return self.first_bind - (self.synced if self.synced is not None else self.lists_answered)

    @property
    def cpu_per_pod_ms(self) -> float:
        """serve's CPU from the first bind to the last, per pod (ms)."""
        return 1000 * (self.cpu_s - self.cpu_first_bind) / max(self.pods - 1, 1)


def one_run(args: argparse.Namespace) -> Run:
    ctx = mp.get_context("spawn")
    tmp = tempfile.mkdtemp(prefix="packsched-bench-start-")
    parent, child = ctx.Pipe()
    api = ctx.Process(
        target=_api_process,
        args=(child, args.nodes, args.pods, args.write_latency_ms / 1000, tmp),
        daemon=True,
    )
    api.start()
    try:
        kubeconfig = parent.recv()
        return _measure(args, parent, kubeconfig, write_config(Path(tmp), fast_election=False, qps=args.qps))
    finally:
        parent.send(("stop", None))
        parent.recv()
        api.join(10)


def _measure(args: argparse.Namespace, api: Connection, kubeconfig: str, config: str) -> Run:
    cmd = [sys.executable, "-m", "packsched", "serve", "--config", config, "--kubeconfig", kubeconfig]
    cmd += ["--port", "0", "--log-level", "info"]
    env = dict(os.environ)
    if args.serve_src:
        env["PYTHONPATH"] = str(Path(args.serve_src).resolve() / "src")
    if args.binding_workers:
        cmd += ["--binding-workers", str(args.binding_workers)]
    lines: list[tuple[float, str, float]] = []  # (when, text, serve's CPU seconds then) of each log line
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True, env=env)
    reader = threading.Thread(target=_read_lines, args=(proc, lines), daemon=True)
    reader.start()
    try:
        # serve's CPU time (all threads) when the first bind came: what start-up costs, less sensitive to other
        # load on the machine than the wall-clock times (polled every 5 ms)
        cpu_first = float("nan")
        while time.monotonic() - start < args.timeout and proc.poll() is None:
            api.send(("first_bind", None))
            if api.recv():
                cpu_first = _cpu_s(proc.pid)
                break
            time.sleep(0.005)
        api.send(("wait", args.timeout))
        api.recv()
        cpu = _cpu_s(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        reader.join(5)
    api.send(("stats", None))
    st: dict[str, Any] = api.recv()
    api.send(("check", None))
    problem = api.recv()
    if st["bound"] < args.pods or problem or proc.returncode != 0:
        print("\n".join(text for _, text, _ in lines[-30:]), file=sys.stderr)
        sys.exit(f"run failed: bound {st['bound']}/{args.pods}, exit code {proc.returncode}, {problem or 'checked'}")
    synced_line = next(((t, cpu) for t, text, cpu in lines if SYNCED_MSG in _msg(text)), None)
    synced = None if synced_line is None else synced_line[0]
    first, last = st["first_bind"], st["last_bind"]
    return Run(
        first_line=lines[0][0] - start if lines else float("nan"),
        cpu_first_line=lines[0][2] if lines else float("nan"),
        cpu_synced=None if synced_line is None else synced_line[1],
        lists_answered=st["lists_answered"] - start,
        synced=None if synced is None else synced - start,
        first_bind=first - start,
        last_bind=last - start,
        rate=(args.pods - 1) / (last - first) if last > first else float("nan"),
        cpu_first_bind=cpu_first,
        cpu_s=cpu,
        requests=st["requests"],
        pods=args.pods,
    )


def _msg(line: str) -> str:
    try:
        data = json.loads(line)
    except ValueError:
        return line
    return str(data.get("msg", "")) if isinstance(data, dict) else line


def _read_lines(proc: subprocess.Popen[str], out: list[tuple[float, str, float]]) -> None:
    assert proc.stderr is not None
    for line in proc.stderr:
        out.append((time.monotonic(), line.rstrip("\n"), _cpu_s(proc.pid)))


def _cpu_s(pid: int) -> float:
    """User and system CPU seconds of a running process (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _fmt(v: float | None, unit: str = "s") -> str:
    if v is None:
        return "-"
    return f"{v:.3f} s" if unit == "s" else f"{v:.2f}" if unit == "ms" else f"{v:,.0f}"


class _HelpFormat(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """The module's description as written, and each option's default."""


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\nRun:")[0], formatter_class=_HelpFormat)
    ap.add_argument("--nodes", type=int, default=200, help="nodes (32 cpu, 128Gi, 110 pods each)")
    ap.add_argument("--pods", type=int, default=3000, help="pending pods (250m-2 cpu) created before serve starts")
    ap.add_argument("--runs", type=int, default=3, help="runs, each with a fresh API server and serve process")
    ap.add_argument("--write-latency-ms", type=float, default=5.0, help="time every write to the API server takes")
    ap.add_argument("--qps", type=float, default=1000.0, help="the configuration's clientConnection.qps")
    ap.add_argument(
        "--binding-workers", type=int, default=0, help="serve's --binding-workers (0: serve's default, not passed)"
    )
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a run may take to bind every pod")
    ap.add_argument(
        "--serve-src", default="", help="run serve from this source tree's src/ instead of this one (a baseline)"
    )
    ap.add_argument("--json", action="store_true", help="print the runs and medians as JSON instead of a table")
    args = ap.parse_args()
    runs = [one_run(args) for _ in range(args.runs)]
    cols = ["first_line", "lists_answered", "synced", "first_bind", "sync_to_bind", "last_bind", "rate"]
    cols += ["cpu_first_line", "cpu_synced", "cpu_first_bind", "cpu_s", "cpu_per_pod_ms"]
    rows = [{c: getattr(r, c) for c in cols} for r in runs]
    med = {c: _median([row[c] for row in rows]) for c in cols}
    if args.json:
        print(json.dumps({"runs": rows, "median": med}, indent=2))
        return
    machine = platform.processor() or platform.machine()
    print(f"machine: {machine}, {os.cpu_count()} cores, Python {platform.python_version()}, load {_load()}")
    print(
        f"nodes={args.nodes} pods={args.pods} write latency {args.write_latency_ms:g} ms, qps {args.qps:g}, "
        f"serve from {args.serve_src or 'this tree'}; every run bound every pod once, no node over-committed"
    )
    head = ["run", "first log", "lists done", "synced", "first bind", "sync->bind", "last bind", "pods/s"]
    head += ["CPU@log1", "CPU@sync", "CPU@bind1", "CPU", "CPU ms/pod"]
    print(" | ".join(f"{h:>10}" for h in head))
    for name, row in [*((str(i + 1), row) for i, row in enumerate(rows)), ("median", med)]:
        cells = [_fmt(row[c], "n" if c == "rate" else "ms" if c == "cpu_per_pod_ms" else "s") for c in cols]
        print(" | ".join(f"{v:>10}" for v in [name, *cells]))


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


if __name__ == "__main__":
    main()
