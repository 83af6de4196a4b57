"""Rule packs used by the registry tests, as a third party would write them."""

from __future__ import annotations

from collections.abc import Iterator

from checks.azai101_anonymous_endpoint import anonymous_endpoint
from scanner.engine.checkapi import Check, CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model.resources import Resource


def duplicate_pack() -> list[Check]:
    return [anonymous_endpoint]


@rule(
    id="ACME-001",
    slug="acme-tagged",
    title="Workspace has no cost-centre tag",
    pillar=Pillar.OPERATIONS,
    severity=Severity.LOW,
    resource_types=("Microsoft.MachineLearningServices/workspaces",),
    principle=Principle("Tag resources with their owner.", "https://example.com/tagging"),
    remediation=Remediation("tags = { costcentre = ... }", "tags: { costcentre: ... }", "az tag update ..."),
    help_uri="https://example.com/acme-001",
)
def acme_tagged(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """Workspace without a cost-centre tag."""
    if "costcentre" not in resource.tags:
        yield Violation("no costcentre tag", "tags", None, "a costcentre tag")


def acme_pack() -> list[Check]:
    return [acme_tagged]
