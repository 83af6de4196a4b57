"""AZAI-113 ai-cluster-hardening."""

from __future__ import annotations

import functools
from collections.abc import Iterator

from checks._common import AZURE_POLICY, CHECKOV, PSRULE, WAF_AI, either, judged_if, pool_is_gpu, rule_page
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.engine.setting_checks import forbid, require
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import UnknownValueError, known


@rule(
    id="AZAI-113",
    slug="ai-cluster-hardening",
    title="AKS cluster hosting AI workloads lacks Entra RBAC, network policy or private nodes",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.MANAGED_CLUSTER,),
    reads=(T.AGENT_POOL, T.COMPUTE),
    principle=Principle(
        "Prefer Microsoft Entra identities over local accounts and use private networking for the platforms "
        "that host models.",
        WAF_AI + "application-platform",
    ),
    remediation=Remediation(
        terraform=(
            "azurerm_kubernetes_cluster: azure_active_directory_role_based_access_control { azure_rbac_enabled = "
            'true }, local_account_disabled = true, network_profile { network_policy = "azure" (or "cilium", '
            '"calico") }, and node_public_ip_enabled = false on every pool.'
        ),
        bicep="properties: { aadProfile: { managed: true, enableAzureRBAC: true }, disableLocalAccounts: true, "
        "enableRBAC: true, networkProfile: { networkPolicy: 'azure' } } and enableNodePublicIP: false per pool",
        cli="az aks update -n AKS -g RG --enable-aad --enable-azure-rbac --disable-local-accounts",
        terraform_code="""\
            resource "azurerm_kubernetes_cluster" "aks" {
              # ...
              local_account_disabled = true

              azure_active_directory_role_based_access_control {
                azure_rbac_enabled = true
              }

              network_profile {
                network_plugin = "azure"
                network_policy = "azure"
              }

              default_node_pool {
                # ...
                node_public_ip_enabled = false
              }
            }
        """,
        bicep_code="""\
            resource aks 'Microsoft.ContainerService/managedClusters@2024-09-01' = {
              // ...
              properties: {
                enableRBAC: true
                disableLocalAccounts: true
                aadProfile: {
                  managed: true
                  enableAzureRBAC: true
                }
                networkProfile: {
                  networkPlugin: 'azure'
                  networkPolicy: 'azure'
                }
              }
            }
        """,
        cli_code="""\
            az aks update --name AKS --resource-group RG --enable-aad --enable-azure-rbac --disable-local-accounts
        """,
        guide="https://learn.microsoft.com/azure/aks/operator-best-practices-cluster-security",
    ),
    help_uri=rule_page("AZAI-113"),
    peers=(
        PeerRule(
            CHECKOV,
            "CKV_AZURE_5",
            "RBAC is enabled on AKS clusters",
            "Disagrees on an absent enableRBAC in a template: Checkov's ARM check fails it (bridgecrewio/checkov "
            "checkov/arm/checks/resource/AKSRbacEnabled.py@03d5fdad), while azai, like Checkov's Terraform check, "
            "passes it, as AKS enables RBAC by default; azai also fails a cluster without aadProfile. azai judges "
            "only clusters with a GPU pool or attached to an AML workspace; Checkov every cluster.",
        ),
        PeerRule(
            PSRULE,
            "Azure.AKS.UseRBAC",
            "AKS clusters use Kubernetes RBAC (AZR-000038)",
            "Disagrees on an absent value: PSRule fails an absent enableRBAC, as it must equal true "
            "(Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.AKS.Rule.yaml@607eb180), while azai fails "
            "only an explicit false, as AKS enables RBAC by default. azai judges only clusters with a GPU pool or "
            "attached to an AML workspace; PSRule every cluster.",
        ),
        PeerRule(
            AZURE_POLICY,
            "ac4a19c2-fa67-49b4-8ae5-0b2e78c49457",
            "Role-Based Access Control (RBAC) should be used on Kubernetes Services",
            "Agrees on enableRBAC: only an explicit false fails (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Security "
            "Center/ASC_EnableRBAC_KubernetesService_Audit.json@f4a50bac); azai also fails a cluster without "
            "aadProfile. azai judges only clusters with a GPU pool or attached to an AML workspace; the policy every "
            "cluster.",
        ),
        PeerRule(
            PSRULE,
            "Azure.AKS.ManagedAAD",
            "AKS-managed Microsoft Entra integration (AZR-000029)",
            "Disagrees on the legacy integration: PSRule requires aadProfile.managed true (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.AKS.Rule.yaml@607eb180), while azai passes any aadProfile, so a "
            "legacy (not AKS-managed) Entra integration fails PSRule only. azai judges only clusters with a GPU pool "
            "or attached to an AML workspace; PSRule every cluster.",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_141",
            "AKS local admin account disabled",
            "Agrees on substance: local accounts fail unless explicitly disabled, absent included "
            "(bridgecrewio/checkov checkov/arm/checks/resource/AKSLocalAdminDisabled.py@03d5fdad). azai judges only "
            "clusters with a GPU pool or attached to an AML workspace; Checkov every cluster.",
        ),
        PeerRule(
            PSRULE,
            "Azure.AKS.LocalAccounts",
            "AKS local accounts disabled (AZR-000031)",
            "Agrees on substance: disableLocalAccounts must equal true, absent failing (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.AKS.Rule.yaml@607eb180), though PSRule ships it as a preview rule, "
            "outside its GA baselines. azai judges only clusters with a GPU pool or attached to an AML workspace; "
            "PSRule every cluster.",
        ),
        PeerRule(
            AZURE_POLICY,
            "993c2fcd-2b29-49d2-9eb0-df2c3a730c32",
            "Azure Kubernetes Service Clusters should have local authentication methods disabled",
            "Agrees on substance: disableLocalAccounts not true fails, absent included (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Kubernetes/AKS_DisableLocalAccounts_Deny.json@f4a50bac). azai "
            "judges only clusters with a GPU pool or attached to an AML workspace; the policy every cluster.",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_7",
            "AKS cluster has a network policy",
            "Disagrees on none: Checkov passes any networkPolicy value, none included, and fails only an absent one "
            "(bridgecrewio/checkov checkov/arm/checks/resource/AKSNetworkPolicy.py@03d5fdad), while azai fails none "
            "too. azai judges only clusters with a GPU pool or attached to an AML workspace; Checkov every cluster.",
        ),
        PeerRule(
            PSRULE,
            "Azure.AKS.NetworkPolicy",
            "AKS network policy enabled (AZR-000027)",
            "Disagrees on cilium: PSRule passes only azure or calico (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.AKS.Rule.yaml@607eb180), while azai passes any policy but none, "
            "cilium included; both fail an absent one. azai judges only clusters with a GPU pool or attached to an "
            "AML workspace; PSRule every cluster.",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_143",
            "AKS cluster nodes have no public IP addresses",
            "Agrees on substance: only an explicit true fails (bridgecrewio/checkov "
            "checkov/terraform/checks/resource/azure/AKSNodePublicIpDisabled.py@03d5fdad), but Checkov reads the "
            "default pool of Terraform clusters only, azai every pool in every source. azai judges only clusters "
            "with a GPU pool or attached to an AML workspace; Checkov every cluster.",
        ),
    ),
)
def ai_cluster_hardening(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AKS cluster that hosts AI workloads (a GPU node pool, or attached to an AML workspace as
    compute) without the basic access and network controls.

    ## What fails

    A finding for each of:

    - no Microsoft Entra integration (`properties.aadProfile` absent) or Kubernetes RBAC
      disabled (`properties.enableRBAC` `false`);
    - local accounts enabled (`properties.disableLocalAccounts` not `true`);
    - no network policy (`properties.networkProfile.networkPolicy` absent or `none`);
    - node pools with public IPs (`enableNodePublicIP` `true`), named in one finding.

    ## What passes

    Hardened clusters, and clusters with no GPU pool that no AML compute attaches.

    ## Undetermined when

    A deciding property is unknown before deploy (the other settings are still checked and their
    failures reported); or the cluster fails a setting and whether it hosts AI workloads is not
    known: a pool size, or the cluster's whole pool list (`agentPoolProfiles`), is unknown before
    deploy, and no pool is known to have GPUs and no AML compute attaches it. A hardened cluster
    passes whatever its pool sizes are (an unknown pool list still leaves its pools' public IPs
    unknown).

    ## Why

    A local admin kubeconfig never expires and bypasses Entra; without a network policy any
    compromised pod can reach the model servers; public node IPs expose the nodes themselves.
    """
    name = f"AKS cluster '{resource.name}'"
    yield from judged_if(
        lambda: _hosts_ai(resource, ctx),
        forbid(
            resource,
            "properties.aadProfile",
            None,
            message=f"{name} has no Microsoft Entra integration",
            expected="aadProfile set",
        ),
        forbid(
            resource, "properties.enableRBAC", False, message=f"{name} has Kubernetes RBAC disabled", expected="true"
        ),
        require(resource, "properties.disableLocalAccounts", True, message=f"{name} allows local accounts"),
        forbid(
            resource,
            "properties.networkProfile.networkPolicy",
            None,
            "none",
            message=f"{name} has no network policy",
            expected="azure, calico or cilium",
            severity=Severity.MEDIUM,
        ),
        _public_nodes(resource, ctx, name),
    )


def _hosts_ai(cluster: Resource, ctx: CheckContext) -> bool:
    """A GPU pool, or an AML compute attached to it. Asked only of a cluster that fails a setting;
    pools whose sizes, or a pool list that, cannot be known before deploy leave it undetermined."""
    pools = ctx.inventory.cluster_pools(cluster)
    return either(
        lambda: bool(ctx.inventory.referrers(cluster, T.COMPUTE, "properties.resourceId")),
        *[functools.partial(pool_is_gpu, pool, ctx) for pool in pools],
        lambda: _unseen_pools(cluster),
    )


def _unseen_pools(cluster: Resource) -> bool:
    """False, or Unknown when the cluster's inline pool list is not known before deploy (its
    pools then cannot be seen at all)."""
    known(cluster.get("properties.agentPoolProfiles"))
    return False


def _public_nodes(cluster: Resource, ctx: CheckContext, name: str) -> Iterator[Violation]:
    """One finding naming every pool known to give its nodes public IPs; a pool whose setting is
    unknown, or a pool list that is, matters only when no other pool is known to."""
    public: list[Resource] = []
    unknown: UnknownValueError | None = None
    try:
        _unseen_pools(cluster)
    except UnknownValueError as exc:
        unknown = exc
    for pool in ctx.inventory.cluster_pools(cluster):
        try:
            if known(pool.get("properties.enableNodePublicIP")) is True:
                public.append(pool)
        except UnknownValueError as exc:
            unknown = unknown or exc
    if public:
        pools = ", ".join(f"'{p.name.rsplit('/', 1)[-1]}'" for p in public)
        yield Violation(
            f"{name} gives public IPs to the nodes of pool {pools}",
            "properties.agentPoolProfiles",
            True,
            "enableNodePublicIP false",
        )
    elif unknown is not None:
        raise unknown
