"""The terminal report: findings grouped by severity, with counts, then the undetermined.

Every line passes through ``visible`` as it is written, so no name, tag or message quoted
anywhere in it can send a control character to the terminal or start a line of its own. Colour
(for a terminal) is added after that, to lines marked with a `Painted` style, so no quoted input
can carry or break it.
"""

from __future__ import annotations

from typing import NamedTuple

from reports.common import history_of, place_text, severity_counts, unread_lines
from reports.escaping import visible
from scanner import __version__
from scanner.cost.summary import CostSummary, summarize
from scanner.drift.attribution import Attribution, History
from scanner.drift.compare import DriftReport
from scanner.engine.checkapi import Severity
from scanner.engine.results import Finding, ScanResult, Undetermined, UnreadType
from scanner.model.pricing import SUMMARY_BASIS
from scanner.model.resources import CoverageGap
from scanner.model.shown import json_text


def _where(item: Finding | Undetermined) -> str:
    origin = item.resource.origin
    place = item.place
    if place is None:
        return f"live {item.resource.id}"
    handle = origin.address or origin.symbolic_name
    return place_text(place) + (f" ({handle})" if handle else "")


class Painted(NamedTuple):
    """A line shown in colour on a terminal: ``style`` is an SGR code (``1;31`` bold red)."""

    text: str
    style: str


Line = str | Painted

SEVERITY_STYLE = {Severity.CRITICAL: "1;31", Severity.HIGH: "31", Severity.MEDIUM: "33", Severity.LOW: "36"}


def _findings_section(active: list[Finding], compact: bool, history: History | None = None) -> list[Line]:
    """The findings the gate counts, most severe first, so the worst are read first; compact,
    one line each (severity, rule, resource, message, place), for logs and grep. A live drift
    finding says, on a line of its own, who made it (`azai drift`'s ``history``)."""
    changes = history.by_finding if history else {}
    lines: list[Line] = []
    for severity in sorted(Severity, reverse=True):
        group = [f for f in active if f.severity == severity]
        if not group:
            continue
        if not compact:
            lines.append(Painted(f"{severity.label.upper()} ({len(group)})", SEVERITY_STYLE[severity]))
        for finding in group:
            state = f" [{finding.baseline_state}]" if finding.baseline_state else ""
            head = f"{finding.check.id} {finding.check.slug}  {finding.resource.type} {finding.resource.name}{state}"
            if compact:
                line = f"{severity.label.upper():<8} {head}: {finding.violation.message} (at {_where(finding)})"
                lines.append(Painted(line, SEVERITY_STYLE[severity]))
                continue
            lines += [f"  {head}", f"    {finding.violation.message}", f"    at {_where(finding)}"]
            change = changes.get(finding.fingerprint)
            if change is not None:
                lines.append(f"    {change.line}")
        if not compact:
            lines.append("")
    return lines + ([""] if compact and lines else [])


def _undetermined_section(undetermined: list[Undetermined], compact: bool) -> list[Line]:
    """Checks that could not decide, shown apart so nobody reads them as passed."""
    if not undetermined:
        return []
    lines: list[Line] = []
    if not compact:
        lines.append(f"UNDETERMINED ({len(undetermined)}): these rules could not decide, so they did not pass")
    for item in undetermined:
        head = f"{item.check.id} {item.check.slug}  {item.resource.type} {item.resource.name}"
        if compact:
            lines.append(f"UNDETERMINED {head}: {item.reason} (at {_where(item)})")
            continue
        lines += [f"  {head}", f"    {item.reason}", f"    at {_where(item)}"]
    lines.append("")
    return lines


def _suppressed_section(suppressed: list[Finding]) -> list[str]:
    """Accepted findings with their justification: visible, but not counted by the gate."""
    if not suppressed:
        return []
    lines = [f"SUPPRESSED ({len(suppressed)}): accepted, not counted by the gate"]
    for finding in suppressed:
        assert finding.suppression is not None
        lines.append(f"  {finding.check.id} {finding.check.slug}  {finding.resource.name}")
        lines.append(f"    {finding.suppression.justification}")
    lines.append("")
    return lines


