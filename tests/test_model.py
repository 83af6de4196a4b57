"""The model: Unknown semantics, paths, locations, ids and inventory relationships."""

from __future__ import annotations

import json

import pytest

from scanner.engine.results import fingerprint
from scanner.model.jsondoc import Document
from scanner.model.resources import Inventory, Origin, Resource, get_path, normalize_location, parse_resource_id
from scanner.model.unknown import Unknown, UnknownValueError, known


def test_unknown_refuses_truth_and_comparison() -> None:
    value = Unknown("known only after apply", path="properties.authMode")
    with pytest.raises(UnknownValueError, match=r"properties\.authMode is unknown"):
        bool(value)
    with pytest.raises(UnknownValueError):
        _ = value == "Key"
    with pytest.raises(UnknownValueError):
        _ = "Key" in ("AADToken", value)
    with pytest.raises(UnknownValueError):
        known(value)
    assert known("x") == "x"


def test_symbolic_unknowns_equal_themselves_only() -> None:
    a = Unknown("rg region", symbol="resourceGroup().location")
    b = Unknown("rg region", symbol="resourceGroup().location")
    assert a == b
    with pytest.raises(UnknownValueError):
        _ = a == Unknown("other", symbol="resourceGroup(x).location")


def test_get_path_is_case_insensitive_and_labels_unknowns() -> None:
    body = {"Properties": {"Scale": [{"Min": 1}], "later": Unknown("after apply")}}
    assert get_path(body, "properties.scale.0.min") == 1
    assert get_path(body, "properties.missing.deeper") is None
    unknown = get_path(body, "properties.later.inner")
    assert isinstance(unknown, Unknown) and unknown.path == "properties.later.inner"


@pytest.mark.parametrize(
    ("raw", "normal"),
    [("East US", "eastus"), ("westeurope", "westeurope"), ("West US 2", "westus2"), (None, None)],
)
def test_locations_are_normalized(raw: str | None, normal: str | None) -> None:
    assert normalize_location(raw) == normal


def test_resource_ids_parse_children_and_case() -> None:
    parsed = parse_resource_id(
        "/subscriptions/s/resourcegroups/G/providers/Microsoft.MachineLearningServices/workspaces/ws/computes/c"
    )
    assert (parsed.subscription, parsed.resource_group, parsed.resource_type, parsed.name_chain) == (
        "s",
        "G",
        "Microsoft.MachineLearningServices/workspaces/computes",
        "ws/c",
    )


def _resource(rid: str, rtype: str, name: str, body: dict[str, object]) -> Resource:
    return Resource(id=rid, type=rtype, name=name, body=body, origin=Origin(kind="arm", file=None))


def test_inventory_relationships_and_inline_pools() -> None:
    base = "/subscriptions/s/resourceGroups/g/providers"
    cluster = _resource(
        f"{base}/Microsoft.ContainerService/managedClusters/aks",
        "Microsoft.ContainerService/ManagedClusters",
        "aks",
        {
            "location": "East US",
            "properties": {
                "agentPoolProfiles": [
                    {"name": "sys", "vmSize": "Standard_D4s_v5"},
                    {"name": "gpu", "vmSize": "Standard_NC6s_v3", "mode": "User"},
                ]
            },
        },
    )
    explicit = _resource(
        f"{base}/Microsoft.ContainerService/managedClusters/aks/agentPools/gpu",
        "Microsoft.ContainerService/managedClusters/agentPools",
        "aks/gpu",
        {"properties": {"vmSize": "Standard_NC6s_v3", "mode": "User", "nodeTaints": ["a=b:NoSchedule"]}},
    )
    storage = _resource(
        f"{base}/Microsoft.Storage/storageAccounts/st",
        "Microsoft.Storage/storageAccounts",
        "st",
        {"location": "eastus"},
    )
    workspace = _resource(
        f"{base}/Microsoft.MachineLearningServices/workspaces/ws",
        "Microsoft.MachineLearningServices/workspaces",
        "ws",
        {
            "location": "eastus",
            "properties": {
                "storageAccount": "/SUBSCRIPTIONS/other/resourceGroups/G/providers/microsoft.storage/storageaccounts/ST"
            },
        },
    )
    compute = _resource(
        f"{base}/Microsoft.MachineLearningServices/workspaces/ws/computes/gpu",
        "Microsoft.MachineLearningServices/workspaces/computes",
        "ws/gpu",
        {"properties": {"computeType": "AmlCompute"}},
    )
    inventory = Inventory([cluster, explicit, storage, workspace, compute])
    pools = {p.name: p for p in inventory.cluster_pools(cluster)}
    assert set(pools) == {"aks/sys", "aks/gpu"}
    assert pools["aks/gpu"] is explicit  # the declared pool wins over its inline profile
    assert pools["aks/sys"].get("properties.mode") == "System"  # AKS makes the first pool System
    assert inventory.pool_cluster(pools["aks/sys"]) is cluster
    assert inventory.workspace_dependency(workspace, "properties.storageAccount", "storage account") is storage
    assert inventory.workspace_computes(workspace) == [compute]
    assert inventory.parent(compute) is workspace
    assert cluster.type == "Microsoft.ContainerService/managedClusters"


def test_positions_resolve_pointers_in_documents() -> None:
    text = json.dumps({"resources": [{"type": "t", "properties": {"vmSize": "x"}}]}, indent=2)
    doc = Document("f.json", text, json.loads(text))
    position = doc.position("/resources/0", ("properties", "VMSIZE"))
    assert position.pointer == "/resources/0/properties/vmSize"
    assert text.splitlines()[position.line - 1][position.column - 1 :].startswith('"x"')


def test_a_name_with_a_lone_surrogate_still_has_a_fingerprint() -> None:
    """A server may name a resource with a lone surrogate; its findings still need a stable key."""
    group = "/subscriptions/s/resourceGroups/g/providers/Microsoft.CognitiveServices/accounts/"
    odd = _resource(group + "oai\ud800", "Microsoft.CognitiveServices/accounts", "oai\ud800", {})
    plain = _resource(group + "oai", "Microsoft.CognitiveServices/accounts", "oai", {})
    first = fingerprint("AZAI-101", odd, "properties.disableLocalAuth")
    assert first == fingerprint("AZAI-101", odd, "properties.disableLocalAuth")
    assert first != fingerprint("AZAI-101", plain, "properties.disableLocalAuth")
