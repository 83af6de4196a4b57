"""AZAI-112 workspace-dependency-access."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import WAF_AI, network_open, workspace_users
from scanner import azure_types as T
from scanner.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import Resource
from scanner.unknown import known


@rule(
    id="AZAI-112",
    slug="workspace-dependency-access",
    title="A workspace's key vault or container registry is publicly reachable or has an admin user",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.KEY_VAULT, T.CONTAINER_REGISTRY),
    principle=Principle(
        "Use private networking for every dependency of an AI workload, and identities instead of shared credentials.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform=(
            "azurerm_key_vault / azurerm_container_registry: public_network_access_enabled = false (or "
            'network_acls / network_rule_set default_action = "Deny"); azurerm_container_registry: '
            "admin_enabled = false."
        ),
        bicep="vault: properties: { publicNetworkAccess: 'Disabled' }; registry: properties: "
        "{ publicNetworkAccess: 'Disabled', adminUserEnabled: false }",
        cli="az keyvault update -n KV --public-network-access Disabled; "
        "az acr update -n ACR --public-network-enabled false --admin-enabled false",
    ),
    help_uri="https://learn.microsoft.com/azure/machine-learning/how-to-secure-workspace-vnet",
)
def workspace_dependency_access(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """The key vault or container registry an AML workspace depends on is reachable from the
    internet, or the registry accepts its shared admin credentials.

    ## What fails

    A key vault a workspace names in `properties.keyVault`, or a registry it names in
    `properties.containerRegistry`, with:

    - `properties.publicNetworkAccess` not `Disabled` and the network ACL's default action
      (`networkAcls.defaultAction` for vaults, `networkRuleSet.defaultAction` for registries)
      not `Deny`;
    - for a registry, `properties.adminUserEnabled` `true` (medium).

    ## What passes

    Private or deny-by-default vaults and registries without an admin user, and vaults and
    registries no workspace uses.

    ## Undetermined when

    A deciding property is unknown before deploy.

    ## Why

    The vault holds the workspace's connection secrets and the registry its inference images.
    A public registry with an admin user lets anyone holding one shared password replace the
    image every endpoint runs.
    """
    is_vault = resource.type_key == T.KEY_VAULT.lower()
    path = "properties.keyVault" if is_vault else "properties.containerRegistry"
    workspaces = workspace_users(resource, ctx, path)
    if not workspaces:
        return
    names = ", ".join(f"'{w.name}'" for w in workspaces)
    label = "Key vault" if is_vault else "Container registry"
    acl = "properties.networkAcls.defaultAction" if is_vault else "properties.networkRuleSet.defaultAction"
    if network_open(resource, acl):
        yield Violation(
            f"{label} '{resource.name}' of workspace {names} accepts traffic from all networks",
            "properties.publicNetworkAccess",
            resource.get("properties.publicNetworkAccess"),
            "Disabled, or a Deny default network rule",
        )
    elif not is_vault and known(resource.get("properties.adminUserEnabled")) is True:
        yield Violation(
            f"Container registry '{resource.name}' of workspace {names} has its admin user enabled",
            "properties.adminUserEnabled",
            True,
            "false",
            Severity.MEDIUM,
        )
