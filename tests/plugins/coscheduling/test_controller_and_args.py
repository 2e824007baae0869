"""The PodGroup controller's phases (scheduler-plugins ``pkg/controllers/podgroup_controller_test.go`` Test_Run)
against :func:`packsched.api.gangs.pod_group_status`, and CoschedulingArgs' defaults and validation
(``apis/config/v1/defaults_test.go``, ``apis/config/validation/validation_plugingargs_test.go``).

Upstream's controller moves a group one step per reconcile from the phase it had (Pending -> Scheduling ->
Running ...); its test reconciles once per pod, which is enough to settle every case. ``pod_group_status`` computes
that settled phase from the pods' phases alone, so each row gives the phases the pods end in.
"""

from __future__ import annotations

from typing import Any

import pytest

from packsched.api.gangs import (
    PG_FAILED,
    PG_FINISHED,
    PG_PENDING,
    PG_RUNNING,
    PG_SCHEDULING,
    PodGroup,
    PodGroupStatus,
    first_owners,
    occupied_by,
    pod_group_status,
)
from packsched.plugins.coscheduling.coscheduling import CoschedulingArgs, parse_args


def row(name: str, *values: Any, marks: Any = ()) -> Any:
    return pytest.param(*values, id=name, marks=marks)


RUN_CASES = [
    # (minMember, the phases the group's pods end in, the group's phase)
    row("Group running", 2, ["Running"] * 2, PG_RUNNING),
    # (upstream names 4 pods but creates only the first two; all four running settles the same)
    row("Group running, more than min member", 2, ["Running"] * 4, PG_RUNNING),
    row("Group failed", 2, ["Failed"] * 2, PG_FAILED),
    row("Group finished", 2, ["Succeeded"] * 2, PG_FINISHED),
    row("Group status convert from pending to prescheduling", 2, ["Pending"] * 2, PG_SCHEDULING),
    row("Group status convert from scheduling to finished", 2, ["Succeeded"] * 2, PG_FINISHED),
    row("Group status keeps pending", 3, ["Running"] * 2, PG_PENDING),
    row("Group status convert from pending to finished", 2, ["Succeeded"] * 2, PG_FINISHED),
    row(
        "Group should not enqueue, created too long",
        2,
        ["Running"] * 2,
        PG_PENDING,
        marks=pytest.mark.xfail(
            strict=True,
            reason="upstream's controller stops reconciling a Pending/Scheduling group with no running pod whose "
            "status.scheduleStartTime is over 48 h after its creation (the test sets creation 72 h back); "
            "pod_group_status has no times or previous phase and settles on Running. (The controller never "
            "writes scheduleStartTime itself, so outside that test the guard does not fire.)",
        ),
    ),
    row("Group min member more than Pod number", 3, ["Pending"] * 2, PG_PENDING),
    row("Group status convert from running to pending", 4, ["Pending"] * 2, PG_PENDING),
]


@pytest.mark.parametrize(("min_member", "phases", "want"), RUN_CASES)
def test_controller_run(min_member: int, phases: list[str], want: str) -> None:
    status = pod_group_status(PodGroup("pg", "default", min_member), phases)
    assert status.phase == want
    assert (status.running, status.succeeded, status.failed) == (
        phases.count("Running"),
        phases.count("Succeeded"),
        phases.count("Failed"),
    )


def test_failed_needs_the_quorum_counted_with_running_and_succeeded() -> None:
    """(derived) one failed pod fails the group only once failed + running + succeeded reach minMember;
    minMember succeeded finishes it whatever failed."""
    group = PodGroup("pg", "default", 3)
    assert pod_group_status(group, ["Failed", "Pending", "Pending"]).phase == PG_SCHEDULING
    assert pod_group_status(group, ["Failed", "Running", "Running"]).phase == PG_FAILED
    assert pod_group_status(group, ["Failed", "Succeeded", "Succeeded", "Succeeded"]).phase == PG_FINISHED


# -- status.occupiedBy (podgroup_controller_test.go TestFillGroupStatusOccupied) ---------------------------------

OCCUPIED_CASES = [
    # (owner names of both pods, what occupiedBy reads): a Pending group (shown with occupiedBy "test") of two
    # Pending pods, minMember 2, reconciled once: it moves to Scheduling and takes the first pod's owners
    row("fill the Occupied of PodGroup with a single ownerReference", ["new-occupied"], "default/new-occupied"),
    row(
        "fill the Occupied of PodGroup with multi ownerReferences",
        ["new-occupied-2", "new-occupied-1"],
        "default/new-occupied-1,default/new-occupied-2",
    ),
]


