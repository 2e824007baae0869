"""Loading manifests (packsched.api.manifests.load_manifests) from YAML and JSON files in tmp_path."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from packsched.api.errors import FieldError, InputError
from packsched.api.manifests import Cluster, load_manifests
from packsched.api.objects import (
    PREEMPT_LOWER_PRIORITY,
    PREEMPT_NEVER,
    LabelSelector,
    OwnerRef,
    Requirement,
    Taint,
)
from packsched.api.pods import pod_requests
from packsched.cli.main import app

Mi = 2**20
Gi = 2**30


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load(*paths: Path) -> Cluster:
    return load_manifests([str(p) for p in paths])


def errors_of(*paths: Path) -> list[FieldError]:
    with pytest.raises(InputError) as info:
        load(*paths)
    errors = info.value.errors
    for e in errors:  # every problem says where it is
        assert e.file, e
        assert e.path, e
    return errors


def where(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(Path(e.file).name, e.path) for e in errors]


NODE = """
apiVersion: v1
kind: Node
metadata:
  name: {name}
status:
  capacity: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""


def pod_doc(name: str, spec: str = "", namespace: str = "", container: str = "") -> str:
    """A Pod; ``spec`` lines go into its spec, ``container`` lines into its one container."""
    ns = f"\n  namespace: {namespace}" if namespace else ""
    text = f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}{ns}\nspec:\n"
    if spec:
        text += textwrap.indent(spec.strip(), "  ") + "\n"
    text += "  containers:\n  - name: c\n"
    if container:
        text += textwrap.indent(container.strip(), "    ") + "\n"
    return text


def deployment(name: str, kind: str = "Deployment", api: str = "apps/v1", spec: str = "replicas: 3") -> str:
    head = f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: team\nspec:\n"
    body = textwrap.dedent(
        f"""
          selector:
            matchLabels: {{app: {name}}}
          template:
            metadata:
              labels: {{app: {name}, tier: web}}
            spec:
              containers:
              - name: c
                resources:
                  requests: {{cpu: 500m, memory: 1Gi}}
        """
    ).lstrip("\n")
    return head + textwrap.indent(spec.strip(), "  ") + "\n" + textwrap.indent(body, "  ")


# --- nodes ----------------------------------------------------------------------------------------


def test_node_allocatable_defaults_to_capacity(tmp_path: Path) -> None:
    c = load(write(tmp_path, "n.yaml", NODE.format(name="n1")))
    (node,) = c.nodes
    assert node.name == "n1"
    assert node.capacity == {"cpu": 4000, "memory": 8 * Gi, "pods": 110}
    assert node.allocatable == node.capacity
    assert node.allocatable is not node.capacity
    assert node.taints == [] and node.unschedulable is False
    assert node.labels == {"kubernetes.io/hostname": "n1"}
    assert c.notes == []


def test_node_with_everything(tmp_path: Path) -> None:
    c = load(
        write(
            tmp_path,
            "n.yaml",
            """
            apiVersion: v1
            kind: Node
            metadata:
              name: gpu-1
              labels: {zone: a, kubernetes.io/hostname: custom}
              annotations: {note: x}
            spec:
              unschedulable: true
              taints:
              - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
              - {key: dedicated, effect: NoExecute}
              - {key: soft, effect: PreferNoSchedule, timeAdded: "2024-01-01T00:00:00Z"}
              providerID: aws:///x
            status:
              capacity: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
              allocatable: {cpu: 63500m, memory: 500Gi, nvidia.com/gpu: 8, pods: 110}
              conditions: [{type: Ready, status: "True"}]
              nodeInfo: {kubeletVersion: v1.30.0}
            """,
        )
    )
    (node,) = c.nodes
    assert node.capacity == {"cpu": 64_000, "memory": 512 * Gi, "nvidia.com/gpu": 8, "pods": 110}
    assert node.allocatable == {"cpu": 63_500, "memory": 500 * Gi, "nvidia.com/gpu": 8, "pods": 110}
    assert node.unschedulable is True
    assert node.taints == [
        Taint("nvidia.com/gpu", "present", "NoSchedule"),
        Taint("dedicated", "", "NoExecute"),
        Taint("soft", "", "PreferNoSchedule"),
    ]
    # the hostname label is only added when absent
    assert node.labels == {"zone": "a", "kubernetes.io/hostname": "custom"}
    assert node.annotations == {"note": "x"}
    assert node.source == str(tmp_path / "n.yaml")


def test_node_without_pods_in_allocatable_gets_a_note(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "n.yaml",
        """
        apiVersion: v1
        kind: Node
        metadata: {name: n1}
        status:
          capacity: {cpu: "4", memory: 8Gi, pods: "110"}
          allocatable: {cpu: "4", memory: 8Gi}
        """,
    )
    c = load(path)
    assert c.nodes[0].allocatable == {"cpu": 4000, "memory": 8 * Gi}
    assert len(c.notes) == 1 and "n1" in c.notes[0] and "'pods'" in c.notes[0]


