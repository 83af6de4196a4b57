"""The cost view of a scan: waste totals by rule, subscription, resource group and owner.

Only unsuppressed findings count. A finding whose cost is unknown (no price for its size or
region) is counted apart, never as $0. For plans (Terraform plans and what-if results), the
recurring cost of what the plan creates is stated on its own: what merging the plan would add
each month. Which costs recur is the rules' to say (``recurring_cost``), not this module's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from scanner.engine.results import Finding, ScanResult
from scanner.model.pricing import Cost
from scanner.model.resources import is_placeholder, parse_resource_id
from scanner.model.unknown import Unknown

NOT_KNOWN = "(set at deploy)"
UNTAGGED = "(untagged)"
TOP = 10


@dataclass
class CostSummary:
    owner_tag: str
    total_monthly_usd: float = 0.0
    with_cost: int = 0
    unknown: list[Finding] = field(default_factory=list)
    by_rule: dict[str, float] = field(default_factory=dict)
    by_subscription: dict[str, float] = field(default_factory=dict)
    by_resource_group: dict[str, float] = field(default_factory=dict)
    by_owner: dict[str, float] = field(default_factory=dict)
    top: list[Finding] = field(default_factory=list)
    added_by_plans_usd: float | None = None


def _scope(finding: Finding) -> tuple[str, str]:
    """The finding's subscription and resource group, or NOT_KNOWN where the input leaves them
    to deploy time."""
    parsed = parse_resource_id(finding.resource.id)
    return _known(parsed.subscription), _known(parsed.resource_group)


def _known(segment: str | None) -> str:
    return segment if segment and not is_placeholder(segment) else NOT_KNOWN


def owner_of(finding: Finding, owner_tag: str) -> str:
    """The owner tag's value; NOT_KNOWN when the input leaves it to deploy time (an expression
    that cannot be evaluated), which is not the same as untagged."""
    wanted = owner_tag.lower()
    value = next((v for k, v in finding.tags.items() if str(k).lower() == wanted), None)
    if isinstance(value, Unknown):
        return NOT_KNOWN
    return str(value) if value else UNTAGGED


def _monthly(finding: Finding) -> float:
    """A finding's monthly estimate, 0.0 where it has none."""
    return finding.cost.monthly_usd if finding.cost and finding.cost.monthly_usd else 0.0


def _counted(result: ScanResult) -> tuple[list[Finding], list[Finding]]:
    """The unsuppressed findings with a cost, priced apart from unknown: an unknown is never $0."""
    priced: list[Finding] = []
    unknown: list[Finding] = []
    for finding in result.findings:
        cost = finding.cost
        if cost is None or finding.suppression is not None:
            continue
        (unknown if cost.monthly_usd is None else priced).append(finding)
    return priced, unknown


def _largest_per_resource(priced: list[Finding]) -> list[Finding]:
    """Each resource's largest estimate, so totals count a resource two rules flag only once."""
    largest: dict[str, Finding] = {}
    for finding in priced:
        key = finding.resource.identity_key
        current = largest.get(key)
        if current is None or _monthly(finding) > _monthly(current):
            largest[key] = finding
    return list(largest.values())


def _total_by(findings: Iterable[Finding], key: Callable[[Finding], str]) -> dict[str, float]:
    """The monthly estimates summed per key (a rule, a subscription, a group, an owner)."""
    totals: defaultdict[str, float] = defaultdict(float)
    for finding in findings:
        totals[key(finding)] += _monthly(finding)
    return totals


def _added_by_plans(result: ScanResult, priced: list[Finding]) -> float | None:
    """The recurring cost of what the plans create, each resource once at its largest estimate
    (a plan and a what-if of one deployment create the same resources); None without a plan."""
    if not result.plans_scanned:
        return None
    created = [f for f in priced if f.check.recurring_cost and f.resource.origin.creates]
    return round(sum((_monthly(f) for f in _largest_per_resource(created)), 0.0), 2)


def summarize(result: ScanResult) -> CostSummary:
    """Totals count each resource once, at its largest estimate: an always-on cluster that is
    also idle is one set of node-hours, not two. Per-rule figures keep each rule's own view."""
    priced, unknown = _counted(result)
    largest = _largest_per_resource(priced)
    by_subscription = _total_by(largest, lambda f: _scope(f)[0])
    return CostSummary(
        owner_tag=result.owner_tag,
        total_monthly_usd=round(sum(by_subscription.values()), 2),
        with_cost=len(priced),
        unknown=unknown,
        by_rule=_ranked(_total_by(priced, lambda f: f"{f.check.id} {f.check.slug}")),
        by_subscription=_ranked(by_subscription),
        by_resource_group=_ranked(_total_by(largest, lambda f: _scope(f)[1])),
        by_owner=_ranked(_total_by(largest, lambda f: owner_of(f, result.owner_tag))),
        top=sorted(largest, key=lambda f: (-_monthly(f), f.check.id, f.resource.name))[:TOP],
        added_by_plans_usd=_added_by_plans(result, priced),
    )


def _ranked(totals: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 2) for k, v in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))}


def cost_json(cost: Cost | None) -> dict[str, Any] | None:
    if cost is None:
        return None
    return {
        "monthly_usd": cost.monthly_usd,
        "currency": cost.currency,
        "basis": cost.basis,
        "assumptions": list(cost.assumptions),
        "confidence": cost.confidence,
        "price": None
        if cost.price is None
        else {"usd_per_hour": cost.price.usd_per_hour, "source": cost.price.source, "as_of": cost.price.as_of},
        "unknown_reason": cost.unknown_reason,
    }


def summary_json(summary: CostSummary) -> dict[str, Any]:
    return {
        "currency": "USD",
        "total_monthly_usd": summary.total_monthly_usd,
        "findings_with_cost": summary.with_cost,
        "findings_with_unknown_cost": len(summary.unknown),
        "by_rule": summary.by_rule,
        "by_subscription": summary.by_subscription,
        "by_resource_group": summary.by_resource_group,
        "owner_tag": summary.owner_tag,
        "by_owner": summary.by_owner,
        "top_wasters": [
            {
                "rule_id": f.check.id,
                "resource_name": f.resource.name,
                "resource_id": f.resource.id,
                "monthly_usd": f.cost.monthly_usd if f.cost else None,
            }
            for f in summary.top
        ],
        "always_on_added_by_plans_usd": summary.added_by_plans_usd,
    }
