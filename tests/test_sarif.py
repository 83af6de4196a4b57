"""SARIF output that GitHub code scanning accepts as written, for every source kind."""

from __future__ import annotations

import contextlib
import copy
import gzip
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reports import sarif
from scanner.emulator.estate import Estate, demo_estate_path
from scanner.emulator.server import Emulator
from scanner.engine.registry import load_checks
from scanner.engine.results import ScanResult
from scanner.pipeline.drift import DriftRequest, run_drift
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.sources.live.scope import LiveScope
from tests import sarif_checks
from tests.conftest import CORPUS, FIXTURES, ROOT, run_cli, scan


def _sarif_for(paths: list[Path], target: Path, *extra: str, cwd: Path = ROOT) -> dict[str, Any]:
    """SARIF from the real CLI, run from ``cwd`` as a pipeline runs it from its checkout."""
    args = ["scan", "--format", "sarif", "--output", str(target), "--fail-on", "none", "--skip-unknown", *extra]
    done = run_cli(*args, *map(str, paths), cwd=cwd)
    assert done.returncode in (0, 3), done.stderr  # 3: a linked template could not be read
    loaded: dict[str, Any] = json.loads(target.read_text(encoding="utf-8"))
    return loaded


def _inputs() -> list[tuple[str, list[Path]]]:
    cases = [("demo", sorted((FIXTURES / "demo").glob("*.json")))]
    cases += [
        (f"{d.name}-{p.stem}", [p])
        for d in sorted((FIXTURES / "rules").iterdir())
        for p in sorted(d.glob("*.json"))
        if p.name != "expected.json"
    ]
    cases += [
        (f"bicep-{p.parent.name}-{p.stem}", [p])
        for p in sorted((FIXTURES / "bicep").rglob("*.json"))
        if "parameters" not in p.name
    ]
    cases += [
        (f"sources-{d.name}", [d / json.loads((d / "expected.json").read_text(encoding="utf-8"))["input"]])
        for d in sorted((FIXTURES / "sources").iterdir())
    ]
    if CORPUS.is_dir():
        for p in sorted(CORPUS.rglob("*.json")):
            relative = p.relative_to(CORPUS)
            if (
                p.parts[-3:-1] != ("arm", "whatif")
                and "api" not in relative.parts[:1]
                and "parameters" not in p.name.lower()
            ):
                # named by its path: many corpus files share a name (azuredeploy.json, pass.json)
                cases.append(("corpus-" + "-".join(relative.with_suffix("").parts), [p]))
    return cases


@contextlib.contextmanager
def _checkout(directory: Path) -> Iterator[None]:
    """Run as a pipeline does, from its checkout: SARIF URIs are relative to it."""
    previous = Path.cwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(previous)


def _render(result: ScanResult, target: Path) -> dict[str, Any]:
    data, _ = sarif.render(result, Path.cwd())
    target.write_bytes(data)
    loaded: dict[str, Any] = json.loads(data)
    return loaded


def _scanned(paths: list[Path], target: Path, cwd: Path) -> dict[str, Any]:
    """SARIF for ``paths``, made in this process as ``azai scan --format sarif`` makes it."""
    with _checkout(cwd):
        request = ScanRequest(paths=[str(p) for p in paths], fail_on="none", skip_unknown=True, environ={})
        return _render(run_scan(request), target)


def _live_and_drift_sarif(directory: Path, serve: Callable[..., Emulator]) -> list[tuple[str, Path, dict[str, Any]]]:
    """Live SARIF anchored in a saved inventory, live SARIF with no file (placeholder paths), and
    drift SARIF (the saved demo snapshot against the drifted estate)."""
    out = []
    live = LiveScope(all_subscriptions=True)
    with _checkout(directory):
        for variant, name in (("demo", "live-inventory"), ("demo", "live-placeholder"), ("drifted", "drift-snapshot")):
            emulator = serve(Estate.load(demo_estate_path(variant)))
            target = directory / f"{name}.sarif"
            if name == "drift-snapshot":
                result = run_drift(DriftRequest(base="inventory.json", live=live, arm_endpoint=emulator.endpoint))
            else:
                saved = "inventory.json" if name == "live-inventory" else None
                request = ScanRequest(paths=(), live=live, arm_endpoint=emulator.endpoint, save_inventory=saved)
                result = run_scan(request)
            out.append((name, target, _render(result, target)))
    return out


