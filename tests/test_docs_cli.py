"""docs/reference/cli.md against the real command line: every command has a section, every option of a command is
named in its section, and every option a section names exists (typer's click objects, not --help text; typer
bundles its own click, so options are told apart by their ``param_type_name``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer

from packsched.cli.main import app

CLI_MD = Path(__file__).resolve().parents[1] / "docs" / "reference" / "cli.md"
GROUP: Any = typer.main.get_command(app)
COMMANDS: dict[str, Any] = dict(GROUP.commands)
HELP = {"--help", "-h"}
LONG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
SHORT = re.compile(r"(?<![\w-])-[a-zA-Z](?![\w-])")


def option_names(params: list[Any]) -> set[str]:
    names: set[str] = set()
    for p in params:
        if p.param_type_name == "option":
            names.update(p.opts, p.secondary_opts)
    return names - HELP


def sections() -> tuple[str, dict[str, str]]:
    """The text before the first ``## `` heading, and each section by heading (its heading line included)."""
    text = CLI_MD.read_text(encoding="utf-8")
    parts = re.split(r"^(?=## )", text, flags=re.M)
    return parts[0], {part.splitlines()[0]: part for part in parts[1:]}


def command_sections() -> dict[str, str]:
    out: dict[str, str] = {}
    for heading, body in sections()[1].items():
        m = re.match(r"## `packsched ([a-z-]+)", heading)
        if m:
            assert m.group(1) not in out, f"two sections for packsched {m.group(1)}"
            out[m.group(1)] = body
    return out


def mentioned(text: str) -> set[str]:
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets (#--kube-version-1n) are not options
    text = text.replace("python -m ", "python ")  # python's own option
    return set(LONG.findall(text)) | set(SHORT.findall(text))


def named(option: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def test_every_command_has_a_section_and_every_section_a_command() -> None:
    documented = command_sections()
    assert sorted(documented) == sorted(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_is_documented_under_its_command(command: str) -> None:
    body = command_sections().get(command, "")
    missing = sorted(o for o in option_names(COMMANDS[command].params) if not named(o, body))
    assert not missing, f"docs/reference/cli.md, packsched {command}: options not described: {missing}"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_a_section_names_exists(command: str) -> None:
    body = command_sections().get(command, "")
    unknown = sorted(
        option
        for option in mentioned(body) - option_names(COMMANDS[command].params) - HELP
        # another command's option, named with it (`serve --record`)
        if not any(
            named(f"{other} {option}", body) and option in option_names(c.params) for other, c in COMMANDS.items()
        )
    )
    assert not unknown, f"docs/reference/cli.md, packsched {command}: no such option: {unknown}"


def test_global_options_and_shared_sections() -> None:
    intro, by_heading = sections()
    for option in option_names(GROUP.params) | HELP:
        assert named(option, intro), f"{option} is not described before the first command"
    every = set().union(*(option_names(c.params) for c in COMMANDS.values())) | HELP | option_names(GROUP.params)
    assert not mentioned(intro) - every
    shared = {h: b for h, b in by_heading.items() if not h.startswith("## `packsched ")}
    assert shared, "the sections on options shared by several commands are gone"
    for heading, body in shared.items():
        assert not mentioned(body) - every, f"{heading}: no such option: {sorted(mentioned(body) - every)}"