def test_node_taint_errors(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "n.yaml",
        """
        apiVersion: v1
        kind: Node
        metadata: {name: n1}
        spec:
          taints:
          - {key: a}
          - {key: b, effect: Sometimes}
          - {effect: NoSchedule}
          unschedulable: "yes"
        status:
          capacity: {cpu: "4", pods: "1"}
        """,
    )
    assert sorted(where(errors_of(path))) == [
        ("n.yaml", "spec.taints[0].effect"),
        ("n.yaml", "spec.taints[1].effect"),
        ("n.yaml", "spec.taints[2].key"),
        ("n.yaml", "spec.unschedulable"),
    ]


# --- pods -----------------------------------------------------------------------------------------


def test_a_pod(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.yaml",
        """
        apiVersion: v1
        kind: Pod
        metadata:
          name: web
          namespace: shop
          uid: 1234
          labels: {app: web}
          annotations: {a: b}
        spec:
          nodeSelector: {disk: ssd}
          tolerations:
          - {key: dedicated, operator: Exists, effect: NoSchedule}
          schedulerName: my-scheduler
          schedulingGates: [{name: wait}]
          containers:
          - name: c
            image: nginx
            ports: [{containerPort: 80, hostPort: 8080}]
            resources:
              requests: {cpu: 250m, memory: 64Mi}
              limits: {memory: 128Mi}
        status:
          phase: Pending
          nominatedNodeName: n9
        """.replace("uid: 1234", "uid: '1234'"),
    )
    c = load(path)
    (p,) = c.pods
    assert (p.name, p.namespace, p.key, p.uid) == ("web", "shop", "shop/web", "1234")
    assert p.labels == {"app": "web"} and p.annotations == {"a": "b"}
    assert p.node_selector == {"disk": "ssd"}
    assert p.tolerations[0].key == "dedicated" and p.tolerations[0].operator == "Exists"
    assert p.scheduler_name == "my-scheduler"
    assert p.scheduling_gates == ["wait"]
    assert p.nominated_node_name == "n9"
    assert [(hp.container_port, hp.host_port) for hp in p.host_ports()] == [(80, 8080)]
    assert pod_requests(p) == {"cpu": 250, "memory": 64 * Mi}
    assert p.priority == 0 and p.preemption_policy == PREEMPT_LOWER_PRIORITY
    assert p.owner is None
    assert c.pod("shop/web") is p and c.pod("default/web") is None


def test_pods_default_to_the_default_namespace(tmp_path: Path) -> None:
    c = load(write(tmp_path, "p.yaml", pod_doc("a")))
    assert c.pods[0].key == "default/a"


def test_a_pod_bound_to_a_known_node(tmp_path: Path) -> None:
    c = load(write(tmp_path, "p.yaml", NODE.format(name="n1") + "---\n" + pod_doc("a", "nodeName: n1")))
    assert c.pods[0].node_name == "n1"


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_finished_pods_are_skipped_with_a_note(tmp_path: Path, phase: str) -> None:
    text = pod_doc("done") + f"status:\n  phase: {phase}\n---\n" + pod_doc("live") + "status:\n  phase: Running\n"
    c = load(write(tmp_path, "p.yaml", text))
    assert [p.name for p in c.pods] == ["live"]
    assert len(c.notes) == 1
    assert "default/done" in c.notes[0] and phase in c.notes[0] and "p.yaml" in c.notes[0]


# --- files: several documents, List, JSON, directories --------------------------------------------


def test_multi_document_files_keep_their_order(tmp_path: Path) -> None:
    text = "---\n" + pod_doc("a") + "---\n---\n" + NODE.format(name="n1") + "---\n" + pod_doc("b") + "...\n"
    c = load(write(tmp_path, "all.yaml", text))
    assert [p.name for p in c.pods] == ["a", "b"]
    assert [n.name for n in c.nodes] == ["n1"]


def test_kind_list(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "list.yaml",
        """
        apiVersion: v1
        kind: List
        items:
        - apiVersion: v1
          kind: Node
          metadata: {name: n1}
          status: {capacity: {cpu: "1", pods: "10"}}
        - apiVersion: v1
          kind: Pod
          metadata: {name: a}
          spec: {containers: [{name: c}]}
        """,
    )
    c = load(path)
    assert [n.name for n in c.nodes] == ["n1"] and [p.name for p in c.pods] == ["a"]


def test_errors_inside_a_list_name_the_item(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "list.yaml",
        """
        apiVersion: v1
        kind: PodList
        items:
        - apiVersion: v1
          kind: Pod
          metadata: {name: a}
          spec: {containers: [{name: c}]}
        - apiVersion: v1
          kind: Pod
          metadata: {name: b}
          spec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}
        """,
    )
    # a typed list (what the API server returns) is read like the generic List
    assert where(errors_of(path)) == [("list.yaml", "items[1]: spec.containers[0].resources.requests.cpu")]
    path.write_text(path.read_text().replace("kind: PodList", "kind: List"))
    assert where(errors_of(path)) == [("list.yaml", "items[1]: spec.containers[0].resources.requests.cpu")]


