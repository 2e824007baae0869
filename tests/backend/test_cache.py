"""The scheduler's cache, event by event: assume, finish binding, confirm, forget, expire; informer adds, moves and
deletes; pods bound to a node not seen yet; a node deleted under its pods."""

from __future__ import annotations

import pytest

from helpers import node, pod
from packsched.backend.cache import Cache, CacheError
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.snapshot import Snapshot


def _cache(ttl: float = 0.0) -> Cache:
    return Cache(Snapshot([node("n0"), node("n1")]), ttl=ttl)


def _info(name: str, cpu: int = 1000) -> PodInfo:
    return make_pod_info(pod(name, cpu=cpu))


def _cpu(cache: Cache) -> dict[str, int]:
    snap = cache.snapshot
    return {n.name: int(snap.requested[snap.row["cpu"], i]) for i, n in enumerate(snap.nodes)}


def test_assumed_pod_holds_room_until_confirmed_and_keeps_its_pod_info() -> None:
    cache = _cache()
    a = _info("a")
    cache.assume(a, "n1")
    assert cache.is_assumed("default/a") and cache.node_of("default/a") == "n1"
    assert _cpu(cache) == {"n0": 0, "n1": 1000} and a.node == 1
    cache.finish_binding(a, now=5.0)
    echo = _info("a")  # what the informer decodes: another object for the same pod
    assert cache.add_pod(echo, "n1") is a  # confirmed: the assumed PodInfo stays
    assert not cache.is_assumed("default/a") and _cpu(cache) == {"n0": 0, "n1": 1000}
    assert cache.cleanup_expired(now=1e9) == []  # confirmed pods never expire
    assert cache.remove_pod("default/a") is a
    assert _cpu(cache) == {"n0": 0, "n1": 0} and "default/a" not in cache and a.node == -1


def test_forget_frees_the_room_and_only_assumed_pods_can_be_forgotten() -> None:
    cache = _cache()
    a = _info("a")
    cache.assume(a, "n0")
    cache.forget(a)
    assert "default/a" not in cache and _cpu(cache)["n0"] == 0
    with pytest.raises(CacheError):
        cache.forget(a)
    cache.add_pod(a, "n0")  # bound (not assumed)
    with pytest.raises(CacheError):
        cache.forget(a)
    with pytest.raises(CacheError):
        cache.assume(_info("a"), "n1")  # in the cache already


def test_assumed_pod_expires_after_the_ttl_once_its_binding_finished() -> None:
    cache = _cache(ttl=30.0)
    a, b = _info("a"), _info("b")
    cache.assume(a, "n0")
    cache.assume(b, "n1")
    cache.finish_binding(a, now=10.0)
    assert cache.cleanup_expired(now=39.9) == []
    assert cache.cleanup_expired(now=40.0) == [a]  # b's binding has not finished: it never expires meanwhile
    assert _cpu(cache) == {"n0": 0, "n1": 1000} and cache.is_assumed("default/b")
    no_ttl = _cache()
    no_ttl.assume(a, "n0")
    no_ttl.finish_binding(a, now=0.0)
    assert no_ttl.cleanup_expired(now=1e9) == []  # ttl 0: assumed pods wait for the informer


def test_pod_reported_on_another_node_moves_there() -> None:
    cache = _cache()
    a = _info("a")
    cache.assume(a, "n0")  # our bind lost a race (409): someone bound it to n1
    elsewhere = _info("a")
    assert cache.add_pod(elsewhere, "n1") is elsewhere
    assert not cache.is_assumed("default/a") and _cpu(cache) == {"n0": 0, "n1": 1000} and a.node == -1


def test_pod_on_a_node_not_seen_yet_takes_its_room_when_the_node_arrives() -> None:
    cache = _cache()
    a = _info("a")
    cache.add_pod(a, "n9")
    assert cache.node_of("default/a") == "n9" and a.node == -1 and "n9" not in _cpu(cache)
    cache.add_node(node("n9"))
    assert _cpu(cache)["n9"] == 1000 and a.node == cache.snapshot.index["n9"]
    cache.add_node(node("n9", cpu=8000))  # an update keeps its pods
    assert _cpu(cache)["n9"] == 1000 and int(cache.snapshot.alloc[cache.snapshot.row["cpu"], 2]) == 8000
    b = _info("b")
    cache.add_pod(b, "n7")
    assert cache.remove_pod("default/b") is b and "default/b" not in cache  # deleted before its node came


def test_removing_a_node_renumbers_the_snapshot_and_its_pods_wait() -> None:
    cache = _cache()
    old = cache.snapshot
    a, b = _info("a"), _info("b", cpu=500)
    cache.add_pod(a, "n0")
    cache.assume(b, "n1")
    snap = cache.remove_node("n0")
    assert snap is cache.snapshot and snap is not old and [n.name for n in snap.nodes] == ["n1"]
    assert snap.node_generation == old.node_generation + 1
    assert a.node == -1 and cache.node_of("default/a") == "n0"  # waits for its node or its deletion
    assert b.node == 0 and cache.is_assumed("default/b") and _cpu(cache) == {"n1": 500}
    cache.add_node(node("n0"))
    assert _cpu(cache) == {"n1": 500, "n0": 1000}
    assert [p.key for p in cache.pods()] == ["default/a", "default/b"] and len(cache) == 2
