"""Drift a platform team can trust (issue 19), judged by an estate written without the drift code.

``fixtures/drift/`` holds one AI estate as a Terraform plan (a local module whose output is an
azapi child's ``parent_id``), as compiled Bicep, and live three ways: as declared, after a dozen
portal edits, and after platform-made changes only. ``expected.json`` names every drift finding
each comparison must give (and none more): the noise estate must give none in any mode.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanner.emulator.estate import Estate
from scanner.emulator.server import Emulator
from scanner.engine.results import ScanResult
from scanner.pipeline.drift import DriftRequest, run_drift
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources.live.scope import LiveScope
from tests.conftest import FIXTURES

ESTATE = FIXTURES / "drift"
EXPECTED: dict[str, list[dict[str, Any]]] = json.loads((ESTATE / "expected.json").read_text(encoding="utf-8"))
LIVE = LiveScope(all_subscriptions=True)


def _found(result: ScanResult) -> set[tuple[str, str, str | None]]:
    """(rule, type/name, path) of each drift finding; a missing or unmanaged resource has no path."""
    return {
        (
            f.check.id,
            f"{f.resource.type}/{f.resource.name}",
            f.violation.path if f.check.id == "AZAI-901" else None,
        )
        for f in result.findings
    }


def _expected(comparison: str) -> set[tuple[str, str, str | None]]:
    return {(e["rule"], e["resource"], e["path"]) for e in EXPECTED[comparison]}


def _live(serve: Callable[..., Emulator], variant: str) -> Emulator:
    return serve(Estate.load(ESTATE / f"live-{variant}.json"))


@pytest.mark.parametrize("variant", ["drifted", "noise"])
@pytest.mark.parametrize("form", ["plan", "template"])
def test_iac_against_live_finds_the_planted_drift_and_nothing_else(
    form: str, variant: str, serve: Callable[..., Emulator]
) -> None:
    emulator = _live(serve, variant)
    request = DriftRequest(iac=[str(ESTATE / f"{form}.json")], live=LIVE, arm_endpoint=emulator.endpoint)
    assert _found(run_drift(request)) == _expected(f"iac_{form}_vs_{variant}")


@pytest.mark.parametrize("variant", ["drifted", "noise"])
def test_scan_to_scan_finds_the_planted_drift_and_nothing_else(
    variant: str, serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    clean = _live(serve, "clean")
    snapshot = tmp_path / "clean.json"
    run_scan(
        ScanRequest(paths=(), live=LIVE, arm_endpoint=clean.endpoint, fail_on="none", save_inventory=str(snapshot))
    )
    current = _live(serve, variant)
    result = run_drift(DriftRequest(base=str(snapshot), live=LIVE, arm_endpoint=current.endpoint))
    assert _found(result) == _expected(f"snapshot_clean_vs_{variant}")


def test_iac_against_live_lists_only_what_is_really_added_and_removed(serve: Callable[..., Emulator]) -> None:
    emulator = _live(serve, "drifted")
    for form in ("plan", "template"):
        report = run_drift(
            DriftRequest(iac=[str(ESTATE / f"{form}.json")], live=LIVE, arm_endpoint=emulator.endpoint)
        ).drift
        assert [r.name for r in report.added] == ["mlw-aiplat-prod/ci-jdoe-a100"], form
        assert [r.name for r in report.removed] == ["aks-aiplat-prod/cpu"], form


def test_an_unresolvable_parent_is_matched_by_type_name_and_group_and_the_finding_says_so(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    """The estate's plan with its module output hidden (no ``outputs`` in the module's
    configuration): the endpoint's parent cannot be named, so it is matched with the one live
    endpoint of that name in its resource group, and the key-auth switch is still found."""
    plan = json.loads((ESTATE / "plan.json").read_text(encoding="utf-8"))
    plan["configuration"]["root_module"]["module_calls"]["aml"]["module"].pop("outputs")
    hidden = tmp_path / "plan.json"
    hidden.write_text(json.dumps(plan), encoding="utf-8")
    emulator = _live(serve, "drifted")
    result = run_drift(DriftRequest(iac=[str(hidden)], live=LIVE, arm_endpoint=emulator.endpoint))
    auth = [f for f in result.findings if f.violation.path == "properties.authMode"]
    assert [f.resource.name for f in auth] == ["mlw-aiplat-prod/ep-fraud-score"]
    assert auth[0].violation.message.endswith(
        "(matched by type, name and resource group: the IaC does not resolve its parent)"
    )
    assert not [f for f in result.findings if "ep-fraud-score" in f.resource.name and f.check.id != "AZAI-901"]
