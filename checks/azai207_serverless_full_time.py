"""AZAI-207 serverless-full-time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from checks._common import judged_if, rule_page
from checks._serverless import SERVERLESS_GUIDE, SERVERLESS_PRINCIPLE, serverless_spend
from scanner.engine.checkapi import CheckContext, Pillar, Remediation, Severity, Violation, rule
from scanner.model import amljobs
from scanner.model import azure_types as T
from scanner.model.pricing import Cost
from scanner.model.resources import Resource
from scanner.model.schedules import runs_per_day
from scanner.model.unknown import UnknownValueError, known

Value = TypeVar("Value")


@rule(
    id="AZAI-207",
    slug="serverless-full-time",
    title="Serverless training compute is kept busy full-time",
    pillar=Pillar.COST,
    severity=Severity.MEDIUM,
    resource_types=(T.ML_SCHEDULE,),
    reads=(T.WORKSPACE,),  # the workspace's region prices the compute
    principle=SERVERLESS_PRINCIPLE,
    remediation=Remediation(
        terraform=(
            "Run the schedule's job on an azurerm_machine_learning_compute_cluster (set the job's compute), "
            "or make the azapi schedule fire less often."
        ),
        bicep="workspaces/schedules: properties.action.jobDefinition.computeId: the cluster's id, or a sparser trigger",
        cli="az ml schedule update -n SCHEDULE --set trigger.interval=6 (or set compute: azureml:CLUSTER in the job)",
        terraform_code="""\
            resource "azapi_resource" "retrain" {
              type      = "Microsoft.MachineLearningServices/workspaces/schedules@2024-10-01"
              parent_id = azurerm_machine_learning_workspace.ws.id
              name      = "retrain"
              body = {
                properties = {
                  trigger = { triggerType = "Cron", expression = "0 2 * * *" } # nightly
                  action = {
                    actionType    = "CreateJob"
                    jobDefinition = {
                      jobType   = "Command"
                      computeId = azurerm_machine_learning_compute_cluster.train.id
                      # ...
                    }
                  }
                }
              }
            }
        """,
        bicep_code="""\
            resource retrain 'Microsoft.MachineLearningServices/workspaces/schedules@2024-10-01' = {
              parent: workspace
              name: 'retrain'
              properties: {
                trigger: { triggerType: 'Cron', expression: '0 2 * * *' } // nightly
                action: {
                  actionType: 'CreateJob'
                  jobDefinition: {
                    jobType: 'Command'
                    computeId: train.id // a cluster that scales to zero and can use a reservation
                    // ...
                  }
                }
              }
            }
        """,
        cli_code="""\
            az ml schedule update --name retrain --resource-group RG --workspace-name WS \\
              --set trigger.expression="0 2 * * *"
        """,
        guide=SERVERLESS_GUIDE,
    ),
    help_uri=rule_page("AZAI-207"),
    options={"assumed_run_hours": 1.0, "full_time_instances": 1.0},
    recurring_cost=True,
)
def serverless_full_time(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An Azure Machine Learning schedule that starts serverless jobs so often that they keep
    instances busy around the clock. AZAI-210 judges the jobs a workspace actually ran.

    ## What fails

    An enabled schedule (`Microsoft.MachineLearningServices/workspaces/schedules`) whose action
    creates a job (`actionType` `CreateJob`) on serverless compute (no `computeId` in
    `jobDefinition`; a pipeline whose `settings.default_compute` is `serverless`), and whose
    trigger fires so often that runs a day x hours per run x instances reaches
    `full_time_instances` x 24 hours.

    - Runs a day are the average over a week: a cron `*/20 8-17 * * 1-5` fires 30 times on each
      weekday and 21.4 times a day on average. Azure Machine Learning ignores a cron's
      day-of-month and month fields ("always treated as *"). A Recurrence runs every
      `interval` of its `frequency`: Minute and Hour ones on their own (an Hour one at each
      listed minute), Day, Week and Month ones at each listed hour x minute; listed week days
      thin Minute, Hour and Day recurrences out and are the days of a Week one, and listed month
      days are the days of a Month one.
    - Hours per run are `assumed_run_hours`, or the job's `limits.timeout` when that is
      shorter (a run cannot last longer).
    - Instances are `resources.instanceCount` (default 1; a sweep's `trial.resources`). A
      sweep's concurrent trials (`limits.maxConcurrentTrials`) are not multiplied in, so a
      sweep's figure is a floor.

    ## What passes

    Schedules that fire less often (a daily retrain, a frequent probe with a short
    `limits.timeout`), disabled schedules (`isEnabled: false`), schedules whose trigger
    `endTime` has passed, schedules whose jobs run on a compute cluster (`computeId`), and
    schedules that invoke batch endpoints or create monitors.

    ## Undetermined when

    The trigger or the job definition is unknown before deploy or not in a form the rule reads
    (a cron expression that is not five fields, an hour of 24, a Month recurrence on week days);
    the instance count is unknown and the schedule would pass with one instance, or the timeout
    is and it would fail without one; or the schedule would fail and whether it still starts a
    serverless job is not known (its compute, action, `isEnabled` or `endTime` is unknown, or a
    pipeline names no default compute: its steps choose, and are not read). An unknown VM size
    leaves only the cost unknown.

    ## Options

    - `assumed_run_hours` (default 1): how long one run of a scheduled job is taken to last
      when its `limits.timeout` does not say less. A schedule holds no durations, and the jobs
      API records none either.
    - `full_time_instances` (default 1): how many instances kept busy around the clock count
      as full-time. At 1, a schedule firing every hour of a one-hour job keeps one instance
      busy all day; one firing every 30 minutes keeps two.

    ## Waste estimate

    What the serverless compute costs a month at this rate: the instances kept busy (busy
    instance-hours a day / 24) x 730 hours x the Linux pay-as-you-go hourly price of
    `resources.instanceType` in the workspace's region (serverless compute is billed as AML
    compute is: "The billing model is the same as the model for Azure Machine Learning
    compute"). This is spend, not a proven saving: a compute cluster running the same hours
    costs the same until a reservation or savings plan discounts it, and azai bundles no
    reservation prices. A job without `instanceType` runs on a VM Azure picks, so its price is
    unknown, never $0.

    ## Why

    Microsoft's Well-Architected guidance for AI training platforms: serverless compute is
    ideal for short, infrequent runs, and costs escalate when it is used for full-time
    operations. A schedule set to every few minutes during development and never revisited
    keeps paying on-demand rates around the clock. No peer checks this.
    """
    yield from judged_if(
        lambda: amljobs.scheduled_serverless_job(resource, ctx.today) is not None, _full_time(resource, ctx)
    )


