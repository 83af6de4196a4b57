"""AZAI-301 cross-region."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checks._common import (
    CONNECTION_TYPES,
    WAF_AI,
    comparable_region,
    compute_region,
    rule_page,
    same_text,
    serving_accounts,
)
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, UnknownValueError, known


@rule(
    id="AZAI-301",
    slug="cross-region",
    title="AI data and compute are in different regions",
    pillar=Pillar.PERFORMANCE,
    severity=Severity.MEDIUM,
    resource_types=(T.WORKSPACE, T.COMPUTE, T.SEARCH_SERVICE),
    reads=(T.STORAGE_ACCOUNT, T.MANAGED_CLUSTER, T.COGNITIVE_ACCOUNT, T.AI_PROJECT, *CONNECTION_TYPES),
    principle=Principle(
        "Deploy related resources in the same region, so that data and compute reside together.",
        WAF_AI + "design-principles#performance-efficiency",
    ),
    remediation=Remediation(
        terraform=(
            "Give azurerm_machine_learning_workspace, its storage account and its compute the same location "
            "(one var.location), or point the workspace at a storage account in its own region."
        ),
        bicep="Use one location parameter for the workspace, its storage account and computeLocation of every compute.",
        cli="Recreate the compute in the workspace's storage region: az ml compute create --location REGION ...",
        terraform_code="""\
            resource "azurerm_storage_account" "ml" {
              # ...
              location = var.location
            }

            resource "azurerm_machine_learning_workspace" "ws" {
              # ...
              location           = var.location
              storage_account_id = azurerm_storage_account.ml.id
            }

            resource "azurerm_machine_learning_compute_cluster" "train" {
              # ...
              location = var.location
            }
        """,
        bicep_code="""\
            param location string = resourceGroup().location

            resource train 'Microsoft.MachineLearningServices/workspaces/computes@2024-04-01' = {
              parent: workspace
              name: 'train'
              location: location
              properties: {
                computeType: 'AmlCompute'
                computeLocation: location
              }
            }
        """,
        cli_code="""\
            az ml compute create --name train --type AmlCompute --size Standard_NC24ads_A100_v4 \\
              --resource-group RG --workspace-name WS --location REGION
        """,
        guide=WAF_AI + "design-principles#performance-efficiency",
    ),
    help_uri=rule_page("AZAI-301"),
)
def cross_region(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML workspace whose data (its default storage account) is in another region than the
    workspace itself or than the compute that processes it, and an AI Search index in another
    region than the model account it grounds.

    ## What fails

    - A workspace whose `properties.storageAccount` is in a different region from the workspace.
      A workspace of kind `Project` keeps its data in its hub's storage account: the hub named by
      `properties.hubResourceId`.
    - A workspace compute in a different region from the workspace's storage account:
      `properties.computeLocation` for AmlCompute and ComputeInstance (else the compute's
      `location`, else the workspace's region, as for azurerm v4 compute instances), and the
      AKS cluster's region for an attached Kubernetes or AKS compute.

    - An AI Search service in a different region from an AI services account whose models it
      serves. Serving is only what a connection states: a connection of the account, or of one of
      its Foundry projects, naming the Search service by `properties.metadata.ResourceId` or by its
      endpoint `https://NAME.search.windows.net` in `properties.target`; or a workspace (hub) with
      such a connection and one naming the account by `properties.metadata.ResourceId`.

    Regions compare normalized (`East US` equals `eastus`).

    ## What passes

    A workspace, its storage and its computes all in one region; a Search service in the region
    of every account it serves, or connected to none. In a template, two resources both placed in
    `resourceGroup().location` are in one region even though it is not named.

    ## Undetermined when

    The storage account id (or a project's hub id) is unknown, the storage account, hub,
    attached cluster or a compute's workspace is not among the scanned resources, or a region
    that decides is an expression that cannot be evaluated. For a Search service that no
    account is known to be in another region from: a connection to it belongs to a project or
    workspace that is not among the scanned resources, a hub's connection to an account names
    one that is not among them or is not known before deploy, its own region or a served
    account's cannot be evaluated, or a connection whose service is not known before deploy
    (it may be this one) belongs to an account in another region. A Search service nothing
    connects to passes whatever its region.

    ## Why

    Training and batch inference read the workspace's data continuously. Across regions every
    read pays inter-region latency and egress charges, and data may leave the region it is
    meant to stay in. Retrieval-augmented generation sends every query's search results to the
    model as its prompt: a Search index in another region than the model adds a cross-region hop
    to each answer and takes the indexed data out of its region.
    """
    if resource.type_key == T.SEARCH_SERVICE.lower():
        yield from _search_region(resource, ctx)
        return
    if resource.type_key == T.WORKSPACE.lower():
        storage = _storage(resource, ctx)
        workspace_region = comparable_region(resource.location)
        storage_region = comparable_region(storage.location)
        if workspace_region is not None and storage_region is not None and not _same(workspace_region, storage_region):
            yield Violation(
                f"Workspace '{resource.name}' is in {workspace_region} but its storage account "
                f"'{storage.name}' is in {storage_region}",
                "properties.storageAccount",
                storage_region,
                str(workspace_region),
            )
        return
    workspace = ctx.inventory.parent(resource)
    if workspace is None:
        known(Unknown("the compute's workspace is not among the scanned resources"))
        return
    region, path = _compute_region(resource, ctx)
    storage = _storage(workspace, ctx)
    storage_region = comparable_region(storage.location)
    if region is not None and storage_region is not None and not _same(region, storage_region):
        yield Violation(
            f"Compute '{resource.name}' runs in {region} but workspace '{workspace.name}' keeps its data "
            f"(storage account '{storage.name}') in {storage_region}",
            path,
            region,
            str(storage_region),
        )


