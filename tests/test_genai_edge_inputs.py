"""Inputs that once turned a generative-AI rule off silently, crashed a scan, or stated a
planned date as a fact (found by review of the generative-AI rules)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from scanner.pipeline.scan import ScanRequest, run_scan
from tests.conftest import FIXTURES, run_cli, scan

RETIREMENT_TEMPLATE = FIXTURES / "rules" / "AZAI-504" / "template.json"
RESIDENCY_TEMPLATE = FIXTURES / "rules" / "AZAI-305" / "template.json"


def _retirement_findings(today: dt.date) -> dict[str, tuple[str, str]]:
    result = run_scan(ScanRequest(paths=[str(RETIREMENT_TEMPLATE)], today=today))
    return {
        f.resource.name.rsplit("/", 1)[-1]: (f.severity.label, f.violation.message)
        for f in result.findings
        if f.check.id == "AZAI-504"
    }


def test_a_passed_planned_date_is_a_warning_to_refresh_not_a_retirement() -> None:
    """gpt-4o-audio-preview 2024-12-17 was planned to retire on 2026-02-02 in a table written on
    2025-12-16; scanned later, the date has passed but it was a plan: medium, and it says so.
    gpt-35-turbo 0613 had retired (2025-02-13) before its table was written (2025-06-18): high."""
    found = _retirement_findings(dt.date(2026, 6, 1))
    severity, message = found["near-upgrades"]
    assert severity == "medium" and "scheduled to retire on 2026-02-02" in message and "azai models refresh" in message
    severity, message = found["retired"]
    assert severity == "high" and "retired on 2025-02-13" in message


def test_a_residency_value_that_is_not_a_choice_is_an_input_error(tmp_path: Path) -> None:
    done = run_cli("scan", "--rule-option", "AZAI-305:residency=regional", str(RESIDENCY_TEMPLATE), cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "azai: error: --rule-option 'AZAI-305:residency=regional': residency must be one of region, datazone, any\n"
    )


@pytest.mark.parametrize(
    ("setting", "error"),
    [
        ('data_resident_regions = "westeurope"', "rules.AZAI-305.data_resident_regions must be a list of names"),
        ("residency = 3", "rules.AZAI-305.residency must be a str"),
        ('residency = "regional"', "rules.AZAI-305.residency must be one of region, datazone, any"),
    ],
)
def test_config_file_options_are_checked_like_the_command_line(tmp_path: Path, setting: str, error: str) -> None:
    (tmp_path / "azai.toml").write_text(f"[rules.AZAI-305]\n{setting}\n")
    done = run_cli("scan", str(RESIDENCY_TEMPLATE), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr == f"azai: error: {tmp_path / 'azai.toml'}: {error}\n"


def test_a_config_list_of_regions_is_used(tmp_path: Path) -> None:
    (tmp_path / "azai.toml").write_text('[rules.AZAI-305]\ndata_resident_regions = ["eastus"]\n')
    done = run_cli(
        "scan", "--format", "json", "--fail-on", "none", "--select", "AZAI-305", str(RESIDENCY_TEMPLATE), cwd=tmp_path
    )
    assert done.returncode == 0 and '"rule_id": "AZAI-305"' in done.stdout


@pytest.mark.parametrize(
    ("name", "content", "error"),
    [
        (
            "model_retirements.csv",
            b"model,version,sku,deprecation,retirement,source,as_of\ngpt-4o,2024-05-13\n",
            "retirement date of gpt-4o '' is not a date (YYYY-MM-DD)",
        ),
        ("model_retirements.csv", b"\xff\xfe\x00bad", "model retirement table is not UTF-8 text"),
        (
            "vm_prices.csv",
            b"size,region,usd_per_hour,source,as_of\nStandard_X\n",
            "price '' for Standard_X is not a number",
        ),
        ("vm_prices.csv", b"\xff\xfe\x00bad", "price table is not UTF-8 text"),
    ],
)
def test_a_damaged_table_in_the_cache_is_one_line_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, content: bytes, error: str
) -> None:
    cache = tmp_path / "cache"
    (cache / "azai").mkdir(parents=True)
    (cache / "azai" / name).write_bytes(content)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    done = run_cli("scan", "--select", "AZAI-101", str(FIXTURES / "demo" / "plan.json"), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr == f"azai: error: {cache / 'azai' / name}: {error}\n"


def _template(tmp_path: Path, *resources: dict[str, object]) -> str:
    path = tmp_path / "template.json"
    path.write_text(
        json.dumps(
            {
                "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
                "contentVersion": "1.0.0.0",
                "resources": list(resources),
            }
        )
    )
    return str(path)


SEARCH = {
    "type": "Microsoft.Search/searchServices",
    "apiVersion": "2025-05-01",
    "name": "srch-free",
    "location": "westeurope",
    "sku": {"name": "free"},
    "properties": {"replicaCount": 1, "disableLocalAuth": True, "publicNetworkAccess": "Disabled"},
}


def test_a_free_search_service_is_not_asked_for_what_its_tier_cannot_have(tmp_path: Path) -> None:
    """No managed identity and no CMK on the free tier; AZAI-404 reports the tier instead.
    AZAI-501 reports its missing diagnostic setting: Azure Policy audits Search services of
    every tier for one."""
    result = scan(_template(tmp_path, SEARCH))
    assert {(f.check.id, f.violation.path) for f in result.findings} == {
        ("AZAI-404", "sku.name"),
        ("AZAI-501", "properties"),
    }


def test_min_replicas_zero_is_zero_not_the_default(tmp_path: Path) -> None:
    basic = {**SEARCH, "name": "srch-one", "sku": {"name": "basic"}}
    strict = scan(_template(tmp_path, basic), select=["AZAI-404"])
    lax = run_scan(
        ScanRequest(paths=[_template(tmp_path, basic)], select=["AZAI-404"], rule_options=["AZAI-404:min_replicas=0"])
    )
    assert [f.resource.name for f in strict.findings] == ["srch-one"] and lax.findings == []


def test_user_delegation_sas_datastores_are_not_shared_keys(tmp_path: Path) -> None:
    workspace = {
        "type": "Microsoft.MachineLearningServices/workspaces",
        "apiVersion": "2025-12-01",
        "name": "ws-sas",
        "location": "westeurope",
        "kind": "Hub",
        "identity": {"type": "SystemAssigned"},
        "properties": {"systemDatastoresAuthMode": "UserDelegationSAS"},
    }
    keyed = {**workspace, "name": "ws-keys", "properties": {"systemDatastoresAuthMode": "accessKey"}}
    result = scan(_template(tmp_path, workspace, keyed), select=["AZAI-111"])
    flagged = {f.resource.name for f in result.findings if f.violation.path == "properties.systemDatastoresAuthMode"}
    assert flagged == {"ws-keys"}


def test_a_token_in_a_connection_url_never_reaches_a_report(tmp_path: Path) -> None:
    account = {
        "type": "Microsoft.CognitiveServices/accounts",
        "apiVersion": "2025-06-01",
        "name": "foundry",
        "location": "westeurope",
        "kind": "AIServices",
        "sku": {"name": "S0"},
        "properties": {},
    }
    connection = {
        "type": "Microsoft.CognitiveServices/accounts/connections",
        "apiVersion": "2025-06-01",
        "name": "foundry/git",
        "dependsOn": ["foundry"],
        "properties": {
            "category": "Git",
            "authType": "PAT",
            "target": "https://bot:fake-token-0000@git.example.com/repo",
        },
    }
    done = run_cli(
        "scan", "--format", "json", "--fail-on", "none", _template(tmp_path, account, connection), cwd=tmp_path
    )
    assert done.returncode == 0 and "AZAI-116" in done.stdout
    assert "fake-token-0000" not in done.stdout + done.stderr and "https://git.example.com/repo" in done.stdout
