"""AZAI-502 outdated-compute-image."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import AZURE_POLICY, WAF_AI, rule_page, same_text
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known

PATH = "properties.properties.osImageMetadata.isLatestOsImageVersion"


@rule(
    id="AZAI-502",
    slug="outdated-compute-image",
    title="AML compute instance is not on the latest OS image",
    pillar=Pillar.OPERATIONS,
    severity=Severity.MEDIUM,
    resource_types=(T.COMPUTE,),
    reads=(),
    principle=Principle(
        "Keep AI compute patched: recreate compute instances on the latest image regularly.",
        WAF_AI + "design-principles#operational-excellence",
    ),
    remediation=Remediation(
        terraform="Recreate the instance (terraform apply -replace=<address>) to get the latest image.",
        bicep="Redeploy the compute instance (delete, then deploy) to get the latest image.",
        cli="az ml compute delete -n INSTANCE; az ml compute create -n INSTANCE --type ComputeInstance ...",
        terraform_code="""\
            # a compute instance takes the latest image only when it is created again:
            #   terraform apply -replace=azurerm_machine_learning_compute_instance.notebook
            resource "azurerm_machine_learning_compute_instance" "notebook" {
              # ...
            }
        """,
        bicep_code="""\
            // a compute instance takes the latest image only when it is created again:
            // delete it, then deploy the template
            resource notebook 'Microsoft.MachineLearningServices/workspaces/computes@2024-04-01' = {
              parent: workspace
              name: 'notebook'
              location: location
              properties: {
                computeType: 'ComputeInstance'
              }
            }
        """,
        cli_code="""\
            az ml compute delete --name INSTANCE --resource-group RG --workspace-name WS --yes
            az ml compute create --name INSTANCE --type ComputeInstance --size Standard_NC4as_T4_v3 \\
              --resource-group RG --workspace-name WS
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/concept-vulnerability-management",
    ),
    help_uri=rule_page("AZAI-502"),
    sources=("live",),
    peers=(
        PeerRule(
            AZURE_POLICY,
            "f110a506-2dcb-422e-bcea-d533fc8c35e2",
            "Audit Azure Machine Learning Compute Instances with an outdated operating system (preview)",
            "Agrees on both: a deployed compute instance whose osImageMetadata.isLatestOsImageVersion is false fails "
            "(Azure/azure-policy built-in-policies/policyDefinitions/Machine "
            "Learning/ComputeInstanceUpdates_Audit.json@f4a50bac).",
        ),
    ),
)
def outdated_compute_image(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML compute instance running an OS image that Azure reports as superseded.

    ## What fails

    A `ComputeInstance` whose `properties.properties.osImageMetadata.isLatestOsImageVersion`
    is `false`.

    ## What passes

    Instances on the latest image, and other compute types (clusters pick up the latest
    image whenever they scale from zero).

    ## Undetermined when

    Never in a live scan; the flag is reported by Azure on running instances only, so this
    rule runs on live scans and saved live inventories, not on IaC.

    ## Why

    Compute instances are not patched in place; Microsoft releases images monthly with
    security fixes, and an old instance keeps its vulnerabilities until it is recreated.
    """
    if not same_text(known(resource.get("properties.computeType")), "ComputeInstance"):
        return
    metadata = known(resource.get("properties.properties.osImageMetadata"))
    if isinstance(metadata, dict) and known(resource.get(PATH)) is False:
        current = metadata.get("currentImageVersion", "unknown")
        latest = metadata.get("latestImageVersion", "unknown")
        yield Violation(
            f"Compute instance '{resource.name}' runs image {current}; the latest is {latest}",
            PATH,
            False,
            "true",
        )
