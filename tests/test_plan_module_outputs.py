"""azapi children whose ``parent_id`` is a module output (issue 19, cause 3): followed through
``configuration…module_calls[NAME].module.outputs[OUTPUT].expression`` inside that module
instance, nested modules and ``for_each`` keys too; what cannot be followed keeps a well-formed
id with placeholders, so it still has its type and its own name."""

from __future__ import annotations

import json
from typing import Any

from scanner.model.jsondoc import parse_document
from scanner.sources.terraform.plan import read_plan

ENDPOINTS = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints"
SUB = "/subscriptions/{subscription}/resourceGroups"


def workspace(address: str, name: str, module: str) -> dict[str, Any]:
    """A workspace being created: its id is known only after apply."""
    return {
        "address": address,
        "module_address": module,
        "mode": "managed",
        "type": "azurerm_machine_learning_workspace",
        "name": address.rsplit(".", 1)[-1].split("[")[0],
        "change": {
            "actions": ["create"],
            "after": {"name": name, "resource_group_name": "rg-ml", "location": "westeurope"},
            "after_unknown": {"id": True},
        },
    }


def endpoint(name: str) -> dict[str, Any]:
    return {
        "address": f"azapi_resource.{name}",
        "mode": "managed",
        "type": "azapi_resource",
        "name": name,
        "change": {
            "actions": ["create"],
            "after": {"type": f"{ENDPOINTS}@2024-04-01", "name": name, "body": {"properties": {"authMode": "Key"}}},
            "after_unknown": {"parent_id": True, "id": True},
        },
    }


def configured_endpoint(name: str, parent: str) -> dict[str, Any]:
    call = parent.rsplit(".", 1)[0]
    return {
        "address": f"azapi_resource.{name}",
        "mode": "managed",
        "type": "azapi_resource",
        "name": name,
        "expressions": {"parent_id": {"references": [parent, call]}, "name": {"constant_value": name}},
    }


def output(*refs: str) -> dict[str, Any]:
    return {"expression": {"references": list(refs)}}


WS = {"address": "azurerm_machine_learning_workspace.this", "mode": "managed", "expressions": {}}
HUB = {"address": "azurerm_machine_learning_workspace.hub", "mode": "managed", "expressions": {}}
PARENTS = {
    "direct": "module.ml.workspace_id",
    "whole": "module.ml.workspace.id",  # output = the resource itself, .id taken after
    "nested": "module.ml.hub_id",  # output = module.inner.id
    "keyed": 'module.team["a"].workspace_id',
    "lost": "module.missing.id",
    "loop": "module.loop.out",  # out = var.x, and the call passes x = module.loop.out
}


def plan() -> dict[str, Any]:
    this_id = ("azurerm_machine_learning_workspace.this.id", "azurerm_machine_learning_workspace.this")
    return {
        "format_version": "1.2",
        "resource_changes": [
            workspace("module.ml.azurerm_machine_learning_workspace.this", "ws-ml", "module.ml"),
            workspace("module.ml.module.inner.azurerm_machine_learning_workspace.hub", "hub", "module.ml.module.inner"),
            workspace('module.team["a"].azurerm_machine_learning_workspace.this', "ws-a", 'module.team["a"]'),
            *(endpoint(name) for name in PARENTS),
        ],
        "configuration": {
            "root_module": {
                "resources": [configured_endpoint(name, parent) for name, parent in PARENTS.items()],
                "module_calls": {
                    "ml": {
                        "source": "./ml",
                        "module": {
                            "resources": [WS],
                            "outputs": {
                                "workspace_id": output(*this_id),
                                "workspace": output("azurerm_machine_learning_workspace.this"),
                                "hub_id": output("module.inner.id", "module.inner"),
                            },
                            "module_calls": {
                                "inner": {
                                    "source": "./inner",
                                    "module": {
                                        "resources": [HUB],
                                        "outputs": {
                                            "id": output(
                                                "azurerm_machine_learning_workspace.hub.id",
                                                "azurerm_machine_learning_workspace.hub",
                                            )
                                        },
                                    },
                                }
                            },
                        },
                    },
                    "team": {
                        "source": "./ml",
                        "for_each_expression": {"constant_value": {"a": {}}},
                        "module": {"resources": [WS], "outputs": {"workspace_id": output(*this_id)}},
                    },
                    "loop": {
                        "source": "./loop",
                        "expressions": {"x": {"references": ["module.loop.out", "module.loop"]}},
                        "module": {"outputs": {"out": output("var.x")}},
                    },
                },
            }
        },
    }


def test_a_parent_id_from_a_module_output_is_resolved_through_the_module() -> None:
    resources, _ = read_plan(parse_document(json.dumps(plan()), "plan.json"))
    ids = {r.origin.address: r.id for r in resources if r.type == ENDPOINTS}
    workspaces = f"{SUB}/rg-ml/providers/Microsoft.MachineLearningServices/workspaces"
    unresolved = "/subscriptions/{subscription}/resourceGroups/{unresolved}/providers/" + (
        "Microsoft.MachineLearningServices/workspaces/{unresolved}/onlineEndpoints"
    )
    assert ids == {
        "azapi_resource.direct": f"{workspaces}/ws-ml/onlineEndpoints/direct",
        "azapi_resource.whole": f"{workspaces}/ws-ml/onlineEndpoints/whole",
        "azapi_resource.nested": f"{workspaces}/hub/onlineEndpoints/nested",
        "azapi_resource.keyed": f"{workspaces}/ws-a/onlineEndpoints/keyed",
        "azapi_resource.lost": f"{unresolved}/lost",
        "azapi_resource.loop": f"{unresolved}/loop",
    }
    names = {r.origin.address: r.name for r in resources if r.type == ENDPOINTS}
    assert names["azapi_resource.direct"] == "ws-ml/direct"
    assert names["azapi_resource.lost"] == "{unresolved}/lost"  # its type and own name, for matching
