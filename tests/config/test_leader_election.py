"""leaderElection and clientConnection.kubeconfig: decoded, defaulted and validated for packsched serve."""

from __future__ import annotations

from typing import Any

import pytest

from packsched.api.errors import InputError
from packsched.config.componentconfig import parse_duration
from packsched.config.loader import load_config_data
from packsched.plugins.registry import in_tree_registry


def _load(**fields: Any) -> Any:
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **fields}
    return load_config_data(doc, "c.yaml", set(in_tree_registry()))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("15s", 15.0),
        ("1m30s", 90.0),
        ("500ms", 0.5),
        ("1.5h", 5400.0),
        ("0", 0.0),
        ("-2s", -2.0),
        ("10", None),
        ("s", None),
        ("5 s", None),
    ],
)
def test_parse_duration(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == seconds


def test_defaults_are_kube_schedulers() -> None:
    le = _load().leader_election
    assert (le.leader_elect, le.lease_duration_s, le.renew_deadline_s, le.retry_period_s) == (True, 15, 10, 2)
    assert (le.resource_lock, le.resource_name, le.resource_namespace) == ("leases", "kube-scheduler", "kube-system")


def test_values_and_kubeconfig_are_read() -> None:
    cfg = _load(
        leaderElection={"leaderElect": False, "leaseDuration": "30s", "resourceName": "mine"},
        clientConnection={"kubeconfig": "/etc/kubeconfig"},
    )
    assert not cfg.leader_election.leader_elect
    assert cfg.leader_election.lease_duration_s == 30 and cfg.leader_election.resource_name == "mine"
    assert cfg.kubeconfig == "/etc/kubeconfig"


def test_every_problem_with_its_field() -> None:
    with pytest.raises(InputError) as err:
        _load(
            leaderElection={
                "renewDeadline": "20s",
                "retryPeriod": "0s",
                "resourceLock": "endpoints",
                "resourceNamespace": "",
            }
        )
    assert [str(e) for e in err.value.errors] == [
        "c.yaml: leaderElection.retryPeriod: Invalid value: must be greater than zero",
        "c.yaml: leaderElection.leaseDuration: Invalid value: LeaseDuration must be greater than RenewDeadline",
        'c.yaml: leaderElection.resourceLock: Unsupported value: "endpoints": supported values: "leases"',
        "c.yaml: leaderElection.resourceNamespace: Required value",
    ]


def test_not_validated_when_not_electing() -> None:
    cfg = _load(leaderElection={"leaderElect": False, "renewDeadline": "20s"})
    assert not cfg.leader_election.leader_elect
