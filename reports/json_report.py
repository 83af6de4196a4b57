"""The JSON report: a versioned, documented schema (docs/json-output.md)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

from reports.common import history_of, location, plain, scanned_location, severity_counts, uri
from reports.escaping import json_text
from scanner import __version__
from scanner.cost.summary import cost_json, summarize, summary_json
from scanner.drift.attribution import Attribution, History
from scanner.engine.results import Finding, ScanResult
from scanner.policy.suppressions import summarize_suppression

SCHEMA_VERSION = "1.8"


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
        **_history_json(report.history, [*report.added, *report.removed]),
    }


def _history_json(history: History | None, moved: list[Any]) -> dict[str, Any]:
    """The change records' part of the drift section: the window read, each added or removed
    resource's (``moved``) ``change`` by its id as ``added`` and ``removed`` list it, and the
    timeline (null and empty when none were read)."""
    if history is None:
        return {"changes_window_days": None, "resource_changes": {}, "timeline": []}
    return {
        "changes_window_days": history.window_days,
        "resource_changes": {
            r.id: _change(history.by_resource[r.id.lower()]) for r in moved if r.id.lower() in history.by_resource
        },
        "timeline": [
            {
                "timestamp": entry.record.timestamp.isoformat(),
                "changed_by": entry.record.changed_by,
                "changed_by_type": entry.record.changed_by_type,
                "client_type": entry.record.client_type,
                "operation": entry.record.operation,
                "correlation_id": entry.record.correlation_id,
                "change_type": entry.record.change_type,
                "resource_id": entry.record.target_id,
                "drifted": list(entry.what),
                "expected_writer": entry.expected_writer,
            }
            for entry in history.timeline()
        ],
    }


def _change(attribution: Attribution | None) -> dict[str, Any] | None:
    """A finding's ``change`` object: values as JSON, unknown ones marked (`plain`)."""
    return None if attribution is None else plain(attribution.as_json())


_FINDINGS = "@@azai-findings@@"


def render(result: ScanResult) -> bytes:
    return b"".join(chunks(result))


def chunks(result: ScanResult) -> Iterator[bytes]:
    """The report as it is written: the document around the findings, and the findings in
    between, a batch at a time, so a scan with a hundred thousand findings never holds them all
    as JSON. The document is indented; each finding is one line, written by the C encoder (an
    indented dump runs the pure-Python one, 4x slower), so ``grep`` and ``jq`` both read it.
    Text stays readable (``ensure_ascii=False``); only a lone surrogate, which UTF-8 cannot
    hold, stays escaped."""
    document = _document(result)
    head, _, tail = json_text(json.dumps(document, indent=2, ensure_ascii=False)).partition(json.dumps(_FINDINGS))
    findings = result.findings
    if not findings:
        yield (head + "[]" + tail + "\n").encode("utf-8")
        return
    yield (head + "[\n").encode("utf-8")
    history = history_of(result)
    changes = history.by_finding if history else {}
    for start in range(0, len(findings), _BATCH):
        batch = findings[start : start + _BATCH]
        text = ",\n".join("    " + _ONE_LINE.encode(_finding(f, changes.get(f.fingerprint))) for f in batch)
        text += ",\n" if start + _BATCH < len(findings) else "\n"
        yield json_text(text).encode("utf-8")
    yield ("  ]" + tail + "\n").encode("utf-8")


_ONE_LINE = json.JSONEncoder(ensure_ascii=False)  # one encoder for every finding, not one per call
_BATCH = 512  # findings encoded, escaped and written together


def _finding(f: Finding, change: Attribution | None = None) -> dict[str, Any]:
    return {
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
        "location": location(f.place),
        "scanned_location": scanned_location(f),
        "fingerprint": f.fingerprint,
        "suppressed": f.suppression is not None,
        "suppression": summarize_suppression(f.suppression),
        "baseline_state": f.baseline_state,
        "cost": cost_json(f.cost),
        "change": _change(change),
    }


def _document(result: ScanResult) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "azai", "version": __version__},
        "inputs": result.inputs,
        "findings": _FINDINGS,
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
                "location": location(u.place),
                "scanned_location": scanned_location(u),
            }
            for u in result.undetermined
        ],
        "coverage": [dataclasses.asdict(gap) for gap in result.coverage],
        "unread_types": [{"type": u.name, "resources": u.resources, "ai": u.ai} for u in result.unread_types],
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
    return document
