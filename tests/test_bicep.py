"""Compiled Bicep evaluated the way ARM deploys it: one minimal template per behaviour, in
fixtures/bicep/, and exactly which resources fail, pass and stay undetermined on each."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from scanner.engine.results import ScanResult
from scanner.model.resources import Resource
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources import load_file
from scanner.sources.arm.parameters import TemplateOptions, read_parameters
from tests.conftest import FIXTURES, run_cli

BICEP = FIXTURES / "bicep"


def scan(
    template: str,
    rules: Sequence[str],
    parameters: str | None = None,
    environ: Mapping[str, str] | None = None,
    cloud: str = "AzureCloud",
) -> ScanResult:
    return run_scan(
        ScanRequest(
            paths=[str(BICEP / template)],
            parameters_file=str(BICEP / parameters) if parameters else None,
            select=rules,
            environ=environ or {},
            cloud=cloud,
        )
    )


def template_options(parameters: str, environ: Mapping[str, str]) -> TemplateOptions:
    return TemplateOptions(read_parameters(str(BICEP / parameters), environ))


def outcomes(result: ScanResult, rule: str, by_declaration: bool = False) -> dict[str, set[str]]:
    """Resource names (or declaration chains) per outcome for one rule."""

    def label(resource: Resource) -> str:
        return str(resource.origin.instance) if by_declaration else resource.name

    return {
        "fail": {label(f.resource) for f in result.findings if f.check.id == rule},
        "undetermined": {label(u.resource) for u in result.undetermined if u.check.id == rule},
        "pass": {label(r) for c, r in result.passed if c.id == rule},
    }


def test_whole_entry_module_parameters_are_evaluated_and_secrets_stay_unknown() -> None:
    result = scan("module-parameters/main.json", ["AZAI-101"])
    # The module's own default (disableLocalAuth false) would reverse both results.
    assert outcomes(result, "AZAI-101") == {
        "fail": {"oai-loose"},
        "pass": {"oai-strict"},
        "undetermined": {"oai-secret"},
    }
    [secret] = result.undetermined
    assert "Key Vault" in secret.reason and "hunter2" not in secret.reason


def test_unresolved_names_stay_distinct_and_children_keep_their_parent() -> None:
    resources = load_file(BICEP / "unresolved-names/main.json", "main.json").inventory.resources
    accounts = [r for r in resources if r.type == "Microsoft.CognitiveServices/accounts"]
    assert sorted(r.id.rsplit("/", 1)[-1] for r in accounts) == ["{first}", "{pool[0]}", "{pool[1]}", "{second}"]
    # Shown readably: the known text, and the secure parameter the rest is read from.
    assert {r.name for r in accounts} == {"oai-a-{seed}", "oai-b-{seed}", "oai-{seed}-0", "oai-{seed}-1"}
    result = scan("unresolved-names/main.json", ["AZAI-101", "AZAI-104"])
    assert sorted(str(f.resource.origin.instance) for f in result.findings if f.check.id == "AZAI-101") == [
        "first",
        "pool[0]",
        "pool[1]",
        "second",
    ]
    assert not result.undetermined and not [r for c, r in result.passed if c.id == "AZAI-101"]
    # The compute's own name is unknown but its workspace's is not: it is still in that workspace,
    # whose managed network it runs in.
    [compute] = [r for r in resources if r.type.endswith("/computes")]
    assert compute.parent_id and compute.parent_id.endswith("/workspaces/ws-named")
    # Its name is cut into segments where the name has them, never inside an expression.
    assert outcomes(result, "AZAI-104") == {"fail": set(), "pass": {"ws-named/{seed}"}, "undetermined": set()}


@pytest.mark.parametrize(
    ("template", "storage", "vault", "workspaces"),
    [
        ("module-outputs/main.json", "stdata", "kv-ai", {"hub-ai", "proj-ai"}),
        ("module-outputs/classic.json", "stclassic", "kv-classic", {"ws-classic"}),
    ],
)
def test_module_outputs_link_resources_across_modules(
    template: str, storage: str, vault: str, workspaces: set[str]
) -> None:
    """The workspace names its storage and vault through sibling modules' outputs (in main.json
    the storage is in another resource group): the storage, which accepts shared keys, is
    judged as the workspace's, and the workspace resolves every dependency."""
    result = scan(template, ["AZAI-111", "AZAI-112"])
    assert outcomes(result, "AZAI-111") == {"fail": {storage}, "pass": workspaces, "undetermined": set()}
    assert outcomes(result, "AZAI-112") == {"fail": set(), "pass": {vault} | workspaces, "undetermined": set()}
    [hub] = sorted(workspaces)[:1]
    # ... and its data is in another region (westeurope, westus) than the workspace (eastus).
    assert hub in outcomes(scan(template, ["AZAI-301"]), "AZAI-301")["fail"]


