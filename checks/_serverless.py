"""What the AML serverless rules (AZAI-207 on schedules, AZAI-210 on jobs) share: their
principle, and the month's spend of compute kept busy, priced per size."""

from __future__ import annotations

from typing import Any

from checks._common import WAF_AI
from scanner.engine.checkapi import CheckContext, Principle
from scanner.model import azure_types as T
from scanner.model.pricing import HOURS_PER_MONTH, Cost
from scanner.model.resources import Resource

SERVERLESS_GUIDE = "https://learn.microsoft.com/azure/machine-learning/how-to-use-serverless-compute"
SERVERLESS_PRINCIPLE = Principle(
    "Serverless compute suits short, infrequent runs; for full-time operations a compute cluster, "
    "which a reservation or savings plan can discount and which can run on low priority, costs less.",
    WAF_AI + "design-principles#cost-optimization",
)


def serverless_spend(
    resource: Resource, ctx: CheckContext, hours_a_day: dict[Any, float], notes: tuple[str, ...]
) -> Cost:
    """The month's spend on serverless compute: for each size, the instances its busy hours keep
    running (hours a day / 24) x 730 h x its price in the workspace's region; unknown when a job
    names no size (Azure picks it) or a size has no price."""
    what = "serverless compute busy full-time"
    if any(not isinstance(size, str) for size in hours_a_day):
        return Cost(None, what, notes, "medium", unknown_reason="a job names no instanceType, so Azure picks its VM")
    workspace = resource if resource.type_key == T.WORKSPACE.lower() else ctx.inventory.parent(resource)
    region = workspace.location if workspace is not None else None
    costs = [
        ctx.prices.estimate(size, region, hours / 24, HOURS_PER_MONTH, what, notes, "medium")
        for size, hours in sorted(hours_a_day.items())
    ]
    missing = next((c for c in costs if c.monthly_usd is None), None)
    if missing is not None or len(costs) == 1:
        return missing or costs[0]
    return Cost(
        round(sum(c.monthly_usd or 0.0 for c in costs), 2),
        "; ".join(c.basis for c in costs),
        costs[0].assumptions,
        "medium",
        costs[0].price,
    )
