"""AZAI-201 always-on-compute."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import (
    AZURE_POLICY,
    CHECKOV,
    CUSTODIAN,
    PSRULE,
    STEAMPIPE,
    WAF_AI,
    cluster_name,
    compute_region,
    either,
    judged_if,
    known_number,
    pool_is_gpu,
    pool_mode,
    rule_page,
    same_text,
)
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.durations import parse_duration
from scanner.model.needs import LiveRead
from scanner.model.pricing import HOURS_PER_MONTH, Cost
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, UnknownValueError, known

# Without measurements, a compute instance is assumed used 8 hours on each working day.
WORKING_DAYS_PER_MONTH = 21.7
SCHEDULE_IDLE_HOURS = round(HOURS_PER_MONTH - 8 * WORKING_DAYS_PER_MONTH, 1)
SCHEDULE_NOTE = (
    f"used 8 h on each of {WORKING_DAYS_PER_MONTH} working days a month, idle the other {SCHEDULE_IDLE_HOURS} h"
)


@rule(
    id="AZAI-201",
    slug="always-on-compute",
    title="AI compute cannot scale to zero or shut down when idle",
    pillar=Pillar.COST,
    severity=Severity.MEDIUM,
    resource_types=(T.COMPUTE, T.AGENT_POOL),
    reads=(LiveRead.METRICS, T.WORKSPACE, T.MANAGED_CLUSTER),  # parents: region, owner, price
    recurring_cost=True,  # always-on nodes cost each month they exist
    principle=Principle(
        "Prefer platforms that can be stopped when not in use, and let training and exploratory "
        "compute scale to zero; do not run always-on compute for work that is not full-time.",
        WAF_AI + "design-principles#cost-optimization",
    ),
    remediation=Remediation(
        terraform=(
            "azurerm_machine_learning_compute_cluster: scale_settings { min_node_count = 0 }. GPU node pool: "
            "auto_scaling_enabled = true, min_count = 0. Compute instance idle shutdown is not expressible in "
            "azurerm: add azapi_update_resource with body = "
            '{ properties = { properties = { idleTimeBeforeShutdown = "PT30M" } } }.'
        ),
        bicep=(
            "computes (AmlCompute): properties.properties.scaleSettings.minNodeCount: 0; ComputeInstance: "
            "properties.properties.idleTimeBeforeShutdown: 'PT30M' (API 2025-12-01 or a preview >= 2022-06-01); "
            "agentPools: enableAutoScaling: true, minCount: 0."
        ),
        cli=(
            "az ml compute update -n CLUSTER --min-instances 0; az ml compute create --type ComputeInstance "
            "--idle-time-before-shutdown-minutes 30; "
            "az aks nodepool update --enable-cluster-autoscaler --min-count 0 --max-count N"
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

            resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
              # ...
              auto_scaling_enabled = true
              min_count            = 0
              max_count            = 4
            }

            resource "azapi_update_resource" "notebook_idle_shutdown" {
              type        = "Microsoft.MachineLearningServices/workspaces/computes@2024-10-01-preview"
              resource_id = azurerm_machine_learning_compute_instance.notebook.id
              body = {
                properties = {
                  properties = {
                    idleTimeBeforeShutdown = "PT30M"
                  }
                }
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

            resource notebook 'Microsoft.MachineLearningServices/workspaces/computes@2024-10-01-preview' = {
              parent: workspace
              name: 'notebook'
              location: location
              properties: {
                computeType: 'ComputeInstance'
                properties: {
                  vmSize: 'Standard_NC4as_T4_v3'
                  idleTimeBeforeShutdown: 'PT30M'
                }
              }
            }
        """,
        cli_code="""\
            az ml compute update --name train --resource-group RG --workspace-name WS --min-instances 0
            az aks nodepool update --resource-group RG --cluster-name AKS --name gpu \\
              --enable-cluster-autoscaler --min-count 0 --max-count 4
        """,
        guide=WAF_AI + "design-principles#cost-optimization",
    ),
    help_uri=rule_page("AZAI-201"),
    options={"max_idle_before_shutdown": "PT4H", "idle_below_percent": 10.0},
    peers=(
        PeerRule(
            CHECKOV,
            "CKV_AZURE_150",
            "ML compute cluster min_node_count is 0",
            "Agrees on clusters: min_node_count must be 0 (bridgecrewio/checkov "
            "checkov/terraform/checks/resource/azure/MLComputeClusterMinNodes.py@03d5fdad). Checkov reads Terraform "
            "only; azai every source, plus GPU node pools and compute instances.",
        ),
        PeerRule(
            PSRULE,
            "Azure.ML.ComputeIdleShutdown",
            "Compute instances have an idle shutdown (AZR-000403)",
            "Stricter: both fail a compute instance without idleTimeBeforeShutdown (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.ML.Rule.yaml@1556a9cd), and azai also fails one longer than the "
            "option max_idle_before_shutdown (default PT4H). azai also judges clusters and GPU node pools.",
        ),
        PeerRule(
            AZURE_POLICY,
            "679ddf89-ab8f-48a5-9029-e76054077449",
            "Azure Machine Learning Compute Instance should have idle shutdown",
            "Stricter: both fail an instance whose idleTimeBeforeShutdown is absent or empty (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Machine Learning/IdleShutdown_Audit.json@f4a50bac), and azai also "
            "fails one longer than the option max_idle_before_shutdown (default PT4H). azai also judges clusters and "
            "GPU node pools, and IaC before deploy.",
        ),
        PeerRule(
            STEAMPIPE,
            "machine_learning_compute_cluster_minimum_node_zero",
            "ML compute cluster minimum node count is 0",
            "Agrees on clusters: its query alarms unless scale_settings.min_node_count is 0 "
            "(turbot/steampipe-mod-terraform-azure-compliance query/machinelearning.pp@9c1246e3). It reads "
            "Terraform's azurerm_machine_learning_compute_cluster only; azai every source, plus GPU node pools and "
            "compute instances.",
        ),
        PeerRule(
            CUSTODIAN,
            "#9412",
            "Pull request: compute-instances filter for ML workspaces",
            "Not a rule: the merged filter lets a policy match a deployed workspace's computes by any value, its "
            "example by properties.properties.scaleSettings.minNodeCount 0 (cloud-custodian/cloud-custodian#9412, "
            "2024-04-08). azai reports each cluster above 0 itself, in IaC too.",
        ),
    ),
)
def always_on_compute(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """AI compute that keeps billing while nobody uses it.

    ## What fails

    - An AML compute cluster (`computeType` `AmlCompute`) with `scaleSettings.minNodeCount`
      above 0: those nodes run around the clock.
    - An AML compute instance without `idleTimeBeforeShutdown`, or with one longer than the
      `max_idle_before_shutdown` option (default `PT4H`). The azurerm provider cannot set idle
      shutdown at all; an `azapi_update_resource` that sets it is merged into the instance.
    - An AKS GPU **User** pool that cannot reach zero nodes: autoscaling with `minCount` above 0,
      or a fixed `count` above 0 without autoscaling (an absent count is AKS's default of 1).
      GPU System pools are reported by AZAI-102 instead.

    ## What passes

    Clusters with `minNodeCount` 0 (the default), instances with an idle shutdown within the
    limit, GPU pools that autoscale from 0, and CPU pools.

    ## Undetermined when

    The node counts or idle setting is unknown before deploy, or the compute type is and the
    compute would fail as a cluster or as an instance, or an autoscaled pool declares no
    `minCount`. For an AKS pool, only what decides it: its size and mode are
    asked only of a pool that keeps nodes running, and its autoscaling flag only when one of
    the two ways (`minCount`, or a fixed `count`) would keep nodes.

    ## Options

    - `max_idle_before_shutdown` (ISO-8601 duration, default `PT4H`): the longest idle time
      before shutdown that still counts as scaling to zero. Azure allows 15 minutes to 3 days.
    - `idle_below_percent` (default 10): in a live scan with utilization metrics, the GPU
      utilization below which a compute instance's hour counts as idle.

    ## Waste estimate

    Prices are Linux pay-as-you-go retail per region (`azai prices refresh`); a size or region
    without a price gives an unknown cost with the reason, never $0.

    - Clusters and GPU pools: always-on nodes x hourly price x 730 h a month.
    - Compute instances: idle hours x hourly price. In a live scan with utilization metrics,
      the idle hours are the measured share of the lookback window below
      `idle_below_percent`, scaled to a month. Otherwise a schedule is assumed: used 8 hours on
      each of 21.7 working days, idle the other 556.4 hours of the month; with an idle
      shutdown longer than the limit, the extra hours after each working day.

    ## Why

    Training, fine-tuning and exploration are bursty; GPU compute is billed per node-hour
    whether it works or not. Minimum nodes above zero, and instances that never shut down,
    are the commonest cause of idle GPU spend. Peers disagree here: PSRule's
    `Azure.AKS.MinUserPoolNodes` asks for at least 3 user nodes, which is right for serving CPU
    pools and wrong for GPU pools that should scale to zero, so this rule applies only to GPU pools.
    """
    if resource.type_key == T.AGENT_POOL.lower():
        yield from _gpu_pool(resource, ctx)
        return
    compute_type = resource.get("properties.computeType")
    if isinstance(compute_type, Unknown) and _quiet(_cluster_nodes(resource, ctx)) and _quiet(_instance(resource, ctx)):
        return  # it passes as a cluster and as an instance, so its type does not matter
    if same_text(known(compute_type), "AmlCompute"):
        yield from _cluster_nodes(resource, ctx)
    elif same_text(compute_type, "ComputeInstance"):
        yield from _instance(resource, ctx)


def _cluster_nodes(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    minimum = known(resource.get("properties.properties.scaleSettings.minNodeCount", 0))
    if isinstance(minimum, (int, float)) and minimum > 0:
        cost = ctx.prices.estimate(
            resource.get("properties.properties.vmSize"),
            compute_region(resource, ctx),
            minimum,
            HOURS_PER_MONTH,
            "always-on nodes",
            ("the minimum nodes run every hour of the month",),
        )
        yield Violation(
            f"AML compute cluster '{resource.name}' keeps {minimum:g} node(s) running (minNodeCount {minimum:g})",
            "properties.properties.scaleSettings.minNodeCount",
            minimum,
            "0",
            cost=cost,
        )


def _instance_cost(resource: Resource, ctx: CheckContext, extra_hours_per_day: float | None) -> Cost:
    """Idle hours a month x price: measured in a live scan, else from a working-day schedule."""
    size, region = resource.get("properties.properties.vmSize"), compute_region(resource, ctx)
    measured = ctx.utilization.gpu_utilization(resource) if ctx.utilization else None
    if measured is not None and measured.samples:
        below = float(ctx.options.get("idle_below_percent", 10.0))
        share = measured.idle_share(below)
        note = f"idle (below {below:g}% {measured.metric}) {share:.0%} of {measured.window}, scaled to a month"
        return ctx.prices.estimate(
            size, region, 1, share * HOURS_PER_MONTH, "idle hours of the instance", (note,), "medium"
        )
    if extra_hours_per_day is None:
        hours, note = SCHEDULE_IDLE_HOURS, SCHEDULE_NOTE
    else:
        hours = min(round(extra_hours_per_day * WORKING_DAYS_PER_MONTH, 1), SCHEDULE_IDLE_HOURS)
        note = (
            f"on {extra_hours_per_day:g} h longer than the limit after each of {WORKING_DAYS_PER_MONTH:g} working days"
        )
    return ctx.prices.estimate(size, region, 1, hours, "idle hours of the instance", (note,), "low")


def _instance(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    path = "properties.properties.idleTimeBeforeShutdown"
    idle = known(resource.get(path))
    limit_text = str(ctx.options.get("max_idle_before_shutdown", "PT4H"))
    limit = parse_duration(limit_text)
    if idle is None:
        note = resource.origin.note(path)  # the source form may have no way to set it
        yield Violation(
            f"AML compute instance '{resource.name}' has no idle shutdown{f' ({note})' if note else ''}",
            path,
            None,
            f"an idleTimeBeforeShutdown of at most {limit_text}",
            cost=_instance_cost(resource, ctx, None),
        )
        return
    duration = parse_duration(idle)
    if duration is None:
        known(Unknown(f"idleTimeBeforeShutdown {idle!r} is not an ISO-8601 duration", path=path))
    if limit is not None and duration is not None and duration > limit:
        extra = (duration - limit).total_seconds() / 3600
        yield Violation(
            f"AML compute instance '{resource.name}' waits {idle} before shutting down (limit {limit_text})",
            path,
            idle,
            f"at most {limit_text}",
            cost=_instance_cost(resource, ctx, extra),
        )


def _gpu_pool(pool: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A GPU User pool that keeps nodes running. Its size and mode are asked only of a pool that
    keeps nodes, and whether it autoscales only when one of the two ways would keep nodes."""
    yield from judged_if(
        lambda: not either(lambda: not pool_is_gpu(pool, ctx), lambda: pool_mode(pool) != "user"),
        _kept_nodes(pool, ctx),
    )


def _kept_nodes(pool: Resource, ctx: CheckContext) -> Iterator[Violation]:
    autoscale = pool.get("properties.enableAutoScaling", False)
    if isinstance(autoscale, Unknown) and _quiet(_autoscaled_minimum(pool, ctx)) and _quiet(_fixed_count(pool, ctx)):
        return  # neither way keeps a node, so whether it autoscales does not matter
    if known(autoscale) is True:
        yield from _autoscaled_minimum(pool, ctx)
    else:
        yield from _fixed_count(pool, ctx)


def _quiet(violations: Iterator[Violation]) -> bool:
    """Whether a check finds nothing and knows it."""
    try:
        return not any(True for _ in violations)
    except UnknownValueError:
        return False


def _where(pool: Resource) -> str:
    return f"GPU pool '{pool.name.rsplit('/', 1)[-1]}' in cluster '{cluster_name(pool)}'"


def _autoscaled_minimum(pool: Resource, ctx: CheckContext) -> Iterator[Violation]:
    minimum = pool.get("properties.minCount")
    if minimum is None:
        known(Unknown("an autoscaled pool without minCount", path="properties.minCount"))
    minimum = known_number(minimum, "properties.minCount")
    if minimum > 0:
        yield Violation(
            f"{_where(pool)} autoscales but never below {minimum} node(s)",
            "properties.minCount",
            minimum,
            "0",
            cost=_pool_cost(pool, ctx, minimum),
        )


def _fixed_count(pool: Resource, ctx: CheckContext) -> Iterator[Violation]:
    count = known_number(pool.get("properties.count", 1), "properties.count")
    if count > 0:
        yield Violation(
            f"{_where(pool)} runs a fixed {count} node(s) without autoscaling",
            "properties.count",
            count,
            "autoscaling with minCount 0, or count 0",
            cost=_pool_cost(pool, ctx, count),
        )


def _pool_cost(pool: Resource, ctx: CheckContext, nodes: float) -> Cost:
    cluster = ctx.inventory.pool_cluster(pool)
    return ctx.prices.estimate(
        pool.get("properties.vmSize"),
        cluster.location if cluster is not None else None,
        nodes,
        HOURS_PER_MONTH,
        "always-on GPU nodes",
        ("the pool's minimum nodes run every hour of the month",),
    )
