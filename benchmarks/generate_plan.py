"""Generate a large, realistic Terraform plan JSON for benchmarks.

The plan repeats a small AI estate (storage account, ML workspace, compute cluster, compute
instance, cognitive account, AKS cluster and GPU node pool, plus non-AI network resources),
with ids known only after apply and resolved through ``configuration`` references, sensitive
attributes, and single-line output as ``terraform show -json`` writes it.

    python benchmarks/generate_plan.py 10000 benchmarks/out/plan-10000.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

AZURERM = "registry.terraform.io/hashicorp/azurerm"
REGIONS = ("eastus", "westeurope", "westus2", "northeurope")


def _estate(i: int) -> list[tuple[str, str, dict[str, Any], dict[str, Any], dict[str, list[str]]]]:
    """(type, name, after, after_unknown, references) for one copy of the estate."""
    region = REGIONS[i % len(REGIONS)]
    data_region = REGIONS[(i + (i % 3 == 0)) % len(REGIONS)]
    rg = f"rg-ai-{i}"
    st, ws, aks = f"st{i}", f"ws{i}", f"aks{i}"
    return [
        (
            "azurerm_storage_account",
            st,
            {
                "name": f"stai{i:06d}",
                "location": data_region,
                "resource_group_name": rg,
                "account_tier": "Standard",
                "account_replication_type": "LRS",
                "public_network_access_enabled": i % 2 == 0,
                "primary_access_key": "x" * 88,
                "network_rules": [{"default_action": "Deny", "bypass": ["AzureServices"]}],
                "tags": {"n": str(i)},
            },
            {"id": True, "primary_blob_endpoint": True, "primary_access_key": False},
            {},
        ),
        (
            "azurerm_machine_learning_workspace",
            ws,
            {
                "name": f"mlw-{i}",
                "location": region,
                "resource_group_name": rg,
                "public_network_access_enabled": False,
                "sku_name": "Basic",
                "identity": [{"type": "SystemAssigned", "identity_ids": []}],
                "tags": {},
            },
            {"id": True, "storage_account_id": True, "key_vault_id": True, "application_insights_id": True},
            {"storage_account_id": [f"azurerm_storage_account.{st}.id", f"azurerm_storage_account.{st}"]},
        ),
        (
            "azurerm_machine_learning_compute_cluster",
            f"cc{i}",
            {
                "name": "train",
                "location": region,
                "vm_size": "Standard_NC24ads_A100_v4",
                "vm_priority": "Dedicated",
                "local_auth_enabled": False,
                "scale_settings": [
                    {"min_node_count": i % 2, "max_node_count": 4, "scale_down_nodes_after_idle_duration": "PT30M"}
                ],
            },
            {"id": True, "machine_learning_workspace_id": True},
            {"machine_learning_workspace_id": [f"azurerm_machine_learning_workspace.{ws}.id"]},
        ),
        (
            "azurerm_machine_learning_compute_instance",
            f"ci{i}",
            {
                "name": "notebook",
                "virtual_machine_size": "Standard_NC4as_T4_v3",
                "local_auth_enabled": False,
                "authorization_type": "personal",
            },
            {"id": True, "machine_learning_workspace_id": True},
            {"machine_learning_workspace_id": [f"azurerm_machine_learning_workspace.{ws}.id"]},
        ),
        (
            "azurerm_cognitive_account",
            f"oai{i}",
            {
                "name": f"oai-{i}",
                "location": region,
                "resource_group_name": rg,
                "kind": "OpenAI",
                "sku_name": "S0",
                "local_auth_enabled": i % 4 == 0,
                "public_network_access_enabled": False,
                "custom_subdomain_name": f"oai-{i}",
            },
            {"id": True, "endpoint": True},
            {},
        ),
        (
            "azurerm_kubernetes_cluster",
            aks,
            {
                "name": f"aks-{i}",
                "location": region,
                "resource_group_name": rg,
                "dns_prefix": f"aks{i}",
                "local_account_disabled": True,
                "default_node_pool": [
                    {
                        "name": "system",
                        "vm_size": "Standard_D4s_v5",
                        "node_count": 2,
                        "only_critical_addons_enabled": True,
                    }
                ],
            },
            {"id": True, "kube_config": True, "fqdn": True},
            {},
        ),
        (
            "azurerm_kubernetes_cluster_node_pool",
            f"gpu{i}",
            {
                "name": "gpu",
                "vm_size": "Standard_NC24ads_A100_v4",
                "mode": "User",
                "node_taints": [] if i % 5 == 0 else ["sku=gpu:NoSchedule"],
                "auto_scaling_enabled": True,
                "min_count": i % 2,
                "max_count": 3,
            },
            {"id": True, "kubernetes_cluster_id": True},
            {"kubernetes_cluster_id": [f"azurerm_kubernetes_cluster.{aks}.id"]},
        ),
        (
            "azurerm_virtual_network",
            f"vnet{i}",
            {"name": f"vnet-{i}", "location": region, "resource_group_name": rg, "address_space": ["10.0.0.0/16"]},
            {"id": True, "guid": True},
            {},
        ),
        (
            "azurerm_subnet",
            f"snet{i}",
            {"name": "default", "resource_group_name": rg, "address_prefixes": ["10.0.1.0/24"]},
            {"id": True, "virtual_network_name": True},
            {"virtual_network_name": [f"azurerm_virtual_network.vnet{i}.name"]},
        ),
        (
            "azurerm_network_security_group",
            f"nsg{i}",
            {
                "name": f"nsg-{i}",
                "location": region,
                "resource_group_name": rg,
                "security_rule": [
                    {
                        "name": "ssh",
                        "priority": 100,
                        "direction": "Inbound",
                        "access": "Allow",
                        "protocol": "Tcp",
                        "destination_port_range": "22",
                        "source_address_prefix": "*",
                    }
                ],
            },
            {"id": True},
            {},
        ),
    ]


def generate(count: int) -> dict[str, Any]:
    changes: list[dict[str, Any]] = []
    planned: list[dict[str, Any]] = []
    config: list[dict[str, Any]] = []
    i = 0
    while len(changes) < count:
        for tftype, name, after, unknown, refs in _estate(i):
            if len(changes) >= count:
                break
            address = f"{tftype}.{name}"
            sensitive = {"primary_access_key": True} if "primary_access_key" in after else {}
            changes.append(
                {
                    "address": address,
                    "mode": "managed",
                    "type": tftype,
                    "name": name,
                    "provider_name": AZURERM,
                    "change": {
                        "actions": ["create"],
                        "before": None,
                        "after": after,
                        "after_unknown": unknown,
                        "before_sensitive": False,
                        "after_sensitive": sensitive,
                    },
                }
            )
            planned.append(
                {
                    "address": address,
                    "mode": "managed",
                    "type": tftype,
                    "name": name,
                    "provider_name": AZURERM,
                    "schema_version": 0,
                    "values": after,
                    "sensitive_values": sensitive,
                }
            )
            config.append(
                {
                    "address": address,
                    "mode": "managed",
                    "type": tftype,
                    "name": name,
                    "provider_config_key": "azurerm",
                    "expressions": {k: {"references": v} for k, v in refs.items()},
                    "schema_version": 0,
                }
            )
        i += 1
    return {
        "format_version": "1.2",
        "terraform_version": "1.9.8",
        "variables": {},
        "planned_values": {"root_module": {"resources": planned}},
        "resource_changes": changes,
        "configuration": {
            "provider_config": {"azurerm": {"name": "azurerm", "full_name": AZURERM}},
            "root_module": {"resources": config},
        },
        "timestamp": "2026-11-20T10:00:00Z",
        "applyable": True,
        "complete": True,
        "errored": False,
    }


def main(argv: list[str]) -> int:
    count = int(argv[1]) if len(argv) > 1 else 10_000
    target = Path(argv[2] if len(argv) > 2 else f"benchmarks/out/plan-{count}.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(generate(count), separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {count} resources to {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
