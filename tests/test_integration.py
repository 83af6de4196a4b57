"""CI recipes use the current CLI exactly, and the pre-commit hook works under the real pre-commit.

The Action's own tests are in tests/test_action.py."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from scanner.cli.commands import main
from tests.conftest import FIXTURES, ROOT

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


def _pre_commit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real pre-commit, offline: a `repo: local` hook is this checkout's hook definition
    run with the installed azai (language: system), and nothing of the user's is read."""
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(repo.parent),
        "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-cache"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return subprocess.run(list(args), cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=False)


def _hook_repo(tmp_path: Path, extra_args: list[str]) -> Path:
    """A git repository holding a devcontainer.json with comments, a package.json and the demo
    plan, committed, with this checkout's hook configured."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    local = {key: hook[key] for key in ("id", "name", "entry", "files", "pass_filenames", "require_serial")}
    config = {"repos": [{"repo": "local", "hooks": [{**local, "language": "system", "args": extra_args}]}]}
    repo = tmp_path / "repo"
    (repo / ".devcontainer").mkdir(parents=True)
    (repo / "infra").mkdir()
    (repo / ".devcontainer" / "devcontainer.json").write_text(
        '{\n  // the dev container\n  "name": "app", /* pinned */\n'
        '  "image": "mcr.microsoft.com/devcontainers/python:3.12",\n}\n'
    )
    (repo / "package.json").write_text('{"name": "app", "version": "1.0.0", "private": true}\n')
    (repo / "infra" / "plan.json").write_bytes((FIXTURES / "demo" / "plan.json").read_bytes())
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    for command in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "init"]):
        done = _pre_commit(repo, *command)
        assert done.returncode == 0, done.stderr
    return repo


@pytest.mark.slow
def test_pre_commit_skips_non_iac_json_quietly_and_fails_only_on_the_plan(tmp_path: Path) -> None:
    done = _pre_commit(_hook_repo(tmp_path, []), "pre-commit", "run", "--all-files", "--color", "never")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert re.search(r"^azai \(AI workload checks\)\.+Failed$", output, re.M), output
    assert "1 input(s)" in output  # the plan alone was scanned
    skipped = [line for line in output.splitlines() if "skipped" in line]
    assert skipped == [
        "warning: skipped 2 file(s) that are not a plan, template or what-if result (--skip-unknown): "
        ".devcontainer/devcontainer.json, package.json"
    ]
    assert "invalid JSON" not in output and "error" not in output


@pytest.mark.slow
def test_pre_commit_passes_with_fail_on_none(tmp_path: Path) -> None:
    done = _pre_commit(_hook_repo(tmp_path, ["--fail-on", "none"]), "pre-commit", "run", "--all-files")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^azai \(AI workload checks\)\.+Passed$", done.stdout, re.M), done.stdout