def test_a_typed_list_as_the_api_server_returns_it(tmp_path: Path) -> None:
    """GET /api/v1/nodes answers a NodeList whose items carry no kind and no apiVersion (issue 24, finding 1)."""
    path = write(
        tmp_path,
        "nodes.json",
        """
        {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "4012"},
         "items": [
          {"metadata": {"name": "n1", "uid": "0d5c", "resourceVersion": "3998",
                        "creationTimestamp": "2024-05-01T10:00:00Z", "labels": {"kubernetes.io/os": "linux"}},
           "spec": {"podCIDR": "10.244.0.0/24", "providerID": "kind://docker/kind/n1"},
           "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                      "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                      "conditions": [{"type": "Ready", "status": "True"}],
                      "nodeInfo": {"kubeletVersion": "v1.30.0"}}}
         ]}
        """,
    )
    assert [n.name for n in load(path).nodes] == ["n1"]


def test_list_items_must_be_a_list(tmp_path: Path) -> None:
    path = write(tmp_path, "list.yaml", "apiVersion: v1\nkind: List\nitems: {a: 1}\n")
    assert where(errors_of(path)) == [("list.yaml", "items")]


def test_json_files(tmp_path: Path) -> None:
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": 110}},
    }
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 0.5, "memory": "1Gi"}}}]},
    }
    write(tmp_path, "node.json", json.dumps(node))
    write(tmp_path, "list.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod]}))
    c = load(tmp_path / "node.json", tmp_path / "list.json")
    assert c.nodes[0].capacity == {"cpu": 2000, "memory": 4 * Gi, "pods": 110}
    assert pod_requests(c.pods[0]) == {"cpu": 500, "memory": Gi}


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.json", '{\n  "kind": "Pod",\n  "metadata": {"name": "a",}\n}\n')
    (e,) = errors_of(path)
    assert e.file == str(path)
    assert e.path == "line 3 column 28"
    assert e.message.startswith("malformed JSON")


def test_directories_are_read_sorted_and_recursively(tmp_path: Path) -> None:
    write(tmp_path, "d/b.yaml", pod_doc("from-b"))
    write(tmp_path, "d/a.yml", pod_doc("from-a"))
    write(
        tmp_path,
        "d/sub/z/c.json",
        json.dumps(
            json.loads(
                json.dumps(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": "from-c"},
                        "spec": {"containers": [{"name": "c"}]},
                    }
                )
            )
        ),
    )
    write(tmp_path, "d/sub/a.yaml", pod_doc("from-sub-a"))
    write(tmp_path, "d/README.md", "# not a manifest: ignored\n")
    write(tmp_path, "d/notes.txt", "kind: Pod\n")
    c = load(tmp_path / "d")
    # files of a folder in name order, then its sub-folders in name order
    assert [p.name for p in c.pods] == ["from-a", "from-b", "from-sub-a", "from-c"]


def test_files_and_directories_mixed_in_the_order_given(tmp_path: Path) -> None:
    write(tmp_path, "d/x.yaml", pod_doc("in-dir"))
    single = write(tmp_path, "single.yaml", pod_doc("single"))
    c = load(single, tmp_path / "d")
    assert [p.name for p in c.pods] == ["single", "in-dir"]


def test_an_empty_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    write(tmp_path, "empty/readme.txt", "nothing here\n")
    with pytest.raises(InputError, match="no manifest files found"):
        load(tmp_path / "empty")


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    (e,) = errors_of_allowing_empty_path(tmp_path / "missing.yaml")
    assert e.file == str(tmp_path / "missing.yaml")
    assert "cannot read file" in e.message


def errors_of_allowing_empty_path(*paths: Path) -> list[FieldError]:
    with pytest.raises(InputError) as info:
        load(*paths)
    return info.value.errors


def test_empty_files_hold_nothing(tmp_path: Path) -> None:
    c = load(write(tmp_path, "empty.yaml", "# only a comment\n"), write(tmp_path, "p.yaml", pod_doc("a")))
    assert [p.name for p in c.pods] == ["a"]


# --- workloads ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet"])
def test_replicated_workloads_expand_into_named_pods(tmp_path: Path, kind: str) -> None:
    c = load(write(tmp_path, "w.yaml", deployment("web", kind=kind)))
    assert [p.name for p in c.pods] == ["web-0", "web-1", "web-2"]
    for p in c.pods:
        assert p.namespace == "team"
        assert p.owner == OwnerRef(kind, "web")
        assert p.labels["app"] == "web" and p.labels["tier"] == "web"
        assert pod_requests(p) == {"cpu": 500, "memory": Gi}
        assert p.source == str(tmp_path / "w.yaml")
    if kind == "StatefulSet":
        assert [p.labels["statefulset.kubernetes.io/pod-name"] for p in c.pods] == ["web-0", "web-1", "web-2"]
    else:
        assert all("statefulset.kubernetes.io/pod-name" not in p.labels for p in c.pods)
    (w,) = c.workloads
    assert (w.kind, w.name, w.namespace, w.replicas) == (kind, "web", "team", 3)
    assert w.template.labels == {"app": "web", "tier": "web"}


