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
    "workloadRef",  # 1.35 (GenericWorkload)
    "schedulingGroup",  # 1.36+ (GenericWorkload)
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
TOPOLOGY_SPREAD_CONSTRAINT = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)

SERVICE_SPEC = (
    "selector",
    "ports",
    "type",
    "clusterIP",
    "clusterIPs",
    "externalIPs",
    "sessionAffinity",
    "sessionAffinityConfig",
    "loadBalancerIP",
    "loadBalancerSourceRanges",
    "loadBalancerClass",
    "externalName",
    "externalTrafficPolicy",
    "internalTrafficPolicy",
    "healthCheckNodePort",
    "publishNotReadyAddresses",
    "ipFamilies",
    "ipFamilyPolicy",
    "allocateLoadBalancerNodePorts",
    "trafficDistribution",
)

REPLICATION_CONTROLLER_SPEC = ("replicas", "selector", "template", "minReadySeconds")

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

DAEMONSET_SPEC = ("selector", "template", "updateStrategy", "minReadySeconds", "revisionHistoryLimit")

CRONJOB_SPEC = (
    "schedule",
    "timeZone",
    "startingDeadlineSeconds",
    "concurrencyPolicy",
    "suspend",
    "jobTemplate",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
)

JOB_TEMPLATE = ("metadata", "spec")

LIMIT_RANGE_SPEC = ("limits",)

LIMIT_RANGE_ITEM = ("type", "max", "min", "default", "defaultRequest", "maxLimitRequestRatio")

RESOURCE_QUOTA_SPEC = ("hard", "scopes", "scopeSelector")

RESOURCE_QUOTA_STATUS = ("hard", "used")

SCOPE_SELECTOR = ("matchExpressions",)

SCOPED_REQUIREMENT = ("scopeName", "operator", "values")

# Kinds that exist in Kubernetes but play no part in scheduling as packsched simulates it: skipped with a
# note.
IGNORED_KINDS = frozenset(
    {
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
        "Endpoints",
        "EndpointSlice",
        "CustomResourceDefinition",
        "IngressClass",
        "Event",
        "Lease",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "APIService",
    }
)

# -- volumes and storage (PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode, pod volumes) ----------

VOLUME_SOURCES = (
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)

VOLUME = ("name", *VOLUME_SOURCES)

PVC_VOLUME_SOURCE = ("claimName", "readOnly")

GCE_PD_SOURCE = ("pdName", "fsType", "partition", "readOnly")

AWS_EBS_SOURCE = ("volumeID", "fsType", "partition", "readOnly")

RBD_SOURCE = ("monitors", "image", "fsType", "pool", "user", "keyring", "secretRef", "readOnly")

ISCSI_SOURCE = (
    "targetPortal",
    "iqn",
    "lun",
    "iscsiInterface",
    "fsType",
    "readOnly",
    "portals",
    "chapAuthDiscovery",
    "chapAuthSession",
    "secretRef",
    "initiatorName",
)

EPHEMERAL_SOURCE = ("volumeClaimTemplate",)

PVC_TEMPLATE = ("metadata", "spec")

# A StatefulSet's volumeClaimTemplates entry is a whole PersistentVolumeClaim: the API server (and
# ``kubectl get -o yaml``) writes its kind, apiVersion and status too.
STATEFULSET_CLAIM_TEMPLATE = ("apiVersion", "kind", "metadata", "spec", "status")

PVC_SPEC = (
    "accessModes",
    "selector",
    "resources",
    "volumeName",
    "storageClassName",
    "volumeMode",
    "dataSource",
    "dataSourceRef",
    "volumeAttributesClassName",
)

PVC_STATUS = (
    "phase",
    "accessModes",
    "capacity",
    "conditions",
    "allocatedResources",
    "resizeStatus",
    "allocatedResourceStatuses",
    "currentVolumeAttributesClassName",
    "modifyVolumeStatus",
)

VOLUME_RESOURCES = ("limits", "requests")

# A PersistentVolume's spec fields other than its volume source.
PV_SPEC_NOT_SOURCE = (
    "capacity",
    "accessModes",
    "claimRef",
    "persistentVolumeReclaimPolicy",
    "storageClassName",
    "mountOptions",
    "volumeMode",
    "nodeAffinity",
    "volumeAttributesClassName",
)
PV_SPEC = (
    *PV_SPEC_NOT_SOURCE,
    *(v for v in VOLUME_SOURCES if v not in ("emptyDir", "gitRepo", "secret", "persistentVolumeClaim")),
    "local",
)

PV_STATUS = ("phase", "message", "reason", "lastPhaseTransitionTime")

VOLUME_NODE_AFFINITY = ("required",)

OBJECT_REFERENCE = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")

CSI_PV_SOURCE = (
    "driver",
    "volumeHandle",
    "readOnly",
    "fsType",
    "volumeAttributes",
    "controllerPublishSecretRef",
    "nodeStageSecretRef",
    "nodePublishSecretRef",
    "controllerExpandSecretRef",
    "nodeExpandSecretRef",
)

STORAGE_CLASS = (
    "apiVersion",
    "kind",
    "metadata",
    "provisioner",
    "parameters",
    "reclaimPolicy",
    "mountOptions",
    "allowVolumeExpansion",
    "volumeBindingMode",
    "allowedTopologies",
)

TOPOLOGY_SELECTOR_TERM = ("matchLabelExpressions",)

TOPOLOGY_REQUIREMENT = ("key", "values")

CSI_NODE_SPEC = ("drivers",)

CSI_NODE_DRIVER = ("name", "nodeID", "topologyKeys", "allocatable")

VOLUME_NODE_RESOURCES = ("count",)

NODE_IMAGE = ("names", "sizeBytes")