@pytest.fixture(scope="module")
def produced(
    tmp_path_factory: pytest.TempPathFactory, serve: Callable[..., Emulator]
) -> list[tuple[str, Path, dict[str, Any]]]:
    """Every SARIF this suite produces: the demo, each rule fixture, each corpus plan and template,
    live and drift."""
    directory = tmp_path_factory.mktemp("sarif")
    out = []
    for name, paths in _inputs():
        target = directory / f"{name}.sarif"
        checkout = CORPUS.parent if name.startswith("corpus-") else ROOT  # the corpus is its own checkout
        out.append((name, target, _scanned(paths, target, cwd=checkout)))
    out += _live_and_drift_sarif(directory, serve)
    if CORPUS.is_dir():  # what-if examples, unwrapped from the REST spec wrapper
        for p in sorted((CORPUS / "arm" / "whatif").glob("*.json")):
            body = json.loads(p.read_text(encoding="utf-8"))["responses"]["200"]["body"]
            unwrapped = directory / f"whatif-{p.stem}.json"
            unwrapped.write_text(json.dumps(body))
            target = directory / f"whatif-{p.stem}.sarif"
            out.append((target.stem, target, _scanned([unwrapped], target, cwd=directory)))
    return out


@pytest.mark.slow
def test_every_sarif_validates_against_the_official_schema(produced: list[tuple[str, Path, dict[str, Any]]]) -> None:
    failures = {name: errors for name, _, doc in produced if (errors := sarif_checks.schema_errors(doc))}
    assert not failures


@pytest.mark.slow
def test_every_sarif_follows_githubs_rules(produced: list[tuple[str, Path, dict[str, Any]]]) -> None:
    failures = {name: errors for name, _, doc in produced if (errors := sarif_checks.github_rule_errors(doc))}
    assert not failures
    by_name = {name: doc for name, _, doc in produced}
    assert {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in by_name["live-inventory"]["runs"][0]["results"]
    } == {"inventory.json"}
    assert all(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("azure-live/subscriptions/")
        for r in by_name["live-placeholder"]["runs"][0]["results"]
    )
    assert {r["ruleId"] for run in by_name["drift-snapshot"]["runs"] for r in run["results"]} == {"AZAI-901"}
    assert sum(len(run["results"]) for _, _, doc in produced for run in doc["runs"]) > 50  # the checks saw real results


# The Multitool takes about a sixth of a second of CPU per file, and there are about 300 files,
# after seconds of warming up per run: two runs, each with half of the files, let two test
# workers validate them side by side for one more warm-up.
MULTITOOL_RUNS = 2


def test_every_sarif_has_a_file_of_its_own(produced: list[tuple[str, Path, dict[str, Any]]]) -> None:
    """The Multitool reads files: one SARIF written over another would go unchecked."""
    assert len({path for _, path, _ in produced}) == len(produced)


@pytest.mark.slow
@pytest.mark.parametrize("run", range(MULTITOOL_RUNS), ids=lambda run: f"run{run + 1}of{MULTITOOL_RUNS}")
def test_every_sarif_passes_the_multitool_github_rules(
    produced: list[tuple[str, Path, dict[str, Any]]], tmp_path: Path, run: int
) -> None:
    """Microsoft's SARIF Multitool with GitHub's ingestion rules passes every SARIF azai writes
    (each run takes every MULTITOOL_RUNS-th file), and fails one GitHub would reject (a
    logical-only location, a result without a region), checked in each run, so that every run is
    known to be able to fail."""
    tool = sarif_checks.multitool()
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install @microsoft/sarif-multitool (see .ci/run)")
        pytest.skip("sarif-multitool is not installed (npm install @microsoft/sarif-multitool)")
    bad = copy.deepcopy(next(doc for name, _, doc in produced if name == "demo"))
    results = bad["runs"][0]["results"]
    results[0]["locations"] = [{"logicalLocations": [{"fullyQualifiedName": "x"}]}]
    del results[1]["locations"][0]["physicalLocation"]["region"]
    rejected = tmp_path / "rejected.sarif"
    rejected.write_text(json.dumps(bad))
    files = [path for _, path, _ in produced[run::MULTITOOL_RUNS]]
    problems = sarif_checks.multitool_findings(tool, [*files, rejected], tmp_path)
    refused = problems.pop(rejected.name, [])
    assert any("GH1001" in p for p in refused) and any("GH1003" in p for p in refused)
    assert sarif_checks.github_rule_errors(bad)
    assert problems == {}


