"""A simulation's run moves the objects alive at its start out of the garbage collector's generations, and puts
them back when it ends (sim/engine.py ``objects_frozen``)."""

from __future__ import annotations

import gc

import pytest

from helpers import make_config, node, pod
from packsched.api.manifests import Cluster
from packsched.plugins.registry import in_tree_registry
from packsched.scheduler import CycleResult
from packsched.sim.engine import Simulation, objects_frozen


def _sim(seen: list[int]) -> Simulation:
    def on_cycle(_result: CycleResult) -> None:
        seen.append(gc.get_freeze_count())

    cluster = Cluster(nodes=[node("n1"), node("n2")], pods=[pod("a"), pod("b")])
    return Simulation(cluster, make_config(), in_tree_registry(), seed=1, on_cycle=on_cycle)


@pytest.fixture(autouse=True)
def _nothing_frozen() -> None:
    gc.unfreeze()  # an earlier test in this process may have run serve, which freezes at its start


def test_a_run_freezes_what_exists_and_unfreezes_at_its_end() -> None:
    seen: list[int] = []
    result = _sim(seen).run()
    assert len(seen) == 2 and all(count > 0 for count in seen)  # the cluster's objects, during every cycle
    assert gc.get_freeze_count() == 0  # all back in the generations: collectable again
    assert len(result.records) == 2 and all(r.node is not None for r in result.records)


def test_objects_frozen_by_someone_else_are_left_frozen() -> None:
    gc.freeze()  # as serve does at its start
    try:
        before = gc.get_freeze_count()
        with objects_frozen():
            assert gc.get_freeze_count() == before
        assert gc.get_freeze_count() == before  # not unfrozen by the run
    finally:
        gc.unfreeze()


def test_a_run_that_raises_unfreezes_too() -> None:
    sim = _sim([])

    def boom(_result: CycleResult) -> None:
        raise RuntimeError("stop")

    sim.on_cycle = boom
    with pytest.raises(RuntimeError):
        sim.run()
    assert gc.get_freeze_count() == 0
