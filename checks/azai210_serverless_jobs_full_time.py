"""AZAI-210 serverless-jobs-full-time."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from checks._common import rule_page
from checks._serverless import SERVERLESS_GUIDE, SERVERLESS_PRINCIPLE, serverless_spend
from scanner.engine.checkapi import CheckContext, Pillar, Remediation, Severity, Violation, rule
from scanner.model import amljobs
from scanner.model import azure_types as T
from scanner.model.needs import LiveRead
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, UnknownValueError, known

# Three quarters of one instance's week: from there a reservation at any discount above 25% costs
# less than the same hours on serverless, because a reservation is "use-it-or-lose-it" by the hour
# (MicrosoftDocs/azure-docs articles/cost-management-billing/manage/understand-vm-reservation-charges.md
# @ 0300cb444a63a1520ed236bbd4e481f09710630f). The docstring's "Why" gives the arithmetic.
FULL_TIME_INSTANCES = 0.75


@rule(
    id="AZAI-210",
    slug="serverless-jobs-full-time",
    title="A workspace's serverless jobs add up to full-time compute",
    pillar=Pillar.COST,
    severity=Severity.MEDIUM,
    resource_types=(T.WORKSPACE,),
    reads=(LiveRead.ML_JOBS,),
    principle=SERVERLESS_PRINCIPLE,
    remediation=Remediation(
        terraform=(
            "Add an azurerm_machine_learning_compute_cluster (min_node_count = 0) and submit the recurring "
            "jobs to it; cover its steady base with a reservation or savings plan."
        ),
        bicep="A workspaces/computes AmlCompute cluster, named as each recurring job's compute (computeId).",
        cli="az ml job create --file job.yml --set compute=azureml:CLUSTER",
        terraform_code="""\
            resource "azurerm_machine_learning_compute_cluster" "train" {
              # ...
              vm_size     = "Standard_NC24ads_A100_v4"
              vm_priority = "LowPriority"
              scale_settings {
                min_node_count                       = 0
                max_node_count                       = 2
                scale_down_nodes_after_idle_duration = "PT10M"
              }
            }
        """,
        bicep_code="""\
            resource train 'Microsoft.MachineLearningServices/workspaces/computes@2024-10-01' = {
              parent: workspace
              name: 'train'
              location: location
              properties: {
                computeType: 'AmlCompute'
                properties: {
                  vmSize: 'Standard_NC24ads_A100_v4'
                  scaleSettings: { minNodeCount: 0, maxNodeCount: 2, nodeIdleTimeBeforeScaleDown: 'PT10M' }
                }
              }
            }
        """,
        cli_code="""\
            az ml job create --file job.yml --resource-group RG --workspace-name WS --set compute=azureml:train
        """,
        guide=SERVERLESS_GUIDE,
    ),
    help_uri=rule_page("AZAI-210"),
    options={"full_time_instances": FULL_TIME_INSTANCES},
    sources=("live",),
    recurring_cost=True,
)
def serverless_jobs_full_time(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A workspace whose serverless jobs of the last 7 days add up to an instance kept busy
    most of the week, whoever submitted them (a schedule, a pipeline, a notebook loop, a team
    running evaluations back to back). AZAI-207 judges the schedules before deploy.

    ## What fails

    A workspace whose jobs on serverless compute (no `computeId`; a pipeline whose
    `settings.default_compute` is `serverless`), created in the last 7 days, ran for at least
    `full_time_instances` x 7 x 24 instance-hours: 126 at the default 0.75, three quarters of
    one instance's week, 18 hours a day on average. A job counts its hours x its
    `resources.instanceCount` (a sweep's `trial.resources`), and sizes add up. One A100 kept
    busy 97% of the week by evaluation jobs run back to back (163 instance-hours) fails, and so
    does a workspace at exactly 126.

    The jobs API records no run times (`JobBase` has no start, end or duration in the
    2025-12-01 spec), so a finished job (Completed, Failed, Canceled) is taken to have run from
    `systemData.createdAt` to `systemData.lastModifiedAt`, its record's last change, and at most
    its `limits.timeout`; a running one until the scan; a queued, starting or preparing one not
    at all. A pipeline's own record is left out (its steps are jobs of their own), and so are
    archived jobs, which the list leaves out by default: archiving changes `lastModifiedAt`.
    The sum is therefore a floor, and the finding states it, the threshold and the share of
    one instance's week it makes.

    ## What passes

    Workspaces whose serverless jobs stay under the threshold: a nightly job of 2 hours (14
    instance-hours, 8% of the week) or of 8 hours (56, 33%), and work kept running around the
    clock on the five weekdays only (120, 71%), which is near the line. Jobs on compute
    clusters, instances or attached compute (`computeId` set) are not counted.

    ## Undetermined when

    The workspace's jobs could not be read. A job whose definition cannot be read is left out
    of the sum.

    ## Options

    - `full_time_instances` (default 0.75): the share of one instance's week (its 168 hours)
      from which a workspace's serverless jobs count as full-time; above 1 it counts whole
      instances. Set it to 1 minus the discount your reservation or savings plan gives on
      these sizes, and the rule fails the workspaces whose measured hours that commitment
      would run for less.

    ## Waste estimate

    What the serverless compute costs a month at this rate: for each `instanceType`, the
    instances kept busy (its instance-hours a day / 24) x 730 hours x its Linux pay-as-you-go
    hourly price in the workspace's region. As for AZAI-207 this is spend, not a proven saving:
    no reservation price is bundled. Jobs that name no `instanceType` run on a VM Azure picks,
    which makes the figure unknown, never $0.

    ## Why

    Serverless compute is for short, infrequent runs; a team that moved everything to it keeps
    paying on-demand rates around the clock for what a cluster with a reservation would run
    for less. The default puts the line where that trade turns at a 25% discount, which a
    reader can check without a price list: serverless bills the busy share of the week at
    pay-as-you-go rates, while a reservation bills every hour of its term at (1 - its
    discount) of them, used or not ("use-it-or-lose-it", *How the Azure reservation discount
    is applied to virtual machines*). At 75% busy any discount above 25% makes the reservation
    cheaper; a nightly job of 8 hours (33%) would need one above 67%. A threshold of one whole
    instance would pass a single instance's jobs unless they filled every hour of the week,
    which a floor rarely shows. This is a live-only rule: a template holds no jobs. No peer
    checks this.
    """
    read = known(resource.body.get(LiveRead.ML_JOBS.value))
    if read is None:
        return  # the collector did not read jobs for this workspace
    days, jobs = _window(read)
    instances = float(ctx.options.get("full_time_instances", FULL_TIME_INSTANCES))
    threshold = instances * 24.0 * days
    counted, busy = _busy_hours(jobs)
    total = sum(busy.values())
    if total < threshold:
        return
    share = total / (24.0 * days)
    cost = serverless_spend(
        resource,
        ctx,
        {size: hours / days for size, hours in busy.items()},
        (
            f"{counted} serverless job(s) created in the last {days:g} days, {total:.1f} instance-hours",
            "the jobs API records no run times: a finished job ran from its creation to its record's last "
            "change, at most its limits.timeout; a running one until the scan",
            "queued jobs, archived jobs and a pipeline's own record are left out: the figure is a floor",
        ),
    )
    yield Violation(
        f"Workspace '{resource.name}' ran {counted} serverless job(s) for {total:.1f} instance-hours in "
        f"{days:g} days, {share:.0%} of one instance's {24 * days:g} hours: at or over the full-time "
        f"threshold of {threshold:g} instance-hours (full_time_instances {instances:g})",
        LiveRead.ML_JOBS.value,
        {
            "jobs": counted,
            "instance_hours": round(total, 1),
            "window_days": days,
            "threshold_instance_hours": round(threshold, 1),
            "share_of_one_instance": round(share, 3),
        },
        f"serverless jobs under {threshold:g} instance-hours in {days:g} days, or a compute cluster",
        cost=cost,
    )


