"""AZAI-305 global-deployment-residency."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from checks._common import APRL, WAF_AI, comparable_region, rule_page, served_search
from scanner.engine.checkapi import (
    CheckContext,
    PeerRule,
    Pillar,
    Principle,
    Remediation,
    Severity,
    Violation,
    rule,
)
from scanner.model import azure_types as T
from scanner.model.resources import Resource, normalize_location
from scanner.model.unknown import Unknown, UnknownValueError, known

DEPLOYMENT_TYPES = "https://learn.microsoft.com/azure/foundry/foundry-models/concepts/deployment-types"

# Where each deployment type (the deployment's `sku.name`) processes prompts, per Microsoft Learn,
# "Deployment types in Microsoft Foundry Models": Global types "may be processed in any Azure
# region" (DeveloperTier too: "any Azure region"), DataZone types only within the
# Microsoft-specified data zone (US or EU), Standard and ProvisionedManaged in the deployment
# region, which is the account's (a deployment has no location of its own).
GLOBAL = "global"
DATA_ZONE = "datazone"
REGIONAL = "region"
SCOPES = {
    "globalstandard": GLOBAL,
    "globalprovisionedmanaged": GLOBAL,
    "globalbatch": GLOBAL,
    "developertier": GLOBAL,
    "datazonestandard": DATA_ZONE,
    "datazoneprovisionedmanaged": DATA_ZONE,
    "datazonebatch": DATA_ZONE,
    "standard": REGIONAL,
    "provisionedmanaged": REGIONAL,
}

# The Azure regions of each data zone. A DataZone deployment in an account "located in a European
# Union Member Nation" is processed "in that or any other European Union Member Nation"; one in the
# United States, anywhere in the United States (Azure OpenAI data privacy, "Data residency"). The
# regions are those whose geography is an EU member nation, or the United States, in Microsoft's
# Azure regions list (https://learn.microsoft.com/azure/reliability/regions-list). Regions in
# Norway, Switzerland or the United Kingdom are not in an EU member nation, so not in the EU data
# zone.
EU_DATA_ZONE = (
    "austriaeast",
    "belgiumcentral",
    "francecentral",
    "francesouth",
    "germanynorth",
    "germanywestcentral",
    "italynorth",
    "northeurope",
    "polandcentral",
    "spaincentral",
    "swedencentral",
    "swedensouth",
    "westeurope",
)
US_DATA_ZONE = (
    "centralus",
    "eastus",
    "eastus2",
    "northcentralus",
    "southcentralus",
    "westcentralus",
    "westus",
    "westus2",
    "westus3",
)
DATA_ZONES = {"EU": frozenset(EU_DATA_ZONE), "US": frozenset(US_DATA_ZONE)}
POLICIES = (REGIONAL, DATA_ZONE, "any")
# Every processing scope, widest first: a deployment whose type is not known may have any.
SCOPE_ORDER = (GLOBAL, DATA_ZONE, REGIONAL)


@rule(
    id="AZAI-305",
    slug="global-deployment-residency",
    title="A model deployment may process data-resident data outside its boundary",
    pillar=Pillar.PERFORMANCE,
    severity=Severity.HIGH,
    resource_types=(T.MODEL_DEPLOYMENT,),
    reads=(
        T.COGNITIVE_ACCOUNT,
        T.AI_PROJECT,
        T.ACCOUNT_CONNECTION,
        T.PROJECT_CONNECTION,
        T.WORKSPACE_CONNECTION,
        T.SEARCH_SERVICE,
    ),
    options={"residency": DATA_ZONE, "data_resident_regions": list(EU_DATA_ZONE)},
    choices={"residency": POLICIES},
    peers=(
        PeerRule(
            APRL,
            "ac3add17",
            "Ensure AOAI models are deployed using Data Zone Standard for data residency requirements",
            "Advice without a query (Azure/Azure-Proactive-Resiliency-Library-v2 "
            "azure-resources/CognitiveServices/accounts/recommendations.yaml@9b93db71, automationAvailable false). "
            "azai fails only where the account, or the Search data it serves, is in a data-resident region; regional "
            "deployments pass too, as they process less widely than a data zone.",
        ),
        PeerRule(
            APRL,
            "081fc8a4",
            "Ensure PAYG AOAI models leverage Global Standard deployment",
            "The opposite advice, for availability, and without a query (Azure/Azure-Proactive-Resiliency-Library-v2 "
            "azure-resources/CognitiveServices/accounts/recommendations.yaml@9b93db71): azai agrees outside "
            "data-resident regions and fails Global deployments inside them, where residency outweighs throughput.",
        ),
    ),
    principle=Principle(
        "Deploy related resources in the same region, so that data and compute reside together.",
        WAF_AI + "design-principles#performance-efficiency",
    ),
    remediation=Remediation(
        terraform=(
            "Give the azurerm_cognitive_deployment a DataZoneStandard (or DataZoneProvisionedManaged) sku, "
            "or Standard for processing in the account's region."
        ),
        bicep="Set the deployment's sku.name to 'DataZoneStandard', or 'Standard' to stay in the account's region.",
        cli="Recreate the deployment with a data zone type: az cognitiveservices account deployment create "
        "--sku-name DataZoneStandard ...",
        terraform_code="""\
            resource "azurerm_cognitive_deployment" "chat" {
              # ...
              cognitive_account_id = azurerm_cognitive_account.oai.id
              sku {
                name     = "DataZoneStandard"
                capacity = 50
              }
            }
        """,
        bicep_code="""\
            resource chat 'Microsoft.CognitiveServices/accounts/deployments@2025-06-01' = {
              parent: account
              name: 'chat'
              sku: {
                name: 'DataZoneStandard'
                capacity: 50
              }
              properties: {
                model: { format: 'OpenAI', name: 'gpt-4o', version: '2024-11-20' }
              }
            }
        """,
        cli_code="""\
            az cognitiveservices account deployment create --resource-group RG --name ACCOUNT \\
              --deployment-name chat --model-format OpenAI --model-name gpt-4o --model-version 2024-11-20 \\
              --sku-name DataZoneStandard --sku-capacity 50
        """,
        guide=DEPLOYMENT_TYPES,
    ),
    help_uri=rule_page("AZAI-305"),
)
def global_deployment_residency(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A model deployment whose type lets prompts be processed outside the boundary the data it
    serves must stay in: a Global deployment on an account in the EU, or serving EU Search data.

    A deployment's type (`sku.name`) decides where prompts and completions are processed
    ([Microsoft Learn, deployment types](https://learn.microsoft.com/azure/foundry/foundry-models/concepts/deployment-types)):
    `GlobalStandard`, `GlobalProvisionedManaged`, `GlobalBatch` (and `DeveloperTier`) in any Azure
    region; `DataZoneStandard`, `DataZoneProvisionedManaged` and `DataZoneBatch` within the data
    zone (EU or US) of the account's region; `Standard` and `ProvisionedManaged` in the account's
    region. A deployment has no location of its own: it runs where its account is.

    ## What fails

    A deployment whose processing area is wider than `residency` allows around a data-resident
    region (one of `data_resident_regions`) that holds the data it is given:

    - its account's region, or
    - the region of an AI Search service its models are given data from: one named by a connection
      of the account, of one of its Foundry projects, or of a workspace (hub) that also connects to
      the account. A connection names the service by `properties.metadata.ResourceId` or by its
      endpoint `https://NAME.search.windows.net` in `properties.target`; nothing else links them.

    With `residency = "datazone"` (the default) Global types fail, and a data zone type fails when
    the data-resident region is not in its account's data zone (EU Search data sent to a US
    account). With `residency = "region"` anything but a regional type in the data-resident region
    itself fails. A finding is high when processing may leave the data zone of the data-resident
    region (or it is in none), medium when it stays in the zone but leaves the region. A deployment
    that surely takes one holder's data outside its boundary fails whatever else is unknown.

    ## What passes

    Deployments whose account and served Search services are all outside `data_resident_regions`
    (whatever their type, even one not known before deploy), deployments whose type keeps
    processing within the allowed area, and everything with `residency = "any"`. In a template, a
    Search service placed in its account's region (both in `resourceGroup().location`) holds its
    data where the deployment processes it, whichever region that turns out to be: a regional
    deployment passes, and with `residency = "datazone"` so does a data zone one when every
    data-resident region is in a data zone.

    ## Undetermined when

    The deployment type (`sku.name`) is unknown before deploy, absent, or not one Microsoft
    documents, and some type would fail; the account is not among the scanned resources; a region
    that decides is an expression that cannot be evaluated, or is not known before deploy and is
    not the account's own (or is, for a type that would fail in some data-resident region); a
    Search connection's id or endpoint is unknown, or names a service that is not among the
    scanned resources; a Search service that would fail it is connected to a hub whose
    connection to an account is not known before deploy (it may be this account); or
    `residency` is not `region`, `datazone` or `any`.

    ## Options

    - `residency`: `datazone` (default), `region` or `any`: how far a deployment may process data
      held in a data-resident region.
    - `data_resident_regions`: programmatic region names whose data must stay within that
      boundary. The default is the Azure regions of the EU data zone, those in EU member nations.
      Microsoft processes a Global deployment's prompts in any region, so Global deployments fall
      outside the EU Data Boundary, while a DataZone deployment in an EU account is processed only
      within EU member nations. Regions outside the EU and US data zones (`norwayeast`,
      `switzerlandnorth`, `uksouth`) may be added: no data zone covers them, so only regional types
      pass there. Set `residency = "any"` where no residency requirement applies.

    ## Why

    Microsoft states that data at rest stays in the account's geography for every deployment type,
    but inference data of Global types "may be processed in any Azure region", and of DataZone
    types only within the data zone ([deployment types](https://learn.microsoft.com/azure/foundry/foundry-models/concepts/deployment-types);
    [data privacy](https://learn.microsoft.com/azure/foundry/responsible-ai/openai/data-privacy)).
    Grounding data from AI Search is sent in prompts, so an EU index answered by a Global
    deployment leaves the EU for processing even when the index and the account stay in it. APRL
    `ac3add17` recommends Data Zone Standard for data residency requirements; this rule applies it
    where the estate shows the data is resident.
    """
    residency = _residency(ctx)
    if residency is None:
        return
    path = "sku.name"
    scope = _scope(resource.get(path), path)
    account = ctx.inventory.parent(resource)
    if account is None:
        known(Unknown("the deployment's account is not among the scanned resources"))
    assert account is not None
    holders, unknown = _holders(account, ctx)
    if isinstance(scope, Unknown):
        _judge_every_type(scope, unknown, account.location, holders, residency)
        return
    outcome = _judge(scope, account.location, holders, residency)
    if isinstance(outcome, _Breach):
        yield _violation(resource, path, scope, account.location, outcome, residency.policy)
        return  # one finding per deployment: its type is the one thing to change
    known(unknown if unknown is not None else outcome)