def _full_time(schedule: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """The busy hours the schedule's job would keep, whether or not it still starts one (asked only
    of a schedule that would fail). An unknown instance count counts as its least, 1, and an
    unknown timeout as no shorter than assumed_run_hours: either matters only when the schedule
    would pass with that bound. An unknown size leaves only the cost unknown."""
    hours_per_day = 24.0 * float(ctx.options.get("full_time_instances", 1.0))
    definition = known(schedule.get("properties.action.jobDefinition"))
    if not isinstance(definition, dict):
        return  # no job to run: the schedule invokes something else
    runs = runs_per_day(schedule.get("properties.trigger"))
    assumed = float(ctx.options.get("assumed_run_hours", 1.0))
    (run_hours, limited), hours_doubt = _bounded(lambda: _run_hours(definition, assumed), (assumed, False))
    count, count_doubt = _bounded(lambda: amljobs.instance_count(definition), 1.0)
    busy = runs * run_hours * count
    if busy < hours_per_day:
        if count_doubt is not None:
            raise count_doubt
        return
    if hours_doubt is not None:
        raise hours_doubt
    size, size_doubt = _bounded(lambda: amljobs.instance_type(definition), None)
    how_long = "its limits.timeout" if limited else "assumed_run_hours"
    notes = (f"{runs:g} runs a day x {run_hours:g} h ({how_long}) x {count:g} instance(s)",)
    cost = (
        serverless_spend(schedule, ctx, {size: busy}, notes)
        if size_doubt is None
        else Cost(None, "serverless compute busy full-time", notes, "medium", unknown_reason=str(size_doubt))
    )
    yield Violation(
        f"Schedule '{schedule.name}' starts a serverless job {runs:g} times a day, keeping "
        f"{round(busy / 24, 2):g} instance(s) busy around the clock",
        "properties.trigger",
        {"runs_per_day": round(runs, 2), "run_hours": run_hours, "instances": count, "instance_type": size},
        f"serverless jobs busy under {hours_per_day:g} instance-hours a day, or a compute cluster",
        cost=cost,
    )


def _bounded(read: Callable[[], Value], bound: Value) -> tuple[Value, UnknownValueError | None]:
    """What ``read`` gives, or ``bound`` and why the value is not known."""
    try:
        return read(), None
    except UnknownValueError as exc:
        return bound, exc


def _run_hours(definition: dict[str, Any], assumed: float) -> tuple[float, bool]:
    """How long one run lasts: ``assumed``, or the job's timeout when shorter (and whether it was)."""
    limit = amljobs.timeout(definition)
    hours = limit.total_seconds() / 3600 if limit else None
    return (hours, True) if hours is not None and hours < assumed else (assumed, False)
