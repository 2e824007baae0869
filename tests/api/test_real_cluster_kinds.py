"""Whatever a real cluster holds (issue 24): objects as the API server writes them, DaemonSets, CronJobs,
LimitRanges, ResourceQuotas, restartPolicy's values, and the cron schedule parser."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from packsched.api.cron import ScheduleError, next_fire, parse_schedule
from packsched.api.errors import InputError
from packsched.api.manifests import Cluster, load_manifests
from packsched.api.objects import NodeAffinity, NodeSelectorTerm, Requirement, Toleration


def load(tmp_path: Path, text: str, name: str = "m.yaml", strict: bool = False) -> Cluster:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return load_manifests([str(path)], strict)


def errors(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(InputError) as info:
        load(tmp_path, text)
    return [f"{e.path}: {e.message}" for e in info.value.errors]


# -- finding 8: a StatefulSet as `kubectl get -o yaml` writes it ---------------------------------------------------

STATEFULSET_FROM_THE_API_SERVER = """
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: data
  uid: 4b1f0c6e-6a55-4c8e-9a8e-1d2c3b4a5f60
  resourceVersion: "81234"
  generation: 3
  creationTimestamp: "2024-05-01T10:00:00Z"
  managedFields:
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: apps/v1
    time: "2024-05-01T10:00:00Z"
    fieldsType: FieldsV1
    fieldsV1: {f:spec: {}}
spec:
  replicas: 2
  serviceName: db
  podManagementPolicy: OrderedReady
  revisionHistoryLimit: 10
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Retain}
  selector: {matchLabels: {app: db}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}
  template:
    metadata:
      creationTimestamp: null
      labels: {app: db}
    spec:
      restartPolicy: Always
      dnsPolicy: ClusterFirst
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
      containers:
      - name: db
        image: postgres:16
        imagePullPolicy: IfNotPresent
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
        resources: {requests: {cpu: 500m, memory: 1Gi}}
        volumeMounts: [{name: data, mountPath: /var/lib/postgresql}]
  volumeClaimTemplates:
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata:
      creationTimestamp: null
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 10Gi}}
      volumeMode: Filesystem
    status:
      phase: Pending
status:
  availableReplicas: 2
  collisionCount: 0
  currentReplicas: 2
  currentRevision: db-6d4f8b7c9
  observedGeneration: 3
  readyReplicas: 2
  replicas: 2
  updateRevision: db-6d4f8b7c9
  updatedReplicas: 2
"""


def test_a_statefulset_as_the_api_server_writes_it_reads(tmp_path: Path) -> None:
    cluster = load(tmp_path, STATEFULSET_FROM_THE_API_SERVER)
    (w,) = cluster.workloads
    assert (w.kind, w.name, [c.name for c in w.claim_templates]) == ("StatefulSet", "db", ["data"])
    assert cluster.pods == []  # read back: its pods, if any, are in the input


def test_a_typo_inside_a_claim_template_is_still_an_error(tmp_path: Path) -> None:
    text = STATEFULSET_FROM_THE_API_SERVER.replace("    status:\n      phase: Pending\n", "    stauts: {}\n")
    assert errors(tmp_path, text) == ["spec.volumeClaimTemplates[0].stauts: unknown field"]


# -- finding 5: restartPolicy ----------------------------------------------------------------------------------------

POD = """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: {policy}
  containers: [{name: c, image: x}]