def test_replica_labels_are_independent(tmp_path: Path) -> None:
    c = load(write(tmp_path, "w.yaml", deployment("web")))
    c.pods[0].labels["x"] = "y"
    assert "x" not in c.pods[1].labels
    assert "x" not in c.workloads[0].template.labels


@pytest.mark.parametrize(("spec", "count"), [("replicas: 0", 0), ("replicas: 5", 5), ("minReadySeconds: 1", 1)])
def test_deployment_replicas_default_to_one(tmp_path: Path, spec: str, count: int) -> None:
    c = load(write(tmp_path, "w.yaml", deployment("web", spec=spec)))
    assert len(c.pods) == count
    assert c.workloads[0].replicas == count


@pytest.mark.parametrize(
    ("spec", "count"),
    [
        ("parallelism: 3\ncompletions: 2", 2),  # min(parallelism, completions)
        ("parallelism: 2\ncompletions: 10", 2),
        ("parallelism: 4", 4),  # parallelism alone
        ("completions: 5", 1),  # parallelism defaults to 1
        ("backoffLimit: 3", 1),  # neither
        ("parallelism: 0", 0),
        ("parallelism: 3\ncompletions: 3\nsuspend: true", 0),  # a suspended Job runs none
        ("parallelism: 3\nsuspend: false", 3),
    ],
)
def test_job_pod_count(tmp_path: Path, spec: str, count: int) -> None:
    c = load(write(tmp_path, "j.yaml", deployment("batch", kind="Job", api="batch/v1", spec=spec)))
    assert [p.name for p in c.pods] == [f"batch-{i}" for i in range(count)]
    assert all(p.owner == OwnerRef("Job", "batch") for p in c.pods)
    assert c.workloads[0].replicas == count


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ("parallelism: -1", "spec.parallelism"),
        ("completions: -2", "spec.completions"),
        ("suspend: 1", "spec.suspend"),
    ],
)
def test_job_count_errors(tmp_path: Path, spec: str, path: str) -> None:
    text = deployment("batch", kind="Job", api="batch/v1", spec=spec)
    assert where(errors_of(write(tmp_path, "j.yaml", text))) == [("j.yaml", path)]


def test_job_needs_no_selector(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "j.yaml",
        """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: once}
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{name: c}]
        """,
    )
    c = load(path)
    assert [p.name for p in c.pods] == ["once-0"]


def test_selector_not_matching_template_labels_is_an_error(tmp_path: Path) -> None:
    text = deployment("web").replace("matchLabels: {app: web}", "matchLabels: {app: api}")
    assert where(errors_of(write(tmp_path, "w.yaml", text))) == [("w.yaml", "spec.template.metadata.labels")]


def test_selector_expressions_are_checked_against_template_labels(tmp_path: Path) -> None:
    text = deployment("web").replace(
        "matchLabels: {app: web}", "matchExpressions: [{key: tier, operator: In, values: [web, api]}]"
    )
    assert len(load(write(tmp_path, "ok.yaml", text)).pods) == 3
    text = text.replace("operator: In", "operator: NotIn")
    assert where(errors_of(write(tmp_path, "bad.yaml", text))) == [("bad.yaml", "spec.template.metadata.labels")]


def test_deployment_selector_is_required_and_not_empty(tmp_path: Path) -> None:
    missing = deployment("web").replace("  selector:\n    matchLabels: {app: web}\n", "")
    assert where(errors_of(write(tmp_path, "a.yaml", missing))) == [("a.yaml", "spec.selector")]
    empty = deployment("web").replace("matchLabels: {app: web}", "matchLabels: {}")
    assert where(errors_of(write(tmp_path, "b.yaml", empty))) == [("b.yaml", "spec.selector")]


def test_workload_errors_use_template_paths(tmp_path: Path) -> None:
    text = deployment("web").replace("requests: {cpu: 500m, memory: 1Gi}", "requests: {cpu: 1.5.3Gi}")
    text = text.replace("replicas: 3", "replicas: -1")
    assert sorted(where(errors_of(write(tmp_path, "w.yaml", text)))) == [
        ("w.yaml", "spec.replicas"),
        ("w.yaml", "spec.template.spec.containers[0].resources.requests.cpu"),
    ]


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet"])
def test_workloads_need_apps_v1(tmp_path: Path, kind: str) -> None:
    text = deployment("web", kind=kind, api="extensions/v1beta1")
    (e,) = errors_of(write(tmp_path, "w.yaml", text))
    assert e.path == "apiVersion" and "apps/v1" in e.message and "extensions/v1beta1" in e.message


