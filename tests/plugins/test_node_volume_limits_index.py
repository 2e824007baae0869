"""NodeVolumeLimits' attached-volume index against upstream's algorithm walked node by node: random clusters where
pods come and go, claims are bound, volumes appear (through the catalog's methods, or changed behind its back),
nodes are added, and the incoming pod is judged at every step."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from packsched.api.objects import Node, Pod, PodVolume
from packsched.api.storage import (
    WAIT_FOR_FIRST_CONSUMER,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    StorageObjects,
)
from packsched.framework.cycle_state import CycleState
from packsched.framework.podinfo import PodInfo, make_pod_info
from packsched.framework.snapshot import BoolArray, Snapshot
from packsched.framework.status import Code
from packsched.plugins.helper.volumes import csi_attach_limit_key
from packsched.plugins.nodevolumelimits.attached import (
    INDEX_KEY,
    AttachedVolumes,
    ClaimMissing,
    attachable_volumes,
    attached_volumes,
)
from packsched.plugins.nodevolumelimits.csi import new_csi_limits
from volume_cases import FakeHandle

DRIVERS = ("d1.csi", "d2.csi")


def reference(snap: Snapshot, storage: StorageObjects, pod: Pod) -> BoolArray | None:
    """Upstream's Filter on each node (None: the pod's claim is missing)."""
    try:
        new = attachable_volumes(pod, storage, True)
    except ClaimMissing:
        return None
    out = np.zeros(snap.n, dtype=bool)
    for col, node in enumerate(snap.nodes):
        limits = {k: int(v) for k, v in node.allocatable.items() if k.startswith("attachable-volumes-csi-")}
        csi = storage.csi_node(node.name)
        for driver, count in (csi.drivers if csi else {}).items():
            if count is not None:
                limits[csi_attach_limit_key(driver)] = count
        attached: dict[str, str] = {}
        for other in snap.pods_on[col].values():
            attached.update(attachable_volumes(other.pod, storage, False))
        fresh = Counter(k for v, k in new.items() if v not in attached)
        used = Counter(attached.values())
        out[col] = any(key in limits and used[key] + n > limits[key] for key, n in fresh.items())
    return out


def fresh_state(idx: AttachedVolumes) -> tuple[dict[str, list[int]], dict[str, dict[int, int]]]:
    used = {k: idx.attached(k).tolist() for k in idx.used if idx.attached(k).any()}
    return used, idx.users


class World:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.storage = StorageObjects()
        for i, driver in enumerate(DRIVERS):
            self.storage.classes[f"sc{i}"] = StorageClass(f"sc{i}", driver, WAIT_FOR_FIRST_CONSUMER)
        self.snap = Snapshot()
        for _ in range(5):
            self.add_node()
        for i in range(10):
            self.add_volume(f"pv{i}", via_method=False)
        for i in range(14):
            self.add_claim(f"c{i}", via_method=False)
        self.pods = [self.make_pod(f"p{i}") for i in range(24)]
        self.handle = FakeHandle(self.snap, self.storage)
        self.plugin = new_csi_limits(None, self.handle)

    def add_node(self) -> None:
        rng, name = self.rng, f"n{self.snap.n}"
        alloc = {"cpu": 4000, "pods": 110}
        if rng.random() < 0.4:
            alloc[csi_attach_limit_key(DRIVERS[0])] = rng.randint(0, 3)
        self.snap.add_node(Node(name, allocatable=alloc))
        if rng.random() < 0.7:
            drivers: dict[str, int | None] = {d: rng.choice([None, 0, 1, 2, 3]) for d in DRIVERS if rng.random() < 0.8}
            self.storage.csi_nodes[name] = CSINode(name, drivers)

    def add_volume(self, name: str, via_method: bool = True) -> None:
        rng = self.rng
        driver = rng.choice([*DRIVERS, ""])
        pv = PersistentVolume(name, csi_driver=driver, csi_handle=f"h{rng.randint(0, 6)}" if driver else "")
        if via_method:
            self.storage.add_volume(pv)
        else:
            self.storage.volumes[name] = pv

    def add_claim(self, name: str, via_method: bool = True) -> None:
        rng = self.rng
        pvc = PersistentVolumeClaim(name)
        if rng.random() < 0.6:
            pvc.volume_name = f"pv{rng.randint(0, 13)}"  # some name volumes that do not exist (yet)
        pvc.storage_class_name = rng.choice(["sc0", "sc1", "missing", None])
        if via_method:
            self.storage.add_claim(pvc)
        else:
            self.storage.claims[pvc.key] = pvc

    def make_pod(self, name: str) -> PodInfo:
        rng = self.rng
        vols = [PodVolume(f"v{i}", "persistentVolumeClaim", f"c{rng.randint(0, 16)}") for i in range(rng.randint(0, 3))]
        if rng.random() < 0.2:
            vols.append(PodVolume("scratch", "emptyDir"))
        if rng.random() < 0.2:
            vols.append(PodVolume("eph", "ephemeral"))  # claim <pod>-eph, made now and then below
        return make_pod_info(Pod(name, volumes=vols))

    def step(self) -> None:
        rng = self.rng
        placed = [p for p in self.pods if p.node >= 0]
        roll = rng.random()
        if roll < 0.35:
            waiting = [p for p in self.pods if p.node < 0]
            if waiting:
                self.snap.add_pod(rng.choice(waiting), rng.randrange(self.snap.n))
        elif roll < 0.5 and placed:
            self.snap.remove_pod(rng.choice(placed))
        elif roll < 0.6:
            claim = self.storage.claim("default", f"c{rng.randint(0, 16)}")
            pv = self.storage.volume(f"pv{rng.randint(0, 13)}")
            if claim is not None and pv is not None:
                self.storage.bind(claim, pv)
        elif roll < 0.7:
            self.add_volume(f"pv{rng.randint(0, 13)}")
        elif roll < 0.8:
            pod = rng.choice(self.pods).pod
            name = rng.choice([f"c{rng.randint(0, 16)}", f"{pod.name}-eph"])
            self.add_claim(name)
        elif roll < 0.85:
            # a change the journal does not see: the index must notice it from the generation alone
            claim = self.storage.claim("default", f"c{rng.randint(0, 16)}")
            if claim is not None:
                claim.volume_name = f"pv{rng.randint(0, 13)}"
                self.storage.generation += 1
        elif roll < 0.9:
            self.add_node()
            self.plugin._stamp = None  # a CSINode may have come with it (manifests write them once, at load)
        elif roll < 0.95:
            self.live_change()
        else:
            self.storage.changes.clear()  # the journal started afresh

    def live_change(self) -> None:
        """What live mode's informers do besides adding: remove claims and volumes, change or remove classes,
        change or remove CSINodes (through the catalog's methods only: the plugin's caches must notice)."""
        rng, storage = self.rng, self.storage
        kind = rng.randrange(6)
        if kind == 0:
            storage.remove_claim(f"default/c{rng.randint(0, 16)}")
        elif kind == 1:
            storage.remove_volume(f"pv{rng.randint(0, 13)}")
        elif kind == 2:
            name = rng.choice(["sc0", "sc1", "missing"])
            storage.add_class(StorageClass(name, rng.choice(DRIVERS), WAIT_FOR_FIRST_CONSUMER))
        elif kind == 3:
            storage.remove_class(rng.choice(["sc0", "sc1", "missing"]))
        elif kind == 4 and self.snap.n:
            name = f"n{rng.randrange(self.snap.n)}"
            drivers: dict[str, int | None] = {d: rng.choice([None, 0, 1, 2, 3]) for d in DRIVERS if rng.random() < 0.8}
            storage.add_csi_node(CSINode(name, drivers))
        elif self.snap.n:
            storage.remove_csi_node(f"n{rng.randrange(self.snap.n)}")

    def check(self) -> None:
        for info in self.pods:
            if info.node >= 0:
                continue
            want = reference(self.snap, self.storage, info.pod)
            state = CycleState()
            if not self.plugin.pre_filter(state, info, self.snap).ok:
                assert want is None or not want.any()
                continue
            rejections = self.plugin.filter(state, info, self.snap, slice(None))
            if want is None:
                assert [r.code for r in rejections] == [Code.UNSCHEDULABLE_AND_UNRESOLVABLE]
                continue
            got = np.zeros(self.snap.n, dtype=bool)
            for r in rejections:
                got |= r.mask
            assert got.tolist() == want.tolist(), info.key
            cols = np.arange(self.snap.n)[::2]
            part = self.plugin.filter(state, info, self.snap, cols)
            assert (part[0].mask if part else np.zeros(len(cols), dtype=bool)).tolist() == want[cols].tolist()
        idx = attached_volumes(self.snap, self.storage)
        rebuilt = AttachedVolumes(Snapshot(), self.storage)
        rebuilt.snap, rebuilt.n = self.snap, self.snap.n
        for info in self.snap.pods.values():
            rebuilt.pod_added(info, info.node)
        assert fresh_state(idx) == fresh_state(rebuilt)


@pytest.mark.parametrize("seed", range(12))
def test_index_agrees_with_upstream(seed: int) -> None:
    world = World(random.Random(seed))
    for _ in range(80):
        world.step()
        world.check()


def test_another_catalog_rebuilds_the_index() -> None:
    world = World(random.Random(99))
    for _ in range(20):
        world.step()
    first = attached_volumes(world.snap, world.storage)
    other = StorageObjects()
    second = attached_volumes(world.snap, other)
    assert second is not first and second.storage is other
    assert first not in world.snap.listeners and world.snap.extensions[INDEX_KEY] is second
    assert not second.used
