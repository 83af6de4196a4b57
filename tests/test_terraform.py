"""The Terraform plan reader: actions, unknown and sensitive values, modules, references, azapi."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.errors import InputError
from scanner.model.unknown import Unknown
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources import load_file
from scanner.sources.terraform.plan import PlanReader
from tests.conftest import run_cli, scan

AZURERM = "registry.terraform.io/hashicorp/azurerm"


def change(
    address: str,
    tftype: str,
    after: dict[str, Any] | None,
    actions: list[str],
    unknown: Any = None,
    sensitive: Any = None,
    module: str | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "address": address,
        "mode": "managed",
        "type": tftype,
        "name": address.rsplit(".", 1)[-1].split("[")[0],
        "provider_name": AZURERM,
        "change": {
            "actions": actions,
            "before": None,
            "after": after,
            "after_unknown": unknown or {},
            "before_sensitive": False,
            "after_sensitive": sensitive or {},
        },
    }
    if module:
        entry["module_address"] = module
    return entry


def plan(tmp_path: Path, changes: list[dict[str, Any]], **extra: Any) -> Path:
    document = {
        "format_version": extra.pop("format_version", "1.2"),
        "terraform_version": "1.9.8",
        "resource_changes": changes,
        **extra,
    }
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document))
    return path


def cognitive(name: str, local_auth: Any = True) -> dict[str, Any]:
    return {
        "name": name,
        "location": "East US",
        "resource_group_name": "rg",
        "kind": "OpenAI",
        "local_auth_enabled": local_auth,
    }


def test_deleted_and_forgotten_resources_are_not_deployed(tmp_path: Path) -> None:
    path = plan(
        tmp_path,
        [
            change("azurerm_cognitive_account.gone", "azurerm_cognitive_account", None, ["delete"]),
            change("azurerm_cognitive_account.kept", "azurerm_cognitive_account", cognitive("kept"), ["no-op"]),
            change(
                "azurerm_cognitive_account.replaced",
                "azurerm_cognitive_account",
                cognitive("replaced"),
                ["delete", "create"],
            ),
            change(
                "azurerm_cognitive_account.forgotten",
                "azurerm_cognitive_account",
                cognitive("forgotten"),
                ["forget"],
            ),
        ],
        planned_values={
            "root_module": {
                "resources": [
                    {
                        "address": "azurerm_cognitive_account.gone",
                        "mode": "managed",
                        "type": "azurerm_cognitive_account",
                        "name": "gone",
                        "values": cognitive("gone"),
                    },
                ]
            }
        },
    )
    names = {r.name for r in load_file(path, "p").inventory.resources}
    assert names == {"kept", "replaced"}


@pytest.mark.parametrize("version", ["0.1", "0.2", "1.0", "1.1", "1.2", "1.9"])
def test_supported_format_versions(tmp_path: Path, version: str) -> None:
    path = plan(
        tmp_path,
        [change("azurerm_cognitive_account.a", "azurerm_cognitive_account", cognitive("a"), ["create"])],
        format_version=version,
    )
    assert [r.name for r in load_file(path, "p").inventory.resources] == ["a"]


def test_unknown_major_version_is_rejected(tmp_path: Path) -> None:
    path = plan(tmp_path, [], format_version="2.0")
    with pytest.raises(InputError, match=r"unsupported Terraform plan format_version '2\.0'"):
        load_file(path, "p")


def test_known_after_apply_becomes_unknown_and_undetermined(tmp_path: Path) -> None:
    after = cognitive("later")
    del after["local_auth_enabled"]
    path = plan(
        tmp_path,
        [
            change(
                "azurerm_cognitive_account.later",
                "azurerm_cognitive_account",
                after,
                ["create"],
                unknown={"local_auth_enabled": True, "id": True},
            )
        ],
    )
    resource = load_file(path, "p").inventory.resources[0]
    assert isinstance(resource.get("properties.disableLocalAuth"), Unknown)
    result = scan(path, select=["AZAI-101"])
    assert not result.findings
    assert [(u.check.id, u.path) for u in result.undetermined] == [("AZAI-101", "properties.disableLocalAuth")]


def test_sensitive_values_become_unknown_and_never_print(tmp_path: Path) -> None:
    after = cognitive("secretive", local_auth=True)
    after["custom_subdomain_name"] = "s3cr3t-subdomain-value"
    path = plan(
        tmp_path,
        [
            change(
                "azurerm_cognitive_account.s",
                "azurerm_cognitive_account",
                after,
                ["create"],
                sensitive={"local_auth_enabled": True, "custom_subdomain_name": True},
            )
        ],
    )
    resource = load_file(path, "p").inventory.resources[0]
    assert isinstance(resource.get("properties.customSubDomainName"), Unknown)
    for fmt in ("json", "text"):
        done = run_cli("scan", "--format", fmt, "--fail-on", "none", str(path))
        assert "s3cr3t-subdomain-value" not in done.stdout
        assert "sensitive value, not read" in done.stdout


def test_modules_count_and_for_each_instances_with_references_through_variables(tmp_path: Path) -> None:
    gpu_pool = {
        "name": "gpu",
        "vm_size": "Standard_NC24ads_A100_v4",
        "mode": "User",
        "node_taints": [],
        "node_count": 0,
        "auto_scaling_enabled": True,
        "min_count": 0,
        "max_count": 2,
    }
    changes = [
        change(
            "module.aks.azurerm_kubernetes_cluster.this",
            "azurerm_kubernetes_cluster",
            {
                "name": "aks-mod",
                "location": "eastus",
                "resource_group_name": "rg",
                "default_node_pool": [{"name": "sys", "vm_size": "Standard_D4s_v5", "node_count": 1}],
            },
            ["create"],
            unknown={"id": True},
            module="module.aks",
        ),
        change(
            'module.aks.module.pool["gpu"].azurerm_kubernetes_cluster_node_pool.this[0]',
            "azurerm_kubernetes_cluster_node_pool",
            gpu_pool,
            ["create"],
            unknown={"id": True, "kubernetes_cluster_id": True},
            module='module.aks.module.pool["gpu"]',
        ),
    ]
    configuration = {
        "root_module": {
            "module_calls": {
                "aks": {
                    "source": "./aks",
                    "module": {
                        "resources": [
                            {
                                "address": "azurerm_kubernetes_cluster.this",
                                "mode": "managed",
                                "type": "azurerm_kubernetes_cluster",
                                "name": "this",
                                "expressions": {},
                            }
                        ],
                        "module_calls": {
                            "pool": {
                                "source": "./pool",
                                "for_each_expression": {"references": ["var.pools"]},
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
                                            "mode": "managed",
                                            "type": "azurerm_kubernetes_cluster_node_pool",
                                            "name": "this",
                                            "count_expression": {"constant_value": 1},
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
            }
        }
    }
    path = plan(tmp_path, changes, configuration=configuration)
    result = scan(path)
    hits = {(f.check.id, f.resource.name, f.resource.origin.address) for f in result.findings}
    assert (
        "AZAI-102",
        "aks-mod/gpu",
        'module.aks.module.pool["gpu"].azurerm_kubernetes_cluster_node_pool.this[0]',
    ) in hits


def test_planned_values_only_instances_are_read(tmp_path: Path) -> None:
    path = plan(
        tmp_path,
        [],
        planned_values={
            "root_module": {
                "resources": [],
                "child_modules": [
                    {
                        "address": "module.m",
                        "resources": [
                            {
                                "address": "module.m.azurerm_cognitive_account.x[1]",
                                "mode": "managed",
                                "type": "azurerm_cognitive_account",
                                "name": "x",
                                "index": 1,
                                "values": cognitive("from-planned-values"),
                                "sensitive_values": {},
                            }
                        ],
                    }
                ],
            }
        },
    )
    result = scan(path, select=["AZAI-101"])
    assert [(f.resource.name, f.resource.origin.address) for f in result.findings] == [
        ("from-planned-values", "module.m.azurerm_cognitive_account.x[1]")
    ]


def test_data_sources_resolve_regions_but_are_not_scanned(tmp_path: Path) -> None:
    storage_id = "/subscriptions/s/resourceGroups/data/providers/Microsoft.Storage/storageAccounts/shared"
    path = plan(
        tmp_path,
        [
            change(
                "azurerm_machine_learning_workspace.ws",
                "azurerm_machine_learning_workspace",
                {
                    "name": "ws",
                    "location": "eastus",
                    "resource_group_name": "rg",
                    "storage_account_id": storage_id,
                },
                ["create"],
                unknown={"id": True},
            ),
        ],
        prior_state={
            "values": {
                "root_module": {
                    "resources": [
                        {
                            "address": "data.azurerm_storage_account.shared",
                            "mode": "data",
                            "type": "azurerm_storage_account",
                            "name": "shared",
                            "values": {
                                "id": storage_id,
                                "name": "shared",
                                "location": "northeurope",
                                "resource_group_name": "data",
                                "primary_access_key": "k",
                            },
                            "sensitive_values": {"primary_access_key": True},
                        }
                    ]
                }
            }
        },
    )
    result = scan(path, select=["AZAI-301"])
    assert [(f.check.id, f.resource.name) for f in result.findings] == [("AZAI-301", "ws")]
    assert result.resources_scanned == 1


def test_azapi_update_resource_is_merged_into_its_target(tmp_path: Path) -> None:
    path = Path(__file__).parent.parent / "fixtures" / "rules" / "AZAI-201" / "plan-azurerm.json"
    instances = {r.name: r for r in load_file(path, "p").inventory.resources}
    assert instances["mlws/ciidle30"].get("properties.properties.idleTimeBeforeShutdown") == "PT30M"
    assert instances["mlws/cinoidle"].get("properties.properties.idleTimeBeforeShutdown") is None


def test_update_of_an_undeclared_resource_is_a_warning(tmp_path: Path) -> None:
    update = {
        "address": "azapi_update_resource.x",
        "mode": "managed",
        "type": "azapi_update_resource",
        "name": "x",
        "provider_name": "registry.terraform.io/azure/azapi",
        "change": {
            "actions": ["create"],
            "before": None,
            "after": {
                "type": "Microsoft.Storage/storageAccounts@2023-05-01",
                "resource_id": "/subscriptions/s/resourceGroups/r/providers/Microsoft.Storage/storageAccounts/other",
                "body": {"properties": {}},
            },
            "after_unknown": {"id": True},
        },
    }
    path = plan(tmp_path, [update])
    assert any("does not declare" in w for w in load_file(path, "p").warnings)


def test_positions_point_into_single_line_plans(tmp_path: Path) -> None:
    path = Path(__file__).parent.parent / "fixtures" / "demo" / "plan.json"
    text = path.read_text()
    assert text.count("\n") == 1
    result = scan(path)
    finding = next(f for f in result.findings if f.check.id == "AZAI-201" and f.resource.name == "ws-demo/train")
    place = finding.place
    assert place is not None and place.line == 1 and place.column is not None and place.pointer is not None
    assert text[place.column - 1 :].startswith("1")  # min_node_count's value
    assert place.pointer.endswith("/change/after/scale_settings/0/min_node_count")


def test_azurerm_v3_and_v4_attribute_names_give_the_same_arm_resource(tmp_path: Path) -> None:
    v3 = {
        "name": "gpu",
        "vm_size": "Standard_NC4as_T4_v3",
        "mode": "User",
        "enable_auto_scaling": True,
        "min_count": 1,
        "max_count": 3,
        "enable_node_public_ip": True,
        "enable_host_encryption": False,
        "node_taints": [],
    }
    v4 = {
        "name": "gpu",
        "vm_size": "Standard_NC4as_T4_v3",
        "mode": "User",
        "auto_scaling_enabled": True,
        "min_count": 1,
        "max_count": 3,
        "node_public_ip_enabled": True,
        "host_encryption_enabled": False,
        "node_taints": [],
    }
    storage_v3 = {
        "name": "st",
        "location": "eastus",
        "resource_group_name": "rg",
        "allow_blob_public_access": True,
        "enable_https_traffic_only": True,
    }
    storage_v5 = {
        "name": "st",
        "location": "eastus",
        "resource_group_name": "rg",
        "allow_nested_items_to_be_public": True,
        "https_traffic_only_enabled": True,
    }
    bodies = []
    for pool, storage in ((v3, storage_v3), (v4, storage_v5)):
        path = plan(
            tmp_path,
            [
                change(
                    "azurerm_kubernetes_cluster_node_pool.gpu",
                    "azurerm_kubernetes_cluster_node_pool",
                    pool,
                    ["create"],
                    unknown={"kubernetes_cluster_id": True},
                ),
                change("azurerm_storage_account.st", "azurerm_storage_account", storage, ["create"]),
            ],
        )
        bodies.append({r.type: r.body["properties"] for r in load_file(path, "p").inventory.resources})
    assert bodies[0] == bodies[1]
    assert bodies[0]["Microsoft.ContainerService/managedClusters/agentPools"]["enableAutoScaling"] is True
    assert bodies[0]["Microsoft.Storage/storageAccounts"] == {
        "allowBlobPublicAccess": True,
        "supportsHttpsTrafficOnly": True,
    }


def _config(*blocks: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """A ``configuration`` whose resources carry the given expressions."""
    return {
        "root_module": {
            "resources": [
                {
                    "address": address,
                    "mode": "managed",
                    "type": tftype,
                    "name": address.split(".")[1],
                    "expressions": expressions,
                }
                for address, tftype, expressions in blocks
            ]
        }
    }


def test_ids_known_only_after_apply_resolve_inside_blocks_and_for_extension_resources(tmp_path: Path) -> None:
    """A private endpoint and a diagnostic setting created with the account they attach to: their
    target ids are unknown in the plan and resolve through configuration references."""
    account = {**cognitive("oai-new", local_auth=False), "public_network_access_enabled": False}
    endpoint = {
        "name": "pe-oai",
        "location": "East US",
        "resource_group_name": "rg",
        "private_service_connection": [{"name": "oai", "is_manual_connection": False}],
    }
    setting = {
        "name": "to-logs",
        "log_analytics_workspace_id": "/subscriptions/s/resourceGroups/ops/x/log",
        "enabled_log": [{"category_group": "allLogs"}],
    }
    reference = {"references": ["azurerm_cognitive_account.oai.id", "azurerm_cognitive_account.oai"]}
    path = plan(
        tmp_path,
        [
            change("azurerm_cognitive_account.oai", "azurerm_cognitive_account", account, ["create"], {"id": True}),
            change(
                "azurerm_private_endpoint.pe",
                "azurerm_private_endpoint",
                endpoint,
                ["create"],
                {"id": True, "private_service_connection": [{"private_connection_resource_id": True}]},
            ),
            change(
                "azurerm_monitor_diagnostic_setting.logs",
                "azurerm_monitor_diagnostic_setting",
                setting,
                ["create"],
                {"id": True, "target_resource_id": True},
            ),
        ],
        configuration=_config(
            ("azurerm_cognitive_account.oai", "azurerm_cognitive_account", {}),
            (
                "azurerm_private_endpoint.pe",
                "azurerm_private_endpoint",
                {"private_service_connection": [{"private_connection_resource_id": reference}]},
            ),
            (
                "azurerm_monitor_diagnostic_setting.logs",
                "azurerm_monitor_diagnostic_setting",
                {"target_resource_id": reference},
            ),
        ),
    )
    inventory = load_file(path, "p").inventory
    (oai,) = inventory.of_type("Microsoft.CognitiveServices/accounts")
    assert inventory.has_private_endpoint(oai)
    assert [s.name for s in inventory.extensions(oai, "Microsoft.Insights/diagnosticSettings")] == ["to-logs"]
    result = scan(path, select=["AZAI-108", "AZAI-501"])
    assert not result.findings and not result.undetermined
    assert {c.id for c, _ in result.passed} == {"AZAI-108", "AZAI-501"}


def test_an_azapi_extension_resource_hangs_off_its_target(tmp_path: Path) -> None:
    workspace_id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/ws"
    workspace = change(
        "azapi_resource.ws",
        "azapi_resource",
        {
            "type": "Microsoft.MachineLearningServices/workspaces@2024-10-01",
            "name": "ws",
            "location": "eastus",
            "parent_id": "/subscriptions/s/resourceGroups/rg",
            "body": {"properties": {}},
        },
        ["create"],
        {"id": True},
    )
    setting = change(
        "azapi_resource.logs",
        "azapi_resource",
        {
            "type": "Microsoft.Insights/diagnosticSettings@2021-05-01-preview",
            "name": "to-logs",
            "parent_id": workspace_id,
            "body": {"properties": {"workspaceId": "/subscriptions/s/x/log"}},
        },
        ["create"],
        {"id": True},
    )
    inventory = load_file(plan(tmp_path, [workspace, setting]), "p").inventory
    (ws,) = inventory.of_type("Microsoft.MachineLearningServices/workspaces")
    (logs,) = inventory.extensions(ws, "Microsoft.Insights/diagnosticSettings")
    assert logs.id == f"{workspace_id}/providers/Microsoft.Insights/diagnosticSettings/to-logs"


def test_many_updates_find_their_targets_in_one_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each azapi_update_resource compared every instance's ARM id with its target's: updates x
    instances. A hostile plan of many of each would hang; counted here, as no test times."""
    accounts = 200
    group = "/subscriptions/s/resourceGroups/r/providers/Microsoft.Storage/storageAccounts"
    changes: list[dict[str, Any]] = []
    for i in range(accounts):
        account = {
            "type": "Microsoft.Storage/storageAccounts@2023-05-01",
            "name": f"st{i}",
            "parent_id": group.rsplit("/providers", 1)[0],
            "location": "eastus",
            "body": {"properties": {}},
        }
        update = {
            "type": "Microsoft.Storage/storageAccounts@2023-05-01",
            "resource_id": f"{group}/st{i}",
            "body": {"properties": {"minimumTlsVersion": "TLS1_2"}},
        }
        for address, rtype, after in (
            (f"azapi_resource.st{i}", "azapi_resource", account),
            (f"azapi_update_resource.u{i}", "azapi_update_resource", update),
        ):
            changes.append(
                {
                    "address": address,
                    "mode": "managed",
                    "type": rtype,
                    "name": address.split(".")[1],
                    "change": {"actions": ["create"], "before": None, "after": after, "after_unknown": {}},
                }
            )
    path = plan(tmp_path, changes)
    calls = 0
    arm_id = PlanReader.arm_id

    def counted(reader: PlanReader, instance: Any) -> str:
        nonlocal calls
        calls += 1
        return arm_id(reader, instance)

    monkeypatch.setattr(PlanReader, "arm_id", counted)
    loaded = load_file(path, "p")
    assert not loaded.warnings
    merged = [r for r in loaded.inventory.resources if r.get("properties.minimumTlsVersion") == "TLS1_2"]
    assert len(merged) == accounts
    assert calls <= 10 * accounts  # linear: a constant number of ids per instance


