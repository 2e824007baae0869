"""Load a scheduler configuration file: KubeSchedulerConfiguration (v1, v1beta3, v1beta2, v1beta1) or the
legacy Policy, from YAML or JSON, into the internal types. Every problem is collected with the file and its
field path; ``InputError`` is raised at the end if there is any."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

import yaml

from packsched.api.errors import ErrorList, InputError
from packsched.config import catalog
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

POLICY_API_VERSIONS = ("v1", catalog.V1)
_ACCEPTED = (
    "kind KubeSchedulerConfiguration with apiVersion kubescheduler.config.k8s.io/v1, v1beta3, v1beta2 or "
    "v1beta1, or the legacy kind Policy with apiVersion v1"
)


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int, column: int) -> None:
        super().__init__(key)
        self.key, self.line, self.column = key, line, column


class _StrictLoader(yaml.SafeLoader):
    """A safe loader that rejects a key given twice in one map (upstream's strict decoding does too)."""


def _construct_map(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            if key in seen:
                mark = key_node.start_mark
                raise _DuplicateKey(str(key), mark.line + 1, mark.column + 1)
            seen.add(key)
        except TypeError:  # an unhashable key: let the normal constructor complain
            break
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_map)


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key, 0, 0)
        out[key] = value
    return out


def read_config_file(path: str, errors: ErrorList) -> object:
    """The one document of a config file (YAML or JSON); problems are recorded with line and column."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        errors.add("", f"cannot read file: {exc.strerror or exc}")
        return None
    except UnicodeDecodeError:
        errors.add("", "file is not UTF-8 text")
        return None
    try:
        if path.endswith(".json"):
            docs: list[Any] = [json.loads(text, object_pairs_hook=_json_pairs)]
        else:
            docs = [d for d in yaml.load_all(text, Loader=_StrictLoader) if d is not None]
    except json.JSONDecodeError as exc:
        errors.add(f"line {exc.lineno} column {exc.colno}", f"malformed JSON: {exc.msg}")
        return None
    except _DuplicateKey as exc:
        where = f"line {exc.line} column {exc.column}" if exc.line else ""
        errors.add(where, f'duplicate field "{exc.key}"')
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        errors.add(where, f"malformed YAML: {problem}")
        return None
    if not docs:
        errors.add("", f"the file is empty: expected {_ACCEPTED}")
        return None
    if len(docs) > 1:
        errors.add("", f"a configuration file holds one document, this one has {len(docs)}")
        return None
    return docs[0]


def _check_semantics(rtcr_semantics: str) -> None:
    if rtcr_semantics not in RTCR_SEMANTICS:
        raise ValueError(f"rtcr_semantics must be one of {', '.join(RTCR_SEMANTICS)}, got {rtcr_semantics!r}")


def _dispatch(
    data: object, errors: ErrorList, known: Collection[str], rtcr_semantics: str
) -> KubeSchedulerConfiguration | None:
    if not isinstance(data, Mapping):
        errors.add("", f"a configuration must be a map with kind and apiVersion: expected {_ACCEPTED}")
        return None
    kind, api_version = data.get("kind"), data.get("apiVersion")
    if kind == "KubeSchedulerConfiguration" and api_version in catalog.API_VERSIONS:
        return convert(data, str(api_version), known, errors)
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


def load_config_data(
    data: object, file: str, known_plugins: Collection[str], *, rtcr_semantics: str = SEMANTICS_CURRENT
) -> KubeSchedulerConfiguration:
    """An already-decoded YAML/JSON document -> the internal configuration (raises ``InputError``)."""
    _check_semantics(rtcr_semantics)
    errors = ErrorList(file=file)
    cfg = _dispatch(data, errors, frozenset(known_plugins), rtcr_semantics)
    if errors or cfg is None:
        raise InputError(list(errors.items))
    for strategy in _strategies(cfg):
        if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
            strategy.semantics = rtcr_semantics
    cfg.source_file = file
    return cfg


def load_config(
    path: str, known_plugins: Collection[str], *, rtcr_semantics: str = SEMANTICS_CURRENT
) -> KubeSchedulerConfiguration:
    """Read a KubeSchedulerConfiguration or Policy file (YAML or JSON) -> the internal configuration."""
    _check_semantics(rtcr_semantics)
    errors = ErrorList(file=path)
    data = read_config_file(path, errors)
    if errors:
        raise InputError(list(errors.items))
    return load_config_data(data, path, known_plugins, rtcr_semantics=rtcr_semantics)


def default_config(known_plugins: Collection[str]) -> KubeSchedulerConfiguration:
    """What kube-scheduler runs without a config file: the v1 defaults (unimplemented plugins left out)."""
    errors = ErrorList()
    cfg = convert(
        {"apiVersion": catalog.V1, "kind": "KubeSchedulerConfiguration"},
        catalog.V1,
        frozenset(known_plugins),
        errors,
    )
    errors.raise_if_any()
    cfg.source_version = "default"
    return cfg
