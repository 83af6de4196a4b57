"""AZAI-102 shared-gpu-pool."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import APRL, CHECKOV, WAF_AI, cluster_name, judged_if, pool_is_gpu, pool_mode, rule_page
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known

ISOLATING_EFFECTS = ("noschedule", "noexecute")


@rule(
    id="AZAI-102",
    slug="shared-gpu-pool",
    title="GPU node pool is shared with other workloads",
    pillar=Pillar.SECURITY,
    severity=Severity.MEDIUM,
    resource_types=(T.AGENT_POOL, T.MANAGED_CLUSTER),
    reads=(),
    principle=Principle(
        "Isolate GPU node pools from other APIs and workloads, using taints, tolerations and node "
        "selectors. Use GPU compute only for AI functions.",
        WAF_AI + "application-platform",
    ),
    remediation=Remediation(
        terraform=(
            'azurerm_kubernetes_cluster_node_pool: mode = "User" and node_taints = ["sku=gpu:NoSchedule"]; '
            "keep default_node_pool on a CPU size."
        ),
        bicep="agentPools: properties: { mode: 'User', nodeTaints: [ 'sku=gpu:NoSchedule' ] }",
        cli="az aks nodepool add -g RG --cluster-name AKS -n gpu --mode User --node-taints sku=gpu:NoSchedule ...",
        terraform_code="""\
            resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
              name                  = "gpu"
              kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
              vm_size               = "Standard_NC24ads_A100_v4"
              mode                  = "User"
              node_taints           = ["sku=gpu:NoSchedule"]
            }
        """,
        bicep_code="""\
            resource gpu 'Microsoft.ContainerService/managedClusters/agentPools@2024-09-01' = {
              parent: aks
              name: 'gpu'
              properties: {
                vmSize: 'Standard_NC24ads_A100_v4'
                mode: 'User'
                nodeTaints: [
                  'sku=gpu:NoSchedule'
                ]
              }
            }
        """,
        cli_code="""\
            az aks nodepool add --resource-group RG --cluster-name AKS --name gpu \\
              --node-vm-size Standard_NC24ads_A100_v4 --mode User --node-taints sku=gpu:NoSchedule
        """,
        guide=WAF_AI + "application-platform",
    ),
    help_uri=rule_page("AZAI-102"),
    peers=(
        PeerRule(
            CHECKOV,
            "CKV_AZURE_232",
            "Only critical system pods on system nodes",
            "Checkov fails every Terraform cluster whose default pool does not set only_critical_addons_enabled "
            "true, CPU or GPU (bridgecrewio/checkov "
            "checkov/terraform/checks/resource/azure/AKSOnlyCriticalPodsOnSystemNodes.py@03d5fdad). azai judges GPU "
            "pools only, in every source: a GPU System pool fails whatever its taints, a GPU User pool needs a "
            "NoSchedule or NoExecute taint, and CPU pools are not judged.",
        ),
        PeerRule(
            APRL,
            "5ee083cd",
            "Isolate system and application pods (System pools without a taint)",
            "APRL's query flags the System pools of every deployed cluster that carry no taint "
            "(Azure/Azure-Proactive-Resiliency-Library-v2 azure-resources/ContainerService/managedClusters/kql/"
            "5ee083cd-6ac3-4a83-8913-9549dd36cf56.kql@9b93db71). azai judges GPU pools only, in IaC too: a GPU "
            "System pool fails whatever its taints, a GPU User pool needs a NoSchedule or NoExecute taint, and CPU "
            "pools are not judged.",
        ),
    ),
)
def shared_gpu_pool(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AKS node pool with GPU nodes that ordinary pods can be scheduled on.

    ## What fails

    - A pool whose VM size is a GPU size (from the bundled size table, not a name prefix) and
      whose `mode` is `System`: cluster add-ons and system pods then run on GPU nodes.
    - A GPU `User` pool without a `NoSchedule` or `NoExecute` taint in `nodeTaints`: any pod
      without a node selector can land on it. `PreferNoSchedule` does not isolate.

    Pools are read both from a cluster's `agentPoolProfiles` and from standalone
    `managedClusters/agentPools` resources (Terraform's `azurerm_kubernetes_cluster_node_pool`).
    A standalone pool without a `mode` is a User pool; in a cluster without any pool marked
    System, AKS makes the first pool System.

    ## What passes

    CPU pools of any kind, and GPU User pools with an isolating taint such as
    `sku=gpu:NoSchedule` or `nvidia.com/gpu=present:NoSchedule`.

    ## Undetermined when

    The pool's mode or taints are unknown before deploy, or its VM size is and the pool is not
    isolated (a User pool with a NoSchedule or NoExecute taint passes whatever its size), or a
    cluster's whole `agentPoolProfiles` list is (so its pools cannot be read at all).

    ## Why

    GPU nodes cost ten to a hundred times a CPU node. An untainted GPU pool fills with pods that
    never use the GPU, which blocks AI jobs from the capacity they were bought for and keeps the
    pool from scaling down; a GPU system pool can never scale to zero. Isolation also keeps
    general workloads away from nodes that hold model weights and inference data.
    """
    if resource.type_key == T.MANAGED_CLUSTER.lower():
        known(resource.get("properties.agentPoolProfiles"))
        return
    yield from judged_if(lambda: pool_is_gpu(resource, ctx), _shared(resource))


def _shared(pool: Resource) -> Iterator[Violation]:
    """How other pods can reach the pool's nodes, whatever its size: asked of every pool, so
    that one that is isolated passes whether or not its size is known to carry GPUs."""
    size = pool.get("properties.vmSize")
    where = f"GPU pool '{pool.name.rsplit('/', 1)[-1]}' ({size}) in cluster '{cluster_name(pool)}'"
    if pool_mode(pool) == "system":
        yield Violation(
            f"{where} is a System pool, so system pods share its GPU nodes",
            "properties.mode",
            "System",
            "User",
        )
        return
    taints = known(pool.get("properties.nodeTaints"))
    effects = [_effect(known(t)) for t in taints] if isinstance(taints, list) else []
    if not any(e in ISOLATING_EFFECTS for e in effects):
        yield Violation(
            f"{where} has no NoSchedule or NoExecute taint, so any pod can be scheduled on it",
            "properties.nodeTaints",
            taints if isinstance(taints, list) else [],
            "a taint such as sku=gpu:NoSchedule",
        )


def _effect(taint: object) -> str:
    """The effect of a ``key=value:Effect`` taint, lower-cased."""
    return str(taint).rsplit(":", 1)[-1].strip().lower() if ":" in str(taint) else ""
