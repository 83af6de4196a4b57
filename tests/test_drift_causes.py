"""Issue 19's drift-engine causes of false drift, each pinned by the drift findings that must and
must not appear: autoscaler moves, platform defaults and what the configuration wrote, declared
types the live scan does not read, coverage gaps scoped to what they hide, and set-like lists.

Unit tests build `Resource`s directly; the end-to-end ones run ``azai drift --iac`` against the
emulator through the real SDK."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scanner.drift.compare import WATCH, is_security_path, unread_by, watched_changes
from scanner.emulator.estate import Estate, demo_estate_path
from scanner.emulator.hostile import Answer
from scanner.emulator.server import Emulator, Faults
from scanner.model import azure_types as T
from scanner.model.resources import CoverageGap, Origin, Resource
from tests.conftest import CHILD_PROCESS, FIXTURES, ROOT
from tests.test_drift import _drift

SUB = "/subscriptions/00000000-0000-0000-0000-0000000000a1"
CLUSTER = f"{SUB}/resourceGroups/rg-ai/providers/Microsoft.ContainerService/managedClusters/aks"
IAC = Origin("arm", "main.json")
LIVE = Origin("live", None)


def _resource(
    resource_type: str, resource_id: str, body: dict[str, Any], origin: Origin = LIVE, **top: Any
) -> Resource:
    name = resource_id.rsplit("/", 1)[-1]
    return Resource(
        resource_id, resource_type, name, {"id": resource_id, "name": name, **top, "properties": body}, origin
    )


def _pool(body: dict[str, Any], origin: Origin = LIVE) -> Resource:
    return _resource(T.AGENT_POOL, f"{CLUSTER}/agentPools/gpu", body, origin)


def _paths(before: Resource, after: Resource, declared_only: bool = True) -> set[str]:
    return {c.path for c in watched_changes(before, after, declared_only=declared_only)}


# Cause 1: autoscaler moves.


def test_an_autoscaled_pools_count_is_never_drift_a_fixed_pools_is() -> None:
    declared = {"vmSize": "Standard_NC24ads_A100_v4", "enableAutoScaling": True, "minCount": 1, "maxCount": 5}
    assert _paths(_pool({**declared, "count": 1}, IAC), _pool({**declared, "count": 4})) == set()
    # Autoscaling on only one side (switched on in the portal): the switch is drift, the count is not.
    fixed = {**declared, "enableAutoScaling": False}
    assert _paths(_pool({**fixed, "count": 1}, IAC), _pool({**declared, "count": 4})) == {
        "properties.enableAutoScaling"
    }
    assert _paths(_pool({**fixed, "count": 1}, IAC), _pool({**fixed, "count": 4})) == {"properties.count"}
    # Scan to scan: the same.
    assert _paths(_pool({**declared, "count": 2}), _pool({**declared, "count": 5}), declared_only=False) == set()


def _scale_set(capacity: int, group: str = "rg-ai", tags: dict[str, str] | None = None) -> Resource:
    resource_id = f"{SUB}/resourceGroups/{group}/providers/Microsoft.Compute/virtualMachineScaleSets/aks-gpu-1234-vmss"
    return _resource(
        T.VM_SCALE_SET,
        resource_id,
        {},
        location="eastus",
        sku={"name": "Standard_NC24ads_A100_v4", "capacity": capacity},
        tags=tags or {},
    )


def test_an_aks_scale_sets_capacity_is_never_drift_any_other_is() -> None:
    tagged = {"aks-managed-poolName": "gpu", "aks-managed-createOperationID": "x"}
    assert _paths(_scale_set(2, tags=tagged), _scale_set(6, tags=tagged), declared_only=False) == set()
    assert (
        _paths(_scale_set(2, group="MC_rg-ai_aks_eastus"), _scale_set(6, group="MC_rg-ai_aks_eastus"), False) == set()
    )
    assert _paths(_scale_set(2), _scale_set(6), declared_only=False) == {"sku.capacity"}
    assert _paths(_scale_set(2, tags=tagged), _scale_set(6, tags={}), declared_only=False) == set()  # either side


def _pool_drift(name: str, autoscaled: bool, before: int, after: int) -> dict[str, Any]:
    pool = {
        "id": f"{CLUSTER}/agentPools/{name}",
        "name": name,
        "vm_size": "Standard_NC24ads_A100_v4",
        "kubernetes_cluster_id": CLUSTER,
        "auto_scaling_enabled": autoscaled,
        "min_count": 1 if autoscaled else None,
        "max_count": 5 if autoscaled else None,
        "node_count": before,
    }
    return {
        "address": f"azurerm_kubernetes_cluster_node_pool.{name}",
        "mode": "managed",
        "type": "azurerm_kubernetes_cluster_node_pool",
        "name": name,
        "provider_name": "registry.terraform.io/hashicorp/azurerm",
        "change": {
            "actions": ["update"],
            "before": pool,
            "after": {**pool, "node_count": after},
            "after_unknown": {},
            "before_sensitive": {},
            "after_sensitive": {},
        },
    }


@CHILD_PROCESS
def test_a_plans_resource_drift_on_an_autoscaled_pools_node_count_is_not_drift(tmp_path: Path) -> None:
    plan = json.loads((FIXTURES / "demo" / "plan.json").read_text())
    plan["resource_drift"] = [_pool_drift("gpu", True, 1, 4), _pool_drift("fixed", False, 2, 3)]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    code, data, _ = _drift("--iac", str(path))
    assert code == 1
    assert {(f["rule_id"], f["resource_name"], f["evidence"]["path"]) for f in data["findings"]} == {
        ("AZAI-901", "aks/fixed", "properties.count"),  # scaled by hand: drift
    }  # not: aks/gpu, whose count the autoscaler moved


# Cause 2: platform defaults, and what the configuration wrote.


def test_an_explicit_platform_default_against_an_absent_live_value_is_not_drift() -> None:
    declared = {"vmSize": "Standard_D4s_v5", "mode": "User", "scaleSetPriority": "Regular", "nodeTaints": []}
    live = {"vmSize": "Standard_D4s_v5", "mode": "User"}
    assert _paths(_pool({**declared, "enableAutoScaling": False, "count": 1}, IAC), _pool(live)) == set()
    # A value other than the default, against an absent live value, is drift: live holds the default.
    changes = watched_changes(_pool({**declared, "scaleSetPriority": "Spot"}, IAC), _pool(live), declared_only=True)
    assert [(c.path, c.before, c.after) for c in changes] == [("properties.scaleSetPriority", "Spot", "Regular")]
    account = f"{SUB}/resourceGroups/rg-ai/providers/Microsoft.CognitiveServices/accounts/oai"
    on, live_account = (
        _resource(
            T.COGNITIVE_ACCOUNT, account, {"disableLocalAuth": False, "restrictOutboundNetworkAccess": False}, IAC
        ),
        _resource(T.COGNITIVE_ACCOUNT, account, {}),
    )
    assert _paths(on, live_account) == set()
    off = _resource(T.COGNITIVE_ACCOUNT, account, {"disableLocalAuth": True}, IAC)
    assert _paths(off, live_account) == {"properties.disableLocalAuth"}
    # A property without a documented default is compared as it is: absent live is a change.
    assert _paths(_pool({"mode": "System"}, IAC), _pool({})) == {"properties.mode"}


def test_only_what_the_configuration_wrote_is_compared() -> None:
    declared = {"vmSize": "Standard_D4s_v5", "mode": "System", "scaleSetPriority": "Spot", "minCount": 1}
    live = {"vmSize": "Standard_D8s_v5", "mode": "User", "scaleSetPriority": "Regular", "minCount": 2}
    everything = {"properties.vmSize", "properties.mode", "properties.scaleSetPriority", "properties.minCount"}
    assert _paths(_pool(declared, IAC), _pool(live)) == everything  # the source does not tell: all compared
    wrote = Origin("terraform", "plan.json", configured=frozenset({"properties.vmsize", "properties.mode"}))
    assert _paths(_pool(declared, wrote), _pool(live)) == {"properties.vmSize", "properties.mode"}
    whole = Origin("terraform", "plan.json", configured=frozenset({"properties"}))  # an object that holds them
    assert _paths(_pool(declared, whole), _pool(live)) == everything
    nothing = Origin("terraform", "plan.json", configured=frozenset())
    assert _paths(_pool(declared, nothing), _pool(live)) == set()
    # Scan to scan compares both sides as read, whatever the base's origin says.
    assert _paths(_pool(declared, nothing), _pool(live), declared_only=False) == everything


# Cause 4: declared types the live scan does not read.


def _demo_template(tmp_path: Path, edit: Callable[[dict[str, Any]], None] | None = None) -> Path:
    template = json.loads((FIXTURES / "demo" / "template.json").read_text())
    if edit is not None:
        edit(template["resources"])
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template, indent=2))
    return path


def _iac_drift(iac: Path, emulator: Emulator) -> tuple[int, dict[str, Any]]:
    code, data, _ = _drift(
        "--iac", str(iac), "--all-subscriptions", "--arm-endpoint", emulator.endpoint, env=emulator.environment()
    )
    assert emulator.writes() == []
    return code, data


def _found(data: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f["rule_id"], f["resource_name"], f["evidence"]["path"]) for f in data["findings"]}


def _live(edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> Estate:
    estate = Estate.load(demo_estate_path())
    return Estate(estate.subscriptions, edit(copy.deepcopy(estate.resources)))


def _named(resources: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(r for r in resources if r["name"] == name)


def test_declared_types_the_live_scan_does_not_read_are_not_compared_not_removed(
    tmp_path: Path, serve: Callable[..., Emulator]
) -> None:
    def declare_more(resources: dict[str, Any]) -> None:
        resources["insights"] = {
            "type": "Microsoft.Insights/components",
            "apiVersion": "2020-02-02",
            "name": "appi-demo",
            "location": "eastus",
            "kind": "web",
            "properties": {"Application_Type": "web"},
        }
        resources["vnet"] = {
            "type": "Microsoft.Network/virtualNetworks",
            "apiVersion": "2023-11-01",
            "name": "vnet-demo",
            "location": "eastus",
            "properties": {"addressSpace": {"addressPrefixes": ["10.0.0.0/16"]}},
        }

    iac = _demo_template(tmp_path, declare_more)
    code, data = _iac_drift(iac, serve(_live(lambda r: [x for x in r if x["name"] != "oai-demo"])))
    assert code == 1 and _found(data) == {
        ("AZAI-903", "oai-demo", "id"),
        ("AZAI-903", "oai-demo/chat-ptu", "id"),  # the account's deployments go with it
        ("AZAI-903", "oai-demo/support-bot", "id"),
    }
    removed = [r.rsplit("/", 1)[-1] for r in data["drift"]["removed"]]
    assert removed == ["oai-demo", "chat-ptu", "support-bot"]  # not appi-demo, vnet-demo
    assert data["warnings"] == [
        "not compared with live, the live scan does not read these declared types: "
        "Microsoft.Insights/components (1), Microsoft.Network/virtualNetworks (1)"
    ]


# Cause 5: a coverage gap hides only what it could not read.


def test_a_gap_hides_missing_resources_only_in_its_own_scope(tmp_path: Path, serve: Callable[..., Emulator]) -> None:
    """The workspace's computes could not be listed: the deleted compute is not reported
    missing, the deleted OpenAI account (read fine) still is."""
    estate = _live(lambda r: [x for x in r if x["name"] not in ("oai-demo", "train")])
    error = {"error": {"code": "AuthorizationFailed", "message": "no"}}
    emulator = serve(estate, Faults(answers={"/computes": Answer(403, error)}))
    code, data = _iac_drift(_demo_template(tmp_path), emulator)
    assert code == 1 and _found(data) == {
        ("AZAI-903", "oai-demo", "id"),
        ("AZAI-903", "oai-demo/chat-ptu", "id"),  # the account's deployments go with it
        ("AZAI-903", "oai-demo/support-bot", "id"),
    }
    assert [gap["scope"].rsplit("/", 1)[-1] for gap in data["coverage"]] == ["computes"]


def test_gap_scopes_cover_the_ids_under_them_placeholders_matching_any_segment() -> None:
    def unread(gaps: list[CoverageGap], resource_id: str) -> bool:
        return unread_by(gaps)(_resource(T.AGENT_POOL, resource_id, {}, IAC))

    other = "/subscriptions/00000000-0000-0000-0000-0000000000a2"
    pool = f"{CLUSTER}/agentPools/gpu"
    assert unread([CoverageGap(other, 403, "denied")], pool) is False
    assert unread([CoverageGap(SUB, 403, "denied")], pool) is True
    assert unread([CoverageGap(f"{CLUSTER}/agentPools", 500, "x")], pool) is True
    assert unread([CoverageGap(f"{CLUSTER}/providers/Microsoft.Insights/diagnosticSettings", 403, "x")], pool) is False
    assert unread([CoverageGap(f"{SUB}/providers/Microsoft.Compute/skus?location=eastus", 403, "x")], pool) is False
    assert unread([CoverageGap(other, 403, "denied")], pool.replace(SUB, "/subscriptions/{subscriptionId}")) is True
    for anywhere in ("/subscriptions", "/providers/Microsoft.Management/managementGroups/mg", "3 read(s)"):
        assert unread([CoverageGap(anywhere, None, "x")], pool) is True
    assert unread([CoverageGap("linked.json", None, "x", kind="template")], pool) is False


# Cause 6: set-like lists.


def test_reordered_taints_and_ip_rules_are_not_a_change_a_new_one_is() -> None:
    taints = ["sku=gpu:NoSchedule", "team=ml:NoExecute"]
    assert _paths(_pool({"nodeTaints": taints}, IAC), _pool({"nodeTaints": taints[::-1]})) == set()
    assert _paths(_pool({"nodeTaints": taints}), _pool({"nodeTaints": taints[:1]}), False) == {"properties.nodeTaints"}
    account = f"{SUB}/resourceGroups/rg-ai/providers/Microsoft.CognitiveServices/accounts/oai"
    rules = [{"value": "203.0.113.0/24"}, {"value": "198.51.100.7"}]

    def acls(items: list[dict[str, Any]], origin: Origin = LIVE) -> Resource:
        return _resource(
            T.COGNITIVE_ACCOUNT, account, {"networkAcls": {"defaultAction": "Deny", "ipRules": items}}, origin
        )

    live = [{**rule, "action": "Allow"} for rule in rules[::-1]]  # reordered, and filled in by the platform
    assert _paths(acls(rules, IAC), acls(live)) == set()
    opened = acls([*live, {"value": "0.0.0.0/0", "action": "Allow"}])
    assert _paths(acls(rules, IAC), opened) == {"properties.networkAcls.ipRules"}
    assert is_security_path("properties.networkAcls.ipRules")  # an IP let in is high severity


def test_iac_to_live_ignores_autoscaler_moves_defaults_and_reordered_taints(
    tmp_path: Path, serve: Callable[..., Emulator]
) -> None:
    """Causes 1, 2 and 6 end to end: the template writes platform defaults and taints in
    another order; live, the autoscaler moved the GPU pool and someone scaled the fixed system
    pool by hand, which alone is drift."""
    taints = ["sku=gpu:NoSchedule", "team=ml:NoExecute"]

    def declare(resources: dict[str, Any]) -> None:
        gpu = resources["gpu"]["properties"]
        gpu.update({"scaleSetPriority": "Regular", "nodeTaints": taints[::-1]})
        resources["openai"]["properties"]["restrictOutboundNetworkAccess"] = False
        resources["data"]["properties"]["allowSharedKeyAccess"] = True

    def deployed(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
        gpu = _named(resources, "gpu")["properties"]
        gpu.update({"count": 3, "nodeTaints": taints})  # no scaleSetPriority: the platform default
        _named(resources, "system")["properties"]["count"] = 3
        cluster = _named(resources, "aks-demo")["properties"]["agentPoolProfiles"]
        next(p for p in cluster if p["name"] == "system")["count"] = 3
        return resources

    code, data = _iac_drift(_demo_template(tmp_path, declare), serve(_live(deployed)))
    assert code == 1 and _found(data) == {("AZAI-901", "aks-demo/system", "properties.count")}


# The docs table says what the code does.


def test_the_docs_table_lists_every_watched_property_with_its_default_and_set_flag() -> None:
    text = (ROOT / "docs" / "drift.md").read_text()
    rows = {
        (m.group(1), m.group(2)): (m.group(3).strip(), m.group(4).strip())
        for m in re.finditer(r"^\| `([^`]+)` \| `([^`]+)` \| [^|]+ \| ([^|]+) \| ([^|]+) \|$", text, re.MULTILINE)
    }
    expected = {
        (resource_type, watched.path): (
            "—" if watched.default is None else f"`{json.dumps(watched.default)}`",
            "set" if watched.as_set else "—",
        )
        for resource_type, paths in WATCH.items()
        for watched in paths
    }
    assert rows == expected
