"""Values fixed at deployment, and resources deployed more than once (issue 37, items 1, 2, 7 and
the secure-default part of 3).

``utcNow()`` and ``newGuid()`` are drawn once per deployment, in a parameter's default: the
parameter is one symbolic value (``{suffix}``), so names built from it link resources across
modules, in ``resourceId()`` and in ``reference()``, while a rule that the value decides stays
undetermined. A resource id deployed twice is judged in the state ARM leaves it in. Names that
cannot be evaluated are shown readably. Each behaviour has a minimal template in fixtures/bicep/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.model.unknown import Unknown
from scanner.sources import load_file
from scanner.sources.arm.evaluator import Evaluator, Placement, Scope
from tests.conftest import FIXTURES, run_cli
from tests.test_bicep import outcomes, scan

BICEP = FIXTURES / "bicep"


def evaluate(expression: str, parameters: dict[str, Any], supplied: dict[str, Any] | None = None) -> Any:
    template = {"parameters": parameters}
    return Evaluator(Scope(template, supplied or {}, Placement())).value(expression)


STAMPS = {
    "suffix": {"type": "string", "defaultValue": "[utcNow('yyMMddHHmm')]"},
    "stamp": {"type": "string", "defaultValue": "[utcNow('yyMMddHHmm')]"},
    "token": {"type": "string", "defaultValue": "[toLower(uniqueString(subscription().id, utcNow()))]"},
    "runId": {"type": "string", "defaultValue": "[newGuid()]"},
    "tags": {"type": "object", "defaultValue": {"team": "ai", "created": "[utcNow()]", "again": "[utcNow()]"}},
}


@pytest.mark.parametrize(
    ("expression", "symbol"),
    [
        ("[parameters('suffix')]", "{suffix}"),
        ("[parameters('token')]", "{token}"),
        ("[parameters('runId')]", "{runId}"),
        ("[format('srch-{0}', parameters('suffix'))]", "srch-{suffix}"),
        # Inside an object, each call is its own value, named after the parameter and the call.
        ("[parameters('tags').created]", "{tags#utcNow}"),
        ("[parameters('tags').again]", "{tags#utcNow1}"),
    ],
)
def test_a_parameter_drawn_at_deployment_is_one_symbol(expression: str, symbol: str) -> None:
    value = evaluate(expression, STAMPS)
    assert isinstance(value, Unknown) and value.symbol == symbol


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # The same parameter is the same value wherever it is used ...
        ("[equals(parameters('suffix'), parameters('suffix'))]", True),
        ("[equals(format('st{0}', parameters('token')), format('st{0}', parameters('token')))]", True),
        # ... and the known text of a name built from it decides what it can be.
        ("[empty(format('srch-{0}', parameters('suffix')))]", False),
        ("[equals(format('srch-{0}', parameters('suffix')), '')]", False),
        ("[equals(format('srch-{0}', parameters('suffix')), 'kv-1')]", False),
        ("[equals(format('srch-{0}-x', parameters('suffix')), 'srch-y')]", False),
        ("[equals(format('srch-{0}', parameters('suffix')), 3)]", False),
        ("[parameters('tags').team]", "ai"),
    ],
)
def test_what_a_deployment_value_decides_is_known(expression: str, expected: Any) -> None:
    assert evaluate(expression, STAMPS) == expected


@pytest.mark.parametrize(
    "expression",
    [
        # Two calls are never known to be equal (ARM: "a different value each time it's called").
        "[equals(parameters('suffix'), parameters('stamp'))]",
        "[equals(parameters('tags').created, parameters('tags').again)]",
        # The value itself decides nothing.
        "[empty(parameters('runId'))]",
        "[equals(parameters('suffix'), '2501011200')]",
        "[equals(format('srch-{0}', parameters('suffix')), 'srch-2501011200')]",
        "[empty(format('{0}', parameters('suffix')))]",
        # concat() of unknowns alone may be of arrays: not known to be a string.
        "[equals(concat(parameters('suffix'), parameters('stamp')), createArray())]",
        # ARM allows utcNow() and newGuid() only in a parameter's default.
        "[utcNow()]",
        "[newGuid()]",
    ],
)
def test_what_a_deployment_value_does_not_decide_stays_unknown(expression: str) -> None:
    value = evaluate(expression, STAMPS)
    assert isinstance(value, Unknown)
    if expression.startswith(("[utcNow", "[newGuid")):
        assert value.symbol is None


def test_a_value_given_for_the_parameter_is_that_value() -> None:
    assert evaluate("[format('srch-{0}', parameters('suffix'))]", STAMPS, {"suffix": "2501011200"}) == "srch-2501011200"


def test_deployment_and_deployer_are_one_value_each_per_deployment() -> None:
    mode = evaluate("[deployment().properties.mode]", {})
    assert isinstance(mode, Unknown) and mode.symbol == "{deployment()}.properties.mode"
    assert evaluate("[equals(deployment().location, deployment().location)]", {}) is True
    assert evaluate("[equals(deployer().objectId, deployer().objectId)]", {}) is True
    assert isinstance(evaluate("[equals(deployer().objectId, 'someone')]", {}), Unknown)


def test_foundry_names_drawn_at_deployment_link_across_modules() -> None:
    """Every name comes from utcNow() or newGuid(); before, each was an expression nobody could
    evaluate: a false "no private endpoint" on the account (AZAI-108), its model deployment
    undetermined (AZAI-305: "the deployment's account is not among the scanned resources"), and
    the Search service's findings undetermined on a condition fed by a module output."""
    loaded = load_file(BICEP / "deployment-time/main.json", "main.json")
    assert sorted((r.type, r.name) for r in loaded.inventory.resources) == [
        ("Microsoft.CognitiveServices/accounts", "aif-{resourceToken}"),
        ("Microsoft.CognitiveServices/accounts", "aif-{resourceToken}-batch"),
        ("Microsoft.CognitiveServices/accounts/deployments", "aif-{resourceToken}/gpt-4o"),
        ("Microsoft.Network/privateEndpoints", "pe-{resourceToken}"),
        ("Microsoft.Search/searchServices", "srch-{suffix}"),
    ]
    [search] = [r for r in loaded.inventory.resources if r.type == "Microsoft.Search/searchServices"]
    # reference(resourceId(..., name from utcNow), ..., 'full').location finds the endpoint.
    assert search.location == "swedencentral" and search.origin.condition is None
    result = scan("deployment-time/main.json", ["AZAI-101", "AZAI-108", "AZAI-115", "AZAI-305"])
    assert outcomes(result, "AZAI-108", by_declaration=True) == {
        "fail": {"batchAccount"},  # it has no private endpoint
        "pass": {"foundry/account"},
        "undetermined": set(),
    }
    assert outcomes(result, "AZAI-305", by_declaration=True) == {
        "fail": {"foundry/gpt"},  # GlobalStandard on an account in Sweden
        "pass": set(),
        "undetermined": set(),
    }
    assert sorted((f.severity.label, f.violation.path) for f in result.findings if f.check.id == "AZAI-115") == [
        ("high", "properties.disableLocalAuth"),
        ("high", "properties.publicNetworkAccess"),
        ("medium", "properties.encryptionWithCmk.enforcement"),
    ]
    # A value drawn at deployment that decides a rule stays unknown.
    assert outcomes(result, "AZAI-101", by_declaration=True) == {
        "fail": set(),
        "pass": {"foundry/account"},
        "undetermined": {"batchAccount"},
    }
    [undetermined] = result.undetermined
    assert undetermined.reason == (
        "properties.disableLocalAuth is unknown (parameter 'runId' defaults to a value chosen at deployment)"
    )


