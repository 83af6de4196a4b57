"""Hostile plans and snapshots: a value of the wrong JSON type is bad input, never a crash.

azai runs on pull requests, so whoever opens one writes the plan. Each case below is a crash
class a structure-aware fuzzing campaign found (exit 70 before): the same valid plan with one
structural value replaced. Each must end with exit 2 and one stderr line naming the file, the
JSON pointer of the value and what the Terraform JSON format promises there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import scanner.sources.terraform.plan as plan_module
from tests.conftest import run_cli, scan

CLUSTER = "module.aks.azurerm_kubernetes_cluster.this"
POOL = 'module.aks.module.pool["gpu"].azurerm_kubernetes_cluster_node_pool.this[0]'
RG = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg"
POOL_CONFIG = "/configuration/root_module/module_calls/aks/module/module_calls/pool/module/resources/0"


def _change(address: str, rtype: str, after: dict[str, Any], unknown: dict[str, Any], **extra: Any) -> dict[str, Any]:
    name = address.rsplit(".", 1)[-1].split("[")[0]
    return {
        "address": address,
        "mode": "managed",
        "type": rtype,
        "name": name,
        **extra,
        "change": {"actions": ["create"], "before": None, "after": after, "after_unknown": unknown},
    }


def base_plan() -> dict[str, Any]:
    """A small valid plan that reads every structural field the cases below break: changes in
    nested modules with an id resolved through module variables, an autoscale setting's nested
    blocks and its region resolved through a root variable, planned-only and child-module
    resources, a data source, configuration and drift."""
    autoscale = {
        "name": "as",
        "resource_group_name": "rg",
        "target_resource_id": f"{RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss",
        "profile": [
            {
                "name": "default",
                "capacity": [{"minimum": 1, "maximum": 3, "default": 1}],
                "rule": [{"metric_trigger": [{"metric_name": "Percentage CPU", "metric_resource_id": "x"}]}],
            }
        ],
    }
    workspace = {"name": "ws", "resource_group_name": "rg", "location": "eastus", "public_network_access_enabled": True}
    return {
        "format_version": "1.2",
        "terraform_version": "1.9.8",
        "variables": {"region": {"value": "eastus"}},
        "resource_changes": [
            _change(
                CLUSTER,
                "azurerm_kubernetes_cluster",
                {"name": "aks", "location": "eastus", "resource_group_name": "rg"},
                {"id": True},
                module_address="module.aks",
            ),
            _change(
                POOL,
                "azurerm_kubernetes_cluster_node_pool",
                {"name": "gpu", "vm_size": "Standard_NC24ads_A100_v4", "node_count": 1},
                {"id": True, "kubernetes_cluster_id": True},
                module_address='module.aks.module.pool["gpu"]',
            ),
            _change(
                "azurerm_monitor_autoscale_setting.as",
                "azurerm_monitor_autoscale_setting",
                autoscale,
                {"location": True},
            ),
        ],
        "planned_values": {
            "root_module": {
                "resources": [
                    {
                        "address": "azurerm_machine_learning_workspace.ws",
                        "mode": "managed",
                        "type": "azurerm_machine_learning_workspace",
                        "name": "ws",
                        "values": workspace,
                    }
                ],
                "child_modules": [
                    {
                        "address": "module.extra",
                        "resources": [
                            {
                                "address": "module.extra.azurerm_machine_learning_workspace.ws2",
                                "mode": "managed",
                                "type": "azurerm_machine_learning_workspace",
                                "name": "ws2",
                                "values": {**workspace, "name": "ws2"},
                            }
                        ],
                    }
                ],
            }
        },
        "prior_state": {
            "format_version": "1.0",
            "values": {
                "root_module": {
                    "resources": [
                        {
                            "address": "data.azurerm_resource_group.rg",
                            "mode": "data",
                            "type": "azurerm_resource_group",
                            "name": "rg",
                            "values": {"name": "rg", "location": "eastus"},
                        }
                    ]
                }
            },
        },
        "resource_drift": [
            {
                "address": "azurerm_machine_learning_workspace.ws",
                "mode": "managed",
                "type": "azurerm_machine_learning_workspace",
                "name": "ws",
                "change": {"actions": ["update"], "before": workspace, "after": workspace},
            }
        ],
        "configuration": {
            "root_module": {
                "resources": [
                    {
                        "address": "azurerm_monitor_autoscale_setting.as",
                        "expressions": {"location": {"references": ["var.region"]}},
                    }
                ],
                "module_calls": {
                    "aks": {
                        "source": "./aks",
                        "module": {
                            "resources": [{"address": "azurerm_kubernetes_cluster.this", "expressions": {}}],
                            "module_calls": {
                                "pool": {
                                    "source": "./pool",
                                    "expressions": {
                                        "cluster_id": {
                                            "references": [
                                                "azurerm_kubernetes_cluster.this.id",
                                                "azurerm_kubernetes_cluster.this",
                                            ]
                                        }
                                    },
                                    "module": {
                                        "resources": [
                                            {
                                                "address": "azurerm_kubernetes_cluster_node_pool.this",
                                                "expressions": {
                                                    "kubernetes_cluster_id": {"references": ["var.cluster_id"]}
                                                },
                                            }
                                        ]
                                    },
                                }
                            },
                        },
                    }
                },
            }
        },
    }


def _set(document: dict[str, Any], pointer: str, value: Any) -> dict[str, Any]:
    """``document`` with the value at an RFC 6901 pointer replaced."""
    *parents, last = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    node: Any = document
    for token in parents:
        node = node[int(token)] if isinstance(node, list) else node[token]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return document


def _one_error_line(*args: str) -> str:
    done = run_cli(*args, "--fail-on", "none")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_the_base_plan_is_valid_and_reads_every_field_the_cases_break(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(base_plan()))
    done = run_cli("scan", "--format", "json", "--fail-on", "none", str(path))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    names = {f["resource_name"] for f in report["findings"] + report["undetermined"]}
    # the pool's id came through the module variable, and planned-only resources were read
    assert {"aks/gpu", "ws", "ws2"} <= names, names


CFG = "/configuration/root_module"
PLANNED = "/planned_values/root_module"
AUTOSCALE = "/resource_changes/2/change/after/profile/0"
OBJECT, ARRAY, STRING = "expected an object", "expected an array", "expected a string"


def case(name: str, pointer: str, value: Any, reason: str, named: str | None = None) -> Any:
    """One crash class: ``value`` put at ``pointer``; the error names ``named`` (or ``pointer``)."""
    return pytest.param(pointer, value, named or pointer, reason, id=name)


CASES = [
    case("module_calls-string", f"{CFG}/module_calls", "x", f"{OBJECT}, found a string"),
    case("module_call-number", f"{CFG}/module_calls/aks", 1, f"{OBJECT}, found a number"),
    case("config-resource-without-address", f"{POOL_CONFIG}/address", None, f"{STRING}, found null"),
    case("planned-resources-number", f"{PLANNED}/resources", 7, f"{ARRAY}, found a number"),
    case("child_modules-number", f"{PLANNED}/child_modules", 7, f"{ARRAY}, found a number"),
    case("child_module-string", f"{PLANNED}/child_modules/0", "m", f"{OBJECT}, found a string"),
    case("prior_state-values-string", "/prior_state/values", "x", f"{OBJECT}, found a string"),
    case("resource_changes-object", "/resource_changes", {}, f"{ARRAY}, found an object"),
    case("change-entry-string", "/resource_changes/1", "x", f"{OBJECT}, found a string"),
    case("address-number", "/resource_changes/0/address", 5, f"{STRING}, found a number"),
    case("change-array", "/resource_changes/0/change", [], f"{OBJECT}, found an array"),
    case(
        "actions-holds-number",
        "/resource_changes/0/change/actions",
        ["create", 5],
        f"{STRING}, found a number",
        "/resource_changes/0/change/actions/1",
    ),
    case("actions-string", "/resource_changes/0/change/actions", "create", f"{ARRAY}, found a string"),
    case(
        "references-number",
        f"{POOL_CONFIG}/expressions/kubernetes_cluster_id/references",
        7,
        f"{ARRAY}, found a number",
    ),
    case(
        "reference-number",
        f"{POOL_CONFIG}/expressions/kubernetes_cluster_id/references/0",
        7,
        f"{STRING}, found a number",
    ),
    case("expression-number", f"{POOL_CONFIG}/expressions/kubernetes_cluster_id", 7, f"{OBJECT}, found a number"),
    case("expressions-array", f"{POOL_CONFIG}/expressions", [], f"{OBJECT}, found an array"),
    case("variables-array", "/variables", [], f"{OBJECT}, found an array"),
    case("variable-string", "/variables/region", "eastus", f"{OBJECT}, found a string"),
    case("metric_trigger-number", f"{AUTOSCALE}/rule/0/metric_trigger", 3, f"{ARRAY}, found a number"),
    case("rule-holds-string", f"{AUTOSCALE}/rule", ["r"], f"{OBJECT}, found a string", f"{AUTOSCALE}/rule/0"),
    case("capacity-boolean", f"{AUTOSCALE}/capacity", True, f"{ARRAY}, found true or false"),
    case("drift-actions-object", "/resource_drift/0/change/actions", {"update": 1}, f"{ARRAY}, found an object"),
    # found by a helper writing inputs from the docs alone: a resource whose `after` was not an
    # object vanished from the scan with exit 0
    case("after-array", "/resource_changes/0/change/after", [1, 2], f"{OBJECT}, found an array"),
    case("after-string", "/resource_changes/0/change/after", "x", f"{OBJECT}, found a string"),
    case("drift-before-number", "/resource_drift/0/change/before", 5, f"{OBJECT}, found a number"),
]


@pytest.mark.parametrize(("pointer", "value", "named", "reason"), CASES)
def test_a_structural_value_of_the_wrong_type_is_exit_2_naming_its_pointer(
    tmp_path: Path, pointer: str, value: Any, named: str, reason: str
) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(_set(base_plan(), pointer, value)))
    # resource_drift is read by `azai drift --iac`; everything else by a scan
    args = ("drift", "--iac", str(path)) if pointer.startswith("/resource_drift") else ("scan", str(path))
    assert _one_error_line(*args) == f"azai: error: {path}: {named}: {reason}"


SNAPSHOT_CASES = [
    ("/scan", [], "expected an object, found an array"),
    ("/resources", "all", "expected an array, found a string"),
    ("/resources/0", 3, "snapshot resource 0 is malformed at /resources/0: expected an object, found a number"),
    ("/resources/0/source", 3, "snapshot resource 0 is malformed at /resources/0/source: expected a string"),
    ("/resources/0/notes", [], "snapshot resource 0 is malformed at /resources/0/notes: expected an object"),
    ("/resources/0/notes/properties.x", 1, "snapshot resource 0 is malformed at /resources/0/notes/properties.x:"),
    ("/resources/0/address", {}, "snapshot resource 0 is malformed at /resources/0/address: expected a string"),
]


@pytest.mark.parametrize(("pointer", "value", "reason"), SNAPSHOT_CASES, ids=[c[0] for c in SNAPSHOT_CASES])
def test_a_snapshot_value_of_the_wrong_type_is_exit_2_naming_its_pointer(
    tmp_path: Path, pointer: str, value: Any, reason: str
) -> None:
    snapshot = {
        "azai_inventory": 1,
        "scan": {"time": "2026-01-01T00:00:00+00:00", "scopes": [], "inputs": [], "coverage": []},
        "resources": [
            {
                "source": "live",
                "address": None,
                "notes": {"properties.x": "set it in the portal"},
                "resource": {"id": f"{RG}/providers/Microsoft.Storage/storageAccounts/st", "name": "st"},
            }
        ],
    }
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(_set(snapshot, pointer, value)))
    line = _one_error_line("scan", str(path))
    assert line.startswith(f"azai: error: {path}: ") and reason in line, line
    assert pointer in line


def test_references_to_a_counted_resource_cost_one_pass_not_one_per_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reference without an instance key (``azurerm_resource_group.rg.location``) looked for its
    target by stripping the key of every instance, once per reference: a plan of 3,000 such
    pairs took 25 s, 30,000 would take hours. Now one index serves them all; counted here, since
    no test may assert on time."""
    pairs = 300
    changes: list[dict[str, Any]] = []
    for i in range(pairs):
        group = {"name": f"rg{i}", "location": "eastus"}
        cluster = {"name": f"c{i}", "resource_group_name": f"rg{i}"}
        changes.append(_change(f'azurerm_resource_group.rg["k{i}"]', "azurerm_resource_group", group, {}))
        changes.append(
            _change(f"azurerm_kubernetes_cluster.c[{i}]", "azurerm_kubernetes_cluster", cluster, {"location": True})
        )
    references = ["azurerm_resource_group.rg.location", "azurerm_resource_group.rg"]
    configuration = {
        "root_module": {
            "resources": [
                {"address": "azurerm_resource_group.rg", "expressions": {}},
                {"address": "azurerm_kubernetes_cluster.c", "expressions": {"location": {"references": references}}},
            ]
        }
    }
    path = tmp_path / "plan.json"
    plan = {"format_version": "1.2", "terraform_version": "1.9.8", "resource_changes": changes}
    path.write_text(json.dumps({**plan, "configuration": configuration}), encoding="utf-8")
    calls = 0
    strip = plan_module._without_key

    def counted(address: str) -> str:
        nonlocal calls
        calls += 1
        return strip(address)

    monkeypatch.setattr(plan_module, "_without_key", counted)
    result = scan(path)
    assert result.resources_scanned == 2 * pairs
    assert calls <= 2 * (2 * pairs)  # a pass over the instances, and one per index rebuild at most