# --- priority classes -----------------------------------------------------------------------------


def pc(name: str, value: int, extra: str = "") -> str:
    head = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
    return f"{head}metadata:\n  name: {name}\nvalue: {value}\n{extra}"


def test_priority_class_name_resolves_to_its_value_and_policy(tmp_path: Path) -> None:
    text = "---\n".join(
        [
            pc("high", 1000, "preemptionPolicy: Never\ndescription: important\n"),
            pod_doc("a", "priorityClassName: high"),
            pod_doc("b"),
        ]
    )
    c = load(write(tmp_path, "x.yaml", text))
    a, b = c.pods
    assert (a.priority, a.preemption_policy, a.priority_class_name) == (1000, PREEMPT_NEVER, "high")
    assert (b.priority, b.preemption_policy) == (0, PREEMPT_LOWER_PRIORITY)
    assert c.priority_classes["high"].description == "important"


def test_a_class_from_a_later_file_still_resolves(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", pod_doc("a", "priorityClassName: late"))
    second = write(tmp_path, "b.yaml", pc("late", 7))
    assert load(first, second).pods[0].priority == 7


def test_the_pods_own_preemption_policy_is_kept(tmp_path: Path) -> None:
    text = pc("high", 10) + "---\n" + pod_doc("a", "priorityClassName: high\npreemptionPolicy: Never")
    p = load(write(tmp_path, "x.yaml", text)).pods[0]
    assert (p.priority, p.preemption_policy) == (10, PREEMPT_NEVER)


def test_global_default_applies_to_pods_without_a_class(tmp_path: Path) -> None:
    text = "---\n".join(
        [
            pc("default-prio", 50, "globalDefault: true\npreemptionPolicy: Never\n"),
            pc("high", 100),
            pod_doc("plain"),
            pod_doc("classed", "priorityClassName: high"),
            pod_doc("explicit", "priority: 3"),
        ]
    )
    c = load(write(tmp_path, "x.yaml", text))
    got = {p.name: (p.priority, p.preemption_policy) for p in c.pods}
    assert got == {
        "plain": (50, PREEMPT_NEVER),
        "classed": (100, PREEMPT_LOWER_PRIORITY),
        "explicit": (3, PREEMPT_LOWER_PRIORITY),
    }


def test_builtin_system_classes(tmp_path: Path) -> None:
    text = pod_doc("a", "priorityClassName: system-cluster-critical") + "---\n"
    text += pod_doc("b", "priorityClassName: system-node-critical", namespace="kube-system")
    c = load(write(tmp_path, "x.yaml", text))
    assert [p.priority for p in c.pods] == [2_000_000_000, 2_000_001_000]
    assert {"system-cluster-critical", "system-node-critical"} <= set(c.priority_classes)


def test_a_missing_priority_class_is_named(tmp_path: Path) -> None:
    text = NODE.format(name="n1") + "---\n" + pod_doc("a", "priorityClassName: nope")
    (e,) = errors_of(write(tmp_path, "x.yaml", text))
    assert (Path(e.file).name, e.path) == ("x.yaml", "document 2: spec.priorityClassName")
    assert "nope" in e.message


def test_a_missing_priority_class_in_a_workload_template(tmp_path: Path) -> None:
    text = deployment("web").replace("      containers:", "      priorityClassName: gone\n      containers:")
    errors = errors_of(write(tmp_path, "w.yaml", text))
    # one error per replica would say the same thing three times: it is reported once
    assert where(errors) == [("w.yaml", "spec.template.spec.priorityClassName")]
    assert "gone" in errors[0].message


def test_an_explicit_priority_must_match_the_class(tmp_path: Path) -> None:
    text = pc("high", 10) + "---\n" + pod_doc("a", "priorityClassName: high\npriority: 11")
    (e,) = errors_of(write(tmp_path, "x.yaml", text))
    assert e.path == "document 2: spec.priority"
    assert "computed 10" in e.message
    text = pc("high", 10) + "---\n" + pod_doc("a", "priorityClassName: high\npriority: 10")
    assert load(write(tmp_path, "ok.yaml", text)).pods[0].priority == 10


def test_priority_class_errors(tmp_path: Path) -> None:
    text = "---\n".join(
        [
            pc("too-high", 1_000_000_001),
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: novalue}\n",
            pc("d1", 1, "globalDefault: true\n"),
            pc("d2", 2, "globalDefault: true\n"),
            pc("bad-policy", 1, "preemptionPolicy: Sometimes\n"),
            pc("stray", 1, "spec: {}\n"),
        ]
    )
    path = write(tmp_path, "pc.yaml", text)
    with pytest.raises(InputError) as info:
        load(path)
    paths = [e.path for e in info.value.errors]
    assert paths == [
        "document 1: value",
        "document 2: value",
        "document 5: preemptionPolicy",
        "document 6: spec",
        "globalDefault",
    ]
    assert "d1, d2" in info.value.errors[-1].message


