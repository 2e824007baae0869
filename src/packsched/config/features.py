"""Feature gates: the ones packsched models, their state in each kube-scheduler release, and how
``--feature-gates Name=true,Other=false`` (or ``featureGates:`` in the PackschedConfiguration document) changes
them.

Each gate's history is the list of (release, default, stage, locked) steps of upstream's versioned feature specs
(``pkg/features/kube_features.go``, read in kube-scheduler 1.35.4, 1.36.3 and 1.37.2); the state of a release is its
last step at or before it. A gate exists from its first step until ``removed`` (the first release without it). An
override is checked as kube-scheduler's flag parser checks it (component-base ``featuregate``): a gate the release
does not have is "unrecognized", a locked gate cannot be set to anything but its default, and from 1.35 a gate on
needs the gates it depends on. packsched adds one check of its own: it models a gate's effects only from
``modelled_from`` on (the DRA gates: the releases whose DynamicResources it models).

:class:`packsched.config.versions.KubeVersion` carries the overrides and answers gate questions with them applied
(``KubeVersion.feature``); nothing else reads this table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

ALPHA: Final = "Alpha"
BETA: Final = "Beta"
GA: Final = "GA"
DEPRECATED: Final = "Deprecated"

# The first release whose feature gates check dependencies (component-base featuregate AddDependencies, 1.35).
DEPENDENCIES_CHECKED_FROM: Final = 35

# Go's strconv.ParseBool
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


@dataclass(frozen=True)
class Step:
    """From release ``1.<minor>`` on (until the next step): the default, the stage, whether it is locked."""

    minor: int
    default: bool
    stage: str
    locked: bool = False


@dataclass(frozen=True)
class Gate:
    name: str
    steps: tuple[Step, ...]
    removed: int | None = None  # the first release without the gate (None: still there in the newest)
    modelled_from: int = 0  # packsched models the gate's effects from this release on
    depends: tuple[str, ...] = ()  # gates that must be on when this one is (checked from 1.35)
    effect: str = ""  # what it changes in packsched (docs, error messages)
    unmodelled: str = ""  # what packsched does not model with the gate on ("": it models it); refused then

    def exists(self, minor: int) -> bool:
        return self.steps[0].minor <= minor and (self.removed is None or minor < self.removed)

    def step(self, minor: int) -> Step:
        """The gate's state in ``1.<minor>`` (the first step when the release is older than the gate)."""
        out = self.steps[0]
        for s in self.steps:
            if s.minor <= minor:
                out = s
        return out


def _gate(
    name: str,
    *steps: tuple[int, bool, str] | tuple[int, bool, str, bool],
    removed: int | None = None,
    modelled_from: int = 0,
    depends: tuple[str, ...] = (),
    effect: str = "",
    unmodelled: str = "",
) -> Gate:
    return Gate(name, tuple(Step(*s) for s in steps), removed, modelled_from, depends, effect, unmodelled)


_DRA = ("DynamicResourceAllocation",)

GATES: Final[dict[str, Gate]] = {
    g.name: g
    for g in (
        _gate(
            "GenericWorkload",
            (35, False, ALPHA),
            (37, False, BETA),
            effect="the Workload (1.35) and PodGroup (1.36+) API: pods' spec.workloadRef / spec.schedulingGroup are "
            "kept, the scheduler tracks their groups (1.36: and schedules a group's pods in one pod-group cycle); "
            "1.37: also adds GangScheduling to the default profile",
        ),
        _gate(
            "GangScheduling",
            (35, False, ALPHA),
            removed=37,
            depends=("GenericWorkload",),
            effect="adds GangScheduling to the default profile (1.35-1.36)",
        ),
        _gate(
            "TopologyAwareWorkloadScheduling",
            (36, False, ALPHA),
            depends=("GenericWorkload",),
            unmodelled="the pod-group cycle's placements (TopologyPlacementGenerator, PodGroupPodsCount, placement "
            "scoring) and PodGroups' spec.schedulingConstraints",
        ),
        _gate(
            "CompositePodGroup",
            (37, False, ALPHA),
            depends=("GenericWorkload", "TopologyAwareWorkloadScheduling"),
            unmodelled="CompositePodGroup hierarchies (scheduling.k8s.io/v1alpha3) and PodGroups' "
            "spec.parentCompositePodGroupName",
        ),
        _gate(
            "PodGroupPreemptionPolicy",
            (37, False, ALPHA),
            depends=("GenericWorkload",),
            unmodelled="PodGroups' spec.preemptionPolicy",
        ),
        _gate(
            "OpportunisticBatching",
            (35, True, BETA),
            modelled_from=35,
            effect="a pod with the same signature as the previous pod of its profile is tried first on the next "
            "node of the previous cycle's sorted scores (KEP-5598), when the profile's plugins can all sign pods",
        ),
        _gate(
            "SchedulerPopFromBackoffQ",
            (33, True, BETA),
            effect="the scheduling queue's backoff ordering windows (KEP-4247): backoff expiries truncated to the "
            "whole second, the backoff queue flushed at whole-second ticks and ordered by window then as the active "
            "queue; and Pop takes the backoff queue's head when the active queue is empty",
        ),
        _gate(
            "DynamicResourceAllocation",
            (26, False, ALPHA),
            (32, False, BETA),
            (34, True, GA),
            (35, True, GA, True),
            modelled_from=34,
            effect="DynamicResources in the default profile",
        ),
        _gate(
            "DRAPrioritizedList",
            (33, False, ALPHA),
            (34, True, BETA),
            (36, True, GA),
            (37, True, GA, True),
            modelled_from=34,
            depends=_DRA,
            effect="a request's firstAvailable subrequests",
        ),
        _gate(
            "DRAAdminAccess",
            (32, False, ALPHA),
            (34, True, BETA),
            (36, True, GA, True),
            modelled_from=34,
            depends=_DRA,
            effect="adminAccess requests",
        ),
        _gate(
            "DRAPartitionableDevices",
            (33, False, ALPHA),
            (36, True, BETA),
            modelled_from=34,
            depends=_DRA,
            effect="ResourceSlices' sharedCounters and devices' consumesCounters",
        ),
        _gate(
            "DRAExtendedResource",
            (34, False, ALPHA),
            (36, True, BETA),
            (37, True, GA, True),
            modelled_from=36,
            depends=_DRA,
            effect="extended resources served by a DeviceClass are allocated as its devices (KEP-5004)",
        ),
        _gate(
            "DRAConsumableCapacity",
            (34, False, ALPHA),
            (36, True, BETA),
            modelled_from=34,
            depends=_DRA,
            effect="devices with allowMultipleAllocations shared by several claims within their consumable capacity",
        ),
        _gate(
            "DRAFractionalCapacityRange",
            (37, True, BETA),
            modelled_from=37,
            depends=("DRAConsumableCapacity",),
            effect="a capacity's validRange rounds in milli units when min, max or step is fractional",
        ),
        _gate(
            "DRAResourceClaimDeviceStatus",
            (32, False, ALPHA),
            (33, True, BETA),
            (37, True, GA, True),
            modelled_from=34,
            effect="claims' status.devices; with DRADeviceBindingConditions, devices' binding conditions",
        ),
        _gate(
            "DRADeviceBindingConditions",
            (34, False, ALPHA),
            (36, True, BETA),
            modelled_from=34,
            depends=("DynamicResourceAllocation", "DRAResourceClaimDeviceStatus"),
            effect="devices' bindingConditions, bindingFailureConditions and bindsToNode (off: the API server drops "
            "them)",
        ),
        _gate(
            "DRASchedulerFilterTimeout",
            (34, True, BETA),
            modelled_from=34,
            depends=_DRA,
            effect="DynamicResourcesArgs.filterTimeout (default 10 s; off, giving it is an error); packsched's "
            "Filter has no time limit",
        ),
        _gate(
            "DRADeviceTaints",
            (33, False, ALPHA),
            (36, True, BETA),
            (37, True, GA),
            modelled_from=34,
            depends=_DRA,
            effect="device taints keep devices from requests that do not tolerate them",
        ),
    )
}


