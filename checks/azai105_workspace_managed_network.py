"""AZAI-105 workspace-managed-network."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import AZURE_POLICY, CHECKOV, WAF_AI, is_project, judged_if, rule_page, same_text
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known


@rule(
    id="AZAI-105",
    slug="workspace-managed-network",
    title="AML workspace has no managed network isolation",
    pillar=Pillar.SECURITY,
    severity=Severity.MEDIUM,
    resource_types=(T.WORKSPACE,),
    reads=(),
    principle=Principle(
        "Use private networking and restrict outbound traffic of AI compute, to prevent data exfiltration.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform=(
            'azurerm_machine_learning_workspace: managed_network { isolation_mode = "AllowOnlyApprovedOutbound" }'
        ),
        bicep="properties: { managedNetwork: { isolationMode: 'AllowOnlyApprovedOutbound' } }",
        cli="az ml workspace update -n WS -g RG --managed-network allow_only_approved_outbound",
        terraform_code="""\
            resource "azurerm_machine_learning_workspace" "ws" {
              # ...
              managed_network {
                isolation_mode = "AllowOnlyApprovedOutbound"
              }
            }
        """,
        bicep_code="""\
            resource workspace 'Microsoft.MachineLearningServices/workspaces@2024-04-01' = {
              // ...
              properties: {
                managedNetwork: {
                  isolationMode: 'AllowOnlyApprovedOutbound'
                }
              }
            }
        """,
        cli_code="""\
            az ml workspace update --name WS --resource-group RG --managed-network allow_only_approved_outbound
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-managed-network",
    ),
    help_uri=rule_page("AZAI-105"),
    options={"require_approved_outbound": False},
    peers=(
        PeerRule(
            AZURE_POLICY,
            "6ddb1705-c8cf-450e-aa4b-19ad6703c440",
            "Azure Machine Learning and AI Studio should use Allow Only Approved Outbound Managed Vnet mode",
            "The policy flags a workspace whose isolationMode is not its isolationMode parameter, which defaults to "
            "Disabled (Azure/azure-policy built-in-policies/policyDefinitions/Machine "
            "Learning/ManagedNetworkIsolationMode_Audit.json@f4a50bac), so only assigned with "
            "AllowOnlyApprovedOutbound does it match azai with the option require_approved_outbound (azai's default "
            "also passes AllowInternetOutbound). It also audits projects, which azai passes as they take their hub's "
            "network.",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_243",
            "ML workspace managed network outbound rules of type PrivateEndpoint",
            "A different test: Checkov (ARM only) passes a workspace with an outbound rule of type PrivateEndpoint, "
            "whatever its isolation mode (bridgecrewio/checkov "
            "checkov/arm/checks/resource/AzureMLWorkspacePrivateEndpoint.py@03d5fdad); azai requires the isolation "
            "mode and reads no outbound rules, which act only inside a managed network. Checkov also judges "
            "projects, which azai passes.",
        ),
    ),
)
def workspace_managed_network(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML or AI Foundry hub workspace whose computes and endpoints are not isolated in a
    workspace managed network.

    ## What fails

    - A workspace whose `properties.managedNetwork.isolationMode` is absent or `Disabled`.
    - With the option `require_approved_outbound` set, also `AllowInternetOutbound`: only
      `AllowOnlyApprovedOutbound` restricts what compute may reach.

    ## What passes

    `AllowOnlyApprovedOutbound`, and `AllowInternetOutbound` unless the option is set. AI Foundry
    projects (`kind` `Project`) inherit their hub's network and pass.

    ## Undetermined when

    The isolation mode is unknown before deploy, or the workspace's `kind` is and it fails (a
    workspace that passes does so whatever its kind).

    ## Options

    - `require_approved_outbound` (default false): require `AllowOnlyApprovedOutbound`.

    ## Why

    Without a managed network, training jobs and endpoints reach the internet freely, so data
    and model weights can leave through any package mirror or pastebin.
    """
    yield from judged_if(lambda: not is_project(resource), _isolation(resource, ctx))


def _isolation(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    mode = known(resource.get("properties.managedNetwork.isolationMode"))
    strict = bool(ctx.options.get("require_approved_outbound", False))
    allowed = ("AllowOnlyApprovedOutbound",) if strict else ("AllowOnlyApprovedOutbound", "AllowInternetOutbound")
    if not same_text(mode, *allowed):
        yield Violation(
            f"Workspace '{resource.name}' has no managed network isolation (isolationMode {mode or 'absent'})",
            "properties.managedNetwork.isolationMode",
            mode,
            " or ".join(allowed),
        )
