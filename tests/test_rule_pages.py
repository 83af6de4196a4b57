"""Rule pages show the fix as code, and SARIF links each rule to its own page.

Every built-in rule gives a fixed example in Terraform, Bicep and the Azure CLI. The examples
must be code a reader can paste: the HCL and Bicep ones parse with the same tree-sitter grammars
azai reads source with, and the shell one parses with ``bash -n``. The SARIF rule's ``helpUri``
is the rule's page in docs/rules/, not a generic Learn page.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Iterator

import pytest
import tree_sitter_bicep
import tree_sitter_hcl
from tree_sitter import Language, Node, Parser

from checks._common import RULE_PAGES, rule_page
from scanner.engine.checkapi import Check
from scanner.engine.registry import load_checks
from scanner.engine.ruledocs import rule_markdown
from tests.conftest import FIXTURES, ROOT, run_cli

CHECKS = [c for c in load_checks() if c.module.startswith("checks.")]
GRAMMARS = {"hcl": tree_sitter_hcl.language(), "bicep": tree_sitter_bicep.language()}


def _broken(node: Node) -> Iterator[Node]:
    """Nodes the parser could not place: syntax errors and tokens it had to invent."""
    if node.is_error or node.is_missing:
        yield node
    for child in node.children:
        yield from _broken(child)


def _code(check: Check, language: str) -> str:
    fix = check.remediation
    raw = {"hcl": fix.terraform_code, "bicep": fix.bicep_code, "sh": fix.cli_code}[language]
    return textwrap.dedent(raw).strip("\n")


def test_every_builtin_rule_is_covered() -> None:
    assert len(CHECKS) == 42


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.id)
def test_the_page_shows_each_fix_as_a_fenced_block(check: Check) -> None:
    page = rule_markdown(check)
    remediation = page.split("## Remediation\n", 1)[1]
    for language in ("hcl", "bicep", "sh"):
        code = _code(check, language)
        assert code, f"{check.id} gives no {language} example"
        assert f"```{language}\n{code}\n```\n" in remediation
    assert remediation.index("```hcl") < remediation.index("```bicep") < remediation.index("```sh")
    assert remediation.rstrip().endswith(f"Guide: {check.remediation.guide}")


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.id)
@pytest.mark.parametrize("language", ["hcl", "bicep"])
def test_the_examples_parse(check: Check, language: str) -> None:
    source = _code(check, language).encode()
    tree = Parser(Language(GRAMMARS[language])).parse(source)
    broken = [source[n.start_byte : n.end_byte + 20].decode() for n in _broken(tree.root_node)]
    assert broken == [], f"{check.id} {language} example does not parse near: {broken}"


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.id)
def test_the_cli_example_is_valid_shell(check: Check) -> None:
    code = _code(check, "sh")
    assert code.startswith("az ")
    done = subprocess.run(["bash", "-n"], input=code, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_an_unparsable_example_is_caught() -> None:
    """The parse check can fail: an unclosed block is a syntax error in both grammars."""
    for language in ("hcl", "bicep"):
        tree = Parser(Language(GRAMMARS[language])).parse(b"resource x 'y' = {\n  a: [\n")
        assert list(_broken(tree.root_node))


def test_sarif_help_uri_is_the_rules_own_page() -> None:
    done = run_cli("scan", "--format", "sarif", "--fail-on", "none", str(FIXTURES / "demo" / "plan.json"))
    rules = json.loads(done.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert rules and {r["id"]: r["helpUri"] for r in rules} == {r["id"]: rule_page(r["id"]) for r in rules}
    assert rule_page("AZAI-101") == RULE_PAGES + "AZAI-101.md" and RULE_PAGES.endswith("/blob/main/docs/rules/")
    for rule in rules:
        assert (ROOT / "docs" / "rules" / f"{rule['id']}.md").is_file()
