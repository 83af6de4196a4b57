"""AZAI-206 idle-provisioned-throughput."""

from __future__ import annotations

import re
from collections.abc import Iterator

from checks._common import WAF_AI, measured_deployment, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.needs import LiveRead
from scanner.model.pricing import FINE_TUNE_HOSTING, HOURS_PER_MONTH, PTU, Cost, fine_tune_item
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, known
from scanner.model.utilization import FINE_TUNED_MARK, DeploymentUsage, is_hosted_fine_tune, is_provisioned

PTU_GUIDE = "https://learn.microsoft.com/azure/foundry/openai/how-to/provisioned-throughput-onboarding"
# A fine-tuned model is named after its base model and version (gpt-4o-mini-2024-07-18.ft-<id>,
# gpt-35-turbo-0613.ft-<id>); hosting is priced by base model, as tokens are.
_MODEL_VERSION = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4})$")


@rule(
    id="AZAI-206",
    slug="idle-provisioned-throughput",
    title="Provisioned throughput or a fine-tuned deployment is idle",
    pillar=Pillar.COST,
    severity=Severity.MEDIUM,
    resource_types=(T.MODEL_DEPLOYMENT,),
    reads=(LiveRead.METRICS, T.COGNITIVE_ACCOUNT),  # the account's region prices the PTUs
    principle=Principle(
        "Monitor utilization closely, and shut down, scale down or deallocate idle resources; "
        "provisioned model capacity bills whether it is used or not.",
        WAF_AI + "design-principles#cost-optimization",
    ),
    remediation=Remediation(
        terraform=(
            "Lower the deployment's sku capacity (PTUs) to what the peak needs, move it to a Standard "
            "sku, or remove it."
        ),
        bicep="Lower sku.capacity of the deployment, switch sku.name to a Standard type, or remove it.",
        cli="az cognitiveservices account deployment delete -g RG -n ACCOUNT --deployment-name DEPLOYMENT",
        terraform_code="""\
            resource "azurerm_cognitive_deployment" "chat" {
              # ...
              sku {
                name     = "GlobalStandard" # pay per token instead of per PTU-hour
                capacity = 50
              }
            }
        """,
        bicep_code="""\
            resource chat 'Microsoft.CognitiveServices/accounts/deployments@2025-06-01' = {
              parent: account
              name: 'chat'
              sku: {
                name: 'GlobalProvisionedManaged'
                capacity: 15 // sized to the measured peak
              }
              // ...
            }
        """,
        cli_code="""\
            az cognitiveservices account deployment delete \\
              --resource-group RG --name ACCOUNT --deployment-name DEPLOYMENT
        """,
        guide=PTU_GUIDE,
    ),
    help_uri=rule_page("AZAI-206"),
    options={"max_average_percent": 10.0, "max_peak_percent": 30.0},
    sources=("live",),
)
def idle_provisioned_throughput(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A provisioned (PTU) deployment whose capacity stays mostly unused, or a provisioned or
    fine-tuned deployment that took no requests at all over the lookback window.

    ## What fails

    - A provisioned deployment (`sku.name` `ProvisionedManaged`, `GlobalProvisionedManaged` or
      `DataZoneProvisionedManaged`) whose hourly provisioned utilization averaged below
      `max_average_percent` and never rose above `max_peak_percent` over the last 7 days.
    - A provisioned deployment, or a deployment of a fine-tuned model (a model name with
      `.ft-`, on any tier but Developer), that took no requests in the 7 days.

    Utilization is Azure Monitor's `AzureOpenAIProvisionedManagedUtilizationV2` (or, on accounts
    that publish the Foundry names, `ProvisionedUtilization`); requests are
    `AzureOpenAIRequests` (or `ModelRequests`). All are account metrics split by
    `ModelDeploymentName`, read in one request per account.

    ## What passes

    A provisioned deployment whose average or peak utilization reaches the thresholds, a
    fine-tuned deployment that took requests, and every Standard, Global Standard, Data Zone
    Standard or Developer deployment of a base model: those bill per token, so an idle one costs
    nothing.

    ## Undetermined when

    The account's metrics could not be read, no request metric of it was measured (it publishes
    none, or Azure Monitor answered each with an error code: a coverage gap says which), or a
    provisioned deployment took requests but has no utilization series (or a sample is not a
    finite number). Missing metrics never count as a pass.

    ## Options

    - `max_average_percent` (default 10): the average provisioned utilization below which the
      deployment is idle.
    - `max_peak_percent` (default 30): the hourly peak that must also stay below it. A PTU
      deployment is bought for its peak (its latency guarantee holds only below 100%), so the
      average alone would flag a correctly sized bursty deployment; if even the busiest hour
      used less than 30%, at least 70% of the PTUs were needed in no hour of the week. The
      values match AZAI-202's for GPUs.

    ## Waste estimate

    The PTUs no hour of the window needed (PTUs x (100% - peak utilization)), or every PTU of a
    deployment that took no requests, x 730 hours x the hourly price of one PTU of the
    deployment's type in its account's region. Prices are the hourly (no reservation) retail
    rates of the Retail Prices API meters `Provisioned Managed Global Unit`, `... Data Zone
    Unit` and `... Regional Unit`, bundled with their source and date for every region a public
    copy of the API lists them in; a region without one is unknown, never $0. Hourly samples
    hide minute peaks, and a deployment can shrink only in its model's PTU increments, so the
    figure is an upper bound of what resizing saves; a reservation bills less than the hourly
    rate.

    A fine-tuned deployment that took no requests wastes its hosting fee: 730 hours x the
    hourly hosting price of its base model (the model name before its version and `.ft-`) for
    its deployment type (Standard, Global Standard or Data Zone Standard) in its account's
    region, from the bundled fine-tuned model hosting table; a model, type or region the table
    lacks is unknown, with the reason.

    ## Why

    Provisioned throughput and fine-tuned model hosting bill by the hour whether or not a
    request arrives, and a PTU deployment is sized once, for a launch or a load test, and rarely
    revisited. Azure Advisor's idle rules do not read model deployment metrics.
    """
    provisioned = is_provisioned(resource)
    if not provisioned and not is_hosted_fine_tune(resource):
        return
    known(resource.get("sku.name"))
    usage = measured_deployment(resource, ctx)
    if usage.requests is not None and usage.requests == 0:
        yield _unused(resource, ctx, usage, provisioned)
        return
    if not provisioned:
        if usage.requests is None:
            known(Unknown("no request metric of the account was measured (not published, or an error code)"))
        return
    if not usage.measured:
        known(Unknown("no provisioned utilization metric for this deployment"))
        return
    average_limit = float(ctx.options.get("max_average_percent", 10.0))
    peak_limit = float(ctx.options.get("max_peak_percent", 30.0))
    if usage.average_percent < average_limit and usage.maximum_percent < peak_limit:
        ptus = _ptus(resource)
        spare = ptus * (100.0 - usage.maximum_percent) / 100.0
        cost = _ptu_cost(
            resource,
            ctx,
            round(spare, 2),
            "provisioned throughput no hour needed",
            (
                f"{ptus:g} PTU deployed; the busiest hour used {usage.maximum_percent:.1f}% "
                f"({usage.utilization_metric}, {usage.window}), so {spare:g} PTU were idle in every hour",
                "hourly averages hide minute peaks; PTUs shrink only in the model's increments",
            ),
        )
        yield Violation(
            f"Provisioned deployment '{resource.name}' averaged {usage.average_percent:.1f}% "
            f"{usage.utilization_metric} (peak {usage.maximum_percent:.1f}%) of {ptus:g} PTU over {usage.window}",
            "sku.capacity",
            {
                "average_percent": round(usage.average_percent, 2),
                "maximum_percent": round(usage.maximum_percent, 2),
                "ptus": ptus,
                "window": usage.window,
                "metric": usage.utilization_metric,
                "requests": usage.requests,
            },
            f"average below {average_limit:g}% and peak below {peak_limit:g}% means idle",
            cost=cost,
        )


def _unused(resource: Resource, ctx: CheckContext, usage: DeploymentUsage, provisioned: bool) -> Violation:
    """The finding for a deployment that took no requests: all of its hourly charge is waste."""
    if provisioned:
        ptus = _ptus(resource)
        cost = _ptu_cost(
            resource, ctx, ptus, "provisioned throughput with no requests", (f"no requests in {usage.window}",)
        )
        what = f"{ptus:g} PTU"
    else:
        cost = _hosting_cost(resource, ctx, (f"no requests in {usage.window}",))
        what = "fine-tuned model hosting"
    return Violation(
        f"Deployment '{resource.name}' ({what}) took no requests ({usage.requests_metric}) over {usage.window}",
        "sku",
        {"requests": 0, "window": usage.window, "metric": usage.requests_metric},
        "a deployment billed by the hour takes requests, or is removed",
        cost=cost,
    )


def _ptus(resource: Resource) -> float:
    """The deployment's PTUs: ``sku.capacity`` of a provisioned deployment."""
    capacity = known(resource.get("sku.capacity"))
    if isinstance(capacity, bool) or not isinstance(capacity, (int, float)):
        known(Unknown(f"sku.capacity is {capacity!r}, not a number of PTUs", path="sku.capacity"))
    return float(capacity)


