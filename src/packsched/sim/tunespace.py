"""The configuration space that ``packsched tune`` searches (``kind: TuneSpace``): what a user can set in a stock
kube-scheduler's KubeSchedulerConfiguration, each value fixed or a range. A space file::

    apiVersion: packsched.io/v1alpha1
    kind: TuneSpace
    metadata: {name: gpu-stock}
    spec:
      strategies: [MostAllocated, RequestedToCapacityRatio]   # NodeResourcesFit's scoringStrategy.type
      resources:                                              # scoringStrategy.resources; weight 0 leaves it out
      - {name: cpu, weight: {min: 0, max: 10}}
      - {name: alibabacloud.com/gpu-milli, weight: {min: 1, max: 10}}
      shape:                                                  # RequestedToCapacityRatio only
      - {utilization: 0, score: {min: 0, max: 10}}
      - {utilization: 100, score: {min: 0, max: 10}}
      scorePlugins:                                           # score plugin weights; 0 disables the plugin
      - {name: NodeResourcesFit, weight: {min: 1, max: 10}}
      - {name: NodeResourcesBalancedAllocation, weight: {min: 0, max: 5}}
      percentageOfNodesToScore: {min: 50, max: 100}
      coscheduling:                                           # optional: the profile gets Coscheduling
        permitWaitingTimeSeconds: {min: 10, max: 600}
        podGroupBackoffSeconds: {min: 0, max: 300}

A value is an integer (fixed) or ``{min: A, max: B}`` (every integer from A to B; ``step: N`` for every Nth).
Every problem is reported with its field path (InputError, exit code 2 on the command line).

A point of the space (:class:`Choice`) becomes a whole KubeSchedulerConfiguration (:func:`config_document`): the
profile ``default-scheduler`` with GPUShare (per-GPU accounting, which the trace replay requires), the score
plugins of the choice alone, no preemption (the replay protocol drops a pod that fits nowhere), and the choice's
``percentageOfNodesToScore``. With ``coscheduling``, scheduler-plugins' Coscheduling joins the profile (its QueueSort
in place of PrioritySort, its PostFilter rejecting a gang's placed members) with the chosen args; an arg the space
leaves out keeps the plugin's default.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from packsched.api.decode import Reader
from packsched.api.errors import ErrorList, InputError
from packsched.api.gpushare import GPU_MILLI
from packsched.api.manifests import read_documents
from packsched.config import catalog
from packsched.config.args import MAX_CUSTOM_PRIORITY_SCORE, MAX_RESOURCE_WEIGHT, MAX_UTILIZATION, MIN_UTILIZATION
from packsched.config.defaults import DEFAULT_RESOURCES, DEFAULT_SCHEDULER_NAME
from packsched.config.loader import load_config_data
from packsched.config.types import REQUESTED_TO_CAPACITY_RATIO, SCORING_STRATEGY_TYPES
from packsched.plugins.registry import in_tree_registry
from packsched.sim.policies import RTCR_SHAPE

API_VERSION = "packsched.io/v1alpha1"
KIND = "TuneSpace"
CONFIG_API = catalog.V1
FIT = "NodeResourcesFit"
GPU_SHARE = "GPUShare"
# kube-scheduler's default score plugins (v1): the ones a stock configuration can weigh.
SCORE_PLUGINS = tuple(name for name, _ in catalog.V1_DEFAULT_MULTIPOINT if name in catalog.SCORE_PLUGINS)
MAX_PLUGIN_WEIGHT = 100  # packsched's bound for a search, far above kube-scheduler's defaults (1-3)
# NodeResourcesFit's weight when the space does not tune it: kube-scheduler's default.
FIT_WEIGHT = dict(catalog.V1_DEFAULT_MULTIPOINT)[FIT]
# RequestedToCapacityRatio's shape when the space gives none: packing, as `packsched replay --policy`.
DEFAULT_SHAPE = tuple((p["utilization"], p["score"]) for p in RTCR_SHAPE)
COSCHEDULING = "Coscheduling"
# Coscheduling's args a space may tune, with the bounds of a search (the plugin takes any non-negative number of
# seconds, and a percentage).
MAX_SECONDS = 86_400
COSCHEDULING_ARGS = {
    "permitWaitingTimeSeconds": (0, MAX_SECONDS),
    "podGroupBackoffSeconds": (0, MAX_SECONDS),
    "podGroupRejectPercentage": (0, 100),
}


@dataclass(frozen=True)
class IntRange:
    """Every integer from ``low`` to ``high`` (``step`` apart); fixed when ``low == high``."""

    low: int
    high: int
    step: int = 1

    @property
    def fixed(self) -> bool:
        return self.low == self.high

    def as_json(self) -> int | dict[str, int]:
        if self.fixed:
            return self.low
        out = {"min": self.low, "max": self.high}
        if self.step != 1:
            out["step"] = self.step
        return out


@dataclass(frozen=True)
class Named:
    """A resource or a score plugin, and its weight's range."""

    name: str
    weight: IntRange


