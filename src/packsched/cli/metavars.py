"""What ``--help`` shows for each option's value. Typer (0.2x) shows the Python type (``<list[Path]>``, ``<str>``,
and ``<bool>`` beside a flag that takes no value); packsched's help shows what Unix tools and kube-scheduler show
instead: PATH, N, NUMBER, TEXT, the choices, and nothing for a flag. An explicit metavar (``FILE``) is kept."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typer carries its own click: the package is not imported at run time
    import click

# Typer's type label (inside <...>) -> the metavar shown; a list shows its element's.
_BY_LABEL = {"int": "N", "float": "NUMBER", "str": "TEXT", "path": "PATH", "Path": "PATH", "bool": ""}


def metavar_for(label: str | None) -> str | None:
    """``<list[Path]>`` -> ``PATH``, ``<int>`` -> ``N``, ``<bool>`` -> ``''``; a label of another form as it is."""
    if label is None:
        return None
    m = re.fullmatch(r"<(?:list\[)?([^\]>]*)\]?>", label)
    if m is None:
        return label
    inner = m.group(1)
    return _BY_LABEL.get(inner, inner.upper())


def install() -> None:
    """Wrap typer's help type display (when this typer has one) so that it shows metavars. Idempotent."""
    try:
        from typer.core import TyperArgument, TyperOption
    except ImportError:  # pragma: no cover - an older typer shows click's metavars already
        return
    for cls in (TyperOption, TyperArgument):
        original = getattr(cls, "display_type_rich", None)
        if original is None or getattr(original, "_packsched", False):
            continue

        def display(self: Any, ctx: click.Context, _original: Any = original) -> str | None:
            if getattr(self, "is_flag", False) and self.metavar is None:
                return None
            shown = _original(self, ctx)
            return shown if self.metavar is not None else metavar_for(shown)

        display._packsched = True  # type: ignore[attr-defined]
        cls.display_type_rich = display  # type: ignore[method-assign,assignment]
    usage = getattr(TyperArgument, "_usage_display_name", None)
    if usage is not None and not getattr(usage, "_packsched", False):
        # typer 0.2x writes a required argument as {data_dir} in the usage line; Unix tools (and docs/reference/cli.md)
        # write DATA_DIR, an optional one [DATA_DIR], several PATHS...
        def usage_name(self: Any) -> str:
            name = str(self.metavar or self.name).upper()
            name = name if self.required else f"[{name}]"
            return name if self.nargs == 1 else f"{name}..."

        usage_name._packsched = True  # type: ignore[attr-defined]
        TyperArgument._usage_display_name = usage_name  # type: ignore[method-assign]
    hint = getattr(TyperArgument, "get_error_hint", None)
    if hint is not None and not getattr(hint, "_packsched", False):
        # and its error names the argument as the usage line does: "Missing argument 'DATA_DIR'." (typer: 'data_dir')
        def error_hint(self: Any, *_ctx: Any) -> str:
            return f"'{str(self.metavar or self.name).upper()}'"

        error_hint._packsched = True  # type: ignore[attr-defined]
        TyperArgument.get_error_hint = error_hint  # type: ignore[method-assign]
