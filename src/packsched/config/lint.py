"""Bin-packing traps in a loaded configuration: each warning names the profile and says what to do.

(a) another score plugin that prefers emptier or balanced nodes and weighs at least as much as the packing
    plugin can outvote it; (b) percentageOfNodesToScore below 100 (including the adaptive default) scores
    only a rotating subset of the nodes in clusters of 100 nodes or more (kubernetes#95709); (c) a resource
    list made only of extended/scalar resources gives every pod that requests none of them a score of 0 on
    every node (kubernetes#119849). Policy files get notes on their era.
"""

from __future__ import annotations

from dataclasses import dataclass

from packsched.config import catalog
from packsched.config.types import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SEMANTICS_CURRENT,
    SEMANTICS_V1_16,
    KubeSchedulerConfiguration,
    NodeResourcesFitArgs,
    Profile,
    ScoreOnlyResourceArgs,
    ScoringStrategy,
    UtilizationShapePoint,
)

NATIVE_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
# Score plugins that, whatever their args, pull pods apart or towards nodes for reasons other than fullness.
SPREADING_PLUGINS = {
    "NodeResourcesBalancedAllocation": "nodes whose resource fractions stay balanced, not full ones",
    "ImageLocality": "nodes that already hold the pod's images, wherever they are",
    "PodTopologySpread": "spreading pods across topology domains",
    "SelectorSpread": "spreading pods of one service or controller across nodes",
}


@dataclass
class _Scorer:
    name: str
    weight: int
    strategy: ScoringStrategy | None


def _shape_value(shape: list[UtilizationShapePoint], p: int) -> float:
    for i, point in enumerate(shape):
        if p <= point.utilization:
            if i == 0:
                return point.score
            prev = shape[i - 1]
            span = point.utilization - prev.utilization
            return prev.score + (point.score - prev.score) * (p - prev.utilization) / span
    return shape[-1].score


def _direction(strategy: ScoringStrategy | None) -> int:
    """+1 when the strategy favours fuller nodes (packs), -1 when it favours emptier ones, 0 otherwise."""
    if strategy is None:
        return 0
    if strategy.type == MOST_ALLOCATED:
        return 1
    if strategy.type == LEAST_ALLOCATED:
        return -1
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO and strategy.requested_to_capacity_ratio is not None:
        shape = strategy.requested_to_capacity_ratio.shape
        if shape:
            low, high = _shape_value(shape, 0), _shape_value(shape, 100)
            return 1 if high > low else -1 if high < low else 0
    return 0


def _describe(strategy: ScoringStrategy) -> str:
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO and strategy.requested_to_capacity_ratio is not None:
        points = ", ".join(f"{p.utilization}%->{p.score}" for p in strategy.requested_to_capacity_ratio.shape)
        return f"RequestedToCapacityRatio [{points}]"
    return strategy.type


def score_plugins(prof: Profile) -> list[_Scorer]:
    """The score plugins a profile runs, with weights (0 -> 1), after multiPoint expansion as upstream does
    it: plugins named at the score point, then multiPoint score plugins not disabled there."""
    score = prof.plugins.sets.get("score")
    enabled = list(score.enabled) if score else []
    disabled = {p.name for p in score.disabled} if score else set()
    refs = list(enabled)
    if "*" not in disabled:
        named = {p.name for p in enabled}
        refs += [
            p
            for p in prof.plugins.multi_point.enabled
            if p.name in catalog.SCORE_PLUGINS and p.name not in disabled and p.name not in named
        ]
    out: list[_Scorer] = []
    seen: set[str] = set()
    for ref in refs:
        if ref.name in seen or ref.name not in catalog.SCORE_PLUGINS:
            continue
        seen.add(ref.name)
        args = prof.plugin_config.get(ref.name)
        strategy = None
        if isinstance(args, NodeResourcesFitArgs | ScoreOnlyResourceArgs):
            strategy = args.scoring_strategy
        out.append(_Scorer(ref.name, ref.weight or 1, strategy))
    return out


