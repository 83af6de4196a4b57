"""Templates at the edges of what the evaluator trusts: secrets, the linked-template sandbox,
expansion budgets, outer-scope modules, deployment placeholders and conditional lookups. Each
case was found in review; each asserts exactly what is reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources import load_file, load_inputs
from scanner.sources.arm import deployments
from tests.conftest import run_cli

SCHEMA = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"
PARAMETERS = "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#"


def write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def template(resources: list[dict[str, Any]] | dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"$schema": SCHEMA, "contentVersion": "1.0.0.0", "resources": resources, **extra}


def account(name: str, **properties: Any) -> dict[str, Any]:
    return {
        "type": "Microsoft.CognitiveServices/accounts",
        "apiVersion": "2024-10-01",
        "name": name,
        "location": "eastus",
        "kind": "OpenAI",
        "identity": {"type": "SystemAssigned"},
        "properties": {"disableLocalAuth": True, "publicNetworkAccess": "Disabled", **properties},
    }


def resource(resource_type: str, name: str, **fields: Any) -> dict[str, Any]:
    return {"type": resource_type, "apiVersion": "2024-01-01", "name": name, **fields}


def nested(name: str, inner: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """An inline nested deployment (outer scope unless ``properties`` says otherwise)."""
    properties = {"mode": "Incremental", "template": inner, **fields.pop("properties", {})}
    return resource("Microsoft.Resources/deployments", name, properties=properties, **fields)


def linked(name: str, link: dict[str, Any], **properties: Any) -> dict[str, Any]:
    return {
        "type": "Microsoft.Resources/deployments",
        "apiVersion": "2022-09-01",
        "name": name,
        "properties": {"mode": "Incremental", "templateLink": link, **properties},
    }


def outcome(paths: list[Path], rule: str, **request: Any) -> dict[str, set[str]]:
    result = run_scan(ScanRequest(paths=[str(p) for p in paths], select=[rule], environ={}, **request))
    return {
        "fail": {f.resource.name for f in result.findings},
        "undetermined": {u.resource.name for u in result.undetermined},
        "pass": {r.name for _, r in result.passed},
    }


def test_no_value_from_the_environment_is_quoted_for_secure_nested_or_undeclared_parameters(tmp_path: Path) -> None:
    main = write(
        tmp_path / "main.json",
        template(
            [account("oai")],
            parameters={
                "adminPassword": {"type": "securestring"},
                "creds": {"type": "object", "properties": {"password": {"type": "securestring"}}},
                "region": {"type": "string", "defaultValue": "eastus"},
            },
        ),
    )
    parameters = write(
        tmp_path / "main.parameters.json",
        {
            "$schema": PARAMETERS,
            "parameters": {
                "adminPassword": {"value": "${ADMIN_PW=Sup3rS3cretDefault}"},
                "creds": {"value": {"password": "${DB_LOGIN}"}},
                "undeclaredThing": {"value": "${OPENAI_ENDPOINT_X}"},
                "region": {"value": "${GITHUB_TOKEN}"},
            },
        },
    )
    environ = {"DB_LOGIN": "hunter2-db", "OPENAI_ENDPOINT_X": "sk-live-abc", "GITHUB_TOKEN": "ghs_t0ken"}
    for fmt in ("text", "json", "sarif", "markdown"):
        done = run_cli(
            "scan", str(main), "--parameters", str(parameters), "--format", fmt, "--fail-on", "none", env=environ
        )
        assert done.returncode == 0, done.stderr
        shown = done.stdout + done.stderr
        for secret in ("Sup3rS3cretDefault", "hunter2-db", "sk-live-abc", "ghs_t0ken"):
            assert secret not in shown, (fmt, secret)
    result = run_scan(ScanRequest(paths=[str(main)], parameters_file=str(parameters), environ=environ))
    [line] = [w for w in result.warnings if "azd placeholders" in w]
    assert "${GITHUB_TOKEN} (region) gives no value" in line and "looks like a credential" in line


def test_linked_templates_are_read_only_inside_the_scanned_repository(tmp_path: Path) -> None:
    write(tmp_path / "outside" / "secret.json", template([account("TOPSECRET-VALUE")]))
    write(tmp_path / "outside" / "secret.parameters.json", {"$schema": PARAMETERS, "parameters": {}})
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "infra" / "modules" / "ok.json", template([account("oai-inside")]))
    main = write(
        repo / "infra" / "main.json",
        template(
            [
                linked("up", {"relativePath": "../../outside/secret.json"}),
                linked("absolute", {"uri": (tmp_path / "outside" / "secret.json").as_uri()}),
                linked("sibling", {"relativePath": "modules/ok.json"}),
                linked("params", {"relativePath": "modules/ok.json"}, parametersLink={"relativePath": "x.json"}),
                linked("nul", {"uri": "https://contoso/templates/a%00b.json"}),
                linked("long", {"relativePath": "x" * 300 + ".json"}),
            ]
        ),
    )
    loaded = load_file(main, "main.json")
    assert sorted(r.name for r in loaded.inventory.resources) == ["oai-inside", "oai-inside"]
    reasons = [g.reason for g in loaded.coverage]
    assert len(reasons) == 5, reasons
    assert "../../outside/secret.json is outside the scanned repository; not scanned" in reasons
    assert not any("TOPSECRET" in r for r in reasons)
    assert any("parameters file" in g.scope and "names no file here" in g.reason for g in loaded.coverage)


def test_links_that_branch_and_rejoin_stop_at_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deployments, "MAX_INSTANCES", 300)  # the real budget, reached sooner
    levels = 12  # 2^12 module instances if every path were expanded
    for level in range(levels):
        resources = [linked(f"next{i}", {"relativePath": f"t{level + 1}.json"}) for i in range(2)]
        write(tmp_path / f"t{level}.json", template(resources if level < levels - 1 else [account("leaf")]))
    loaded = load_file(tmp_path / "t0.json", "t0.json")
    [gap] = loaded.coverage
    assert "more than 300 resources and module instances" in gap.reason
    assert len(loaded.inventory.resources) < 300


def test_a_missing_link_in_a_copied_module_is_one_gap_and_deep_nesting_is_a_gap(tmp_path: Path) -> None:
    copied = linked("copies", {"relativePath": "missing.json"})
    copied["copy"] = {"name": "copies", "count": 5}
    loaded = load_file(write(tmp_path / "main.json", template([copied])), "main.json")
    assert len(loaded.coverage) == 1
    deep: dict[str, Any] = template([account("deep")])
    for depth in range(25):
        deep = template([nested(f"level{depth}", deep)])
    loaded = load_file(write(tmp_path / "deep.json", deep), "deep.json")
    assert [g.reason for g in loaded.coverage] == ["nested deployments deeper than 20 levels were not evaluated"]


def test_outer_scope_modules_evaluate_in_the_parent_and_deploy_to_their_group(tmp_path: Path) -> None:
    main = write(
        tmp_path / "main.json",
        template(
            [
                nested(
                    "other",
                    template([account("[variables('name')]", customSubDomainName="[variables('id')]")]),
                    resourceGroup="rg-other",
                ),
                account("[variables('name')]", customSubDomainName="[variables('id')]"),
            ],
            variables={"name": "oai-main", "id": "[resourceId('Microsoft.Storage/storageAccounts', 'st')]"},
        ),
    )
    by_group = {r.id.split("/resourceGroups/")[1].split("/")[0]: r for r in load_file(main, "m").inventory.resources}
    assert set(by_group) == {"rg-other", "{resourceGroupName}"}
    # resourceId() in an outer-scope module is the parent's group, wherever its resources go.
    for resource in by_group.values():
        assert "/resourceGroups/{resourceGroupName}/" in resource.get("properties.customSubDomainName")


def test_a_condition_on_the_resource_group_name_is_unknown_not_false(tmp_path: Path) -> None:
    public = account("oai-prod", publicNetworkAccess="Enabled")
    public["condition"] = "[equals(resourceGroup().name, 'rg-prod')]"
    main = write(tmp_path / "main.json", template([public]))
    assert outcome([main], "AZAI-108") == {"fail": set(), "pass": set(), "undetermined": {"oai-prod"}}


def test_a_full_reference_knows_its_declared_location_and_nothing_it_does_not(tmp_path: Path) -> None:
    main = write(
        tmp_path / "main.json",
        template(
            {
                "st": {
                    "type": "Microsoft.Storage/storageAccounts",
                    "apiVersion": "2023-05-01",
                    "name": "st",
                    "location": "westeurope",
                },
                "oai": account(
                    "oai",
                    # Bicep's empty(st.?identity.?principalId): the identity is runtime state.
                    disableLocalAuth="[empty(tryGet(reference('st', '2023-05-01', 'Full'), 'identity', 'id'))]",
                    customSubDomainName="[reference('st', '2023-05-01', 'Full').location]",
                ),
            },
            languageVersion="2.0",
        ),
    )
    [oai] = [r for r in load_file(main, "m").inventory.resources if r.name == "oai"]
    assert oai.get("properties.customSubDomainName") == "westeurope"
    assert outcome([main], "AZAI-101")["undetermined"] == {"oai"}


def test_resource_groups_of_one_name_in_two_subscriptions_are_not_one_region(tmp_path: Path) -> None:
    def module(name: str, subscription: str, inner: dict[str, Any]) -> dict[str, Any]:
        return nested(
            name,
            template([{**inner, "location": "[resourceGroup().location]"}]),
            subscriptionId=subscription,
            resourceGroup="rg-ai",
            properties={"expressionEvaluationOptions": {"scope": "inner"}},
        )

    storage = resource("Microsoft.Storage/storageAccounts", "st")
    storage_id = "/subscriptions/sub-a/resourceGroups/rg-ai/providers/Microsoft.Storage/storageAccounts/st"
    workspace = resource(
        "Microsoft.MachineLearningServices/workspaces", "ws", properties={"storageAccount": storage_id}
    )
    main = write(tmp_path / "main.json", template([module("data", "sub-a", storage), module("ml", "sub-b", workspace)]))
    assert outcome([main], "AZAI-301")["undetermined"] == {"ws"}


def test_a_deployment_declared_as_a_child_resource_is_expanded(tmp_path: Path) -> None:
    parent = resource(
        "Microsoft.Resources/resourceGroups",
        "rg-ai",
        location="eastus",
        resources=[nested("inner", template([account("oai-child")]))],
    )
    loaded = load_file(write(tmp_path / "main.json", template([parent])), "m")
    assert "oai-child" in {r.name for r in loaded.inventory.resources}


def test_projects_that_name_each_other_as_hub_do_not_loop(tmp_path: Path) -> None:
    def project(name: str, hub: str) -> dict[str, Any]:
        hub_id = f"[resourceId('Microsoft.MachineLearningServices/workspaces', '{hub}')]"
        return resource(
            "Microsoft.MachineLearningServices/workspaces",
            name,
            location="eastus",
            kind="Project",
            properties={"hubResourceId": hub_id},
        )

    main = write(tmp_path / "main.json", template([project("p1", "p2"), project("p2", "p1")]))
    assert outcome([main], "AZAI-301") == {"fail": set(), "pass": set(), "undetermined": {"p1", "p2"}}


def test_a_conditional_lookup_that_does_not_decide_leaves_the_finding(tmp_path: Path) -> None:
    # The only diagnostic setting sends to storage, not Log Analytics: with or without it the
    # account fails AZAI-501, so its unknown condition changes nothing.
    setting = resource(
        "Microsoft.Insights/diagnosticSettings",
        "to-storage",
        condition="[parameters('archive')]",
        scope="Microsoft.CognitiveServices/accounts/oai",
        properties={
            "storageAccountId": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Storage/storageAccounts/st"
        },
    )
    main = write(tmp_path / "main.json", template([account("oai"), setting], parameters={"archive": {"type": "bool"}}))
    assert outcome([main], "AZAI-501") == {"fail": {"oai"}, "pass": set(), "undetermined": set()}


def test_placeholder_ids_stay_put_when_a_resource_is_added_above(tmp_path: Path) -> None:
    unknown_name = account("[concat('oai-', parameters('seed'))]")
    params = {"seed": {"type": "string", "defaultValue": "[newGuid()]"}}
    before = load_file(write(tmp_path / "a.json", template([unknown_name], parameters=params)), "a").inventory
    after = load_file(write(tmp_path / "b.json", template([account("new"), unknown_name], parameters=params)), "b")
    [was] = [r for r in before.resources]
    [now] = [r for r in after.inventory.resources if r.name != "new"]
    assert was.id == now.id and was.identity_key == now.identity_key


def test_a_folder_scan_does_not_scan_a_linked_module_again_on_its_own(tmp_path: Path) -> None:
    write(
        tmp_path / "modules" / "account.json",
        template([account("[parameters('name')]")], parameters={"name": {"type": "string"}}),
    )
    write(
        tmp_path / "main.json",
        template([linked("m", {"relativePath": "modules/account.json"}, parameters={"name": {"value": "oai"}})]),
    )
    loaded, _ = load_inputs([str(tmp_path)])
    assert [(i.path.rsplit("/", 1)[-1], [r.name for r in i.inventory.resources]) for i in loaded] == [
        ("main.json", ["oai"])
    ]
