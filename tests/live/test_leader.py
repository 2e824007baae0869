"""Leader election on a Lease: two replicas, one active; failover; a lost lease stops the scheduler."""

from __future__ import annotations

import threading
from pathlib import Path

from live.fakeapi import FakeApiServer
from live.harness import all_bound, check_cluster, node, pod, start, wait
from packsched.config.types import LeaderElection
from packsched.live.kube import KubernetesPort
from packsched.live.leader import LeaderElector

FAST = LeaderElection(True, 1.0, 0.7, 0.1, "leases", "packsched", "kube-system")


def _port(api: FakeApiServer, tmp_path: Path) -> KubernetesPort:
    return KubernetesPort.connect(api.kubeconfig(str(tmp_path / "kc")), timeout_s=2)


def test_one_of_two_candidates_leads_and_the_other_takes_over_after_expiry(api: FakeApiServer, tmp_path: Path) -> None:
    a = LeaderElector(_port(api, tmp_path), FAST, "a")
    b = LeaderElector(_port(api, tmp_path), FAST, "b")
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()  # held, and not expired as b observes it
    assert a.try_acquire_or_renew()  # renew
    lease = api.get("leases", "kube-system", "packsched")
    assert lease is not None
    assert lease["spec"]["holderIdentity"] == "a" and lease["spec"]["leaseDurationSeconds"] == 1
    # a stops renewing (crashed): b takes the lease once it has seen no renewal for leaseDuration
    stop = threading.Event()
    assert wait(lambda: b.try_acquire_or_renew(), 5)
    lease = api.get("leases", "kube-system", "packsched")
    assert lease is not None
    assert lease["spec"]["holderIdentity"] == "b" and lease["spec"]["leaseTransitions"] == 1
    stop.set()


def test_release_lets_a_standby_take_over_at_once(api: FakeApiServer, tmp_path: Path) -> None:
    a = LeaderElector(_port(api, tmp_path), FAST, "a")
    b = LeaderElector(_port(api, tmp_path), FAST, "b")
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()
    a.release()
    assert b.try_acquire_or_renew()


def test_two_replicas_bind_each_pod_once_and_fail_over(api: FakeApiServer, tmp_path: Path) -> None:
    for i in range(3):
        api.create("nodes", node(f"n{i}"))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = start(api, tmp_path / "a", fast_election=True)
    second = start(api, tmp_path / "b", fast_election=True)
    runs = [first, second]
    names = [f"p{i}" for i in range(20)]
    api.create_many("pods", [pod(n) for n in names[:10]])
    try:
        assert api.wait_for(all_bound(names[:10]), 15)
        leaders = [r for r in runs if r.server.elector is not None and r.server.elector.leading]
        assert len(leaders) == 1
        leader = leaders[0]
        standby = second if leader is first else first
        assert standby.server.controller.stats.attempts == 0  # warm cache, no decisions
        assert wait(lambda: standby.server.ready()[0], 5)  # a standby is ready (synced) too
        # ...and applies what its informers see (a warm cache, no backlog), without deciding anything
        ctl = standby.server.controller
        assert wait(lambda: ctl.inbox.qsize() == 0 and len(ctl.cache) == 10, 5)
        assert int(ctl.snapshot.pod_count.sum()) == 10
        # the leader crashes: no release; the standby waits for the lease to expire, then schedules
        assert leader.server.elector is not None
        leader.server.elector.release = lambda: None  # type: ignore[method-assign]
        leader.stop()
        api.create_many("pods", [pod(n) for n in names[10:]])
        assert api.wait_for(all_bound(names), 15)
        assert wait(lambda: standby.server.controller.stats.bound == 10, 5)
    finally:
        for r in runs:
            if r.thread.is_alive():
                r.stop()
    check_cluster(api, expect_bound=20)


def test_losing_the_lease_stops_serving_with_exit_code_1(api: FakeApiServer, tmp_path: Path) -> None:
    api.create("nodes", node("n0"))
    run = start(api, tmp_path, fast_election=True)
    assert wait(lambda: run.server.elector is not None and run.server.elector.leading, 5)
    api.inject("PUT", r"/leases/packsched$", status=500, count=1000)
    run.thread.join(10)
    assert not run.thread.is_alive()
    assert run.result == [1]
    assert run.server.healthy() == (False, "leaderElection: lease lost")
