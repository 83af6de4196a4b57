"""AZAI-202 idle-gpu."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import WAF_AI, same_text
from scanner import azure_types as T
from scanner.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import Resource
from scanner.unknown import Unknown, known


@rule(
    id="AZAI-202",
    slug="idle-gpu",
    title="Running GPU compute is idle",
    pillar=Pillar.COST,
    severity=Severity.MEDIUM,
    resource_types=(T.VIRTUAL_MACHINE, T.VM_SCALE_SET, T.COMPUTE),
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
    ),
    help_uri=WAF_AI + "design-principles#cost-optimization",
    options={"max_average_percent": 10.0, "max_peak_percent": 30.0, "lookback": "P7D"},
    sources=("live",),
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
    missing, or the scan could not read them). Missing metrics never count as a pass.

    ## Options

    - `max_average_percent` (default 10): the average GPU utilization below which compute is idle.
    - `max_peak_percent` (default 30): the peak that must also stay below it, so that a nightly
      batch job does not count as idle.
    - `lookback` (default `P7D`): the window, as in Azure Advisor's shutdown recommendation.

    ## Why

    An idle GPU node costs the same as a busy one. Advisor's idle rules read CPU and network
    only, so an idle GPU behind a busy CPU goes unnoticed.
    """
    if not _is_gpu_compute(resource, ctx):
        return
    source = ctx.utilization
    stats = source.gpu_utilization(resource) if source is not None else None
    if stats is None:
        known(Unknown("no utilization metrics for this GPU resource"))
        return
    average_limit = float(ctx.options.get("max_average_percent", 10.0))
    peak_limit = float(ctx.options.get("max_peak_percent", 30.0))
    if stats.average_percent < average_limit and stats.maximum_percent < peak_limit:
        yield Violation(
            f"GPU compute '{resource.name}' averaged {stats.average_percent:.1f}% {stats.metric} "
            f"(peak {stats.maximum_percent:.1f}%) over {stats.window}",
            "properties",
            {
                "average_percent": stats.average_percent,
                "maximum_percent": stats.maximum_percent,
                "window": stats.window,
                "node_hours": stats.node_hours,
                "metric": stats.metric,
                "confidence": stats.confidence,
            },
            f"average below {average_limit:g}% and peak below {peak_limit:g}% means idle",
        )


def _is_gpu_compute(resource: Resource, ctx: CheckContext) -> bool:
    if resource.type_key == T.VIRTUAL_MACHINE.lower():
        return ctx.sizes.is_gpu(resource.get("properties.hardwareProfile.vmSize"))
    if resource.type_key == T.VM_SCALE_SET.lower():
        return ctx.sizes.is_gpu(resource.get("sku.name"))
    compute_type = known(resource.get("properties.computeType"))
    if not same_text(compute_type, "AmlCompute", "ComputeInstance"):
        return False
    return ctx.sizes.is_gpu(resource.get("properties.properties.vmSize"))
