"""The readers of the DRA kinds (resource.k8s.io), entries of ``api.kinds.KINDS``."""

from __future__ import annotations

from packsched.api.decoding import DecodeContext, Decoder
from packsched.api.dra import (
    DRA_API_VERSIONS,
    EXTENDED_CLAIM_ANNOTATION,
    ResourceClaim,
    ResourceClaimTemplate,
    admin_access_path,
    decode_claim_spec,
    decode_claim_status,
    decode_device_class,
    decode_slice,
)
from packsched.api.storage import controller_owner, controller_uid

_TEMPLATE_TOP = ("apiVersion", "kind", "metadata", "spec")
_TEMPLATE_SPEC = ("metadata", "spec")


def _api_version(ctx: DecodeContext) -> str:
    return str(ctx.data.get("apiVersion", DRA_API_VERSIONS[0]))


def _device_class(ctx: DecodeContext) -> None:
    ctx.cluster.dra.classes[ctx.name] = decode_device_class(ctx.r, ctx.data, ctx.name)


def _admin_access(ctx: DecodeContext, path: str | None) -> None:
    """A request asking for admin access: its namespace's label is checked once every file is read."""
    if path is not None:
        ctx.reading.admin_access.append((ctx.namespace, ctx.r.errors.file, ctx.label, path))


def _resource_claim(ctx: DecodeContext) -> None:
    spec = decode_claim_spec(ctx.r, ctx.data.get("spec"), "spec", _api_version(ctx))
    _admin_access(ctx, admin_access_path(spec, "spec", _api_version(ctx)))
    uid = ctx.r.str(ctx.meta.get("uid"), "metadata.uid")
    claim = ResourceClaim(ctx.name, ctx.namespace, spec, uid=uid or f"claim-{ctx.name}", source=ctx.where)
    claim.deleting = ctx.meta.get("deletionTimestamp") is not None
    owner = controller_owner(ctx.r, ctx.meta.get("ownerReferences"), "metadata.ownerReferences")
    if owner is not None and owner.kind == "Pod":  # made from a template by the resourceclaim controller
        claim.owner_pod = f"{ctx.namespace}/{owner.name}"
        claim.owner_uid = controller_uid(ctx.r, ctx.meta.get("ownerReferences"), "metadata.ownerReferences")
        annotations = ctx.meta.get("annotations")
        if isinstance(annotations, dict) and annotations.get(EXTENDED_CLAIM_ANNOTATION) == "true":
            claim.extended = True  # made by a scheduler for the pod's DRA-backed extended resources
            ctx.cluster.dra.extended_claims[claim.owner_pod] = claim.key
    decode_claim_status(ctx.r, ctx.data.get("status"), claim)
    ctx.cluster.dra.claims[claim.key] = claim
    ctx.cluster.dra.changed(claim.key)


def _resource_claim_template(ctx: DecodeContext) -> None:
    r = ctx.r
    outer = r.fields(ctx.data.get("spec"), "spec", _TEMPLATE_SPEC)
    r.map(outer.get("metadata"), "spec.metadata")
    spec = decode_claim_spec(r, outer.get("spec"), "spec.spec", _api_version(ctx))
    _admin_access(ctx, admin_access_path(spec, "spec.spec", _api_version(ctx)))
    key = f"{ctx.namespace}/{ctx.name}"
    ctx.cluster.dra.templates[key] = ResourceClaimTemplate(ctx.name, ctx.namespace, spec, ctx.where)


def _resource_slice(ctx: DecodeContext) -> None:
    slice_ = decode_slice(ctx.r, ctx.data, ctx.name, _api_version(ctx))
    ctx.cluster.dra.slices.append(slice_)
    ctx.cluster.dra.changed()


DRA_KINDS = {
    "DeviceClass": Decoder(_device_class, DRA_API_VERSIONS, cluster_scoped=True),
    "ResourceClaim": Decoder(_resource_claim, DRA_API_VERSIONS),
    "ResourceClaimTemplate": Decoder(_resource_claim_template, DRA_API_VERSIONS, top=_TEMPLATE_TOP),
    "ResourceSlice": Decoder(_resource_slice, DRA_API_VERSIONS, cluster_scoped=True),
}
