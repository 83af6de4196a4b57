"""Drift: what changed between two inventories, as findings of the drift rules.

Three comparisons share one engine: two snapshots (or a snapshot and a live scan), IaC against
live, and Terraform's own ``resource_drift``. Resources match on case-folded id, or, where an
IaC id carries placeholders, on type and name. Changes are read on a per-type watch-list of
security- and cost-relevant properties; everything else a resource carries (provisioning
state, etags, timestamps, system data, node counts the platform moves) is noise and ignored,
as are case differences in ids and locations. IaC values that are unknown before deploy are
never drift.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from scanner.engine.checkapi import Check, CheckContext, DriftPair
from scanner.engine.evaluate import inherited_tags
from scanner.engine.results import Finding, fingerprint
from scanner.model import azure_types as T
from scanner.model.resources import (
    Inventory,
    Resource,
    get_path,
    is_placeholder,
    normalize_location,
    parse_resource_id,
)
from scanner.model.unknown import Unknown, UnknownValueError

WATCH: dict[str, tuple[str, ...]] = {
    T.WORKSPACE: (
        "location",
        "identity.type",
        "properties.publicNetworkAccess",
        "properties.storageAccount",
        "properties.managedNetwork.isolationMode",
        "properties.allowPublicAccessWhenBehindVnet",
    ),
    T.COMPUTE: (
        "identity.type",
        "properties.computeLocation",
        "properties.disableLocalAuth",
        "properties.properties.vmSize",
        "properties.properties.vmPriority",
        "properties.properties.scaleSettings.minNodeCount",
        "properties.properties.idleTimeBeforeShutdown",
        "properties.properties.enableNodePublicIp",
    ),
    T.ONLINE_ENDPOINT: ("identity.type", "properties.authMode", "properties.publicNetworkAccess"),
    T.SERVERLESS_ENDPOINT: ("properties.authMode",),
    T.COGNITIVE_ACCOUNT: (
        "location",
        "identity.type",
        "properties.disableLocalAuth",
        "properties.publicNetworkAccess",
        "properties.networkAcls.defaultAction",
        "properties.restrictOutboundNetworkAccess",
    ),
    T.MANAGED_CLUSTER: ("location", "identity.type", "properties.disableLocalAccounts"),
    T.AGENT_POOL: (
        "properties.vmSize",
        "properties.mode",
        "properties.nodeTaints",
        "properties.enableAutoScaling",
        "properties.minCount",
        "properties.maxCount",
        "properties.count",
        "properties.scaleSetPriority",
    ),
    T.STORAGE_ACCOUNT: (
        "location",
        "properties.publicNetworkAccess",
        "properties.allowBlobPublicAccess",
        "properties.allowSharedKeyAccess",
        "properties.networkAcls.defaultAction",
    ),
    T.CONTAINER_APP: ("properties.configuration.ingress.external",),
    T.VIRTUAL_MACHINE: ("location", "identity.type", "properties.hardwareProfile.vmSize", "properties.priority"),
    T.VM_SCALE_SET: ("location", "sku.name", "sku.capacity"),
}
WATCHED_TYPES = {t.lower(): paths for t, paths in WATCH.items()}
# Types whose undeclared live instances are unmanaged AI resources.
AI_TYPES = frozenset(
    t.lower()
    for t in (
        T.WORKSPACE,
        T.COMPUTE,
        T.ONLINE_ENDPOINT,
        T.ONLINE_DEPLOYMENT,
        T.SERVERLESS_ENDPOINT,
        T.COGNITIVE_ACCOUNT,
        T.MANAGED_CLUSTER,
        T.AGENT_POOL,
    )
)
SECURITY_PATHS = (
    "authmode",
    "publicnetworkaccess",
    "disablelocalauth",
    "disablelocalaccounts",
    "nodetaints",
    "mode",
    "identity.type",
    "allowblobpublicaccess",
    "allowsharedkeyaccess",
    "defaultaction",
    "ingress.external",
    "enablenodepublicip",
    "isolationmode",
    "allowpublicaccesswhenbehindvnet",
    "restrictoutbound",
)


def canonical(value: Any) -> Any:
    """A value as drift compares it: strings case-folded (ARM enums, ids and regions are
    case-insensitive, and regions lose their spaces), lists as sorted sets."""
    if isinstance(value, str):
        return normalize_location(value)
    if isinstance(value, list):
        return sorted((canonical(v) for v in value), key=repr)
    if isinstance(value, dict):
        return {str(k).lower(): canonical(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Change:
    path: str
    before: Any
    after: Any


def watched_changes(before: Resource, after: Resource, declared_only: bool) -> list[Change]:
    """Changes on the type's watch-list. With ``declared_only`` (IaC against live), a property
    the IaC leaves unset or unknown is not drift: the platform's default is not a change."""
    changes = []
    for path in WATCHED_TYPES.get(after.type_key, ()):
        old, new = get_path(before.body, path), get_path(after.body, path)
        if isinstance(old, Unknown) or isinstance(new, Unknown) or (declared_only and old is None):
            continue
        if path == "location" or path.endswith("Location"):
            old, new = normalize_location(old), normalize_location(new)
        if not same_value(old, new):
            changes.append(Change(path, old, new))
    return changes


