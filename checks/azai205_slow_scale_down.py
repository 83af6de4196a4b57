"""AZAI-205 slow-scale-down."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import WAF_AI, judged_if, rule_page, same_text
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.durations import parse_duration
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, known

PATH = "properties.properties.scaleSettings.nodeIdleTimeBeforeScaleDown"


@rule(
    id="AZAI-205",
    slug="slow-scale-down",
    title="Compute cluster keeps idle nodes too long before scaling down",
    pillar=Pillar.COST,
    severity=Severity.LOW,
    resource_types=(T.COMPUTE,),
    reads=(),
    principle=Principle(
        "Let training and batch compute scale to zero promptly when jobs finish.",
        WAF_AI + "design-principles#cost-optimization",
    ),
    remediation=Remediation(
        terraform=(
            'azurerm_machine_learning_compute_cluster: scale_settings { scale_down_nodes_after_idle_duration = "PT5M" }'
        ),
        bicep="computes: properties: { properties: { scaleSettings: { nodeIdleTimeBeforeScaleDown: 'PT5M' } } }",
        cli="az ml compute update -n CLUSTER --idle-time-before-scale-down 300",
        terraform_code="""\
            resource "azurerm_machine_learning_compute_cluster" "train" {
              # ...
              scale_settings {
                min_node_count                       = 0
                max_node_count                       = 4
                scale_down_nodes_after_idle_duration = "PT5M"
              }
            }
        """,
        bicep_code="""\
            resource train 'Microsoft.MachineLearningServices/workspaces/computes@2024-04-01' = {
              parent: workspace
              name: 'train'
              location: location
              properties: {
                computeType: 'AmlCompute'
                properties: {
                  vmSize: 'Standard_NC24ads_A100_v4'
                  scaleSettings: {
                    minNodeCount: 0
                    maxNodeCount: 4
                    nodeIdleTimeBeforeScaleDown: 'PT5M'
                  }
                }
              }
            }
        """,
        cli_code="""\
            az ml compute update --name train --resource-group RG --workspace-name WS --idle-time-before-scale-down 300
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-create-attach-compute-cluster",
    ),
    help_uri=rule_page("AZAI-205"),
    options={"max_scale_down_delay": "PT30M"},
)
def slow_scale_down(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML compute cluster that keeps its nodes (often GPUs) billing long after the last job.

    ## What fails

    An `AmlCompute` cluster whose `scaleSettings.nodeIdleTimeBeforeScaleDown` is longer than
    the option `max_scale_down_delay` (ISO-8601 duration, default `PT30M`).

    ## What passes

    Shorter delays, and an absent value (Azure's default is 120 seconds).

    ## Undetermined when

    The delay is unknown before deploy or is not an ISO-8601 duration, or the compute type is
    unknown and the delay is over the limit (an absent or short delay passes whatever the type).

    ## Options

    - `max_scale_down_delay` (default `PT30M`): a longer delay saves node start-up between
      back-to-back jobs, but every finished job then pays this long for idle nodes.

    ## Why

    No peer checks this setting. Each job's nodes stay billed for the whole delay after it ends.
    """
    yield from judged_if(
        lambda: same_text(known(resource.get("properties.computeType")), "AmlCompute"), _slow(resource, ctx)
    )


def _slow(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """The delay against the limit, whatever the compute type (an absent delay passes)."""
    delay = known(resource.get(PATH))
    if delay is None:
        return
    duration = parse_duration(delay)
    if duration is None:
        known(Unknown(f"nodeIdleTimeBeforeScaleDown {delay!r} is not an ISO-8601 duration", path=PATH))
    limit_text = str(ctx.options.get("max_scale_down_delay", "PT30M"))
    limit = parse_duration(limit_text)
    if duration is not None and limit is not None and duration > limit:
        yield Violation(
            f"AML compute cluster '{resource.name}' keeps idle nodes for {delay} before scaling down "
            f"(limit {limit_text})",
            PATH,
            delay,
            f"at most {limit_text}",
        )