def _baseline_section(result: ScanResult, active: list[Finding]) -> list[str]:
    """How the findings compare with the baseline, when one was given."""
    if not result.baseline_used:
        return []
    new = sum(1 for f in active if f.baseline_state == "new")
    return [f"baseline: {new} new, {len(active) - new} unchanged, {len(result.absent)} no longer found", ""]


def _drift_section(report: DriftReport | None) -> list[str]:
    """What changed between the two estates `azai drift` compared, property by property."""
    if report is None:
        return []
    lines = [
        f"DRIFT ({report.mode}): {report.base} -> {report.current}",
        f"  added {len(report.added)}, removed {len(report.removed)}, changed {len(report.changed)}",
    ]
    for resource, changes in report.changed:
        for change in changes:
            lines.append(
                f"  changed {resource.name}: {change.path}: {json_text(change.before)} -> {json_text(change.after)}"
            )
    made = report.history.by_resource if report.history else {}
    lines += [f"  added {r.type} {r.name}{_made_by(made, r.id)}" for r in report.added]
    lines += [f"  removed {r.type} {r.name}{_made_by(made, r.id)}" for r in report.removed]
    lines += [f"  finding appeared: {f.check.id} {f.resource.name}" for f in report.appeared]
    lines += [f"  finding resolved: {f.check.id} {f.resource.name}" for f in report.resolved]
    lines.append("")
    return lines


def _made_by(made: dict[str, Attribution], resource_id: str) -> str:
    """ ": created by ... on ... UTC" for an added or removed resource whose records were read."""
    attribution = made.get(resource_id.lower())
    return f": {attribution.line}" if attribution else ""


def _coverage_section(coverage: list[CoverageGap], unread: list[UnreadType]) -> list[Line]:
    """What the scan could not read, so nobody takes the report as complete, and the resource
    types it read nothing from (a warning for an AI service's), which no rule judged."""
    if not coverage and not unread:
        return []
    lines: list[Line] = [
        f"COVERAGE ({len(coverage)}): not scanned, so not known to be compliant"
        if coverage
        else "COVERAGE: resource types azai does not read"
    ]
    lines += [f"  {gap.scope} ({gap.status_label}): {gap.reason}" for gap in coverage]
    lines += [Painted(f"  warning: {text}", "33") if ai else f"  {text}" for ai, text in unread_lines(unread)]
    lines.append("")
    return lines


def _top_wasters(costs: CostSummary) -> list[str]:
    """The costliest findings, each with what was multiplied and where the price came from."""
    lines = ["  top wasters:"]
    for finding in costs.top:
        cost = finding.cost
        assert cost is not None and cost.price is not None
        lines.append(f"    {finding.resource.name} ({finding.check.id}): {cost.basis}")
        lines.append(f"      assuming {'; '.join(cost.assumptions[:-1])}")
        dated = "undated source" if cost.price.as_of == "undated" else f"as of {cost.price.as_of}"
        lines.append(f"      price: {cost.price.source} ({dated})")
    return lines


def _cost_section(costs: CostSummary) -> list[str]:
    """Monthly waste by rule, resource group and owner; unknown costs are listed, never counted as $0."""
    if not costs.with_cost and not costs.unknown:
        return []
    lines = [f"WASTE: ${costs.total_monthly_usd:,.2f} a month ({SUMMARY_BASIS})", "  by rule:"]
    lines += [f"    {rule}: ${value:,.2f}" for rule, value in costs.by_rule.items()]
    lines.append("  by resource group:")
    lines += [f"    {group}: ${value:,.2f}" for group, value in costs.by_resource_group.items()]
    lines.append(f"  by owner (tag {costs.owner_tag}):")
    lines += [f"    {owner}: ${value:,.2f}" for owner, value in costs.by_owner.items()]
    lines += _top_wasters(costs)
    if costs.added_by_plans_usd:
        lines.append(f"  the plans add ${costs.added_by_plans_usd:,.2f} a month of always-on AI compute")
    for finding in costs.unknown:
        reason = finding.cost.unknown_reason if finding.cost else ""
        lines.append(f"  cost unknown for {finding.resource.name} ({finding.check.id}): {reason}")
    lines.append("")
    return lines


