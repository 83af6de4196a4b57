"""AZAI-503 unversioned-asset."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from checks._common import WAF_AI
from scanner import azure_types as T
from scanner.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import Resource
from scanner.unknown import known

# azureml:name:version, azureml:name@label, azureml://registries/r/models/name/versions/v, ARM ids
# .../models/name/versions/v: the version (or label) is the last step after ':', '@' or '/versions/'.
_VERSION = re.compile(r"(?:/versions/|/labels/|@|^azureml:[^:/@]+:)([^/:@]+)$", re.IGNORECASE)


@rule(
    id="AZAI-503",
    slug="unversioned-asset",
    title="Online deployment uses a model or environment without a pinned version",
    pillar=Pillar.OPERATIONS,
    severity=Severity.MEDIUM,
    resource_types=(T.ONLINE_DEPLOYMENT,),
    principle=Principle(
        "Make every deployment traceable to the exact model and environment versions that were evaluated.",
        WAF_AI + "mlops-genaiops",
    ),
    remediation=Remediation(
        terraform='azapi_resource (deployments): body.properties.model = "azureml:my-model:3", environmentId = '
        '"azureml:my-env:7"',
        bicep="deployments: properties: { model: '${workspace.id}/models/my-model/versions/3', environmentId: "
        "'${workspace.id}/environments/my-env/versions/7' }",
        cli="az ml online-deployment create -f deployment.yml (with model: azureml:my-model:3)",
    ),
    help_uri="https://learn.microsoft.com/azure/machine-learning/concept-endpoints-online",
)
def unversioned_asset(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An online deployment whose model or environment reference floats: `latest`, or no version,
    so what serves traffic is whatever was registered last.

    ## What fails

    `properties.model` or `properties.environmentId` that:

    - ends in the `latest` label (`@latest`, `:latest`, `/versions/latest`), or
    - names an asset without a version (`azureml:my-model`, `.../models/my-model`).

    ## What passes

    Pinned versions (`azureml:my-model:3`, `.../models/my-model/versions/3`), and deployments
    without a model (custom containers) for the model part.

    ## Undetermined when

    A reference is unknown before deploy.

    ## Why

    A floating reference makes the deployment unreproducible: a redeploy or scale-out can pick
    up a different model than the one that was evaluated and approved.
    """
    for path in ("properties.model", "properties.environmentId"):
        reference = known(resource.get(path))
        problem = _floating(reference)
        if problem:
            yield Violation(
                f"Deployment '{resource.name}' uses {path.split('.')[-1]} '{reference}' ({problem})",
                path,
                reference,
                "a pinned version",
            )
            return


def _floating(reference: Any) -> str | None:
    if not isinstance(reference, str) or not reference.strip():
        return None
    match = _VERSION.search(reference.strip())
    if match is None:
        return "no version"
    return "the latest label" if match.group(1).lower() == "latest" else None
