"""AZAI-116 connection-key-auth."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checks._common import WAF_AI, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, known

# The `authType` values of a Foundry (Microsoft.CognitiveServices accounts and projects) or AML
# workspace connection, from the ARM template reference's ConnectionPropertiesV2 /
# WorkspaceConnectionPropertiesV2 discriminator, lower-cased. Each of these stores a shared
# secret in the connection: a key (ApiKey, AccountKey, CustomKeys), an access key pair
# (AccessKey), a token (PAT, SAS), a password (UsernamePassword), a client secret
# (ServicePrincipal), or OAuth2's client secret, refresh token, developer token or password.
SECRET_AUTH_TYPES = frozenset(
    {"apikey", "accountkey", "customkeys", "accesskey", "pat", "sas", "usernamepassword", "serviceprincipal", "oauth2"}
)
# Microsoft Entra ID: the caller's token (AAD) or a managed identity, whose credentials are only
# a client id and a resource id. None: no credential at all (a public target); nothing is stored.
# AAD and managed identities authenticate without a stored secret; the 2026-03-01 API adds
# AccountManagedIdentity and ProjectManagedIdentity (go-azure-sdk cognitive/2026-03-01
# accountconnectionresource/constants.go, vendored in azurerm v4.81.0).
IDENTITY_AUTH_TYPES = frozenset({"aad", "managedidentity", "accountmanagedidentity", "projectmanagedidentity"})
NO_AUTH = "none"

_KIND = {
    T.ACCOUNT_CONNECTION.lower(): "Foundry account",
    T.PROJECT_CONNECTION.lower(): "Foundry project",
    T.WORKSPACE_CONNECTION.lower(): "AML workspace",
}


@rule(
    id="AZAI-116",
    slug="connection-key-auth",
    title="Foundry or AML connection authenticates with a stored key or secret",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.ACCOUNT_CONNECTION, T.PROJECT_CONNECTION, T.WORKSPACE_CONNECTION),
    reads=(),
    principle=Principle(
        "Prefer Microsoft Entra identities over keys: connect AI services to their data and models with "
        "managed identities, so that no shared secret is stored, copied or leaked.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform=(
            'azapi_resource of type ".../connections": body.properties.authType = "AAD" (or "ManagedIdentity" '
            "with credentials { clientId, resourceId }) and no key; azurerm: "
            "azurerm_cognitive_account_connection_entra_id (or _account_managed_identity) instead of _api_key, "
            "_account_key or _custom_keys."
        ),
        bicep="connections: properties: { authType: 'AAD', category: ..., target: ... } with no credentials",
        cli=(
            "az ml connection create --file connection.yml, with a connection YAML that has no api_key or "
            "credentials (the hub's managed identity or the user's Entra token is used)"
        ),
        terraform_code="""\
            resource "azapi_resource" "search" {
              type      = "Microsoft.CognitiveServices/accounts/projects/connections@2025-06-01"
              name      = "search"
              parent_id = azapi_resource.project.id
              body = {
                properties = {
                  category = "CognitiveSearch"
                  target   = "https://srch-ai.search.windows.net"
                  authType = "AAD"
                  metadata = {
                    ResourceId = azurerm_search_service.ai.id
                  }
                }
              }
            }
        """,
        bicep_code="""\
            resource search 'Microsoft.CognitiveServices/accounts/projects/connections@2025-06-01' = {
              parent: project
              name: 'search'
              properties: {
                category: 'CognitiveSearch'
                target: 'https://${searchService.name}.search.windows.net'
                authType: 'AAD'
                metadata: {
                  ResourceId: searchService.id
                }
              }
            }
        """,
        cli_code="""\
            az ml connection create --file connection.yml --resource-group RG --workspace-name HUB
        """,
        guide="https://learn.microsoft.com/azure/ai-foundry/how-to/connections-add",
    ),
    help_uri=rule_page("AZAI-116"),
)
def connection_key_auth(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A Foundry or AML connection (to Azure OpenAI, AI Search, storage, or any other target) that
    authenticates with a key or secret stored in the connection instead of a Microsoft Entra
    identity.

    ## What fails

    A `Microsoft.CognitiveServices/accounts/connections`,
    `Microsoft.CognitiveServices/accounts/projects/connections` or
    `Microsoft.MachineLearningServices/workspaces/connections` resource (Foundry account, Foundry
    project, and hub or workspace connections) whose `properties.authType` stores a shared
    secret:

    - `ApiKey`, `AccountKey`, `CustomKeys` (keys), `AccessKey` (an access key id and secret);
    - `PAT`, `SAS` (tokens), `UsernamePassword` (a password);
    - `ServicePrincipal` (a client secret) and `OAuth2` (a client secret, refresh token, developer
      token or password).

    An `authType` this rule does not know (a newer API version's) fails only when the connection
    carries `properties.credentials`. The finding names the connection's category and target (the
    target's query string left out, where a SAS token could ride) and its `authType`, never a
    credential.

    ## What passes

    Connections with `authType` `AAD` (the caller's Entra token) or `ManagedIdentity` (whose
    `credentials` are only a client id and a resource id), and `None` (a target that takes no
    credential, so nothing is stored).

    Foundry projects (`Microsoft.CognitiveServices/accounts/projects`) have no authentication
    property of their own: a project is reached with its account's keys unless the account sets
    `disableLocalAuth` (AZAI-101 and AZAI-108 read the account), and what a project reaches, it
    reaches through its connections, which this rule reads.

    Terraform: azurerm 4.x has one resource type per authentication, and the type sets the
    `authType`: `azurerm_cognitive_account_connection_api_key`, `_account_key` and
    `_custom_keys` fail; `_entra_id` (`AAD`) and `_account_managed_identity` pass. No released
    azurerm has project or AML workspace connections; read them from `azapi_resource`.

    ## Undetermined when

    `authType` is unknown before deploy, or, for an `authType` the rule does not know, whether
    the connection carries credentials.

    ## Why

    A key stored in a connection is a standing credential to the target: every user of the hub
    or project can use it (or read it, for a connection shared to all), it does not expire, it
    is not subject to Conditional Access, and calls made with it are not attributable to a
    person. A key-based connection also stops working when the target disables local
    authentication, which keeps teams from turning keys off.
    """
    auth = known(resource.get("properties.authType"))
    label = str(auth).lower() if isinstance(auth, str) else None
    if label in IDENTITY_AUTH_TYPES or label == NO_AUTH:
        return
    described = _described(resource)
    if label in SECRET_AUTH_TYPES:
        yield Violation(
            f"{described} authenticates with {auth} (a secret stored in the connection)",
            "properties.authType",
            auth,
            "AAD or ManagedIdentity",
        )
        return
    if _has_credentials(known(resource.get("properties.credentials"))):
        yield Violation(
            f"{described} carries credentials in its properties (authType {auth if auth else 'absent'})",
            "properties.credentials",
            "(credentials withheld)",
            "AAD or ManagedIdentity, without stored credentials",
        )