def test_priority_class_api_versions(tmp_path: Path) -> None:
    text = pc("a", 1).replace("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1")
    assert load(write(tmp_path, "ok.yaml", text)).priority_classes["a"].value == 1
    text = pc("a", 1).replace("scheduling.k8s.io/v1", "v1")
    assert where(errors_of(write(tmp_path, "bad.yaml", text))) == [("bad.yaml", "apiVersion")]


# --- PDBs, namespaces, ignored kinds --------------------------------------------------------------


def test_pdbs(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "pdb.yaml",
        """
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: web, namespace: shop}
        spec:
          minAvailable: 2
          selector:
            matchLabels: {app: web}
            matchExpressions: [{key: tier, operator: Exists}]
        ---
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: any}
        spec:
          maxUnavailable: 50%
          selector: {}
        """,
    )
    c = load(path)
    web, anyp = c.pdbs
    assert (web.key, web.min_available, web.max_unavailable) == ("shop/web", 2, None)
    assert web.selector == LabelSelector((("app", "web"),), (Requirement("tier", "Exists"),))
    assert (anyp.key, anyp.min_available, anyp.max_unavailable) == ("default/any", None, "50%")
    assert anyp.selector.empty


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ("minAvailable: 1\n  maxUnavailable: 1", "spec"),
        ("minAvailable: -1", "spec.minAvailable"),
        ("minAvailable: '50'", "spec.minAvailable"),
        ("maxUnavailable: 5.5", "spec.maxUnavailable"),
        (
            "minAvailable: 1\n  selector: {matchExpressions: [{key: a, operator: Gt, values: ['1']}]}",
            "spec.selector.matchExpressions[0].operator",
        ),
    ],
)
def test_pdb_errors(tmp_path: Path, spec: str, path: str) -> None:
    text = f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: p}}\nspec:\n  {spec}\n"
    assert where(errors_of(write(tmp_path, "pdb.yaml", text))) == [("pdb.yaml", path)]


def test_namespaces(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {env: prod}\n"
    text += "spec:\n  finalizers: [kubernetes]\n"
    c = load(write(tmp_path, "ns.yaml", text))
    # the API server labels every namespace with its name
    assert c.namespaces["shop"].labels == {"env": "prod", "kubernetes.io/metadata.name": "shop"}


@pytest.mark.parametrize("kind", ["Endpoints", "ConfigMap", "Secret", "HorizontalPodAutoscaler"])
def test_kinds_without_effect_on_scheduling_are_a_note_not_an_error(tmp_path: Path, kind: str) -> None:
    text = f"apiVersion: v1\nkind: {kind}\nmetadata: {{name: x}}\ndata: {{anything: goes}}\n---\n" + pod_doc("a")
    c = load(write(tmp_path, "x.yaml", text))
    assert [p.name for p in c.pods] == ["a"]
    assert len(c.notes) == 1
    assert kind in c.notes[0] and "x.yaml document 1" in c.notes[0] and "ignored" in c.notes[0]


def test_many_objects_of_an_ignored_kind_make_one_note_per_kind(tmp_path: Path) -> None:
    """Issue 24 (audit): a real cluster's export holds hundreds of ConfigMaps, Secrets and EndpointSlices, which made
    a note each; one note per kind names the first and counts the rest."""
    docs = [f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n" for i in range(5)]
    docs += [f"apiVersion: v1\nkind: Secret\nmetadata: {{name: s{i}}}\n" for i in range(2)]
    c = load(write(tmp_path, "x.yaml", "---\n".join([*docs, pod_doc("a")])))
    assert [p.name for p in c.pods] == ["a"]
    assert c.notes == [
        f"{tmp_path / 'x.yaml'} document 1: ConfigMap ignored (no effect on scheduling), and 4 more ConfigMap objects",
        f"{tmp_path / 'x.yaml'} document 6: Secret ignored (no effect on scheduling), and 1 more Secret object",
    ]


# --- errors ---------------------------------------------------------------------------------------


def test_malformed_yaml_names_file_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: x\nspec: [\n")
    (e,) = errors_of(path)
    assert e.file == str(path)
    assert e.path == "line 4 column 5"
    assert e.message.startswith("malformed YAML")
    assert str(e).startswith(f"{path}: line 4 column 5: malformed YAML")


def test_malformed_yaml_tab_indentation(tmp_path: Path) -> None:
    path = write(tmp_path, "tab.yaml", "kind: Pod\nmetadata:\n\tname: x\n")
    (e,) = errors_of(path)
    assert e.path.startswith("line 3 column ") and "malformed YAML" in e.message


def test_unknown_kind(tmp_path: Path) -> None:
    path = write(tmp_path, "x.yaml", "apiVersion: v1\nkind: Frobnicator\nmetadata: {name: a}\n")
    assert load(path).skipped == {"Frobnicator": [f"{path}"]}
    with pytest.raises(InputError) as info:
        load_manifests([str(path)], strict=True)
    (e,) = info.value.errors
    assert e.path == "kind" and '"Frobnicator"' in e.message and "Deployment" in e.message


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("apiVersion: v1\nmetadata: {name: a}\n", "kind"),
        ("- apiVersion: v1\n  kind: Pod\n", "document"),
        ("just a string\n", "document"),
    ],
)
def test_documents_that_are_not_objects(tmp_path: Path, text: str, path: str) -> None:
    errors = errors_of_allowing_empty_path(write(tmp_path, "x.yaml", text))
    assert len(errors) == 1
    if path == "document":
        assert "must be a map" in errors[0].message
    else:
        assert errors[0].path == path


def test_wrong_api_version(tmp_path: Path) -> None:
    (e,) = errors_of(write(tmp_path, "x.yaml", pod_doc("a").replace("apiVersion: v1", "apiVersion: apps/v1")))
    assert e.path == "apiVersion" and "v1" in e.message and "'apps/v1'" in e.message
    (e,) = errors_of(write(tmp_path, "y.yaml", pod_doc("a").replace("apiVersion: v1\n", "")))
    assert e.path == "apiVersion" and "apiVersion is missing" in e.message and "None" not in e.message


def test_unknown_field_is_reported_with_its_full_path(tmp_path: Path) -> None:
    text = pod_doc("a", container="resources:\n  requets: {cpu: 1}")
    (e,) = errors_of(write(tmp_path, "x.yaml", text))
    assert e.path == "spec.containers[0].resources.requets"
    assert e.message == "unknown field"


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("apiVersion: v1\nkind: Pod\nmetdata: {name: a}\n", "metdata"),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a, nmespace: b}\nspec: {containers: [{name: c}]}\n",
            "metadata.nmespace",
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}], nodeSelecter: {}}\n",
            "spec.nodeSelecter",
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, port: []}]}\n",
            "spec.containers[0].port",
        ),
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: 1}, allocatible: {}}\n",
            "status.allocatible",
        ),
    ],
)
def test_more_unknown_fields(tmp_path: Path, text: str, path: str) -> None:
    errors = errors_of_allowing_empty_path(write(tmp_path, "x.yaml", text))
    assert path in [e.path for e in errors]
    assert all(e.file == str(tmp_path / "x.yaml") for e in errors)


