"""AZAI-208 always-on-serverless-gpu."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import WAF_AI, either, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.containerapps import MIN_REPLICAS, environment, min_replicas, serverless_gpu_profile
from scanner.model.needs import LiveRead
from scanner.model.pricing import HOURS_PER_MONTH, SERVERLESS_GPU
from scanner.model.resources import Resource

GPU_GUIDE = "https://learn.microsoft.com/azure/container-apps/gpu-serverless-overview"


@rule(
    id="AZAI-208",
    slug="always-on-serverless-gpu",
    title="A serverless GPU container app never scales to zero",
    pillar=Pillar.COST,
    severity=Severity.MEDIUM,
    resource_types=(T.CONTAINER_APP,),
    reads=(T.CONTAINER_APP_ENVIRONMENT, LiveRead.METRICS),  # the profile's type; replicas and requests
    principle=Principle(
        "Prefer platforms that can be stopped when not in use; serverless GPUs bill per second while a "
        "replica runs, so an app held at one replica pays for an idle GPU around the clock.",
        WAF_AI + "design-principles#cost-optimization",
    ),
    remediation=Remediation(
        terraform="azurerm_container_app: template { min_replicas = 0 } with an HTTP or queue scale rule",
        bicep="containerApps: properties.template.scale.minReplicas: 0",
        cli="az containerapp update -g RG -n APP --min-replicas 0",
        terraform_code="""\
            resource "azurerm_container_app" "llm" {
              # ...
              workload_profile_name = "gpu"
              template {
                min_replicas = 0 # scale to zero between requests
                max_replicas = 1
                # ...
              }
            }
        """,
        bicep_code="""\
            resource llm 'Microsoft.App/containerApps@2024-03-01' = {
              // ...
              properties: {
                workloadProfileName: 'gpu'
                template: {
                  scale: {
                    minReplicas: 0 // scale to zero between requests
                    maxReplicas: 1
                  }
                }
              }
            }
        """,
        cli_code="""\
            az containerapp update --resource-group RG --name APP --min-replicas 0
        """,
        guide=GPU_GUIDE,
    ),
    help_uri=rule_page("AZAI-208"),
    recurring_cost=True,
)
def always_on_serverless_gpu(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A Container App on a serverless GPU workload profile that keeps at least one replica
    running, so its GPU is billed every second whether requests arrive or not.

    ## What fails

    A `Microsoft.App/containerApps` app whose `properties.workloadProfileName` names a profile
    of its environment (`properties.workloadProfiles`) with a serverless GPU
    `workloadProfileType` (`Consumption-GPU-NC24-A100`, `Consumption-GPU-NC8as-T4`, any
    `Consumption-GPU-*`), and whose `properties.template.scale.minReplicas` is 1 or more.

    A live scan also reads the app's `Requests` and `Replicas` metrics over 7 days; the finding
    says when the app took no requests at all in that window, which makes the always-on GPU pure
    waste.

    ## What passes

    Apps at `minReplicas` 0 or unset (the service scales them to zero), and apps on the
    Consumption profile or on a dedicated profile (`NC24-A100` and the like), which bills per
    node whatever the replicas do. AZAI-203 judges the environment's GPU profiles themselves.

    ## Undetermined when

    `minReplicas` is unknown before deploy and the app runs on a serverless GPU profile (or may);
    or the app keeps replicas and names a profile but its environment is not in the scanned
    estate (or has no profile of that name), so the profile's type cannot be read. An app with
    no replica kept, or on a profile known not to be a serverless GPU, passes whatever the other.

    ## Waste estimate

    `minReplicas` x 730 hours x the hourly price of one serverless GPU of the profile's type in
    the app's region (each serverless GPU replica has exactly one GPU; idle-rate billing does
    not apply to serverless GPUs: "They're always billed for active usage", Container Apps
    billing). Prices are the Retail Prices API's per-second Container Apps meters
    `Standard NC A100 v4 GPU Usage` and `Standard NC T4 v3 GPU Usage`, bundled with their
    source and date (docs/cost.md). The replica's vCPU and memory are billed on top and are not
    counted, so the figure is a floor; the hours in which traffic needs the replica are not
    subtracted, so it is what scale-to-zero saves only for an app that is idle most of the time.
    A region without a bundled price is unknown, never $0.

    ## Why

    Serverless GPUs exist to scale to zero: "When a revision is scaled to zero replicas, no
    resource consumption charges are incurred." A minimum of one replica keeps cold starts away
    at the price of a GPU billed around the clock, and such a setting outlives the launch it was
    made for. No peer checks this.
    """
    # Each settles it alone: no replica kept, or no serverless GPU profile.
    if either(lambda: min_replicas(resource) < 1, lambda: serverless_gpu_profile(resource, ctx.inventory.get) is None):
        return
    minimum = min_replicas(resource)
    profile = serverless_gpu_profile(resource, ctx.inventory.get)
    env = environment(resource, ctx.inventory.get)
    # azurerm computes an app's location from its environment, so a plan often knows only the latter
    region = resource.location if isinstance(resource.location, str) else env.location if env is not None else None
    usage = ctx.utilization.app_usage(resource) if ctx.utilization is not None else None
    assumptions = [f"{minimum:g} replica(s) of one GPU each, running all month"]
    if usage is not None and usage.requests is not None:
        assumptions.append(f"{usage.requests:g} requests in {usage.window}")
    what = "serverless GPUs held by minReplicas"
    cost = ctx.prices.estimate(
        profile, region, minimum, HOURS_PER_MONTH, what, tuple(assumptions), meter=SERVERLESS_GPU
    )
    quiet = f", and it took no requests in {usage.window}" if usage is not None and usage.requests == 0 else ""
    observed: dict[str, object] = {"minReplicas": minimum, "workloadProfileType": profile}
    if usage is not None:
        observed |= {
            "requests": usage.requests,
            "max_replicas": max(usage.replicas, default=None),
            "window": usage.window,
        }
    yield Violation(
        f"Container App '{resource.name}' keeps {minimum:g} replica(s) on serverless GPU profile {profile}{quiet}",
        MIN_REPLICAS,
        observed,
        "minReplicas 0, so the GPU is billed only while requests are served",
        cost=cost,
    )
