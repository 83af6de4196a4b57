"""The resources of the scanned IaC that azai reads nothing from, by type, for the coverage
section of every report.

A plan, template or what-if result may deploy resources no rule judges: a virtual network, or an
AI service's resource that appeared after the rules and mappings were written (a new connection
type, a capability host). Left out silently, a scan of them reads as clean, so each such type is
named once. It is computed here, once per scan, from what the sources read and what the rules
declare; sources know no rules and rules know no sources.

A type is read when an installed rule declares it among its resource types or its ``reads=``
(any rule: one inventory serves ``azai scan``, ``azai drift`` and ``--save-inventory``, and
``--select`` narrows what a run judges, not what azai reads). A rule that leaves ``reads=`` out
is taken to read its own types only, so a type it looks up may be named though it is read:
declaring ``reads=`` fixes that, and the error is a warning too many, never a resource hidden.
Nested deployments (``Microsoft.Resources/deployments``) are read: the template evaluator
deploys their templates. A Terraform resource is unread when no mapping gives it an ARM shape,
whatever the rules read (`PlanReader.untranslated`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from scanner.engine.checkapi import Check
from scanner.engine.results import UnreadType
from scanner.model import azure_types as T
from scanner.sources import ARM, TERRAFORM, WHATIF, LoadedInput

# The resource providers of the AI services azai's rules are written for: Foundry, Azure OpenAI
# and AI services accounts (CognitiveServices), AML and Foundry hub workspaces
# (MachineLearningServices) and AI Search. An unread type of theirs may be a resource a rule
# should have judged, so it is a warning. Microsoft.App, ContainerService and Compute also host
# AI workloads, and rules read some of their types, but most of their types (jobs, certificates,
# maintenance configurations, disks) are not AI resources: they are counted with the others.
AI_PROVIDERS = frozenset({"microsoft.cognitiveservices", "microsoft.machinelearningservices", "microsoft.search"})
_IAC = (TERRAFORM, ARM, WHATIF)


def read_types(checks: Iterable[Check]) -> frozenset[str]:
    """The lower-cased ARM types the rules read: their own, those they look up (a `LiveRead`
    names the ARM type of what it reads), and the deployments the evaluator expands."""
    types = {T.DEPLOYMENT.lower()}
    for check in checks:
        types.update(t.lower() for t in check.resource_types)
        types.update(str(read).lower() for read in check.reads)
    return frozenset(types)


@dataclass
class _Tally:
    """One type's count while the inputs are read (an `UnreadType` is frozen)."""

    name: str  # as first spelled
    resources: int
    ai: bool


def unread_types(loaded: Iterable[LoadedInput], read: frozenset[str]) -> list[UnreadType]:
    """The types of the IaC inputs' deployed resources that no rule reads, and the Terraform
    types no mapping translates, each once across all inputs (ARM types case-insensitively),
    sorted by name. Live and snapshot inputs hold only what the rules asked for."""
    found: dict[str, _Tally] = {}
    for item in loaded:
        if item.kind not in _IAC:
            continue
        for resource in item.inventory.resources:
            if not resource.origin.reference_only and resource.type_key not in read:
                _add(found, resource.type, 1, resource.type_key.split("/", 1)[0] in AI_PROVIDERS)
        if item.untranslated:  # a plan's types that no mapping translates
            from scanner.sources.terraform.azurerm import serves_ai

            for name, count in item.untranslated.items():
                _add(found, name, count, serves_ai(name))
    return [UnreadType(t.name, t.resources, t.ai) for _, t in sorted(found.items())]


def _add(found: dict[str, _Tally], name: str, count: int, ai: bool) -> None:
    tally = found.setdefault(name.lower(), _Tally(name, 0, ai))
    tally.resources += count
