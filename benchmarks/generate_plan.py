"""Generate a large, realistic Terraform plan JSON for benchmarks.

The plan repeats a small AI estate (storage account, ML workspace, compute cluster, compute
instance, cognitive account, AKS cluster and GPU node pool, plus non-AI network resources),
with ids known only after apply and resolved through ``configuration`` references, sensitive
attributes, and single-line output as ``terraform show -json`` writes it.

    python benchmarks/generate_plan.py 10000 benchmarks/out/plan-10000.json [--modular] [--sources]

``--modular`` makes each copy of the estate an instance of one module called with
``for_each`` (``module.estate["12"]``), as such an estate is written in practice. With
``--sources``, the ``.tf`` files are written beside the plan, so the scan also maps every
finding to its ``.tf`` line: one block per resource (the worst case: no block is shared), or
the estate module and the root module that calls it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
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


def _role(name: str) -> str:
    """``st12`` -> ``st``: the resource's name inside the estate module."""
    return name.rstrip("0123456789")


def _resources(
    count: int, modular: bool
) -> Iterator[tuple[int, str, str, dict[str, Any], dict[str, Any], dict[str, list[str]]]]:
    """(copy, type, name, after, after_unknown, references) for ``count`` resources. ``modular``:
    each copy of the estate is an instance of one module, so names and references are the
    module's own (``st``, ``azurerm_storage_account.st.id``)."""
    produced, i = 0, 0
    while produced < count:
        for tftype, name, after, unknown, refs in _estate(i):
            if produced >= count:
                return
            if modular:
                name = _role(name)
                refs = {k: [".".join(_role(part) for part in r.split(".")) for r in v] for k, v in refs.items()}
            yield i, tftype, name, after, unknown, refs
            produced += 1
        i += 1


def generate(count: int, modular: bool = False) -> dict[str, Any]:
    changes: list[dict[str, Any]] = []
    planned: dict[str, list[dict[str, Any]]] = {}
    config: dict[str, dict[str, Any]] = {}
    for i, tftype, name, after, unknown, refs in _resources(count, modular):
        module = f'module.estate["{i}"]' if modular else ""
        address = f"{module}.{tftype}.{name}" if module else f"{tftype}.{name}"
        sensitive = {"primary_access_key": True} if "primary_access_key" in after else {}
        located = {"module_address": module} if module else {}
        changes.append(
            {
                "address": address,
                **located,
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
        planned.setdefault(module, []).append(
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
        config.setdefault(
            f"{tftype}.{name}",
            {
                "address": f"{tftype}.{name}",
                "mode": "managed",
                "type": tftype,
                "name": name,
                "provider_config_key": "azurerm",
                "expressions": {k: {"references": v} for k, v in refs.items()},
                "schema_version": 0,
            },
        )
    root: dict[str, Any] = {"resources": list(config.values())}
    values: dict[str, Any] = {"resources": planned.get("", [])}
    if modular:
        root = {
            "module_calls": {
                "estate": {
                    "source": "./modules/estate",
                    "for_each_expression": {"references": ["var.copies"]},
                    "module": root,
                }
            }
        }
        values = {
            "resources": [],
            "child_modules": [{"address": address, "resources": items} for address, items in planned.items()],
        }
    return {
        "format_version": "1.2",
        "terraform_version": "1.9.8",
        "variables": {},
        "planned_values": {"root_module": values},
        "resource_changes": changes,
        "configuration": {
            "provider_config": {"azurerm": {"name": "azurerm", "full_name": AZURERM}},
            "root_module": root,
        },
        "timestamp": "2026-11-20T10:00:00Z",
        "applyable": True,
        "complete": True,
        "errored": False,
    }


def _hcl(value: Any) -> str:
    """A planned value as an HCL expression."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_hcl(v) for v in value) + "]"
    return "{ " + ", ".join(f"{json.dumps(k)} = {_hcl(v)}" for k, v in value.items()) + " }"


def _block(lines: list[str], values: dict[str, Any], indent: str) -> None:
    for key, value in values.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:  # a nested block, as the provider schema declares it
                lines.append(f"{indent}{key} {{")
                _block(lines, item, indent + "  ")
                lines.append(f"{indent}}}")
        else:
            lines.append(f"{indent}{key} = {_hcl(value)}")


def sources(count: int, modular: bool) -> dict[str, str]:
    """The ``.tf`` files that declare ``generate(count, modular)``: a block per resource, or the
    estate module (a block per role) and the root module that calls it with ``for_each``."""
    lines: list[str] = []
    declared: set[str] = set()
    copies = 0
    for i, tftype, name, after, _, refs in _resources(count, modular):
        copies = i + 1
        if f"{tftype}.{name}" in declared:
            continue
        declared.add(f"{tftype}.{name}")
        lines.append(f'resource "{tftype}" "{name}" {{')
        _block(lines, {k: v for k, v in after.items() if k != "primary_access_key"}, "  ")
        lines += [f"  {attribute} = {references[0]}" for attribute, references in refs.items()]
        lines += ["}", ""]
    if not modular:
        return {"main.tf": "\n".join(lines)}
    root = [
        'variable "copies" {',
        f"  default = [{', '.join(json.dumps(str(i)) for i in range(copies))}]",
        "}",
        "",
        'module "estate" {',
        '  source   = "./modules/estate"',
        "  for_each = toset(var.copies)",
        "}",
        "",
    ]
    return {"main.tf": "\n".join(root), "modules/estate/main.tf": "\n".join(lines)}


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if not a.startswith("--")]
    modular = "--modular" in argv
    count = int(args[0]) if args else 10_000
    target = Path(args[1] if len(args) > 1 else f"benchmarks/out/plan-{count}.json")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(generate(count, modular), separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {count} resources to {target} ({target.stat().st_size / 1e6:.1f} MB)")
    if "--sources" in argv:
        for name, text in sources(count, modular).items():
            file = target.parent / name
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text, encoding="utf-8")
            print(f"wrote {file} ({file.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
