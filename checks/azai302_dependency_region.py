"""AZAI-302 dependency-region."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import WAF_AI, comparable_region, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known

DEPENDENCIES = (("properties.containerRegistry", "container registry"), ("properties.keyVault", "key vault"))


@rule(
    id="AZAI-302",
    slug="dependency-region",
    title="A workspace's container registry or key vault is in another region",
    pillar=Pillar.PERFORMANCE,
    severity=Severity.LOW,
    resource_types=(T.WORKSPACE,),
    reads=(T.CONTAINER_REGISTRY, T.KEY_VAULT),
    principle=Principle(
        "Deploy related resources in the same region, so that data and compute reside together.",
        WAF_AI + "design-principles#performance-efficiency",
    ),
    remediation=Remediation(
        terraform="Give the workspace's azurerm_container_registry and azurerm_key_vault the workspace's location.",
        bicep="Use the workspace's location parameter for its registry and key vault.",
        cli="Create the registry and vault in the workspace's region and point the workspace at them "
        "(az ml workspace update --container-registry ID).",
        terraform_code="""\
            resource "azurerm_container_registry" "acr" {
              # ...
              location = azurerm_machine_learning_workspace.ws.location
            }

            resource "azurerm_key_vault" "kv" {
              # ...
              location = azurerm_machine_learning_workspace.ws.location
            }
        """,
        bicep_code="""\
            resource registry 'Microsoft.ContainerRegistry/registries@2023-07-01' = {
              // ...
              location: location
            }

            resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
              // ...
              location: location
            }
        """,
        cli_code="""\
            az ml workspace update --name WS --resource-group RG --container-registry ACR_ID
        """,
        guide=WAF_AI + "design-principles#performance-efficiency",
    ),
    help_uri=rule_page("AZAI-302"),
)
def dependency_region(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML workspace whose container registry or key vault is in a different region from the
    workspace. AZAI-301 covers the data (storage); this rule covers the other dependencies, at a
    lower severity because they move less data.

    ## What fails

    A workspace whose `properties.containerRegistry` or `properties.keyVault` resource is in
    another region (compared normalized). A workspace of kind `Project` uses its hub's registry
    and key vault: those of the hub named by `properties.hubResourceId`.

    ## What passes

    Dependencies in the workspace's region, and workspaces without a registry.

    ## Undetermined when

    A dependency id (or a project's hub id) is unknown, the dependency or hub is not among the
    scanned resources, or a region is an expression that cannot be evaluated.

    ## Why

    Every endpoint scale-out and compute start pulls inference images from the registry; from
    another region each pull is slower and pays egress. Secrets fetched across regions add
    latency to every job start.
    """
    region = comparable_region(resource.location)
    for path, label in DEPENDENCIES:
        dependency = known(ctx.inventory.workspace_dependency(resource, path, label))
        if dependency is None:
            continue
        other = comparable_region(dependency.location)
        if region is not None and other is not None and not bool(region == other):
            yield Violation(
                f"Workspace '{resource.name}' is in {region} but its {label} '{dependency.name}' is in {other}",
                path,
                other,
                str(region),
            )
