"""Any scan's snapshot reads back with the same findings (issue 19, cause 7): scan, save the
inventory, scan the snapshot, for every source form. The live form runs the real SDK against the
emulator."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanner.emulator.estate import Estate, demo_estate_path
from scanner.emulator.server import Emulator
from scanner.engine.registry import load_checks
from scanner.engine.results import ScanResult
from scanner.model.needs import LiveRead
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources.live.scope import LiveScope
from tests.conftest import FIXTURES, run_cli

Outcome = tuple[set[tuple[str, str, str]], set[tuple[str, str]]]


def outcome(result: ScanResult) -> Outcome:
    """The findings (rule, resource id, evidence path) and the undetermined (rule, resource id)."""
    found = {(f.check.id, f.resource.id, f.violation.path) for f in result.findings}
    return found, {(u.check.id, u.resource.id) for u in result.undetermined}


def iac(source: str) -> ScanRequest:
    return ScanRequest(paths=[str(FIXTURES / source)], fail_on="none")


def round_trip(tmp_path: Path, request: ScanRequest) -> tuple[Outcome, Outcome, dict[str, Any]]:
    snapshot = tmp_path / "snapshot.json"
    first = run_scan(dataclasses.replace(request, save_inventory=str(snapshot)))
    again = run_scan(ScanRequest(paths=[str(snapshot)], fail_on="none"))
    return outcome(first), outcome(again), json.loads(snapshot.read_text())


@pytest.mark.parametrize(
    "source",
    [
        "demo/plan.json",  # an AKS cluster whose default pool is inline in the plan
        "demo/template.json",
        "demo/whatif.json",
        "rules/AZAI-101/plan-azapi.json",
        "rules/AZAI-301/template.json",  # two resources in resourceGroup().location: one region
        "bicep/mismatched/main.json",  # a resource deployed on a condition: undetermined
    ],
)
def test_an_iac_scan_read_back_from_its_snapshot_gives_the_same_findings(tmp_path: Path, source: str) -> None:
    before, after, saved = round_trip(tmp_path, iac(source))
    assert before == after and before[0]
    ids = [entry["resource"]["id"] for entry in saved["resources"]]
    assert all(isinstance(i, str) for i in ids)


def test_an_inline_pool_is_saved_with_its_id_and_a_plan_snapshot_drifts_against_itself(tmp_path: Path) -> None:
    snapshot = tmp_path / "plan-snapshot.json"
    done = run_cli("scan", str(FIXTURES / "demo" / "plan.json"), "--save-inventory", str(snapshot), "--fail-on", "none")
    assert done.returncode == 0, done.stderr
    saved = json.loads(snapshot.read_text())
    pools = [e["resource"] for e in saved["resources"] if e["resource"]["type"].endswith("/agentPools")]
    assert pools and all(p["id"].endswith(f"/agentPools/{p['name']}") for p in pools)
    assert run_cli("scan", str(snapshot), "--fail-on", "none").returncode == 0
    drift = run_cli("drift", str(snapshot), str(snapshot))
    assert drift.returncode == 0, drift.stderr


def test_a_conditional_resource_keeps_its_condition_and_an_unknown_its_symbol(tmp_path: Path) -> None:
    _, _, saved = round_trip(tmp_path, iac("rules/AZAI-301/template.json"))
    workspace = next(e for e in saved["resources"] if e["resource"]["name"] == "ws-rg")
    assert workspace["resource"]["location"]["$symbol"]
    _, _, saved = round_trip(tmp_path, iac("bicep/mismatched/main.json"))
    assert any("condition" in e for e in saved["resources"])


def test_a_live_scan_read_back_from_its_snapshot_gives_the_same_findings(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    """Everything but what Azure Monitor measured: a snapshot holds the inventory, not metrics,
    so a rule that reads utilization is undetermined on it (AZAI-202 on the demo's GPU
    computes, AZAI-206 on its provisioned deployment, AZAI-209 on its pay-per-token ones), never
    decided."""
    emulator = serve(Estate.load(demo_estate_path()))
    live = ScanRequest(paths=(), live=LiveScope(all_subscriptions=True), arm_endpoint=emulator.endpoint, fail_on="none")
    before, after, _ = round_trip(tmp_path, live)
    measured = {c.id for c in load_checks() if LiveRead.METRICS.value in c.reads}

    def inventory_only(found: Outcome) -> Outcome:
        return {f for f in found[0] if f[0] not in measured}, {u for u in found[1] if u[0] not in measured}

    assert inventory_only(before) == inventory_only(after) and before[0]
    assert {rule for rule, _ in after[1]} == {"AZAI-202", "AZAI-206", "AZAI-209"} and not before[1]
    assert emulator.writes() == []
