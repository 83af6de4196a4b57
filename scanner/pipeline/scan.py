"""One scan: configuration, inputs, rules, then suppressions and baseline, into a `ScanResult`."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scanner.engine.checkapi import Check, Severity
from scanner.engine.evaluate import evaluate
from scanner.engine.registry import find_check, load_checks
from scanner.engine.results import ScanResult, sort_findings, sort_undetermined
from scanner.errors import InputError
from scanner.model import azure_types as T
from scanner.model.pricing import PriceBook
from scanner.model.resources import Inventory, Resource
from scanner.policy.baselines import compare_with_baseline, read_baseline, write_baseline
from scanner.policy.config import load_config, select_checks
from scanner.policy.suppressions import apply_suppressions, override_severity
from scanner.sources import LoadedInput, load_inputs
from scanner.sources.arm.parameters import ParameterFile, read_parameters
from scanner.sources.arm.template import TemplateOptions
from scanner.sources.live.collect import LiveInventory, LiveScope


@dataclass
class ScanRequest:
    """Everything a scan is asked to do; the CLI fills it from options and the config file."""

    paths: Sequence[str]
    parameters_file: str | None = None
    rule_options: Sequence[str] = ()
    select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    fail_on: str | None = None
    config_file: str | None = None
    baseline: str | None = None
    write_baseline: str | None = None
    skip_unknown: bool = False
    today: dt.date = field(default_factory=dt.date.today)
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)  # azd placeholders
    live: LiveScope = field(default_factory=LiveScope)
    cloud: str = "AzureCloud"
    arm_endpoint: str | None = None
    save_inventory: str | None = None
    progress: bool = False
    prices_file: str | None = None
    owner_tag: str | None = None


def run_scan(request: ScanRequest) -> ScanResult:
    every_check = load_checks()
    config = load_config(request.config_file, every_check)
    selected = select_checks(every_check, [*config.select, *request.select], [*config.ignore, *request.ignore])
    checks = [c for c in selected if "drift" not in c.sources]  # drift rules run in azai drift
    options = {rule: dict(values) for rule, values in config.options.items()}
    for rule, values in parse_rule_options(request.rule_options, every_check).items():
        options.setdefault(rule, {}).update(values)
    fail_on = request.fail_on or config.fail_on or "high"
    baseline = read_baseline(request.baseline) if request.baseline else None
    prices = PriceBook.load(request.prices_file)

    loaded, warnings = load_inputs(request.paths, template_options(request), request.skip_unknown)
    result = ScanResult(warnings=list(warnings), checks=checks, fail_on=parse_fail_on(fail_on))
    result.coverage.extend(gap for item in loaded for gap in item.coverage)
    result.owner_tag = request.owner_tag or config.owner_tag or "owner"
    if request.live.requested:
        loaded.append(_live_input(request, result, loaded))
    if request.save_inventory:
        from scanner.sources.snapshot import save_inventory

        everything = [r for item in loaded for r in item.inventory.resources]
        scopes = [s for item in loaded if item.kind == "live" for s in item.path.removeprefix("live:").split(",") if s]
        save_inventory(
            request.save_inventory, everything, scopes, result.coverage, [i.path for i in loaded if i.kind != "live"]
        )
    for item in loaded:
        evaluation = evaluate(item.inventory, checks, options, item.utilization, prices, item.sizes)
        result.findings.extend(evaluation.findings)
        result.undetermined.extend(evaluation.undetermined)
        result.passed.extend(evaluation.passed)
        result.warnings.extend(item.warnings)
        scanned = sum(1 for r in item.inventory.resources if not r.origin.reference_only)
        result.resources_scanned += scanned
        result.inputs.append({"path": item.path, "kind": item.kind, "resources": scanned})
    findings = override_severity(result.findings, config.severities)
    findings, expired = apply_suppressions(findings, config.suppressions, request.today)
    result.warnings.extend(expired)
    if baseline is not None:
        findings, result.absent = compare_with_baseline(findings, baseline)
        result.baseline_used = True
    result.findings = sort_findings(findings)
    result.undetermined = sort_undetermined(result.undetermined)
    if request.write_baseline:
        write_baseline(request.write_baseline, result.findings)
    return result


def collect_live_inventory(
    live_scope: LiveScope, cloud: str, arm_endpoint: str | None, progress: bool, diagnostics: bool = True
) -> LiveInventory:
    """One live collection with a client factory that is closed afterwards."""
    from scanner.sources.live.clients import ClientFactory
    from scanner.sources.live.collect import Progress, collect_live

    factory = ClientFactory(cloud, arm_endpoint)
    try:
        return collect_live(live_scope, factory, Progress(progress), diagnostics)
    finally:
        factory.close()


def template_options(request: ScanRequest | Any) -> TemplateOptions:
    """How templates are evaluated: the parameters file (azd placeholders resolved from the
    environment) and the cloud that ``environment()`` answers for."""
    parameters = (
        read_parameters(request.parameters_file, request.environ) if request.parameters_file else ParameterFile()
    )
    return TemplateOptions(parameters, request.cloud)


def _live_input(request: ScanRequest, result: ScanResult, iac: list[LoadedInput]) -> LoadedInput:
    """Collect the live scope and place its resources where SARIF can point at them."""
    # One diagnostic-settings read per workspace and AI account: only when a selected rule reads
    # them, or a saved snapshot must be complete.
    diagnostics = bool(request.save_inventory) or any(T.DIAGNOSTIC_SETTING in c.reads for c in result.checks)
    live = collect_live_inventory(request.live, request.cloud, request.arm_endpoint, request.progress, diagnostics)
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
        if match is not None and match.origin.document is not None:
            resource.origin = dataclasses.replace(match.origin, kind="live", reference_only=False)


def scan_paths(
    paths: Sequence[str], parameters_file: str | None = None, rule_options: Sequence[str] = ()
) -> ScanResult:
    """A scan with defaults, as tests and library users want it."""
    return run_scan(ScanRequest(paths=paths, parameters_file=parameters_file, rule_options=rule_options))


def parse_fail_on(text: str) -> Severity | None:
    if text.strip().lower() == "none":
        return None
    try:
        return Severity.parse(text)
    except ValueError as exc:
        raise InputError(f"--fail-on: {exc}") from None


_FLAGS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def _typed_option(default: Any, value: str) -> Any:
    """A command-line option value in the type of the rule's default."""
    if isinstance(default, bool):
        if value.strip().lower() not in _FLAGS:
            raise ValueError(value)
        return _FLAGS[value.strip().lower()]
    if isinstance(default, (int, float)):
        return type(default)(value)
    if isinstance(default, (list, tuple)):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def parse_rule_options(given: Sequence[str], checks: list[Check]) -> dict[str, dict[str, Any]]:
    """``RULE:KEY=VALUE`` settings, checked against the options each rule declares.

    Values take the type of the rule's default, so ``max_average_percent=5`` is a number,
    ``require_user_assigned=true`` a flag and ``marker_values=ai,ml`` a list.
    """
    options: dict[str, dict[str, Any]] = {}
    for text in given:
        target, _, assignment = text.partition(":")
        key, equals, value = assignment.partition("=")
        check = find_check(checks, target)
        if check is None or not equals:
            raise InputError(f"--rule-option {text!r}: expected RULE:KEY=VALUE with a known rule id or slug")
        if key not in check.options:
            declared = ", ".join(sorted(check.options)) or "none"
            raise InputError(f"--rule-option {text!r}: {check.id} has no option {key!r} (options: {declared})")
        try:
            typed = _typed_option(check.options[key], value)
        except ValueError:
            kind = type(check.options[key]).__name__
            raise InputError(f"--rule-option {text!r}: {key} must be a {kind}") from None
        options.setdefault(check.id, {})[key] = typed
    return options
