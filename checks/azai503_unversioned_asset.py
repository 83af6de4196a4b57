"""AZAI-503 unversioned-asset."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from checks._common import WAF_AI, every_gap, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.needs import LiveRead
from scanner.model.resources import Resource
from scanner.model.unknown import known

# azureml:name:version, azureml:name@label, azureml://registries/r/models/name/versions/v, ARM ids
# .../models/name/versions/v: the version (or label) is the last step after ':', '@' or '/versions/'.
_VERSION = re.compile(r"(?:/versions/|/labels/|@|^azureml:[^:/@]+:)([^/:@]+)$", re.IGNORECASE)
REFERENCES = ("properties.model", "properties.environmentId")  # what a deployment serves


@rule(
    id="AZAI-503",
    slug="unversioned-asset",
    title="Online deployment serves a model, environment or image without a pinned version",
    pillar=Pillar.OPERATIONS,
    severity=Severity.MEDIUM,
    resource_types=(T.ONLINE_DEPLOYMENT, T.ENVIRONMENT_VERSION, T.REGISTRY_ENVIRONMENT_VERSION),
    reads=(LiveRead.ENVIRONMENT_VERSIONS,),
    principle=Principle(
        "Make every deployment traceable to the exact model and environment versions that were evaluated.",
        WAF_AI + "mlops-genaiops",
    ),
    remediation=Remediation(
        terraform='azapi_resource (deployments): body.properties.model = "azureml:my-model:3", environmentId = '
        '"azureml:my-env:7"; (environments/versions): body.properties.image = "myacr.azurecr.io/serve:1.4.2"',
        bicep="deployments: properties: { model: '${workspace.id}/models/my-model/versions/3', environmentId: "
        "'${workspace.id}/environments/my-env/versions/7' }; environments/versions: properties: { image: "
        "'myacr.azurecr.io/serve:1.4.2' } (or an @sha256 digest)",
        cli="az ml online-deployment create -f deployment.yml (with model: azureml:my-model:3); "
        "az ml environment create --image myacr.azurecr.io/serve:1.4.2 ...",
        terraform_code="""\
            resource "azapi_resource" "blue" {
              type      = "Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments@2024-04-01"
              parent_id = azapi_resource.endpoint.id
              # ...
              body = {
                properties = {
                  endpointComputeType = "Managed"
                  model               = "azureml:my-model:3"
                  environmentId       = "azureml:my-env:7"
                }
              }
            }
        """,
        bicep_code="""\
            resource blue 'Microsoft.MachineLearningServices/workspaces/onlineEndpoints/deployments@2024-04-01' = {
              parent: endpoint
              // ...
              properties: {
                endpointComputeType: 'Managed'
                model: '${workspace.id}/models/my-model/versions/3'
                environmentId: '${workspace.id}/environments/my-env/versions/7'
              }
            }
        """,
        cli_code="""\
            az ml environment create --name my-env --version 7 --image myacr.azurecr.io/serve:1.4.2 \\
              --resource-group RG --workspace-name WS
            az ml online-deployment create --file deployment.yml --resource-group RG --workspace-name WS
        """,
        guide="https://learn.microsoft.com/azure/machine-learning/concept-endpoints-online",
    ),
    help_uri=rule_page("AZAI-503"),
)
def unversioned_asset(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An online deployment whose model or environment floats, or an environment whose container
    image floats: what serves traffic is whatever was registered or pushed last.

    ## What fails

    - An online deployment whose `properties.model` or `properties.environmentId` ends in the
      `latest` label (`@latest`, `:latest`, `/versions/latest`) or names an asset without a
      version (`azureml:my-model`, `.../models/my-model`). Each floating reference is its own
      finding.
    - An environment version (in a workspace or a registry) whose `properties.image` has the
      tag `latest`, or no tag and no digest, so the next pull may bring a different image.

    ## What passes

    Pinned versions (`azureml:my-model:3`, `.../models/my-model/versions/3`), deployments
    without a model (custom containers) for the model part, images with a version tag or an
    `@sha256:` digest, and environments built from a build context instead of an image.

    ## Undetermined when

    A reference or an image is unknown before deploy.

    ## Live scans

    Environment versions are not in Resource Graph; a live scan reads the ones online
    deployments use by their ARM id, one request each. Curated environments referenced by
    `azureml://registries/...` are Microsoft's and are not read.

    ## Why

    A floating reference makes the deployment unreproducible: a redeploy or scale-out can pick
    up a different model, environment or base image than the one that was evaluated and
    approved, and an incident cannot be traced to what actually ran.
    """
    if resource.type_key == T.ONLINE_DEPLOYMENT.lower():
        yield from every_gap(*(_floating_reference(resource, path) for path in REFERENCES))
        return
    image = known(resource.get("properties.image"))
    problem = _floating_image(image)
    if problem:
        yield Violation(
            f"Environment '{resource.name}' uses image '{image}' ({problem})",
            "properties.image",
            image,
            "an image with a version tag or an @sha256 digest",
        )


def _floating_reference(deployment: Resource, path: str) -> Iterator[Violation]:
    reference = known(deployment.get(path))
    problem = _floating(reference)
    if problem:
        yield Violation(
            f"Deployment '{deployment.name}' uses {path.split('.')[-1]} '{reference}' ({problem})",
            path,
            reference,
            "a pinned version",
        )


def _floating(reference: Any) -> str | None:
    if not isinstance(reference, str) or not reference.strip():
        return None
    match = _VERSION.search(reference.strip())
    if match is None:
        return "no version"
    return "the latest label" if match.group(1).lower() == "latest" else None


def _floating_image(image: Any) -> str | None:
    """Why a container image reference floats, or None when it is pinned (or absent)."""
    if not isinstance(image, str) or not image.strip():
        return None
    reference = image.strip()
    if "@" in reference:  # a digest pins the exact image
        return None
    repository = reference.rsplit("/", 1)[-1]  # a registry host may carry a port: host:5000/name
    if ":" not in repository:
        return "no tag, so every pull takes latest"
    return "the latest tag" if repository.split(":", 1)[1].lower() == "latest" else None