def test_project_reads_its_hub_and_private_endpoints_resolve_from_module_outputs() -> None:
    result = scan("module-outputs/main.json", ["AZAI-108", "AZAI-301", "AZAI-302"])
    # The project sits with the hub's storage (westeurope) but not with the hub's vault (eastus).
    assert outcomes(result, "AZAI-301") == {"fail": {"hub-ai"}, "pass": {"proj-ai"}, "undetermined": set()}
    assert outcomes(result, "AZAI-302") == {"fail": {"proj-ai"}, "pass": {"hub-ai"}, "undetermined": set()}
    # A private endpoint whose privateLinkServiceId is another module's output.
    assert outcomes(result, "AZAI-108") == {"fail": {"oai-alone"}, "pass": {"oai-linked"}, "undetermined": set()}


def test_nullable_types_through_definitions_make_optional_loops_run_zero_times() -> None:
    loaded = load_file(BICEP / "nullable-types/main.json", "main.json")
    assert sorted(r.type for r in loaded.inventory.resources) == [
        "Microsoft.CognitiveServices/accounts",
        "Microsoft.Network/ipGroups",
    ]
    # Only the required (not nullable) list without a value leaves a count unknown.
    assert loaded.warnings == ["main.json: copy count at /resources/ipRules is unknown; evaluated one instance"]
    result = scan("nullable-types/main.json", ["AZAI-501"])
    assert outcomes(result, "AZAI-501") == {"fail": {"oai-nullable"}, "pass": set(), "undetermined": set()}


AZD = {
    "AZURE_ENV_NAME": "dev",
    "AZURE_LOCATION": "swedencentral",
    "AZURE_SEARCH_ADMIN": "s3cr3t-admin",  # a secure parameter's value: read, never shown
    "AZURE_OPENAI_API_KEY": "s3cr3t-key",  # a credential's name: never read
}


def test_azd_placeholders_resolve_like_azd_and_say_how() -> None:
    result = scan("azd/main.json", ["AZAI-101", "AZAI-108", "AZAI-201"], "azd/main.parameters.json", AZD)
    # ${AZURE_OPENAI_DISABLE_LOCAL_AUTH=true} is true; ${AZURE_DEPLOY_GPU_CLUSTER=false} is false,
    # not the truthy text "${...=false}": the always-on GPU cluster is not deployed.
    assert outcomes(result, "AZAI-101", by_declaration=True)["pass"] == {"openai"}
    assert not [f for f in result.findings if f.check.id == "AZAI-201"]
    # ${AZURE_PUBLIC_NETWORK_ACCESS} has neither a variable nor a default: unknown.
    assert outcomes(result, "AZAI-108", by_declaration=True)["undetermined"] == {"openai"}
    [line] = [w for w in result.warnings if "azd placeholders" in w]
    assert "${AZURE_LOCATION} (location) = 'swedencentral' from the environment" in line
    assert "${AZURE_DEPLOY_GPU_CLUSTER} (deployGpuCluster) = 'false' from its default" in line
    assert "${AZURE_PUBLIC_NETWORK_ACCESS} (publicNetworkAccess) is unknown" in line
    assert "${AZURE_SEARCH_ADMIN} (searchAdminKey) = (not shown) from the environment" in line
    assert "${AZURE_OPENAI_API_KEY} (openaiApiKey) gives no value, so the template's default applies " in line
    assert "(the variable was not read: its name looks like a credential)" in line
    assert "s3cr3t" not in line
    # An unset placeholder leaves the parameter out, as azd does: the template's default applies,
    # so the role assignment for an empty principal is not deployed.
    assert "${AZURE_PRINCIPAL_ID} (principalId) gives no value, so the template's default applies" in line
    loaded = load_file(BICEP / "azd/main.json", "main.json", template_options("azd/main.parameters.json", AZD))
    assert "Microsoft.Authorization/roleAssignments" not in {r.type for r in loaded.inventory.resources}


