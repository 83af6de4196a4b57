"""Documentation generated from code must match the committed files."""

from __future__ import annotations

import re
from pathlib import Path

from reports.json_report import SCHEMA_VERSION
from scanner.docgen import generate
from scanner.registry import load_checks
from tests.conftest import FIXTURES, ROOT, cli_json, run_cli


def test_rule_docs_are_up_to_date() -> None:
    """Regenerate with: python -m scanner.docgen docs/rules"""
    target = ROOT / "docs" / "rules"
    expected = generate(load_checks())
    actual = {p.name: p.read_text(encoding="utf-8") for p in [*target.glob("*.md"), *target.glob("*.json")]}
    assert actual == expected, "docs/rules is stale: run python -m scanner.docgen docs/rules"


def test_json_output_doc_names_every_field_the_report_emits(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "json-output.md").read_text(encoding="utf-8")
    plan = FIXTURES / "rules" / "AZAI-101" / "plan-azurerm.json"
    config = tmp_path / "azai.toml"
    config.write_text("[[suppressions]]\nrule = 'AZAI-101'\nresource = 'app-*'\njustification = 'demo'\n")
    baseline = tmp_path / "baseline.json"
    run_cli("scan", "--fail-on", "none", "--write-baseline", str(baseline), str(FIXTURES / "demo" / "plan.json"))
    data = cli_json("--config", str(config), "--baseline", str(baseline), str(plan))
    assert data["absent"] and any(f["suppressed"] for f in data["findings"])  # every optional part is present
    assert f"`{SCHEMA_VERSION}`" in doc
    fields: set[str] = set(data)
    for section in ("findings", "undetermined"):
        for item in data[section]:
            fields |= set(item) | {f"location.{k}" for k in item["location"]}
            fields |= {f"evidence.{k}" for k in item.get("evidence", {})}
            fields |= {f"suppression.{k}" for k in item.get("suppression") or {}}
    fields |= {f"absent.{k}" for item in data["absent"] for k in item}
    fields |= {f"summary.{k}" for k in data["summary"]} | {f"inputs.{k}" for k in data["inputs"][0]}
    documented = set(re.findall(r"`([a-z_.]+)`", doc))
    missing = sorted(f for f in fields if f not in documented)
    assert not missing, f"docs/json-output.md does not document {missing}"


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r"<!-- test-command -->\s*```sh\n(.+?)\n```", readme, re.S)
    assert command is not None, "README must mark its test command"
    assert command.group(1).strip() in ci
