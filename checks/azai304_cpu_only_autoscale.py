"""AZAI-304 cpu-only-autoscale."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checks._common import WAF_AI, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known

RESOURCE_METRICS = {"cpuutilizationpercentage", "memoryutilizationpercentage"}


@rule(
    id="AZAI-304",
    slug="cpu-only-autoscale",
    title="Model deployment autoscales on CPU or memory alone",
    pillar=Pillar.PERFORMANCE,
    severity=Severity.LOW,
    resource_types=(T.AUTOSCALE_SETTING,),
    reads=(T.ONLINE_DEPLOYMENT,),
    principle=Principle(
        "Scale model serving on the signals that reflect inference load: request latency, queue depth or GPU "
        "utilization.",
        WAF_AI + "design-principles#performance-efficiency",
    ),
    remediation=Remediation(
        terraform="azurerm_monitor_autoscale_setting: add a rule on RequestLatency_P99 (endpoint) or "
        "GpuUtilizationPercentage (deployment)",
        bicep="autoscaleSettings: add a rule whose metricTrigger.metricName is 'RequestLatency_P99' or "
        "'GpuUtilizationPercentage'",
        cli='az monitor autoscale rule create --autoscale-name NAME --condition "RequestLatency_P99 > 300 avg 5m" '
        "--scale out 1",
        terraform_code="""\
            resource "azurerm_monitor_autoscale_setting" "deployment" {
              # ...
              profile {
                name = "default"
                capacity {
                  default = 2
                  minimum = 2
                  maximum = 5
                }
                rule {
                  metric_trigger {
                    metric_name        = "RequestLatency_P99"
                    metric_resource_id = azapi_resource.endpoint.id
                    time_grain         = "PT1M"
                    statistic          = "Average"
                    time_window        = "PT5M"
                    time_aggregation   = "Average"
                    operator           = "GreaterThan"
                    threshold          = 300
                  }
                  scale_action {
                    direction = "Increase"
                    type      = "ChangeCount"
                    value     = "1"
                    cooldown  = "PT5M"
                  }
                }
              }
            }
        """,
        bicep_code="""\
            resource autoscale 'Microsoft.Insights/autoscalesettings@2022-10-01' = {
              // ...
              properties: {
                profiles: [
                  {
                    name: 'default'
                    capacity: {
                      default: '2'
                      minimum: '2'
                      maximum: '5'
                    }
                    rules: [
                      {
                        metricTrigger: {
                          metricName: 'RequestLatency_P99'
                          metricResourceUri: endpoint.id
                          timeGrain: 'PT1M'
                          statistic: 'Average'
                          timeWindow: 'PT5M'
                          timeAggregation: 'Average'
                          operator: 'GreaterThan'
                          threshold: 300
                        }
                        scaleAction: {
                          direction: 'Increase'
                          type: 'ChangeCount'
                          value: '1'
                          cooldown: 'PT5M'
                        }
                      }
                    ]
                  }
                ]
              }
            }
        """,
        cli_code="""\
            az monitor autoscale rule create --resource-group RG --autoscale-name NAME \\
              --source ENDPOINT_ID --condition "RequestLatency_P99 > 300 avg 5m" --scale out 1
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-autoscale-endpoints",
    ),
    help_uri=rule_page("AZAI-304"),
)
def cpu_only_autoscale(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An autoscale setting for an AML online deployment whose rules all read CPU or memory,
    although managed endpoints publish request latency and GPU utilization.

    ## What fails

    A `Microsoft.Insights/autoscaleSettings` resource whose `targetResourceUri` is an online
    deployment, with rules whose `metricTrigger.metricName` are all `CpuUtilizationPercentage`
    or `MemoryUtilizationPercentage`.

    ## What passes

    Settings with at least one latency, request or GPU rule, settings without rules (fixed
    capacity), and settings for other resources.

    ## Undetermined when

    The target or a metric name is unknown before deploy.

    ## Why

    Inference on GPUs saturates the GPU or the request queue long before the host CPU moves,
    so CPU-driven scaling reacts late or never while latency climbs.
    """
    target = ctx.inventory.get(known(resource.get("properties.targetResourceUri")))
    if target is None or target.type_key != T.ONLINE_DEPLOYMENT.lower():
        return
    metrics = _metric_names(known(resource.get("properties.profiles")))
    if metrics and all(m.lower() in RESOURCE_METRICS for m in metrics):
        yield Violation(
            f"Autoscale setting '{resource.name}' scales deployment '{target.name}' "
            f"on {', '.join(sorted(metrics))} only",
            "properties.profiles",
            sorted(metrics),
            "a rule on RequestLatency_P99, RequestsPerMinute or GpuUtilizationPercentage",
        )


def _metric_names(profiles: Any) -> set[str]:
    names: set[str] = set()
    for profile in profiles if isinstance(profiles, list) else []:
        for item in (profile.get("rules") or []) if isinstance(profile, dict) else []:
            name = known(item.get("metricTrigger", {}).get("metricName")) if isinstance(item, dict) else None
            if isinstance(name, str):
                names.add(name)
    return names