@dataclass(frozen=True)
class _Residency:
    """How far data held in a data-resident region may be processed (``policy``), and those regions."""

    policy: str
    resident: frozenset[str]


def _residency(ctx: CheckContext) -> _Residency | None:
    """The rule's options, or None when they forbid nothing (``residency = "any"``, no region)."""
    policy = str(ctx.options.get("residency", DATA_ZONE)).strip().lower()
    if policy == "any":
        return None
    resident = frozenset(normalize_location(r) for r in ctx.options.get("data_resident_regions", EU_DATA_ZONE))
    return _Residency(policy, resident) if resident else None


@dataclass(frozen=True)
class _Holder:
    """A place that holds data a deployment is given: its account, or an AI Search service it
    serves (``doubt``: why it only may serve it)."""

    what: str
    region: Any
    own: bool = False
    doubt: Unknown | None = None


@dataclass(frozen=True)
class _Breach:
    """The holder whose data-resident region a deployment's processing may leave."""

    holder: _Holder
    region: str


def _holders(account: Resource, ctx: CheckContext) -> tuple[list[_Holder], Unknown | None]:
    """Where the data a deployment is given is held, and the first reason a connection's Search
    service cannot be known."""
    searches, maybe, unknown = served_search(account, ctx)
    holders = [_Holder(f"its account '{account.name}'", account.location, own=True)]
    holders += [_Holder(f"AI Search '{s.name}' it serves", s.location) for s in searches]
    holders += [_Holder(f"AI Search '{s.name}' it may serve", s.location, doubt=doubt) for s, doubt in maybe]
    return holders, unknown


