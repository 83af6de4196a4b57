"""CI recipes use the current CLI exactly, and the pre-commit hook works under the real pre-commit.

The Action's own tests are in tests/test_action.py."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from scanner.cli.commands import main
from tests.conftest import ROOT

RECIPES = sorted((ROOT / "docs" / "ci").glob("*.yml"))


SHELL_KEYS = ("run", "script", "inlineScript", "entry")


def _strings(node: Any, keys: tuple[str, ...] | None = None) -> list[str]:
    """String values in a YAML document; only those under ``keys`` when given (shell snippets)."""
    if isinstance(node, dict):
        return [
            s
            for key, value in node.items()
            for s in ([value] if isinstance(value, str) and (keys is None or key in keys) else _strings(value, keys))
        ]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value, keys)]
    return []


def azai_commands(text: str) -> list[list[str]]:
    """Every ``azai ...`` command line in a shell snippet, as words, up to a shell operator."""
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        for start in (i for i, w in enumerate(words) if w == "azai"):
            command = []
            for word in words[start:]:
                if word in ("|", "||", "&&", ";", ">", ">>", "2>", "<"):
                    break
                command.append(word)
            commands.append(command)
    return commands


def check_command(words: list[str]) -> None:
    """Parse a command line with the real CLI definition; unknown options or values raise."""
    assert words[0] == "azai" and len(words) > 1, words
    parent = main.make_context("azai", [], resilient_parsing=True)
    command = main.get_command(parent, words[1])
    assert command is not None, f"no command {words[1]!r}"
    command.make_context(words[1], words[2:], parent=parent)


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.name)
def test_every_recipe_uses_the_current_cli(recipe: Path) -> None:
    document = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    commands = [c for s in _strings(document, SHELL_KEYS) for c in azai_commands(s)]
    uses_action = any("azai@" in s for s in _strings(document))
    assert commands or uses_action, f"{recipe.name} runs azai neither directly nor through the Action"
    for command in commands:
        check_command(command)


def test_pre_commit_hook_entry_parses() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    for hook in hooks:
        check_command([*shlex.split(hook["entry"]), "plan.json"])


def test_a_stale_option_is_caught() -> None:
    with pytest.raises(click.UsageError):
        check_command(["azai", "scan", "--no-such-option", "plan.json"])
    with pytest.raises(click.BadParameter):
        check_command(["azai", "scan", "--format", "yaml", "plan.json"])
