"""Runs checks over an inventory and collects findings and undetermined pairs."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.engine.checkapi import Check, CheckContext, Violation
from scanner.engine.results import Finding, Undetermined, fingerprint
from scanner.model.pricing import PriceBook
from scanner.model.resources import Inventory, Resource
from scanner.model.retirements import RetirementTable
from scanner.model.unknown import UnknownValueError
from scanner.model.utilization import UtilizationSource
from scanner.model.vmsizes import SizeCatalog


@dataclass
class Evaluation:
    findings: list[Finding] = field(default_factory=list)
    undetermined: list[Undetermined] = field(default_factory=list)
    passed: list[tuple[Check, Resource]] = field(default_factory=list)


def evaluate(
    inventory: Inventory,
    checks: Iterable[Check],
    options: Mapping[str, Mapping[str, Any]] | None = None,
    utilization: UtilizationSource | None = None,
    prices: PriceBook | None = None,
    sizes: SizeCatalog | None = None,
    today: dt.date | None = None,
    retirements: RetirementTable | None = None,
) -> Evaluation:
    """Evaluate every check on every resource of its types, as on ``today`` (the run's date)."""
    book = prices or PriceBook.load()
    catalog = sizes or SizeCatalog()
    on = today or dt.date.today()
    table = retirements or RetirementTable.load()
    result = Evaluation()
    findings, undetermined = result.findings, result.undetermined
    seen: set[tuple[str, str, str]] = set()
    for check in checks:
        merged = {**check.options, **((options or {}).get(check.id, {}))}
        ctx = CheckContext(
            inventory=inventory,
            options=merged,
            utilization=utilization,
            prices=book,
            sizes=catalog,
            today=on,
            retirements=table,
        )
        for resource in inventory.of_type(*check.resource_types):
            origin = resource.origin
            if origin.reference_only or origin.kind not in check.sources:
                continue
            outcome = _outcome(check, resource, ctx)
            doubt = _deployment_doubt(check, resource, ctx, outcome)
            if doubt is not None:
                undetermined.append(Undetermined(check, resource, outcome.path, doubt))
                continue
            added = _add_findings(check, resource, outcome.violations, inventory, seen, findings)
            unknown = outcome.unknown
            if unknown is not None:
                undetermined.append(Undetermined(check, resource, unknown.path, str(unknown)))
            elif not added:
                result.passed.append((check, resource))
    return result


def _add_findings(
    check: Check,
    resource: Resource,
    violations: list[Violation],
    inventory: Inventory,
    seen: set[tuple[str, str, str]],
    findings: list[Finding],
) -> bool:
    """Append a finding for each violation not already reported, and say whether any was (the
    caller counts a decided resource with no new finding as passed). One finding per rule,
    resource identity and path, since an IaC resource is identified by type and name: one that
    two scanned inputs declare is one resource, whose findings would repeat with one fingerprint."""
    before = len(findings)
    for violation in violations:
        key = (check.id, resource.identity_key, violation.path.lower())
        if key in seen:
            continue
        seen.add(key)
        findings.append(
            Finding(
                check=check,
                resource=resource,
                violation=violation,
                severity=violation.severity or check.severity,
                fingerprint=fingerprint(check.id, resource, violation.path),
                tags=inherited_tags(inventory, resource),
            )
        )
    return len(findings) > before


@dataclass
class _Outcome:
    """One rule on one resource: its violations, the unknown that stopped it, and the
    conditional resources its lookups returned."""

    violations: list[Violation]
    unknown: UnknownValueError | None
    looked_up: list[Resource]

    @property
    def path(self) -> str | None:
        return self.violations[0].path if self.violations else self.unknown.path if self.unknown else None

    @property
    def verdict(self) -> tuple[object, ...]:
        """What the outcome decides: the violations and whether an unknown stopped it."""
        return (sorted((v.path.lower(), v.severity or 0) for v in self.violations), self.unknown is None)


def _outcome(check: Check, resource: Resource, ctx: CheckContext) -> _Outcome:
    violations: list[Violation] = []
    unknown: UnknownValueError | None = None
    ctx.inventory.watch_lookups()
    try:
        violations.extend(check.evaluate(resource, ctx))
    except UnknownValueError as exc:
        # Without its traceback: that holds this frame, whose `unknown` holds the exception, a
        # cycle only the collector frees; kept for every undecided pair, they cost a scan of
        # 10,000 resources a full collection of its heap.
        unknown = exc.with_traceback(None)
    return _Outcome(violations, unknown, ctx.inventory.conditional_lookups())


def _deployment_doubt(check: Check, resource: Resource, ctx: CheckContext, outcome: _Outcome) -> str | None:
    """Why a rule's outcome on ``resource`` cannot be trusted, or None when it can.

    A template resource deployed only under a condition nobody knows before deploy cannot be
    said to fail (it may never exist). A rule that looked up such a resource (a diagnostic
    setting, a private endpoint) is judged again as if it were not deployed: if the verdict
    changes, it rests on something that may not exist. Only templates have such resources.
    """
    others = [r for r in outcome.looked_up if r is not resource]
    if others:
        ctx.inventory.hide_conditional = True
        try:
            without = _outcome(check, resource, ctx)
        finally:
            ctx.inventory.hide_conditional = False
        if without.verdict != outcome.verdict:
            other = others[0]
            return (
                f"{other.type} '{other.name}', which this depends on, is deployed only if "
                f"{other.origin.condition}, which is not known before deploy"
            )
    if outcome.violations and resource.origin.condition:
        return f"deployed only if {resource.origin.condition}, which is not known before deploy"
    return None


def inherited_tags(inventory: Inventory, resource: Resource) -> dict[str, Any]:
    """Tags of the resource and its parents, the nearest winning: a compute inherits its
    workspace's owner tag for cost reporting and suppressions by tag stay its own."""
    chain: list[Resource] = []
    current: Resource | None = resource
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = inventory.parent(current)
    merged: dict[str, Any] = {}
    for item in reversed(chain):
        merged.update(item.tags)
    return merged
