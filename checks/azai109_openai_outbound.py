"""AZAI-109 openai-outbound."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import CHECKOV, WAF_AI, judged_if, rule_page, same_text
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.engine.setting_checks import require
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known


@rule(
    id="AZAI-109",
    slug="openai-outbound",
    title="Azure OpenAI account can call out to any destination",
    pillar=Pillar.SECURITY,
    severity=Severity.MEDIUM,
    resource_types=(T.COGNITIVE_ACCOUNT,),
    reads=(),
    principle=Principle(
        "Restrict the outbound access of AI services to approved destinations, to prevent data exfiltration.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform='azurerm_cognitive_account: outbound_network_access_restricted = true, fqdns = ["contoso.com"]',
        bicep="properties: { restrictOutboundNetworkAccess: true, allowedFqdnList: [ 'contoso.com' ] }",
        cli="az rest --method patch --url ACCOUNT_ID?api-version=2024-10-01 --body "
        '\'{"properties":{"restrictOutboundNetworkAccess":true,"allowedFqdnList":["contoso.com"]}}\'',
        terraform_code="""\
            resource "azurerm_cognitive_account" "openai" {
              # ...
              outbound_network_access_restricted = true
              fqdns                              = ["contoso.com"]
            }
        """,
        bicep_code="""\
            resource openai 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
              // ...
              properties: {
                restrictOutboundNetworkAccess: true
                allowedFqdnList: [
                  'contoso.com'
                ]
              }
            }
        """,
        cli_code="""\
            az rest --method patch --url "https://management.azure.com/ACCOUNT_ID?api-version=2024-10-01" \\
              --body '{"properties":{"restrictOutboundNetworkAccess":true,"allowedFqdnList":["contoso.com"]}}'
        """,
        guide="https://learn.microsoft.com/azure/ai-services/cognitive-services-data-loss-prevention",
    ),
    help_uri=rule_page("AZAI-109"),
    peers=(
        PeerRule(
            CHECKOV,
            "CKV_AZURE_247",
            "OpenAI accounts restrict outbound network access with FQDNs",
            "Disagrees on an empty allow-list: Checkov fails a restricted account without fqdns "
            "(bridgecrewio/checkov checkov/terraform/checks/resource/azure/"
            "OpenAICognitiveServicesRestrictOutboundNetwork.py@03d5fdad), azai passes it as the strictest setting. "
            "Checkov reads Terraform accounts of kind OpenAI only; azai every source, and AIServices accounts, which "
            "serve OpenAI models.",
        ),
    ),
)
def openai_outbound(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An Azure OpenAI or AI Services account whose outbound calls (data sources for "on your
    data", tools, web fetches) are not limited to an allow-list.

    ## What fails

    An account of `kind` `OpenAI` or `AIServices` with `properties.restrictOutboundNetworkAccess`
    not `true` (absent means unrestricted).

    ## What passes

    Restricted accounts: they call out only to the FQDNs in `properties.allowedFqdnList`, and
    to none at all when the list is empty or absent (the strictest setting). Other Cognitive
    Services kinds.

    ## Undetermined when

    The restriction flag is unknown before deploy, or the kind is and the account is not
    restricted (a restricted account passes whatever its kind).

    ## Why

    Azure OpenAI fetches from the destinations a prompt or an "on your data" configuration
    names. Without an allow-list, a prompt injection can send data anywhere.
    """
    restricted = require(
        resource,
        "properties.restrictOutboundNetworkAccess",
        True,
        message=f"Account '{resource.name}' does not restrict outbound network access",
        expected="true, with allowedFqdnList",
    )
    yield from judged_if(lambda: same_text(known(resource.body.get("kind", "")), *T.OPENAI_KINDS), restricted)
