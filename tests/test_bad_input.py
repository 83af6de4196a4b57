"""Bad input: exit 2 and one line on stderr naming the file and the reason; never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

PLAN_HEAD = '{"format_version": "1.2", "terraform_version": "1.9.8", "resource_changes": ['


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


CASES = [
    ("truncated.json", PLAN_HEAD + '{"address": "x"', "invalid JSON at line 1"),
    ("array.json", "[1, 2, 3]", "expected a JSON object at the top level, found an array"),
    (
        "future.json",
        json.dumps({"format_version": "2.0", "terraform_version": "9.0.0", "resource_changes": []}),
        "unsupported Terraform plan format_version '2.0'",
    ),
    ("deep.json", "[" * 200_000 + "]" * 200_000, "nesting is too deep"),
    ("binary.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary file"),
    ("empty.json", "", "empty file"),
    ("blank.json", "  \n\t\n", "empty file"),
    ("latin1.json", '{"name": "caf\xe9"}'.encode("latin-1"), "not UTF-8 text"),
    (
        "badtype.json",
        json.dumps(
            {
                "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
                "contentVersion": "1.0.0.0",
                "resources": [{"type": 42, "name": "x"}],
            }
        ),
        "/resources/0/type: expected a string, found a number",
    ),
    (
        "unknown.json",
        json.dumps({"name": "my-package", "version": "1.0.0"}),
        "not a Terraform plan, ARM template or ARM what-if result",
    ),
    (
        "params.json",
        json.dumps(
            {
                "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#",
                "parameters": {},
            }
        ),
        "pass it with --parameters",
    ),
]


@pytest.mark.parametrize(("name", "content", "reason"), CASES, ids=[c[0] for c in CASES])
def test_bad_file_exits_2_with_one_line(tmp_path: Path, name: str, content: str | bytes, reason: str) -> None:
    path = _write(tmp_path, name, content)
    done = run_cli("scan", str(path))
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(path) in lines[0]
    assert reason in lines[0]
    assert "Traceback" not in done.stderr


def test_missing_path_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    done = run_cli("scan", str(missing))
    assert done.returncode == 2
    assert done.stderr.strip() == f"azai: error: {missing}: no such file"


def test_bad_parameters_file_exits_2(tmp_path: Path) -> None:
    template = Path(__file__).parent.parent / "fixtures" / "demo" / "template.json"
    params = _write(tmp_path, "p.json", json.dumps({"location": "eastus"}))
    done = run_cli("scan", str(template), "--parameters", str(params))
    assert done.returncode == 2
    assert "not an ARM parameters file" in done.stderr and "Traceback" not in done.stderr


def test_unwritable_output_exits_2(tmp_path: Path) -> None:
    blocker = _write(tmp_path, "file", "x")
    template = Path(__file__).parent.parent / "fixtures" / "demo" / "template.json"
    done = run_cli("scan", str(template), "--output", str(blocker / "report.txt"))
    assert done.returncode == 2
    assert "cannot write" in done.stderr and "Traceback" not in done.stderr


def test_directory_scan_skips_unrecognised_json_with_a_warning(tmp_path: Path) -> None:
    _write(tmp_path, "package.json", json.dumps({"name": "x"}))
    plan = Path(__file__).parent.parent / "fixtures" / "demo" / "plan.json"
    _write(tmp_path, "plan.json", plan.read_text())
    done = run_cli("scan", "--fail-on", "none", str(tmp_path))
    assert done.returncode == 0
    assert "warning: skipped" in done.stdout and "package.json" in done.stdout
