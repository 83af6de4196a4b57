"""The typed boundary of ARM templates, compiled Bicep, parameters files and what-if results.

Each structural value a reader takes from these documents is checked for the JSON type ARM
requires where it is read (`scanner.model.jsondoc.expect`, as the Terraform plan reader does).
A value of the wrong type is refused with exit 2 and one line naming the file, the JSON pointer
and what was expected; before, each of these shapes scanned as a template with no resources,
a silent all-clear on input ARM itself rejects. Expression strings stay legal wherever ARM lets
an expression produce the value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.sources import load_file
from tests.conftest import run_cli

SCHEMA = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"
STORAGE = {
    "type": "Microsoft.Storage/storageAccounts",
    "apiVersion": "2023-05-01",
    "name": "st",
    "location": "eastus",
    "properties": {},
}


def _template(resources: Any = None, **sections: Any) -> dict[str, Any]:
    """A template with one storage account, or ``resources``, and the given sections."""
    return {"$schema": SCHEMA, "contentVersion": "1.0.0.0", **sections, "resources": resources or [STORAGE]}


def _storage(**members: Any) -> list[dict[str, Any]]:
    """The storage account with ``members`` replaced."""
    return [{**STORAGE, **members}]


def _whatif(change: Any, wrapped: bool = True) -> dict[str, Any]:
    """A what-if result with one change: the REST shape (``properties.changes``) or the CLI's."""
    return {"status": "Succeeded", "properties": {"changes": [change]}} if wrapped else {"changes": [change]}


CHANGE = {
    "changeType": "Create",
    "resourceId": "/subscriptions/s/resourceGroups/r/providers/Microsoft.Storage/storageAccounts/a",
    "after": {"type": "Microsoft.Storage/storageAccounts", "name": "a", "properties": {}},
}

NESTED = {
    "type": "Microsoft.Resources/deployments",
    "apiVersion": "2022-09-01",
    "name": "inner",
    "properties": {
        "mode": "Incremental",
        "expressionEvaluationOptions": {"scope": "inner"},
        "template": {"$schema": SCHEMA, "contentVersion": "1.0.0.0", "resources": 5},
    },
}

BAD_SHAPES = [
    ("resources-number", _template(5), "/resources: expected an array, found a number"),
    (
        "symbolic-resources-number",
        {**_template(5), "languageVersion": "2.0"},
        "/resources: expected an object, found a number",
    ),
    ("resource-string", _template(["x"]), "/resources/0: expected an object, found a string"),
    ("type-number", _template(_storage(type=5)), "/resources/0/type: expected a string, found a number"),
    ("parameters-string", _template(parameters="x"), "/parameters: expected an object, found a string"),
    ("variables-list", _template(variables=[1]), "/variables: expected an object, found an array"),
    ("outputs-list", _template(outputs=[1]), "/outputs: expected an object, found an array"),
    ("output-number", _template(outputs={"o": 1}), "/outputs/o: expected an object, found a number"),
    ("functions-object", _template(functions={}), "/functions: expected an array, found an object"),
    (
        "param-type-number",
        _template(parameters={"p": {"type": 5}}),
        "/parameters/p/type: expected a string, found a number",
    ),
    ("param-string", _template(parameters={"p": "x"}), "/parameters/p: expected an object, found a string"),
    ("copy-string", _template(_storage(copy="x")), "/resources/0/copy: expected an object, found a string"),
    (
        "copy-count-list",
        _template(_storage(copy={"name": "c", "count": [2]})),
        "/resources/0/copy/count: expected a number, found an array",
    ),
    (
        "copy-name-number",
        _template(_storage(copy={"name": 1, "count": 2})),
        "/resources/0/copy/name: expected a string, found a number",
    ),
    (
        "dependsOn-number",
        _template(_storage(dependsOn=5)),
        "/resources/0/dependsOn: expected an array, found a number",
    ),
    (
        "dependsOn-item-number",
        _template(_storage(dependsOn=["a", 5])),
        "/resources/0/dependsOn/1: expected a string, found a number",
    ),
    (
        "condition-list",
        _template(_storage(condition=[1])),
        "/resources/0/condition: expected true or false, found an array",
    ),
    ("name-object", _template(_storage(name={"a": 1})), "/resources/0/name: expected a string, found an object"),
    (
        "apiVersion-number",
        _template(_storage(apiVersion=1)),
        "/resources/0/apiVersion: expected a string, found a number",
    ),
    (
        "properties-number",
        _template(_storage(properties=5)),
        "/resources/0/properties: expected an object, found a number",
    ),
    ("tags-list", _template(_storage(tags=["a"])), "/resources/0/tags: expected an object, found an array"),
    (
        "child-resources-object",
        _template(_storage(resources={})),
        "/resources/0/resources: expected an array, found an object",
    ),
    (
        "symbolic-copy-string",
        {**_template({"st": {**STORAGE, "copy": "x"}}), "languageVersion": "2.0"},
        "/resources/st/copy: expected an object, found a string",
    ),
    (
        "nested-template-resources-number",
        _template([NESTED]),
        "/resources/0/properties/template/resources: expected an array, found a number",
    ),
    ("whatif-change-string", _whatif("x"), "/properties/changes/0: expected an object, found a string"),
    (
        "whatif-after-list",
        _whatif({**CHANGE, "after": [1]}),
        "/properties/changes/0/after: expected an object, found an array",
    ),
    (
        "whatif-before-string",
        _whatif({**CHANGE, "before": "x"}),
        "/properties/changes/0/before: expected an object, found a string",
    ),
    (
        "whatif-changeType-number",
        _whatif({**CHANGE, "changeType": 5}, wrapped=False),
        "/changes/0/changeType: expected a string, found a number",
    ),
    (
        "whatif-resourceId-list",
        _whatif({**CHANGE, "resourceId": ["x"]}, wrapped=False),
        "/changes/0/resourceId: expected a string, found an array",
    ),
]


