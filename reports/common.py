"""What several report formats say the same way: locations, evidence values, counts."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from scanner.engine.checkapi import Severity
from scanner.engine.results import Finding, ScanResult, Undetermined
from scanner.model.unknown import Unknown


def uri(path: str | None) -> str | None:
    """A file path as a forward-slash URI reference, as SARIF and JSON consumers expect."""
    return PurePath(path).as_posix() if path else None


def location(item: Finding | Undetermined) -> dict[str, Any]:
    resource = item.resource
    position = item.position
    return {
        "uri": uri(resource.origin.file),
        "start_line": position.line if position else None,
        "start_column": position.column if position else None,
        "pointer": position.pointer if position else None,
    }


def plain(value: Any) -> Any:
    """An evidence value as plain JSON; Unknown becomes a readable marker, never its source text."""
    if isinstance(value, Unknown):
        return f"(unknown: {value.reason})"
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def severity_counts(result: ScanResult, findings: list[Finding] | None = None) -> dict[str, int]:
    counts = {s.label: 0 for s in sorted(Severity, reverse=True)}
    for finding in result.findings if findings is None else findings:
        counts[finding.severity.label] += 1
    return counts
