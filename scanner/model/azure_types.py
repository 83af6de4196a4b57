"""ARM resource types the checks read, in Azure's canonical spelling.

Types compare case-insensitively everywhere (`type_key`); the canonical spelling is only
used for display, so that a live `Microsoft.ContainerService/ManagedClusters` and a template's
`Microsoft.ContainerService/managedClusters` print the same.
"""

from __future__ import annotations

WORKSPACE = "Microsoft.MachineLearningServices/workspaces"
COMPUTE = "Microsoft.MachineLearningServices/workspaces/computes"
ONLINE_ENDPOINT = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints"
ONLINE_DEPLOYMENT = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments"
SERVERLESS_ENDPOINT = "Microsoft.MachineLearningServices/workspaces/serverlessEndpoints"
ML_SCHEDULE = "Microsoft.MachineLearningServices/workspaces/schedules"
ML_JOB = "Microsoft.MachineLearningServices/workspaces/jobs"
ENVIRONMENT_VERSION = "Microsoft.MachineLearningServices/workspaces/environments/versions"
REGISTRY_ENVIRONMENT_VERSION = "Microsoft.MachineLearningServices/registries/environments/versions"
MANAGED_CLUSTER = "Microsoft.ContainerService/managedClusters"
AGENT_POOL = "Microsoft.ContainerService/managedClusters/agentPools"
STORAGE_ACCOUNT = "Microsoft.Storage/storageAccounts"
COGNITIVE_ACCOUNT = "Microsoft.CognitiveServices/accounts"
CONTAINER_APP = "Microsoft.App/containerApps"
CONTAINER_APP_AUTH = "Microsoft.App/containerApps/authConfigs"
CONTAINER_APP_ENVIRONMENT = "Microsoft.App/managedEnvironments"
VIRTUAL_MACHINE = "Microsoft.Compute/virtualMachines"
VM_SCALE_SET = "Microsoft.Compute/virtualMachineScaleSets"
KEY_VAULT = "Microsoft.KeyVault/vaults"
CONTAINER_REGISTRY = "Microsoft.ContainerRegistry/registries"
DEPLOYMENT = "Microsoft.Resources/deployments"
PRIVATE_ENDPOINT = "Microsoft.Network/privateEndpoints"
DIAGNOSTIC_SETTING = "Microsoft.Insights/diagnosticSettings"
AUTOSCALE_SETTING = "Microsoft.Insights/autoscaleSettings"
# Generative AI: model deployments and content filters of an AI services account, Foundry
# projects and connections, and the retrieval store (AI Search) that grounds the models.
MODEL_DEPLOYMENT = "Microsoft.CognitiveServices/accounts/deployments"
RAI_POLICY = "Microsoft.CognitiveServices/accounts/raiPolicies"
AI_PROJECT = "Microsoft.CognitiveServices/accounts/projects"
ACCOUNT_CONNECTION = "Microsoft.CognitiveServices/accounts/connections"
PROJECT_CONNECTION = "Microsoft.CognitiveServices/accounts/projects/connections"
WORKSPACE_CONNECTION = "Microsoft.MachineLearningServices/workspaces/connections"
SEARCH_SERVICE = "Microsoft.Search/searchServices"

# Cognitive Services account kinds that serve Azure OpenAI models.
OPENAI_KINDS = ("OpenAI", "AIServices")


def builtin_content_filter(name: object) -> bool:
    """Whether a content filter (``raiPolicyName``) is one of Microsoft's own, which every
    account lists (``Microsoft.Default``, ``Microsoft.DefaultV2``, ``Microsoft.Nil``), rather
    than one the account's owner wrote."""
    return isinstance(name, str) and name.lower().startswith("microsoft.")


_CANONICAL = {
    t.lower(): t
    for t in (
        WORKSPACE,
        COMPUTE,
        ONLINE_ENDPOINT,
        ONLINE_DEPLOYMENT,
        SERVERLESS_ENDPOINT,
        ML_SCHEDULE,
        ML_JOB,
        ENVIRONMENT_VERSION,
        REGISTRY_ENVIRONMENT_VERSION,
        MANAGED_CLUSTER,
        AGENT_POOL,
        STORAGE_ACCOUNT,
        COGNITIVE_ACCOUNT,
        CONTAINER_APP,
        CONTAINER_APP_AUTH,
        CONTAINER_APP_ENVIRONMENT,
        VIRTUAL_MACHINE,
        VM_SCALE_SET,
        KEY_VAULT,
        CONTAINER_REGISTRY,
        DEPLOYMENT,
        PRIVATE_ENDPOINT,
        DIAGNOSTIC_SETTING,
        AUTOSCALE_SETTING,
        MODEL_DEPLOYMENT,
        RAI_POLICY,
        AI_PROJECT,
        ACCOUNT_CONNECTION,
        PROJECT_CONNECTION,
        WORKSPACE_CONNECTION,
        SEARCH_SERVICE,
    )
}


def canonical_type(resource_type: str) -> str:
    """Azure's spelling of a known type; unknown types are returned as given."""
    return _CANONICAL.get(resource_type.lower(), resource_type)