def test_ai_services_customer_managed_key_counts_and_its_storage_block_does_not(tmp_path: Path) -> None:
    """azurerm_ai_services sends `customer_managed_key` to ARM (its expandCustomerManagedKey) but
    never sends `storage`: with both AZAI-107 options on, the keyed account passes the key check
    and both fail the storage check, declared block or not."""
    base = {"location": "East US", "resource_group_name": "rg", "sku_name": "S0"}
    key = [{"key_vault_key_id": "https://kv.vault.azure.net/keys/cmk/0123", "identity_client_id": "c"}]
    storage = [
        {"storage_account_id": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/st"}
    ]
    path = plan(
        tmp_path,
        [
            change(
                "azurerm_ai_services.keyed",
                "azurerm_ai_services",
                {**base, "name": "ais-keyed", "customer_managed_key": key, "storage": storage},
                ["create"],
            ),
            change("azurerm_ai_services.plain", "azurerm_ai_services", {**base, "name": "ais-plain"}, ["create"]),
        ],
    )
    result = run_scan(
        ScanRequest(
            paths=[str(path)],
            select=("AZAI-107",),
            rule_options=("AZAI-107:required=true", "AZAI-107:owned_storage=true"),
        )
    )
    paths = {(f.resource.name, f.violation.path) for f in result.findings}
    assert paths == {
        ("ais-keyed", "properties.userOwnedStorage"),
        ("ais-plain", "properties.userOwnedStorage"),
        ("ais-plain", "properties.encryption.keySource"),
    }


ACCOUNT_ID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.CognitiveServices/accounts/oai"


def _account_child(address: str, tftype: str, **values: Any) -> dict[str, Any]:
    return change(address, tftype, {"cognitive_account_id": ACCOUNT_ID, **values}, ["create"])


@pytest.mark.parametrize(
    ("tftype", "auth_type"),
    [
        ("azurerm_cognitive_account_connection_account_key", "AccountKey"),
        ("azurerm_cognitive_account_connection_account_managed_identity", "AccountManagedIdentity"),
        ("azurerm_cognitive_account_connection_api_key", "ApiKey"),
        ("azurerm_cognitive_account_connection_custom_keys", "CustomKeys"),
        ("azurerm_cognitive_account_connection_entra_id", "AAD"),
    ],
)
def test_each_connection_type_is_an_account_connection_with_the_auth_type_it_implies(
    tmp_path: Path, tftype: str, auth_type: str
) -> None:
    connection = _account_child(
        f"{tftype}.search", tftype, name="search", category="CognitiveSearch", target="https://s.search.windows.net"
    )
    (resource,) = load_file(plan(tmp_path, [connection]), "p").inventory.resources
    assert (resource.type, resource.id) == (
        "Microsoft.CognitiveServices/accounts/connections",
        f"{ACCOUNT_ID}/connections/search",
    )
    assert resource.body["properties"] == {
        "authType": auth_type,
        "category": "CognitiveSearch",
        "target": "https://s.search.windows.net",
    }


def test_a_customer_managed_key_resource_is_merged_into_its_account_not_a_resource_of_its_own(tmp_path: Path) -> None:
    account = change("azurerm_cognitive_account.oai", "azurerm_cognitive_account", cognitive("oai"), ["create"])
    account["change"]["after"]["id"] = ACCOUNT_ID
    key = _account_child(
        "azurerm_cognitive_account_customer_managed_key.oai",
        "azurerm_cognitive_account_customer_managed_key",
        key_vault_key_id="https://kv.vault.azure.net/keys/cmk",
    )
    loaded = load_file(plan(tmp_path, [account, key]), "p")
    (resource,) = loaded.inventory.resources
    assert (resource.name, resource.get("properties.encryption.keySource")) == ("oai", "Microsoft.KeyVault")
    assert (loaded.warnings, loaded.untranslated) == ([], {})


def test_a_customer_managed_key_for_an_account_the_plan_does_not_declare_is_a_warning(tmp_path: Path) -> None:
    key = _account_child(
        "azurerm_cognitive_account_customer_managed_key.other",
        "azurerm_cognitive_account_customer_managed_key",
        key_vault_key_id="https://kv.vault.azure.net/keys/cmk",
    )
    loaded = load_file(plan(tmp_path, [key]), "p")
    assert (loaded.inventory.resources, loaded.untranslated) == ([], {})
    assert loaded.warnings == [
        "p: azurerm_cognitive_account_customer_managed_key.other updates a resource this plan does not declare; "
        "not merged"
    ]


def test_instances_nothing_translates_are_counted_by_terraform_type(tmp_path: Path) -> None:
    """Unmapped types of any provider, and an azapi resource whose type the plan does not know;
    not a resource being deleted, an update, or a data source."""
    azapi_unknown = change("azapi_resource.later", "azapi_resource", {"name": "x"}, ["create"], unknown={"type": True})
    update = change(
        "azapi_update_resource.tls",
        "azapi_update_resource",
        {"type": "Microsoft.Storage/storageAccounts@2023-05-01", "resource_id": "/x", "body": {}},
        ["create"],
    )
    path = plan(
        tmp_path,
        [
            change("azurerm_virtual_network.a", "azurerm_virtual_network", {"name": "a"}, ["create"]),
            change("azurerm_virtual_network.b", "azurerm_virtual_network", {"name": "b"}, ["update"]),
            change("azurerm_virtual_network.gone", "azurerm_virtual_network", None, ["delete"]),
            change("time_sleep.wait", "time_sleep", {"create_duration": "30s"}, ["create"]),
            change("azurerm_cognitive_account.oai", "azurerm_cognitive_account", cognitive("oai"), ["create"]),
            azapi_unknown,
            update,
        ],
        prior_state={
            "values": {
                "root_module": {
                    "resources": [
                        {
                            "address": "data.azurerm_client_config.me",
                            "mode": "data",
                            "type": "azurerm_client_config",
                            "name": "me",
                            "values": {"tenant_id": "t"},
                        }
                    ]
                }
            }
        },
    )
    loaded = load_file(path, "p")
    assert loaded.untranslated == {"azurerm_virtual_network": 2, "time_sleep": 1, "azapi_resource": 1}
    assert [r.name for r in loaded.inventory.resources if not r.origin.reference_only] == ["oai"]
