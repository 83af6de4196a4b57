"""Small helpers the built-in rules share: ARM value spellings and AKS pool facts."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from scanner import RULE_PAGES
from scanner.engine.checkapi import CheckContext, Principle, Violation
from scanner.model import azure_types as T
from scanner.model.resources import Resource, normalize_location
from scanner.model.unknown import Unknown, UnknownValueError, known
from scanner.model.utilization import DeploymentUsage

WAF_AI = "https://learn.microsoft.com/azure/well-architected/ai/"


def rule_page(rule_id: str) -> str:
    """The rule's own page, docs/rules/<id>.md, where its fix is shown as code: each built-in
    rule's help_uri, which SARIF viewers such as GitHub code scanning link as the rule's help."""
    return f"{RULE_PAGES}{rule_id}.md"


# Peer tools, as PeerRule.tool names them (docs/peers.md maps their rules to ours).
CHECKOV = "Checkov"
PSRULE = "PSRule"
AZURE_POLICY = "Azure Policy"
APRL = "APRL"
# Azure Quick Review: its ids are a service prefix and a number (aif-008, hub-004), where APRL's
# are GUID prefixes; labelling one as the other sends a reader to the wrong catalogue.
AZQR = "azqr"
# The Azure review checklist for AI landing zones (Azure/review-checklists, ai_lz_checklist): item ids AI.NN.
AI_LZ_CHECKLIST = "AI landing zone checklist"
STEAMPIPE = "steampipe"
CUSTODIAN = "Cloud Custodian"
ADVISOR = "Azure Advisor"
DRIFT_HELP = WAF_AI + "mlops-genaiops"
# The principle every drift rule enforces.
IAC_DRIFT = Principle(
    "Manage AI infrastructure as code and detect configuration drift, so that authentication, network "
    "isolation and cost controls stay as reviewed.",
    WAF_AI + "mlops-genaiops#infrastructure-as-code",
)


def every_gap(*checks: Iterator[Violation]) -> Iterator[Violation]:
    """The violations of a rule's independent checks, all of them.

    A rule that stopped at its first failing setting would hide the next until the first was
    fixed, and a baseline would then call it new. Each check is a generator, so nothing runs
    until it is drained here; an Unknown in one check does not hide the others' failures and is
    raised after them, so the engine also records the resource as undetermined.
    """
    unknown: UnknownValueError | None = None
    for check in checks:
        try:
            yield from check
        except UnknownValueError as exc:
            unknown = unknown or exc
    if unknown is not None:
        raise unknown


def judged_if(applies: Callable[[], bool], *checks: Iterator[Violation]) -> Iterator[Violation]:
    """The violations of ``checks`` on a resource the rule judges only when ``applies()`` (its
    kind, compute type or GPU size says the rule is about it).

    ``applies`` is asked only when some check fails or cannot decide: a resource that passes
    every check passes whatever the answer would be, so an unknown kind or size must not make it
    undetermined. When it is asked, an unknown answer leaves the resource undetermined and hides
    the failures, which may not concern it; a False one passes it.
    """
    found: list[Violation] = []
    unknown: UnknownValueError | None = None
    try:
        found.extend(every_gap(*checks))
    except UnknownValueError as exc:
        unknown = exc
    if (found or unknown is not None) and applies():
        yield from found
        if unknown is not None:
            raise unknown


def either(*conditions: Callable[[], bool]) -> bool:
    """Whether any of ``conditions`` holds, in three-valued logic: True as soon as one is known to
    hold, even if another is unknown; False when every one is known not to; otherwise the first
    unknown raises. A resource in a subnet passes whether or not its workspace's network is known."""
    unknown: UnknownValueError | None = None
    for condition in conditions:
        try:
            if condition():
                return True
        except UnknownValueError as exc:
            unknown = unknown or exc
    if unknown is not None:
        raise unknown
    return False


