"""azurerm resource types translated into ARM shape, one small table per type.

Each `Attr` maps a Terraform attribute path (with older provider names as alternatives, newest
first) to the ARM property path the API uses, through an optional converter. Only the types
and properties the checks read are mapped; the instances of every other type are counted by
type (`PlanReader.untranslated`), and every report names those types. Sources:
the azurerm v3/v4/v5 docs and upgrade guides, summarised in shared/reference/terraform-plan.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.model import azure_types as T
from scanner.model.unknown import Unknown

SKIP = object()  # a converter's way to say "this value sets nothing"


@dataclass(frozen=True, slots=True)
class Attr:
    tf: tuple[str, ...]
    arm: str
    convert: Callable[[Any], Any] | None = None


@dataclass(frozen=True, slots=True)
class TypeMap:
    """How one Terraform resource type becomes one ARM resource.

    ``parent`` names the attribute holding the parent's id for child types (a compute's
    workspace, a node pool's cluster); ``scope`` the one holding the target of an extension
    resource (a diagnostic setting's resource); ``constants`` are ARM values implied by the type.
    ``parent_location``: the provider sends the parent's region as the ARM ``location``, which
    the configuration does not hold. ``inexpressible``: ARM properties the provider cannot set,
    with how to set them instead. ``patches`` names the attribute holding the id of another
    resource whose properties the type writes (as ``azapi_update_resource`` does): it is no
    resource of its own, and its translated body is merged into that one's.
    """

    arm_type: str
    attrs: tuple[Attr, ...]
    constants: Mapping[str, Any] = field(default_factory=dict)
    parent: str | None = None
    scope: str | None = None
    parent_location: bool = False
    inexpressible: Mapping[str, str] = field(default_factory=dict)
    patches: str | None = None


# The azurerm resource types of the providers whose resources a rule may miss when azai does
# not read them (Microsoft.CognitiveServices, Microsoft.MachineLearningServices, Microsoft.Search):
# every type the provider documents under "Cognitive Services", "Machine Learning" (AI Foundry
# included) and "Search" starts with one of these (tests/data/azurerm-ai-resources.json).
AI_SERVICE_PREFIXES = ("azurerm_ai_", "azurerm_cognitive_", "azurerm_machine_learning_", "azurerm_search_")


def serves_ai(terraform_type: str) -> bool:
    """Whether an azurerm type is one of an AI service's: one azai does not read is a warning."""
    return terraform_type.startswith(AI_SERVICE_PREFIXES)


def A(tf: str | tuple[str, ...], arm: str, convert: Callable[[Any], Any] | None = None) -> Attr:
    return Attr(tf if isinstance(tf, tuple) else (tf,), arm, convert)


def enabled_disabled(value: Any) -> Any:
    return "Enabled" if value is True else "Disabled" if value is False else value


def inverted(value: Any) -> Any:
    return (not value) if isinstance(value, bool) else value


def critical_addons_taint(value: Any) -> Any:
    """``only_critical_addons_enabled = true`` is how azurerm taints the default pool."""
    return ["CriticalAddonsOnly=true:NoSchedule"] if value is True else SKIP


class BlockShapeError(Exception):
    """A nested block that is not what Terraform writes for one, at ``path`` below the attribute
    a converter was given; the plan reader turns it into the one-line input error."""

    def __init__(self, path: tuple[str | int, ...], value: Any, kind: type) -> None:
        super().__init__(path)
        self.path = path
        self.value = value
        self.kind = kind


def blocks(value: Any, *path: str | int) -> list[tuple[int, dict[str, Any]]]:
    """A nested block's instances with their indexes: Terraform writes every block as an array
    of objects (one object for a single block). Null is none; an unknown instance is skipped."""
    if value is None or isinstance(value, Unknown):
        return []
    if not isinstance(value, list):
        raise BlockShapeError(path, value, list)
    for i, item in enumerate(value):
        if not isinstance(item, dict | Unknown):
            raise BlockShapeError((*path, i), item, dict)
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]


def _first(value: Any, *path: str | int) -> dict[str, Any] | None:
    """The single instance of a block that holds at most one (``identity``, ``capacity``)."""
    found = blocks(value, *path)
    return found[0][1] if found else None


