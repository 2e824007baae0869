"""``packsched serve``: informers, leader election, the scheduling loop, health and metrics, put together.

Order, as kube-scheduler's: informers start at once (a standby keeps a warm cache), the scheduling loop starts
only once this replica leads and every informer has listed; on SIGTERM the loop stops, the lease is released
and queued events are sent before the process ends.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from packsched.api.files import STDIN, STDIN_LABEL, read_text
from packsched.config.types import KubeSchedulerConfiguration
from packsched.framework.interface import (
    DRA,
    ELASTIC_QUOTA,
    NAMESPACES,
    POD_GROUP,
    SERVICE,
    STORAGE,
    WORKLOAD,
    handles,
    reads,
)
from packsched.framework.runtime import PluginFactory
from packsched.live.binding import DEFAULT_WORKERS
from packsched.live.controller import DELETE, Controller
from packsched.live.health import HealthServer
from packsched.live.health_port import ApiHealth, MonitoredPort, Prober
from packsched.live.informer import DEFAULT_WATCH_TIMEOUT_S, Informer
from packsched.live.leader import LeaderElector, active_holder
from packsched.live.metrics import Metrics
from packsched.live.port import (
    DRA_RESOURCES,
    ELASTIC_QUOTAS,
    NODES,
    PDBS,
    POD_GROUPS,
    PODS,
    PRIORITY_CLASSES,
    RESOURCE_CLAIMS,
    SERVICES,
    STORAGE_RESOURCES,
    WORKLOADS,
    ApiError,
    ApiPort,
    Resource,
    generic_workload_resource,
    older_versions,
    optional,
    same_kind,
)
from packsched.live.port import NAMESPACES as NAMESPACES_RES
from packsched.live.record import RecordError, RecordWriter, header
from packsched.live.recorder import Recorder

LOG = logging.getLogger("packsched.live")

# What the scheduler always watches. The rest only when a profile has a plugin that wants it (so that a cluster
# without the ElasticQuota or PodGroup CRD, or RBAC without storage, needs it only for such a configuration):
# ElasticQuotas, PodGroups, Services and controllers for the plugins that keep a view of them (CapacityScheduling;
# Coscheduling; PodTopologySpread's default constraints), namespaces and the storage catalog for the plugins that
# read them (InterPodAffinity; the volume plugins), the DRA objects for DynamicResources (at the newest version of
# resource.k8s.io the cluster serves; none when it serves none), and with the feature gate GenericWorkload the
# Workloads (1.35) or PodGroups (1.36+) of scheduling.k8s.io at the version the --kube-version serves.
WATCHED: tuple[Resource, ...] = (NODES, PODS, PDBS, PRIORITY_CLASSES)

EXIT_OK = 0
EXIT_LOST_LEASE = 1
EXIT_REFUSED = 3  # leader election off while another instance holds the lease
# How long the scheduling thread may hold the interpreter lock while another thread waits for it (Python's default:
# 5 ms). The binding workers, event senders and informers each need the lock for a moment after every answer; at
# 5 ms a binding waited up to twice that (after sending, after the answer) on top of the API server's own time,
# which capped 16 workers below the rate the scheduling thread decides at, and the start-up's informer threads
# queued behind the thread applying the pods they listed. 1 ms: more, shorter turns (measured in bench/RESULTS.md).
# Set by the ``serve`` command, whose process is serve's alone (not by Server, which tests run in their own process).
SWITCH_INTERVAL_S = 0.001
# /healthz, /readyz and /metrics: kube-scheduler's historical plain-HTTP address (its insecure port); port 0 picks
# a free one.
DEFAULT_BIND_ADDRESS = "0.0.0.0"
DEFAULT_PORT = 10251


@dataclass
class ServeOptions:
    bind_address: str = DEFAULT_BIND_ADDRESS
    port: int = DEFAULT_PORT
    identity: str = ""
    removal: str = DELETE  # how preemption removes victims: delete (kube-scheduler's way) or evict
    binding_workers: int = DEFAULT_WORKERS  # binding cycles in flight at once
    watch_timeout_s: int = DEFAULT_WATCH_TIMEOUT_S
    seed: int = 0
    leader_elect: bool | None = None  # None: the config's leaderElection.leaderElect
    serve_http: bool = True
    quota_status: bool = False  # write ElasticQuota status.used (scheduler-plugins' controller's job)
    pod_group_status: bool = False  # write PodGroup status (scheduler-plugins' PodGroup controller's job)
    allow_concurrent: bool = False  # leader election off: start even when another instance holds the lease
    record: str = ""  # write every decision, with the cluster events before it, to this file (JSON lines)


def _served(inf: Informer) -> Callable[[], Resource]:
    """The resource at the version the informer found served."""
    return lambda: inf.res


def default_identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class Server:
    def __init__(
        self,
        port: ApiPort,
        config: KubeSchedulerConfiguration,
        registry: Mapping[str, PluginFactory],
        options: ServeOptions | None = None,
    ) -> None:
        self.api_health = ApiHealth()
        self.port = port = MonitoredPort(port, self.api_health)  # every request tells whether the server is there
        self.config = config
        self.options = options or ServeOptions()
        self.identity = self.options.identity or default_identity()
        self.metrics = Metrics(pod_groups=config.kube_version.pod_group_scheduling_cycle)
        self.recorder = Recorder(port, self.identity, paused=lambda: self.api_health.down)
        self.record = self._open_record(config) if self.options.record else None
        self.controller = Controller(
            port,
            config,
            registry,
            metrics=self.metrics,
            recorder=self.recorder,
            identity=self.identity,
            seed=self.options.seed,
            removal=self.options.removal,
            quota_status=self.options.quota_status,
            pod_group_status=self.options.pod_group_status,
            binding_workers=self.options.binding_workers,
            health=self.api_health,
            prober=lambda stop: Prober(port, self._probe, stop),
            record=self.record,
        )
        self.stop = threading.Event()
        self.informers: list[Informer] = []
        # every informer started, the optional ones after their discovery request: before, synced() is False (else
        # /readyz, and the scheduling loop, could go ahead without the kinds still being looked up)
        self._informers_started = threading.Event()
        le = config.leader_election
        elect = le.leader_elect if self.options.leader_elect is None else self.options.leader_elect
        self.elector: LeaderElector | None = None
        if elect:
            self.elector = LeaderElector(
                port,
                le,
                self.identity,
                on_change=lambda on: self.metrics.leader.labels(le.resource_name).set(int(on)),
                log=self.api_health.log,
            )
        self.health: HealthServer | None = None
        if self.options.serve_http:
            try:
                self.health = HealthServer(
                    self.options.bind_address, self.options.port, self.metrics, self.healthy, self.ready
                )
            except OSError:
                self._close_record()
                raise

    def _open_record(self, config: KubeSchedulerConfiguration) -> RecordWriter:
        """The record's file, its header written (raises RecordError when it cannot be): the configuration file's
        text, so that ``verify-record`` schedules with what this run schedules with."""
        path = config.source_file
        text: str | None = None
        if config.source_version != "default":
            try:  # standard input was read once, and kept
                text = read_text(STDIN if path == STDIN_LABEL else path)
            except (OSError, UnicodeDecodeError) as exc:
                raise RecordError(0, f"cannot keep the configuration {path} in it: {exc}") from None
        head = header(
            path if path == STDIN_LABEL else os.path.abspath(path),
            text,
            self.options.seed,
            str(config.kube_version),
            self.options.removal,
            [p.scheduler_name for p in config.profiles],
            dict(config.kube_version.gates),
        )
        return RecordWriter(self.options.record, head)

    def _close_record(self) -> None:
        if self.record is not None:
            self.record.close()
            if self.record.failed:
                LOG.error("the record is incomplete", extra={"record": self.record.path, "error": self.record.failed})

    # -- probes -----------------------------------------------------------------------------------------

    def synced(self) -> bool:
        return (
            self._informers_started.is_set() and bool(self.informers) and all(i.synced.is_set() for i in self.informers)
        )

    def healthy(self) -> tuple[bool, str]:
        if self.elector is not None and self.elector.lost.is_set():
            return False, "leaderElection: lease lost"
        return True, "ok"

    def _probe(self) -> None:
        """One cheap request (a node by name; 404 is an answer too)."""
        nodes = self.controller.snapshot.nodes
        self.port.get(NODES, "", nodes[0].name if nodes else "packsched-probe")

    def ready(self) -> tuple[bool, str]:
        if self.api_health.down:
            return False, "API server unreachable"
        if not self.synced():
            waiting = ", ".join(i.res.plural for i in self.informers if not i.synced.is_set())
            if not self._informers_started.is_set():
                waiting = ", ".join(w for w in (waiting, "not all started") if w)
            return False, f"informers not synced: {waiting or 'not started'}"
        return True, "ok"

    # -- run --------------------------------------------------------------------------------------------

    def concurrent_leader(self) -> bool:
        """With leader election off: whether another instance leads the same configuration's lease (refused unless
        ``allow_concurrent``, then loudly warned about: two schedulers of one profile bind against each other's
        stale view, and over-commit nodes)."""
        if self.elector is not None:
            return False
        le = self.config.leader_election
        holder = active_holder(self.port, le)
        if not holder:
            return False
        where = f"{le.resource_namespace}/{le.resource_name}"
        extra = {"lease": where, "holder": holder, "profiles": list(self.controller.scheduler.frameworks)}
        if self.options.allow_concurrent:
            LOG.warning(
                "another instance leads these profiles and leader election is off: both will schedule the same "
                "pods and may over-commit nodes (started anyway: --allow-concurrent-scheduler)",
                extra=extra,
            )
            return False
        LOG.error(
            "another instance leads these profiles; refusing to schedule beside it with leader election off "
            "(run with leader election, or pass --allow-concurrent-scheduler)",
            extra=extra,
        )
        return True

    def run(self) -> int:
        """Serve until :attr:`stop` is set (SIGTERM) or the lease is lost. Returns the exit code."""
        if self.concurrent_leader():
            self.port.close()
            self._close_record()
            return EXIT_REFUSED
        if self.health is not None:
            self.health.start()
            LOG.info("serving health and metrics", extra={"port": self.health.port})
        self.recorder.start()
        watched = self.watched()
        for res in [r for r in watched if not optional(r)]:
            self._start_informer(res)
        # the kinds a cluster need not serve: asked for only at a version it serves (the others list meanwhile)
        served: dict[str, tuple[str, ...] | None] = {}
        for res in [r for r in watched if optional(r)]:
            if res.group not in served:
                served[res.group] = self._served_versions(res.group)
            versions = served[res.group]
            candidates = [res, *older_versions(res)]
            if versions is not None:  # else discovery failed: each version is tried in turn
                candidates = [c for c in candidates if c.version in versions]
            if candidates:
                self._start_informer(candidates[0], tuple(candidates[1:]))
            elif versions:
                LOG.warning(
                    "API version not served by the cluster; not watched",
                    extra={"group": res.group, "resource": res.plural, "version": res.version, "served": versions},
                )
        self._informers_started.set()
        code = EXIT_OK
        try:
            if self.elector is not None:
                # a standby applies the informers' events meanwhile (a warm cache, and no backlog)
                if not self.elector.acquire(self.stop, self.controller.drain):
                    return EXIT_OK
                self.elector.start_renewing(self.stop)
                lost = self.elector.lost
                threading.Thread(target=self._stop_when, args=(lost,), daemon=True, name="lease-watch").start()
            LOG.info("scheduling", extra={"profiles": list(self.controller.scheduler.frameworks)})
            self.controller.run(self.stop, self.synced)
            if self.elector is not None and self.elector.lost.is_set():
                code = EXIT_LOST_LEASE
        finally:
            self.shutdown()
        return code

    def _start_informer(self, res: Resource, fallbacks: tuple[Resource, ...] = ()) -> None:
        inf = Informer(
            self.port,
            res,
            self.controller.sink,
            self.stop,
            self.options.watch_timeout_s,
            on_relist=lambda r: self.metrics.relists.labels(r.plural).inc(),
            log=self.api_health.log,
            fallbacks=fallbacks,
            optional=optional(res),
        )
        if same_kind(res, RESOURCE_CLAIMS):  # claims are written at the version their informer found served
            self.controller.claim_writer.resource = _served(inf)
        self.informers.append(inf)
        inf.start()

    def _served_versions(self, group: str) -> tuple[str, ...] | None:
        """The versions the cluster serves of ``group`` (its discovery document); None when it did not say."""
        try:
            versions = self.port.group_versions(group)
        except ApiError as exc:
            LOG.warning("API discovery failed; trying each version", extra={"group": group, "error": str(exc)})
            return None
        if not versions:
            LOG.info("API group not served by the cluster; not watched", extra={"group": group})
        return versions

    def watched(self) -> list[Resource]:
        """The resources serve watches for this configuration's profiles."""
        frameworks = list(self.controller.scheduler.frameworks.values())
        handlers = [p for f in frameworks for p in f.event_handlers]
        plugins = [p for f in frameworks for p in f.plugins.values()]
        out = list(WATCHED)
        if any(handles(p, ELASTIC_QUOTA) for p in handlers):
            out.append(ELASTIC_QUOTAS)
        if any(handles(p, POD_GROUP) for p in handlers):
            out.append(POD_GROUPS)
        if any(reads(p, NAMESPACES) for p in plugins):
            out.append(NAMESPACES_RES)
        if any(handles(p, SERVICE) for p in handlers):
            out.append(SERVICES)
        if any(handles(p, WORKLOAD) for p in handlers):
            out += WORKLOADS
        if any(reads(p, STORAGE) for p in plugins):
            out += STORAGE_RESOURCES
        if any(reads(p, DRA) for p in plugins):
            out += DRA_RESOURCES
        version = self.config.kube_version
        groups = generic_workload_resource(version.minor) if version.generic_workload else None
        if groups is not None:  # GangScheduling reads them, and 1.37's pod-group cycle whatever the plugins
            out.append(groups)
        return out

    def _stop_when(self, event: threading.Event) -> None:
        while not self.stop.is_set():
            if event.wait(0.2):
                self.stop.set()

    def shutdown(self) -> None:
        self.stop.set()
        if self.elector is not None and not self.elector.lost.is_set():
            self.elector.release()
        self.recorder.stop()
        self._close_record()  # the scheduling loop has stopped: every line it queued is written
        self.port.close()  # cuts the informers' watches
        for inf in self.informers:
            inf.join(2.0)
        if self.health is not None:
            self.health.stop()
        LOG.info(
            "stopped",
            extra={
                "bound": self.controller.stats.bound,
                "attempts": self.controller.stats.attempts,
                "bindingsInFlightPeak": self.controller.binding.peak,
            },
        )
