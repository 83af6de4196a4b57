"""One estate written as a plan, a template and a what-if gives the same findings."""

from __future__ import annotations

from scanner.engine.results import ScanResult
from tests.conftest import FIXTURES, scan


def _findings(result: ScanResult) -> set[tuple[str, str, str, str, str, str]]:
    return {
        (f.check.id, f.resource.type, f.resource.name, f.violation.path, f.severity.label, f.fingerprint)
        for f in result.findings
    }


def test_plan_template_and_whatif_agree_on_every_finding_and_fingerprint() -> None:
    plan = scan(FIXTURES / "demo" / "plan.json")
    template = scan(FIXTURES / "demo" / "template.json")
    whatif = scan(FIXTURES / "demo" / "whatif.json")
    assert _findings(plan) == _findings(template) == _findings(whatif)
    assert len({f.check.id for f in plan.findings}) == 20
    assert not plan.undetermined and not template.undetermined and not whatif.undetermined


def test_demo_estate_findings_are_the_designed_ones() -> None:
    """The demo estate is a typical first AI stack: every seed principle broken once, and the
    catalog's hardening gaps a team meets before its first review."""
    result = scan(FIXTURES / "demo" / "plan.json")
    assert {(f.check.id, f.resource.name) for f in result.findings} == {
        ("AZAI-101", "ws-demo/score"),
        ("AZAI-102", "aks-demo/gpu"),
        ("AZAI-104", "ws-demo/notebook"),
        ("AZAI-104", "ws-demo/train"),
        ("AZAI-105", "ws-demo"),
        ("AZAI-106", "oai-demo"),
        ("AZAI-108", "oai-demo"),
        ("AZAI-109", "oai-demo"),
        ("AZAI-110", "ws-demo/score"),
        ("AZAI-111", "stdemo"),
        ("AZAI-111", "ws-demo"),  # no systemDatastoresAuthMode: the account key
        ("AZAI-113", "aks-demo"),
        ("AZAI-201", "aks-demo/gpu"),
        ("AZAI-201", "ws-demo/notebook"),
        ("AZAI-201", "ws-demo/train"),
        ("AZAI-204", "ws-demo/train"),
        ("AZAI-301", "ws-demo"),
        ("AZAI-301", "ws-demo/notebook"),
        ("AZAI-301", "ws-demo/train"),
        ("AZAI-402", "aks-demo/gpu"),
        ("AZAI-403", "ws-demo/score"),
        ("AZAI-501", "oai-demo"),
        ("AZAI-501", "ws-demo"),
        # the generative-AI part: content filtering off, and a global deployment in the EU
        ("AZAI-114", "oai-demo/chat-ptu"),
        ("AZAI-305", "oai-demo-eu/chat"),
        ("AZAI-106", "oai-demo-eu"),
        ("AZAI-108", "oai-demo-eu"),
        ("AZAI-109", "oai-demo-eu"),
        ("AZAI-501", "oai-demo-eu"),
        # serverless compute on full-time: a schedule every 30 minutes, a GPU app never at zero
        ("AZAI-207", "ws-demo/retrain"),
        ("AZAI-208", "llm-demo"),
    }
