"""AZAI-104 compute-access."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import AZURE_POLICY, CHECKOV, PSRULE, WAF_AI, either, every_gap, judged_if, rule_page, same_text
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource, get_path
from scanner.model.unknown import Unknown, UnknownValueError, known


@rule(
    id="AZAI-104",
    slug="compute-access",
    title="AML compute accepts local credentials or runs outside a virtual network",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.COMPUTE,),
    reads=(T.WORKSPACE,),  # its managed network
    principle=Principle(
        "Prefer Microsoft Entra identities over keys and local accounts, and use private networking for AI compute.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform=(
            "azurerm_machine_learning_compute_cluster / _instance: local_auth_enabled = false and "
            "subnet_resource_id = azurerm_subnet.ml.id (or a workspace managed network)."
        ),
        bicep="computes: properties: { disableLocalAuth: true, properties: { subnet: { id: subnet.id } } }",
        cli="az ml compute create ... --disable-local-auth true --vnet-name VNET --subnet SUBNET",
        terraform_code="""\
            resource "azurerm_machine_learning_compute_cluster" "train" {
              # ...
              local_auth_enabled = false
              subnet_resource_id = azurerm_subnet.ml.id
            }
        """,
        bicep_code="""\
            resource train 'Microsoft.MachineLearningServices/workspaces/computes@2024-04-01' = {
              parent: workspace
              name: 'train'
              location: location
              properties: {
                computeType: 'AmlCompute'
                disableLocalAuth: true
                properties: {
                  vmSize: 'Standard_NC24ads_A100_v4'
                  subnet: {
                    id: subnet.id
                  }
                }
              }
            }
        """,
        cli_code="""\
            az ml compute create --name train --type AmlCompute --size Standard_NC24ads_A100_v4 \\
              --resource-group RG --workspace-name WS --vnet-name VNET --subnet SUBNET
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-secure-training-vnet",
    ),
    help_uri=rule_page("AZAI-104"),
    peers=(
        PeerRule(
            CHECKOV,
            "CKV_AZURE_142",
            "ML compute cluster local authentication disabled",
            "Agrees on substance: local authentication fails unless explicitly off, absent included "
            "(bridgecrewio/checkov checkov/terraform/checks/resource/azure/MLCCLADisabled.py@03d5fdad). Checkov "
            "reads Terraform's azurerm_machine_learning_compute_cluster only; azai every source and compute type, "
            "instances and attached computes included.",
        ),
        PeerRule(
            PSRULE,
            "Azure.ML.DisableLocalAuth",
            "ML computes disable local authentication (AZR-000404)",
            "Agrees on both: every workspace compute fails unless disableLocalAuth is true, absent included "
            "(Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.ML.Rule.yaml@1556a9cd).",
        ),
        PeerRule(
            PSRULE,
            "Azure.ML.ComputeVnet",
            "ML computes are in a virtual network (AZR-000405)",
            "Disagrees: PSRule fails every compute without properties.properties.subnet.id (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.ML.Rule.yaml@1556a9cd), attached Kubernetes and AKS computes too, "
            "while azai judges only clusters and instances and passes those in a workspace managed network, which "
            "Microsoft recommends for new AI workloads.",
        ),
        PeerRule(
            AZURE_POLICY,
            "e96a9a5f-07ca-471b-9bc5-6a0f33cbd68f",
            "Azure Machine Learning Computes should have local authentication methods disabled",
            "Agrees on substance: disableLocalAuth not true fails, absent included. The policy audits only "
            "ComputeInstance and AmlCompute (Azure/azure-policy built-in-policies/policyDefinitions/Machine "
            "Learning/DisableLocalAuth_Audit.json@f4a50bac); azai every compute type, attached Kubernetes and AKS "
            "included.",
        ),
        PeerRule(
            AZURE_POLICY,
            "7804b5c7-01dc-4723-969b-ae300cc07ff1",
            "Audit Azure Machine Learning Compute Cluster and Instance is behind virtual network",
            "Disagrees: the policy fails every cluster and instance whose subnet.id is absent or empty "
            "(Azure/azure-policy built-in-policies/policyDefinitions/Machine Learning/Vnet_Audit.json@f4a50bac), "
            "while azai passes those in a workspace managed network, which Microsoft recommends for new AI "
            "workloads. Both judge only AmlCompute and ComputeInstance.",
        ),
    ),
)
def compute_access(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML compute that can be reached with local credentials (SSH keys, passwords) instead of
    Microsoft Entra identities, or that runs outside any virtual network.

    ## What fails

    Each of these is its own finding:

    - Any workspace compute whose `properties.disableLocalAuth` is not `true` (absent means
      local authentication is enabled; azurerm's `local_auth_enabled` defaults to `true`).
    - An `AmlCompute` cluster or `ComputeInstance` without `properties.properties.subnet.id`,
      in a workspace that has no managed network (`managedNetwork.isolationMode` absent or
      `Disabled`).
    - An `AmlCompute` cluster or `ComputeInstance` whose `properties.properties.enableNodePublicIp`
      is `true` (**medium**): its nodes get public IP addresses. Only an explicit `true` fails.
      The API's default, when the property is absent, is also `true` (as are the defaults of
      azurerm's `node_public_ip_enabled` and the `azure-ai-ml` SDK's `enable_node_public_ip`),
      so a compute that does not say `false` has public IPs too; it is not reported yet,
      because it is nearly every compute written today. A Terraform plan, where azurerm writes
      its default `true` into the planned values, fails where the template that leaves it out
      passes.

    ## What passes

    Computes with `disableLocalAuth: true` and `enableNodePublicIp` not `true` that are in a
    subnet or in a workspace with a managed network. Attached Kubernetes and AKS computes are checked for
    local auth only; their network is the cluster's.

    A subnet id that is set to a value known only at deploy (a `reference()` or a module output)
    counts as set: the compute is in a subnet. One set only under a condition nobody knows
    before deploy (`if(useVnet, subnetId, null())`) may not be set at all: undetermined.

    ## Undetermined when

    `disableLocalAuth` or `enableNodePublicIp` is unknown before deploy; neither a subnet nor a
    workspace managed network is known to be there, and whether a subnet is set at all, or the
    workspace's isolation mode, is unknown, or the workspace is not among the scanned resources;
    or the compute type is unknown and a setting of clusters and instances fails. A failure of
    another setting is still reported.

    ## Why

    Local accounts bypass Entra Conditional Access and audit, and a compute with a public IP
    outside a virtual network exposes SSH and Jupyter to the internet. Even inside a network,
    nodes with public IPs are an address on the internet that a network rule, not the absence
    of a route, has to keep closed; with `enableNodePublicIp: false` (a "no public IP" compute)
    the nodes are reachable only privately.
    """
    yield from every_gap(
        _local_auth(resource),
        judged_if(
            lambda: same_text(known(resource.get("properties.computeType")), "AmlCompute", "ComputeInstance"),
            _outside_network(resource, ctx),
            _public_node_ips(resource),
        ),
    )


def _local_auth(compute: Resource) -> Iterator[Violation]:
    if known(compute.get("properties.disableLocalAuth")) is not True:
        yield Violation(
            f"AML compute '{compute.name}' allows local authentication (disableLocalAuth is not true)",
            "properties.disableLocalAuth",
            compute.get("properties.disableLocalAuth"),
            "true",
        )


def _outside_network(compute: Resource, ctx: CheckContext) -> Iterator[Violation]:
    if either(lambda: _in_subnet(compute), lambda: _managed_network(compute, ctx)):
        return
    yield Violation(
        f"AML compute '{compute.name}' is not in a virtual network (no subnet and no workspace managed network)",
        "properties.properties.subnet.id",
        None,
        "a subnet id, or a workspace with a managed network",
    )


def _in_subnet(compute: Resource) -> bool:
    """A subnet id is set, even to one known only at deploy; one set only under a condition
    nobody knows (``if(c, id, null())``) may not be set at all."""
    subnet_id = get_path(known(compute.get("properties.properties.subnet")), "id")
    if isinstance(subnet_id, Unknown) and subnet_id.may_be_null:
        known(subnet_id)
    return subnet_id is not None


def _managed_network(compute: Resource, ctx: CheckContext) -> bool:
    """The compute's workspace isolates its network; a workspace that was not scanned cannot be
    said to have no managed network."""
    workspace = ctx.inventory.parent(compute)
    if workspace is None:
        raise UnknownValueError(Unknown("the compute's workspace is not among the scanned resources"))
    mode = known(workspace.get("properties.managedNetwork.isolationMode"))
    return isinstance(mode, str) and not same_text(mode, "Disabled")


def _public_node_ips(compute: Resource) -> Iterator[Violation]:
    value = known(compute.get("properties.properties.enableNodePublicIp"))
    if value is True:
        yield Violation(
            f"AML compute '{compute.name}' gives its nodes public IP addresses (enableNodePublicIp is true)",
            "properties.properties.enableNodePublicIp",
            value,
            "false",
            Severity.MEDIUM,
        )
