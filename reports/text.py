"""The terminal report: findings grouped by severity, with counts, then the undetermined."""

from __future__ import annotations

from reports.common import severity_counts
from scanner import __version__
from scanner.cost.summary import summarize
from scanner.engine.checkapi import Severity
from scanner.engine.results import Finding, ScanResult, Undetermined
from scanner.model.pricing import BASIS


def _where(item: Finding | Undetermined) -> str:
    origin = item.resource.origin
    position = item.position
    if not origin.file:
        return f"live {item.resource.id}"
    place = f"{origin.file}:{position.line}:{position.column}" if position else origin.file
    handle = origin.address or origin.symbolic_name
    return f"{place}" + (f" ({handle})" if handle else "")


def render(result: ScanResult) -> bytes:
    lines = [
        f"azai {__version__}: {len(result.inputs)} input(s), {result.resources_scanned} resource(s), "
        f"{len(result.checks)} rule(s)",
        "",
    ]
    active = [f for f in result.findings if f.suppression is None]
    suppressed = [f for f in result.findings if f.suppression is not None]
    counts = severity_counts(result, active)
    for severity in sorted(Severity, reverse=True):
        group = [f for f in active if f.severity == severity]
        if not group:
            continue
        lines.append(f"{severity.label.upper()} ({len(group)})")
        for finding in group:
            state = f" [{finding.baseline_state}]" if finding.baseline_state else ""
            lines.append(
                f"  {finding.check.id} {finding.check.slug}  {finding.resource.type} {finding.resource.name}{state}"
            )
            lines.append(f"    {finding.violation.message}")
            lines.append(f"    at {_where(finding)}")
        lines.append("")
    if result.undetermined:
        lines.append(f"UNDETERMINED ({len(result.undetermined)}): these rules could not decide, so they did not pass")
        for item in result.undetermined:
            lines.append(f"  {item.check.id} {item.check.slug}  {item.resource.type} {item.resource.name}")
            lines.append(f"    {item.reason}")
            lines.append(f"    at {_where(item)}")
        lines.append("")
    if suppressed:
        lines.append(f"SUPPRESSED ({len(suppressed)}): accepted, not counted by the gate")
        for finding in suppressed:
            assert finding.suppression is not None
            lines.append(f"  {finding.check.id} {finding.check.slug}  {finding.resource.name}")
            lines.append(f"    {finding.suppression.justification}")
        lines.append("")
    if result.baseline_used:
        new = sum(1 for f in active if f.baseline_state == "new")
        lines.append(f"baseline: {new} new, {len(active) - new} unchanged, {len(result.absent)} no longer found")
        lines.append("")
    if result.drift is not None:
        report = result.drift
        lines.append(f"DRIFT ({report.mode}): {report.base} -> {report.current}")
        lines.append(f"  added {len(report.added)}, removed {len(report.removed)}, changed {len(report.changed)}")
        for resource, changes in report.changed:
            for change in changes:
                lines.append(f"  changed {resource.name}: {change.path}: {change.before!r} -> {change.after!r}")
        lines += [f"  added {r.type} {r.name}" for r in report.added]
        lines += [f"  removed {r.type} {r.name}" for r in report.removed]
        lines += [f"  finding appeared: {f.check.id} {f.resource.name}" for f in report.appeared]
        lines += [f"  finding resolved: {f.check.id} {f.resource.name}" for f in report.resolved]
        lines.append("")
    if result.coverage:
        lines.append(f"COVERAGE ({len(result.coverage)}): not scanned, so not known to be compliant")
        for gap in result.coverage:
            lines.append(f"  {gap.scope} ({gap.status_label}): {gap.reason}")
        lines.append("")
    costs = summarize(result)
    if costs.with_cost or costs.unknown:
        lines.append(f"WASTE: ${costs.total_monthly_usd:,.2f} a month ({BASIS})")
        lines.append("  by rule:")
        lines += [f"    {rule}: ${value:,.2f}" for rule, value in costs.by_rule.items()]
        lines.append("  by resource group:")
        lines += [f"    {group}: ${value:,.2f}" for group, value in costs.by_resource_group.items()]
        lines.append(f"  by owner (tag {costs.owner_tag}):")
        lines += [f"    {owner}: ${value:,.2f}" for owner, value in costs.by_owner.items()]
        lines.append("  top wasters:")
        for finding in costs.top:
            cost = finding.cost
            assert cost is not None and cost.price is not None
            lines.append(f"    {finding.resource.name} ({finding.check.id}): {cost.basis}")
            lines.append(f"      assuming {'; '.join(cost.assumptions[:-1])}")
            dated = "undated source" if cost.price.as_of == "undated" else f"as of {cost.price.as_of}"
            lines.append(f"      price: {cost.price.source} ({dated})")
        if costs.added_by_plans_usd:
            lines.append(f"  the plans add ${costs.added_by_plans_usd:,.2f} a month of always-on AI compute")
        for finding in costs.unknown:
            reason = finding.cost.unknown_reason if finding.cost else ""
            lines.append(f"  cost unknown for {finding.resource.name} ({finding.check.id}): {reason}")
        lines.append("")
    for warning in result.warnings:
        lines.append(f"warning: {warning}")
    if result.warnings:
        lines.append("")
    summary = ", ".join(f"{n} {label}" for label, n in counts.items())
    lines.append(
        f"{len(active)} finding(s): {summary}; {len(result.undetermined)} undetermined; {len(suppressed)} suppressed"
    )
    if result.fail_on is not None:
        failing = len(result.failing())
        label = result.fail_on.label
        lines.append(
            f"FAILED: {failing} finding(s) at or above {label}" if failing else f"passed: nothing at or above {label}"
        )
    if result.coverage:
        lines.append(f"INCOMPLETE: {len(result.coverage)} scope(s) could not be read")
    return ("\n".join(lines) + "\n").encode("utf-8")
