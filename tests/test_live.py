"""Live scans end to end: real azure-mgmt clients and an unchanged DefaultAzureCredential, over
HTTPS, against the project's ARM emulator on 127.0.0.1. No mocks of the SDK."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.emulator.estate import Estate, demo_estate_path, generate_estate
from scanner.emulator.hostile import Answer
from scanner.emulator.server import Emulator, Faults
from scanner.engine.results import ScanResult
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources.live.scope import LiveScope
from tests.conftest import FIXTURES, ROOT, run_cli, scan
from tests.live_estates import estate_from_whatif, live_scan


def keys(result: ScanResult, rule: str | None = None) -> set[tuple[str, str, str, str]]:
    return {
        (f.check.id, f.resource.type, f.resource.name, f.violation.path)
        for f in result.findings
        if rule is None or f.check.id == rule
    }


@pytest.mark.parametrize("rule", sorted(d.name for d in (FIXTURES / "rules").iterdir() if d.is_dir()))
def test_every_rule_on_live_resources_matches_its_fixture(serve, rule: str) -> None:  # type: ignore[no-untyped-def]
    expected = json.loads((FIXTURES / "rules" / rule / "expected.json").read_text())["forms"]["whatif"]
    emulator = serve(estate_from_whatif(FIXTURES / "rules" / rule / "whatif.json"))
    result = live_scan(emulator)
    failed = {f.resource.name for f in result.findings if f.check.id == rule}
    undetermined = {u.resource.name for u in result.undetermined if u.check.id == rule}
    assert failed == set(expected["fail"])
    assert undetermined == set(expected["undetermined"])
    passed = {r.name for c, r in result.passed if c.id == rule}
    assert passed == set(expected["pass"])
    assert result.complete and all(f.resource.origin.kind == "live" for f in result.findings)
    assert emulator.writes() == []


def test_diagnostic_settings_are_read_once_per_resource_and_only_for_a_rule_that_needs_them(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(estate_from_whatif(FIXTURES / "rules" / "AZAI-501" / "whatif.json"))

    def diagnostic_reads() -> list[str]:
        return [
            r.path for r in emulator.log if r.path.lower().endswith("/providers/microsoft.insights/diagnosticsettings")
        ]

    live_scan(emulator)
    read = diagnostic_reads()
    # the two workspaces, the three accounts of every kind and the two Search services, once each
    assert len(read) == len(set(read)) == 7 and [p for p in read if "/accounts/speech/" in p]
    emulator.log.clear()
    run_scan(
        ScanRequest(
            paths=(),
            live=LiveScope(all_subscriptions=True),
            arm_endpoint=emulator.endpoint,
            fail_on="none",
            ignore=("AZAI-501",),
        )
    )
    assert diagnostic_reads() == [] and emulator.log


def test_environment_versions_are_read_by_id_once_each_for_the_deployments_that_run_them(serve) -> None:  # type: ignore[no-untyped-def]
    """Resource Graph lacks environment versions: AZAI-503 sees their images because the
    collector reads each one a deployment names by ARM id, once, and no short-form reference."""
    estate = estate_from_whatif(FIXTURES / "rules" / "AZAI-503" / "whatif.json")
    emulator = serve(estate)
    live_scan(emulator)
    read = [r.path.lower() for r in emulator.log if "/environments/" in r.path.lower()]
    referenced = {
        str(r["properties"]["environmentId"]).lower()
        for r in estate.resources
        if r["type"].lower().endswith("/deployments") and str(r["properties"]["environmentId"]).startswith("/")
    }
    assert len(referenced) == 6
    assert sorted(read) == sorted(referenced)


def test_outdated_compute_image_is_read_from_live_instances(serve) -> None:  # type: ignore[no-untyped-def]
    """AZAI-502 is live-only: Azure reports the image flag on running instances, IaC has none."""
    sub = "00000000-0000-0000-0000-0000000000c5"
    ws = f"/subscriptions/{sub}/resourceGroups/rg-ai/providers/Microsoft.MachineLearningServices/workspaces/ws"
    computes = "Microsoft.MachineLearningServices/workspaces/computes"

    def compute(name: str, compute_type: str, image: dict[str, object] | None) -> dict[str, object]:
        inner: dict[str, object] = {"vmSize": "Standard_DS3_v2"}
        if image is not None:
            inner["osImageMetadata"] = image
        return {
            "id": f"{ws}/computes/{name}",
            "name": name,
            "type": computes,
            "location": "eastus",
            "properties": {"computeType": compute_type, "disableLocalAuth": True, "properties": inner},
        }

    estate = Estate(
        [{"id": f"/subscriptions/{sub}", "subscriptionId": sub, "displayName": "ml", "state": "Enabled"}],
        [
            {
                "id": ws,
                "name": "ws",
                "type": "Microsoft.MachineLearningServices/workspaces",
                "location": "eastus",
                "properties": {},
            },
            compute(
                "stale",
                "ComputeInstance",
                {"currentImageVersion": "24.09.16", "latestImageVersion": "26.10.31", "isLatestOsImageVersion": False},
            ),
            compute(
                "fresh",
                "ComputeInstance",
                {"currentImageVersion": "26.10.31", "latestImageVersion": "26.10.31", "isLatestOsImageVersion": True},
            ),
            compute("cluster", "AmlCompute", None),
        ],
    )
    emulator = serve(estate)
    result = live_scan(emulator, subscriptions=[sub])
    assert {f.resource.name for f in result.findings if f.check.id == "AZAI-502"} == {"ws/stale"}
    assert {r.name for c, r in result.passed if c.id == "AZAI-502"} == {"ws/fresh", "ws/cluster"}
    assert not [u for u in result.undetermined if u.check.id == "AZAI-502"]
    stale = next(f for f in result.findings if f.check.id == "AZAI-502")
    assert "24.09.16" in stale.violation.message and "26.10.31" in stale.violation.message
    assert emulator.writes() == []
    iac = scan(FIXTURES / "rules" / "AZAI-104" / "template.json")
    assert "AZAI-502" not in {c.id for c, _ in iac.passed} | {f.check.id for f in iac.findings}


def test_demo_estate_live_matches_its_iac_twin_apart_from_idle_gpu(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(Estate.load(demo_estate_path()))
    live = live_scan(emulator)
    for twin in ("plan.json", "template.json", "whatif.json"):
        measured = keys(live, "AZAI-202") | keys(live, "AZAI-206") | keys(live, "AZAI-209")
        assert keys(scan(FIXTURES / "demo" / twin)) == keys(live) - measured
    # Utilization metrics decide AZAI-202: the always-on cluster is idle, the notebook is busy.
    assert keys(live, "AZAI-202") == {
        ("AZAI-202", "Microsoft.MachineLearningServices/workspaces/computes", "ws-demo/train", "properties")
    }
    assert ("AZAI-202", "ws-demo/notebook") in {(c.id, r.name) for c, r in live.passed}
    # and AZAI-206: the provisioned deployment used at most 20 % of its PTUs in the week.
    assert keys(live, "AZAI-206") == {
        ("AZAI-206", "Microsoft.CognitiveServices/accounts/deployments", "oai-demo/chat-ptu", "sku.capacity")
    }
    # and AZAI-209 passes: at the bundled hourly PTU price, tokens are cheaper (the demo command
    # states a reservation rate, under which the steady deployment fails)
    assert ("AZAI-209", "oai-demo/support-bot") in {(c.id, r.name) for c, r in live.passed}
    assert not live.undetermined
    assert emulator.writes() == []


def test_paging_and_throttling_give_the_same_findings(serve) -> None:  # type: ignore[no-untyped-def]
    estate = generate_estate(5, 30)
    plain = serve(estate)
    baseline = live_scan(plain)
    paged = serve(estate, Faults(page_size=2, throttle_every=4, retry_after_seconds=0, error_every=7))
    stressed = live_scan(paged)
    assert keys(stressed) == keys(baseline) and len(baseline.findings) > 5
    statuses = [r.status for r in paged.log]
    assert statuses.count(429) > 0 and statuses.count(503) > 0
    assert any("skiptoken" in r.query.lower() for r in paged.log)  # nextLink pages were followed
    assert stressed.complete and paged.writes() == []


def test_a_denied_subscription_is_a_coverage_gap_and_the_rest_is_scanned(serve) -> None:  # type: ignore[no-untyped-def]
    estate = generate_estate(4, 10)
    denied = estate.subscription_ids()[2]
    emulator = serve(estate, Faults(deny_subscriptions={denied}))
    result = live_scan(emulator)
    assert [(g.scope, g.status) for g in result.coverage] == [(f"/subscriptions/{denied}", 403)]
    assert "AuthorizationFailed" in result.coverage[0].reason
    scanned = {f.resource.id.split("/")[2] for f in result.findings}
    assert denied not in scanned and len(scanned) == 3
    assert not result.complete


def test_management_group_scope(serve) -> None:  # type: ignore[no-untyped-def]
    estate = generate_estate(3, 10)
    estate.management_groups = {"mg-ai": estate.subscription_ids()[:2]}
    emulator = serve(estate)
    result = live_scan(emulator, management_groups=["mg-ai"])
    assert {f.resource.id.split("/")[2] for f in result.findings} == set(estate.subscription_ids()[:2])


def _cli_env(emulator: Emulator, **overrides: str) -> dict[str, str]:
    return {**os.environ, **emulator.environment(), "PYTHONPATH": str(ROOT), **overrides}


def _scan_command(emulator: Emulator, *args: str) -> list[str]:
    """The `azai scan` command line pointed at the emulator, so each test states only what it varies."""
    return [sys.executable, "-m", "scanner", "scan", "--arm-endpoint", emulator.endpoint, *args]


def test_cli_scan_against_an_arm_endpoint_with_managed_identity_variables(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(Estate.load(demo_estate_path()))
    subscription = emulator.estate.subscription_ids()[0]
    done = subprocess.run(
        _scan_command(emulator, "--subscription", subscription, "--format", "json", "--fail-on", "none"),
        capture_output=True,
        text=True,
        env=_cli_env(emulator),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["summary"]["findings"] == 34 and data["summary"]["complete"] is True
    assert {f["source"] for f in data["findings"]} == {"live"}
    assert emulator.writes() == []


def test_authentication_failure_is_exit_2_with_one_line(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(Estate.load(demo_estate_path()))
    done = subprocess.run(
        _scan_command(emulator, "--all-subscriptions"),
        capture_output=True,
        text=True,
        env=_cli_env(emulator, IDENTITY_HEADER="wrong", PATH="/nonexistent"),
        cwd=tmp_path,
        timeout=180,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and lines[0].startswith("azai: error: authentication failed") and "Traceback" not in done.stderr
    )


def test_incomplete_scan_exit_code_and_coverage_in_every_report(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = generate_estate(2, 10)
    emulator = serve(estate, Faults(deny_subscriptions={estate.subscription_ids()[1]}))
    out = {fmt: tmp_path / f"r.{fmt}" for fmt in ("json", "sarif", "markdown", "junit")}
    args = [a for fmt, path in out.items() for a in ("--format", fmt, "--output", str(path))]
    done = subprocess.run(
        _scan_command(emulator, "--all-subscriptions", "--fail-on", "none", *args, "--format", "text"),
        capture_output=True,
        text=True,
        env=_cli_env(emulator),
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    assert "INCOMPLETE: 1 scope(s)" in done.stdout
    assert json.loads(out["json"].read_text())["coverage"][0]["status"] == 403
    notes = json.loads(out["sarif"].read_text())["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any(n["message"]["text"].startswith("not scanned:") and n["level"] == "error" for n in notes)
    assert "Incomplete: 1 scope(s) not scanned" in out["markdown"].read_text()
    assert 'name="coverage"' in out["junit"].read_text()


def test_live_sarif_points_at_the_saved_inventory_or_the_declaring_iac(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from reports import sarif

    emulator = serve(Estate.load(demo_estate_path()))
    inventory = tmp_path / "inventory.json"
    result = run_scan(
        ScanRequest(
            paths=(),
            live=LiveScope(all_subscriptions=True),
            arm_endpoint=emulator.endpoint,
            fail_on="none",
            save_inventory=str(inventory),
        )
    )
    saved = json.loads(inventory.read_text())
    assert saved["azai_inventory"] == 1 and len(saved["resources"]) == 18
    document = json.loads(sarif.render(result, Path.cwd())[0])
    run = document["runs"][0]
    assert run["automationDetails"]["id"] == "azai/live/"
    lines = inventory.read_text().splitlines()
    for item in run["results"]:
        location = item["locations"][0]
        assert location["physicalLocation"]["artifactLocation"]["uri"].endswith("inventory.json")
        arm_id = location["logicalLocations"][-1]["fullyQualifiedName"]
        line = location["physicalLocation"]["region"]["startLine"]
        assert arm_id.lower().startswith("/subscriptions/")
        # inside that resource's object: the id is its first key, at or above the line pointed at
        assert any(arm_id in text for text in lines[max(0, line - 30) : line + 1]), (item["ruleId"], line)

    combined = run_scan(
        ScanRequest(
            paths=[str(FIXTURES / "demo" / "template.json")],
            live=LiveScope(all_subscriptions=True),
            arm_endpoint=emulator.endpoint,
            fail_on="none",
        )
    )
    live_findings = [f for f in combined.findings if f.resource.origin.kind == "live"]
    assert live_findings and all(
        f.resource.origin.file == str(FIXTURES / "demo" / "template.json") for f in live_findings
    )
    assert all(f.resource.id.startswith("/subscriptions/00000000") for f in live_findings)  # still the live ARM id


def test_demo_command_runs(tmp_path: Path) -> None:
    done = run_cli("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "35 finding(s): 1 critical, 5 high, 27 medium, 2 low; 0 undetermined" in done.stdout
    assert "WASTE: $8,336.43 a month" not in done.stdout  # the idle cluster is counted once
    assert "WASTE: $70,157.06 a month" in done.stdout
    assert "0 writes" in done.stderr


def test_the_transport_refuses_writes_and_registration_is_not_in_the_pipeline(serve) -> None:  # type: ignore[no-untyped-def]
    from azure.core.rest import HttpRequest

    from scanner.sources.live.clients import ClientFactory
    from scanner.sources.live.transport import ReadOnlyViolation

    emulator = serve(Estate.load(demo_estate_path()))
    factory = ClientFactory(arm_endpoint=emulator.endpoint)
    from azure.core.pipeline.policies import RetryPolicy

    for decode in (True, False):  # the typed clients' pipeline, and the raw reads'
        policies = factory._policies(decode)
        names = [type(p).__name__ for p in policies]
        assert "ARMAutoResourceProviderRegistrationPolicy" not in names
        assert [type(p).__name__ for p in policies if isinstance(p, RetryPolicy)] == ["BoundedRetryPolicy"]
    register = "/subscriptions/x/providers/Microsoft.Compute/register"
    raw, typed = factory.raw(), factory.compute(emulator.estate.subscription_ids()[0])
    with pytest.raises(ReadOnlyViolation):
        raw.send_request(HttpRequest("PUT", raw.format_url(register), params={"api-version": "1"}))
    with pytest.raises(ReadOnlyViolation):
        typed.send_request(HttpRequest("PUT", register, params={"api-version": "1"}))
    assert emulator.writes() == []


def test_progress_shows_on_a_terminal_and_not_in_pipes(serve) -> None:  # type: ignore[no-untyped-def]
    import pty

    emulator = serve(Estate.load(demo_estate_path()))
    command = _scan_command(emulator, "--all-subscriptions", "--fail-on", "none", "--format", "json")
    env = {k: v for k, v in _cli_env(emulator).items() if k != "CI"}
    controller, terminal = pty.openpty()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=terminal, env=env, cwd=ROOT, timeout=120)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert done.returncode == 0
    assert b"azai: 1/1 scopes" in shown and b"resources" in shown
    piped = subprocess.run(command, capture_output=True, env=env, cwd=ROOT, timeout=120)
    assert piped.stderr == b""  # quiet when stderr is not a terminal


def test_account_models_are_read_once_per_account_and_only_for_the_retirement_rule(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(estate_from_whatif(FIXTURES / "rules" / "AZAI-504" / "whatif.json"))

    def model_reads() -> list[str]:
        return [r.path for r in emulator.log if r.path.lower().endswith("/models")]

    result = live_scan(emulator)
    assert len(model_reads()) == 1  # one account, six deployments
    retired = next(f for f in result.findings if f.check.id == "AZAI-504" and f.resource.name.endswith("/retired"))
    assert "the account's models list" in retired.violation.message
    emulator.serve(estate_from_whatif(FIXTURES / "rules" / "AZAI-504" / "whatif.json"))
    run_scan(
        ScanRequest(
            paths=(),
            live=LiveScope(all_subscriptions=True),
            arm_endpoint=emulator.endpoint,
            fail_on="none",
            select=["AZAI-108"],
        )
    )
    assert model_reads() == []


def test_a_models_list_that_cannot_be_read_leaves_the_deployments_undetermined(serve) -> None:  # type: ignore[no-untyped-def]
    estate = estate_from_whatif(FIXTURES / "rules" / "AZAI-504" / "whatif.json")
    emulator = serve(estate, Faults(answers={"/models": Answer(status=403, body={"error": {"code": "Denied"}})}))
    result = live_scan(emulator)
    assert not [f for f in result.findings if f.check.id == "AZAI-504"]
    undetermined = {u.resource.name.rsplit("/", 1)[-1] for u in result.undetermined if u.check.id == "AZAI-504"}
    assert undetermined == {
        "retired",
        "near-pinned",
        "near-upgrades",
        "current-pinned",
        "not-in-table",
        "version-unknown",
        "version-unknown-current",
        "no-version",
        "no-version-current",
        "name-unknown",
    }
    assert any(g.scope.lower().endswith("/models") for g in result.coverage)


def test_models_refresh_reads_the_region_through_the_pipeline_and_writes_atomically(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    estate = estate_from_whatif(FIXTURES / "rules" / "AZAI-504" / "whatif.json")
    subscription = estate.subscription_ids()[0]
    estate.location_models["eastus"] = [
        {
            "kind": "OpenAI",
            "skuName": "S0",
            "model": {
                "format": "OpenAI",
                "name": "gpt-4.1",
                "version": "2025-04-14",
                "lifecycleStatus": "GenerallyAvailable",
                "deprecation": {"inference": "2026-10-14T00:00:00Z"},
            },
        },
        {"kind": "OpenAI", "skuName": "S0", "model": {"format": "OpenAI", "name": "new-model", "version": "1"}},
    ]
    emulator = serve(estate)
    table = tmp_path / "retirements.csv"
    args = ["models", "refresh", "--subscription", subscription, "--location", "East US", "--output", str(table)]
    done = run_cli(*args, "--arm-endpoint", emulator.endpoint, env=_cli_env(emulator))
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    first = rows[0]
    assert (first["model"], first["version"], first["retirement"]) == ("gpt-4.1", "2025-04-14", "2026-10-14")
    assert first["source"] == f"Models - List API ({emulator.endpoint}, eastus)"
    assert not any(r["model"] == "new-model" for r in rows)  # no date, no row
    assert any((r["model"], r["version"]) == ("gpt-35-turbo", "0613") for r in rows)  # bundled rows stay
    assert emulator.writes() == []
    before = table.read_bytes()
    emulator.serve(estate, Faults(answers={"/models": Answer(status=500, body={"error": {"code": "Boom"}})}))
    failed = run_cli(*args, "--arm-endpoint", emulator.endpoint, env=_cli_env(emulator))
    assert failed.returncode == 2 and len(failed.stderr.strip().splitlines()) == 1
    assert "the old table was kept" in failed.stderr
    assert table.read_bytes() == before


def test_owned_storage_judges_the_capabilities_an_account_reports(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Azure Policy 46aa9b05 2.0.0 audits only accounts that report CustomerManagedStorage; live,
    azai reads the same capability instead of guessing from the kind."""
    whatif = json.loads((FIXTURES / "rules" / "AZAI-107" / "whatif.json").read_text())
    changes = whatif.get("properties", whatif)["changes"]
    capable = [{"name": "CustomerManagedStorage"}, {"name": "CustomerManagedKey"}]
    for change in changes:
        name = change["resourceId"].rsplit("/", 1)[-1]
        properties = change["after"].setdefault("properties", {})
        if name == "oai-microsoft-keys":  # an OpenAI account that says it can bind storage
            properties["capabilities"] = capable
        elif name == "speech-microsoft-storage":  # a Speech account that says it cannot
            properties["capabilities"] = [{"name": "CustomerManagedKey"}]
    path = tmp_path / "whatif.json"
    path.write_text(json.dumps(whatif))
    emulator = serve(estate_from_whatif(path))
    result = live_scan(emulator, select=("AZAI-107",), rule_options=("AZAI-107:owned_storage=true",))
    assert {f.resource.name for f in result.findings} == {"ws-hbi-plain", "oai-microsoft-keys"}
    assert "speech-microsoft-storage" in {r.name for _, r in result.passed}
    assert emulator.writes() == []


def test_a_live_scan_keeps_the_collector_and_gives_the_process_its_settings_back(serve, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A plan scan runs with the collector off (it makes no cycles); the SDK clients of a live
    scan leave some, so a live scan collects, rarely, as it did before. Either way the process
    (this test runner) gets its own collector settings back, and nothing stays frozen."""
    import gc

    emulator = serve(generate_estate(2, 20))
    calls: list[object] = []
    real_threshold, real_disable = gc.set_threshold, gc.disable
    monkeypatch.setattr(gc, "set_threshold", lambda *limits: (calls.append(limits), real_threshold(*limits))[1])
    monkeypatch.setattr(gc, "disable", lambda: (calls.append("disable"), real_disable())[1])
    before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
    done = run_cli("scan", "--all-subscriptions", "--arm-endpoint", emulator.endpoint, "--fail-on", "none")
    assert done.returncode == 0, done.stderr
    assert calls == [(20_000, 20, 20), before[1]]  # rarer during the scan, then back; never off
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before
