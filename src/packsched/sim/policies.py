"""Named scheduling policies for trace replays: the paper's six (each one score plugin) and our
NodeResourcesFit strategies, as ordinary KubeSchedulerConfiguration documents.

Every policy runs the default filters plus GPUShare (per-GPU fit, GPU assignment) and exactly one score plugin;
the default score plugins and preemption are off (a pod that fits nowhere is dropped), and every feasible node
is scored (percentageOfNodesToScore: 100). ``gpu_choice`` FirstFit gives GPUShare ``gpuChoice: FirstFit``; with
``as_dra`` GPUShare is left out: DynamicResources (a default plugin from 1.34) allocates the GPUs as devices
(``sim/dratrace.py``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from packsched.api.errors import InputError
from packsched.api.gpushare import GPU_MILLI
from packsched.backend.gpu.frag import TargetWorkload
from packsched.config.defaults import DEFAULT_FGD_PACK_RESOLUTION, DEFAULT_FGD_PACK_WEIGHT, DEFAULT_SCHEDULER_NAME
from packsched.config.loader import load_config, load_config_data
from packsched.config.types import KubeSchedulerConfiguration

API = "kubescheduler.config.k8s.io/v1"

# The paper's policies: our name -> score plugin (and the name of the policy in the authors' result files).
PAPER_POLICIES: dict[str, tuple[str, str]] = {
    "Random": ("RandomScore", "01-Random"),
    "DotProd": ("DotProductScore", "02-DotProd"),
    "Clustering": ("GpuClusteringScore", "03-GpuClustering"),
    "Packing": ("GpuPackingScore", "04-GpuPacking"),
    "BestFit": ("BestFitScore", "05-BestFit"),
    "FGD": ("FGDScore", "06-FGD"),
}
FIT_POLICIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
# Our own GPU policies (not the paper's): name -> (score plugin, its args besides the trace's targetWorkload).
OWN_POLICIES: dict[str, tuple[str, dict[str, Any]]] = {
    # issue 14; see fgd_pack.py: the plugin's defaults, written out
    "FGDPack": ("FGDPackScore", {"resolution": DEFAULT_FGD_PACK_RESOLUTION, "packWeight": DEFAULT_FGD_PACK_WEIGHT}),
    # FGD's own choices under a target workload weighed by popularity / sqrt(GPU demand) (issue 14, fgd_pack.py)
    "FGDDemand": ("FGDPackScore", {"resolution": "sigmoid", "packWeight": 0, "demandExponent": 0.5}),
}
POLICIES = (*PAPER_POLICIES, *FIT_POLICIES, *OWN_POLICIES)
# Like-for-like with BestFit (spec §5): CPU and GPU milli, weights 1:1, no memory.
FIT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": GPU_MILLI, "weight": 1}]
RTCR_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]


def policy_document(
    name: str, target: TargetWorkload | None = None, *, gpu_choice: str = "BestFit", as_dra: bool = False
) -> dict[str, Any]:
    if name not in POLICIES:
        raise InputError.single(
            f"unknown policy {name!r}; one of {', '.join(POLICIES)} (or give --config FILE)", path="--policy"
        )
    plugin_config: list[dict[str, Any]] = []
    if name in OWN_POLICIES:
        score, own_args = OWN_POLICIES[name]
        target_args: dict[str, Any] = {"targetWorkload": target.as_args()} if target is not None else {}
        plugin_config.append({"name": score, "args": {**own_args, **target_args}})
    elif name in PAPER_POLICIES:
        score = PAPER_POLICIES[name][0]
        if score == "FGDScore" and target is not None:
            plugin_config.append({"name": score, "args": {"targetWorkload": target.as_args()}})
    else:
        score = "NodeResourcesFit"
        strategy: dict[str, Any] = {"type": name, "resources": FIT_RESOURCES}
        if name == "RequestedToCapacityRatio":
            strategy["requestedToCapacityRatio"] = {"shape": RTCR_SHAPE}
        plugin_config.append({"name": score, "args": {"scoringStrategy": strategy}})
    multi_point: dict[str, Any] = {"enabled": [] if as_dra else [{"name": "GPUShare"}]}
    if gpu_choice != "BestFit" and not as_dra:
        plugin_config.append({"name": "GPUShare", "args": {"gpuChoice": gpu_choice}})
    return {
        "apiVersion": API,
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [
            {
                "schedulerName": DEFAULT_SCHEDULER_NAME,
                "plugins": {
                    "multiPoint": multi_point,
                    "score": {"disabled": [{"name": "*"}], "enabled": [{"name": score, "weight": 1}]},
                    "postFilter": {"disabled": [{"name": "*"}]},
                },
                "pluginConfig": plugin_config,
            }
        ],
    }


def policy_config(
    name: str,
    known: Collection[str],
    target: TargetWorkload | None = None,
    *,
    gpu_choice: str = "BestFit",
    as_dra: bool = False,
) -> KubeSchedulerConfiguration:
    doc = policy_document(name, target, gpu_choice=gpu_choice, as_dra=as_dra)
    return load_config_data(doc, f"<policy {name}>", known)


def file_config(path: str, known: Collection[str], target: TargetWorkload | None = None) -> KubeSchedulerConfiguration:
    """A user's config for a replay: FGDScore without a targetWorkload gets the trace's; an unset
    percentageOfNodesToScore becomes 100 (every feasible node scored, as the published protocol)."""
    cfg = load_config(path, known)
    if not cfg.percentage_of_nodes_to_score:
        cfg.percentage_of_nodes_to_score = 100
    if target is not None:
        for profile in cfg.profiles:
            args = profile.plugin_config.get("FGDScore")
            if not args:
                profile.plugin_config["FGDScore"] = {"targetWorkload": target.as_args()}
            own = profile.plugin_config.get("FGDPackScore")  # ours (issue 14): the trace's unless it names one
            if not own:
                profile.plugin_config["FGDPackScore"] = {"targetWorkload": target.as_args()}
            elif isinstance(own, dict) and "targetWorkload" not in own:
                profile.plugin_config["FGDPackScore"] = {**own, "targetWorkload": target.as_args()}
    return cfg
