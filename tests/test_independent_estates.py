"""Estates written by someone who had not read the implementation, from the public API reference
and the rule docs alone (fixtures/independent/<estate>/): main.json, its parameters file, the
environment it is scanned with, and the expected findings, undetermined pairs and passes; or,
for a live estate, the estate.json the ARM emulator serves and each rule's expected outcome and
dollars."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from scanner.emulator.estate import Estate
from scanner.pipeline.scan import ScanRequest, run_scan
from tests.avm_conformance import actual_items, expected_items
from tests.conftest import FIXTURES
from tests.live_estates import live_scan

ESTATES = sorted(p.parent for p in (FIXTURES / "independent").glob("*/main.json"))
# Live estates: what the emulator serves, with times relative to REFERENCE, moved to the scan's.
LIVE_ESTATES = sorted(p.parent for p in (FIXTURES / "independent").glob("*/estate.json"))
REFERENCE = dt.datetime(2026, 11, 25, 12, tzinfo=dt.UTC)


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


def _moved(estate: Estate, by: dt.timedelta) -> Estate:
    """The estate with every ``systemData`` time moved by ``by``, so a week of jobs written
    against the reference time is the last week when the test runs."""
    for body in estate.resources:
        system = body.get("systemData")
        for key in ("createdAt", "lastModifiedAt"):
            if isinstance(system, dict) and isinstance(system.get(key), str):
                moved = dt.datetime.fromisoformat(system[key].replace("Z", "+00:00")) + by
                system[key] = moved.astimezone(dt.UTC).isoformat()
    return estate


@pytest.mark.parametrize("estate", LIVE_ESTATES, ids=lambda p: p.name)
def test_independent_live_estate_gives_exactly_its_expected_results(serve, estate: Path) -> None:  # type: ignore[no-untyped-def]
    expected = json.loads((estate / "expected.json").read_text(encoding="utf-8"))
    served = _moved(Estate.load(estate / "estate.json"), dt.datetime.now(dt.UTC) - REFERENCE)
    emulator = serve(served)
    rules = sorted({e["rule"] for e in expected["expected"]})
    result = live_scan(emulator, select=tuple(rules), rule_options=tuple(expected.get("rule_options", ())))
    actual = {(f.check.id, f.resource.name): "finding" for f in result.findings}
    actual |= {(c.id, r.name): "pass" for c, r in result.passed}
    actual |= {(u.check.id, u.resource.name): "undetermined" for u in result.undetermined}
    assert actual == {(e["rule"], e["resource"]): e["outcome"] for e in expected["expected"]}
    costs = {(f.check.id, f.resource.name): f.cost for f in result.findings}
    for entry in expected["expected"]:
        if "monthly_usd" in entry:  # a running job is counted until the scan: seconds more
            cost = costs[(entry["rule"], entry["resource"])]
            assert cost is not None and cost.monthly_usd == pytest.approx(entry["monthly_usd"], abs=0.05), entry
    assert emulator.writes() == []
