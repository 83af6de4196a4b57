"""What the pre-commit hook says, under the real pre-commit, on the commits it sees: nothing on a
commit whose JSON is not IaC, one line on one that scans and passes, and a line per finding
before that line when it fails. pre-commit shows a hook's output only when it fails or with
--verbose; these runs use --verbose, so every line the hook prints is seen."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from scanner import __version__
from tests.conftest import FIXTURES, ROOT
from tests.test_integration import _pre_commit

# A plan that declares a resource group and nothing any rule judges.
CLEAN_PLAN = {
    "format_version": "1.2",
    "terraform_version": "1.9.5",
    "planned_values": {"root_module": {"resources": []}},
    "resource_changes": [
        {
            "address": "azurerm_resource_group.rg",
            "mode": "managed",
            "type": "azurerm_resource_group",
            "name": "rg",
            "provider_name": "registry.terraform.io/hashicorp/azurerm",
            "change": {"actions": ["create"], "before": None, "after": {"name": "rg-app", "location": "westeurope"}},
        }
    ],
}
PASSED = (
    f"azai {__version__}: 1 input(s), 0 resource(s), 39 rule(s); 0 finding(s): 0 critical, 0 high, 0 medium, "
    "0 low; 0 undetermined; 0 suppressed; passed: nothing at or above high"
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with this checkout's hook configured (as a `repo: local` hook run with the
    installed azai), one commit made, and files to stage: JSON that is not IaC, a clean plan and
    the demo plan."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    local = {key: hook[key] for key in ("id", "name", "entry", "files", "pass_filenames", "require_serial")}
    config = {"repos": [{"repo": "local", "hooks": [{**local, "language": "system"}]}]}
    folder = tmp_path / "repo"
    (folder / ".devcontainer").mkdir(parents=True)
    (folder / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    for command in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "hook"]):
        assert _pre_commit(folder, *command).returncode == 0
    (folder / "package.json").write_text('{"name": "app", "version": "1.0.0", "private": true}\n')
    (folder / ".devcontainer" / "devcontainer.json").write_text('{\n  // the dev container\n  "name": "app",\n}\n')
    (folder / "infra").mkdir()
    (folder / "infra" / "clean.json").write_text(json.dumps(CLEAN_PLAN))
    shutil.copy(FIXTURES / "demo" / "plan.json", folder / "infra" / "plan.json")
    return folder


def hook_run(repo: Path, *staged: str) -> tuple[str, list[str]]:
    """Stage ``staged`` and run the hooks as `git commit` would: the hook's status, and every
    line it printed."""
    assert _pre_commit(repo, "git", "add", *staged).returncode == 0
    done = _pre_commit(repo, "pre-commit", "run", "--verbose", "--color", "never")
    lines = done.stdout.splitlines()
    status = re.fullmatch(r"azai \(AI workload checks\)\.+(\w+)", lines[0])
    assert status is not None and done.stderr == "", done.stdout + done.stderr
    assert re.fullmatch(r"- hook id: azai", lines[1]) and lines[2].startswith("- duration: "), done.stdout
    if status.group(1) == "Failed":
        assert lines[3] == "- exit code: 1", done.stdout
    printed = lines[4 if status.group(1) == "Failed" else 3 :]
    return status.group(1), [line for line in printed if line]


def test_a_commit_of_json_that_is_not_iac_is_silent(repo: Path) -> None:
    assert hook_run(repo, "package.json", ".devcontainer/devcontainer.json") == ("Passed", [])


def test_a_commit_with_a_clean_plan_is_one_line(repo: Path) -> None:
    assert hook_run(repo, "infra/clean.json") == ("Passed", [PASSED])


def test_a_failing_commit_is_a_line_per_finding_then_one_line(repo: Path) -> None:
    status, printed = hook_run(repo, "infra/plan.json")
    assert status == "Failed" and len(printed) == 32 + 1
    assert [line.split(" ", 1)[0] for line in printed[:-1]] == ["CRITICAL"] + ["HIGH"] * 5 + ["MEDIUM"] * 25 + ["LOW"]
    assert printed[0].startswith("CRITICAL AZAI-101 anonymous-endpoint ")
    assert printed[-1] == (
        f"azai {__version__}: 1 input(s), 18 resource(s), 39 rule(s); 32 finding(s): 1 critical, 5 high, 25 medium, "
        "1 low; 0 undetermined; 0 suppressed; FAILED: 6 finding(s) at or above high"
    )


def test_json_that_is_not_iac_beside_a_plan_is_one_more_line(repo: Path) -> None:
    """The files skipped are named once: a plan detection missed would otherwise pass unseen."""
    status, printed = hook_run(repo, "package.json", "infra/clean.json")
    assert (status, printed) == (
        "Passed",
        [
            "warning: skipped 1 file(s) that are not a plan, template or what-if result (--skip-unknown): package.json",
            PASSED,
        ],
    )
