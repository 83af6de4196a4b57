"""AZAI-203 gpu-outside-ai."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from checks._common import WAF_AI, gpu_profile, has_tag, judged_if, known_list, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.unknown import UnknownValueError


@rule(
    id="AZAI-203",
    slug="gpu-outside-ai",
    title="GPU capacity is provisioned for a platform without an AI workload marker",
    pillar=Pillar.COST,
    severity=Severity.MEDIUM,
    resource_types=(T.CONTAINER_APP_ENVIRONMENT,),
    reads=(),
    principle=Principle(
        "Use GPU compute only for AI functions; run everything else on cheaper general-purpose compute.",
        WAF_AI + "application-platform",
    ),
    remediation=Remediation(
        terraform='azurerm_container_app_environment: tag it (tags = { workload = "ai" }) when the GPU profile '
        "serves models, or remove the GPU workload_profile.",
        bicep="managedEnvironments: tags: { workload: 'ai' }, or drop the GPU entry from properties.workloadProfiles",
        cli="az containerapp env workload-profile delete -g RG -n ENV --workload-profile-name GPU",
        terraform_code="""\
            resource "azurerm_container_app_environment" "env" {
              # ...
              workload_profile {
                name                  = "gpu"
                workload_profile_type = "Consumption-GPU-NC8as-T4"
              }

              tags = {
                workload = "ai"
              }
            }
        """,
        bicep_code="""\
            resource env 'Microsoft.App/managedEnvironments@2024-03-01' = {
              // ...
              tags: {
                workload: 'ai'
              }
            }
        """,
        cli_code="""\
            az containerapp env workload-profile delete --resource-group RG --name ENV --workload-profile-name gpu
        """,
        guide="https://learn.microsoft.com/azure/container-apps/gpu-serverless-overview",
    ),
    help_uri=rule_page("AZAI-203"),
    options={"marker_tag": "workload", "marker_values": ["ai", "ml", "inference", "training"]},
)
def gpu_outside_ai(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A Container Apps environment with a GPU workload profile that nothing marks as an AI
    workload, so GPU capacity may be paid for general-purpose apps.

    ## What fails

    A `Microsoft.App/managedEnvironments` resource with a `properties.workloadProfiles` entry
    whose `workloadProfileType` is a GPU type (`Consumption-GPU-*` serverless GPUs, or the
    dedicated `NC*` profiles), unless the environment carries the marker tag (option
    `marker_tag`, default `workload`, with a value from `marker_values`, default `ai`, `ml`,
    `inference`, `training`).

    ## What passes

    Environments without GPU profiles, and marked ones.

    ## Undetermined when

    The workload profiles are unknown before deploy, or a profile's type is and no other is
    known to have GPUs; or the environment has GPU profiles and its tags (or the marker tag's
    value) are unknown before deploy. A marked environment passes whatever its profiles.

    ## Related

    A GPU in an orchestration or system role, an AKS **System** pool on a GPU size, is reported
    by AZAI-102. App Service plans offer no GPU tiers, so there is nothing to check there.

    ## Options

    - `marker_tag`, `marker_values`: how an environment is marked as serving AI.

    ## Why

    GPU profiles bill many times a CPU profile. A GPU profile added to a shared environment
    is easily used by apps that never touch a GPU.
    """
    yield from judged_if(
        lambda: not has_tag(resource, ctx, "marker_tag", "marker_values"), _gpu_profiles(resource, ctx)
    )


def _gpu_profiles(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """The environment's GPU profiles, whether or not it is marked: a profile whose type is not
    known matters only when no other is known to have GPUs."""
    profiles = known_list(resource.get("properties.workloadProfiles"), "properties.workloadProfiles")
    gpu: list[Any] = []
    unknown: UnknownValueError | None = None
    for profile in profiles or []:
        try:
            if gpu_profile(profile):
                gpu.append(profile)
        except UnknownValueError as exc:
            unknown = unknown or exc
    if not gpu:
        if unknown is not None:
            raise unknown
        return
    types = ", ".join(str(p.get("workloadProfileType")) for p in gpu)
    yield Violation(
        f"Container Apps environment '{resource.name}' has GPU workload profiles ({types}) and no AI workload marker",
        "properties.workloadProfiles",
        types,
        f"a '{ctx.options.get('marker_tag', 'workload')}' tag naming an AI workload, or no GPU profile",
    )
