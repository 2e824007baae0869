"""Pod signature fragments shared by several plugins (opportunistic batching, kube-scheduler 1.35+): the parts of a
pod each plugin reads, as JSON-able values, after upstream's signers (kube-scheduler ``framework/signers.go``).
Plugins that read the same part use the same key, so their fragments agree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from packsched.api.objects import NodeSelectorTerm, Pod, Requirement
from packsched.backend.dra.extended import backed_resources
from packsched.framework.interface import (
    SIGN_HOST_PORTS,
    SIGN_IMAGE_NAMES,
    SIGN_NODE_AFFINITY,
    SIGN_NODE_SELECTOR,
    SIGN_RESOURCES,
    SIGN_TOLERATIONS,
    SIGN_VOLUMES,
    Handle,
    SignFragments,
)
from packsched.framework.podinfo import PodInfo


def resources(pod: PodInfo, handle: Handle, dra_extended: bool) -> SignFragments | None:
    """The pod's requests as the Fit filter counts them (containers, init containers, overhead). With
    DRA-backed extended resources (1.36+), None when the pod asks for a resource a DeviceClass serves (upstream
    shouldDelegateResourceToDRA with no node: such a pod is never signed)."""
    if dra_extended:
        dra = handle.dra()
        if dra is not None and backed_resources(dra, pod.requests):
            return None
    return {SIGN_RESOURCES: sorted(pod.requests.items())}


def tolerations(pod: Pod) -> SignFragments:
    """The tolerations as a set (sorted; upstream sorts by key and value)."""
    return {SIGN_TOLERATIONS: sorted([t.key, t.value, t.operator, t.effect] for t in pod.tolerations)}


def host_ports(pod: Pod) -> SignFragments:
    """The host port numbers of every container and init container, each once, in order (upstream keeps the
    numbers only, not their protocol or host IP)."""
    ports = {p.host_port for c in [*pod.containers, *pod.init_containers] for p in c.ports if p.host_port != 0}
    return {SIGN_HOST_PORTS: sorted(ports)}


def _requirements(reqs: tuple[Requirement, ...]) -> list[list[Any]]:
    return sorted([r.key, r.operator, sorted(r.values)] for r in reqs)


def _term(term: NodeSelectorTerm) -> list[Any]:
    return [_requirements(term.match_expressions), _requirements(term.match_fields)]


def node_affinity(pod: Pod) -> SignFragments:
    """The required and preferred node affinity, and the nodeSelector. The affinity in upstream's canonical form:
    each requirement's values sorted, the requirements of a term sorted, the terms sorted (an absent required
    affinity signs as one without terms), so affinities written in another order sign alike."""
    aff = pod.node_affinity
    signed = None
    if aff is not None:
        signed = {
            "required": sorted(_term(t) for t in aff.required or ()),
            "preferred": sorted([p.weight, _term(p.preference)] for p in aff.preferred),
        }
    return {SIGN_NODE_AFFINITY: signed, SIGN_NODE_SELECTOR: sorted(pod.node_selector.items())}


def volumes(pod: Pod) -> SignFragments:
    """Each volume's source (not its name), configMap and secret volumes left out, sorted."""
    out = []
    for v in pod.volumes:
        if v.source in ("configMap", "secret"):
            continue
        out.append(repr((v.source, v.claim_name, v.read_only, v.disk, v.monitors, v.from_template, v.image)))
    return {SIGN_VOLUMES: sorted(out)}


def image_names(pod: Pod, normalize: Callable[[str], str]) -> SignFragments:
    """The containers' and init containers' images, normalized, each once (image volumes are not in it, as
    upstream's)."""
    return {SIGN_IMAGE_NAMES: sorted({normalize(c.image) for c in [*pod.containers, *pod.init_containers]})}
