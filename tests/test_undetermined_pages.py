"""Issue 37, items 3 and 5, case by case: the rule pages' "Undetermined when" against what a scan
says, on minimal estates of the cases the issue names.

- Silent where the page says undetermined: AZAI-113 on a cluster whose pools cannot be seen, and
  AZAI-504 on a deployment with no `model.version`.
- Undetermined where the unknown cannot change the verdict: AZAI-301 on a Search service nothing
  connects to, AZAI-109 on an unknown kind, AZAI-205 on an unknown compute type.
- A verdict about a resource the scan never saw: a compute whose workspace is not scanned is
  undetermined for AZAI-104 and AZAI-301 alike, never a finding.
- Datastore auth (AZAI-111): an absent `systemDatastoresAuthMode` on a Default or Hub workspace
  is `accessKey`.

The rule estates (fixtures/rules/AZAI-NNN/estate.json) hold most of these cases in every form, and
tests/test_rules.py asserts them whole; the two estates here (fixtures/rules/AZAI-104/
unscanned-workspace, fixtures/rules/AZAI-301/unconnected-search) hold the cases that need a
resource the estate does not declare, or a second rule on the same run.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from scanner.engine.registry import load_checks
from tests.conftest import FIXTURES, scan

RULES = FIXTURES / "rules"
SUB_ESTATES = [RULES / "AZAI-104" / "unscanned-workspace", RULES / "AZAI-301" / "unconnected-search"]
FORMS = ("plan-azurerm", "plan-azapi", "template", "whatif")
IAC_BEFORE_DEPLOY = ("plan-azurerm", "plan-azapi", "template")
VERSION = "properties.model.version"


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_rule_fixtures", FIXTURES / "build_rule_fixtures.py")
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    return builder


def _outcomes(path: Path, rule_id: str) -> tuple[set[str], set[str], set[str]]:
    """What one rule fails, leaves undetermined and passes in one file."""
    result = scan(path, select=[rule_id])
    failed = {f.resource.name for f in result.findings if f.check.id == rule_id}
    undetermined = {u.resource.name for u in result.undetermined if u.check.id == rule_id}
    passed = {r.name for c, r in result.passed if c.id == rule_id}
    return failed, undetermined, passed


def _reasons(path: Path, rule_id: str) -> dict[str, str]:
    return {u.resource.name: u.reason for u in scan(path, select=[rule_id]).undetermined if u.check.id == rule_id}


def test_the_sub_estates_are_rendered_from_their_estate() -> None:
    builder = _builder()
    for estate in SUB_ESTATES:
        for name, content in builder.render(estate).items():
            assert json.loads((estate / name).read_text()) == content, f"{estate}/{name} is stale"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("estate", SUB_ESTATES, ids=lambda p: p.name)
def test_sub_estate_fails_passes_and_leaves_undetermined_exactly(estate: Path, form: str) -> None:
    expected = json.loads((estate / "expected.json").read_text())
    want = expected["forms"][form]
    failed, undetermined, passed = _outcomes(estate / f"{form}.json", expected["rule"])
    assert (failed, undetermined, passed) == (set(want["fail"]), set(want["undetermined"]), set(want["pass"]))


@pytest.mark.parametrize("form", FORMS)
def test_a_compute_whose_workspace_was_not_scanned_is_undetermined_for_both_rules_never_a_finding(form: str) -> None:
    """The issue's run: AZAI-104 reported "no subnet and no workspace managed network" (high) on
    a compute whose workspace it never saw, while AZAI-301 said it could not decide."""
    path = RULES / "AZAI-104" / "unscanned-workspace" / f"{form}.json"
    reason = "cannot decide: the compute's workspace is not among the scanned resources"
    on_104 = _reasons(path, "AZAI-104")
    assert on_104 == {"ws-not-scanned/cpu-orphan": reason, "ws-not-scanned/cpu-orphan-local": reason}
    assert _outcomes(path, "AZAI-104")[0] == {"ws-not-scanned/cpu-orphan-local"}  # its local auth, not its network
    assert _outcomes(path, "AZAI-301") == (
        set(),
        {"ws-not-scanned/cpu-orphan", "ws-not-scanned/cpu-orphan-local", "ws-not-scanned/cpu-orphan-subnet"},
        set(),
    )


# (rule, resource, the page's words for the case, the unknown property the reason names in the
# azapi plan and the template, and in the azurerm plan: there an unknown default_node_pool block
# reads as a pool whose size is unknown)
SILENT_BEFORE = [
    ("AZAI-113", "aks-pools-unknown", "`agentPoolProfiles`", "properties.agentPoolProfiles", "properties.vmSize"),
    ("AZAI-113", "aks-size-unknown", "a pool size", "properties.vmSize", "properties.vmSize"),
    ("AZAI-504", "oai-lifecycle/no-version", "no `model.version` is declared", VERSION, VERSION),
    ("AZAI-504", "oai-lifecycle/version-unknown", "The model name or version is not known", VERSION, VERSION),
]


@pytest.mark.parametrize("form", IAC_BEFORE_DEPLOY)
@pytest.mark.parametrize(("rule_id", "resource", "page_says", "unknown", "unknown_in_azurerm"), SILENT_BEFORE)
def test_silent_where_the_page_says_undetermined(
    rule_id: str, resource: str, page_says: str, unknown: str, unknown_in_azurerm: str, form: str
) -> None:
    """Each case is one the rule's page names as undetermined, and the scan leaves it so."""
    check = next(c for c in load_checks() if c.id == rule_id)
    page = check.doc.split("## Undetermined when", 1)[1].split("\n## ", 1)[0]
    assert page_says in " ".join(page.split())
    reasons = _reasons(RULES / rule_id / f"{form}.json", rule_id)
    assert reasons[resource].startswith(f"{unknown_in_azurerm if form == 'plan-azurerm' else unknown} is unknown")