def test_azd_environment_variables_win_over_defaults() -> None:
    environ = {**AZD, "AZURE_OPENAI_DISABLE_LOCAL_AUTH": "false", "AZURE_DEPLOY_GPU_CLUSTER": "true"}
    result = scan("azd/main.json", ["AZAI-101", "AZAI-201"], "azd/main.parameters.json", environ)
    assert outcomes(result, "AZAI-101", by_declaration=True)["fail"] == {"openai"}
    assert outcomes(result, "AZAI-201", by_declaration=True)["fail"] == {"gpuCluster"}


def test_secrets_from_the_environment_appear_in_no_report(tmp_path: Path) -> None:
    for fmt in ("json", "sarif", "markdown", "junit", "text", "html"):
        done = run_cli(
            "scan",
            str(BICEP / "azd/main.json"),
            "--parameters",
            str(BICEP / "azd/main.parameters.json"),
            "--format",
            fmt,
            "--fail-on",
            "none",
            env=AZD,
        )
        assert done.returncode == 0, done.stderr
        assert "s3cr3t" not in done.stdout + done.stderr, fmt


def test_linked_templates_are_read_from_beside_the_template() -> None:
    loaded = load_file(BICEP / "linked/main.json", "linked/main.json")
    assert sorted((r.name, r.origin.file) for r in loaded.inventory.resources) == [
        ("oai-params-link", "linked/modules/account.json"),
        ("oai-published", "linked/modules/account.json"),
        ("oai-relative", "linked/modules/account.json"),
        ("oai-uri", "linked/modules/account.json"),
    ]
    assert [(g.scope, g.kind) for g in loaded.coverage] == [
        ("linked/main.json: module 4 at /resources/4: linked template", "template")
    ]
    assert "modules/missing.json was not found" in loaded.coverage[0].reason


def test_a_template_that_links_to_itself_stops(tmp_path: Path) -> None:
    template = {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "resources": [
            {
                "type": "Microsoft.Resources/deployments",
                "apiVersion": "2022-09-01",
                "name": "again",
                "properties": {"mode": "Incremental", "templateLink": {"relativePath": "main.json"}},
            }
        ],
    }
    (tmp_path / "main.json").write_text(json.dumps(template))
    [gap] = load_file(tmp_path / "main.json", "main.json").coverage
    assert "links back" in gap.reason