def known_number(value: Any, path: str) -> Any:
    """A count or size the rule compares: a number, or None when absent. Anything else (the
    string ``"2"``, which ARM passes to the resource provider as it is, or an object) is not
    known to be a number, so the rule cannot decide: Unknown raises."""
    value = known(value)
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    return known(Unknown(f"{path} is {value!r}, not a number", path=path))


def known_list(value: Any, path: str) -> list[Any] | None:
    """A list the rule walks, or None when absent. Anything else (a number where the API takes
    an array) is not known to be a list, so the rule cannot decide: Unknown raises."""
    value = known(value)
    if value is None or isinstance(value, list):
        return value
    raise UnknownValueError(Unknown(f"{path} is {type(value).__name__}, not an array", path=path))


def same_text(value: Any, *choices: str) -> bool:
    """Case-insensitive match of an ARM enum value; Unknown raises."""
    if isinstance(value, Unknown):
        raise UnknownValueError(value)
    return isinstance(value, str) and value.lower() in {c.lower() for c in choices}


def is_public(resource: Resource, path: str = "properties.publicNetworkAccess") -> bool | Unknown:
    """Whether ``publicNetworkAccess`` leaves the resource reachable; absent means Enabled."""
    value = resource.get(path)
    if isinstance(value, Unknown):
        return value
    return not same_text(value, "Disabled")


def is_project(workspace: Resource) -> bool:
    """A Foundry project workspace (kind ``Project``), which its hub's settings govern; an unknown
    kind raises (a rule asks only when the answer matters: see `judged_if`)."""
    return same_text(workspace.body.get("kind", ""), "Project")


def pool_is_gpu(pool: Resource, ctx: CheckContext) -> bool:
    """An agent pool runs GPU nodes; an absent size is AKS's default, a CPU size."""
    size = pool.get("properties.vmSize")
    return size is not None and ctx.sizes.is_gpu(size)


def pool_mode(pool: Resource) -> str:
    """``system`` or ``user`` (a standalone pool without a mode is a User pool)."""
    mode = pool.get("properties.mode")
    if isinstance(mode, Unknown):
        raise UnknownValueError(mode)
    return mode.lower() if isinstance(mode, str) else "user"


def cluster_name(pool: Resource) -> str:
    return pool.name.rsplit("/", 1)[0]


def compute_region(compute: Resource, ctx: CheckContext) -> Any:
    """Where an AML compute runs, normalized: ``computeLocation``, else its ``location``, else its
    workspace's region, which ARM gives a compute declared without one (a template or azapi body
    may omit it; the Terraform source fills it for azurerm)."""
    explicit = compute.get("properties.computeLocation")
    if explicit is not None:
        return normalize_location(explicit)
    if compute.location is not None:
        return compute.location
    workspace = ctx.inventory.parent(compute)
    return workspace.location if workspace is not None else None


def network_open(resource: Resource, acl_path: str = "properties.networkAcls.defaultAction") -> bool:
    """Reachable from the internet: ``publicNetworkAccess`` is not ``Disabled`` (absent means
    Enabled) and the network ACL's default action is not ``Deny`` (absent means Allow). Either
    closing settles it, whether or not the other is known."""
    return not either(
        lambda: not known(is_public(resource)),
        lambda: same_text(resource.get(acl_path, "Allow"), "Deny"),
    )


def unlinked(ctx: CheckContext, referrer_type: str, *paths: str) -> Unknown | None:
    """Why a resource that nothing of ``referrer_type`` is known to name may still be named: a
    resource of that type whose reference at one of ``paths`` is not known before deploy (a
    private endpoint's private link service, an autoscale setting's target)."""
    for referrer in ctx.inventory.of_type(referrer_type):
        if ctx.inventory.get(referrer.id) is None:  # a conditional resource, while hidden
            continue
        for path in paths:
            if isinstance(referrer.get(path), Unknown):
                return Unknown(f"{path} of '{referrer.name}' is not known before deploy: it may name this resource")
    return None


