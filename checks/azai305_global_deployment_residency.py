"""AZAI-305 global-deployment-residency."""

from __future__ import annotations

from collections.abc import Iterator
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
    region (or it is in none), medium when it stays in the zone but leaves the region.

    ## What passes

    Deployments whose account and served Search services are all outside `data_resident_regions`,
    deployments whose type keeps processing within the allowed area, and everything with
    `residency = "any"`.

    ## Undetermined when

    The deployment type (`sku.name`) is unknown before deploy, absent, or not one Microsoft documents; the
    account is not among the scanned resources; a region that decides is an expression that cannot
    be evaluated; a Search connection's id or endpoint is unknown, or names a service that is not
    among the scanned resources; a Search service that would fail it is connected to a hub whose
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
    policy = str(ctx.options.get("residency", DATA_ZONE)).strip().lower()
    if policy == "any":
        return
    resident = {normalize_location(r) for r in ctx.options.get("data_resident_regions", EU_DATA_ZONE)}
    if not resident:
        return
    scope, path = _scope(resource)
    account = ctx.inventory.parent(resource)
    if account is None:
        known(Unknown("the deployment's account is not among the scanned resources"))
    assert account is not None
    searches, maybe, unknown = served_search(account, ctx)
    # A regional deployment processes in its account's region, which no policy forbids for the
    # account's own data, whether or not that region is known. A Search service it may serve
    # (through a hub whose account is not known before deploy) leaves it undetermined where a
    # served one would fail it.
    holders: list[tuple[str, Any, Unknown | None]] = []
    if scope != REGIONAL:
        holders.append((f"its account '{account.name}'", account.location, None))
    holders += [(f"AI Search '{s.name}' it serves", s.location, None) for s in searches]
    holders += [(f"AI Search '{s.name}' it may serve", s.location, doubt) for s, doubt in maybe]
    for holder, where, doubt in holders:
        if isinstance(where, Unknown):
            unknown = unknown or Unknown(f"the region of {holder} is not known ({where.reason})")
            continue
        if not isinstance(where, str):  # a region is a name; anything else decides nothing
            unknown = unknown or Unknown(f"the region of {holder} is {where!r}, not a region name")
            continue
        try:
            region = where
            if region not in resident:
                continue
            if _within(scope, account.location, _allowed(policy, region)):
                continue
        except UnknownValueError as exc:
            unknown = unknown or exc.value
            continue
        if doubt is not None:
            unknown = unknown or doubt
            continue
        leaves_zone = not _within(scope, account.location, _zone(region) or frozenset({region}))
        sku = resource.get(path)
        yield Violation(
            f"Deployment '{resource.name}' is {sku} ({_describe(scope, account.location)}) but {holder} is "
            f"in data-resident {region}, whose data may be processed only within "
            f"{'that region' if policy == REGIONAL else 'its data zone'}",
            path,
            sku,
            _expected(policy, region),
            severity=Severity.HIGH if leaves_zone else Severity.MEDIUM,
        )
        return  # one finding per deployment: its type is the one thing to change
    if unknown is not None:
        known(unknown)


def _scope(deployment: Resource) -> tuple[str, str]:
    """The deployment's processing scope and the property that decides it, ``sku.name``. A
    deployment without one is not guessed to be regional: the rule cannot decide."""
    path = "sku.name"
    sku = known(deployment.get(path))
    if sku is None:
        known(Unknown("the deployment declares no deployment type", path=path))
    scope = SCOPES.get(str(sku).lower())
    if scope is None:
        known(Unknown(f"deployment type {sku!r} is not one Microsoft documents", path=path))
    assert scope is not None
    return scope, path


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
