"""``azai drift``: the three drift comparisons, run through the same policy as a scan.

- Scan to scan: BASE snapshot against a CURRENT snapshot or a live scope. Reports resources
  added, removed and changed, AZAI-901 findings for watched changes, and which rule findings
  appeared and which were resolved between the two.
- IaC to live: ``--iac`` plans, templates or what-if against a live scope (or a snapshot):
  AZAI-903 for declared resources missing live, AZAI-902 for unmanaged live AI resources in
  the resource groups the IaC covers, AZAI-901 for watched attributes that differ.
- Terraform's own ``resource_drift`` in any scanned plan: deletions as AZAI-903, updates as
  AZAI-901 with their paths.

In a live comparison (the CURRENT side read live), each drift is then read against Resource
Graph's change records of the drifted resources, one paged query per subscription with drift
(`scanner.sources.live.changes`), to say who made it, when and through what
(`scanner.drift.attribution`); a change an expected writer made is lowered to low severity.
The live reads and that query share one client factory, so one time limit, retry budget and
request count cover both.

Drift findings then meet severity overrides, suppressions, baselines and the gate like any
other finding, so every report format carries them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanner.drift.attribution import (
    lookups,
    lowered,
    no_record_reason,
    parse_record,
    queryable,
    subjects,
    witness,
)
from scanner.drift.compare import (
    AI_TYPES,
    DriftReport,
    covered_groups,
    drift_findings,
    match,
    placed,
    unread_by,
    watched_changes,
)
from scanner.engine.checkapi import Check, DriftPair
from scanner.engine.evaluate import evaluate
from scanner.engine.results import Finding, ScanResult, sort_findings
from scanner.errors import InputError
from scanner.model.jsondoc import load_document
from scanner.model.resources import Inventory, Resource, parse_resource_id
from scanner.pipeline.run import (
    RunPolicy,
    RunRequest,
    conclude,
    live_client_factory,
    prepare,
    template_options,
)
from scanner.policy.gates import DRIFT_GATE
from scanner.sources import load_inputs
from scanner.sources.live.changes import read_changes
from scanner.sources.live.collect import READ_TYPES, Progress, collect_live, collected_types
from scanner.sources.snapshot import load_snapshot, save_inventory
from scanner.sources.terraform.plan import read_resource_drift

if TYPE_CHECKING:  # a drift of files never builds a client
    from scanner.sources.live.clients import ClientFactory


@dataclass(kw_only=True)
class DriftRequest(RunRequest):
    """A drift audit: a BASE snapshot, a CURRENT snapshot (or the live scope), or IaC paths."""

    base: str | None = None
    current: str | None = None
    iac: Sequence[str] = ()
    # The ids (as Resource Graph's changedBy records them) of the identities that deploy through
    # the reviewed path; the configuration file's expected-writers add to them.
    expected_writers: Sequence[str] = ()


@dataclass
class _Current:
    """The CURRENT side: its resources (None: not given), its label, and for a live one the
    subscriptions read and the client factory the change records are read through."""

    resources: list[Resource] | None
    label: str
    subscriptions: list[str]
    factory: ClientFactory | None = None


def run_drift(request: DriftRequest) -> ScanResult:
    """Compare, turn differences into drift findings, then apply the run's policy."""
    policy, result = prepare(request, DRIFT_GATE)
    result.checks = policy.drift_checks
    findings: list[Finding] = []
    with _live_factory(request) as factory:
        current = _current(request, policy, result, factory)
        base_time: dt.datetime | None = None
        if request.base:
            if current.resources is None:
                raise InputError("azai drift BASE needs a CURRENT snapshot or a live scope (--subscription, ...)")
            base, scan = load_snapshot(request.base)
            base_time = _scan_time(scan)
            result.drift = _scan_to_scan(base, current.resources, request.base, current.label, policy, findings)
            compared = list(findings)
            current_kind = "live" if request.live.requested else "snapshot"
            result.inputs = [
                {"path": request.base, "kind": "snapshot", "resources": len(base)},
                {"path": current.label, "kind": current_kind, "resources": len(current.resources)},
            ]
        elif request.iac:
            compared = _iac_drift(request, policy, result, findings, current.resources, current.label)
        else:
            raise InputError("azai drift needs BASE (and CURRENT or a live scope), or --iac PATH")
        if current.factory is not None and result.drift is not None:
            findings = _witnessed(current, request, policy, result, findings, compared, base_time)
    result.resources_scanned = sum(int(i["resources"]) for i in result.inputs)
    return conclude(result, findings, policy, request)


