"""Rule discovery through entry points, and the metadata every rule must carry."""

from __future__ import annotations

import re
from importlib.metadata import EntryPoint

import pytest

from scanner.engine.checkapi import Check, Pillar, Severity
from scanner.engine.registry import PluginError, load_checks

REQUIRED_SECTIONS = ("## What fails", "## What passes", "## Undetermined when", "## Why")


def test_builtin_pack_is_discovered_through_the_entry_point_group() -> None:
    ids = [c.id for c in load_checks()]
    assert ids == [
        "AZAI-101",
        "AZAI-102",
        "AZAI-103",
        "AZAI-104",
        "AZAI-105",
        "AZAI-106",
        "AZAI-107",
        "AZAI-108",
        "AZAI-109",
        "AZAI-110",
        "AZAI-111",
        "AZAI-112",
        "AZAI-113",
        "AZAI-201",
        "AZAI-202",
        "AZAI-203",
        "AZAI-204",
        "AZAI-205",
        "AZAI-301",
        "AZAI-302",
        "AZAI-303",
        "AZAI-304",
        "AZAI-401",
        "AZAI-402",
        "AZAI-403",
        "AZAI-501",
        "AZAI-502",
        "AZAI-503",
        "AZAI-901",
        "AZAI-902",
        "AZAI-903",
    ]


def test_rule_ids_sit_in_their_pillars_range() -> None:
    """1xx Security, 2xx Cost, 3xx Performance, 4xx Reliability, 5xx Operations; 9xx is drift."""
    ranges = {"1": Pillar.SECURITY, "2": Pillar.COST, "3": Pillar.PERFORMANCE, "4": Pillar.RELIABILITY}
    ranges["5"] = Pillar.OPERATIONS
    for check in load_checks():
        hundred = check.id[5]
        assert hundred == "9" or check.pillar == ranges[hundred], check.id


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
    assert {k: (checks[k].slug, checks[k].pillar) for k in expected} == expected
    assert checks["AZAI-202"].sources == checks["AZAI-502"].sources == frozenset({"live"})
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
