"""What happens to findings after the rules ran: severity overrides, suppressions, baselines.

Suppressed findings stay in every report, marked with who accepted them and why; they never
count toward the gate. A baseline marks each finding new or unchanged and lists the ones that
disappeared, so a gate can fail on new findings only.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from scanner import __version__
from scanner.checkapi import Severity
from scanner.config import Suppression
from scanner.engine import AppliedSuppression, Finding
from scanner.errors import InputError
from scanner.jsondoc import load_document
from scanner.output import write_atomic

IGNORE_TAG = "azai-ignore"
BASELINE_VERSION = 1


def override_severity(findings: list[Finding], severities: Mapping[str, Severity]) -> list[Finding]:
    """A configured severity replaces the rule's, for every finding of that rule."""
    return [
        dataclasses.replace(f, severity=severities[f.check.id]) if f.check.id in severities else f for f in findings
    ]


def _matches(pattern: str, finding: Finding) -> bool:
    resource = finding.resource
    candidates = [resource.id, resource.name, resource.origin.address or "", resource.origin.symbolic_name or ""]
    lowered = pattern.lower()
    return any(c and fnmatch.fnmatchcase(c.lower(), lowered) for c in candidates)


def _tag_rules(finding: Finding) -> set[str]:
    for key, value in finding.resource.tags.items():
        if str(key).lower() == IGNORE_TAG and isinstance(value, str):
            return {part.strip().lower() for part in value.split(",") if part.strip()}
    return set()


def apply_suppressions(
    findings: list[Finding], suppressions: Iterable[Suppression], today: dt.date
) -> tuple[list[Finding], list[str]]:
    """Mark suppressed findings; expired suppressions stop applying and produce warnings."""
    active: list[Suppression] = []
    warnings: list[str] = []
    for suppression in suppressions:
        if suppression.expires is not None and suppression.expires < today:
            warnings.append(
                f"suppression of {suppression.rule} for '{suppression.resource}' expired on "
                f"{suppression.expires.isoformat()} and no longer applies ({suppression.source})"
            )
        else:
            active.append(suppression)
    out: list[Finding] = []
    for finding in findings:
        applied: AppliedSuppression | None = None
        tagged = _tag_rules(finding)
        if finding.check.id.lower() in tagged or finding.check.slug in tagged:
            applied = AppliedSuppression("inSource", f"resource tag {IGNORE_TAG}: {', '.join(sorted(tagged))}", "tag")
        else:
            match = next((s for s in active if s.rule == finding.check.id and _matches(s.resource, finding)), None)
            if match is not None:
                expires = match.expires.isoformat() if match.expires else None
                applied = AppliedSuppression("external", match.justification, match.source, expires)
        out.append(dataclasses.replace(finding, suppression=applied) if applied else finding)
    return out, warnings


@dataclass(frozen=True)
class BaselineEntry:
    """A finding recorded in a baseline; enough to report it when it has disappeared."""

    fingerprint: str
    rule_id: str
    resource_id: str
    resource_name: str
    resource_type: str
    source: str
    message: str
    uri: str | None
    start_line: int | None
    start_column: int | None


def baseline_entry(finding: Finding) -> BaselineEntry:
    position = finding.position
    return BaselineEntry(
        fingerprint=finding.fingerprint,
        rule_id=finding.check.id,
        resource_id=finding.resource.id,
        resource_name=finding.resource.name,
        resource_type=finding.resource.type,
        source=finding.resource.origin.kind,
        message=finding.violation.message,
        uri=Path(finding.resource.origin.file).as_posix() if finding.resource.origin.file else None,
        start_line=position.line if position else None,
        start_column=position.column if position else None,
    )


def write_baseline(path: str, findings: Iterable[Finding]) -> None:
    entries = sorted((baseline_entry(f) for f in findings), key=lambda e: (e.fingerprint, e.rule_id))
    document = {
        "azai_baseline": BASELINE_VERSION,
        "tool_version": __version__,
        "findings": [dataclasses.asdict(e) for e in entries],
    }
    write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def read_baseline(path: str) -> dict[str, BaselineEntry]:
    data = load_document(Path(path), path).data
    if data.get("azai_baseline") != BASELINE_VERSION or not isinstance(data.get("findings"), list):
        raise InputError(f"{path}: not an azai baseline (version {BASELINE_VERSION}); write one with --write-baseline")
    fields = {f.name for f in dataclasses.fields(BaselineEntry)}
    entries: dict[str, BaselineEntry] = {}
    for item in data["findings"]:
        if not isinstance(item, dict) or set(item) != fields:
            raise InputError(f"{path}: baseline entry is malformed: {str(item)[:80]}")
        entry = BaselineEntry(**item)
        entries[entry.fingerprint] = entry
    return entries


def compare_with_baseline(
    findings: list[Finding], baseline: Mapping[str, BaselineEntry]
) -> tuple[list[Finding], list[BaselineEntry]]:
    """Findings marked new or unchanged, and the baseline entries that are now absent."""
    current = {f.fingerprint for f in findings}
    marked = [
        dataclasses.replace(f, baseline_state="unchanged" if f.fingerprint in baseline else "new") for f in findings
    ]
    absent = sorted((e for fp, e in baseline.items() if fp not in current), key=lambda e: (e.rule_id, e.fingerprint))
    return marked, absent


def summarize_suppression(applied: AppliedSuppression | None) -> dict[str, str | None] | None:
    """A suppression as plain JSON, for reports."""
    return dataclasses.asdict(applied) if applied else None
