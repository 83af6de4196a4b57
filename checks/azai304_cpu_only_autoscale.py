"""AZAI-304 cpu-only-autoscale."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checks._common import WAF_AI, judged_if, known_list, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource, get_path, parse_resource_id
from scanner.model.unknown import Unknown, UnknownValueError, known

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

    A metric name is unknown before deploy, or a profile, rule, trigger or metric name is not of
    the type the API takes (a trigger that is `false` names no metric); or the target is unknown
    and the setting scales on resource metrics only (one with a latency, request or GPU rule
    passes whatever it scales).

    ## Why

    Inference on GPUs saturates the GPU or the request queue long before the host CPU moves,
    so CPU-driven scaling reacts late or never while latency climbs.
    """
    yield from judged_if(lambda: _scales_deployment(resource), _resource_metrics_only(resource, ctx))


def _scales_deployment(setting: Resource) -> bool:
    """The setting scales an AML online deployment, as its target's id says (whether or not that
    deployment is among the scanned resources)."""
    target = known(setting.get("properties.targetResourceUri"))
    return (
        isinstance(target, str)
        and (parse_resource_id(target).resource_type or "").lower() == T.ONLINE_DEPLOYMENT.lower()
    )


def _resource_metrics_only(setting: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """Every rule scales on a resource metric. One rule on another metric passes the setting, so
    a metric name that is not known matters only when no other rule is known to have one."""
    metrics, unknown = _metric_names(setting)
    if any(m.lower() not in RESOURCE_METRICS for m in metrics):
        return
    if unknown is not None:
        raise unknown
    if metrics:
        target = ctx.inventory.get(setting.get("properties.targetResourceUri"))
        name = target.name if target is not None else str(setting.get("properties.targetResourceUri"))
        yield Violation(
            f"Autoscale setting '{setting.name}' scales deployment '{name}' on {', '.join(sorted(metrics))} only",
            "properties.profiles",
            sorted(metrics),
            "a rule on RequestLatency_P99, RequestsPerMinute or GpuUtilizationPercentage",
        )


def _metric_names(resource: Resource) -> tuple[set[str], UnknownValueError | None]:
    """The metric names of every rule of every profile, and the first reason one cannot be read.
    A what-if result is refused at the input boundary when these have the wrong type; a
    template's expression can still build anything, and a value of the wrong type names no
    metric: the rule cannot decide."""
    names: set[str] = set()
    unknown: UnknownValueError | None = None
    for i, profile in enumerate(known_list(resource.get("properties.profiles"), "properties.profiles") or []):
        at = f"properties.profiles.{i}"
        rules = known_list(get_path(_object(profile, at), "rules"), f"{at}.rules")
        for j, item in enumerate(rules or []):
            try:
                name = _metric_name(item, f"{at}.rules.{j}")
            except UnknownValueError as exc:
                unknown = unknown or exc
                continue
            if name:
                names.add(name)
    return names, unknown


def _metric_name(rule: Any, at: str) -> str | None:
    where = f"{at}.metricTrigger"
    name = known(get_path(_object(get_path(_object(rule, at), "metricTrigger"), where), "metricName"))
    if name is not None and not isinstance(name, str):
        raise UnknownValueError(Unknown(f"{where}.metricName is {type(name).__name__}, not text", path=where))
    return name


def _object(value: Any, path: str) -> dict[str, Any]:
    """An object the rule reads members of (empty when absent); anything else raises Unknown."""
    value = known(value)
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise UnknownValueError(Unknown(f"{path} is {type(value).__name__}, not an object", path=path))