@contextlib.contextmanager
def _live_factory(request: DriftRequest) -> Iterator[ClientFactory | None]:
    """The client factory of a live CURRENT side, closed when the run is done with it (after
    the change records are read); None when CURRENT is a snapshot or not given."""
    if request.current or not request.live.requested:
        yield None
        return
    with live_client_factory(request) as factory:
        yield factory


def _current(request: DriftRequest, policy: RunPolicy, result: ScanResult, factory: ClientFactory | None) -> _Current:
    """The CURRENT side: a snapshot file, else the live scope (saved when asked), else none."""
    if request.current:
        return _Current(load_snapshot(request.current)[0], request.current, [])
    if factory is None:
        return _Current(None, "", [])
    live = collect_live(request.live, factory, Progress(request.progress), needs=policy.every_read)
    result.coverage, result.live_requests = live.coverage, live.requests
    if request.save_inventory:
        save_inventory(request.save_inventory, live.resources, live.subscriptions, live.coverage)
    return _Current(live.resources, "live:" + ",".join(live.subscriptions), live.subscriptions, factory)


def _scan_time(scan: dict[str, Any]) -> dt.datetime | None:
    """When the base snapshot was taken (its ``scan.time``), None when it does not say."""
    try:
        when = dt.datetime.fromisoformat(str(scan.get("time")))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _witnessed(
    current: _Current,
    request: DriftRequest,
    policy: RunPolicy,
    result: ScanResult,
    findings: list[Finding],
    compared: list[Finding],
    base_time: dt.datetime | None,
) -> list[Finding]:
    """The live comparison's drift read against Resource Graph's change records: the report's
    ``history``, the coverage gaps and requests of the read, and the findings with those an
    expected writer made lowered. No query when nothing drifted."""
    assert current.factory is not None and result.drift is not None
    wanted = subjects(result.drift, compared)
    if not wanted:
        return findings
    unlooked = {key: why for key, s in wanted.items() if (why := queryable(s.resource_id, current.subscriptions))}
    reading = read_changes(current.factory, lookups(wanted, unlooked))
    result.coverage = sorted(result.coverage + reading.coverage, key=lambda gap: gap.scope.lower())
    result.live_requests = current.factory.requests
    expected = frozenset(w.lower() for w in [*policy.config.expected_writers, *request.expected_writers])
    records = [parse_record(row) for row in reading.rows]
    no_record = no_record_reason(base_time, dt.datetime.now(dt.UTC))
    result.drift.history = witness(wanted, records, unlooked, reading.read, expected, no_record)
    return lowered(findings, result.drift.history)


def _iac_drift(
    request: DriftRequest,
    policy: RunPolicy,
    result: ScanResult,
    findings: list[Finding],
    current: list[Resource] | None,
    current_label: str,
) -> list[Finding]:
    """Terraform's own resource_drift in each plan, then the IaC against CURRENT when given;
    the findings of that comparison (not Terraform's) are returned."""
    loaded, warnings = load_inputs(request.iac, template_options(request), source_root=request.source_root)
    result.warnings.extend(warnings)
    iac_complete = not any(item.coverage for item in loaded)
    result.coverage.extend(gap for item in loaded for gap in item.coverage)
    declared = [r for item in loaded for r in item.inventory.resources if not r.origin.reference_only]
    result.inputs = [{"path": i.path, "kind": i.kind, "resources": len(i.inventory.resources)} for i in loaded]
    result.plans_scanned = any(item.plan for item in loaded)
    for item in loaded:
        if item.kind == "terraform":
            findings += _terraform_drift(item.path, policy.drift_checks, policy.options)
    if current is None:
        return []
    start = len(findings)
    result.drift = _iac_to_live(
        declared,
        current,
        ",".join(request.iac),
        current_label,
        policy.drift_checks,
        policy.options,
        findings,
        read_types=collected_types(policy.every_read) - READ_TYPES,
        unread=unread_by(result.coverage),
        warnings=result.warnings,
        iac_complete=iac_complete,
    )
    result.inputs.append({"path": current_label, "kind": "live", "resources": len(current)})
    return findings[start:]


