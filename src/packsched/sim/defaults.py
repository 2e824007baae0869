"""Defaults of the trace commands (``replay``, ``compare``, ``tune``), in a module of their own: their options show
them, so the command line reads them at every start, without importing the replay, the sweeps or the tuner (which
``packsched serve`` never needs). The modules that use them import them from here."""

from __future__ import annotations

DEFAULT_TUNE = 1.3  # GPU requests inflated to this multiple of the cluster's capacity (the paper's default)
DEFAULT_NODES = "gpu_node"  # the paper's node list
DEFAULT_PODS = "default"  # the default trace's pod list
RAY_CONNECT_TIMEOUT_S = 10.0  # how long `--ray` waits for the cluster to answer
DEFAULT_STUDY = "packsched-tune"  # `packsched tune`'s study name in its storage
STORAGE_FILE = "study.db"  # `packsched tune`'s SQLite file, in --out-dir
# `packsched tune --metric`: the names of packsched.sim.tune.METRICS, in its order (tests/sim/test_tune.py checks)
METRIC_NAMES = ("unallocated-gpu", "pending-pods", "free-nodes")
# ... on a job workload: the names of packsched.sim.tune.JOB_METRICS, in its order; the first is the default
JOB_METRIC_NAMES = (
    "job-wait-mean",
    "job-wait-p50",
    "job-wait-p95",
    "jobs-never-started",
    "gpu-hours-held-at-permit",
    "gpu-hours-in-partial-gangs",
)
