"""The one model every source produces and every check reads: ARM-shaped resources.

A `Resource` holds the JSON body the ARM REST API would return for it (``id``, ``name``,
``type``, ``location``, ``kind``, ``sku``, ``identity``, ``tags``, ``properties``), plus an
`Origin` saying where it came from, precisely enough to put a SARIF result on its line.
An `Inventory` answers relationship questions (a workspace's storage account, a cluster's
pools) from ids, so checks never need to know which source they are reading.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.model import azure_types as T
from scanner.model.jsondoc import Document, Position
from scanner.model.places import Declaration, Place
from scanner.model.unknown import Unknown

LIVE_KIND = "live"

_ID_PROVIDER = re.compile(r"/providers/", re.IGNORECASE)


def normalize_location(value: Any) -> Any:
    """Canonical region name: ``"East US"`` -> ``"eastus"``; Unknown and None pass through."""
    if isinstance(value, str):
        return value.replace(" ", "").lower()
    return value


@dataclass(frozen=True, slots=True)
class ParsedId:
    """The parts of an ARM resource id that matter for lookups."""

    subscription: str | None
    resource_group: str | None
    resource_type: str | None
    name_chain: str | None


@functools.lru_cache(maxsize=16_384)
def parse_resource_id(resource_id: str) -> ParsedId:
    """Split ``/subscriptions/s/resourceGroups/g/providers/NS/t1/n1/t2/n2`` into its parts.

    Kept for the ids most recently asked (a frozen result is safe to share): a plan's reader,
    then the inventory's index, then the cost summary each parse every resource's id, so the
    cache holds a 10,000-resource plan's ids between them. Full, it takes about 8 MB (a live scan
    of 100,000 resources peaked that much higher)."""
    parts = [p for p in resource_id.split("/") if p]
    lowered = [p.lower() for p in parts]
    subscription = (
        parts[lowered.index("subscriptions") + 1] if "subscriptions" in lowered[:1] and len(parts) > 1 else None
    )
    group = None
    if "resourcegroups" in lowered:
        i = lowered.index("resourcegroups")
        group = parts[i + 1] if i + 1 < len(parts) else None
    pieces = _ID_PROVIDER.split(resource_id)
    if len(pieces) < 2:
        return ParsedId(subscription, group, None, None)
    segments = [p for p in pieces[-1].split("/") if p]
    if len(segments) < 3:
        return ParsedId(subscription, group, None, None)
    namespace, rest = segments[0], segments[1:]
    types = rest[0::2]
    names = rest[1::2]
    if len(types) != len(names):
        return ParsedId(subscription, group, None, None)
    return ParsedId(subscription, group, "/".join([namespace, *types]), "/".join(names))


def is_placeholder(segment: str) -> bool:
    """Whether an id segment stands for what the input does not know: sources write an unknown
    subscription, group or name as ``{subscriptionId}``, ``{resourceGroupName}`` and the like."""
    return segment.startswith("{")


def build_resource_id(subscription: str, resource_group: str, resource_type: str, name_chain: str) -> str:
    """The ARM id of a resource group-scoped resource (child types interleave their names)."""
    namespace, *types = resource_type.split("/")
    names = name_chain.split("/")
    path = "/".join(f"{t}/{n}" for t, n in zip(types, names, strict=False))
    return f"/subscriptions/{subscription}/resourceGroups/{resource_group}/providers/{namespace}/{path}"


@dataclass(frozen=True)
class CoverageGap:
    """Something the scan could not see, and why: a live scope it could not read, or a linked
    template it could not open. Findings there were not checked, so the scan is incomplete."""

    scope: str
    status: int | None
    reason: str
    kind: str = "live"  # "live": an ARM read; "template": a linked template or parameters file

    @property
    def status_label(self) -> str:
        """The HTTP status of a read that failed, else why nothing answered."""
        if self.status:
            return str(self.status)
        return "no response" if self.kind == "live" else "not read"


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a resource came from.

    ``property_map`` translates an ARM property path to the source path that produced it
    (a Terraform attribute), keyed by the lower-cased ARM path; without it, ARM paths are
    looked up in the source object directly. ``path_rewrite`` maps a virtual resource's paths
    into its host object (an agent pool declared inside its cluster's ``agentPoolProfiles``).
    """

    kind: str
    file: str | None
    pointer: str = ""
    document: Document | None = field(default=None, repr=False, compare=False)
    address: str | None = None
    symbolic_name: str | None = None
    property_map: Mapping[str, tuple[str, ...]] | None = field(default=None, repr=False, compare=False)
    path_rewrite: tuple[str, str] | None = None
    reference_only: bool = False
    # What a plan does to the resource, in Terraform's words (create, update, no-op, replace);
    # None where the input is not a plan. A what-if's changeType is mapped to the same words.
    action: str | None = None
    # A template resource deployed only if a condition nobody knows before deploy holds (its
    # own, an enclosing module's, or a copy count): its findings are undetermined.
    condition: str | None = None
    # A template resource's declaration chain (``hub/workspace``, ``hubs[1]/workspace``): which
    # declaration, and which copy of it, this is.
    instance: str | None = None
    # What the source form says about ARM properties it cannot set, by lower-cased ARM path
    # (azurerm has no idle shutdown for compute instances): advice for a finding on that property.
    notes: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    # The resource's block in the .tf or .bicep source, when that source was found: reports
    # show it instead of the plan or compiled template, which nobody edits.
    declaration: Declaration | None = field(default=None, repr=False, compare=False)
    # The lower-cased ARM property paths the configuration itself writes (a Terraform plan's
    # ``configuration`` expressions), as against values a provider fills in by default; None
    # where the source does not tell them apart. Drift compares only what was written.
    configured: frozenset[str] | None = field(default=None, repr=False, compare=False)

    @property
    def creates(self) -> bool:
        """Whether the plan that declares the resource creates it (a replacement included)."""
        return self.action in ("create", "replace")

    @property
    def in_a_file(self) -> bool:
        """Whether some file declares the resource: a scanned one, or the source behind it."""
        return self.document is not None or self.declaration is not None

    def note(self, arm_path: str) -> str | None:
        """How to set an ARM property this source form cannot express, if it cannot."""
        return self.notes.get(arm_path.lower()) if self.notes else None

    def position(self, arm_path: str | None = None) -> Position | None:
        """Line and column, in the scanned file, of the resource or of one of its properties
        where it can be found."""
        if self.document is None:
            return None
        return self.document.position(self.pointer, self._source_path(arm_path or ""))

    def scanned_place(self, arm_path: str | None = None) -> Place | None:
        """The scanned file and the position in it; None for a live resource no file declares."""
        if self.file is None:
            return None
        position = self.position(arm_path)
        if position is None:
            return Place(self.file)
        return Place(self.file, position.line, position.column, position.pointer)

    def place(self, arm_path: str | None = None) -> Place | None:
        """Where a reader should look: the declaration's line for the property when the source
        people wrote was found, else the scanned file's position."""
        if self.declaration is not None:
            return self.declaration.place(self._source_path(arm_path or ""))
        return self.scanned_place(arm_path)

    def related_place(self, arm_path: str | None = None) -> Place | None:
        """The scanned file's position when ``place`` is a source line instead (reports keep it
        beside that line); None when ``place`` is the scanned file itself."""
        return self.scanned_place(arm_path) if self.declaration is not None else None

    def _source_path(self, arm_path: str) -> tuple[str, ...]:
        """An ARM property path as the source spells it: into the host object for a virtual
        resource, then through ``property_map`` (a Terraform attribute path)."""
        path = arm_path
        if self.path_rewrite is not None:
            source_prefix, host_prefix = self.path_rewrite
            if path.lower().startswith(source_prefix.lower()):
                path = host_prefix + path[len(source_prefix) :]
            elif not path:
                path = host_prefix
        if not path:
            return ()
        segments = path.split(".")
        if self.property_map is None:
            return tuple(segments)
        for end in range(len(segments), 0, -1):
            mapped = self.property_map.get(".".join(segments[:end]).lower())
            if mapped is not None:
                return mapped + tuple(segments[end:])
        return ()


