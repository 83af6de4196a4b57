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

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scanner.engine.checkapi import Check, CheckContext, DriftPair
from scanner.engine.evaluate import inherited_tags
from scanner.engine.results import Finding, fingerprint
from scanner.model import azure_types as T
from scanner.model.resources import (
    CoverageGap,
    Inventory,
    ParsedId,
    Resource,
    get_path,
    is_placeholder,
    normalize_location,
    parse_resource_id,
)
from scanner.model.unknown import Unknown, UnknownValueError

if TYPE_CHECKING:
    from scanner.drift.attribution import History


def _autoscaled(resource: Resource) -> bool:
    """A pool the cluster autoscaler sizes: its node count is the platform's to move."""
    return canonical(get_path(resource.body, "properties.enableAutoScaling")) in (True, "true")


def _aks_owned(resource: Resource) -> bool:
    """A scale set an AKS node pool owns: AKS tags it ``aks-managed-poolName`` (and other
    ``aks-managed-*`` keys), and puts it in the node resource group, ``MC_*`` unless renamed.
    The cluster autoscaler and ``az aks nodepool scale`` move its capacity, never the IaC."""
    group = parse_resource_id(resource.id).resource_group or ""
    tags = resource.tags if isinstance(resource.tags, dict) else {}
    return group.lower().startswith("mc_") or any(str(k).lower().startswith("aks-managed-") for k in tags)


@dataclass(frozen=True)
class Watched:
    """One watched property, and how drift compares it (docs/drift.md lists them in a table).

    ``default`` is what the platform holds when the property is absent (None: no default,
    the absence itself is compared); an absent value reads as it, so a declared value equal
    to the platform's default is no drift against a live body that leaves it out. ``as_set``:
    ARM treats the list as a set, so order and repeats are no change; ``item_key`` names the
    field that identifies an item of a set of objects (the rest of an item is the platform's
    to fill in). ``platform_moved``: when it holds for either side, the platform (an
    autoscaler) moves the value and it is never drift.
    """

    path: str
    default: Any = None
    as_set: bool = False
    item_key: str | None = None
    platform_moved: Callable[[Resource], bool] | None = None