def identity_block(value: Any) -> Any:
    """``identity { type, identity_ids }`` -> ARM ``identity``."""
    block = _first(value)
    if block is None:
        return SKIP
    identity: dict[str, Any] = {"type": block.get("type")}
    ids = block.get("identity_ids")
    if isinstance(ids, list) and ids:
        identity["userAssignedIdentities"] = {i: {} for i in ids if isinstance(i, str)}
    return identity


def search_ip_rules(value: Any) -> Any:
    """``allowed_ips = ["203.0.113.0/24"]`` -> ``networkRuleSet.ipRules [{"value": ...}]``."""
    if isinstance(value, list):
        return [{"value": ip} for ip in value]
    return value


def workspace_encryption(value: Any) -> Any:
    """``encryption { key_vault_id, key_id }`` -> ARM ``properties.encryption`` with a customer key."""
    block = _first(value)
    if block is None:
        return SKIP
    return {
        "status": "Enabled",
        "keyVaultProperties": {"keyVaultArmId": block.get("key_vault_id"), "keyIdentifier": block.get("key_id")},
    }


def account_encryption(value: Any) -> Any:
    """``customer_managed_key { key_vault_key_id }`` -> ARM ``properties.encryption.keySource``."""
    if not isinstance(value, list) or not value:
        return SKIP
    return "Microsoft.KeyVault"


def user_owned_storage(value: Any) -> Any:
    """``storage { storage_account_id, identity_client_id }`` blocks -> ARM
    ``properties.userOwnedStorage [{resourceId, identityClientId}]``; no block sends none. An
    instance unknown before apply stays an unknown entry: the account still has one."""
    found = dict(blocks(value))
    if not isinstance(value, list) or not value:
        return SKIP
    names = (("storage_account_id", "resourceId"), ("identity_client_id", "identityClientId"))
    return [
        {arm: found[i][tf] for tf, arm in names if _set(found[i].get(tf))} if i in found else item
        for i, item in enumerate(value)
    ]


def diagnostic_logs(value: Any) -> Any:
    """``enabled_log { category, category_group }`` blocks (each one is enabled), or azurerm
    3.x's ``log { category, category_group, enabled }`` -> ARM ``properties.logs [{category |
    categoryGroup, enabled}]``; no block sends no logs (a setting with metrics only)."""
    if not isinstance(value, list) or not value:
        return SKIP
    found = dict(blocks(value))
    entries: list[Any] = []
    for i, item in enumerate(value):
        block = found.get(i)
        if block is None:  # an instance unknown before apply: still a log entry, not known to be on
            entries.append(item)
            continue
        entry: dict[str, Any] = {"enabled": block.get("enabled", True)}
        for tf, arm in (("category", "category"), ("category_group", "categoryGroup")):
            if _set(block.get(tf)):
                entry[arm] = block[tf]
        entries.append(entry)
    return entries


def _set(value: Any) -> bool:
    """Whether an optional string attribute is set: Terraform writes an unset one as null or ""."""
    return value is not None and not (isinstance(value, str) and not value)


def workload_profiles(value: Any) -> Any:
    """``workload_profile { name, workload_profile_type, minimum_count, maximum_count }`` blocks."""
    if value is None:
        return SKIP
    names = (("name", "name"), ("workload_profile_type", "workloadProfileType"))
    counts = (("minimum_count", "minimumCount"), ("maximum_count", "maximumCount"))
    return [
        {arm: block.get(tf) for tf, arm in names + counts if block.get(tf) is not None} for _, block in blocks(value)
    ]


def private_service_connections(value: Any) -> Any:
    """``private_service_connection`` -> ARM private link service connections (manual ones too)."""
    block = _first(value)
    if block is None:
        return SKIP
    return [
        {"name": block.get("name"), "properties": {"privateLinkServiceId": block.get("private_connection_resource_id")}}
    ]