def _may_be_project(workspace: Resource) -> bool:
    """A workspace of kind ``Project``, or one whose kind is not known before deploy."""
    kind = workspace.body.get("kind")
    return isinstance(kind, Unknown) or (isinstance(kind, str) and kind.lower() == "project")


def _member(container: dict[str, Any], key: str) -> Any:
    """A member whose key is spelt otherwise: ARM property names are case-insensitive."""
    lowered = key.lower()
    for k, v in container.items():
        if k.lower() == lowered:
            return v
    return None


def get_path(body: Any, path: str) -> Any:
    """Read ``a.b.0.c`` from a JSON-like value, case-insensitively; None when absent.

    Reading through an `Unknown` yields that Unknown, labelled with the full path, so a
    check learns *which* deciding property nobody knows. Checks read properties this way
    several times per resource, so each step is written out here, not in a function.
    """
    value = body
    for key in path.split("."):
        if isinstance(value, dict):
            value = value[key] if key in value else _member(value, key)
        elif isinstance(value, list) and key.isdigit():
            index = int(key)
            value = value[index] if index < len(value) else None
        elif isinstance(value, Unknown):
            return value.at(path)
        else:
            return None
        if value is None:
            return None
    return value.at(path) if isinstance(value, Unknown) else value


@dataclass(eq=False, slots=True)
class Resource:
    """One Azure resource in ARM REST shape, wherever it was read from."""

    id: str
    type: str
    name: str
    body: dict[str, Any]
    origin: Origin
    # What identifies the resource when its display name does not: a template resource whose name
    # cannot be evaluated shows the expression, but is keyed by its unique placeholder name.
    key_name: str | None = None
    location: Any = field(init=False)
    type_key: str = field(init=False)

    def __post_init__(self) -> None:
        self.type = T.canonical_type(self.type)
        self.type_key = self.type.lower()
        self.location = normalize_location(self.body.get("location"))

    def get(self, path: str, default: Any = None) -> Any:
        value = get_path(self.body, path)
        return default if value is None else value

    @property
    def tags(self) -> dict[str, Any]:
        tags = self.body.get("tags")
        return tags if isinstance(tags, dict) else {}

    @property
    def parent_id(self) -> str | None:
        """The id of the parent resource, for child types such as computes and agent pools."""
        parts = self.id.rstrip("/").split("/")
        if self.type.count("/") < 2 or len(parts) < 4:
            return None
        return "/".join(parts[:-2])

    @property
    def identity_key(self) -> str:
        """What stays the same for this resource across runs and across IaC forms.

        A plan and a template of one estate agree on type and name, but not on ids (a plan
        does not know its subscription, a template not its resource group), so IaC sources
        key on type and name; live resources key on their full id.
        """
        if self.origin.kind == LIVE_KIND:
            return self.id.lower()
        return f"{self.type_key}/{(self.key_name or self.name).lower()}"


