"""Hostile templates and what-if files: ARM's limits and the scan's work budget end the scan with
exit 2 and one line naming the file and the JSON path; never a hang, a memory bomb or exit 70.

Each case runs the real command line in a child process with a generous timeout: a hang fails the
test by exceeding it, not by a timed assertion."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.sources.arm import limits
from tests.conftest import CHILD_PROCESS, run_cli

SCHEMA = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"


def _template(resources: Any, variables: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"$schema": SCHEMA, "contentVersion": "1.0.0.0", "resources": resources, **extra}
    if variables:
        body["variables"] = variables
    return body


def _account(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "Microsoft.Storage/storageAccounts",
        "apiVersion": "2023-01-01",
        "name": name,
        "location": "eastus",
        **extra,
    }


def _chain(length: int) -> dict[str, str]:
    """Variables that each concat() the previous one twice: 2^(length+1) characters at the end."""
    chain = {"v0": "ab"}
    chain.update({f"v{i}": f"[concat(variables('v{i - 1}'), variables('v{i - 1}'))]" for i in range(1, length + 1)})
    return chain


COPY_RULE = "The copy count must be a non-negative integer value and cannot exceed '800'."
TOO_LONG = "that fit in a template (ARM's limit: 4 MB, the template's final state)"

CASES = [
    pytest.param(
        _template([_account("[concat('a', copyIndex())]", copy={"name": "c", "count": 10**9})]),
        "at /resources/0/copy/count: the copy loop 'c' has an invalid copy count of: '1000000000'. " + COPY_RULE,
        id="copy-1e9",
    ),
    pytest.param(
        _template([_account("[concat('a', copyIndex())]", copy={"name": "c", "count": 10**30})]),
        f"at /resources/0/copy/count: the copy loop 'c' has an invalid copy count of: '{10**30}'. " + COPY_RULE,
        id="copy-1e30",
    ),
    pytest.param(
        _template([_account("a", copy={"name": "c", "count": "[sub(0, 1)]"})]),
        "at /resources/0/copy/count: the copy loop 'c' has an invalid copy count of: '[sub(0, 1)]' (= -1). "
        + COPY_RULE,
        id="copy-negative",
    ),
    pytest.param(
        _template([_account("a", properties={"copy": [{"name": "x", "count": 2**31, "input": "[copyIndex('x')]"}]})]),
        "at /resources/0: the copy loop 'x' has an invalid copy count of: '2147483648'. " + COPY_RULE,
        id="property-copy-2e31",
    ),
    pytest.param(
        _template(
            [_account("a", tags={"t": "[string(variables('many'))]"})],
            {"copy": [{"name": "many", "count": 801, "input": "x"}]},
        ),
        "at /variables/copy: the copy loop 'many' has an invalid copy count of: '801'. " + COPY_RULE,
        id="variable-copy-801",
    ),
    pytest.param(
        _template([_account("[variables('v30')]")], _chain(30)),
        "at /variables/v22: concat() would be 8,388,608 long, more than the 4,194,304 " + TOO_LONG,
        id="concat-chain-2e31",
    ),
    pytest.param(
        _template([_account("[padLeft('a', 1000000000, 'x')]")]),
        "at /resources/0: padLeft() would be 1,000,000,000 long, more than the 4,194,304 " + TOO_LONG,
        id="padleft-1e9",
    ),
    pytest.param(
        _template([_account("[format('{0:D999999999}', 1)]")]),
        "at /resources/0: format() item {0:D999999999} would be 999,999,999 long, more than the 4,194,304 " + TOO_LONG,
        id="format-d999999999",
    ),
    pytest.param(
        _template([_account("[string(length(range(0, 100000000)))]")]),
        "at /resources/0: range() would be 100,000,000 long, more than the 2,097,152 " + TOO_LONG,
        id="range-1e8",
    ),
    pytest.param(
        _template([_account("[string(int(json('1e999')))]")]),
        "at /resources/0: json(): the number 1e999 is out of range",
        id="int-json-1e999",
    ),
    pytest.param(
        _template([_account("[string(div(json('1e999'), 1))]")]),
        "at /resources/0: json(): the number 1e999 is out of range",
        id="div-json-1e999",
    ),
    pytest.param(
        _template([_account("[string(variables('big'))]")], {"big": "[mul(4000000000, 4000000000)]"}),
        "at /variables/big: mul() is 16000000000000000000, outside ARM's 64-bit integers",
        id="mul-overflow",
    ),
    pytest.param(
        {
            "$schema": SCHEMA,
            "languageVersion": "2.0",
            "contentVersion": "1.0.0.0",
            "resources": {"a\nb": _account("x", copy={"name": "c", "count": 1000})},
        },
        "at /resources/a\\x0ab/copy/count: the copy loop 'c' has an invalid copy count of: '1000'. " + COPY_RULE,
        id="symbolic-name-with-newline",
    ),
    pytest.param(
        _template([_account(f"st{i}") for i in range(801)]),
        "at /resources/800: the template deploys more than 800 resources (copies counted); ARM's limit is "
        "800 resources per template",
        id="801-resources",
    ),
    pytest.param(
        _template([_account("[concat('a', copyIndex())]", copy={"name": "c", "count": 800}), _account("b")]),
        "at /resources/1: the template deploys more than 800 resources (copies counted); ARM's limit is "
        "800 resources per template",
        id="800-copies-and-one",
    ),
]


def _write(tmp_path: Path, data: dict[str, Any], name: str = "main.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _refused(tmp_path: Path, path: Path, *extra: str) -> str:
    """Scan in a child process (a hang fails on its timeout); the one stderr line."""
    done = run_cli("scan", "--fail-on", "none", *extra, str(path), cwd=tmp_path, process=True)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@CHILD_PROCESS
@pytest.mark.parametrize(("template", "message"), CASES)
def test_a_template_arm_refuses_exits_2_naming_the_path(tmp_path: Path, template: dict[str, Any], message: str) -> None:
    path = _write(tmp_path, template)
    assert _refused(tmp_path, path) == f"azai: error: {path}: {message}"


def test_the_work_budget_stops_evaluation_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_CALLS", 2_000)  # the real budget, reached sooner
    looped = _account(
        "[concat('a', copyIndex())]",
        copy={"name": "c", "count": 100},
        properties={"copy": [{"name": "x", "count": 100, "input": "[string(copyIndex('x'))]"}]},
    )
    path = _write(tmp_path, _template([looped]))
    done = run_cli("scan", "--fail-on", "none", str(path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"azai: error: {path}: at /resources/0: evaluation stopped after 2,000 template function calls, "
        "the most a scan spends on one input"
    ]


@CHILD_PROCESS
def test_a_template_above_4_mb_is_refused_but_indentation_does_not_count(tmp_path: Path) -> None:
    big = _template([_account("a", tags={"t": "x" * (4 * 1024 * 1024)})])
    path = _write(tmp_path, big)
    assert _refused(tmp_path, path) == (
        f"azai: error: {path}: 4,194,556 bytes without whitespace; ARM's limit for a template or parameters "
        "file is 4 MB (4,194,304 bytes)"
    )
    indented = tmp_path / "indented.json"
    indented.write_text(json.dumps(_template([_account("a", tags={"t": "x" * 1000})]), indent=4 * 1024 * 1024))
    done = run_cli("scan", "--fail-on", "none", str(indented))
    assert done.returncode == 0, done.stderr


@CHILD_PROCESS
@pytest.mark.parametrize(
    ("value", "reason"), [("1e999", "number too large to represent"), ("NaN", "NaN is not a JSON number")]
)
def test_a_number_out_of_range_in_a_parameters_file_is_refused_where_it_is_written(
    tmp_path: Path, value: str, reason: str
) -> None:
    account = _account("[string(add(parameters('n'), 1))]")
    path = _write(tmp_path, _template([account], parameters={"n": {"type": "int", "defaultValue": 1}}))
    parameters = tmp_path / "main.parameters.json"
    parameters.write_text('{"parameters": {"n": {"value": ' + value + "}}}", encoding="utf-8")
    line = _refused(tmp_path, path, "--parameters", str(parameters))
    assert line == f"azai: error: {parameters}: invalid JSON at line 1 column 32: {reason}"


@CHILD_PROCESS
def test_a_whatif_id_with_a_lone_surrogate_is_refused(tmp_path: Path) -> None:
    change = {
        "resourceId": "/subscriptions/s/resourceGroups/r/providers/Microsoft.Storage/storageAccounts/a\ud800",
        "changeType": "Create",
        "after": {"type": "Microsoft.Storage/storageAccounts", "name": "a", "location": "eastus"},
    }
    path = _write(tmp_path, {"status": "Succeeded", "properties": {"changes": [change]}}, "whatif.json")
    assert _refused(tmp_path, path, "--format", "junit") == (
        f"azai: error: {path}: invalid JSON at line 1 column 147: \\ud800 is a lone surrogate, not a character"
    )


def test_json_of_a_lone_surrogate_is_an_unknown_value_not_a_crash(tmp_path: Path) -> None:
    path = _write(tmp_path, _template([_account("[json('\"a\\ud800\"')]")]))
    done = run_cli("scan", "--fail-on", "none", "--format", "junit", str(path))
    assert done.returncode == 0, done.stderr
    assert "\ud800" not in done.stdout


def test_a_pool_count_given_as_a_string_is_undetermined_not_a_crash(tmp_path: Path) -> None:
    """ARM passes a property's value to the resource provider as it is: ``"2"`` stays a string,
    and a rule that compares counts cannot decide on it."""
    pools = [
        {
            "type": "Microsoft.ContainerService/managedClusters/agentPools",
            "apiVersion": "2024-01-01",
            "name": f"aks/{name}",
            "properties": {"mode": "User", "vmSize": "Standard_NC6s_v3", **settings},
        }
        for name, settings in (("fixed", {"count": "2"}), ("scaled", {"enableAutoScaling": True, "minCount": "2"}))
    ]
    cluster = {
        "type": "Microsoft.ContainerService/managedClusters",
        "apiVersion": "2024-01-01",
        "name": "aks",
        "location": "eastus",
        "properties": {},
    }
    path = _write(tmp_path, _template([cluster, *pools]))
    done = run_cli("scan", "--fail-on", "none", "--select", "AZAI-201", "--format", "json", str(path))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["findings"] == []
    undetermined = {(f["resource_name"], f["reason"]) for f in report["undetermined"]}
    assert undetermined == {
        ("aks/fixed", "properties.count is unknown (properties.count is '2', not a number)"),
        ("aks/scaled", "properties.minCount is unknown (properties.minCount is '2', not a number)"),
    }


def test_a_maximum_given_as_a_string_is_undetermined_not_a_misleading_finding(tmp_path: Path) -> None:
    """AZAI-303 used to report ``"5"`` as "autoscales to 5 nodes" above any limit, and AZAI-401
    a production deployment of ``"3"`` instances as single-instance: a string is not a count."""
    pool = {
        "type": "Microsoft.ContainerService/managedClusters/agentPools",
        "apiVersion": "2024-01-01",
        "name": "aks/gpu",
        "properties": {"mode": "User", "vmSize": "Standard_NC6s_v3", "enableAutoScaling": True, "maxCount": "5"},
    }
    cluster = {
        "type": "Microsoft.ContainerService/managedClusters",
        "apiVersion": "2024-01-01",
        "name": "aks",
        "location": "eastus",
        "properties": {},
    }
    deployment = {
        "type": "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments",
        "apiVersion": "2024-04-01",
        "name": "ws/ep/blue",
        "location": "eastus",
        "tags": {"environment": "production"},
        "sku": {"name": "Default", "capacity": "3"},
        "properties": {"endpointComputeType": "Managed"},
    }
    path = _write(tmp_path, _template([cluster, pool, deployment]))
    done = run_cli(
        "scan", "--fail-on", "none", "--select", "AZAI-303", "--select", "AZAI-401", "--format", "json", str(path)
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["findings"] == []
    assert {(f["rule_id"], f["resource_name"], f["reason"]) for f in report["undetermined"]} == {
        ("AZAI-303", "aks/gpu", "properties.maxCount is unknown (properties.maxCount is '5', not a number)"),
        ("AZAI-401", "ws/ep/blue", "sku.capacity is unknown (sku.capacity is '3', not a number)"),
    }