"""


def test_restart_policy_takes_only_the_values_the_api_server_takes(tmp_path: Path) -> None:
    for policy in ("Always", "OnFailure", "Never"):
        assert [p.name for p in load(tmp_path, POD.replace("{policy}", policy)).pods] == ["p"]
    assert errors(tmp_path, POD.replace("{policy}", "Sometimes")) == [
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'
    ]
    sidecar = POD.replace("{policy}", "Never").replace(
        "containers:", "initContainers: [{name: i, image: x, restartPolicy: Sometimes}]\n  containers:"
    )
    assert errors(tmp_path, sidecar) == [
        'spec.initContainers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always"'
    ]


# -- DaemonSet ------------------------------------------------------------------------------------------------------

NODES = """
apiVersion: v1
kind: NodeList
items:
- metadata: {name: a1, labels: {pool: a}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- metadata: {name: a2, labels: {pool: a}}
  spec: {unschedulable: true, taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- metadata: {name: b1, labels: {pool: b}}
  spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- metadata: {name: b2, labels: {pool: b}}
  spec: {taints: [{key: dedicated, value: gpu, effect: PreferNoSchedule}]}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
"""

DAEMONSET = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      hostNetwork: true
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: Exists}]}]
          preferredDuringSchedulingIgnoredDuringExecution:
          - {weight: 1, preference: {matchExpressions: [{key: pool, operator: In, values: [a]}]}}
      containers: [{name: a, image: agent:1, resources: {requests: {cpu: 100m}}}]
"""


def test_a_daemonset_runs_one_pod_on_each_node_it_fits(tmp_path: Path) -> None:
    cluster = load(tmp_path, NODES + DAEMONSET)
    # b1's NoSchedule taint is not tolerated; a2's cordon is (the controller's toleration); PreferNoSchedule counts
    # for nothing
    assert [p.key for p in cluster.pods] == ["kube-system/agent-a1", "kube-system/agent-a2", "kube-system/agent-b2"]
    pod = cluster.pods[0]
    assert pod.node_name == ""  # placed by the scheduler
    assert pod.node_affinity == NodeAffinity(
        (NodeSelectorTerm(match_fields=(Requirement("metadata.name", "In", ("a1",)),)),),
        cluster.workloads[0].template.node_affinity.preferred,  # type: ignore[union-attr]
    )
    assert pod.owner is not None and (pod.owner.kind, pod.owner.name) == ("DaemonSet", "agent")
    keys = [t.key for t in pod.tolerations if t.operator == "Exists"]
    assert keys == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/network-unavailable",  # hostNetwork
    ]


def test_a_daemonset_tolerating_a_taint_runs_there_and_a_node_selector_narrows_it(tmp_path: Path) -> None:
    tolerating = DAEMONSET.replace(
        "      hostNetwork: true\n",
        "      tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]\n",
    )
    cluster = load(tmp_path, NODES + tolerating)
    assert [p.name for p in cluster.pods] == ["agent-a1", "agent-a2", "agent-b1", "agent-b2"]
    assert (
        Toleration("node.kubernetes.io/network-unavailable", "Exists", "", "NoSchedule")
        not in cluster.pods[0].tolerations
    )
    only_b = tolerating.replace("      affinity:", "      nodeSelector: {pool: b}\n      affinity:")
    assert [p.name for p in load(tmp_path, NODES + only_b).pods] == ["agent-b1", "agent-b2"]


def test_a_daemonset_read_back_makes_pods_only_for_nodes_without_one(tmp_path: Path) -> None:
    read_back = DAEMONSET.replace(
        "namespace: kube-system}", "namespace: kube-system, creationTimestamp: '2024-05-01T10:00:00Z'}"
    )
    existing = """
---
apiVersion: v1
kind: Pod
metadata:
  name: agent-x7k2p
  namespace: kube-system
  creationTimestamp: "2024-05-01T10:00:05Z"
  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u1, controller: true}]
spec:
  nodeName: a1
  containers: [{name: a, image: agent:1, resources: {requests: {cpu: 100m}}}]
"""
    cluster = load(tmp_path, NODES + read_back + existing)
    assert [p.name for p in cluster.pods] == ["agent-a2", "agent-b2", "agent-x7k2p"]


# -- CronJob --------------------------------------------------------------------------------------------------------


def _next(schedule: str, after: datetime) -> datetime:
    found = parse_schedule(schedule).next_after(after)
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("schedule", "after", "expected"),
    [
        ("*/15 * * * *", "2024-05-01T10:07:30", "2024-05-01T10:15:00"),
        ("0 2 * * *", "2024-05-01T02:00:00", "2024-05-02T02:00:00"),  # strictly after
        ("30 8 * * mon-fri", "2024-05-03T09:00:00", "2024-05-06T08:30:00"),  # Friday after 08:30: Monday
        ("0 0 1,15 * sun", "2024-05-02T00:00:00", "2024-05-05T00:00:00"),  # dom and dow both set: either
        ("0 0 */10 * *", "2024-05-02T00:00:00", "2024-05-11T00:00:00"),  # a step: not a star
        ("0 12 * jan,jul *", "2024-05-02T00:00:00", "2024-07-01T12:00:00"),
        ("5/20 3 * * *", "2024-05-02T03:06:00", "2024-05-02T03:25:00"),  # N/step: N-max/step
        ("@weekly", "2024-05-01T00:00:00", "2024-05-05T00:00:00"),
        ("@hourly", "2024-05-01T00:00:00", "2024-05-01T01:00:00"),
        ("0 0 29 2 *", "2024-03-01T00:00:00", "2028-02-29T00:00:00"),
    ],
)
def test_cron_schedules_fire_as_the_cronjob_controller_reads_them(schedule: str, after: str, expected: str) -> None:
    at = datetime.fromisoformat(after).replace(tzinfo=UTC)
    assert _next(schedule, at) == datetime.fromisoformat(expected).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    "schedule", ["* * * *", "61 * * * *", "* * * * 7", "0 0 * foo *", "5-1 * * * *", "@often", "TZ=UTC 0 * * * *"]
)
def test_bad_cron_schedules_are_refused(schedule: str) -> None:
    with pytest.raises(ScheduleError):
        parse_schedule(schedule)


