"""Estates for live tests, made from the what-if fixtures: the same resources, as Azure returns them.

What-if ``after`` bodies are ARM resources with real ids, so each rule's what-if fixture becomes
a live estate; clusters also get their pools as child resources, as the agentPools API returns
them, and the test expects the same failing, passing and undetermined resources as the what-if.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scanner.emulator.estate import Estate
from scanner.emulator.server import Emulator
from scanner.engine.results import Finding
from scanner.model.resources import parse_resource_id
from scanner.model.retirements import RetirementTable
from scanner.pipeline.scan import ScanRequest, ScanResult, run_scan
from scanner.sources.live.scope import LiveScope
from tests.conftest import FIXTURE_DATE

SCANNED = {"Create", "Modify", "NoChange", "Deploy"}


def estate_from_whatif(path: Path) -> Estate:
    document = json.loads(path.read_text(encoding="utf-8"))
    changes = document.get("properties", document).get("changes", [])
    resources: dict[str, dict[str, Any]] = {}
    for change in changes:
        if change.get("changeType") in SCANNED and isinstance(change.get("after"), dict):
            body = copy.deepcopy(change["after"])
            body.pop("apiVersion", None)
            resources[body["id"].lower()] = body
    for body in list(resources.values()):
        if parse_resource_id(body["id"]).resource_type == "Microsoft.ContainerService/managedClusters":
            for profile in body.get("properties", {}).get("agentPoolProfiles", []):
                pool_id = f"{body['id']}/agentPools/{profile['name']}"
                if pool_id.lower() not in resources:
                    properties = {k: v for k, v in profile.items() if k != "name"}
                    resources[pool_id.lower()] = {
                        "id": pool_id,
                        "name": profile["name"],
                        "type": "Microsoft.ContainerService/managedClusters/agentPools",
                        "properties": properties,
                    }
    subscriptions = sorted({r["id"].split("/")[2] for r in resources.values()})
    return Estate(
        [
            {"id": f"/subscriptions/{s}", "subscriptionId": s, "displayName": s, "state": "Enabled"}
            for s in subscriptions
        ],
        sorted(resources.values(), key=lambda r: r["id"].lower()),
        account_models=account_models(resources.values()),
    )


def account_models(resources: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each account's models list as Azure serves it (Accounts - List Models): the models its
    deployments run, with the retirement date the bundled table gives for them as
    ``deprecation.inference``, so that a live scan judges them as the IaC forms are judged."""
    table = RetirementTable.load(None)
    lists: dict[str, list[dict[str, Any]]] = {}
    for body in resources:
        if parse_resource_id(body["id"]).resource_type != "Microsoft.CognitiveServices/accounts/deployments":
            continue
        model = body.get("properties", {}).get("model", {})
        entry: dict[str, Any] = {k: model[k] for k in ("format", "name", "version") if k in model}
        row = table.lookup(str(model.get("name")), str(model.get("version")), body.get("sku", {}).get("name", ""))
        if row is not None:
            entry["deprecation"] = {"inference": f"{row.retirement.isoformat()}T00:00:00Z"}
        lists.setdefault(body["id"].rsplit("/deployments/", 1)[0].lower(), []).append(entry)
    return lists


def model_account(group: str, name: str, kind: str, region: str) -> dict[str, Any]:
    """An AI services account in resource group ``group`` (an ARM id), locked down so that only
    the rule under test has something to say about it."""
    return {
        "id": f"{group}/providers/Microsoft.CognitiveServices/accounts/{name}",
        "name": name,
        "type": "Microsoft.CognitiveServices/accounts",
        "location": region,
        "kind": kind,
        "sku": {"name": "S0"},
        "properties": {"publicNetworkAccess": "Disabled", "disableLocalAuth": True},
    }


def model_deployment(
    group: str, account: str, name: str, sku: str, capacity: int, model: str = "gpt-4o", version: str = "1"
) -> dict[str, Any]:
    """A model deployment of ``account``, as the deployments list returns it."""
    return {
        "id": f"{group}/providers/Microsoft.CognitiveServices/accounts/{account}/deployments/{name}",
        "name": name,
        "type": "Microsoft.CognitiveServices/accounts/deployments",
        "sku": {"name": sku, "capacity": capacity},
        "properties": {"model": {"format": "OpenAI", "name": model, "version": version}},
    }


def rule_outcomes(result: ScanResult, rule: str) -> tuple[dict[str, Finding], set[str], set[str]]:
    """What ``rule`` made of a scan: its findings by resource name, and the names it passed and
    could not decide."""
    failed = {f.resource.name: f for f in result.findings if f.check.id == rule}
    passed = {r.name for c, r in result.passed if c.id == rule}
    undetermined = {u.resource.name for u in result.undetermined if u.check.id == rule}
    return failed, passed, undetermined


def live_scan(
    emulator: Emulator, *, select: tuple[str, ...] = (), rule_options: tuple[str, ...] = (), **scope: object
) -> ScanResult:
    """A live scan of what ``emulator`` serves (every subscription unless ``scope`` says), on the
    fixtures' date, that never fails the gate."""
    live = LiveScope(**scope) if scope else LiveScope(all_subscriptions=True)  # type: ignore[arg-type]
    return run_scan(
        ScanRequest(
            paths=(),
            live=live,
            arm_endpoint=emulator.endpoint,
            fail_on="none",
            today=FIXTURE_DATE,
            select=select,
            rule_options=rule_options,
        )
    )
