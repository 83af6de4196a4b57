"""AZAI-902 unmanaged-resource."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import DRIFT_HELP, IAC_DRIFT, rule_page
from scanner.drift.compare import AI_TYPES
from scanner.engine.checkapi import CheckContext, Pillar, Remediation, Severity, Violation, rule
from scanner.model.azure_types import canonical_type
from scanner.model.resources import Resource


@rule(
    id="AZAI-902",
    slug="unmanaged-resource",
    title="A live AI resource is not declared in the IaC that manages its resource group",
    pillar=Pillar.OPERATIONS,
    severity=Severity.MEDIUM,
    resource_types=tuple(sorted(canonical_type(t) for t in AI_TYPES)),
    principle=IAC_DRIFT,
    remediation=Remediation(
        terraform="Import it (an import block, or terraform import) and declare it, or delete it.",
        bicep="Add it to the template, or delete it.",
        cli="Delete it if nobody owns it (az aks nodepool delete, az ml compute delete, az ml online-endpoint delete).",
        terraform_code="""\
            import {
              to = azurerm_kubernetes_cluster_node_pool.gpu
              id = "${var.aks_cluster_id}/agentPools/gpu" # the pool's ARM id; Terraform 1.6+ accepts variables here
            }

            resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
              # ...
            }
        """,
        bicep_code="""\
            // declare the resource in the template that owns its parent
            resource gpu 'Microsoft.ContainerService/managedClusters/agentPools@2024-09-01' = {
              parent: aks
              name: 'gpu'
              // ...
            }
        """,
        cli_code="""\
            az aks nodepool delete --resource-group RG --cluster-name AKS --name gpu
        """,
        guide=DRIFT_HELP,
    ),
    help_uri=rule_page("AZAI-902"),
    sources=("drift",),
)
def unmanaged_resource(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A live AI resource (workspace, compute, endpoint, deployment, Cognitive/OpenAI account,
    cluster or node pool) in a resource group the scanned IaC covers, that the IaC does not
    declare: made in the portal, in Studio or with the CLI.

    ## What fails

    With `azai drift --iac PATH` and a live scope: each such live resource. A resource group
    is covered when the IaC names it, or when a resource it declares was found there.

    ## What passes

    Live resources the IaC declares (matched by id, or by type and name where the IaC id holds
    placeholders), non-AI resources, and resources in resource groups the IaC does not touch.

    ## Undetermined when

    Never: the comparison needs only ids, types and names.

    ## Why

    A node pool added with `az aks nodepool add` is invisible to every plan review, is not
    isolated or scaled by the reviewed code, and keeps billing until someone notices.
    """
    pair = ctx.drift
    if pair is not None and pair.mode == "iac" and pair.before is None and pair.after is not None:
        yield Violation(
            f"{resource.type.rsplit('/', 1)[-1]} '{resource.name}' exists live but no scanned IaC declares it",
            "id",
            resource.id,
            "declared in the IaC that manages its resource group",
        )