PRIVATE_LINK_PATHS = (
    "properties.privateLinkServiceConnections.0.properties.privateLinkServiceId",
    "properties.manualPrivateLinkServiceConnections.0.properties.privateLinkServiceId",
)


def identity_kinds(resource: Resource) -> set[str]:
    """The managed identity kinds a resource has: ``systemassigned``, ``userassigned`` or none."""
    kind = known(resource.get("identity.type"))
    if not isinstance(kind, str):
        return set()
    return {k.strip().lower() for k in kind.split(",") if k.strip().lower() not in ("", "none")}


def workspace_users(resource: Resource, ctx: CheckContext, path: str) -> list[Resource]:
    """The AML workspaces whose ``path`` (``properties.keyVault`` and the like) names ``resource``."""
    return ctx.inventory.referrers(resource, T.WORKSPACE, path)


def measured_deployment(deployment: Resource, ctx: CheckContext) -> DeploymentUsage:
    """What Azure Monitor measured of a model deployment in a live scan; undetermined when the
    scan read no metrics for it (an IaC scan, or a read that failed)."""
    usage = ctx.utilization.deployment_usage(deployment) if ctx.utilization is not None else None
    if usage is None:
        raise UnknownValueError(Unknown("no Azure Monitor metrics for this deployment"))
    return usage


def has_tag(resource: Resource, ctx: CheckContext, key_option: str, values_option: str) -> bool:
    """Whether the resource, or a parent, carries the tag the rule's options name (values compare
    case-insensitively; an empty value list accepts any value). AML schedules have no ARM
    ``tags``: their own are ``properties.tags``. Tags, or the tag's value, not known before
    deploy leave the answer unknown unless a known tag already says yes."""
    key = str(ctx.options.get(key_option, "")).lower()
    values = {str(v).lower() for v in ctx.options.get(values_option, [])}
    unknown: Unknown | None = None
    current: Resource | None = resource
    while current is not None:
        for tags in _tag_sets(current):
            if isinstance(tags, Unknown):
                unknown = unknown or tags
                continue
            for tag, value in tags.items():
                if tag.lower() != key:
                    continue
                if isinstance(value, Unknown):
                    unknown = unknown or value
                elif not values or str(value).lower() in values:
                    return True
        current = ctx.inventory.parent(current)
    if unknown is not None:
        raise UnknownValueError(unknown)
    return False


def _tag_sets(resource: Resource) -> list[Any]:
    """A resource's tag objects (or Unknown ones): ARM ``tags``, and an AML schedule's own
    ``properties.tags``."""
    found = [resource.body.get("tags")]
    if resource.type_key == T.ML_SCHEDULE.lower():
        found.append(resource.get("properties.tags"))
    return [t for t in found if isinstance(t, (dict, Unknown))]


# Container Apps workload profile types with GPUs: serverless (Consumption-GPU-NC8as-T4, ...)
# and dedicated (NC24-A100, ...).
GPU_PROFILE_PREFIXES = ("nc", "consumption-gpu")


def gpu_profile(profile: Any) -> bool:
    """Whether a ``workloadProfiles`` entry of a Container Apps environment has GPUs."""
    kind = known(profile.get("workloadProfileType", "")) if isinstance(profile, dict) else ""
    return str(kind).lower().startswith(GPU_PROFILE_PREFIXES)


def comparable_region(value: Any) -> Any:
    """A region to compare, or a symbolic one such as ``resourceGroup().location`` that equals
    itself; any other Unknown makes the rule undetermined."""
    if isinstance(value, Unknown) and value.symbol is None:
        known(value)
    return value


# -- Connections: the explicit links from AI accounts, Foundry projects and workspaces to the
# services they use. A link is only what a connection states: `properties.metadata.ResourceId`
# (AVM and the Foundry portal write it; the key compares case-insensitively) naming the resource,
# or, for AI Search, `properties.target` being the service's endpoint, https://NAME.search.windows.net
# (Search service names are globally unique, so the host names the service).