def test_the_state_arm_ends_with_is_judged_when_a_resource_is_declared_twice() -> None:
    result = scan("redeclared/main.json", ["AZAI-115"])
    assert outcomes(result, "AZAI-115", by_declaration=True) == {
        # srch-shared: the module's hardened declaration depends on the bare one and replaces it;
        # srch-undone: a later bare declaration replaces the hardened one;
        # srch-race: nothing orders the two, so both are judged.
        "fail": {"hardening/search", "undo/0", "raceSearch"},
        "pass": {"race/search", "maybeHardening/search"},
        # srch-maybe: the bare one stands only if the hardening module is not deployed.
        "undetermined": {"maybeSearch"},
    }
    [cmk] = [f for f in result.findings if f.resource.name == "srch-shared"]
    assert cmk.violation.path == "properties.encryptionWithCmk.enforcement"
    assert cmk.resource.origin.pointer == "/resources/hardening/properties/template/resources/search"
    assert [u.reason for u in result.undetermined] == [
        "deployed only if the later declaration at /resources/maybeHardening/properties/template/resources/search "
        "is not deployed (it is if [parameters('harden')] is true), which is not known before deploy"
    ]
    assert [w.split(": ", 1)[1] for w in result.warnings] == [
        "Microsoft.Search/searchServices srch-race is declared at /resources/raceSearch and at "
        "/resources/race/properties/template/resources/search with no dependsOn between them; ARM may deploy "
        "either last, so both are judged"
    ]


AZD_SECRETS = {"AZURE_OPENAI_API_KEY": "s3cr3t-key", "AZURE_SEARCH_QUERY": "s3cr3t-query"}


def test_a_secure_parameter_azd_leaves_out_takes_its_empty_default_in_conditions() -> None:
    """``${AZURE_OPENAI_API_KEY}`` is a credential's name, never read: azd leaves the parameter
    out and its '' default applies, as the warning says, so the conditions on it are decided.
    A secure value the environment does give is never read: its condition stays unknown."""
    result = scan("azd-secure-default/main.json", ["AZAI-101"], "azd-secure-default/main.parameters.json", AZD_SECRETS)
    assert outcomes(result, "AZAI-101") == {"fail": {"oai-own"}, "pass": set(), "undetermined": {"oai-search"}}
    [line] = [w for w in result.warnings if "azd placeholders" in w]
    assert "${AZURE_OPENAI_API_KEY} (openaiApiKey) gives no value, so the template's default applies" in line
    assert "s3cr3t" not in line + "".join(u.reason for u in result.undetermined)