# Defaults: where the REST API reference states one, its words are quoted; otherwise the
# absence means "off" or "none" by the property's own definition (an identity block left out is
# no managed identity; a pool without taints has none).
_NO_IDENTITY = Watched("identity.type", default="None")  # ManagedServiceIdentity: absent = no identity
_LOCATION = Watched("location")
WATCH: dict[str, tuple[Watched, ...]] = {
    T.WORKSPACE: (
        _LOCATION,
        _NO_IDENTITY,
        Watched("properties.publicNetworkAccess"),
        Watched("properties.storageAccount"),
        Watched("properties.managedNetwork.isolationMode"),
        # An opt-in flag: absent, a workspace behind a VNet takes no public traffic.
        Watched("properties.allowPublicAccessWhenBehindVnet", default=False),
    ),
    T.COMPUTE: (
        _NO_IDENTITY,
        Watched("properties.computeLocation"),
        Watched("properties.disableLocalAuth"),
        Watched("properties.properties.vmSize"),
        Watched("properties.properties.vmPriority"),
        Watched("properties.properties.scaleSettings.minNodeCount"),
        Watched("properties.properties.idleTimeBeforeShutdown"),
        Watched("properties.properties.enableNodePublicIp"),
    ),
    T.ONLINE_ENDPOINT: (_NO_IDENTITY, Watched("properties.authMode"), Watched("properties.publicNetworkAccess")),
    T.SERVERLESS_ENDPOINT: (Watched("properties.authMode"),),
    T.COGNITIVE_ACCOUNT: (
        _LOCATION,
        _NO_IDENTITY,
        # Local (key) auth is on until disableLocalAuth is set true ("Disable local
        # authentication in Azure AI Services", Microsoft Learn); azurerm's local_auth_enabled
        # defaults to true, the same thing.
        Watched("properties.disableLocalAuth", default=False),
        Watched("properties.publicNetworkAccess"),
        Watched("properties.networkAcls.defaultAction"),
        Watched("properties.networkAcls.ipRules", default=[], as_set=True, item_key="value"),
        Watched("properties.restrictOutboundNetworkAccess", default=False),  # absent: outbound unrestricted
    ),
    T.MANAGED_CLUSTER: (
        _LOCATION,
        _NO_IDENTITY,
        Watched("properties.disableLocalAccounts", default=False),  # absent: local accounts enabled
    ),
    T.AGENT_POOL: (
        Watched("properties.vmSize"),
        Watched("properties.mode"),
        Watched("properties.nodeTaints", default=[], as_set=True),  # absent: no taints
        Watched("properties.enableAutoScaling", default=False),  # absent: the autoscaler is off
        Watched("properties.minCount"),
        Watched("properties.maxCount"),
        # Agent Pools REST reference: "The default value is 1."
        Watched("properties.count", default=1, platform_moved=_autoscaled),
        # Agent Pools REST reference: "If not specified, the default is 'Regular'."
        Watched("properties.scaleSetPriority", default="Regular"),
    ),
    T.STORAGE_ACCOUNT: (
        _LOCATION,
        Watched("properties.publicNetworkAccess"),
        # Storage Accounts REST reference: "The default interpretation is false for this property."
        Watched("properties.allowBlobPublicAccess", default=False),
        # Storage Accounts REST reference: "The default value is null, which is equivalent to true."
        Watched("properties.allowSharedKeyAccess", default=True),
        Watched("properties.networkAcls.defaultAction"),
        Watched("properties.networkAcls.ipRules", default=[], as_set=True, item_key="value"),
    ),
    T.CONTAINER_APP: (Watched("properties.configuration.ingress.external"),),
    T.VIRTUAL_MACHINE: (
        _LOCATION,
        _NO_IDENTITY,
        Watched("properties.hardwareProfile.vmSize"),
        # Virtual Machines REST reference: priority is Regular, Low or Spot; without one the VM
        # is a regular (pay-as-you-go) VM, as azurerm's default priority = "Regular" says.
        Watched("properties.priority", default="Regular"),
    ),
    T.VM_SCALE_SET: (_LOCATION, Watched("sku.name"), Watched("sku.capacity", platform_moved=_aks_owned)),
    T.MODEL_DEPLOYMENT: (
        Watched("sku.name"),
        Watched("sku.capacity"),
        Watched("properties.model.name"),
        Watched("properties.model.version"),
        Watched("properties.raiPolicyName"),
        Watched("properties.versionUpgradeOption"),
    ),
    T.SEARCH_SERVICE: (
        _LOCATION,
        _NO_IDENTITY,
        # Search Services REST reference: when disableLocalAuth is true, calls "will not be
        # permitted to utilize API keys"; absent, API keys are accepted.
        Watched("properties.disableLocalAuth", default=False),
        Watched("properties.publicNetworkAccess"),
        Watched("properties.networkRuleSet.ipRules", default=[], as_set=True, item_key="value"),
        Watched("properties.encryptionWithCmk.enforcement"),
        Watched("properties.replicaCount"),
    ),
}
WATCHED_TYPES = {t.lower(): watched for t, watched in WATCH.items()}
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
        T.MODEL_DEPLOYMENT,
        T.SEARCH_SERVICE,
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
    "iprules",
    "ingress.external",
    "enablenodepublicip",
    "isolationmode",
    "allowpublicaccesswhenbehindvnet",
    "restrictoutbound",
    "raipolicyname",
    "encryptionwithcmk",
)


def canonical(value: Any) -> Any:
    """A value as drift compares it: strings case-folded (ARM enums, ids and regions are
    case-insensitive, and regions lose their spaces); lists keep their order."""
    if isinstance(value, str):
        return normalize_location(value)
    if isinstance(value, list):
        return [canonical(v) for v in value]
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
    the IaC leaves unset or unknown is not drift, and neither is one its configuration did not
    write (``Origin.configured``): a provider's default is not a declaration. An absent value
    reads as the platform's default on either side, and a value the platform moves (an
    autoscaled count) is never compared."""
    configured = before.origin.configured if declared_only else None
    changes = []
    for watched in WATCHED_TYPES.get(after.type_key, ()):
        path = watched.path
        if configured is not None and not _written(path.lower(), configured):
            continue
        old, new = get_path(before.body, path), get_path(after.body, path)
        if isinstance(old, Unknown) or isinstance(new, Unknown) or (declared_only and old is None):
            continue
        if watched.platform_moved is not None and (watched.platform_moved(before) or watched.platform_moved(after)):
            continue
        old, new = _or_default(old, watched), _or_default(new, watched)
        if not same_value(old, new, watched):
            changes.append(Change(path, old, new))
    return changes


def _written(path: str, configured: frozenset[str]) -> bool:
    """Whether a configuration that writes ``configured`` writes the watched ``path``: the path
    itself, an object that holds it, or an item of it (a list written element by element)."""
    if path in configured:
        return True
    parts = path.split(".")
    if any(".".join(parts[:i]) in configured for i in range(1, len(parts))):
        return True
    return any(c.startswith((path + ".", path + "[")) for c in configured)


def _or_default(value: Any, watched: Watched) -> Any:
    """An absent value as the platform holds it: the property's default, where it has one."""
    return watched.default if value is None else value


