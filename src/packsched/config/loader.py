"""Load a scheduler configuration file: KubeSchedulerConfiguration (v1, v1beta3, v1beta2, v1beta1) or the
legacy Policy, from YAML or JSON, into the internal types. Every problem is collected with the file and its
field path; ``InputError`` is raised at the end if there is any."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping

import yaml

from packsched.api.errors import ErrorList, FieldError, InputError
from packsched.api.files import display_name, read_text
from packsched.api.nesting import SAFE_LOADER, yaml_too_deep
from packsched.api.strict import parse_documents, read_file
from packsched.config import catalog, features
from packsched.config.componentconfig import convert
from packsched.config.policy import convert_policy
from packsched.config.types import (
    REQUESTED_TO_CAPACITY_RATIO,
    RTCR_SEMANTICS,
    SEMANTICS_CURRENT,
    KubeSchedulerConfiguration,
    NodeResourcesFitArgs,
    ScoreOnlyResourceArgs,
    ScoringStrategy,
)
from packsched.config.versions import DEFAULT as DEFAULT_KUBE_VERSION
from packsched.config.versions import FeatureGateError, KubeVersion, from_rtcr_semantics, parse_kube_version

POLICY_API_VERSIONS = ("v1", catalog.V1)
# packsched's own settings, as a second YAML document beside the KubeSchedulerConfiguration or Policy (kube-scheduler
# has no field for them; see docs/reference/config.md).
PACKSCHED_API_VERSION = "packsched.io/v1alpha1"
PACKSCHED_KIND = "PackschedConfiguration"
_PACKSCHED_FIELDS = ("apiVersion", "kind", "kubeVersion", "featureGates")
# Where a problem with a gate given on the command line is reported.
FEATURE_GATES_OPTION = "--feature-gates"
_GATES_FIELD = f"{PACKSCHED_KIND}.featureGates"
_ACCEPTED = (
    "kind KubeSchedulerConfiguration with apiVersion kubescheduler.config.k8s.io/v1, v1beta3, v1beta2 or "
    "v1beta1, or the legacy kind Policy with apiVersion v1"
)


def read_config_file(path: str, errors: ErrorList) -> object:
    """The one document of a config file (YAML or JSON); problems are recorded with line and column."""
    text = read_file(path, errors)
    if text is None:
        return None
    docs = parse_documents(text, path, errors, duplicate_at="line")
    if docs is None:
        return None
    if not path.endswith(".json"):  # an empty YAML document holds nothing (JSON's null is a document)
        docs = [d for d in docs if d is not None]
    if not docs:
        errors.add("", f"the file is empty: expected {_ACCEPTED}")
        return None
    settings = [d for d in docs if _is_settings(d)]
    if len(docs) > 1 and not (len(docs) == 2 and len(settings) == 1):
        errors.add(
            "",
            f"a configuration file holds one document (plus at most one {PACKSCHED_KIND}), this one has {len(docs)}",
        )
        return None
    return docs[0] if len(docs) == 1 else next(d for d in docs if not _is_settings(d))


def _is_settings(doc: object) -> bool:
    return isinstance(doc, Mapping) and doc.get("kind") == PACKSCHED_KIND


def read_settings(path: str, errors: ErrorList) -> tuple[KubeVersion | None, dict[str, bool]]:
    """The kube-scheduler version named by the file's PackschedConfiguration document (None without one) and the
    feature gates it sets (``featureGates``: gate name -> true or false)."""
    try:
        text = read_text(path)
        if path.endswith(".json") or yaml_too_deep(text, SAFE_LOADER):
            return None, {}
        docs = [d for d in yaml.load_all(text, Loader=SAFE_LOADER) if _is_settings(d)]
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return None, {}  # read_config_file reports these
    if not docs:
        return None, {}
    doc = docs[0]
    where = f"{PACKSCHED_KIND}."
    for key in doc:
        if key not in _PACKSCHED_FIELDS:
            errors.add(f"{where}{key}", f'unknown field "{key}"')
    if doc.get("apiVersion") != PACKSCHED_API_VERSION:
        errors.add(f"{where}apiVersion", f"must be {PACKSCHED_API_VERSION}, got {json.dumps(doc.get('apiVersion'))}")
    gates = _read_gates(doc.get("featureGates"), errors)
    raw = doc.get("kubeVersion")
    if raw is None:
        return None, gates
    try:
        return parse_kube_version(str(raw)), gates
    except ValueError as exc:
        errors.add(f"{where}kubeVersion", str(exc))
        return None, gates


def _read_gates(raw: object, errors: ErrorList) -> dict[str, bool]:
    """``featureGates``: a map of gate name to a boolean (YAML's true / false)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        errors.add(_GATES_FIELD, "must be a map of feature gate names to true or false")
        return {}
    out: dict[str, bool] = {}
    for name, value in raw.items():
        if not isinstance(value, bool):
            errors.add(f"{_GATES_FIELD}.{name}", f"must be true or false, got {json.dumps(value, default=str)}")
            continue
        out[str(name)] = value
    return out


def apply_feature_gates(
    version: KubeVersion,
    from_file: Mapping[str, bool],
    from_command_line: Mapping[str, bool],
    file: str = "",
) -> KubeVersion:
    """``version`` with the gates of the config file's PackschedConfiguration, then those of ``--feature-gates``
    (which win gate by gate). Raises ``InputError`` naming each gate the release refuses, where it was given
    (``--feature-gates``, or the file's ``PackschedConfiguration.featureGates.<gate>``)."""
    merged = dict(from_file) | dict(from_command_line)
    if not merged:
        return version
    try:
        return version.with_gates(merged)
    except FeatureGateError as exc:
        errors: list[FieldError] = []
        for gate, message in exc.problems:
            # a dependency problem involves the gate and those it depends on: blame the command line if it set any
            depends = features.GATES[gate].depends if gate in features.GATES and "depends on" in message else ()
            related = (gate, *depends)
            involved = [g for g in related if g in merged]
            if message.startswith("unrecognized"):
                known = ", ".join(features.known_in(version.minor)) or "none"
                message += f" (the gates packsched models in kube-scheduler {version}: {known})"
            if any(g in from_command_line for g in involved):
                errors.append(FieldError(FEATURE_GATES_OPTION, message))
            else:
                field = gate if gate in merged else next(iter(involved), gate)
                errors.append(FieldError(f"{_GATES_FIELD}.{field}", message, file))
        raise InputError(errors) from None


def _check_semantics(rtcr_semantics: str) -> None:
    if rtcr_semantics not in RTCR_SEMANTICS:
        raise ValueError(f"rtcr_semantics must be one of {', '.join(RTCR_SEMANTICS)}, got {rtcr_semantics!r}")


def _dispatch(
    data: object, errors: ErrorList, known: Collection[str], rtcr_semantics: str, version: KubeVersion
) -> KubeSchedulerConfiguration | None:
    if not isinstance(data, Mapping):
        errors.add("", f"a configuration must be a map with kind and apiVersion: expected {_ACCEPTED}")
        return None
    kind, api_version = data.get("kind"), data.get("apiVersion")
    if kind == "KubeSchedulerConfiguration" and api_version in catalog.API_VERSIONS:
        return convert(data, str(api_version), known, errors, version)
    if kind == "Policy" and api_version in POLICY_API_VERSIONS:
        return convert_policy(data, known, errors, rtcr_semantics)
    where = "apiVersion" if kind in ("KubeSchedulerConfiguration", "Policy") else "kind"
    shown = f"kind {json.dumps(kind)}, apiVersion {json.dumps(api_version)}"
    errors.add(where, f"unsupported configuration ({shown}): expected {_ACCEPTED}")
    return None


def _strategies(cfg: KubeSchedulerConfiguration) -> list[ScoringStrategy]:
    out: list[ScoringStrategy] = []
    for prof in cfg.profiles:
        for args in prof.plugin_config.values():
            strategy = args.scoring_strategy if isinstance(args, NodeResourcesFitArgs | ScoreOnlyResourceArgs) else None
            if strategy is not None:
                out.append(strategy)
    return out


def resolve_version(kube_version: KubeVersion | None, rtcr_semantics: str) -> KubeVersion:
    """The version to imitate: ``kube_version`` when given, else the one the ``--rtcr-semantics`` alias names,
    else the newest. Raises ValueError when both are given and disagree on RequestedToCapacityRatio."""
    _check_semantics(rtcr_semantics)
    alias = from_rtcr_semantics(rtcr_semantics)
    if kube_version is None:
        return alias or DEFAULT_KUBE_VERSION
    if rtcr_semantics != SEMANTICS_CURRENT and kube_version.rtcr_semantics != rtcr_semantics:
        raise ValueError(
            f"--rtcr-semantics {rtcr_semantics} (an alias of --kube-version {alias}) contradicts "
            f"--kube-version {kube_version}"
        )
    return kube_version


def load_config_data(
    data: object,
    file: str,
    known_plugins: Collection[str],
    *,
    rtcr_semantics: str = SEMANTICS_CURRENT,
    kube_version: KubeVersion | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    file_gates: Mapping[str, bool] | None = None,
) -> KubeSchedulerConfiguration:
    """An already-decoded YAML/JSON document -> the internal configuration (raises ``InputError``).
    ``kube_version`` (default: the newest, or what the ``rtcr_semantics`` alias names) selects the upstream
    release whose behaviour the configuration gets; ``feature_gates`` (``--feature-gates``) over ``file_gates``
    (the file's PackschedConfiguration) change its gates."""
    version = resolve_version(kube_version, rtcr_semantics)
    version = apply_feature_gates(version, file_gates or {}, feature_gates or {}, file)
    errors = ErrorList(file=file)
    cfg = _dispatch(data, errors, frozenset(known_plugins), version.rtcr_semantics, version)
    if errors or cfg is None:
        raise InputError(list(errors.items))
    for strategy in _strategies(cfg):
        if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            strategy.semantics = version.rtcr_semantics
    cfg.source_file = file
    cfg.kube_version = version
    return cfg


def load_config(
    path: str,
    known_plugins: Collection[str],
    *,
    rtcr_semantics: str = SEMANTICS_CURRENT,
    kube_version: KubeVersion | None = None,
    feature_gates: Mapping[str, bool] | None = None,
) -> KubeSchedulerConfiguration:
    """Read a KubeSchedulerConfiguration or Policy file (YAML or JSON) -> the internal configuration. A
    ``kube_version`` given here (the command line) wins over the file's PackschedConfiguration document, and
    ``feature_gates`` (``--feature-gates``) over its ``featureGates``, gate by gate."""
    _check_semantics(rtcr_semantics)
    errors = ErrorList(file=display_name(path))
    data = read_config_file(path, errors)
    from_file, file_gates = read_settings(path, errors) if not errors else (None, {})
    if errors:
        raise InputError(list(errors.items))
    if kube_version is None and rtcr_semantics == SEMANTICS_CURRENT:
        kube_version = from_file
    return load_config_data(
        data,
        display_name(path),
        known_plugins,
        rtcr_semantics=rtcr_semantics,
        kube_version=kube_version,
        feature_gates=feature_gates,
        file_gates=file_gates,
    )


def default_config(
    known_plugins: Collection[str],
    kube_version: KubeVersion | None = None,
    feature_gates: Mapping[str, bool] | None = None,
) -> KubeSchedulerConfiguration:
    """What kube-scheduler runs without a config file: the v1 defaults of ``kube_version`` (default: the
    newest) with ``feature_gates`` applied, unimplemented plugins left out."""
    errors = ErrorList()
    version = apply_feature_gates(kube_version or DEFAULT_KUBE_VERSION, {}, feature_gates or {})
    cfg = convert(
        {"apiVersion": catalog.V1, "kind": "KubeSchedulerConfiguration"},
        catalog.V1,
        frozenset(known_plugins),
        errors,
        version,
    )
    errors.raise_if_any()
    cfg.source_version = "default"
    cfg.kube_version = version
    return cfg
