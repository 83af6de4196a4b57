"""Rule discovery through entry points, and the metadata every rule must carry."""

from __future__ import annotations

import re
from importlib.metadata import EntryPoint

import pytest

from scanner.checkapi import Check, Pillar, Severity
from scanner.registry import PluginError, load_checks

REQUIRED_SECTIONS = ("## What fails", "## What passes", "## Undetermined when", "## Why")


def test_builtin_pack_is_discovered_through_the_entry_point_group() -> None:
    ids = [c.id for c in load_checks()]
    assert ids == ["AZAI-101", "AZAI-102", "AZAI-201", "AZAI-202", "AZAI-301", "AZAI-901", "AZAI-902", "AZAI-903"]


def test_seed_rule_metadata() -> None:
    checks = {c.id: c for c in load_checks()}
    expected = {
        "AZAI-101": ("anonymous-endpoint", Pillar.SECURITY),
        "AZAI-102": ("shared-gpu-pool", Pillar.SECURITY),
        "AZAI-201": ("always-on-compute", Pillar.COST),
        "AZAI-202": ("idle-gpu", Pillar.COST),
        "AZAI-301": ("cross-region", Pillar.PERFORMANCE),
        "AZAI-901": ("setting-drift", Pillar.SECURITY),
        "AZAI-902": ("unmanaged-resource", Pillar.OPERATIONS),
        "AZAI-903": ("missing-resource", Pillar.OPERATIONS),
    }
    assert {k: (v.slug, v.pillar) for k, v in checks.items()} == expected
    assert checks["AZAI-202"].sources == frozenset({"live"})
    assert all(checks[i].sources == frozenset({"drift"}) for i in ("AZAI-901", "AZAI-902", "AZAI-903"))


@pytest.mark.parametrize("check", load_checks(), ids=lambda c: c.id)
def test_every_rule_is_fully_documented(check: Check) -> None:
    assert re.fullmatch(r"AZAI-\d{3}", check.id)
    assert check.title and not check.title.lower().startswith("ensure")
    assert isinstance(check.severity, Severity) and isinstance(check.pillar, Pillar)
    assert check.resource_types
    assert check.principle.text and check.principle.source.startswith("https://")
    assert check.help_uri.startswith("https://")
    assert check.remediation.terraform and check.remediation.bicep and check.remediation.cli
    for section in REQUIRED_SECTIONS:
        assert section in check.doc, f"{check.id} docstring lacks {section}"
    assert check.module.startswith("checks.azai" + check.id[-3:])


def _point(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group="azai.checks")


def test_duplicate_rule_ids_are_an_error() -> None:
    with pytest.raises(PluginError, match="duplicate rule id AZAI-101"):
        load_checks([_point("AZAI", "checks:builtin_checks"), _point("AZAI", "tests.plugin_packs:duplicate_pack")])


def test_rules_outside_their_pack_prefix_are_an_error() -> None:
    with pytest.raises(PluginError, match="does not use the pack's prefix ACME-"):
        load_checks([_point("ACME", "tests.plugin_packs:duplicate_pack")])


def test_a_third_party_pack_loads_beside_the_builtin_one() -> None:
    ids = [
        c.id
        for c in load_checks([_point("AZAI", "checks:builtin_checks"), _point("ACME", "tests.plugin_packs:acme_pack")])
    ]
    assert ids[0] == "ACME-001" and "AZAI-101" in ids


def test_a_broken_pack_is_a_one_line_error() -> None:
    with pytest.raises(PluginError, match="failed to load"):
        load_checks([_point("BAD", "tests.no_such_module:pack")])
