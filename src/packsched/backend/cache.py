"""The scheduler's cache, after kube-scheduler's (``pkg/scheduler/backend/cache``): which pods hold room on which
node, kept apart from the snapshot it maintains.

Two kinds of pods hold room: the pods the informers report bound (:meth:`Cache.add_pod`), and the pods the scheduler
*assumed*: it chose a node for them and is binding them, and no informer has confirmed the binding yet
(:meth:`Cache.assume`). An assumed pod is confirmed when the informer reports it on a node (:meth:`Cache.add_pod`),
forgotten when its binding fails (:meth:`Cache.forget`), and expired (:meth:`Cache.cleanup_expired`) when a TTL is set
and its binding finished longer than the TTL ago without a confirmation.

A pod reported bound to a node the cache does not know yet holds no room in the snapshot until that node is added
(kube-scheduler keeps it on an "imaginary" node without a Node object).

The cache owns the snapshot's pods and nodes: every change goes through it. Removing a node renumbers the snapshot's
columns, so :meth:`Cache.remove_node` builds a new snapshot and returns it (the scheduler must be given it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from packsched.api.objects import Node
from packsched.framework.podinfo import PodInfo
from packsched.framework.snapshot import Snapshot


@dataclass
class _PodState:
    info: PodInfo
    node: str
    assumed: bool = False
    binding_finished: bool = False
    deadline: float | None = None  # when an assumed pod whose binding finished expires (None: never)


class CacheError(Exception):
    """A call that does not match the pod's state in the cache (kube-scheduler returns these as errors)."""


class Cache:
    """Pods holding room on nodes (assumed or bound), and the snapshot they are accounted in."""

    def __init__(self, snapshot: Snapshot | None = None, ttl: float = 0.0) -> None:
        """``ttl``: how long an assumed pod whose binding finished waits for its confirmation before it expires;
        0 disables expiry (kube-scheduler's default since 1.25: the informer's delete cleans up)."""
        self.snapshot = snapshot if snapshot is not None else Snapshot()
        self.ttl = ttl
        self._pods: dict[str, _PodState] = {}
        self._waiting: dict[str, dict[str, _PodState]] = {}  # node name -> pods bound to it, node not known yet

    # -- questions --------------------------------------------------------------------------------------

    def __contains__(self, key: str) -> bool:
        return key in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def get(self, key: str) -> PodInfo | None:
        st = self._pods.get(key)
        return st.info if st is not None else None

    def node_of(self, key: str) -> str | None:
        """The node the pod is bound or assumed to (known to the snapshot or not); None when it holds no room."""
        st = self._pods.get(key)
        return st.node if st is not None else None

    def is_assumed(self, key: str) -> bool:
        st = self._pods.get(key)
        return st is not None and st.assumed

    def pods(self) -> Iterator[PodInfo]:
        """Every pod that holds room (assumed ones included), in the order the cache learnt of them."""
        return (st.info for st in list(self._pods.values()))

    # -- the scheduler's side ---------------------------------------------------------------------------

    def assume(self, info: PodInfo, node: str) -> None:
        """The scheduler chose ``node`` (a node of the snapshot) for the pod: it holds room there from now on."""
        key = info.key
        if key in self._pods:
            raise CacheError(f"pod {key} is in the cache, so can't be assumed")
        st = _PodState(info, node, assumed=True)
        self._place(st)
        self._pods[key] = st

    def finish_binding(self, info: PodInfo, now: float) -> None:
        """The binding was sent: from now on an assumed pod may expire (when a TTL is set)."""
        st = self._pods.get(info.key)
        if st is None or not st.assumed:
            return  # confirmed already (or gone)
        st.binding_finished = True
        st.deadline = now + self.ttl if self.ttl > 0 else None

    def forget(self, info: PodInfo) -> None:
        """The binding of an assumed pod failed: it no longer holds room."""
        st = self._pods.get(info.key)
        if st is None or not st.assumed or st.info is not info:
            raise CacheError(f"pod {info.key} wasn't assumed so cannot be forgotten")
        self._drop(st)

    def cleanup_expired(self, now: float) -> list[PodInfo]:
        """Assumed pods whose binding finished and whose deadline passed leave the cache; answers them."""
        expired = [
            st
            for st in self._pods.values()
            if st.assumed and st.binding_finished and st.deadline is not None and now >= st.deadline
        ]
        for st in expired:
            self._drop(st)
        return [st.info for st in expired]

    # -- the informers' side ----------------------------------------------------------------------------

    def add_pod(self, info: PodInfo, node: str) -> PodInfo:
        """The informer reports the pod bound to ``node``. An assumed pod on that node is confirmed (it keeps its
        PodInfo); a pod the cache holds elsewhere moves there with ``info``; an unknown pod is added. Answers the
        PodInfo the cache now holds for the pod."""
        st = self._pods.get(info.key)
        if st is not None:
            if st.node == node:
                st.assumed = False
                st.binding_finished = False
                st.deadline = None
                return st.info
            self._drop(st)  # assumed elsewhere (or moved): account it where it is
        st = _PodState(info, node)
        self._place(st)
        self._pods[info.key] = st
        return info

    def remove_pod(self, key: str) -> PodInfo | None:
        """The pod was deleted (or finished): it no longer holds room, assumed or not. Answers its PodInfo."""
        st = self._pods.get(key)
        if st is None:
            return None
        self._drop(st)
        return st.info

    def add_node(self, node: Node) -> None:
        """A new node, or an update of a known one; pods bound to it before it was seen now take their room."""
        snap = self.snapshot
        if node.name in snap.index:
            snap.update_node(node)
            return
        snap.add_node(node)
        for st in self._waiting.pop(node.name, {}).values():
            snap.add_pod(st.info, snap.index[node.name])

    def remove_node(self, name: str) -> Snapshot:
        """The node was deleted: a new snapshot without it (columns renumbered), with every pod of the cache placed
        again; the node's pods wait, holding nothing, for the node to come back or for their own deletion.
        Answers the new snapshot."""
        old = self.snapshot
        snap = Snapshot()
        snap.add_nodes(n for n in old.nodes if n.name != name)
        snap.generation = old.generation + 1
        snap.node_generation = old.node_generation + 1
        snap.namespaces = old.namespaces
        for st in self._pods.values():
            st.info.node = -1
        self._waiting.clear()
        self.snapshot = snap
        for st in self._pods.values():
            self._place(st)
        return snap

    # -- placing --------------------------------------------------------------------------------------------

    def _place(self, st: _PodState) -> None:
        col = self.snapshot.index.get(st.node)
        if col is None:
            self._waiting.setdefault(st.node, {})[st.info.key] = st
        else:
            self.snapshot.add_pod(st.info, col)

    def _drop(self, st: _PodState) -> None:
        del self._pods[st.info.key]
        if st.info.node >= 0:
            self.snapshot.remove_pod(st.info)
        else:
            self._waiting.get(st.node, {}).pop(st.info.key, None)
