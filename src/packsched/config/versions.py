"""Which kube-scheduler packsched imitates: one minor version, as a typed object with a predicate per known
difference between releases (``docs/reference/semantics.md`` lists them with their upstream sources).

packsched models kube-scheduler 1.25 to 1.37 (the newest, and the default; 1.35-1.37 differ from 1.34 in the
properties below: BalancedAllocation's score, VolumeBinding's score, DynamicResources' feature gates and
messages). Older minor versions (1.16 to 1.24)
are accepted only for what the legacy Policy files of that era need, RequestedToCapacityRatio's arithmetic;
everything else then behaves as in 1.25. ``--rtcr-semantics`` is an alias: ``v1.16`` is ``--kube-version 1.16``,
``v1.17`` is ``--kube-version 1.17``, ``current`` changes nothing.

The object travels with the configuration (``KubeSchedulerConfiguration.kube_version``); plugins read it from
their handle (``Handle.kube_version``), never from global state. It also carries the feature gates the user set
(``--feature-gates``, the PackschedConfiguration's ``featureGates``: :meth:`KubeVersion.with_gates`), and each
property that follows a gate answers with them applied (``config/features.py`` holds the gates' history).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from packsched.config import features

# How RequestedToCapacityRatio scores are computed (spec requested-to-capacity-ratio.md §1, §6).
SEMANTICS_CURRENT: Final = "current"  # v1.22+: 0..100, floor utilisation, skips (the default)
SEMANTICS_V1_17: Final = "v1.17"  # v1.17-v1.21: shape x10, ceil utilisation, no skips
SEMANTICS_V1_16: Final = "v1.16"  # v1.16: 0..10 unscaled shape, ceil utilisation, no skips

OLDEST_MODELLED: Final = 25  # the first minor version whose scheduler packsched models in full
OLDEST_ACCEPTED: Final = 16  # the first minor version accepted at all (legacy Policy arithmetic)
NEWEST: Final = 37

_PATTERN = re.compile(r"^v?1\.(\d{1,2})(?:\.\d+)?$")


@functools.cache
def _enabled(name: str, minor: int, gates: tuple[tuple[str, bool], ...]) -> bool:
    """``features.enabled`` for a release's gates, answered once per (gate, release, gates set): the properties
    that follow a gate are read per pod (GenericWorkload three times as a pod is created)."""
    return features.enabled(name, minor, dict(gates))


class FeatureGateError(ValueError):
    """Feature gates a release does not accept: (gate, message) pairs, in kube-scheduler's words where it has
    them."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(message for _, message in problems))


