"""AZAI-404 search-replicas."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import APRL, CHECKOV, PSRULE, WAF_AI, known_number, rule_page, same_text
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known

SLA_GUIDE = "https://learn.microsoft.com/azure/reliability/reliability-ai-search"


@rule(
    id="AZAI-404",
    slug="search-replicas",
    title="AI Search service has too few replicas for the availability SLA",
    pillar=Pillar.RELIABILITY,
    severity=Severity.MEDIUM,
    resource_types=(T.SEARCH_SERVICE,),
    reads=(),
    principle=Principle(
        "Avoid single points of failure in the retrieval path: a RAG application is down when its index is.",
        WAF_AI + "design-principles#reliability",
    ),
    remediation=Remediation(
        terraform='azurerm_search_service: sku = "basic" or higher and replica_count = 2 (3 for indexing too)',
        bicep="sku: { name: 'standard' }, properties: { replicaCount: 3 }",
        cli="az search service update -n NAME -g RG --replica-count 3",
        terraform_code="""\
            resource "azurerm_search_service" "search" {
              # ...
              sku           = "standard"
              replica_count = 3
            }
        """,
        bicep_code="""\
            resource search 'Microsoft.Search/searchServices@2025-05-01' = {
              // ...
              sku: {
                name: 'standard'
              }
              properties: {
                replicaCount: 3
              }
            }
        """,
        cli_code="""\
            az search service update --name NAME --resource-group RG --replica-count 3
        """,
        guide=SLA_GUIDE,
    ),
    help_uri=rule_page("AZAI-404"),
    options={"min_replicas": 2},
    peers=(
        PeerRule(
            PSRULE,
            "Azure.Search.QuerySLA",
            "Search services use at least 2 replicas (AZR-000173)",
            "Agrees on both: every service, free included, fails below 2 replicas, an absent replicaCount failing "
            "(Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.Search.Rule.ps1@c665b65e; "
            "tests/PSRule.Rules.Azure.Tests/Azure.Search.Tests.ps1@204783f7).",
        ),
        PeerRule(
            PSRULE,
            "Azure.Search.IndexSLA",
            "Search services use at least 3 replicas (AZR-000174)",
            "With the option min_replicas set to 3, agrees on both: every service fails below 3 replicas, an absent "
            "replicaCount failing (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.Search.Rule.ps1@c665b65e).",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_209",
            "Azure Cognitive Search maintains SLA for search index queries",
            "Agrees on both: every service fails below 2 replicas, an absent count failing (bridgecrewio/checkov "
            "checkov/arm/checks/resource/AzureSearchSLAQueryUpdates.py@03d5fdad).",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_208",
            "Azure Cognitive Search maintains SLA for index updates",
            "With the option min_replicas set to 3, agrees on both: every service fails below 3 replicas, an absent "
            "count failing (bridgecrewio/checkov checkov/arm/checks/resource/AzureSearchSLAIndex.py@03d5fdad).",
        ),
        PeerRule(
            APRL,
            "b376281d",
            "Enable AZ support in AI Search by configuring multiple replicas to your search service",
            "Agrees on deployed services: APRL's query flags replicaCount below 2 "
            "(Azure/Azure-Proactive-Resiliency-Library-v2 "
            "azure-resources/Search/searchServices/kql/b376281d-bfec-4695-8f90-9a44544fdfa4.kql@9b93db71). azai also "
            "judges IaC, where an absent count is the API's default of 1.",
        ),
        PeerRule(
            PSRULE,
            "Azure.Search.SKU",
            "Search services use a minimum of the basic SKU (AZR-000172)",
            "Agrees on both: every free service fails (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.Search.Rule.ps1@c665b65e); azai reports it here because the free "
            "tier has no SLA.",
        ),
    ),
)
def search_replicas(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An Azure AI Search service with fewer replicas than its availability SLA needs, or on the
    free tier, which has none.

    ## What fails

    - A service whose `properties.replicaCount` is below `min_replicas` (default 2). An absent
      count is 1, the API's default.
    - A service on the `free` tier (`sku.name`), which is limited to one replica and has no
      SLA at all.

    ## What passes

    Billable services with at least `min_replicas` replicas.

    ## Undetermined when

    The replica count is unknown before deploy or is not a number, or the SKU is unknown.

    ## Options

    - `min_replicas` (default 2): Microsoft's SLA needs two replicas for read-only (query)
      workloads and three or more for read-write (query and indexing) workloads; set 3 when the
      application indexes continuously.

    ## Why

    Per [Reliability in Azure AI Search](https://learn.microsoft.com/azure/reliability/reliability-ai-search),
    the SLA "requires two replicas for read-only workloads and three or more replicas for
    read-write workloads", and the free tier has no SLA. With one replica, routine maintenance
    and transient faults take the index, and every answer grounded in it, offline; extra
    replicas are also placed across availability zones where the region has them.
    """
    minimum = known_number(ctx.options.get("min_replicas", 2), "min_replicas")
    if minimum is None:
        minimum = 2
    if same_text(known(resource.get("sku.name")), "free"):
        yield Violation(
            f"Search service '{resource.name}' is on the free tier, which has one replica and no SLA",
            "sku.name",
            resource.get("sku.name"),
            f"a billable tier with at least {minimum} replicas",
        )
        return
    replicas = known_number(resource.get("properties.replicaCount", 1), "properties.replicaCount")
    if replicas is None:
        replicas = 1
    if replicas < minimum:
        yield Violation(
            f"Search service '{resource.name}' has {replicas} replica(s); the availability SLA needs {minimum}",
            "properties.replicaCount",
            replicas,
            f"at least {minimum}",
        )