def test_bad_quantity_is_reported_with_its_path(tmp_path: Path) -> None:
    text = pod_doc("a", container="resources:\n  requests: {cpu: 1.5.3Gi, memory: 1Gi}")
    (e,) = errors_of(write(tmp_path, "x.yaml", text))
    assert e.path == "spec.containers[0].resources.requests.cpu"
    assert "1.5.3Gi" in e.message


def test_missing_name_and_containers(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\nspec: {containers: []}\n"
    assert sorted(where(errors_of(write(tmp_path, "x.yaml", text)))) == [
        ("x.yaml", "metadata.name"),
        ("x.yaml", "spec.containers"),
    ]


def test_duplicate_names(tmp_path: Path) -> None:
    text = pod_doc("a") + "---\n" + pod_doc("a") + "---\n" + pod_doc("a", namespace="other")
    errors = errors_of(write(tmp_path, "x.yaml", text))
    assert where(errors) == [("x.yaml", "document 2: metadata.name")]
    assert "duplicate pod default/a" in errors[0].message and "document 1" in errors[0].message


def test_duplicate_names_across_files_and_kinds(tmp_path: Path) -> None:
    a = write(tmp_path, "a.yaml", NODE.format(name="n1") + "---\n" + pod_doc("web-1", namespace="team"))
    b = write(tmp_path, "b.yaml", NODE.format(name="n1") + "---\n" + deployment("web"))
    errors = errors_of(a, b)
    assert where(errors) == [("b.yaml", "document 1: metadata.name"), ("b.yaml", "document 2: metadata.name")]
    assert "duplicate Node n1" in errors[0].message and "a.yaml" in errors[0].message
    assert "duplicate pod team/web-1" in errors[1].message  # the Deployment's second pod meets the Pod
    # a Node and a Pod may share a name, and so may pods in different namespaces
    load(
        write(
            tmp_path,
            "ok.yaml",
            NODE.format(name="x") + "---\n" + pod_doc("x") + "---\n" + pod_doc("x", namespace="y"),
        )
    )


def test_pod_bound_to_an_unknown_node(tmp_path: Path) -> None:
    nodes = write(tmp_path, "nodes.yaml", NODE.format(name="n1"))
    pods = write(tmp_path, "pods.yaml", pod_doc("ok", "nodeName: n1") + "---\n" + pod_doc("lost", "nodeName: n2"))
    errors = errors_of(nodes, pods)
    assert where(errors) == [("pods.yaml", "document 2: spec.nodeName")]
    assert errors[0].file == str(pods)
    assert "'n2'" in errors[0].message and "default/lost" in errors[0].message


def test_workload_template_bound_to_an_unknown_node(tmp_path: Path) -> None:
    text = deployment("web").replace("      containers:", "      nodeName: ghost\n      containers:")
    errors = errors_of(write(tmp_path, "w.yaml", text))
    assert where(errors) == [("w.yaml", "spec.template.spec.nodeName")] * 3  # one per replica, named
    assert ["team/web-0" in errors[0].message, "team/web-2" in errors[2].message] == [True, True]


def test_every_error_in_every_file_is_reported_at_once(tmp_path: Path) -> None:
    one = write(
        tmp_path,
        "one.yaml",
        pod_doc("a", container="resources:\n  requets: {cpu: 1}")
        + "---\n"
        + pod_doc("b", container="resources:\n  requests: {cpu: 1.5.3Gi}")
        + "---\n"
        + "apiVersion: v1\nkind: Gizmo\nmetadata: {name: g}\n",
    )
    two = write(
        tmp_path,
        "two.yaml",
        deployment("web").replace("matchLabels: {app: web}", "matchLabels: {app: nope}")
        + "---\n"
        + pod_doc("c", "nodeName: nowhere\npriorityClassName: missing"),
    )
    bad = write(tmp_path, "three.yaml", "a: [\n")
    with pytest.raises(InputError) as info:
        load(one, two, bad)
    errors = info.value.errors
    assert where(errors) == [
        ("one.yaml", "document 1: spec.containers[0].resources.requets"),
        ("one.yaml", "document 2: spec.containers[0].resources.requests.cpu"),
        ("two.yaml", "document 1: spec.template.metadata.labels"),
        ("three.yaml", "line 2 column 1"),
        ("two.yaml", "document 2: spec.priorityClassName"),
        ("two.yaml", "document 2: spec.nodeName"),
    ]
    text = str(info.value)
    assert len(text.splitlines()) == len(errors)
    assert all(e.file in text for e in errors)


def test_input_error_text_lists_file_path_and_message(tmp_path: Path) -> None:
    path = write(tmp_path, "x.yaml", pod_doc("a", container="resources:\n  requets: {cpu: 1}"))
    with pytest.raises(InputError) as info:
        load(path)
    assert str(info.value) == f"{path}: spec.containers[0].resources.requets: unknown field"


# -- duplicate keys ---------------------------------------------------------------------------------------------

DUP_NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""

DUP_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    resources:
      requests:
        cpu: 100m
        memory: 1Gi
        cpu: 200m
"""


def test_a_key_given_twice_in_yaml_is_one_error_with_file_and_field_path(tmp_path: Path) -> None:
    path = write(tmp_path, "pod.yaml", DUP_POD)
    (e,) = errors_of(path)
    assert (e.file, e.path) == (str(path), "spec.containers[0].resources.requests.cpu")
    assert e.message == 'duplicate field "cpu" (line 12 column 9): a key may appear only once in a map'


def test_a_key_given_twice_names_the_document_of_a_stream(tmp_path: Path) -> None:
    path = write(tmp_path, "all.yaml", DUP_NODE + "---" + DUP_POD)
    (e,) = errors_of(path)
    assert e.path == "document 2: spec.containers[0].resources.requests.cpu"
    assert "line 17 column 9" in e.message


def test_a_key_given_twice_at_the_top_and_in_a_list_item(tmp_path: Path) -> None:
    top = write(tmp_path, "top.yaml", DUP_NODE + "kind: Node\n")
    (e,) = errors_of(top)
    assert (e.path, e.message) == (
        "kind",
        'duplicate field "kind" (line 5 column 1): a key may appear only once in a map',
    )
    items = write(
        tmp_path,
        "list.yaml",
        """
        apiVersion: v1
        kind: List
        items:
        - {apiVersion: v1, kind: Node, metadata: {name: a}}
        - {apiVersion: v1, kind: Node, metadata: {name: b, name: c}}
        """,
    )
    (e,) = errors_of(items)
    assert e.path == "items[1].metadata.name"


def test_a_key_given_twice_in_json(tmp_path: Path) -> None:
    doc = (
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, '
        '"spec": {"containers": [{"name": "c", "name": "d"}]}}'
    )
    path = write(tmp_path, "pod.json", doc)
    (e,) = errors_of(path)
    assert (e.file, e.path) == (str(path), "spec.containers[0].name")
    assert e.message == 'duplicate field "name": a key may appear only once in a map'


def test_a_key_given_twice_fails_validate_with_exit_code_2_and_no_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, "pod.yaml", DUP_NODE + "---" + DUP_POD)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert f"{path}: document 2: spec.containers[0].resources.requests.cpu: duplicate field" in result.output
