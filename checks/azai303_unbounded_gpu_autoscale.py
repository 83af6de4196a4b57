"""AZAI-303 unbounded-gpu-autoscale."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checks._common import WAF_AI, cluster_name, either, known_number, pool_is_gpu, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known


@rule(
    id="AZAI-303",
    slug="unbounded-gpu-autoscale",
    title="AKS GPU pool autoscales without a sensible upper limit",
    pillar=Pillar.PERFORMANCE,
    severity=Severity.MEDIUM,
    resource_types=(T.AGENT_POOL,),
    reads=(),
    principle=Principle(
        "Scale AI compute with demand, within limits that match quota and budget.",
        WAF_AI + "design-principles#performance-efficiency",
    ),
    remediation=Remediation(
        terraform="azurerm_kubernetes_cluster_node_pool: max_count = <the GPU quota you plan for>",
        bicep="agentPools: properties: { enableAutoScaling: true, minCount: 0, maxCount: 4 }",
        cli="az aks nodepool update --update-cluster-autoscaler --min-count 0 --max-count 4 ...",
        terraform_code="""\
            resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
              # ...
              auto_scaling_enabled = true
              min_count            = 0
              max_count            = 4
            }
        """,
        bicep_code="""\
            resource gpu 'Microsoft.ContainerService/managedClusters/agentPools@2024-09-01' = {
              parent: aks
              name: 'gpu'
              properties: {
                enableAutoScaling: true
                minCount: 0
                maxCount: 4
              }
            }
        """,
        cli_code="""\
            az aks nodepool update --resource-group RG --cluster-name AKS --name gpu \\
              --update-cluster-autoscaler --min-count 0 --max-count 4
        """,
        guide="https://learn.microsoft.com/azure/aks/cluster-autoscaler",
    ),
    help_uri=rule_page("AZAI-303"),
    options={"max_nodes": 20},
)
def unbounded_gpu_autoscale(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An autoscaled AKS GPU pool whose upper bound is missing or above what a team plans for, so
    a burst of pending pods can claim GPUs far beyond quota and budget.

    ## What fails

    A GPU pool with `enableAutoScaling` `true` and `maxCount` absent or above the option
    `max_nodes` (default 20).

    ## What passes

    Autoscaled GPU pools with a `maxCount` within the limit, fixed-size pools, and CPU pools.

    ## Undetermined when

    The size, the autoscaling flag or `maxCount` is unknown before deploy.

    ## Options

    - `max_nodes` (default 20): the largest GPU pool maximum considered planned.

    ## Why

    GPU quota is scarce and GPU nodes cost dollars per hour each. A runaway autoscaler holds
    GPUs other teams' jobs wait for, and the bill arrives before anyone notices.
    """
    limit = ctx.options.get("max_nodes", 20)
    # Each of the three settles it alone: a CPU pool, a fixed pool and a bounded one all pass.
    if either(
        lambda: not pool_is_gpu(resource, ctx),
        lambda: known(resource.get("properties.enableAutoScaling")) is not True,
        lambda: _bounded(resource, limit),
    ):
        return
    maximum = resource.get("properties.maxCount")
    yield Violation(
        f"GPU pool '{resource.name.rsplit('/', 1)[-1]}' in cluster '{cluster_name(resource)}' autoscales to "
        f"{maximum if maximum is not None else 'no limit'} nodes (limit {limit})",
        "properties.maxCount",
        maximum,
        f"at most {limit}",
    )


def _bounded(pool: Resource, limit: Any) -> bool:
    maximum = known_number(pool.get("properties.maxCount"), "properties.maxCount")
    return isinstance(maximum, (int, float)) and maximum <= limit