def autoscale_profiles(value: Any) -> Any:
    """``profile { name, capacity, rule { metric_trigger { metric_name, metric_resource_id } } }``."""
    if value is None:
        return SKIP
    profiles = []
    for i, block in blocks(value):
        rules = []
        for j, rule in blocks(block.get("rule"), i, "rule"):
            trigger = _first(rule.get("metric_trigger"), i, "rule", j, "metric_trigger") or {}
            rules.append(
                {
                    "metricTrigger": {
                        "metricName": trigger.get("metric_name"),
                        "metricResourceUri": trigger.get("metric_resource_id"),
                    }
                }
            )
        capacity = _first(block.get("capacity"), i, "capacity") or {}
        profiles.append(
            {
                "name": block.get("name"),
                "capacity": {k: str(capacity.get(k)) for k in ("default", "minimum", "maximum") if k in capacity},
                "rules": rules,
            }
        )
    return profiles


def content_filters(value: Any) -> Any:
    """``content_filter { name, filter_enabled, block_enabled, severity_threshold, source }``
    blocks -> ARM ``properties.contentFilters``."""
    if value is None:
        return SKIP
    names = (
        ("name", "name"),
        ("filter_enabled", "enabled"),
        ("block_enabled", "blocking"),
        ("severity_threshold", "severityThreshold"),
        ("source", "source"),
    )
    return [{arm: block.get(tf) for tf, arm in names if tf in block} for _, block in blocks(value)]


_COMMON = (A("location", "location"), A("tags", "tags"), A("identity", "identity", identity_block))

_WORKSPACE_LINKS = (
    A("storage_account_id", "properties.storageAccount"),
    A("key_vault_id", "properties.keyVault"),
    A("application_insights_id", "properties.applicationInsights"),
    A("container_registry_id", "properties.containerRegistry"),
)

_POOL = (
    ("vm_size", "vmSize", None),
    (("auto_scaling_enabled", "enable_auto_scaling"), "enableAutoScaling", None),
    ("node_count", "count", None),
    ("min_count", "minCount", None),
    ("max_count", "maxCount", None),
    (("node_public_ip_enabled", "enable_node_public_ip"), "enableNodePublicIP", None),
    (("host_encryption_enabled", "enable_host_encryption"), "enableEncryptionAtHost", None),
    ("node_labels", "nodeLabels", None),
    ("zones", "availabilityZones", None),
    ("gpu_driver", "gpuProfile.driver", None),
    ("gpu_instance", "gpuInstanceProfile", None),
    ("max_pods", "maxPods", None),
    ("os_sku", "osSKU", None),
)


def _pool_attrs(prefix_tf: str, prefix_arm: str) -> tuple[Attr, ...]:
    out = []
    for tf, arm, convert in _POOL:
        names = tf if isinstance(tf, tuple) else (tf,)
        out.append(A(tuple(prefix_tf + n for n in names), prefix_arm + arm, convert))
    return tuple(out)


# An AML compute's ``location`` attribute is where it runs, ``computeLocation``; the ARM
# ``location`` the provider sends is its workspace's (TypeMap.parent_location).
_AML_COMPUTE_COMMON = (
    A("location", "properties.computeLocation"),
    A("local_auth_enabled", "properties.disableLocalAuth", inverted),
    A("description", "properties.description"),
    A("tags", "tags"),
    A("identity", "identity", identity_block),
)

# What a Foundry connection says besides its authentication; its keys (api_key, account_key,
# custom_keys, oauth2) are sensitive and deliberately not mapped: the authType says whether a
# secret is stored.
_CONNECTION = (
    A("category", "properties.category"),
    A("target", "properties.target"),
    A("metadata", "properties.metadata"),
)


def _account_connection(auth_type: str) -> TypeMap:
    """One type of azurerm 4.x's Foundry account connection family: a type per authentication,
    which the type implies (each resource's Create sends a fixed ``AuthType``, API 2026-03-01:
    hashicorp/terraform-provider-azurerm internal/services/cognitive/
    cognitive_account_connection_*_resource.go, v4.81.0, commit 5782a754)."""
    return TypeMap(
        T.ACCOUNT_CONNECTION,
        _CONNECTION,
        constants={"properties.authType": auth_type},
        parent="cognitive_account_id",
    )