CONNECTION_TYPES = (T.ACCOUNT_CONNECTION, T.PROJECT_CONNECTION, T.WORKSPACE_CONNECTION)
# The connection category of AI Search (ConnectionCategory `CognitiveSearch`, as AVM's Foundry
# module writes it).
SEARCH_CATEGORIES = ("CognitiveSearch",)
# The categories of a workspace's connection to an AI services account.
ACCOUNT_CATEGORIES = ("AIServices", "AzureOpenAI")
# A Search service's endpoint in the public cloud.
_SEARCH_ENDPOINT = re.compile(r"^https://(?P<name>[a-z0-9][a-z0-9-]*)\.search\.windows\.net/?$", re.IGNORECASE)


def _may_be_search(connection: Resource) -> bool:
    """Whether a connection whose link cannot be read could be a Search connection: its category
    is AI Search's, or is itself unknown."""
    category = connection.get("properties.category")
    return isinstance(category, Unknown) or same_text(category, *SEARCH_CATEGORIES)


def connection_search(connection: Resource, ctx: CheckContext) -> Resource | Unknown | None:
    """The AI Search service a connection names, None when it names none, or Unknown when it may
    name one the scan cannot see: the id or endpoint is not known before deploy, or names a
    service that is not among the scanned resources."""
    ref = connection.get("properties.metadata.ResourceId")
    if isinstance(ref, str):
        found = ctx.inventory.get(ref)
        if found is not None:
            return found if found.type_key == T.SEARCH_SERVICE.lower() else None
        if f"/providers/{T.SEARCH_SERVICE.lower()}/" in ref.lower():
            return Unknown(
                f"the Search service of connection '{connection.name}' is not among the scanned resources",
                path="properties.metadata.ResourceId",
            )
    target = connection.get("properties.target")
    if isinstance(target, str):
        match = _SEARCH_ENDPOINT.match(target.strip())
        if match is None:
            return None  # the connection's endpoint is not a Search service's
        name = match["name"].lower()
        for search in ctx.inventory.of_type(T.SEARCH_SERVICE):
            if search.name.lower() == name and ctx.inventory.get(search.id) is not None:
                return search
        return Unknown(
            f"the Search service '{name}' of connection '{connection.name}' is not among the scanned resources",
            path="properties.target",
        )
    for value in (ref, target):
        if isinstance(value, Unknown) and _may_be_search(connection):
            return value
    return None


def connection_account(connection: Resource, ctx: CheckContext) -> Resource | Unknown | None:
    """The AI services account a workspace connection names by `metadata.ResourceId` (a Foundry
    hub's `AIServices` or `AzureOpenAI` connection), None when it names none, or Unknown when the
    id is not known before deploy or names an account that is not among the scanned resources."""
    ref = connection.get("properties.metadata.ResourceId")
    if isinstance(ref, Unknown):
        category = connection.get("properties.category")
        return ref if isinstance(category, Unknown) or same_text(category, *ACCOUNT_CATEGORIES) else None
    found = ctx.inventory.get(ref)
    if found is not None:
        return found if found.type_key == T.COGNITIVE_ACCOUNT.lower() else None
    if isinstance(ref, str) and f"/providers/{T.COGNITIVE_ACCOUNT.lower()}/" in ref.lower():
        return Unknown(
            f"the account of connection '{connection.name}' is not among the scanned resources",
            path="properties.metadata.ResourceId",
        )
    return None


def account_connections(account: Resource, ctx: CheckContext) -> list[Resource]:
    """The connections through which an account's models are given data: the account's own, its
    Foundry projects', and those of every workspace (hub) that connects to the account."""
    found = list(ctx.inventory.children(account, T.ACCOUNT_CONNECTION))
    for project in ctx.inventory.children(account, T.AI_PROJECT):
        found += ctx.inventory.children(project, T.PROJECT_CONNECTION)
    for link in ctx.inventory.referrers(account, T.WORKSPACE_CONNECTION, "properties.metadata.ResourceId"):
        workspace = ctx.inventory.parent(link)
        if workspace is not None:
            found += [c for c in ctx.inventory.children(workspace, T.WORKSPACE_CONNECTION) if c is not link]
    return found


