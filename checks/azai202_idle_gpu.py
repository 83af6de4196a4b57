"""AZAI-202 idle-gpu."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checks._common import ADVISOR, WAF_AI, compute_region, rule_page, same_text
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.needs import LiveRead
from scanner.model.pricing import HOURS_PER_MONTH
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, known


@rule(
    id="AZAI-202",
    slug="idle-gpu",
    title="Running GPU compute is idle",
    pillar=Pillar.COST,
    severity=Severity.MEDIUM,
    resource_types=(T.VIRTUAL_MACHINE, T.VM_SCALE_SET, T.COMPUTE),
    reads=(LiveRead.METRICS, T.WORKSPACE),  # a compute's region may be its workspace's
    principle=Principle(
        "Monitor utilization closely, and shut down, scale down or deallocate idle resources; "
        "GPU compute is expensive.",
        WAF_AI + "design-principles#cost-optimization",
    ),
    remediation=Remediation(
        terraform="Scale the resource to zero (min_node_count = 0, instances = 0) or remove it when it is not needed.",
        bicep="Set the node count or VM scale set capacity to 0, or remove the resource.",
        cli=(
            "az vm deallocate -g RG -n VM; az vmss scale -g RG -n VMSS --new-capacity 0; az ml compute stop -n INSTANCE"
        ),
        terraform_code="""\
            resource "azurerm_machine_learning_compute_cluster" "train" {
              # ...
              scale_settings {
                min_node_count                       = 0
                max_node_count                       = 4
                scale_down_nodes_after_idle_duration = "PT5M"
              }
            }

            resource "azurerm_linux_virtual_machine_scale_set" "gpu" {
              # ...
              instances = 0
            }
        """,
        bicep_code="""\
            resource gpu 'Microsoft.Compute/virtualMachineScaleSets@2024-07-01' = {
              // ...
              sku: {
                name: 'Standard_NC24ads_A100_v4'
                capacity: 0
              }
            }
        """,
        cli_code="""\
            az vm deallocate --resource-group RG --name VM
            az vmss scale --resource-group RG --name VMSS --new-capacity 0
            az ml compute stop --name INSTANCE --resource-group RG --workspace-name WS
        """,
        guide=WAF_AI + "design-principles#cost-optimization",
    ),
    help_uri=rule_page("AZAI-202"),
    options={
        "max_average_percent": 10.0,
        "max_peak_percent": 30.0,
        "proxy_max_average_percent": 2.0,
        "proxy_max_peak_percent": 3.0,
    },
    sources=("live",),
    peers=(
        PeerRule(
            ADVISOR,
            "VM/VMSS shutdown",
            "Shut down or resize underused virtual machines and scale sets",
            "Advisor reads CPU and outbound network over 7 days (P95 of max CPU below 3%, the last 3 days' average "
            "at most 2%, network below 2%) on every VM and scale set, with no GPU metric "
            "(MicrosoftDocs/azure-monitor-docs articles/advisor/advisor-cost-recommendations.md). azai judges GPU "
            "VMs, scale sets and AML computes on GPU utilization (average below 10%, peak below 30%), and on "
            "Advisor's CPU thresholds, without network, only as the low-confidence fallback for VMs and scale sets.",
        ),
    ),
)
def idle_gpu(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """Running GPU compute whose measured utilization stays low over the lookback window.

    ## What fails

    A GPU virtual machine, VM scale set, AML compute cluster or AML compute instance whose
    average GPU utilization over the lookback window is below `max_average_percent` and whose
    peak stays below `max_peak_percent`. Utilization comes from Azure Monitor during a live
    scan; this rule never runs on IaC, where there is nothing to measure.

    ## What passes

    GPU compute with utilization above either threshold, and any non-GPU compute.

    ## Undetermined when

    The resource is a GPU resource but no utilization metrics are available for it (metrics are
    missing, the scan could not read them, or a sample is not a finite number). Missing metrics
    never count as a pass.

    ## Options

    - `max_average_percent` (default 10): the average GPU utilization below which compute is idle.
    - `max_peak_percent` (default 30): the peak that must also stay below it, so that a nightly
      batch job does not count as idle.
    - `proxy_max_average_percent` (default 2) and `proxy_max_peak_percent` (default 3): the same
      for VMs and scale sets judged on CPU, Azure Advisor's shutdown thresholds.

    The lookback window is 7 days of hourly averages, as in Azure Advisor's shutdown
    recommendation.

    ## Waste estimate

    Idle node hours x hourly price: the nodes measured, times the share of the window's
    intervals below the average threshold, scaled to 730 hours a month. For VMs and scale sets
    the only ARM metric is CPU (there is no GPU metric without in-guest monitoring), so they are
    judged with Advisor's CPU thresholds and marked low confidence. Advisor also requires low
    outbound network; azai does not read network metrics yet.

    ## Why

    An idle GPU node costs the same as a busy one. Advisor's idle rules read CPU and network
    only, so an idle GPU behind a busy CPU goes unnoticed.
    """
    size, region = _size_and_region(resource, ctx)
    if size is None or not ctx.sizes.is_gpu(size):
        return
    source = ctx.utilization
    stats = source.gpu_utilization(resource) if source is not None else None
    if stats is None or not stats.measured:
        known(Unknown("no utilization metrics for this GPU resource"))
        return
    proxy = stats.confidence == "low"  # CPU standing in for a GPU metric: Advisor's idle thresholds
    average_limit = float(
        ctx.options.get("proxy_max_average_percent" if proxy else "max_average_percent", 2.0 if proxy else 10.0)
    )
    peak_limit = float(
        ctx.options.get("proxy_max_peak_percent" if proxy else "max_peak_percent", 3.0 if proxy else 30.0)
    )
    if stats.average_percent < average_limit and stats.maximum_percent < peak_limit:
        share = stats.idle_share(average_limit)
        cost = ctx.prices.estimate(
            size,
            region,
            stats.nodes,
            share * HOURS_PER_MONTH,
            "idle GPU node hours",
            (f"{stats.nodes:g} node(s) idle in {share:.0%} of {stats.window} ({stats.metric}), scaled to a month",),
            stats.confidence,
        )
        yield Violation(
            f"GPU compute '{resource.name}' averaged {stats.average_percent:.1f}% {stats.metric} "
            f"(peak {stats.maximum_percent:.1f}%) over {stats.window}",
            "properties",
            {
                "average_percent": round(stats.average_percent, 2),
                "maximum_percent": round(stats.maximum_percent, 2),
                "window": stats.window,
                "node_hours": round(stats.node_hours, 1),
                "metric": stats.metric,
                "confidence": stats.confidence,
            },
            f"average below {average_limit:g}% and peak below {peak_limit:g}% means idle",
            cost=cost,
        )


def _size_and_region(resource: Resource, ctx: CheckContext) -> tuple[Any, Any]:
    """The VM size that bills, and where; None for compute that is not a VM-backed cluster or instance."""
    if resource.type_key == T.VIRTUAL_MACHINE.lower():
        return resource.get("properties.hardwareProfile.vmSize"), resource.location
    if resource.type_key == T.VM_SCALE_SET.lower():
        return resource.get("sku.name"), resource.location
    compute_type = known(resource.get("properties.computeType"))
    if not same_text(compute_type, "AmlCompute", "ComputeInstance"):
        return None, None
    return resource.get("properties.properties.vmSize"), compute_region(resource, ctx)
