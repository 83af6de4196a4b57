"""Scoring azai against the hand-labelled Azure Verified Modules patterns.

``tests/avm_expectations/<template>.json`` holds, for one compiled AVM pattern in
``../shared/corpus/arm/bicep-avm-patterns/``, the (rule, resource) pairs a correct scan reports
with the template's default parameters: findings with their severities, undetermined pairs,
and passes. They were written by applying the rule docs and ARM's semantics to the template,
by someone who had not read the evaluator. A resource is named by its declaration chain
(``hub/workspace``, ``hubs[1]/workspace``, ``aks/managedCluster/agentPoolProfiles[0]``).

Run it as a script for the precision and recall figures: ``python -m tests.avm_conformance``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.engine.results import ScanResult
from scanner.model.resources import Resource

LABELS = Path(__file__).resolve().parent / "avm_expectations"
PATTERNS = "arm/bicep-avm-patterns"

Item = tuple[str, ...]  # rule, resource key, outcome, severity ("" for undetermined)


def resource_key(resource: Resource) -> str:
    """The declaration chain the labels name a resource by."""
    instance = getattr(resource.origin, "instance", None)
    if instance:
        return str(instance)
    # An older evaluator without declaration chains: derive it from the JSON pointer.
    pointer = resource.origin.pointer.removeprefix("/resources/")
    return pointer.replace("/properties/template/resources/", "/")


def expected_items(labels: dict[str, Any]) -> tuple[set[Item], set[tuple[str, str]]]:
    """The labelled findings and undetermined pairs, and the labelled passes."""
    items: set[Item] = set()
    passes: set[tuple[str, str]] = set()
    for entry in labels["expected"]:
        rule, key, outcome = entry["rule"], entry["key"], entry["outcome"]
        if outcome == "finding":
            items.update((rule, key, "finding", severity) for severity in entry["severities"])
        elif outcome == "undetermined":
            items.add((rule, key, "undetermined", ""))
        else:
            passes.add((rule, key))
    return items, passes


def actual_items(result: ScanResult) -> tuple[set[Item], set[tuple[str, str]]]:
    items: set[Item] = {(f.check.id, resource_key(f.resource), "finding", f.severity.label) for f in result.findings}
    items |= {(u.check.id, resource_key(u.resource), "undetermined", "") for u in result.undetermined}
    passes = {(c.id, resource_key(r)) for c, r in result.passed}
    return items, passes


@dataclass
class Score:
    true: set[Item] = field(default_factory=set)
    false: set[Item] = field(default_factory=set)  # reported, not labelled
    missed: set[Item] = field(default_factory=set)  # labelled, not reported

    def add(self, expected: set[Item], actual: set[Item]) -> None:
        self.true |= expected & actual
        self.false |= actual - expected
        self.missed |= expected - actual

    @property
    def precision(self) -> float:
        reported = len(self.true) + len(self.false)
        return len(self.true) / reported if reported else 1.0

    @property
    def recall(self) -> float:
        labelled = len(self.true) + len(self.missed)
        return len(self.true) / labelled if labelled else 1.0


def label_files() -> list[Path]:
    return sorted(LABELS.glob("*.json"))


def main() -> None:
    from tests.conftest import CORPUS, scan

    total = Score()
    for labels_path in label_files():
        labels = json.loads(labels_path.read_text(encoding="utf-8"))
        expected, _ = expected_items(labels)
        actual, _ = actual_items(scan(CORPUS / labels["template"]))
        total.add({(labels_path.name, *i) for i in expected}, {(labels_path.name, *i) for i in actual})
    for item in sorted(total.false):
        print("false:", *item)
    for item in sorted(total.missed):
        print("missed:", *item)
    print(
        f"{len(total.true)} true, {len(total.false)} false, {len(total.missed)} missed: "
        f"precision {total.precision:.1%}, recall {total.recall:.1%}"
    )


if __name__ == "__main__":
    main()
