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
    options={"full_time_instances": 1.0},
    sources=("live",),
    recurring_cost=True,
)
def serverless_jobs_full_time(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A workspace whose serverless jobs of the last 7 days add up to instances kept busy
    around the clock, whoever submitted them (a schedule, a pipeline, a notebook loop).
    AZAI-207 judges the schedules before deploy.

    ## What fails

    A workspace whose jobs on serverless compute (no `computeId`; a pipeline whose
    `settings.default_compute` is `serverless`), created in the last 7 days, ran for at least
    `full_time_instances` x 24 instance-hours a day on average: each job's hours x its
    `resources.instanceCount` (a sweep's `trial.resources`).

    The jobs API records no run times (`JobBase` has no start, end or duration in the
    2025-12-01 spec), so a finished job (Completed, Failed, Canceled) is taken to have run from
    `systemData.createdAt` to `systemData.lastModifiedAt`, its record's last change, and at most
    its `limits.timeout`; a running one until the scan; a queued, starting or preparing one not
    at all. A pipeline's own record is left out (its steps are jobs of their own), and so are
    archived jobs, which the list leaves out by default: archiving changes `lastModifiedAt`.
    The sum is therefore a floor.

    ## What passes

    Workspaces whose serverless jobs stay under the threshold, and jobs on compute clusters,
    instances or attached compute (`computeId` set).

    ## Undetermined when

    The workspace's jobs could not be read. A job whose definition cannot be read is left out
    of the sum.

    ## Options

    - `full_time_instances` (default 1): how many instances kept busy around the clock count
      as full-time.

    ## Waste estimate

    What the serverless compute costs a month at this rate: for each `instanceType`, the
    instances kept busy (its instance-hours a day / 24) x 730 hours x its Linux pay-as-you-go
    hourly price in the workspace's region. As for AZAI-207 this is spend, not a proven saving:
    no reservation price is bundled. Jobs that name no `instanceType` run on a VM Azure picks,
    which makes the figure unknown, never $0.

    ## Why

    Serverless compute is for short, infrequent runs; a team that moved everything to it keeps
    paying on-demand rates around the clock for what a cluster with a reservation would run
    for less. This is a live-only rule: a template holds no jobs. No peer checks this.
    """
    read = known(resource.body.get(LiveRead.ML_JOBS.value))
    if read is None:
        return  # the collector did not read jobs for this workspace
    days, jobs = _window(read)
    hours_per_day = 24.0 * float(ctx.options.get("full_time_instances", 1.0))
    busy: dict[str | None, float] = defaultdict(float)
    counted = 0
    for job in jobs:
        definition = job.get("properties")
        ran = job.get("ran_hours")
        if not isinstance(definition, dict) or not isinstance(ran, (int, float)) or not math.isfinite(ran) or ran <= 0:
            continue  # not started yet, or a malformed entry: no compute time to count
        try:
            if not amljobs.is_serverless(definition) or str(definition.get("jobType", "")).lower() == "pipeline":
                continue  # a pipeline's own record: its steps are jobs of their own
            hours = float(ran) * amljobs.instance_count(definition)
            size = amljobs.instance_type(definition)
        except UnknownValueError:  # one unreadable job narrows the sum; it does not decide the workspace
            continue
        counted += 1
        busy[size] += hours
    total = sum(busy.values())
    if total / days < hours_per_day:
        return
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
        f"Workspace '{resource.name}' ran {counted} serverless job(s) for {total:.0f} instance-hours in "
        f"{days:g} days: {round(total / days / 24, 2):g} instance(s) busy around the clock",
        LiveRead.ML_JOBS.value,
        {"jobs": counted, "instance_hours": round(total, 1), "window_days": days},
        f"serverless jobs busy under {hours_per_day:g} instance-hours a day, or a compute cluster",
        cost=cost,
    )


def _window(read: object) -> tuple[float, list[dict[str, Any]]]:
    """The lookback days and the jobs of a workspace's saved jobs read, in the form the collector
    writes it; anything else (a damaged snapshot) cannot be judged."""
    days = read.get("window_days") if isinstance(read, dict) else None
    jobs = read.get("jobs") if isinstance(read, dict) else None
    window = float(days) if isinstance(days, (int, float)) and not isinstance(days, bool) else math.nan
    if not math.isfinite(window) or window <= 0 or not isinstance(jobs, list):
        raise UnknownValueError(Unknown("the workspace's jobs are not in the form a live scan writes"))
    return window, [job for job in jobs if isinstance(job, dict)]
