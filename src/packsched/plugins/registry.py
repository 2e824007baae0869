"""The plugins packsched implements, by the name a configuration uses."""

from __future__ import annotations

from packsched.framework.runtime import PluginFactory
from packsched.plugins.bestfit.best_fit import new_best_fit
from packsched.plugins.capacityscheduling.capacity_scheduling import new_capacity_scheduling
from packsched.plugins.coscheduling.coscheduling import new_coscheduling
from packsched.plugins.defaultbinder.default_binder import new_default_binder
from packsched.plugins.defaultpreemption.default_preemption import new_default_preemption
from packsched.plugins.devicepacking.device_packing import new_device_packing
from packsched.plugins.dotproduct.dot_product import new_dot_product
from packsched.plugins.dynamicresources.dynamic_resources import new_dynamic_resources
from packsched.plugins.fgd.fgd import new_fgd
from packsched.plugins.fgdpack.fgd_pack import new_fgd_pack
from packsched.plugins.gangscheduling.gang_scheduling import new_gang_scheduling
from packsched.plugins.gpuclustering.gpu_clustering import new_gpu_clustering
from packsched.plugins.gpupacking.gpu_packing import new_gpu_packing
from packsched.plugins.gpushare.gpu_share import new_gpu_share
from packsched.plugins.imagelocality.image_locality import new_image_locality
from packsched.plugins.interpodaffinity.inter_pod_affinity import new_inter_pod_affinity
from packsched.plugins.nodeaffinity.node_affinity import new_node_affinity
from packsched.plugins.nodename.node_name import new_node_name
from packsched.plugins.nodeports.node_ports import new_node_ports
from packsched.plugins.nodepreferavoidpods.node_prefer_avoid_pods import new_node_prefer_avoid_pods
from packsched.plugins.noderesources.balanced_allocation import new_balanced_allocation
from packsched.plugins.noderesources.fit import new_fit
from packsched.plugins.noderesources.legacy import (
    new_least_allocated,
    new_most_allocated,
    new_requested_to_capacity_ratio,
)
from packsched.plugins.nodeunschedulable.node_unschedulable import new_node_unschedulable
from packsched.plugins.nodevolumelimits.csi import new_csi_limits
from packsched.plugins.podtopologyspread.pod_topology_spread import new_pod_topology_spread
from packsched.plugins.queuesort.priority_sort import new_priority_sort
from packsched.plugins.randomscore.random_score import new_random_score
from packsched.plugins.schedulinggates.scheduling_gates import new_scheduling_gates
from packsched.plugins.tainttoleration.taint_toleration import new_taint_toleration
from packsched.plugins.volumebinding.volume_binding import new_volume_binding
from packsched.plugins.volumerestrictions.volume_restrictions import new_volume_restrictions
from packsched.plugins.volumezone.volume_zone import new_volume_zone


def in_tree_registry() -> dict[str, PluginFactory]:
    return {
        "PrioritySort": new_priority_sort,
        "SchedulingGates": new_scheduling_gates,
        "NodeUnschedulable": new_node_unschedulable,
        "NodeName": new_node_name,
        "NodePorts": new_node_ports,
        "TaintToleration": new_taint_toleration,
        "NodeAffinity": new_node_affinity,
        "NodeResourcesFit": new_fit,
        "NodeResourcesBalancedAllocation": new_balanced_allocation,
        "InterPodAffinity": new_inter_pod_affinity,
        "PodTopologySpread": new_pod_topology_spread,
        "DefaultPreemption": new_default_preemption,
        "DefaultBinder": new_default_binder,
        "NodeResourcesLeastAllocated": new_least_allocated,
        "NodeResourcesMostAllocated": new_most_allocated,
        "RequestedToCapacityRatio": new_requested_to_capacity_ratio,
        "NodePreferAvoidPods": new_node_prefer_avoid_pods,
        "ImageLocality": new_image_locality,
        "VolumeRestrictions": new_volume_restrictions,
        "VolumeZone": new_volume_zone,
        "VolumeBinding": new_volume_binding,
        "NodeVolumeLimits": new_csi_limits,
        "DynamicResources": new_dynamic_resources,
        "GangScheduling": new_gang_scheduling,
        # scheduler-plugins (out of tree upstream)
        "CapacityScheduling": new_capacity_scheduling,
        "Coscheduling": new_coscheduling,
        # shared GPUs and the GPU policies of Weng et al. (USENIX ATC '23); see docs/guides/gpu-trace-replay.md
        "GPUShare": new_gpu_share,
        "RandomScore": new_random_score,
        "DotProductScore": new_dot_product,
        "GpuClusteringScore": new_gpu_clustering,
        "GpuPackingScore": new_gpu_packing,
        "BestFitScore": new_best_fit,
        "FGDScore": new_fgd,
        "FGDPackScore": new_fgd_pack,  # ours, not the paper's (issue 14)
        # ours: DRA devices packed as RequestedToCapacityRatio packs resources (issue 19)
        "DevicePacking": new_device_packing,
    }