def same_value(old: Any, new: Any, watched: Watched | None = None) -> bool:
    """Equal for drift: case-insensitive; a set-like list (``watched.as_set``) in any order; and
    resource ids by type and name (and resource group where both sides know it), since an IaC
    id carries placeholders for the subscription or group the file does not know."""
    ids = _resource_ids(old, new)
    if ids is not None:
        return _same_resource(*ids)
    if watched is not None and watched.as_set and isinstance(old, list) and isinstance(new, list):
        return _as_set(old, watched.item_key) == _as_set(new, watched.item_key)
    return bool(canonical(old) == canonical(new))


def _resource_ids(old: Any, new: Any) -> tuple[ParsedId, ParsedId] | None:
    """Both values parsed, when both are ids of resources (ids that name a type); None otherwise:
    other text, and a subscription's or resource group's id, are compared as plain values."""
    if not (
        isinstance(old, str)
        and isinstance(new, str)
        and old.startswith("/subscriptions/")
        and new.startswith("/subscriptions/")
    ):
        return None
    a, b = parse_resource_id(old), parse_resource_id(new)
    return (a, b) if a.resource_type and b.resource_type else None


def _same_resource(a: ParsedId, b: ParsedId) -> bool:
    """Two ids of one resource: the same type and name chain, in the same resource group unless
    either side's group is a placeholder (an IaC id where its file does not know the group).
    The subscription is never compared: an IaC id does not know it."""
    groups_known = not any(is_placeholder(g) for g in (a.resource_group, b.resource_group) if g)
    same_group = not groups_known or str(a.resource_group).lower() == str(b.resource_group).lower()
    return (
        same_group
        and str(a.resource_type).lower() == str(b.resource_type).lower()
        and str(a.name_chain).lower() == str(b.name_chain).lower()
    )


def _as_set(items: list[Any], item_key: str | None) -> set[str]:
    """A set-like list as ARM compares it: each item (or the field that identifies an object
    item), canonical."""
    return {
        repr(canonical(get_path(item, item_key) if item_key and isinstance(item, dict) else item)) for item in items
    }


def is_security_path(path: str) -> bool:
    lowered = path.lower()
    return any(token in lowered for token in SECURITY_PATHS)


@dataclass
class DriftReport:
    """The drift section every report shows, besides the drift findings themselves; with a
    live comparison, ``history``: who made each drift, from Resource Graph's change records
    (`scanner.drift.attribution`), None when none were read."""

    mode: str
    base: str
    current: str
    added: list[Resource] = field(default_factory=list)
    removed: list[Resource] = field(default_factory=list)
    changed: list[tuple[Resource, list[Change]]] = field(default_factory=list)
    appeared: list[Finding] = field(default_factory=list)
    resolved: list[Finding] = field(default_factory=list)
    history: History | None = None
    # IaC to live: the full id a missing resource's id stands for, by its lower-case id, when
    # its placeholders can be filled from where the IaC's other resources were found (`placed`).
    placed: dict[str, str] = field(default_factory=dict)


def _key(resource: Resource) -> tuple[str, str]:
    return resource.type_key, resource.name.lower()


def unresolved_parent(resource: Resource) -> bool:
    """Whether the IaC could not name a parent of the resource (a plan's ``parent_id`` that is an
    output of a module it cannot follow): its name then holds a placeholder segment."""
    return any(is_placeholder(segment) for segment in resource.name.split("/")[:-1])


def _leaf(resource: Resource) -> tuple[str, str]:
    return resource.type_key, resource.name.rsplit("/", 1)[-1].lower()


