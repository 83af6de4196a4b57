"""AZAI-106 managed-identity."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import AZURE_POLICY, CHECKOV, PSRULE, WAF_AI, identity_kinds, rule_page
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known


@rule(
    id="AZAI-106",
    slug="managed-identity",
    title="AI workspace or account has no managed identity of the required kind",
    pillar=Pillar.SECURITY,
    severity=Severity.MEDIUM,
    resource_types=(T.WORKSPACE, T.COGNITIVE_ACCOUNT),
    reads=(),
    principle=Principle(
        "Use managed identities for system-to-system access, so that no secret has to be stored or rotated.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform='identity { type = "UserAssigned" identity_ids = [azurerm_user_assigned_identity.ai.id] }',
        bicep="identity: { type: 'UserAssigned', userAssignedIdentities: { '${uami.id}': {} } }",
        cli="az cognitiveservices account identity assign -n NAME -g RG; az ml workspace update --system-assigned",
        terraform_code="""\
            resource "azurerm_user_assigned_identity" "ai" {
              name                = "id-ai"
              resource_group_name = azurerm_resource_group.rg.name
              location            = azurerm_resource_group.rg.location
            }

            resource "azurerm_cognitive_account" "openai" {
              # ...
              identity {
                type         = "UserAssigned"
                identity_ids = [azurerm_user_assigned_identity.ai.id]
              }
            }
        """,
        bicep_code="""\
            resource openai 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
              // ...
              identity: {
                type: 'UserAssigned'
                userAssignedIdentities: {
                  '${uami.id}': {}
                }
              }
            }
        """,
        cli_code="""\
            az cognitiveservices account identity assign --name NAME --resource-group RG
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-identity-based-service-authentication",
    ),
    help_uri=rule_page("AZAI-106"),
    options={"require_user_assigned": False},
    peers=(
        PeerRule(
            CHECKOV,
            "CKV_AZURE_238",
            "Cognitive Services account has a managed identity",
            "Disagrees on identity.type None: Checkov passes any value there (bridgecrewio/checkov "
            "checkov/arm/checks/resource/CognitiveServicesConfigureIdentity.py@03d5fdad), azai fails None as no "
            "identity; both fail an absent identity. azai also judges AML workspaces.",
        ),
        PeerRule(
            PSRULE,
            "Azure.AI.ManagedIdentity",
            "AI services accounts use a managed identity (AZR-000281)",
            "Agrees on substance: identity.type must name SystemAssigned or UserAssigned. PSRule judges Language "
            "(TextAnalytics) accounts only (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.AI.Rule.yaml@0df3c669); azai every account kind and AML workspaces.",
        ),
        PeerRule(
            AZURE_POLICY,
            "fe3fd216-4f83-4fc1-8984-2bbec80a3418",
            "Cognitive Services accounts should use a managed identity",
            "Agrees on accounts: identity absent or None fails (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Cognitive Services/ManagedIdentity_Audit.json@f4a50bac). azai also "
            "judges AML workspaces.",
        ),
        PeerRule(
            PSRULE,
            "Azure.ML.UserManagedIdentity",
            "ML workspaces use a user-assigned managed identity (AZR-000407)",
            "With the option require_user_assigned. PSRule requires identity.type exactly UserAssigned "
            "(Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.ML.Rule.yaml@1556a9cd), so it fails a "
            "workspace with both identities that names its primary user-assigned one, which azai passes; with the "
            "option azai also judges Cognitive Services accounts.",
        ),
        PeerRule(
            AZURE_POLICY,
            "5f0c7d88-c7de-45b8-ac49-db49e72eaa78",
            "Azure Machine Learning workspaces should use user-assigned managed identity",
            "With the option require_user_assigned. The policy tests only primaryUserAssignedIdentity, absent or "
            "empty failing (Azure/azure-policy built-in-policies/policyDefinitions/Machine "
            "Learning/Workspace_UAIEnabled_Audit.json@f4a50bac); azai also requires a user-assigned identity type, "
            "and with the option also judges Cognitive Services accounts.",
        ),
    ),
)
def managed_identity(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML workspace, or a Cognitive Services / Azure OpenAI / AI Services account, without a
    managed identity, so it reaches storage, key vaults and other models with keys.

    ## What fails

    - `identity` absent or `identity.type` `None`.
    - With the option `require_user_assigned` set: an identity without `UserAssigned`
      (system-assigned only), or a workspace that does not name its user-assigned identity in
      `properties.primaryUserAssignedIdentity`, the identity it reaches its storage, key vault
      and registry with (PSRule `Azure.ML.UserManagedIdentity` and Azure Policy 5f0c7d88 check
      the same property).

    ## What passes

    Any managed identity; with the option set, user-assigned identities, which a workspace
    names as its primary one.

    ## Undetermined when

    `identity.type`, or with the option set a workspace's `primaryUserAssignedIdentity`, is
    unknown before deploy.

    ## Options

    - `require_user_assigned` (default false): some organisations require user-assigned
      identities so that role assignments survive re-creation and can be granted before deploy.

    ## Why

    Without a managed identity, the service can only reach its dependencies with stored keys
    or connection strings, which leak and cannot be scoped per caller.
    """
    kinds = identity_kinds(resource)
    label = "Workspace" if resource.type_key == T.WORKSPACE.lower() else "Account"
    if not kinds:
        yield Violation(
            f"{label} '{resource.name}' has no managed identity",
            "identity.type",
            resource.get("identity.type"),
            "SystemAssigned or UserAssigned",
        )
    elif not ctx.options.get("require_user_assigned", False):
        return
    elif "userassigned" not in kinds:
        yield Violation(
            f"{label} '{resource.name}' has only a system-assigned identity; a user-assigned one is required",
            "identity.type",
            resource.get("identity.type"),
            "UserAssigned",
        )
    elif resource.type_key == T.WORKSPACE.lower() and not known(resource.get("properties.primaryUserAssignedIdentity")):
        yield Violation(
            f"Workspace '{resource.name}' has a user-assigned identity but reaches its storage, vault and registry "
            "with its system-assigned one (no primaryUserAssignedIdentity)",
            "properties.primaryUserAssignedIdentity",
            resource.get("properties.primaryUserAssignedIdentity"),
            "the resource id of the user-assigned identity",
        )