def test_one_run_per_source_kind_with_its_own_category(tmp_path: Path) -> None:
    document = _sarif_for(sorted((FIXTURES / "demo").glob("*.json")), tmp_path / "demo.sarif")
    assert [run["automationDetails"]["id"] for run in document["runs"]] == [
        "azai/iac/terraform/",
        "azai/iac/arm/",
        "azai/iac/whatif/",
    ]
    catalog = [c.id for c in load_checks()]
    for run in document["runs"]:
        assert len(run["results"]) == 32
        rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
        notes = run["invocations"][0]["toolExecutionNotifications"]
        used = {r["ruleId"] for r in run["results"]} | {
            n["associatedRule"]["id"] for n in notes if "associatedRule" in n
        }
        assert rules == [rule for rule in catalog if rule in used]  # only the rules this run refers to
        assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in run["results"])


def test_results_point_at_the_property_and_name_the_terraform_address(tmp_path: Path) -> None:
    document = _sarif_for([FIXTURES / "demo" / "plan.json"], tmp_path / "plan.sarif")
    result = next(r for r in document["runs"][0]["results"] if r["ruleId"] == "AZAI-101")
    location = result["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "fixtures/demo/plan.json"
    column = location["physicalLocation"]["region"]["startColumn"]
    text = (FIXTURES / "demo" / "plan.json").read_text()
    assert text[column - 1 :].startswith('"Key"')
    assert location["logicalLocations"][0]["fullyQualifiedName"] == "azapi_resource.score"
    assert result["level"] == "error" and result["properties"]["severity"] == "critical"
    rule = document["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert rule["properties"]["security-severity"] == "8.0" and rule["properties"]["tags"] == [
        "Security",
        "anonymous-endpoint",
        "security",
    ]


def _fingerprints(document: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    """Each result's line hash, by rule, resource and failing property."""
    return {
        (
            r["ruleId"],
            r["locations"][0]["logicalLocations"][-1]["name"],
            r["properties"]["evidence"]["path"],
        ): r["partialFingerprints"]["primaryLocationLineHash"]
        for run in document["runs"]
        for r in run["results"]
    }


def test_fingerprints_survive_line_moves_and_agree_between_plan_and_template(tmp_path: Path) -> None:
    template = FIXTURES / "demo" / "template.json"
    before = _fingerprints(_sarif_for([template], tmp_path / "a.sarif"))
    moved = tmp_path / "moved" / "template.json"
    moved.parent.mkdir()
    moved.write_text("\n\n\n" + template.read_text().replace("{\n", "{\n\n", 3))
    after = _fingerprints(_sarif_for([moved], tmp_path / "b.sarif"))
    plan = _fingerprints(_sarif_for([FIXTURES / "demo" / "plan.json"], tmp_path / "c.sarif"))
    assert before == after == plan
    assert len(before) == 32


def test_output_is_deterministic(tmp_path: Path) -> None:
    paths = sorted((FIXTURES / "demo").glob("*.json"))
    first = _sarif_for(paths, tmp_path / "1.sarif")
    second = _sarif_for(paths, tmp_path / "2.sarif")
    assert (tmp_path / "1.sarif").read_bytes() == (tmp_path / "2.sarif").read_bytes()
    assert first == second


def test_results_beyond_githubs_limit_are_cut_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    result = scan(FIXTURES / "demo" / "plan.json")
    monkeypatch.setattr(sarif, "MAX_RESULTS_PER_RUN", 3)
    data, cut = sarif.render(result, Path.cwd())
    run = json.loads(data)["runs"][0]
    assert len(run["results"]) == 3
    assert run["results"][0]["properties"]["severity"] == "critical"  # the most severe are kept
    assert cut and "exceed GitHub's limit" in cut[0]
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any("exceed GitHub's limit" in n for n in notes)


def test_output_over_ten_megabytes_gzipped_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    result = scan(FIXTURES / "demo" / "plan.json")
    full, _ = sarif.render(result, Path.cwd())
    monkeypatch.setattr(sarif, "MAX_GZIP_BYTES", len(gzip.compress(full)) - 1)
    data, cut = sarif.render(result, Path.cwd())
    assert len(json.loads(data)["runs"][0]["results"]) < 23
    assert any("10 MB" in c for c in cut)


def test_undetermined_checks_and_warnings_become_tool_notifications(tmp_path: Path) -> None:
    document = _sarif_for([FIXTURES / "rules" / "AZAI-301" / "plan-azurerm.json"], tmp_path / "u.sarif")
    notes = document["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    undetermined = [n for n in notes if n.get("associatedRule", {}).get("id") == "AZAI-301"]
    assert sorted(n["message"]["text"].split(" could not decide on ")[1].split(":")[0] for n in undetermined) == [
        "proj-orphan",
        "srch-hub",
        "ws-ext",
    ]


def test_repository_root_is_where_uris_are_relative_to() -> None:
    assert sarif.ArtifactUris(ROOT)(str(ROOT / "fixtures" / "a b.json")) == "fixtures/a%20b.json"
