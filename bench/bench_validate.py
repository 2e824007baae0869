"""How long ``packsched validate`` takes on one big manifest file (issue 13: 575 s on a 50 MB file).

Generates a multi-document YAML file of Nodes and Pods, as ``kubectl get -o yaml`` would write them (block style,
a few flow-style ``{}`` and ``[]``), of about ``--mb`` megabytes, then times ``packsched validate FILE`` in a
subprocess (best of ``--repeat``)::

    .venv/bin/python bench/bench_validate.py --mb 50
    .venv/bin/python bench/bench_validate.py --mb 50 --keep /tmp/big.yaml   # keep the file for other commands
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NODE = """apiVersion: v1
kind: Node
metadata:
  name: node-{i:06d}
  labels:
    kubernetes.io/hostname: node-{i:06d}
    topology.kubernetes.io/zone: zone-{zone}
    node.kubernetes.io/instance-type: gpu-8x
  annotations: {{}}
spec:
  taints: []
status:
  capacity:
    cpu: "64"
    memory: 512Gi
    pods: "110"
    nvidia.com/gpu: "8"
  allocatable:
    cpu: "63"
    memory: 500Gi
    pods: "110"
    nvidia.com/gpu: "8"
"""

POD = """apiVersion: v1
kind: Pod
metadata:
  name: job-{i:07d}
  namespace: team-{team}
  labels:
    app: trainer-{team}
    batch.kubernetes.io/job-name: job-{i:07d}
  annotations:
    packsched.io/arrival-time: "{arrival}s"
    packsched.io/run-duration: "{duration}s"
spec:
  schedulerName: default-scheduler
  priority: {priority}
  tolerations: []
  containers:
  - name: main
    image: registry.example.com/team-{team}/trainer:v1.{team}
    command: ["python", "train.py", "--epochs", "10"]
    env:
    - name: RANK
      value: "{rank}"
    resources:
      requests:
        cpu: {cpu}m
        memory: {mem}Mi
        nvidia.com/gpu: "{gpus}"
      limits:
        nvidia.com/gpu: "{gpus}"
"""


def generate(path: Path, megabytes: float) -> tuple[int, int]:
    """Write the file; returns (nodes, pods)."""
    target = int(megabytes * 1024 * 1024)
    size = nodes = pods = 0
    with path.open("w", encoding="utf-8") as fh:
        while size < target:
            if (nodes + pods) % 20 == 0:
                text = NODE.format(i=nodes, zone=nodes % 3)
                nodes += 1
            else:
                i = pods
                pods += 1
                text = POD.format(
                    i=i,
                    team=i % 17,
                    arrival=i % 3600,
                    duration=60 + i % 600,
                    priority=i % 3 * 100,
                    rank=i % 8,
                    cpu=250 * (1 + i % 8),
                    mem=512 * (1 + i % 4),
                    gpus=i % 3,
                )
            text = ("---\n" if size else "") + text
            fh.write(text)
            size += len(text)
    return nodes, pods


def time_validate(path: Path, repeat: int) -> tuple[float, int, str]:
    best = float("inf")
    rc, tail = 0, ""
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "packsched", "validate", str(path)], capture_output=True, text=True, check=False
        )
        best = min(best, time.perf_counter() - start)
        lines = (proc.stdout + proc.stderr).strip().splitlines()
        rc, tail = proc.returncode, lines[-1] if lines else ""
    return best, rc, tail


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the generated file in MB (default 50)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of validate; the best is reported")
    parser.add_argument("--keep", type=Path, default=None, help="write the file here and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "big.yaml"
        start = time.perf_counter()
        nodes, pods = generate(path, args.mb)
        made = time.perf_counter() - start
        mb = path.stat().st_size / 1024 / 1024
        print(f"generated {path}: {mb:.1f} MB, {nodes} nodes, {pods} pods in {made:.1f} s", flush=True)
        seconds, rc, tail = time_validate(path, args.repeat)
        print(f"packsched validate: {seconds:.1f} s (exit {rc}) {tail}")


if __name__ == "__main__":
    main()
