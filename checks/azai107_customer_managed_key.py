"""AZAI-107 customer-managed-key."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import (
    AZURE_POLICY,
    CHECKOV,
    WAF_AI,
    either,
    every_gap,
    is_project,
    judged_if,
    known_list,
    rule_page,
    same_text,
)
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known


@rule(
    id="AZAI-107",
    slug="customer-managed-key",
    title="AI data is not encrypted with a customer-managed key where one is required",
    pillar=Pillar.SECURITY,
    severity=Severity.MEDIUM,
    resource_types=(T.WORKSPACE, T.COGNITIVE_ACCOUNT),
    reads=(),
    principle=Principle(
        "Encrypt AI data at rest, with keys you control where your data classification requires it.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform=(
            "azurerm_machine_learning_workspace: encryption { key_vault_id = ..., key_id = ... }; "
            "azurerm_cognitive_account: customer_managed_key { key_vault_key_id = ... }; with the option "
            "owned_storage, also storage { storage_account_id = ... }"
        ),
        bicep=(
            "workspace: properties: { encryption: { status: 'Enabled', keyVaultProperties: {...} } }; "
            "account: properties: { encryption: { keySource: 'Microsoft.KeyVault', keyVaultProperties: {...} } }; "
            "with the option owned_storage, also userOwnedStorage: [{ resourceId: storage.id }]"
        ),
        cli="az ml workspace create ... --customer-managed-key KEY_URI (workspace encryption is set at creation)",
        terraform_code="""\
            resource "azurerm_machine_learning_workspace" "ws" {
              # ...
              encryption {
                key_vault_id              = azurerm_key_vault.kv.id
                key_id                    = azurerm_key_vault_key.cmk.id
                user_assigned_identity_id = azurerm_user_assigned_identity.ai.id
              }
            }

            resource "azurerm_cognitive_account" "openai" {
              # ...
              customer_managed_key {
                key_vault_key_id   = azurerm_key_vault_key.cmk.id
                identity_client_id = azurerm_user_assigned_identity.ai.client_id
              }
            }
        """,
        bicep_code="""\
            resource openai 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
              // ...
              properties: {
                encryption: {
                  keySource: 'Microsoft.KeyVault'
                  keyVaultProperties: {
                    keyVaultUri: vault.properties.vaultUri
                    keyName: 'cmk'
                    identityClientId: uami.properties.clientId
                  }
                }
              }
            }
        """,
        cli_code="""\
            az ml workspace create --name WS --resource-group RG \\
              --customer-managed-key https://KV.vault.azure.net/keys/cmk/VERSION
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/concept-customer-managed-keys",
    ),
    help_uri=rule_page("AZAI-107"),
    options={"required": False, "owned_storage": False},
    peers=(
        PeerRule(
            AZURE_POLICY,
            "ba769a63-b8cc-4b2d-abf6-ac33c7204be8",
            "Azure Machine Learning workspaces should be encrypted with a customer-managed key",
            "Agrees on the test: encryption.status not Enabled fails, projects excluded (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Machine Learning/Workspace_CMKEnabled_Audit.json@f4a50bac). The "
            "policy audits every workspace; azai only high-business-impact ones, or all with the option required.",
        ),
        PeerRule(
            AZURE_POLICY,
            "7f40cee6-e933-4d0f-a782-b96615e0f4a6",
            "Azure Machine Learning workspaces should be encrypted with the use of a customer-managed key",
            "Agrees on the test: encryption.status must be Enabled, projects excluded (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Machine Learning/Workspace_CMKEnabled_Audit_V2.json@f4a50bac). The "
            "policy audits every workspace; azai only high-business-impact ones, or all with the option required.",
        ),
        PeerRule(
            AZURE_POLICY,
            "67121cc7-ff39-4ab8-b7e3-95b84dab487d",
            "Azure AI Services resources should encrypt data at rest with a customer-managed key (CMK)",
            "With the option required, agrees on the test (keySource not Microsoft.KeyVault fails), but the policy's "
            "default excludedKinds skips 16 kinds, AIServices, CognitiveServices and ContentSafety among them "
            "(Azure/azure-policy built-in-policies/policyDefinitions/Cognitive "
            "Services/CustomerManagedKey_Audit.json@f4a50bac); azai judges every kind.",
        ),
        PeerRule(
            AZURE_POLICY,
            "46aa9b05-0e60-4eae-a88b-1e9d374fa515",
            "Cognitive Services accounts should use customer owned storage",
            "With the option owned_storage, the same test: an account reporting the CustomerManagedStorage "
            "capability with no userOwnedStorage entry (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Cognitive Services/UserOwnedStorage_Audit.json@f4a50bac). Before "
            "deploy, where capabilities are not known, azai decides by kind (SpeechServices, TextAnalytics, "
            "AIServices).",
        ),
        PeerRule(
            CHECKOV,
            "CKV2_AZURE_22",
            "Cognitive Services enables customer-managed key for encryption",
            "With the option required. Checkov (Terraform only) passes an account only when an "
            "azurerm_cognitive_account_customer_managed_key resource connects it to a key (bridgecrewio/checkov "
            "checkov/terraform/checks/graph_checks/azure/CognitiveServicesCustomerManagedKey.yaml@03d5fdad), while "
            "azai reads encryption.keySource, which azurerm sets from the account's customer_managed_key block or "
            "from that resource (merged into its account), so azai passes both, and Checkov fails an account keyed "
            "by its own block.",
        ),
    ),
)
def customer_managed_key(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AI workspace or account holding data whose classification requires a customer-managed
    key, encrypted with Microsoft-managed keys only.

    ## What fails

    When a customer-managed key is required and absent:

    - A workspace without `properties.encryption.status` `Enabled`.
    - A Cognitive Services / Azure OpenAI account whose `properties.encryption.keySource` is
      not `Microsoft.KeyVault`.

    A key is required for **high-business-impact** workspaces (`properties.hbiWorkspace` true),
    which declare that they hold sensitive data, and for every workspace and account when the
    option `required` is set.

    With the option `owned_storage` set, also an account that can keep its data in customer-owned
    storage but whose `properties.userOwnedStorage` is absent or empty: its data is kept in
    storage Microsoft manages, not in a storage account of the customer's (Azure Policy
    46aa9b05). An account can when it reports the capability `CustomerManagedStorage` (live and
    what-if: `properties.capabilities`, which Azure Policy 46aa9b05 2.0.0 tests); before deploy,
    when its kind is one Microsoft documents the binding for, Speech (`SpeechServices`),
    Language (`TextAnalytics`) or a Foundry resource (`AIServices`): "a resource-level binding
    used only by Speech and Language"
    (learn.microsoft.com/azure/foundry/how-to/bring-your-own-azure-storage-foundry).

    ## What passes

    Resources with a customer-managed key, resources for which none is required, and AI Foundry
    projects (`kind` `Project`), whose data the hub's key encrypts (Azure Policies ba769a63 and
    7f40cee6 also leave them out). Accounts pass whatever their `userOwnedStorage` unless the
    option `owned_storage` is set, and with it accounts that cannot use customer-owned storage
    (OpenAI, Vision, Content Safety...) pass.

    ## Undetermined when

    The encryption settings are unknown before deploy, or the HBI flag is and the workspace has
    no customer-managed key; the workspace's `kind` is unknown and it fails; with the option
    `owned_storage` set, also an account's `userOwnedStorage`.

    ## Options

    - `required` (default false): require a customer-managed key everywhere, for organisations
      whose policy demands it.
    - `owned_storage` (default false): require every Cognitive Services account that can to keep
      its data in a customer-owned storage account (`properties.userOwnedStorage`), as Azure
      Policy 46aa9b05 does.

    ## Why

    Customer-managed keys let you revoke access to training data, prompts and fine-tuned
    models, and prove key custody to auditors. Workspace encryption can only be set when the
    workspace is created, so this must be right before deploy.
    """
    required = bool(ctx.options.get("required", False))
    owned_storage = bool(ctx.options.get("owned_storage", False))
    if resource.type_key == T.WORKSPACE.lower():
        yield from judged_if(lambda: not is_project(resource), _workspace_key(resource, required))
        return
    checks = [_account_key(resource)] if required else []
    if owned_storage:
        checks.append(_owned_storage(resource))
    yield from every_gap(*checks)


def _workspace_key(workspace: Resource, required: bool) -> Iterator[Violation]:
    """A workspace without a customer-managed key where one is needed. Either answer settles it: a
    workspace with a key passes whether or not it is high-business-impact, and one that needs
    none passes whatever its encryption."""
    if either(
        lambda: same_text(known(workspace.get("properties.encryption.status", "")), "Enabled"),
        lambda: not required and known(workspace.get("properties.hbiWorkspace")) is not True,
    ):
        return
    hbi = workspace.get("properties.hbiWorkspace") is True
    reason = "a high-business-impact workspace" if hbi else "required by configuration"
    yield Violation(
        f"Workspace '{workspace.name}' has no customer-managed key ({reason})",
        "properties.encryption.status",
        workspace.get("properties.encryption.status"),
        "Enabled, with keyVaultProperties",
    )


def _account_key(account: Resource) -> Iterator[Violation]:
    if not same_text(known(account.get("properties.encryption.keySource", "")), "Microsoft.KeyVault"):
        yield Violation(
            f"Account '{account.name}' has no customer-managed key (required by configuration)",
            "properties.encryption.keySource",
            account.get("properties.encryption.keySource"),
            "Microsoft.KeyVault",
        )


# The kinds Microsoft documents the userOwnedStorage binding for, when an account does not yet
# report its capabilities (before deploy): Speech, Language, and Foundry resources that host them.
OWNED_STORAGE_KINDS = ("SpeechServices", "TextAnalytics", "AIServices")


def _can_own_storage(account: Resource) -> bool:
    """Whether the account can bind customer-owned storage: its reported capabilities, as Azure
    Policy 46aa9b05 2.0.0 tests them, or, before deploy, its kind."""
    capabilities = account.get("properties.capabilities")
    if isinstance(capabilities, list):
        return any(isinstance(c, dict) and same_text(c.get("name", ""), "CustomerManagedStorage") for c in capabilities)
    return same_text(known(account.body.get("kind", "")), *OWNED_STORAGE_KINDS)


def _owned_storage(account: Resource) -> Iterator[Violation]:
    """Azure Policy 46aa9b05: at least one ``userOwnedStorage`` entry where the account can have one."""
    if not _can_own_storage(account):
        return
    if not known_list(account.get("properties.userOwnedStorage"), "properties.userOwnedStorage"):
        yield Violation(
            f"Account '{account.name}' does not keep its data in customer-owned storage (required by configuration)",
            "properties.userOwnedStorage",
            account.get("properties.userOwnedStorage"),
            "a customer-owned storage account",
        )
