"""What several report formats say the same way: locations, evidence values, counts."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from scanner.drift.attribution import Attribution, History
from scanner.engine.checkapi import Severity
from scanner.engine.results import Finding, ScanResult, Undetermined, UnreadType
from scanner.model.places import Place
from scanner.model.resources import parse_resource_id
from scanner.model.unknown import Unknown


def uri(path: str | None) -> str | None:
    """A file path as a forward-slash URI reference, as SARIF and JSON consumers expect."""
    return _posix(path) if path else None


@functools.lru_cache(maxsize=1024)
def _posix(path: str) -> str:
    """Kept per path: a report asks once per finding, of the few files a scan reads."""
    return PurePath(path).as_posix()


def location(place: Place | None) -> dict[str, Any]:
    """A place as the JSON report's ``location`` object (all null for an undeclared live resource)."""
    return {
        "uri": uri(place.file) if place else None,
        "start_line": place.line if place else None,
        "start_column": place.column if place else None,
        "pointer": place.pointer if place else None,
    }


def scanned_location(item: Finding | Undetermined) -> dict[str, Any] | None:
    """Where in the scanned plan or template the resource is, when reports point elsewhere (at
    the ``.tf`` or ``.bicep`` line); None when they point at the scanned file itself."""
    related = item.related_place
    return location(related) if related is not None else None


def place_text(place: Place, column: bool = True) -> str:
    """``file:line:column`` (or ``file:line``), as editors and terminals link them."""
    text = place.file or ""
    if place.line is not None:
        text += f":{place.line}"
        if column and place.column is not None:
            text += f":{place.column}"
    return text


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


def unread_lines(unread: list[UnreadType], name: Callable[[str], str] = str) -> list[tuple[bool, str]]:
    """What every coverage section says of the resources azai reads nothing from: a warning
    naming the AI services' types (True), then one line for all the others (False), each type
    named once with its number of resources. ``name`` writes a type name the report's way (its
    escaping, code in Markdown): a template's type is any string its author wrote."""
    lines: list[tuple[bool, str]] = []
    for ai, kind in ((True, "AI service types"), (False, "non-AI types")):
        group = [u for u in unread if u.ai is ai]
        if group:
            total = sum(u.resources for u in group)
            listed = ", ".join(f"{name(u.name)} ({u.resources})" for u in group)
            noun = "resource" if total == 1 else "resources"
            lines.append((ai, f"{total} {noun} of {kind} azai does not read: {listed}"))
    return lines


def history_of(result: ScanResult) -> History | None:
    """Who made the drift, when `azai drift` read the change records of a live comparison."""
    history: History | None = getattr(result.drift, "history", None)
    return history


def change_of(result: ScanResult, finding: Finding) -> Attribution | None:
    """The drift finding's attribution: the change record that explains it, or why none does."""
    history = history_of(result)
    return history.by_finding.get(finding.fingerprint) if history else None


def resource_label(resource_id: str) -> str:
    """A change record's resource as reports name resources: its name, with its parents'."""
    return parse_resource_id(resource_id).name_chain or resource_id


def authors_line(history: History) -> str:
    """Who made the changes of the timeline, each once, most changes first."""
    return "; ".join(
        f"{who} ({count} change{'s' if count != 1 else ''}{', an expected writer' if expected else ''})"
        for who, count, expected in history.authors()
    )
