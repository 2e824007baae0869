"""Lists and maps nested too deeply to read, found before a parser recurses into them.

libyaml's composer (PyYAML's C loader) recurses once per level of nesting in C: some tens of thousands of levels
(``[[[[...`` or ``- - - -``) overflow the stack and kill the process, where no Python exception can be caught.
The pure-Python loaders and ``json`` raise RecursionError instead. Either way the file is reported with
:data:`TOO_DEEP`, as one input error.
"""

from __future__ import annotations

from typing import Any

import yaml

try:  # libyaml's parser and composer: many times faster than PyYAML's pure-Python ones on a big file
    SAFE_LOADER: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - a PyYAML built without libyaml
    SAFE_LOADER = yaml.SafeLoader

MAX_NESTING = 999  # libyaml (PyYAML 6.0.4 and later) refuses 1000 levels itself
TOO_DEEP = "nesting too deep: too many levels of lists and maps inside each other"


def yaml_too_deep(text: str, loader: Any, limit: int = MAX_NESTING) -> bool:
    """Whether a YAML stream nests lists and maps more than ``limit`` levels deep (a syntax error: False, the
    loader reports it).

    Cheap for ordinary files. A flow collection opens with its own ``[`` or ``{``. A block collection starts
    further right than its parent, or at the same column only as a sequence that is a map's value: two levels
    per column at most. So the depth is at most the number of ``[`` and ``{`` plus twice the longest line (plus a
    margin), and only where that bound passes ``limit`` are the parser's events counted (libyaml's parser keeps
    its own stack: it does not recurse)."""
    flow = text.count("[") + text.count("{")
    if flow + 4 <= limit and flow + 2 * max(map(len, text.split("\n"))) + 4 <= limit:
        return False
    depth = 0
    opens = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    closes = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, opens):
                depth += 1
                if depth > limit:
                    return True
            elif isinstance(event, closes):
                depth -= 1
    except yaml.YAMLError as exc:
        # PyYAML 6.0.4 and later: libyaml itself refuses to nest deeper than its own limit
        return "maximum nesting depth" in str(exc)
    return False