class Inventory:
    """All resources from one input, with the lookups checks need.

    Agent pools declared inline in a cluster's ``agentPoolProfiles`` become child resources
    here, once, so that a pool is evaluated the same way whether a template, a plan or the
    live API described it.
    """

    def __init__(self, resources: Iterable[Resource]) -> None:
        self.resources: list[Resource] = list(resources)
        self._looked_up: list[Resource] | None = None
        self.hide_conditional = False  # lookups answer as if no conditional resource were deployed
        self._by_id: dict[str, Resource] = {}
        self._by_group_key: dict[tuple[str, str, str], Resource] = {}
        self._by_type: dict[str, list[Resource]] = defaultdict(list)
        self._children: dict[str, list[Resource]] = defaultdict(list)
        self._reverse: dict[tuple[str, str], dict[Resource, list[Resource]]] = {}
        for resource in self.resources:
            self._index(resource)
        for resource in list(self._by_type.get(T.MANAGED_CLUSTER.lower(), [])):
            for pool in self._inline_pools(resource):
                self.resources.append(pool)
                self._index(pool)
        # Template resources that may not be deployed (an unknown condition). A rule that looks one
        # up decides on something that may not exist, so the engine watches for them.
        self.conditional = any(r.origin.condition for r in self.resources)

    def watch_lookups(self) -> None:
        """Start recording the conditional resources that lookups return (the engine, per check)."""
        self._looked_up = [] if self.conditional else None

    def conditional_lookups(self) -> list[Resource]:
        """The conditional resources returned since `watch_lookups`, and stop recording."""
        found, self._looked_up = self._looked_up or [], None
        return found

    def _seen(self, found: list[Resource]) -> list[Resource]:
        """What a lookup answers: recorded while watched, and without the conditional resources
        while they are hidden."""
        if self._looked_up is not None:
            self._looked_up.extend(r for r in found if r.origin.condition)
        if self.hide_conditional:
            return [r for r in found if not r.origin.condition]
        return found

    def _index(self, resource: Resource) -> None:
        key = resource.id.lower()
        self._by_id.setdefault(key, resource)
        parsed = parse_resource_id(resource.id)
        if parsed.resource_group and parsed.name_chain:
            group_key = (parsed.resource_group.lower(), resource.type_key, parsed.name_chain.lower())
            self._by_group_key.setdefault(group_key, resource)
        self._by_type[resource.type_key].append(resource)
        parent = resource.parent_id
        if parent:
            self._children[parent.lower()].append(resource)

    def _inline_pools(self, cluster: Resource) -> Iterator[Resource]:
        """The pools a cluster declares in ``agentPoolProfiles`` and not as child resources."""
        profiles = cluster.get("properties.agentPoolProfiles")
        if not isinstance(profiles, list):
            return
        declared = {p.name.rsplit("/", 1)[-1].lower() for p in self.children(cluster, T.AGENT_POOL)}
        none_system = not any(_is_system(p) for p in profiles)
        for index, profile in enumerate(profiles):
            if not isinstance(profile, dict):
                continue
            pool_name = profile.get("name")
            pool_name = pool_name if isinstance(pool_name, str) else f"pool{index}"
            if pool_name.lower() not in declared:
                yield _inline_pool(cluster, profile, index, pool_name, index == 0 and none_system)

    def get(self, resource_id: Any) -> Resource | None:
        """The resource with this id (case-insensitive); falls back to group, type and name.

        The fallback lets a template's placeholder subscription, or a plan's known-after-apply
        subscription, still find the resource it refers to.
        """
        found = self._find(resource_id)
        if found is not None and found.origin.condition:
            return next(iter(self._seen([found])), None)
        return found

    def _find(self, resource_id: Any) -> Resource | None:
        if not isinstance(resource_id, str):
            return None
        found = self._by_id.get(resource_id.lower())
        if found is None:
            parsed = parse_resource_id(resource_id)
            if parsed.resource_group and parsed.resource_type and parsed.name_chain:
                key = (parsed.resource_group.lower(), parsed.resource_type.lower(), parsed.name_chain.lower())
                found = self._by_group_key.get(key)
        return found

    def of_type(self, *types: str) -> list[Resource]:
        out: list[Resource] = []
        for resource_type in types:
            out.extend(self._by_type.get(resource_type.lower(), []))
        return out

    def children(self, parent: Resource, child_type: str | None = None) -> list[Resource]:
        found = self._children.get(parent.id.lower(), [])
        if child_type is not None:
            found = [c for c in found if c.type_key == child_type.lower()]
        return list(self._seen(found))

    def parent(self, child: Resource) -> Resource | None:
        parent_id = child.parent_id
        return self.get(parent_id) if parent_id else None

    # Relationships the Well-Architected AI rules ask about.

    def workspace_dependency(
        self, workspace: Resource, path: str, label: str, through_hub: bool = True
    ) -> Resource | Unknown | None:
        """The resource a workspace names at ``path`` (``properties.storageAccount``,
        ``properties.keyVault``, ``properties.containerRegistry``), or None when it names none.

        A ``Project`` workspace keeps its data in its hub's storage and uses the hub's vault and
        registry, so it answers with the hub's (through ``properties.hubResourceId``). Unknown,
        with a reason naming the workspace, when the id is not known before deploy or names a
        resource that is not among the scanned ones: a rule must not pass on what it cannot see.
        """
        ref = workspace.get(path)
        if ref is None:
            hub = workspace.get("properties.hubResourceId")
            if hub is None or not through_hub or not _may_be_project(workspace):
                return None
            found = self.get(hub)
            if found is None or isinstance(hub, Unknown):
                reason = (
                    "is not known before deploy" if isinstance(hub, Unknown) else "is not among the scanned resources"
                )
                return Unknown(
                    f"the hub of project workspace '{workspace.name}' {reason}", path="properties.hubResourceId"
                )
            return self.workspace_dependency(found, path, label, through_hub=False)  # a hub has no hub
        if isinstance(ref, Unknown):
            return Unknown(f"the {label} of workspace '{workspace.name}' is not known before deploy", path=path)
        found = self.get(ref)
        if found is None:
            return Unknown(f"the {label} of workspace '{workspace.name}' is not among the scanned resources", path=path)
        return found

    def workspace_computes(self, workspace: Resource) -> list[Resource]:
        return self.children(workspace, T.COMPUTE)

    def attached_cluster(self, compute: Resource) -> Resource | Unknown | None:
        """The AKS cluster behind an attached Kubernetes/AKS compute."""
        ref = compute.get("properties.resourceId")
        return ref if isinstance(ref, Unknown) else self.get(ref)

    def referrers(self, target: Resource, referrer_type: str, path: str) -> list[Resource]:
        """Resources of ``referrer_type`` whose property ``path`` holds ``target``'s id.

        The reverse index is built once per (type, path), so a rule asking this of every
        storage account or cluster stays linear in the estate's size.
        """
        key = (referrer_type.lower(), path.lower())
        index = self._reverse.get(key)
        if index is None:
            index = defaultdict(list)
            for referrer in self.of_type(referrer_type):
                named = self._find(referrer.get(path))
                if named is not None:
                    index[named].append(referrer)
            self._reverse[key] = index
        return list(self._seen(index.get(target, [])))

    def extensions(self, target: Resource, extension_type: str) -> list[Resource]:
        """Extension resources attached to ``target`` (diagnostic settings): their ids are the
        target's id followed by ``/providers/<extension type>/<name>``."""
        key = (extension_type.lower(), "/providers/")
        index = self._reverse.get(key)
        if index is None:
            index = defaultdict(list)
            for extension in self.of_type(extension_type):
                scope, marker, _ = extension.id.rpartition("/providers/")
                extended = self._find(scope) if marker else None
                if extended is not None:
                    index[extended].append(extension)
            self._reverse[key] = index
        return list(self._seen(index.get(target, [])))

    def has_private_endpoint(self, target: Resource) -> bool:
        """Whether a private endpoint connects to ``target``: a declared one that names it as its
        private link service (a private endpoint connects to one), or a connection the service
        itself reports (live, what-if)."""
        reported = target.get("properties.privateEndpointConnections")
        if isinstance(reported, list) and reported:
            return True
        return bool(
            self.referrers(
                target, T.PRIVATE_ENDPOINT, "properties.privateLinkServiceConnections.0.properties.privateLinkServiceId"
            )
            or self.referrers(
                target,
                T.PRIVATE_ENDPOINT,
                "properties.manualPrivateLinkServiceConnections.0.properties.privateLinkServiceId",
            )
        )

    def autoscale_settings(self, target: Resource) -> list[Resource]:
        """Autoscale settings whose ``targetResourceUri`` is ``target``."""
        return self.referrers(target, T.AUTOSCALE_SETTING, "properties.targetResourceUri")

    def cluster_pools(self, cluster: Resource) -> list[Resource]:
        return self.children(cluster, T.AGENT_POOL)

    def pool_cluster(self, pool: Resource) -> Resource | None:
        return self.parent(pool)


