"""Azure quirks live in the sources: checks see one ARM shape, whatever form declared it.

azurerm sends an AML compute's ARM ``location`` as its workspace's region (its own ``location``
attribute is ``computeLocation``; v4 compute instances have none), and cannot set a compute
instance's idle shutdown at all. The Terraform source models both, so no check asks which
source a resource came from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown
from scanner.sources import load_file
from scanner.sources.snapshot import save_inventory
from tests.conftest import FIXTURES, ROOT, scan

GROUP = "/subscriptions/00000000-0000-0000-0000-0000000000a1/resourceGroups/rg-ai"
WORKSPACE_ID = f"{GROUP}/providers/Microsoft.MachineLearningServices/workspaces/ws"
IDLE = "properties.properties.idleTimeBeforeShutdown"
AZURERM_NOTE = "not expressible in azurerm; set it with azapi_update_resource"


def _change(address: str, after: dict[str, Any], unknown: dict[str, Any] | None = None) -> dict[str, Any]:
    tftype, name = address.split(".")
    return {
        "address": address,
        "mode": "managed",
        "type": tftype,
        "name": name,
        "change": {"actions": ["create"], "before": None, "after": after, "after_unknown": unknown or {}},
    }


def _workspace(location: str | None = "West Europe") -> dict[str, Any]:
    storage = f"{GROUP}/providers/Microsoft.Storage/storageAccounts/stdata"
    after = {"name": "ws", "resource_group_name": "rg-ai", "storage_account_id": storage}
    if location is not None:
        after["location"] = location
    return _change("azurerm_machine_learning_workspace.ws", after, None if location else {"location": True})


def _instance() -> dict[str, Any]:
    after = {
        "name": "ci",
        "virtual_machine_size": "Standard_NC4as_T4_v3",
        "machine_learning_workspace_id": WORKSPACE_ID,
    }
    return _change("azurerm_machine_learning_compute_instance.ci", after)


def _cluster() -> dict[str, Any]:
    after = {
        "name": "train",
        "location": "eastus",
        "vm_size": "Standard_NC4as_T4_v3",
        "machine_learning_workspace_id": WORKSPACE_ID,
        "scale_settings": [{"min_node_count": 0, "max_node_count": 2}],
    }
    return _change("azurerm_machine_learning_compute_cluster.train", after)


def _storage(location: str) -> dict[str, Any]:
    return _change(
        "azurerm_storage_account.stdata", {"name": "stdata", "location": location, "resource_group_name": "rg-ai"}
    )


def _plan(tmp_path: Path, *changes: dict[str, Any]) -> Path:
    path = tmp_path / "plan.json"
    document = {"format_version": "1.2", "terraform_version": "1.9.8", "resource_changes": list(changes)}
    path.write_text(json.dumps(document))
    return path


def _computes(path: Path) -> dict[str, Resource]:
    return {r.name: r for r in load_file(path, str(path)).inventory.of_type(T.COMPUTE)}


def test_azurerm_computes_are_in_their_workspace_region_as_arm_reports_them(tmp_path: Path) -> None:
    # The workspace's own id is built with a placeholder subscription; the computes name a real
    # one. They are still linked, the way the inventory links them for checks.
    computes = _computes(_plan(tmp_path, _workspace(), _instance(), _cluster()))
    instance, cluster = computes["ws/ci"], computes["ws/train"]
    assert (instance.location, instance.body["location"]) == ("westeurope", "West Europe")
    assert instance.get("properties.computeLocation") is None  # v4 instances run where the workspace is
    assert (cluster.location, cluster.get("properties.computeLocation")) == ("westeurope", "eastus")


def test_a_compute_stays_without_a_region_nobody_can_know(tmp_path: Path) -> None:
    unknown = _computes(_plan(tmp_path, _workspace(location=None), _instance()))["ws/ci"]
    assert isinstance(unknown.location, Unknown)  # the workspace's region is known only after apply
    orphan = _computes(_plan(tmp_path, _instance()))["ws/ci"]  # the workspace is not in the plan
    assert orphan.location is None and "location" not in orphan.body


def test_an_azapi_compute_keeps_the_body_it_declares(tmp_path: Path) -> None:
    after = {
        "type": "Microsoft.MachineLearningServices/workspaces/computes@2024-04-01",
        "name": "ci",
        "parent_id": WORKSPACE_ID,
        "body": {"properties": {"computeType": "ComputeInstance", "properties": {"vmSize": "Standard_DS3_v2"}}},
    }
    compute = _computes(_plan(tmp_path, _workspace(), _change("azapi_resource.ci", after)))["ws/ci"]
    assert compute.location is None  # azapi sends the body as written; ARM decides
    assert compute.origin.note(IDLE) is None  # the body can set idle shutdown


def test_the_plan_says_what_azurerm_cannot_set(tmp_path: Path) -> None:
    instance = _computes(_plan(tmp_path, _workspace(), _instance()))["ws/ci"]
    assert instance.origin.note(IDLE) == AZURERM_NOTE
    assert instance.origin.note(IDLE.upper()) == AZURERM_NOTE  # ARM paths compare case-insensitively
    assert instance.origin.note("properties.properties.vmSize") is None


def test_always_on_compute_names_the_way_to_set_idle_shutdown_only_where_the_form_lacks_one(tmp_path: Path) -> None:
    def messages(path: Path) -> dict[str, str]:
        result = scan(path, select=["AZAI-201"])
        return {f.resource.name: f.violation.message for f in result.findings}

    assert messages(_plan(tmp_path, _workspace(), _instance())) == {
        "ws/ci": f"AML compute instance 'ws/ci' has no idle shutdown ({AZURERM_NOTE})"
    }
    from_template = messages(FIXTURES / "rules" / "AZAI-201" / "template.json")
    assert from_template["mlws/cinoidle"] == "AML compute instance 'mlws/cinoidle' has no idle shutdown"


def test_cross_region_reads_the_inherited_region(tmp_path: Path) -> None:
    far = _plan(tmp_path, _workspace(location="eastus"), _storage("westeurope"), _instance())
    result = scan(far, select=["AZAI-301"])
    assert {(f.resource.name, f.violation.path, f.violation.observed) for f in result.findings} == {
        ("ws", "properties.storageAccount", "westeurope"),
        ("ws/ci", "properties.computeLocation", "eastus"),
    }


def test_a_snapshot_keeps_the_notes_and_gives_the_same_findings(tmp_path: Path) -> None:
    path = _plan(tmp_path, _workspace(), _instance())
    resources = load_file(path, str(path)).inventory.resources
    saved = tmp_path / "snapshot.json"
    save_inventory(str(saved), resources, [], [])
    restored = _computes(saved)["ws/ci"]
    assert (restored.location, restored.origin.note(IDLE)) == ("westeurope", AZURERM_NOTE)
    original, again = scan(path, select=["AZAI-201"]), scan(saved, select=["AZAI-201"])
    assert [f.violation.message for f in again.findings] == [f.violation.message for f in original.findings]


def test_no_built_in_check_asks_which_source_a_resource_came_from() -> None:
    asking = re.compile(r"origin\.kind")
    offenders = [p.name for p in sorted((ROOT / "checks").glob("*.py")) if asking.search(p.read_text())]
    assert offenders == []


def test_a_template_compute_without_a_location_runs_in_its_workspace_region(tmp_path: Path) -> None:
    """ARM gives a compute declared without ``location`` its workspace's region; a template or an
    azapi body may omit it, and the rules must judge and price it as if it were written."""
    template = json.loads((FIXTURES / "demo" / "template.json").read_text())
    computes = [r for r in template["resources"].values() if r["type"] == T.COMPUTE]
    assert computes and all("location" in r for r in computes)
    for compute in computes:
        del compute["location"]
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template))

    def judged(result: Any) -> list[tuple[str, str, float | None]]:
        rules = ("AZAI-201", "AZAI-301")
        return sorted(
            (f.check.id, f.resource.name, f.cost.monthly_usd if f.cost else None)
            for f in result.findings
            if f.check.id in rules
        )

    assert judged(scan(path)) == judged(scan(FIXTURES / "demo" / "template.json"))
    assert [name for rule, name, _ in judged(scan(path)) if rule == "AZAI-301" and name.startswith("ws-demo/")]
