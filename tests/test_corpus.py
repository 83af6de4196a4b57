"""Conformance: real third-party plans, templates and what-if payloads from ../shared/corpus.

Every plan and template must parse and evaluate without error, and the facts the corpus
MANIFEST records (an endpoint defaulting to key auth, a compute instance without idle
shutdown, ...) must give the expected findings. Skipped when the corpus is absent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from scanner.sources import ARM, TERRAFORM, load_file
from tests.conftest import CORPUS, corpus_cases, scan


def _inputs(kind_dir: str) -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in (CORPUS / kind_dir).rglob("*.json") if "parameters" not in p.name.lower())


@pytest.mark.parametrize("path", corpus_cases(_inputs("terraform")), ids=lambda p: p.name)
def test_every_corpus_plan_parses(path: Path) -> None:
    loaded = load_file(path, str(path))
    assert loaded.kind == TERRAFORM


@pytest.mark.parametrize(
    "path", corpus_cases([p for p in _inputs("arm") if p.parent.name != "whatif"]), ids=lambda p: p.name
)
def test_every_corpus_template_parses(path: Path) -> None:
    loaded = load_file(path, str(path))
    assert loaded.kind == ARM
    assert not loaded.coverage  # none links a template it does not hold


def _rule_hits(path: Path, rule_id: str, parameters: Path | None = None) -> list[tuple[str, str]]:
    result = scan(path, parameters=str(parameters) if parameters else None)
    return [(f.resource.type, f.resource.name) for f in result.findings if f.check.id == rule_id]


def test_online_endpoint_example_defaults_to_key_auth(corpus: Path) -> None:
    hits = _rule_hits(corpus / "arm/azureml-examples/online-endpoint.json", "AZAI-101")
    assert [t for t, _ in hits] == ["Microsoft.MachineLearningServices/workspaces/onlineEndpoints"]


def test_ai_foundry_quickstart_ai_services_account_accepts_keys(corpus: Path) -> None:
    hits = _rule_hits(corpus / "arm/quickstart-templates/aifoundry-basics/azuredeploy.json", "AZAI-101")
    assert [t for t, _ in hits] == ["Microsoft.CognitiveServices/accounts"]


@pytest.mark.parametrize(("name", "fails"), [("fail.json", True), ("fail2.json", True), ("pass.json", False)])
def test_checkov_local_auth_cases_agree(corpus: Path, name: str, fails: bool) -> None:
    hits = _rule_hits(corpus / "arm/checkov/CognitiveServicesEnableLocalAuth" / name, "AZAI-101")
    assert bool(hits) is fails


def test_compute_instance_quickstart_has_no_idle_shutdown_even_with_schedules(corpus: Path) -> None:
    folder = corpus / "arm/quickstart-templates/machine-learning-compute-create-computeinstance"
    for parameters in (None, folder / "azuredeploy.parameters.json"):
        hits = _rule_hits(folder / "azuredeploy.json", "AZAI-201", parameters)
        assert [t for t, _ in hits] == ["Microsoft.MachineLearningServices/workspaces/computes"]


def test_aml_cluster_quickstart_scales_to_zero_by_default(corpus: Path) -> None:
    result = scan(corpus / "arm/quickstart-templates/machine-learning-compute-create-amlcompute/azuredeploy.json")
    assert not [f for f in result.findings if f.check.id == "AZAI-201"]
    assert not [u for u in result.undetermined if u.check.id == "AZAI-201"]


def test_avm_modules_with_safe_defaults_pass(corpus: Path) -> None:
    cognitive = scan(corpus / "arm/bicep-avm/cognitive-services_account_main.json")
    # Its defaults disable local auth and public access and restrict outbound calls; they add no
    # managed identity, no private endpoint and no diagnostic setting (`diagnosticSettings` is
    # nullable without a default: the setting's copy loop runs zero times). The kind, a required
    # parameter, decides whether outbound calls matter, but restricted outbound calls pass for
    # every kind: AZAI-109 is decided.
    assert sorted(f.check.id for f in cognitive.findings) == ["AZAI-106", "AZAI-108", "AZAI-501"]
    assert {f.severity.label for f in cognitive.findings} == {"medium"}
    assert sorted(u.check.id for u in cognitive.undetermined) == []
    pool = scan(corpus / "arm/bicep-avm/container-service_managed-cluster_agent-pool_main.json")
    assert not [f for f in pool.findings if f.check.id in ("AZAI-102", "AZAI-201")]


@pytest.mark.parametrize(
    "relative",
    [
        "terraform/checkov/tfplan_extra_ref.json",
        "terraform/regula/network_security_group_no_inbound_22_infra.json",
        "terraform/snyk-policy-engine/example-03_plan.json",
    ],
)
def test_plans_without_ai_resources_give_no_findings(corpus: Path, relative: str) -> None:
    result = scan(corpus / relative)
    assert not result.findings and not result.undetermined


def test_destroy_plan_scans_nothing_and_pretty_printing_changes_nothing(corpus: Path) -> None:
    generated = corpus / "terraform/generated-tf1.11.4"
    assert scan(generated / "edge_plan3_destroy.json").resources_scanned == 0
    one_line = load_file(generated / "tfdemo_plan.json", "a").inventory.resources
    pretty = load_file(generated / "tfdemo_plan.pretty.json", "b").inventory.resources
    assert [r.id for r in one_line] == [r.id for r in pretty]


def test_bom_parameters_file_is_read(corpus: Path) -> None:
    result = scan(
        corpus / "arm/stableazure/mainTemplate.json",
        parameters=str(corpus / "arm/stableazure/Main.parameters.json"),
    )
    assert result.resources_scanned > 0


@pytest.mark.parametrize("path", corpus_cases(_inputs("arm/whatif")), ids=lambda p: p.name)
def test_whatif_examples_parse_in_both_shapes(corpus: Path, path: Path, tmp_path: Path) -> None:
    body = json.loads(path.read_text(encoding="utf-8"))["responses"]["200"]["body"]
    rest = tmp_path / "rest.json"
    rest.write_text(json.dumps(body))
    cli = tmp_path / "cli.json"
    cli.write_text(json.dumps({"status": body.get("status"), "changes": body["properties"]["changes"]}))
    rest_result, cli_result = scan(rest), scan(cli)
    assert rest_result.resources_scanned == cli_result.resources_scanned
    assert not rest_result.findings and not cli_result.findings


def _corpus_findings(corpus: Path, tmp_path: Path) -> dict[str, Any]:
    """Findings and undetermined checks per corpus plan, template and (unwrapped) what-if result."""
    table: dict[str, Any] = {}
    for path in [*_inputs("terraform"), *[p for p in _inputs("arm") if p.parent.name != "whatif"]]:
        result = scan(path)
        table[path.relative_to(corpus).as_posix()] = {
            "findings": sorted(
                f"{f.check.id} {f.severity.label} {f.resource.type} {f.resource.name} {f.violation.path}"
                for f in result.findings
            ),
            "undetermined": sorted(f"{u.check.id} {u.resource.type} {u.resource.name}" for u in result.undetermined),
        }
    for path in _inputs("arm/whatif"):
        body = tmp_path / path.name
        body.write_text(json.dumps(json.loads(path.read_text(encoding="utf-8"))["responses"]["200"]["body"]))
        result = scan(body)
        table[path.relative_to(corpus).as_posix()] = {
            "findings": sorted(f"{f.check.id} {f.resource.name}" for f in result.findings),
            "undetermined": sorted(f"{u.check.id} {u.resource.name}" for u in result.undetermined),
        }
    return table


def test_corpus_findings_match_their_golden_file(corpus: Path, tmp_path: Path) -> None:
    """Every finding on the third-party corpus, per file, so any change in behaviour is visible in review.

    Regenerate after an intended change: AZAI_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_corpus.py
    """
    golden = Path(__file__).parent / "golden" / "corpus-findings.json"
    table = _corpus_findings(corpus, tmp_path)
    if os.environ.get("AZAI_UPDATE_GOLDEN"):
        golden.write_text(json.dumps(table, indent=2, sort_keys=True) + "\n")
    assert table == json.loads(golden.read_text())


@pytest.mark.parametrize(
    ("example", "rule", "severity", "deliberately_failed"),
    [
        # CKV2_AZURE_49 passes a workspace without publicNetworkAccess; the API defaults it to
        # Enabled, so AZAI-103 fails it, as CKV_AZURE_144 does (docs/peers.md).
        ("AzureMLWorkspacePublicNetwork", "AZAI-103", None, {"pass2.json"}),
        ("CognitiveServicesConfigureIdentity", "AZAI-106", None, set()),
        ("CognitiveServicesDisablesPublicNetwork", "AZAI-108", "high", set()),
        ("CognitiveServicesEnableLocalAuth", "AZAI-101", None, set()),
    ],
)
def test_checkov_own_examples_fail_and_pass_as_checkov_says(
    corpus: Path, example: str, rule: str, severity: str | None, deliberately_failed: set[str]
) -> None:
    """Checkov's ARM test templates for the peer rule a catalog rule covers: every resource in a
    ``fail*`` file fails ours too, and nothing in a ``pass*`` file does (for AZAI-108, at the
    severity of the public-access case Checkov checks), apart from documented disagreements."""
    files = sorted((corpus / "arm/checkov" / example).glob("*.json"))
    assert any(f.name.startswith("fail") for f in files) and any(f.name.startswith("pass") for f in files)
    for path in files:
        result = scan(path, select=[rule])
        failed = {f.resource.name for f in result.findings if severity is None or f.severity.label == severity}
        evaluated = {r.name for c, r in result.passed} | {f.resource.name for f in result.findings}
        assert evaluated, path.name
        fails = path.name.startswith("fail") or path.name in deliberately_failed
        assert failed == (evaluated if fails else set()), path.name
        assert not result.undetermined, path.name
