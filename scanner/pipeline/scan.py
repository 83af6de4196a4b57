"""One scan: configuration, inputs, rules, then suppressions and baseline, into a `ScanResult`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from scanner.engine.evaluate import evaluate
from scanner.engine.registry import live_needs
from scanner.engine.results import ScanResult
from scanner.model.resources import Inventory, Resource
from scanner.model.retirements import RetirementTable
from scanner.pipeline.run import RunPolicy, RunRequest, collect_live_inventory, conclude, prepare, template_options
from scanner.pipeline.unread import unread_types
from scanner.policy.gates import SCAN_GATE
from scanner.sources import LoadedInput, load_inputs


@dataclass(kw_only=True)
class ScanRequest(RunRequest):
    """A scan: IaC paths and, from ``RunRequest``, a live scope and the policy."""

    paths: Sequence[str] = ()
    skip_unknown: bool = False


def run_scan(request: ScanRequest) -> ScanResult:
    """Read every input, run the selected rules on each, then apply the run's policy."""
    policy, result = prepare(request, SCAN_GATE)
    result.checks = policy.rule_checks
    loaded, warnings = load_inputs(request.paths, template_options(request), request.skip_unknown, request.source_root)
    result.warnings.extend(warnings)
    result.coverage.extend(gap for item in loaded for gap in item.coverage)
    result.unread_types = unread_types(loaded, policy.read_types)
    if request.live.requested:
        loaded.append(_live_input(request, policy, result, loaded))
    if request.save_inventory:
        _save_inventory(request.save_inventory, loaded, result)
    retirements = RetirementTable.load()
    for item in loaded:
        evaluation = evaluate(
            item.inventory,
            result.checks,
            policy.options,
            item.utilization,
            policy.prices,
            item.sizes,
            today=request.today,
            retirements=retirements,
        )
        result.findings.extend(evaluation.findings)
        result.undetermined.extend(evaluation.undetermined)
        result.passed.extend(evaluation.passed)
        result.warnings.extend(item.warnings)
        scanned = sum(1 for r in item.inventory.resources if not r.origin.reference_only)
        result.resources_scanned += scanned
        result.inputs.append({"path": item.path, "kind": item.kind, "resources": scanned})
        result.plans_scanned = result.plans_scanned or item.plan
    return conclude(result, result.findings, policy, request)


def _save_inventory(path: str, loaded: list[LoadedInput], result: ScanResult) -> None:
    """Everything the scan read, as a snapshot a later ``azai drift`` can compare against."""
    from scanner.sources.snapshot import save_inventory

    everything = [r for item in loaded for r in item.inventory.resources]
    scopes = [s for item in loaded if item.kind == "live" for s in item.path.removeprefix("live:").split(",") if s]
    save_inventory(path, everything, scopes, result.coverage, [i.path for i in loaded if i.kind != "live"])


def _live_input(request: ScanRequest, policy: RunPolicy, result: ScanResult, iac: list[LoadedInput]) -> LoadedInput:
    """Collect the live scope and place its resources where SARIF can point at them."""
    # Only what the selected rules read, so that --select also saves requests; a saved snapshot
    # must serve any later drift run, so it reads what every installed rule reads.
    needs = policy.every_read if request.save_inventory else live_needs(result.checks)
    live = collect_live_inventory(request, needs)
    result.coverage.extend(live.coverage)
    result.live_requests = live.requests
    _point_at_declaring_iac(live.resources, iac)
    loaded = LoadedInput("live:" + ",".join(live.subscriptions), "live", Inventory(live.resources))
    loaded.utilization, loaded.sizes = live.utilization, live.sizes
    return loaded


def _point_at_declaring_iac(resources: list[Resource], iac: list[LoadedInput]) -> None:
    """A live resource that a scanned plan or template declares is reported at that declaration.

    Matched by ARM id, else by type and name (IaC ids carry placeholders for what the file does
    not know). The finding stays a live finding; only its place in the repository changes.
    """
    by_id: dict[str, Resource] = {}
    by_name: dict[tuple[str, str], Resource] = {}
    for item in iac:
        for declared in item.inventory.resources:
            by_id.setdefault(declared.id.lower(), declared)
            by_name.setdefault((declared.type_key, declared.name.lower()), declared)
    for resource in resources:
        match = by_id.get(resource.id.lower()) or by_name.get((resource.type_key, resource.name.lower()))
        if match is not None and match.origin.in_a_file:
            resource.origin = dataclasses.replace(match.origin, kind="live", reference_only=False)


def scan_paths(
    paths: Sequence[str], parameters_file: str | None = None, rule_options: Sequence[str] = ()
) -> ScanResult:
    """A scan with defaults, as tests and library users want it."""
    return run_scan(ScanRequest(paths=paths, parameters_file=parameters_file, rule_options=rule_options))