MAPPINGS: dict[str, TypeMap] = {
    "azurerm_machine_learning_workspace": TypeMap(
        T.WORKSPACE,
        (
            *_COMMON,
            *_WORKSPACE_LINKS,
            A("public_network_access_enabled", "properties.publicNetworkAccess", enabled_disabled),
            A("high_business_impact", "properties.hbiWorkspace"),
            A("managed_network.0.isolation_mode", "properties.managedNetwork.isolationMode"),
            A("v1_legacy_mode_enabled", "properties.v1LegacyMode"),
            A("sku_name", "sku.name"),
            A("kind", "kind"),
            A("primary_user_assigned_identity", "properties.primaryUserAssignedIdentity"),
            A("public_access_behind_virtual_network_enabled", "properties.allowPublicAccessWhenBehindVnet"),
            A("encryption", "properties.encryption", workspace_encryption),
        ),
        inexpressible={
            "properties.systemDatastoresAuthMode": (
                "not expressible in azurerm; set it with azapi_update_resource "
                '(body = { properties = { systemDatastoresAuthMode = "identity" } })'
            )
        },
    ),
    "azurerm_ai_foundry": TypeMap(
        T.WORKSPACE,
        (
            *_COMMON,
            *_WORKSPACE_LINKS,
            A("public_network_access", "properties.publicNetworkAccess"),
            A("high_business_impact_enabled", "properties.hbiWorkspace"),
            A("managed_network.0.isolation_mode", "properties.managedNetwork.isolationMode"),
            A("primary_user_assigned_identity", "properties.primaryUserAssignedIdentity"),
            A("encryption", "properties.encryption", workspace_encryption),
        ),
        constants={"kind": "Hub"},
        inexpressible={
            "properties.systemDatastoresAuthMode": (
                "not expressible in azurerm; set it with azapi_update_resource "
                '(body = { properties = { systemDatastoresAuthMode = "identity" } })'
            )
        },
    ),
    "azurerm_ai_foundry_project": TypeMap(
        T.WORKSPACE,
        (*_COMMON, A("ai_services_hub_id", "properties.hubResourceId")),
        constants={"kind": "Project"},
    ),
    "azurerm_machine_learning_compute_cluster": TypeMap(
        T.COMPUTE,
        (
            *_AML_COMPUTE_COMMON,
            A("vm_size", "properties.properties.vmSize"),
            A("vm_priority", "properties.properties.vmPriority"),
            A("scale_settings.0.min_node_count", "properties.properties.scaleSettings.minNodeCount"),
            A("scale_settings.0.max_node_count", "properties.properties.scaleSettings.maxNodeCount"),
            A(
                "scale_settings.0.scale_down_nodes_after_idle_duration",
                "properties.properties.scaleSettings.nodeIdleTimeBeforeScaleDown",
            ),
            A(
                ("node_public_ip_enabled", "node_public_ip_enabled"),
                "properties.properties.enableNodePublicIp",
            ),
            A(
                "ssh_public_access_enabled",
                "properties.properties.remoteLoginPortPublicAccess",
                enabled_disabled,
            ),
            A("subnet_resource_id", "properties.properties.subnet.id"),
        ),
        constants={"properties.computeType": "AmlCompute"},
        parent="machine_learning_workspace_id",
        parent_location=True,
    ),
    "azurerm_machine_learning_compute_instance": TypeMap(
        T.COMPUTE,
        (
            *_AML_COMPUTE_COMMON,
            A("virtual_machine_size", "properties.properties.vmSize"),
            A("node_public_ip_enabled", "properties.properties.enableNodePublicIp"),
            A("subnet_resource_id", "properties.properties.subnet.id"),
            A("authorization_type", "properties.properties.computeInstanceAuthorizationType"),
        ),
        constants={"properties.computeType": "ComputeInstance"},
        parent="machine_learning_workspace_id",
        parent_location=True,
        inexpressible={
            "properties.properties.idleTimeBeforeShutdown": (
                "not expressible in azurerm; set it with azapi_update_resource"
            )
        },
    ),
    "azurerm_machine_learning_inference_cluster": TypeMap(
        T.COMPUTE,
        (
            *_AML_COMPUTE_COMMON,
            A("kubernetes_cluster_id", "properties.resourceId"),
            A("cluster_purpose", "properties.properties.clusterPurpose"),
        ),
        constants={"properties.computeType": "AKS"},
        parent="machine_learning_workspace_id",
    ),
    "azurerm_kubernetes_cluster": TypeMap(
        T.MANAGED_CLUSTER,
        (
            *_COMMON,
            A("default_node_pool.0.name", "properties.agentPoolProfiles.0.name"),
            *_pool_attrs("default_node_pool.0.", "properties.agentPoolProfiles.0."),
            A(
                ("default_node_pool.0.only_critical_addons_enabled", "default_node_pool.0.node_taints"),
                "properties.agentPoolProfiles.0.nodeTaints",
                lambda v: critical_addons_taint(v) if isinstance(v, bool) else v,
            ),
            A("local_account_disabled", "properties.disableLocalAccounts"),
            A("role_based_access_control_enabled", "properties.enableRBAC"),
            A("private_cluster_enabled", "properties.apiServerAccessProfile.enablePrivateCluster"),
            A(
                "api_server_access_profile.0.authorized_ip_ranges",
                "properties.apiServerAccessProfile.authorizedIPRanges",
            ),
            A("network_profile.0.network_policy", "properties.networkProfile.networkPolicy"),
            A(
                "azure_active_directory_role_based_access_control",
                "properties.aadProfile",
                lambda v: {"managed": True} if v else SKIP,
            ),
        ),
        constants={"properties.agentPoolProfiles.0.mode": "System"},
    ),
    "azurerm_kubernetes_cluster_node_pool": TypeMap(
        T.AGENT_POOL,
        (
            *_pool_attrs("", "properties."),
            A("mode", "properties.mode"),
            A("node_taints", "properties.nodeTaints"),
            A("priority", "properties.scaleSetPriority"),
            A("eviction_policy", "properties.scaleSetEvictionPolicy"),
            A("spot_max_price", "properties.spotMaxPrice"),
            A("scale_down_mode", "properties.scaleDownMode"),
            A("tags", "tags"),
        ),
        constants={"properties.mode": "User"},
        parent="kubernetes_cluster_id",
    ),
    "azurerm_storage_account": TypeMap(
        T.STORAGE_ACCOUNT,
        (
            *_COMMON,
            A("account_kind", "kind"),
            A("public_network_access_enabled", "properties.publicNetworkAccess", enabled_disabled),
            A(
                ("allow_nested_items_to_be_public", "allow_blob_public_access"),
                "properties.allowBlobPublicAccess",
            ),
            A("shared_access_key_enabled", "properties.allowSharedKeyAccess"),
            A("network_rules.0.default_action", "properties.networkAcls.defaultAction"),
            A("min_tls_version", "properties.minimumTlsVersion"),
            A(
                ("https_traffic_only_enabled", "enable_https_traffic_only"),
                "properties.supportsHttpsTrafficOnly",
            ),
        ),
    ),
    "azurerm_cognitive_account": TypeMap(
        T.COGNITIVE_ACCOUNT,
        (
            *_COMMON,
            A("kind", "kind"),
            A("sku_name", "sku.name"),
            A("local_auth_enabled", "properties.disableLocalAuth", inverted),
            A("public_network_access_enabled", "properties.publicNetworkAccess", enabled_disabled),
            A("network_acls.0.default_action", "properties.networkAcls.defaultAction"),
            A("custom_subdomain_name", "properties.customSubDomainName"),
            A("outbound_network_access_restricted", "properties.restrictOutboundNetworkAccess"),
            A("fqdns", "properties.allowedFqdnList"),
            A("project_management_enabled", "properties.allowProjectManagement"),
            A("customer_managed_key", "properties.encryption.keySource", account_encryption),
            A("storage", "properties.userOwnedStorage", user_owned_storage),
        ),
    ),
    "azurerm_ai_services": TypeMap(
        T.COGNITIVE_ACCOUNT,
        (
            *_COMMON,
            A("sku_name", "sku.name"),
            A("local_authentication_enabled", "properties.disableLocalAuth", inverted),
            A("public_network_access", "properties.publicNetworkAccess"),
            A("network_acls.0.default_action", "properties.networkAcls.defaultAction"),
            A("custom_subdomain_name", "properties.customSubDomainName"),
            A("outbound_network_access_restricted", "properties.restrictOutboundNetworkAccess"),
            # The provider sends the key (expandCustomerManagedKey); it does not send `storage`.
            A("customer_managed_key", "properties.encryption.keySource", account_encryption),
        ),
        constants={"kind": "AIServices"},
    ),
    # azurerm 4.x writes the SKU as ``sku { name, capacity }``; 3.x wrote ``scale { type, capacity }``.
    "azurerm_cognitive_deployment": TypeMap(
        T.MODEL_DEPLOYMENT,
        (
            A(("sku.0.name", "scale.0.type"), "sku.name"),
            A(("sku.0.capacity", "scale.0.capacity"), "sku.capacity"),
            A("model.0.format", "properties.model.format"),
            A("model.0.name", "properties.model.name"),
            A("model.0.version", "properties.model.version"),
            A("rai_policy_name", "properties.raiPolicyName"),
            A("version_upgrade_option", "properties.versionUpgradeOption"),
        ),
        parent="cognitive_account_id",
    ),
    "azurerm_cognitive_account_rai_policy": TypeMap(
        T.RAI_POLICY,
        (
            A("base_policy_name", "properties.basePolicyName"),
            A("mode", "properties.mode"),
            A("content_filter", "properties.contentFilters", content_filters),
        ),
        parent="cognitive_account_id",
    ),
    "azurerm_cognitive_account_project": TypeMap(
        T.AI_PROJECT,
        (
            *_COMMON,
            A("description", "properties.description"),
            A("display_name", "properties.displayName"),
        ),
        parent="cognitive_account_id",
    ),
    # The key a separate resource gives an account: the provider PATCHes the account's
    # encryption with keySource Microsoft.KeyVault and takes the account's id as its own
    # (internal/services/cognitive/cognitive_account_customer_managed_key_resource.go, v4.81.0).
    "azurerm_cognitive_account_customer_managed_key": TypeMap(
        T.COGNITIVE_ACCOUNT,
        (),
        constants={"properties.encryption.keySource": "Microsoft.KeyVault"},
        patches="cognitive_account_id",
    ),
    "azurerm_cognitive_account_connection_account_key": _account_connection("AccountKey"),
    "azurerm_cognitive_account_connection_account_managed_identity": _account_connection("AccountManagedIdentity"),
    "azurerm_cognitive_account_connection_api_key": _account_connection("ApiKey"),
    "azurerm_cognitive_account_connection_custom_keys": _account_connection("CustomKeys"),
    "azurerm_cognitive_account_connection_entra_id": _account_connection("AAD"),
    # One connection type with an ``auth_type`` attribute, for accounts and for projects: the
    # shape of unmerged provider pull requests (commits 477c3999 and f7cddc8c); no released
    # azurerm has them (4.81.0 and 5.2.0 have the family above and no project connection), but
    # plans written against those builds are read. azurerm has no resource for AML workspace
    # connections; those come from azapi.
    "azurerm_cognitive_account_connection": TypeMap(
        T.ACCOUNT_CONNECTION, (A("auth_type", "properties.authType"), *_CONNECTION), parent="cognitive_account_id"
    ),
    "azurerm_cognitive_account_project_connection": TypeMap(
        T.PROJECT_CONNECTION, (A("auth_type", "properties.authType"), *_CONNECTION), parent="cognitive_project_id"
    ),
    "azurerm_search_service": TypeMap(
        T.SEARCH_SERVICE,
        (
            *_COMMON,
            A("sku", "sku.name"),
            A("replica_count", "properties.replicaCount"),
            A("partition_count", "properties.partitionCount"),
            A("local_authentication_enabled", "properties.disableLocalAuth", inverted),
            A("public_network_access_enabled", "properties.publicNetworkAccess", enabled_disabled),
            A("allowed_ips", "properties.networkRuleSet.ipRules", search_ip_rules),
            A(
                "customer_managed_key_enforcement_enabled",
                "properties.encryptionWithCmk.enforcement",
                enabled_disabled,
            ),
        ),
    ),
    "azurerm_container_app": TypeMap(
        T.CONTAINER_APP,
        (
            A("location", "location"),
            A("tags", "tags"),
            A("identity", "identity", identity_block),
            A("container_app_environment_id", "properties.managedEnvironmentId"),
            A("workload_profile_name", "properties.workloadProfileName"),
            A("template.0.min_replicas", "properties.template.scale.minReplicas"),
            A("template.0.max_replicas", "properties.template.scale.maxReplicas"),
            A("ingress.0.external_enabled", "properties.configuration.ingress.external"),
            A("ingress.0.allow_insecure_connections", "properties.configuration.ingress.allowInsecure"),
        ),
    ),
    "azurerm_linux_virtual_machine": TypeMap(
        T.VIRTUAL_MACHINE,
        (*_COMMON, A("size", "properties.hardwareProfile.vmSize"), A("priority", "properties.priority")),
    ),
    "azurerm_windows_virtual_machine": TypeMap(
        T.VIRTUAL_MACHINE,
        (*_COMMON, A("size", "properties.hardwareProfile.vmSize"), A("priority", "properties.priority")),
    ),
    "azurerm_virtual_machine": TypeMap(
        T.VIRTUAL_MACHINE, (*_COMMON, A("vm_size", "properties.hardwareProfile.vmSize"))
    ),
    "azurerm_linux_virtual_machine_scale_set": TypeMap(
        T.VM_SCALE_SET,
        (
            *_COMMON,
            A("sku", "sku.name"),
            A("instances", "sku.capacity"),
            A("priority", "properties.virtualMachineProfile.priority"),
        ),
    ),
    "azurerm_windows_virtual_machine_scale_set": TypeMap(
        T.VM_SCALE_SET,
        (
            *_COMMON,
            A("sku", "sku.name"),
            A("instances", "sku.capacity"),
            A("priority", "properties.virtualMachineProfile.priority"),
        ),
    ),
    "azurerm_orchestrated_virtual_machine_scale_set": TypeMap(
        T.VM_SCALE_SET,
        (
            *_COMMON,
            A("sku_name", "sku.name"),
            A("instances", "sku.capacity"),
            A("priority", "properties.virtualMachineProfile.priority"),
        ),
    ),
    "azurerm_key_vault": TypeMap(
        T.KEY_VAULT,
        (
            *_COMMON,
            A("public_network_access_enabled", "properties.publicNetworkAccess", enabled_disabled),
            A("network_acls.0.default_action", "properties.networkAcls.defaultAction"),
        ),
    ),
    "azurerm_container_registry": TypeMap(
        T.CONTAINER_REGISTRY,
        (
            *_COMMON,
            A("admin_enabled", "properties.adminUserEnabled"),
            A("public_network_access_enabled", "properties.publicNetworkAccess", enabled_disabled),
            A("network_rule_set.0.default_action", "properties.networkRuleSet.defaultAction"),
        ),
    ),
    "azurerm_container_app_environment": TypeMap(
        T.CONTAINER_APP_ENVIRONMENT,
        (
            A("location", "location"),
            A("tags", "tags"),
            A("workload_profile", "properties.workloadProfiles", workload_profiles),
        ),
    ),
    "azurerm_private_endpoint": TypeMap(
        T.PRIVATE_ENDPOINT,
        (
            A("location", "location"),
            A("tags", "tags"),
            A("private_service_connection", "properties.privateLinkServiceConnections", private_service_connections),
        ),
    ),
    "azurerm_monitor_diagnostic_setting": TypeMap(
        T.DIAGNOSTIC_SETTING,
        (
            A("log_analytics_workspace_id", "properties.workspaceId"),
            A(("enabled_log", "log"), "properties.logs", diagnostic_logs),
        ),
        scope="target_resource_id",
    ),
    "azurerm_monitor_autoscale_setting": TypeMap(
        T.AUTOSCALE_SETTING,
        (
            A("location", "location"),
            A("tags", "tags"),
            A("target_resource_id", "properties.targetResourceUri"),
            A("enabled", "properties.enabled"),
            A("profile", "properties.profiles", autoscale_profiles),
        ),
    ),
}
