"""Origin.configured from a plan's ``configuration`` (issue 19, cause 2): the ARM paths the .tf
writes, never the defaults a provider plans (``priority = "Regular"``, ``local_auth_enabled``,
an empty ``node_taints``), so that drift compares only what someone declared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scanner.model.jsondoc import parse_document
from scanner.model.resources import Inventory, Resource
from scanner.sources.snapshot import load_snapshot, save_inventory
from scanner.sources.terraform.plan import read_plan

GROUP = "/subscriptions/0000/resourceGroups/rg-ai"
CLUSTER = f"{GROUP}/providers/Microsoft.ContainerService/managedClusters/aks"
WORKSPACE = f"{GROUP}/providers/Microsoft.MachineLearningServices/workspaces/ws"


def change(address: str, after: dict[str, Any], module: str | None = None) -> dict[str, Any]:
    rtype, name = address.rsplit(".", 2)[-2:]
    entry = {"address": address, "mode": "managed", "type": rtype, "name": name, "change": {"actions": ["create"]}}
    entry["change"]["after"] = after  # type: ignore[index]
    if module:
        entry["module_address"] = module
    return entry


def written(address: str, **expressions: Any) -> dict[str, Any]:
    return {"address": address, "mode": "managed", "expressions": expressions}


def const(value: Any) -> dict[str, Any]:
    return {"constant_value": value}


def ref(*refs: str) -> dict[str, Any]:
    return {"references": list(refs)}


POOL_AFTER = {
    "name": "gpu",
    "kubernetes_cluster_id": CLUSTER,
    "vm_size": "Standard_NC6s_v3",
    "node_count": 1,
    "priority": "Regular",  # azurerm's default
    "node_taints": [],  # planned empty, never written
    "mode": "User",
    "auto_scaling_enabled": False,
}
CLUSTER_AFTER = {
    "id": CLUSTER,
    "name": "aks",
    "location": "westeurope",
    "resource_group_name": "rg-ai",
    "local_account_disabled": False,  # a default
    "identity": [{"type": "SystemAssigned", "identity_ids": []}],  # written by a dynamic block
    "default_node_pool": [
        {"name": "system", "vm_size": "Standard_D4s_v5", "node_count": 2, "only_critical_addons_enabled": True}
    ],
    "tags": {},
}
ACCOUNT_AFTER = {
    "name": "oai",
    "location": "westeurope",
    "resource_group_name": "rg-ai",
    "kind": "OpenAI",
    "sku_name": "S0",
    "local_auth_enabled": True,  # the default, not written
    "public_network_access_enabled": False,
    "network_acls": [{"default_action": "Deny"}],
}
ENDPOINT_AFTER = {
    "type": "Microsoft.MachineLearningServices/workspaces/onlineEndpoints@2024-04-01",
    "name": "score",
    "parent_id": WORKSPACE,
    "location": "westeurope",
    "body": {"properties": {"authMode": "AADToken", "publicNetworkAccess": "Disabled"}},
}
DEPLOYMENT_AFTER = {
    "type": "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments@2024-04-01",
    "name": "blue",
    "parent_id": f"{WORKSPACE}/onlineEndpoints/score",
    "body": {"properties": {"model": "m:1", "instanceType": "Standard_NC6s_v3"}, "sku": {"name": "Default"}},
}


def plan(with_configuration: bool = True) -> dict[str, Any]:
    document: dict[str, Any] = {
        "format_version": "1.2",
        "resource_changes": [
            change("azurerm_kubernetes_cluster.aks", CLUSTER_AFTER),
            change("azurerm_kubernetes_cluster_node_pool.gpu", POOL_AFTER),
            change("module.ai.azurerm_cognitive_account.oai", ACCOUNT_AFTER, "module.ai"),
            change("azapi_resource.score", ENDPOINT_AFTER),
            change("azapi_resource.blue", DEPLOYMENT_AFTER),
            change(
                "azapi_update_resource.shutdown",
                {
                    "type": "Microsoft.MachineLearningServices/workspaces/onlineEndpoints@2024-04-01",
                    "resource_id": f"{WORKSPACE}/onlineEndpoints/score",
                    "body": {"properties": {"traffic": {"blue": 100}}},
                },
            ),
        ],
    }
    if with_configuration:
        document["configuration"] = {
            "root_module": {
                "resources": [
                    written(
                        "azurerm_kubernetes_cluster.aks",
                        name=const("aks"),
                        location=ref("var.location"),
                        resource_group_name=const("rg-ai"),
                        default_node_pool=[
                            {
                                "name": const("system"),
                                "vm_size": const("Standard_D4s_v5"),
                                "node_count": const(2),
                                "only_critical_addons_enabled": const(True),
                            }
                        ],
                    ),
                    written(
                        "azurerm_kubernetes_cluster_node_pool.gpu",
                        name=const("gpu"),
                        kubernetes_cluster_id=ref(
                            "azurerm_kubernetes_cluster.aks.id", "azurerm_kubernetes_cluster.aks"
                        ),
                        vm_size=const("Standard_NC6s_v3"),
                        node_count=const(1),
                    ),
                    written(
                        "azapi_resource.score",
                        type=const(ENDPOINT_AFTER["type"]),
                        name=const("score"),
                        parent_id=const(WORKSPACE),
                        location=const("westeurope"),
                        body=const(ENDPOINT_AFTER["body"]),
                    ),
                    written(
                        "azapi_resource.blue",
                        type=const(DEPLOYMENT_AFTER["type"]),
                        name=const("blue"),
                        parent_id=ref("azapi_resource.score.id", "azapi_resource.score"),
                        body=ref("var.model", "azapi_resource.score.id", "azapi_resource.score"),
                    ),
                    written(
                        "azapi_update_resource.shutdown",
                        type=const("Microsoft.MachineLearningServices/workspaces/onlineEndpoints@2024-04-01"),
                        resource_id=ref("azapi_resource.score.id", "azapi_resource.score"),
                        body=const({"properties": {"traffic": {"blue": 100}}}),
                    ),
                ],
                "module_calls": {
                    "ai": {
                        "source": "./modules/ai",
                        "module": {
                            "resources": [
                                written(
                                    "azurerm_cognitive_account.oai",
                                    name=const("oai"),
                                    location=ref("var.location"),
                                    resource_group_name=ref("var.group"),
                                    kind=const("OpenAI"),
                                    sku_name=const("S0"),
                                    public_network_access_enabled=const(False),
                                    network_acls=[{"default_action": const("Deny")}],
                                )
                            ]
                        },
                    }
                },
            }
        }
    return document


def resources(document: dict[str, Any]) -> dict[str, Resource]:
    found, _ = read_plan(parse_document(json.dumps(document), "plan.json"))
    return {r.name: r for r in Inventory(found).resources}


def test_an_azurerm_resource_is_configured_with_what_its_block_writes_and_no_default() -> None:
    pool = resources(plan())["aks/gpu"]
    assert pool.get("properties.scaleSetPriority") == "Regular" and pool.get("properties.nodeTaints") == []
    assert pool.origin.configured == {"properties.vmsize", "properties.count"}


def test_nested_blocks_and_a_dynamic_block_are_configured_by_their_arm_paths() -> None:
    found = resources(plan())
    assert found["aks"].origin.configured == {
        "location",
        "identity",  # a dynamic block: omitted from expressions, but planned
        "properties.agentpoolprofiles.0.name",
        "properties.agentpoolprofiles.0.vmsize",
        "properties.agentpoolprofiles.0.count",
        "properties.agentpoolprofiles.0.nodetaints",  # only_critical_addons_enabled = true
        "properties.agentpoolprofiles.0.mode",  # the default pool is always System
    }
    assert found["aks"].get("properties.disableLocalAccounts") is False  # planned, not written
    # the default pool as a pool of its own: the same, in its own paths
    assert found["aks/system"].origin.configured == {
        "name",
        "properties.vmsize",
        "properties.count",
        "properties.nodetaints",
        "properties.mode",
    }


def test_a_resource_in_a_module_is_configured_from_the_module_block() -> None:
    account = resources(plan())["oai"]
    assert account.get("properties.disableLocalAuth") is False
    assert account.origin.configured == {
        "location",
        "kind",
        "sku.name",
        "properties.publicnetworkaccess",
        "properties.networkacls.defaultaction",
    }


def test_azapi_body_keys_are_configured_and_an_update_adds_its_own() -> None:
    found = resources(plan())
    assert found["ws/score"].origin.configured == {
        "location",
        "properties.authmode",
        "properties.publicnetworkaccess",
        "properties.traffic.blue",  # merged from azapi_update_resource.shutdown
    }
    # a body built from references: each top-level member is written as a whole
    assert found["ws/score/blue"].origin.configured == {"properties", "sku"}


def test_a_plan_without_configuration_cannot_tell_and_says_so() -> None:
    assert all(r.origin.configured is None for r in resources(plan(with_configuration=False)).values())


def test_configured_paths_survive_a_snapshot(tmp_path: Path) -> None:
    found = resources(plan())
    path = tmp_path / "snapshot.json"
    save_inventory(str(path), found.values(), [], [])
    again, _ = load_snapshot(str(path))
    assert {r.name: r.origin.configured for r in again} == {r.name: r.origin.configured for r in found.values()}
