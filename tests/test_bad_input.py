"""Bad input: exit 2 and one line on stderr naming the file and the reason; never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, run_cli

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


def _autoscale_whatif(tmp_path: Path, change: Any) -> Path:
    """The AZAI-304 what-if estate with ``change`` applied to its first autoscale setting's body."""
    whatif = json.loads((FIXTURES / "rules" / "AZAI-304" / "whatif.json").read_text(encoding="utf-8"))
    setting = next(c for c in whatif["properties"]["changes"] if c["resourceId"].endswith("/as-cpu-only"))
    change(setting["after"]["properties"])
    path = tmp_path / "whatif.json"
    path.write_text(json.dumps(whatif), encoding="utf-8")
    return path


def _rename(obj: dict[str, Any], name: str, new_name: str, value: Any) -> None:
    """ARM reads member names in any case: ``name`` written as ``new_name``, holding ``value``."""
    del obj[name]
    obj[new_name] = value


AT = "/properties/changes/5/after/properties"
WRONG_AUTOSCALE_SHAPES = [
    (
        "targetResourceUri",
        lambda p: p.update(targetResourceUri=[]),
        f"{AT}/targetResourceUri: expected a string, found an array",
    ),
    ("profiles", lambda p: p.update(profiles={}), f"{AT}/profiles: expected an array, found an object"),
    ("profile", lambda p: p["profiles"].append("default"), f"{AT}/profiles/1: expected an object, found a string"),
    (
        "rules",
        lambda p: p["profiles"][0].update(rules="none"),
        f"{AT}/profiles/0/rules: expected an array, found a string",
    ),
    (
        "rule",
        lambda p: p["profiles"][0]["rules"].insert(0, 7),
        f"{AT}/profiles/0/rules/0: expected an object, found a number",
    ),
    (
        "metricTrigger in another case",
        lambda p: _rename(p["profiles"][0]["rules"][1], "metricTrigger", "MetricTrigger", [1]),
        f"{AT}/profiles/0/rules/1/MetricTrigger: expected an object, found an array",
    ),
    (
        "metricName",
        lambda p: p["profiles"][0]["rules"][0]["metricTrigger"].update(metricName=3),
        f"{AT}/profiles/0/rules/0/metricTrigger/metricName: expected a string, found a number",
    ),
]


@pytest.mark.parametrize(
    ("change", "message"), [c[1:] for c in WRONG_AUTOSCALE_SHAPES], ids=[c[0] for c in WRONG_AUTOSCALE_SHAPES]
)
def test_a_whatif_autoscale_value_of_the_wrong_type_is_one_line_naming_its_pointer(
    tmp_path: Path, change: Any, message: str
) -> None:
    path = _autoscale_whatif(tmp_path, change)
    done = run_cli("scan", str(path))
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"azai: error: {path}: {message}\n")


def test_null_autoscale_members_are_absent_not_wrong(tmp_path: Path) -> None:
    """What-if writes null for what is not set: a rule without a trigger names no metric, so the
    setting is judged on its other rule (memory only) and still fails."""

    def nulls(properties: dict[str, Any]) -> None:
        properties["profiles"][0]["rules"][0]["metricTrigger"] = None
        properties["profiles"].append({"name": "night", "rules": None})

    path = _autoscale_whatif(tmp_path, nulls)
    done = run_cli("scan", "--format", "json", "--fail-on", "none", "--select", "AZAI-304", str(path))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [(f["resource_name"], f["evidence"]["observed"]) for f in report["findings"]] == [
        ("as-cpu-only", ["MemoryUtilizationPercentage"])
    ]
    assert report["undetermined"] == []
