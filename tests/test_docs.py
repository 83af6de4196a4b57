"""Documentation generated from code must match the committed files."""

from __future__ import annotations

import re
from pathlib import Path

from checks._common import AZURE_POLICY
from reports.json_report import SCHEMA_VERSION
from scanner import RULE_PAGES
from scanner.engine.registry import load_checks
from scanner.engine.ruledocs import (
    AZURE_POLICY_TOOL,
    README_END,
    README_START,
    bundled_initiatives,
    generate,
    initiatives_mapping,
    readme_with_rules,
)
from tests.conftest import FIXTURES, ROOT, cli_json, run_cli


def test_rule_docs_are_up_to_date() -> None:
    """Regenerate with: python -m scanner.dev docs"""
    target = ROOT / "docs" / "rules"
    expected = generate(load_checks())
    actual = {p.name: p.read_text(encoding="utf-8") for p in [*target.glob("*.md"), *target.glob("*.json")]}
    assert actual == expected, "docs/rules is stale: run python -m scanner.dev docs"


def test_readme_rule_table_is_up_to_date() -> None:
    """README.md's rule count and table, between its rules:start and rules:end markers, are
    generated. Regenerate with: python -m scanner.dev docs"""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    checks = load_checks()
    assert readme.count(README_START) == readme.count(README_END) == 1
    assert readme_with_rules(readme, checks) == readme, (
        "README.md's rule table is stale: run python -m scanner.dev docs"
    )
    block = readme.split(README_START, 1)[1].split(README_END, 1)[0]
    assert block.lstrip().startswith(f"{len(checks)} rules,")
    for check in checks:
        assert f"({RULE_PAGES}{check.id}.md) {check.slug}" in block, check.id


def test_a_stale_readme_rule_table_is_caught() -> None:
    """The check can fail: a rule renamed by hand in the table, or a rule the table lacks."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    checks = load_checks()
    stale = readme.replace(") anonymous-endpoint ·", ") anonymous-endpoints ·")
    assert stale != readme and readme_with_rules(stale, checks) == readme
    assert readme_with_rules(readme, checks[1:]) != readme


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


# Every AI-relevant peer rule of the peer survey (its section 3): as the survey writes it, and
# the id a rule declares or docs/peers.md names when it leaves the rule out.
PEER_RULES_IN_SURVEY = {
    "CKV_AZURE_142": "CKV_AZURE_142",
    "CKV_AZURE_144": "CKV_AZURE_144",
    "CKV2_AZURE_49": "CKV2_AZURE_49",
    "CKV_AZURE_150": "CKV_AZURE_150",
    "CKV2_AZURE_50": "CKV2_AZURE_50",
    "CKV_AZURE_243": "CKV_AZURE_243",
    "CKV_AZURE_134": "CKV_AZURE_134",
    "236": "CKV_AZURE_236",
    "238": "CKV_AZURE_238",
    "CKV_AZURE_247": "CKV_AZURE_247",
    "CKV_AZURE_232": "CKV_AZURE_232",
    "Azure.ML.ComputeIdleShutdown": "Azure.ML.ComputeIdleShutdown",
    "Azure.ML.DisableLocalAuth": "Azure.ML.DisableLocalAuth",
    "Azure.ML.ComputeVnet": "Azure.ML.ComputeVnet",
    "Azure.ML.PublicAccess": "Azure.ML.PublicAccess",
    "Azure.AI.PublicAccess": "Azure.AI.PublicAccess",
    "/ DisableLocalAuth": "Azure.AI.DisableLocalAuth",
    "Azure.AKS.MinUserPoolNodes": "Azure.AKS.MinUserPoolNodes",
    "679ddf89": "679ddf89",
    "e96a9a5f": "e96a9a5f",
    "7804b5c7": "7804b5c7",
    "438c38d2": "438c38d2",
    "6ddb1705": "6ddb1705",
    "037eea7a": "037eea7a",
    "71ef260a": "71ef260a",
    "VMSkusAllowed_Deny": "VMSkusAllowed_Deny",
    "hub-004": "hub-004",
    "aif-008": "aif-008",
    "5ee083cd": "5ee083cd",
    "005ccbbd": "005ccbbd",
    "cf2569bb": "cf2569bb",
    "ai-gov": "ai-gov",
    "vm_desired_sku_size": "vm_desired_sku_size",
    "vm_scaleset_not_empty": "vm_scaleset_not_empty",
    "apim_threat_detection_llm_jacking": "apim_threat_detection_llm_jacking",
    "machine_learning_compute_cluster_minimum_node_zero": "machine_learning_compute_cluster_minimum_node_zero",
    "#9412": "#9412",
}


def test_every_peer_ai_rule_is_covered_or_left_out_with_a_reason() -> None:
    """Each AI-relevant rule of the peer survey is declared by a rule as covered (an Azure Policy
    definition by its full GUID) or named in docs/peers.md's left-out table with a reason."""
    survey = ROOT.parent / "shared" / "reference" / "peers.md"
    if survey.is_file():
        section = survey.read_text().split("## 3.", 1)[1].split("## 4.", 1)[0]
        for written in PEER_RULES_IN_SURVEY:
            assert written in section, f"{written} is not in the survey any more"
        for checkov in re.findall(r"CKV2?_AZURE_\d+", section):
            assert checkov in PEER_RULES_IN_SURVEY.values(), checkov
    page = (ROOT / "docs" / "peers.md").read_text()
    left_out = page.split("## Left out on purpose", 1)[1].split("\n## ", 1)[0]
    declared = {peer.id for check in load_checks() for peer in check.peers}
    for peer_id in PEER_RULES_IN_SURVEY.values():
        covered = any(d == peer_id or d.startswith(peer_id + "-") for d in declared)
        assert covered != (peer_id in left_out), f"{peer_id}: covered by a rule, or left out in docs/peers.md"


