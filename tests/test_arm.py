"""ARM template evaluation: functions, loops, conditions, nested deployments, Bicep 2.0, what-if."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.model.resources import Resource
from scanner.model.unknown import Unknown
from scanner.sources import load_file
from scanner.sources.arm.evaluator import Evaluator, Placement, Scope
from scanner.sources.arm.parameters import ParameterFile, TemplateOptions
from tests.conftest import scan

SCHEMA = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"


def evaluate(expression: str, template: dict[str, Any] | None = None, supplied: dict[str, Any] | None = None) -> Any:
    return Evaluator(Scope(template or {}, supplied or {}, Placement())).value(expression)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("[concat('a', 'b', 1)]", "ab1"),
        ("[concat(createArray(1), createArray(2))]", [1, 2]),
        ("[format('{0}-{1:D3}', 'pool', 7)]", "pool-007"),
        ("[toLower('East US')]", "east us"),
        ("[if(equals(1, 1), 'yes', 'no')]", "yes"),
        ("[coalesce(null(), '', 'x')]", ""),
        ("[union(createObject('a', 1), createObject('b', 2))]", {"a": 1, "b": 2}),
        ("[contains(createArray('x', 'y'), 'y')]", True),
        ("[empty('')]", True),
        ("[length(createArray(1, 2, 3))]", 3),
        ("[string(true())]", "True"),
        ("[int('42')]", 42),
        ("[bool('false')]", False),
        ("[json('{\"a\": [1]}').a[0]]", 1),
        ("[first(createArray('a', 'b'))]", "a"),
        ("[last('abc')]", "c"),
        ("[split('a/b/c', '/')[2]]", "c"),
        ("[tryGet(createObject('a', createObject('b', 2)), 'a', 'b')]", 2),
        ("[map(range(0, 2), lambda('i', mul(lambdaVariables('i'), 10)))]", [0, 10]),
        ("[filter(createArray(1, 2, 3), lambda('x', greater(lambdaVariables('x'), 1)))]", [2, 3]),
        (
            "[resourceId('Microsoft.Storage/storageAccounts', 'st')]",
            "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Storage/storageAccounts/st",
        ),
        (
            "[resourceId('other-rg', 'Microsoft.X/a/b', 'n1', 'n2')]",
            "/subscriptions/{subscriptionId}/resourceGroups/other-rg/providers/Microsoft.X/a/n1/b/n2",
        ),
        ("[[not an expression]", "[not an expression]"),
    ],
)
def test_template_functions(expression: str, expected: Any) -> None:
    assert evaluate(expression) == expected


@pytest.mark.parametrize(
    "expression",
    [
        "[reference('x').outputs]",
        "[utcNow()]",
        "[newGuid()]",
        "[listKeys('x', '2020-01-01').keys[0].value]",
        "[resourceId(, variables('vmName')]]",
        "[concat('a']",
        "[noSuchFunction(1)]",
        "[parameters('missing')]",
    ],
)
def test_what_cannot_be_known_is_unknown_and_never_raises(expression: str) -> None:
    assert isinstance(evaluate(expression), Unknown)


def test_resource_group_location_is_the_same_symbol_everywhere() -> None:
    a = evaluate("[resourceGroup().location]")
    b = evaluate(
        "[parameters('loc')]",
        {"parameters": {"loc": {"type": "string", "defaultValue": "[resourceGroup().location]"}}},
    )
    assert a == b
    assert evaluate("[equals(resourceGroup().location, 'eastus')]").__class__ is Unknown


def test_parameters_coerce_strings_and_hide_secure_values() -> None:
    template = {
        "parameters": {
            "n": {"type": "int"},
            "flag": {"type": "bool"},
            "secret": {"type": "securestring", "defaultValue": "hunter2"},
        }
    }
    assert evaluate("[add(parameters('n'), 1)]", template, {"n": "2"}) == 3
    assert evaluate("[parameters('flag')]", template, {"flag": "false"}) is False
    hidden = evaluate("[parameters('secret')]", template)
    assert isinstance(hidden, Unknown) and "hunter2" not in str(hidden)


def test_objects_keep_their_known_members_next_to_an_unknown_one() -> None:
    value = evaluate("[createObject('a', reference('x'), 'b', 2)]")
    assert isinstance(value["a"], Unknown) and value["b"] == 2


def _resources(tmp_path: Path, template: dict[str, Any], parameters: dict[str, Any] | None = None) -> list[Resource]:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"$schema": SCHEMA, "contentVersion": "1.0.0.0", **template}))
    return [r for r in load_file(path, "t", TemplateOptions(ParameterFile(None, parameters or {}))).inventory.resources]


def test_copy_loops_conditions_children_and_existing(tmp_path: Path) -> None:
    resources = _resources(
        tmp_path,
        {
            "parameters": {
                "names": {"type": "array", "defaultValue": ["a", "b"]},
                "deployOptional": {"type": "bool", "defaultValue": False},
            },
            "resources": [
                {
                    "type": "Microsoft.Storage/storageAccounts",
                    "name": "[parameters('names')[copyIndex()]]",
                    "location": "eastus",
                    "copy": {"name": "loop", "count": "[length(parameters('names'))]"},
                },
                {
                    "type": "Microsoft.Storage/storageAccounts",
                    "name": "optional",
                    "condition": "[parameters('deployOptional')]",
                    "location": "eastus",
                },
                {
                    "type": "Microsoft.MachineLearningServices/workspaces",
                    "name": "ws",
                    "location": "eastus",
                    "resources": [
                        {
                            "type": "computes",
                            "name": "c1",
                            "location": "eastus",
                            "properties": {"computeType": "AmlCompute"},
                        }
                    ],
                },
            ],
        },
    )
    assert sorted((r.type, r.name) for r in resources) == [
        ("Microsoft.MachineLearningServices/workspaces", "ws"),
        ("Microsoft.MachineLearningServices/workspaces/computes", "ws/c1"),
        ("Microsoft.Storage/storageAccounts", "a"),
        ("Microsoft.Storage/storageAccounts", "b"),
    ]


def test_property_copy_and_bicep_symbolic_resources(tmp_path: Path) -> None:
    resources = _resources(
        tmp_path,
        {
            "languageVersion": "2.0",
            "resources": {
                "old": {"type": "Microsoft.Storage/storageAccounts", "name": "old", "existing": True},
                "aks": {
                    "type": "Microsoft.ContainerService/managedClusters",
                    "name": "aks",
                    "location": "eastus",
                    "properties": {
                        "copy": [
                            {
                                "name": "agentPoolProfiles",
                                "count": 2,
                                "input": {
                                    "name": "[format('p{0}', copyIndex('agentPoolProfiles'))]",
                                    "vmSize": "Standard_D4s_v5",
                                },
                            }
                        ]
                    },
                },
            },
        },
    )
    by_name = {r.name: r for r in resources}
    assert set(by_name) == {"aks", "aks/p0", "aks/p1"}
    assert by_name["aks"].origin.symbolic_name == "aks"


def test_nested_deployments_in_inner_and_outer_scope(tmp_path: Path) -> None:
    nested = {
        "$schema": SCHEMA,
        "contentVersion": "1.0.0.0",
        "parameters": {"where": {"type": "string"}},
        "resources": [
            {
                "type": "Microsoft.Storage/storageAccounts",
                "name": "inner",
                "location": "[parameters('where')]",
            }
        ],
    }
    resources = _resources(
        tmp_path,
        {
            "parameters": {"region": {"type": "string", "defaultValue": "westeurope"}},
            "resources": [
                {
                    "type": "Microsoft.Resources/deployments",
                    "name": "in",
                    "resourceGroup": "data-rg",
                    "properties": {
                        "mode": "Incremental",
                        "expressionEvaluationOptions": {"scope": "inner"},
                        "parameters": {"where": {"value": "[parameters('region')]"}},
                        "template": nested,
                    },
                },
                {
                    "type": "Microsoft.Resources/deployments",
                    "name": "out",
                    "properties": {
                        "mode": "Incremental",
                        "template": {
                            "resources": [
                                {
                                    "type": "Microsoft.Storage/storageAccounts",
                                    "name": "outer",
                                    "location": "[parameters('region')]",
                                }
                            ]
                        },
                    },
                },
                {
                    "type": "Microsoft.Resources/deployments",
                    "name": "linked",
                    "properties": {"templateLink": {"uri": "https://example.invalid/t.json"}},
                },
            ],
        },
    )
    by_name = {r.name: r for r in resources}
    assert by_name["inner"].location == "westeurope" and "/resourceGroups/data-rg/" in by_name["inner"].id
    assert by_name["outer"].location == "westeurope"


def test_linked_templates_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "$schema": SCHEMA,
                "resources": [
                    {
                        "type": "Microsoft.Resources/deployments",
                        "name": "linked",
                        "properties": {"templateLink": {"uri": "https://example.invalid/t.json"}},
                    }
                ],
            }
        )
    )
    gaps = load_file(path, "t").coverage
    # A published URL is read from here only when a folder and file of its path exist here.
    assert [(g.scope, g.reason) for g in gaps] == [
        (
            "t: module 0 at /resources/0: linked template",
            "https://example.invalid/t.json was not found beside the scanned template; not scanned",
        )
    ]


def test_case_insensitive_property_names_and_positions(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "$schema": SCHEMA,
                "resources": [
                    {
                        "type": "Microsoft.CognitiveServices/accounts",
                        "name": "oai",
                        "location": "East US",
                        "kind": "OpenAI",
                        "properties": {"DISABLELOCALAUTH": False},
                    }
                ],
            },
            indent=2,
        )
    )
    resource = load_file(path, "t").inventory.resources[0]
    assert resource.get("properties.disableLocalAuth") is False
    assert resource.location == "eastus"
    position = resource.origin.position("properties.disableLocalAuth")
    assert position is not None and position.pointer == "/resources/0/properties/DISABLELOCALAUTH"
    assert path.read_text().splitlines()[position.line - 1].strip().startswith('"DISABLELOCALAUTH": false')


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("[and(true(), false())]", False),
        ("[and(reference('x'), false())]", False),
        ("[or(reference('x'), true())]", True),
        ("[or(false(), false())]", False),
        ("[and(true(), true())]", True),
    ],
)
def test_logical_functions_decide_around_unknowns_when_they_can(expression: str, expected: bool) -> None:
    assert evaluate(expression) is expected


def test_logical_functions_stay_unknown_when_the_unknown_decides() -> None:
    assert isinstance(evaluate("[and(true(), reference('x'))]"), Unknown)
    assert isinstance(evaluate("[or(false(), reference('x'))]"), Unknown)


def test_nested_form_diagnostic_settings_are_extension_resources_of_their_target(tmp_path: Path) -> None:
    """Templates still write diagnostic settings as ``<type>/providers/diagnosticSettings``
    named ``<resource>/Microsoft.Insights/<name>``, or as a ``providers/diagnosticSettings``
    child: ARM deploys both as a Microsoft.Insights/diagnosticSettings on the resource, and
    AZAI-501 must see them as it sees a ``scope``. A setting with metrics only still fails."""
    workspace = "/subscriptions/s/resourceGroups/ops/providers/Microsoft.OperationalInsights/workspaces/law"
    logs = {"workspaceId": workspace, "logs": [{"categoryGroup": "allLogs", "enabled": True}]}
    metrics_only = {"workspaceId": workspace, "metrics": [{"category": "AllMetrics", "enabled": True}]}
    account = {"apiVersion": "2024-10-01", "location": "eastus", "sku": {"name": "S0"}, "properties": {}}
    template = {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "contentVersion": "1.0.0.0",
        "resources": [
            {**account, "type": "Microsoft.CognitiveServices/accounts", "name": "speech", "kind": "SpeechServices"},
            {
                "type": "Microsoft.CognitiveServices/accounts/providers/diagnosticSettings",
                "apiVersion": "2021-05-01-preview",
                "name": "speech/Microsoft.Insights/to-law",
                "properties": logs,
            },
            {
                **account,
                "type": "Microsoft.CognitiveServices/accounts",
                "name": "vision",
                "kind": "ComputerVision",
                "resources": [
                    {
                        "type": "providers/diagnosticSettings",
                        "apiVersion": "2021-05-01-preview",
                        "name": "Microsoft.Insights/to-law",
                        "dependsOn": ["vision"],
                        "properties": logs,
                    }
                ],
            },
            {
                **account,
                "type": "Microsoft.CognitiveServices/accounts",
                "name": "translator",
                "kind": "TextTranslation",
            },
            {
                "type": "Microsoft.CognitiveServices/accounts/providers/diagnosticSettings",
                "apiVersion": "2021-05-01-preview",
                "name": "translator/Microsoft.Insights/metrics",
                "properties": metrics_only,
            },
        ],
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(template))
    inventory = load_file(path, "t").inventory
    settings = inventory.of_type("Microsoft.Insights/diagnosticSettings")
    assert sorted(s.id.split("/accounts/", 1)[1] for s in settings) == [
        "speech/providers/Microsoft.Insights/diagnosticSettings/to-law",
        "translator/providers/Microsoft.Insights/diagnosticSettings/metrics",
        "vision/providers/Microsoft.Insights/diagnosticSettings/to-law",
    ]
    result = scan(path, select=["AZAI-501"])
    assert {f.resource.name for f in result.findings} == {"translator"}
    assert {r.name for _, r in result.passed} == {"speech", "vision"}
    assert not result.undetermined
