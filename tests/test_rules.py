"""Each rule, in every source form: exactly which resources fail, pass and stay undetermined.

Fixtures live in fixtures/rules/<RULE>/ as a Terraform plan written with azurerm, one written
with azapi, an ARM template and a what-if result, with expected.json naming the resources.
A resource "passes" when it is of a type the rule reads and got neither a finding nor an
undetermined entry, so an unexpected finding, a missing one, and a silent pass all fail here.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from scanner.engine.registry import load_checks
from scanner.sources import load_file
from tests.conftest import FIXTURES, scan

RULE_DIRS = sorted((FIXTURES / "rules").iterdir())
CASES = [
    (rule_dir.name, form)
    for rule_dir in RULE_DIRS
    for form in json.loads((rule_dir / "expected.json").read_text())["forms"]
]


@pytest.mark.parametrize(("rule_id", "form"), CASES)
def test_rule_fails_and_passes_exactly_the_expected_resources(rule_id: str, form: str) -> None:
    rule_dir = FIXTURES / "rules" / rule_id
    expected = json.loads((rule_dir / "expected.json").read_text())
    path = rule_dir / f"{form}.json"
    result = scan(path)
    check = next(c for c in load_checks() if c.id == rule_id)

    failed = {f.resource.name for f in result.findings if f.check.id == rule_id}
    undetermined = {u.resource.name for u in result.undetermined if u.check.id == rule_id}
    inventory = load_file(Path(path), str(path)).inventory
    evaluated = {r.name for r in inventory.of_type(*check.resource_types) if not r.origin.reference_only}
    passed = evaluated - failed - undetermined

    want = expected["forms"][form]
    assert failed == set(want["fail"])
    assert undetermined == set(want["undetermined"])
    assert passed == set(want["pass"])
    for name, severity in expected.get("severity", {}).items():
        labels = {f.severity.label for f in result.findings if f.check.id == rule_id and f.resource.name == name}
        assert labels == {severity}, name
    for name, paths in expected.get("paths", {}).items():
        found = sorted(f.violation.path for f in result.findings if f.check.id == rule_id and f.resource.name == name)
        assert found == paths, name
    for message in {f.violation.message for f in result.findings if f.check.id == rule_id}:
        assert "  " not in message and message == message.strip(), message  # read as a sentence


def test_every_rule_with_iac_sources_has_fixtures_in_all_four_forms() -> None:
    forms = {"plan-azurerm", "plan-azapi", "template", "whatif"}
    iac_rules = {c.id for c in load_checks() if c.sources & {"terraform", "arm", "whatif"}}
    assert {d.name for d in RULE_DIRS} == iac_rules
    for rule_dir in RULE_DIRS:
        assert set(json.loads((rule_dir / "expected.json").read_text())["forms"]) == forms


def test_generated_fixtures_match_their_estates() -> None:
    """Fixtures written from an estate.json must be regenerated when it changes:
    python fixtures/build_rule_fixtures.py"""
    spec = importlib.util.spec_from_file_location("build_rule_fixtures", FIXTURES / "build_rule_fixtures.py")
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    estates = [d for d in RULE_DIRS if (d / "estate.json").is_file()]
    assert len(estates) >= 20
    for rule_dir in estates:
        for name, content in builder.render(rule_dir).items():
            assert json.loads((rule_dir / name).read_text()) == content, f"{rule_dir.name}/{name} is stale"
