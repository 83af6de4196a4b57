"""Estates written by someone who had not read the implementation, from the public API reference
and the rule docs alone (fixtures/independent/<estate>/): main.json, its parameters file, the
environment it is scanned with, and the expected findings, undetermined pairs and passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.pipeline.scan import ScanRequest, run_scan
from tests.avm_conformance import actual_items, expected_items
from tests.conftest import FIXTURES

ESTATES = sorted(p.parent for p in (FIXTURES / "independent").glob("*/expected.json"))


@pytest.mark.parametrize("estate", ESTATES, ids=lambda p: p.name)
def test_independent_estate_gives_exactly_its_expected_results(estate: Path) -> None:
    expected_file = json.loads((estate / "expected.json").read_text(encoding="utf-8"))
    parameters = estate / "main.parameters.json"
    result = run_scan(
        ScanRequest(
            paths=[str(estate / "main.json")],
            parameters_file=str(parameters) if parameters.is_file() else None,
            environ=expected_file.get("environment", {}),
        )
    )
    expected, passes = expected_items(expected_file)
    actual, passed = actual_items(result)
    assert sorted(actual - expected) == [], "reported but not expected"
    assert sorted(expected - actual) == [], "expected but not reported"
    assert sorted(passes - passed) == [], "expected passes that were not evaluated as passes"
    assert result.complete