def match(
    base: Iterable[Resource], current: Iterable[Resource]
) -> tuple[list[tuple[Resource, Resource]], list[Resource], list[Resource]]:
    """Pairs, base-only and current-only resources: by case-folded id, else by type and name,
    else, for a resource whose parent the IaC could not name, by type, its own name and resource
    group, when exactly one resource fits (the finding then says how it was matched)."""
    current_list = [r for r in current if not r.origin.reference_only]
    by_id = {r.id.lower(): r for r in current_list}
    by_name = {_key(r): r for r in current_list}
    by_leaf = _by_leaf(current_list)
    used: set[int] = set()
    pairs: list[tuple[Resource, Resource]] = []
    missing: list[Resource] = []
    for old in (r for r in base if not r.origin.reference_only):
        new = by_id.get(old.id.lower()) or by_name.get(_key(old))
        if new is None and unresolved_parent(old):
            new = _only_fit(old, by_leaf)
        if new is None or id(new) in used:
            missing.append(old)
            continue
        used.add(id(new))
        pairs.append((old, new))
    added = [r for r in current_list if id(r) not in used]
    return pairs, missing, added


def _by_leaf(resources: list[Resource]) -> dict[tuple[str, str], list[Resource]]:
    """Resources by type and own (last) name segment, in their order: all a resource whose
    parent the IaC could not name is known by."""
    by_leaf: dict[tuple[str, str], list[Resource]] = {}
    for resource in resources:
        by_leaf.setdefault(_leaf(resource), []).append(resource)
    return by_leaf


def _only_fit(old: Resource, by_leaf: dict[tuple[str, str], list[Resource]]) -> Resource | None:
    """For a resource whose parent the IaC could not name, the one resource ``by_leaf`` holds of
    its type and own name in its resource group (in any group where the IaC's is unknown or a
    placeholder); None when none or several fit, since picking one of several would be a guess."""
    group = parse_resource_id(old.id).resource_group
    fits = [
        r
        for r in by_leaf.get(_leaf(old), [])
        if group is None or is_placeholder(group) or parse_resource_id(r.id).resource_group == group
    ]
    return fits[0] if len(fits) == 1 else None


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


def placed(declared_id: str, pairs: Iterable[tuple[Resource, Resource]]) -> str | None:
    """The full id that an IaC id with placeholders stands for, or None when it cannot be told:
    a placeholder subscription (or resource group) is the one where every declared resource
    that was found live lies, when there is exactly one; any other placeholder, or several
    places, leave it unknown. A missing resource's change records are looked up by it."""
    parts = declared_id.split("/")
    if len(parts) < 5 or parts[1].lower() != "subscriptions" or parts[3].lower() != "resourcegroups":
        return None
    found = [parse_resource_id(live.id) for _, live in pairs]
    for index, place in ((2, {p.subscription for p in found}), (4, {p.resource_group for p in found})):
        if is_placeholder(parts[index]):
            if len(place) != 1 or None in place:
                return None
            parts[index] = str(next(iter(place)))
    filled = "/".join(parts)
    return None if any(is_placeholder(part) for part in parts if part) else filled


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


def unread_by(gaps: Iterable[CoverageGap]) -> Callable[[Resource], bool]:
    """Whether a declared resource lies where the live read failed, so that its absence says
    nothing. A live gap names what it could not read (``scanner/sources/live/collect.py``): a
    subscription's Resource Graph query (``/subscriptions/S``), a parent's children
    (``{cluster id}/agentPools``, ``{workspace id}/computes``), a resource's diagnostic settings
    or an environment version by id; each hides the ids under it, a placeholder segment of an
    IaC id matching any. A gap that names no such scope (the subscription list, a management
    group, a batch of subscriptions, the scan's time limit) may hide anything. A template gap
    (a linked template not opened) hides nothing live."""
    scopes: list[list[str]] = []
    for gap in gaps:
        if gap.kind != "live":
            continue
        parts = [p.lower() for p in gap.scope.split("?", 1)[0].split("/") if p]
        if len(parts) < 2 or parts[0] != "subscriptions":
            return lambda _resource: True
        scopes.append(parts)

    def unread(resource: Resource) -> bool:
        parts = [p.lower() for p in resource.id.split("/") if p]
        return any(
            len(parts) >= len(scope) and all(a == b or is_placeholder(a) for a, b in zip(parts, scope, strict=False))
            for scope in scopes
        )

    return unread