@dataclass(frozen=True, order=True)
class KubeVersion:
    """kube-scheduler 1.<minor>, with the feature gates set away from the release's defaults (``gates``: sorted
    (name, value) pairs; empty for ``--kube-version`` alone). Each property answers one question whose answer
    changed between releases (or that a feature gate changes)."""

    minor: int = NEWEST
    gates: tuple[tuple[str, bool], ...] = ()

    def __str__(self) -> str:
        return f"1.{self.minor}"

    def describe(self) -> str:
        """``1.35``, or ``1.35 with GangScheduling=true,GenericWorkload=true`` when gates were set."""
        if not self.gates:
            return str(self)
        return f"{self} with {format_gates(dict(self.gates))}"

    # -- feature gates ---------------------------------------------------------------------------------------------

    def feature(self, name: str) -> bool:
        """Whether feature gate ``name`` is on: the value set, else the release's default (off for a gate the
        release does not have)."""
        return _enabled(name, self.minor, self.gates)

    def with_gates(self, overrides: Mapping[str, bool]) -> KubeVersion:
        """This release with ``overrides`` applied over the gates already set. Raises :class:`FeatureGateError`
        for a gate the release does not have, a locked gate set away from its default, a gate on whose
        dependencies are off (1.35+), and what packsched does not model."""
        merged = dict(self.gates) | dict(overrides)
        problems = features.check_overrides(self.minor, merged)
        if problems:
            raise FeatureGateError(problems)
        return KubeVersion(self.minor, tuple(sorted(merged.items())))

    @property
    def generic_workload(self) -> bool:
        """GenericWorkload (alpha and off in 1.35-1.36, beta and off in 1.37): the API server keeps a pod's group
        reference (1.35 ``spec.workloadRef``, 1.36+ ``spec.schedulingGroup``) and the scheduler tracks the pods of
        each group (1.35 its WorkloadManager, 1.36 its cache's pod group states)."""
        return self.feature("GenericWorkload")

    @property
    def pod_group_field(self) -> str:
        """The pod field that names its group in this release: ``workloadRef`` (1.35), ``schedulingGroup``
        (1.36+), "" before 1.35."""
        if self.minor >= 36:
            return "schedulingGroup"
        return "workloadRef" if self.minor == 35 else ""

    @property
    def gang_scheduling_default(self) -> bool:
        """GangScheduling joins the default profile's multiPoint (appended last): with the GangScheduling gate in
        1.35-1.36, with GenericWorkload from 1.37 (the GangScheduling gate is gone)."""
        return self.feature("GenericWorkload" if self.minor >= 37 else "GangScheduling")

    @property
    def moves_pods_on_unscheduled_pod_add(self) -> bool:
        """1.35-1.36 with the GangScheduling gate: a new unscheduled pod is a cluster event (UnscheduledPodAdd)
        that may move unschedulable pods, as an assigned pod's arrival does."""
        return 35 <= self.minor <= 36 and self.feature("GangScheduling")

    @property
    def pod_group_scheduling_cycle(self) -> bool:
        """1.36+ with GenericWorkload: a pod with ``spec.schedulingGroup`` is scheduled with the other unscheduled
        pods of its group in one pod-group scheduling cycle (schedule_one_podgroup.go), and after a failure goes
        back to the queue's backoff rather than waiting for a cluster event."""
        return self.minor >= 36 and self.generic_workload

    @property
    def pod_group_placement_cycle(self) -> bool:
        """1.37+ with GenericWorkload: the pod-group cycle decides with PlacementFeasible plugins (GangScheduling's
        minCount) instead of Permit, runs no PostFilter per pod but PodGroupPostFilter (pod-group preemption) for
        the group, and checks the group's pods agree on scheduler name, priority and preemption policy
        (podgroup_placement.py)."""
        return self.minor >= 37 and self.generic_workload

    @property
    def pod_group_entities(self) -> bool:
        """1.37+ with GenericWorkload: the queue holds a pod group's pods as one entity (backend/queue.py
        GroupEntity), ordered by the PodGroup's priority and the entity's timestamp, backing off by the entity's
        own counts with its expiry aligned to 1 s windows."""
        return self.pod_group_placement_cycle

    @property
    def pop_from_backoff_q(self) -> bool:
        """SchedulerPopFromBackoffQ (beta and on from 1.33; still beta in 1.37): backoff expiries aligned to 1 s
        windows, the backoff queue flushed at whole seconds, and Pop taking the backoff queue's head when the active
        queue is empty (backend/queue.py)."""
        return self.feature("SchedulerPopFromBackoffQ")

    @property
    def opportunistic_batching(self) -> bool:
        """1.35+ with OpportunisticBatching (beta, on by default): a profile whose PreFilter, Filter, PreScore and
        Score plugins all sign pods reuses the previous cycle's sorted scores for the next pod with the same
        signature (framework/batch.py)."""
        return self.minor >= 35 and self.feature("OpportunisticBatching")

    @property
    def batch_rescores_last_node(self) -> bool:
        """1.37+: when the node the previous pod of a batch took still fits the next pod, it is filtered, scored
        again and put back among the cached nodes (re-normalized with them); 1.35-1.36 drop the batch then."""
        return self.minor >= 37

    @property
    def modelled(self) -> bool:
        """False for 1.16-1.24: only RequestedToCapacityRatio follows that release, the rest follows 1.25."""
        return self.minor >= OLDEST_MODELLED

    # -- RequestedToCapacityRatio (legacy Policy files, kubernetes#96258 / #101541) -------------------------

    @property
    def rtcr_semantics(self) -> str:
        """v1.16: the 0..10 shape unscaled; v1.17-v1.21: shape x10, utilisation rounded up, nothing skipped;
        v1.22+: today's arithmetic."""
        if self.minor <= 16:
            return SEMANTICS_V1_16
        if self.minor <= 21:
            return SEMANTICS_V1_17
        return SEMANTICS_CURRENT

    # -- NodeResourcesBalancedAllocation ----------------------------------------------------------------------

    @property
    def balanced_allocation_skips_zero_request_pods(self) -> bool:
        """v1.33+ (kubernetes#130260, fixing #129138): PreScore returns Skip for a pod that requests none of
        the plugin's resources, so the plugin gives no score at all; before, such a pod was scored from the
        node's existing requests alone."""
        return self.minor >= 33

    @property
    def balanced_allocation_scores_change(self) -> bool:
        """v1.36+ (kubernetes#135573): the score is the change in the node's balance that the pod brings,
        ``50 + (50 + with - without) / 2`` (integer division), where ``with`` and ``without`` are the old score
        (1 - std of the capped fractions) * 100 of the node with and without the pod: 75 when the pod leaves
        the balance as it was, towards 100 when it improves it, towards 50 when it worsens it. Before, the
        score was ``with`` alone."""
        return self.minor >= 36

    # -- restartable init containers (KEP-753 sidecars) ----------------------------------------------------

    @property
    def sidecar_containers(self) -> bool:
        """v1.29+ (SidecarContainers beta, on by default; alpha and off in 1.28, absent before): an init
        container with ``restartPolicy: Always`` runs beside the app containers. Before, the API server drops
        the field (1.28) or does not know it (1.25-1.27), so the container is a plain init container."""
        return self.minor >= 29

    @property
    def sidecars_in_non_zero_sum(self) -> bool:
        """v1.32+ (kubernetes#127878, fixing #127868): the scoring requests (100m / 200Mi per container without
        one) add sidecars to the app containers as the real requests do. In 1.29-1.31 the scoring requests
        still took max(sum of app containers, largest single init container), sidecars counted as plain init
        containers."""
        return self.minor >= 32

    # -- NodeResourcesFit, DefaultPreemption -----------------------------------------------------------------

    @property
    def fit_unresolvable_when_node_too_small(self) -> bool:
        """v1.34+ (kubernetes#131345, fixing #131310): a node whose allocatable is below the pod's request even
        when empty is UnschedulableAndUnresolvable, so preemption skips it ("Preemption is not helpful for
        scheduling"); before, it was Unschedulable and the dry run tried it ("No preemption victims found for
        incoming pod", or the filter's own reason when victims did not free enough)."""
        return self.minor >= 34

    @property
    def preemption_success_message(self) -> bool:
        """v1.37+ (kubernetes#140180): when preemption finds a node, its status says so and the pod's message
        ends with ``preemption: found a potential placement for pod on node <node>, preempting <n> victims``;
        before, the message stopped after the filters' reasons."""
        return self.minor >= 37

    # -- InterPodAffinity ------------------------------------------------------------------------------------------

    @property
    def pod_affinity_namespace_selector_quirk(self) -> bool:
        """1.35-1.36: the incoming pod's own (anti-)affinity terms, required and preferred, select pods of every
        namespace when their ``namespaceSelector`` is satisfied by an empty label set (only ``NotIn`` /
        ``DoesNotExist`` requirements): the plugin merged the selector into the namespace list on a copy of the
        term, so the selector stayed and was tested against no labels. kubernetes#138198 (1.37) passes the term
        by reference again. 1.25-1.33 passed it by reference; 1.34 is taken to be correct (not checked)."""
        return 35 <= self.minor <= 36

    # -- ImageLocality ---------------------------------------------------------------------------------------------

    @property
    def image_locality_scores_image_volumes(self) -> bool:
        """v1.36+ (image_locality.go sumImageScores): the images of the pod's image volumes (``volumes[].image``,
        ImageVolume on by default from 1.35) that a node holds add to its sum like container images; before,
        only containers' images counted."""
        return self.minor >= 36

    @property
    def image_locality_threshold_counts_image_volumes(self) -> bool:
        """v1.37+: image volumes also raise the sum's upper bound (1000 MiB per image of the pod, containers and
        image volumes); in 1.36 the bound still counts containers alone."""
        return self.minor >= 37

    # -- TaintToleration ----------------------------------------------------------------------------------------

    @property
    def taint_message_names_taint(self) -> bool:
        """Before v1.34 the filter named the first untolerated taint: ``node(s) had untolerated taint {key:
        value}``; from kubernetes#134740 (1.35, cherry-picked to 1.34 as #135023) it says ``node(s) had
        untolerated taint(s)``. packsched takes 1.34 to be its newest patch release."""
        return self.minor < 34

    # -- VolumeBinding -------------------------------------------------------------------------------------------

    @property
    def storage_capacity_scoring(self) -> bool:
        """v1.37+ (StorageCapacityScoring beta, on by default; alpha and off in 1.33-1.36, and its predecessor
        VolumeCapacityPriority alpha and off before): VolumeBinding scores every node (0 for a pod without
        volumes to bind there) by the utilisation of the static volumes it would bind, through
        ``VolumeBindingArgs.shape`` (default 10 at 0 %, 0 at 100 %). Before, its PreScore skips and a given
        shape is an error."""
        return self.minor >= 37

    @property
    def volume_node_conflict_names_pv(self) -> bool:
        """VolumeBinding's reason for a node outside a volume's node affinity: ``node(s) didn't match
        PersistentVolume's node affinity`` from v1.33 (kubernetes#129887), ``node(s) had volume node affinity
        conflict`` before."""
        return self.minor >= 33

    @property
    def storage_capacity_scoring_gate(self) -> str:
        """The feature gate behind VolumeBinding's score, as validation names it: StorageCapacityScoring from
        v1.33 (KEP-4049), VolumeCapacityPriority before."""
        return "StorageCapacityScoring" if self.minor >= 33 else "VolumeCapacityPriority"

    # -- VolumeRestrictions --------------------------------------------------------------------------------------

    @property
    def rwop_conflict_says_in_use(self) -> bool:
        """VolumeRestrictions' reason for a ReadWriteOncePod claim another pod uses: ``node(s) unavailable due to
        PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod`` from v1.27 (the
        preemption support of kubernetes#114051), ``node has pod using PersistentVolumeClaim with the same name and
        ReadWriteOncePod access mode`` before."""
        return self.minor >= 27

    # -- the default profile -------------------------------------------------------------------------------------

    @property
    def scheduling_gates(self) -> bool:
        """v1.27+ (PodSchedulingReadiness beta, on by default): ``spec.schedulingGates`` holds pods back and
        SchedulingGates is a default plugin. In 1.25-1.26 the API server drops the field (alpha and off in
        1.26), so gated pods are scheduled at once."""
        return self.minor >= 27

    @property
    def in_tree_volume_limit_plugins(self) -> bool:
        """Before v1.31 (kubernetes#124500) the default profile also lists EBSLimits, GCEPDLimits and
        AzureDiskLimits."""
        return self.minor < 31

    @property
    def dynamic_resources_default(self) -> bool:
        """v1.34+ (DynamicResourceAllocation GA, on by default; locked on from 1.35): DynamicResources is a default
        plugin. ``DynamicResourceAllocation=false`` takes it out in 1.34."""
        return self.minor >= 34 and self.feature("DynamicResourceAllocation")

    @property
    def dynamic_resources_scores(self) -> bool:
        """v1.35+: DynamicResources has a Score extension (0 for a pod without claims to allocate; the
        ``firstAvailable`` subrequest taken, from 1.35's prioritized-list scoring). 1.34's plugin has none: it is
        no score plugin and its multiPoint weight means nothing (recorded at 1.34.4, tests/data/conformance/1.34)."""
        return self.minor >= 35

    @property
    def dra_post_filter_message(self) -> bool:
        """1.34-1.36: DynamicResources' PostFilter answers "no new claims to deallocate" for a pod without claims
        and "still not schedulable" when it deallocated nothing, and the pod's condition carries it before
        DefaultPreemption's part ("... no new claims to deallocate, preemption: ..."; recorded from kube-scheduler
        1.35.4 and 1.36.3, tests/data/conformance/1.35 and 1.36). kube-scheduler 1.37.2 returns Unschedulable
        without a word in both cases (tests/data/conformance/1.37)."""
        return 34 <= self.minor <= 36

    # -- DynamicResources: DRA feature gates (pkg/features/kube_features.go), overridable from 1.34 --------------

    @property
    def dra_cel_error_names_device(self) -> bool:
        """1.37+: the allocator's CEL runtime error names the device ("selector #0 on device driver/pool/name:
        CEL runtime error: ...") and adds a hint to "no such key" (dynamic-resource-allocation v0.37.2;
        v0.35.4 and v0.36.3 say "selector #0: CEL runtime error: ..."; recorded at 1.35.4 and 1.37.2, the
        generator no longer makes such selectors)."""
        return self.minor >= 37

    @property
    def dra_filter_timeout(self) -> bool:
        """DRASchedulerFilterTimeout on (beta and on from 1.34): DynamicResourcesArgs' filterTimeout is defaulted
        (10 s) and may be given."""
        return self.minor >= 34 and self.feature("DRASchedulerFilterTimeout")

    @property
    def dra_device_binding(self) -> bool:
        """DRADeviceBindingConditions and DRAResourceClaimDeviceStatus both on (v1.36+ by default; the first is
        alpha and off in 1.34-1.35, the second beta and on from 1.33, GA and locked on in 1.37): ResourceSlices keep
        devices' ``bindingConditions``, ``bindingFailureConditions`` and ``bindsToNode`` (the allocator's
        DeviceBindingAndStatus feature). Off, the API server drops those fields from new slices, and the allocator
        never picks a device that still has them."""
        return (
            self.minor >= 34
            and self.feature("DRADeviceBindingConditions")
            and self.feature("DRAResourceClaimDeviceStatus")
        )

    @property
    def dra_counters_1_36(self) -> bool:
        """1.36+: the allocator gives back the shared counters (DRAPartitionableDevices) a device took when it is
        refused afterwards (an untolerated taint, a constraint, its capacity) or when the search backtracks over a
        share of a device that allows multiple allocations; a refused share also gives back its constraints and
        its device; and a device with shares allocated uses its counters. 1.34-1.35 keep all of these taken for
        the rest of the node's search and count only devices taken whole (dynamic-resource-allocation v0.36.3's
        rollbackDevice and IsDeviceAllocated, in each allocator variant; v0.35.4's allocateDevice)."""
        return self.minor >= 36

    @property
    def dra_counters_1_37(self) -> bool:
        """1.37+: the allocator keeps its shared counters per pool ID (driver and pool; before, per pool name, so
        two drivers' pools of one name shared their counters) and treats a device with an allocated share but no
        consumed capacity as already paying its counters (dynamic-resource-allocation v0.37.2)."""
        return self.minor >= 37

    @property
    def dra_prioritized_list(self) -> bool:
        """v1.34+ (DRAPrioritizedList beta, on by default; GA 1.36, locked 1.37): a request's ``firstAvailable``
        subrequests."""
        return self.minor >= 34 and self.feature("DRAPrioritizedList")

    @property
    def dra_admin_access(self) -> bool:
        """v1.34+ (DRAAdminAccess beta, on by default; GA and locked 1.36): ``adminAccess`` requests."""
        return self.minor >= 34 and self.feature("DRAAdminAccess")

    @property
    def dra_partitionable_devices(self) -> bool:
        """v1.36+ (DRAPartitionableDevices beta, on by default; alpha and off in 1.33-1.35, settable from 1.34):
        ResourceSlices' ``sharedCounters`` and devices' ``consumesCounters``; off, slices using them are left
        out."""
        return self.minor >= 34 and self.feature("DRAPartitionableDevices")

    @property
    def dra_consumable_capacity(self) -> bool:
        """v1.36+ (DRAConsumableCapacity beta, on by default; alpha and off in 1.34-1.35, settable from 1.34): a
        device with ``allowMultipleAllocations`` is shared by several claims, each share taking part of the
        device's capacity (``capacity.requests``, rounded to the capacity's ``requestPolicy``); off, the allocator
        takes every device whole and refuses requests with ``capacity``. Upstream's scheduler uses the
        "experimental" allocator for it in 1.35 and the "incubating" one from 1.36."""
        return self.minor >= 34 and self.feature("DRAConsumableCapacity")

    @property
    def dra_fractional_capacity_range(self) -> bool:
        """v1.37+ (DRAFractionalCapacityRange beta, on by default): a ``validRange`` with a fractional min, max or
        step rounds requests in milli units; before (or off), with whole numbers (``Quantity.Value()``, which
        rounds up)."""
        return self.minor >= 37 and self.feature("DRAFractionalCapacityRange")

    @property
    def dra_device_taints(self) -> bool:
        """v1.36+ (DRADeviceTaints beta, on by default; alpha and off in 1.33-1.35, settable from 1.34; GA 1.37): a
        device's NoSchedule or NoExecute taint keeps it from requests that do not tolerate it; off, taints are
        ignored."""
        return self.minor >= 34 and self.feature("DRADeviceTaints")

    @property
    def dra_extended_resource(self) -> bool:
        """v1.36+ (DRAExtendedResource beta, on by default; alpha and off in 1.34-1.35; GA in 1.37): an extended
        resource that no device plugin advertises on a node (allocatable absent or 0) but that a DeviceClass
        serves (``spec.extendedResourceName``, or ``deviceclass.resource.kubernetes.io/<class>``) is allocated
        there as devices of that class by DynamicResources; NodeResourcesFit's filter leaves it to DRA, and its
        scoring (and BalancedAllocation's, when configured with the resource) counts the class's devices on the
        node as allocatable and those allocated as requested (kubernetes#134058, in 1.35 behind the same gate).
        Before, such a request is "Insufficient <resource>" on every node without it. Settable in 1.36 (the
        gate is locked on in 1.37; packsched does not model 1.34-1.35's alpha)."""
        return self.minor >= 36 and self.feature("DRAExtendedResource")

    # -- pods waiting at Permit ------------------------------------------------------------------------------

    @property
    def waiting_pod_preempted_as_error(self) -> bool:
        """v1.36+: preemption ends a victim's wait at Permit with ``waitingPod.Preempt`` (an error: the pod goes
        back to backoff, "waiting on permit for pod: preempted"); before, with ``Reject`` (Unschedulable,
        "preempted"). Read in kube-scheduler 1.35.4, 1.36.3 and 1.37.2 (framework/preemption)."""
        return self.minor >= 36

    # -- pods: features the API server keeps or drops --------------------------------------------------------

    @property
    def match_label_keys_in_pod_affinity(self) -> bool:
        """v1.31+ (MatchLabelKeysInPodAffinity beta, on by default; alpha and off in 1.29-1.30): the API
        server merges ``matchLabelKeys`` / ``mismatchLabelKeys`` of pod (anti-)affinity terms into their
        labelSelector on creation. To be honoured by InterPodAffinity / the manifest reader."""
        return self.minor >= 31

    @property
    def match_label_keys_in_topology_spread(self) -> bool:
        """v1.27+ (MatchLabelKeysInPodTopologySpread beta, on by default; alpha and off in 1.25-1.26): a
        topology spread constraint's ``matchLabelKeys`` narrows its selector. To be honoured by
        PodTopologySpread."""
        return self.minor >= 27

    @property
    def node_inclusion_policy_in_topology_spread(self) -> bool:
        """v1.26+ (NodeInclusionPolicyInPodTopologySpread beta, on by default; alpha and off in 1.25):
        ``nodeAffinityPolicy`` / ``nodeTaintsPolicy`` are honoured; before, the fields are dropped and nodes
        are counted as under the defaults (affinity Honor, taints Ignore). To be honoured by
        PodTopologySpread."""
        return self.minor >= 26

    @property
    def min_domains_in_topology_spread(self) -> bool:
        """v1.27+ (MinDomainsInPodTopologySpread beta and on by default from 1.27; GA 1.30; beta but off in
        1.25-1.26): ``minDomains`` counts. To be honoured by PodTopologySpread."""
        return self.minor >= 27


