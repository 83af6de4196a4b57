"""AZAI-111 workspace-storage-access."""

from __future__ import annotations

import functools
from collections.abc import Iterator

from checks._common import (
    AZURE_POLICY,
    CHECKOV,
    PSRULE,
    WAF_AI,
    either,
    every_gap,
    is_project,
    is_public,
    rule_page,
    same_text,
    workspace_users,
)
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.engine.setting_checks import forbid, require
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import known


@rule(
    id="AZAI-111",
    slug="workspace-storage-access",
    title="A workspace's storage account allows anonymous blob access or shared keys",
    pillar=Pillar.SECURITY,
    severity=Severity.HIGH,
    resource_types=(T.STORAGE_ACCOUNT, T.WORKSPACE),
    reads=(),
    principle=Principle(
        "Protect training data: no anonymous access, and Microsoft Entra identities instead of shared keys.",
        WAF_AI + "design-principles#security",
    ),
    remediation=Remediation(
        terraform=(
            "azurerm_storage_account: allow_nested_items_to_be_public = false, shared_access_key_enabled = false; "
            "public_network_access_enabled = false for HBI workspaces. azurerm cannot set the workspace's "
            "systemDatastoresAuthMode: add an azapi_update_resource with body { properties = { "
            'systemDatastoresAuthMode = "identity" } }.'
        ),
        bicep="properties: { allowBlobPublicAccess: false, allowSharedKeyAccess: false } and the workspace's "
        "systemDatastoresAuthMode: 'identity'",
        cli="az storage account update -n ST -g RG --allow-blob-public-access false --allow-shared-key-access false",
        terraform_code="""\
            resource "azurerm_storage_account" "ml" {
              # ...
              allow_nested_items_to_be_public = false
              shared_access_key_enabled       = false
            }

            resource "azurerm_machine_learning_workspace" "ws" {
              # ...
              storage_account_id = azurerm_storage_account.ml.id
            }

            # azurerm has no argument for it: patch the workspace with azapi.
            resource "azapi_update_resource" "ws_datastores" {
              type        = "Microsoft.MachineLearningServices/workspaces@2024-04-01"
              resource_id = azurerm_machine_learning_workspace.ws.id
              body = {
                properties = {
                  systemDatastoresAuthMode = "identity"
                }
              }
            }
        """,
        bicep_code="""\
            resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' = {
              // ...
              properties: {
                allowBlobPublicAccess: false
                allowSharedKeyAccess: false
              }
            }

            resource workspace 'Microsoft.MachineLearningServices/workspaces@2024-04-01' = {
              // ...
              properties: {
                storageAccount: storage.id
                systemDatastoresAuthMode: 'identity'
              }
            }
        """,
        cli_code="""\
            az storage account update --name ST --resource-group RG \\
              --allow-blob-public-access false --allow-shared-key-access false
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/how-to-disable-local-auth-storage",
    ),
    help_uri=rule_page("AZAI-111"),
    peers=(
        PeerRule(
            CHECKOV,
            "CKV2_AZURE_50",
            "Storage of a high-business-impact ML workspace disables public network access",
            "Agrees on substance: the storage of a high-business-impact workspace fails unless public network access "
            "is off, absent included (bridgecrewio/checkov "
            "checkov/terraform/checks/graph_checks/azure/AzureMLWorkspaceHBIPublicNetwork.yaml@03d5fdad). azai "
            "judges only the storage account a workspace names in properties.storageAccount, when hbiWorkspace is "
            "true; Checkov (Terraform only) judges the same pair but reports the workspace, passing it only with "
            "high_business_impact false or private storage.",
        ),
        PeerRule(
            CHECKOV,
            "CKV_AZURE_190",
            "Storage blobs restrict public access",
            "Disagrees on an absent value: Checkov fails an absent allow_nested_items_to_be_public "
            "(bridgecrewio/checkov "
            "checkov/terraform/checks/resource/azure/StorageBlobRestrictPublicAccess.py@03d5fdad), azai passes an "
            "absent allowBlobPublicAccess, as Azure has defaulted it to false since 2023. azai judges only the "
            "storage account a workspace names in properties.storageAccount; Checkov every storage account.",
        ),
        PeerRule(
            CHECKOV,
            "CKV2_AZURE_47",
            "Storage account without blob anonymous access",
            "Disagrees on an absent value: Checkov fails an absent allow_nested_items_to_be_public, its test case "
            "fail_1 (bridgecrewio/checkov checkov/terraform/checks/graph_checks/azure/"
            "AzureStorageAccConfigWithoutBlobAnonymousAccess.yaml@03d5fdad), azai passes an absent "
            "allowBlobPublicAccess. azai judges only the storage account a workspace names in "
            "properties.storageAccount; Checkov every storage account.",
        ),
        PeerRule(
            PSRULE,
            "Azure.Storage.BlobPublicAccess",
            "Storage accounts disallow anonymous blob access (AZR-000198)",
            "Disagrees on an absent value: PSRule fails an absent allowBlobPublicAccess, as it must equal false "
            "(Azure/PSRule.Rules.Azure src/PSRule.Rules.Azure/rules/Azure.Storage.Rule.yaml@368654db), while azai "
            "passes it, as Azure has defaulted it to false since 2023. azai judges only the storage account a "
            "workspace names in properties.storageAccount; PSRule every storage account but FileStorage.",
        ),
        PeerRule(
            AZURE_POLICY,
            "4fa4b6c0-31ca-4c0d-b10d-24b96f62a751",
            "Storage account public access should be disallowed",
            "Disagrees on an absent value: the policy flags every allowBlobPublicAccess that is not false, absent "
            "included (Azure/azure-policy built-in-policies/policyDefinitions/Storage/"
            "ASC_Storage_DisallowPublicBlobAccess_Audit.json@f4a50bac), azai passes an absent one. azai judges only "
            "the storage account a workspace names in properties.storageAccount; the policy every storage account.",
        ),
        PeerRule(
            CHECKOV,
            "CKV2_AZURE_40",
            "Storage account not configured with Shared Key authorization",
            "Agrees on substance: shared keys fail unless explicitly off, absent included (bridgecrewio/checkov "
            "checkov/terraform/checks/graph_checks/azure/AzureStorageAccConfigSharedKeyAuth.yaml@03d5fdad). azai "
            "judges only the storage account a workspace names in properties.storageAccount; Checkov every storage "
            "account.",
        ),
        PeerRule(
            AZURE_POLICY,
            "8c6a50c6-9ffd-4ae7-986f-5fa6111f9a54",
            "Storage accounts should prevent shared key access",
            "Agrees on substance: allowSharedKeyAccess absent, empty or true fails (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Storage/StorageAccountAllowSharedKeyAccess_Audit.json@f4a50bac). "
            "azai judges only the storage account a workspace names in properties.storageAccount; the policy every "
            "storage account.",
        ),
    ),
)
def workspace_storage_access(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """The default storage account of an AML workspace, which holds its training data, models and
    logs, allows anonymous blob reads or shared-key access.

    ## What fails

    A storage account that a workspace names in `properties.storageAccount`, with any of these
    (each its own finding):

    - `properties.allowBlobPublicAccess` `true` (**high**); absent passes, as Azure has defaulted
      it to false for new accounts since 2023;
    - `properties.allowSharedKeyAccess` not `false` (**medium**; absent means shared keys are
      accepted);
    - for a high-business-impact workspace (`hbiWorkspace` true), `publicNetworkAccess` not
      `Disabled` (**high**; Checkov CKV2_AZURE_50).

    And a workspace whose system datastores reach its storage with the account key (**medium**),
    so the storage cannot turn shared keys off without breaking the workspace:

    - `properties.systemDatastoresAuthMode` `accessKey`, on a workspace of any kind but
      `Project` (`Default`, `Hub`, `FeatureStore`);
    - `systemDatastoresAuthMode` absent on a `Default` workspace (an absent `kind` is `Default`)
      or a `Hub`: absent is `accessKey`, the service's default. "An Azure Machine Learning
      workspace defaults to use of a shared key to access its default Azure Storage account"
      ([Learn](https://learn.microsoft.com/azure/machine-learning/how-to-disable-local-auth-storage)),
      and "an Azure AI Foundry hub defaults to using a shared key to access its default Azure
      Storage account"
      ([Learn](https://learn.microsoft.com/azure/ai-foundry/how-to/disable-local-auth), as of
      2025-10-01). Microsoft documents no default for a `FeatureStore`, so an absent mode there
      is not reported.

    azurerm's `azurerm_machine_learning_workspace` and `azurerm_ai_foundry` have no argument for
    the property, so a workspace written with them fails unless an `azapi_update_resource`
    sets `systemDatastoresAuthMode = "identity"` on it (the remediation shows one).
    `UserDelegationSAS` passes: a user delegation SAS is signed with Microsoft Entra
    credentials, not the account key, and keeps working with shared keys off. A `Project`
    workspace uses its hub's storage and datastores, so its hub is the one judged.

    ## What passes

    Workspace storage with blob public access off and shared keys disabled, workspaces with
    `systemDatastoresAuthMode` `identity` or `UserDelegationSAS`, `Project` workspaces, and
    storage accounts no workspace uses.

    ## Undetermined when

    A deciding property is unknown before deploy: for a workspace, the auth mode, or its `kind`
    when the mode would fail. The other settings are still checked and their failures reported.

    The rule also looks at each workspace, so that it never passes a storage account it could
    not see: a workspace whose storage account id is unknown before deploy, or names an account
    that is not among the scanned resources, is undetermined (a `Project` workspace answers with
    its hub's storage, through `properties.hubResourceId`).

    ## Why

    Anyone with the account key, or no credential at all for public containers, can read or
    poison the data the models learn from; a workspace that reaches its storage with the key
    keeps that key in use.
    """
    if resource.type_key == T.WORKSPACE.lower():
        yield from every_gap(_datastore_keys(resource), _storage_seen(resource, ctx))
        return
    workspaces = workspace_users(resource, ctx, "properties.storageAccount")
    if not workspaces:
        return
    names = ", ".join(f"'{w.name}'" for w in workspaces)
    yield from every_gap(
        _anonymous_blobs(resource, names),
        _shared_keys(resource, names),
        _public_hbi_storage(resource, workspaces, names),
    )


AUTH_MODE = "properties.systemDatastoresAuthMode"
# The kinds whose system datastores use the account key when the mode is absent, as Microsoft
# documents it (the rule's page cites where).
KEY_BY_DEFAULT = ("Default", "Hub")


def _anonymous_blobs(storage: Resource, names: str) -> Iterator[Violation]:
    return forbid(
        storage,
        "properties.allowBlobPublicAccess",
        True,
        message=f"Storage account '{storage.name}' of workspace {names} allows anonymous blob access",
        expected="false",
    )


def _shared_keys(storage: Resource, names: str) -> Iterator[Violation]:
    return require(
        storage,
        "properties.allowSharedKeyAccess",
        False,
        message=f"Storage account '{storage.name}' of workspace {names} accepts shared-key access",
        severity=Severity.MEDIUM,
    )


def _public_hbi_storage(storage: Resource, workspaces: list[Resource], names: str) -> Iterator[Violation]:
    """Public storage of a high-business-impact workspace: private storage passes whatever the
    workspaces' flags, and storage no such workspace uses passes whatever its network access."""
    hbi = [functools.partial(_high_business_impact, w) for w in workspaces]
    if either(lambda: not known(is_public(storage)), lambda: not either(*hbi)):
        return
    yield Violation(
        f"Storage account '{storage.name}' of high-business-impact workspace {names} allows public network access",
        "properties.publicNetworkAccess",
        storage.get("properties.publicNetworkAccess"),
        "Disabled",
    )


def _high_business_impact(workspace: Resource) -> bool:
    return known(workspace.get("properties.hbiWorkspace")) is True


def _storage_seen(workspace: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """Nothing to report, but undetermined when the workspace's storage account cannot be seen."""
    known(ctx.inventory.workspace_dependency(workspace, "properties.storageAccount", "storage account"))
    yield from ()


def _datastore_keys(workspace: Resource) -> Iterator[Violation]:
    """The workspace reaches its storage with the account key. A project (its hub is judged) and a
    mode that does not use the key each settle it alone, so neither is asked when the other
    already passes the workspace."""
    if either(lambda: is_project(workspace), lambda: not _uses_account_key(workspace)):
        return
    mode = workspace.get(AUTH_MODE)
    shown = mode if mode is not None else "absent, which means accessKey"
    yield Violation(
        f"Workspace '{workspace.name}' reaches its default storage with shared keys "
        f"(systemDatastoresAuthMode is {shown})",
        AUTH_MODE,
        mode,
        "identity",
        Severity.MEDIUM,
    )


def _uses_account_key(workspace: Resource) -> bool:
    """``accessKey``, or no mode on a kind whose documented default is ``accessKey`` (an absent
    kind is ``Default``)."""
    mode = known(workspace.get(AUTH_MODE))
    if mode is not None:
        return same_text(mode, "accessKey")
    return same_text(known(workspace.body.get("kind")) or "Default", *KEY_BY_DEFAULT)
