"""Peer notes say where azai and a peer rule decide differently, so that a team replacing the
peer knows which of its results will change. A note that said "agrees" while the two differ
(issue 38) misled exactly that team; these tests pin the differences found by reading the peers'
own rule text and tests.

Each substance case scans a tiny ARM template on which azai and the peer disagree, asserts azai's
verdict exactly, and asserts the note says the peer decides otherwise: were azai's behaviour to
change, the verdict assertion fails, and were the note to drift back to "agrees", the note
assertion fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checks._common import AZURE_POLICY, CHECKOV, PSRULE
from scanner.engine.registry import load_checks
from tests.conftest import scan

SCHEMA = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"
GPU_SIZE = "Standard_NC24ads_A100_v4"


def _resource(type_: str, name: str, properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": type_,
        "apiVersion": "2024-04-01",
        "name": name,
        "location": "eastus",
        **extra,
        "properties": properties,
    }


def _workspace(**dependencies: tuple[str, str]) -> dict[str, Any]:
    """A workspace naming its dependencies (``storageAccount=(type, name)``) by resourceId(), as
    a template does."""
    properties = {path: f"[resourceId('{type_}', '{name}')]" for path, (type_, name) in dependencies.items()}
    return _resource(
        "Microsoft.MachineLearningServices/workspaces",
        "ws",
        {**properties, "systemDatastoresAuthMode": "identity"},
        identity={"type": "SystemAssigned"},
    )


# Storage whose allowBlobPublicAccess is absent: Azure has defaulted it to false since 2023, so
# azai passes; PSRule's Azure.Storage.BlobPublicAccess requires it to equal false.
STORAGE_ESTATE = [
    _resource("Microsoft.Storage/storageAccounts", "stdata", {"allowSharedKeyAccess": False}, kind="StorageV2"),
    _workspace(storageAccount=("Microsoft.Storage/storageAccounts", "stdata")),
]
# A GPU cluster with Entra integration that leaves enableRBAC out, which AKS enables by default:
# azai passes; PSRule's Azure.AKS.UseRBAC requires enableRBAC to equal true.
CLUSTER_ESTATE = [
    _resource(
        "Microsoft.ContainerService/managedClusters",
        "aks-gpu",
        {
            "agentPoolProfiles": [
                {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v3", "count": 1},
                {"name": "gpu", "mode": "User", "vmSize": GPU_SIZE, "count": 1, "nodeTaints": ["sku=gpu:NoSchedule"]},
            ],
            "aadProfile": {"managed": True, "enableAzureRBAC": True},
            "disableLocalAccounts": True,
            "networkProfile": {"networkPlugin": "azure", "networkPolicy": "azure"},
        },
        identity={"type": "SystemAssigned"},
    )
]
# A free Search service, which cannot have a managed identity: azai exempts it; PSRule's
# Azure.Search.ManagedIdentity fails it (its test case search-D).
SEARCH_ESTATE = [
    _resource(
        "Microsoft.Search/searchServices",
        "srch-free",
        {"disableLocalAuth": True, "publicNetworkAccess": "Disabled"},
        sku={"name": "free"},
    )
]
# A workspace's Basic registry, open to all networks: azai fails it; PSRule's Azure.ACR.Firewall
# judges Premium registries only and gives it no result.
REGISTRY_ESTATE = [
    _resource("Microsoft.ContainerRegistry/registries", "acrbasic", {"adminUserEnabled": False}, sku={"name": "Basic"}),
    _resource("Microsoft.KeyVault/vaults", "kv-private", {"publicNetworkAccess": "Disabled"}),
    _workspace(
        keyVault=("Microsoft.KeyVault/vaults", "kv-private"),
        containerRegistry=("Microsoft.ContainerRegistry/registries", "acrbasic"),
    ),
]

SUBSTANCE_CASES = [
    pytest.param(
        "AZAI-111",
        STORAGE_ESTATE,
        {},
        "Azure.Storage.BlobPublicAccess",
        ("PSRule fails an absent allowBlobPublicAccess", "while azai passes it"),
        id="blob-public-access-absent",
    ),
    pytest.param(
        "AZAI-113",
        CLUSTER_ESTATE,
        {},
        "Azure.AKS.UseRBAC",
        ("PSRule fails an absent enableRBAC", "azai fails only an explicit false"),
        id="use-rbac-absent",
    ),
    pytest.param(
        "AZAI-115",
        SEARCH_ESTATE,
        {},
        "Azure.Search.ManagedIdentity",
        ("on every service, the free tier included", "exempts the free tier"),
        id="search-identity-free-tier",
    ),
    pytest.param(
        "AZAI-112",
        REGISTRY_ESTATE,
        {"acrbasic": ["properties.publicNetworkAccess"]},
        "Azure.ACR.Firewall",
        ("PSRule judges Premium registries only", "where azai fails an open one"),
        id="acr-firewall-basic-sku",
    ),
]

# How each generic rule's notes name the resources azai judges, where the peer judges them all.
SCOPES = {
    "AZAI-111": ("azai judges only the storage account a workspace names",),
    "AZAI-112": ("azai judges only the registry a workspace names", "azai judges only the key vault a workspace names"),
    "AZAI-113": ("azai judges only clusters with a GPU pool or attached to an AML workspace",),
}


def _note(rule_id: str, tool: str, peer_id: str) -> str:
    check = next(c for c in load_checks() if c.id == rule_id)
    return next(p.note for p in check.peers if (p.tool, p.id) == (tool, peer_id))


def _verdict(tmp_path: Path, rule_id: str, resources: list[dict[str, Any]]) -> tuple[dict[str, list[str]], set[str]]:
    """The paths azai fails per resource, and the resources it leaves undetermined, for one rule."""
    path = tmp_path / "main.json"
    path.write_text(json.dumps({"$schema": SCHEMA, "contentVersion": "1.0.0.0", "resources": resources}))
    result = scan(path, select=[rule_id])
    failed: dict[str, list[str]] = {}
    for finding in result.findings:
        failed.setdefault(finding.resource.name, []).append(finding.violation.path)
    return {name: sorted(paths) for name, paths in failed.items()}, {u.resource.name for u in result.undetermined}


@pytest.mark.parametrize(("rule_id", "resources", "failed", "peer_id", "phrases"), SUBSTANCE_CASES)
def test_a_note_states_the_difference_the_estate_shows(
    tmp_path: Path,
    rule_id: str,
    resources: list[dict[str, Any]],
    failed: dict[str, list[str]],
    peer_id: str,
    phrases: tuple[str, ...],
) -> None:
    assert _verdict(tmp_path, rule_id, resources) == (failed, set())
    note = _note(rule_id, PSRULE, peer_id)
    for phrase in phrases:
        assert phrase in note, f"{rule_id} / {peer_id}: the note must say {phrase!r}; it says {note!r}"


def test_the_absent_blob_setting_is_a_difference_with_every_peer_that_checks_it() -> None:
    """Checkov (both checks) and Azure Policy fail an absent allowBlobPublicAccess too."""
    for tool, peer_id in (
        (CHECKOV, "CKV_AZURE_190"),
        (CHECKOV, "CKV2_AZURE_47"),
        (AZURE_POLICY, "4fa4b6c0-31ca-4c0d-b10d-24b96f62a751"),
    ):
        note = _note("AZAI-111", tool, peer_id)
        assert note.startswith("Disagrees on an absent value"), note
        assert "azai passes an absent" in note, note


@pytest.mark.parametrize("rule_id", sorted(SCOPES))
def test_no_note_on_a_generic_rule_omits_its_scope(rule_id: str) -> None:
    """AZAI-111, 112 and 113 judge only what a workspace names or clusters that serve AI, where
    their peers judge every such resource: each note says so."""
    check = next(c for c in load_checks() if c.id == rule_id)
    assert check.peers
    for peer in check.peers:
        assert any(scope in peer.note for scope in SCOPES[rule_id]), f"{rule_id} / {peer}: {peer.note!r}"


def test_every_built_in_peer_rule_has_a_note() -> None:
    """An empty note renders as a bare "agrees"; every built-in pairing states what it found."""
    empty = [f"{c.id} / {p}" for c in load_checks() if c.module.startswith("checks.") for p in c.peers if not p.note]
    assert empty == []