def _is_system(profile: Any) -> bool:
    """An ``agentPoolProfiles`` entry that names its mode System."""
    mode = profile.get("mode") if isinstance(profile, dict) else None
    return isinstance(mode, str) and mode.lower() == "system"


def _inline_pool(cluster: Resource, profile: dict[str, Any], index: int, pool_name: str, system: bool) -> Resource:
    """One ``agentPoolProfiles`` entry as the agent pool child resource ARM also lists; ``system``:
    it is the first pool of a cluster that names no System pool, which AKS makes System."""
    properties = {k: v for k, v in profile.items() if k != "name"}
    if "mode" not in properties and system:
        properties["mode"] = "System"
    origin = dataclasses.replace(
        cluster.origin,
        path_rewrite=("properties", f"properties.agentPoolProfiles.{index}"),
        instance=f"{cluster.origin.instance}/agentPoolProfiles[{index}]" if cluster.origin.instance else None,
        configured=_pool_configured(cluster.origin.configured, index),
    )
    pool_id = f"{cluster.id}/agentPools/{pool_name}"
    return Resource(
        id=pool_id,
        type=T.AGENT_POOL,
        name=f"{cluster.name}/{pool_name}",
        body={"id": pool_id, "name": pool_name, "type": T.AGENT_POOL, "properties": properties},
        origin=origin,
        key_name=f"{cluster.key_name}/{pool_name}" if cluster.key_name else None,
    )


def _pool_configured(configured: frozenset[str] | None, index: int) -> frozenset[str] | None:
    """What the cluster's configuration writes of its ``agentPoolProfiles[index]``, as the pool's
    own paths (``properties.agentpoolprofiles.0.vmsize`` -> ``properties.vmsize``), so drift on
    the pool asks the same question as on a pool declared on its own."""
    if configured is None:
        return None
    prefix = f"properties.agentpoolprofiles.{index}."
    inside = (path[len(prefix) :] for path in configured if path.startswith(prefix))
    return frozenset("name" if path == "name" else f"properties.{path}" for path in inside)
