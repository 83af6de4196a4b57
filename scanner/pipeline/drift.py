"""``azai drift``: the three drift comparisons, run through the same policy as a scan.

- Scan to scan: BASE snapshot against a CURRENT snapshot or a live scope. Reports resources
  added, removed and changed, AZAI-901 findings for watched changes, and which rule findings
  appeared and which were resolved between the two.
- IaC to live: ``--iac`` plans, templates or what-if against a live scope (or a snapshot):
  AZAI-903 for declared resources missing live, AZAI-902 for unmanaged live AI resources in
  the resource groups the IaC covers, AZAI-901 for watched attributes that differ.
- Terraform's own ``resource_drift`` in any scanned plan: deletions as AZAI-903, updates as
  AZAI-901 with their paths.

Drift findings then meet severity overrides, suppressions, baselines and the gate like any
other finding, so every report format carries them.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.drift.compare import AI_TYPES, DriftReport, covered_groups, drift_findings, match, watched_changes
from scanner.engine.checkapi import Check, DriftPair
from scanner.engine.evaluate import evaluate
from scanner.engine.registry import load_checks
from scanner.engine.results import Finding, ScanResult, sort_findings
from scanner.errors import InputError
from scanner.model.jsondoc import load_document
from scanner.model.pricing import PriceBook
from scanner.model.resources import Inventory, Resource, parse_resource_id
from scanner.pipeline.scan import collect_live_inventory, parse_fail_on, template_options
from scanner.policy.baselines import compare_with_baseline, read_baseline, write_baseline
from scanner.policy.config import load_config, select_checks
from scanner.policy.suppressions import apply_suppressions, override_severity
from scanner.sources import load_inputs
from scanner.sources.live.collect import LiveScope
from scanner.sources.snapshot import load_snapshot, save_inventory
from scanner.sources.terraform.plan import read_resource_drift


@dataclass
class DriftRequest:
    base: str | None = None
    current: str | None = None
    iac: list[str] = field(default_factory=list)
    parameters_file: str | None = None
    live: LiveScope = field(default_factory=LiveScope)
    cloud: str = "AzureCloud"
    arm_endpoint: str | None = None
    save_inventory: str | None = None
    fail_on: str | None = None
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    config_file: str | None = None
    baseline: str | None = None
    write_baseline: str | None = None
    progress: bool = False
    today: dt.date = field(default_factory=dt.date.today)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)  # azd placeholders


def run_drift(request: DriftRequest) -> ScanResult:
    every = load_checks()
    config = load_config(request.config_file, every)
    chosen = select_checks(every, [*config.select, *request.select], [*config.ignore, *request.ignore])
    drift_checks = [c for c in chosen if "drift" in c.sources]
    rule_checks = [c for c in chosen if "drift" not in c.sources]
    options = {rule: dict(values) for rule, values in config.options.items()}
    result = ScanResult(checks=drift_checks, fail_on=parse_fail_on(request.fail_on or config.fail_on or "low"))
    result.owner_tag = config.owner_tag or "owner"
    findings: list[Finding] = []

    current: list[Resource] | None = None
    current_label = ""
    if request.current:
        current, _ = load_snapshot(request.current)
        current_label = request.current
    elif request.live.requested:
        live = collect_live_inventory(request.live, request.cloud, request.arm_endpoint, request.progress)
        result.coverage, result.live_requests = live.coverage, live.requests
        current, current_label = live.resources, "live:" + ",".join(live.subscriptions)
        if request.save_inventory:
            save_inventory(request.save_inventory, current, live.subscriptions, live.coverage)

    if request.base:
        if current is None:
            raise InputError("azai drift BASE needs a CURRENT snapshot or a live scope (--subscription, ...)")
        base, _ = load_snapshot(request.base)
        result.drift = _scan_to_scan(
            base, current, request.base, current_label, drift_checks, rule_checks, options, findings
        )
        result.inputs = [
            {"path": request.base, "kind": "snapshot", "resources": len(base)},
            {
                "path": current_label,
                "kind": "live" if request.live.requested else "snapshot",
                "resources": len(current),
            },
        ]
    elif request.iac:
        loaded, warnings = load_inputs(request.iac, template_options(request))
        result.warnings.extend(warnings)
        iac_complete = not any(item.coverage for item in loaded)
        result.coverage.extend(gap for item in loaded for gap in item.coverage)
        declared = [r for item in loaded for r in item.inventory.resources if not r.origin.reference_only]
        result.inputs = [{"path": i.path, "kind": i.kind, "resources": len(i.inventory.resources)} for i in loaded]
        for item in loaded:
            if item.kind == "terraform":
                findings += _terraform_drift(item.path, drift_checks, options)
        if current is not None:
            result.drift = _iac_to_live(
                declared,
                current,
                ",".join(request.iac),
                current_label,
                drift_checks,
                options,
                findings,
                complete=not result.coverage,
                iac_complete=iac_complete,
            )
            result.inputs.append({"path": current_label, "kind": "live", "resources": len(current)})
    else:
        raise InputError("azai drift needs BASE (and CURRENT or a live scope), or --iac PATH")

    result.resources_scanned = sum(int(i["resources"]) for i in result.inputs)
    findings = override_severity(findings, config.severities)
    findings, expired = apply_suppressions(findings, config.suppressions, request.today)
    result.warnings.extend(expired)
    if request.baseline:
        findings, result.absent = compare_with_baseline(findings, read_baseline(request.baseline))
        result.baseline_used = True
    result.findings = sort_findings(findings)
    if request.write_baseline:
        write_baseline(request.write_baseline, result.findings)
    return result


def _scan_to_scan(
    base: list[Resource],
    current: list[Resource],
    base_label: str,
    current_label: str,
    drift_checks: list[Check],
    rule_checks: list[Check],
    options: dict[str, dict[str, Any]],
    findings: list[Finding],
) -> DriftReport:
    pairs, removed, added = match(base, current)
    current_inventory = Inventory(current)
    report = DriftReport("snapshot", base_label, current_label, added=added, removed=removed)
    for before, after in pairs:
        changes = watched_changes(before, after, declared_only=False)
        if changes:
            report.changed.append((after, changes))
            findings += drift_findings(drift_checks, DriftPair("snapshot", before, after), current_inventory, options)
    book = PriceBook.load()
    before_findings = evaluate(Inventory(base), rule_checks, options, prices=book).findings
    after_findings = evaluate(current_inventory, rule_checks, options, prices=book).findings
    before_prints = {f.fingerprint for f in before_findings}
    after_prints = {f.fingerprint for f in after_findings}
    report.appeared = sort_findings([f for f in after_findings if f.fingerprint not in before_prints])
    report.resolved = sort_findings([f for f in before_findings if f.fingerprint not in after_prints])
    return report


def _iac_to_live(
    declared: list[Resource],
    live: list[Resource],
    iac_label: str,
    live_label: str,
    drift_checks: list[Check],
    options: dict[str, dict[str, Any]],
    findings: list[Finding],
    complete: bool,
    iac_complete: bool = True,
) -> DriftReport:
    """Declared against live. A live scope that could not be read hides missing resources; an IaC
    file that could not be read (a linked template) hides what manages the unmanaged ones."""
    pairs, missing, added = match(declared, live)
    missing = [r for r in missing if not r.origin.condition]  # it may rightly not exist
    groups = covered_groups(declared, pairs)
    unmanaged = [
        r
        for r in added
        if iac_complete and r.type_key in AI_TYPES and (parse_resource_id(r.id).resource_group or "").lower() in groups
    ]
    live_inventory, declared_inventory = Inventory(live), Inventory(declared)
    report = DriftReport("iac", iac_label, live_label, added=unmanaged, removed=missing if complete else [])
    for before, after in pairs:
        changes = watched_changes(before, after, declared_only=True)
        if changes:
            report.changed.append((after, changes))
            findings += drift_findings(drift_checks, DriftPair("iac", before, after), live_inventory, options)
    for resource in unmanaged:
        findings += drift_findings(drift_checks, DriftPair("iac", None, resource), live_inventory, options)
    if complete:  # a scope the scan could not read is a coverage gap, not a missing resource
        for resource in missing:
            findings += drift_findings(drift_checks, DriftPair("iac", resource, None), declared_inventory, options)
    return report


def _terraform_drift(path: str, drift_checks: list[Check], options: dict[str, dict[str, Any]]) -> list[Finding]:
    found: list[Finding] = []
    for before, after in read_resource_drift(load_document(Path(path), path)):
        subject = [r for r in (before, after) if r is not None]
        inventory = Inventory(subject)
        found += drift_findings(drift_checks, DriftPair("terraform", before, after), inventory, options)
    return found
