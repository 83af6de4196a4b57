"""One scan: load inputs, evaluate every rule, collect a `ScanResult`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scanner.checkapi import Check
from scanner.engine import ScanResult, evaluate, sort_findings, sort_undetermined
from scanner.errors import InputError
from scanner.registry import find_check, load_checks
from scanner.sources import load_inputs
from scanner.sources.arm.template import read_parameters


def scan_paths(
    paths: Sequence[str], parameters_file: str | None = None, rule_options: Sequence[str] = ()
) -> ScanResult:
    parameters = read_parameters(parameters_file) if parameters_file else {}
    checks = load_checks()
    options = parse_rule_options(rule_options, checks)
    loaded, warnings = load_inputs(paths, parameters)
    result = ScanResult(warnings=list(warnings), checks=checks)
    for item in loaded:
        findings, undetermined = evaluate(item.inventory, checks, options)
        result.findings.extend(findings)
        result.undetermined.extend(undetermined)
        result.warnings.extend(item.warnings)
        scanned = sum(1 for r in item.inventory.resources if not r.origin.reference_only)
        result.resources_scanned += scanned
        result.inputs.append({"path": item.path, "kind": item.kind, "resources": scanned})
    result.findings = sort_findings(result.findings)
    result.undetermined = sort_undetermined(result.undetermined)
    return result


def parse_rule_options(given: Sequence[str], checks: list[Check]) -> dict[str, dict[str, Any]]:
    """``RULE:KEY=VALUE`` settings, checked against the options each rule declares.

    Values take the type of the rule's default, so ``max_average_percent=5`` is a number.
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
        default = check.options[key]
        try:
            typed: Any = type(default)(value) if isinstance(default, (int, float)) else value
        except ValueError:
            raise InputError(f"--rule-option {text!r}: {key} must be a {type(default).__name__}") from None
        options.setdefault(check.id, {})[key] = typed
    return options
