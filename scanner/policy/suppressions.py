"""What the configuration does to findings after the rules ran: severity overrides and
suppressions.

Suppressed findings stay in every report, marked with who accepted them and why; they never
count toward the gate.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
from collections.abc import Iterable, Mapping

from scanner.engine.checkapi import Severity
from scanner.engine.results import AppliedSuppression, Finding
from scanner.policy.config import Suppression

IGNORE_TAG = "azai-ignore"


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


def summarize_suppression(applied: AppliedSuppression | None) -> dict[str, str | None] | None:
    """A suppression as plain JSON, for reports."""
    return dataclasses.asdict(applied) if applied else None
