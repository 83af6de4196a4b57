"""AZAI-101 anonymous-endpoint."""

from __future__ import annotations

import functools
from collections.abc import Iterator

from checks._common import (
    AZQR,
    AZURE_POLICY,
    CHECKOV,
    PSRULE,
    WAF_AI,
    either,
    gpu_profile,
    has_tag,
    is_public,
    judged_if,
    known_list,
    rule_page,
    same_text,
)
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, UnknownValueError, known


@rule(
    id="AZAI-101",
    slug="anonymous-endpoint",
    title="Inference endpoint accepts calls without a Microsoft Entra identity",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.ONLINE_ENDPOINT, T.SERVERLESS_ENDPOINT, T.COGNITIVE_ACCOUNT, T.CONTAINER_APP),
    reads=(T.CONTAINER_APP_AUTH, T.CONTAINER_APP_ENVIRONMENT),
    principle=Principle(
        "Require authentication for all inferencing endpoints, including system-to-system calls. "
        "Avoid anonymous endpoints and prefer Microsoft Entra identities (RBAC, managed identity) over keys.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform=(
            "azurerm_cognitive_account: set local_auth_enabled = false. AML online endpoint (azapi_resource): "
            'body = { properties = { authMode = "AADToken" } }; serverless endpoint: authMode = "AAD".'
        ),
        bicep=(
            "Cognitive Services / OpenAI: properties: { disableLocalAuth: true }. "
            "onlineEndpoints: properties: { authMode: 'AADToken' }; serverlessEndpoints: authMode: 'AAD'."
        ),
        cli=(
            "az cognitiveservices account update -n NAME -g RG --custom-domain NAME --api-properties "
            "disableLocalAuth=true; az ml online-endpoint update -n EP --set auth_mode=aad_token"
        ),
        terraform_code="""\
            resource "azurerm_cognitive_account" "openai" {
              # ...
              local_auth_enabled = false
            }

            resource "azapi_resource" "endpoint" {
              type      = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints@2024-04-01"
              parent_id = azurerm_machine_learning_workspace.ws.id
              # ...
              body = {
                properties = {
                  authMode = "AADToken"
                }
              }
            }
        """,
        bicep_code="""\
            resource openai 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
              // ...
              properties: {
                disableLocalAuth: true
              }
            }

            resource endpoint 'Microsoft.MachineLearningServices/workspaces/onlineEndpoints@2024-04-01' = {
              parent: workspace
              // ...
              properties: {
                authMode: 'AADToken'
              }
            }
        """,
        cli_code="""\
            az resource update --ids ACCOUNT_ID --set properties.disableLocalAuth=true
            az ml online-endpoint update --name EP --resource-group RG --workspace-name WS --set auth_mode=aad_token
        """,
        guide=WAF_AI + "design-principles#security",
    ),
    help_uri=rule_page("AZAI-101"),
    options={
        "marker_tag": "workload",
        "marker_values": ["ai", "ml", "inference", "training"],
        "all_container_apps": False,
    },
    peers=(
        PeerRule(
            CHECKOV,
            "CKV_AZURE_236",
            "Cognitive Services accounts disable local authentication",
            "Agrees on accounts: both fail disableLocalAuth (Terraform local_auth_enabled) unless it is explicitly "
            "off, absent included (bridgecrewio/checkov "
            "checkov/arm/checks/resource/CognitiveServicesEnableLocalAuth.py@03d5fdad). azai also judges AML online "
            "and serverless endpoints and model-serving Container Apps, critical when public.",
        ),
        PeerRule(
            PSRULE,
            "Azure.AI.DisableLocalAuth",
            "AI services accounts disable local (key) authentication (AZR-000282)",
            "Agrees on accounts: disableLocalAuth must equal true, absent failing (Azure/PSRule.Rules.Azure "
            "src/PSRule.Rules.Azure/rules/Azure.AI.Rule.yaml@0df3c669). azai also judges AML online and serverless "
            "endpoints and model-serving Container Apps, critical when public.",
        ),
        PeerRule(
            AZURE_POLICY,
            "71ef260a-8f18-47b7-abcb-62d0673d94dc",
            "Azure AI Services resources should have key access disabled",
            "Agrees on accounts: disableLocalAuth not true fails, absent included; the policy also audits AI Search "
            "services, which AZAI-115 judges (Azure/azure-policy built-in-policies/policyDefinitions/Azure Ai "
            "Services/DisableLocalAuth_Audit.json@f4a50bac). azai also judges AML online and serverless endpoints "
            "and model-serving Container Apps, and IaC before deploy.",
        ),
        PeerRule(
            AZQR,
            "aif-008",
            "AI Foundry local authentication disabled",
            "Agrees on accounts: azqr flags disableLocalAuth null or false (Azure/azqr "
            "internal/graph/azqr/azure-resources/CognitiveServices/accounts/kql/aif-008.kql@34dd3163). azqr reads "
            "deployed accounts only; azai also IaC, AML online and serverless endpoints and model-serving Container "
            "Apps.",
        ),
    ),
)
def anonymous_endpoint(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An inference endpoint that accepts a shared key (or no credential at all) instead of a
    Microsoft Entra identity.

    ## What fails

    - An AML online endpoint with `properties.authMode` `Key`.
    - An AML serverless endpoint with `properties.authMode` `Key` or `KeyAndAAD`.
    - A Cognitive Services, Azure OpenAI or AI Services account whose `properties.disableLocalAuth`
      is not `true` (absent means local keys are accepted).
    - A Container App that serves models, with external ingress and no `authConfigs` child
      that enables platform authentication. An app serves models when it runs on a GPU
      workload profile of its environment, or when it or its environment carries the AI
      workload marker (option `marker_tag`, default `workload`, with a value from
      `marker_values`, default `ai`, `ml`, `inference`, `training`, as AZAI-203 uses).

    The finding is **critical** instead of high when the endpoint is also reachable from public
    networks: `publicNetworkAccess` is not `Disabled` (absent means `Enabled`), or, for a
    Container App, its ingress is external.

    ## What passes

    `AMLToken` or `AADToken` online endpoints, `AAD` serverless endpoints, accounts with
    `disableLocalAuth: true`, internal-only Container Apps, external ones with an enabled
    auth configuration, and Container Apps that do not serve models: a public website on
    Container Apps is not an inference endpoint, and a public chat front end may be anonymous
    by design.

    ## Undetermined when

    The auth mode, `disableLocalAuth` or ingress setting is unknown before deploy (a Terraform
    value known only after apply, or an ARM expression that needs the deployment), or an online
    or serverless endpoint declares no `authMode` at all. A Container App with external ingress
    and no authentication configuration whose environment id, workload profile or marker tags
    are unknown before deploy, or whose environment is not among the scanned resources, unless
    something known already marks it as serving models.

    ## Options

    - `marker_tag`, `marker_values`: how a Container App, or its environment, is marked as
      serving models.
    - `all_container_apps` (default false): treat every Container App as an inference
      endpoint, for estates whose apps all serve models.

    ## Why

    A key is a bearer secret: anyone who has it can call the model, keys leak into notebooks and
    pipelines, and key calls carry no caller identity for audit. ML online endpoints have no
    anonymous mode, so `Key` with public network access is the anonymous endpoint in practice.
    """
    if resource.type_key == T.COGNITIVE_ACCOUNT.lower():
        disabled = known(resource.get("properties.disableLocalAuth"))
        if disabled is not True:
            yield _violation(
                resource,
                f"{_kind(resource)} account '{resource.name}' accepts API keys (disableLocalAuth is not true)",
                "properties.disableLocalAuth",
                disabled,
                "true",
            )
        return
    if resource.type_key == T.CONTAINER_APP.lower():
        yield from judged_if(lambda: _serves_models(resource, ctx), _anonymous_ingress(resource, ctx))
        return
    mode = resource.get("properties.authMode")
    if mode is None:
        known(Unknown("authMode is not declared", path="properties.authMode"))
    serverless = resource.type_key == T.SERVERLESS_ENDPOINT.lower()
    keyed = same_text(mode, "Key", "KeyAndAAD") if serverless else same_text(mode, "Key")
    if keyed:
        kind = "serverless" if serverless else "online"
        expected = "AAD" if serverless else "AADToken or AMLToken"
        yield _violation(
            resource,
            f"AML {kind} endpoint '{resource.name}' uses key authentication (authMode {mode})",
            "properties.authMode",
            mode,
            expected,
        )


def _violation(resource: Resource, message: str, path: str, observed: object, expected: str) -> Violation:
    public = is_public(resource)
    if isinstance(public, Unknown) or public:
        note = "public network access unknown" if isinstance(public, Unknown) else "reachable from public networks"
        return Violation(f"{message}, {note}", path, observed, expected, Severity.CRITICAL)
    return Violation(message, path, observed, expected)


def _kind(resource: Resource) -> str:
    kind = resource.body.get("kind")
    return kind if isinstance(kind, str) else "Cognitive Services"


def _anonymous_ingress(app: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """External ingress without platform authentication, whether or not the app serves models.
    An auth configuration and internal ingress each settle it alone."""
    if either(
        lambda: _has_auth_config(app, ctx),
        lambda: known(app.get("properties.configuration.ingress.external")) is not True,
    ):
        return
    yield Violation(
        f"Container App '{app.name}' has external ingress and no authentication configuration",
        "properties.configuration.ingress.external",
        True,
        "an authConfigs resource with platform.enabled true, or internal ingress",
        Severity.CRITICAL,
    )


def _serves_models(app: Resource, ctx: CheckContext) -> bool:
    """Whether a Container App is an inference endpoint: it runs on a GPU workload profile, or
    it or its environment carries the AI workload marker (or the option says every app is).
    Asked only of an app that would fail: an environment, profile or tags not known before
    deploy, or an environment that is not among the scanned resources, leave it unknown unless
    something known already says yes."""
    if ctx.options.get("all_container_apps", False):
        return True
    return either(
        lambda: has_tag(app, ctx, "marker_tag", "marker_values"),
        lambda: _environment_serves_models(app, ctx),
    )


def _environment_serves_models(app: Resource, ctx: CheckContext) -> bool:
    reference = next(
        (r for r in (app.get("properties.managedEnvironmentId"), app.get("properties.environmentId")) if r is not None),
        None,
    )
    if reference is None:
        return False
    environment = ctx.inventory.get(known(reference))
    if environment is None:
        raise UnknownValueError(Unknown("the app's environment is not among the scanned resources"))
    return either(
        lambda: has_tag(environment, ctx, "marker_tag", "marker_values"),
        lambda: _on_gpu_profile(app, environment),
    )


def _on_gpu_profile(app: Resource, environment: Resource) -> bool:
    """The app's workload profile is one of its environment's GPU profiles."""
    profile = known(app.get("properties.workloadProfileName"))
    profiles = known_list(environment.get("properties.workloadProfiles"), "properties.workloadProfiles")
    if not isinstance(profile, str) or not profiles:
        return False
    named = [p for p in profiles if isinstance(p, dict) and same_text(p.get("name", ""), profile)]
    return either(*[functools.partial(gpu_profile, p) for p in named])


def _has_auth_config(app: Resource, ctx: CheckContext) -> bool:
    for config in ctx.inventory.children(app, T.CONTAINER_APP_AUTH):
        enabled = known(config.get("properties.platform.enabled"))
        if enabled is not False:
            return True
    return False