def _ptu_cost(resource: Resource, ctx: CheckContext, ptus: float, what: str, assumptions: tuple[str, ...]) -> Cost:
    return ctx.prices.estimate(
        resource.get("sku.name"), _region(resource, ctx), ptus, HOURS_PER_MONTH, what, assumptions, meter=PTU
    )


def _hosting_cost(resource: Resource, ctx: CheckContext, assumptions: tuple[str, ...]) -> Cost:
    """A month of a fine-tuned deployment's hosting fee: its base model's hourly price for its
    deployment type in its account's region."""
    model, sku = resource.get("properties.model.name"), resource.get("sku.name")
    item = None
    if isinstance(model, str) and isinstance(sku, str):
        base = _MODEL_VERSION.sub("", model[: model.lower().index(FINE_TUNED_MARK)])
        item = fine_tune_item(base, sku)
    return ctx.prices.estimate(
        item,
        _region(resource, ctx),
        1,
        HOURS_PER_MONTH,
        "fine-tuned model hosting with no requests",
        assumptions,
        meter=FINE_TUNE_HOSTING,
    )


def _region(resource: Resource, ctx: CheckContext) -> object:
    """The deployment's region: its account's location (None when the account is not known)."""
    account = ctx.inventory.parent(resource)
    return account.location if account is not None else None