# (rule, resource): passes in every form although a property it reads is unknown before deploy,
# because no value of it would change the verdict.
PASS_WHATEVER = [
    ("AZAI-109", "oai-kind-unknown-restricted"),  # restricted: passes for every kind
    ("AZAI-205", "ws-batch/type-unknown-default-delay"),  # no delay: passes for every compute type
    ("AZAI-113", "aks-size-unknown-hardened"),  # hardened: passes whatever its pool sizes
    ("AZAI-504", "oai-lifecycle/version-unknown-current"),  # no listed gpt-4.1 version retires soon
    ("AZAI-504", "oai-lifecycle/no-version-current"),
    ("AZAI-111", "ws-kind-unknown-identity"),  # identity: passes for every kind
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("rule_id", "resource"), PASS_WHATEVER)
def test_an_unknown_that_cannot_change_the_verdict_leaves_it_decided(rule_id: str, resource: str, form: str) -> None:
    passed = _outcomes(RULES / rule_id / f"{form}.json", rule_id)[2]
    assert resource in passed


@pytest.mark.parametrize("form", FORMS)
def test_a_search_service_nothing_connects_to_passes_whatever_its_region(form: str) -> None:
    """Its region is unknown before deploy in the azurerm plan and the template. Connected to an
    account in eastus, the same unknown region decides (in the azapi plan and the what-if, where
    it is westeurope, it fails)."""
    path = RULES / "AZAI-301" / "unconnected-search" / f"{form}.json"
    used = "undetermined" if form in ("plan-azurerm", "template") else "fail"
    failed, undetermined, passed = _outcomes(path, "AZAI-301")
    assert (failed, undetermined, passed) == (
        {"srch-used"} if used == "fail" else set(),
        {"srch-used"} if used == "undetermined" else set(),
        {"srch-alone"},
    )


# Datastore auth: (workspace, kind, systemDatastoresAuthMode as declared, outcome in every form)
DATASTORE_AUTH = [
    ("ws-default-mode", "absent (Default)", None, "fail"),
    ("hub-default-mode", "Hub", None, "fail"),
    ("fs-default-mode", "FeatureStore", None, "pass"),
    ("hub-accesskey", "Hub", "accessKey", "fail"),
    ("fs-accesskey", "FeatureStore", "accessKey", "fail"),
    ("hub-identity", "Hub", "identity", "pass"),
    ("hub-delegated-sas", "Hub", "UserDelegationSAS", "pass"),
]


@pytest.mark.parametrize("form", FORMS)
def test_an_absent_datastore_auth_mode_is_access_key_on_default_and_hub_workspaces(form: str) -> None:
    path = RULES / "AZAI-111" / f"{form}.json"
    result = scan(path, select=["AZAI-111"])
    mode_findings = {
        f.resource.name: (f.severity.label, f.violation.observed)
        for f in result.findings
        if f.check.id == "AZAI-111" and f.violation.path == "properties.systemDatastoresAuthMode"
    }
    failing = {name for name, _, _, outcome in DATASTORE_AUTH if outcome == "fail"}
    passing = {name for name, _, _, outcome in DATASTORE_AUTH if outcome == "pass"}
    assert failing <= set(mode_findings) and not passing & set(mode_findings)
    assert {mode_findings[name] for name in failing} == {("medium", None), ("medium", "accessKey")}
    assert mode_findings["ws-default-mode"] == mode_findings["hub-default-mode"] == ("medium", None)
