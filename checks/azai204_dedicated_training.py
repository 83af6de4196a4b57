"""AZAI-204 dedicated-training."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checks._common import WAF_AI, either, has_tag, judged_if, rule_page, same_text
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import amljobs
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, UnknownValueError, known


@rule(
    id="AZAI-204",
    slug="dedicated-training",
    title="Interruptible training runs on dedicated capacity where low-priority would do",
    pillar=Pillar.COST,
    severity=Severity.LOW,
    resource_types=(T.COMPUTE, T.ML_SCHEDULE),
    reads=(T.WORKSPACE,),  # the exemption tag may be on the workspace
    principle=Principle(
        "Use spot or low-priority capacity for interruptible training and batch work, which can checkpoint and resume.",
        WAF_AI + "design-principles#cost-optimization",
    ),
    remediation=Remediation(
        terraform='azurerm_machine_learning_compute_cluster: vm_priority = "LowPriority" (or tag the cluster '
        'interruptible = "false" when jobs cannot be interrupted)',
        bicep=(
            "computes (AmlCompute): properties: { properties: { vmPriority: 'LowPriority' } }; schedules: "
            "jobDefinition: { queueSettings: { jobTier: 'Spot' } }"
        ),
        cli="az ml compute create --type AmlCompute --tier low_priority ...",
        terraform_code="""\
            resource "azurerm_machine_learning_compute_cluster" "train" {
              # ...
              vm_priority = "LowPriority"
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
                  vmPriority: 'LowPriority'
                }
              }
            }
        """,
        cli_code="""\
            az ml compute create --name train --type AmlCompute --size Standard_NC24ads_A100_v4 --tier low_priority \\
              --resource-group RG --workspace-name WS
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-use-low-priority-batch",
    ),
    help_uri=rule_page("AZAI-204"),
    options={"exempt_tag": "interruptible", "exempt_values": ["false", "no"]},
)
def dedicated_training(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML compute cluster on dedicated capacity, or a schedule that re-runs a serverless job
    on the dedicated tier. Compute clusters run training, fine-tuning and batch jobs, which
    checkpoint and retry, and a job a schedule re-runs is by definition work that can wait for
    its next run; low-priority (Spot) capacity costs a fraction of the price.

    ## What fails

    - An `AmlCompute` cluster whose `properties.properties.vmPriority` is `Dedicated` (or
      absent, which means Dedicated).
    - An enabled schedule (`workspaces/schedules`) whose `CreateJob` action runs on serverless
      compute (no `computeId`) with `queueSettings.jobTier` other than `Spot`: `Standard` (the
      documented default when unset), `Basic` or `Premium`.

    Either is exempt when it carries the exemption tag (option `exempt_tag`, default
    `interruptible`, with a value from `exempt_values`, default `false`, `no`) on itself (a
    schedule's tags are its `properties.tags`) or its workspace. GPU clusters and jobs on a GPU
    `instanceType` (a sweep's `trial.resources.instanceType`) are reported at **medium**
    severity.

    ## What passes

    `LowPriority` clusters, `Spot` scheduled jobs, exempted ones, schedules whose jobs run on a
    cluster (the cluster is judged), disabled schedules, schedules whose trigger `endTime` has
    passed, schedules that invoke batch endpoints or create monitors, and other compute types
    (instances serve interactive work, which must not be evicted). A pipeline counts as
    serverless when its `settings.default_compute` is `serverless`; its steps' own settings are
    not read.

    ## Undetermined when

    What decides is unknown before deploy while nothing known passes the resource: the priority
    or tier, the exempt tag, the job definition, or, for a cluster or job that would fail, the
    compute type or whether the schedule still starts a serverless job (a scheduled pipeline
    that names no default compute). A VM size that is unknown does not leave it undetermined:
    the finding is medium, as for a GPU size, since it may be one.

    ## Options

    - `exempt_tag`, `exempt_values`: how a team marks a cluster whose jobs cannot be interrupted.

    ## Why

    Low-priority capacity is priced far below dedicated, and training frameworks already
    checkpoint. Deadline-bound or non-restartable jobs are the exception, and the tag says so.
    """
    if resource.type_key == T.ML_SCHEDULE.lower():
        yield from judged_if(
            lambda: amljobs.scheduled_serverless_job(resource, ctx.today) is not None, _dedicated_job(resource, ctx)
        )
        return
    yield from judged_if(
        lambda: same_text(known(resource.get("properties.computeType")), "AmlCompute"),
        _dedicated_cluster(resource, ctx),
    )


def _dedicated_cluster(cluster: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A cluster on dedicated capacity, whatever its compute type: a low-priority and an exempt
    cluster each pass whether or not the other is known."""
    if either(
        lambda: not same_text(known(cluster.get("properties.properties.vmPriority", "Dedicated")), "Dedicated"),
        lambda: has_tag(cluster, ctx, "exempt_tag", "exempt_values"),
    ):
        return
    priority = cluster.get("properties.properties.vmPriority", "Dedicated")
    yield Violation(
        f"AML compute cluster '{cluster.name}' runs on dedicated capacity (vmPriority {priority})",
        "properties.properties.vmPriority",
        priority,
        "LowPriority",
        _severity(cluster.get("properties.properties.vmSize"), ctx),
    )


def _dedicated_job(schedule: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A scheduled job on the dedicated tier, whether or not the schedule still starts a
    serverless job (asked only of one that is not Spot and not exempt)."""
    definition = known(schedule.get("properties.action.jobDefinition"))
    if not isinstance(definition, dict):
        return  # no job to run: the schedule invokes something else
    if either(
        lambda: amljobs.job_tier(definition) == amljobs.SPOT_TIER,
        lambda: has_tag(schedule, ctx, "exempt_tag", "exempt_values"),
    ):
        return
    tier = amljobs.job_tier(definition)
    yield Violation(
        f"Schedule '{schedule.name}' re-runs a serverless job on the {tier} (dedicated) tier",
        "properties.action.jobDefinition.queueSettings.jobTier",
        tier,
        "Spot",
        _severity(_job_size(definition), ctx),
    )


def _job_size(definition: dict[str, Any]) -> Any:
    """The job's VM size, None when Azure picks it, or Unknown when it cannot be read."""
    try:
        return amljobs.instance_type(definition)
    except UnknownValueError as exc:
        return exc.value


def _severity(size: Any, ctx: CheckContext) -> Severity | None:
    """Medium on GPUs, and on a size not known before deploy (it may be one); else the rule's."""
    if isinstance(size, Unknown):
        return Severity.MEDIUM
    return Severity.MEDIUM if isinstance(size, str) and ctx.sizes.is_gpu(size) else None
