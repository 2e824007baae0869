"""KubeSchedulerConfiguration v1, v1beta3, v1beta2 and v1beta1: strict decoding, upstream's per-version
defaults and plugin merging, conversion to the internal types, and validation.

Per version (kubernetes/kubernetes ``pkg/scheduler/apis/config/<version>/default_plugins.go`` and
``defaults.go``):

* v1, v1beta3: the default plugins are a ``multiPoint`` list; user sets are merged with ``mergePluginSet``
  (disabled names and ``*`` drop defaults, a re-enabled default plugin replaces it in place, other custom
  plugins are appended) and the disabled lists are kept so that the framework can skip multiPoint expansion.
* v1beta2: per-extension-point defaults, the same in-place merge, disabled lists dropped.
* v1beta1: per-extension-point defaults; custom plugins are only appended (re-enabling a default plugin
  without disabling it registers it twice, which the framework rejects) - in-place replacement came with
  v1beta2 (kubernetes#99582).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from packsched.api.decode import Reader
from packsched.api.errors import ErrorList, FieldError
from packsched.config import args as pluginargs
from packsched.config import catalog
from packsched.config.args import parse_duration
from packsched.config.defaults import (
    DEFAULT_CLIENT_BURST,
    DEFAULT_CLIENT_QPS,
    DEFAULT_LEADER_ELECT,
    DEFAULT_PARALLELISM,
    DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    DEFAULT_SCHEDULER_NAME,
)
from packsched.config.fielderr import child, duplicate, index, invalid, required, with_file
from packsched.config.types import (
    EXTENSION_POINTS,
    KubeSchedulerConfiguration,
    LeaderElection,
    PluginRef,
    Plugins,
    PluginSet,
    Profile,
)
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import KubeVersion

_COMMON_TOP = (
    "apiVersion",
    "kind",
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
)
TOP_FIELDS: dict[str, tuple[str, ...]] = {
    catalog.V1: (
        *_COMMON_TOP,
        "parallelism",
        "delayCacheUntilActive",
        "percentageOfPlacementsToScore",  # newest main branch, pod-group scheduling only
    ),
    catalog.V1BETA3: (*_COMMON_TOP, "parallelism"),
    catalog.V1BETA2: (*_COMMON_TOP, "parallelism", "healthzBindAddress", "metricsBindAddress"),
    catalog.V1BETA1: (*_COMMON_TOP, "healthzBindAddress", "metricsBindAddress"),
}
# Fields some v1.19 v1beta1 files still carry; v1.20 dropped them from v1beta1.
_V119_ONLY = {"disablePreemption", "featureGates"}

PROFILE_FIELDS: dict[str, tuple[str, ...]] = {
    catalog.V1: (
        "schedulerName",
        "percentageOfNodesToScore",
        "percentageOfPlacementsToScore",
        "plugins",
        "pluginConfig",
    ),
    catalog.V1BETA3: ("schedulerName", "plugins", "pluginConfig"),
    catalog.V1BETA2: ("schedulerName", "plugins", "pluginConfig"),
    catalog.V1BETA1: ("schedulerName", "plugins", "pluginConfig"),
}

_POINTS_V1BETA1 = tuple(p for p in EXTENSION_POINTS if p != "preEnqueue")
PLUGIN_POINTS: dict[str, tuple[str, ...]] = {
    catalog.V1: (*EXTENSION_POINTS, "multiPoint"),
    catalog.V1BETA3: (*EXTENSION_POINTS, "multiPoint"),
    catalog.V1BETA2: EXTENSION_POINTS,
    catalog.V1BETA1: _POINTS_V1BETA1,
}
# Pod-group extension points of the newest v1 API (1.37): a plugin enabled there is refused (placementGenerate and
# placementScore need TopologyAwareWorkloadScheduling; podGroupPostFilter follows the profile's postFilter plugins).
_PLACEMENT_POINTS = ("placementGenerate", "placementScore", "placementFeasible", "podGroupPostFilter")

LEADER_ELECTION_FIELDS = (
    "leaderElect",
    "leaseDuration",
    "renewDeadline",
    "retryPeriod",
    "resourceLock",
    "resourceName",
    "resourceNamespace",
)
CLIENT_CONNECTION_FIELDS = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")


@dataclass
class _UserSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[PluginRef] = field(default_factory=list)


@dataclass
class _Context:
    api_version: str
    known: Collection[str]
    errors: ErrorList
    reader: Reader
    warnings: list[str]
    version: KubeVersion = DEFAULT_KUBE_VERSION

    def add(self, path: str, message: str) -> None:
        self.errors.add(path, message)

    def extend(self, errs: list[FieldError]) -> None:
        self.errors.items.extend(with_file(errs, self.errors.file))


def convert(
    data: Mapping[str, Any],
    api_version: str,
    known: Collection[str],
    errors: ErrorList,
    version: KubeVersion = DEFAULT_KUBE_VERSION,
) -> KubeSchedulerConfiguration:
    """Decode, default, convert and validate one KubeSchedulerConfiguration document (problems go to
    ``errors``; the caller raises). ``version``: the kube-scheduler release whose defaults apply."""
    ctx = _Context(api_version, known, errors, Reader(errors), [], version)
    r = ctx.reader
    top = dict(data)
    for key in list(top):
        if key in _V119_ONLY and api_version == catalog.V1BETA1 and key not in TOP_FIELDS[api_version]:
            ctx.add(key, "unknown field (it was part of v1beta1 only in kube-scheduler v1.19)")
            del top[key]
    top = r.fields(top, "", TOP_FIELDS[api_version])
    cfg = KubeSchedulerConfiguration(source_version=api_version)

    cfg.leader_election, (cfg.kubeconfig, cfg.client_qps, cfg.client_burst) = _decode_live_only(ctx, top)
    if "parallelism" in top:
        value = pluginargs.read_int(r, top.get("parallelism"), "parallelism")
        cfg.parallelism = DEFAULT_PARALLELISM if value is None else value
    pct = pluginargs.read_int(r, top.get("percentageOfNodesToScore"), "percentageOfNodesToScore")
    cfg.percentage_of_nodes_to_score = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE if pct is None else pct
    initial = pluginargs.read_int(r, top.get("podInitialBackoffSeconds"), "podInitialBackoffSeconds", bits=64)
    cfg.pod_initial_backoff_seconds = DEFAULT_POD_INITIAL_BACKOFF_SECONDS if initial is None else initial
    maximum = pluginargs.read_int(r, top.get("podMaxBackoffSeconds"), "podMaxBackoffSeconds", bits=64)
    cfg.pod_max_backoff_seconds = DEFAULT_POD_MAX_BACKOFF_SECONDS if maximum is None else maximum
    if r.list(top.get("extenders"), "extenders"):
        ctx.add("extenders", "extenders are not supported by packsched")
    if top.get("percentageOfPlacementsToScore") is not None:
        ctx.warnings.append("percentageOfPlacementsToScore applies to pod-group scheduling only; packsched ignores it")

    raw_profiles = r.list(top.get("profiles"), "profiles")
    if not raw_profiles:
        raw_profiles = [{}]  # SetDefaults: one profile
    single = len(raw_profiles) == 1
    for i, raw in enumerate(raw_profiles):
        cfg.profiles.append(_profile(ctx, raw, f"profiles[{i}]", single))

    validate_configuration(cfg, ctx)
    cfg.warnings.extend(ctx.warnings)
    return cfg


def _decode_live_only(ctx: _Context, top: Mapping[str, Any]) -> tuple[LeaderElection, tuple[str, float, int]]:
    """Fields that matter only to a running scheduler (``packsched serve``): decoded, defaulted and validated
    as upstream does (ValidateLeaderElectionConfiguration); the simulator ignores them."""
    r = ctx.reader
    le = r.fields(top.get("leaderElection"), "leaderElection", LEADER_ELECTION_FIELDS)
    out = _decode_leader_election(ctx, le)
    if out.leader_elect:
        _validate_leader_election(ctx, out)
    cc = r.fields(top.get("clientConnection"), "clientConnection", CLIENT_CONNECTION_FIELDS)
    client = _decode_client_connection(ctx, cc)
    for key in ("enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"):
        r.bool(top.get(key), key)
    for key in ("healthzBindAddress", "metricsBindAddress"):
        r.str(top.get(key), key)
    return out, client


def _decode_leader_election(ctx: _Context, le: Mapping[str, Any]) -> LeaderElection:
    r = ctx.reader
    out = LeaderElection()
    out.leader_elect = r.bool(le.get("leaderElect"), "leaderElection.leaderElect", DEFAULT_LEADER_ELECT)
    for key, attr in (
        ("leaseDuration", "lease_duration_s"),
        ("renewDeadline", "renew_deadline_s"),
        ("retryPeriod", "retry_period_s"),
    ):
        raw = r.str(le.get(key), f"leaderElection.{key}")
        if le.get(key) is None or not raw:
            continue
        seconds = parse_duration(raw)
        if seconds is None:
            ctx.add(f"leaderElection.{key}", f'Invalid value: "{raw}": must be a duration such as "15s"')
        else:
            setattr(out, attr, seconds)
    for key, attr in (
        ("resourceLock", "resource_lock"),
        ("resourceName", "resource_name"),
        ("resourceNamespace", "resource_namespace"),
    ):
        if le.get(key) is not None:
            setattr(out, attr, r.str(le.get(key), f"leaderElection.{key}"))
    return out


def _validate_leader_election(ctx: _Context, out: LeaderElection) -> None:
    """ValidateLeaderElectionConfiguration (only when leaderElect is on)."""
    for key, value in (
        ("leaseDuration", out.lease_duration_s),
        ("renewDeadline", out.renew_deadline_s),
        ("retryPeriod", out.retry_period_s),
    ):
        if value <= 0:
            ctx.add(f"leaderElection.{key}", "Invalid value: must be greater than zero")
    if out.lease_duration_s <= out.renew_deadline_s:
        ctx.add("leaderElection.leaseDuration", "Invalid value: LeaseDuration must be greater than RenewDeadline")
    if out.resource_lock != "leases":
        ctx.add(
            "leaderElection.resourceLock",
            f'Unsupported value: "{out.resource_lock}": supported values: "leases"',
        )
    for key, name in (("resourceName", out.resource_name), ("resourceNamespace", out.resource_namespace)):
        if not name:
            ctx.add(f"leaderElection.{key}", "Required value")


def _decode_client_connection(ctx: _Context, cc: Mapping[str, Any]) -> tuple[str, float, int]:
    """clientConnection: the kubeconfig, and the client's qps and burst (0 or absent: kube-scheduler's defaults,
    50 and 100; the other fields are checked for types)."""
    r = ctx.reader
    for key in ("acceptContentTypes", "contentType"):
        r.str(cc.get(key), f"clientConnection.{key}")
    kubeconfig = r.str(cc.get("kubeconfig"), "clientConnection.kubeconfig")
    qps = cc.get("qps")
    if qps is not None and (isinstance(qps, bool) or not isinstance(qps, int | float)):
        ctx.add("clientConnection.qps", f"must be a number, got {qps!r}")
        qps = None
    burst = pluginargs.read_int(r, cc.get("burst"), "clientConnection.burst")
    if burst is not None and burst < 0:
        ctx.add("clientConnection.burst", f"Invalid value: {burst}: must be non-negative")
    return kubeconfig, float(qps or DEFAULT_CLIENT_QPS), int(burst or DEFAULT_CLIENT_BURST)


# -- profiles ------------------------------------------------------------------------------------------------


def _decode_plugin_set(ctx: _Context, raw: object, path: str) -> _UserSet:
    r = ctx.reader
    data = r.fields(raw, path, ("enabled", "disabled"))
    out = _UserSet()
    for key, target in (("enabled", out.enabled), ("disabled", out.disabled)):
        lp = child(path, key)
        for k, item in enumerate(r.list(data.get(key), lp)):
            ip = index(lp, k)
            entry = r.fields(item, ip, ("name", "weight"))
            name = r.str(entry.get("name"), child(ip, "name"))
            if not name:
                ctx.add(child(ip, "name"), required())
            weight = pluginargs.read_int(r, entry.get("weight"), child(ip, "weight")) or 0
            if key == "enabled" and weight < 0:
                ctx.warnings.append(
                    f'{child(ip, "weight")}: negative weight {weight} for plugin "{name}": '
                    "kube-scheduler accepts it and subtracts that plugin's score"
                )
            target.append(PluginRef(name, weight))
    return out


def _check_user_plugin(ctx: _Context, name: str, path: str) -> bool:
    """An explicitly enabled plugin must be allowed in this version and implemented by packsched."""
    if not name:
        return False
    rejected = catalog.rejected_plugin(ctx.api_version, name)
    if rejected:
        ctx.add(path, invalid(name, rejected))
        return False
    if name in ctx.known:
        return True
    if name in catalog.UPSTREAM_PLUGINS:
        ctx.add(path, f'plugin "{name}" is not implemented by packsched yet')
    else:
        ctx.add(path, f'plugin "{name}" does not exist')
    return False


def _defaults(api_version: str, version: KubeVersion) -> tuple[dict[str, list[PluginRef]], list[PluginRef]]:
    if api_version in (catalog.V1, catalog.V1BETA3):
        return {}, [PluginRef(n, w) for n, w in catalog.default_multipoint(api_version, version)]
    table = catalog.V1BETA2_DEFAULTS if api_version == catalog.V1BETA2 else catalog.V1BETA1_DEFAULTS
    return {p: [PluginRef(n, w) for n, w in entries] for p, entries in table.items()}, []


def merge_plugin_set(default: list[PluginRef], custom: _UserSet | None, api_version: str) -> PluginSet:
    """Upstream mergePluginSet of the given API version (see the module docstring)."""
    custom = custom or _UserSet()
    disabled_names = {p.name for p in custom.disabled}
    enabled: list[PluginRef] = []
    if api_version == catalog.V1BETA1:
        if "*" not in disabled_names:
            enabled = [PluginRef(p.name, p.weight) for p in default if p.name not in disabled_names]
        enabled += [PluginRef(p.name, p.weight) for p in custom.enabled]
        return PluginSet(enabled=enabled)
    by_name: dict[str, tuple[int, PluginRef]] = {}
    for k, p in enumerate(custom.enabled):
        by_name[p.name] = (k, p)  # a name given twice: the last one replaces the default
    replaced: set[int] = set()
    if "*" not in disabled_names:
        for p in default:
            if p.name in disabled_names:
                continue
            if p.name in by_name:
                k, user = by_name[p.name]
                enabled.append(PluginRef(user.name, user.weight))
                replaced.add(k)
            else:
                enabled.append(PluginRef(p.name, p.weight))
    enabled += [PluginRef(p.name, p.weight) for k, p in enumerate(custom.enabled) if k not in replaced]
    if api_version == catalog.V1BETA2:
        return PluginSet(enabled=enabled)
    return PluginSet(enabled=enabled, disabled=[PluginRef(p.name) for p in custom.disabled])


def _profile(ctx: _Context, raw: object, path: str, single: bool) -> Profile:
    r = ctx.reader
    v = ctx.api_version
    data = r.fields(raw, path, PROFILE_FIELDS[v])
    name_raw = data.get("schedulerName")
    # SetDefaults: only a single profile gets "default-scheduler"; validation requires the others' names.
    default_name = DEFAULT_SCHEDULER_NAME if single and name_raw is None else ""
    prof = Profile(scheduler_name=r.str(name_raw, child(path, "schedulerName"), default_name))
    if v == catalog.V1:
        prof.percentage_of_nodes_to_score = pluginargs.read_int(
            r, data.get("percentageOfNodesToScore"), child(path, "percentageOfNodesToScore")
        )
        if data.get("percentageOfPlacementsToScore") is not None:
            ctx.warnings.append(
                f"{child(path, 'percentageOfPlacementsToScore')} applies to pod-group scheduling only; "
                "packsched ignores it"
            )
    pp = child(path, "plugins")
    user, user_enabled = _user_plugins(ctx, data.get("plugins"), pp)
    merged = _merge_with_defaults(ctx, user)
    prof.omitted_default_plugins = _leave_out_unimplemented(ctx, merged, user_enabled)
    prof.plugins = merged
    _check_duplicates(ctx, prof, pp)

    _plugin_config(ctx, prof, data.get("pluginConfig"), path)
    return prof


def _user_plugins(ctx: _Context, raw: object, pp: str) -> tuple[dict[str, _UserSet], set[str]]:
    """The plugins the user names, per point, before merging; and every plugin name the user enables."""
    r = ctx.reader
    v = ctx.api_version
    known_points = PLUGIN_POINTS[v] + (_PLACEMENT_POINTS if v == catalog.V1 else ())
    plugins_raw = r.fields(raw, pp, known_points)
    user: dict[str, _UserSet] = {}
    user_enabled: set[str] = set()
    for point in known_points:
        if point not in plugins_raw:
            continue
        sp = child(pp, point)
        uset = _decode_plugin_set(ctx, plugins_raw[point], sp)
        if point in _PLACEMENT_POINTS:
            if uset.enabled:
                ctx.add(sp, f"extension point {point} (pod-group scheduling) is not supported by packsched")
            elif uset.disabled and point == "podGroupPostFilter":
                # packsched runs the pod-group hook of the profile's PostFilter plugins (podgroup_placement.py)
                ctx.add(sp, "disabling plugins at podGroupPostFilter is not supported by packsched")
            continue
        user[point] = uset
        for k, ref in enumerate(uset.enabled):
            user_enabled.add(ref.name)
            _check_user_enabled(ctx, point, ref.name, index(child(sp, "enabled"), k))
    # Upstream's v1beta2/v1beta3 mergePlugins never copies preEnqueue: what the user wrote there is lost.
    pre_enqueue = user.pop("preEnqueue", None) if v in (catalog.V1BETA2, catalog.V1BETA3) else None
    if pre_enqueue is not None and pre_enqueue.enabled:
        version = v.rsplit("/", 1)[1]
        ctx.warnings.append(
            f"{child(pp, 'preEnqueue')}: kube-scheduler's {version} defaulting does not merge preEnqueue "
            "(mergePlugins skips it), so these plugins are ignored, as upstream does; use v1"
        )
    return user, user_enabled


def _check_user_enabled(ctx: _Context, point: str, name: str, path: str) -> None:
    ok = _check_user_plugin(ctx, name, path)
    if ok and ctx.api_version == catalog.V1BETA1 and point == "score" and name == "NodeResourcesFit":
        ctx.add(
            path,
            invalid(
                name,
                "NodeResourcesFit is not a score plugin in v1beta1 (kube-scheduler v1.19-v1.21): use "
                "NodeResourcesLeastAllocated, NodeResourcesMostAllocated or RequestedToCapacityRatio",
            ),
        )


def _merge_with_defaults(ctx: _Context, user: Mapping[str, _UserSet]) -> Plugins:
    """The user's plugin sets merged with the version's defaults."""
    v = ctx.api_version
    points = PLUGIN_POINTS[v]
    point_defaults, mp_default = _defaults(v, ctx.version)
    merged = Plugins()
    for point in EXTENSION_POINTS:
        if point not in points and point not in point_defaults:
            continue
        pset = merge_plugin_set(point_defaults.get(point, []), user.get(point), v)
        if pset.enabled or pset.disabled:
            merged.sets[point] = pset
    if "multiPoint" in points:
        merged.multi_point = merge_plugin_set(mp_default, user.get("multiPoint"), v)
    return merged


def _leave_out_unimplemented(ctx: _Context, merged: Plugins, user_enabled: Collection[str]) -> list[str]:
    """Default plugins packsched does not implement are left out of ``merged``; returns their names."""
    omitted: list[str] = []

    def keep(refs: list[PluginRef]) -> list[PluginRef]:
        out = []
        for ref in refs:
            if ref.name in ctx.known:
                out.append(ref)
            elif ref.name not in user_enabled and ref.name not in omitted:
                omitted.append(ref.name)
        return out

    for pset in merged.sets.values():
        pset.enabled = keep(pset.enabled)
    merged.sets = {p: s for p, s in merged.sets.items() if s.enabled or s.disabled}
    merged.multi_point.enabled = keep(merged.multi_point.enabled)
    return omitted


def _check_duplicates(ctx: _Context, prof: Profile, path: str) -> None:
    """A plugin registered twice at one point (possible after a v1beta1 merge, or a name given twice) makes
    the framework fail upstream; report it here with the framework's words."""
    for point, pset in prof.plugins.sets.items():
        seen: set[str] = set()
        for ref in pset.enabled:
            if ref.name in seen:
                ctx.add(
                    child(path, point),
                    f'plugin "{ref.name}" already registered as "{catalog.POINT_INTERFACE[point]}"',
                )
            seen.add(ref.name)
    seen_mp: set[str] = set()
    for ref in prof.plugins.multi_point.enabled:
        if ref.name in seen_mp:
            ctx.add(child(path, "multiPoint"), f'plugin "{ref.name}" already registered in multiPoint')
        seen_mp.add(ref.name)


