"""Gates, selection, configuration, suppressions and baselines, through the real CLI."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from scanner.engine.checkapi import Pillar
from scanner.engine.registry import load_checks
from scanner.errors import InputError
from scanner.pipeline.scan import ScanRequest, run_scan
from scanner.policy.config import find_config
from tests.conftest import FIXTURES, run_cli

DEMO = FIXTURES / "demo" / "template.json"


def _json(*args: str, cwd: Path) -> tuple[int, dict[str, Any]]:
    done = run_cli("scan", "--format", "json", *args, str(DEMO), cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, data


def _ids(data: dict[str, Any], **where: Any) -> set[tuple[str, str]]:
    return {(f["rule_id"], f["resource_name"]) for f in data["findings"] if all(f[k] == v for k, v in where.items())}


def test_gate_exit_codes(tmp_path: Path) -> None:
    assert _json(cwd=tmp_path)[0] == 1  # one critical, default high
    assert _json("--fail-on", "critical", cwd=tmp_path)[0] == 1
    assert _json("--fail-on", "none", cwd=tmp_path)[0] == 0
    assert _json("--ignore", "Security", "--ignore", "AZAI-305", cwd=tmp_path)[0] == 0  # only medium and low left
    assert _json("--ignore", "Security", "--fail-on", "medium", cwd=tmp_path)[0] == 1


def test_select_and_ignore_by_id_slug_and_pillar(tmp_path: Path) -> None:
    _, data = _json("--fail-on", "none", "--select", "Security", cwd=tmp_path)
    security = {f"AZAI-1{n:02d}" for n in (1, 2, 4, 5, 6, 8, 9, 10, 11, 13, 14)}
    assert {f["rule_id"] for f in data["findings"]} == security
    _, data = _json("--fail-on", "none", "--select", "AZAI-201", "--select", "cross-region", cwd=tmp_path)
    assert {f["rule_id"] for f in data["findings"]} == {"AZAI-201", "AZAI-301"}
    _, data = _json("--fail-on", "none", "--ignore", "cost optimization", cwd=tmp_path)
    assert {f["rule_id"] for f in data["findings"]} == security | {
        "AZAI-301",
        "AZAI-305",
        "AZAI-402",
        "AZAI-403",
        "AZAI-501",
    }
    scanned = [c for c in load_checks() if c.pillar != Pillar.COST and "drift" not in c.sources]
    assert data["summary"]["rules"] == len(scanned)  # drift rules run in azai drift only
    bad = run_cli("scan", "--ignore", "AZAI-9999", str(DEMO), cwd=tmp_path)
    assert bad.returncode == 2 and "matches no rule id, slug or pillar" in bad.stderr


def _config(directory: Path, text: str, name: str = "azai.toml") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_config_is_found_upward_and_sets_gate_severity_and_options(tmp_path: Path) -> None:
    _config(
        tmp_path, 'fail-on = "critical"\n[rules.AZAI-201]\nseverity = "high"\n[rules.cross-region]\nseverity = "low"\n'
    )
    nested = tmp_path / "infra" / "envs"
    nested.mkdir(parents=True)
    code, data = _json(cwd=nested)
    assert code == 1 and data["summary"]["fail_on"] == "critical"
    severities = {(f["rule_id"], f["severity"]) for f in data["findings"]}
    assert ("AZAI-201", "high") in severities and ("AZAI-301", "low") in severities
    assert ("AZAI-101", "critical") in severities
    code, data = _json("--fail-on", "none", cwd=nested)  # the command line wins over the file
    assert code == 0


def test_config_above_the_repository_root_is_not_read(tmp_path: Path) -> None:
    from scanner.policy.config import find_config

    (tmp_path / "azai.toml").write_text('fail-on = "none"\n')
    repo = tmp_path / "home" / "project"
    (repo / ".git").mkdir(parents=True)
    (repo / "infra").mkdir()
    assert find_config(repo / "infra") is None
    (repo / "azai.toml").write_text('fail-on = "low"\n')
    assert find_config(repo / "infra") == repo / "azai.toml"


def test_pyproject_tool_table_and_explicit_config(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    _config(plain, '[project]\nname = "x"\n', "pyproject.toml")
    assert find_config(plain) is None  # a pyproject.toml without [tool.azai] is not a configuration
    _config(tmp_path, '[project]\nname = "x"\n[tool.azai]\nignore = ["AZAI-101"]\n', "pyproject.toml")
    assert find_config(tmp_path / "deep" / "er") == tmp_path / "pyproject.toml"
    _, data = _json("--fail-on", "none", cwd=tmp_path)
    assert "AZAI-101" not in {f["rule_id"] for f in data["findings"]}
    other = _config(tmp_path, 'select = ["AZAI-101"]\n', "custom.toml")
    _, data = _json("--fail-on", "none", "--config", str(other), cwd=tmp_path)
    assert {f["rule_id"] for f in data["findings"]} == {"AZAI-101"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('fail_on = "high"\n', "unknown configuration key(s) fail_on"),
        ("[rules.AZAI-999]\nseverity = 'low'\n", "names no known rule"),
        ("[rules.AZAI-201]\nmax_idle = 'PT1H'\n", "is not an option of AZAI-201"),
        ("[[suppressions]]\nrule = 'AZAI-101'\nresource = '*'\n", "needs a 'justification'"),
        (
            "[[suppressions]]\nrule = 'AZAI-101'\nresource = '*'\njustification = 'x'\nexpires = 'soon'\n",
            "'expires' must be a date",
        ),
        ("this is = not toml [", "invalid TOML"),
    ],
)
def test_bad_config_is_one_line_and_exit_2(tmp_path: Path, text: str, message: str) -> None:
    _config(tmp_path, text)
    done = run_cli("scan", str(DEMO), cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_config_suppression_keeps_the_finding_and_frees_the_gate(tmp_path: Path) -> None:
    _config(
        tmp_path,
        "[[suppressions]]\nrule = 'anonymous-endpoint'\nresource = 'ws-demo/*'\n"
        "justification = 'Pilot endpoint; Entra auth lands in Q1'\nexpires = 2999-01-31\n",
    )
    code, data = _json("--fail-on", "critical", cwd=tmp_path)
    assert code == 0  # the one critical finding is suppressed
    suppressed = [f for f in data["findings"] if f["suppressed"]]
    assert [(f["rule_id"], f["resource_name"]) for f in suppressed] == [("AZAI-101", "ws-demo/score")]
    assert suppressed[0]["suppression"] == {
        "kind": "external",
        "justification": "Pilot endpoint; Entra auth lands in Q1",
        "source": str(tmp_path / "azai.toml"),
        "expires": "2999-01-31",
    }
    assert data["summary"]["suppressed"] == 1 and data["summary"]["by_severity"]["critical"] == 0
    sarif = json.loads(run_cli("scan", "--format", "sarif", "--fail-on", "none", str(DEMO), cwd=tmp_path).stdout)
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "AZAI-101"]
    assert results[0]["suppressions"] == [
        {
            "kind": "external",
            "status": "accepted",
            "justification": "Pilot endpoint; Entra auth lands in Q1",
            "properties": {"expires": "2999-01-31"},
        }
    ]


def test_expired_suppression_stops_suppressing_and_warns(tmp_path: Path) -> None:
    _config(
        tmp_path,
        "[[suppressions]]\nrule = 'AZAI-101'\nresource = '*score*'\n"
        "justification = 'temporary'\nexpires = 2020-01-01\n",
    )
    code, data = _json(cwd=tmp_path)
    assert code == 1
    assert not [f for f in data["findings"] if f["suppressed"]]
    assert any("expired on 2020-01-01" in w for w in data["warnings"])


def test_suppression_by_address_glob_on_plans(tmp_path: Path) -> None:
    _config(
        tmp_path,
        "[[suppressions]]\nrule = 'AZAI-201'\nresource = 'azurerm_machine_learning_compute_*'\n"
        "justification = 'batch window'\n",
    )
    done = run_cli("scan", "--format", "json", "--fail-on", "none", str(FIXTURES / "demo" / "plan.json"), cwd=tmp_path)
    data = json.loads(done.stdout)
    assert _ids(data, suppressed=True) == {("AZAI-201", "ws-demo/train"), ("AZAI-201", "ws-demo/notebook")}


def test_tag_suppression_works_on_iac_and_keeps_other_rules(tmp_path: Path) -> None:
    template = json.loads(DEMO.read_text())
    template["resources"]["gpu"]["tags"] = {"azai-ignore": "AZAI-201, shared-gpu-pool"}
    template["resources"]["ws"]["tags"]["azai-ignore"] = "always-on-compute"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(template))
    done = run_cli("scan", "--format", "json", "--fail-on", "none", str(path), cwd=tmp_path)
    data = json.loads(done.stdout)
    assert _ids(data, suppressed=True) == {("AZAI-201", "aks-demo/gpu"), ("AZAI-102", "aks-demo/gpu")}
    tagged = next(f for f in data["findings"] if f["resource_name"] == "aks-demo/gpu")
    assert tagged["suppression"]["kind"] == "inSource" and tagged["suppression"]["source"] == "tag"
    assert ("AZAI-301", "ws-demo") in _ids(data, suppressed=False)  # its tag names another rule


def test_baseline_marks_new_unchanged_and_absent_and_gates_only_new(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    done = run_cli("scan", "--fail-on", "none", "--write-baseline", str(baseline), str(DEMO), cwd=tmp_path)
    assert done.returncode == 0 and json.loads(baseline.read_text())["azai_baseline"] == 1
    code, data = _json("--baseline", str(baseline), cwd=tmp_path)
    assert code == 0  # the critical finding is in the baseline
    assert {f["baseline_state"] for f in data["findings"]} == {"unchanged"} and data["absent"] == []

    changed = json.loads(DEMO.read_text())
    changed["resources"]["openai"]["properties"]["disableLocalAuth"] = False  # a new critical finding
    changed["resources"]["notebook"]["properties"]["properties"]["idleTimeBeforeShutdown"] = "PT30M"  # one fixed
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(changed))
    done = run_cli("scan", "--format", "json", "--baseline", str(baseline), str(path), cwd=tmp_path)
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert _ids(data, baseline_state="new") == {("AZAI-101", "oai-demo")}
    assert [(a["rule_id"], a["resource_name"]) for a in data["absent"]] == [("AZAI-201", "ws-demo/notebook")]
    assert data["summary"]["new"] == 1 and data["summary"]["absent"] == 1
    sarif = json.loads(
        run_cli(
            "scan", "--format", "sarif", "--fail-on", "none", "--baseline", str(baseline), str(path), cwd=tmp_path
        ).stdout
    )
    states = {(r["ruleId"], r["baselineState"]) for r in sarif["runs"][0]["results"]}
    assert ("AZAI-101", "new") in states and ("AZAI-201", "absent") in states and ("AZAI-301", "unchanged") in states


def test_bad_baseline_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps({"findings": []}))
    done = run_cli("scan", "--baseline", str(bad), str(DEMO), cwd=tmp_path)
    assert done.returncode == 2 and "not an azai baseline" in done.stderr


def test_several_formats_from_one_scan(tmp_path: Path) -> None:
    out = {fmt: tmp_path / f"r.{fmt}" for fmt in ("sarif", "markdown", "junit", "json")}
    args = [arg for fmt, path in out.items() for arg in ("--format", fmt, "--output", str(path))]
    done = run_cli("scan", *args, "--format", "text", "--fail-on", "none", str(DEMO), cwd=tmp_path)
    assert done.returncode == 0 and "32 finding(s)" in done.stdout  # the text report went to stdout
    assert json.loads(out["sarif"].read_text())["version"] == "2.1.0"
    assert out["markdown"].read_text().startswith("## azai: 32 finding(s)")
    assert out["junit"].read_text().startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')
    assert json.loads(out["json"].read_text())["summary"]["findings"] == 32
    two_stdout = run_cli("scan", "--format", "json", "--format", "sarif", str(DEMO), cwd=tmp_path)
    assert two_stdout.returncode == 2 and "only one report can go to stdout" in two_stdout.stderr


def test_suppressions_apply_by_date(tmp_path: Path) -> None:
    config = _config(
        tmp_path, "[[suppressions]]\nrule = 'AZAI-101'\nresource = '*'\njustification = 'x'\nexpires = 2026-06-30\n"
    )
    before = run_scan(ScanRequest(paths=[str(DEMO)], config_file=str(config), today=dt.date(2026, 6, 30)))
    after = run_scan(ScanRequest(paths=[str(DEMO)], config_file=str(config), today=dt.date(2026, 7, 1)))
    assert [f.check.id for f in before.findings if f.suppression] == ["AZAI-101"]
    assert not [f for f in after.findings if f.suppression] and after.failing()
    with pytest.raises(InputError):
        run_scan(ScanRequest(paths=[str(DEMO)], config_file=str(tmp_path / "missing.toml")))


def test_rule_options_from_the_config_file_apply_and_the_command_line_wins(tmp_path: Path) -> None:
    instances = str(FIXTURES / "rules" / "AZAI-201" / "template.json")
    _config(tmp_path, "[rules.always-on-compute]\nmax_idle_before_shutdown = 'PT15M'\n")

    def failing(*extra: str) -> set[str]:
        done = run_cli("scan", "--format", "json", "--fail-on", "none", *extra, instances, cwd=tmp_path)
        return {f["resource_name"] for f in json.loads(done.stdout)["findings"] if f["rule_id"] == "AZAI-201"}

    assert "mlws/ciidle30" in failing()  # PT30M is over the configured PT15M
    assert "mlws/ciidle30" not in failing("--rule-option", "AZAI-201:max_idle_before_shutdown=PT1H")
