"""What a kind's decoder is given: the object's header, read already, and where to put what it makes.

The table from kind to decoder is ``packsched.api.kinds.KINDS``; this module holds the pieces it is made of, so
that decoders in other modules (workloads) can be written against them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from packsched.api import schema
from packsched.api.cluster import Cluster, Workload
from packsched.api.decode import Reader
from packsched.api.objects import Pod
from packsched.api.storage import PersistentVolumeClaim, decode_claim_template


def in_document(label: str, path: str) -> str:
    """A field path inside one document of a file (``document 2: spec.nodeName``)."""
    return f"{label}: {path}" if label and path else (label or path)


@dataclass
class PendingPod:
    """A pod read (or made by a workload), with where it was written; checked once every file is read."""

    pod: Pod
    file: str
    label: str  # the document within its file
    spec: str  # the path of its pod spec: ``spec``, or ``spec.template.spec`` for a workload's pods


@dataclass
class Reading:
    """What has been read so far, across documents and files."""

    cluster: Cluster = field(default_factory=Cluster)
    pods: list[PendingPod] = field(default_factory=list)
    # Claims controllers make for their pods (StatefulSet templates, ephemeral volumes): a claim the manifests
    # define wins.
    made_claims: list[PersistentVolumeClaim] = field(default_factory=list)
    # (kind, namespace, name) of every object but pods -> where it was first defined
    seen: dict[tuple[str, str, str], str] = field(default_factory=dict)
    named: bool = True  # the user named the file being read (not found in a directory): a wrong kind is an error
    strict: bool = False  # a kind packsched does not model is an error (--strict), not skipped
    # DaemonSets read: their pods are made once every node is read (workload, file, document label)
    daemon_sets: list[tuple[Workload, str, str]] = field(default_factory=list)
    # Pod templates the simulator makes pods from (a DaemonSet's, a CronJob's): (template, file, path of its spec),
    # their priority resolved once every file is read
    templates: list[tuple[Pod, str, str]] = field(default_factory=list)
    # ResourceClaims and templates asking for admin access (DRA): (namespace, file, document label, field path),
    # checked against their namespace's labels once every file is read
    admin_access: list[tuple[str, str, str, str]] = field(default_factory=list)
    # kinds that do not affect scheduling (ConfigMap, Secret, ...) -> (index of their one note, where the first
    # was, how many were read): a real cluster's export holds hundreds, said in one note per kind
    ignored: dict[str, tuple[int, str, int]] = field(default_factory=dict)


@dataclass
class DecodeContext:
    """One object being decoded: ``kind``, ``apiVersion``, ``metadata.name`` and ``metadata.namespace`` are checked
    already; problems go to ``r`` at field paths inside the object."""

    kind: str
    data: dict[str, Any]  # the document's top-level fields
    meta: dict[str, Any]  # its metadata
    name: str
    namespace: str  # "" for a cluster-scoped kind
    where: str  # file and document (``nodes.yaml document 2``): the objects' source, and notes
    label: str  # the document within its file (``document 2``, ``items[0]``; "" for a file's only document)
    r: Reader
    reading: Reading

    @property
    def cluster(self) -> Cluster:
        return self.reading.cluster

    def note(self, text: str) -> None:
        """A remark about the object, shown as a note (not an error)."""
        self.cluster.notes.append(f"{self.where}: {text}")

    def add_pod(self, pod: Pod, spec: str = "spec") -> None:
        """Add a pod whose pod spec is at ``spec``: the claims of its ephemeral volumes are made (``<pod>-<volume>``,
        owned by the pod, as the ephemeral volume controller does), and its priority, its name and its node are
        checked once every file is read."""
        for i, vol in enumerate(pod.volumes):
            if vol.source != "ephemeral" or vol.claim_template is None:
                continue
            path = f"{spec}.volumes[{i}].ephemeral.volumeClaimTemplate"
            claim = decode_claim_template(self.r, vol.claim_template, path, f"{pod.name}-{vol.name}", pod.namespace)
            claim.owner_uid, claim.owner_pod = pod.uid, pod.key
            self.reading.made_claims.append(claim)
        self.reading.pods.append(PendingPod(pod, self.r.errors.file, self.label, spec))
        self.cluster.pods.append(pod)


@dataclass(frozen=True)
class Decoder:
    """How one kind is read: its function, the apiVersions it has (the first is the one to write), whether its
    objects have no namespace, and its top-level fields (a PriorityClass's and a StorageClass's sit beside
    metadata, not in spec and status).

    A kind that two API groups define (``PodGroup``: scheduler-plugins' ``scheduling.x-k8s.io`` and
    kube-scheduler's own ``scheduling.k8s.io``) is one entry made with :meth:`by_api_version`: its
    ``variants`` are the decoders of each group, and :meth:`for_api_version` picks one by the object's apiVersion.
    """

    decode: Callable[[DecodeContext], None]
    api_versions: tuple[str, ...]
    cluster_scoped: bool = False
    top: tuple[str, ...] = schema.TOP
    variants: tuple[Decoder, ...] = ()

    @staticmethod
    def by_api_version(*variants: Decoder) -> Decoder:
        """One entry for a kind several API groups define: the apiVersions of every variant (the first variant's
        first is the one to write), each object read by the variant of its apiVersion."""

        def unreachable(ctx: DecodeContext) -> None:
            raise AssertionError(f"{ctx.kind}: decode with for_api_version")

        versions = tuple(v for d in variants for v in d.api_versions)
        return Decoder(unreachable, versions, variants[0].cluster_scoped, variants[0].top, variants)

    def for_api_version(self, api_version: str) -> Decoder | None:
        """The decoder of objects of ``api_version`` (None when the kind has no such apiVersion)."""
        if not self.variants:
            return self if api_version in self.api_versions else None
        return next((d for d in self.variants if api_version in d.api_versions), None)
