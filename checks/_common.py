"""Small helpers the built-in rules share: ARM value spellings and AKS pool facts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from scanner import RULE_PAGES
from scanner.engine.checkapi import CheckContext, Principle, Violation
from scanner.model import azure_types as T
from scanner.model.resources import Resource, normalize_location
from scanner.model.unknown import Unknown, UnknownValueError, known

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


_DURATION = re.compile(
    r"^P(?:(?P<days>\d+(?:\.\d+)?)D)?(?:T(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$",
    re.IGNORECASE,
)


def parse_duration(text: Any) -> timedelta | None:
    """An ISO-8601 duration such as ``PT15M`` or ``P1DT2H``; None when it is not one."""
    if not isinstance(text, str):
        return None
    match = _DURATION.match(text.strip())
    if not match or text.strip().upper() in ("P", "PT"):
        return None
    parts = {k: float(v) for k, v in match.groupdict().items() if v}
    return timedelta(**parts)


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
    Enabled) and the network ACL's default action is not ``Deny`` (absent means Allow)."""
    if not known(is_public(resource)):
        return False
    return not same_text(resource.get(acl_path, "Allow"), "Deny")


def identity_kinds(resource: Resource) -> set[str]:
    """The managed identity kinds a resource has: ``systemassigned``, ``userassigned`` or none."""
    kind = known(resource.get("identity.type"))
    if not isinstance(kind, str):
        return set()
    return {k.strip().lower() for k in kind.split(",") if k.strip().lower() not in ("", "none")}


def workspace_users(resource: Resource, ctx: CheckContext, path: str) -> list[Resource]:
    """The AML workspaces whose ``path`` (``properties.keyVault`` and the like) names ``resource``."""
    return ctx.inventory.referrers(resource, T.WORKSPACE, path)


def has_tag(resource: Resource, ctx: CheckContext, key_option: str, values_option: str) -> bool:
    """Whether the resource, or a parent, carries the tag the rule's options name (values compare
    case-insensitively; an empty value list accepts any value)."""
    key = str(ctx.options.get(key_option, "")).lower()
    values = {str(v).lower() for v in ctx.options.get(values_option, [])}
    current: Resource | None = resource
    while current is not None:
        for tag, value in current.tags.items():
            if tag.lower() == key and (not values or str(value).lower() in values):
                return True
        current = ctx.inventory.parent(current)
    return False


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