def _judge(scope: str, account_region: Any, holders: list[_Holder], residency: _Residency) -> _Breach | Unknown | None:
    """A deployment of this scope on an account in ``account_region``: the first holder whose
    data-resident region it may process outside of, else the first reason it cannot be decided,
    else None (it passes)."""
    doubts: list[Unknown] = []
    for holder in holders:
        if scope == REGIONAL and holder.own:
            # A regional deployment processes in its account's region, which no policy forbids
            # for the account's own data, whether or not that region is known.
            continue
        try:
            region = _breached(scope, account_region, holder, residency)
        except UnknownValueError as exc:
            doubts.append(exc.value)
            continue
        if region is not None and holder.doubt is not None:
            doubts.append(holder.doubt)
        elif region is not None:
            return _Breach(holder, region)  # a holder it surely leaves: no doubt elsewhere changes that
    return doubts[0] if doubts else None


def _judge_every_type(
    why: Unknown, doubt: Unknown | None, account_region: Any, holders: list[_Holder], residency: _Residency
) -> None:
    """A deployment whose type is not known (``why``): undetermined on its type when some type
    would fail, or types differ (one passes, another cannot be decided); else on what leaves
    every type undecided (first ``doubt``, a connection's Search service not known before
    deploy). A deployment whose account and served Search services are all outside the
    data-resident regions passes whatever its type."""
    outcomes = [_judge(scope, account_region, holders, residency) for scope in SCOPE_ORDER]
    kinds = {"fail" if isinstance(o, _Breach) else "pass" if o is None else "unknown" for o in outcomes}
    if "fail" in kinds or len(kinds) > 1:
        known(why)
    known(doubt if doubt is not None else next((o for o in outcomes if o is not None), None))


