"""AZAI-403 single-deployment-endpoint."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import WAF_AI, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource


@rule(
    id="AZAI-403",
    slug="single-deployment-endpoint",
    title="Serving endpoint has no second deployment for safe rollout",
    pillar=Pillar.RELIABILITY,
    severity=Severity.LOW,
    resource_types=(T.ONLINE_ENDPOINT,),
    reads=(T.ONLINE_DEPLOYMENT,),
    principle=Principle(
        "Roll out model changes safely: blue-green or canary deployments behind one endpoint, so a bad model "
        "can be rolled back without downtime.",
        WAF_AI + "mlops-genaiops",
    ),
    remediation=Remediation(
        terraform="Declare two azapi_resource deployments under the endpoint (blue, green) and shift traffic "
        "with the endpoint's properties.traffic.",
        bicep="Two onlineEndpoints/deployments resources, and properties: { traffic: { blue: 90, green: 10 } }",
        cli="az ml online-deployment create -n green -e EP ...; az ml online-endpoint update -n EP --traffic "
        '"blue=90 green=10"',
        terraform_code="""\
            resource "azapi_resource" "green" {
              type      = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments@2024-04-01"
              parent_id = azapi_resource.endpoint.id
              name      = "green"
              # ...
            }

            resource "azapi_update_resource" "traffic" {
              type        = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints@2024-04-01"
              resource_id = azapi_resource.endpoint.id
              body = {
                properties = {
                  traffic = {
                    blue  = 90
                    green = 10
                  }
                }
              }
              depends_on = [azapi_resource.green]
            }
        """,
        bicep_code="""\
            resource green 'Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments@2024-04-01' = {
              parent: endpoint
              name: 'green'
              // ...
            }

            resource endpoint 'Microsoft.MachineLearningServices/workspaces/onlineEndpoints@2024-04-01' = {
              parent: workspace
              // ...
              properties: {
                authMode: 'AADToken'
                traffic: {
                  blue: 90
                  green: 10
                }
              }
            }
        """,
        cli_code="""\
            az ml online-deployment create --name green --endpoint-name EP --resource-group RG --workspace-name WS \\
              --file green.yml
            az ml online-endpoint update --name EP --resource-group RG --workspace-name WS --traffic "blue=90 green=10"
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-safely-rollout-online-endpoints",
    ),
    help_uri=rule_page("AZAI-403"),
)
def single_deployment_endpoint(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML online endpoint with fewer than two deployments, so every model update replaces the
    only deployment in place.

    ## What fails

    An online endpoint with zero or one `deployments` child among the scanned resources.

    ## What passes

    Endpoints with two or more deployments (blue-green or canary).

    ## Undetermined when

    Never: a deployment declared in another file or made outside IaC is not seen when only
    this file is scanned; scan the files together, or live.

    ## Why

    With one deployment, a model update is an in-place replacement: a bad model or image
    takes the endpoint down until it is rebuilt. A second deployment lets traffic shift and
    roll back in seconds.
    """
    count = len(ctx.inventory.children(resource, T.ONLINE_DEPLOYMENT))
    if count < 2:
        yield Violation(
            f"Online endpoint '{resource.name}' has {count} deployment(s); safe rollout needs a second",
            "properties.traffic",
            count,
            "two or more deployments",
        )
