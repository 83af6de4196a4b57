"""Rule discovery through entry points, and the metadata every rule must carry."""

from __future__ import annotations

import re
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from scanner.engine.checkapi import Check, Pillar, Severity
from scanner.engine.registry import PluginError, load_checks
from scanner.engine.ruledocs import is_drift_rule, is_live_only
from tests.conftest import FIXTURES, ROOT

REQUIRED_SECTIONS = ("## What fails", "## What passes", "## Undetermined when", "## Why")
RULE_FILE = re.compile(r"azai(\d{3})_([a-z0-9_]+)\.py")


def _rule_files() -> dict[str, Path]:
    """Rule id -> file, from the names of the files in checks/ (helpers start with ``_``)."""
    files: dict[str, Path] = {}
    for path in sorted((ROOT / "checks").glob("*.py")):
        if path.name.startswith("_"):
            continue
        match = RULE_FILE.fullmatch(path.name)
        assert match, f"checks/{path.name}: a rule's file is named azaiNNN_<slug>.py"
        rule_id = f"AZAI-{match.group(1)}"
        assert rule_id not in files, f"{files[rule_id].name} and {path.name} both claim {rule_id}"
        files[rule_id] = path
    return files


def test_builtin_pack_is_discovered_through_the_entry_point_group() -> None:
    """The registry holds exactly one rule per file in checks/, in id order, and nothing else."""
    ids = [c.id for c in load_checks()]
    assert ids == sorted(_rule_files())
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("check", load_checks(), ids=lambda c: c.id)
def test_each_rule_file_registers_its_own_id_and_slug(check: Check) -> None:
    """checks/azaiNNN_<slug>.py defines rule AZAI-NNN with that slug, so a reader finds the file
    for any rule from its id or slug alone."""
    assert check.module == f"checks.azai{check.id[-3:]}_{check.slug.replace('-', '_')}"


def test_slugs_are_unique() -> None:
    slugs = [c.slug for c in load_checks()]
    assert len(set(slugs)) == len(slugs)


@pytest.mark.parametrize("check", load_checks(), ids=lambda c: c.id)
def test_every_rule_has_a_fixture_estate_or_runs_only_live_or_in_drift(check: Check) -> None:
    """A rule that reads IaC is tested on its fixtures in every form (tests/test_rules.py). One
    without them declares sources that keep it off IaC, which its page and the README's rule
    table show (live-only, or the drift row); tests/test_live.py and tests/test_drift.py test it."""
    rule_dir = FIXTURES / "rules" / check.id
    if is_live_only(check) or is_drift_rule(check):
        assert not rule_dir.exists(), f"{check.id} has fixtures but declares sources {sorted(check.sources)}"
    else:
        assert (rule_dir / "expected.json").is_file(), f"{check.id} has no fixtures/rules/{check.id}/"


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
