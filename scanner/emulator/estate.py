"""An estate the emulator serves: subscriptions, management groups and ARM resources.

A file holds ``{"subscriptions": [...], "managementGroups": {"mg": ["sub", ...]},
"resources": [ARM resource bodies with full ids]}``, and optionally ``"metrics"`` (resource id
-> metric name -> dimension value -> hourly samples), ``"publishedMetrics"`` (resource id ->
the names it publishes, when fewer than its type's), ``"metricErrors"`` (resource id -> metric
name -> ``{"code", "message"}`` answered instead of its series), ``"skus"``, ``"retailPrices"``,
``"accountModels"``, ``"locationModels"`` and ``"resourceChanges"``. Child resources (agent
pools, computes, endpoints) are listed with their full ids and served under their parents'
collection routes.

``"resourceChanges"`` is the estate's change history, served as Resource Graph's
``resourcechanges`` table (docs/drift.md, "Writing an estate with its change history"). Each
entry is one change record:

- ``targetResourceId`` (required): the full id of the resource that changed;
- ``changeType`` (required): ``Create``, ``Update`` or ``Delete``;
- when it happened, one of: ``timestamp``, an ISO 8601 date and time (``2026-11-20T10:14:00Z``;
  without an offset, UTC), or ``ago``, an ISO 8601 duration before the moment the emulator
  answers (``PT2H``, ``P3DT4H``), so that a bundled estate never ages out;
- who and through what, each optional and left out of the record when absent (Resource Graph
  also leaves some out): ``changedBy`` (an email address, or an application's id),
  ``changedByType`` (``User``, ``Application``...), ``clientType`` (``Azure Portal``,
  ``ARM Template``, an application id...), ``operation`` (the permission used, such as
  ``microsoft.cognitiveservices/accounts/write``) and ``correlationId``;
- ``changes`` (an ``Update``'s, optional): property path -> ``{"previousValue": ...,
  "newValue": ...}``, paths as Resource Graph writes them (``properties.disableLocalAuth``),
  values served exactly as written (Resource Graph's own example writes strings, ``"null"``
  for an absent value; azai reads strings and JSON values alike);
- ``changeId`` (optional): the record's name; one is made from its position otherwise.

Resource Graph keeps changes for 14 days: a record older than that when a query arrives is not
served, whatever the query asks.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.model.durations import parse_duration
from scanner.model.resources import parse_resource_id

CHANGE_TYPES = ("Create", "Update", "Delete")
# The change actor attributes an estate may give, in the order Learn's example lists them.
CHANGE_ACTOR = ("correlationId", "changedByType", "clientType", "changedBy", "operation")


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
    resource_changes: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.by_id = {r["id"].lower(): r for r in self.resources}
        self.children: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        self.top_level: list[dict[str, Any]] = []
        # Top-level resources by lower-case subscription id, in id order: Resource Graph and the
        # generic list answer from one subscription's share, not a pass over the whole estate.
        self.by_subscription: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for index, entry in enumerate(self.resource_changes):
            _check_change(entry, index)
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
            data.get("resourceChanges", []),
        )

    def subscription_ids(self) -> list[str]:
        return [s["subscriptionId"] for s in self.subscriptions]

    def change_rows(self, now: dt.datetime) -> list[tuple[dt.datetime, dict[str, Any]]]:
        """The change records as rows of Resource Graph's ``resourcechanges`` table at ``now``
        (``ago`` resolved against it), each after its time, for the server to filter."""
        return [_change_row(entry, index, now) for index, entry in enumerate(self.resource_changes)]


def _check_change(entry: Any, index: int) -> None:
    """One ``resourceChanges`` entry as docs/drift.md describes it, or a ValueError saying what
    is wrong with it: an estate's author learns of a typo when the estate loads."""
    where = f"resourceChanges[{index}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("targetResourceId"), str):
        raise ValueError(f"{where}: a change record needs a 'targetResourceId' string")
    if entry.get("changeType") not in CHANGE_TYPES:
        raise ValueError(f"{where}: 'changeType' must be one of {', '.join(CHANGE_TYPES)}")
    if ("timestamp" in entry) == ("ago" in entry):
        raise ValueError(f"{where}: give either 'timestamp' or 'ago'")
    if "ago" in entry and parse_duration(entry["ago"]) is None:
        raise ValueError(f"{where}: 'ago' must be an ISO 8601 duration such as PT2H")
    if "timestamp" in entry:
        _timestamp(entry["timestamp"], where)
    if not isinstance(entry.get("changes", {}), dict):
        raise ValueError(f"{where}: 'changes' must map property paths to previous and new values")


def _timestamp(value: Any, where: str) -> dt.datetime:
    try:
        when = dt.datetime.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{where}: 'timestamp' must be an ISO 8601 date and time") from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _change_row(entry: dict[str, Any], index: int, now: dt.datetime) -> tuple[dt.datetime, dict[str, Any]]:
    """One ``resourcechanges`` row: a ``Microsoft.Resources/changes`` resource extending the
    target, its ``properties`` shaped as Learn's "Get resource changes" example (the change
    actor attributes and the timestamp in ``changeAttributes``; ``changesCount`` 0 for a Create
    or Delete, which carry no ``changes``)."""
    target = entry["targetResourceId"]
    parsed = parse_resource_id(target)
    delay = parse_duration(entry.get("ago"))
    when = now - delay if delay is not None else _timestamp(entry["timestamp"], "")
    changes = entry.get("changes") or {}
    digest = hashlib.sha256(target.lower().encode("utf-8")).hexdigest()[:12]
    change_id = str(entry.get("changeId") or f"{index:08d}_{digest}")
    attributes: dict[str, Any] = {
        "previousResourceSnapshotId": f"{change_id}_previous",
        "newResourceSnapshotId": f"{change_id}_new",
        **{key: entry[key] for key in CHANGE_ACTOR if key in entry},
        "changesCount": len(changes) if entry["changeType"] == "Update" else 0,
        "timestamp": when.astimezone(dt.UTC).isoformat(timespec="milliseconds"),
    }
    properties: dict[str, Any] = {
        "targetResourceId": target,
        "targetResourceType": (parsed.resource_type or "").lower(),
        "changeType": entry["changeType"],
        "changeAttributes": attributes,
    }
    if entry["changeType"] == "Update":
        properties["changes"] = changes
    return when, {
        "id": f"{target}/providers/Microsoft.Resources/changes/{change_id}",
        "name": change_id,
        "type": "microsoft.resources/changes",
        "subscriptionId": parsed.subscription or "",
        "resourceGroup": (parsed.resource_group or "").lower(),
        "properties": properties,
    }


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
