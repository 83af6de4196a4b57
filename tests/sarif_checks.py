"""Validating SARIF the way GitHub will: the official schema, GitHub's own rules, the Multitool.

The schema is the copy upload-sarif validates against, kept in tests/data (see its README). The
Multitool runs with the GH1001-GH1007 location rules switched on through tests/data/gh-rules.xml;
it exits 0 even when it finds errors, so its output is parsed.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema

from tests.conftest import ROOT

DATA = ROOT / "tests" / "data"
GH_RULES = DATA / "gh-rules.xml"
LOCAL_MULTITOOL = ROOT / ".ci" / "tools" / "node_modules" / ".bin" / "sarif-multitool"


@functools.cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return loaded


@functools.cache
def _validator() -> Any:
    validator_class = jsonschema.validators.validator_for(schema())
    return validator_class(schema(), format_checker=validator_class.FORMAT_CHECKER)


def schema_errors(document: dict[str, Any]) -> list[str]:
    validator = _validator()
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def github_rule_errors(document: dict[str, Any]) -> list[str]:
    """The rules GitHub applies that the schema does not (shared/reference/sarif-github.md)."""
    errors: list[str] = []
    runs = document.get("runs", [])
    if len(runs) > 20:
        errors.append(f"{len(runs)} runs (limit 20)")
    categories = [run.get("automationDetails", {}).get("id") for run in runs]
    if len(set(categories)) != len(categories) or None in categories:
        errors.append(f"automationDetails.id missing or repeated: {categories}")
    for r, run in enumerate(runs):
        if "results" not in run or "rules" not in run["tool"]["driver"]:
            errors.append(f"run {r}: results and rules are required, even empty")
        rules = run["tool"]["driver"].get("rules", [])
        ids = [rule["id"] for rule in rules]
        if len(ids) != len(set(ids)):
            errors.append(f"run {r}: duplicate rule ids")
        for rule in rules:
            for key in ("shortDescription", "fullDescription", "help"):
                if not rule.get(key, {}).get("text"):
                    errors.append(f"rule {rule['id']}: {key}.text is required")
            if not rule.get("help", {}).get("markdown") or not rule.get("helpUri"):
                errors.append(f"rule {rule['id']}: help.markdown and helpUri expected")
            properties = rule.get("properties", {})
            if not isinstance(properties.get("security-severity"), str):
                errors.append(f"rule {rule['id']}: security-severity must be a string")
            if "security" not in properties.get("tags", []):
                errors.append(f"rule {rule['id']}: tags must include 'security'")
        results = run.get("results", [])
        if len(results) > 25_000:
            errors.append(f"run {r}: {len(results)} results (limit 25,000)")
        for i, result in enumerate(results):
            where = f"run {r} result {i}"
            if not result.get("message", {}).get("text"):
                errors.append(f"{where}: message.text is required")
            if rules and ids[result.get("ruleIndex", 0)] != result["ruleId"]:
                errors.append(f"{where}: ruleIndex does not match ruleId")
            locations = result.get("locations") or []
            physical = locations[0].get("physicalLocation", {}) if locations else {}
            uri = physical.get("artifactLocation", {}).get("uri", "")
            if not uri or ":" in uri.split("/")[0] or uri.startswith("/") or "\\" in uri:
                errors.append(f"{where}: uri {uri!r} is not a repository-relative path")
            if physical.get("region", {}).get("startLine", 0) < 1:
                errors.append(f"{where}: region.startLine must be >= 1")
            if not result.get("partialFingerprints", {}).get("primaryLocationLineHash"):
                errors.append(f"{where}: primaryLocationLineHash expected")
    return errors


def multitool() -> Path | None:
    configured = os.environ.get("SARIF_MULTITOOL")
    if configured:
        return Path(configured)
    if LOCAL_MULTITOOL.exists():
        return LOCAL_MULTITOOL
    found = shutil.which("sarif-multitool")
    return Path(found) if found else None


def multitool_findings(tool: Path, files: list[Path], workdir: Path) -> dict[str, list[str]]:
    """Errors and warnings the Multitool reports, per file name (it always exits 0). One run for
    many files: each run spends seconds of CPU warming up before its first file. On one thread:
    its default, a thread per core, costs a third more CPU and gains nothing while the other
    test workers keep the cores busy."""
    out = workdir / "multitool-out.sarif"
    out.unlink(missing_ok=True)
    command = [str(tool), "validate", "--quiet", "true", "--threads", "1", "-c", str(GH_RULES), "-o", str(out)]
    subprocess.run(
        [*command, *map(str, files)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    problems: dict[str, list[str]] = {}
    for run in report.get("runs", []):
        for result in run.get("results", []):
            level = result.get("level", "warning")
            if level in ("error", "warning"):
                message = result.get("message", {})
                locations = result.get("locations") or [{}]
                uri = locations[0].get("physicalLocation", {}).get("artifactLocation", {}).get("uri", "")
                problems.setdefault(Path(uri).name, []).append(
                    f"{level} {result.get('ruleId')}: {message.get('id')} {message.get('arguments')}"
                )
    return problems
