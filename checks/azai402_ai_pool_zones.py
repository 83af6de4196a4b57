"""AZAI-402 ai-pool-zones."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import PSRULE, WAF_AI, cluster_name, judged_if, pool_is_gpu, rule_page
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource, normalize_location
from scanner.model.unknown import Unknown, known

# Regions with availability zones, from https://learn.microsoft.com/azure/reliability/regions-list
# (read 2026-11); the option `zone_regions` replaces the list.
ZONE_REGIONS = [
    "australiaeast",
    "austriaeast",
    "belgiumcentral",
    "brazilsouth",
    "canadacentral",
    "centralindia",
    "centralus",
    "chinanorth3",
    "eastasia",
    "eastus",
    "eastus2",
    "francecentral",
    "germanywestcentral",
    "israelcentral",
    "italynorth",
    "japaneast",
    "japanwest",
    "koreacentral",
    "mexicocentral",
    "newzealandnorth",
    "northeurope",
    "norwayeast",
    "polandcentral",
    "qatarcentral",
    "southafricanorth",
    "southcentralus",
    "southeastasia",
    "spaincentral",
    "swedencentral",
    "switzerlandnorth",
    "uaenorth",
    "uksouth",
    "usgovvirginia",
    "westeurope",
    "westus2",
    "westus3",
]


@rule(
    id="AZAI-402",
    slug="ai-pool-zones",
    title="AKS GPU pool is not spread across availability zones",
    pillar=Pillar.RELIABILITY,
    severity=Severity.MEDIUM,
    resource_types=(T.AGENT_POOL,),
    reads=(T.MANAGED_CLUSTER,),
    principle=Principle(
        "Avoid single points of failure for model serving: spread serving capacity across availability zones.",
        WAF_AI + "design-principles#reliability",
    ),
    remediation=Remediation(
        terraform='azurerm_kubernetes_cluster_node_pool: zones = ["1", "2", "3"] (the zones where the GPU size '
        "is offered)",
        bicep="agentPools: properties: { availabilityZones: [ '1', '2', '3' ] }",
        cli="az aks nodepool add ... --zones 1 2 3 (zones are fixed when a pool is created)",
        terraform_code="""\
            resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
              # ...
              zones = ["1", "2", "3"]
            }
        """,
        bicep_code="""\
            resource gpu 'Microsoft.ContainerService/managedClusters/agentPools@2024-09-01' = {
              parent: aks
              name: 'gpu'
              properties: {
                availabilityZones: [
                  '1'
                  '2'
                  '3'
                ]
              }
            }
        """,
        cli_code="""\
            az aks nodepool add --resource-group RG --cluster-name AKS --name gpuzonal \\
              --node-vm-size Standard_NC24ads_A100_v4 --zones 1 2 3
        """,
        guide="https://learn.microsoft.com/azure/aks/availability-zones",
    ),
    help_uri=rule_page("AZAI-402"),
    options={"zone_regions": ZONE_REGIONS},
    peers=(
        PeerRule(
            PSRULE,
            "Azure.AKS.AvailabilityZone",
            "AKS pools use availability zones in supported regions (AZR-000021)",
            "A lower bar: PSRule passes a pool with any availabilityZones, one zone included, and judges only pools "
            "whose type is VirtualMachineScaleSets, in regions its provider data lists with zones "
            "(Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.AKS.Rule.ps1@fd7291f5); azai requires two "
            "or more zones. azai judges GPU pools only, with its own zone_regions list; PSRule every pool.",
        ),
    ),
)
def ai_pool_zones(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AKS GPU node pool pinned to one datacenter although its region has availability zones.

    ## What fails

    A GPU pool (its `vmSize` is a GPU size) with fewer than two `availabilityZones`, in a
    cluster whose region is in the zone list (option `zone_regions`, default: the regions
    Microsoft lists with availability zones).

    ## What passes

    GPU pools in two or more zones, GPU pools in regions without zones, and CPU pools.

    ## Undetermined when

    The zones or the cluster's region is unknown before deploy, or the size is and the pool is
    in fewer than two zones of a region that has zones.

    ## Options

    - `zone_regions`: programmatic region names that have availability zones.

    ## Why

    A zonal outage takes down every node of a single-zone pool, and with it the models it
    serves. GPU sizes are not offered in every zone of every region: check with
    `az vm list-skus --location REGION --size SIZE --zone` before choosing zones.
    """
    yield from judged_if(lambda: pool_is_gpu(resource, ctx), _zones(resource, ctx))


def _zones(pool: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """Fewer than two zones in a region that has zones, whatever the pool's size."""
    cluster = ctx.inventory.pool_cluster(pool)
    region = normalize_location(known(cluster.location)) if cluster is not None else None
    if isinstance(region, Unknown):
        known(region)
    zoned = {str(r).lower() for r in ctx.options.get("zone_regions", ZONE_REGIONS)}
    if not isinstance(region, str) or region not in zoned:
        return
    zones = known(pool.get("properties.availabilityZones"))
    if not isinstance(zones, list) or len(zones) < 2:
        yield Violation(
            f"GPU pool '{pool.name.rsplit('/', 1)[-1]}' in cluster '{cluster_name(pool)}' is in "
            f"{len(zones) if isinstance(zones, list) else 0} availability zone(s) of {region}",
            "properties.availabilityZones",
            zones,
            "two or more zones",
        )
