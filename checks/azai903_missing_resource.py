"""AZAI-903 missing-resource."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import DRIFT_HELP, IAC_DRIFT, rule_page
from scanner.drift.compare import WATCH
from scanner.engine.checkapi import CheckContext, Pillar, Remediation, Severity, Violation, rule
from scanner.model.resources import Resource


@rule(
    id="AZAI-903",
    slug="missing-resource",
    title="A declared resource does not exist in Azure",
    pillar=Pillar.OPERATIONS,
    severity=Severity.MEDIUM,
    resource_types=tuple(WATCH),
    principle=IAC_DRIFT,
    remediation=Remediation(
        terraform="terraform apply to recreate it, or remove it from the configuration if it is gone for good.",
        bicep="Redeploy the template, or remove the resource from it.",
        cli="Find who deleted it in the activity log: az monitor activity-log list --resource-id ID.",
        terraform_code="""\
            # terraform apply recreates a declared resource that was deleted; to let it go, remove it from
            # the state without destroying anything:
            removed {
              from = azurerm_machine_learning_compute_cluster.train
              lifecycle {
                destroy = false
              }
            }
        """,
        bicep_code="""\
            // redeploy the template to recreate the resource, or remove its declaration
            resource train 'Microsoft.MachineLearningServices/workspaces/computes@2024-04-01' = {
              parent: workspace
              name: 'train'
              // ...
            }
        """,
        cli_code="""\
            az monitor activity-log list --resource-id RESOURCE_ID --offset 7d
        """,
        guide=DRIFT_HELP,
    ),
    help_uri=rule_page("AZAI-903"),
    sources=("drift",),
)
def missing_resource(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A resource the IaC declares that is not there live, or that Terraform's refresh found
    deleted outside Terraform.

    ## What fails

    - With `azai drift --iac PATH` and a live scope: each declared resource with no live
      counterpart (matched by id, or by type and name).
    - In a Terraform plan's `resource_drift`: each resource deleted outside Terraform.

    ## What passes

    Declared resources that exist, whatever their settings (AZAI-901 compares those).

    ## Undetermined when

    Never. A resource in a scope the live scan could not read is not reported missing; the
    coverage section names the scope instead.

    ## Why

    A deleted endpoint or cluster breaks whatever depends on it, and a later apply recreates it
    with whatever the code says, which may not be what was running.
    """
    pair = ctx.drift
    if pair is not None and pair.mode in ("iac", "terraform") and pair.after is None and pair.before is not None:
        where = "deleted outside Terraform" if pair.mode == "terraform" else "declared in the IaC but not found live"
        yield Violation(
            f"{resource.type.rsplit('/', 1)[-1]} '{resource.name}' is {where}", "id", resource.id, "present"
        )
