"""AZAI-110 endpoint-public-access."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import WAF_AI, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.engine.setting_checks import require
from scanner.model import azure_types as T
from scanner.model.resources import Resource


@rule(
    id="AZAI-110",
    slug="endpoint-public-access",
    title="AML online endpoint is reachable from public networks",
    pillar=Pillar.SECURITY,
    severity=Severity.MEDIUM,
    resource_types=(T.ONLINE_ENDPOINT,),
    reads=(),
    principle=Principle(
        "Use private networking for inferencing endpoints, so that only approved networks can call the model.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform='azapi_resource (onlineEndpoints): body = { properties = { publicNetworkAccess = "Disabled" } }',
        bicep="onlineEndpoints: properties: { publicNetworkAccess: 'Disabled' }",
        cli="az ml online-endpoint update -n EP --set public_network_access=disabled",
        terraform_code="""\
            resource "azapi_resource" "endpoint" {
              type      = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints@2024-04-01"
              parent_id = azurerm_machine_learning_workspace.ws.id
              # ...
              body = {
                properties = {
                  authMode            = "AADToken"
                  publicNetworkAccess = "Disabled"
                }
              }
            }
        """,
        bicep_code="""\
            resource endpoint 'Microsoft.MachineLearningServices/workspaces/onlineEndpoints@2024-04-01' = {
              parent: workspace
              // ...
              properties: {
                authMode: 'AADToken'
                publicNetworkAccess: 'Disabled'
              }
            }
        """,
        cli_code="""\
            az ml online-endpoint update --name EP --resource-group RG --workspace-name WS \\
              --set public_network_access=disabled
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/concept-secure-online-endpoint",
    ),
    help_uri=rule_page("AZAI-110"),
)
def endpoint_public_access(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML managed online endpoint that accepts scoring requests from public networks.

    ## What fails

    An online endpoint whose `properties.publicNetworkAccess` is not `Disabled` (absent means
    `Enabled`).

    ## What passes

    Endpoints with `publicNetworkAccess` `Disabled`, reached through the workspace's private
    endpoint.

    ## Undetermined when

    `publicNetworkAccess` is unknown before deploy.

    ## Why

    Authentication (AZAI-101) decides who may call; network access decides from where. Public
    scoring endpoints can be probed, flooded and abused with leaked tokens from anywhere. No
    peer checks endpoint network access: azurerm has no endpoint resource, and Checkov and
    Trivy do not read azapi.
    """
    yield from require(
        resource,
        "properties.publicNetworkAccess",
        "Disabled",
        message=f"Online endpoint '{resource.name}' accepts traffic from public networks",
    )