def format_gates(gates: Mapping[str, bool]) -> str:
    """``A=true,B=false`` (sorted by name), as ``--feature-gates`` takes them."""
    return ",".join(f"{k}={'true' if v else 'false'}" for k, v in sorted(gates.items()))


DEFAULT: Final = KubeVersion(NEWEST)
RTCR_ALIASES: Final = {SEMANTICS_V1_16: "1.16", SEMANTICS_V1_17: "1.17"}


def parse_kube_version(text: str) -> KubeVersion:
    """``1.31``, ``v1.31`` or ``1.31.4`` -> KubeVersion(31). Raises ValueError with a message that lists the
    accepted range."""
    m = _PATTERN.match(text.strip())
    minor = int(m.group(1)) if m else -1
    if not OLDEST_ACCEPTED <= minor <= NEWEST:
        raise ValueError(
            f"unknown kube-scheduler version {text!r}: expected 1.{OLDEST_ACCEPTED} to 1.{NEWEST} (e.g. 1.{NEWEST}; "
            f"1.{OLDEST_MODELLED} and later are modelled in full)"
        )
    return KubeVersion(minor)


def from_rtcr_semantics(semantics: str) -> KubeVersion | None:
    """The version the ``--rtcr-semantics`` alias stands for; None for ``current`` (nothing to change)."""
    alias = RTCR_ALIASES.get(semantics)
    return None if alias is None else parse_kube_version(alias)
