"""The terminal report: findings grouped by severity, with counts, then the undetermined."""

from __future__ import annotations

from reports.common import severity_counts
from scanner import __version__
from scanner.checkapi import Severity
from scanner.engine import Finding, ScanResult, Undetermined


def _where(item: Finding | Undetermined) -> str:
    origin = item.resource.origin
    position = item.position
    place = f"{origin.file}:{position.line}:{position.column}" if position and origin.file else (origin.file or "live")
    handle = origin.address or origin.symbolic_name
    return f"{place}" + (f" ({handle})" if handle else "")


def render(result: ScanResult, fail_on: Severity | None) -> bytes:
    lines = [
        f"azai {__version__}: {len(result.inputs)} input(s), {result.resources_scanned} resource(s), "
        f"{len(result.checks)} rule(s)",
        "",
    ]
    counts = severity_counts(result)
    for severity in sorted(Severity, reverse=True):
        group = [f for f in result.findings if f.severity == severity]
        if not group:
            continue
        lines.append(f"{severity.label.upper()} ({len(group)})")
        for finding in group:
            lines.append(f"  {finding.check.id} {finding.check.slug}  {finding.resource.type} {finding.resource.name}")
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
    for warning in result.warnings:
        lines.append(f"warning: {warning}")
    if result.warnings:
        lines.append("")
    summary = ", ".join(f"{n} {label}" for label, n in counts.items())
    lines.append(f"{len(result.findings)} finding(s): {summary}; {len(result.undetermined)} undetermined")
    if fail_on is not None:
        failing = len(result.at_or_above(fail_on))
        verdict = (
            f"FAILED: {failing} finding(s) at or above {fail_on.label}"
            if failing
            else f"passed: nothing at or above {fail_on.label}"
        )
        lines.append(verdict)
    return ("\n".join(lines) + "\n").encode("utf-8")
