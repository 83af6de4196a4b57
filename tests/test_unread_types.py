"""Resource types azai reads nothing from are named in every report's coverage section (issue 37
item 4), and the azurerm AI resources the provider documents are either mapped or knowingly not
read (tests/data/azurerm-ai-resources.json pins the provider's list)."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from reports import html, json_report, junit, markdown, sarif, text
from reports.escaping import html_text, markdown_text
from scanner.engine.registry import load_checks
from scanner.engine.results import ScanResult, UnreadType
from scanner.model.needs import LiveRead
from scanner.pipeline.unread import read_types
from scanner.sources.terraform.azurerm import MAPPINGS, serves_ai
from tests.conftest import FIXTURES, ROOT, cli_json, run_cli, scan

HERE = FIXTURES / "unread-types"
PINNED = json.loads((Path(__file__).parent / "data" / "azurerm-ai-resources.json").read_text())
# Mapped ahead of any release: the shape of unmerged provider pull requests (azurerm.py says which).
UNRELEASED = {"azurerm_cognitive_account_connection", "azurerm_cognitive_account_project_connection"}

PLAN_UNREAD = [
    UnreadType("azurerm_machine_learning_datastore_blobstorage", 1, True),
    UnreadType("azurerm_resource_group", 1, False),
    UnreadType("azurerm_virtual_network", 2, False),
    UnreadType("Microsoft.CognitiveServices/accounts/capabilityHosts", 1, True),
    UnreadType("random_string", 1, False),
]
AI_LINE = (
    "2 resources of AI service types azai does not read: azurerm_machine_learning_datastore_blobstorage (1), "
    "Microsoft.CognitiveServices/accounts/capabilityHosts (1)"
)
OTHER_LINE = (
    "4 resources of non-AI types azai does not read: azurerm_resource_group (1), azurerm_virtual_network (2), "
    "random_string (1)"
)


def test_a_plan_names_each_type_nothing_reads_once_and_counts_its_resources() -> None:
    """Unmapped azurerm and other providers' types by Terraform type, an azapi resource of a type
    no rule reads by its ARM type; not the deleted security group, not the data source, not the
    connections and customer-managed key the mapping now reads."""
    result = scan(HERE / "plan.json")
    assert result.unread_types == PLAN_UNREAD
    assert result.resources_scanned == 7  # the account, five connections and the capability host


def test_a_template_names_nested_deployments_resources_but_not_the_deployment_or_existing_ones() -> None:
    assert scan(HERE / "template.json").unread_types == [
        UnreadType("Microsoft.CognitiveServices/accounts/capabilityHosts", 1, True),
        UnreadType("Microsoft.Network/networkSecurityGroups", 2, False),
        UnreadType("Microsoft.Network/virtualNetworks", 1, False),
        UnreadType("Microsoft.Search/searchServices/sharedPrivateLinkResources", 1, True),
    ]


def test_a_whatif_result_names_what_it_deploys_not_what_it_deletes_or_ignores() -> None:
    assert scan(HERE / "whatif.json").unread_types == [
        UnreadType("Microsoft.CognitiveServices/accounts/capabilityHosts", 1, True),
        UnreadType("Microsoft.Network/virtualNetworks", 1, False),
    ]


def test_one_scan_of_several_inputs_names_each_type_once() -> None:
    result = scan(HERE / "template.json", HERE / "whatif.json")
    assert [(u.name, u.resources) for u in result.unread_types] == [
        ("Microsoft.CognitiveServices/accounts/capabilityHosts", 2),
        ("Microsoft.Network/networkSecurityGroups", 2),
        ("Microsoft.Network/virtualNetworks", 2),
        ("Microsoft.Search/searchServices/sharedPrivateLinkResources", 1),
    ]


def test_what_is_read_is_what_any_installed_rule_reads_not_what_the_run_selected() -> None:
    assert scan(HERE / "plan.json", select=["AZAI-116"]).unread_types == PLAN_UNREAD


def test_the_connection_family_is_judged_by_its_implied_auth_type() -> None:
    """ApiKey, AccountKey and CustomKeys store a secret; AAD (entra_id) and AccountManagedIdentity
    do not, and carry no credentials."""
    result = scan(HERE / "plan.json", select=["AZAI-116"])
    assert sorted(f.resource.name for f in result.findings) == [
        "ais-foundry/blob",
        "ais-foundry/search",
        "ais-foundry/serp",
    ]
    assert sorted(r.name for _, r in result.passed) == ["ais-foundry/docs", "ais-foundry/openai"]
    assert result.undetermined == []
    assert {f.violation.observed for f in result.findings} == {"AccountKey", "ApiKey", "CustomKeys"}


def test_a_customer_managed_key_resource_keys_its_account(tmp_path: Path) -> None:
    """azurerm_cognitive_account_customer_managed_key PATCHes the account's encryption: with it,
    AZAI-107 (key required) passes the account; without it, the account fails."""
    required = ("--select", "AZAI-107", "--rule-option", "AZAI-107:required=true")
    assert cli_json(*required, str(HERE / "plan.json"))["findings"] == []
    plan = json.loads((HERE / "plan.json").read_text())
    plan["resource_changes"] = [
        c for c in plan["resource_changes"] if c["type"] != "azurerm_cognitive_account_customer_managed_key"
    ]
    bare = tmp_path / "plan.json"
    bare.write_text(json.dumps(plan))
    found = cli_json(*required, str(bare))["findings"]
    assert [(f["resource_name"], f["evidence"]["path"]) for f in found] == [
        ("ais-foundry", "properties.encryption.keySource")
    ]


def test_unread_types_do_not_make_a_scan_incomplete() -> None:
    """Exit 0 with no gate, not 3: the scan read all it could; the coverage gaps that do make
    it incomplete are scopes and templates it could not open."""
    done = run_cli("scan", "--fail-on", "none", str(HERE / "plan.json"))
    assert done.returncode == 0, done.stderr
    assert scan(HERE / "plan.json").complete


def _result() -> ScanResult:
    return scan(HERE / "plan.json", select=["AZAI-116"])


def test_the_text_report_lists_them_in_its_coverage_section() -> None:
    lines = text.render(_result()).decode().splitlines()
    start = lines.index("COVERAGE: resource types azai does not read")
    assert lines[start + 1 : start + 4] == [f"  warning: {AI_LINE}", f"  {OTHER_LINE}", ""]


def test_the_compact_text_report_keeps_the_warning_and_leaves_the_count_out() -> None:
    lines = text.render(_result(), compact=True).decode().splitlines()
    assert f"warning: {AI_LINE}" in lines
    assert not any("non-AI types" in line for line in lines)


def test_the_json_report_has_a_documented_field_for_them() -> None:
    document = json.loads(json_report.render(_result()))
    assert document["unread_types"] == [{"type": u.name, "resources": u.resources, "ai": u.ai} for u in PLAN_UNREAD]
    assert document["coverage"] == [] and document["summary"]["complete"] is True
    assert "`unread_types`" in (ROOT / "docs" / "json-output.md").read_text()


def test_sarif_gives_them_as_tool_notifications() -> None:
    log = json.loads(sarif.render(_result(), ROOT)[0])
    notifications = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    # "warning" is a notification's default level, which the log leaves out
    assert [(n.get("level", "warning"), n["message"]["text"]) for n in notifications] == [
        ("warning", AI_LINE),
        ("note", OTHER_LINE),
    ]
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_markdown_lists_them_under_coverage() -> None:
    report = markdown.render(_result())[0].decode()
    section = report[report.index("### Coverage") :]
    assert section.splitlines()[:5] == [
        "### Coverage",
        "",
        "⚠️ **Warning:** 2 resources of AI service types azai does not read: "
        "`azurerm_machine_learning_datastore_blobstorage` (1), "
        "`Microsoft.CognitiveServices/accounts/capabilityHosts` (1)",
        "",
        "4 resources of non-AI types azai does not read: `azurerm_resource_group` (1), `azurerm_virtual_network` (2), "
        "`random_string` (1)",
    ]


def test_junit_gives_them_as_skipped_cases_of_the_coverage_suite_not_errors() -> None:
    root = ET.fromstring(junit.render(_result()))
    suite = next(s for s in root.iter("testsuite") if s.get("name") == "coverage")
    assert (suite.get("tests"), suite.get("errors"), suite.get("skipped")) == ("2", "0", "2")
    cases = [(c.get("name"), c.find("skipped").get("message")) for c in suite.iter("testcase")]  # type: ignore[union-attr]
    assert cases == [("AI service types azai does not read", AI_LINE), ("non-AI types azai does not read", OTHER_LINE)]
    assert root.get("errors") == "0"
    # 5 AZAI-116 connection cases and the 2 coverage cases; 3 failures, 2 skipped (both coverage)
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("7", "3", "2")


def test_html_lists_them_in_its_coverage_section() -> None:
    page = html.render(_result()).decode()
    section = page[page.index("<h2 id='coverage'>") :]
    assert section.startswith(
        "<h2 id='coverage'>Coverage</h2>"
        f"<p class='incomplete'><strong>Warning</strong>: {AI_LINE}</p><p>{OTHER_LINE}</p>"
    )


def test_a_type_name_reaches_each_report_escaped() -> None:
    """A template's type is whatever its author wrote: each report escapes it its own way."""
    name = "Microsoft.X/<b>`|*y*"
    result = ScanResult(unread_types=[UnreadType(name, 1, True)])
    assert f"{html_text(f'1 resource of AI service types azai does not read: {name} (1)')}</p>" in (
        html.render(result).decode()
    )
    assert f"azai does not read: {markdown_text(name)} (1)" in markdown.render(result)[0].decode()
    root = ET.fromstring(junit.render(result))
    assert root.find("testsuite/testcase/skipped").get("message").endswith(f": {name} (1)")  # type: ignore[union-attr]