def test_simulated_time_starts_at_the_epoch() -> None:
    assert next_fire(parse_schedule("0 2 * * *"), UTC, 0.0) == 7200.0
    assert parse_schedule("0 0 30 2 *").next_after(datetime(2024, 3, 1, tzinfo=UTC)) is None  # Feb 30


def test_a_cronjob_with_a_bad_schedule_or_zone_names_the_field(tmp_path: Path) -> None:
    text = """
    apiVersion: batch/v1
    kind: CronJob
    metadata: {name: c}
    spec:
      schedule: "61 * * * *"
      timeZone: Mars/Olympus
      concurrencyPolicy: Sometimes
      jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}}
    """
    assert errors(tmp_path, text) == [
        "spec.schedule: Invalid value: '61 * * * *': 61 is out of range (0-59)",
        "spec.timeZone: Invalid value: 'Mars/Olympus': unknown time zone Mars/Olympus",
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
    ]


# -- LimitRange and ResourceQuota are read ------------------------------------------------------------------------


def test_limit_range_defaults_as_the_api_server_sets_them(tmp_path: Path) -> None:
    """SetDefaults_LimitRangeItem: default from max, defaultRequest from default, then from min."""
    text = """
    apiVersion: v1
    kind: LimitRange
    metadata: {name: lr, namespace: team}
    spec:
      limits:
      - type: Container
        max: {cpu: "2", memory: 1Gi}
        min: {ephemeral-storage: 1Gi}
        default: {memory: 512Mi}
      - type: Pod
        max: {cpu: "4"}
    """
    (lr,) = load(tmp_path, text).limit_ranges
    container, pod = lr.limits
    assert container.default == {"cpu": 2000, "memory": 512 * 2**20}
    assert container.default_request == {"cpu": 2000, "memory": 512 * 2**20, "ephemeral-storage": 2**30}
    assert (pod.default, pod.default_request) == ({}, {})


def test_resource_quota_hard_amounts_are_in_the_resources_units(tmp_path: Path) -> None:
    text = """
    apiVersion: v1
    kind: ResourceQuota
    metadata: {name: q, namespace: team}
    spec:
      hard: {requests.cpu: 1500m, limits.memory: 2Gi, pods: "10", requests.nvidia.com/gpu: "4"}
      scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]}
    status: {hard: {pods: "10"}, used: {pods: "3"}}
    """
    (q,) = load(tmp_path, text).resource_quotas
    assert q.hard == {"requests.cpu": 1500, "limits.memory": 2 * 2**30, "pods": 10, "requests.nvidia.com/gpu": 4}
    assert [(s.scope, s.operator, s.values) for s in q.scopes] == [("PriorityClass", "In", ("high",))]