def test_names_that_cannot_be_evaluated_read_the_same_in_every_report() -> None:
    """A module's name read from its parameters, and pools from an array nobody knows: shown as
    what each part is read from, never as the expression, and never cut inside it."""
    loaded = load_file(BICEP / "unresolved-names/modules.json", "modules.json")
    assert sorted(r.name for r in loaded.inventory.resources) == [
        "{hubA:name}",
        "{hubA:name}/{hubA:pools[…].name}",
        "{hubB:name}",
        "{hubB:name}/{hubB:pools[…].name}",
    ]
    # The pools still belong to their module's workspace, whose parameter is one value.
    computes = [r for r in loaded.inventory.resources if r.type.endswith("/computes")]
    assert sorted(str(r.parent_id).rsplit("/", 1)[-1] for r in computes) == ["{hubA:name}", "{hubB:name}"]
    workspaces = {"{hubA:name}", "{hubB:name}"}
    pools = {"{hubA:name}/{hubA:pools[…].name}", "{hubB:name}/{hubB:pools[…].name}"}
    result = scan("unresolved-names/modules.json", ["AZAI-103", "AZAI-201"])
    assert outcomes(result, "AZAI-103") == {"fail": workspaces, "pass": set(), "undetermined": set()}
    assert outcomes(result, "AZAI-201") == {"fail": set(), "pass": set(), "undetermined": pools}
    # The HTML report counts undetermined pairs without naming their resources.
    for fmt, names in {
        "json": workspaces | pools,
        "sarif": workspaces | pools,
        "markdown": workspaces | pools,
        "junit": workspaces | pools,
        "text": workspaces | pools,
        "html": workspaces,
    }.items():
        done = run_cli(
            "scan",
            str(BICEP / "unresolved-names/modules.json"),
            "--select",
            "AZAI-103,AZAI-201",
            "--format",
            fmt,
            "--fail-on",
            "none",
        )
        assert done.returncode == 0, done.stderr
        report = json.dumps(json.loads(done.stdout), ensure_ascii=False) if fmt in ("json", "sarif") else done.stdout
        assert {n for n in names if n in report} == names, fmt
        assert "[format(" not in report, fmt


def test_each_module_copy_draws_its_own_value(tmp_path: Path) -> None:
    """A module's own ``utcNow()`` default is drawn in each copy of the module: names built from
    it link within a copy (the model deployment finds its account), never across copies."""
    module = {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "contentVersion": "1.0.0.0",
        "parameters": {"suffix": {"type": "string", "defaultValue": "[utcNow()]"}},
        "variables": {"account": "[format('oai-{0}', parameters('suffix'))]"},
        "resources": [
            {
                "type": "Microsoft.CognitiveServices/accounts",
                "apiVersion": "2024-10-01",
                "name": "[variables('account')]",
                "location": "swedencentral",
                "kind": "OpenAI",
                "tags": {"deployment": "[deployment().properties.templateHash]"},
            },
            {
                "type": "Microsoft.CognitiveServices/accounts/deployments",
                "apiVersion": "2024-10-01",
                "name": "[format('{0}/gpt-4o', variables('account'))]",
                "sku": {"name": "GlobalStandard", "capacity": 1},
            },
        ],
    }
    template = {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "contentVersion": "1.0.0.0",
        "resources": [
            {
                "type": "Microsoft.Resources/deployments",
                "apiVersion": "2022-09-01",
                "name": "[format('region-{0}', copyIndex())]",
                "copy": {"name": "regions", "count": 2},
                "properties": {
                    "expressionEvaluationOptions": {"scope": "inner"},
                    "mode": "Incremental",
                    "template": module,
                },
            }
        ],
    }
    path = tmp_path / "main.json"
    path.write_text(json.dumps(template))
    resources = load_file(path, "main.json").inventory.resources
    assert sorted(r.id.split("/providers/", 1)[1] for r in resources) == [
        "Microsoft.CognitiveServices/accounts/oai-{0[0]:suffix}",
        "Microsoft.CognitiveServices/accounts/oai-{0[0]:suffix}/deployments/gpt-4o",
        "Microsoft.CognitiveServices/accounts/oai-{0[1]:suffix}",
        "Microsoft.CognitiveServices/accounts/oai-{0[1]:suffix}/deployments/gpt-4o",
    ]
    hashes = sorted(str(r.tags["deployment"]) for r in resources if "deployment" in r.tags)
    assert hashes == ["{0[0]:deployment()}.properties.templateHash", "{0[1]:deployment()}.properties.templateHash"]


def test_a_format_string_drawn_at_deployment_is_not_the_text_it_formats() -> None:
    built = evaluate("[format(parameters('suffix'), 'x')]", STAMPS)
    assert isinstance(built, Unknown) and built.symbol not in (None, "{suffix}")
    assert isinstance(evaluate("[equals(format(parameters('suffix'), 'x'), parameters('suffix'))]", STAMPS), Unknown)
