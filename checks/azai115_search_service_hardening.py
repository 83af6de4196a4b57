"""AZAI-115 search-service-hardening."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import (
    AZURE_POLICY,
    CHECKOV,
    PSRULE,
    WAF_AI,
    either,
    every_gap,
    identity_kinds,
    known_list,
    rule_page,
    same_text,
)
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.engine.setting_checks import require
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known

# IP rules that admit the whole internet, as Checkov CKV_AZURE_210 also reads them.
_ANY_ADDRESS = frozenset({"0.0.0.0/0", "0.0.0.0"})


@rule(
    id="AZAI-115",
    slug="search-service-hardening",
    title="AI Search service accepts API keys, is publicly reachable, or lacks a managed identity or CMK enforcement",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.SEARCH_SERVICE,),
    reads=(),
    principle=Principle(
        "Protect the data that grounds models: retrieval indexes hold the business content a RAG application "
        "answers from, so reach them with Microsoft Entra identities over private networks.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform=(
            "azurerm_search_service: local_authentication_enabled = false, public_network_access_enabled = false, "
            'identity { type = "SystemAssigned" } and customer_managed_key_enforcement_enabled = true.'
        ),
        bicep="identity: { type: 'SystemAssigned' }, properties: { disableLocalAuth: true, publicNetworkAccess: "
        "'Disabled', encryptionWithCmk: { enforcement: 'Enabled' } } (and no authOptions)",
        cli="az search service update -n NAME -g RG --disable-local-auth true --public-network-access disabled "
        "--identity-type SystemAssigned",
        terraform_code="""\
            resource "azurerm_search_service" "search" {
              # ...
              local_authentication_enabled             = false
              public_network_access_enabled            = false
              customer_managed_key_enforcement_enabled = true

              identity {
                type = "SystemAssigned"
              }
            }
        """,
        bicep_code="""\
            resource search 'Microsoft.Search/searchServices@2025-05-01' = {
              // ...
              identity: {
                type: 'SystemAssigned'
              }
              properties: {
                disableLocalAuth: true
                publicNetworkAccess: 'Disabled'
                encryptionWithCmk: {
                  enforcement: 'Enabled'
                }
              }
            }
        """,
        cli_code="""\
            az search service update --name NAME --resource-group RG --disable-local-auth true \\
              --public-network-access disabled --identity-type SystemAssigned
            az resource update --ids SEARCH_ID --set properties.encryptionWithCmk.enforcement=Enabled
        """,
        guide="https://learn.microsoft.com/azure/search/search-security-overview",
    ),
    help_uri=rule_page("AZAI-115"),
    options={"require_cmk_enforcement": True},
    peers=(
        PeerRule(
            AZURE_POLICY,
            "6300012e-e9a4-4649-b41f-a85f5c43be91",
            "Azure AI Search services should have local authentication methods disabled",
            "Agrees on both: every service fails unless disableLocalAuth is true, absent included "
            "(Azure/azure-policy "
            "built-in-policies/policyDefinitions/Search/DisableLocalAuth_AuditDeny.json@f4a50bac).",
        ),
        PeerRule(
            AZURE_POLICY,
            "ee980b6d-0eca-4501-8d54-f6290fd512c3",
            "Azure AI Search services should disable public network access",
            "Both fail publicNetworkAccess absent or Enabled on every service, but the policy also flags "
            "SecuredByPerimeter (Azure/azure-policy built-in-policies/policyDefinitions/Search/"
            "RequirePublicNetworkAccessDisabled_Deny.json@f4a50bac), which azai passes as a network security "
            "perimeter decides, and azai reports access limited by IP rules at medium, not high.",
        ),
        PeerRule(
            AZURE_POLICY,
            "0fda3595-9f2b-4592-8675-4231d6fa82fe",
            "Azure Cognitive Search services should use private link (deprecated)",
            "Not covered: the deprecated policy fails a service with no Approved private endpoint connection "
            "(Azure/azure-policy built-in-policies/policyDefinitions/Search/PrivateEndpoints_Audit.json@f4a50bac); "
            "azai counts no endpoints and requires public access disabled instead, which closes the service without "
            "one.",
        ),
        PeerRule(
            AZURE_POLICY,
            "76a56461-9dc0-40f0-82f5-2453283afa2f",
            "Azure AI Search services should use customer-managed keys to encrypt data at rest",
            "The policy requires encryptionWithCmk.enforcement Enabled and encryptionComplianceStatus Compliant on "
            "every service (Azure/azure-policy built-in-policies/policyDefinitions/Search/CMK_Audit.json@f4a50bac); "
            "azai reads enforcement only (the status is known after deploy), exempts the free tier, where "
            "customer-managed keys are not available, and drops the finding with the option require_cmk_enforcement "
            "false.",
        ),
        PeerRule(
            AZURE_POLICY,
            "a049bf77-880b-470f-ba6d-9f21c530cf83",
            "Azure AI Search service should use a SKU that supports private link",
            "Not covered here: the policy flags the free SKU (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Search/RequirePrivateLinkSupportedResource_Deny.json@f4a50bac), "
            "which AZAI-404 reports, as it has no SLA; this rule exempts free services from its identity and key "
            "findings.",
        ),
        PeerRule(
            PSRULE,
            "Azure.Search.ManagedIdentity",
            "Search services use a managed identity (AZR-000175)",
            "Disagrees twice: PSRule requires identity.type exactly SystemAssigned on every service, the free tier "
            "included (Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.Search.Rule.ps1@c665b65e; its "
            "tests fail the free search-D, tests/PSRule.Rules.Azure.Tests/Azure.Search.Tests.ps1@204783f7), while "
            "azai accepts a user-assigned identity too and exempts the free tier, which cannot have one. Both fail a "
            "billable service without one.",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_207",
            "Azure Cognitive Search service uses managed identities",
            "Disagrees twice: Checkov requires identity type SystemAssigned on every Terraform service, the free "
            "tier included (bridgecrewio/checkov "
            "checkov/terraform/checks/resource/azure/AzureSearchManagedIdentity.py@03d5fdad), while azai accepts a "
            "user-assigned identity too and exempts the free tier, which cannot have one.",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_210",
            "Azure Cognitive Search service allowed IPs do not give public access",
            "A different test: Checkov fails only an allowed_ips entry 0.0.0.0/0 and passes a service with no "
            "allowed_ips, its test case default (bridgecrewio/checkov "
            "checkov/terraform/checks/resource/azure/AzureSearchAllowedIPsNotGlobal.py@03d5fdad), which azai fails "
            "as open to all networks unless public access is disabled; azai reports a narrower IP firewall at "
            "medium.",
        ),
    ),
)
def search_service_hardening(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An Azure AI Search service, the retrieval index of most RAG applications, that accepts API
    keys, is reachable from public networks, has no managed identity, or does not enforce
    customer-managed-key encryption.

    ## What fails

    A finding for each of:

    - **High:** API keys accepted: `properties.disableLocalAuth` not `true`. With it unset,
      `properties.authOptions` only chooses between `apiKeyOnly` (keys only, the default) and
      `aadOrApiKey` (keys or Entra tokens); both accept keys, and the API refuses `authOptions`
      once `disableLocalAuth` is `true`.
    - **High:** open to all networks: `properties.publicNetworkAccess` not `Disabled` or
      `SecuredByPerimeter` (compared case-insensitively, since older API versions write
      `enabled`/`disabled`; absent means enabled) and no IP rule in
      `properties.networkRuleSet.ipRules`, or one that admits `0.0.0.0/0`.
    - **Medium:** reachable from the public internet through an IP firewall: public access
      enabled with IP rules that do not admit every address.
    - **Medium:** no managed identity: `identity` absent or `identity.type` `None` (not on the
      `free` tier, which cannot have one: managed identities need Basic or higher).
    - **Medium:** `properties.encryptionWithCmk.enforcement` not `Enabled`, except on the
      `free` tier, where customer-managed keys are not available.

    ## What passes

    Services with local authentication disabled, public access `Disabled` (or
    `SecuredByPerimeter`, where a network security perimeter's access rules decide), a managed
    identity and CMK enforcement. A private endpoint is not required: with public access
    disabled the service is already unreachable from the internet, and Azure Policy has
    deprecated its private-link audit for Search (0fda3595).

    ## Undetermined when

    A deciding setting (`disableLocalAuth`, `publicNetworkAccess`, the IP rules,
    `identity.type`, the CMK enforcement or, for it, the SKU) is unknown before deploy. The
    other settings are still checked and their failures reported.

    ## Options

    - `require_cmk_enforcement` (default true): set false where policy does not require
      customer-managed keys, to drop the CMK finding.

    ## Why

    A search index holds the documents a model grounds its answers in. An admin API key reads
    and rewrites every index, never expires and names no one; an index open to the internet is
    one leaked key away from data theft or poisoned answers. A managed identity lets indexers
    and vectorizers reach storage and Azure OpenAI without stored connection strings, and CMK
    enforcement rejects indexes and synonym maps not encrypted with your key.
    """
    name = f"Search service '{resource.name}'"
    yield from every_gap(
        _local_auth(resource, name),
        _public_access(resource, name),
        _identity(resource, name),
        _cmk(resource, ctx, name),
    )


