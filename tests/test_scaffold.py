"""``python -m scanner.dev new-rule``: a new rule in one command, in a copy of the checkout.

The scaffold runs with ``--root`` on a copy of the parts of the checkout it reads and writes (the
rules, the fixtures, the docs, README.md) plus the tests that judge a rule, so nothing is written
into the real checkout. The scaffolded rule must pass those tests as it is.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scanner import RULE_PAGES
from scanner.dev.commands import main
from scanner.dev.scaffold import validate
from scanner.engine.checkapi import Pillar
from tests.conftest import CHILD_PROCESS, ROOT

COPIED = (
    "checks",
    "tests",
    "fixtures/rules",
    "fixtures/build_rule_fixtures.py",
    "docs/rules",
    "README.md",
    "pyproject.toml",
)
NEW_ID, NEW_SLUG = "AZAI-299", "scaffold-example"
RULE_FILE = Path("checks") / "azai299_scaffold_example.py"
FORMS = ("plan-azurerm", "plan-azapi", "template", "whatif")


def _copy_checkout(target: Path) -> Path:
    for part in COPIED:
        source, copy = ROOT / part, target / part
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, copy)
    return target


def _child_env(root: Path) -> dict[str, str]:
    """The copy's rules first on the path; no bytecode written beside anyone's sources."""
    return {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the checkout after ``new-rule AZAI-299 scaffold-example --root COPY``."""
    root = _copy_checkout(tmp_path_factory.mktemp("checkout"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONDONTWRITEBYTECODE", "1")
        assert main(["new-rule", NEW_ID, NEW_SLUG, "--root", str(root)]) == 0
    assert not (ROOT / RULE_FILE).exists() and not (ROOT / "fixtures" / "rules" / NEW_ID).exists()
    assert not (ROOT / "docs" / "rules" / f"{NEW_ID}.md").exists()
    yield root


def test_new_rule_writes_the_rule_its_estate_and_the_estates_four_forms(scaffolded: Path) -> None:
    assert (scaffolded / RULE_FILE).is_file()
    rule_dir = scaffolded / "fixtures" / "rules" / NEW_ID
    assert sorted(p.name for p in rule_dir.iterdir()) == sorted(
        ["estate.json", "expected.json", *(f"{form}.json" for form in FORMS)]
    )
    expected = json.loads((rule_dir / "expected.json").read_text(encoding="utf-8"))
    assert expected["rule"] == NEW_ID and set(expected["forms"]) == set(FORMS)
    for outcomes in expected["forms"].values():
        assert outcomes["fail"] and outcomes["pass"], "the estate has a failing and a passing resource in every form"


@CHILD_PROCESS
def test_the_scaffolded_rule_loads_with_its_id_slug_and_pillar(scaffolded: Path) -> None:
    """In a child process, so that the copy's checks/ is the built-in pack."""
    script = (
        "import json; from scanner.engine.registry import load_checks; "
        "print(json.dumps([[c.id, c.slug, str(c.pillar), c.module] for c in load_checks()]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=scaffolded,
        env=_child_env(scaffolded),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rules = {rule[0]: rule[1:] for rule in json.loads(done.stdout)}
    assert rules[NEW_ID] == [NEW_SLUG, "Cost Optimization", "checks.azai299_scaffold_example"]
    assert sorted(rules) == sorted(f"AZAI-{p.name[4:7]}" for p in (scaffolded / "checks").glob("azai*.py"))


def test_the_docs_and_readme_include_the_new_rule(scaffolded: Path) -> None:
    page = (scaffolded / "docs" / "rules" / f"{NEW_ID}.md").read_text(encoding="utf-8")
    assert page.startswith(f"# {NEW_ID} {NEW_SLUG}\n") and "| Pillar | Cost Optimization |" in page
    assert f"[{NEW_ID}]({NEW_ID}.md) | {NEW_SLUG} |" in (scaffolded / "docs" / "rules" / "README.md").read_text()
    assert NEW_ID in json.loads((scaffolded / "docs" / "rules" / "compliance.json").read_text())["rules"]
    readme = (scaffolded / "README.md").read_text(encoding="utf-8")
    cost_row = next(line for line in readme.splitlines() if line.startswith("| Cost Optimization |"))
    assert cost_row.endswith(f"[299]({RULE_PAGES}{NEW_ID}.md) {NEW_SLUG} |")  # absolute: PyPI shows the README
    count = len(list((scaffolded / "checks").glob("azai*.py")))
    assert f"<!-- rules:start -->\n{count} rules, each" in readme


@pytest.mark.slow  # a second pytest, in a child process, on the scaffolded copy
def test_the_scaffolded_rule_passes_the_tests_that_judge_a_rule(scaffolded: Path) -> None:
    """The copy's own tests, on the copy: its fixtures in every form, the registry's demands on
    every rule, and the generated docs and README being current."""
    judged = [
        *(
            f"tests/test_rules.py::test_rule_fails_and_passes_exactly_the_expected_resources[{NEW_ID}-{f}]"
            for f in FORMS
        ),
        "tests/test_rules.py::test_every_rule_with_iac_sources_has_fixtures_in_all_four_forms",
        "tests/test_rules.py::test_generated_fixtures_match_their_estates",
        "tests/test_registry.py",
        "tests/test_docs.py::test_rule_docs_are_up_to_date",
        "tests/test_docs.py::test_readme_rule_table_is_up_to_date",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *judged],
        cwd=scaffolded,
        env=_child_env(scaffolded),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_pillar_follows_the_ids_hundreds(tmp_path: Path) -> None:
    (tmp_path / "checks").mkdir()
    pillars = [validate(f"AZAI-{hundred}98", "fresh-slug", tmp_path) for hundred in "12345"]
    assert pillars == [Pillar.SECURITY, Pillar.COST, Pillar.PERFORMANCE, Pillar.RELIABILITY, Pillar.OPERATIONS]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy for the refusals, which must leave it as it was."""
    return _copy_checkout(tmp_path_factory.mktemp("refusals"))


@pytest.mark.parametrize(
    ("rule_id", "slug", "reason"),
    [
        ("AZAI-103", "fresh-slug", "AZAI-103 exists: checks/azai103_workspace_public_access.py"),
        ("AZAI-199", "workspace-public-access", "slug 'workspace-public-access' is taken"),
        ("AZAI-12", "fresh-slug", "is not of the form AZAI-NNN"),
        ("azai-199", "fresh-slug", "is not of the form AZAI-NNN"),
        ("AZAI-1990", "fresh-slug", "is not of the form AZAI-NNN"),
        ("ACME-199", "fresh-slug", "is not of the form AZAI-NNN"),
        ("AZAI-699", "fresh-slug", "is in no pillar's range"),
        ("AZAI-999", "fresh-slug", "9xx ids are drift rules"),
        ("AZAI-199", "Fresh_Slug", "is not kebab-case"),
        ("AZAI-199", "fresh-", "is not kebab-case"),
        ("AZAI-199", "9fresh", "is not kebab-case"),
        ("AZAI-199", "fresh--slug", "is not kebab-case"),
        ("AZAI-199", "x" * 41, "is not kebab-case"),
        ("AZAI-199", "class", "would name the rule's function class"),
        ("AZAI-199", "forbid", "would name the rule's function forbid"),
    ],
)
def test_new_rule_refuses_a_malformed_or_taken_id_or_slug(
    checkout: Path, rule_id: str, slug: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tree(checkout)
    assert main(["new-rule", rule_id, slug, "--root", str(checkout)]) == 2
    err = capsys.readouterr().err
    assert reason in err and err.startswith("new-rule: ") and err.count("\n") == 1, err
    assert _tree(checkout) == before


@pytest.mark.parametrize("leftover", ["fixtures/rules/AZAI-198/estate.json", "docs/rules/AZAI-198.md"])
def test_new_rule_never_overwrites_a_file(tmp_path: Path, leftover: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A fixture or page left by a rule that is gone still blocks its id: nothing is overwritten."""
    root = tmp_path
    (root / "checks").mkdir()
    (root / "README.md").write_text("# readme\n", encoding="utf-8")
    (root / leftover).parent.mkdir(parents=True)
    (root / leftover).write_text("hand-written\n", encoding="utf-8")
    before = _tree(root)
    assert main(["new-rule", "AZAI-198", "fresh-slug", "--root", str(root)]) == 2
    assert f"AZAI-198 exists: {Path(leftover).parts[0]}/" in capsys.readouterr().err
    assert _tree(root) == before


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["new-rule", "AZAI-199"], "usage:"),
        (["new-rule", "AZAI-199", "fresh-slug", "--force"], "unknown option --force"),
        (["new-rule", "AZAI-199", "fresh-slug", "--root"], "--root needs a directory"),
        (["new-rule", "AZAI-199", "fresh-slug", "--root", "{empty}"], "is not an azai checkout"),
        (["docs", "--root", "{empty}"], "is not an azai checkout"),
        ([], "usage:"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([a.replace("{empty}", str(tmp_path)) for a in args]) == 2
    assert reason in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_docs_refuses_a_checkout_whose_rules_are_not_the_ones_loaded(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """This process's rules are the real checkout's; writing them into the copy would be wrong."""
    before = _tree(checkout)
    assert main(["docs", "--root", str(checkout)]) == 2
    assert "the rules loaded are from" in capsys.readouterr().err
    assert _tree(checkout) == before
