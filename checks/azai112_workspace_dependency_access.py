"""AZAI-112 workspace-dependency-access."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import AZURE_POLICY, CHECKOV, PSRULE, WAF_AI, every_gap, network_open, rule_page, workspace_users
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known


@rule(
    id="AZAI-112",
    slug="workspace-dependency-access",
    title="A workspace's key vault or container registry is publicly reachable or has an admin user",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.KEY_VAULT, T.CONTAINER_REGISTRY, T.WORKSPACE),
    reads=(),
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
        terraform_code="""\
            resource "azurerm_key_vault" "kv" {
              # ...
              public_network_access_enabled = false
            }

            resource "azurerm_container_registry" "acr" {
              # ...
              sku                           = "Premium"
              public_network_access_enabled = false
              admin_enabled                 = false
            }
        """,
        bicep_code="""\
            resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
              // ...
              properties: {
                publicNetworkAccess: 'Disabled'
              }
            }

            resource registry 'Microsoft.ContainerRegistry/registries@2023-07-01' = {
              // ...
              properties: {
                publicNetworkAccess: 'Disabled'
                adminUserEnabled: false
              }
            }
        """,
        cli_code="""\
            az keyvault update --name KV --resource-group RG --public-network-access Disabled
            az acr update --name ACR --resource-group RG --public-network-enabled false --admin-enabled false
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-secure-workspace-vnet",
    ),
    help_uri=rule_page("AZAI-112"),
    peers=(
        PeerRule(
            CHECKOV,
            "CKV_AZURE_137",
            "ACR admin account disabled",
            "Agrees on substance: only an explicit adminUserEnabled true fails (bridgecrewio/checkov "
            "checkov/arm/checks/resource/ACRAdminAccountDisabled.py@03d5fdad). azai judges only the registry a "
            "workspace names in properties.containerRegistry; Checkov every registry.",
        ),
        PeerRule(
            PSRULE,
            "Azure.ACR.AdminUser",
            "Container registry admin user disabled (AZR-000005)",
            "Agrees on substance: adminUserEnabled must be false or absent (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.ACR.Rule.yaml@64a1e0d8). azai judges only the registry a workspace "
            "names in properties.containerRegistry; PSRule every registry.",
        ),
        PeerRule(
            AZURE_POLICY,
            "dc921057-6b28-4fbe-9b83-f7bec05db6c2",
            "Container registries should have local admin account disabled",
            "Agrees on substance: adminUserEnabled true fails (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Container "
            "Registry/ACR_AdminAccountDisabled_AuditDeny.json@f4a50bac). azai judges only the registry a workspace "
            "names in properties.containerRegistry; the policy every registry.",
        ),
        PeerRule(
            PSRULE,
            "Azure.ACR.Firewall",
            "Container registry restricts network access (AZR-000402)",
            "Agrees on the test (publicNetworkAccess Disabled or networkRuleSet.defaultAction Deny, absent failing), "
            "but PSRule judges Premium registries only and gives Basic and Standard ones no result "
            "(Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.ACR.Rule.yaml@64a1e0d8, selector "
            "Azure.ACR.IsPremiumSKU), where azai fails an open one. azai judges only the registry a workspace names "
            "in properties.containerRegistry; PSRule every Premium registry.",
        ),
        PeerRule(
            PSRULE,
            "Azure.KeyVault.Firewall",
            "Key Vault accepts only explicitly allowed traffic (AZR-000355)",
            "Disagrees on public access off: PSRule passes only networkAcls.defaultAction Deny "
            "(Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.KeyVault.Rule.yaml@634f7d84), so it fails "
            "a vault with publicNetworkAccess Disabled and an Allow default action, which azai passes. azai judges "
            "only the key vault a workspace names in properties.keyVault; PSRule every vault.",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_139",
            "ACR public network access disabled",
            "Disagrees on deny-by-default: Checkov fails unless publicNetworkAccess is Disabled (Terraform "
            "public_network_access_enabled false), absent included (bridgecrewio/checkov "
            "checkov/arm/checks/resource/ACRPublicNetworkAccessDisabled.py@03d5fdad), while azai, as PSRule does, "
            "also passes networkRuleSet.defaultAction Deny. azai judges only the registry a workspace names in "
            "properties.containerRegistry; Checkov every registry.",
        ),
        PeerRule(
            AZURE_POLICY,
            "0fdf0491-d080-4575-b627-ad0e843cba0f",
            "Public network access should be disabled for Container registries",
            "Disagrees on deny-by-default: the policy flags publicNetworkAccess not Disabled, absent included "
            "(Azure/azure-policy built-in-policies/policyDefinitions/Container "
            "Registry/ACR_PublicNetworkAccess_AuditDeny.json@f4a50bac), while azai also passes "
            "networkRuleSet.defaultAction Deny. azai judges only the registry a workspace names in "
            "properties.containerRegistry; the policy every registry.",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_189",
            "Key Vault disables public network access",
            "Disagrees on network ACLs: Checkov passes public access off or any IP rule (in Terraform any subnet "
            "rule too) whatever the default action, and fails a Deny default without rules (bridgecrewio/checkov "
            "checkov/arm/checks/resource/KeyVaultDisablesPublicNetworkAccess.py@03d5fdad), where azai passes public "
            "access off or a Deny default. azai judges only the key vault a workspace names in properties.keyVault; "
            "Checkov every vault.",
        ),
        PeerRule(
            AZURE_POLICY,
            "405c5871-3e91-4644-8a63-58e19d68ff5b",
            "Azure Key Vault should disable public network access",
            "Disagrees on deny-by-default: the policy flags publicNetworkAccess not Disabled, absent included "
            "(Azure/azure-policy built-in-policies/policyDefinitions/Key "
            "Vault/PublicNetworkAccess_Audit.json@f4a50bac), while azai also passes networkAcls.defaultAction Deny. "
            "azai judges only the key vault a workspace names in properties.keyVault; the policy every vault.",
        ),
    ),
)
def workspace_dependency_access(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """The key vault or container registry an AML workspace depends on is reachable from the
    internet, or the registry accepts its shared admin credentials.

    ## What fails

    A key vault a workspace names in `properties.keyVault`, or a registry it names in
    `properties.containerRegistry`, with any of these (each its own finding):

    - `properties.publicNetworkAccess` not `Disabled` and the network ACL's default action
      (`networkAcls.defaultAction` for vaults, `networkRuleSet.defaultAction` for registries)
      not `Deny`;
    - for a registry, `properties.adminUserEnabled` `true` (medium).

    ## What passes

    Private or deny-by-default vaults and registries without an admin user, and vaults and
    registries no workspace uses.

    ## Undetermined when

    A deciding property is unknown before deploy.
    The other settings are still checked and their failures reported.

    The rule also looks at each workspace, so that it never passes a dependency it could not
    see: a workspace whose key vault or registry id is unknown before deploy, or names one that
    is not among the scanned resources, is undetermined (a `Project` workspace answers with its
    hub's, through `properties.hubResourceId`). A workspace without a registry is fine.

    ## Why

    The vault holds the workspace's connection secrets and the registry its inference images.
    A public registry with an admin user lets anyone holding one shared password replace the
    image every endpoint runs.
    """
    if resource.type_key == T.WORKSPACE.lower():
        for dependency_path, label in (
            ("properties.keyVault", "key vault"),
            ("properties.containerRegistry", "registry"),
        ):
            known(ctx.inventory.workspace_dependency(resource, dependency_path, label))
        return
    is_vault = resource.type_key == T.KEY_VAULT.lower()
    path = "properties.keyVault" if is_vault else "properties.containerRegistry"
    workspaces = workspace_users(resource, ctx, path)
    if not workspaces:
        return
    names = ", ".join(f"'{w.name}'" for w in workspaces)
    checks = [_open_network(resource, is_vault, names)]
    if not is_vault:
        checks.append(_admin_user(resource, names))
    yield from every_gap(*checks)


def _open_network(dependency: Resource, is_vault: bool, names: str) -> Iterator[Violation]:
    label = "Key vault" if is_vault else "Container registry"
    acl = "properties.networkAcls.defaultAction" if is_vault else "properties.networkRuleSet.defaultAction"
    if network_open(dependency, acl):
        yield Violation(
            f"{label} '{dependency.name}' of workspace {names} accepts traffic from all networks",
            "properties.publicNetworkAccess",
            dependency.get("properties.publicNetworkAccess"),
            "Disabled, or a Deny default network rule",
        )


def _admin_user(registry: Resource, names: str) -> Iterator[Violation]:
    if known(registry.get("properties.adminUserEnabled")) is True:
        yield Violation(
            f"Container registry '{registry.name}' of workspace {names} has its admin user enabled",
            "properties.adminUserEnabled",
            True,
            "false",
            Severity.MEDIUM,
        )
