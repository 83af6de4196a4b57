"""An estate the emulator serves: subscriptions, management groups and ARM resources.

A file holds ``{"subscriptions": [...], "managementGroups": {"mg": ["sub", ...]},
"resources": [ARM resource bodies with full ids]}``, and optionally ``"metrics"`` (resource id
-> metric name -> dimension value -> hourly samples), ``"publishedMetrics"`` (resource id ->
the names it publishes, when fewer than its type's), ``"metricErrors"`` (resource id -> metric
name -> ``{"code", "message"}`` answered instead of its series), ``"skus"``, ``"retailPrices"``,
``"accountModels"`` and ``"locationModels"``. Child resources (agent pools, computes,
endpoints) are listed with their full ids and served under their parents' collection routes.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.model.resources import parse_resource_id


@dataclass
class Estate:
    """``metrics`` maps a resource id to metric name to series (keyed by dimension value, "" for
    none) of hourly samples; ``skus`` are resource SKU bodies; ``retail_prices`` are Retail
    Prices API items; ``account_models`` maps a lower-case account id to its models list
    (Accounts - List Models entries) and ``location_models`` a region to the subscription's
    Models - List entries there. ``published_metrics`` narrows, for a lower-case resource id,
    the metric names the resource publishes (Learn's table for its type by default: an account
    from before the Foundry names, a sovereign cloud); ``metric_errors`` gives, by lower-case
    resource id and metric name, the ``errorCode`` and ``errorMessage`` Azure Monitor answers
    for that metric instead of its series."""

    subscriptions: list[dict[str, Any]]
    resources: list[dict[str, Any]]
    management_groups: dict[str, list[str]] = field(default_factory=dict)
    metrics: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    skus: list[dict[str, Any]] = field(default_factory=list)
    retail_prices: list[dict[str, Any]] = field(default_factory=list)
    account_models: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    location_models: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    published_metrics: dict[str, list[str]] = field(default_factory=dict)
    metric_errors: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {r["id"].lower(): r for r in self.resources}
        self.children: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        self.top_level: list[dict[str, Any]] = []
        # Top-level resources by lower-case subscription id, in id order: Resource Graph and the
        # generic list answer from one subscription's share, not a pass over the whole estate.
        self.by_subscription: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for resource in sorted(self.resources, key=lambda r: r["id"].lower()):
            parsed = parse_resource_id(resource["id"])
            target, marker, extension = resource["id"].lower().rpartition("/providers/")
            if marker and "/providers/" in target:  # an extension resource, listed under its target
                self.children[(target, "providers/" + extension.rsplit("/", 1)[0])].append(resource)
            elif parsed.resource_type and parsed.resource_type.count("/") >= 2:
                parent_id, child_type, _ = resource["id"].rsplit("/", 2)
                self.children[(parent_id.lower(), child_type.lower())].append(resource)
            else:
                self.top_level.append(resource)
                self.by_subscription[resource["id"].split("/")[2].lower()].append(resource)

    @classmethod
    def load(cls, path: Path) -> Estate:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            data["subscriptions"],
            data["resources"],
            data.get("managementGroups", {}),
            {k.lower(): v for k, v in data.get("metrics", {}).items()},
            data.get("skus", []),
            data.get("retailPrices", []),
            {k.lower(): v for k, v in data.get("accountModels", {}).items()},
            {k.lower(): v for k, v in data.get("locationModels", {}).items()},
            {k.lower(): v for k, v in data.get("publishedMetrics", {}).items()},
            {
                k.lower(): {name.lower(): (e["code"], e["message"]) for name, e in errors.items()}
                for k, errors in data.get("metricErrors", {}).items()
            },
        )

    def subscription_ids(self) -> list[str]:
        return [s["subscriptionId"] for s in self.subscriptions]


def generate_estate(subscriptions: int, resources_per_subscription: int) -> Estate:
    """N subscriptions x M resources of the kinds an AI estate has, for scale tests."""
    subs, resources = [], []
    for s in range(subscriptions):
        sub = f"{s:08x}-0000-4000-8000-{s:012x}"
        subs.append(
            {"id": f"/subscriptions/{sub}", "subscriptionId": sub, "displayName": f"ai-{s}", "state": "Enabled"}
        )
        group = f"/subscriptions/{sub}/resourceGroups/rg-ai"
        count = 0

        def add(body: dict[str, Any], top_level: bool = True) -> None:
            nonlocal count
            resources.append(body)
            if top_level:
                count += 1

        region = ("eastus", "westeurope", "westus2")[s % 3]
        ws_id = f"{group}/providers/Microsoft.MachineLearningServices/workspaces/mlw"
        st_id = f"{group}/providers/Microsoft.Storage/storageAccounts/st{s:06d}"
        add(
            {
                "id": st_id,
                "name": f"st{s:06d}",
                "type": "Microsoft.Storage/storageAccounts",
                "location": region,
                "kind": "StorageV2",
                "properties": {"allowBlobPublicAccess": False},
            }
        )
        add(
            {
                "id": ws_id,
                "name": "mlw",
                "type": "Microsoft.MachineLearningServices/workspaces",
                "location": region,
                "properties": {"storageAccount": st_id, "publicNetworkAccess": "Disabled"},
            }
        )
        add(
            {
                "id": f"{ws_id}/computes/gpu",
                "name": "gpu",
                "type": "Microsoft.MachineLearningServices/workspaces/computes",
                "location": region,
                "properties": {
                    "computeType": "AmlCompute",
                    "computeLocation": region,
                    "properties": {
                        "vmSize": "Standard_NC24ads_A100_v4",
                        "scaleSettings": {"minNodeCount": s % 2, "maxNodeCount": 4},
                    },
                },
            },
            False,
        )
        aks_id = f"{group}/providers/Microsoft.ContainerService/managedClusters/aks"
        add(
            {
                "id": aks_id,
                "name": "aks",
                "type": "Microsoft.ContainerService/managedClusters",
                "location": region,
                "properties": {
                    "agentPoolProfiles": [{"name": "system", "vmSize": "Standard_D4s_v5", "mode": "System", "count": 2}]
                },
            }
        )
        add(
            {
                "id": f"{aks_id}/agentPools/gpu",
                "name": "gpu",
                "type": "Microsoft.ContainerService/managedClusters/agentPools",
                "properties": {
                    "vmSize": "Standard_NC24ads_A100_v4",
                    "mode": "User",
                    "enableAutoScaling": True,
                    "minCount": 0,
                    "maxCount": 2,
                    "nodeTaints": [] if s % 5 == 0 else ["sku=gpu:NoSchedule"],
                },
            },
            False,
        )
        i = 0
        while count < resources_per_subscription:
            kind = i % 3
            if kind == 0:
                add(
                    {
                        "id": f"{group}/providers/Microsoft.CognitiveServices/accounts/oai{i}",
                        "name": f"oai{i}",
                        "type": "Microsoft.CognitiveServices/accounts",
                        "location": region,
                        "kind": "OpenAI",
                        "properties": {"disableLocalAuth": i % 4 != 0, "publicNetworkAccess": "Disabled"},
                    }
                )
            elif kind == 1:
                add(
                    {
                        "id": f"{group}/providers/Microsoft.Compute/virtualMachines/vm{i}",
                        "name": f"vm{i}",
                        "type": "Microsoft.Compute/virtualMachines",
                        "location": region,
                        "properties": {"hardwareProfile": {"vmSize": "Standard_D4s_v5"}},
                    }
                )
            else:
                add(
                    {
                        "id": f"{group}/providers/Microsoft.Storage/storageAccounts/data{s:05d}{i}",
                        "name": f"data{s:05d}{i}",
                        "type": "Microsoft.Storage/storageAccounts",
                        "location": region,
                        "kind": "StorageV2",
                        "properties": {},
                    }
                )
            i += 1
    return Estate(subs, resources)


def demo_estate_path(variant: str = "demo") -> Path:
    """A bundled estate: ``demo`` is the live twin of fixtures/demo; ``drifted`` is the same
    estate after portal edits (key auth re-enabled, a pool added by hand, a taint removed)."""
    from importlib import resources

    name = "demo-estate.json" if variant == "demo" else f"demo-{variant}-estate.json"
    return Path(str(resources.files("scanner").joinpath(f"emulator/data/{name}")))