def enabled_names(prof: Profile) -> list[str]:
    """Every plugin enabled at some extension point or in multiPoint, in first-seen order."""
    names: list[str] = []
    for pset in prof.plugins.sets.values():
        names += [p.name for p in pset.enabled]
    names += [p.name for p in prof.plugins.multi_point.enabled]
    return list(dict.fromkeys(names))


def _plugin_config(ctx: _Context, prof: Profile, raw: object, path: str) -> None:
    r = ctx.reader
    enabled = set(enabled_names(prof))
    seen: set[str] = set()
    cp = child(path, "pluginConfig")
    for j, item in enumerate(r.list(raw, cp)):
        _plugin_config_entry(ctx, prof, item, index(cp, j), enabled, seen)
    _default_missing_args(ctx, prof, enabled, cp)


def _plugin_config_entry(
    ctx: _Context, prof: Profile, item: object, jp: str, enabled: Collection[str], seen: set[str]
) -> None:
    """One pluginConfig entry: decoded, defaulted and validated; kept in the profile when packsched uses it."""
    r = ctx.reader
    v = ctx.api_version
    entry = r.fields(item, jp, ("name", "args"))
    name = r.str(entry.get("name"), child(jp, "name"))
    if not name:
        ctx.add(child(jp, "name"), required())
        return
    if name in seen:
        ctx.add(jp, duplicate(name))
    seen.add(name)
    rejected = catalog.rejected_plugin(v, name)
    if rejected:
        ctx.add(jp, invalid(name, rejected))
        return
    ap = child(jp, "args")
    typed = name in pluginargs.TYPED_ARGS[v]
    if v == catalog.V1BETA1 and name == "NodeResourcesBalancedAllocation" and entry.get("args"):
        ctx.warnings.append(
            f"{ap}: NodeResourcesBalancedAllocation took no args before v1beta2; they are ignored "
            "(cpu and memory are balanced)"
        )
    args = pluginargs.decode_plugin_args(r, name, entry.get("args"), ap, v)
    if not typed:
        if name not in enabled:
            ctx.warnings.append(f'{jp}: plugin "{name}" is not enabled in this profile; its args have no effect')
        own = name not in catalog.UPSTREAM_PLUGINS
        if name in ctx.known and own and isinstance(args, dict) and args:
            # packsched's own plugins (GPUShare, FGDScore, ...) read their args map themselves
            prof.plugin_config[name] = args
        return  # untyped args of upstream plugins (out-of-tree, or left out by packsched) are not used
    if isinstance(args, dict):
        return  # the args were not a map: a decoding error was recorded
    pluginargs.apply_defaults(name, args, v, ctx.version)
    ctx.extend(pluginargs.validate_plugin_args(name, args, ap, v, ctx.version))
    if name not in enabled:
        ctx.warnings.append(f'{jp}: plugin "{name}" is not enabled in this profile; its args have no effect')
    if name in ctx.known:
        prof.plugin_config[name] = args