def _busy_hours(jobs: list[dict[str, Any]]) -> tuple[int, dict[str | None, float]]:
    """How many serverless jobs count, and their instance-hours by ``instanceType`` (None when a
    job names none). A job that has not started, a pipeline's own record (its steps are jobs of
    their own) and a job whose definition cannot be read add nothing: one unreadable job
    narrows the sum, it does not decide the workspace."""
    busy: dict[str | None, float] = defaultdict(float)
    counted = 0
    for job in jobs:
        definition = job.get("properties")
        ran = job.get("ran_hours")
        if not isinstance(definition, dict) or not isinstance(ran, (int, float)) or not math.isfinite(ran) or ran <= 0:
            continue  # not started yet, or a malformed entry: no compute time to count
        try:
            if not amljobs.is_serverless(definition) or str(definition.get("jobType", "")).lower() == "pipeline":
                continue
            hours = float(ran) * amljobs.instance_count(definition)
            size = amljobs.instance_type(definition)
        except UnknownValueError:
            continue
        counted += 1
        busy[size] += hours
    return counted, busy


def _window(read: object) -> tuple[float, list[dict[str, Any]]]:
    """The lookback days and the jobs of a workspace's saved jobs read, in the form the collector
    writes it; anything else (a damaged snapshot) cannot be judged."""
    days = read.get("window_days") if isinstance(read, dict) else None
    jobs = read.get("jobs") if isinstance(read, dict) else None
    window = float(days) if isinstance(days, (int, float)) and not isinstance(days, bool) else math.nan
    if not math.isfinite(window) or window <= 0 or not isinstance(jobs, list):
        raise UnknownValueError(Unknown("the workspace's jobs are not in the form a live scan writes"))
    return window, [job for job in jobs if isinstance(job, dict)]
