"""Runs checks over an inventory and collects findings and undetermined pairs."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.checkapi import Check, CheckContext, Severity, UtilizationSource, Violation
from scanner.jsondoc import Position
from scanner.model import Inventory, Resource
from scanner.unknown import UnknownValueError


def fingerprint(rule_id: str, resource: Resource, path: str) -> str:
    """A stable hash of rule, resource identity and property path.

    It ignores lines and files, so it survives edits above the resource, and it uses the
    resource's identity key, so a plan and a template of the same resource agree.
    """
    text = f"{rule_id}|{resource.identity_key}|{path.lower()}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Finding:
    check: Check
    resource: Resource
    violation: Violation
    severity: Severity
    fingerprint: str

    @property
    def position(self) -> Position | None:
        return self.resource.origin.position(self.violation.path)


@dataclass(frozen=True)
class Undetermined:
    """A rule that could not decide on a resource because a deciding value is unknown."""

    check: Check
    resource: Resource
    path: str | None
    reason: str

    @property
    def position(self) -> Position | None:
        return self.resource.origin.position(self.path)


@dataclass
class ScanResult:
    """What reports render: findings, undetermined pairs, warnings and what was read."""

    findings: list[Finding] = field(default_factory=list)
    undetermined: list[Undetermined] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    inputs: list[dict[str, Any]] = field(default_factory=list)
    resources_scanned: int = 0
    checks: list[Check] = field(default_factory=list)

    def at_or_above(self, threshold: Severity | None) -> list[Finding]:
        if threshold is None:
            return []
        return [f for f in self.findings if f.severity >= threshold]


def evaluate(
    inventory: Inventory,
    checks: Iterable[Check],
    options: Mapping[str, Mapping[str, Any]] | None = None,
    utilization: UtilizationSource | None = None,
) -> tuple[list[Finding], list[Undetermined]]:
    """Evaluate every check on every resource of its types."""
    findings: list[Finding] = []
    undetermined: list[Undetermined] = []
    seen: set[tuple[str, str, str]] = set()
    for check in checks:
        merged = {**check.options, **((options or {}).get(check.id, {}))}
        ctx = CheckContext(inventory=inventory, options=merged, utilization=utilization)
        for resource in inventory.of_type(*check.resource_types):
            origin = resource.origin
            if origin.reference_only or origin.kind not in check.sources:
                continue
            try:
                for violation in check.evaluate(resource, ctx):
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
                        )
                    )
            except UnknownValueError as exc:
                undetermined.append(Undetermined(check, resource, exc.path, str(exc)))
    return findings, undetermined


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Deterministic order: most severe first, then rule, file, resource and property."""
    return sorted(
        findings,
        key=lambda f: (
            -f.severity,
            f.check.id,
            f.resource.origin.file or "",
            f.resource.identity_key,
            f.violation.path.lower(),
        ),
    )


def sort_undetermined(items: list[Undetermined]) -> list[Undetermined]:
    return sorted(
        items, key=lambda u: (u.check.id, u.resource.origin.file or "", u.resource.identity_key, u.path or "")
    )