def _default_missing_args(ctx: _Context, prof: Profile, enabled: Collection[str], cp: str) -> None:
    """Defaulted args for every enabled plugin that has typed args and was given none."""
    v = ctx.api_version
    for name in sorted(enabled):
        if name in prof.plugin_config:
            continue
        args = pluginargs.default_args(name, v, ctx.version)
        if args is None:
            continue
        if v == catalog.V1BETA1 and name == "RequestedToCapacityRatio":
            msg = pluginargs.validate_plugin_args(name, args, cp, v, ctx.version)
            for e in msg:
                ctx.add(cp, f"plugin RequestedToCapacityRatio needs args: {e.message}")
        prof.plugin_config[name] = args


# -- validation ----------------------------------------------------------------------------------------------


def validate_configuration(cfg: KubeSchedulerConfiguration, ctx: _Context) -> None:
    """ValidateKubeSchedulerConfiguration (the parts that matter off a live cluster)."""
    v = ctx.api_version
    if v != catalog.V1BETA1 and cfg.parallelism <= 0:
        ctx.add("parallelism", invalid(cfg.parallelism, "should be an integer value greater than zero"))
    if not cfg.profiles:
        ctx.add("profiles", required())
    names: dict[str, int] = {}
    for i, prof in enumerate(cfg.profiles):
        path = f"profiles[{i}]"
        if not prof.scheduler_name:
            ctx.add(child(path, "schedulerName"), required())
        elif prof.scheduler_name in names:
            # Upstream's bad value is the earlier profile's path; the name itself reads better.
            ctx.add(child(path, "schedulerName"), duplicate(prof.scheduler_name))
        else:
            names[prof.scheduler_name] = i
        _validate_percentage(ctx, child(path, "percentageOfNodesToScore"), prof.percentage_of_nodes_to_score)
        _validate_score_weights(ctx, prof, child(path, "plugins"))
    if cfg.profiles:
        _validate_common_queue_sort(ctx, cfg.profiles)
    _validate_percentage(ctx, "percentageOfNodesToScore", cfg.percentage_of_nodes_to_score)
    if cfg.pod_initial_backoff_seconds <= 0:
        ctx.add("podInitialBackoffSeconds", invalid(cfg.pod_initial_backoff_seconds, "must be greater than 0"))
    if cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds:
        ctx.add(
            "podMaxBackoffSeconds",
            invalid(cfg.pod_max_backoff_seconds, "must be greater than or equal to PodInitialBackoffSeconds"),
        )


