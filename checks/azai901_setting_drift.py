"""AZAI-901 setting-drift."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import DRIFT_HELP, IAC_DRIFT, rule_page
from scanner.drift.compare import WATCH, is_security_path, unresolved_parent, watched_changes
from scanner.engine.checkapi import CheckContext, Pillar, Remediation, Severity, Violation, rule
from scanner.model.resources import Resource
from scanner.model.shown import json_text

_BEFORE = {"snapshot": "in the base scan", "iac": "declared in the IaC", "terraform": "in Terraform's state"}
_AFTER = {"snapshot": "now", "iac": "live", "terraform": "in Azure"}


@rule(
    id="AZAI-901",
    slug="setting-drift",
    title="A security- or cost-relevant setting changed outside the reviewed path",
    pillar=Pillar.SECURITY,
    severity=Severity.MEDIUM,
    resource_types=tuple(WATCH),
    principle=IAC_DRIFT,
    remediation=Remediation(
        terraform="Re-apply the plan to restore the declared value, or change the .tf file and review it.",
        bicep="Redeploy the template, or change the template and review it.",
        cli="Restore the setting with the resource's update command, then fix whoever changed it out of band.",
        terraform_code="""\
            # see what changed outside Terraform, then apply the plan to restore the declared value:
            #   terraform plan -refresh-only
            #   terraform apply
            resource "azurerm_machine_learning_workspace" "ws" {
              # ...
              public_network_access_enabled = false
            }
        """,
        bicep_code="""\
            // redeploy the template to restore the declared value
            resource workspace 'Microsoft.MachineLearningServices/workspaces@2024-04-01' = {
              // ...
              properties: {
                publicNetworkAccess: 'Disabled'
              }
            }
        """,
        cli_code="""\
            az deployment group create --resource-group RG --template-file main.bicep
        """,
        guide=DRIFT_HELP,
    ),
    help_uri=rule_page("AZAI-901"),
    sources=("drift",),
)
def setting_drift(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A watched property differs between two scans, between the IaC and what is live, or between
    Terraform's state and Azure.

    ## What fails

    A change on the type's watch-list: endpoint and serverless auth mode, public network access,
    local auth and local accounts, network ACL defaults and IP rules, AKS pool taints, mode, VM
    size and node counts (min, max, fixed, autoscaling), compute-instance idle shutdown, cluster
    minimum nodes, VM sizes and priorities, locations and identity types. A change that weakens
    security (auth, network, taints, pool mode, identity) is **high**; the rest are medium. A
    resource whose parent a plan cannot resolve (a module output it cannot follow) is matched
    by type, name and resource group when exactly one live resource fits, and the finding says so.

    ## What passes

    Anything not on the watch-list, and noise: provisioning state, etags, timestamps, system
    data, the case of ids, enums and locations, the order of lists ARM treats as sets (taints,
    IP rules), an autoscaled pool's node count and an AKS scale set's capacity (the autoscaler
    moves them), and a value the IaC does not write, or writes as the platform's default, against
    an absent live value (see docs/drift.md for each property's default).

    ## Undetermined when

    Never reported as a finding: an IaC value that is unknown before deploy (known after
    apply, an unevaluable expression) is not compared, and a property the IaC leaves unset is
    the platform's default, not drift.

    ## Why

    Security teams review code, not portal clicks. A key-auth switch on an endpoint or a
    removed GPU taint made in the portal bypasses review and, without drift detection, stays
    invisible until it is exploited or billed.
    """
    pair = ctx.drift
    if pair is None or pair.before is None or pair.after is None:
        return
    matched = " (matched by type, name and resource group: the IaC does not resolve its parent)"
    how = matched if unresolved_parent(pair.before) else ""
    for change in watched_changes(pair.before, pair.after, declared_only=pair.mode == "iac"):
        severity = Severity.HIGH if is_security_path(change.path) else None
        yield Violation(
            f"{resource.type.rsplit('/', 1)[-1]} '{resource.name}': {change.path} is {json_text(change.after)} "
            f"{_AFTER[pair.mode]}, {json_text(change.before)} {_BEFORE[pair.mode]}{how}",
            change.path,
            change.after,
            f"{json_text(change.before)} ({_BEFORE[pair.mode]})",
            severity,
        )