def _lint_profile(cfg: KubeSchedulerConfiguration, prof: Profile) -> list[str]:
    out: list[str] = []
    who = f'profile "{prof.scheduler_name}"'
    scorers = score_plugins(prof)
    packers = [s for s in scorers if _direction(s.strategy) > 0]

    # (a) a plugin that prefers the opposite can outvote packing.
    for packer in packers:
        assert packer.strategy is not None
        what = f"{packer.name} ({_describe(packer.strategy)}, weight {packer.weight})"
        for other in scorers:
            if other is packer:
                continue
            reason = SPREADING_PLUGINS.get(other.name)
            if reason is None and _direction(other.strategy) < 0:
                assert other.strategy is not None
                reason = f"emptier nodes ({_describe(other.strategy)})"
            if reason is None or other.weight < packer.weight:
                continue
            out.append(
                f"{who}: {other.name} (weight {other.weight}) can outvote bin packing by {what}: it prefers "
                f"{reason} and adds up to {100 * other.weight} points against {100 * packer.weight}; raise "
                f"{packer.name}'s weight above {other.weight} or disable {other.name}"
            )
    if packers and cfg.source_version in (catalog.V1, catalog.V1BETA3, "default"):
        # Default multiPoint plugins packsched drops would still score in kube-scheduler unless the score
        # point disables them (or "*", which stops multiPoint expansion there).
        score = prof.plugins.sets.get("score")
        off = {p.name for p in score.disabled} if score else set()
        left_out = [
            n
            for n in prof.omitted_default_plugins
            if (n in SPREADING_PLUGINS or n == "InterPodAffinity") and "*" not in off and n not in off
        ]
        if left_out:
            out.append(
                f"{who}: kube-scheduler would also score with {', '.join(left_out)} (default plugins "
                "packsched leaves out), which can pull pods away from the fullest nodes; disable them in the "
                "real configuration or give the packing plugin a clearly larger weight"
            )

    # (b) only a subset of the nodes is scored.
    if packers:
        pct = prof.percentage_of_nodes_to_score
        source = "the profile's" if pct is not None else "the global"
        if pct is None:
            pct = cfg.percentage_of_nodes_to_score
        if pct is None or pct == 0:
            out.append(
                f"{who}: percentageOfNodesToScore is 0 ({source} value; 0 = adaptive, the default): in a "
                "cluster of n >= 100 nodes the scheduler scores only max(5, 50 - n/125)% of the nodes (it "
                "stops filtering after max(100, n x that percentage / 100) feasible nodes), and each cycle "
                "starts where the last stopped, so successive pods see different nodes and packing turns "
                "into spreading (kubernetes#95709); set percentageOfNodesToScore: 100 to score every "
                "feasible node"
            )
        elif pct < 100:
            out.append(
                f"{who}: percentageOfNodesToScore is {pct} ({source} value): in a cluster of n >= 100 nodes "
                f"the scheduler scores only max(100, n x {pct} / 100) feasible nodes, starting each cycle "
                "where the last stopped, which spreads pods instead of packing them (kubernetes#95709); set "
                "percentageOfNodesToScore: 100"
            )

    # (c) only extended/scalar resources are scored.
    for s in scorers:
        strategy = s.strategy
        if strategy is None or not strategy.resources or strategy.semantics != SEMANTICS_CURRENT:
            continue
        names = [r.name for r in strategy.resources]
        if any(n in NATIVE_RESOURCES for n in names):
            continue
        out.append(
            f"{who}: {s.name} scores only {', '.join(names)}: a pod that requests none of them gets "
            f"score 0 from {s.name} on every node (unrequested extended resources are skipped since v1.22, "
            "kubernetes#119849), so its placement is left to the other plugins; add cpu and memory to the "
            "resources (a small weight is enough) if such pods should be packed too"
        )
    return out


def _policy_notes(cfg: KubeSchedulerConfiguration) -> list[str]:
    out = [
        "kind: Policy was removed in kube-scheduler v1.23 (KEP-2901): this file works only with v1.22 and "
        "older; today the same scoring is a KubeSchedulerConfiguration v1 with NodeResourcesFit's "
        "scoringStrategy"
    ]
    for prof in cfg.profiles:
        args = prof.plugin_config.get("RequestedToCapacityRatio")
        if not isinstance(args, ScoreOnlyResourceArgs):
            continue
        semantics = args.scoring_strategy.semantics
        if semantics == SEMANTICS_V1_16:
            out.append(
                "RequestedToCapacityRatio is scored as in v1.16: the 0..10 shape is used as is (node scores "
                "0..10), utilisation is rounded up and resources absent from a node score f(100)"
            )
        elif semantics == SEMANTICS_CURRENT:
            out.append(
                "RequestedToCapacityRatio is scored with today's (v1.22+) arithmetic: shape x10 (0..100), "
                "utilisation rounded down, unrequested extended resources skipped; the v1.17-v1.21 "
                "schedulers that read this Policy rounded utilisation up and skipped nothing "
                "(--rtcr-semantics v1.17), "
                "v1.16 used the 0..10 shape as is (--rtcr-semantics v1.16)"
            )
        else:
            out.append(
                "RequestedToCapacityRatio is scored as in v1.17-v1.21: shape x10 (0..100), utilisation "
                "rounded up, no resource skipped"
            )
    return out


def lint(cfg: KubeSchedulerConfiguration) -> list[str]:
    out: list[str] = []
    for prof in cfg.profiles:
        out += _lint_profile(cfg, prof)
    if cfg.source_version == "Policy":
        out += _policy_notes(cfg)
    return out
