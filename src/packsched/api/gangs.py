"""Gangs: the pods that must be scheduled together.

scheduler-plugins' Coscheduling names a pod's group with a label: ``scheduling.x-k8s.io/pod-group`` (and, in
releases before v0.22, ``pod-group.scheduling.sigs.k8s.io``), the name of a PodGroup in the pod's namespace.
"""

from __future__ import annotations

from packsched.api.objects import Pod

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
LEGACY_POD_GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io"


def pod_group_name(pod: Pod) -> str:
    """The name of the pod's group ("" when it has none): the current label, else the older one."""
    return pod.labels.get(POD_GROUP_LABEL) or pod.labels.get(LEGACY_POD_GROUP_LABEL, "")
