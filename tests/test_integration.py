"""CI recipes use the current CLI exactly: the Action's script runs, every example parses."""

from __future__ import annotations

import os
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


def _action_step(name: str) -> dict[str, Any]:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    return next(step for step in action["runs"]["steps"] if step.get("name") == name)


def _run_scan_step(tmp_path: Path, **inputs: str) -> tuple[int, dict[str, str], Path]:
    step = _action_step("Scan")
    output, summary = tmp_path / "output", tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "RUNNER_TEMP": str(tmp_path),
        "AZAI_PARAMETERS": "",
        "AZAI_FAIL_ON": "high",
        "AZAI_CONFIG": "",
        "AZAI_BASELINE": "",
        "AZAI_SARIF": str(tmp_path / "azai.sarif"),
        "AZAI_JOB_SUMMARY": "true",
        **inputs,
    }
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines()) if output.exists() else {}
    return done.returncode, outputs, summary


def test_action_scan_step_writes_sarif_and_summary_and_reports_the_exit_code(tmp_path: Path) -> None:
    paths = f"{FIXTURES / 'demo' / 'plan.json'} {FIXTURES / 'demo' / 'template.json'}"
    code, outputs, summary = _run_scan_step(tmp_path, AZAI_PATHS=paths)
    assert code == 0 and outputs == {"exit-code": "1"}  # the step records the verdict; the Gate step applies it
    assert (tmp_path / "azai.sarif").read_text().startswith("{")
    assert summary.read_text().startswith("## azai: 46 finding(s)")
    code, outputs, _ = _run_scan_step(tmp_path, AZAI_PATHS=paths, AZAI_FAIL_ON="none")
    assert outputs == {"exit-code": "0"}


def test_action_scan_step_keeps_an_incomplete_scan_for_upload_and_the_gate(tmp_path: Path) -> None:
    # A linked template that cannot be read: exit 3, SARIF and summary still written and uploaded.
    linked = str(FIXTURES / "bicep" / "linked" / "main.json")
    code, outputs, summary = _run_scan_step(tmp_path, AZAI_PATHS=linked, AZAI_FAIL_ON="critical")
    assert code == 0 and outputs == {"exit-code": "3"}
    assert "Incomplete" in summary.read_text()
    assert '"3"' in _action_step("Upload SARIF")["if"]


def test_action_scan_step_fails_on_input_errors(tmp_path: Path) -> None:
    code, outputs, _ = _run_scan_step(tmp_path, AZAI_PATHS=str(tmp_path / "missing.json"))
    assert code == 2 and outputs == {"exit-code": "2"}


def test_action_gate_and_upload_follow_the_scan() -> None:
    assert _action_step("Gate")["run"] == 'exit "${{ steps.scan.outputs.exit-code }}"'
    upload = _action_step("Upload SARIF")
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert "always()" in upload["if"]
