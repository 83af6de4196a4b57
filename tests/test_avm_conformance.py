"""Conformance on real compiled Bicep: the labelled Azure Verified Modules patterns.

Every labelled finding (with its severity) and undetermined pair must be reported, nothing
else may be, and every labelled pass must be evaluated and pass. See tests/avm_conformance.py
for the labels' format; skipped when ../shared/corpus is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.avm_conformance import PATTERNS, actual_items, expected_items, label_files
from tests.conftest import scan


def test_every_pattern_in_the_corpus_is_labelled(corpus: Path) -> None:
    patterns = {p.name for p in (corpus / PATTERNS).glob("*.json")}
    assert patterns == {p.name for p in label_files()}


@pytest.mark.parametrize("labels_path", label_files(), ids=lambda p: p.stem)
def test_avm_pattern_gives_exactly_its_labelled_results(corpus: Path, labels_path: Path) -> None:
    labels = json.loads(labels_path.read_text(encoding="utf-8"))
    assert labels["template"] == f"{PATTERNS}/{labels_path.name}"
    expected, passes = expected_items(labels)
    actual, passed = actual_items(scan(corpus / labels["template"]))
    assert sorted(actual - expected) == [], "reported but not labelled"
    assert sorted(expected - actual) == [], "labelled but not reported"
    assert sorted(passes - passed) == [], "labelled passes that were not evaluated as passes"
