"""The JSON report: a versioned, documented schema (docs/json-output.md)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from reports.common import location, plain, severity_counts, uri
from reports.cost import cost_json, summarize, summary_json
from scanner import __version__
from scanner.engine import ScanResult
from scanner.policy import summarize_suppression

SCHEMA_VERSION = "1.4"


def drift_json(report: Any) -> dict[str, Any] | None:
    if report is None:
        return None

    def brief(f: Any) -> dict[str, Any]:
        return {
            "rule_id": f.check.id,
            "resource_id": f.resource.id,
            "resource_name": f.resource.name,
            "fingerprint": f.fingerprint,
        }

    return {
        "mode": report.mode,
        "base": report.base,
        "current": report.current,
        "added": [r.id for r in report.added],
        "removed": [r.id for r in report.removed],
        "changed": [
            {
                "resource_id": r.id,
                "changes": [{"path": c.path, "before": plain(c.before), "after": plain(c.after)} for c in changes],
            }
            for r, changes in report.changed
        ],
        "findings_appeared": [brief(f) for f in report.appeared],
        "findings_resolved": [brief(f) for f in report.resolved],
    }


def render(result: ScanResult) -> bytes:
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "azai", "version": __version__},
        "inputs": result.inputs,
        "findings": [
            {
                "rule_id": f.check.id,
                "slug": f.check.slug,
                "title": f.check.title,
                "severity": f.severity.label,
                "pillar": str(f.check.pillar),
                "resource_id": f.resource.id,
                "resource_name": f.resource.name,
                "resource_type": f.resource.type,
                "source": f.resource.origin.kind,
                "address": f.resource.origin.address,
                "symbolic_name": f.resource.origin.symbolic_name,
                "message": f.violation.message,
                "evidence": {
                    "path": f.violation.path,
                    "observed": plain(f.violation.observed),
                    "expected": f.violation.expected,
                },
                "location": location(f),
                "fingerprint": f.fingerprint,
                "suppressed": f.suppression is not None,
                "suppression": summarize_suppression(f.suppression),
                "baseline_state": f.baseline_state,
                "cost": cost_json(f.cost),
            }
            for f in result.findings
        ],
        "absent": [dataclasses.asdict(entry) for entry in result.absent],
        "undetermined": [
            {
                "rule_id": u.check.id,
                "slug": u.check.slug,
                "resource_id": u.resource.id,
                "resource_name": u.resource.name,
                "resource_type": u.resource.type,
                "source": u.resource.origin.kind,
                "address": u.resource.origin.address,
                "path": u.path,
                "reason": u.reason,
                "location": location(u),
            }
            for u in result.undetermined
        ],
        "coverage": [dataclasses.asdict(gap) for gap in result.coverage],
        "cost": summary_json(summarize(result)),
        "drift": drift_json(result.drift),
        "warnings": result.warnings,
        "summary": {
            "resources": result.resources_scanned,
            "rules": len(result.checks),
            "findings": len(result.findings),
            "by_severity": severity_counts(result, [f for f in result.findings if f.suppression is None]),
            "suppressed": sum(1 for f in result.findings if f.suppression is not None),
            "new": sum(1 for f in result.findings if f.baseline_state == "new") if result.baseline_used else None,
            "absent": len(result.absent) if result.baseline_used else None,
            "undetermined": len(result.undetermined),
            "complete": result.complete,
            "fail_on": result.fail_on.label if result.fail_on else "none",
            "failed": bool(result.failing()),
        },
    }
    for item in document["inputs"]:
        item["path"] = uri(item["path"])
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