def _search_region(search: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A Search service against the accounts it serves: one finding naming every account in another
    region (its evidence is the service's own location, so two accounts make one finding, and
    nothing unknown can change it once it is made).

    Its region is asked only when some account may be served: a service nothing connects to
    passes. An account it may serve (through a connection whose service is not known before
    deploy) leaves it undetermined only if that account is, or may be, in another region.
    """
    accounts, maybe, unknown = serving_accounts(search, ctx)
    if not accounts and not maybe:
        known(unknown)
        return
    region = comparable_region(search.location)
    elsewhere, doubt = _accounts_elsewhere(region, [*((a, None) for a in accounts), *maybe])
    if elsewhere:
        names = ", ".join(f"'{a.name}' in {where}" for a, where in elsewhere)
        yield Violation(
            f"AI Search '{search.name}' is in {region} but grounds the models of account {names}",
            "location",
            region,
            str(elsewhere[0][1]),
        )
    else:
        known(unknown if unknown is not None else doubt)


def _accounts_elsewhere(
    region: Any, candidates: list[tuple[Resource, Unknown | None]]
) -> tuple[list[tuple[Resource, Any]], Unknown | None]:
    """The accounts, each with its region, known to be in another region than ``region``; and the
    first reason another may be: its region cannot be compared, or it is in another region but
    only may be served (the candidate's doubt)."""
    elsewhere: list[tuple[Resource, Any]] = []
    doubts: list[Unknown] = []
    for account, doubt in candidates:
        try:
            other = comparable_region(account.location)
            if region is None or other is None or _same(region, other):
                continue
        except UnknownValueError as exc:
            doubts.append(exc.value)
            continue
        if doubt is None:
            elsewhere.append((account, other))
        else:
            doubts.append(doubt)
    return elsewhere, doubts[0] if doubts else None


def _storage(workspace: Resource, ctx: CheckContext) -> Resource:
    """The storage account that holds the workspace's data (a project's is its hub's)."""
    found = known(ctx.inventory.workspace_dependency(workspace, "properties.storageAccount", "storage account"))
    if found is None:
        known(Unknown(f"workspace '{workspace.name}' declares no storage account", path="properties.storageAccount"))
    assert isinstance(found, Resource)
    return found


def _compute_region(compute: Resource, ctx: CheckContext) -> tuple[Any, str]:
    """Where a compute runs, and the property that decides it.

    AmlCompute and ComputeInstance run in ``computeLocation``, else in their own ``location``
    (their workspace's region). The evidence path is ``properties.computeLocation`` in every
    case, so the finding keeps one fingerprint whichever form declared the region.
    """
    compute_type = known(compute.get("properties.computeType"))
    if same_text(compute_type, "Kubernetes", "AKS"):
        cluster = known(ctx.inventory.attached_cluster(compute))
        if cluster is None:
            known(Unknown("the attached cluster is not among the scanned resources", path="properties.resourceId"))
        assert cluster is not None
        return comparable_region(cluster.location), "properties.resourceId"
    return comparable_region(compute_region(compute, ctx)), "properties.computeLocation"


def _same(a: Any, b: Any) -> bool:
    return bool(a == b)