def _described(connection: Resource) -> str:
    """The connection named by kind, name, category and target: enough to find it, and nothing
    that could be a secret (a target's query string may hold a SAS token, so it is dropped)."""
    kind = _KIND.get(connection.type_key, "AI")
    text = f"{kind} connection '{connection.name}'"
    category = connection.get("properties.category")
    target = connection.get("properties.target")
    if isinstance(category, str) and category:
        text += f" ({category}"
        text += f" to {_without_query(target)})" if isinstance(target, str) and target else ")"
    elif isinstance(target, str) and target:
        text += f" (to {_without_query(target)})"
    return text


def _without_query(target: str) -> str:
    """The target without what can carry a secret: a query (a SAS token) or a fragment, and the
    user information of a URL (``https://user:token@host``)."""
    bare = target.split("?", 1)[0].split("#", 1)[0]
    scheme, separator, rest = bare.partition("://")
    if separator and "@" in rest.split("/", 1)[0]:
        host_and_path = rest.split("@", 1)[1]
        return f"{scheme}://{host_and_path}"
    return bare


def _has_credentials(value: Any) -> bool:
    """Whether ``credentials`` holds anything; an unknown member is a credential not yet known,
    which cannot be told from none."""
    if isinstance(value, Unknown):
        known(value)
    if isinstance(value, dict):
        return any(v is not None for v in value.values())
    return value is not None and value != ""