def _local_auth(resource: Resource, name: str) -> Iterator[Violation]:
    keys_only = isinstance(resource.get("properties.authOptions.apiKeyOnly"), dict)
    how = "accepts only API keys" if keys_only else "accepts API keys"
    yield from require(resource, "properties.disableLocalAuth", True, message=f"{name} {how}")


def _public_access(resource: Resource, name: str) -> Iterator[Violation]:
    path = "properties.publicNetworkAccess"
    access = known(resource.get(path))
    if same_text(access, "Disabled", "SecuredByPerimeter"):
        return
    rules_path = "properties.networkRuleSet.ipRules"
    rules = known_list(resource.get(rules_path), rules_path) or []
    addresses = [known(r.get("value")) if isinstance(r, dict) else r for r in rules]
    if addresses and not any(isinstance(a, str) and a.strip() in _ANY_ADDRESS for a in addresses):
        yield Violation(
            f"{name} accepts public traffic from {len(addresses)} allowed IP range(s)",
            rules_path,
            addresses,
            "publicNetworkAccess Disabled, reached through a private endpoint",
            Severity.MEDIUM,
        )
        return
    yield Violation(
        f"{name} accepts traffic from all networks",
        path,
        access,
        "Disabled",
    )


def _identity(resource: Resource, name: str) -> Iterator[Violation]:
    # A free service cannot have a managed identity (Basic tier or higher), so the gap is not
    # one its owner can close there; AZAI-404 reports the free tier itself.
    if not either(lambda: bool(identity_kinds(resource)), lambda: same_text(known(resource.get("sku.name")), "free")):
        yield Violation(
            f"{name} has no managed identity",
            "identity.type",
            resource.get("identity.type"),
            "SystemAssigned or UserAssigned",
            Severity.MEDIUM,
        )


def _cmk(resource: Resource, ctx: CheckContext, name: str) -> Iterator[Violation]:
    if not ctx.options.get("require_cmk_enforcement", True):
        return
    path = "properties.encryptionWithCmk.enforcement"
    if either(
        lambda: same_text(known(resource.get(path)), "Enabled"),
        lambda: same_text(known(resource.get("sku.name")), "free"),
    ):
        return
    yield from require(
        resource,
        path,
        "Enabled",
        message=f"{name} does not enforce customer-managed-key encryption",
        severity=Severity.MEDIUM,
    )