def _warnings_section(warnings: list[str]) -> list[str]:
    """What the scan warned about while reading its inputs."""
    if not warnings:
        return []
    return [f"warning: {warning}" for warning in warnings] + [""]


def _verdict(result: ScanResult, active: list[Finding], suppressed: list[Finding]) -> list[Line]:
    """The closing counts and the gate's verdict, last so a pipeline log ends with them."""
    summary = ", ".join(f"{n} {label}" for label, n in severity_counts(result, active).items())
    lines: list[Line] = [
        f"{len(active)} finding(s): {summary}; {len(result.undetermined)} undetermined; {len(suppressed)} suppressed"
    ]
    if result.fail_on is not None:
        failing = len(result.failing())
        label = result.fail_on.label
        lines.append(
            Painted(f"FAILED: {failing} finding(s) at or above {label}", "1;31")
            if failing
            else Painted(f"passed: nothing at or above {label}", "32")
        )
    if result.coverage:
        lines.append(Painted(f"INCOMPLETE: {len(result.coverage)} scope(s) could not be read", "33"))
    return lines


def _compact(result: ScanResult, active: list[Finding], suppressed: list[Finding]) -> list[Line]:
    """``--compact``: a line for each finding, undetermined check, suppressed finding, scope not
    read and warning (the AI service types azai does not read among them), then one closing line
    with what was read, the counts and the verdict. No headings, blank lines, cost breakdown or
    count of the other types not read (the other reports keep them): for logs to grep, and for
    the pre-commit hook, which so says one line when nothing fails."""
    lines = [*_findings_section(active, True), *_undetermined_section(result.undetermined, True)]
    lines += [
        f"SUPPRESSED {f.check.id} {f.check.slug}  {f.resource.name}: {f.suppression.justification}"
        for f in suppressed
        if f.suppression is not None
    ]
    lines += [f"NOT SCANNED {gap.scope} ({gap.status_label}): {gap.reason}" for gap in result.coverage]
    lines += [f"warning: {text}" for ai, text in unread_lines(result.unread_types) if ai]
    lines += [f"warning: {warning}" for warning in result.warnings]
    verdict = _verdict(result, active, suppressed)
    closing = "; ".join([_header(result), *(line if isinstance(line, str) else line.text for line in verdict)])
    style = next((line.style for line in verdict if isinstance(line, Painted)), None)
    return [line for line in lines if line != ""] + [Painted(closing, style) if style else closing]


def _header(result: ScanResult) -> str:
    """What was read: inputs, resources and rules."""
    return (
        f"azai {__version__}: {len(result.inputs)} input(s), {result.resources_scanned} resource(s), "
        f"{len(result.checks)} rule(s)"
    )


def _shown(line: Line, colour: bool) -> str:
    """A line made inert by ``visible``, then coloured when it is marked and colour is wanted."""
    if isinstance(line, str):
        return visible(line)
    text = visible(line.text)
    return f"\x1b[{line.style}m{text}\x1b[0m" if colour else text


def render(result: ScanResult, compact: bool = False, colour: bool = False) -> bytes:
    """The report; ``compact`` gives a line per finding and one closing line (``_compact``);
    ``colour`` adds terminal colours to severities and the verdict (the caller decides: a
    terminal, and no NO_COLOR)."""
    active = [f for f in result.findings if f.suppression is None]
    suppressed = [f for f in result.findings if f.suppression is not None]
    if compact:
        return _encoded(_compact(result, active, suppressed), colour)
    lines: list[Line] = [
        _header(result),
        "",
        *_findings_section(active, False, history_of(result)),
        *_undetermined_section(result.undetermined, False),
        *_suppressed_section(suppressed),
        *_baseline_section(result, active),
        *_drift_section(result.drift),
        *_coverage_section(result.coverage, result.unread_types),
        *_cost_section(summarize(result)),
        *_warnings_section(result.warnings),
        *_verdict(result, active, suppressed),
    ]
    return _encoded(lines, colour)


def _encoded(lines: list[Line], colour: bool) -> bytes:
    return ("\n".join(_shown(line, colour) for line in lines) + "\n").encode("utf-8")