def _scan_to_scan(
    base: list[Resource],
    current: list[Resource],
    base_label: str,
    current_label: str,
    policy: RunPolicy,
    findings: list[Finding],
) -> DriftReport:
    """Watched changes as AZAI-901, and the rule findings that appeared or were resolved."""
    drift_checks, rule_checks, options, book = policy.drift_checks, policy.rule_checks, policy.options, policy.prices
    pairs, removed, added = match(base, current)
    current_inventory = Inventory(current)
    report = DriftReport("snapshot", base_label, current_label, added=added, removed=removed)
    for before, after in pairs:
        changes = watched_changes(before, after, declared_only=False)
        if changes:
            report.changed.append((after, changes))
            findings += drift_findings(drift_checks, DriftPair("snapshot", before, after), current_inventory, options)
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
    read_types: frozenset[str],
    unread: Callable[[Resource], bool],
    warnings: list[str],
    iac_complete: bool = True,
) -> DriftReport:
    """Declared against live. Only a type the live scan lists (``read_types``; per-resource
    reads such as diagnostic settings are made for some resources only) can be missing: the
    rest are not compared, named once in ``warnings``. A declared resource where the live read
    failed (``unread``) is a coverage gap, not missing; an IaC file that could not be read (a
    linked template) hides what manages the unmanaged ones."""
    pairs, unmatched, added = match(declared, live)
    missing = _missing_live(unmatched, read_types, unread, warnings)
    unmanaged = _unmanaged(added, covered_groups(declared, pairs), iac_complete)
    live_inventory, declared_inventory = Inventory(live), Inventory(declared)
    report = DriftReport("iac", iac_label, live_label, added=unmanaged, removed=missing)
    report.placed = {r.id.lower(): full for r in missing if (full := placed(r.id, pairs)) is not None}
    for before, after in pairs:
        changes = watched_changes(before, after, declared_only=True)
        if changes:
            report.changed.append((after, changes))
            findings += drift_findings(drift_checks, DriftPair("iac", before, after), live_inventory, options)
    for resource in unmanaged:
        findings += drift_findings(drift_checks, DriftPair("iac", None, resource), live_inventory, options)
    for resource in missing:
        findings += drift_findings(drift_checks, DriftPair("iac", resource, None), declared_inventory, options)
    return report


def _missing_live(
    unmatched: list[Resource], read_types: frozenset[str], unread: Callable[[Resource], bool], warnings: list[str]
) -> list[Resource]:
    """The declared resources no live one matched that are missing: each one the IaC deploys
    unconditionally (a conditional one may rightly not exist), of a type the live scan lists,
    where the live read did not fail (else its absence says nothing). The unmatched types the
    live scan does not list are named once in ``warnings``, with their counts, so that a
    comparison that left them out does not pass for a clean one."""
    unmatched = [r for r in unmatched if not r.origin.condition]
    missing = [r for r in unmatched if r.type_key in read_types and not unread(r)]
    not_compared = Counter(r.type for r in unmatched if r.type_key not in read_types)
    if not_compared:
        listed = ", ".join(f"{t} ({n})" for t, n in sorted(not_compared.items(), key=lambda i: i[0].lower()))
        warnings.append(f"not compared with live, the live scan does not read these declared types: {listed}")
    return missing


def _unmanaged(added: list[Resource], groups: set[str], iac_complete: bool) -> list[Resource]:
    """The live AI resources no declaration matched, in a resource group the IaC covers
    (``groups``): the unmanaged ones. None when some IaC file could not be read
    (``iac_complete`` false), since that file may be what manages them."""
    return [
        r
        for r in added
        if iac_complete and r.type_key in AI_TYPES and (parse_resource_id(r.id).resource_group or "").lower() in groups
    ]


def _terraform_drift(path: str, drift_checks: list[Check], options: dict[str, dict[str, Any]]) -> list[Finding]:
    found: list[Finding] = []
    for before, after in read_resource_drift(load_document(Path(path), path)):
        subject = [r for r in (before, after) if r is not None]
        inventory = Inventory(subject)
        found += drift_findings(drift_checks, DriftPair("terraform", before, after), inventory, options)
    return found
