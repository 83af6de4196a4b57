"""What a scan produces: findings, undetermined pairs, and the result reports render."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.engine.checkapi import Check, Severity, Violation
from scanner.model.places import Place
from scanner.model.pricing import Cost
from scanner.model.resources import CoverageGap, Resource


def fingerprint(rule_id: str, resource: Resource, path: str) -> str:
    """A stable hash of rule, resource identity and property path.

    It ignores lines and files, so it survives edits above the resource, and it uses the
    resource's identity key, so a plan and a template of the same resource agree.
    """
    text = f"{rule_id}|{resource.identity_key}|{path.lower()}"
    # surrogatepass: a name read from a server may hold a lone surrogate; it still hashes.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class AppliedSuppression:
    """Why a finding is accepted: a configuration entry (``external``) or a resource tag (``inSource``)."""

    kind: str
    justification: str
    source: str
    expires: str | None = None


@dataclass(frozen=True)
class Finding:
    check: Check
    resource: Resource
    violation: Violation
    severity: Severity
    fingerprint: str
    suppression: AppliedSuppression | None = None
    baseline_state: str | None = None  # "new" or "unchanged" when a baseline was given
    tags: Mapping[str, Any] = field(default_factory=dict)  # the resource's tags over its parents'

    @property
    def cost(self) -> Cost | None:
        return self.violation.cost

    @property
    def place(self) -> Place | None:
        """Where reports point: the written source's line when known, else the scanned file."""
        return self.resource.origin.place(self.violation.path)

    @property
    def related_place(self) -> Place | None:
        """The plan's or compiled template's own position, kept beside a source line."""
        return self.resource.origin.related_place(self.violation.path)


@dataclass(frozen=True)
class Undetermined:
    """A rule that could not decide on a resource because a deciding value is unknown."""

    check: Check
    resource: Resource
    path: str | None
    reason: str

    @property
    def place(self) -> Place | None:
        return self.resource.origin.place(self.path)

    @property
    def related_place(self) -> Place | None:
        return self.resource.origin.related_place(self.path)


@dataclass(frozen=True)
class UnreadType:
    """Resources of one type that the scanned plans, templates and what-if results deploy and
    azai reads nothing from: no rule reads the ARM type, or (Terraform) no mapping translates
    the resource type. Rules did not judge them; unlike a coverage gap, the scan still read all
    it could, so they do not make it incomplete.

    ``name`` is the type as the input names it: an ARM type, or a Terraform resource type that
    has no ARM shape in azai. ``ai``: the type is an AI service's, where a rule may be missing a
    resource it should have judged; reports show it as a warning. Others are counted in one line.
    """

    name: str
    resources: int
    ai: bool


@dataclass
class ScanResult:
    """What reports render: findings, undetermined pairs, warnings and what was read."""

    findings: list[Finding] = field(default_factory=list)
    undetermined: list[Undetermined] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    inputs: list[dict[str, Any]] = field(default_factory=list)
    resources_scanned: int = 0
    checks: list[Check] = field(default_factory=list)
    passed: list[tuple[Check, Resource]] = field(default_factory=list)
    absent: list[Any] = field(default_factory=list)  # baseline entries no longer found
    fail_on: Severity | None = None
    baseline_used: bool = False
    coverage: list[CoverageGap] = field(default_factory=list)  # what the scan could not read
    unread_types: list[UnreadType] = field(default_factory=list)  # what it read nothing from (IaC)
    live_requests: int = 0
    plans_scanned: bool = False  # an input said what a deploy would change (plan, what-if)
    owner_tag: str = "owner"
    drift: Any = None  # a DriftReport for azai drift

    @property
    def complete(self) -> bool:
        return not self.coverage

    def failing(self) -> list[Finding]:
        """Findings that fail the run: at or above ``fail_on``, not suppressed, not in the baseline."""
        if self.fail_on is None:
            return []
        threshold = self.fail_on
        return [
            f
            for f in self.findings
            if f.severity >= threshold and f.suppression is None and f.baseline_state in (None, "new")
        ]


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
