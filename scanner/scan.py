"""One scan: load inputs, evaluate every rule, collect a `ScanResult`."""

from __future__ import annotations

from collections.abc import Sequence

from scanner.engine import ScanResult, evaluate, sort_findings, sort_undetermined
from scanner.registry import load_checks
from scanner.sources import load_inputs
from scanner.sources.arm.template import read_parameters


def scan_paths(paths: Sequence[str], parameters_file: str | None = None) -> ScanResult:
    parameters = read_parameters(parameters_file) if parameters_file else {}
    checks = load_checks()
    loaded, warnings = load_inputs(paths, parameters)
    result = ScanResult(warnings=list(warnings), checks=checks)
    for item in loaded:
        findings, undetermined = evaluate(item.inventory, checks)
        result.findings.extend(findings)
        result.undetermined.extend(undetermined)
        result.warnings.extend(item.warnings)
        scanned = sum(1 for r in item.inventory.resources if not r.origin.reference_only)
        result.resources_scanned += scanned
        result.inputs.append({"path": item.path, "kind": item.kind, "resources": scanned})
    result.findings = sort_findings(result.findings)
    result.undetermined = sort_undetermined(result.undetermined)
    return result