def _refused(path: Path, *options: str) -> str:
    """The one stderr line of a scan that must exit 2."""
    done = run_cli("scan", str(path), "--fail-on", "none", *options)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(("name", "document", "expected"), BAD_SHAPES, ids=[c[0] for c in BAD_SHAPES])
def test_a_value_of_the_wrong_json_type_is_refused_with_its_pointer(
    tmp_path: Path, name: str, document: dict[str, Any], expected: str
) -> None:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert _refused(path) == f"azai: error: {path}: {expected}"


def test_a_parameters_file_entry_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    template = tmp_path / "main.json"
    template.write_text(json.dumps(_template(parameters={"p": {"type": "string"}})), encoding="utf-8")
    parameters = tmp_path / "main.parameters.json"
    parameters.write_text(json.dumps({"parameters": {"p": "x"}}), encoding="utf-8")
    line = _refused(template, "--parameters", str(parameters))
    assert line == f"azai: error: {parameters}: /parameters/p: expected an object, found a string"


def test_expression_strings_where_arm_allows_them_still_scan(tmp_path: Path) -> None:
    """``properties``, ``tags``, ``sku`` and ``identity`` may each be one expression (Bicep
    writes ``"properties": "[union(...)]"``), ``condition`` and a copy ``count`` too; null is
    taken as absent."""
    resource = {
        **STORAGE,
        "name": "[format('st{0}', copyIndex())]",
        "copy": {"name": "accounts", "count": "[length(variables('names'))]"},
        "condition": "[equals(parameters('deploy'), 'yes')]",
        "properties": "[variables('props')]",
        "tags": "[createObject('team', 'ai')]",
        "sku": "[variables('sku')]",
        "identity": "[createObject('type', 'SystemAssigned')]",
        "dependsOn": [],
        "kind": None,
    }
    template = _template(
        [resource],
        parameters={"deploy": {"type": "string", "defaultValue": "yes"}},
        variables={"names": ["a", "b"], "props": {"minimumTlsVersion": "TLS1_2"}, "sku": {"name": "Standard_LRS"}},
    )
    path = tmp_path / "expressions.json"
    path.write_text(json.dumps(template), encoding="utf-8")
    resources = load_file(path, str(path)).inventory.resources
    assert [r.name for r in resources] == ["st0", "st1"]
    body = resources[0].body
    assert body["properties"] == {"minimumTlsVersion": "TLS1_2"}
    assert body["tags"] == {"team": "ai"}
    assert body["sku"] == {"name": "Standard_LRS"}
    assert body["identity"] == {"type": "SystemAssigned"}
