"""Field names the Kubernetes schema defines for the objects packsched reads.

A manifest may carry any of these (most are irrelevant to scheduling and are ignored); a key that is not
listed is a typo or a field from another kind, and is reported as an unknown field, as
``kubectl --validate=strict`` does.
"""

from __future__ import annotations

TOP = ("apiVersion", "kind", "metadata", "spec", "status")

OBJECT_META = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
    "selfLink",
    "clusterName",
)

OWNER_REFERENCE = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")

POD_SPEC = (
    "volumes",
    "initContainers",
    "containers",
    "ephemeralContainers",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "nodeSelector",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "nodeName",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "affinity",
    "schedulerName",
    "tolerations",
    "hostAliases",
    "priorityClassName",
    "priority",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "enableServiceLinks",
    "preemptionPolicy",
    "overhead",
    "topologySpreadConstraints",
    "setHostnameAsFQDN",
    "os",
    "hostUsers",
    "schedulingGates",
    "resourceClaims",
    "resources",
    "hostnameOverride",
)

CONTAINER = (
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "envFrom",
    "env",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
)

RESOURCE_REQUIREMENTS = ("limits", "requests", "claims")

CONTAINER_PORT = ("name", "hostPort", "containerPort", "protocol", "hostIP")

TOLERATION = ("key", "operator", "value", "effect", "tolerationSeconds")

AFFINITY = ("nodeAffinity", "podAffinity", "podAntiAffinity")

NODE_AFFINITY = (
    "requiredDuringSchedulingIgnoredDuringExecution",
    "preferredDuringSchedulingIgnoredDuringExecution",
)

NODE_SELECTOR = ("nodeSelectorTerms",)

NODE_SELECTOR_TERM = ("matchExpressions", "matchFields")

REQUIREMENT = ("key", "operator", "values")

PREFERRED_TERM = ("weight", "preference")

LABEL_SELECTOR = ("matchLabels", "matchExpressions")

POD_AFFINITY = (
    "requiredDuringSchedulingIgnoredDuringExecution",
    "preferredDuringSchedulingIgnoredDuringExecution",
)

POD_AFFINITY_TERM = (
    "labelSelector",
    "namespaces",
    "topologyKey",
    "namespaceSelector",
    "matchLabelKeys",
    "mismatchLabelKeys",
)

WEIGHTED_POD_AFFINITY_TERM = ("weight", "podAffinityTerm")

NODE_SPEC = ("podCIDR", "podCIDRs", "providerID", "unschedulable", "taints", "configSource", "externalID")

NODE_STATUS = (
    "capacity",
    "allocatable",
    "phase",
    "conditions",
    "addresses",
    "daemonEndpoints",
    "nodeInfo",
    "images",
    "volumesInUse",
    "volumesAttached",
    "config",
    "runtimeHandlers",
    "features",
    "declaredFeatures",
)

TAINT = ("key", "value", "effect", "timeAdded")

PRIORITY_CLASS = (
    "apiVersion",
    "kind",
    "metadata",
    "value",
    "globalDefault",
    "description",
    "preemptionPolicy",
)

PDB_SPEC = ("minAvailable", "maxUnavailable", "selector", "unhealthyPodEvictionPolicy")

POD_TEMPLATE = ("metadata", "spec")

ELASTIC_QUOTA_SPEC = ("min", "max")

ELASTIC_QUOTA_STATUS = ("used",)

DEPLOYMENT_SPEC = (
    "replicas",
    "selector",
    "template",
    "strategy",
    "minReadySeconds",
    "revisionHistoryLimit",
    "paused",
    "progressDeadlineSeconds",
)

REPLICASET_SPEC = ("replicas", "selector", "template", "minReadySeconds")

STATEFULSET_SPEC = (
    "replicas",
    "selector",
    "template",
    "serviceName",
    "volumeClaimTemplates",
    "podManagementPolicy",
    "updateStrategy",
    "revisionHistoryLimit",
    "minReadySeconds",
    "persistentVolumeClaimRetentionPolicy",
    "ordinals",
)

JOB_SPEC = (
    "parallelism",
    "completions",
    "activeDeadlineSeconds",
    "podFailurePolicy",
    "successPolicy",
    "backoffLimit",
    "backoffLimitPerIndex",
    "maxFailedIndexes",
    "selector",
    "manualSelector",
    "template",
    "ttlSecondsAfterFinished",
    "completionMode",
    "suspend",
    "podReplacementPolicy",
    "managedBy",
)

# Kinds that exist in Kubernetes but play no part in scheduling as packsched simulates it: skipped with a
# note.
IGNORED_KINDS = frozenset(
    {
        "Service",
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "Ingress",
        "NetworkPolicy",
        "HorizontalPodAutoscaler",
        "LimitRange",
        "ResourceQuota",
        "Endpoints",
        "EndpointSlice",
        "CustomResourceDefinition",
        "StorageClass",
        "IngressClass",
        "Event",
        "Lease",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "APIService",
    }
)