def test_declared_peer_rules_are_well_formed() -> None:
    """Ids users match on: Checkov ids, PSRule rule names and full Azure Policy definition GUIDs."""
    shapes = {
        "Checkov": r"CKV2?_AZURE_\d+",
        "PSRule": r"Azure(\.\w+)+",
        "Azure Policy": r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    }
    for check in load_checks():
        seen = set()
        for peer in check.peers:
            assert (peer.tool, peer.id) not in seen, f"{check.id} declares {peer} twice"
            seen.add((peer.tool, peer.id))
            assert peer.title, f"{check.id}: {peer} needs a title"
            if peer.tool in shapes:
                assert re.fullmatch(shapes[peer.tool], peer.id), f"{check.id}: {peer.tool} id {peer.id!r}"


def test_initiative_controls_map_only_to_rules_that_declare_their_policies() -> None:
    """An initiative control names an azai rule only when that rule declares one of the control's
    policy definitions as an Azure Policy peer, and names every such rule; each initiative says
    where it was transcribed from (a pinned commit of Azure/azure-policy) and when."""
    assert AZURE_POLICY_TOOL == AZURE_POLICY
    checks = load_checks()
    declared = {c.id: {p.id.lower() for p in c.peers if p.tool == AZURE_POLICY} for c in checks}
    bundled = bundled_initiatives()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", bundled["as_of"])
    mapping = initiatives_mapping(checks)
    assert sorted(mapping) == sorted(bundled["initiatives"]) and mapping
    guid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    mapped_rules = 0
    for initiative_id, initiative in mapping.items():
        assert guid.fullmatch(initiative_id) and initiative["name"] and initiative["as_of"] == bundled["as_of"]
        assert re.fullmatch(
            r"https://github\.com/Azure/azure-policy/blob/[0-9a-f]{40}/built-in-policies/"
            r"policySetDefinitions/Regulatory%20Compliance/[^/]+\.json",
            initiative["source"],
        ), initiative["source"]
        assert initiative["controls"]
        for control_id, control in initiative["controls"].items():
            policies = {p.lower() for p in control["policies"]}
            assert all(guid.fullmatch(p) for p in policies), control_id
            for rule in control["azai_rules"]:
                assert declared[rule] & policies, (initiative_id, control_id, rule)
            covering = sorted(rule for rule, peers in declared.items() if peers & policies)
            assert control["azai_rules"] == covering, (initiative_id, control_id)
            mapped_rules += len(control["azai_rules"])
    assert mapped_rules  # the mapping is not vacuous