def _breached(scope: str, account_region: Any, holder: _Holder, residency: _Residency) -> str | None:
    """The data-resident region of a holder that a deployment of this scope may process outside
    of, or None. A region not known before deploy decides nothing when it is the account's own
    (``resourceGroup().location`` for both) and the deployment passes in every data-resident
    region: a Standard deployment processes where its Search data is, whichever region that is."""
    where = holder.region
    if isinstance(where, Unknown):
        if _same_unknown(where, account_region) and _passes_in_every(scope, residency):
            return None
        known(Unknown(f"the region of {holder.what} is not known ({where.reason})"))
    if not isinstance(where, str):  # a region is a name; anything else decides nothing
        known(Unknown(f"the region of {holder.what} is {where!r}, not a region name"))
    if where not in residency.resident or _within(scope, account_region, _allowed(residency.policy, where)):
        return None
    return str(where)


def _same_unknown(region: Unknown, account_region: Any) -> bool:
    """Whether an unknown region is provably the account's (one symbol, such as the resource
    group's region)."""
    return isinstance(account_region, Unknown) and region.symbol is not None and region.symbol == account_region.symbol


def _passes_in_every(scope: str, residency: _Residency) -> bool:
    """Whether a deployment of this scope passes for data held in its account's own region,
    whichever data-resident region that is."""
    try:
        return all(_within(scope, region, _allowed(residency.policy, region)) for region in residency.resident)
    except UnknownValueError:  # a data zone type in a region no data zone covers
        return False


def _violation(
    resource: Resource, path: str, scope: str, account_region: Any, breach: _Breach, policy: str
) -> Violation:
    region = breach.region
    leaves_zone = not _within(scope, account_region, _zone(region) or frozenset({region}))
    sku = resource.get(path)
    return Violation(
        f"Deployment '{resource.name}' is {sku} ({_describe(scope, account_region)}) but {breach.holder.what} is "
        f"in data-resident {region}, whose data may be processed only within "
        f"{'that region' if policy == REGIONAL else 'its data zone'}",
        path,
        sku,
        _expected(policy, region),
        severity=Severity.HIGH if leaves_zone else Severity.MEDIUM,
    )


def _scope(sku: Any, path: str) -> str | Unknown:
    """The deployment's processing scope, decided by its type (``sku.name``), or why the type is
    not known: unknown before deploy, absent, or not one Microsoft documents. A deployment
    without one is not guessed to be regional: any type may be the case."""
    if isinstance(sku, Unknown):
        return sku
    if sku is None:
        return Unknown("the deployment declares no deployment type", path=path)
    scope = SCOPES.get(str(sku).lower())
    return Unknown(f"deployment type {sku!r} is not one Microsoft documents", path=path) if scope is None else scope


def _zone(region: str) -> frozenset[str] | None:
    return next((regions for regions in DATA_ZONES.values() if region in regions), None)


def _allowed(policy: str, region: str) -> frozenset[str]:
    """The regions a data-resident region's data may be processed in under the policy."""
    if policy == DATA_ZONE:
        return _zone(region) or frozenset({region})
    return frozenset({region})


def _within(scope: str, account_region: Any, allowed: frozenset[str]) -> bool:
    """Whether a deployment of this scope on an account in ``account_region`` processes only in
    ``allowed``. A Global deployment never does, wherever its account is; the others need the
    account's region, and a data zone type needs a documented data zone around it."""
    if scope == GLOBAL:
        return False
    account_region = known(comparable_region(account_region))
    if scope == DATA_ZONE:
        zone = _zone(account_region)
        if zone is None:
            known(Unknown(f"no documented data zone (EU, US) contains the account's region {account_region}"))
        assert zone is not None
        return zone <= allowed
    return bool(account_region in allowed)


def _describe(scope: str, account_region: Any) -> str:
    if scope == GLOBAL:
        return "processed in any Azure region"
    if scope == DATA_ZONE:
        zone = next((name for name, regions in DATA_ZONES.items() if account_region in regions), None)
        return f"processed in the {zone} data zone" if zone else f"processed in the data zone of {account_region}"
    return f"processed in {account_region}"


def _expected(policy: str, region: str) -> str:
    if policy == REGIONAL:
        return f"Standard or ProvisionedManaged on an account in {region}"
    if _zone(region) is None:
        return f"Standard or ProvisionedManaged on an account in {region} (no data zone covers it)"
    return "a DataZone or regional type on an account in the same data zone"