def test_rules_read_their_types_and_their_declared_reads_and_the_evaluator_reads_deployments() -> None:
    rule = dataclasses.replace(
        load_checks()[0],
        resource_types=("Microsoft.Foo/bars",),
        reads=("Microsoft.Foo/bars/bazzes", LiveRead.METRICS),
    )
    assert read_types([rule]) == {
        "microsoft.foo/bars",
        "microsoft.foo/bars/bazzes",
        "microsoft.insights/metrics",
        "microsoft.resources/deployments",
    }


def test_every_arm_type_the_mapping_writes_is_read_by_a_rule() -> None:
    """So a Terraform resource is unread exactly when it has no mapping, as a template's is when
    no rule reads its ARM type: one estate gives the same coverage in either form."""
    read = read_types(load_checks())
    assert sorted({m.arm_type for m in MAPPINGS.values() if m.arm_type.lower() not in read}) == []


@pytest.mark.parametrize("name", sorted(PINNED["resources"]))
def test_every_ai_resource_the_provider_documents_is_mapped_or_knowingly_not_read(name: str) -> None:
    entry = PINNED["resources"][name]
    assert serves_ai(name)
    if entry["read"] == "mapped":
        assert MAPPINGS[name].arm_type == entry["arm_type"]
    else:  # not read, and why
        assert name not in MAPPINGS
        # no rule reads its ARM type, but for the attached Synapse pool, a compute rules skip
        synapse = name == "azurerm_machine_learning_synapse_spark"
        assert (entry["arm_type"].lower() in read_types(load_checks())) is synapse


def test_every_mapped_ai_type_is_in_the_provider_list_or_named_as_unreleased() -> None:
    mapped_ai = {name for name in MAPPINGS if serves_ai(name)}
    assert mapped_ai - set(PINNED["resources"]) == UNRELEASED
    assert PINNED["source"]["commit"] == "5782a75422c68a0d0804ac16d97dcaf3df5ee2fa"