@dataclass(frozen=True)
class ShapePoint:
    utilization: IntRange
    score: IntRange


@dataclass(frozen=True)
class Choice:
    """One point of the space: everything the generated configuration sets."""

    strategy: str
    resources: dict[str, int]  # name -> weight, 0: left out
    shape: list[tuple[int, int]]  # (utilization, score); RequestedToCapacityRatio only
    plugins: dict[str, int]  # score plugin -> weight, 0: disabled
    percentage: int
    coscheduling: dict[str, int] = field(default_factory=dict)  # Coscheduling's args (the others: its defaults)
    with_coscheduling: bool = False  # the profile has Coscheduling


# Reads a value: (parameter name, range) -> int, or (parameter name, choices) -> str.
IntGetter = Callable[[str, IntRange], int]
StrGetter = Callable[[str, tuple[str, ...]], str]


@dataclass(frozen=True)
class TuneSpace:
    name: str
    file: str
    strategies: tuple[str, ...]
    resources: tuple[Named, ...]
    shape: tuple[ShapePoint, ...]
    plugins: tuple[Named, ...]
    percentage: IntRange
    coscheduling: tuple[Named, ...] = ()  # Coscheduling's args (name, range); none: the profile has no Coscheduling
    with_coscheduling: bool = False  # the space has a coscheduling section (maybe empty: the plugin's defaults)

    def as_json(self) -> dict[str, Any]:
        """The space's content, normalised (the study records it: a resumed study must search the same space)."""
        out: dict[str, Any] = {
            "strategies": list(self.strategies),
            "resources": [{"name": r.name, "weight": r.weight.as_json()} for r in self.resources],
            "shape": [{"utilization": p.utilization.as_json(), "score": p.score.as_json()} for p in self.shape],
            "scorePlugins": [{"name": p.name, "weight": p.weight.as_json()} for p in self.plugins],
            "percentageOfNodesToScore": self.percentage.as_json(),
        }
        if self.with_coscheduling:  # (absent otherwise: the studies of earlier spaces resume)
            out["coscheduling"] = {a.name: a.weight.as_json() for a in self.coscheduling}
        return out

    def columns(self) -> list[str]:
        """Every parameter's name, in a fixed order: the columns of trials.csv (and Optuna's parameter names)."""
        cols = ["strategy", *(f"weight.{r.name}" for r in self.resources)]
        if REQUESTED_TO_CAPACITY_RATIO in self.strategies:
            for i in range(len(self.shape)):
                cols += [f"shape[{i}].utilization", f"shape[{i}].score"]
        cols += [f"plugin.{p.name}" for p in self.plugins]
        return [*cols, "percentageOfNodesToScore", *(f"coscheduling.{a.name}" for a in self.coscheduling)]

    def pick(self, get_int: IntGetter, get_str: StrGetter) -> Choice:
        """The choice the getters make; fixed values are taken as they are, the shape only for
        RequestedToCapacityRatio."""

        def value(name: str, rng: IntRange) -> int:
            return rng.low if rng.fixed else get_int(name, rng)

        strategy = self.strategies[0] if len(self.strategies) == 1 else get_str("strategy", self.strategies)
        shape: list[tuple[int, int]] = []
        if strategy == REQUESTED_TO_CAPACITY_RATIO:
            shape = [
                (value(f"shape[{i}].utilization", p.utilization), value(f"shape[{i}].score", p.score))
                for i, p in enumerate(self.shape)
            ]
        return Choice(
            strategy,
            {r.name: value(f"weight.{r.name}", r.weight) for r in self.resources},
            shape,
            {p.name: value(f"plugin.{p.name}", p.weight) for p in self.plugins},
            value("percentageOfNodesToScore", self.percentage),
            {a.name: value(f"coscheduling.{a.name}", a.weight) for a in self.coscheduling},
            self.with_coscheduling,
        )

    def sample(self, trial: Any) -> Choice:
        """The choice an Optuna trial suggests (``trial.suggest_int`` / ``suggest_categorical``)."""
        return self.pick(
            lambda name, rng: int(trial.suggest_int(name, rng.low, rng.high, step=rng.step)),
            lambda name, options: str(trial.suggest_categorical(name, list(options))),
        )

    def from_params(self, params: Mapping[str, Any]) -> Choice:
        """The choice a finished trial made (its ``params``)."""
        return self.pick(lambda name, _rng: int(params[name]), lambda name, _options: str(params[name]))

    def flat(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Every column of :meth:`columns` for a trial's params: fixed values filled in, those a trial did not use
        (the shape of another strategy) or never got (a failed trial) empty."""
        fixed: dict[str, Any] = {"strategy": self.strategies[0]} if len(self.strategies) == 1 else {}
        for r in self.resources:
            fixed[f"weight.{r.name}"] = r.weight.low if r.weight.fixed else None
        for p in self.plugins:
            fixed[f"plugin.{p.name}"] = p.weight.low if p.weight.fixed else None
        fixed["percentageOfNodesToScore"] = self.percentage.low if self.percentage.fixed else None
        for a in self.coscheduling:
            fixed[f"coscheduling.{a.name}"] = a.weight.low if a.weight.fixed else None
        strategy = params.get("strategy", fixed.get("strategy"))
        for i, point in enumerate(self.shape):
            for key, rng in (("utilization", point.utilization), ("score", point.score)):
                use = strategy == REQUESTED_TO_CAPACITY_RATIO and rng.fixed
                fixed[f"shape[{i}].{key}"] = rng.low if use else None
        out: dict[str, Any] = {}
        for col in self.columns():
            out[col] = params[col] if col in params else fixed.get(col)
        return out


def config_document(choice: Choice, gpu_share: bool = True) -> dict[str, Any]:
    """The whole KubeSchedulerConfiguration of a choice (see the module's docstring). ``gpu_share`` off: without
    GPUShare (a job workload's pods ask whole ``nvidia.com/gpu``, which NodeResourcesFit counts)."""
    resources = [{"name": n, "weight": w} for n, w in choice.resources.items() if w > 0]
    # No resource kept: kube-scheduler's default ones, written out.
    resources = resources or [{"name": n, "weight": w} for n, w in DEFAULT_RESOURCES]
    strategy: dict[str, Any] = {"type": choice.strategy, "resources": resources}
    if choice.strategy == REQUESTED_TO_CAPACITY_RATIO:
        strategy["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in choice.shape]}
    weights = {FIT: FIT_WEIGHT, **choice.plugins}
    enabled = [{"name": name, "weight": w} for name, w in weights.items() if w > 0]
    own = [{"name": GPU_SHARE}] if gpu_share else []
    multi_point: dict[str, Any] = {"enabled": own}
    post_filter: dict[str, Any] = {"disabled": [{"name": "*"}]}
    plugin_config: list[dict[str, Any]] = [{"name": FIT, "args": {"scoringStrategy": strategy}}]
    if choice.with_coscheduling:
        # its QueueSort replaces PrioritySort; its PostFilter (rejecting a gang's placed members) stays on
        multi_point = {"enabled": [*own, {"name": COSCHEDULING}], "disabled": [{"name": "PrioritySort"}]}
        post_filter["enabled"] = [{"name": COSCHEDULING}]
        if choice.coscheduling:
            plugin_config.append({"name": COSCHEDULING, "args": dict(choice.coscheduling)})
    return {
        "apiVersion": CONFIG_API,
        "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": choice.percentage,
        "profiles": [
            {
                "schedulerName": DEFAULT_SCHEDULER_NAME,
                "plugins": {
                    "multiPoint": multi_point,
                    "score": {"disabled": [{"name": "*"}], "enabled": enabled},
                    "postFilter": post_filter,
                },
                "pluginConfig": plugin_config,
            }
        ],
    }


def describe(choice: Choice) -> str:
    """One line: ``MostAllocated, resources cpu:1 alibabacloud.com/gpu-milli:7, score NodeResourcesFit:5, ...``."""
    parts = [choice.strategy]
    if choice.shape:
        parts.append("shape " + " ".join(f"{u}->{s}" for u, s in choice.shape))
    kept = [f"{n}:{w}" for n, w in choice.resources.items() if w > 0]
    default = " ".join(f"{n}:{w}" for n, w in DEFAULT_RESOURCES) + " (kube-scheduler's default)"
    parts.append("resources " + (" ".join(kept) if kept else default))
    weights = {FIT: FIT_WEIGHT, **choice.plugins}
    parts.append("score plugins " + " ".join(f"{n}:{w}" for n, w in weights.items() if w > 0))
    parts.append(f"percentageOfNodesToScore {choice.percentage}")
    if choice.with_coscheduling:
        args = " ".join(f"{n}:{v}" for n, v in choice.coscheduling.items())
        parts.append(f"{COSCHEDULING} {args or '(its defaults)'}")
    return ", ".join(parts)


# -- reading ----------------------------------------------------------------------------------------------------


def _range(r: Reader, raw: object, path: str, low: int, high: int, default: IntRange | None = None) -> IntRange | None:
    """An integer or ``{min, max[, step]}`` within [low, high]; problems go to ``r.errors``."""
    if raw is None:
        if default is None:
            r.errors.add(path, f"Required value: an integer or {{min, max}} between {low} and {high}")
        return default
    if isinstance(raw, int) and not isinstance(raw, bool):
        if not low <= raw <= high:
            r.errors.add(path, f"must be between {low} and {high}, got {raw}")
            return None
        return IntRange(raw, raw)
    if not isinstance(raw, dict):
        r.errors.add(path, f"must be an integer or {{min, max}} between {low} and {high}, got {raw!r}")
        return None
    data = r.fields(raw, path, ("min", "max", "step"))
    lo = r.int(data.get("min"), f"{path}.min")
    hi = r.int(data.get("max"), f"{path}.max")
    step = r.int(data.get("step"), f"{path}.step", 1)
    ok = True
    for key, v in (("min", lo), ("max", hi)):
        if v is None and key not in data:
            r.errors.add(f"{path}.{key}", "Required value")
        if v is not None and not low <= v <= high:
            r.errors.add(f"{path}.{key}", f"must be between {low} and {high}, got {v}")
            ok = False
    if lo is None or hi is None or step is None or not ok:
        return None
    if lo > hi:
        r.errors.add(path, f"min ({lo}) must not be above max ({hi})")
        return None
    if step < 1 or (hi - lo) % step:
        r.errors.add(f"{path}.step", f"must be at least 1 and divide max - min ({hi - lo}), got {step}")
        return None
    return IntRange(lo, hi, step)


def _named(r: Reader, raw: object, path: str, low: int, high: int) -> list[Named]:
    out: list[Named] = []
    seen: set[str] = set()
    for i, item in enumerate(r.list(raw, path)):
        where = f"{path}[{i}]"
        data = r.fields(item, where, ("name", "weight"))
        name = r.str(data.get("name"), f"{where}.name")
        if not name:
            if "name" not in data:
                r.errors.add(f"{where}.name", "Required value")
            continue
        if name in seen:
            r.errors.add(f"{where}.name", f"Duplicate value: {name!r}")
        seen.add(name)
        weight = _range(r, data.get("weight"), f"{where}.weight", low, high)
        if weight is not None:
            out.append(Named(name, weight))
    return out


def _shape(r: Reader, raw: object, path: str) -> list[ShapePoint]:
    points: list[ShapePoint] = []
    items = r.list(raw, path)
    for i, item in enumerate(items):
        where = f"{path}[{i}]"
        data = r.fields(item, where, ("utilization", "score"))
        u = _range(r, data.get("utilization"), f"{where}.utilization", MIN_UTILIZATION, MAX_UTILIZATION)
        s = _range(r, data.get("score"), f"{where}.score", 0, MAX_CUSTOM_PRIORITY_SCORE)
        if u is not None and s is not None:
            points.append(ShapePoint(u, s))
    if len(points) == len(items):
        for i in range(1, len(points)):
            before, here = points[i - 1].utilization, points[i].utilization
            if here.low <= before.high:
                r.errors.add(
                    f"{path}[{i}].utilization",
                    f"utilizations must increase from point to point whatever is chosen: this point's lowest "
                    f"({here.low}) must be above the previous point's highest ({before.high})",
                )
    return points


def _coscheduling(r: Reader, raw: object, path: str) -> list[Named]:
    """``coscheduling``: Coscheduling's args to tune, each fixed or a range (``{}``: the plugin with its defaults)."""
    if raw is None:
        return []
    data = r.fields(raw, path, tuple(COSCHEDULING_ARGS))
    out: list[Named] = []
    for name, (low, high) in COSCHEDULING_ARGS.items():
        if name in data:
            rng = _range(r, data[name], f"{path}.{name}", low, high)
            if rng is not None:
                out.append(Named(name, rng))
    return out


def _check_names(r: Reader, resources: list[Named], plugins: list[Named]) -> None:
    for i, res in enumerate(resources):
        if res.weight.high == 0:
            r.errors.add(f"spec.resources[{i}].weight", "a weight that can only be 0 leaves the resource out: drop it")
    for i, plugin in enumerate(plugins):
        if plugin.name not in SCORE_PLUGINS:
            supported = ", ".join(f'"{p}"' for p in SCORE_PLUGINS)
            r.errors.add(
                f"spec.scorePlugins[{i}].name",
                f'Unsupported value: "{plugin.name}": kube-scheduler\'s default score plugins are {supported}',
            )
        elif plugin.name == FIT and plugin.weight.low < 1:
            r.errors.add(
                f"spec.scorePlugins[{i}].weight",
                f"{FIT} scores with the strategy being tuned: its weight must be at least 1, got {plugin.weight.low}",
            )


def load_space(path: str) -> TuneSpace:
    """Read and check a space file: every problem with its field path, at once (InputError)."""
    errors = ErrorList(file=path)
    docs = read_documents(path, errors)
    errors.raise_if_any()
    if len(docs) != 1:
        raise InputError.single("a TuneSpace file holds exactly one document", file=path)
    r = Reader(errors)
    data = r.fields(docs[0][1], "", ("apiVersion", "kind", "metadata", "spec"))
    if data.get("apiVersion") != API_VERSION:
        errors.add("apiVersion", f"must be {API_VERSION}, got {data.get('apiVersion')!r}")
    if data.get("kind") != KIND:
        errors.add("kind", f"must be {KIND}, got {data.get('kind')!r}")
    meta = r.fields(data.get("metadata"), "metadata", ("name", "annotations", "labels"))
    spec = r.fields(
        data.get("spec"),
        "spec",
        ("strategies", "resources", "shape", "scorePlugins", "percentageOfNodesToScore", "coscheduling"),
    )
    strategies = r.str_list(spec.get("strategies"), "spec.strategies")
    if "strategies" not in spec:
        errors.add("spec.strategies", f"Required value: one or more of {', '.join(SCORING_STRATEGY_TYPES)}")
    elif not strategies and not errors:
        errors.add("spec.strategies", "must not be empty")
    for i, s in enumerate(strategies):
        r.one_of(s, f"spec.strategies[{i}]", SCORING_STRATEGY_TYPES)
        if s in strategies[:i]:
            errors.add(f"spec.strategies[{i}]", f"Duplicate value: {s!r}")
    resources = _named(r, spec.get("resources"), "spec.resources", 0, MAX_RESOURCE_WEIGHT)
    if "resources" not in spec:
        errors.add("spec.resources", f"Required value: the resources to weigh (cpu, memory, {GPU_MILLI}, ...)")
    shape = _shape(r, spec.get("shape"), "spec.shape")
    if "shape" in spec and REQUESTED_TO_CAPACITY_RATIO not in strategies:
        errors.add(
            "spec.shape", f"only {REQUESTED_TO_CAPACITY_RATIO} has a shape, and spec.strategies does not list it"
        )
    if "shape" in spec and not shape and not errors:
        errors.add("spec.shape", "must have at least one point")
    if "shape" not in spec:
        shape = [ShapePoint(IntRange(u, u), IntRange(s, s)) for u, s in DEFAULT_SHAPE]
    plugins = _named(r, spec.get("scorePlugins"), "spec.scorePlugins", 0, MAX_PLUGIN_WEIGHT)
    _check_names(r, resources, plugins)
    percentage = _range(
        r, spec.get("percentageOfNodesToScore"), "spec.percentageOfNodesToScore", 1, 100, IntRange(100, 100)
    )
    coscheduling = _coscheduling(r, spec.get("coscheduling"), "spec.coscheduling")
    errors.raise_if_any()
    assert percentage is not None
    space = TuneSpace(
        r.str(meta.get("name"), "metadata.name") or os.path.basename(path),
        path,
        tuple(strategies),
        tuple(resources),
        tuple(shape),
        tuple(plugins),
        percentage,
        tuple(coscheduling),
        "coscheduling" in spec,
    )
    _check_configs(space)
    return space


def _check_configs(space: TuneSpace) -> None:
    """The configurations at the corners of the space load (a resource name kube-scheduler refuses, say)."""
    known = set(in_tree_registry())
    errors: list[str] = []

    def lowest(_name: str, rng: IntRange) -> int:
        return rng.low

    def highest(_name: str, rng: IntRange) -> int:
        return rng.high

    for strategy in space.strategies:

        def this(_name: str, _options: tuple[str, ...], s: str = strategy) -> str:
            return s

        for corner, get in (("low", lowest), ("high", highest)):
            choice = space.pick(get, this)
            try:
                load_config_data(config_document(choice), f"<{strategy}, every value at its {corner}est>", known)
            except InputError as exc:
                errors += [str(e) for e in exc.errors if str(e) not in errors]
    if errors:
        raise InputError.single(
            "kube-scheduler would refuse the configurations this space makes: " + "; ".join(errors),
            file=space.file,
            path="spec",
        )
