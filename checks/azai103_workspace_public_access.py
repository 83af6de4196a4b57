"""AZAI-103 workspace-public-access."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import AZQR, AZURE_POLICY, CHECKOV, PSRULE, WAF_AI, is_project, judged_if, rule_page
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.engine.setting_checks import require
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known

NETWORKING = WAF_AI + "design-principles#security"


@rule(
    id="AZAI-103",
    slug="workspace-public-access",
    title="AML workspace is reachable from public networks",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.WORKSPACE,),
    reads=(),
    principle=Principle(
        "Use private networking for AI workloads: keep workspaces, data and endpoints off the public internet.",
        NETWORKING,
    ),
    remediation=Remediation(
        terraform="azurerm_machine_learning_workspace: public_network_access_enabled = false (and a private endpoint).",
        bicep="properties: { publicNetworkAccess: 'Disabled', allowPublicAccessWhenBehindVnet: false }",
        cli="az ml workspace update -n WS -g RG --public-network-access Disabled",
        terraform_code="""\
            resource "azurerm_machine_learning_workspace" "ws" {
              # ...
              public_network_access_enabled = false
            }
        """,
        bicep_code="""\
            resource workspace 'Microsoft.MachineLearningServices/workspaces@2024-04-01' = {
              // ...
              properties: {
                publicNetworkAccess: 'Disabled'
              }
            }
        """,
        cli_code="""\
            az ml workspace update --name WS --resource-group RG --public-network-access Disabled
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-configure-private-link",
    ),
    help_uri=rule_page("AZAI-103"),
    peers=(
        PeerRule(
            CHECKOV,
            "CKV_AZURE_144",
            "ML workspace public network access disabled; missing fails",
            "Agrees on substance: public network access fails unless explicitly off, absent included "
            "(bridgecrewio/checkov checkov/terraform/checks/resource/azure/MLPublicAccess.py@03d5fdad). Checkov "
            "reads Terraform's azurerm_machine_learning_workspace only; azai every source and workspace kind but "
            "Project, and also fails allowPublicAccessWhenBehindVnet true.",
        ),
        PeerRule(
            CHECKOV,
            "CKV2_AZURE_49",
            "ML workspace public network access disabled; missing passes",
            "Disagrees: Checkov passes an absent publicNetworkAccess (bridgecrewio/checkov "
            "checkov/arm/checks/graph_checks/AzureMLWorkspacePublicNetwork.yaml@03d5fdad), which the API takes as "
            "Enabled, so azai fails it. Checkov judges every Terraform and ARM workspace; azai passes projects and "
            "also fails allowPublicAccessWhenBehindVnet true.",
        ),
        PeerRule(
            PSRULE,
            "Azure.ML.PublicAccess",
            "ML workspace public network access disabled (AZR-000406)",
            "Agrees on substance: publicNetworkAccess must be Disabled, absent failing, and "
            "allowPublicAccessWhenBehindVnet not true (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.ML.Rule.yaml@1556a9cd). PSRule judges every workspace; azai passes "
            "AI Foundry projects (kind Project), which take their hub's network settings.",
        ),
        PeerRule(
            AZURE_POLICY,
            "438c38d2-3772-465a-a9cc-7a6666a275ce",
            "Azure Machine Learning Workspaces should disable public network access",
            "Agrees on substance: publicNetworkAccess absent or not Disabled fails (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Machine "
            "Learning/Workspace_PublicNetworkAccessDisabled_Audit.json@f4a50bac). The policy audits every workspace, "
            "projects included; azai passes projects and also fails allowPublicAccessWhenBehindVnet true.",
        ),
        PeerRule(
            AZURE_POLICY,
            "45e05259-1eb5-4f70-9574-baf73e9d219b",
            "Azure Machine Learning workspaces should use private link",
            "A different test: the policy fails a workspace with no Approved private endpoint connection "
            "(Azure/azure-policy built-in-policies/policyDefinitions/Machine "
            "Learning/Workspace_PrivateEndpoint_Audit_V2.json@f4a50bac); azai fails public network access, which a "
            "workspace with a private endpoint can still allow, and counts no endpoints. The policy audits projects "
            "too; azai passes them.",
        ),
        PeerRule(
            AZQR,
            "hub-004",
            "AI hub public network access",
            "Agrees on substance: azqr flags publicNetworkAccess null or Enabled (Azure/azqr "
            "internal/graph/azqr/azure-resources/MachineLearningServices/workspaces/kql/hub-004.kql@34dd3163). azqr "
            "reads deployed workspaces of every kind; azai IaC too, passes projects and also fails "
            "allowPublicAccessWhenBehindVnet true.",
        ),
    ),
)
def workspace_public_access(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An Azure Machine Learning or AI Foundry hub workspace that accepts traffic from public
    networks.

    ## What fails

    - A workspace whose `properties.publicNetworkAccess` is not `Disabled`. Absent means
      `Enabled`, as the API defaults it (Checkov CKV_AZURE_144 and azqr hub-004 agree; CKV2_AZURE_49
      lets an absent value pass, which misses the default).
    - A workspace with `properties.allowPublicAccessWhenBehindVnet` `true`, which opens a
      private workspace to the internet again.

    ## What passes

    Workspaces with `publicNetworkAccess` `Disabled` and without `allowPublicAccessWhenBehindVnet`,
    and AI Foundry **projects** (`kind` `Project`), which inherit their hub's network settings.

    ## Undetermined when

    Either property is unknown before deploy, or the workspace's `kind` is and it fails (a
    workspace that passes does so whatever its kind).

    ## Why

    The workspace is the control plane for data, models, compute and endpoints. A public
    workspace endpoint exposes all of it to credential stuffing and token theft from anywhere.
    """
    yield from judged_if(lambda: not is_project(resource), _public_access(resource))


def _public_access(resource: Resource) -> Iterator[Violation]:
    if known(resource.get("properties.allowPublicAccessWhenBehindVnet")) is True:
        yield Violation(
            f"Workspace '{resource.name}' allows public access when behind a virtual network",
            "properties.allowPublicAccessWhenBehindVnet",
            True,
            "false",
        )
        return
    yield from require(
        resource,
        "properties.publicNetworkAccess",
        "Disabled",
        message=(
            f"Workspace '{resource.name}' accepts traffic from public networks (publicNetworkAccess is not Disabled)"
        ),
    )