def same_value(old: Any, new: Any) -> bool:
    """Equal for drift: case-insensitive, lists as sets, and resource ids by type and name
    (and resource group where both sides know it), since an IaC id carries placeholders for the
    subscription or group the file does not know."""
    if (
        isinstance(old, str)
        and isinstance(new, str)
        and old.startswith("/subscriptions/")
        and new.startswith("/subscriptions/")
    ):
        a, b = parse_resource_id(old), parse_resource_id(new)
        if a.resource_type and b.resource_type:
            groups_known = not any(is_placeholder(g) for g in (a.resource_group, b.resource_group) if g)
            same_group = not groups_known or str(a.resource_group).lower() == str(b.resource_group).lower()
            return (
                same_group
                and a.resource_type.lower() == b.resource_type.lower()
                and str(a.name_chain).lower() == str(b.name_chain).lower()
            )
    return bool(canonical(old) == canonical(new))


def is_security_path(path: str) -> bool:
    lowered = path.lower()
    return any(token in lowered for token in SECURITY_PATHS)


@dataclass
class DriftReport:
    """The drift section every report shows, besides the drift findings themselves."""

    mode: str
    base: str
    current: str
    added: list[Resource] = field(default_factory=list)
    removed: list[Resource] = field(default_factory=list)
    changed: list[tuple[Resource, list[Change]]] = field(default_factory=list)
    appeared: list[Finding] = field(default_factory=list)
    resolved: list[Finding] = field(default_factory=list)


def _key(resource: Resource) -> tuple[str, str]:
    return resource.type_key, resource.name.lower()


def match(
    base: Iterable[Resource], current: Iterable[Resource]
) -> tuple[list[tuple[Resource, Resource]], list[Resource], list[Resource]]:
    """Pairs, base-only and current-only resources: by case-folded id, else by type and name."""
    current_list = [r for r in current if not r.origin.reference_only]
    by_id = {r.id.lower(): r for r in current_list}
    by_name = {_key(r): r for r in current_list}
    used: set[int] = set()
    pairs: list[tuple[Resource, Resource]] = []
    missing: list[Resource] = []
    for old in (r for r in base if not r.origin.reference_only):
        new = by_id.get(old.id.lower()) or by_name.get(_key(old))
        if new is None or id(new) in used:
            missing.append(old)
            continue
        used.add(id(new))
        pairs.append((old, new))
    added = [r for r in current_list if id(r) not in used]
    return pairs, missing, added


def drift_findings(
    checks: list[Check], pair: DriftPair, inventory: Inventory, options: dict[str, dict[str, Any]]
) -> list[Finding]:
    """Run the drift rules on one pair of (before, after)."""
    subject = pair.after or pair.before
    assert subject is not None
    found: list[Finding] = []
    for check in checks:
        if "drift" not in check.sources or subject.type_key not in {t.lower() for t in check.resource_types}:
            continue
        ctx = CheckContext(inventory=inventory, options={**check.options, **options.get(check.id, {})}, drift=pair)
        try:
            violations = list(check.evaluate(subject, ctx))
        except UnknownValueError:
            continue  # an unknown value is never drift
        for violation in violations:
            found.append(
                Finding(
                    check,
                    subject,
                    violation,
                    violation.severity or check.severity,
                    fingerprint(check.id, subject, violation.path),
                    tags=inherited_tags(inventory, subject),
                )
            )
    return found


def covered_groups(declared: Iterable[Resource], pairs: Iterable[tuple[Resource, Resource]]) -> set[str]:
    """Resource groups the IaC covers: those it names, and those its resources were found in."""
    groups = set()
    for resource in declared:
        group = parse_resource_id(resource.id).resource_group
        if group and not is_placeholder(group):
            groups.add(group.lower())
    for _, live in pairs:
        group = parse_resource_id(live.id).resource_group
        if group:
            groups.add(group.lower())
    return groups
