"""AZAI-108 ai-account-network."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import AZURE_POLICY, CHECKOV, PRIVATE_LINK_PATHS, PSRULE, WAF_AI, network_open, rule_page, unlinked
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known


@rule(
    id="AZAI-108",
    slug="ai-account-network",
    title="Azure AI services account is open to public networks or has no private endpoint",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.COGNITIVE_ACCOUNT,),
    reads=(T.PRIVATE_ENDPOINT,),
    principle=Principle(
        "Use private networking for model endpoints: reach them through private endpoints, not the internet.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform=(
            "azurerm_cognitive_account: public_network_access_enabled = false, network_acls { default_action = "
            '"Deny" }, and an azurerm_private_endpoint whose private_service_connection names the account.'
        ),
        bicep="properties: { publicNetworkAccess: 'Disabled', networkAcls: { defaultAction: 'Deny' } } plus a "
        "Microsoft.Network/privateEndpoints resource with privateLinkServiceId: account.id",
        cli="az cognitiveservices account update -n NAME -g RG --public-network-access Disabled; "
        "az network private-endpoint create ... --private-connection-resource-id ACCOUNT_ID --group-id account",
        terraform_code="""\
            resource "azurerm_cognitive_account" "openai" {
              # ...
              public_network_access_enabled = false
              network_acls {
                default_action = "Deny"
              }
            }

            resource "azurerm_private_endpoint" "openai" {
              name                = "pe-openai"
              location            = azurerm_resource_group.rg.location
              resource_group_name = azurerm_resource_group.rg.name
              subnet_id           = azurerm_subnet.pe.id

              private_service_connection {
                name                           = "openai"
                private_connection_resource_id = azurerm_cognitive_account.openai.id
                subresource_names              = ["account"]
                is_manual_connection           = false
              }
            }
        """,
        bicep_code="""\
            resource openai 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
              // ...
              properties: {
                publicNetworkAccess: 'Disabled'
                networkAcls: {
                  defaultAction: 'Deny'
                }
              }
            }

            resource endpoint 'Microsoft.Network/privateEndpoints@2024-05-01' = {
              name: 'pe-openai'
              location: location
              properties: {
                subnet: {
                  id: subnet.id
                }
                privateLinkServiceConnections: [
                  {
                    name: 'openai'
                    properties: {
                      privateLinkServiceId: openai.id
                      groupIds: [
                        'account'
                      ]
                    }
                  }
                ]
              }
            }
        """,
        cli_code="""\
            az resource update --ids ACCOUNT_ID --set properties.publicNetworkAccess=Disabled
            az network private-endpoint create --name pe-openai --resource-group RG --vnet-name VNET --subnet SUBNET \\
              --private-connection-resource-id ACCOUNT_ID --group-id account --connection-name openai
        """,
        guide="https://learn.microsoft.com/azure/ai-services/cognitive-services-virtual-networks",
    ),
    help_uri=rule_page("AZAI-108"),
    peers=(
        PeerRule(
            CHECKOV,
            "CKV_AZURE_134",
            "Cognitive Services accounts disable public network access",
            "Disagrees on deny-by-default ACLs: Checkov fails unless publicNetworkAccess is Disabled (Terraform "
            "public_network_access_enabled false), absent included (bridgecrewio/checkov "
            "checkov/arm/checks/resource/CognitiveServicesDisablesPublicNetwork.py@03d5fdad), while azai, as PSRule "
            "and Azure Policy do, also passes networkAcls.defaultAction Deny. Both judge every account.",
        ),
        PeerRule(
            PSRULE,
            "Azure.AI.PublicAccess",
            "AI services accounts restrict network access (AZR-000280)",
            "Agrees on both: every account fails unless publicNetworkAccess is Disabled or networkAcls.defaultAction "
            "is Deny, absent failing (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.AI.Rule.yaml@0df3c669).",
        ),
        PeerRule(
            AZURE_POLICY,
            "037eea7a-bd0a-46c5-9a66-03aea78705d3",
            "Azure AI Services resources should restrict network access",
            "Agrees on accounts: publicNetworkAccess not Disabled and defaultAction not Deny fails. The policy also "
            "audits AI Search services (Azure/azure-policy built-in-policies/policyDefinitions/Azure Ai "
            "Services/NetworkAcls_Audit.json@f4a50bac), which AZAI-115 judges.",
        ),
        PeerRule(
            PSRULE,
            "Azure.AI.PrivateEndpoints",
            "AI services accounts use private endpoints (AZR-000283)",
            "A different test: PSRule passes any account with publicNetworkAccess Disabled and counts no endpoints "
            "(Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.AI.Rule.yaml@0df3c669); azai reports an "
            "account with restricted access but no private endpoint at medium, and one open to all networks under "
            "its high finding instead.",
        ),
        PeerRule(
            AZURE_POLICY,
            "d6759c02-b87f-42b7-892e-71b3f471d782",
            "Azure AI Services resources should use Azure Private Link",
            "The policy fails an account with no Approved private endpoint connection, whatever its network access, "
            "and also audits AI Search services (Azure/azure-policy built-in-policies/policyDefinitions/Azure Ai "
            "Services/EnablePrivateEndpoints_Audit.json@f4a50bac); azai counts a declared endpoint or any reported "
            "connection, and reports none (medium) only once public access is restricted.",
        ),
    ),
)
def ai_account_network(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A Cognitive Services, Azure OpenAI or AI Services account, of any kind (Speech, Document
    Intelligence and Content Safety accounts take the same business data), that anyone on the
    internet can reach, or that has no private endpoint.

    ## What fails

    - **High:** `properties.publicNetworkAccess` is not `Disabled` (absent means `Enabled`) and
      `properties.networkAcls.defaultAction` is not `Deny` (absent means `Allow`).
    - **Medium:** network access is restricted but no private endpoint connects to the
      account: no `Microsoft.Network/privateEndpoints` resource names it as its private link
      service, and the account reports no `privateEndpointConnections`.

    ## What passes

    Accounts with public access disabled or denied by default, and a private endpoint.

    ## Undetermined when

    Public access or the ACL default action is unknown before deploy.

    ## Why

    Model endpoints take prompts that carry business data. An endpoint open to the internet is
    one leaked key or token away from data theft and model abuse (LLM-jacking); a private
    endpoint keeps the traffic on your network.
    """
    if network_open(resource):
        yield Violation(
            f"Account '{resource.name}' accepts traffic from all networks "
            "(publicNetworkAccess not Disabled and networkAcls.defaultAction not Deny)",
            "properties.publicNetworkAccess",
            resource.get("properties.publicNetworkAccess"),
            "Disabled, or networkAcls.defaultAction Deny",
        )
    elif not ctx.inventory.has_private_endpoint(resource):
        doubt = unlinked(ctx, T.PRIVATE_ENDPOINT, *PRIVATE_LINK_PATHS)
        if doubt is not None:
            known(doubt)
        yield Violation(
            f"Account '{resource.name}' has no private endpoint",
            "properties.privateEndpointConnections",
            None,
            "a private endpoint connected to the account",
            Severity.MEDIUM,
        )