def served_search(
    account: Resource, ctx: CheckContext
) -> tuple[list[Resource], list[tuple[Resource, Unknown]], Unknown | None]:
    """The AI Search services whose data an account's models are given, through explicit
    connections only, and the first reason some connection's Search service cannot be known.

    Also the services they may be given, each with why: those of a workspace (hub) whose
    connection to an account is not known before deploy (it may be this account).
    """
    services: list[Resource] = []
    unknown: Unknown | None = None
    for connection in account_connections(account, ctx):
        search = connection_search(connection, ctx)
        if isinstance(search, Unknown):
            unknown = unknown or search
        elif search is not None and search not in services:
            services.append(search)
    maybe: list[tuple[Resource, Unknown]] = []
    for workspace in ctx.inventory.of_type(T.WORKSPACE):
        links = ctx.inventory.children(workspace, T.WORKSPACE_CONNECTION)
        doubt = next((a for a in (connection_account(link, ctx) for link in links) if isinstance(a, Unknown)), None)
        if doubt is None:
            continue
        for link in links:
            search = connection_search(link, ctx)
            if isinstance(search, Resource) and search not in services:
                maybe.append((search, doubt))
    return services, maybe, unknown


def serving_accounts(
    search: Resource, ctx: CheckContext
) -> tuple[list[Resource], list[tuple[Resource, Unknown]], Unknown | None]:
    """The AI services accounts whose models a Search service's data is given to, through explicit
    connections only: an account's or its projects' connection to the service, or a workspace that
    connects both to the service and to the account.

    Also the accounts that may be given it, each with why: the owners of a connection whose
    Search service is not known before deploy (it may be this one). The Unknown is the first
    reason a connection that may reach this service cannot be followed to its accounts.
    """
    accounts: list[Resource] = []
    maybe: list[tuple[Resource, Unknown]] = []
    unknown: Unknown | None = None
    for connection in ctx.inventory.of_type(*CONNECTION_TYPES):
        if ctx.inventory.get(connection.id) is None:  # a conditional connection, while hidden
            continue
        named = connection_search(connection, ctx)
        if named is not search and not isinstance(named, Unknown):
            continue
        owners, why = _connection_accounts(connection, ctx)
        unknown = unknown or why
        if isinstance(named, Unknown):
            maybe += [(a, named) for a in owners]
        else:
            accounts += [a for a in owners if a not in accounts]
    return accounts, maybe, unknown


def _connection_accounts(connection: Resource, ctx: CheckContext) -> tuple[list[Resource], Unknown | None]:
    """The AI services accounts a connection gives data to: its owner account (a project's
    account), or every account its owning workspace (hub) connects to; and why some cannot be
    known (the owner, or a hub's link to an account, is not among the scanned resources)."""
    owner = ctx.inventory.parent(connection)
    if connection.type_key == T.PROJECT_CONNECTION.lower() and owner is not None:
        owner = ctx.inventory.parent(owner)
    if owner is None:
        return [], Unknown(f"the owner of connection '{connection.name}' is not among the scanned resources")
    if owner.type_key == T.COGNITIVE_ACCOUNT.lower():
        return [owner], None
    found: list[Resource] = []
    unknown: Unknown | None = None
    if owner.type_key == T.WORKSPACE.lower():
        for link in ctx.inventory.children(owner, T.WORKSPACE_CONNECTION):
            account = connection_account(link, ctx)
            if isinstance(account, Unknown):
                unknown = unknown or account
            elif account is not None:
                found.append(account)
    return found, unknown
