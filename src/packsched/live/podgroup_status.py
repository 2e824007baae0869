"""The PodGroup status controller: with ``serve --write-podgroup-status``, each PodGroup's ``status`` (phase, running,
succeeded, failed, occupiedBy) written as scheduler-plugins' PodGroup controller (``PodGroupReconciler``) writes it.

What it writes is what that controller converges to (:func:`packsched.api.gangs.pod_group_status`) for the pods
that carry the group's label in its namespace, whatever their scheduler and phase (Succeeded and Failed pods count,
as in the controller's pod informer). As upstream's: a group whose status says Finished or Failed is left alone; a
count of zero is absent (the controller's merge patch drops fields that are zero); ``occupiedBy`` is filled as the
group leaves Pending, from the owners of the member whose name sorts first, and kept after; ``scheduleStartTime`` is
not written. The status goes out as a merge patch of the status subresource, only when it
differs from what the API server shows (or what was last written, until the watch shows it).

It decides nothing: the scheduling thread hands it every pod and PodGroup event (:meth:`observe`) and calls
:meth:`sync` now and then; only the groups whose pods or object changed since are looked at.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from packsched.api.gangs import (
    PG_FAILED,
    PG_FINISHED,
    PodGroup,
    PodGroupStatus,
    first_owners,
    group_from_labels,
    occupied_by,
    pod_group_status,
)
from packsched.live.health_port import ThrottledLog
from packsched.live.port import DELETED, POD_GROUPS, PODS, ApiError, ApiPort, Obj, Resource, key_of

LOG = logging.getLogger("packsched.live")
RETRY_S = 5.0  # a status write that failed is tried again after this long (the group's next change aside)
_COUNTS = ("running", "succeeded", "failed")


class PodGroupStatusController:
    def __init__(
        self,
        port: ApiPort,
        write_status: bool,
        log: ThrottledLog | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.port = port
        self.write_status = write_status
        self.log = log or ThrottledLog(LOG)
        self.clock = clock
        self.writes = 0
        # group key (namespace/name) -> member pod name -> (phase, occupied_by of its owners)
        self._members: dict[str, dict[str, tuple[str, str]]] = {}
        self._group_of: dict[str, str] = {}  # pod key -> its group key
        self._shown: dict[str, PodGroupStatus] = {}  # group key -> its status as the watch last showed it
        self._sent: dict[str, PodGroupStatus] = {}  # group key -> what was written, until the watch shows it
        self._dirty: set[str] = set()  # groups to look at
        self._retry_at: dict[str, float] = {}

    # -- the informers' view -------------------------------------------------------------------------------------

    def observe(self, res: Resource, etype: str, obj: Obj) -> None:
        """A pod or PodGroup event (other kinds, and everything when not writing, are ignored)."""
        if not self.write_status:
            return
        if res == PODS:
            self._pod(etype, obj)
        elif res == POD_GROUPS:
            self._group(etype, obj)

    def _pod(self, etype: str, obj: Obj) -> None:
        key = key_of(obj)
        meta = obj.get("metadata") or {}
        before = self._group_of.pop(key, None)
        if before is not None:
            members = self._members[before]
            members.pop(str(meta.get("name", "")), None)
            if not members:
                del self._members[before]
            self._dirty.add(before)
        if etype == DELETED:
            return
        labels = meta.get("labels") or {}
        name = group_from_labels(labels) if isinstance(labels, dict) else ""
        if not isinstance(name, str) or not name:
            return
        group = f"{meta.get('namespace', '')}/{name}"
        phase = (obj.get("status") or {}).get("phase") or "Pending"
        refs = meta.get("ownerReferences") or []
        owners = [str(r.get("name", "")) for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []
        occupied = occupied_by(str(meta.get("namespace", "")), owners)
        self._members.setdefault(group, {})[str(meta.get("name", ""))] = (str(phase), occupied)
        self._group_of[key] = group
        self._dirty.add(group)

    def _group(self, etype: str, obj: Obj) -> None:
        key = key_of(obj)
        if etype == DELETED:
            for table in (self._shown, self._sent, self._retry_at):
                table.pop(key, None)
            self._dirty.discard(key)
            return
        shown = _read_status(obj.get("status"))
        self._shown[key] = shown
        if self._sent.get(key) == shown:
            del self._sent[key]  # the watch shows what was written: from now on it is the truth
        self._dirty.add(key)

    # -- writing -------------------------------------------------------------------------------------------------

    def sync(self, groups: Mapping[str, PodGroup]) -> None:
        """Write the status of every changed group (``groups``: the PodGroups as decoded, by key) that needs it."""
        if not self.write_status or not self._dirty:
            return
        now = self.clock()
        for key in sorted(self._dirty):
            if self._retry_at.get(key, 0.0) > now:
                continue
            self._dirty.discard(key)
            group = groups.get(key)
            if group is None:
                continue  # no such PodGroup (or one that could not be read): nothing to write
            have = self._sent.get(key) or self._shown.get(key)
            if have is not None and have.phase in (PG_FINISHED, PG_FAILED):
                continue  # upstream's controller does not reconcile a group that finished or failed
            members = self._members.get(key, {})
            owners = first_owners((name, occupied) for name, (_, occupied) in members.items())
            want = pod_group_status(group, (phase for phase, _ in members.values()), owners, have)
            if want == have:
                continue
            self._write(group, want)

    def _write(self, group: PodGroup, want: PodGroupStatus) -> None:
        status: dict[str, Any] = {"phase": want.phase}
        for field in _COUNTS:
            status[field] = getattr(want, field) or None  # zero: absent (upstream's omitempty)
        if want.occupied_by:  # never removed: the controller only ever sets it
            status["occupiedBy"] = want.occupied_by
        try:
            self.port.patch_status(POD_GROUPS, group.namespace, group.name, {"status": status})
        except ApiError as exc:
            if exc.not_found:
                return  # deleted meanwhile: its watch event says so
            self._dirty.add(group.key)
            self._retry_at[group.key] = self.clock() + RETRY_S
            self.log.failed("podgroup-status", "cannot write PodGroup status", exc, {"podGroup": group.key})
            return
        self.writes += 1
        self._retry_at.pop(group.key, None)
        self._sent[group.key] = want


def _read_status(raw: object) -> PodGroupStatus:
    """A PodGroup's status as the API server shows it (absent counts are zero)."""
    status = raw if isinstance(raw, dict) else {}

    def count(name: str) -> int:
        value = status.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    phase = status.get("phase")
    occupied = status.get("occupiedBy")
    return PodGroupStatus(
        phase if isinstance(phase, str) else "",
        count("running"),
        count("succeeded"),
        count("failed"),
        occupied if isinstance(occupied, str) else "",
    )