def _validate_percentage(ctx: _Context, path: str, value: int | None) -> None:
    if value is not None and not 0 <= value <= 100:
        ctx.add(path, invalid(value, "not in valid range [0-100]"))


def _validate_score_weights(ctx: _Context, prof: Profile, path: str) -> None:
    """The framework's overflow check: the sum over score plugins of weight x MaxNodeScore must fit in
    int64."""
    total = 0
    seen: set[str] = set()
    score = prof.plugins.sets.get("score", PluginSet())
    for ref in [*score.enabled, *prof.plugins.multi_point.enabled]:
        if ref.name in seen or ref.name not in catalog.SCORE_PLUGINS:
            continue
        seen.add(ref.name)
        weight = ref.weight or 1
        if weight * catalog.MAX_NODE_SCORE > catalog.MAX_TOTAL_SCORE - total:
            ctx.add(path, "total score of Score plugins could overflow")
            return
        total += weight * catalog.MAX_NODE_SCORE


def _describe(pset: PluginSet) -> str:
    enabled = ", ".join(f"{p.name}" + (f"/{p.weight}" if p.weight else "") for p in pset.enabled)
    disabled = ", ".join(p.name for p in pset.disabled)
    return f"enabled=[{enabled}] disabled=[{disabled}]"


def _validate_common_queue_sort(ctx: _Context, profiles: list[Profile]) -> None:
    newest = ctx.api_version in (catalog.V1, catalog.V1BETA3)
    set_msg = "must be the same for all profiles" if newest else "has to match for all profiles"
    args_msg = "queueSort must be the same for all profiles" if newest else "has to match for all profiles"
    canon = profiles[0].plugins.sets.get("queueSort", PluginSet())
    name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        ctx.add(
            "profiles[0].plugins.queueSort.Enabled",
            invalid(len(canon.enabled), "only one queue sort plugin can be enabled"),
        )
    canon_args = profiles[0].plugin_config.get(name) if name else None
    for i in range(1, len(profiles)):
        cur = profiles[i].plugins.sets.get("queueSort", PluginSet())
        if _describe(cur) != _describe(canon):
            ctx.add(f"profiles[{i}].plugins.queueSort", invalid(_describe(cur), set_msg))
        if name and name in profiles[i].plugin_config and profiles[i].plugin_config[name] != canon_args:
            ctx.add(f"profiles[{i}].pluginConfig.args", invalid(str(profiles[i].plugin_config[name]), args_msg))