def default(name: str, minor: int) -> bool:
    """The gate's default in ``1.<minor>``; False for a gate the release does not have (or packsched does not
    know)."""
    gate = GATES.get(name)
    if gate is None or not gate.exists(minor):
        return False
    return gate.step(minor).default


def enabled(name: str, minor: int, overrides: Mapping[str, bool]) -> bool:
    """The gate with ``overrides`` applied (a gate the release does not have is off)."""
    gate = GATES.get(name)
    if gate is None or not gate.exists(minor):
        return False
    return overrides.get(name, gate.step(minor).default)


def known_in(minor: int) -> list[str]:
    """The gates of ``1.<minor>`` that packsched knows, by name."""
    return sorted(name for name, gate in GATES.items() if gate.exists(minor))


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def parse_feature_gates(texts: Iterable[str]) -> dict[str, bool]:
    """``Name=true,Other=false`` (several such texts merge, later ones win) -> {name: value}. Raises ValueError
    with kube-scheduler's wording for a pair without ``=`` or with a value Go's ParseBool rejects."""
    out: dict[str, bool] = {}
    for text in texts:
        for part in text.split(","):
            if not part:
                continue
            key, sep, raw = part.partition("=")
            key = key.strip()
            if not sep:
                raise ValueError(f"missing bool value for {key}")
            value = raw.strip()
            if value in _TRUE:
                out[key] = True
            elif value in _FALSE:
                out[key] = False
            else:
                raise ValueError(
                    f'invalid value of {key}={value}, err: strconv.ParseBool: parsing "{value}": invalid syntax'
                )
    return out


def check_overrides(minor: int, overrides: Mapping[str, bool]) -> list[tuple[str, str]]:
    """What is wrong with setting ``overrides`` in kube-scheduler ``1.<minor>``: (gate, message) pairs, in the
    order the gates were given, then the dependencies; [] when they are fine."""
    problems: list[tuple[str, str]] = []
    for name, value in overrides.items():
        gate = GATES.get(name)
        if gate is None or not gate.exists(minor):
            problems.append((name, f"unrecognized feature gate: {name}"))
            continue
        step = gate.step(minor)
        if step.locked and value != step.default:
            problems.append(
                (
                    name,
                    f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked to "
                    f"{_go_bool(step.default)}",
                )
            )
            continue
        if gate.unmodelled and value:
            problems.append(
                (
                    name,
                    f"packsched does not model feature gate {name} on (kube-scheduler 1.{minor}): "
                    f"{gate.unmodelled}; leave it off",
                )
            )
            continue
        if minor < gate.modelled_from and value != step.default:
            problems.append(
                (
                    name,
                    f"packsched models feature gate {name} from kube-scheduler 1.{gate.modelled_from} on, not in "
                    f"1.{minor}: it cannot be changed there",
                )
            )
    if problems or minor < DEPENDENCIES_CHECKED_FROM:
        return problems
    for name, gate in GATES.items():
        if not gate.depends or not enabled(name, minor, overrides):
            continue
        off = [d for d in gate.depends if not enabled(d, minor, overrides)]
        if off:
            problems.append((name, f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]"))
    return problems
