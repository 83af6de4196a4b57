"""AZAI-401 single-instance-deployment."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import WAF_AI, either, has_tag, known_number, rule_page, same_text, unlinked
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known


@rule(
    id="AZAI-401",
    slug="single-instance-deployment",
    title="Production model deployment runs on a single instance without autoscale",
    pillar=Pillar.RELIABILITY,
    severity=Severity.HIGH,
    resource_types=(T.ONLINE_DEPLOYMENT,),
    reads=(T.AUTOSCALE_SETTING,),
    principle=Principle(
        "Avoid single points of failure for model serving: run at least two instances, or autoscale.",
        WAF_AI + "design-principles#reliability",
    ),
    remediation=Remediation(
        terraform="azapi_resource (onlineEndpoints/deployments): body.sku.capacity = 3, or an "
        "azurerm_monitor_autoscale_setting targeting the deployment",
        bicep="deployments: sku: { capacity: 3 }, or properties: { scaleSettings: { scaleType: 'TargetUtilization', "
        "minInstances: 2, maxInstances: 5 } }",
        cli="az ml online-deployment update -n DEP -e EP --set instance_count=3",
        terraform_code="""\
            resource "azapi_resource" "blue" {
              type      = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments@2024-04-01"
              parent_id = azapi_resource.endpoint.id
              # ...
              body = {
                sku = {
                  name     = "Default"
                  capacity = 3
                }
              }
            }
        """,
        bicep_code="""\
            resource blue 'Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments@2024-04-01' = {
              parent: endpoint
              // ...
              sku: {
                name: 'Default'
                capacity: 3
              }
            }
        """,
        cli_code="""\
            az ml online-deployment update --name blue --endpoint-name EP --resource-group RG --workspace-name WS \\
              --set instance_count=3
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-autoscale-endpoints",
    ),
    help_uri=rule_page("AZAI-401"),
    options={"production_tag": "environment", "production_values": ["prod", "production"]},
)
def single_instance_deployment(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A production AML online deployment served by one instance with nothing to add more: when
    that node is patched, evicted or fails, the model is down.

    ## What fails

    An online deployment that is production (it, its endpoint or its workspace carries the tag
    named by `production_tag`, default `environment`, with a value in `production_values`,
    default `prod`, `production`) and:

    - `sku.capacity` is 1 or absent (the default instance count is 1);
    - `properties.scaleSettings.scaleType` is not `TargetUtilization`;
    - no `Microsoft.Insights/autoscaleSettings` resource targets it.

    ## What passes

    Deployments with two or more instances or an autoscale setting, and non-production ones.

    ## Undetermined when

    What would pass it is unknown before deploy while nothing known does: the capacity, the scale
    type, the production tag, or the target of an autoscale setting (it may be this deployment).

    ## Options

    - `production_tag`, `production_values`: how production is marked.

    ## Why

    Managed online endpoints need at least two instances to stay available through node
    updates; Microsoft recommends three for production.
    """
    # Each settles it alone: not production, two instances, or autoscale of either kind.
    if either(
        lambda: not has_tag(resource, ctx, "production_tag", "production_values"),
        lambda: _instances(resource) >= 2,
        lambda: same_text(known(resource.get("properties.scaleSettings.scaleType", "Default")), "TargetUtilization"),
        lambda: _autoscaled(resource, ctx),
    ):
        return
    capacity = _instances(resource)
    yield Violation(
        f"Production deployment '{resource.name}' runs on {capacity} instance without autoscale",
        "sku.capacity",
        capacity,
        "at least 2 instances, or autoscale",
    )


def _instances(deployment: Resource) -> float:
    capacity = known_number(deployment.get("sku.capacity", 1), "sku.capacity")
    return capacity if isinstance(capacity, (int, float)) else 1


def _autoscaled(deployment: Resource, ctx: CheckContext) -> bool:
    """An autoscale setting targets the deployment; one whose target is not known before deploy
    may."""
    if ctx.inventory.autoscale_settings(deployment):
        return True
    known(unlinked(ctx, T.AUTOSCALE_SETTING, "properties.targetResourceUri"))
    return False
