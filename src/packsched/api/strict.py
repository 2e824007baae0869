"""Strict reading of YAML and JSON files, shared by the manifest reader and the scheduler configuration reader.

A key given twice in one map is an error (kube-apiserver's strict decoding rejects it too), and so are a file that
cannot be read, text that is not UTF-8, a syntax error (with its line and column) and nesting too deep to parse.
Every problem is recorded in an :class:`ErrorList`; nothing here raises for bad input.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import yaml

from packsched.api.errors import ErrorList
from packsched.api.files import read_text
from packsched.api.nesting import SAFE_LOADER, TOO_DEEP, yaml_too_deep

# Where a duplicate key is reported: at its field path, in the message its line and column ("field": manifests),
# or at its line and column ("line": configuration files).
DuplicateAt = Literal["field", "line"]


class DuplicateKey(Exception):
    """A key written twice in one map: ``where`` is the field path of the second one (set only when the loader was
    asked to locate it), ``line`` and ``column`` count from 1 (0: unknown, as in JSON)."""

    def __init__(self, key: str, line: int = 0, column: int = 0, node: yaml.Node | None = None) -> None:
        super().__init__(key)
        self.key, self.line, self.column, self.node = key, line, column, node
        self.where = ""

    @property
    def message(self) -> str:
        at = f" (line {self.line} column {self.column})" if self.line else ""
        return f'duplicate field "{self.key}"{at}: a key may appear only once in a map'


class StrictLoader(SAFE_LOADER):  # type: ignore[misc]
    """The safe loader (libyaml's where PyYAML has it), rejecting a key given twice in one map."""


def _construct_map(loader: Any, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            if key in seen:
                mark = key_node.start_mark
                raise DuplicateKey(str(key), mark.line + 1, mark.column + 1, key_node)
            seen.add(key)
        except TypeError:  # an unhashable key: let the normal constructor complain
            break
    mapping: dict[Any, Any] = loader.construct_mapping(node, deep=True)
    return mapping


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_map)


def _node_path(node: yaml.Node, target: yaml.Node, path: str, seen: set[int]) -> str | None:
    """The field path from ``node`` to the key node ``target`` (``spec.containers[0].name``)."""
    if id(node) in seen:  # an alias seen before
        return None
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else "?"
            here = f"{path}.{key}" if path else str(key)
            if key_node is target:
                return here
            found = _node_path(value_node, target, here, seen)
            if found is not None:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            found = _node_path(item, target, f"{path}[{i}]", seen)
            if found is not None:
                return found
    return None


def load_yaml(text: str, *, locate: bool = True) -> list[Any]:
    """Every document of a YAML stream (``None`` for an empty one). Raises ``DuplicateKey`` at the first key given
    twice; with ``locate``, its ``where`` names the document (when there are several) and the field path."""
    loader = StrictLoader(text)
    docs: list[Any] = []
    try:
        while loader.check_node():
            root = loader.get_node()
            try:
                docs.append(loader.construct_document(root))
            except DuplicateKey as exc:
                if locate:
                    path = (_node_path(root, exc.node, "", set()) if exc.node is not None else None) or exc.key
                    label = f"document {len(docs) + 1}" if docs or loader.check_node() else ""
                    exc.where = f"{label}: {path}" if label else path
                raise
    finally:
        loader.dispose()
    return docs


def _object_path(data: Any, target: object, path: str) -> str | None:
    if data is target:
        return path
    if isinstance(data, dict):
        for key, value in data.items():
            found = _object_path(value, target, f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
    elif isinstance(data, list):
        for i, item in enumerate(data):
            found = _object_path(item, target, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def load_json(text: str, *, locate: bool = True) -> Any:
    """One JSON document. Raises ``DuplicateKey`` for a key given twice in an object: with ``locate``, once the
    whole text is parsed (a syntax error later on wins), with the field path in ``where``; without, at once."""
    duplicates: list[tuple[str, dict[str, Any]]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                if not locate:
                    raise DuplicateKey(key)
                if not duplicates:
                    duplicates.append((key, out))
            out[key] = value
        return out

    doc = json.loads(text, object_pairs_hook=pairs)
    if duplicates:
        key, holder = duplicates[0]
        parent = _object_path(doc, holder, "")
        exc = DuplicateKey(key)
        exc.where = f"{parent}.{key}" if parent else key
        raise exc
    return doc


def read_file(path: str, errors: ErrorList) -> str | None:
    """The text of ``path`` (``-``: standard input), or None with the problem recorded."""
    try:
        return read_text(path)
    except OSError as exc:
        errors.add("", f"cannot read file: {exc.strerror or exc}")
    except UnicodeDecodeError:
        errors.add("", "file is not UTF-8 text")
    return None


def parse_documents(text: str, path: str, errors: ErrorList, *, duplicate_at: DuplicateAt) -> list[Any] | None:
    """The documents of ``text`` (JSON when ``path`` ends in .json: one document; else YAML, ``None`` for an empty
    document), or None with the problem recorded: a syntax error at its line and column, a duplicate key where
    ``duplicate_at`` says."""
    locate = duplicate_at == "field"
    try:
        if path.endswith(".json"):
            return [load_json(text, locate=locate)]
        if yaml_too_deep(text, SAFE_LOADER):
            errors.add("", TOO_DEEP)  # libyaml's composer would overflow the C stack
            return None
        return load_yaml(text, locate=locate)
    except RecursionError:
        errors.add("", TOO_DEEP)
    except json.JSONDecodeError as exc:
        errors.add(f"line {exc.lineno} column {exc.colno}", f"malformed JSON: {exc.msg}")
    except DuplicateKey as exc:
        if locate:
            errors.add(exc.where, exc.message)
        else:
            errors.add(f"line {exc.line} column {exc.column}" if exc.line else "", f'duplicate field "{exc.key}"')
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        errors.add(where, f"malformed YAML: {problem}")
    return None