@pytest.mark.parametrize(("owners", "want"), OCCUPIED_CASES)
def test_fill_group_status_occupied(owners: list[str], want: str) -> None:
    before = PodGroupStatus(PG_PENDING, 0, 0, 0, "test")
    pods = [("pod1", occupied_by("default", owners)), ("pod2", occupied_by("default", owners))]
    status = pod_group_status(PodGroup("pg", "default", 2), ["Pending", "Pending"], first_owners(pods), before)
    assert (status.phase, status.occupied_by) == (PG_SCHEDULING, want)


def test_occupied_by_is_kept_once_the_group_left_pending() -> None:
    """(derived from the controller: only its Pending branch fills the field) a Scheduling or Running group keeps
    what it shows; a group that stays Pending, or whose first pod has no owners, keeps it too; a new group takes
    the owners of the pod whose name sorts first."""
    group = PodGroup("pg", "default", 2)
    running = PodGroupStatus(PG_SCHEDULING, 0, 0, 0, "default/old")
    assert pod_group_status(group, ["Running"] * 2, "default/new", running).occupied_by == "default/old"
    pending = PodGroupStatus(PG_PENDING, 0, 0, 0, "default/old")
    assert pod_group_status(group, ["Pending"], "default/new", pending).occupied_by == "default/old"
    assert pod_group_status(group, ["Pending"] * 2, "", pending).occupied_by == "default/old"
    assert pod_group_status(group, ["Running"] * 2, "default/new").occupied_by == "default/new"
    assert pod_group_status(group, ["Running"]).occupied_by == ""
    assert first_owners([("b", "ns/job-b"), ("a", "ns/job-a")]) == "ns/job-a"
    assert first_owners([]) == ""


# -- CoschedulingArgs ---------------------------------------------------------------------------------------

DEFAULTS_CASES = [
    row("empty config CoschedulingArgs", {}, CoschedulingArgs(60, 0, 10)),
    row(
        "set non default CoschedulingArgs",
        {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 20, "podGroupRejectPercentage": 50},
        CoschedulingArgs(60, 20, 50),
    ),
]


@pytest.mark.parametrize(("raw", "want"), DEFAULTS_CASES)
def test_defaults(raw: dict[str, int], want: CoschedulingArgs) -> None:
    assert parse_args(raw) == want


def args(permit: int, backoff: int, percentage: int) -> dict[str, int]:
    return {
        "permitWaitingTimeSeconds": permit,
        "podGroupBackoffSeconds": backoff,
        "podGroupRejectPercentage": percentage,
    }


VALIDATION_CASES = [
    row("correct config with valid values", args(30, 60, 10), None),
    row("valid PodGroupRejectPercentage at boundaries", args(30, 0, 0), None),
    row("valid PodGroupRejectPercentage at upper boundary", args(30, 0, 100), None),
    row(
        "invalid PermitWaitingTimeSeconds (negative value)",
        args(-10, 60, 10),
        "permitWaitingTimeSeconds: Invalid value: -10: must be greater than 0",
    ),
    row(
        "invalid PodGroupBackoffSeconds (negative value)",
        args(30, -20, 10),
        "podGroupBackoffSeconds: Invalid value: -20: must be greater than 0",
    ),
    row(
        "invalid PodGroupRejectPercentage (negative value)",
        args(30, 0, -1),
        "podGroupRejectPercentage: Invalid value: -1: must be between 0 and 100",
    ),
    row(
        "invalid PodGroupRejectPercentage (greater than 100)",
        args(30, 0, 150),
        "podGroupRejectPercentage: Invalid value: 150: must be between 0 and 100",
    ),
    row(
        "both PermitWaitingTimeSeconds and PodGroupBackoffSeconds are negative",
        args(-30, -20, 10),
        "[permitWaitingTimeSeconds: Invalid value: -30: must be greater than 0, "
        "podGroupBackoffSeconds: Invalid value: -20: must be greater than 0]",
    ),
]


@pytest.mark.parametrize(("raw", "error"), VALIDATION_CASES)
def test_validate_args(raw: dict[str, int], error: str | None) -> None:
    if error is None:
        parse_args(raw)
        return
    with pytest.raises(ValueError) as exc:
        parse_args(raw)
    assert str(exc.value) == error