def test_an_unreadable_linked_template_makes_the_scan_incomplete_in_every_format() -> None:
    linked = str(BICEP / "linked/main.json")
    done = run_cli("scan", linked, "--fail-on", "critical", "--format", "json")
    assert done.returncode == 3, done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["complete"] is False and not report["summary"]["failed"]
    assert [(c["kind"], c["status"]) for c in report["coverage"]] == [("template", None)]
    for fmt, marker in (
        ("text", "INCOMPLETE"),
        ("markdown", "Incomplete"),
        ("junit", 'name="coverage"'),
        ("html", "Incomplete: 1 scope(s) not scanned"),
    ):
        shown = run_cli("scan", linked, "--fail-on", "critical", "--format", fmt)
        assert shown.returncode == 3 and marker in shown.stdout, fmt
        assert "modules/missing.json" in shown.stdout, fmt
    sarif = json.loads(run_cli("scan", linked, "--fail-on", "critical", "--format", "sarif").stdout)
    notes = [n["message"]["text"] for run in sarif["runs"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any("not scanned" in n and "modules/missing.json" in n for n in notes)
    # A failing gate still wins: exit 1.
    assert run_cli("scan", str(BICEP / "linked/gate.json"), "--fail-on", "critical").returncode == 1


def test_parameters_that_do_not_match_are_named_and_read_as_unknown() -> None:
    result = scan("mismatched/main.json", ["AZAI-101", "AZAI-501"], "mismatched/main.parameters.json")
    assert outcomes(result, "AZAI-101") == {
        "fail": set(),
        "pass": {"oai-logged-maybe"},
        "undetermined": {"oai-typo", "oai-novar", "oai-prod-only"},
    }
    warnings = "\n".join(result.warnings)
    for name in ("parameter 'enviroment' is not declared by", "parameter 'sku' is not declared by"):
        assert name in warnings
    assert "parameter 'enviroment' is not declared; values that use it are unknown" in warnings
    assert "variable 'hardening' is not declared; values that use it are unknown" in warnings


def test_a_condition_nobody_knows_makes_findings_undetermined() -> None:
    result = scan("mismatched/main.json", ["AZAI-501"], "mismatched/main.parameters.json")
    assert outcomes(result, "AZAI-501") == {
        "fail": {"oai-typo", "oai-novar"},
        "pass": set(),
        # its own condition; and the only diagnostic setting that would pass it has one
        "undetermined": {"oai-prod-only", "oai-logged-maybe"},
    }
    reasons = {u.resource.name: u.reason for u in result.undetermined}
    assert reasons["oai-prod-only"].startswith("deployed only if [equals(parameters('environment'), 'prod')] is true")
    assert "diagnosticSettings 'to-logs'" in reasons["oai-logged-maybe"]


@pytest.mark.parametrize(
    ("cloud", "zone", "fails"),
    [
        ("AzureCloud", "privatelink.blob.core.windows.net", set()),
        ("AzureUSGovernment", "privatelink.blob.core.usgovcloudapi.net", {"oai-cloud"}),
        ("AzureChinaCloud", "privatelink.blob.core.chinacloudapi.cn", {"oai-cloud"}),
    ],
)
def test_environment_follows_the_cloud(cloud: str, zone: str, fails: set[str]) -> None:
    resources = load_file(BICEP / "environment/main.json", "main.json", TemplateOptions(cloud=cloud)).inventory
    assert zone in {r.name for r in resources.resources}
    assert outcomes(scan("environment/main.json", ["AZAI-101"], cloud=cloud), "AZAI-101")["fail"] == fails


def test_a_subnet_set_at_deploy_counts_and_one_that_may_be_null_does_not() -> None:
    result = scan("maybe-null/main.json", ["AZAI-104"])
    assert outcomes(result, "AZAI-104") == {
        "fail": {"ws-net/no-subnet"},
        "pass": {"ws-net/in-subnet"},  # a module output known only at deploy: set
        "undetermined": {"ws-net/maybe-subnet"},  # if(useVnet, id, null()): maybe not set at all
    }


def test_a_template_loaded_into_a_variable_is_a_module_with_its_own_parameters() -> None:
    # Bicep's loadJsonContent(): "template": "[variables('$fxv#0')]", expressions escaped as '[['.
    result = scan("loaded-template/main.json", ["AZAI-101"])
    assert outcomes(result, "AZAI-101") == {"fail": {"oai-keyed"}, "pass": {"oai-keyless"}, "undetermined": set()}
    assert result.complete
